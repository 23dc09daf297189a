/*
 * k8s/lease: Lease-based leader election (see lease.h).
 *
 * State: `cached` is the Lease as we last read or wrote it (driving thread only);
 * `seen` says since when the record looked the way it does (for expiry by our own
 * monotonic clock: k8s_lease_seen_update, k8s_lease_judge). `valid_until` (atomic) is the single truth for "we
 * lead": 0 when not. `reported` is what on_change last said; it changes only in
 * sync_state, under tr_lock, re-reading valid_until there, so the driver and the
 * watchdog can never report out of order. `info_lock` guards holder/transitions for
 * readers on other threads.
 */
#include "lease.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/rfc3339.h"

#define DURATION_S_MAX      (365 * 24 * 3600)
#define RELEASED_DURATION_S 1 /* what client-go writes on release */

struct k8s_lease {
	struct k8s_client *c;
	struct k8s_lease_opts o;
	char *name, *ns, *identity;
	json_t *cached;
	struct k8s_lease_seen seen;
	int64_t wait_until; /* WAIT: when the observed record expires */
	_Atomic int64_t valid_until;
	pthread_mutex_t tr_lock;
	bool reported;
	pthread_mutex_t info_lock;
	char holder[K8S_LEASE_IDENTITY_MAX + 1];
	int64_t transitions;
	/* the thread helper */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	atomic_bool stop;
	bool running;
	pthread_t driver, watchdog;
};

static int opts_check(const struct k8s_lease_opts *o, struct err *e)
{
	if (!o || !o->name || !k8s_name_is_valid(o->name) || !o->ns ||
	    !k8s_namespace_is_valid(o->ns))
		return err_set(e, -EINVAL, "lease: a valid name and namespace are required");
	if (!o->identity || !o->identity[0] || strlen(o->identity) > K8S_LEASE_IDENTITY_MAX)
		return err_set(e, -EINVAL, "lease %s: identity must be 1..%d bytes", o->name,
		               K8S_LEASE_IDENTITY_MAX);
	if (!(o->lease_duration_ms > o->renew_deadline_ms &&
	      o->renew_deadline_ms > o->retry_period_ms && o->retry_period_ms > 0))
		return err_set(e, -EINVAL,
		               "lease %s: need lease duration > renew deadline > retry period > 0",
		               o->name);
	return 0;
}

static void opts_defaults(struct k8s_lease_opts *o)
{
	if (o->lease_duration_ms == 0)
		o->lease_duration_ms = K8S_LEASE_DURATION_MS_DEFAULT;
	if (o->renew_deadline_ms == 0)
		o->renew_deadline_ms = K8S_LEASE_RENEW_DEADLINE_MS_DEFAULT;
	if (o->retry_period_ms == 0)
		o->retry_period_ms = K8S_LEASE_RETRY_PERIOD_MS_DEFAULT;
}

struct k8s_lease *k8s_lease_new(struct k8s_client *c, const struct k8s_lease_opts *o, struct err *e)
{
	struct k8s_lease_opts d = o ? *o : (struct k8s_lease_opts){ 0 };
	struct k8s_lease *l;

	opts_defaults(&d);
	if (opts_check(o ? &d : NULL, e))
		return NULL;
	l = xcalloc(1, sizeof(*l));
	l->c = c;
	l->o = d;
	l->o.name = l->name = xstrdup(d.name);
	l->o.ns = l->ns = xstrdup(d.ns);
	l->o.identity = l->identity = xstrdup(d.identity);
	l->transitions = -1;
	atomic_init(&l->valid_until, 0);
	atomic_init(&l->stop, false);
	pthread_mutex_init(&l->tr_lock, NULL);
	pthread_mutex_init(&l->info_lock, NULL);
	pthread_mutex_init(&l->mu, NULL);
	clock_cond_init(&l->cv);
	return l;
}

void k8s_lease_free(struct k8s_lease *l)
{
	if (!l)
		return;
	k8s_lease_stop(l, false);
	json_decref(l->cached);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	pthread_mutex_destroy(&l->info_lock);
	pthread_mutex_destroy(&l->tr_lock);
	free(l->name);
	free(l->ns);
	free(l->identity);
	free(l);
}

/* ---- reading the record ----------------------------------------------------------------- */

static const char *spec_str(json_t *lease, const char *key)
{
	return json_string_value(json_object_get(json_object_get(lease, "spec"), key));
}

static int64_t spec_int(json_t *lease, const char *key)
{
	json_t *v = json_object_get(json_object_get(lease, "spec"), key);
	int64_t n = json_is_integer(v) ? json_integer_value(v) : 0;

	return n < 0 ? 0 : n > DURATION_S_MAX ? DURATION_S_MAX : n;
}

static bool held_by(json_t *lease, const char *identity)
{
	const char *h = spec_str(lease, "holderIdentity");

	return h && strcmp(h, identity) == 0;
}

bool k8s_lease_seen_update(struct k8s_lease_seen *seen, json_t *rec, int64_t received_ms)
{
	const char *holder = spec_str(rec, "holderIdentity");
	const char *renew = spec_str(rec, "renewTime");
	const char *rv = json_string_value(jsonx_get(rec, "metadata.resourceVersion"));
	char sig[K8S_LEASE_SEEN_SIG_MAX];

	snprintf(sig, sizeof(sig), "%.128s|%.63s|%.128s", holder ? holder : "", renew ? renew : "",
	         rv ? rv : "");
	if (strcmp(sig, seen->sig) == 0)
		return false;
	memcpy(seen->sig, sig, sizeof(sig));
	seen->since_ms = received_ms;
	return true;
}

enum k8s_lease_record k8s_lease_judge(json_t *rec, int64_t observed_ms, int64_t now,
                                      int64_t *expires_ms)
{
	const char *holder = spec_str(rec, "holderIdentity");
	int64_t expires = observed_ms + spec_int(rec, "leaseDurationSeconds") * 1000;

	if (expires_ms)
		*expires_ms = expires;
	if (!holder || !holder[0])
		return K8S_LEASE_RECORD_FREE;
	return now >= expires ? K8S_LEASE_RECORD_EXPIRED : K8S_LEASE_RECORD_VALID;
}

enum k8s_lease_action k8s_lease_decide(json_t *lease, const char *identity, int64_t observed_ms,
                                       int64_t now, int64_t *expires_ms)
{
	enum k8s_lease_record r = k8s_lease_judge(lease, observed_ms, now, expires_ms);

	if (r == K8S_LEASE_RECORD_FREE)
		return K8S_LEASE_TAKEOVER;
	if (held_by(lease, identity))
		return K8S_LEASE_RENEW;
	return r == K8S_LEASE_RECORD_EXPIRED ? K8S_LEASE_TAKEOVER : K8S_LEASE_WAIT;
}

/* Remembers obj, just received, as the latest record; restarts the expiry clock when it
 * changed, at the time of receipt (lease.h: the fence margin). */
static void observe(struct k8s_lease *l, json_t *obj)
{
	const char *holder = spec_str(obj, "holderIdentity");

	(void)k8s_lease_seen_update(&l->seen, obj, clock_now_mono(l->o.clock));
	json_decref(l->cached);
	l->cached = json_incref(obj);
	pthread_mutex_lock(&l->info_lock);
	snprintf(l->holder, sizeof(l->holder), "%s", holder ? holder : "");
	l->transitions = spec_int(obj, "leaseTransitions");
	pthread_mutex_unlock(&l->info_lock);
}

/* ---- transitions -------------------------------------------------------------------- */

bool k8s_lease_is_leader(const struct k8s_lease *l, int64_t now)
{
	return now < atomic_load(&l->valid_until);
}

int64_t k8s_lease_valid_until(const struct k8s_lease *l)
{
	return atomic_load(&l->valid_until);
}

/* Reports the current state to on_change if it differs from the last report. */
static bool sync_state(struct k8s_lease *l, int64_t now)
{
	bool leading;

	pthread_mutex_lock(&l->tr_lock);
	leading = k8s_lease_is_leader(l, now);
	if (leading != l->reported) {
		l->reported = leading;
		if (l->o.on_change)
			l->o.on_change(l->o.ctx, leading);
	}
	pthread_mutex_unlock(&l->tr_lock);
	return leading;
}

bool k8s_lease_check(struct k8s_lease *l, int64_t now)
{
	return sync_state(l, now);
}

void k8s_lease_holder(struct k8s_lease *l, char *out, size_t len)
{
	pthread_mutex_lock(&l->info_lock);
	snprintf(out, len, "%s", l->holder);
	pthread_mutex_unlock(&l->info_lock);
}

int64_t k8s_lease_transitions(struct k8s_lease *l)
{
	int64_t t;

	pthread_mutex_lock(&l->info_lock);
	t = l->transitions;
	pthread_mutex_unlock(&l->info_lock);
	return t;
}

/* Wakes the watchdog so it waits for the new deadline. */
static void set_valid_until(struct k8s_lease *l, int64_t v)
{
	atomic_store(&l->valid_until, v);
	pthread_mutex_lock(&l->mu);
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
}

/* ---- writing the record --------------------------------------------------------------- */

static int64_t duration_s(const struct k8s_lease *l)
{
	return (l->o.lease_duration_ms + 999) / 1000;
}

static void spec_set_times(struct k8s_lease *l, json_t *spec, bool acquire)
{
	char ts[32];

	rfc3339_format(clock_now_wall(l->o.clock), RFC3339_MICROS, ts);
	json_object_set_new(spec, "renewTime", json_string(ts));
	if (acquire)
		json_object_set_new(spec, "acquireTime", json_string(ts));
}

/* A new Lease object for the create. */
static json_t *lease_object(struct k8s_lease *l)
{
	json_t *obj =
	        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:i}}", "apiVersion",
	                  "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", l->name,
	                  "namespace", l->ns, "spec", "holderIdentity", l->identity,
	                  "leaseDurationSeconds", (json_int_t)duration_s(l), "leaseTransitions", 0);

	spec_set_times(l, json_object_get(obj, "spec"), true);
	return obj;
}

/* The record we want after act on cur (a copy; cur is borrowed). */
static json_t *lease_updated(struct k8s_lease *l, json_t *cur, enum k8s_lease_action act)
{
	json_t *obj = json_deep_copy(cur);
	json_t *spec = json_object_get(obj, "spec");

	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(obj, "spec", spec);
	}
	if (act == K8S_LEASE_TAKEOVER) {
		json_object_set_new(spec, "holderIdentity", json_string(l->identity));
		json_object_set_new(spec, "leaseTransitions",
		                    json_integer(spec_int(cur, "leaseTransitions") + 1));
	}
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(duration_s(l)));
	spec_set_times(l, spec, act == K8S_LEASE_TAKEOVER);
	return obj;
}

static int put_record(struct k8s_lease *l, json_t *obj, struct err *e)
{
	json_t *out = NULL;
	int rc = k8s_replace(l->c, &k8s_res_leases, l->ns, l->name, NULL, obj, NULL, &out, e);

	if (!rc)
		observe(l, out);
	json_decref(out);
	return rc;
}

static int create_record(struct k8s_lease *l, struct err *e)
{
	json_t *obj = lease_object(l), *out = NULL;
	int rc = k8s_create(l->c, &k8s_res_leases, l->ns, obj, NULL, &out, e);

	if (!rc)
		observe(l, out);
	json_decref(out);
	json_decref(obj);
	if (rc != -EEXIST)
		return rc;
	err_clear(e);
	return err_set(e, -EBUSY, "lease %s: created by another candidate", l->name);
}

/* GET, then renew, take over, or wait. */
static int read_and_act(struct k8s_lease *l, struct err *e)
{
	json_t *cur = NULL, *want;
	enum k8s_lease_action act;
	int rc = k8s_get(l->c, &k8s_res_leases, l->ns, l->name, &cur, e);

	if (rc == -ENOENT) {
		err_clear(e);
		return create_record(l, e);
	}
	if (rc)
		return rc;
	observe(l, cur);
	act = k8s_lease_decide(cur, l->identity, l->seen.since_ms, clock_now_mono(l->o.clock),
	                       &l->wait_until);
	if (act == K8S_LEASE_WAIT) {
		json_decref(cur);
		return err_set(e, -EBUSY, "lease %s: held by %s", l->name, l->holder);
	}
	want = lease_updated(l, cur, act);
	rc = put_record(l, want, e);
	json_decref(want);
	json_decref(cur);
	return rc;
}

int k8s_lease_observe(struct k8s_lease *l, struct err *e)
{
	json_t *cur = NULL;
	int rc = k8s_get(l->c, &k8s_res_leases, l->ns, l->name, &cur, e);

	if (rc == -ENOENT) {
		err_clear(e);
		return 0;
	}
	if (rc)
		return rc;
	observe(l, cur);
	json_decref(cur);
	return 0;
}

/* Renew from the cached record (one PUT); a conflict re-reads. */
static int renew_cached(struct k8s_lease *l, struct err *e)
{
	json_t *want = lease_updated(l, l->cached, K8S_LEASE_RENEW);
	int rc = put_record(l, want, e);

	json_decref(want);
	if (rc != -EBUSY)
		return rc;
	err_clear(e);
	return read_and_act(l, e);
}

int k8s_lease_try_acquire_or_renew(struct k8s_lease *l, int64_t now, struct err *e)
{
	int rc;

	if (l->cached && held_by(l->cached, l->identity))
		rc = renew_cached(l, e);
	else
		rc = read_and_act(l, e);
	if (!rc)
		set_valid_until(l, now + l->o.renew_deadline_ms);
	else if (rc == -EBUSY)
		set_valid_until(l, 0); /* someone else holds it: we lost, at once */
	sync_state(l, now);
	return rc;
}

/* Clears the holder on rec (borrowed) and writes it. */
static int put_released(struct k8s_lease *l, json_t *rec, struct err *e)
{
	json_t *obj = json_deep_copy(rec);
	json_t *spec = json_object_get(obj, "spec");
	int rc;

	json_object_del(spec, "holderIdentity");
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(RELEASED_DURATION_S));
	spec_set_times(l, spec, false);
	rc = put_record(l, obj, e);
	json_decref(obj);
	return rc;
}

int k8s_lease_release(struct k8s_lease *l, struct err *e)
{
	json_t *cur = NULL;
	int rc;

	set_valid_until(l, 0);
	sync_state(l, clock_now_mono(l->o.clock));
	if (!l->cached || !held_by(l->cached, l->identity))
		return 0;
	rc = put_released(l, l->cached, e);
	if (rc != -EBUSY)
		return rc;
	err_clear(e);
	rc = k8s_get(l->c, &k8s_res_leases, l->ns, l->name, &cur, e);
	if (!rc && held_by(cur, l->identity))
		rc = put_released(l, cur, e);
	json_decref(cur);
	return rc == -ENOENT ? 0 : rc;
}

/* ---- the thread helper ----------------------------------------------------------------- */

/* Waits until monotonic ms `until` or stop; the lock is held. */
static void wait_until_locked(struct k8s_lease *l, int64_t until)
{
	if (!atomic_load(&l->stop))
		clock_cond_wait_until(&l->cv, &l->mu, until);
}

static void *driver_main(void *arg)
{
	struct k8s_lease *l = arg;

	while (!atomic_load(&l->stop)) {
		int64_t now = clock_now_mono(l->o.clock), next;
		bool held = now < atomic_load(&l->valid_until);
		struct err e = { 0 };
		int rc = k8s_lease_try_acquire_or_renew(l, now, &e);

		/* a holder that cannot renew says why (it stops holding at its deadline) */
		if (held && rc && rc != -EBUSY)
			log_warn("k8s-lease", "renew failed", "lease", l->name, "error", e.msg,
			         (char *)NULL);

		next = now + l->o.retry_period_ms;
		/* waiting for someone else's record to expire: try right when it does */
		if (rc == -EBUSY && l->wait_until > now && l->wait_until < next)
			next = l->wait_until;
		pthread_mutex_lock(&l->mu);
		while (!atomic_load(&l->stop) && clock_now_mono(l->o.clock) < next)
			wait_until_locked(l, next);
		pthread_mutex_unlock(&l->mu);
	}
	return NULL;
}

/* Ends leadership at its deadline even while the driver is blocked in a request. */
static void *watchdog_main(void *arg)
{
	struct k8s_lease *l = arg;

	pthread_mutex_lock(&l->mu);
	while (!atomic_load(&l->stop)) {
		int64_t v = atomic_load(&l->valid_until);
		int64_t now = clock_now_mono(l->o.clock);

		pthread_mutex_unlock(&l->mu);
		sync_state(l, now);
		pthread_mutex_lock(&l->mu);
		if (atomic_load(&l->valid_until) != v)
			continue; /* renewed meanwhile: look again */
		wait_until_locked(l, v > now ? v : now + l->o.retry_period_ms);
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int k8s_lease_start(struct k8s_lease *l, struct err *e)
{
	int rc;

	if (l->running)
		return err_set(e, -EALREADY, "lease %s: already running", l->name);
	atomic_store(&l->stop, false);
	rc = pthread_create(&l->watchdog, NULL, watchdog_main, l);
	if (rc)
		return err_set(e, -rc, "lease %s: pthread_create failed", l->name);
	rc = pthread_create(&l->driver, NULL, driver_main, l);
	if (rc) {
		k8s_lease_stop(l, false);
		pthread_join(l->watchdog, NULL);
		return err_set(e, -rc, "lease %s: pthread_create failed", l->name);
	}
	l->running = true;
	return 0;
}

void k8s_lease_stop(struct k8s_lease *l, bool release)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	atomic_store(&l->stop, true);
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	if (l->running) {
		pthread_join(l->driver, NULL);
		pthread_join(l->watchdog, NULL);
		l->running = false;
	}
	if (release)
		k8s_lease_release(l, NULL);
}

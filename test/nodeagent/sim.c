/*
 * sim: the simulated instances of the light node (see sim.h for what they answer, and
 * sim_int.h for the files and the locking rules): the table, each instance's view and
 * /v1/status body, the primary Leases and the lease thread, the life cycle.
 *
 * The table: instances by pod IP and by "ns/pod" (replicas name the primary they follow
 * by pod, so a view is always current). Removed instances go to a graveyard that the
 * lease thread empties: it releases their Lease and frees them under the lease mutex.
 */
#include "sim_int.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/k8s/lease.h"
#include "lib/log.h"
#include "lib/strmap.h"

#define SIM_OFFSET0      1024 /* a fresh primary's replication offset */
#define SIM_RETRY_MS     2000 /* a Lease not held yet is tried again this often at most */
#define SIM_LEASE_BROKEN 10000
#define SIM_WAIT_MAX_MS  1000
#define SIM_ENGINE       "redis"
#define SIM_VERSION      "7.0.15"
#define SIM_SERVER_PID   64 /* what a redis-server's pid looks like in its pod */

/* --- pure: ids and the status body ---------------------------------------------------------- */

void na_sim_repl_id(const char *seed, unsigned n, char out[NA_SIM_REPLID_LEN + 1])
{
	char salted[160];
	uint64_t h[3];

	for (unsigned k = 0; k < 3; k++) {
		snprintf(salted, sizeof(salted), "%.120s/%u/%u", seed ? seed : "", n, k);
		h[k] = strmap_hash(salted);
	}
	snprintf(out, NA_SIM_REPLID_LEN + 1, "%016llx%016llx%08llx", (unsigned long long)h[0],
	         (unsigned long long)h[1], (unsigned long long)(h[2] & 0xffffffffULL));
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *replication_json(const struct na_sim_view *v)
{
	bool replica = strcmp(v->role, "replica") == 0;
	bool lag_known = replica && v->primary_offset >= 0;
	json_t *r = json_object();

	json_object_set_new(r, "replId", str_or_null(v->repl_id));
	json_object_set_new(r, "replId2", str_or_null(v->repl_id2));
	json_object_set_new(r, "offset", json_integer(v->offset));
	json_object_set_new(r, "masterReplOffset", json_integer(v->offset));
	json_object_set_new(r, "secondOffset", json_integer(v->repl_id2 && *v->repl_id2 ? 1 : -1));
	json_object_set_new(r, "link", json_string(v->link));
	json_object_set_new(r, "masterHost", replica ? str_or_null(v->master_host) : json_null());
	json_object_set_new(r, "masterPort",
	                    replica ? json_integer(NA_SIM_REDIS_PORT) : json_null());
	json_object_set_new(r, "lagBytes",
	                    lag_known ? json_integer(v->primary_offset > v->offset
	                                                     ? v->primary_offset - v->offset
	                                                     : 0)
	                              : json_null());
	json_object_set_new(r, "lagSeconds", replica ? json_integer(0) : json_null());
	json_object_set_new(r, "connectedReplicas", json_integer(v->connected_replicas));
	json_object_set_new(r, "replicas", json_array());
	return r;
}

static json_t *server_json(const struct na_sim_view *v)
{
	return json_pack("{s:i, s:b, s:i, s:s, s:b, s:b, s:I, s:n}", "pid", SIM_SERVER_PID, "up", 1,
	                 "restarts", 0, "role", v->role, "loading", 0, "syncInProgress", 0,
	                 "uptimeSeconds", (json_int_t)v->uptime_s, "error");
}

int na_sim_status_json(const struct na_sim_view *v, struct buf *out)
{
	json_t *j = json_object();
	char *text;
	int rc;

	json_object_set_new(j, "pod", json_string(v->pod));
	json_object_set_new(j, "state", json_string(v->state));
	json_object_set_new(j, "role", json_string(v->role));
	json_object_set_new(j, "reason", json_string(v->reason ? v->reason : ""));
	json_object_set_new(j, "ready", json_boolean(v->ready));
	json_object_set_new(j, "notReadyReason", v->ready ? json_null() : json_string(v->reason));
	json_object_set_new(j, "fenced", json_boolean(v->fenced));
	json_object_set_new(j, "fenceReason",
	                    v->fenced ? str_or_null(v->fence_reason) : json_null());
	json_object_set_new(j, "leaseHeld", json_boolean(v->lease_held));
	json_object_set_new(j, "primaryCrashed", json_false());
	json_object_set_new(j, "engine", json_string(SIM_ENGINE));
	json_object_set_new(j, "version", json_string(SIM_VERSION));
	json_object_set_new(j, "simulated", json_true());
	json_object_set_new(j, "sessionId", json_null());
	json_object_set_new(j, "configHash", json_null());
	json_object_set_new(j, "uptimeSeconds", json_integer(v->uptime_s));
	json_object_set_new(j, "leaseRenewFailures", json_integer(v->lease_failures));
	json_object_set_new(j, "server", server_json(v));
	json_object_set_new(j, "replication", replication_json(v));
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	rc = buf_append_str(out, text);
	free(text);
	return rc;
}

/* --- the table (callers hold mu) ------------------------------------------------------------ */

void sim_bump(struct na_sim *s)
{
	atomic_fetch_add(&s->generation, 1);
}

struct sim_inst *sim_inst_at(struct na_sim *s, const char *ip)
{
	return strmap_get(&s->by_ip, ip);
}

struct sim_inst *sim_inst_by_key(struct na_sim *s, const char *key)
{
	return strmap_get(&s->by_key, key);
}

struct sim_inst *sim_master_of(struct na_sim *s, const struct sim_inst *i)
{
	return i->master[0] ? strmap_get(&s->by_key, i->master) : NULL;
}

bool sim_serving_primary(const struct sim_inst *i)
{
	return i && i->want_primary && i->acquired;
}

/* The view of i; strings borrow from the table (valid while mu is held). */
void sim_view(struct na_sim *s, struct sim_inst *i, struct na_sim_view *v)
{
	struct sim_inst *m = i->want_primary ? NULL : sim_master_of(s, i);
	bool linked = sim_serving_primary(m);

	memset(v, 0, sizeof(*v));
	v->pod = i->pod;
	v->fenced = i->fenced;
	v->fence_reason = i->fence_reason;
	v->lease_held = i->lease_held;
	v->lease_failures = i->lease_failures;
	v->uptime_s = (clock_wall_ms() - i->started_ms) / 1000;
	v->repl_id = linked ? m->repl_id : i->repl_id;
	v->repl_id2 = linked ? m->repl_id2 : i->repl_id2;
	v->offset = linked ? m->offset : i->offset;
	v->primary_offset = linked ? m->offset : -1;
	v->master_host = m ? m->ip : i->master_host;
	if (sim_serving_primary(i)) {
		v->state = v->role = "primary";
		v->link = "none";
		v->ready = !i->fenced;
		v->reason = i->fenced ? "fenced" : "";
	} else if (i->want_primary) {
		v->state = "starting";
		v->role = "replica";
		v->link = "down";
		v->reason = "waiting for the primary lease";
	} else {
		v->state = v->role = "replica";
		v->link = linked ? "up" : "down";
		v->ready = linked;
		v->reason = linked ? "" : "replication link down";
	}
}

static void inst_unlink(struct na_sim *s, struct sim_inst *i)
{
	strmap_remove(&s->by_ip, i->ip, NULL);
	if (strmap_get(&s->by_key, i->key) == i)
		strmap_remove(&s->by_key, i->key, NULL);
	i->next_gone = s->gone;
	s->gone = i;
	pthread_cond_signal(&s->cv);
	sim_bump(s);
}

void sim_copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static struct sim_inst *inst_new(const struct na_sim_boot *b)
{
	struct sim_inst *i = xcalloc(1, sizeof(*i));

	sim_copy(i->ns, sizeof(i->ns), b->ns);
	sim_copy(i->pod, sizeof(i->pod), b->pod);
	snprintf(i->key, sizeof(i->key), "%s/%s", i->ns, i->pod);
	sim_copy(i->uid, sizeof(i->uid), b->uid);
	sim_copy(i->ip, sizeof(i->ip), b->ip);
	snprintf(i->lease_name, sizeof(i->lease_name), "%.200s-primary", b->cluster);
	i->want_primary = b->current_primary && strcmp(b->current_primary, b->pod) == 0;
	if (!i->want_primary && b->current_primary && *b->current_primary)
		snprintf(i->master, sizeof(i->master), "%s/%s", i->ns, b->current_primary);
	na_sim_repl_id(b->cluster_uid, 0, i->repl_id);
	i->offset = SIM_OFFSET0;
	i->started_ms = clock_wall_ms();
	i->lease_duration_ms = b->lease_duration_ms;
	i->renew_deadline_ms = b->renew_deadline_ms;
	i->renew_period_ms = b->renew_period_ms;
	return i;
}

int na_sim_add(struct na_sim *s, const struct na_sim_boot *b, struct err *e)
{
	struct sim_inst *i = inst_new(b), *old;
	char cluster[SIM_KEY_MAX + 1];
	int rc = 0;

	snprintf(cluster, sizeof(cluster), "%s/%s", i->ns, b->cluster);
	pthread_mutex_lock(&s->mu);
	if (b->tls_cert &&
	    !(i->cred = sim_cred_get(s, cluster, b->tls_cert, b->tls_key, b->tls_ca, e)))
		rc = e->code ? e->code : -EINVAL;
	if (!rc && (old = sim_inst_at(s, i->ip)))
		inst_unlink(s, old);
	if (!rc) {
		strmap_set(&s->by_ip, i->ip, i);
		strmap_set(&s->by_key, i->key, i);
		pthread_cond_signal(&s->cv);
		sim_bump(s);
	}
	pthread_mutex_unlock(&s->mu);
	if (rc)
		free(i);
	return rc;
}

void na_sim_remove(struct na_sim *s, const char *ip)
{
	struct sim_inst *i;

	pthread_mutex_lock(&s->mu);
	if ((i = sim_inst_at(s, ip)))
		inst_unlink(s, i);
	pthread_mutex_unlock(&s->mu);
}

bool na_sim_ready(struct na_sim *s, const char *ip)
{
	struct na_sim_view v = { 0 };
	struct sim_inst *i;

	pthread_mutex_lock(&s->mu);
	if ((i = sim_inst_at(s, ip)))
		sim_view(s, i, &v);
	pthread_mutex_unlock(&s->mu);
	return v.ready;
}

uint64_t na_sim_generation(struct na_sim *s)
{
	return atomic_load(&s->generation);
}

void na_sim_stats(struct na_sim *s, struct na_sim_stats *out)
{
	struct strmap_entry *en;

	memset(out, 0, sizeof(*out));
	out->requests = atomic_load(&s->requests);
	out->rejected = atomic_load(&s->rejected);
	out->plain_to_tls = atomic_load(&s->plain_to_tls);
	out->lease_calls = atomic_load(&s->lease_calls);
	out->lease_failures = atomic_load(&s->lease_failures);
	pthread_mutex_lock(&s->mu);
	out->instances = strmap_len(&s->by_ip);
	for (size_t it = 0; (en = strmap_next(&s->by_ip, &it));)
		out->leases_held += ((struct sim_inst *)en->value)->lease_held;
	pthread_mutex_unlock(&s->mu);
}

/* --- Leases (callers hold lease_mu, not mu) -------------------------------------------------- */

static bool lease_ensure(struct na_sim *s, struct sim_inst *i, struct err *e)
{
	struct k8s_lease_opts o = { .name = i->lease_name,
		                    .ns = i->ns,
		                    .identity = i->pod,
		                    .lease_duration_ms = i->lease_duration_ms,
		                    .renew_deadline_ms = i->renew_deadline_ms,
		                    .retry_period_ms = i->renew_period_ms };

	if (!i->lease)
		i->lease = k8s_lease_new(s->o.client, &o, e);
	return i->lease != NULL;
}

/* One acquire-or-renew; the outcome lands in i under mu. 0 or -errno (-EBUSY: held by
 * someone else). */
int sim_lease_step(struct na_sim *s, struct sim_inst *i, struct err *e)
{
	int64_t now = clock_mono_ms();
	bool held;
	int rc;

	if (!lease_ensure(s, i, e))
		rc = e->code ? e->code : -EINVAL;
	else
		rc = k8s_lease_try_acquire_or_renew(i->lease, now, e);
	atomic_fetch_add(&s->lease_calls, 1);
	if (rc)
		atomic_fetch_add(&s->lease_failures, 1);
	held = i->lease && k8s_lease_is_leader(i->lease, clock_mono_ms());
	pthread_mutex_lock(&s->mu);
	i->lease_held = held;
	if (held && i->want_primary && !i->fenced)
		i->acquired = true;
	if (rc && rc != -EBUSY)
		i->lease_failures++;
	i->next_step = now + (!i->lease                           ? SIM_LEASE_BROKEN
	                      : held                              ? i->renew_period_ms
	                      : i->renew_period_ms < SIM_RETRY_MS ? i->renew_period_ms
	                                                          : SIM_RETRY_MS);
	sim_bump(s);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* Gives the Lease up (if held) and drops the client-side record. */
void sim_lease_drop(struct na_sim *s, struct sim_inst *i)
{
	struct err e = { 0 };

	if (i->lease && k8s_lease_release(i->lease, &e) < 0)
		log_debug(NA_COMPONENT, "lease release failed", "lease", i->lease_name, "ns", i->ns,
		          "error", e.msg, (char *)NULL);
	k8s_lease_free(i->lease);
	i->lease = NULL;
	pthread_mutex_lock(&s->mu);
	i->lease_held = false;
	sim_bump(s);
	pthread_mutex_unlock(&s->mu);
}

/* --- the lease thread ------------------------------------------------------------------------- */

enum lease_work { WORK_NONE, WORK_STEP, WORK_DROP };

/* What i needs now (mu and lease_mu held); *wait_ms shrinks to when it will need it. */
static enum lease_work work_of(struct sim_inst *i, int64_t now, int64_t *wait_ms)
{
	int64_t until;

	if (i->lease && (i->fenced || !i->want_primary))
		return WORK_DROP;
	if (!i->want_primary || i->fenced)
		return WORK_NONE;
	if (i->lease_held && !k8s_lease_is_leader(i->lease, now)) {
		/* the renew deadline passed: a real primary fences itself here */
		i->lease_held = false;
		i->fenced = true;
		sim_copy(i->fence_reason, sizeof(i->fence_reason), "primary lease lost");
		return WORK_DROP;
	}
	if (i->next_step <= now)
		return WORK_STEP;
	until = i->next_step;
	if (i->lease_held && k8s_lease_valid_until(i->lease) < until)
		until = k8s_lease_valid_until(i->lease);
	if (until - now < *wait_ms)
		*wait_ms = until - now;
	return WORK_NONE;
}

static struct sim_inst *pick(struct na_sim *s, enum lease_work *w, int64_t *wait_ms)
{
	int64_t now = clock_mono_ms();
	struct strmap_entry *en;

	*wait_ms = SIM_WAIT_MAX_MS;
	for (size_t it = 0; (en = strmap_next(&s->by_ip, &it));) {
		if ((*w = work_of(en->value, now, wait_ms)) != WORK_NONE) {
			sim_bump(s);
			return en->value;
		}
	}
	return NULL;
}

/* Releases and frees the removed instances (lease_mu held). */
static void bury(struct na_sim *s, struct sim_inst *gone)
{
	while (gone) {
		struct sim_inst *next = gone->next_gone;

		sim_lease_drop(s, gone);
		free(gone);
		gone = next;
	}
}

static void nap(struct na_sim *s, int64_t ms)
{
	int64_t until = clock_wall_ms() + (ms > 0 ? ms : 1);
	struct timespec ts = { until / 1000, (long)(until % 1000) * 1000000L };

	pthread_mutex_lock(&s->mu);
	if (!s->stop && !s->gone)
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	pthread_mutex_unlock(&s->mu);
}

static void *lease_main(void *arg)
{
	struct na_sim *s = arg;

	for (;;) {
		enum lease_work w = WORK_NONE;
		struct sim_inst *i, *gone;
		struct err e = { 0 };
		int64_t wait_ms;
		bool stop;

		pthread_mutex_lock(&s->lease_mu);
		pthread_mutex_lock(&s->mu);
		stop = s->stop;
		gone = stop ? NULL : s->gone;
		s->gone = stop ? s->gone : NULL;
		i = stop ? NULL : pick(s, &w, &wait_ms);
		pthread_mutex_unlock(&s->mu);
		bury(s, gone);
		if (w == WORK_STEP && sim_lease_step(s, i, &e) && e.code != -EBUSY)
			log_warn(NA_COMPONENT, "primary lease step failed", "lease", i->lease_name,
			         "ns", i->ns, "error", e.msg, (char *)NULL);
		else if (w == WORK_DROP)
			sim_lease_drop(s, i);
		pthread_mutex_unlock(&s->lease_mu);
		if (stop)
			return NULL;
		if (!i && !gone)
			nap(s, wait_ms);
	}
}

/* --- life cycle --------------------------------------------------------------------------------- */

struct na_sim *na_sim_new(const struct na_sim_opts *o)
{
	struct na_sim *s;

	if (!o || !o->client || o->size == 0)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->o = *o;
	if (!s->o.port)
		s->o.port = NA_SIM_PORT;
	s->listen_fd = s->acc.ep = -1;
	pthread_mutex_init(&s->mu, NULL);
	pthread_mutex_init(&s->lease_mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	strmap_init(&s->by_ip);
	strmap_init(&s->by_key);
	return s;
}

int na_sim_start(struct na_sim *s, struct err *e)
{
	int rc;

	if ((rc = sim_http_start(s, e)))
		return rc;
	if ((rc = pthread_create(&s->thread, NULL, lease_main, s)))
		return err_set(e, -rc, "simulator: lease thread: %s", strerror(rc));
	s->thread_running = true;
	return 0;
}

static void free_inst(void *v)
{
	struct sim_inst *i = v;

	k8s_lease_free(i->lease);
	free(i);
}

void na_sim_free(struct na_sim *s)
{
	if (!s)
		return;
	sim_http_stop(s);
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->thread_running)
		pthread_join(s->thread, NULL);
	while (s->gone) {
		struct sim_inst *next = s->gone->next_gone;

		free_inst(s->gone);
		s->gone = next;
	}
	strmap_release(&s->by_key, NULL);
	strmap_release(&s->by_ip, free_inst);
	sim_creds_free(s);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->lease_mu);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

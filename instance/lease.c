/*
 * lease: the primary Lease `<cluster>-primary`, driven step-wise over lib/k8s/lease.
 *
 * While this instance is primary, a driver thread calls k8s_lease_try_acquire_or_renew
 * every renewPeriod (counting failures for the metric), and a watchdog thread sleeps
 * until the lease's validity ends and then calls k8s_lease_check, which fires
 * on_change(false) exactly at the renew deadline even while the driver is stuck in a
 * request. on_change(false) fences the server AT ONCE from that thread (pause writes,
 * disconnect clients, marker file) over its own connection, then tells the
 * supervisor, which stops the threads and reports. The lease client's timeout is
 * below the renew deadline, so a hung request cannot outlive it.
 *
 * While not primary, the supervisor reads the Lease every renewPeriod
 * (inst_lease_observe_step): expiry is judged client-go style by our own clock from
 * when the record last changed, and observing keeps that clock running from the old
 * primary's last renewal. Without it a replica asked to promote after a partition would
 * start the clock at the promote request and wait a whole leaseDuration more.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "instance/internal.h"
#include "lib/clock.h"
#include "lib/log.h"

#define FENCE_CMD_TIMEOUT_MS 500 /* one attempt of the self-fence */
#define KEEPALIVE_MS         500 /* the reserved fence connection is pinged this often */

static int64_t min_ms(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static void wake_supervisor(struct inst *in)
{
	uint64_t one = 1;
	ssize_t n = write(in->evfd, &one, sizeof(one));

	(void)n;
}

static void on_change(void *ctx, bool leading)
{
	struct inst *in = ctx;
	struct err e = { 0 };

	if (leading || !atomic_load(&in->lease_active))
		return;
	/* Lost while primary: stop writes before anyone else may take the lease. */
	pthread_mutex_lock(&in->fence_mu);
	if (inst_fence_now(in, in->fence_conn, "primary lease lost", in->fence_budget_ms, &e) < 0)
		log_error("lease", "fencing after lease loss failed", "error", e.msg, (char *)NULL);
	else
		log_warn("lease", "primary lease lost: fenced", "lease", in->lease_name,
		         (char *)NULL);
	pthread_mutex_unlock(&in->fence_mu);
	atomic_store(&in->lease_lost, true);
	wake_supervisor(in);
}

int inst_lease_init(struct inst *in, struct err *e)
{
	struct k8s_client_opts co = { 0 };
	struct k8s_lease_opts lo = { 0 };

	co.timeout_ms = (int)(in->spec.renew_deadline_ms / 2);
	co.retries = -1;
	in->lease_kube = k8s_client_new(in->kcfg, &co, e);
	if (!in->lease_kube)
		return e ? e->code : -EINVAL;
	snprintf(in->lease_name, sizeof(in->lease_name), "%s-primary", in->set.cluster_name);
	lo.name = in->lease_name;
	lo.ns = in->set.pod_namespace;
	lo.identity = in->set.pod_name;
	lo.lease_duration_ms = in->spec.lease_duration_ms;
	lo.renew_deadline_ms = in->spec.renew_deadline_ms;
	lo.retry_period_ms = in->spec.renew_period_ms;
	lo.on_change = on_change;
	lo.ctx = in;
	in->lease = k8s_lease_new(in->lease_kube, &lo, e);
	/* lib/k8s/lease.h: the fence margin; the self-fence must hold within half of it */
	in->fence_budget_ms = (in->spec.lease_duration_ms - in->spec.renew_deadline_ms) / 2;
	in->fence_conn = inst_conn_new(in, NULL, 0,
	                               (int)min_ms(FENCE_CMD_TIMEOUT_MS, in->fence_budget_ms / 2));
	pthread_mutex_init(&in->fence_mu, NULL);
	pthread_mutex_init(&in->lease_mu, NULL);
	clock_cond_init(&in->lease_cv); /* the watchdog's deadline: monotonic */
	return in->lease ? 0 : (e ? e->code : -EINVAL);
}

int inst_lease_acquire(struct inst *in, struct err *e)
{
	return k8s_lease_try_acquire_or_renew(in->lease, clock_mono_ms(), e);
}

void inst_lease_observe_step(struct inst *in)
{
	struct err e = { 0 };
	int64_t now = clock_mono_ms();

	if (!in->lease || in->lease_running || now < in->lease_observe_at)
		return;
	in->lease_observe_at = now + in->spec.renew_period_ms;
	if (k8s_lease_observe(in->lease, &e) < 0)
		log_debug("lease", "cannot read the primary lease", "lease", in->lease_name,
		          "error", e.msg, (char *)NULL);
}

bool inst_lease_held(struct inst *in)
{
	return in->lease && k8s_lease_is_leader(in->lease, clock_mono_ms());
}

/* Sleeps until mono ms `until` or a stop request; returns false when stopping. */
static bool nap_until(struct inst *in, int64_t until)
{
	bool go;

	pthread_mutex_lock(&in->lease_mu);
	while (!in->lease_stop && clock_mono_ms() < until)
		clock_cond_wait_until(&in->lease_cv, &in->lease_mu, until);
	go = !in->lease_stop;
	pthread_mutex_unlock(&in->lease_mu);
	return go;
}

static void *driver_main(void *arg)
{
	struct inst *in = arg;
	/* started right after an acquire or a renew: the next one is due a period later */
	int64_t next = clock_mono_ms() + in->spec.renew_period_ms;

	while (nap_until(in, next)) {
		struct err e = { 0 };
		int64_t now = clock_mono_ms();
		int rc = k8s_lease_try_acquire_or_renew(in->lease, now, &e);

		if (rc) {
			atomic_fetch_add(&in->lease_failures, 1);
			log_warn("lease", "renew failed", "lease", in->lease_name, "error", e.msg,
			         (char *)NULL);
		}
		next = now + in->spec.renew_period_ms;
	}
	return NULL;
}

/*
 * Keeps the fence connection open and authenticated while primary, so the self-fence
 * never needs a new connection (a customer may hold every client slot, maxclients, by
 * then), and an idle `timeout` never closes it. A dropped one is reconnected here.
 */
static void keep_fence_conn(struct inst *in, int64_t now, int64_t *next, bool *was_up)
{
	struct err e = { 0 };
	bool up;

	if (now < *next || pthread_mutex_trylock(&in->fence_mu) != 0)
		return;
	up = vk_ping(in->fence_conn, &e) == 0;
	pthread_mutex_unlock(&in->fence_mu);
	if (!up && *was_up)
		log_warn("lease", "the reserved fence connection is down; retrying", "lease",
		         in->lease_name, "error", e.msg, (char *)NULL);
	*was_up = up;
	/* down: retry at the next tick, before a customer can take the last client slot */
	*next = up ? now + KEEPALIVE_MS : now;
}

static void *watchdog_main(void *arg)
{
	struct inst *in = arg;
	int64_t until = clock_mono_ms(), ping_at = 0;
	bool fence_conn_up = false; /* a server still starting is not worth a warning */

	while (nap_until(in, until)) {
		int64_t now = clock_mono_ms(), v;

		k8s_lease_check(in->lease, now);
		keep_fence_conn(in, now, &ping_at, &fence_conn_up);
		v = k8s_lease_valid_until(in->lease);
		/* wake at the deadline, and at least every 50 ms to catch renewals */
		until = v > now && v - now < 50 ? v : now + 50;
	}
	return NULL;
}

int inst_lease_start(struct inst *in, struct err *e)
{
	int rc;

	if (in->lease_running)
		return 0;
	in->lease_stop = false;
	atomic_store(&in->lease_lost, false);
	pthread_mutex_lock(&in->fence_mu);
	pthread_mutex_lock(&in->mu);
	vk_conn_set_auth(in->fence_conn, INST_OPERATOR_USER, in->shared_pw);
	pthread_mutex_unlock(&in->mu);
	if (vk_conn_connect(in->fence_conn, e) < 0)
		log_debug("lease", "cannot open the reserved fence connection yet", "error",
		          e ? e->msg : "", (char *)NULL);
	err_clear(e);
	pthread_mutex_unlock(&in->fence_mu);
	atomic_store(&in->lease_active, true);
	rc = pthread_create(&in->lease_driver, NULL, driver_main, in);
	if (!rc)
		rc = pthread_create(&in->lease_watchdog, NULL, watchdog_main, in);
	if (rc)
		return err_set(e, -rc, "lease: pthread_create failed");
	in->lease_running = true;
	return 0;
}

void inst_lease_stop(struct inst *in, bool release)
{
	struct err e = { 0 };

	atomic_store(&in->lease_active, false);
	if (in->lease_running) {
		pthread_mutex_lock(&in->lease_mu);
		in->lease_stop = true;
		pthread_cond_broadcast(&in->lease_cv);
		pthread_mutex_unlock(&in->lease_mu);
		pthread_join(in->lease_driver, NULL);
		pthread_join(in->lease_watchdog, NULL);
		in->lease_running = false;
	}
	if (release && in->lease && k8s_lease_release(in->lease, &e) < 0)
		log_warn("lease", "release failed", "lease", in->lease_name, "error", e.msg,
		         (char *)NULL);
}

void inst_lease_free(struct inst *in)
{
	inst_lease_stop(in, false);
	k8s_lease_free(in->lease);
	in->lease = NULL;
	k8s_client_free(in->lease_kube);
	in->lease_kube = NULL;
	vk_conn_free(in->fence_conn);
	in->fence_conn = NULL;
}

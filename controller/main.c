/*
 * main: `redis-operator controller` start-up, leader election and shutdown.
 *
 * Order: settings → API client → events, health/metrics endpoints, informers (caches
 * are kept by every replica, so /readyz is true on a standby) → leader election → on
 * leading: start the poller, and after its first round (or the poll timeout) queue every
 * cluster and start the workers. Losing the Lease stops every write at once (the flag the
 * applier checks before each request, the queue shut down) from the lease watchdog's
 * thread, and the process exits 1. SIGTERM/SIGINT stop gracefully and release the Lease,
 * so a standby takes over without waiting.
 */
#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/controller.h"
#include "controller/internal.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"

#define SYNC_TIMEOUT_MS  120000
#define TICK_MS          200
#define PROFILE_EVERY_MS 60000 /* the workload profile is looked at again this often */

static int load_settings(struct ctl *c, int argc, char **argv)
{
	struct buf errs = BUF_INIT(16384), dump = BUF_INIT(16384);
	int rc = settings_load(ctl_settings_table, ctl_settings_count, CTL_ENV_PREFIX, NULL, argc,
	                       argv, NULL, &c->set, &errs);
	enum log_level lvl = LOG_LEVEL_INFO;
	enum log_format fmt = LOG_FORMAT_JSON;

	if (rc == SETTINGS_HELP) {
		settings_help(ctl_settings_table, ctl_settings_count, CTL_ENV_PREFIX, stdout);
	} else if (rc < 0) {
		fprintf(stderr, "redis-operator controller:\n%s", buf_cstr(&errs));
	} else if (c->set.renew_deadline_ms >= c->set.lease_duration_ms ||
	           c->set.retry_period_ms >= c->set.renew_deadline_ms) {
		fprintf(stderr, "redis-operator controller: need retry-period < renew-deadline < "
		                "lease-duration\n");
		rc = -EINVAL;
	} else {
		log_parse_level(c->set.log_level, &lvl);
		log_parse_format(c->set.log_format, &fmt);
		log_configure(lvl, fmt, c->set.log_debug, NULL);
		settings_dump(ctl_settings_table, ctl_settings_count, &c->set, &dump);
		log_info("controller", "starting", "settings", buf_cstr(&dump), (char *)NULL);
	}
	buf_release(&errs);
	buf_release(&dump);
	return rc;
}

static void set_identity(struct ctl *c)
{
	char host[128] = "controller";

	if (c->set.pod_name && *c->set.pod_name) {
		snprintf(c->identity, sizeof(c->identity), "%s", c->set.pod_name);
		return;
	}
	gethostname(host, sizeof(host) - 1);
	snprintf(c->identity, sizeof(c->identity), "%.100s-%d", host, (int)getpid());
}

static int connect_api(struct ctl *c, struct err *e)
{
	struct k8s_config_opts ko = { 0 };
	struct k8s_client_opts co = { 0 }, lo = { 0 };
	int rc;

	ko.kubeconfig = c->set.kubeconfig;
	ko.prefer_in_cluster = !c->set.kubeconfig;
	if ((rc = k8s_config_load(&ko, &c->kcfg, e)) < 0)
		return rc;
	/* until a leader has counted its workload: the smallest profile's rate */
	ctl_profile_tunables(ctl_profile_pick(0, 0), c->set.workers, c->set.api_qps,
	                     c->set.api_burst, &c->tun);
	co.timeout_ms = (int)c->set.api_timeout_ms;
	co.qps = c->tun.qps;
	co.burst = c->tun.burst;
	c->kube = k8s_client_new(c->kcfg, &co, e);
	lo.timeout_ms = (int)(c->set.renew_deadline_ms / 2);
	lo.retries = -1;
	c->lease_kube = c->kube ? k8s_client_new(c->kcfg, &lo, e) : NULL;
	return c->kube && c->lease_kube ? 0 : -EINVAL;
}

static void configure(struct ctl *c)
{
	c->cfg.operator_image = c->set.image;
	c->cfg.operator_namespace = c->set.namespace     ? c->set.namespace
	                            : c->kcfg->namespace ? c->kcfg->namespace
	                                                 : "default";
	c->cfg.run_as_user = c->set.run_as_user;
	c->cfg.poll_failures_down = (int)c->set.poll_failures_down;
	c->cfg.promote_timeout_ms = c->set.promote_timeout_ms;
	c->cfg.restart_timeout_ms = c->set.restart_timeout_ms;
	c->cfg.max_lag_bytes = (int64_t)c->set.max_lag_bytes;
	c->cfg.rotation_grace_ms = c->set.rotation_grace_ms;
}

static int setup(struct ctl *c, struct err *e)
{
	struct wq_options qo;
	struct k8s_events_opts eo = { 0 };
	int rc;

	set_identity(c);
	if ((rc = connect_api(c, e)) < 0)
		return rc;
	configure(c);
	wq_options_default(&qo);
	qo.backoff_base_ms = c->set.backoff_base_ms;
	qo.backoff_cap_ms = c->set.backoff_cap_ms;
	qo.seed = (uint64_t)clock_mono_ms();
	c->q = wq_new(&qo);
	eo.controller = CTL_EVENTS_CONTROLLER;
	eo.instance = c->identity;
	if (!(c->events = k8s_events_new(c->kube, &eo, e)))
		return -EINVAL;
	if ((rc = k8s_events_start(c->events, e)) < 0 || (rc = ctl_http_start(c, e)) < 0)
		return rc;
	return ctl_informers_start(c, e);
}

/* --- leader election ------------------------------------------------------------------- */

static void on_leading(void *ctx, bool leading)
{
	struct ctl *c = ctx;

	if (leading) {
		atomic_store(&c->leading, true);
		return;
	}
	if (!atomic_exchange(&c->leading, false))
		return;
	/* Stop every write now: the applier checks `leading`, the queue hands out nothing. */
	atomic_store(&c->lost, true);
	wq_shutdown(c->q);
}

static int elect(struct ctl *c, struct err *e)
{
	struct k8s_lease_opts o = { 0 };

	if (!c->set.leader_elect) {
		atomic_store(&c->leading, true);
		return 0;
	}
	o.name = c->set.lease_name;
	o.ns = c->cfg.operator_namespace;
	o.identity = c->identity;
	o.lease_duration_ms = c->set.lease_duration_ms;
	o.renew_deadline_ms = c->set.renew_deadline_ms;
	o.retry_period_ms = c->set.retry_period_ms;
	o.on_change = on_leading;
	o.ctx = c;
	if (!(c->leader = k8s_lease_new(c->lease_kube, &o, e)))
		return -EINVAL;
	return k8s_lease_start(c->leader, e);
}

/* --- main loop ------------------------------------------------------------------------- */

static bool stop_requested(const sigset_t *set)
{
	struct timespec ts = { 0, TICK_MS * 1000000L };
	siginfo_t si;

	return sigtimedwait(set, &si, &ts) > 0;
}

/*
 * A new leader reconciles from its first poll round on: a status built before any answer
 * came says 0 ready instances, and a cluster Ready throughout an operator upgrade would
 * show Ready False for one write (and a second time-to-Ready). A round takes at most the
 * poll timeout; a poller that cannot finish one does not hold the workers back for long.
 */
static void wait_first_round(struct ctl *c)
{
	int64_t until = clock_mono_ms() + c->set.poll_timeout_ms + c->set.poll_period_ms;
	struct timespec ts = { 0, 10 * 1000000L };

	while (!atomic_load(&c->poll_rounds) && clock_mono_ms() < until)
		nanosleep(&ts, NULL);
}

/* The workload profile from what the caches hold (controller/profile.h), logged. It
 * only grows while leading: a larger fleet gets its rate and its extra workers at once; a
 * smaller one keeps them until the next leader. */
static int pick_profile(struct ctl *c, struct err *e)
{
	size_t clusters = k8s_informer_len(c->inf[CTL_INF_CLUSTERS]);
	size_t pods = k8s_informer_len(c->inf[CTL_INF_PODS]);
	const struct ctl_profile *p = ctl_profile_pick(clusters, pods);
	char nc[24], np[24], w[16], q[24], b[16];
	struct ctl_tunables t;

	if (c->tun.profile && p->workers <= c->tun.profile->workers && c->nworkers)
		return 0; /* the same, or smaller */
	ctl_profile_tunables(p, c->set.workers, c->set.api_qps, c->set.api_burst, &t);
	pthread_mutex_lock(&c->mu);
	c->tun = t;
	pthread_mutex_unlock(&c->mu);
	k8s_client_set_rate(c->kube, t.qps, t.burst);
	snprintf(nc, sizeof(nc), "%zu", clusters);
	snprintf(np, sizeof(np), "%zu", pods);
	snprintf(w, sizeof(w), "%d%s", t.workers, t.given & CTL_TUNABLE_WORKERS ? " (set)" : "");
	snprintf(q, sizeof(q), "%g%s", t.qps, t.given & CTL_TUNABLE_QPS ? " (set)" : "");
	snprintf(b, sizeof(b), "%d%s", t.burst, t.given & CTL_TUNABLE_BURST ? " (set)" : "");
	log_info("controller", "workload profile", "profile", p->name, "clusters", nc, "pods", np,
	         "workers", w, "kube_api_qps", q, "kube_api_burst", b, (char *)NULL);
	return c->nworkers ? ctl_workers_start(c, e) : 0; /* the extra workers */
}

static int start_leading(struct ctl *c, struct err *e)
{
	pick_profile(c, e);
	if (ctl_poller_start(c, e) < 0)
		return -1;
	wait_first_round(c);
	ctl_enqueue_all(c);
	return ctl_workers_start(c, e);
}

static int run(struct ctl *c, const sigset_t *sigs)
{
	struct err e = { 0 };
	bool started = false;
	int64_t profile_at = 0;

	while (!atomic_load(&c->synced)) {
		if (stop_requested(sigs))
			return CTL_EXIT_OK;
		if (ctl_informers_wait(c, TICK_MS) == 0)
			log_info("controller", "caches synced", (char *)NULL);
	}
	if (elect(c, &e) < 0) {
		log_error("controller", "leader election", "error", e.msg, (char *)NULL);
		return CTL_EXIT_STARTUP;
	}
	for (;;) {
		if (atomic_load(&c->lost)) {
			log_error("controller", "leader lease lost: stopped writing, exiting",
			          (char *)NULL);
			return CTL_EXIT_LEASE_LOST;
		}
		if (!started && atomic_load(&c->leading)) {
			if (start_leading(c, &e) < 0) {
				log_error("controller", "cannot start", "error", e.msg,
				          (char *)NULL);
				return CTL_EXIT_STARTUP;
			}
			log_info("controller", "leading: reconciling", "identity", c->identity,
			         (char *)NULL);
			started = true;
			profile_at = clock_mono_ms() + PROFILE_EVERY_MS;
		}
		if (started && clock_mono_ms() >= profile_at) {
			profile_at = clock_mono_ms() + PROFILE_EVERY_MS;
			if (pick_profile(c, &e) < 0)
				log_warn("controller", "cannot start more workers", "error", e.msg,
				         (char *)NULL);
		}
		if (stop_requested(sigs))
			return CTL_EXIT_OK;
	}
}

static void teardown(struct ctl *c, int code)
{
	bool graceful = code == CTL_EXIT_OK;

	atomic_store(&c->stopping, true);
	atomic_store(&c->leading, false);
	if (c->q)
		ctl_workers_stop(c);
	ctl_poller_stop(c);
	if (c->leader)
		k8s_lease_stop(c->leader, graceful && !atomic_load(&c->lost));
	k8s_events_free(c->events);
	ctl_informers_stop(c);
	ctl_http_stop(c);
	k8s_lease_free(c->leader);
	wq_free(c->q);
	k8s_client_free(c->lease_kube);
	k8s_client_free(c->kube);
	k8s_config_free(c->kcfg);
	strmap_release(&c->insts, free);
	strmap_release(&c->memos, free);
	strmap_release(&c->bk_obs, free);
	strmap_release(&c->bk_stats, free);
	strmap_release(&c->cl_stats, free);
	pthread_mutex_destroy(&c->mu);
	settings_release(ctl_settings_table, ctl_settings_count, &c->set);
}

int controller_main(int argc, char **argv)
{
	struct ctl *c = xcalloc(1, sizeof(*c));
	struct err e = { 0 };
	sigset_t sigs;
	int code;

	mallopt(M_ARENA_MAX, 2);
	if ((code = load_settings(c, argc, argv)) != 0) {
		free(c);
		return code == SETTINGS_HELP ? CTL_EXIT_OK : CTL_EXIT_USAGE;
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL); /* before any thread: only main sees them */
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&c->mu, NULL);
	strmap_init(&c->insts);
	strmap_init(&c->memos);
	strmap_init(&c->bk_obs);
	strmap_init(&c->bk_stats);
	strmap_init(&c->cl_stats);
	ctl_metrics_init(&c->metrics);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (setup(c, &e) < 0) {
		log_error("controller", "cannot start", "error", e.msg, (char *)NULL);
		code = CTL_EXIT_STARTUP;
	} else {
		code = run(c, &sigs);
	}
	log_info("controller", "stopping", (char *)NULL);
	teardown(c, code);
	free(c);
	return code;
}

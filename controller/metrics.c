/*
 * metrics: the controller's Prometheus series (text exposition 0.0.4), from atomics
 * that any thread bumps:
 *   redis_operator_reconciles_total, redis_operator_reconcile_errors_total,
 *   redis_operator_reconcile_duration_seconds (histogram),
 *   redis_operator_actions_total, redis_operator_action_errors_total,
 *   redis_operator_instance_polls_total, redis_operator_instance_poll_errors_total,
 *   redis_operator_failovers_total, redis_operator_failover_duration_seconds (histogram),
 *   redis_operator_switchovers_total, redis_operator_switchover_write_pause_seconds
 *   (histogram, the pause the old primary's manager measured), redis_operator_events_total,
 *   redis_operator_leader, redis_operator_workqueue_depth, redis_operator_clusters,
 *   redis_operator_api_requests_total{verb} (every Kubernetes API request both clients
 *   sent, watches and leader-Lease renewals included: lib/k8s/client's counters),
 *   redis_operator_api_rate_qps (the main client's request rate in force: the
 *   --kube-api-qps ceiling, lower while the API server answers 429; lib/k8s/rate.h) and
 *   redis_operator_api_throttled_total (how often those 429s cut it),
 *   redis_operator_workload_info{profile,workers,kube_api_qps,kube_api_burst} (the
 *   tunables in force: controller/profile.h);
 * per cluster: the backups (below) and redis_operator_cluster_* (metrics_cluster.h).
 */
#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "controller/metrics_cluster.h"
#include "lib/buf.h"

static const double failover_bounds[CTL_HIST_BUCKETS] = { 0.5, 1, 2, 3, 5, 10, 15, 30, 60, 120 };
static const double pause_bounds[CTL_HIST_BUCKETS] = { 0.001, 0.002, 0.005, 0.01, 0.025,
	                                               0.05,  0.1,   0.25,  0.5,  1 };
static const double reconcile_bounds[CTL_HIST_BUCKETS] = { 0.001, 0.005, 0.01, 0.025, 0.05,
	                                                   0.1,   0.25,  0.5,  1,     5 };

void ctl_metrics_init(struct ctl_metrics *m)
{
	m->failover_seconds.bounds = failover_bounds;
	m->pause_seconds.bounds = pause_bounds;
	m->reconcile_seconds.bounds = reconcile_bounds;
}

void ctl_hist_observe(struct ctl_hist *h, double seconds)
{
	size_t i = 0;
	double old, nw;

	while (i < CTL_HIST_BUCKETS && seconds > h->bounds[i])
		i++;
	atomic_fetch_add(&h->count[i], 1);
	atomic_fetch_add(&h->n, 1);
	old = atomic_load(&h->sum);
	do
		nw = old + seconds;
	while (!atomic_compare_exchange_weak(&h->sum, &old, nw));
}

static void head(struct buf *o, const char *name, const char *type, const char *help)
{
	buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(struct buf *o, const char *name, const char *help, atomic_ullong *v)
{
	head(o, name, "counter", help);
	buf_printf(o, "%s %llu\n", name, (unsigned long long)atomic_load(v));
}

static void gauge(struct buf *o, const char *name, const char *help, long long v)
{
	head(o, name, "gauge", help);
	buf_printf(o, "%s %lld\n", name, v);
}

static void histogram(struct buf *o, const char *name, const char *help, struct ctl_hist *h)
{
	unsigned long long cum = 0;

	head(o, name, "histogram", help);
	for (size_t i = 0; i < CTL_HIST_BUCKETS; i++) {
		cum += atomic_load(&h->count[i]);
		buf_printf(o, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i], cum);
	}
	cum += atomic_load(&h->count[CTL_HIST_BUCKETS]);
	buf_printf(o, "%s_bucket{le=\"+Inf\"} %llu\n", name, cum);
	buf_printf(o, "%s_sum %g\n%s_count %llu\n", name, atomic_load(&h->sum), name,
	           (unsigned long long)atomic_load(&h->n));
}

/* The API requests of both clients (caches, writes, events; the leader Lease), by verb. */
static void api_requests(struct buf *o, struct ctl *c)
{
	unsigned long long a[K8S_VERB_COUNT], b[K8S_VERB_COUNT];
	const char *name = "redis_operator_api_requests_total";

	k8s_client_requests(c->kube, a);
	k8s_client_requests(c->lease_kube, b);
	head(o, name, "counter", "Kubernetes API requests sent, by verb.");
	for (int v = 0; v < K8S_VERB_COUNT; v++)
		buf_printf(o, "%s{verb=\"%s\"} %llu\n", name, k8s_verb_name((enum k8s_verb)v),
		           a[v] + b[v]);
}

/* The main client's adaptive rate (the Lease client has no rate limit). */
static void api_rate(struct buf *o, struct ctl *c)
{
	unsigned long long cuts;
	double qps;

	if (!c->kube)
		return;
	k8s_client_rate(c->kube, &qps, &cuts);
	head(o, "redis_operator_api_rate_qps", "gauge",
	     "Kubernetes API request rate in force: --kube-api-qps, lower after 429 answers.");
	buf_printf(o, "redis_operator_api_rate_qps %g\n", qps);
	head(o, "redis_operator_api_throttled_total", "counter",
	     "Times the API server's 429 Too Many Requests cut the request rate.");
	buf_printf(o, "redis_operator_api_throttled_total %llu\n", cuts);
}

/* The workload profile and the tunables a leader runs with (profile.h). */
static void workload_info(struct buf *o, struct ctl *c)
{
	struct ctl_tunables t;

	pthread_mutex_lock(&c->mu);
	t = c->tun;
	pthread_mutex_unlock(&c->mu);
	if (!t.profile)
		return;
	head(o, "redis_operator_workload_info", "gauge",
	     "The workload profile and the tunables in force (a setting's value wins).");
	buf_printf(o,
	           "redis_operator_workload_info{profile=\"%s\",workers=\"%d\","
	           "kube_api_qps=\"%g\",kube_api_burst=\"%d\"} 1\n",
	           t.profile->name, t.workers, t.qps, t.burst);
}

/* Per cluster, from backup.c's records: labels namespace and cluster. */
static void backup_series(struct buf *o, struct ctl *c)
{
	static const char *const names[] = {
		"redis_operator_backup_last_success_timestamp_seconds",
		"redis_operator_backup_last_duration_seconds",
		"redis_operator_backup_last_size_bytes",
		"redis_operator_backups_completed_total",
		"redis_operator_backups_failed_total",
	};
	static const char *const help[] = {
		"When the cluster's last backup completed.",
		"How long it took.",
		"Bytes it stored.",
		"Backups completed.",
		"Backups failed.",
	};

	pthread_mutex_lock(&c->mu);
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct strmap_entry *ent;
		size_t it = 0;

		head(o, names[k], k < 3 ? "gauge" : "counter", help[k]);
		while ((ent = strmap_next(&c->bk_stats, &it))) {
			const struct ctl_backup_stats *s = ent->value;
			const char *slash = strchr(ent->key, '/');
			double v[] = { (double)s->last_success_wall_ms / 1000.0, s->last_duration_s,
				       (double)s->last_size, (double)s->completed,
				       (double)s->failed };

			if (slash)
				buf_printf(o, "%s{namespace=\"%.*s\",cluster=\"%s\"} %.3f\n",
				           names[k], (int)(slash - ent->key), ent->key, slash + 1,
				           v[k]);
		}
	}
	pthread_mutex_unlock(&c->mu);
}

int ctl_metrics_render(struct ctl *c, struct buf *o)
{
	struct ctl_metrics *m = &c->metrics;
	struct wq_metrics qm = { 0 };

	counter(o, "redis_operator_reconciles_total", "Reconciles run.", &m->reconciles);
	counter(o, "redis_operator_reconcile_errors_total",
	        "Reconciles that failed and were retried.", &m->reconcile_errors);
	histogram(o, "redis_operator_reconcile_duration_seconds", "Time one reconcile took.",
	          &m->reconcile_seconds);
	counter(o, "redis_operator_actions_total", "Planned actions executed.", &m->actions);
	counter(o, "redis_operator_action_errors_total", "Planned actions that failed.",
	        &m->action_errors);
	counter(o, "redis_operator_instance_polls_total", "GET /v1/status requests.", &m->polls);
	counter(o, "redis_operator_instance_poll_errors_total", "Status polls that failed.",
	        &m->poll_errors);
	counter(o, "redis_operator_failovers_total", "Failovers completed.", &m->failovers);
	histogram(o, "redis_operator_failover_duration_seconds",
	          "From detecting a failed primary to the new one promoted.", &m->failover_seconds);
	counter(o, "redis_operator_switchovers_total", "Switchovers completed.", &m->switchovers);
	histogram(o, "redis_operator_switchover_write_pause_seconds",
	          "Writes paused on the old primary during a switchover.", &m->pause_seconds);
	counter(o, "redis_operator_events_total", "Events recorded.", &m->events);
	gauge(o, "redis_operator_leader", "1 when this controller holds the leader Lease.",
	      atomic_load(&c->leading) ? 1 : 0);
	if (c->q)
		wq_metrics(c->q, &qm);
	gauge(o, "redis_operator_workqueue_depth", "Clusters waiting to be reconciled.",
	      (long long)qm.depth);
	gauge(o, "redis_operator_clusters", "RedisClusters in the cache.",
	      c->inf[CTL_INF_CLUSTERS] ? (long long)k8s_informer_len(c->inf[CTL_INF_CLUSTERS]) : 0);
	api_requests(o, c);
	api_rate(o, c);
	workload_info(o, c);
	backup_series(o, c);
	return ctl_metrics_cluster_render(c, o);
}

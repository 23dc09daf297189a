/*
 * metrics_cluster: the controller's per-cluster series (labels namespace, cluster), kept in
 * ctl->cl_stats ("ns/cluster" → struct ctl_cluster_stats *, under ctl->mu) and rendered by
 * ctl_metrics_cluster_render for every RedisCluster in the cache. Counters are bumped by
 * apply.c (failovers, switchovers), reconcile.c (reconciles, their errors and seconds) and
 * the poller (a writable primary each round, fenced instances); the rest is read from the
 * cached object at render time (status.failover, status.timeToReadySeconds, instances,
 * the controller's client certificate in <cluster>-operator-tls), and from the
 * RedisBackup and RedisScheduledBackup caches (the last completed backup, the schedules).
 *
 * Availability: after each poll round, a cluster that had a writable primary (a polled
 * instance answering as primary, not fenced, its server up) earns the seconds since the
 * previous round in redis_operator_cluster_available_seconds_total; every round of the
 * cluster earns them in redis_operator_cluster_observed_seconds_total. A gap longer than
 * CTL_CM_MAX_GAP_PERIODS poll periods (leadership moved, the controller stalled) counts in
 * neither. The ratio of their rates is the cluster's availability as the operator saw it.
 *
 * Counters start at 0 with each controller process; time to Ready survives a restart in
 * status.timeToReadySeconds (redis_operator_cluster_last_time_to_ready_seconds).
 */
#ifndef REDIS_OPERATOR_CONTROLLER_METRICS_CLUSTER_H
#define REDIS_OPERATOR_CONTROLLER_METRICS_CLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "controller/internal.h"

#define CTL_CM_MAX_GAP_PERIODS 3

enum ctl_cm_counter {
	CTL_CM_FAILOVERS,
	CTL_CM_SWITCHOVERS,
	CTL_CM_FENCE_EVENTS, /* instances that became fenced, as the poller saw it */
	CTL_CM_RECONCILES,
	CTL_CM_RECONCILE_ERRORS,
	CTL_CM_COUNTERS,
};

struct ctl_cluster_stats {
	unsigned long long n[CTL_CM_COUNTERS];
	double reconcile_s, available_s, observed_s;
	int64_t last_round_mono;                 /* 0: no round counted yet (or a gap) */
	bool touched;                            /* [this round] one of its pods was polled */
	bool round_writable;                     /* [this round] a writable primary so far */
	long long round_fenced;                  /* [this round] fenced instances so far */
	long long round_sentinels, round_quorum; /* [this round] sentinels; with quorum */
	bool counted;                /* a round was accounted: writable, fenced are its */
	bool writable;               /* the last accounted round had a writable primary */
	long long fenced;            /* fenced instances in the last accounted round */
	long long sentinels, quorum; /* sentinels answering in it; those with quorum */
	/* time to Ready, observed when status turned Ready (bounds: ctl_cm_ready_bounds) */
	unsigned long long ready_count[CTL_HIST_BUCKETS + 1], ready_n;
	double ready_sum;
	bool ready_seen;               /* ready_base holds the last counted write's */
	unsigned long long ready_base; /* hash of its timeToReadySeconds without the last entry */
};

extern const double ctl_cm_ready_bounds[CTL_HIST_BUCKETS];

/* [any thread] Bumps counter k of cluster ns/name. */
void ctl_cm_bump(struct ctl *c, const char *ns, const char *name, enum ctl_cm_counter k);
/* [any thread] One reconcile of key (only "ns/name" keys count) took seconds. */
void ctl_cm_reconciled(struct ctl *c, const char *key, double seconds, bool failed);
/* [any thread] A status patch of ns/name was written: when it carries a new
 * timeToReadySeconds (Ready just turned True), its last value goes into the histogram. */
void ctl_cm_status_written(struct ctl *c, const char *ns, const char *name, json_t *patch);
/* [poller] Pod pod_key of cluster_key was polled this round (its result is in c->insts). */
void ctl_cm_observe(struct ctl *c, const char *cluster_key, const char *pod_key);
/* [poller] The round ended at mono: accounts every cluster observed in it. */
void ctl_cm_round_end(struct ctl *c, int64_t mono);
/* [mu held] Drops the series of a cluster that is gone. */
void ctl_cm_forget_locked(struct ctl *c, const char *key);
/* Pure: one round of s at mono (writable, fenced as observed); gaps longer than max_gap_ms
 * count nowhere. Exposed for tests. */
void ctl_cm_account(struct ctl_cluster_stats *s, bool writable, long long fenced, int64_t mono,
                    int64_t max_gap_ms);
/* Prometheus text of the per-cluster families into out. */
int ctl_metrics_cluster_render(struct ctl *c, struct buf *out);

#endif

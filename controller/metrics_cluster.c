/*
 * metrics_cluster: the per-cluster series (controller/metrics_cluster.h says what each
 * counts). Rendering takes one row per cached RedisCluster (values from its object, its
 * operator-tls Secret and its stats), then writes one family after the other from a table.
 */
#include <stdio.h>
#include <string.h>

#include "controller/metrics_cluster.h"
#include "controller/pki.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/rfc3339.h"

const double ctl_cm_ready_bounds[CTL_HIST_BUCKETS] = { 5, 10, 15, 20, 30, 45, 60, 120, 300, 600 };

/* [mu held] The stats of "ns/name", created on first use. */
static struct ctl_cluster_stats *stats_locked(struct ctl *c, const char *key)
{
	bool created;
	struct strmap_entry *ent = strmap_upsert(&c->cl_stats, key, &created);

	if (created)
		ent->value = xcalloc(1, sizeof(struct ctl_cluster_stats));
	return ent->value;
}

void ctl_cm_bump(struct ctl *c, const char *ns, const char *name, enum ctl_cm_counter k)
{
	char key[K8S_INFORMER_KEY_MAX + 1];

	snprintf(key, sizeof(key), "%s/%s", ns, name);
	pthread_mutex_lock(&c->mu);
	stats_locked(c, key)->n[k]++;
	pthread_mutex_unlock(&c->mu);
}

void ctl_cm_reconciled(struct ctl *c, const char *key, double seconds, bool failed)
{
	struct ctl_cluster_stats *s;

	if (strchr(key, ':') || !strchr(key, '/'))
		return; /* a backup or schedule key (controller/backup.h) */
	pthread_mutex_lock(&c->mu);
	s = stats_locked(c, key);
	s->n[CTL_CM_RECONCILES]++;
	s->n[CTL_CM_RECONCILE_ERRORS] += failed;
	s->reconcile_s += seconds;
	pthread_mutex_unlock(&c->mu);
}

/* FNV-1a over the entries before the last: a write that rebuilds the same transition
 * from a cache that had not seen the first one yet has the same base, and is not counted
 * again; a new transition appends to what was written, so its base differs. */
static unsigned long long ttr_base(json_t *ttr, size_t n)
{
	unsigned long long h = 14695981039346656037ull;

	for (size_t i = 0; i + 1 < n; i++) {
		double d = json_number_value(json_array_get(ttr, i));
		unsigned char b[sizeof(d)];

		memcpy(b, &d, sizeof(d));
		for (size_t k = 0; k < sizeof(b); k++)
			h = (h ^ b[k]) * 1099511628211ull;
	}
	return h;
}

void ctl_cm_status_written(struct ctl *c, const char *ns, const char *name, json_t *patch)
{
	json_t *ttr = json_object_get(patch, "timeToReadySeconds");
	size_t n = json_array_size(ttr), i = 0;
	double secs = n ? json_number_value(json_array_get(ttr, n - 1)) : 0;
	unsigned long long base;
	char key[K8S_INFORMER_KEY_MAX + 1];
	struct ctl_cluster_stats *s;

	if (!n)
		return;
	base = ttr_base(ttr, n);
	while (i < CTL_HIST_BUCKETS && secs > ctl_cm_ready_bounds[i])
		i++;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	pthread_mutex_lock(&c->mu);
	s = stats_locked(c, key);
	if (!s->ready_seen || s->ready_base != base) {
		s->ready_seen = true;
		s->ready_base = base;
		s->ready_count[i]++;
		s->ready_n++;
		s->ready_sum += secs;
	}
	pthread_mutex_unlock(&c->mu);
}

void ctl_cm_observe(struct ctl *c, const char *cluster_key, const char *pod_key)
{
	struct ctl_cluster_stats *s;
	const struct ctl_inst *i;

	pthread_mutex_lock(&c->mu);
	s = stats_locked(c, cluster_key);
	if (!s->touched) {
		s->touched = true;
		s->round_writable = false;
		s->round_fenced = s->round_sentinels = s->round_quorum = 0;
	}
	i = strmap_get(&c->insts, pod_key);
	if (i && i->seen && i->failures == 0 && strcmp(i->role, CTL_ROLE_SENTINEL) == 0) {
		s->round_sentinels++;
		s->round_quorum += i->sen.has_view && i->sen.quorum_ok;
	} else if (i && i->seen && i->failures == 0) {
		s->round_fenced += i->fenced;
		s->round_writable |=
		        strcmp(i->role, CTL_ROLE_PRIMARY) == 0 && !i->fenced && i->server_up;
	}
	pthread_mutex_unlock(&c->mu);
}

void ctl_cm_account(struct ctl_cluster_stats *s, bool writable, long long fenced, int64_t mono,
                    int64_t max_gap_ms)
{
	int64_t gap = s->last_round_mono ? mono - s->last_round_mono : -1;

	if (gap >= 0 && gap <= max_gap_ms) {
		s->observed_s += (double)gap / 1000.0;
		if (writable)
			s->available_s += (double)gap / 1000.0;
	}
	if (s->counted && fenced > s->fenced)
		s->n[CTL_CM_FENCE_EVENTS] += (unsigned long long)(fenced - s->fenced);
	s->counted = true;
	s->writable = writable;
	s->fenced = fenced;
	s->last_round_mono = mono;
}

void ctl_cm_round_end(struct ctl *c, int64_t mono)
{
	int64_t max_gap = CTL_CM_MAX_GAP_PERIODS * c->set.poll_period_ms;
	struct strmap_entry *ent;
	size_t it = 0;

	pthread_mutex_lock(&c->mu);
	while ((ent = strmap_next(&c->cl_stats, &it))) {
		struct ctl_cluster_stats *s = ent->value;

		if (!s->touched)
			continue;
		s->touched = false;
		ctl_cm_account(s, s->round_writable, s->round_fenced, mono, max_gap);
		s->sentinels = s->round_sentinels;
		s->quorum = s->round_quorum;
	}
	pthread_mutex_unlock(&c->mu);
}

void ctl_cm_forget_locked(struct ctl *c, const char *key)
{
	void *v = NULL;

	if (strmap_remove(&c->cl_stats, key, &v))
		free(v);
}

/* --- rendering ------------------------------------------------------------------------- */

enum rv {
	RV_FAILOVERS, /* the CTL_CM_* counters first, at their own indices */
	RV_RECONCILE_S = CTL_CM_COUNTERS,
	RV_AVAILABLE_S,
	RV_OBSERVED_S,
	RV_WRITABLE,
	RV_FENCED,
	RV_INSTANCES,
	RV_READY,
	RV_FO_ACTIVE,
	RV_FO_STARTED,
	RV_TTR_LAST,
	RV_CERT_EXPIRY,
	RV_SENTINELS,
	RV_QUORUM,
	RV_LAST_BACKUP,
	RV_SCHEDULES,
	RV_COUNT,
};

struct row {
	char ns[CTL_NAME_MAX + 1], name[CTL_NAME_MAX + 1];
	double v[RV_COUNT];
	bool has[RV_COUNT];
	unsigned long long ready_count[CTL_HIST_BUCKETS + 1], ready_n;
	double ready_sum;
};

static const struct family {
	const char *name, *type, *help;
	int v; /* an enum rv, or a CTL_CM_* counter (the same index) */
} families[] = {
	{ "redis_operator_cluster_failovers_total", "counter", "Failovers completed.",
	  CTL_CM_FAILOVERS },
	{ "redis_operator_cluster_switchovers_total", "counter", "Switchovers completed.",
	  CTL_CM_SWITCHOVERS },
	{ "redis_operator_cluster_fence_events_total", "counter",
	  "Instances that became fenced, as the poller saw them.", CTL_CM_FENCE_EVENTS },
	{ "redis_operator_cluster_reconciles_total", "counter", "Reconciles run.",
	  CTL_CM_RECONCILES },
	{ "redis_operator_cluster_reconcile_errors_total", "counter",
	  "Reconciles that failed and were retried.", CTL_CM_RECONCILE_ERRORS },
	{ "redis_operator_cluster_reconcile_seconds_total", "counter",
	  "Seconds spent reconciling (with reconciles_total: the mean).", RV_RECONCILE_S },
	{ "redis_operator_cluster_available_seconds_total", "counter",
	  "Seconds with a writable primary, as the poller saw it.", RV_AVAILABLE_S },
	{ "redis_operator_cluster_observed_seconds_total", "counter",
	  "Seconds the poller watched the cluster (the availability's denominator).",
	  RV_OBSERVED_S },
	{ "redis_operator_cluster_writable_primary", "gauge",
	  "1 when the last poll round found a writable primary (leader only).", RV_WRITABLE },
	{ "redis_operator_cluster_fenced_instances", "gauge",
	  "Fenced instances in the last poll round (leader only).", RV_FENCED },
	{ "redis_operator_cluster_instances", "gauge", "status.instances.", RV_INSTANCES },
	{ "redis_operator_cluster_ready_instances", "gauge", "status.readyInstances.", RV_READY },
	{ "redis_operator_cluster_failover_in_progress", "gauge",
	  "1 while status.failover is set (failover, switchover or primary restart).",
	  RV_FO_ACTIVE },
	{ "redis_operator_cluster_failover_started_timestamp_seconds", "gauge",
	  "When the failover in progress started (status.failover.startedAt).", RV_FO_STARTED },
	{ "redis_operator_cluster_last_time_to_ready_seconds", "gauge",
	  "The last status.timeToReadySeconds (survives controller restarts).", RV_TTR_LAST },
	{ "redis_operator_cluster_client_certificate_expiry_timestamp_seconds", "gauge",
	  "When the controller's client certificate in <cluster>-operator-tls expires.",
	  RV_CERT_EXPIRY },
	{ "redis_operator_cluster_sentinels", "gauge",
	  "Sentinels that answered the last poll round (mode sentinel; leader only).",
	  RV_SENTINELS },
	{ "redis_operator_cluster_sentinels_with_quorum", "gauge",
	  "Of them, those whose SENTINEL CKQUORUM passed.", RV_QUORUM },
	{ "redis_operator_cluster_last_backup_completed_timestamp_seconds", "gauge",
	  "The newest stoppedAt of the cluster's Completed RedisBackups (cache).", RV_LAST_BACKUP },
	{ "redis_operator_cluster_backup_schedules", "gauge",
	  "RedisScheduledBackups of the cluster that are not suspended.", RV_SCHEDULES },
};

#define HIST_NAME "redis_operator_cluster_time_to_ready_seconds"

static void set(struct row *r, enum rv k, double v)
{
	r->v[k] = v;
	r->has[k] = true;
}

/* The values the cached object and its operator-tls Secret give. */
static void from_object(struct ctl *c, json_t *obj, struct row *r)
{
	json_t *ttr = jsonx_get(obj, "status.timeToReadySeconds"), *n;
	const char *started = jsonx_get_string(obj, "status.failover.startedAt");
	struct ctl_pki_client tls = { 0 };
	struct err e = { 0 };
	json_t *sec = ctl_operator_tls_secret(c, r->ns, r->name, &e);
	int64_t ms;

	if (json_is_integer(n = jsonx_get(obj, "status.instances")))
		set(r, RV_INSTANCES, (double)json_integer_value(n));
	if (json_is_integer(n = jsonx_get(obj, "status.readyInstances")))
		set(r, RV_READY, (double)json_integer_value(n));
	set(r, RV_FO_ACTIVE, json_is_object(jsonx_get(obj, "status.failover")) ? 1 : 0);
	if (started && rfc3339_parse(started, &ms) == 0)
		set(r, RV_FO_STARTED, (double)ms / 1000.0);
	if (json_array_size(ttr))
		set(r, RV_TTR_LAST,
		    json_number_value(json_array_get(ttr, json_array_size(ttr) - 1)));
	/* now 0: an expired certificate is read too, its date is what the alert wants */
	if (sec && ctl_pki_client_read(sec, 0, &tls, &e) == 0)
		set(r, RV_CERT_EXPIRY, (double)tls.not_after_ms / 1000.0);
	ctl_pki_client_release(&tls);
	json_decref(sec);
}

/* [mu held] The values the stats give; the poller's only while its rounds are recent. */
static void from_stats_locked(struct ctl *c, const char *key, struct row *r, int64_t now_mono)
{
	const struct ctl_cluster_stats *s = strmap_get(&c->cl_stats, key);
	int64_t max_gap = CTL_CM_MAX_GAP_PERIODS * c->set.poll_period_ms;

	for (int k = 0; k <= RV_OBSERVED_S; k++)
		set(r, (enum rv)k, 0);
	if (!s)
		return;
	for (int k = 0; k < CTL_CM_COUNTERS; k++)
		set(r, (enum rv)k, (double)s->n[k]);
	set(r, RV_RECONCILE_S, s->reconcile_s);
	set(r, RV_AVAILABLE_S, s->available_s);
	set(r, RV_OBSERVED_S, s->observed_s);
	if (s->counted && now_mono - s->last_round_mono <= max_gap) {
		set(r, RV_WRITABLE, s->writable);
		set(r, RV_FENCED, (double)s->fenced);
		if (s->sentinels) {
			set(r, RV_SENTINELS, (double)s->sentinels);
			set(r, RV_QUORUM, (double)s->quorum);
		}
	}
	memcpy(r->ready_count, s->ready_count, sizeof(r->ready_count));
	r->ready_n = s->ready_n;
	r->ready_sum = s->ready_sum;
}

/* The row of ns/cluster in by_key ("ns/cluster" → row), NULL when not cached. */
static struct row *row_of(struct strmap *by_key, json_t *obj, const char *cluster)
{
	char key[K8S_INFORMER_KEY_MAX + 1];

	if (!cluster)
		return NULL;
	snprintf(key, sizeof(key), "%s/%s", jsonx_get_string(obj, "metadata.namespace"), cluster);
	return strmap_get(by_key, key);
}

/* The last Completed RedisBackup of each row, and the schedules not suspended. */
static void from_backups(struct ctl *c, struct strmap *by_key)
{
	json_t *all = c->inf[CTL_INF_BACKUPS] ? k8s_informer_list(c->inf[CTL_INF_BACKUPS]) : NULL,
	       *obj;
	size_t i;
	int64_t ms;

	json_array_foreach (all, i, obj) {
		struct row *r = row_of(by_key, obj, jsonx_get_string(obj, "spec.clusterName"));
		const char *phase = jsonx_get_string(obj, "status.phase"),
		           *at = jsonx_get_string(obj, "status.stoppedAt");

		if (r && phase && strcmp(phase, "Completed") == 0 && at &&
		    rfc3339_parse(at, &ms) == 0 &&
		    (!r->has[RV_LAST_BACKUP] || (double)ms / 1000.0 > r->v[RV_LAST_BACKUP]))
			set(r, RV_LAST_BACKUP, (double)ms / 1000.0);
	}
	json_decref(all);
	all = c->inf[CTL_INF_SCHEDULES] ? k8s_informer_list(c->inf[CTL_INF_SCHEDULES]) : NULL;
	json_array_foreach (all, i, obj) {
		const char *cl = jsonx_get_string(obj, "spec.clusterName");
		struct row *r = row_of(
		        by_key, obj, cl ? cl : jsonx_get_string(obj, "spec.template.clusterName"));

		if (r && !json_is_true(jsonx_get(obj, "spec.suspend")))
			set(r, RV_SCHEDULES, r->v[RV_SCHEDULES] + 1);
	}
	json_decref(all);
}

static size_t rows(struct ctl *c, struct row **out)
{
	json_t *all = c->inf[CTL_INF_CLUSTERS] ? k8s_informer_list(c->inf[CTL_INF_CLUSTERS]) : NULL,
	       *obj;
	size_t n = json_array_size(all), i;
	struct row *r = xcalloc(n + 1, sizeof(*r));
	int64_t now = clock_mono_ms();
	struct strmap by_key = STRMAP_INIT;

	json_array_foreach (all, i, obj) {
		char key[K8S_INFORMER_KEY_MAX + 1];

		snprintf(r[i].ns, sizeof(r[i].ns), "%s",
		         jsonx_get_string(obj, "metadata.namespace"));
		snprintf(r[i].name, sizeof(r[i].name), "%s",
		         jsonx_get_string(obj, "metadata.name"));
		snprintf(key, sizeof(key), "%s/%s", r[i].ns, r[i].name);
		from_object(c, obj, &r[i]);
		pthread_mutex_lock(&c->mu);
		from_stats_locked(c, key, &r[i], now);
		pthread_mutex_unlock(&c->mu);
		set(&r[i], RV_SCHEDULES, 0);
		strmap_set(&by_key, key, &r[i]);
	}
	from_backups(c, &by_key);
	strmap_release(&by_key, NULL);
	json_decref(all);
	*out = r;
	return n;
}

static void histogram(struct buf *o, const struct row *r, size_t n)
{
	buf_printf(o, "# HELP %s %s\n# TYPE %s histogram\n", HIST_NAME,
	           "From Ready False to True, as the status recorded it (this process).",
	           HIST_NAME);
	for (size_t i = 0; i < n; i++) {
		unsigned long long cum = 0;
		const char *ns = r[i].ns, *name = r[i].name;

		for (size_t b = 0; b < CTL_HIST_BUCKETS; b++) {
			cum += r[i].ready_count[b];
			buf_printf(o, "%s_bucket{namespace=\"%s\",cluster=\"%s\",le=\"%g\"} %llu\n",
			           HIST_NAME, ns, name, ctl_cm_ready_bounds[b], cum);
		}
		buf_printf(o, "%s_bucket{namespace=\"%s\",cluster=\"%s\",le=\"+Inf\"} %llu\n",
		           HIST_NAME, ns, name, cum + r[i].ready_count[CTL_HIST_BUCKETS]);
		buf_printf(o, "%s_sum{namespace=\"%s\",cluster=\"%s\"} %g\n", HIST_NAME, ns, name,
		           r[i].ready_sum);
		buf_printf(o, "%s_count{namespace=\"%s\",cluster=\"%s\"} %llu\n", HIST_NAME, ns,
		           name, r[i].ready_n);
	}
}

int ctl_metrics_cluster_render(struct ctl *c, struct buf *o)
{
	struct row *r = NULL;
	size_t n = rows(c, &r);

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", families[f].name, families[f].help,
		           families[f].name, families[f].type);
		for (size_t i = 0; i < n; i++)
			if (r[i].has[families[f].v])
				buf_printf(o, "%s{namespace=\"%s\",cluster=\"%s\"} %.10g\n",
				           families[f].name, r[i].ns, r[i].name,
				           r[i].v[families[f].v]);
	}
	histogram(o, r, n);
	free(r);
	return 0;
}

/*
 * internal: the controller process's context and the internal API between its files. Not a
 * public header: only the controller's own .c files include it (the pure parts use view.h,
 * actions.h, desired.h and plan.h and never this).
 *
 * Threads and what they touch (STYLE.md "Concurrency"):
 *  - main (main.c): start-up, signals, leader election, shutdown. Owns everything and
 *    frees it after the others stopped.
 *  - informer threads (lib/k8s/informer): keep the caches; their handlers only map an
 *    object to its cluster key and wq_add it.
 *  - workers (reconcile.c): wq_get a cluster key, build a view from the caches and the
 *    poll results, plan, apply (apply.c). A key is never processed twice at once.
 *  - poller (poller.c): every poll period, GET /v1/status of every data pod in parallel
 *    (lib/k8s/multi); stores the results in `insts` and queues the clusters whose
 *    instances changed in a way that matters.
 *  - lease helper + watchdog (lib/k8s/lease): on_change(false) stops writes at once
 *    (`leading` false, the queue shut down) and wakes main, which exits non-zero.
 *  - libmicrohttpd threads (http.c): /healthz, /readyz, /metrics; read atomics only.
 * Fields marked [mu] are guarded by `mu`; [const] are set before any thread starts;
 * atomics are read anywhere.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_INTERNAL_H
#define REDIS_OPERATOR_CONTROLLER_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/redisbackup.h"
#include "controller/actions.h"
#include "controller/pki.h"
#include "controller/profile.h"
#include "lib/err.h"
#include "lib/k8s/client.h"
#include "lib/k8s/events.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/lease.h"
#include "lib/settings.h"
#include "lib/strmap.h"
#include "lib/wq.h"

#define CTL_ENV_PREFIX        "REDIS_OPERATOR_"
#define CTL_WORKERS_MAX       64
#define CTL_EVENTS_CONTROLLER "redis.io/redis-operator"

struct ctl_settings {
	char *kubeconfig, *namespace, *pod_name, *image, *lease_name, *watch_namespace;
	char *cluster_selector;
	bool leader_elect;
	int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
	int64_t workers;
	int64_t poll_period_ms, poll_timeout_ms, poll_failures_down;
	int64_t api_timeout_ms, instance_timeout_ms;
	int64_t api_qps, api_burst;
	int64_t resync_ms, status_refresh_ms, backoff_base_ms, backoff_cap_ms;
	int64_t promote_timeout_ms, restart_timeout_ms, rotation_grace_ms;
	uint64_t max_lag_bytes;
	char *bind_address;
	int64_t health_port, metrics_port, run_as_user;
	char *log_level, *log_format, *log_debug;
};

extern const struct settings_desc ctl_settings_table[];
extern const size_t ctl_settings_count;

enum ctl_inf {
	CTL_INF_CLUSTERS,
	CTL_INF_PODS,
	CTL_INF_PVCS,
	CTL_INF_SERVICES,
	CTL_INF_SECRETS,
	CTL_INF_SAS,
	CTL_INF_ROLES,
	CTL_INF_ROLEBINDINGS,
	CTL_INF_PDBS,
	CTL_INF_NETPOLS,
	CTL_INF_LEASES,
	CTL_INF_ENDPOINTSLICES,
	CTL_INF_BACKUPS,   /* RedisBackups: all (backup.c) */
	CTL_INF_SCHEDULES, /* RedisScheduledBackups: all (backup_sched.c) */
	CTL_INF_COUNT,
};

/* Histograms for /metrics: fixed buckets, counts as atomics. */
#define CTL_HIST_BUCKETS 10
struct ctl_hist {
	const double *bounds; /* CTL_HIST_BUCKETS upper bounds, seconds */
	atomic_ullong count[CTL_HIST_BUCKETS + 1];
	atomic_ullong n;
	_Atomic double sum;
};

struct ctl_metrics {
	atomic_ullong reconciles, reconcile_errors, actions, action_errors;
	atomic_ullong polls, poll_errors, failovers, switchovers, events;
	struct ctl_hist failover_seconds, pause_seconds, reconcile_seconds;
};

/* A cluster's backups, for /metrics (backup.c). */
struct ctl_backup_stats {
	int64_t last_success_wall_ms;
	double last_duration_s;
	int64_t last_size;
	unsigned long long completed, failed;
};

/* What the controller remembers between reconciles of one cluster (never needed for
 * correctness: a restarted controller starts afresh). */
struct ctl_memo {
	struct k8s_lease_seen lease_seen; /* the primary Lease's expiry clock (lib/k8s/lease.h) */
	int64_t status_written_mono;
	uint64_t lag_print;       /* ctl_lag_print of the view the status was last written from */
	int64_t roles_epoch_mono; /* the last action that changed roles (ctl_view) */
	char auth_rv[K8S_RV_MAX + 1];
	int64_t auth_seen_mono; /* when auth_rv was first seen */
};

struct ctl {
	struct ctl_settings set; /* [const] */
	struct ctl_config cfg;   /* [const] */
	struct ctl_tunables tun; /* workers and API rate in force: set, else the profile's */
	char identity[K8S_LEASE_IDENTITY_MAX + 1];
	struct k8s_config *kcfg;
	struct k8s_client *kube, *lease_kube;
	struct k8s_informer *inf[CTL_INF_COUNT];
	struct k8s_lease *leader;
	struct k8s_events *events;
	struct wq *q;

	atomic_bool leading;  /* writes allowed */
	atomic_bool lost;     /* leadership lost: exit non-zero */
	atomic_bool stopping; /* shutting down */
	atomic_bool synced;   /* every informer listed once */

	pthread_t workers[CTL_WORKERS_MAX];
	size_t nworkers;
	pthread_t poller;
	bool poller_running;
	atomic_bool poller_stop;
	_Atomic int64_t poll_at; /* poll early at this monotonic ms (roles changed); 0: no */
	atomic_uint poll_rounds; /* poll rounds completed (the workers wait for the first) */

	pthread_mutex_t mu;
	struct strmap insts;    /* [mu] "ns/pod" → struct ctl_inst * */
	struct strmap memos;    /* [mu] "ns/cluster" → struct ctl_memo * */
	struct strmap bk_obs;   /* [mu] "ns/pod" → its last /v1/status "backup" as JSON text */
	struct strmap bk_stats; /* [mu] "ns/cluster" → struct ctl_backup_stats * */
	struct strmap cl_stats; /* [mu] "ns/cluster" → struct ctl_cluster_stats * */

	struct ctl_metrics metrics;
	void *http_health, *http_metrics; /* struct MHD_Daemon * */
};

/* --- informers.c ---------------------------------------------------------------------- */
int ctl_informers_start(struct ctl *c, struct err *e);
void ctl_informers_stop(struct ctl *c);
/* Waits until every informer listed once: 0 or -ETIMEDOUT. */
int ctl_informers_wait(struct ctl *c, int64_t timeout_ms);
/* The cache of res (borrowed), or NULL when no informer keeps that kind. */
struct k8s_informer *ctl_informer_of(struct ctl *c, const struct k8s_resource *res);
/* What the cache of kind i stores of obj (trimmed in place, as the informer does). */
void ctl_informer_trim(enum ctl_inf i, json_t *obj);
/* The cache kind of a resource plural ("pods"), or -1. */
int ctl_informer_kind(const char *plural);
/* Queues every cached RedisCluster. */
void ctl_enqueue_all(struct ctl *c);

/* --- reconcile.c ---------------------------------------------------------------------- */
int ctl_workers_start(struct ctl *c, struct err *e);
void ctl_workers_stop(struct ctl *c);
/* One reconcile of "ns/name" (exposed for tests driving it by hand). */
int ctl_reconcile(struct ctl *c, const char *key);
/*
 * The volatile status fields' rule (docs/footprint.md): a reconcile rewrites them when
 * a replica's lag in bytes changed and refresh_ms (--status-refresh) passed since the
 * last status write, or when CTL_VOLATILE_AGE_FACTOR times refresh_ms passed (offsets
 * and lastSeen alone: 100 s by default). age_ms: since the last write. Pure.
 */
#define CTL_VOLATILE_AGE_FACTOR 10
bool ctl_volatile_due(int64_t age_ms, int64_t refresh_ms, bool lag_changed);
/* A fingerprint of the lags (bytes) of the pods of a view, in the view's order. Pure. */
uint64_t ctl_lag_print(const struct ctl_pod *pods, size_t npods);

/* --- backup.c, backup_sched.c ---------------------------------------------------------- */
/* One reconcile of a "backup:ns/name" or "schedule:ns/name" key (controller/backup.h). */
int ctl_backup_reconcile(struct ctl *c, const char *key);
int ctl_schedule_reconcile(struct ctl *c, const char *key);
/* The poller's /v1/status body of pod "ns/pod": keeps its "backup" object and queues the
 * RedisBackup it names when it changed. */
void ctl_backup_observe(struct ctl *c, const char *pod_key, const char *body, size_t len);
/* [mu held] Drops what was observed of pod "ns/pod" (the poller stopped polling it). */
void ctl_backup_forget_locked(struct ctl *c, const char *pod_key);
/* The credentials Secret of a destination: its own credentialsSecret, else the cluster's
 * spec.backupCredentialsSecret; NULL: none (borrowed from the JSON). */
const char *ctl_backup_secret_name(json_t *cluster, const struct api_destination *d);
/* The store of destination d with its credentials Secret's values (read now; the store
 * keeps its own copy, ours are wiped); NULL with e set. Free it with objstore_free. */
struct objstore;
struct objstore *ctl_backup_store_open(struct ctl *c, const char *ns, json_t *cluster,
                                       const struct api_destination *d, struct err *e);
/* Deletes a backup's stored objects (manifest first, then the data) from the controller. */
int ctl_backup_delete_objects(struct ctl *c, const char *ns, json_t *cluster,
                              const struct api_redis_backup *b, struct err *e);

/* --- apply.c -------------------------------------------------------------------------- */
/*
 * Runs the plan's actions in order, then its status. Returns 0; the errno of the first
 * failed non-optional action (the rest did not run); -ECANCELED when leadership was
 * lost; or, when only optional actions failed (every action ran), the errno of the
 * first of them (retry with backoff).
 * *not_yet_ms is 0, or > 0 when the plan stopped at an action with busy_retry_ms that
 * was refused with "not yet" (409/503): the plan waits for something, it did not fail
 * (the return is 0 then), and the cluster is to be looked at again after that delay.
 */
int ctl_apply(struct ctl *c, const struct ctl_view *v, const struct ctl_plan *p,
              int64_t *not_yet_ms);

/* --- instclient.c --------------------------------------------------------------------- */
/*
 * POST https://ip:8000/v1/<op> with body (http:// when tls is NULL: a pod without the
 * instance TLS volume); 0 on HTTP 200 or 202 (*answer, when not NULL, gets the parsed answer),
 * else -EIO/-ETIMEDOUT/-ECONNREFUSED/-EBUSY (409)/-EAGAIN (503) with the instance's error
 * message in e.
 */
int ctl_instance_post(const char *ip, const char *op, json_t *body, int64_t timeout_ms,
                      const struct ctl_pki_client *tls, json_t **answer, struct err *e);
/* The cluster's <cluster>-operator-tls from the Secret cache (a reference), or NULL with
 * -ENOENT in e while it is not there, not labelled for this cluster or not its own
 * (controller/owner.h). */
json_t *ctl_operator_tls_secret(struct ctl *c, const char *ns, const char *cluster, struct err *e);
/* The controller's TLS material for cluster ns/cluster from the Secret cache
 * (<cluster>-operator-tls): 0, -ENOENT (not there yet), -EINVAL (bad material; e names
 * the Secret and the key). Release out with ctl_pki_client_release. */
int ctl_instance_tls(struct ctl *c, const char *ns, const char *cluster, struct ctl_pki_client *out,
                     struct err *e);
/* A random password of DESIRED_PASSWORD_LEN letters and digits from /dev/urandom (free
 * with free_secret). NULL when the kernel gives no randomness. */
char *ctl_random_password(void);

/* --- poller.c ------------------------------------------------------------------------- */
int ctl_poller_start(struct ctl *c, struct err *e);
void ctl_poller_stop(struct ctl *c);
/* Asks for an early poll in delay_ms (an earlier request wins). After a role change the
 * delay lets the instance managers' own INFO polls (500 ms) see it first; after a
 * primary Lease changed hands it is short. Any thread. */
#define CTL_KICK_ROLES_MS 600
#define CTL_KICK_LEASE_MS 150
void ctl_poller_kick(struct ctl *c, int64_t delay_ms);
/* Records that roles changed in cluster key now (see ctl_view.roles_epoch_mono). */
void ctl_memo_epoch(struct ctl *c, const char *key);
/* Copies the last poll result for ns/pod into out (zeroed when none). */
void ctl_poller_get(struct ctl *c, const char *ns, const char *pod, struct ctl_inst *out);
/* True when a /v1/status answer differs from the previous one in what the planner reads
 * (roles, readiness, fencing, links, reachability; not offsets). Pure. */
bool ctl_inst_significant_change(const struct ctl_inst *old, const struct ctl_inst *nw,
                                 int failures_down);

/* --- http.c, metrics.c ------------------------------------------------------------------ */
int ctl_http_start(struct ctl *c, struct err *e);
void ctl_http_stop(struct ctl *c);
void ctl_metrics_init(struct ctl_metrics *m);
void ctl_hist_observe(struct ctl_hist *h, double seconds);
/* Prometheus text of every controller series into out. */
int ctl_metrics_render(struct ctl *c, struct buf *out);

#endif

/*
 * model: the controller's pure data model. A reconcile gathers what it observed about
 * one RedisCluster into a `struct ctl_view` (the decoded cluster, its pods with their
 * instance managers' last /v1/status, its PVCs and other children, the primary Lease,
 * the persisted failover state, the time); the planner (plan.h) turns a view into a
 * `struct ctl_plan`: an ordered list of actions and the status to write; the applier
 * (apply.c) executes the actions. Only the applier and the reconciler do I/O, so views
 * are built by hand in the unit tests.
 *
 * Ownership: a view borrows everything it points to (the reconciler keeps the JSON
 * alive for the view's life); strings inside struct ctl_inst are arrays (a copy). A
 * plan owns its actions (ctl_plan_release). Pure functions; any thread, one view per
 * thread at a time.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_MODEL_H
#define REDIS_OPERATOR_CONTROLLER_MODEL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "api/ports.h"
#include "api/rediscluster.h"
#include "lib/err.h"
#include "lib/k8s/path.h"
#include "lib/rfc3339.h"

/* Labels and annotations the controller owns (DESIGN.md §3). */
#define CTL_LABEL_MANAGED_BY  "app.kubernetes.io/managed-by"
#define CTL_MANAGED_BY        "redis-operator"
#define CTL_LABEL_NAME        "app.kubernetes.io/name"
#define CTL_LABEL_INSTANCE    "app.kubernetes.io/instance"
#define CTL_LABEL_COMPONENT   "app.kubernetes.io/component"
#define CTL_LABEL_CLUSTER     "redis.io/cluster"
#define CTL_LABEL_POD         "redis.io/instance"
#define CTL_LABEL_ROLE        "redis.io/role"
#define CTL_ANN_SPEC_HASH     "redis.io/spec-hash"
#define CTL_ANN_LIVE_HASH     "redis.io/live-hash"
#define CTL_ANN_SWITCHOVER    "redis.io/switchover-to"
#define CTL_ANN_APPROVE       "redis.io/approve-primary-update"
#define CTL_ANN_HIBERNATION   "redis.io/hibernation"
#define CTL_ANN_FENCED        "redis.io/fencedInstances"
#define CTL_SELECTOR_MANAGED  CTL_LABEL_MANAGED_BY "=" CTL_MANAGED_BY
#define CTL_ROLE_PRIMARY      "primary"
#define CTL_ROLE_REPLICA      "replica"
#define CTL_USER_FENCE_REASON "redis.io/fencedInstances"

/* Ports of a data pod (api/ports.h: the instance manager's defaults). */
#define CTL_PORT_REDIS   API_PORT_SERVER
#define CTL_PORT_HTTP    API_PORT_HTTP
#define CTL_PORT_METRICS API_PORT_METRICS

#define CTL_NAME_MAX   253
#define CTL_REPLID_MAX 48
#define CTL_WORD_MAX   24
#define CTL_MSG_MAX    256
#define CTL_TIME_MAX   RFC3339_MAX

/* --- an instance manager's /v1/status, as last polled ------------------------------ */

struct ctl_inst {
	bool seen;                /* at least one poll answered with a parsable status */
	int failures;             /* consecutive failed polls since the last success */
	int64_t last_ok_mono;     /* when the last good answer came (monotonic ms) */
	int64_t last_ok_wall;     /* the same, wall ms (status.instancesStatus[].lastSeen) */
	char uid[64];             /* the pod uid the poll was for */
	char state[CTL_WORD_MAX]; /* booting starting primary replica parked crashed stopping */
	char role[CTL_WORD_MAX];  /* the server's: primary replica unknown */
	bool ready, fenced, lease_held, primary_crashed, server_up, loading, syncing;
	char fence_reason[CTL_MSG_MAX];
	char reason[CTL_MSG_MAX];
	char repl_id[CTL_REPLID_MAX], repl_id2[CTL_REPLID_MAX];
	long long offset;        /* own offset; -1 unknown */
	long long lag_bytes;     /* replicas; -1 unknown */
	long long lag_seconds;   /* replicas: seconds since the last I/O; -1 unknown */
	char link[CTL_WORD_MAX]; /* up down syncing none */
	char master_host[64];
	int master_port;
	long long server_pid;
	char version[32];
	char engine[16];
};

/*
 * Parses a /v1/status body (api_inst_status_decode, api/instance_v1.h) into out (the
 * polling fields seen/failures/last_ok_* and uid are left alone; strings too long for
 * their array are cut; a null integer is -1, 0 for server.pid and masterPort). 0,
 * -EPROTO (not the expected JSON, with e naming the field) or -EMSGSIZE (len over
 * CTL_STATUS_BODY_MAX).
 */
#define CTL_STATUS_BODY_MAX API_INST_STATUS_BODY_MAX
int ctl_inst_parse(const char *body, size_t len, struct ctl_inst *out, struct err *e);
/* True when the poll result is current: seen and the last poll did not fail. */
bool ctl_inst_ok(const struct ctl_inst *i);
/* Claims to be a writable primary: state primary, server role primary, not fenced. */
bool ctl_inst_is_writable_primary(const struct ctl_inst *i);
/* The SERVER reports master and its manager no confirmed fence, whatever the manager's
 * own state says (a failed demotion leaves a manager that calls itself a replica in
 * front of a writable master). */
bool ctl_inst_server_writable(const struct ctl_inst *i);
/* ctl_inst_ok, and answered after the last role change (see roles_epoch_mono). */
struct ctl_view;
bool ctl_inst_current(const struct ctl_view *v, const struct ctl_inst *i);

/* --- children ---------------------------------------------------------------------- */

struct ctl_pod {
	const char *name;
	int serial;  /* the number after "<cluster>-"; -1 when the name has none */
	json_t *obj; /* the cached Pod (borrowed) */
	const char *uid, *ip, *phase, *role_label, *spec_hash, *live_hash;
	bool deleting; /* metadata.deletionTimestamp set */
	bool ready;    /* condition Ready=True */
	struct ctl_inst inst;
};

struct ctl_pvc {
	const char *name;
	int serial;
	json_t *obj;
	bool deleting;
	uint64_t size;     /* spec.resources.requests.storage in bytes; 0 unknown */
	uint64_t capacity; /* status.capacity.storage in bytes; 0 unknown (not bound) */
};

/* The other children, one slot each (NULL when absent). */
enum ctl_child {
	CTL_CHILD_SA,
	CTL_CHILD_ROLE,
	CTL_CHILD_ROLEBINDING,
	CTL_CHILD_NETPOL,
	CTL_CHILD_AUTH_SECRET,     /* <name>-auth, when spec.authSecret is unset */
	CTL_CHILD_OPERATOR_SECRET, /* <name>-operator */
	CTL_CHILD_CONN_SECRET,     /* spec.connectionSecret */
	CTL_CHILD_SVC_LEADER,
	CTL_CHILD_SVC_REPLICA,
	CTL_CHILD_SVC_ANY,
	CTL_CHILD_PDB_PRIMARY,
	CTL_CHILD_PDB_REPLICA,
	CTL_CHILD_LEASE,
	CTL_CHILD_OPERATOR_TLS,     /* <name>-operator-tls (controller/pki.h) */
	CTL_CHILD_INSTANCE_TLS,     /* <name>-instance-tls */
	CTL_CHILD_LEADER_ENDPOINTS, /* the EndpointSlice <name>-leader */
	CTL_CHILD_COUNT,
};

/* What the controller makes of the primary Lease `<cluster>-primary`. */
enum ctl_lease_state {
	CTL_LEASE_ABSENT,
	CTL_LEASE_HELD,     /* a holder renewing it */
	CTL_LEASE_RELEASED, /* no holder: free to take */
	CTL_LEASE_EXPIRED,  /* a holder that stopped renewing for a whole lease duration */
};

struct ctl_lease {
	enum ctl_lease_state state;
	char holder[CTL_NAME_MAX + 1];
	bool ever_acquired; /* acquireTime set or transitions > 0: a primary has run */
};

/* status.failover: the persisted state of a failover or switchover in progress (its
 * type, encoder and decoder: struct api_failover_status, api/rediscluster.h). */
#define CTL_FO_FENCING    API_FAILOVER_FENCING
#define CTL_FO_PROMOTING  API_FAILOVER_PROMOTING
#define CTL_FO_SWITCHOVER API_FAILOVER_SWITCHOVER
#define CTL_FO_RESTART    API_FAILOVER_PRIMARY_RESTART

struct ctl_failover {
	bool active;
	char phase[CTL_WORD_MAX];
	char from[CTL_NAME_MAX + 1];
	char to[CTL_NAME_MAX + 1];
	char reason[CTL_MSG_MAX];
	char started_at[CTL_TIME_MAX];
	int64_t started_wall_ms; /* parsed startedAt; 0 when unparsable */
};

/* Reads status.failover of a RedisCluster object (api_failover_status_decode): 0, with
 * out->active false when it is absent; -EINVAL when it does not decode (out->active
 * false too: the RedisCluster decoder refuses such an object first). */
int ctl_failover_read(json_t *cluster, struct ctl_failover *out);
/* fo in phase (a CTL_FO_* name), with to and catch_up (either may be NULL), as the
 * contract's struct for api_failover_status_encode; out borrows fo's strings. */
void ctl_failover_status(const struct ctl_failover *fo, const char *phase, const char *to,
                         const char *catch_up, struct api_failover_status *out);

/* Process-wide settings the builders and the planner need. */
struct ctl_config {
	const char *operator_image;     /* the copy-binary init container's image */
	const char *operator_namespace; /* for the NetworkPolicy */
	int64_t run_as_user;            /* uid, gid and fsGroup of the data pods */
	int poll_failures_down;         /* consecutive failed polls that count as down */
	int64_t promote_timeout_ms;     /* a Promoting target unreachable this long: re-elect */
	int64_t restart_timeout_ms;     /* a PrimaryRestart that takes longer: fail over */
	int64_t max_lag_bytes;          /* "caught up" for rolling updates and switchovers */
	int64_t rotation_grace_ms;      /* a changed auth Secret reaches every pod within this */
};

struct ctl_view {
	const struct api_redis_cluster *rc;
	json_t *obj; /* the RedisCluster as cached */
	const char *ns, *name;
	struct ctl_pod *pods;
	size_t npods;
	struct ctl_pvc *pvcs;
	size_t npvcs;
	json_t *child[CTL_CHILD_COUNT];
	struct ctl_lease lease;
	struct ctl_failover fo;
	/* The password of the default user (auth Secret) for the connection Secret; NULL
	 * when unknown. */
	const char *password;
	/* resourceVersion of the auth Secret in use; NULL when unknown. */
	const char *auth_secret_rv;
	/* Monotonic ms when this controller first saw that resourceVersion. */
	int64_t auth_secret_seen_mono;
	bool auth_secret_missing; /* spec.authSecret names a Secret that does not exist */
	int64_t now_wall_ms, now_mono_ms;
	/* Rewrite volatile status fields (offsets, lags, lastSeen) even when nothing else
	 * changed: the reconciler sets it every status refresh period. */
	bool refresh_volatile;
	/* Monotonic ms of the last action that changed roles (promote, switchover, fence,
	 * replicate, a new currentPrimary): a poll answered before it is stale for deciding
	 * who is primary or whom a replica follows. */
	int64_t roles_epoch_mono;
	const struct ctl_config *cfg;
	/* Pods and PVCs labelled for the cluster that are not its own (controller/owner.h):
	 * never in pods/pvcs, only reported. Arrays of names (borrowed); NULL: none. */
	json_t *foreign_pods, *foreign_pvcs;
};

/* The pod named name, or NULL. */
const struct ctl_pod *ctl_view_pod(const struct ctl_view *v, const char *name);
/* The serial in "<cluster>-<serial>", or -1. */
int ctl_serial_of(const char *cluster, const char *name);

/* --- actions ----------------------------------------------------------------------- */

enum ctl_act_kind {
	CTL_ACT_CREATE,   /* POST obj */
	CTL_ACT_PATCH,    /* merge patch obj onto name */
	CTL_ACT_DELETE,   /* DELETE name */
	CTL_ACT_STATUS,   /* merge patch obj onto the cluster's status subresource */
	CTL_ACT_CLUSTER,  /* merge patch obj onto the cluster itself (annotations) */
	CTL_ACT_INSTANCE, /* POST http://<pod ip>:8000/v1/<op> with obj as the body */
	CTL_ACT_EVENT,    /* an Event about the cluster */
};

/* What a successful action also records in the metrics. */
enum ctl_metric {
	CTL_METRIC_NONE,
	CTL_METRIC_FAILOVER,   /* value: duration in ms */
	CTL_METRIC_SWITCHOVER, /* the instance's answer carries writePauseMs */
};

/* What the applier generates into a Secret it creates (controller/pki.h). */
enum ctl_fill_tls {
	CTL_FILL_TLS_NONE,
	CTL_FILL_TLS_OPERATOR, /* <name>-operator-tls: new CAs, the controller's certificate */
	CTL_FILL_TLS_INSTANCE, /* <name>-instance-tls: signed by the operator Secret's CAs */
};

struct ctl_action {
	enum ctl_act_kind kind;
	const struct k8s_resource *res; /* CREATE PATCH DELETE */
	char *name;                     /* object or pod name */
	char *ip;                       /* INSTANCE: the pod's address */
	char *op;                       /* INSTANCE: fence, promote, replicate, ... */
	json_t *obj;                    /* body, patch or object (owned) */
	bool optional;                  /* a failure does not stop the plan */
	bool fill_password;             /* CREATE of a Secret: add a random `password` */
	enum ctl_fill_tls fill_tls;     /* CREATE of a Secret: generate TLS material */
	bool ignore_exists;             /* CREATE: AlreadyExists is success */
	int64_t busy_retry_ms; /* INSTANCE: a 409/503 answer means "not yet": retry after this,
	                        * without the failure backoff (a promote racing a Lease expiry) */
	/* Changes roles: polls taken before it succeeded no longer count for role decisions
	 * (see ctl_view.roles_epoch_mono). */
	bool new_epoch;
	enum ctl_metric metric;
	/* FAILOVER: the wall ms the failover started; the applier writes the duration it
	 * measures into lastFailover.durationMs and the histogram. */
	int64_t metric_value;
	/* EVENT */
	bool warning;
	char *reason, *note;
};

struct ctl_plan {
	struct ctl_action *acts;
	size_t n, cap;
	int64_t requeue_ms;  /* look again after this long; 0: only on changes */
	const char *phase;   /* the phase the status shows (static text) */
	const char *waiting; /* what the plan waits for, for logs (static text) */
	json_t *status;      /* the status the cluster should show (owned; may be NULL) */
};

void ctl_plan_init(struct ctl_plan *p);
void ctl_plan_release(struct ctl_plan *p);
/* Appends a zeroed action of kind and returns it (owned by the plan). */
struct ctl_action *ctl_plan_add(struct ctl_plan *p, enum ctl_act_kind kind);
/* Shortcuts; obj is stolen. */
void ctl_plan_create(struct ctl_plan *p, const struct k8s_resource *res, json_t *obj);
void ctl_plan_patch(struct ctl_plan *p, const struct k8s_resource *res, const char *name,
                    json_t *patch);
void ctl_plan_delete(struct ctl_plan *p, const struct k8s_resource *res, const char *name);
struct ctl_action *ctl_plan_status(struct ctl_plan *p, json_t *patch);
struct ctl_action *ctl_plan_instance(struct ctl_plan *p, const struct ctl_pod *pod, const char *op,
                                     json_t *body);
void ctl_plan_event(struct ctl_plan *p, bool warning, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Bodies of POST /v1/<op>, by the contract's encoder (api/instance_v1.h); new
 * references for ctl_plan_instance. */
json_t *ctl_body_fence(const char *reason);
json_t *ctl_body_promote(bool force);
json_t *ctl_body_replicate(const char *host, int port);
json_t *ctl_body_switchover(const char *host, int port, int http_port);
/* Sets requeue_ms to ms when sooner (or unset). */
void ctl_plan_requeue(struct ctl_plan *p, int64_t ms);

/* The plan as JSON for golden files and logs (passwords never appear: generated ones are
 * filled by the applier). A new reference. */
json_t *ctl_plan_dump(const struct ctl_plan *p);

/* --- JSON helpers ------------------------------------------------------------------ */

/*
 * True when every field of want is in have with an equal value: objects key by key
 * (have may hold more keys), arrays element by element (same length), scalars equal
 * (integers and integral reals compare by value). The controller writes only the fields
 * it owns and compares only those, so fields the API server defaults do not cause churn.
 */
bool ctl_json_contains(json_t *have, json_t *want);
/* Borrowed string at path, or NULL. */
const char *ctl_json_str(json_t *root, const char *path);

#endif

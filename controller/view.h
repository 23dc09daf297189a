/*
 * view: what one reconcile observed about one RedisCluster, as the pure parts read it.
 * A `struct ctl_view` holds the decoded cluster, its pods with their instance managers'
 * last /v1/status (struct ctl_inst, parsed by ctl_inst_parse), its PVCs and other
 * children, the primary Lease, the persisted failover state (read by
 * controller/failover_state.h), the time; the planner (plan.h) turns a view into a plan
 * of actions (actions.h), the applier (apply.c) executes them. Only the applier and the
 * reconciler do I/O, so views are built by hand in the unit tests. Also here: the labels,
 * annotations and limits every part shares.
 *
 * Ownership: a view borrows everything it points to (the reconciler keeps the JSON
 * alive for the view's life); strings inside struct ctl_inst and struct ctl_failover are
 * arrays (a copy). Pure functions; any thread, one view per thread at a time.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_VIEW_H
#define REDIS_OPERATOR_CONTROLLER_VIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "api/ports.h"
#include "api/rediscluster.h"
#include "lib/err.h"
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
#define CTL_ANN_RESTART       "redis.io/restart-instance" /* restart.h */
#define CTL_ANN_RELOAD        "redis.io/reload"           /* reload.h */
#define CTL_SELECTOR_MANAGED  CTL_LABEL_MANAGED_BY "=" CTL_MANAGED_BY
#define CTL_ROLE_PRIMARY      "primary"
#define CTL_ROLE_REPLICA      "replica"
#define CTL_ROLE_SENTINEL     API_INST_ROLE_SENTINEL /* the sentinel pods (controller/sentinel.h) */
#define CTL_USER_FENCE_REASON "redis.io/fencedInstances"

/* Ports of a data pod (api/ports.h: the instance manager's defaults). */
#define CTL_PORT_REDIS    API_PORT_SERVER
#define CTL_PORT_HTTP     API_PORT_HTTP
#define CTL_PORT_METRICS  API_PORT_METRICS
#define CTL_PORT_SENTINEL API_PORT_SENTINEL

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
	/* status.restore (api_inst_restore_state): "" when the manager restores nothing */
	char restore_phase[CTL_WORD_MAX];
	char restore_error[API_INST_BACKUP_ERROR_MAX]; /* whole: the manager caps it there */
	/* a sentinel pod's /v1/status (ctl_inst_parse_sentinel): role is "sentinel" */
	struct ctl_sentinel_obs {
		bool has_view; /* the sentinel answered SENTINEL MASTER */
		char master_host[64];
		int master_port;
		char master_status[CTL_WORD_MAX]; /* API_INST_MASTER_* */
		bool failover_in_progress;
		bool quorum_ok; /* SENTINEL CKQUORUM */
		char quorum_reason[CTL_MSG_MAX];
		long long config_epoch, known_sentinels; /* -1 unknown */
		long long known_replicas; /* replicas of the master it knows; -1 unknown */
	} sen;
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
/* The same for a sentinel pod's /v1/status (api_inst_sentinel_status_decode): state,
 * role ("sentinel"), ready, reason, server_up and the sentinel's view into out->sen. */
int ctl_inst_parse_sentinel(const char *body, size_t len, struct ctl_inst *out, struct err *e);
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
	CTL_CHILD_PDB_SENTINEL,
	CTL_CHILD_LEASE,
	CTL_CHILD_OPERATOR_TLS,     /* <name>-operator-tls (controller/pki.h) */
	CTL_CHILD_INSTANCE_TLS,     /* <name>-instance-tls */
	CTL_CHILD_LEADER_ENDPOINTS, /* the EndpointSlice <name>-leader */
	CTL_CHILD_SVC_SENTINEL,     /* <name>-sentinel (sentinel mode) */
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
	/* HELD: ms from now until the record expires if nobody renews it (the one rule,
	 * k8s_lease_judge); the reconciler looks again then when the holder is silent. */
	int64_t expires_in_ms;
};

/* status.failover as the view keeps it (ctl_failover_read, controller/failover_state.h). */
struct ctl_failover {
	bool active;
	char phase[CTL_WORD_MAX];
	char from[CTL_NAME_MAX + 1];
	char to[CTL_NAME_MAX + 1];
	char reason[CTL_MSG_MAX];
	char started_at[CTL_TIME_MAX];
	int64_t started_wall_ms; /* parsed startedAt; 0 when unparsable */
};

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

/* What the reconciler read for spec.bootstrap.backupName, only while the cluster is not
 * bootstrapped yet (controller/bootstrap.h judges it). */
enum ctl_boot_lookup {
	CTL_BOOT_UNREAD,    /* not looked up (no bootstrap, or done) */
	CTL_BOOT_FOUND,     /* backup set */
	CTL_BOOT_NOT_FOUND, /* no RedisBackup of that name in the cluster's namespace */
	CTL_BOOT_INVALID,   /* it does not decode: error says why */
};

struct ctl_boot_source {
	enum ctl_boot_lookup lookup;
	const struct api_redis_backup *backup; /* FOUND (borrowed) */
	const char *error;                     /* INVALID */
	const char *secret;  /* the credentials Secret the restore mounts; NULL: none */
	bool secret_missing; /* secret named and not found */
};

struct ctl_view {
	const struct api_redis_cluster *rc;
	json_t *obj; /* the RedisCluster as cached */
	const char *ns, *name;
	struct ctl_pod *pods; /* the data pods */
	size_t npods;
	/* sentinel mode: the sentinel pods (label redis.io/role=sentinel), never in pods;
	 * their inst is parsed by ctl_inst_parse_sentinel */
	struct ctl_pod *sentinels;
	size_t nsentinels;
	struct ctl_pvc *pvcs;
	size_t npvcs;
	json_t *child[CTL_CHILD_COUNT];
	struct ctl_lease lease;
	struct ctl_failover fo;
	/* The password of the default user (auth Secret) for the connection Secret; NULL
	 * when unknown. */
	const char *password;
	/* data["ca.crt"] of spec.caSecret (base64) for the connection Secret when server TLS
	 * is on; NULL otherwise or when unknown. */
	const char *tls_ca_b64;
	/* resourceVersion of the auth Secret in use; NULL when unknown. */
	const char *auth_secret_rv;
	/* Monotonic ms when this controller first saw that resourceVersion. */
	int64_t auth_secret_seen_mono;
	bool auth_secret_missing; /* spec.authSecret names a Secret that does not exist */
	/* spec.aclConfigSecret's verdict (controller/acl_config.h); NULL: unset or unread */
	const char *acl_config;
	bool acl_config_ok;
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
	/* spec.bootstrap.backupName as the reconciler found it (controller/bootstrap.h). */
	struct ctl_boot_source boot;
};

/* The pod named name, or NULL. */
const struct ctl_pod *ctl_view_pod(const struct ctl_view *v, const char *name);
/* The sentinel pod named name, or NULL. */
const struct ctl_pod *ctl_view_sentinel(const struct ctl_view *v, const char *name);
/* The serial in "<cluster>-<serial>", or -1. */
int ctl_serial_of(const char *cluster, const char *name);

#endif

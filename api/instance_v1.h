/*
 * instance_v1: the instance manager's HTTP API (/v1), the contract between the two roles,
 * as C types with one encoder and one decoder each. The manager encodes its status and
 * its answers and decodes the requests; the controller encodes the requests and decodes
 * the status and the answers. The JSON on the wire is the compatibility contract between
 * releases (a new controller drives old managers during an upgrade): field names and
 * types never change here, fields are only added, and decoders accept what older
 * managers send (a field added later is optional).
 *
 *   GET  /v1/status      → struct api_inst_status
 *   POST /v1/fence       {"reason": "text"}                     (all fields optional)
 *   POST /v1/unfence     {}
 *   POST /v1/promote     {"force": false}
 *   POST /v1/replicate   {"host": "10.0.0.5", "port": 6379}
 *   POST /v1/switchover  {"host": "10.0.0.5", "port": 6379, "httpPort": 8000,
 *                         "timeout": "10s"}   or  {"pod": "cache-2", …}
 *   POST /v1/config      {"redis": {…}, "maxMemory": "256Mi", "maxMemoryPolicy": "…",
 *                         "minSyncReplicas": 1, "users": [{"name", "enabled", "rules"}],
 *                         "dropOldPasswords": true, "reload": true}
 *   POST /v1/restart     {}
 *   answers: 200 with struct api_inst_result (fence, unfence, promote, replicate,
 *   restart), struct api_inst_switchover_result, struct api_inst_config_result; any
 *   other status with {"error": "..."} (struct api_inst_error).
 *   These seven share struct api_inst_request and the op table (api_inst_op_name).
 *
 *   POST /v1/backup      struct api_inst_backup_request (API_INST_BACKUP_PATH): 202 at
 *                        once, the progress in /v1/status .backup
 *   The backup body has its own type (destination, credentials, keys), encoder and
 *   decoder: it is no op of the table, whose bodies are all small control messages.
 *
 *   struct api_inst_status st;
 *   if (api_inst_status_decode(body, len, &st, &e) < 0)   e.msg names the field
 *           ...;
 *   use(st.state, st.replication.offset ...);
 *   api_inst_status_release(&st);
 *
 * Decoding judges the shape: JSON syntax, the top-level object, unknown fields of a
 * request (a typo in a caller fails loudly), types, required fields, the ranges and
 * formats that are part of the contract (ports, names, durations, quantities, the
 * maxMemoryPolicy enum). It does not judge what the manager may refuse on its own
 * authority (ACL rules, directive names, user names, list caps: instance/spec.h).
 * Errors are -EMSGSIZE (over the body cap), -EPROTO (malformed JSON; for the status and
 * answers, every error), else the errno of lib/jsonx (-EINVAL a type or a format,
 * -ENOENT a required field, -ERANGE a number out of range), with e.msg naming the JSON
 * path: "port: 70000 is out of range [1, 65535]", "replication.offset: expected integer,
 * got string", "users[0].name: required". Outputs are written only on success.
 *
 * Nulls: an integer the status leaves null (unknown) is API_INST_NULL in the struct and
 * any negative value is encoded as null; a nullable string is NULL in the struct, and
 * NULL or "" is encoded as null. A string that is never null is encoded as "" when NULL.
 *
 * Ownership: a decoded struct holds the parsed JSON in its `json` member and every
 * `const char *` and `json_t *` in it borrows from it; arrays are allocated by decode.
 * _release frees both (NULL-safe; the struct is zeroed). A struct filled by hand for
 * encoding leaves `json` NULL and owns nothing: its pointers are the caller's, and
 * _release must not be called on it. Encoders return a new reference.
 *
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_API_INSTANCE_V1_H
#define REDIS_OPERATOR_API_INSTANCE_V1_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/ports.h"
#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "api/schema.h"
#include "lib/err.h"

#define API_INST_BODY_MAX        (64 * 1024)  /* request bodies and the answers to them */
#define API_INST_STATUS_BODY_MAX (256 * 1024) /* a /v1/status body */
#define API_INST_HOST_MAX        253          /* host, pod */
#define API_INST_REASON_MAX      256          /* fence reason */
#define API_INST_TIMEOUT_MAX_MS  300000       /* switchover timeout: at most 5m */
#define API_INST_MIN_SYNC_MAX    63           /* minSyncReplicas */
#define API_INST_NULL            (-1)         /* an integer the JSON has as null */

/* /v1/status "state": what the manager has made of its server. */
#define API_INST_STATE_BOOTING  "booting"
#define API_INST_STATE_STARTING "starting"
#define API_INST_STATE_PRIMARY  "primary"
#define API_INST_STATE_REPLICA  "replica"
#define API_INST_STATE_PARKED   "parked"
#define API_INST_STATE_CRASHED  "crashed"
#define API_INST_STATE_STOPPING "stopping"
/* "role" and "server.role": the server's own (lib/valkey/info's names). */
#define API_INST_ROLE_PRIMARY "primary"
#define API_INST_ROLE_REPLICA "replica"
#define API_INST_ROLE_UNKNOWN "unknown"
/* "replication.link" */
#define API_INST_LINK_UP      "up"
#define API_INST_LINK_DOWN    "down"
#define API_INST_LINK_SYNCING "syncing"
#define API_INST_LINK_NONE    "none"

/* --- backups and restore (POST /v1/backup, status.backup, status.restore) ------------
 *
 *   POST /v1/backup {"name": "prod/cache-20240101", "method": "rdb",
 *                    "destination": {"s3": {"bucket", "path", "endpoint", "region",
 *                                           "forcePathStyle"}}
 *                                 | {"azure": {"container", "path", "accountName",
 *                                              "endpoint"}},
 *                    "credentials": {"AWS_ACCESS_KEY_ID": "…", "AWS_SECRET_ACCESS_KEY": "…"}}
 *   → 202 struct api_inst_backup_state (started), 200 (the same name again: its state as
 *     it is, nothing started), 409 {"error"} (another backup is running: named), 400.
 *
 * credentials: the Secret's data, decoded, under the Secret's own key names (the
 * RedisBackup CRD's: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
 * AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_KEY,
 * AZURE_STORAGE_SAS_TOKEN); any other key is refused. The decoder never puts a value in
 * an error message. The objects: <path>/<cluster>/<name>/dump.rdb, then
 * <path>/<cluster>/<name>/manifest.json last (its presence means complete).
 *
 * The restore source (the data pod's REDIS_OPERATOR_RESTORE_SOURCE, written by the
 * controller from the RedisBackup's spec and status) is
 *   {"name": "prod/cache-20240101", "destination": {…as above…},
 *    "manifestKey": "backups/cache/prod/cache-20240101/manifest.json"}
 * with the credentials in a Secret volume (instance/README.md).
 */
#define API_INST_BACKUP_PATH       "/v1/backup"
#define API_INST_BACKUP_NAME_MAX   253 /* "<namespace>/<name>" or a uid */
#define API_INST_BACKUP_PATH_MAX   512 /* destination path, and every key */
#define API_INST_BACKUP_CRED_MAX   4096
#define API_INST_BACKUP_ERROR_MAX  512
#define API_INST_BACKUP_RUNNING    "running"
#define API_INST_BACKUP_COMPLETED  "completed"
#define API_INST_BACKUP_FAILED     "failed"
#define API_INST_RESTORE_RESTORING "restoring"
#define API_INST_RESTORE_COMPLETED "completed"
#define API_INST_RESTORE_FAILED    "failed"

/* The Secret's values (borrowed; the caller wipes what it owns). NULL: absent. */
struct api_inst_credentials {
	const char *aws_access_key_id, *aws_secret_access_key, *aws_session_token;
	const char *azure_connection_string, *azure_account, *azure_key, *azure_sas_token;
};

/* The credentials' key names, the one list: the Secret's data keys, the restore's Secret
 * volume files and the /v1/backup body's "credentials" use them alike. The i-th name
 * (NULL past the last) and the member it sets (v borrowed). */
#define API_INST_CREDENTIAL_KEYS 7
const char *api_inst_credential_key(size_t i);
void api_inst_credentials_set(struct api_inst_credentials *c, size_t i, const char *v);

struct api_inst_backup_request {
	json_t *json;                  /* decode: the body everything borrows from (owned) */
	const char *name;              /* required: [a-z0-9.-] segments, at most one '/' */
	enum api_backup_method method; /* default rdb */
	struct api_destination
	        destination; /* exactly one of s3, azure; credentials_secret unused */
	struct api_inst_credentials credentials;
};

/* Wipes the credential strings of a decoded request before freeing it. */
int api_inst_backup_request_decode(const char *body, size_t len,
                                   struct api_inst_backup_request *out, struct err *e);
json_t *api_inst_backup_request_encode(const struct api_inst_backup_request *r);
void api_inst_backup_request_release(struct api_inst_backup_request *r);

/* status.backup and the answer of POST /v1/backup: the last backup this manager ran. */
struct api_inst_backup_state {
	json_t *json;
	const char *name, *method;
	const char *phase;                   /* API_INST_BACKUP_* */
	const char *started_at, *stopped_at; /* RFC 3339; stopped_at null while running */
	const char *key, *manifest_key;      /* the objects' keys in the bucket/container */
	int64_t size;                        /* nullable: known once uploaded */
	const char *sha256;                  /* hex of dump.rdb; nullable */
	const char *repl_id;                 /* the server's replid when the snapshot was taken */
	int64_t offset;                      /* its replication offset then; nullable */
	const char *engine, *engine_version;
	const char *error; /* nullable: why it failed (the storage's Code in it) */
	bool retryable;    /* failed: a new attempt may succeed */
	int64_t attempts;  /* uploads tried */
};

json_t *api_inst_backup_state_encode(const struct api_inst_backup_state *b);
int api_inst_backup_state_decode(const char *body, size_t len, struct api_inst_backup_state *out,
                                 struct err *e);
void api_inst_backup_state_release(struct api_inst_backup_state *b);

/* status.restore: the start-up restore from a backup. Not ready while not completed. */
struct api_inst_restore_state {
	const char *name, *manifest_key;
	const char *phase; /* API_INST_RESTORE_* */
	const char *started_at, *stopped_at;
	int64_t size; /* nullable */
	const char *sha256, *error;
	bool retryable;
	int64_t attempts;
};

struct api_inst_restore_source {
	json_t *json;
	const char *name, *manifest_key;
	struct api_destination destination;
};

int api_inst_restore_source_decode(const char *body, size_t len,
                                   struct api_inst_restore_source *out, struct err *e);
json_t *api_inst_restore_source_encode(const struct api_inst_restore_source *r);
void api_inst_restore_source_release(struct api_inst_restore_source *r);

/* --- GET /v1/status ---------------------------------------------------------------- */

/* replication.replicas[]: a replica as the primary's INFO lists it. */
struct api_inst_replica {
	const char *ip;
	int64_t port;
	const char *state; /* online, wait_bgsave, send_bulk ... */
	int64_t offset;
	int64_t lag_bytes;   /* the primary's offset minus this one, at least 0 */
	int64_t lag_seconds; /* since its last ACK */
};

/* "replication": null while the server does not answer (has_replication false). */
struct api_inst_replication {
	const char *repl_id, *repl_id2;                     /* nullable */
	int64_t offset;                                     /* own offset; nullable */
	int64_t master_repl_offset, second_offset;          /* nullable */
	const char *link;                                   /* up down syncing none */
	const char *master_host;                            /* nullable */
	int64_t master_port;                                /* nullable */
	int64_t lag_bytes, lag_seconds, connected_replicas; /* nullable */
	struct api_inst_replica *replicas;
	size_t n_replicas;
};

struct api_inst_server {
	int64_t pid; /* nullable: not running */
	bool up;     /* answering, with fresh INFO */
	int64_t restarts;
	const char *role; /* the server's role, "unknown" when not up */
	bool loading, sync_in_progress;
	int64_t uptime_seconds; /* nullable */
	const char *error;      /* nullable: why it does not answer */
};

struct api_inst_status {
	json_t *json; /* decode: the body everything borrows from (owned) */
	const char *pod;
	const char *state;  /* API_INST_STATE_* */
	const char *role;   /* the server's: API_INST_ROLE_* */
	const char *reason; /* why this state */
	bool ready;
	const char *not_ready_reason; /* nullable */
	bool fenced;                  /* confirmed: cannot write */
	const char *fence_reason;     /* nullable */
	bool lease_held, primary_crashed;
	const char *engine, *version, *session_id, *config_hash; /* nullable */
	int64_t uptime_seconds;                                  /* the manager's */
	int64_t lease_renew_failures;
	const char *http_tls;       /* https plain refused; NULL from a manager without it */
	const char *http_tls_error; /* nullable */
	struct api_inst_server server;
	bool has_replication;
	struct api_inst_replication replication;
	bool has_backup; /* "backup": absent until this manager ran one (/v1/backup below) */
	struct api_inst_backup_state backup;
	bool has_restore; /* "restore": absent unless started with a restore source */
	struct api_inst_restore_state restore;
};

/* Required when decoding: state, role, ready, fenced, server; the rest is optional. */
json_t *api_inst_status_encode(const struct api_inst_status *s);
int api_inst_status_decode(const char *body, size_t len, struct api_inst_status *out,
                           struct err *e);
void api_inst_status_release(struct api_inst_status *s);

/* --- POST /v1/<op> requests ---------------------------------------------------------- */

enum api_inst_op {
	API_INST_FENCE,
	API_INST_UNFENCE,
	API_INST_PROMOTE,
	API_INST_REPLICATE,
	API_INST_SWITCHOVER,
	API_INST_CONFIG,
	API_INST_RESTART,
	API_INST_SENTINEL_FAILOVER, /* a sentinel manager's only mutations (below) */
	API_INST_SENTINEL_RESET,
	API_INST_OP_COUNT,
};

/* "fence", "unfence", …; NULL for an unknown op. */
const char *api_inst_op_name(enum api_inst_op op);
/* The op for a path "/v1/<name>", or -1. */
int api_inst_op_from_path(const char *path);

/* The /v1/config body: the whole desired live config (the live part of the spec). */
struct api_inst_config {
	json_t *redis; /* directive → value, every value a string; NULL: absent */
	bool has_max_memory;
	uint64_t max_memory;                         /* bytes ("256Mi" decoded) */
	enum api_maxmemory_policy max_memory_policy; /* 0: absent */
	int64_t min_sync_replicas;                   /* 0 .. API_INST_MIN_SYNC_MAX */
	/* name, enabled (default true), rules; passwordSecrets is accepted (the spec's user
	 * shape) and neither decoded nor encoded */
	struct api_user *users;
	size_t n_users;
	bool drop_old_passwords; /* encoded only when true */
	/* re-read the Secret files (passwords, ACL file) and reload the TLS files first,
	 * whatever their stamps say (`kubectl redis reload`); encoded only when true */
	bool reload;
};

struct api_inst_request {
	enum api_inst_op op;
	json_t *json;       /* decode: the body everything borrows from (owned) */
	const char *reason; /* fence: printable, at most API_INST_REASON_MAX; decoded default
	                     * "requested" */
	bool force;         /* promote */
	const char *host;   /* replicate (required), switchover: a host name or address */
	int64_t port;       /* replicate (required), switchover with host: 1 .. 65535 */
	const char *pod;    /* switchover: exactly one of pod and host */
	int64_t http_port;  /* switchover: the target's manager; decoded default API_PORT_HTTP */
	int64_t timeout_ms; /* switchover: 1 .. API_INST_TIMEOUT_MAX_MS; 0: absent */
	struct api_inst_config config;
};

/* A body of len bytes for op (len 0 is {}). See the header comment for errors. */
int api_inst_request_decode(enum api_inst_op op, const char *body, size_t len,
                            struct api_inst_request *out, struct err *e);
/* The body for r->op: the fields that are set (fence: reason when not NULL; promote:
 * force always; replicate: host and port; switchover: host and port, or pod, then
 * httpPort when not 0 and timeout when not 0; config: every field but
 * dropOldPasswords and reload, which only when true). */
json_t *api_inst_request_encode(const struct api_inst_request *r);
/* The config field a caller adds to a body it builds itself (the controller's live
 * config, desired_live_config): drop the passwords kept from before a rotation. */
#define API_INST_DROP_OLD_PASSWORDS "dropOldPasswords"
#define API_INST_RELOAD             "reload"
void api_inst_request_release(struct api_inst_request *r);

/* --- answers ------------------------------------------------------------------------- */

/* 200 of fence, unfence, promote, replicate, restart: what was done and where the
 * server stands. Without fresh replication INFO the offsets are left out. */
struct api_inst_result {
	json_t *json;
	const char *result; /* "fenced", "already primary", "replicating" ... */
	bool fenced, lease_held;
	bool has_offsets;
	const char *role; /* the server's */
	const char *repl_id, *repl_id2;
	int64_t offset;
};

/* 200 of /v1/switchover: where the write pause went (milliseconds, fractional). */
struct api_inst_switchover_result {
	json_t *json;
	const char *result; /* "switched over" */
	const char *target;
	int64_t target_port;
	int64_t offset; /* the old primary's, read after the pause began */
	bool demoted;   /* false: kept fenced, demote_error says why */
	double catch_up_ms, lease_release_ms, promote_ms, write_pause_ms, old_primary_paused_ms;
	const char *demote_error; /* NULL when demoted */
};

/* 200 of /v1/config. */
struct api_inst_config_result {
	json_t *json;
	const char *result;            /* "applied" */
	const char **restart_required; /* directives that need a restart */
	size_t n_restart_required;
};

/* Every answer that is not 200. */
struct api_inst_error {
	json_t *json;
	const char *error;
};

json_t *api_inst_result_encode(const struct api_inst_result *r);
int api_inst_result_decode(const char *body, size_t len, struct api_inst_result *out,
                           struct err *e);
void api_inst_result_release(struct api_inst_result *r);

json_t *api_inst_switchover_result_encode(const struct api_inst_switchover_result *r);
int api_inst_switchover_result_decode(const char *body, size_t len,
                                      struct api_inst_switchover_result *out, struct err *e);
void api_inst_switchover_result_release(struct api_inst_switchover_result *r);

json_t *api_inst_config_result_encode(const struct api_inst_config_result *r);
int api_inst_config_result_decode(const char *body, size_t len, struct api_inst_config_result *out,
                                  struct err *e);
void api_inst_config_result_release(struct api_inst_config_result *r);

json_t *api_inst_error_encode(const struct api_inst_error *r);
int api_inst_error_decode(const char *body, size_t len, struct api_inst_error *out, struct err *e);
void api_inst_error_release(struct api_inst_error *r);

/* --- the sentinel role (instance --role sentinel; docs/sentinel.md) -------------------
 *
 * The monitored master: every sentinel of a cluster watches one master under
 * API_INST_SENTINEL_MASTER_NAME (what clients pass to SENTINEL get-master-addr-by-name).
 * The controller passes its first address in REDIS_OPERATOR_SENTINEL_MASTER
 * ("host:port", API_INST_SENTINEL_MASTER_ENV); once sentinel.conf exists, Sentinel's own
 * view (rewritten into it on every failover) wins over that hint.
 *
 * GET /v1/status of a sentinel pod → struct api_inst_sentinel_status:
 *   {"pod", "role": "sentinel", "state", "reason", "ready", "notReadyReason", "engine",
 *    "version", "uptimeSeconds", "server": {…as a data pod's…},
 *    "sentinel": {"masterName", "masterHost", "masterPort", "masterStatus",
 *                 "failoverInProgress", "failoverState", "configEpoch", "quorum",
 *                 "quorumOk", "quorumReason", "sentinels", "replicas"}}
 * ready = the sentinel answers and SENTINEL CKQUORUM succeeds. "sentinel" is null while
 * the sentinel does not answer. Required when decoding: state, role, ready, server.
 */
/*
 * The controller's requests to a sentinel manager (body {}): POST /v1/sentinel/failover
 * runs SENTINEL FAILOVER <master> (a planned move: the switchover annotation, a rolling
 * update's primary step), POST /v1/sentinel/reset runs SENTINEL RESET <master> (a
 * sentinel that still counts removed sentinels). 200 {"result": "started"|"reset"}; 409
 * with Sentinel's own error text while it refuses (-INPROG, -NOGOODSLAVE), and for a
 * reset while its SENTINEL MASTER shows a failover in progress.
 */
#define API_INST_SENTINEL_OP_FAILOVER "sentinel/failover"
#define API_INST_SENTINEL_OP_RESET    "sentinel/reset"
#define API_INST_SENTINEL_MASTER_NAME "mymaster"
#define API_INST_SENTINEL_MASTER_ENV  "REDIS_OPERATOR_SENTINEL_MASTER"
#define API_PORT_SENTINEL             26379 /* container port "sentinel" */
#define API_PORT_NAME_SENTINEL        "sentinel"
#define API_INST_ROLE_SENTINEL        "sentinel"
/* "sentinel.masterStatus": Sentinel's flags on the master */
#define API_INST_MASTER_OK      "ok"
#define API_INST_MASTER_SDOWN   "sdown" /* this sentinel alone thinks it is down */
#define API_INST_MASTER_ODOWN   "odown" /* a quorum agrees: a failover may start */
#define API_INST_MASTER_UNKNOWN "unknown"

struct api_inst_sentinel_view {
	const char *master_name;
	const char *master_host;   /* nullable */
	int64_t master_port;       /* nullable */
	const char *master_status; /* API_INST_MASTER_* */
	bool failover_in_progress;
	const char *failover_state; /* nullable: Sentinel's failover-state while one runs */
	int64_t config_epoch;       /* nullable */
	int64_t quorum;             /* nullable: the configured quorum */
	bool quorum_ok;             /* SENTINEL CKQUORUM answered OK */
	const char *quorum_reason;  /* nullable: its answer (the reason when not OK) */
	int64_t sentinels;          /* known sentinels, this one included; nullable */
	int64_t replicas;           /* replicas of the master Sentinel knows; nullable */
};

struct api_inst_sentinel_status {
	json_t *json;
	const char *pod, *state, *role, *reason;
	bool ready;
	const char *not_ready_reason; /* nullable */
	const char *engine, *version; /* nullable */
	int64_t uptime_seconds;
	struct api_inst_server server;
	bool has_sentinel; /* false: "sentinel" is null */
	struct api_inst_sentinel_view sentinel;
};

json_t *api_inst_sentinel_status_encode(const struct api_inst_sentinel_status *s);
int api_inst_sentinel_status_decode(const char *body, size_t len,
                                    struct api_inst_sentinel_status *out, struct err *e);
void api_inst_sentinel_status_release(struct api_inst_sentinel_status *s);

#endif

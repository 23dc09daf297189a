/*
 * backup: the decisions of the RedisBackup reconciler, as pure functions (no I/O, no
 * clock: `now` is an argument), so that each rule is a unit test. The reconciler
 * (backup.c) gathers a struct bk_input from the caches and the poller, calls bk_decide,
 * writes the status when bk_status_equal says it changed, and does the one action.
 *
 * Phases: Pending → Running → Completed | Failed. A backup is Pending while its cluster
 * is missing, its credentials Secret is missing (for BK_SECRET_GRACE_MS after creation,
 * then Failed: a Secret applied just after the backup is common, a Pending backup forever
 * would block its schedule), another backup of the cluster goes first, or no instance
 * fits the target. Starting, the chosen instance is written to status.instance (phase
 * Running) BEFORE the POST /v1/backup goes out: a controller that restarts in between
 * re-sends the POST to that same instance (the op is idempotent by name) and never
 * starts a second upload elsewhere. While Running, the instance's /v1/status "backup"
 * object (api_inst_backup_state, from the poller) is followed: same name running →
 * wait; completed → Completed with its fields; failed → retried when retryable, else
 * Failed. The instance gone, silent for BK_LOST_MS, or reporting no backup of this name
 * BK_LOST_MS after the start → lost (retried). Past BK_DEADLINE_MS Running → Failed.
 * Retries are bounded by BK_ATTEMPTS_MAX; each attempt has its own instance-side name
 * (bk_instance_name), because the instance answers a name it already ran with the state
 * it had, and starts nothing.
 *
 * One at a time per cluster: bk_first says which backup of a cluster may run: a Running
 * one, else the oldest Pending (creationTimestamp, then name). Every worker reaches the
 * same answer from the same cache, so two backups of a cluster never start together.
 *
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_BACKUP_H
#define REDIS_OPERATOR_CONTROLLER_BACKUP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "api/redisbackup.h"

#define BK_FINALIZER       "redis.io/backup-objects" /* deletionPolicy Delete */
#define BK_LABEL_CLUSTER   "redis.io/cluster"
#define BK_LABEL_SCHEDULE  "redis.io/scheduled-backup"
#define BK_ANN_ATTEMPT     "redis.io/backup-attempt" /* retries so far (0: the first try) */
#define BK_QUEUE_BACKUP    "backup:"                 /* work-queue key prefixes */
#define BK_QUEUE_SCHEDULE  "schedule:"
#define BK_CONDITION       "Succeeded"
#define BK_ATTEMPTS_MAX    3
#define BK_DEADLINE_MS     (6 * 3600 * 1000LL)
#define BK_LOST_MS         60000
#define BK_SECRET_GRACE_MS 300000
#define BK_REPLICA_LAG_MAX 65536 /* bytes behind the primary a "caught-up" replica may be */
#define BK_FOLLOW_MS       2000  /* requeue while Running */
#define BK_WAIT_MS         5000  /* requeue while Pending */

#define BK_TIME_MAX     40
#define BK_POD_MAX      254
#define BK_LOCATION_MAX 2048
#define BK_KEY_MAX      1024
#define BK_REASON_MAX   64
#define BK_MESSAGE_MAX  1024

/* --- the instance to back up ------------------------------------------------------- */

struct bk_candidate {
	const char *pod;
	bool primary;        /* status.currentPrimary */
	bool ok;             /* the last poll answered (ctl_inst_ok) */
	bool ready;          /* the manager says ready */
	const char *link;    /* replication.link: up down syncing none */
	long long lag_bytes; /* behind the primary; -1 unknown */
};

/*
 * The index of the instance to back up, or -1 with *why set (static text).
 * prefer-replica: the ready replica with link up and the smallest lag within max_lag
 * bytes (ties: by pod name), else the primary; primary: the primary. Neither unless it
 * answers and is ready.
 */
int bk_choose(enum api_backup_target target, const struct bk_candidate *c, size_t n,
              long long max_lag, const char **why);

/* --- one cluster's queue --------------------------------------------------------------- */

struct bk_entry {
	const char *name;
	enum api_backup_phase phase; /* 0: no status yet (Pending) */
	int64_t created_ms;
};

/* The index of the backup that may run now among a cluster's (Running first, else the
 * oldest Pending), or -1 when all are Completed or Failed. */
int bk_first(const struct bk_entry *b, size_t n);

/* --- status ---------------------------------------------------------------------------- */

struct bk_status {
	enum api_backup_phase phase;
	char started_at[BK_TIME_MAX], stopped_at[BK_TIME_MAX];
	char instance[BK_POD_MAX];
	char location[BK_LOCATION_MAX], manifest_key[BK_KEY_MAX];
	bool has_size;
	int64_t size;
	char checksum[80]; /* sha256:<hex> */
	char engine[16], engine_version[32];
	char repl_id[48];
	bool has_repl_offset;
	int64_t repl_offset;
	char reason[BK_REASON_MAX], message[BK_MESSAGE_MAX];
	/* the one condition, BK_CONDITION */
	enum api_condition_status cond; /* 0: none yet */
	char cond_reason[BK_REASON_MAX], cond_message[BK_MESSAGE_MAX];
	char cond_time[BK_TIME_MAX];
};

/* Copies a decoded status (api/redisbackup.h) into out (strings cut to fit). */
void bk_status_from_api(const struct api_redis_backup_status *s, struct bk_status *out);
/* Equal in everything written (cond_time aside: it follows cond). */
bool bk_status_equal(const struct bk_status *a, const struct bk_status *b);
/* The status object for a merge patch of the status subresource: every field, the
 * unset ones as null (so that a retry clears what the last attempt wrote). New ref. */
json_t *bk_status_json(const struct bk_status *s, int64_t generation);
/* Sets the condition; its lastTransitionTime moves to now only when cond changes. */
void bk_status_condition(struct bk_status *s, enum api_condition_status cond, const char *reason,
                         const char *message, const char *now);

/* --- a step ----------------------------------------------------------------------------- */

enum bk_inst_seen {
	BK_INST_GONE = 1,    /* no such pod (or another incarnation) */
	BK_INST_UNREACHABLE, /* its manager did not answer the last poll */
	BK_INST_ANSWERS,     /* obs is its last /v1/status "backup" (NULL: none) */
};

struct bk_input {
	const char *name;      /* the RedisBackup's name, for messages */
	const char *inst_name; /* this attempt's instance-side name (bk_instance_name) */
	const struct bk_status *cur;
	int64_t attempt; /* BK_ANN_ATTEMPT */
	int64_t created_ms, now_ms;
	const char *now;     /* now_ms as RFC 3339 */
	const char *cluster; /* spec.clusterName */
	bool cluster_found;
	const char *secret; /* the credentials Secret's name; NULL: none is needed */
	bool secret_found;
	/* No credentials, and the chosen pod shows cloud workload identity, which is not
	 * supported: api_backup_web_identity's message (api/backup_store.h). Failed at once
	 * (reason API_BACKUP_WEB_IDENTITY_REASON) instead of an upload failing with a generic
	 * missing-credentials error. NULL: no. */
	const char *web_identity;
	const char *blocker; /* another backup of the cluster that goes first; NULL: none */
	const char *chosen;  /* bk_choose's pod; NULL: none fits (why says why) */
	const char *why;
	/* Running: what status.instance says now */
	enum bk_inst_seen inst;
	int64_t silent_ms; /* BK_INST_UNREACHABLE: since its last good answer */
	const struct api_inst_backup_state *obs;
	const char *location; /* the obs key as a URL (s3://bucket/key ...); NULL: none */
};

enum bk_action {
	BK_NOTHING,
	BK_START, /* the status (Running, instance) first, then POST /v1/backup to it */
	BK_POST,  /* POST /v1/backup again to status.instance (idempotent by name) */
};

struct bk_step {
	enum bk_action action;
	struct bk_status next;
	bool retry;             /* bump BK_ANN_ATTEMPT: the next attempt */
	bool completed, failed; /* this step ended the backup (metrics) */
	const char *event; /* BackupStarted, BackupCompleted, BackupFailed, BackupRetrying; NULL */
	bool warning;
	char event_msg[BK_MESSAGE_MAX];
	int64_t requeue_ms; /* 0: none */
};

void bk_decide(const struct bk_input *in, struct bk_step *out);

/* --- reading RedisBackup objects ------------------------------------------------------ */

/* "Pending" ... "Failed" (NULL for 0 or out of range), and back (0: NULL or unknown). */
const char *bk_phase_name(enum api_backup_phase p);
enum api_backup_phase bk_phase_parse(const char *name);
/* The status.phase of a RedisBackup object as JSON (0: none or unknown). */
enum api_backup_phase bk_phase_of(json_t *obj);
/* The RFC 3339 time at the dotted path of obj, in ms; 0 when absent or not a time. */
int64_t bk_time_of(json_t *obj, const char *path);

/* --- names ------------------------------------------------------------------------------ */

#define BK_INST_NAME_MAX API_INST_BACKUP_NAME_MAX
/* "<ns>/<name>" for attempt 0, "<ns>/<name>.r<attempt>" after (cut to fit). */
void bk_instance_name(const char *ns, const char *name, int64_t attempt,
                      char out[BK_INST_NAME_MAX + 1]);
/* The URL of key in the destination: s3://<bucket>/<key>, or
 * <endpoint or https://<account>.blob.core.windows.net>/<container>/<key>. */
void bk_location(const struct api_destination *d, const char *key, char out[BK_LOCATION_MAX]);

#endif

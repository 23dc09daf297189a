/*
 * backup_schedule: the decisions of a RedisScheduledBackup, as pure functions (no I/O,
 * no clock: `now` is an argument), so that every rule is a unit test:
 *
 *   - when to create a RedisBackup (bs_decide): on the cron schedule in the object's time
 *     zone (lib/cron, lib/tz); never while a backup of this schedule is still Pending or
 *     Running; not at all while suspended; after downtime, one catch-up run for the latest
 *     missed time only, however many were missed;
 *   - the name of the RedisBackup a run creates (bs_backup_name): derived from the
 *     scheduled time, so a controller that restarts between "create" and "record
 *     lastScheduleTime" gets AlreadyExists instead of a second backup;
 *   - which RedisBackup objects to delete to honour the history limits (bs_prune_history);
 *   - which remote backups are past the retention window (bs_past_retention): never the
 *     newest completed one, never one under Object Lock.
 *
 * The caller (the reconciler) parses spec.schedule with cron_parse and loads spec.timeZone
 * with tz_load; a failure there, or -ENOENT from bs_decide (a schedule that never fires,
 * such as "0 0 30 2 *"), is reported as the condition BS_CONDITION_SCHEDULE False with one
 * of the reasons below and the error's message.
 *
 * Suspension: while spec.suspend is true nothing is created. Unsuspended, a run missed
 * while suspended counts as missed (as for a Kubernetes CronJob without
 * startingDeadlineSeconds): at most one catch-up.
 *
 * Times are milliseconds since the Unix epoch (lib/rfc3339's unit); 0 means "none".
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_BACKUP_SCHEDULE_H
#define REDIS_OPERATOR_CONTROLLER_BACKUP_SCHEDULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/backup_store.h"
#include "api/redisbackup.h"
#include "lib/cron.h"
#include "lib/err.h"
#include "lib/tz.h"

#define BS_CONDITION_SCHEDULE   "ScheduleValid"
#define BS_REASON_VALID         "Valid"
#define BS_REASON_BAD_SCHEDULE  "InvalidSchedule"
#define BS_REASON_BAD_TIME_ZONE "InvalidTimeZone"
#define BS_REASON_NEVER_FIRES   "NeverFires"

/* A due run started later than this after its time is a catch-up (downtime), not on time. */
#define BS_LATE_MS (2 * 60 * 1000)

/* Room for a RedisBackup name: a DNS subdomain. */
#define BS_NAME_MAX 253
/* "-" and the scheduled time as YYYYMMDDHHMMSS (UTC). */
#define BS_NAME_SUFFIX 15

enum bs_action {
	BS_CREATE = 1, /* a run is due now: create its RedisBackup */
	BS_CATCH_UP,   /* runs were missed (downtime): create one, for the latest missed time */
	BS_WAIT,       /* nothing is due: wake at next_ms */
	BS_BUSY,       /* a run is due but a backup of this schedule is still running: wait */
	BS_SUSPENDED,  /* spec.suspend: nothing is created */
};

struct bs_input {
	const struct cron *cron;
	const struct tz *tz;
	bool suspend;
	bool immediate;           /* spec.immediate: one run as soon as the object exists */
	int64_t created_ms;       /* metadata.creationTimestamp */
	int64_t last_schedule_ms; /* status.lastScheduleTime; 0: never ran */
	int64_t now_ms;
	bool running; /* a RedisBackup of this schedule is Pending or Running */
};

struct bs_decision {
	enum bs_action action;
	/* BS_CREATE, BS_CATCH_UP: the scheduled time the new backup stands for (write it to
	 * status.lastScheduleTime and name the backup after it); BS_BUSY: the time due. */
	int64_t schedule_ms;
	/* The next fire time after that (status.nextScheduleTime, and when to requeue);
	 * 0 when suspended. */
	int64_t next_ms;
	const char *reason; /* static, for a log line or an Event */
};

/*
 * What to do now (see above) into *out. 0, or -ENOENT when the schedule never fires
 * (out untouched; e says so).
 */
int bs_decide(const struct bs_input *in, struct bs_decision *out, struct err *e);

/*
 * The RedisBackup name for the run of scheduled backup sb_name at schedule_ms:
 * "<sb_name>-YYYYMMDDHHMMSS" (UTC), sb_name cut to fit BS_NAME_MAX (and any '-' or '.'
 * the cut leaves at its end removed).
 */
void bs_backup_name(const char *sb_name, int64_t schedule_ms, char out[BS_NAME_MAX + 1]);

/* A RedisBackup created by this schedule, as the history limits see it. */
struct bs_backup {
	const char *name;
	enum api_backup_phase phase; /* 0: no status yet (Pending) */
	int64_t created_ms;
};

/*
 * The RedisBackup objects to delete so that at most keep_completed Completed and
 * keep_failed Failed ones remain, the newest kept (by created_ms, then name). Pending
 * and Running ones are never chosen. Writes their indexes into out (room for n), in
 * increasing order, and returns how many.
 */
size_t bs_prune_history(const struct bs_backup *b, size_t n, int64_t keep_completed,
                        int64_t keep_failed, size_t *out);

/* A backup in the object store, as retention sees it. */
struct bs_artifact {
	const char *key;
	bool completed;  /* a complete backup (its manifest written) */
	int64_t time_ms; /* completed: when it completed; otherwise when it started; 0 unknown */
	bool locked;     /* known locked: not chosen (the reconciler reads locks only for
	                  * the runs chosen, after this choice: bs_lock_fold) */
};

/*
 * The remote backups past the retention window retention_ms at now_ms (spec.retention;
 * <= 0: keep everything): completed ones whose time is older than now - retention, and
 * incomplete ones (failed uploads) older than both that and the newest completed backup.
 * Never the newest completed backup, never a locked one, never one of unknown time.
 * Indexes into out (room for n), increasing; returns how many.
 */
size_t bs_past_retention(const struct bs_artifact *a, size_t n, int64_t retention_ms,
                         int64_t now_ms, size_t *out);

/* --- Object Lock before a delete ----------------------------------------------------------- */

#define BS_CONDITION_RETENTION   "RetentionBlocked"
#define BS_REASON_LOCKED         "ObjectLocked"     /* runs kept: under Object Lock */
#define BS_REASON_LOCK_UNKNOWN   "LockStateUnknown" /* runs kept: the store would not say */
#define BS_REASON_NOTHING_LOCKED "NothingBlocked"   /* every chosen run was deleted */
#define BS_DETAIL_MAX            192

enum bs_lock_verdict {
	BS_DELETABLE = 0, /* no object of the run is locked */
	BS_LOCK_UNKNOWN,  /* an object's state could not be read: kept */
	BS_LOCKED,        /* an object is under a retention or a legal hold: kept */
};

/*
 * The verdict of a run after one more of its objects was read: rc is objstore_lock_get's
 * (-ENOENT: the object is gone, nothing to keep; any other error: unknown), active
 * objstore_lock_active's. The worst so far wins (locked > unknown > deletable).
 */
enum bs_lock_verdict bs_lock_fold(enum bs_lock_verdict so_far, int rc, bool active);

/* A run retention chose but kept. */
struct bs_kept {
	const char *dir; /* its directory, "<prefix><digits>[.r<N>]/" */
	enum bs_lock_verdict why;
	char detail[BS_DETAIL_MAX]; /* "dump.rdb: legal hold", or the error */
};

/*
 * The condition BS_CONDITION_RETENTION for a pass that kept n runs: *status "True" when
 * n > 0 (reason BS_REASON_LOCKED when any is locked, else BS_REASON_LOCK_UNKNOWN), else
 * "False" (BS_REASON_NOTHING_LOCKED); msg (cap bytes) names the kept runs and why, the
 * first ones when they do not all fit ("… and N more"). Returns the reason.
 */
const char *bs_retention_message(const struct bs_kept *k, size_t n, const char **status, char *msg,
                                 size_t cap);

/* --- the schedule's objects in the store ---------------------------------------------------- */

/*
 * Retention works from the store, not from the RedisBackup objects: a RedisBackup that
 * the history limit deleted (deletionPolicy Retain) leaves its objects, and so does a
 * failed attempt (each has its own directory), and retention must still see them. The
 * objects of a schedule's runs are under one prefix, the instance's layout
 * (docs/backup.md): "<path>/<cluster>/<ns>/<run>[.r<attempt>]/<file>", <run> being
 * bs_backup_name's "<sb_name>-YYYYMMDDHHMMSS". A key under the prefix that is not exactly
 * that (another schedule "<sb_name>-x", a user's object) is not the schedule's and is
 * never touched. Age counts from the scheduled time in the name (a run's backup completes
 * after it, so a backup is at most its own duration older than its completion time).
 * A run chosen by bs_past_retention is deleted only when none of its objects is locked
 * (bs_lock_fold over each object's objstore_lock_get): a locked run, or one whose lock
 * state the store would not tell, is kept whole, named in the condition
 * BS_CONDITION_RETENTION (bs_retention_message) and an Event, and not counted as deleted.
 */
#define BS_KEY_MAX       API_BACKUP_KEY_MAX /* an object key (api/backup_store.h) */
#define BS_MANIFEST      "manifest.json"
#define BS_STORED_MAX    4096  /* run directories considered per reconcile */
#define BS_LIST_KEYS_MAX 20000 /* keys listed per reconcile (more: retention waits) */

/* The prefix of schedule sb_name's runs ("<path>/<cluster>/<ns>/<run name less its
 * digits>": empty segments dropped, no doubled '/'). 0, or -ENAMETOOLONG. */
int bs_store_prefix(const char *path, const char *cluster, const char *ns, const char *sb_name,
                    char out[BS_KEY_MAX]);

/* One run directory of the schedule in the store. */
struct bs_stored {
	char dir[BS_KEY_MAX];         /* "<prefix><digits>[.r<N>]/" */
	char backup[BS_NAME_MAX + 1]; /* its RedisBackup's name, "<sb_name>-<digits>" */
	int64_t time_ms;              /* the scheduled time in the name */
	bool completed;               /* its manifest is listed */
	size_t first, count;          /* its keys: keys[first .. first+count) after sorting */
};

/*
 * Sorts keys (n of them, strings owned by the caller) and groups those under prefix by
 * run directory into out (room for max): in key order, so one directory's keys are
 * together. Returns how many directories.
 */
size_t bs_stored_group(const char *prefix, char **keys, size_t n, struct bs_stored *out,
                       size_t max);

#endif

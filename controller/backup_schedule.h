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
	bool locked;     /* under Object Lock (retention or legal hold): not deletable */
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

#endif

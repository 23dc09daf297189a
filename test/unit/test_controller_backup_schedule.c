/*
 * Unit tests for controller/backup_schedule: every rule of bs_decide as a case (on time,
 * waiting, never twice, busy, suspended, one catch-up after downtime, the lateness
 * window, spec.immediate, a schedule that never fires, DST gaps and overlaps, @every, a
 * clock that went back), the backup names, the history limits and the retention window,
 * and the schedule's objects in the store (their prefix, checked against the instance's
 * own key layout, and the run directories among the listed keys).
 */
#include <errno.h>
#include <string.h>

#include "controller/backup_schedule.h"
#include "instance/backup.h"
#include "unit.h"

#define T0   INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */
#define MIN  INT64_C(60000)
#define HOUR (60 * MIN)
#define DAY  (24 * HOUR)

static const struct {
	const char *why, *zone, *schedule;
	bool suspend, immediate, running;
	int64_t created, last, now;
	int rc;
	enum bs_action action;
	int64_t schedule_ms, next_ms;
} decisions[] = {
	{ "before the first run", "UTC", "0 3 * * *", false, false, false, T0, 0, T0 + HOUR, 0,
	  BS_WAIT, 0, T0 + 3 * HOUR },
	{ "the first run is due", "UTC", "0 3 * * *", false, false, false, T0, 0,
	  T0 + 3 * HOUR + 10000, 0, BS_CREATE, T0 + 3 * HOUR, T0 + 27 * HOUR },
	{ "due while one runs", "UTC", "0 3 * * *", false, false, true, T0, 0,
	  T0 + 3 * HOUR + 10000, 0, BS_BUSY, T0 + 3 * HOUR, T0 + 27 * HOUR },
	{ "suspended", "UTC", "0 3 * * *", true, false, false, T0, 0, T0 + 3 * HOUR + 10000, 0,
	  BS_SUSPENDED, 0, 0 },
	{ "suspended while one runs", "UTC", "0 3 * * *", true, true, true, T0, 0, T0 + DAY, 0,
	  BS_SUSPENDED, 0, 0 },
	{ "never twice for one time", "UTC", "0 3 * * *", false, false, false, T0, T0 + 3 * HOUR,
	  T0 + 3 * HOUR + 30000, 0, BS_WAIT, 0, T0 + 27 * HOUR },
	{ "down five days: one catch-up, the latest", "UTC", "0 3 * * *", false, false, false, T0,
	  T0 + 3 * HOUR, T0 + 5 * DAY + 12 * HOUR, 0, BS_CATCH_UP, T0 + 5 * DAY + 3 * HOUR,
	  T0 + 6 * DAY + 3 * HOUR },
	{ "the catch-up is not repeated", "UTC", "0 3 * * *", false, false, false, T0,
	  T0 + 5 * DAY + 3 * HOUR, T0 + 5 * DAY + 12 * HOUR, 0, BS_WAIT, 0,
	  T0 + 6 * DAY + 3 * HOUR },
	{ "90 s late is on time", "UTC", "0 3 * * *", false, false, false, T0, T0 + 3 * HOUR,
	  T0 + 27 * HOUR + 90000, 0, BS_CREATE, T0 + 27 * HOUR, T0 + 51 * HOUR },
	{ "121 s late is a catch-up", "UTC", "0 3 * * *", false, false, false, T0, T0 + 3 * HOUR,
	  T0 + 27 * HOUR + 121000, 0, BS_CATCH_UP, T0 + 27 * HOUR, T0 + 51 * HOUR },
	{ "immediate: at once", "UTC", "0 3 * * *", false, true, false, T0, 0, T0 + 10000, 0,
	  BS_CREATE, T0 + 10000, T0 + 3 * HOUR },
	{ "immediate, but one runs", "UTC", "0 3 * * *", false, true, true, T0, 0, T0 + 10000, 0,
	  BS_WAIT, 0, T0 + 3 * HOUR },
	{ "immediate only before the first run", "UTC", "0 3 * * *", false, true, false, T0,
	  T0 + 3 * HOUR, T0 + 4 * HOUR, 0, BS_WAIT, 0, T0 + 27 * HOUR },
	{ "never fires", "UTC", "0 0 30 2 *", false, false, false, T0, 0, T0 + HOUR, -ENOENT, 0, 0,
	  0 },
	{ "02:30 in the Berlin gap fires at 03:00 CEST", "Europe/Berlin", "30 2 * * *", false,
	  false, false, INT64_C(1774699200000) /* 03-28 12:00Z */, 0,
	  INT64_C(1774746030000) /* 03-29 01:00:30Z */, 0, BS_CREATE, INT64_C(1774746000000),
	  INT64_C(1774830600000) /* 03-30 00:30Z */ },
	{ "02:30 in the Berlin overlap fires once", "Europe/Berlin", "30 2 * * *", false, false,
	  false, INT64_C(1792843200000), INT64_C(1792888200000) /* 10-25 00:30Z */,
	  INT64_C(1792891830000) /* 01:30:30Z, 02:30:30 CET */, 0, BS_WAIT, 0,
	  INT64_C(1792978200000) /* 10-26 01:30Z */ },
	{ "9:00 in Kolkata", "Asia/Kolkata", "0 9 * * *", false, false, false, T0, 0,
	  T0 + 3 * HOUR + 30 * MIN, 0, BS_CREATE, T0 + 3 * HOUR + 30 * MIN,
	  T0 + 27 * HOUR + 30 * MIN },
	{ "@every: one catch-up", "UTC", "@every 1h", false, false, false, T0, 0,
	  T0 + 5 * HOUR + 10 * MIN, 0, BS_CATCH_UP, T0 + 5 * HOUR, T0 + 6 * HOUR },
	{ "@every: waiting", "UTC", "@every 1h", false, false, false, T0, T0 + 5 * HOUR,
	  T0 + 5 * HOUR + 10 * MIN, 0, BS_WAIT, 0, T0 + 6 * HOUR },
	{ "the clock went back", "UTC", "0 3 * * *", false, false, false, T0, T0 + 27 * HOUR,
	  T0 + 26 * HOUR, 0, BS_WAIT, 0, T0 + 51 * HOUR },
};

START_TEST(decide)
{
	struct cron c;
	struct tz *z = NULL;
	struct err e = { 0 };
	struct bs_decision d = { .action = 99 };
	struct bs_input in = { .suspend = decisions[_i].suspend,
		               .immediate = decisions[_i].immediate,
		               .running = decisions[_i].running,
		               .created_ms = decisions[_i].created,
		               .last_schedule_ms = decisions[_i].last,
		               .now_ms = decisions[_i].now };

	ck_assert_int_eq(cron_parse(decisions[_i].schedule, &c, NULL), 0);
	ck_assert_int_eq(tz_load(decisions[_i].zone, &z, NULL), 0);
	in.cron = &c;
	in.tz = z;
	ck_assert_msg(bs_decide(&in, &d, &e) == decisions[_i].rc, "%s", decisions[_i].why);
	if (decisions[_i].rc) {
		ck_assert_int_eq(d.action, 99);
		ck_assert_ptr_nonnull(strstr(e.msg, "never fires"));
	} else {
		ck_assert_msg(d.action == decisions[_i].action, "%s: action %d", decisions[_i].why,
		              d.action);
		ck_assert_msg(d.schedule_ms == decisions[_i].schedule_ms, "%s: schedule %lld",
		              decisions[_i].why, (long long)d.schedule_ms);
		ck_assert_msg(d.next_ms == decisions[_i].next_ms, "%s: next %lld",
		              decisions[_i].why, (long long)d.next_ms);
		ck_assert_ptr_nonnull(d.reason);
	}
	tz_free(z);
}
END_TEST

START_TEST(names)
{
	char out[BS_NAME_MAX + 1], longname[300];

	bs_backup_name("shop-hourly", T0 + DAY + 3 * HOUR + 999, out);
	ck_assert_str_eq(out, "shop-hourly-20260102030000");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	bs_backup_name(longname, T0, out);
	ck_assert_uint_eq(strlen(out), BS_NAME_MAX);
	ck_assert_str_eq(out + BS_NAME_MAX - BS_NAME_SUFFIX, "-20260101000000");
	longname[BS_NAME_MAX - BS_NAME_SUFFIX - 1] = '-'; /* the cut would end in "-" */
	longname[BS_NAME_MAX - BS_NAME_SUFFIX - 2] = '.';
	bs_backup_name(longname, T0, out);
	ck_assert_uint_eq(strlen(out), BS_NAME_MAX - 2);
	ck_assert_int_eq(out[BS_NAME_MAX - BS_NAME_SUFFIX - 3], 'a');
}
END_TEST

START_TEST(history)
{
	static const struct bs_backup b[] = {
		{ "c1", API_BACKUP_COMPLETED, T0 + 1 * HOUR }, /* 0 */
		{ "f1", API_BACKUP_FAILED, T0 + 2 * HOUR },    /* 1 */
		{ "c2", API_BACKUP_COMPLETED, T0 + 3 * HOUR }, /* 2 */
		{ "r1", API_BACKUP_RUNNING, T0 },              /* 3: never */
		{ "p1", 0, T0 },                               /* 4: never */
		{ "c4", API_BACKUP_COMPLETED, T0 + 5 * HOUR }, /* 5 */
		{ "c3", API_BACKUP_COMPLETED, T0 + 5 * HOUR }, /* 6: same time, name before c4 */
		{ "f2", API_BACKUP_FAILED, T0 + 6 * HOUR },    /* 7 */
		{ "q1", API_BACKUP_PENDING, T0 },              /* 8: never */
	};
	size_t out[ARRAY_LEN(b)], n;

	n = bs_prune_history(b, ARRAY_LEN(b), 2, 1, out);
	ck_assert_uint_eq(n, 3); /* keep c4, c3; f2 */
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[1], 1);
	ck_assert_uint_eq(out[2], 2);
	n = bs_prune_history(b, ARRAY_LEN(b), 3, 0, out);
	ck_assert_uint_eq(n, 3); /* c1, f1, f2 */
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[1], 1);
	ck_assert_uint_eq(out[2], 7);
	n = bs_prune_history(b, ARRAY_LEN(b), 1, 5, out);
	ck_assert_uint_eq(n, 3); /* keep c4 only */
	ck_assert_uint_eq(out[2], 6);
	ck_assert_uint_eq(bs_prune_history(b, ARRAY_LEN(b), 10, 10, out), 0);
	ck_assert_uint_eq(bs_prune_history(b, ARRAY_LEN(b), 0, 0, out), 6);
	ck_assert_uint_eq(bs_prune_history(NULL, 0, 0, 0, out), 0);
}
END_TEST

START_TEST(retention)
{
	static const struct bs_artifact a[] = {
		{ "old", true, T0 - 40 * DAY, false },         /* 0: past */
		{ "old-locked", true, T0 - 40 * DAY, true },   /* 1: Object Lock */
		{ "old-failed", false, T0 - 35 * DAY, false }, /* 2: past, behind complete ones */
		{ "unknown", true, 0, false },                 /* 3: unknown time */
		{ "edge", true, T0 - 30 * DAY, false },        /* 4: exactly at the cutoff: kept */
		{ "recent", true, T0 - 2 * DAY, false },       /* 5 */
		{ "newest", true, T0 - DAY, false },           /* 6 */
		{ "running", false, T0 - HOUR, false },        /* 7 */
	};
	/* Everything old: the newest completed backup stays, and a later partial one. */
	static const struct bs_artifact stale[] = {
		{ "a", true, T0 - 90 * DAY, false },
		{ "b", true, T0 - 60 * DAY, false },
		{ "b-partial", false, T0 - 59 * DAY, false },
		{ "a-partial", false, T0 - 91 * DAY, false },
	};
	size_t out[8], n;

	n = bs_past_retention(a, ARRAY_LEN(a), 30 * DAY, T0, out);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[1], 2);
	ck_assert_uint_eq(bs_past_retention(a, ARRAY_LEN(a), 0, T0, out), 0);
	ck_assert_uint_eq(bs_past_retention(a, ARRAY_LEN(a), -1, T0, out), 0);
	n = bs_past_retention(a, ARRAY_LEN(a), HOUR, T0, out); /* all but newest, lock, unknown */
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(out[3], 5);
	n = bs_past_retention(stale, ARRAY_LEN(stale), 30 * DAY, T0, out);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out[0], 0);
	ck_assert_uint_eq(out[1], 3);
	ck_assert_uint_eq(bs_past_retention(stale + 2, 2, 30 * DAY, T0, out),
	                  0); /* none complete */
}
END_TEST

/* A run is deleted only when every object was read unlocked; a gone object is nothing
 * to keep; an unreadable state keeps the run; a lock wins over an unknown. */
START_TEST(lock_fold)
{
	enum bs_lock_verdict v = BS_DELETABLE;

	v = bs_lock_fold(v, 0, false);
	ck_assert_int_eq(v, BS_DELETABLE);
	v = bs_lock_fold(v, -ENOENT, false);
	ck_assert_int_eq(v, BS_DELETABLE);
	v = bs_lock_fold(v, -EACCES, false); /* 403 on GetObjectRetention */
	ck_assert_int_eq(v, BS_LOCK_UNKNOWN);
	v = bs_lock_fold(v, 0, false); /* a later free object does not clear it */
	ck_assert_int_eq(v, BS_LOCK_UNKNOWN);
	v = bs_lock_fold(v, 0, true);
	ck_assert_int_eq(v, BS_LOCKED);
	ck_assert_int_eq(bs_lock_fold(BS_LOCKED, -EIO, false), BS_LOCKED);
	ck_assert_int_eq(bs_lock_fold(BS_DELETABLE, 0, true), BS_LOCKED);
}
END_TEST

START_TEST(retention_message)
{
	struct bs_kept k[40] = {
		{ "p/c/ns/sb-20261201000000/", BS_LOCKED, "dump.rdb: legal hold" },
		{ "p/c/ns/sb-20261202000000.r1/", BS_LOCK_UNKNOWN,
		  "manifest.json: s3 GetObjectRetention x: 403 AccessDenied" },
	};
	const char *st = NULL, *reason;
	char msg[1024];

	reason = bs_retention_message(k, 0, &st, msg, sizeof(msg));
	ck_assert_str_eq(reason, BS_REASON_NOTHING_LOCKED);
	ck_assert_str_eq(st, "False");
	reason = bs_retention_message(k, 2, &st, msg, sizeof(msg));
	ck_assert_str_eq(reason, BS_REASON_LOCKED);
	ck_assert_str_eq(st, "True");
	ck_assert_str_eq(msg, "2 stored backups past the retention kept: "
	                      "p/c/ns/sb-20261201000000/ (dump.rdb: legal hold); "
	                      "p/c/ns/sb-20261202000000.r1/ (lock state unknown: manifest.json: "
	                      "s3 GetObjectRetention x: 403 AccessDenied)");
	reason = bs_retention_message(k + 1, 1, &st, msg, sizeof(msg));
	ck_assert_str_eq(reason, BS_REASON_LOCK_UNKNOWN);
	for (size_t i = 2; i < ARRAY_LEN(k); i++)
		k[i] = k[0];
	reason = bs_retention_message(k, ARRAY_LEN(k), &st, msg, sizeof(msg));
	ck_assert_uint_lt(strlen(msg), sizeof(msg) - 1);
	ck_assert_ptr_nonnull(strstr(msg, "; and "));
	ck_assert_ptr_nonnull(strstr(msg, " more"));
	ck_assert_ptr_nonnull(strstr(msg, "40 stored backups"));
}
END_TEST

/* --- the schedule's objects in the store ------------------------------------------------ */

/* The prefix is the instance's own layout (inst_backup_keys) of a run's directory, less
 * the run's digits, for paths with and without slashes at their ends. */
START_TEST(store_prefix)
{
	static const char *const paths[] = { "", "/", "cit-1", "/a/b/", "a//b" };
	char prefix[BS_KEY_MAX], run[BS_NAME_MAX + 1], inst[BS_NAME_MAX + 8];
	char dump[INST_BACKUP_KEY_MAX], man[INST_BACKUP_KEY_MAX];
	struct err e = { 0 };

	bs_backup_name("nightly", T0, run);
	snprintf(inst, sizeof(inst), "prod/%s", run);
	for (size_t i = 0; i < ARRAY_LEN(paths); i++) {
		ck_assert_int_eq(bs_store_prefix(paths[i], "cache", "prod", "nightly", prefix), 0);
		ck_assert_int_eq(inst_backup_keys(paths[i], "cache", inst, dump, man, &e), 0);
		ck_assert_msg(
		        strncmp(man, prefix, strlen(prefix)) == 0 &&
		                strcmp(man + strlen(prefix), "20260101000000/manifest.json") == 0,
		        "path '%s': prefix %s, manifest %s", paths[i], prefix, man);
	}
	ck_assert_int_eq(bs_store_prefix("", "c", "ns", "nightly", prefix), 0);
	ck_assert_str_eq(prefix, "c/ns/nightly-");
}
END_TEST

/* Only this schedule's run directories, grouped, in key order, with their keys. */
START_TEST(stored_group)
{
	static const char *const listed[] = {
		"p/c/ns/sb-20260101000100/manifest.json", /* complete */
		"p/c/ns/sb-20260101000100/dump.rdb",
		"p/c/ns/sb-20260101000000.r1/dump.rdb", /* a failed attempt: no manifest */
		"p/c/ns/sb-20260101000000/dump.rdb",
		"p/c/ns/sb-20260101000000/manifest.json",
		"p/c/ns/sb-eu-20260101000000/manifest.json", /* schedule "sb-eu" */
		"p/c/ns/sb-2026010100000/manifest.json",     /* 13 digits */
		"p/c/ns/sb-20260101000000x/manifest.json",   /* not "/" nor ".r<N>" after */
		"p/c/ns/sb-20269901000000/manifest.json",    /* not a time */
		"p/c/ns/sb-20260101000200/",                 /* a directory marker */
		"p/c/ns/sb-20260101000300.r/dump.rdb",       /* ".r" without a number */
		"p/c/ns/other/manifest.json",
	};
	char *keys[ARRAY_LEN(listed)];
	struct bs_stored d[8];
	size_t n;

	for (size_t i = 0; i < ARRAY_LEN(listed); i++)
		keys[i] = xstrdup(listed[i]);
	n = bs_stored_group("p/c/ns/sb-", keys, ARRAY_LEN(keys), d, ARRAY_LEN(d));

	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(d[0].dir, "p/c/ns/sb-20260101000000.r1/");
	ck_assert_str_eq(d[0].backup, "sb-20260101000000");
	ck_assert(!d[0].completed);
	ck_assert_uint_eq(d[0].count, 1);
	ck_assert_str_eq(d[1].dir, "p/c/ns/sb-20260101000000/");
	ck_assert(d[1].completed);
	ck_assert_uint_eq(d[1].count, 2);
	ck_assert_int_eq(d[1].time_ms, T0);
	ck_assert_str_eq(d[2].dir, "p/c/ns/sb-20260101000100/");
	ck_assert_str_eq(d[2].backup, "sb-20260101000100");
	ck_assert(d[2].completed);
	ck_assert_int_eq(d[2].time_ms, T0 + MIN);
	for (size_t i = 0; i < n; i++)
		for (size_t j = d[i].first; j < d[i].first + d[i].count; j++)
			ck_assert_msg(strncmp(keys[j], d[i].dir, strlen(d[i].dir)) == 0,
			              "%s not in %s", keys[j], d[i].dir);
	/* room for one: the first directory, whole */
	ck_assert_uint_eq(bs_stored_group("p/c/ns/sb-", keys, ARRAY_LEN(keys), d, 1), 1);
	ck_assert_str_eq(d[0].dir, "p/c/ns/sb-20260101000000.r1/");
	ck_assert_uint_eq(bs_stored_group("p/c/ns/sb-", keys, 0, d, 1), 0);
	for (size_t i = 0; i < ARRAY_LEN(keys); i++)
		free(keys[i]);
}
END_TEST

static Suite *backup_schedule_suite(void)
{
	Suite *s = suite_create("controller_backup_schedule");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, decide, 0, ARRAY_LEN(decisions));
	tcase_add_test(tc, names);
	tcase_add_test(tc, history);
	tcase_add_test(tc, retention);
	tcase_add_test(tc, lock_fold);
	tcase_add_test(tc, retention_message);
	tcase_add_test(tc, store_prefix);
	tcase_add_test(tc, stored_group);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(backup_schedule_suite)

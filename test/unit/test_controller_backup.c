/*
 * Unit tests for controller/backup (backup_decide.c): the instance a target picks, which
 * backup of a cluster goes first, every phase transition of bk_decide as a case (from
 * Pending: cluster missing, Secret missing within and after the grace, waiting behind
 * another, no instance, started; from Running: followed, completed, failed and retried,
 * failed for good, lost, deadline, re-sent), the status diff and its JSON, the names, and
 * the readers of a RedisBackup object's phase and times.
 */
#include <string.h>

#include "controller/backup.h"
#include "lib/rfc3339.h"
#include "unit.h"

#define T0  INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */
#define SEC INT64_C(1000)

/* --- the instance ----------------------------------------------------------------------- */

static const struct {
	const char *why;
	enum api_backup_target target;
	struct bk_candidate c[3];
	int want;
} choices[] = {
	{ "a caught-up replica",
	  API_TARGET_PREFER_REPLICA,
	  { { "c-1", true, true, true, "none", -1 },
	    { "c-2", false, true, true, "up", 0 },
	    { "c-3", false, true, true, "up", 10 } },
	  1 },
	{ "the least behind, within the bound",
	  API_TARGET_PREFER_REPLICA,
	  { { "c-1", true, true, true, "none", -1 },
	    { "c-2", false, true, true, "up", 100 },
	    { "c-3", false, true, true, "up", 10 } },
	  2 },
	{ "a replica too far behind: the primary",
	  API_TARGET_PREFER_REPLICA,
	  { { "c-1", true, true, true, "none", -1 },
	    { "c-2", false, true, true, "up", BK_REPLICA_LAG_MAX + 1 },
	    { "c-3", false, true, true, "down", 0 } },
	  0 },
	{ "an unready or silent replica: the primary",
	  API_TARGET_PREFER_REPLICA,
	  { { "c-1", true, true, true, "none", -1 },
	    { "c-2", false, true, false, "up", 0 },
	    { "c-3", false, false, true, "up", 0 } },
	  0 },
	{ "unknown lag is not caught up",
	  API_TARGET_PREFER_REPLICA,
	  { { "c-1", true, true, true, "none", -1 },
	    { "c-2", false, true, true, "up", -1 },
	    { "c-3", false, true, true, "up", -1 } },
	  0 },
	{ "target primary ignores replicas",
	  API_TARGET_PRIMARY,
	  { { "c-1", false, true, true, "up", 0 },
	    { "c-2", true, true, true, "none", -1 },
	    { "c-3", false, true, true, "up", 0 } },
	  1 },
	{ "the primary not ready: none",
	  API_TARGET_PRIMARY,
	  { { "c-1", true, true, false, "none", -1 },
	    { "c-2", false, true, true, "up", 0 },
	    { "c-3", false, true, true, "up", 0 } },
	  -1 },
};

START_TEST(choose)
{
	const char *why = NULL;
	int got = bk_choose(choices[_i].target, choices[_i].c, 3, BK_REPLICA_LAG_MAX, &why);

	ck_assert_msg(got == choices[_i].want, "%s: got %d", choices[_i].why, got);
	if (got < 0)
		ck_assert_ptr_nonnull(why);
}
END_TEST

START_TEST(first)
{
	const struct bk_entry a[] = {
		{ "b", API_BACKUP_COMPLETED, 1 },
		{ "d", API_BACKUP_PENDING, 5 },
		{ "c", 0, 4 },
		{ "e", API_BACKUP_PENDING, 4 },
	};
	const struct bk_entry r[] = {
		{ "x", API_BACKUP_PENDING, 1 },
		{ "y", API_BACKUP_RUNNING, 9 },
	};
	const struct bk_entry done[] = { { "x", API_BACKUP_FAILED, 1 } };

	ck_assert_int_eq(bk_first(a, ARRAY_LEN(a)), 2); /* oldest pending, then by name */
	ck_assert_int_eq(bk_first(r, ARRAY_LEN(r)), 1); /* a running one goes first */
	ck_assert_int_eq(bk_first(done, 1), -1);
	ck_assert_int_eq(bk_first(NULL, 0), -1);
}
END_TEST

/* --- steps ------------------------------------------------------------------------------- */

enum obs_kind { OBS_NONE, OBS_RUNNING, OBS_DONE, OBS_FAIL_RETRY, OBS_FAIL, OBS_OTHER };

static const struct {
	const char *why;
	enum api_backup_phase phase;
	int64_t attempt, age_ms; /* since creation (Pending) or since startedAt (Running) */
	bool cluster, secret;
	const char *blocker, *chosen;
	enum bk_inst_seen inst;
	int64_t silent_ms;
	enum obs_kind obs;
	/* expected */
	enum api_backup_phase next;
	enum bk_action action;
	const char *reason, *event;
	bool retry;
} steps[] = {
	{ "cluster missing", 0, 0, 0, false, true, NULL, "c-2", 0, 0, OBS_NONE, API_BACKUP_PENDING,
	  BK_NOTHING, "ClusterNotFound", NULL, false },
	{ "secret missing, in the grace", 0, 0, 10 * SEC, true, false, NULL, "c-2", 0, 0, OBS_NONE,
	  API_BACKUP_PENDING, BK_NOTHING, "CredentialsNotFound", NULL, false },
	{ "secret missing, after the grace", API_BACKUP_PENDING, 0, BK_SECRET_GRACE_MS, true, false,
	  NULL, "c-2", 0, 0, OBS_NONE, API_BACKUP_FAILED, BK_NOTHING, "CredentialsNotFound",
	  "BackupFailed", false },
	{ "another goes first", 0, 0, 0, true, true, "older", "c-2", 0, 0, OBS_NONE,
	  API_BACKUP_PENDING, BK_NOTHING, "Waiting", NULL, false },
	{ "no instance", 0, 0, 0, true, true, NULL, NULL, 0, 0, OBS_NONE, API_BACKUP_PENDING,
	  BK_NOTHING, "NoInstance", NULL, false },
	{ "started", 0, 0, 0, true, true, NULL, "c-2", 0, 0, OBS_NONE, API_BACKUP_RUNNING, BK_START,
	  "", "BackupStarted", false },
	{ "running, not seen yet: sent again", API_BACKUP_RUNNING, 0, 3 * SEC, true, true, NULL,
	  "c-2", BK_INST_ANSWERS, 0, OBS_NONE, API_BACKUP_RUNNING, BK_POST, "", NULL, false },
	{ "running, another name: sent again", API_BACKUP_RUNNING, 0, 3 * SEC, true, true, NULL,
	  "c-2", BK_INST_ANSWERS, 0, OBS_OTHER, API_BACKUP_RUNNING, BK_POST, "", NULL, false },
	{ "running, followed", API_BACKUP_RUNNING, 0, 30 * SEC, true, true, NULL, "c-2",
	  BK_INST_ANSWERS, 0, OBS_RUNNING, API_BACKUP_RUNNING, BK_NOTHING, "", NULL, false },
	{ "completed", API_BACKUP_RUNNING, 0, 30 * SEC, true, true, NULL, "c-2", BK_INST_ANSWERS, 0,
	  OBS_DONE, API_BACKUP_COMPLETED, BK_NOTHING, "", "BackupCompleted", false },
	{ "failed, retryable: retried", API_BACKUP_RUNNING, 0, 30 * SEC, true, true, NULL, "c-2",
	  BK_INST_ANSWERS, 0, OBS_FAIL_RETRY, API_BACKUP_PENDING, BK_NOTHING, "Retrying",
	  "BackupRetrying", true },
	{ "failed, retryable, last attempt", API_BACKUP_RUNNING, BK_ATTEMPTS_MAX - 1, 30 * SEC,
	  true, true, NULL, "c-2", BK_INST_ANSWERS, 0, OBS_FAIL_RETRY, API_BACKUP_FAILED,
	  BK_NOTHING, "UploadFailed", "BackupFailed", false },
	{ "failed for good", API_BACKUP_RUNNING, 0, 30 * SEC, true, true, NULL, "c-2",
	  BK_INST_ANSWERS, 0, OBS_FAIL, API_BACKUP_FAILED, BK_NOTHING, "UploadFailed",
	  "BackupFailed", false },
	{ "instance gone: retried", API_BACKUP_RUNNING, 0, 30 * SEC, true, true, NULL, "c-2",
	  BK_INST_GONE, 0, OBS_NONE, API_BACKUP_PENDING, BK_NOTHING, "Retrying", "BackupRetrying",
	  true },
	{ "silent a moment: wait", API_BACKUP_RUNNING, 0, 30 * SEC, true, true, NULL, "c-2",
	  BK_INST_UNREACHABLE, 5 * SEC, OBS_NONE, API_BACKUP_RUNNING, BK_NOTHING, "", NULL, false },
	{ "silent too long: lost", API_BACKUP_RUNNING, BK_ATTEMPTS_MAX - 1, 300 * SEC, true, true,
	  NULL, "c-2", BK_INST_UNREACHABLE, BK_LOST_MS + 1, OBS_NONE, API_BACKUP_FAILED, BK_NOTHING,
	  "InstanceLost", "BackupFailed", false },
	{ "restarted: the instance forgot it", API_BACKUP_RUNNING, 0, BK_LOST_MS + SEC, true, true,
	  NULL, "c-2", BK_INST_ANSWERS, 0, OBS_NONE, API_BACKUP_PENDING, BK_NOTHING, "Retrying",
	  "BackupRetrying", true },
	{ "past the deadline", API_BACKUP_RUNNING, 0, BK_DEADLINE_MS + SEC, true, true, NULL, "c-2",
	  BK_INST_ANSWERS, 0, OBS_RUNNING, API_BACKUP_FAILED, BK_NOTHING, "DeadlineExceeded",
	  "BackupFailed", false },
	{ "completed stays", API_BACKUP_COMPLETED, 0, 0, false, false, NULL, NULL, 0, 0, OBS_NONE,
	  API_BACKUP_COMPLETED, BK_NOTHING, "", NULL, false },
	{ "failed stays", API_BACKUP_FAILED, 0, 0, true, true, NULL, "c-2", 0, 0, OBS_NONE,
	  API_BACKUP_FAILED, BK_NOTHING, "", NULL, false },
};

static void observed(enum obs_kind k, struct api_inst_backup_state *o)
{
	static const char *const phases[] = {
		[OBS_RUNNING] = API_INST_BACKUP_RUNNING,   [OBS_DONE] = API_INST_BACKUP_COMPLETED,
		[OBS_FAIL_RETRY] = API_INST_BACKUP_FAILED, [OBS_FAIL] = API_INST_BACKUP_FAILED,
		[OBS_OTHER] = API_INST_BACKUP_COMPLETED,
	};

	memset(o, 0, sizeof(*o));
	o->name = k == OBS_OTHER ? "ns/other" : "ns/b1";
	o->phase = phases[k];
	o->key = "p/c/ns/b1/dump.rdb";
	o->manifest_key = "p/c/ns/b1/manifest.json";
	o->size = k == OBS_DONE ? 1234 : API_INST_NULL;
	o->sha256 = k == OBS_DONE ? "ab12" : NULL;
	o->offset = k == OBS_DONE ? 77 : API_INST_NULL;
	o->repl_id = "r1";
	o->engine = "valkey";
	o->engine_version = "8.1.1";
	o->stopped_at = k == OBS_DONE ? "2026-01-01T00:01:00Z" : NULL;
	o->error = k == OBS_FAIL || k == OBS_FAIL_RETRY ? "s3 PutObject: 503 SlowDown" : NULL;
	o->retryable = k == OBS_FAIL_RETRY;
}

START_TEST(step)
{
	struct bk_status cur = { 0 };
	struct api_inst_backup_state obs;
	struct bk_input in = { 0 };
	struct bk_step st;
	int64_t now = T0 + 3600 * SEC;
	char name[BK_INST_NAME_MAX + 1];

	cur.phase = steps[_i].phase;
	if (cur.phase == API_BACKUP_RUNNING) {
		rfc3339_format(now - steps[_i].age_ms, RFC3339_SECONDS, cur.started_at);
		snprintf(cur.instance, sizeof(cur.instance), "c-2");
	}
	observed(steps[_i].obs, &obs);
	bk_instance_name("ns", "b1", 0, name);
	in.name = "b1";
	in.inst_name = name;
	in.cur = &cur;
	in.attempt = steps[_i].attempt;
	in.created_ms = cur.phase == API_BACKUP_RUNNING ? now - 3600 * SEC : now - steps[_i].age_ms;
	in.now_ms = now;
	in.now = "2026-01-01T01:00:00Z";
	in.cluster = "c";
	in.cluster_found = steps[_i].cluster;
	in.secret = "creds";
	in.secret_found = steps[_i].secret;
	in.blocker = steps[_i].blocker;
	in.chosen = steps[_i].chosen;
	in.why = "the primary is not ready";
	in.inst = steps[_i].inst;
	in.silent_ms = steps[_i].silent_ms;
	in.obs = steps[_i].obs == OBS_NONE ? NULL : &obs;
	in.location = "s3://bucket/p/c/ns/b1/dump.rdb";
	bk_decide(&in, &st);
	ck_assert_msg(st.next.phase == steps[_i].next, "%s: phase %d", steps[_i].why,
	              st.next.phase);
	ck_assert_msg(st.action == steps[_i].action, "%s: action %d", steps[_i].why, st.action);
	ck_assert_msg(strcmp(st.next.reason, steps[_i].reason) == 0, "%s: reason %s", steps[_i].why,
	              st.next.reason);
	ck_assert_msg(steps[_i].event ? st.event && strcmp(st.event, steps[_i].event) == 0
	                              : !st.event,
	              "%s: event %s", steps[_i].why, st.event ? st.event : "none");
	ck_assert_msg(st.retry == steps[_i].retry, "%s: retry", steps[_i].why);
	if (st.next.phase == API_BACKUP_PENDING || st.next.phase == API_BACKUP_RUNNING)
		ck_assert_msg(st.requeue_ms > 0 || st.next.phase == cur.phase, "%s: requeue",
		              steps[_i].why);
	if (st.action == BK_START)
		ck_assert_str_eq(st.next.instance, "c-2");
	if (st.retry)
		ck_assert_str_eq(st.next.instance, "");
}
END_TEST

START_TEST(completed_fields)
{
	struct bk_status cur = { .phase = API_BACKUP_RUNNING };
	struct api_inst_backup_state obs;
	struct bk_input in = { 0 };
	struct bk_step st;

	snprintf(cur.started_at, sizeof(cur.started_at), "2026-01-01T00:00:00Z");
	snprintf(cur.instance, sizeof(cur.instance), "c-2");
	observed(OBS_DONE, &obs);
	in.name = "b1";
	in.inst_name = "ns/b1";
	in.cur = &cur;
	in.now_ms = T0 + 70 * SEC;
	in.now = "2026-01-01T00:01:10Z";
	in.cluster = "c";
	in.cluster_found = true;
	in.inst = BK_INST_ANSWERS;
	in.obs = &obs;
	in.location = "s3://bucket/p/c/ns/b1/dump.rdb";
	bk_decide(&in, &st);
	ck_assert(st.completed);
	ck_assert_str_eq(st.next.stopped_at, "2026-01-01T00:01:00Z");
	ck_assert_str_eq(st.next.checksum, "sha256:ab12");
	ck_assert_str_eq(st.next.manifest_key, "p/c/ns/b1/manifest.json");
	ck_assert_str_eq(st.next.location, "s3://bucket/p/c/ns/b1/dump.rdb");
	ck_assert(st.next.has_size && st.next.size == 1234);
	ck_assert(st.next.has_repl_offset && st.next.repl_offset == 77);
	ck_assert_str_eq(st.next.engine_version, "8.1.1");
	ck_assert_int_eq(st.next.cond, API_CONDITION_TRUE);
	ck_assert_str_eq(st.next.cond_time, "2026-01-01T00:01:10Z");
}
END_TEST

/* --- status -------------------------------------------------------------------------------- */

START_TEST(status_diff)
{
	struct bk_status a = { 0 }, b;
	json_t *j, *cd;

	a.phase = API_BACKUP_PENDING;
	bk_status_condition(&a, API_CONDITION_UNKNOWN, "Waiting", "another backup is running: x",
	                    "2026-01-01T00:00:00Z");
	b = a;
	ck_assert(bk_status_equal(&a, &b));
	/* the same condition later: its transition time stays, nothing to write */
	bk_status_condition(&b, API_CONDITION_UNKNOWN, "Waiting", "another backup is running: x",
	                    "2026-01-01T00:05:00Z");
	ck_assert_str_eq(b.cond_time, "2026-01-01T00:00:00Z");
	ck_assert(bk_status_equal(&a, &b));
	/* a new message is a write, the time still stays (same status) */
	bk_status_condition(&b, API_CONDITION_UNKNOWN, "Waiting", "another backup is running: y",
	                    "2026-01-01T00:06:00Z");
	ck_assert(!bk_status_equal(&a, &b));
	ck_assert_str_eq(b.cond_time, "2026-01-01T00:00:00Z");
	bk_status_condition(&b, API_CONDITION_TRUE, "Completed", "done", "2026-01-01T00:07:00Z");
	ck_assert_str_eq(b.cond_time, "2026-01-01T00:07:00Z");
	/* a size that is not set compares as absent */
	b = a;
	b.size = 5;
	ck_assert(bk_status_equal(&a, &b));
	b.has_size = true;
	ck_assert(!bk_status_equal(&a, &b));

	j = bk_status_json(&a, 3);
	ck_assert_str_eq(json_string_value(json_object_get(j, "phase")), "Pending");
	ck_assert(json_is_null(json_object_get(j, "instance")));
	ck_assert(json_is_null(json_object_get(j, "size")));
	cd = json_array_get(json_object_get(j, "conditions"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(cd, "status")), "Unknown");
	ck_assert_int_eq(json_integer_value(json_object_get(cd, "observedGeneration")), 3);
	json_decref(j);
}
END_TEST

START_TEST(status_from_api)
{
	struct api_condition cd = { BK_CONDITION, API_CONDITION_UNKNOWN, 1, "2026-01-01T00:00:00Z",
		                    "Running",    "backing up" };
	struct api_redis_backup_status s = { 0 };
	struct bk_status out, again;
	json_t *j;

	s.phase = API_BACKUP_RUNNING;
	s.started_at = "2026-01-01T00:00:00Z";
	s.instance = "c-2";
	s.conditions = &cd;
	s.n_conditions = 1;
	bk_status_from_api(&s, &out);
	ck_assert_int_eq(out.phase, API_BACKUP_RUNNING);
	ck_assert_str_eq(out.instance, "c-2");
	ck_assert_int_eq(out.cond, API_CONDITION_UNKNOWN);
	ck_assert_str_eq(out.cond_reason, "Running");
	/* what bk_decide leaves unchanged is no write */
	again = out;
	ck_assert(bk_status_equal(&out, &again));
	j = bk_status_json(&out, 1);
	ck_assert_str_eq(json_string_value(json_object_get(j, "startedAt")), s.started_at);
	json_decref(j);
}
END_TEST

/* --- names ---------------------------------------------------------------------------------- */

START_TEST(names)
{
	char n[BK_INST_NAME_MAX + 1], loc[BK_LOCATION_MAX], longname[300];
	struct api_destination s3 = { .set = true, .s3 = { .set = true, .bucket = "bk" } };
	struct api_destination az = {
		.set = true, .azure = { .set = true, .container = "ct", .account_name = "acct" }
	};

	bk_instance_name("prod", "cache-1", 0, n);
	ck_assert_str_eq(n, "prod/cache-1");
	bk_instance_name("prod", "cache-1", 2, n);
	ck_assert_str_eq(n, "prod/cache-1.r2");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	bk_instance_name("prod", longname, 1, n);
	ck_assert_uint_eq(strlen(n), BK_INST_NAME_MAX);
	ck_assert_str_eq(n + strlen(n) - 3, ".r1");

	bk_location(&s3, "p/c/x/dump.rdb", loc);
	ck_assert_str_eq(loc, "s3://bk/p/c/x/dump.rdb");
	bk_location(&az, "k", loc);
	ck_assert_str_eq(loc, "https://acct.blob.core.windows.net/ct/k");
	az.azure.endpoint = "http://10.0.0.5:10000/devstoreaccount1/";
	bk_location(&az, "k", loc);
	ck_assert_str_eq(loc, "http://10.0.0.5:10000/devstoreaccount1/ct/k");
}
END_TEST

/* --- reading RedisBackup objects -------------------------------------------------------------- */

START_TEST(object_readers)
{
	json_t *o = json_pack("{s:{s:s},s:{s:s,s:s}}", "metadata", "creationTimestamp",
	                      "2026-01-01T00:00:00Z", "status", "phase", "Completed", "stoppedAt",
	                      "yesterday");

	for (int p = API_BACKUP_PENDING; p <= API_BACKUP_FAILED; p++)
		ck_assert_int_eq(bk_phase_parse(bk_phase_name((enum api_backup_phase)p)), p);
	ck_assert_ptr_null(bk_phase_name(0));
	ck_assert_int_eq(bk_phase_parse(NULL), 0);
	ck_assert_int_eq(bk_phase_parse("completed"), 0); /* the API's case only */
	ck_assert_int_eq(bk_phase_of(o), API_BACKUP_COMPLETED);
	ck_assert_int_eq(bk_phase_of(NULL), 0);
	ck_assert_int_eq(bk_time_of(o, "metadata.creationTimestamp"), T0);
	ck_assert_int_eq(bk_time_of(o, "status.stoppedAt"), 0); /* not a time */
	ck_assert_int_eq(bk_time_of(o, "status.startedAt"), 0); /* absent */
	ck_assert_int_eq(bk_time_of(o, "status.phase.x"), 0);   /* not an object */
	json_decref(o);
}
END_TEST

static Suite *backup_suite(void)
{
	Suite *s = suite_create("controller_backup");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, choose, 0, ARRAY_LEN(choices));
	tcase_add_test(tc, first);
	tcase_add_loop_test(tc, step, 0, ARRAY_LEN(steps));
	tcase_add_test(tc, completed_fields);
	tcase_add_test(tc, status_diff);
	tcase_add_test(tc, status_from_api);
	tcase_add_test(tc, names);
	tcase_add_test(tc, object_readers);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(backup_suite)

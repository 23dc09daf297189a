/*
 * Unit tests for the controller's side of a restore (spec.bootstrap.backupName): what
 * carries the first primary's status.restore from its /v1/status to the cluster's
 * BootstrapReady condition. A change of the restore phase is significant for the poller
 * (ctl_inst_significant_change: the cluster is reconciled at once, not at the next status
 * refresh), and the manager's restore error reaches the condition and phaseReason whole
 * (ctl_inst_parse, ctl_bootstrap_judge), as long as the manager's own cap
 * (API_INST_BACKUP_ERROR_MAX) allows.
 */
#include <string.h>

#include "api/rediscluster.h"
#include "controller/bootstrap.h"
#include "controller/internal.h"
#include "controller/view.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

#define FAILURES_DOWN 2

static void inst_restore(struct ctl_inst *i, const char *phase)
{
	memset(i, 0, sizeof(*i));
	i->seen = true;
	snprintf(i->state, sizeof(i->state), "booting");
	snprintf(i->role, sizeof(i->role), "unknown");
	snprintf(i->link, sizeof(i->link), "none");
	snprintf(i->restore_phase, sizeof(i->restore_phase), "%s", phase);
}

/* Each step of a restore as the poller sees it: phase only, nothing else moves. */
START_TEST(restore_phase_is_significant)
{
	static const char *const phases[] = { "", API_INST_RESTORE_RESTORING,
		                              API_INST_RESTORE_FAILED, API_INST_RESTORE_RESTORING,
		                              API_INST_RESTORE_COMPLETED };
	struct ctl_inst a, b;

	for (size_t k = 1; k < ARRAY_LEN(phases); k++) {
		inst_restore(&a, phases[k - 1]);
		inst_restore(&b, phases[k]);
		ck_assert_msg(ctl_inst_significant_change(&a, &b, FAILURES_DOWN),
		              "restore '%s' -> '%s' not significant", phases[k - 1], phases[k]);
	}
	/* the same phase again (a retry's attempts, its error) is not */
	inst_restore(&a, API_INST_RESTORE_FAILED);
	inst_restore(&b, API_INST_RESTORE_FAILED);
	snprintf(b.restore_error, sizeof(b.restore_error), "another attempt's error");
	ck_assert(!ctl_inst_significant_change(&a, &b, FAILURES_DOWN));
}
END_TEST

/* A restore error as long as the manager sends: key, sizes and both digests. */
static void long_error(char *out, size_t size)
{
	char key[151];

	memset(key, 'k', 150);
	key[150] = '\0';
	snprintf(out, size,
	         "cit/bk/prod/%.150s/dump.rdb is corrupt: 12622940 bytes with sha256 "
	         "%064d, the manifest says 12622940 bytes with sha256 "
	         "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff (end)",
	         key, 0);
}

/* The golden primary status with a failed restore whose error is err. */
static char *status_with_restore(const char *err)
{
	char *text = tu_read_file("test/data/instance/status-redis-primary.json", NULL), *out;
	struct api_inst_status st;
	json_t *j;

	ck_assert_int_eq(api_inst_status_decode(text, strlen(text), &st, NULL), 0);
	st.has_restore = true;
	st.restore =
	        (struct api_inst_restore_state){ .name = "prod/nightly",
		                                 .manifest_key = "p/c/prod/nightly/manifest.json",
		                                 .phase = API_INST_RESTORE_FAILED,
		                                 .size = -1,
		                                 .error = err,
		                                 .retryable = true,
		                                 .attempts = 2 };
	j = api_inst_status_encode(&st);
	out = jsonx_dumps_compact(j);
	json_decref(j);
	api_inst_status_release(&st);
	free(text);
	return out;
}

START_TEST(restore_error_parsed_whole)
{
	char err[API_INST_BACKUP_ERROR_MAX], *text;
	struct ctl_inst i = { 0 };
	struct err e = { 0 };

	long_error(err, sizeof(err));
	ck_assert_int_gt(strlen(err), 300); /* longer than the old 256-byte cut */
	text = status_with_restore(err);
	ck_assert_int_eq(ctl_inst_parse(text, strlen(text), &i, &e), 0);
	ck_assert_str_eq(i.restore_phase, API_INST_RESTORE_FAILED);
	ck_assert_str_eq(i.restore_error, err);
	free(text);
}
END_TEST

/* The first primary's failed restore into the condition and phaseReason, whole. */
START_TEST(restore_error_in_condition_whole)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:I},s:{s:i,s:{s:s}},s:{s:s}}",
	                        "apiVersion", "redis.io/v1", "kind", "RedisCluster", "metadata",
	                        "name", "c", "namespace", "prod", "uid", "u-1", "generation",
	                        (json_int_t)1, "spec", "instances", 1, "bootstrap", "backupName",
	                        "nightly", "status", "currentPrimary", "c-1");
	struct api_redis_cluster rc;
	struct ctl_pod pod = { .name = "c-1", .serial = 1 };
	struct ctl_view v = { 0 };
	struct ctl_bootstrap b;
	struct err e = { 0 };
	char err[API_INST_BACKUP_ERROR_MAX];

	ck_assert_msg(api_redis_cluster_decode(obj, &rc, &e) == 0, "%s", e.msg);
	long_error(err, sizeof(err));
	inst_restore(&pod.inst, API_INST_RESTORE_FAILED);
	snprintf(pod.inst.restore_error, sizeof(pod.inst.restore_error), "%s", err);
	v.rc = &rc;
	v.obj = obj;
	v.ns = "prod";
	v.name = "c";
	v.pods = &pod;
	v.npods = 1;
	ctl_bootstrap_judge(&v, &b);
	ck_assert(b.wanted && !b.ok && !b.done);
	ck_assert_str_eq(b.reason, "RestoreFailed");
	ck_assert_msg(strstr(b.message, err) != NULL, "cut: %s", b.message);
	ck_assert_int_le(strlen(b.message), CTL_BOOT_MSG_MAX);
	api_redis_cluster_release(&rc);
	json_decref(obj);
}
END_TEST

static Suite *bootstrap_suite(void)
{
	Suite *s = suite_create("controller_backup_bootstrap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, restore_phase_is_significant);
	tcase_add_test(tc, restore_error_parsed_whole);
	tcase_add_test(tc, restore_error_in_condition_whole);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(bootstrap_suite)

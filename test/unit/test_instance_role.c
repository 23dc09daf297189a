/*
 * Unit tests for instance/role: the boot decision table. Each row is a set of facts
 * and the action the manager must take; the rows cover every rule, their order
 * (an unreachable API beats everything, a fence beats the lease…) and the
 * split-brain guards (an empty primary never starts while others exist), and the
 * sentinel mode's rules.
 */
#include "instance/role.h"
#include "unit.h"

#define U   INST_API_UNREACHABLE
#define N   INST_API_NOT_FOUND
#define OK  INST_API_OK
#define NT  INST_LEASE_NOT_TRIED
#define ACQ INST_LEASE_ACQUIRED
#define OTH INST_LEASE_OTHER
#define ERR INST_LEASE_ERROR

static const struct {
	const char *name;
	enum inst_api_state api;
	const char *primary;
	bool fenced, has_data, other_pods;
	int64_t instances;
	bool addr;
	enum inst_lease_state lease;
	enum inst_boot_action want;
	const char *fo_phase, *fo_from, *fo_to; /* status.failover */
} cases[] = {
	{ "api down waits", U, "p-1", false, true, false, 3, true, ACQ, INST_BOOT_WAIT },
	{ "api down even if primary known", U, "me", false, true, false, 3, false, NT,
	  INST_BOOT_WAIT },
	{ "cluster missing waits", N, NULL, false, true, false, 3, false, NT, INST_BOOT_WAIT },
	{ "no currentPrimary waits", OK, NULL, false, true, false, 3, false, NT, INST_BOOT_WAIT },
	{ "empty currentPrimary waits", OK, "", false, false, false, 1, false, NT, INST_BOOT_WAIT },
	{ "primary: needs the lease first", OK, "me", false, true, true, 3, false, NT,
	  INST_BOOT_NEED_LEASE },
	{ "primary with lease", OK, "me", false, true, true, 3, false, ACQ, INST_BOOT_PRIMARY },
	{ "primary, lease held by other", OK, "me", false, true, true, 3, false, OTH,
	  INST_BOOT_WAIT },
	{ "primary, lease API error", OK, "me", false, true, true, 3, false, ERR, INST_BOOT_WAIT },
	{ "fenced primary parks (before the lease)", OK, "me", true, true, false, 3, false, NT,
	  INST_BOOT_PARK },
	{ "fenced primary parks even with lease", OK, "me", true, true, false, 3, false, ACQ,
	  INST_BOOT_PARK },
	{ "empty primary, others exist: park", OK, "me", false, false, true, 3, false, NT,
	  INST_BOOT_PARK },
	{ "empty primary, first boot (no others)", OK, "me", false, false, false, 3, false, NT,
	  INST_BOOT_NEED_LEASE },
	{ "empty primary, single instance", OK, "me", false, false, true, 1, false, ACQ,
	  INST_BOOT_PRIMARY },
	{ "replica of known primary", OK, "p-1", false, false, true, 3, true, NT,
	  INST_BOOT_REPLICA },
	{ "replica with data of known primary", OK, "p-1", false, true, true, 3, true, NT,
	  INST_BOOT_REPLICA },
	{ "fenced replica still follows", OK, "p-1", true, true, true, 3, true, NT,
	  INST_BOOT_REPLICA },
	{ "replica, primary address unknown: park", OK, "p-1", false, true, true, 3, false, NT,
	  INST_BOOT_PARK },
	{ "replica never takes the lease", OK, "p-1", false, true, false, 1, false, ACQ,
	  INST_BOOT_PARK },
	/* a restarted manager of the old primary while a failover moves away from it */
	{ "failover Fencing away from me: park", OK, "me", false, true, true, 3, false, NT,
	  INST_BOOT_PARK, "Fencing", "me", NULL },
	{ "failover Promoting away from me: park", OK, "me", false, true, true, 3, false, NT,
	  INST_BOOT_PARK, "Promoting", "me", "p-2" },
	{ "failover Promoting me (self-promotion): lease", OK, "me", false, true, false, 1, false,
	  NT, INST_BOOT_NEED_LEASE, "Promoting", "me", "me" },
	{ "failover of another pod: lease as usual", OK, "me", false, true, true, 3, false, NT,
	  INST_BOOT_NEED_LEASE, "Fencing", "p-9", NULL },
	{ "in-place restart of me: lease", OK, "me", false, true, true, 3, false, NT,
	  INST_BOOT_NEED_LEASE, "PrimaryRestart", "me", NULL },
	{ "switchover from me: lease (the controller re-asks)", OK, "me", false, true, true, 3,
	  false, NT, INST_BOOT_NEED_LEASE, "Switchover", "me", "p-2" },
	{ "failover away from me, replica side unaffected", OK, "p-1", false, true, true, 3, true,
	  NT, INST_BOOT_REPLICA, "Fencing", "me", NULL },
};

START_TEST(decide_table)
{
	struct inst_boot_facts f = { 0 };
	struct inst_boot_decision d = { 0 };

	f.self = "me";
	f.api = cases[_i].api;
	f.current_primary = cases[_i].primary;
	f.fenced = cases[_i].fenced;
	f.has_data = cases[_i].has_data;
	f.other_pods = cases[_i].other_pods;
	f.instances = cases[_i].instances;
	f.primary_addr_known = cases[_i].addr;
	f.lease = cases[_i].lease;
	f.failover_phase = cases[_i].fo_phase;
	f.failover_from = cases[_i].fo_from;
	f.failover_to = cases[_i].fo_to;
	inst_role_decide(&f, &d);
	ck_assert_msg(d.action == cases[_i].want, "%s: got %s (%s), want %s", cases[_i].name,
	              inst_boot_action_name(d.action), d.reason,
	              inst_boot_action_name(cases[_i].want));
	ck_assert(d.reason && d.reason[0]);
}
END_TEST

/* spec.mode sentinel with sentinel pods (rules S1-S4): the sentinels' majority, not
 * currentPrimary, decides; without sentinel pods the rows above apply. */
static const struct {
	const char *name;
	const char *primary;
	bool fenced;
	size_t sentinels;
	enum inst_sentinel_verdict v;
	enum inst_lease_state lease;
	enum inst_boot_action want;
} sen_cases[] = {
	{ "named another: replica of it", "me", false, 3, INST_SENTINEL_OTHER, NT,
	  INST_BOOT_REPLICA },
	{ "named another, fence marker: replica (read-only)", "me", true, 3, INST_SENTINEL_OTHER,
	  NT, INST_BOOT_REPLICA },
	{ "named me, fence marker: hold, not started", "me", true, 3, INST_SENTINEL_SELF, NT,
	  INST_BOOT_HOLD },
	{ "no majority, fence marker: hold", "p-1", true, 3, INST_SENTINEL_NONE, NT,
	  INST_BOOT_HOLD },
	{ "named me: lease first", "p-1", false, 3, INST_SENTINEL_SELF, NT, INST_BOOT_NEED_LEASE },
	{ "named me, lease acquired: primary", "p-1", false, 3, INST_SENTINEL_SELF, ACQ,
	  INST_BOOT_PRIMARY },
	{ "named me, lease held by another: wait", "me", false, 3, INST_SENTINEL_SELF, OTH,
	  INST_BOOT_WAIT },
	{ "no majority: wait, not parked", "me", false, 3, INST_SENTINEL_NONE, NT, INST_BOOT_WAIT },
	{ "no sentinel pod: currentPrimary as in other modes", "me", false, 0, INST_SENTINEL_NONE,
	  NT, INST_BOOT_NEED_LEASE },
	{ "currentPrimary unset still waits", NULL, false, 3, INST_SENTINEL_OTHER, NT,
	  INST_BOOT_WAIT },
};

START_TEST(sentinel_table)
{
	struct inst_boot_facts f = { 0 };
	struct inst_boot_decision d = { 0 };

	f.self = "me";
	f.api = OK;
	f.current_primary = sen_cases[_i].primary;
	f.fenced = sen_cases[_i].fenced;
	f.has_data = true;
	f.other_pods = true;
	f.instances = 3;
	f.primary_addr_known = true;
	f.lease = sen_cases[_i].lease;
	f.sentinels = sen_cases[_i].sentinels;
	f.sentinel_verdict = sen_cases[_i].v;
	inst_role_decide(&f, &d);
	ck_assert_msg(d.action == sen_cases[_i].want, "%s: got %s (%s), want %s",
	              sen_cases[_i].name, inst_boot_action_name(d.action), d.reason,
	              inst_boot_action_name(sen_cases[_i].want));
}
END_TEST

START_TEST(action_names)
{
	ck_assert_str_eq(inst_boot_action_name(INST_BOOT_PRIMARY), "primary");
	ck_assert_str_eq(inst_boot_action_name(INST_BOOT_PARK), "park");
	ck_assert_str_eq(inst_boot_action_name(INST_BOOT_HOLD), "hold");
	ck_assert_str_eq(inst_boot_action_name((enum inst_boot_action)99), "unknown");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_role");
	TCase *t = tcase_create("role");

	tcase_add_loop_test(t, decide_table, 0, ARRAY_LEN(cases));
	tcase_add_loop_test(t, sentinel_table, 0, ARRAY_LEN(sen_cases));
	tcase_add_test(t, action_names);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

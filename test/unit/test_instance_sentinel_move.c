/*
 * Unit tests for instance/sentinel_move: when a manager that booted in spec.mode
 * standalone starts following the sentinels after the in-place move to sentinel mode,
 * as a table (spec read, sentinel pods found, their majority, a crashed primary).
 */
#include <string.h>

#include "instance/sentinel_move.h"
#include "unit.h"

#define NONE  INST_SENTINEL_NONE
#define SELF  INST_SENTINEL_SELF
#define OTHER INST_SENTINEL_OTHER

static const struct {
	const char *name;
	struct inst_move_facts f;
	enum inst_move_action want;
} moves[] = {
	{ "still standalone", { false, 3, SELF, false }, INST_MOVE_WAIT },
	{ "standalone, crashed", { false, 3, SELF, true }, INST_MOVE_WAIT },
	{ "sentinel, no sentinel pod yet", { true, 0, NONE, false }, INST_MOVE_WAIT },
	{ "sentinel, no pod, crashed", { true, 0, NONE, true }, INST_MOVE_WAIT },
	{ "sentinels still starting (no majority)", { true, 3, NONE, false }, INST_MOVE_WAIT },
	{ "no majority, crashed: old rules", { true, 3, NONE, true }, INST_MOVE_WAIT },
	{ "they name this primary", { true, 3, SELF, false }, INST_MOVE_FOLLOW },
	{ "they name the primary (a replica's view)", { true, 3, OTHER, false }, INST_MOVE_FOLLOW },
	{ "they name this crashed primary: hold", { true, 3, SELF, true }, INST_MOVE_HOLD_FOLLOW },
	{ "they name another (Sentinel failed over): follow, repoint",
	  { true, 3, OTHER, true },
	  INST_MOVE_FOLLOW },
	{ "one sentinel pod of three, majority of the count",
	  { true, 1, SELF, false },
	  INST_MOVE_FOLLOW },
};

START_TEST(move_table)
{
	struct inst_move_decision d = { .action = (enum inst_move_action) - 1, .reason = NULL };

	inst_sentinel_move_decide(&moves[_i].f, &d);
	ck_assert_msg(d.action == moves[_i].want, "%s: got %s", moves[_i].name,
	              inst_move_action_name(d.action));
	ck_assert_msg(d.reason && *d.reason, "%s: no reason", moves[_i].name);
}
END_TEST

START_TEST(move_names)
{
	ck_assert_str_eq(inst_move_action_name(INST_MOVE_WAIT), "wait");
	ck_assert_str_eq(inst_move_action_name(INST_MOVE_FOLLOW), "follow");
	ck_assert_str_eq(inst_move_action_name(INST_MOVE_HOLD_FOLLOW), "hold-follow");
	ck_assert_str_eq(inst_move_action_name((enum inst_move_action)42), "unknown");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_sentinel_move");
	TCase *t = tcase_create("move");

	tcase_add_loop_test(t, move_table, 0, ARRAY_LEN(moves));
	tcase_add_test(t, move_names);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

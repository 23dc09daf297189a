/*
 * Unit tests for instance/sentinel_vote: the parse of SENTINEL get-master-addr-by-name
 * answers, the majority tally ("named by a majority → self / another; no majority →
 * none"), and the follow table of a data manager in sentinel mode, as tables.
 */
#include <string.h>

#include "instance/sentinel_vote.h"
#include "unit.h"

/* --- the reply ------------------------------------------------------------------------ */

static const struct {
	const char *name, *resp;
	int rc;
	bool ok;
	const char *host;
	int port;
} replies[] = {
	{ "address", "*2\r\n$8\r\n10.0.0.5\r\n$4\r\n6379\r\n", 0, true, "10.0.0.5", 6379 },
	{ "nil: no such master", "*-1\r\n", 0, false, "", 0 },
	{ "error", "-NOAUTH Authentication required.\r\n", 0, false, "", 0 },
	{ "one element", "*1\r\n$8\r\n10.0.0.5\r\n", 0, false, "", 0 },
	{ "port not a number", "*2\r\n$8\r\n10.0.0.5\r\n$2\r\nxx\r\n", 0, false, "", 0 },
	{ "port 0", "*2\r\n$8\r\n10.0.0.5\r\n$1\r\n0\r\n", 0, false, "", 0 },
	{ "empty host", "*2\r\n$0\r\n\r\n$4\r\n6379\r\n", 0, false, "", 0 },
	{ "command failed (rc)", "*2\r\n$8\r\n10.0.0.5\r\n$4\r\n6379\r\n", -5, false, "", 0 },
};

START_TEST(parse_reply)
{
	struct inst_sentinel_answer a;
	struct vk_reply *r = NULL;

	ck_assert_int_eq(vk_reply_decode(replies[_i].resp, strlen(replies[_i].resp), &r, NULL), 0);
	inst_sentinel_parse_addr_reply(replies[_i].rc, r, &a);
	ck_assert_msg(a.ok == replies[_i].ok, "%s", replies[_i].name);
	ck_assert_str_eq(a.host, replies[_i].host);
	ck_assert_int_eq(a.port, replies[_i].port);
	vk_reply_free(r);
}
END_TEST

/* --- the tally ------------------------------------------------------------------------ */

#define ME                                                                                         \
	{                                                                                          \
		true, "10.0.0.1", 6379                                                             \
	}
#define B                                                                                          \
	{                                                                                          \
		true, "10.0.0.2", 6379                                                             \
	}
#define C                                                                                          \
	{                                                                                          \
		true, "10.0.0.3", 6379                                                             \
	}
#define MEP                                                                                        \
	{                                                                                          \
		true, "10.0.0.1", 6380                                                             \
	} /* same host, another port: not me */
#define NO                                                                                         \
	{                                                                                          \
		false, "", 0                                                                       \
	}
#define SELF  INST_SENTINEL_SELF
#define OTHER INST_SENTINEL_OTHER
#define NONE  INST_SENTINEL_NONE

static const struct {
	const char *name;
	size_t n, expected;
	struct inst_sentinel_answer a[5];
	enum inst_sentinel_verdict want;
	const char *host;
	size_t votes, needed;
} tallies[] = {
	{ "3 of 3 name me", 3, 3, { ME, ME, ME }, SELF, "10.0.0.1", 3, 2 },
	{ "2 of 3 name me, 1 silent", 3, 3, { ME, NO, ME }, SELF, "10.0.0.1", 2, 2 },
	{ "2 of 3 name B", 3, 3, { B, ME, B }, OTHER, "10.0.0.2", 2, 2 },
	{ "1 of 3 names me, 2 silent", 3, 3, { ME, NO, NO }, NONE, "", 1, 2 },
	{ "split 1/1/1", 3, 3, { ME, B, C }, NONE, "", 1, 2 },
	{ "nobody answers", 3, 3, { NO, NO, NO }, NONE, "", 0, 2 },
	{ "no sentinel at all", 0, 3, { NO }, NONE, "", 0, 2 },
	{ "2 pods found of count 5: not a majority", 2, 5, { B, B }, NONE, "", 2, 3 },
	{ "3 of count 5", 5, 5, { B, B, NO, B, ME }, OTHER, "10.0.0.2", 3, 3 },
	{ "count unknown: the pods found", 2, 0, { ME, ME }, SELF, "10.0.0.1", 2, 2 },
	{ "2 of 4: not strict", 4, 4, { B, B, ME, ME }, NONE, "", 2, 3 },
	{ "another port on my host is not me", 3, 3, { MEP, MEP, ME }, OTHER, "10.0.0.1", 2, 2 },
};

START_TEST(tally_table)
{
	struct inst_sentinel_tally t;

	inst_sentinel_tally(tallies[_i].a, tallies[_i].n, tallies[_i].expected, "10.0.0.1", 6379,
	                    &t);
	ck_assert_msg(t.verdict == tallies[_i].want, "%s: verdict %d", tallies[_i].name, t.verdict);
	ck_assert_msg(strcmp(t.host, tallies[_i].host) == 0, "%s: host %s", tallies[_i].name,
	              t.host);
	ck_assert_msg(t.votes == tallies[_i].votes && t.needed == tallies[_i].needed,
	              "%s: %zu of %zu", tallies[_i].name, t.votes, t.needed);
}
END_TEST

START_TEST(tally_caps_answers)
{
	struct inst_sentinel_answer a[INST_SENTINELS_MAX + 4];
	struct inst_sentinel_tally t;

	for (size_t i = 0; i < ARRAY_LEN(a); i++)
		a[i] = (struct inst_sentinel_answer){ true, "10.0.0.2", 6379 };
	inst_sentinel_tally(a, ARRAY_LEN(a), 0, "10.0.0.1", 6379, &t);
	ck_assert_int_eq(t.votes, INST_SENTINELS_MAX);
	ck_assert_int_eq(t.verdict, OTHER);
}
END_TEST

/* --- the follow table ------------------------------------------------------------------ */

static const struct inst_sentinel_tally T_SELF = { SELF, "10.0.0.1", 6379, 2, 2 };
static const struct inst_sentinel_tally T_OTHER = { OTHER, "10.0.0.2", 6379, 2, 2 };
static const struct inst_sentinel_tally T_NONE = { NONE, "", 0, 1, 2 };

enum { HELD = 1, PRIMARY = 2, USER_F = 4, AUTO_F = 8, MASTER = 16, FOLLOWS = 32, PARKED = 64 };

static const struct {
	const char *name;
	const struct inst_sentinel_tally *t;
	int flags;
	int64_t held_ms, unconfirmed_ms;
	enum inst_follow_action want;
} follows[] = {
	/* a crashed primary's server is kept down: a parked server answers PING, and
	 * Sentinel would not see the master down */
	{ "crashed, sentinels still name me", &T_SELF, HELD, 1000, 0, INST_FOLLOW_HOLD },
	{ "crashed, no majority", &T_NONE, HELD, 1000, 0, INST_FOLLOW_HOLD },
	{ "crashed, no majority past failoverTimeout", &T_NONE, HELD, 999999, 0, INST_FOLLOW_HOLD },
	{ "crashed, sentinels name B", &T_OTHER, HELD, 1000, 0, INST_FOLLOW_START_REPLICA },
	{ "crashed, named past failoverTimeout", &T_SELF, HELD, 200000, 0,
	  INST_FOLLOW_START_PRIMARY },
	/* the old primary: no longer named → demoted; the new one takes the Lease */
	{ "primary, sentinels name B", &T_OTHER, PRIMARY | MASTER, 0, 0, INST_FOLLOW_DEMOTE },
	{ "fenced primary, sentinels name B", &T_OTHER, PRIMARY | MASTER | USER_F, 0, 0,
	  INST_FOLLOW_DEMOTE },
	{ "parked, B named", &T_OTHER, PARKED, 0, 0, INST_FOLLOW_REPOINT },
	{ "replica of the dead old master, B named: Sentinel re-points it", &T_OTHER, 0, 0, 0,
	  INST_FOLLOW_KEEP },
	{ "replica of C, B named: Sentinel's to fix", &T_OTHER, 0, 0, 0, INST_FOLLOW_KEEP },
	{ "just promoted by Sentinel, majority still names the old: keep", &T_OTHER, MASTER, 0, 0,
	  INST_FOLLOW_KEEP },
	{ "replica of B, B named", &T_OTHER, FOLLOWS, 0, 0, INST_FOLLOW_KEEP },
	{ "replica promoted by Sentinel", &T_SELF, MASTER, 0, 0, INST_FOLLOW_TAKE_LEASE },
	{ "named, but still a replica: Sentinel promotes, not us", &T_SELF, 0, 0, 0,
	  INST_FOLLOW_KEEP },
	{ "primary, named", &T_SELF, PRIMARY | MASTER, 0, 0, INST_FOLLOW_KEEP },
	{ "auto-fenced primary named again: unfence", &T_SELF, PRIMARY | MASTER | AUTO_F, 0, 0,
	  INST_FOLLOW_TAKE_LEASE },
	{ "user-fenced primary named: stays fenced", &T_SELF, PRIMARY | MASTER | USER_F, 0, 0,
	  INST_FOLLOW_KEEP },
	/* no majority: a primary fences once it was unconfirmed for fence_after */
	{ "primary, no majority for a moment", &T_NONE, PRIMARY | MASTER, 0, 400,
	  INST_FOLLOW_KEEP },
	{ "primary, no majority past fence_after", &T_NONE, PRIMARY | MASTER, 0, 600,
	  INST_FOLLOW_FENCE },
	{ "auto-fenced primary, no majority: stays", &T_NONE, PRIMARY | MASTER | AUTO_F, 0, 9000,
	  INST_FOLLOW_KEEP },
	{ "replica, no majority: stays as it is", &T_NONE, FOLLOWS, 0, 9000, INST_FOLLOW_KEEP },
};

START_TEST(follow_table)
{
	struct inst_follow_facts f = { 0 };
	struct inst_follow_decision d = { 0 };
	int fl = follows[_i].flags;

	f.tally = follows[_i].t;
	f.held = fl & HELD;
	f.primary = fl & PRIMARY;
	f.fenced_by_user = fl & USER_F;
	f.auto_fenced = fl & AUTO_F;
	f.server_master = fl & MASTER;
	f.follows_named = fl & FOLLOWS;
	f.parked = fl & PARKED;
	f.held_ms = follows[_i].held_ms;
	f.unconfirmed_ms = follows[_i].unconfirmed_ms;
	f.failover_timeout_ms = 180000;
	f.fence_after_ms = 500;
	inst_sentinel_follow(&f, &d);
	ck_assert_msg(d.action == follows[_i].want, "%s: got %s (%s), want %s", follows[_i].name,
	              inst_follow_action_name(d.action), d.reason,
	              inst_follow_action_name(follows[_i].want));
	ck_assert(d.reason && d.reason[0]);
}
END_TEST

START_TEST(follow_names)
{
	ck_assert_str_eq(inst_follow_action_name(INST_FOLLOW_TAKE_LEASE), "take-lease");
	ck_assert_str_eq(inst_follow_action_name(INST_FOLLOW_FENCE), "fence");
	ck_assert_str_eq(inst_follow_action_name((enum inst_follow_action)99), "unknown");
}
END_TEST

/* --- the planned switchover's gate ----------------------------------------------------- */

#define S0 "slave0:ip=10.0.0.2,port=6379,state=online,offset=100,lag=0\r\n"
#define S1 "slave1:ip=10.0.0.3,port=6379,state=online,offset=100,lag=0\r\n"
static const struct {
	const char *name, *info;
	int64_t known;
	bool ok;
	const char *why;
} gates[] = {
	{ "both at the offset", S0 S1, 2, true, "" },
	{ "sentinel's count unknown", S0 S1, -1, true, "" },
	{ "one behind", S0 "slave1:ip=10.0.0.3,port=6379,state=online,offset=99,lag=0\r\n", 2,
	  false, "replica 10.0.0.3:6379 is online at offset 99 of 100" },
	{ "one syncing", S0 "slave1:ip=10.0.0.3,port=6379,state=send_bulk,offset=100,lag=0\r\n", 2,
	  false, "replica 10.0.0.3:6379 is send_bulk" },
	{ "sentinel knows an unlinked one", S0, 2, false,
	  "Sentinel knows 2 replicas, 1 are linked" },
	{ "none linked", "", 0, false, "no replica is linked" },
	{ "rdb channel aside",
	  S0 "slave1:ip=10.0.0.3,port=6380,state=wait_bgsave,offset=0,lag=0,type=rdb-channel\r\n",
	  1, true, "" },
};

START_TEST(caught_up_table)
{
	char text[1024], why[256] = "x";
	struct vk_info info;
	struct err e = { 0 };

	snprintf(text, sizeof(text), "role:master\r\nmaster_repl_offset:100\r\n%s", gates[_i].info);
	ck_assert_int_eq(vk_info_parse(text, strlen(text), &info, &e), 0);
	ck_assert_msg(inst_sentinel_caught_up(&info, gates[_i].known, why, sizeof(why)) ==
	                      gates[_i].ok,
	              "%s: %s", gates[_i].name, why);
	ck_assert_msg(strncmp(why, gates[_i].why, strlen(gates[_i].why)) == 0 &&
	                      (gates[_i].ok ? why[0] == '\0' : why[0] != '\0'),
	              "%s: why '%s'", gates[_i].name, why);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_sentinel_vote");
	TCase *t = tcase_create("vote");

	tcase_add_loop_test(t, parse_reply, 0, ARRAY_LEN(replies));
	tcase_add_loop_test(t, tally_table, 0, ARRAY_LEN(tallies));
	tcase_add_test(t, tally_caps_answers);
	tcase_add_loop_test(t, follow_table, 0, ARRAY_LEN(follows));
	tcase_add_test(t, follow_names);
	tcase_add_loop_test(t, caught_up_table, 0, ARRAY_LEN(gates));
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

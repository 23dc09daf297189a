/*
 * sentinel_move: the decision table of the in-place move to sentinel mode (see
 * sentinel_move.h). Each rule is a predicate and an outcome; the first match wins.
 */
#include "instance/sentinel_move.h"

static bool r_not_sentinel(const struct inst_move_facts *f)
{
	return !f->spec_sentinel;
}
static bool r_no_pod(const struct inst_move_facts *f)
{
	return f->sentinels == 0;
}
static bool r_no_majority(const struct inst_move_facts *f)
{
	return f->verdict == INST_SENTINEL_NONE;
}
static bool r_crashed_named(const struct inst_move_facts *f)
{
	return f->verdict == INST_SENTINEL_SELF && f->crashed_parked;
}
static bool r_always(const struct inst_move_facts *f)
{
	(void)f;
	return true;
}

static const struct {
	bool (*when)(const struct inst_move_facts *f);
	enum inst_move_action action;
	const char *reason;
} rules[] = {
	{ r_not_sentinel, INST_MOVE_WAIT, "spec.mode is not sentinel" },
	{ r_no_pod, INST_MOVE_WAIT, "spec.mode sentinel, but no sentinel pod yet" },
	{ r_no_majority, INST_MOVE_WAIT, "no majority of the sentinels names a master yet" },
	{ r_crashed_named, INST_MOVE_HOLD_FOLLOW,
	  "the sentinels name this crashed primary: held down, then following the sentinels" },
	{ r_always, INST_MOVE_FOLLOW, "spec.mode moved to sentinel: following the sentinels" },
};

void inst_sentinel_move_decide(const struct inst_move_facts *f, struct inst_move_decision *out)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].when(f)) {
			out->action = rules[i].action;
			out->reason = rules[i].reason;
			return;
		}
	}
}

const char *inst_move_action_name(enum inst_move_action a)
{
	static const char *const names[] = { "wait", "follow", "hold-follow" };

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "unknown";
}

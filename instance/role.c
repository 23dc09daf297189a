/*
 * role: the boot decision table (see role.h). Each rule is a small predicate plus an
 * outcome; the rules run in order and the first match wins.
 */
#include "role.h"

#include <stddef.h>
#include <string.h>

#include "api/rediscluster.h"

static bool is_primary(const struct inst_boot_facts *f)
{
	return f->current_primary && *f->current_primary &&
	       strcmp(f->current_primary, f->self) == 0;
}

static bool r_api_down(const struct inst_boot_facts *f)
{
	return f->api == INST_API_UNREACHABLE;
}
static bool r_not_found(const struct inst_boot_facts *f)
{
	return f->api == INST_API_NOT_FOUND;
}
static bool r_no_primary(const struct inst_boot_facts *f)
{
	return !f->current_primary || !*f->current_primary;
}
static bool r_fenced(const struct inst_boot_facts *f)
{
	return is_primary(f) && f->fenced;
}
static bool r_empty(const struct inst_boot_facts *f)
{
	return is_primary(f) && !f->has_data && f->other_pods && f->instances > 1;
}
static bool same(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* A failover (not a switchover or an in-place restart) is moving the primary elsewhere. */
static bool r_failing_over_away(const struct inst_boot_facts *f)
{
	return is_primary(f) &&
	       (same(f->failover_phase, API_FAILOVER_FENCING) ||
	        same(f->failover_phase, API_FAILOVER_PROMOTING)) &&
	       same(f->failover_from, f->self) && !same(f->failover_to, f->self);
}
static bool r_need_lease(const struct inst_boot_facts *f)
{
	return is_primary(f) && f->lease == INST_LEASE_NOT_TRIED;
}
static bool r_lease_ok(const struct inst_boot_facts *f)
{
	return is_primary(f) && f->lease == INST_LEASE_ACQUIRED;
}
static bool r_lease_other(const struct inst_boot_facts *f)
{
	return is_primary(f) && f->lease == INST_LEASE_OTHER;
}
static bool r_lease_err(const struct inst_boot_facts *f)
{
	return is_primary(f);
}
/* sentinel mode with sentinel pods: rules S1-S4 */
static bool sen(const struct inst_boot_facts *f)
{
	return f->sentinels > 0;
}
static bool r_sen_other(const struct inst_boot_facts *f)
{
	return sen(f) && f->sentinel_verdict == INST_SENTINEL_OTHER;
}
static bool r_sen_hold(const struct inst_boot_facts *f)
{
	return sen(f) && f->fenced;
}
static bool r_sen_self(const struct inst_boot_facts *f)
{
	return sen(f) && f->sentinel_verdict == INST_SENTINEL_SELF;
}
static bool r_sen_need_lease(const struct inst_boot_facts *f)
{
	return r_sen_self(f) && f->lease == INST_LEASE_NOT_TRIED;
}
static bool r_sen_lease_ok(const struct inst_boot_facts *f)
{
	return r_sen_self(f) && f->lease == INST_LEASE_ACQUIRED;
}
static bool r_replica(const struct inst_boot_facts *f)
{
	return f->primary_addr_known;
}
static bool r_always(const struct inst_boot_facts *f)
{
	(void)f;
	return true;
}

static const struct {
	bool (*when)(const struct inst_boot_facts *f);
	enum inst_boot_action action;
	const char *reason;
} rules[] = {
	{ r_api_down, INST_BOOT_WAIT, "API server unreachable" },
	{ r_not_found, INST_BOOT_WAIT, "RedisCluster not found" },
	{ r_no_primary, INST_BOOT_WAIT, "status.currentPrimary is not set yet" },
	{ r_sen_other, INST_BOOT_REPLICA, "replica of the master the sentinels name" },
	{ r_sen_hold, INST_BOOT_HOLD,
	  "fenced: not started until the sentinels name another master" },
	{ r_sen_need_lease, INST_BOOT_NEED_LEASE, "the sentinels name it: acquiring the lease" },
	{ r_sen_lease_ok, INST_BOOT_PRIMARY, "the sentinels name it and the lease is acquired" },
	{ r_sen_self, INST_BOOT_WAIT, "the sentinels name it, but the lease is not free" },
	{ sen, INST_BOOT_WAIT, "no majority of the sentinels names a master yet" },
	{ r_fenced, INST_BOOT_PARK, "fenced: a fence marker is in the data dir" },
	{ r_empty, INST_BOOT_PARK, "empty data dir while other instances exist" },
	{ r_failing_over_away, INST_BOOT_PARK, "a failover away from this pod is running" },
	{ r_need_lease, INST_BOOT_NEED_LEASE, "currentPrimary: acquiring the primary lease" },
	{ r_lease_ok, INST_BOOT_PRIMARY, "currentPrimary and lease acquired" },
	{ r_lease_other, INST_BOOT_WAIT, "currentPrimary, but the lease is held by another" },
	{ r_lease_err, INST_BOOT_WAIT, "currentPrimary, but the lease could not be read" },
	{ r_replica, INST_BOOT_REPLICA, "replica of the current primary" },
	{ r_always, INST_BOOT_PARK, "the current primary's address is unknown" },
};

void inst_role_decide(const struct inst_boot_facts *f, struct inst_boot_decision *out)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].when(f)) {
			out->action = rules[i].action;
			out->reason = rules[i].reason;
			return;
		}
	}
}

const char *inst_boot_action_name(enum inst_boot_action a)
{
	static const char *const names[] = { "wait",    "need-lease", "primary",
		                             "replica", "park",       "hold" };

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "unknown";
}

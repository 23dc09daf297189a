/*
 * sentinel_vote: the sentinels' answers counted, and what a data manager in sentinel mode
 * does about them (see sentinel_vote.h). Pure; any thread.
 */
#include "instance/sentinel_vote.h"

#include <stdio.h>
#include <string.h>

#include "lib/parse.h"

void inst_sentinel_parse_addr_reply(int rc, const struct vk_reply *r,
                                    struct inst_sentinel_answer *out)
{
	const char *host, *port;
	size_t hlen;
	int64_t p;

	memset(out, 0, sizeof(*out));
	if (rc || vk_reply_type(r) != VK_REPLY_ARRAY || vk_reply_len(r) != 2)
		return;
	host = vk_reply_str(vk_reply_elem(r, 0), &hlen);
	port = vk_reply_str(vk_reply_elem(r, 1), NULL);
	if (!host || !port || hlen == 0 || hlen >= sizeof(out->host) ||
	    parse_int64(port, 1, 65535, &p, NULL) < 0)
		return;
	memcpy(out->host, host, hlen + 1);
	out->port = (int)p;
	out->ok = true;
}

static bool same_addr(const struct inst_sentinel_answer *a, const struct inst_sentinel_answer *b)
{
	return a->port == b->port && strcmp(a->host, b->host) == 0;
}

static size_t votes_for(const struct inst_sentinel_answer *a, size_t n, size_t i)
{
	size_t v = 0;

	for (size_t j = 0; j < n; j++)
		v += a[j].ok && same_addr(&a[i], &a[j]);
	return v;
}

void inst_sentinel_tally(const struct inst_sentinel_answer *a, size_t n, size_t expected,
                         const char *self_host, int self_port, struct inst_sentinel_tally *out)
{
	size_t best = 0, best_i = 0;

	if (n > INST_SENTINELS_MAX)
		n = INST_SENTINELS_MAX;
	memset(out, 0, sizeof(*out));
	out->needed = (expected > n ? expected : n) / 2 + 1;
	for (size_t i = 0; i < n; i++) {
		size_t v = a[i].ok ? votes_for(a, n, i) : 0;

		if (v > best) {
			best = v;
			best_i = i;
		}
	}
	out->votes = best;
	if (best < out->needed)
		return;
	snprintf(out->host, sizeof(out->host), "%s", a[best_i].host);
	out->port = a[best_i].port;
	out->verdict =
	        self_host && a[best_i].port == self_port && strcmp(a[best_i].host, self_host) == 0
	                ? INST_SENTINEL_SELF
	                : INST_SENTINEL_OTHER;
}

/* --- the follow table ------------------------------------------------------------------ */

static bool v_self(const struct inst_follow_facts *f)
{
	return f->tally->verdict == INST_SENTINEL_SELF;
}
static bool v_other(const struct inst_follow_facts *f)
{
	return f->tally->verdict == INST_SENTINEL_OTHER;
}
static bool r_held_other(const struct inst_follow_facts *f)
{
	return f->held && v_other(f);
}
static bool r_held_gave_up(const struct inst_follow_facts *f)
{
	return f->held && v_self(f) && f->held_ms > f->failover_timeout_ms;
}
static bool r_held(const struct inst_follow_facts *f)
{
	return f->held;
}
static bool r_demote(const struct inst_follow_facts *f)
{
	return v_other(f) && f->primary;
}
/* Only a parked server: Sentinel re-points replicas itself (during a failover its
 * majority may name the old master for a moment while it promotes or re-points this
 * very server, and a REPLICAOF from us then would undo its work). */
static bool r_repoint(const struct inst_follow_facts *f)
{
	return v_other(f) && f->parked;
}
static bool r_user_fence(const struct inst_follow_facts *f)
{
	return v_self(f) && f->fenced_by_user;
}
static bool r_take_lease(const struct inst_follow_facts *f)
{
	return v_self(f) && f->server_master && (!f->primary || f->auto_fenced);
}
static bool r_unconfirmed(const struct inst_follow_facts *f)
{
	return f->tally->verdict == INST_SENTINEL_NONE && f->primary && !f->auto_fenced &&
	       !f->fenced_by_user && f->unconfirmed_ms > f->fence_after_ms;
}
static bool r_always(const struct inst_follow_facts *f)
{
	(void)f;
	return true;
}

static const struct {
	bool (*when)(const struct inst_follow_facts *f);
	enum inst_follow_action action;
	const char *reason;
} rules[] = {
	{ r_held_other, INST_FOLLOW_START_REPLICA,
	  "crashed as primary; the sentinels name another master: restart as its replica" },
	{ r_held_gave_up, INST_FOLLOW_START_PRIMARY,
	  "crashed as primary; the sentinels still name it after failoverTimeout: restart as "
	  "primary" },
	{ r_held, INST_FOLLOW_HOLD,
	  "crashed as primary: kept down until the sentinels name another master" },
	{ r_demote, INST_FOLLOW_DEMOTE, "the sentinels name another master: demoted" },
	{ r_repoint, INST_FOLLOW_REPOINT, "replica of the master the sentinels name" },
	{ r_user_fence, INST_FOLLOW_KEEP, "fenced on request: only /v1/unfence lifts it" },
	{ r_take_lease, INST_FOLLOW_TAKE_LEASE, "the sentinels name this server: primary" },
	{ r_unconfirmed, INST_FOLLOW_FENCE,
	  "no majority of the sentinels names this primary: fenced" },
	{ r_always, INST_FOLLOW_KEEP, "as the sentinels say" },
};

void inst_sentinel_follow(const struct inst_follow_facts *f, struct inst_follow_decision *out)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i].when(f)) {
			out->action = rules[i].action;
			out->reason = rules[i].reason;
			return;
		}
	}
}

const char *inst_follow_action_name(enum inst_follow_action a)
{
	static const char *const names[] = { "keep",   "hold",    "start-replica", "start-primary",
		                             "demote", "repoint", "take-lease",    "fence" };

	return (unsigned)a < sizeof(names) / sizeof(names[0]) ? names[a] : "unknown";
}

bool inst_sentinel_caught_up(const struct vk_info *info, int64_t known, char *why, size_t len)
{
	long long linked = 0;

	for (size_t i = 0; i < info->nreplicas; i++) {
		const struct vk_info_replica *r = &info->replicas[i];

		if (strcmp(r->type, "rdb-channel") == 0)
			continue;
		linked++;
		if (strcmp(r->state, "online") != 0 || r->offset != info->master_repl_offset) {
			snprintf(why, len, "replica %s:%lld is %s at offset %lld of %lld", r->ip,
			         r->port, r->state, r->offset, info->master_repl_offset);
			return false;
		}
	}
	if (linked == 0 || info->nreplicas_seen > info->nreplicas) {
		snprintf(why, len,
		         linked ? "more replicas than INFO lists" : "no replica is linked");
		return false;
	}
	if (known > linked) {
		snprintf(why, len, "Sentinel knows %lld replicas, %lld are linked",
		         (long long)known, linked);
		return false;
	}
	why[0] = '\0';
	return true;
}

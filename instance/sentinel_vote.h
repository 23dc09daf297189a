/*
 * sentinel_vote: the pure half of a data pod in `spec.mode: sentinel` (docs/sentinel.md).
 * Sentinel is the only promoter there; the data manager only reads what the sentinels
 * say and makes its own server agree, never the other way round:
 *
 *   answers[i] = inst_sentinel_parse_addr_reply(rc, reply)   one per sentinel pod
 *   inst_sentinel_tally(answers, n, spec.sentinel.count, self_host, self_port, &t);
 *   facts = { .tally = &t, .held = …, .primary = …, … };
 *   inst_sentinel_follow(&facts, &d);   d.action: what the supervisor does now
 *
 * The tally: the address a strict majority of the sentinels names (the majority of
 * max(sentinel pods found, spec.sentinel.count), so a deleted sentinel pod does not
 * lower the bar) → SELF (this pod's own IP and port) or OTHER; anything less (no
 * answer, a split view, a failover half done) → NONE.
 *
 * The follow table (first match wins; inst_sentinel_follow_reason names the rule):
 *   held (crashed as primary, server kept down) + OTHER     → START_REPLICA of it
 *   held + SELF past failoverTimeout since the crash       → START_PRIMARY (Sentinel
 *                                                            could not fail over)
 *   held                                                   → HOLD (stay down: a server
 *                                                            that answers PING is not
 *                                                            "down" to Sentinel)
 *   OTHER + this manager is primary                        → DEMOTE (fence, release the
 *                                                            Lease, REPLICAOF it)
 *   OTHER + the server is parked (a replica of nothing)    → REPOINT (every other
 *                                                            replica is Sentinel's to
 *                                                            re-point: it does, and a
 *                                                            REPLICAOF from us during
 *                                                            its failover would undo it)
 *   SELF + fenced on request (/v1/fence)                   → KEEP
 *   SELF + the server is master, not primary or auto-fenced→ TAKE_LEASE (then unfence)
 *   NONE + primary unfenced, unconfirmed past fence_after  → FENCE
 *   else                                                   → KEEP
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_SENTINEL_VOTE_H
#define REDIS_OPERATOR_INSTANCE_SENTINEL_VOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "lib/err.h"
#include "lib/valkey/conn.h"
#include "lib/valkey/info.h"

#define INST_SENTINELS_MAX 16 /* sentinel pods asked; more are ignored */

/* One sentinel's SENTINEL get-master-addr-by-name answer. */
struct inst_sentinel_answer {
	bool ok; /* it answered an address */
	char host[API_INST_HOST_MAX + 1];
	int port;
};

/* rc and r from the command → out (ok false for an error, a nil or a malformed reply). */
void inst_sentinel_parse_addr_reply(int rc, const struct vk_reply *r,
                                    struct inst_sentinel_answer *out);

enum inst_sentinel_verdict {
	INST_SENTINEL_NONE, /* no strict majority names one address */
	INST_SENTINEL_SELF, /* a majority names this pod's server */
	INST_SENTINEL_OTHER,
};

struct inst_sentinel_tally {
	enum inst_sentinel_verdict verdict;
	char host[API_INST_HOST_MAX + 1]; /* the named master ("" for NONE) */
	int port;
	size_t votes, needed; /* for the named address; needed = expected / 2 + 1 */
};

/* n answers (at most INST_SENTINELS_MAX read); expected = spec.sentinel.count (0:
 * unknown, n is used). */
void inst_sentinel_tally(const struct inst_sentinel_answer *a, size_t n, size_t expected,
                         const char *self_host, int self_port, struct inst_sentinel_tally *out);

enum inst_follow_action {
	INST_FOLLOW_KEEP,
	INST_FOLLOW_HOLD,
	INST_FOLLOW_START_REPLICA,
	INST_FOLLOW_START_PRIMARY,
	INST_FOLLOW_DEMOTE,
	INST_FOLLOW_REPOINT,
	INST_FOLLOW_TAKE_LEASE,
	INST_FOLLOW_FENCE,
};

struct inst_follow_facts {
	const struct inst_sentinel_tally *tally;
	bool held;                   /* crashed as primary: the server is kept down */
	int64_t held_ms;             /* since the crash */
	int64_t failover_timeout_ms; /* spec.sentinel.failoverTimeout */
	bool primary;                /* the manager runs it as primary (Lease held) */
	bool fenced_by_user;         /* fenced by /v1/fence: only /v1/unfence lifts it */
	bool auto_fenced;            /* fenced by this table, or by a lost Lease */
	bool server_master;          /* the server's own ROLE says master */
	bool follows_named;          /* the server's ROLE replicates from the named master */
	bool parked;                 /* the server's ROLE: a replica of the park address */
	int64_t unconfirmed_ms;      /* since a majority last named this server */
	int64_t fence_after_ms;      /* spec.sentinel.downAfter / 2 */
};

struct inst_follow_decision {
	enum inst_follow_action action;
	const char *reason; /* static text for logs and /v1/status */
};

void inst_sentinel_follow(const struct inst_follow_facts *f, struct inst_follow_decision *out);
/* "keep", "hold", "start-replica", "start-primary", "demote", "repoint", "take-lease",
 * "fence". */
const char *inst_follow_action_name(enum inst_follow_action a);

/*
 * The planned switchover's gate (docs/sentinel.md "Planned switchover"): with the
 * primary's writes paused, every replica Sentinel could pick holds every write the
 * primary took. info: the paused primary's INFO replication; known: the replicas
 * Sentinel knows of this master (SENTINEL MASTER num-slaves; -1: unknown). true when at
 * least one replica is linked, every linked one (valkey's rdb-channel lines aside) is
 * online at master_repl_offset, and Sentinel knows no replica that is not linked (it
 * could promote one whose link broke moments ago). Else false, why (len > 0) saying what
 * is missing.
 */
bool inst_sentinel_caught_up(const struct vk_info *info, int64_t known, char *why, size_t len);

#endif

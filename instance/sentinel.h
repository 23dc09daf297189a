/*
 * sentinel: the pure half of `redis-operator instance --role sentinel` (docs/sentinel.md):
 * the sentinel.conf it writes before the first start, and the parsers of what Sentinel
 * answers (SENTINEL MASTER, SENTINEL CKQUORUM) into the /v1/status view
 * (api/instance_v1.h, struct api_inst_sentinel_view). The runner is sentinel_run.c.
 *
 *   struct inst_sentinel_conf c = { .port = 26379, .dir = "/data", .announce_ip = ip,
 *                                   .master_host = "10.0.0.5", .master_port = 6379,
 *                                   .quorum = 2, .down_after_ms = 5000, ... };
 *   struct buf text = BUF_INIT(INST_SENTINEL_CONF_MAX);
 *   if (inst_sentinel_render(&c, &text, &e) == 0) write it 0600, start the sentinel;
 *
 * The file is written only when absent: Sentinel rewrites it (its id, the current master
 * after every failover, the known sentinels and replicas, the epochs), and that state
 * must survive a restart of the sentinel. What the operator owns and may change later
 * (announce-ip after rescheduling, quorum and timings, the auth to the data pods) is
 * re-applied at runtime by the runner (inst_sentinel_live_cmds), never by a re-render.
 *
 * Secrets: auth_pass (the data pods' operator user) and requirepass (the sentinels' own,
 * also sentinel-pass between them) are written in cleartext, as Sentinel needs them:
 * the file is 0600 and never logged. Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_SENTINEL_H
#define REDIS_OPERATOR_INSTANCE_SENTINEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/valkey/conn.h"

#define INST_SENTINEL_CONF_FILE "sentinel.conf"
#define INST_SENTINEL_CONF_MAX  (16 * 1024)
#define INST_SENTINEL_TEXT_MAX  256 /* a string kept from Sentinel's answers */

struct inst_sentinel_conf {
	int port;
	const char *bind;        /* space-separated; NULL: Sentinel's default */
	const char *dir;         /* its working directory (the writable volume) */
	const char *announce_ip; /* the pod IP; NULL or "": none */
	const char *master_host; /* the first master (an IP: resolve-hostnames is off) */
	int master_port;
	int64_t quorum, down_after_ms, failover_timeout_ms, parallel_syncs;
	const char *auth_user, *auth_pass; /* to the data pods; auth_pass NULL: none */
	const char *requirepass;           /* of the sentinels; NULL: none */
	const char *sentinel_pass;         /* live only: SENTINEL CONFIG SET sentinel-pass;
	                                    * NULL: left as it is (a rotation runs) */
	/* The TLS files, all or none: TLS-only (port 0, tls-port port) and TLS to the data
	 * pods and the other sentinels (tls-replication yes), as the data pods' servers. */
	const char *tls_cert, *tls_key, *tls_ca;
};

/* The whole file. -EINVAL naming the field (a host or port missing or malformed, a
 * timing out of range); -ENOSPC past the buffer's limit. */
int inst_sentinel_render(const struct inst_sentinel_conf *c, struct buf *out, struct err *e);

/* "host:port" (an IPv4 address or a name, port 1..65535) → host, port. -EINVAL. */
int inst_sentinel_parse_addr(const char *s, char *host, size_t hlen, int *port, struct err *e);

/* What SENTINEL MASTER said about the master. */
struct inst_sentinel_master {
	char host[INST_SENTINEL_TEXT_MAX];
	int64_t port;
	char status[16]; /* API_INST_MASTER_* */
	bool failover_in_progress;
	char failover_state[64];                                 /* "" unless one runs */
	int64_t config_epoch, quorum, other_sentinels, replicas; /* -1: absent */
};

/* Parses the flat field/value array of SENTINEL MASTER <name>. -EPROTO when it is not
 * an array of string pairs or lacks ip, port or flags. */
int inst_sentinel_parse_master(const struct vk_reply *r, struct inst_sentinel_master *out,
                               struct err *e);

/* SENTINEL CKQUORUM's answer: true for a status "+OK …"; the text (the reason when not
 * OK) goes to reason. */
bool inst_sentinel_quorum_ok(int rc, const struct vk_reply *r, const char *errmsg, char *reason,
                             size_t rlen);

/* The SENTINEL SET / SENTINEL CONFIG SET commands the runner applies after each start, so
 * that the operator-owned values win over a file Sentinel rewrote (announce-ip after a
 * reschedule, a changed quorum). argv[i] has argc[i] NUL-terminated arguments, borrowed
 * from c and from a static table; returns the number of commands (at most
 * INST_SENTINEL_LIVE_MAX). Commands carrying a secret have secret[i] set. */
#define INST_SENTINEL_LIVE_MAX  9
#define INST_SENTINEL_LIVE_ARGS 5
struct inst_sentinel_live {
	size_t n;
	int argc[INST_SENTINEL_LIVE_MAX];
	const char *argv[INST_SENTINEL_LIVE_MAX][INST_SENTINEL_LIVE_ARGS];
	bool secret[INST_SENTINEL_LIVE_MAX];
	char num[INST_SENTINEL_LIVE_MAX][24];
};
void inst_sentinel_live_cmds(const struct inst_sentinel_conf *c, struct inst_sentinel_live *out);

/*
 * The default user's line of sentinel.conf, set before every start of the sentinel:
 * copies text (the file as Sentinel left it) without its `user default` lines and
 * appends "user default <rules…>" (the rules of inst_acl_rules: every valid password
 * as a hash, so a sentinel restarted in the middle of a rotation accepts the old and the
 * new password, and one restarted after it only the new: a `user` line wins over the
 * rendered `requirepass` at load). -ENOSPC past out's limit.
 */
int inst_sentinel_conf_user(const char *text, size_t len, const char *const *rules, size_t n,
                            struct buf *out, struct err *e);

struct inst;
/* sentinel_run.c: the main loop of --role sentinel, after main.c's start-up (settings,
 * secrets, Kubernetes client, signalfd). Serves /healthz, /readyz and /v1/status on
 * --http-port itself. Returns an INST_EXIT_*. Main thread only. */
int inst_sentinel_run(struct inst *in);

#endif

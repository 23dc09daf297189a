/*
 * sentinel_steer_run: the runtime of a switchover steered to a named replica
 * (sentinel_steer.h): the replicas' replica-priority lowered and restored, Sentinel's
 * view of them polled, and each replica manager's guard. The data servers are dialled
 * in one place (prio), with the manager's own client (inst_conn_new: the internal user,
 * its TLS). Supervisor thread only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "instance/internal.h"
#include "instance/sentinel_steer.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"

#define PRIO         "replica-priority"
#define STEER_CMD_MS 1000
#define SEEN_POLL_MS 200

/* Reads host:port's replica-priority into old (when old), then sets value (when value). */
static int prio(struct inst *in, const char *host, int port, const char *value, char *old,
                size_t olen, struct err *e)
{
	struct vk_conn *c = inst_conn_new(in, host, port, STEER_CMD_MS);
	struct buf b = BUF_INIT(64);
	int rc = old ? vk_config_get(c, PRIO, &b, e) : 0;

	if (!rc && old)
		snprintf(old, olen, "%s", buf_cstr(&b));
	if (!rc && value)
		rc = vk_config_set(c, &(struct vk_kv){ PRIO, value }, 1, e);
	vk_conn_free(c);
	buf_release(&b);
	return rc;
}

/* status, with why written */
static unsigned say(char *why, size_t len, unsigned status, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static unsigned say(char *why, size_t len, unsigned status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return status;
}

static bool is_target(const struct vk_info_replica *r, const char *host, int port)
{
	return strcmp(r->ip, host) == 0 && r->port == port;
}

unsigned inst_steer_lower(struct inst *in, struct inst_steer_state *st, const struct vk_info *info,
                          const char *host, int port, char *why, size_t len)
{
	char have[24] = "";
	struct err e = { 0 };
	bool found = false;

	st->n = 0;
	for (size_t i = 0; i < info->nreplicas; i++)
		found |= is_target(&info->replicas[i], host, port) &&
		         strcmp(info->replicas[i].state, "online") == 0;
	if (!found)
		return say(why, len, 409,
		           "the target %s:%d is not an online replica of the primary", host, port);
	if (prio(in, host, port, NULL, have, sizeof(have), &e) < 0)
		return say(why, len, 503, "the target %s:%d: %s", host, port, e.msg);
	if (strcmp(have, "0") == 0)
		return say(why, len, 409,
		           "the target %s:%d has replica-priority 0: Sentinel never promotes it",
		           host, port);
	for (size_t i = 0; i < info->nreplicas && st->n < INST_STEER_MAX; i++) {
		const struct vk_info_replica *r = &info->replicas[i];

		if (is_target(r, host, port) || strcmp(r->type, "rdb-channel") == 0)
			continue;
		snprintf(st->lowered[st->n].host, sizeof(st->lowered[st->n].host), "%s", r->ip);
		st->lowered[st->n].port = (int)r->port;
		if (prio(in, r->ip, (int)r->port, "0", st->lowered[st->n].prio,
		         sizeof(st->lowered[st->n].prio), &e) < 0) {
			snprintf(why, len, "replica %s:%lld: %s", r->ip, r->port, e.msg);
			inst_steer_restore(in, st, "a replica could not be lowered");
			return 503;
		}
		st->n++;
	}
	return 0;
}

bool inst_steer_wait_seen(struct vk_conn *sentinel, const char *host, int port, int64_t deadline,
                          char *why, size_t len)
{
	struct timespec ts = { 0, SEEN_POLL_MS * 1000000L };

	for (;;) {
		struct inst_steer_replica r[INST_STEER_MAX];
		struct vk_reply *rep = NULL;
		struct err e = { 0 };
		size_t n = 0;
		int rc = vk_command(sentinel, &rep, &e, "SENTINEL", "REPLICAS",
		                    API_INST_SENTINEL_MASTER_NAME);

		if (!rc)
			rc = inst_steer_parse_replicas(rep, r, INST_STEER_MAX, &n, &e);
		vk_reply_free(rep);
		if (rc)
			snprintf(why, len, "%s", e.msg);
		else if (inst_steer_seen(r, n, host, port, why, len))
			return true;
		if (clock_mono_ms() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

void inst_steer_restore(struct inst *in, struct inst_steer_state *st, const char *reason)
{
	for (size_t i = 0; i < st->n; i++) {
		struct err e = { 0 };

		if (prio(in, st->lowered[i].host, st->lowered[i].port, st->lowered[i].prio, NULL, 0,
		         &e) < 0)
			log_warn("sentinel",
			         "cannot restore a replica's replica-priority: its manager will",
			         "replica", st->lowered[i].host, "error", e.msg, (char *)NULL);
	}
	if (st->n)
		log_info("sentinel", "replica-priority restored after a steered switchover", "pod",
		         in->set.pod_name, "reason", reason, (char *)NULL);
	st->n = 0;
	st->restore_at = 0;
}

void inst_steer_guard(struct inst *in, struct inst_steer_state *st, int64_t hold_ms)
{
	const char *want = inst_desired_redis(&in->desired, PRIO);
	struct buf have = BUF_INIT(64);
	int64_t now = clock_mono_ms();
	struct err e = { 0 };

	if (now < st->check_at)
		return;
	st->check_at = now + INST_STEER_CHECK_MS;
	if (vk_config_get(in->server_conn, PRIO, &have, &e) < 0) {
		buf_release(&have);
		return;
	}
	if (strcmp(buf_cstr(&have), "0") != 0)
		st->zero_since = 0;
	else if (!st->zero_since)
		st->zero_since = now;
	if (inst_steer_stale(buf_cstr(&have), want, st->zero_since, now, hold_ms)) {
		if (vk_config_set(in->server_conn,
		                  &(struct vk_kv){ PRIO, want ? want : INST_STEER_PRIO_DEF }, 1,
		                  &e) == 0)
			log_warn("sentinel",
			         "replica-priority 0 outlived a steered switchover: set back",
			         "pod", in->set.pod_name, (char *)NULL);
		st->zero_since = 0;
	}
	buf_release(&have);
}

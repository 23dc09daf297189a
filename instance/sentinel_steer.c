/*
 * sentinel_steer: the pure half of a switchover steered to a named replica (see
 * sentinel_steer.h). Pure; any thread.
 */
#include "instance/sentinel_steer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/parse.h"

static bool take(const char *k, const char *v, struct inst_steer_replica *out)
{
	int64_t n;

	if (strcmp(k, "ip") == 0 && strlen(v) < sizeof(out->host))
		snprintf(out->host, sizeof(out->host), "%s", v);
	else if (strcmp(k, "port") == 0 && parse_int64(v, 1, 65535, &n, NULL) == 0)
		out->port = (int)n;
	else if (strcmp(k, "slave-priority") == 0 && parse_int64(v, 0, INT64_MAX, &n, NULL) == 0)
		out->priority = n;
	else if (strcmp(k, "flags") == 0)
		out->usable =
		        !strstr(v, "s_down") && !strstr(v, "o_down") && !strstr(v, "disconnected");
	else
		return false;
	return true;
}

static int parse_one(const struct vk_reply *r, struct inst_steer_replica *out, struct err *e)
{
	struct inst_steer_replica x = { .priority = -1 };
	size_t n = vk_reply_len(r);

	if (vk_reply_type(r) != VK_REPLY_ARRAY || n % 2)
		return err_set(e, -EPROTO, "SENTINEL REPLICAS: a replica is not field/value pairs");
	for (size_t i = 0; i + 1 < n; i += 2) {
		const char *k = vk_reply_str(vk_reply_elem(r, i), NULL);
		const char *v = vk_reply_str(vk_reply_elem(r, i + 1), NULL);

		if (!k || !v)
			return err_set(e, -EPROTO, "SENTINEL REPLICAS: element %zu is not a string",
			               i);
		take(k, v, &x);
	}
	if (!x.host[0] || x.port <= 0)
		return err_set(e, -EPROTO, "SENTINEL REPLICAS: a replica without ip or port");
	*out = x;
	return 0;
}

int inst_steer_parse_replicas(const struct vk_reply *r, struct inst_steer_replica *out, size_t max,
                              size_t *n, struct err *e)
{
	size_t len = vk_reply_len(r), k = 0;

	if (vk_reply_type(r) != VK_REPLY_ARRAY)
		return err_set(e, -EPROTO, "SENTINEL REPLICAS: expected an array");
	for (size_t i = 0; i < len && k < max; i++) {
		int rc = parse_one(vk_reply_elem(r, i), &out[k], e);

		if (rc)
			return rc;
		k++;
	}
	*n = k;
	return 0;
}

bool inst_steer_seen(const struct inst_steer_replica *r, size_t n, const char *host, int port,
                     char *why, size_t len)
{
	bool target = false;

	for (size_t i = 0; i < n; i++) {
		bool is_target = strcmp(r[i].host, host) == 0 && r[i].port == port;

		if (is_target && (!r[i].usable || r[i].priority <= 0)) {
			snprintf(why, len, "Sentinel sees the target %s:%d %s", host, port,
			         r[i].usable ? "with replica-priority 0" : "down or disconnected");
			return false;
		}
		target |= is_target;
		if (!is_target && r[i].usable && r[i].priority != 0) {
			snprintf(why, len, "Sentinel still sees %s:%d with replica-priority %lld",
			         r[i].host, r[i].port, (long long)r[i].priority);
			return false;
		}
	}
	if (!target)
		snprintf(why, len, "Sentinel does not list the target %s:%d as a replica", host,
		         port);
	return target;
}

bool inst_steer_stale(const char *have, const char *want, int64_t zero_since, int64_t now,
                      int64_t hold_ms)
{
	int64_t w;

	if (!have || strcmp(have, "0") != 0 || zero_since <= 0)
		return false;
	if (parse_int64(want ? want : INST_STEER_PRIO_DEF, 0, INT64_MAX, &w, NULL) == 0 && w == 0)
		return false; /* the spec asks for 0 */
	return now - zero_since >= hold_ms;
}

/*
 * sentinel_conf: sentinel.conf rendering, the runtime re-assertion of the operator-owned
 * values, and the parsers of Sentinel's answers (see sentinel.h). Pure; any thread.
 *
 * Every string argument goes through vk_config_quote, so a password with spaces or
 * quotes stays one argument. Hosts are checked against a plain charset instead: they
 * come from the Pod objects and a flag, and resolve-hostnames is off (docs/sentinel.md).
 */
#include "instance/sentinel.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/engine/directives.h"
#include "lib/parse.h"

#define MASTER API_INST_SENTINEL_MASTER_NAME

static bool host_ok(const char *h)
{
	size_t n = h ? strlen(h) : 0;

	if (n == 0 || n > API_INST_HOST_MAX)
		return false;
	return strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.:-") == n;
}

static int check(const struct inst_sentinel_conf *c, struct err *e)
{
	static const struct {
		const char *name;
		size_t off;
		int64_t min, max;
	} ranges[] = {
		{ "quorum", offsetof(struct inst_sentinel_conf, quorum), 1, 64 },
		{ "downAfter", offsetof(struct inst_sentinel_conf, down_after_ms), 1, INT32_MAX },
		{ "failoverTimeout", offsetof(struct inst_sentinel_conf, failover_timeout_ms), 1,
		  INT32_MAX },
		{ "parallelSyncs", offsetof(struct inst_sentinel_conf, parallel_syncs), 1, 64 },
	};

	if (c->port < 1 || c->port > 65535)
		return err_set(e, -EINVAL, "sentinel port: %d is out of range [1, 65535]", c->port);
	if (!host_ok(c->master_host))
		return err_set(e, -EINVAL, "master host: \"%s\" is not an address",
		               c->master_host ? c->master_host : "");
	if (c->master_port < 1 || c->master_port > 65535)
		return err_set(e, -EINVAL, "master port: %d is out of range [1, 65535]",
		               c->master_port);
	if (!c->tls_cert != !c->tls_key || !c->tls_cert != !c->tls_ca)
		return err_set(e, -EINVAL, "sentinel TLS: tls.crt, tls.key and ca.crt go together");
	if (c->announce_ip && *c->announce_ip && !host_ok(c->announce_ip))
		return err_set(e, -EINVAL, "announce ip: \"%s\" is not an address", c->announce_ip);
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		int64_t v;

		memcpy(&v, (const char *)c + ranges[i].off, sizeof(v));
		if (v < ranges[i].min || v > ranges[i].max)
			return err_set(e, -EINVAL, "sentinel.%s: %lld is out of range [%lld, %lld]",
			               ranges[i].name, (long long)v, (long long)ranges[i].min,
			               (long long)ranges[i].max);
	}
	return 0;
}

/* "name arg…" with each arg quoted; args end at NULL. */
static int line(struct buf *out, const char *name, const char *const *args)
{
	int rc = buf_append_str(out, name);

	for (size_t i = 0; !rc && args[i]; i++) {
		rc = buf_append_char(out, ' ');
		if (!rc)
			rc = vk_config_quote(args[i], out);
	}
	return rc ? rc : buf_append_char(out, '\n');
}

#define LINE(out, name, ...) line((out), (name), (const char *const[]){ __VA_ARGS__, NULL })

static int render_master(const struct inst_sentinel_conf *c, struct buf *out)
{
	char port[16], q[24], down[24], fo[24], ps[24];
	int rc;

	snprintf(port, sizeof(port), "%d", c->master_port);
	snprintf(q, sizeof(q), "%lld", (long long)c->quorum);
	snprintf(down, sizeof(down), "%lld", (long long)c->down_after_ms);
	snprintf(fo, sizeof(fo), "%lld", (long long)c->failover_timeout_ms);
	snprintf(ps, sizeof(ps), "%lld", (long long)c->parallel_syncs);
	rc = LINE(out, "sentinel monitor", MASTER, c->master_host, port, q);
	if (!rc)
		rc = LINE(out, "sentinel down-after-milliseconds", MASTER, down);
	if (!rc)
		rc = LINE(out, "sentinel failover-timeout", MASTER, fo);
	if (!rc)
		rc = LINE(out, "sentinel parallel-syncs", MASTER, ps);
	if (!rc && c->auth_user)
		rc = LINE(out, "sentinel auth-user", MASTER, c->auth_user);
	if (!rc && c->auth_pass)
		rc = LINE(out, "sentinel auth-pass", MASTER, c->auth_pass);
	return rc;
}

/* TLS only, as render.c does for the data pods' servers. */
static int render_tls(const struct inst_sentinel_conf *c, const char *port, struct buf *out)
{
	int rc = LINE(out, "port", "0");

	if (!rc)
		rc = LINE(out, "tls-port", port);
	if (!rc)
		rc = LINE(out, "tls-cert-file", c->tls_cert);
	if (!rc)
		rc = LINE(out, "tls-key-file", c->tls_key);
	if (!rc)
		rc = LINE(out, "tls-ca-cert-file", c->tls_ca);
	if (!rc)
		rc = buf_append_str(out, "tls-replication yes\ntls-auth-clients optional\n");
	return rc;
}

static int render_own(const struct inst_sentinel_conf *c, struct buf *out)
{
	char port[16];
	int rc;

	snprintf(port, sizeof(port), "%d", c->port);
	rc = buf_append_str(out, "# Rendered by the redis-operator instance manager before the "
	                         "first start.\n# Sentinel rewrites it: its state lives here.\n");
	if (!rc)
		rc = c->tls_cert ? render_tls(c, port, out) : LINE(out, "port", port);
	if (!rc && c->bind)
		rc = buf_printf(out, "bind %s\n", c->bind);
	if (!rc)
		rc = LINE(out, "dir", c->dir ? c->dir : ".");
	if (!rc)
		rc = buf_append_str(out, "daemonize no\nlogfile \"\"\nprotected-mode no\n"
		                         "sentinel resolve-hostnames no\n"
		                         "sentinel announce-hostnames no\n"
		                         "sentinel deny-scripts-reconfig yes\n");
	if (!rc && c->announce_ip && *c->announce_ip)
		rc = LINE(out, "sentinel announce-ip", c->announce_ip);
	if (!rc && c->announce_ip && *c->announce_ip)
		rc = LINE(out, "sentinel announce-port", port);
	if (!rc && c->requirepass)
		rc = LINE(out, "requirepass", c->requirepass);
	if (!rc && c->requirepass)
		rc = LINE(out, "sentinel sentinel-pass", c->requirepass);
	return rc;
}

int inst_sentinel_render(const struct inst_sentinel_conf *c, struct buf *out, struct err *e)
{
	int rc = check(c, e);

	if (rc)
		return rc;
	rc = render_own(c, out);
	if (!rc)
		rc = render_master(c, out);
	if (rc)
		return err_set(e, -ENOSPC, "sentinel.conf passes %zu bytes", out->limit);
	return 0;
}

int inst_sentinel_parse_addr(const char *s, char *host, size_t hlen, int *port, struct err *e)
{
	const char *colon = s ? strrchr(s, ':') : NULL;
	char h[API_INST_HOST_MAX + 1];
	int64_t p;
	size_t n = colon ? (size_t)(colon - s) : 0;

	if (!colon || n == 0 || n >= sizeof(h) || n >= hlen)
		return err_set(e, -EINVAL, "sentinel master: \"%s\" is not host:port", s ? s : "");
	memcpy(h, s, n);
	h[n] = '\0';
	if (!host_ok(h) || parse_int64(colon + 1, 1, 65535, &p, NULL) < 0)
		return err_set(e, -EINVAL, "sentinel master: \"%s\" is not host:port", s);
	memcpy(host, h, n + 1);
	*port = (int)p;
	return 0;
}

/* --- answers ------------------------------------------------------------------------ */

static const char *flags_status(const char *flags)
{
	if (strstr(flags, "o_down"))
		return API_INST_MASTER_ODOWN;
	if (strstr(flags, "s_down"))
		return API_INST_MASTER_SDOWN;
	return strstr(flags, "master") ? API_INST_MASTER_OK : API_INST_MASTER_UNKNOWN;
}

static int64_t num(const char *v)
{
	int64_t n;

	return parse_int64(v, 0, INT64_MAX, &n, NULL) == 0 ? n : -1;
}

/* One field/value pair into out; true when it was one of the required three. */
static bool take_field(const char *k, const char *v, struct inst_sentinel_master *out)
{
	static const struct {
		const char *name;
		size_t off;
	} nums[] = {
		{ "config-epoch", offsetof(struct inst_sentinel_master, config_epoch) },
		{ "quorum", offsetof(struct inst_sentinel_master, quorum) },
		{ "num-other-sentinels", offsetof(struct inst_sentinel_master, other_sentinels) },
		{ "num-slaves", offsetof(struct inst_sentinel_master, replicas) },
	};

	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (strcmp(k, nums[i].name) == 0) {
			int64_t n = num(v);

			memcpy((char *)out + nums[i].off, &n, sizeof(n));
			return false;
		}
	if (strcmp(k, "failover-state") == 0)
		snprintf(out->failover_state, sizeof(out->failover_state), "%s", v);
	if (strcmp(k, "ip") == 0)
		snprintf(out->host, sizeof(out->host), "%s", v);
	if (strcmp(k, "port") == 0)
		out->port = num(v);
	if (strcmp(k, "flags") == 0) {
		snprintf(out->status, sizeof(out->status), "%s", flags_status(v));
		out->failover_in_progress = strstr(v, "failover_in_progress") != NULL;
	}
	return strcmp(k, "ip") == 0 || strcmp(k, "port") == 0 || strcmp(k, "flags") == 0;
}

int inst_sentinel_parse_master(const struct vk_reply *r, struct inst_sentinel_master *out,
                               struct err *e)
{
	struct inst_sentinel_master m = {
		.port = -1, .config_epoch = -1, .quorum = -1, .other_sentinels = -1, .replicas = -1
	};
	size_t n = vk_reply_len(r), have = 0;

	if (vk_reply_type(r) != VK_REPLY_ARRAY || n % 2)
		return err_set(e, -EPROTO,
		               "SENTINEL MASTER: expected an array of field/value pairs");
	for (size_t i = 0; i + 1 < n; i += 2) {
		const char *k = vk_reply_str(vk_reply_elem(r, i), NULL);
		const char *v = vk_reply_str(vk_reply_elem(r, i + 1), NULL);

		if (!k || !v)
			return err_set(e, -EPROTO, "SENTINEL MASTER: element %zu is not a string",
			               k ? i + 1 : i);
		have += take_field(k, v, &m);
	}
	if (have < 3 || !m.host[0] || m.port < 1 || m.port > 65535)
		return err_set(e, -EPROTO, "SENTINEL MASTER: ip, port or flags missing or invalid");
	*out = m;
	return 0;
}

bool inst_sentinel_quorum_ok(int rc, const struct vk_reply *r, const char *errmsg, char *reason,
                             size_t rlen)
{
	const char *s = rc == 0 ? vk_reply_str(r, NULL) : NULL;

	if (rc != 0) {
		snprintf(reason, rlen, "%s", errmsg && *errmsg ? errmsg : "no answer");
		return false;
	}
	snprintf(reason, rlen, "%s", s ? s : "unexpected answer");
	return s && vk_reply_type(r) == VK_REPLY_STATUS && strncmp(s, "OK", 2) == 0;
}

/* --- runtime re-assertion ----------------------------------------------------------------- */

static void add(struct inst_sentinel_live *l, bool secret, int argc, const char *const *argv)
{
	size_t i = l->n++;

	l->argc[i] = argc;
	l->secret[i] = secret;
	for (int j = 0; j < argc; j++)
		l->argv[i][j] = argv[j];
}

static const char *numtext(struct inst_sentinel_live *l, int64_t v)
{
	snprintf(l->num[l->n], sizeof(l->num[l->n]), "%lld", (long long)v);
	return l->num[l->n];
}

void inst_sentinel_live_cmds(const struct inst_sentinel_conf *c, struct inst_sentinel_live *out)
{
	static const struct {
		const char *opt;
		size_t off;
	} nums[] = {
		{ "quorum", offsetof(struct inst_sentinel_conf, quorum) },
		{ "down-after-milliseconds", offsetof(struct inst_sentinel_conf, down_after_ms) },
		{ "failover-timeout", offsetof(struct inst_sentinel_conf, failover_timeout_ms) },
		{ "parallel-syncs", offsetof(struct inst_sentinel_conf, parallel_syncs) },
	};

	memset(out, 0, sizeof(*out));
	if (c->announce_ip && *c->announce_ip)
		add(out, false, 5,
		    (const char *[]){ "SENTINEL", "CONFIG", "SET", "announce-ip", c->announce_ip });
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		int64_t v;

		memcpy(&v, (const char *)c + nums[i].off, sizeof(v));
		add(out, false, 5,
		    (const char *[]){ "SENTINEL", "SET", MASTER, nums[i].opt, numtext(out, v) });
	}
	if (c->auth_user)
		add(out, false, 5,
		    (const char *[]){ "SENTINEL", "SET", MASTER, "auth-user", c->auth_user });
	if (c->auth_pass)
		add(out, true, 5,
		    (const char *[]){ "SENTINEL", "SET", MASTER, "auth-pass", c->auth_pass });
	if (c->sentinel_pass)
		add(out, true, 5,
		    (const char *[]){ "SENTINEL", "CONFIG", "SET", "sentinel-pass",
		                      c->sentinel_pass });
}

/* --- the default user's line ----------------------------------------------------------- */

static bool default_user_line(const char *l, size_t n)
{
	static const char pfx[] = "user default";

	return n >= sizeof(pfx) - 1 && memcmp(l, pfx, sizeof(pfx) - 1) == 0 &&
	       (n == sizeof(pfx) - 1 || l[sizeof(pfx) - 1] == ' ');
}

int inst_sentinel_conf_user(const char *text, size_t len, const char *const *rules, size_t n,
                            struct buf *out, struct err *e)
{
	int rc = 0;

	for (size_t at = 0; at < len && !rc;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t ln = nl ? (size_t)(nl - (text + at)) : len - at;

		if (!default_user_line(text + at, ln)) {
			rc = buf_append(out, text + at, ln);
			if (!rc)
				rc = buf_append_char(out, '\n');
		}
		at += ln + 1;
	}
	if (!rc)
		rc = buf_append_str(out, "user default");
	for (size_t i = 0; i < n && !rc; i++)
		rc = buf_printf(out, " %s", rules[i]);
	if (!rc)
		rc = buf_append_char(out, '\n');
	return rc ? err_set(e, -ENOSPC, "sentinel.conf passes %zu bytes", out->limit) : 0;
}

/*
 * info: INFO text → struct vk_info (see info.h).
 *
 * Table-driven: each known field is a row (name, kind, offset, size); a line is split
 * at its first ':' and its value is stored by the setter of its kind. Per-replica and
 * keyspace lines are lists of "k=v" items handled by the same setters over their own
 * tables. The parse runs on a heap copy of the struct, copied out only on success.
 * No state; no allocation except that copy.
 */
#include "info.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

struct span {
	const char *p;
	size_t n;
};

enum kind {
	K_INT,    /* decimal long long */
	K_FLAG,   /* 0 or 1 → bool */
	K_STR,    /* printable text that fits the buffer */
	K_ROLE,   /* master|slave → enum vk_role */
	K_LINK,   /* up|down → bool */
	K_BGSAVE, /* ok|err → bool (true = err) */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off;
	size_t size;
};

#define FIELD(type, name, kind, member)                                                            \
	{                                                                                          \
		name, kind, offsetof(struct type, member), sizeof(((struct type *)0)->member)      \
	}
#define INFO(name, kind, member) FIELD(vk_info, name, kind, member)

static const struct field info_fields[] = {
	INFO("redis_version", K_STR, redis_version),
	INFO("valkey_version", K_STR, valkey_version),
	INFO("server_name", K_STR, server_name),
	INFO("run_id", K_STR, run_id),
	INFO("process_id", K_INT, process_id),
	INFO("uptime_in_seconds", K_INT, uptime_in_seconds),
	INFO("tcp_port", K_INT, tcp_port),
	INFO("connected_clients", K_INT, connected_clients),
	INFO("blocked_clients", K_INT, blocked_clients),
	INFO("used_memory", K_INT, used_memory),
	INFO("used_memory_rss", K_INT, used_memory_rss),
	INFO("maxmemory", K_INT, maxmemory),
	INFO("maxmemory_policy", K_STR, maxmemory_policy),
	INFO("loading", K_FLAG, loading),
	INFO("rdb_bgsave_in_progress", K_FLAG, rdb_bgsave_in_progress),
	INFO("rdb_last_bgsave_status", K_BGSAVE, rdb_last_bgsave_failed),
	INFO("aof_enabled", K_FLAG, aof_enabled),
	INFO("aof_rewrite_in_progress", K_FLAG, aof_rewrite_in_progress),
	INFO("rdb_changes_since_last_save", K_INT, rdb_changes_since_last_save),
	INFO("total_commands_processed", K_INT, total_commands_processed),
	INFO("total_connections_received", K_INT, total_connections_received),
	INFO("keyspace_hits", K_INT, keyspace_hits),
	INFO("keyspace_misses", K_INT, keyspace_misses),
	INFO("evicted_keys", K_INT, evicted_keys),
	INFO("expired_keys", K_INT, expired_keys),
	INFO("instantaneous_ops_per_sec", K_INT, instantaneous_ops_per_sec),
	INFO("role", K_ROLE, role),
	INFO("connected_slaves", K_INT, connected_slaves),
	INFO("master_replid", K_STR, master_replid),
	INFO("master_replid2", K_STR, master_replid2),
	INFO("master_repl_offset", K_INT, master_repl_offset),
	INFO("second_repl_offset", K_INT, second_repl_offset),
	INFO("repl_backlog_active", K_FLAG, repl_backlog_active),
	INFO("master_host", K_STR, master_host),
	INFO("master_port", K_INT, master_port),
	INFO("master_link_status", K_LINK, master_link_up),
	INFO("master_last_io_seconds_ago", K_INT, master_last_io_seconds_ago),
	INFO("master_sync_in_progress", K_FLAG, master_sync_in_progress),
	INFO("slave_repl_offset", K_INT, slave_repl_offset),
	INFO("slave_read_only", K_FLAG, replica_read_only),
	INFO("replica_read_only", K_FLAG, replica_read_only),
};

static const struct field replica_fields[] = {
	FIELD(vk_info_replica, "ip", K_STR, ip),
	FIELD(vk_info_replica, "port", K_INT, port),
	FIELD(vk_info_replica, "state", K_STR, state),
	FIELD(vk_info_replica, "offset", K_INT, offset),
	FIELD(vk_info_replica, "lag", K_INT, lag),
	FIELD(vk_info_replica, "type", K_STR, type),
};

static const struct field db_fields[] = {
	FIELD(vk_info_db, "keys", K_INT, keys),
	FIELD(vk_info_db, "expires", K_INT, expires),
	FIELD(vk_info_db, "avg_ttl", K_INT, avg_ttl),
};

#undef INFO
#undef FIELD
#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

/* Words of the enumerated kinds. */
static const struct {
	const char *word;
	enum kind kind;
	int value;
} words[] = {
	{ "master", K_ROLE, VK_ROLE_PRIMARY },
	{ "slave", K_ROLE, VK_ROLE_REPLICA },
	{ "replica", K_ROLE, VK_ROLE_REPLICA },
	{ "up", K_LINK, 1 },
	{ "down", K_LINK, 0 },
	{ "ok", K_BGSAVE, 0 },
	{ "err", K_BGSAVE, 1 },
};

static bool span_eq(struct span s, const char *word)
{
	size_t n = strlen(word);

	return s.n == n && memcmp(s.p, word, n) == 0;
}

/* A decimal long long with optional '-', nothing else (no spaces, no '+'). */
static int parse_ll(struct span v, long long *out)
{
	char tmp[24];
	char *end;
	long long x;

	if (v.n == 0 || v.n >= sizeof(tmp) || !(v.p[0] == '-' || (v.p[0] >= '0' && v.p[0] <= '9')))
		return -EPROTO;
	memcpy(tmp, v.p, v.n);
	tmp[v.n] = '\0';
	errno = 0;
	x = strtoll(tmp, &end, 10);
	if (errno || *end != '\0' || end == tmp)
		return -EPROTO;
	*out = x;
	return 0;
}

static int set_str(struct span v, char *dst, size_t size)
{
	if (v.n >= size)
		return -EPROTO;
	for (size_t i = 0; i < v.n; i++)
		if ((unsigned char)v.p[i] < 0x20 || v.p[i] == 0x7f)
			return -EPROTO;
	memcpy(dst, v.p, v.n);
	dst[v.n] = '\0';
	return 0;
}

static int set_word(enum kind kind, struct span v, void *dst)
{
	for (size_t i = 0; i < NFIELDS(words); i++) {
		if (words[i].kind != kind || !span_eq(v, words[i].word))
			continue;
		if (kind == K_ROLE)
			*(enum vk_role *)dst = (enum vk_role)words[i].value;
		else
			*(bool *)dst = words[i].value;
		return 0;
	}
	return -EPROTO;
}

/* Stores v into base + f->off according to f->kind. 0 or -EPROTO. */
static int set_field(const struct field *f, void *base, struct span v)
{
	void *dst = (char *)base + f->off;
	long long x;

	switch (f->kind) {
	case K_INT:
		if (parse_ll(v, &x))
			return -EPROTO;
		*(long long *)dst = x;
		return 0;
	case K_FLAG:
		if (v.n != 1 || (v.p[0] != '0' && v.p[0] != '1'))
			return -EPROTO;
		*(bool *)dst = v.p[0] == '1';
		return 0;
	case K_STR: return set_str(v, dst, f->size);
	default: return set_word(f->kind, v, dst);
	}
}

static const struct field *find_field(const struct field *t, size_t n, struct span key)
{
	for (size_t i = 0; i < n; i++)
		if (span_eq(key, t[i].name))
			return &t[i];
	return NULL;
}

static int malformed(struct err *e, size_t lineno, struct span key, const char *item, struct span v)
{
	int shown = v.n > 40 ? 40 : (int)v.n;

	return err_set(e, -EPROTO, "INFO line %zu: field %.*s%s%s: malformed value '%.*s%s'",
	               lineno, (int)(key.n > 64 ? 64 : key.n), key.p, *item ? "." : "", item, shown,
	               v.p, v.n > 40 ? "..." : "");
}

/* Parses "k=v,k=v" items into base through table t; unknown keys are skipped. */
static int set_items(const struct field *t, size_t n, void *base, struct span list, size_t lineno,
                     struct span key, struct err *e)
{
	const char *p = list.p, *end = list.p + list.n;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *stop = comma ? comma : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		const struct field *f;

		if (!eq)
			return malformed(e, lineno, key, "", list);
		f = find_field(t, n, (struct span){ p, (size_t)(eq - p) });
		if (f && set_field(f, base, (struct span){ eq + 1, (size_t)(stop - eq - 1) }))
			return malformed(e, lineno, key, f->name,
			                 (struct span){ eq + 1, (size_t)(stop - eq - 1) });
		p = comma ? comma + 1 : end;
	}
	return 0;
}

/* True when key is prefix followed by 1..6 digits; *index gets the number. */
static bool indexed_key(struct span key, const char *prefix, int *index)
{
	size_t n = strlen(prefix);
	int x = 0;

	if (key.n <= n || key.n > n + 6 || memcmp(key.p, prefix, n) != 0)
		return false;
	for (size_t i = n; i < key.n; i++) {
		if (key.p[i] < '0' || key.p[i] > '9')
			return false;
		x = x * 10 + (key.p[i] - '0');
	}
	*index = x;
	return true;
}

static void replica_init(struct vk_info_replica *r)
{
	memset(r, 0, sizeof(*r));
	r->port = r->offset = r->lag = VK_INFO_UNSET;
}

static int add_replica(struct vk_info *info, struct span v, size_t lineno, struct span key,
                       struct err *e)
{
	struct vk_info_replica scratch = { 0 }, *r;
	int rc;

	r = info->nreplicas < VK_INFO_MAX_REPLICAS ? &info->replicas[info->nreplicas] : &scratch;
	replica_init(r);
	rc = set_items(replica_fields, NFIELDS(replica_fields), r, v, lineno, key, e);
	if (rc)
		return rc;
	if (r != &scratch)
		info->nreplicas++;
	info->nreplicas_seen++;
	return 0;
}

static int add_db(struct vk_info *info, int index, struct span v, size_t lineno, struct span key,
                  struct err *e)
{
	struct vk_info_db db = { index, VK_INFO_UNSET, VK_INFO_UNSET, VK_INFO_UNSET };
	long long k, x;
	int rc;

	rc = set_items(db_fields, NFIELDS(db_fields), &db, v, lineno, key, e);
	if (rc)
		return rc;
	k = db.keys == VK_INFO_UNSET ? 0 : db.keys;
	x = db.expires == VK_INFO_UNSET ? 0 : db.expires;
	if (__builtin_add_overflow(info->total_keys, k, &info->total_keys) ||
	    __builtin_add_overflow(info->total_expires, x, &info->total_expires))
		return err_set(e, -EPROTO, "INFO line %zu: keyspace totals overflow", lineno);
	if (info->ndbs < VK_INFO_MAX_DBS)
		info->dbs[info->ndbs++] = db;
	info->ndbs_seen++;
	return 0;
}

static int parse_line(struct vk_info *info, struct span key, struct span v, size_t lineno,
                      struct err *e)
{
	const struct field *f = find_field(info_fields, NFIELDS(info_fields), key);
	int index;

	if (f)
		return set_field(f, info, v) ? malformed(e, lineno, key, "", v) : 0;
	if (indexed_key(key, "slave", &index))
		return add_replica(info, v, lineno, key, e);
	if (indexed_key(key, "db", &index))
		return add_db(info, index, v, lineno, key, e);
	return 0;
}

/* The next line from *pos, without its LF and one trailing CR. False at the end. */
static bool next_line(const char *text, size_t len, size_t *pos, struct span *line)
{
	const char *nl;
	size_t n;

	if (*pos >= len)
		return false;
	nl = memchr(text + *pos, '\n', len - *pos);
	n = nl ? (size_t)(nl - (text + *pos)) : len - *pos;
	line->p = text + *pos;
	line->n = n;
	*pos += n + (nl ? 1 : 0);
	if (line->n && line->p[line->n - 1] == '\r')
		line->n--;
	return true;
}

/* Splits "key:value" at the first ':'. False for headers, blank lines, no ':'. */
static bool split_line(struct span line, struct span *key, struct span *v)
{
	const char *colon;

	if (line.n == 0 || line.p[0] == '#')
		return false;
	colon = memchr(line.p, ':', line.n);
	if (!colon)
		return false;
	*key = (struct span){ line.p, (size_t)(colon - line.p) };
	*v = (struct span){ colon + 1, line.n - key->n - 1 };
	return true;
}

static int derive_engine(struct vk_info *info, struct err *e)
{
	bool valkey = info->valkey_version[0] || strcmp(info->server_name, "valkey") == 0;
	const char *field = info->valkey_version[0] ? "valkey_version" : "redis_version";
	const char *v = info->valkey_version[0] ? info->valkey_version : info->redis_version;

	if (!v[0])
		return 0; /* no server section */
	if (vk_version_parse(v, strlen(v), &info->version))
		return err_set(e, -EPROTO, "INFO field %s: '%s' is not MAJOR.MINOR.PATCH", field,
		               v);
	info->engine = valkey ? VK_ENGINE_VALKEY : VK_ENGINE_REDIS;
	memcpy(info->engine_version, v, strlen(v) + 1);
	return 0;
}

void vk_info_init(struct vk_info *info)
{
	memset(info, 0, sizeof(*info));
	for (size_t i = 0; i < NFIELDS(info_fields); i++)
		if (info_fields[i].kind == K_INT)
			*(long long *)((char *)info + info_fields[i].off) = VK_INFO_UNSET;
	info->engine = VK_ENGINE_UNKNOWN;
	info->role = VK_ROLE_UNKNOWN;
}

int vk_info_parse(const char *text, size_t len, struct vk_info *out, struct err *e)
{
	struct vk_info *info;
	struct span line, key, v;
	size_t pos = 0, lineno = 0;
	int rc = 0;

	if (len > VK_INFO_MAX_LEN)
		return err_set(e, -EMSGSIZE, "INFO: %zu bytes, more than the limit of %d", len,
		               VK_INFO_MAX_LEN);
	info = xmalloc(sizeof(*info));
	vk_info_init(info);
	while (!rc && next_line(text, len, &pos, &line)) {
		lineno++;
		if (split_line(line, &key, &v))
			rc = parse_line(info, key, v, lineno, e);
	}
	if (!rc)
		rc = derive_engine(info, e);
	if (!rc)
		*out = *info;
	free(info);
	return rc;
}

int vk_info_get(const char *text, size_t len, const char *field, char *out, size_t outlen)
{
	struct span line, key, v;
	size_t pos = 0;

	if (!field[0])
		return -EINVAL;
	if (len > VK_INFO_MAX_LEN)
		return -EMSGSIZE;
	while (next_line(text, len, &pos, &line)) {
		if (!split_line(line, &key, &v) || !span_eq(key, field))
			continue;
		if (v.n >= outlen)
			return -ERANGE;
		memcpy(out, v.p, v.n);
		out[v.n] = '\0';
		return 0;
	}
	return -ENOENT;
}

const char *vk_role_name(enum vk_role role)
{
	static const char *const names[] = {
		[VK_ROLE_UNKNOWN] = "unknown",
		[VK_ROLE_PRIMARY] = "primary",
		[VK_ROLE_REPLICA] = "replica",
		[VK_ROLE_SENTINEL] = "sentinel",
	};

	if ((unsigned)role >= NFIELDS(names))
		return "unknown";
	return names[role];
}

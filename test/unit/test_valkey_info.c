/*
 * Unit tests for lib/valkey/info.
 *
 * Golden files: test/data/valkey/<engine>-<state>.txt are real INFO replies captured by
 * test/data/valkey/capture.sh from redis-server 7.0 and valkey-server 8.0; the matching
 * .expect files list "field value" for every field vk_info parses, derived with awk.
 * The test renders each parsed struct field back into INFO's words and compares, checks
 * that every field absent from the text kept its default, and checks per state the
 * facts failover relies on. Then malformed and edge inputs, vk_info_get, role names.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/valkey/info.h"
#include "testutil.h"
#include "unit.h"

static const char *data_dir(void)
{
	const char *d = getenv("VK_TEST_DATA");

	return d ? d : "test/data/valkey";
}

static char *slurp(const char *name, const char *ext, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s%s", data_dir(), name, ext);
	return tu_must_read(path, len);
}

/* --- rendering a parsed struct back into INFO's words --------------------------- */

enum rkind { R_INT, R_FLAG, R_STR, R_ROLE, R_LINK, R_BGSAVE };

struct rfield {
	const char *name; /* INFO field */
	enum rkind kind;
	size_t off;
};

#define RF(name, kind, member)                                                                     \
	{                                                                                          \
		name, kind, offsetof(struct vk_info, member)                                       \
	}
static const struct rfield rfields[] = {
	RF("redis_version", R_STR, redis_version),
	RF("valkey_version", R_STR, valkey_version),
	RF("server_name", R_STR, server_name),
	RF("run_id", R_STR, run_id),
	RF("process_id", R_INT, process_id),
	RF("uptime_in_seconds", R_INT, uptime_in_seconds),
	RF("tcp_port", R_INT, tcp_port),
	RF("connected_clients", R_INT, connected_clients),
	RF("blocked_clients", R_INT, blocked_clients),
	RF("used_memory", R_INT, used_memory),
	RF("used_memory_rss", R_INT, used_memory_rss),
	RF("maxmemory", R_INT, maxmemory),
	RF("maxmemory_policy", R_STR, maxmemory_policy),
	RF("loading", R_FLAG, loading),
	RF("rdb_bgsave_in_progress", R_FLAG, rdb_bgsave_in_progress),
	RF("rdb_last_bgsave_status", R_BGSAVE, rdb_last_bgsave_failed),
	RF("aof_enabled", R_FLAG, aof_enabled),
	RF("aof_rewrite_in_progress", R_FLAG, aof_rewrite_in_progress),
	RF("rdb_changes_since_last_save", R_INT, rdb_changes_since_last_save),
	RF("total_commands_processed", R_INT, total_commands_processed),
	RF("total_connections_received", R_INT, total_connections_received),
	RF("keyspace_hits", R_INT, keyspace_hits),
	RF("keyspace_misses", R_INT, keyspace_misses),
	RF("evicted_keys", R_INT, evicted_keys),
	RF("expired_keys", R_INT, expired_keys),
	RF("instantaneous_ops_per_sec", R_INT, instantaneous_ops_per_sec),
	RF("role", R_ROLE, role),
	RF("connected_slaves", R_INT, connected_slaves),
	RF("master_replid", R_STR, master_replid),
	RF("master_replid2", R_STR, master_replid2),
	RF("master_repl_offset", R_INT, master_repl_offset),
	RF("second_repl_offset", R_INT, second_repl_offset),
	RF("repl_backlog_active", R_FLAG, repl_backlog_active),
	RF("master_host", R_STR, master_host),
	RF("master_port", R_INT, master_port),
	RF("master_link_status", R_LINK, master_link_up),
	RF("master_last_io_seconds_ago", R_INT, master_last_io_seconds_ago),
	RF("master_sync_in_progress", R_FLAG, master_sync_in_progress),
	RF("slave_repl_offset", R_INT, slave_repl_offset),
	RF("slave_read_only", R_FLAG, replica_read_only),
};
#undef RF

/* INFO's word for a field of the struct at base; "(absent)" for a default value. */
static void render(enum rkind kind, const void *p, char *out, size_t n)
{
	switch (kind) {
	case R_INT:
		if (*(const long long *)p == VK_INFO_UNSET)
			snprintf(out, n, "(absent)");
		else
			snprintf(out, n, "%lld", *(const long long *)p);
		break;
	case R_FLAG: snprintf(out, n, "%d", *(const bool *)p ? 1 : 0); break;
	case R_STR: snprintf(out, n, "%s", *(const char *)p ? (const char *)p : "(absent)"); break;
	case R_ROLE:
		snprintf(out, n, "%s",
		         *(const enum vk_role *)p == VK_ROLE_PRIMARY   ? "master"
		         : *(const enum vk_role *)p == VK_ROLE_REPLICA ? "slave"
		                                                       : "(absent)");
		break;
	case R_LINK: snprintf(out, n, "%s", *(const bool *)p ? "up" : "down"); break;
	case R_BGSAVE: snprintf(out, n, "%s", *(const bool *)p ? "err" : "ok"); break;
	}
}

static const struct rfield *rfield_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(rfields); i++)
		if (strcmp(rfields[i].name, name) == 0)
			return &rfields[i];
	return NULL;
}

/* "slave1.offset" or "db3.keys": the parsed value, rendered. False if not found. */
static bool render_indexed(const struct vk_info *info, const char *key, char *out, size_t n)
{
	unsigned idx;
	char sub[32];
	int used = 0;

	if (strncmp(key, "slave", 5) == 0 && strchr(key, '.')) {
		idx = (unsigned)strtoul(key + 5, NULL, 10);
		snprintf(sub, sizeof(sub), "%s", strchr(key, '.') + 1);
		ck_assert_uint_lt(idx, info->nreplicas);
		const struct vk_info_replica *r = &info->replicas[idx];
		if (!strcmp(sub, "ip") || !strcmp(sub, "state") || !strcmp(sub, "type"))
			used = snprintf(out, n, "%s",
			                !strcmp(sub, "ip")      ? r->ip
			                : !strcmp(sub, "state") ? r->state
			                                        : r->type);
		else
			used = snprintf(out, n, "%lld",
			                !strcmp(sub, "port")     ? r->port
			                : !strcmp(sub, "offset") ? r->offset
			                                         : r->lag);
		return used > 0;
	}
	if (strncmp(key, "db", 2) == 0 && strchr(key, '.')) {
		idx = (unsigned)strtoul(key + 2, NULL, 10);
		snprintf(sub, sizeof(sub), "%s", strchr(key, '.') + 1);
		for (size_t i = 0; i < info->ndbs; i++) {
			const struct vk_info_db *d = &info->dbs[i];
			if ((unsigned)d->index != idx)
				continue;
			snprintf(out, n, "%lld",
			         !strcmp(sub, "keys")      ? d->keys
			         : !strcmp(sub, "expires") ? d->expires
			                                   : d->avg_ttl);
			return true;
		}
	}
	return false;
}

/* --- golden files ---------------------------------------------------------------- */

static const struct golden {
	const char *name;
	enum vk_engine engine;
	unsigned version;
	enum vk_role role;
	bool link_up, syncing, loading, replid2_set;
	size_t nreplicas, ndbs;
} goldens[] = {
	{ "redis-primary-standalone", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_PRIMARY, 0, 0,
	  0, 0, 0, 2 },
	{ "redis-primary-syncing", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_PRIMARY, 0, 0, 0,
	  0, 1, 2 },
	{ "redis-primary-2replicas", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_PRIMARY, 0, 0,
	  0, 0, 2, 2 },
	{ "redis-primary-promoted", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_PRIMARY, 0, 0, 0,
	  1, 0, 2 },
	{ "redis-replica-syncing", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_REPLICA, 0, 1, 0,
	  0, 0, 0 },
	{ "redis-replica-linked", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_REPLICA, 1, 0, 0,
	  0, 0, 2 },
	{ "redis-replica-link-down", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_REPLICA, 0, 0,
	  0, 0, 0, 2 },
	{ "redis-loading", VK_ENGINE_REDIS, VK_VERSION(7, 0, 15), VK_ROLE_PRIMARY, 0, 0, 1, 0, 0,
	  1 },
	{ "valkey-primary-standalone", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_PRIMARY, 0, 0,
	  0, 0, 0, 2 },
	{ "valkey-primary-syncing", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_PRIMARY, 0, 0, 0,
	  0, 1, 2 },
	{ "valkey-primary-2replicas", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_PRIMARY, 0, 0,
	  0, 0, 2, 2 },
	{ "valkey-primary-promoted", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_PRIMARY, 0, 0,
	  0, 1, 0, 2 },
	{ "valkey-replica-syncing", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_REPLICA, 0, 1, 0,
	  0, 0, 0 },
	{ "valkey-replica-linked", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_REPLICA, 1, 0, 0,
	  0, 0, 2 },
	{ "valkey-replica-link-down", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_REPLICA, 0, 0,
	  0, 0, 0, 2 },
	{ "valkey-loading", VK_ENGINE_VALKEY, VK_VERSION(8, 0, 1), VK_ROLE_PRIMARY, 0, 0, 1, 0, 0,
	  1 },
};

/* Every "field value" line of the .expect file matches the parsed struct. */
static void check_expect(const struct golden *g, const struct vk_info *info, bool *seen)
{
	size_t len;
	char *text = slurp(g->name, ".expect", &len), *save = NULL;
	char got[512];

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		const char *want = sp ? sp + 1 : "";
		const struct rfield *f;

		if (sp)
			*sp = '\0';
		if (!strcmp(line, "replica_read_only"))
			f = rfield_find("slave_read_only");
		else
			f = rfield_find(line);
		if (f) {
			seen[f - rfields] = true;
			render(f->kind, (const char *)info + f->off, got, sizeof(got));
		} else {
			ck_assert_msg(render_indexed(info, line, got, sizeof(got)),
			              "%s: no parsed value for %s", g->name, line);
		}
		ck_assert_msg(!strcmp(got, want), "%s: %s: got '%s' want '%s'", g->name, line, got,
		              want);
	}
	free(text);
}

START_TEST(golden)
{
	const struct golden *g = &goldens[_i];
	struct vk_info info;
	struct err e;
	bool seen[ARRAY_LEN(rfields)] = { false };
	size_t len;
	char *text = slurp(g->name, ".txt", &len);
	char got[512];

	err_clear(&e);
	ck_assert_msg(vk_info_parse(text, len, &info, &e) == 0, "%s: %s", g->name, e.msg);
	check_expect(g, &info, seen);
	/* Fields absent from the text keep their defaults. */
	for (size_t i = 0; i < ARRAY_LEN(rfields); i++) {
		if (seen[i] || rfields[i].kind == R_LINK || rfields[i].kind == R_FLAG)
			continue;
		render(rfields[i].kind, (const char *)&info + rfields[i].off, got, sizeof(got));
		ck_assert_msg(!strcmp(got, "(absent)"), "%s: %s absent but parsed as %s", g->name,
		              rfields[i].name, got);
	}
	ck_assert_int_eq(info.engine, g->engine);
	ck_assert_uint_eq(info.version, g->version);
	ck_assert_int_eq(info.role, g->role);
	ck_assert_int_eq(info.master_link_up, g->link_up);
	ck_assert_int_eq(info.master_sync_in_progress, g->syncing);
	ck_assert_int_eq(info.loading, g->loading);
	ck_assert_int_eq(strcmp(info.master_replid2, "0000000000000000000000000000000000000000") !=
	                         0,
	                 g->replid2_set);
	ck_assert_uint_eq(info.nreplicas, g->nreplicas);
	ck_assert_uint_eq(info.nreplicas_seen, g->nreplicas);
	ck_assert_int_eq(info.connected_slaves, (long long)g->nreplicas);
	ck_assert_uint_eq(info.ndbs, g->ndbs);
	ck_assert_uint_eq(strlen(info.run_id), 40);
	ck_assert_uint_eq(strlen(info.master_replid), 40);
	free(text);
}
END_TEST

/* Facts the failover code reads, spelled out for the states where they matter. */
START_TEST(golden_failover_facts)
{
	struct vk_info a, b;
	size_t len;
	char *text;

	text = slurp("redis-primary-promoted", ".txt", &len);
	ck_assert_int_eq(vk_info_parse(text, len, &a, NULL), 0);
	free(text);
	/* REPLICAOF NO ONE: histories fork one byte past the old offset. */
	ck_assert_int_eq(a.second_repl_offset, a.master_repl_offset + 1);
	ck_assert_str_ne(a.master_replid, a.master_replid2);

	text = slurp("valkey-primary-2replicas", ".txt", &len);
	ck_assert_int_eq(vk_info_parse(text, len, &b, NULL), 0);
	free(text);
	for (size_t i = 0; i < b.nreplicas; i++) {
		ck_assert_str_eq(b.replicas[i].ip, "127.0.0.1");
		ck_assert_str_eq(b.replicas[i].state, "online");
		ck_assert_str_eq(b.replicas[i].type, "replica");
		ck_assert_int_eq(b.replicas[i].offset, b.master_repl_offset);
		ck_assert_int_gt(b.replicas[i].port, 0);
	}
	ck_assert_int_eq(b.total_keys, 122);
	ck_assert_int_eq(b.total_expires, 1);

	text = slurp("redis-replica-link-down", ".txt", &len);
	ck_assert_int_eq(vk_info_parse(text, len, &a, NULL), 0);
	free(text);
	ck_assert_int_eq(a.master_last_io_seconds_ago, -1);
	ck_assert(a.replica_read_only);
	ck_assert_str_eq(a.master_host, "127.0.0.1");
}
END_TEST

/* --- malformed and edge inputs ---------------------------------------------------- */

static const struct bad_case {
	const char *text;
	size_t len; /* 0: strlen(text) */
	const char *want_msg;
} bad_cases[] = {
	{ "loading:x\r\n", 0, "field loading: malformed value 'x'" },
	{ "loading:2\r\n", 0, "field loading" },
	{ "loading:\r\n", 0, "field loading" },
	{ "loading:", 0, "field loading" },
	{ "used_memory:12a\r\n", 0, "field used_memory" },
	{ "used_memory: 12\r\n", 0, "field used_memory" },
	{ "used_memory:+12\r\n", 0, "field used_memory" },
	{ "used_memory:12 \r\n", 0, "field used_memory" },
	{ "used_memory:99999999999999999999\r\n", 0, "field used_memory" },
	{ "used_memory:-\r\n", 0, "field used_memory" },
	{ "used_memory:0x10\r\n", 0, "field used_memory" },
	{ "used_memory:123456789012345678901234567890\r\n", 0, "field used_memory" },
	{ "# Server\r\nprocess_id:1\r\nrole:sentinel\r\n", 0, "line 3: field role" },
	{ "master_link_status:maybe\r\n", 0, "field master_link_status" },
	{ "rdb_last_bgsave_status:fail\r\n", 0, "field rdb_last_bgsave_status" },
	{ "run_id:0123456789012345678901234567890123456789a\r\n", 0, "field run_id" },
	{ "maxmemory_policy:all\x01keys\r\n", 0, "field maxmemory_policy" },
	{ "master_host:a\0b\r\n", 17, "field master_host" },
	{ "slave0:ip=1.2.3.4,port=x,state=online\r\n", 0,
	  "field slave0.port: malformed value 'x'" },
	{ "slave0:ip=1.2.3.4,port\r\n", 0, "field slave0: malformed" },
	{ "slave0:ip=1.2.3.4,,port=1\r\n", 0, "field slave0" },
	{ "slave3:offset=1,lag=-\r\n", 0, "field slave3.lag" },
	{ "db0:keys=abc,expires=0\r\n", 0, "field db0.keys" },
	{ "db0:keys=1,expires=\r\n", 0, "field db0.expires" },
	{ "db0:keys=9223372036854775807\r\ndb1:keys=1\r\n", 0, "keyspace totals overflow" },
	{ "redis_version:7.0\r\n", 0, "redis_version: '7.0' is not MAJOR.MINOR.PATCH" },
	{ "redis_version:7.2.4\r\nvalkey_version:8.0.x\r\n", 0, "valkey_version" },
};

START_TEST(malformed)
{
	const struct bad_case *c = &bad_cases[_i];
	size_t len = c->len ? c->len : strlen(c->text);
	struct vk_info info;
	struct err e;

	memset(&info, 0xa5, sizeof(info));
	err_clear(&e);
	ck_assert_int_eq(vk_info_parse(c->text, len, &info, &e), -EPROTO);
	ck_assert_int_eq(e.code, -EPROTO);
	ck_assert_msg(strstr(e.msg, c->want_msg), "case %d: message '%s' lacks '%s'", _i, e.msg,
	              c->want_msg);
	/* The output is untouched on failure. */
	ck_assert_int_eq(((unsigned char *)&info)[0], 0xa5);
	ck_assert_int_eq(((unsigned char *)&info)[sizeof(info) - 1], 0xa5);
}
END_TEST

START_TEST(too_large)
{
	size_t len = VK_INFO_MAX_LEN + 1;
	char *text = xmalloc(len);
	struct vk_info info;
	struct err e;
	char out[8];

	memset(text, '#', len);
	err_clear(&e);
	ck_assert_int_eq(vk_info_parse(text, len, &info, &e), -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(e.msg, "limit"));
	ck_assert_int_eq(vk_info_get(text, len, "x", out, sizeof(out)), -EMSGSIZE);
	/* Exactly at the limit is fine. */
	ck_assert_int_eq(vk_info_parse(text, VK_INFO_MAX_LEN, &info, NULL), 0);
	free(text);
}
END_TEST

START_TEST(empty_and_unknown)
{
	static const char *const ok[] = {
		"",
		"# Server\r\n\r\n",
		"\r\n\r\n\n",
		"nocolon\r\nunknown_field:x\x01y\r\n:\r\n# Keyspace\r\n",
		"slave_expires_tracked_keys:0\r\nslave_priority:100\r\nslavex:ip=1\r\n",
		"db:keys=1\r\ndbx:keys=a\r\nslave1234567:ip=1\r\n",
	};

	for (size_t i = 0; i < ARRAY_LEN(ok); i++) {
		struct vk_info info;
		struct err e;

		err_clear(&e);
		ck_assert_msg(vk_info_parse(ok[i], strlen(ok[i]), &info, &e) == 0, "%zu: %s", i,
		              e.msg);
		ck_assert_int_eq(info.engine, VK_ENGINE_UNKNOWN);
		ck_assert_uint_eq(info.version, 0);
		ck_assert_int_eq(info.role, VK_ROLE_UNKNOWN);
		ck_assert_int_eq(info.used_memory, VK_INFO_UNSET);
		ck_assert_int_eq(info.slave_repl_offset, VK_INFO_UNSET);
		ck_assert_uint_eq(info.nreplicas + info.ndbs, 0);
		ck_assert_int_eq(info.total_keys, 0);
		ck_assert(!info.loading && !info.master_link_up);
	}
}
END_TEST

START_TEST(line_endings_and_variants)
{
	/* LF only, no final newline, "role:replica", replica_read_only, NUL in an ignored value. */
	static const char text[] = "redis_version:7.2.4\nserver_name:valkey\nrole:replica\n"
	                           "replica_read_only:0\nignored:a\0b\nmaster_port:6379";
	struct vk_info info;

	ck_assert_int_eq(vk_info_parse(text, sizeof(text) - 1, &info, NULL), 0);
	ck_assert_int_eq(info.engine, VK_ENGINE_VALKEY); /* server_name without valkey_version */
	ck_assert_uint_eq(info.version, VK_VERSION(7, 2, 4));
	ck_assert_str_eq(info.engine_version, "7.2.4");
	ck_assert_int_eq(info.role, VK_ROLE_REPLICA);
	ck_assert(!info.replica_read_only);
	ck_assert_int_eq(info.master_port, 6379);
}
END_TEST

START_TEST(replica_and_db_caps)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	struct vk_info info;

	for (int i = 0; i < VK_INFO_MAX_REPLICAS + 8; i++)
		buf_printf(&b,
		           "slave%d:ip=10.0.0.%d,port=%d,state=online,offset=%d,lag=0,new=1\r\n", i,
		           i, 6000 + i, 100 * i);
	for (int i = 0; i < VK_INFO_MAX_DBS + 4; i++)
		buf_printf(&b, "db%d:keys=%d,expires=1,avg_ttl=5,subexpiry=0\r\n", i * 2, i + 1);
	ck_assert_int_eq(vk_info_parse(b.data, b.len, &info, NULL), 0);
	ck_assert_uint_eq(info.nreplicas, VK_INFO_MAX_REPLICAS);
	ck_assert_uint_eq(info.nreplicas_seen, VK_INFO_MAX_REPLICAS + 8);
	ck_assert_str_eq(info.replicas[5].ip, "10.0.0.5");
	ck_assert_int_eq(info.replicas[5].port, 6005);
	ck_assert_int_eq(info.replicas[5].offset, 500);
	ck_assert_str_eq(info.replicas[5].type, "");
	ck_assert_uint_eq(info.ndbs, VK_INFO_MAX_DBS);
	ck_assert_uint_eq(info.ndbs_seen, VK_INFO_MAX_DBS + 4);
	ck_assert_int_eq(info.dbs[3].index, 6);
	ck_assert_int_eq(info.dbs[3].keys, 4);
	ck_assert_int_eq(info.dbs[3].avg_ttl, 5);
	/* 1 + 2 + ... + 20 keys, one expire per db, including those past the cap. */
	ck_assert_int_eq(info.total_keys, (VK_INFO_MAX_DBS + 4) * (VK_INFO_MAX_DBS + 5) / 2);
	ck_assert_int_eq(info.total_expires, VK_INFO_MAX_DBS + 4);
	buf_release(&b);

	/* A malformed line past the cap still fails. */
	buf_init(&b, BUF_NO_LIMIT);
	for (int i = 0; i < VK_INFO_MAX_REPLICAS; i++)
		buf_printf(&b, "slave%d:ip=a,port=1\r\n", i);
	buf_printf(&b, "slave99:ip=a,port=z\r\n");
	ck_assert_int_eq(vk_info_parse(b.data, b.len, &info, NULL), -EPROTO);
	buf_release(&b);
}
END_TEST

/* A replica line with missing items keeps them unset. */
START_TEST(replica_partial)
{
	static const char text[] = "slave0:ip=::1,state=wait_bgsave\r\n";
	struct vk_info info;

	ck_assert_int_eq(vk_info_parse(text, strlen(text), &info, NULL), 0);
	ck_assert_uint_eq(info.nreplicas, 1);
	ck_assert_str_eq(info.replicas[0].ip, "::1");
	ck_assert_str_eq(info.replicas[0].state, "wait_bgsave");
	ck_assert_int_eq(info.replicas[0].port, VK_INFO_UNSET);
	ck_assert_int_eq(info.replicas[0].offset, VK_INFO_UNSET);
}
END_TEST

/* --- vk_info_get -------------------------------------------------------------------- */

static const struct get_case {
	const char *field;
	size_t outlen;
	int want;
	const char *value;
} get_cases[] = {
	{ "used_memory", 64, 0, "949368" },
	{ "used_memory_rss", 64, 0, "12607488" },
	{ "mem_fragmentation_ratio", 64, 0, "13.57" },
	{ "config_file", 64, 0, "" },
	{ "used_memory", 7, 0, "949368" },
	{ "used_memory", 6, -ERANGE, NULL },
	{ "used_memory", 0, -ERANGE, NULL },
	{ "used_mem", 64, -ENOENT, NULL },
	{ "# Memory", 64, -ENOENT, NULL },
	{ "nosuch", 64, -ENOENT, NULL },
	{ "", 64, -EINVAL, NULL },
	{ "last", 64, 0, "x" },
};

START_TEST(get_field)
{
	static const char text[] = "# Memory\r\nused_memory:949368\r\nused_memory_rss:12607488\r\n"
	                           "mem_fragmentation_ratio:13.57\r\nused_memory:1\r\n"
	                           "config_file:\r\nlast:x";
	const struct get_case *c = &get_cases[_i];
	char out[64];

	memset(out, '@', sizeof(out));
	ck_assert_int_eq(vk_info_get(text, strlen(text), c->field, out, c->outlen), c->want);
	if (c->value)
		ck_assert_str_eq(out, c->value);
	else
		ck_assert_int_eq(out[0], '@');
}
END_TEST

/* --- role names ---------------------------------------------------------------- */

START_TEST(names)
{
	ck_assert_str_eq(vk_role_name(VK_ROLE_PRIMARY), "primary");
	ck_assert_str_eq(vk_role_name(VK_ROLE_REPLICA), "replica");
	ck_assert_str_eq(vk_role_name((enum vk_role)42), "unknown");
}
END_TEST

static Suite *valkey_info_suite(void)
{
	Suite *s = suite_create("valkey_info");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, golden, 0, ARRAY_LEN(goldens));
	tcase_add_test(tc, golden_failover_facts);
	tcase_add_loop_test(tc, malformed, 0, ARRAY_LEN(bad_cases));
	tcase_add_test(tc, too_large);
	tcase_add_test(tc, empty_and_unknown);
	tcase_add_test(tc, line_endings_and_variants);
	tcase_add_test(tc, replica_and_db_caps);
	tcase_add_test(tc, replica_partial);
	tcase_add_loop_test(tc, get_field, 0, ARRAY_LEN(get_cases));
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(valkey_info_suite)

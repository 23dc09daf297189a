/*
 * Live tests for lib/valkey and lib/engine/directives against the real servers:
 * redis-server (7.0 here) and valkey-server (8.0 here), each test looped over both
 * engines.
 *
 * - directives_live: every row of the directive table, through CONFIG GET/SET: a live
 *   row accepts its current value, a restart-only row refuses it, a file-only row is
 *   unknown to CONFIG, and every name CONFIG GET * lists has a row.
 * - config_file_roundtrip: a config file written with vk_config_line (quotes, spaces,
 *   backslashes, UTF-8, multi-argument directives, the socket path itself) starts the
 *   server, which reads back exactly those values; CONFIG REWRITE then succeeds.
 * - conn.c on a real server: AUTH with a user holding two passwords (and rotating one
 *   out), NOAUTH once the default user has a password, NOPERM for
 *   client|kill and CONFIG, atomic multi-parameter CONFIG SET, LOADING → -EBUSY,
 *   REPLICAOF / WAIT / ROLE / READONLY / REPLICAOF NO ONE over TCP, and CLIENT PAUSE
 *   WRITE holding a write until CLIENT UNPAUSE.
 *
 * Each test starts its own servers (test/unit/live_server.c: a fresh directory each,
 * killed when the test ends, even when it fails). A test whose server binary is not
 * installed passes with a "SKIP" line on stdout. TLS: test_valkey_tls.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/valkey/conn.h"
#include "lib/engine/directives.h"
#include "live_server.h"
#include "testutil.h"
#include "unit.h"

#define POLL_TIMEOUT_MS 15000

static const struct engine_case {
	const char *bin;
	enum vk_engine engine;
} engines[] = {
	{ "redis-server", VK_ENGINE_REDIS },
	{ "valkey-server", VK_ENGINE_VALKEY },
};

static struct vk_conn *connect_to(const struct live_server *s, const char *user, const char *pw)
{
	struct vk_conn_config cfg = { .unix_path = s->sock,
		                      .connect_timeout_ms = 1000,
		                      .command_timeout_ms = 5000,
		                      .user = user,
		                      .password = pw };

	return vk_conn_new(&cfg);
}

static void must(int rc, const struct err *e, const char *what)
{
	ck_assert_msg(rc == 0, "%s: %s (%s)", what, e->msg, err_name(rc));
}

/* The engine and version the server reports, checked against the binary's engine. */
static void server_version(struct vk_conn *c, enum vk_engine want, unsigned *version)
{
	struct vk_info info;
	struct err e;

	err_clear(&e);
	must(vk_info(c, "server", &info, &e), &e, "INFO server");
	ck_assert_int_eq(info.engine, want);
	ck_assert_uint_ge(info.version,
	                  want == VK_ENGINE_REDIS ? VK_REDIS_MIN_VERSION : VK_VALKEY_MIN_VERSION);
	*version = info.version;
}

/* Polls INFO section until pred holds (bounded). */
static void poll_info(struct vk_conn *c, const char *section, bool (*pred)(const struct vk_info *),
                      struct vk_info *out)
{
	int64_t deadline = clock_mono_ms() + POLL_TIMEOUT_MS;
	struct err e;

	for (;;) {
		err_clear(&e);
		must(vk_info(c, section, out, &e), &e, "INFO");
		if (pred(out))
			return;
		ck_assert_msg(clock_mono_ms() < deadline, "INFO %s: condition not reached",
		              section);
		usleep(20 * 1000);
	}
}

/* --- the directive table against the server ---------------------------------------- */

/* CONFIG GET name: 0 and the value in v, or -ENOENT. */
static int config_get(struct vk_conn *c, const char *name, struct buf *v)
{
	struct err e;
	int rc;

	buf_clear(v);
	err_clear(&e);
	rc = vk_config_get(c, name, v, &e);
	ck_assert_msg(rc == 0 || rc == -ENOENT, "CONFIG GET %s: %s", name, e.msg);
	return rc;
}

static void check_row(struct vk_conn *c, const struct vk_directive *d, struct buf *fails)
{
	struct buf v = BUF_INIT(1 << 20);
	struct vk_kv kv = { d->name, NULL };
	bool live = d->flags & VK_DIRECTIVE_LIVE;
	struct err e;
	int got, rc;

	got = config_get(c, d->name, &v);
	if (d->flags & VK_DIRECTIVE_FILE_ONLY) {
		if (got != -ENOENT)
			buf_printf(fails, "%s: file-only, but CONFIG GET knows it\n", d->name);
		buf_clear(&v);
		buf_append_str(&v, "x");
	} else if (got == -ENOENT) {
		buf_printf(fails, "%s: in the table, unknown to CONFIG GET\n", d->name);
		buf_release(&v);
		return;
	}
	kv.value = buf_cstr(&v);
	err_clear(&e);
	rc = vk_config_set(c, &kv, 1, &e);
	if (live && rc != 0)
		buf_printf(fails, "%s: marked live, CONFIG SET '%s' failed: %s\n", d->name,
		           kv.value, e.msg);
	if (!live && rc == 0)
		buf_printf(fails, "%s: marked restart-only, CONFIG SET '%s' succeeded\n", d->name,
		           kv.value);
	if (!live && rc != 0 && rc != -EIO)
		buf_printf(fails, "%s: CONFIG SET failed with %s, not EIO\n", d->name,
		           err_name(rc));
	buf_release(&v);
}

/* Every name CONFIG GET * lists has a row for this engine and version. */
static void check_complete(struct vk_conn *c, enum vk_engine engine, unsigned version,
                           struct buf *fails)
{
	struct vk_reply *r = NULL;
	struct err e;

	err_clear(&e);
	must(vk_command(c, &r, &e, "CONFIG", "GET", "*"), &e, "CONFIG GET *");
	ck_assert_uint_gt(vk_reply_len(r), 300);
	for (size_t i = 0; i < vk_reply_len(r); i += 2) {
		const char *name = vk_reply_str(vk_reply_elem(r, i), NULL);

		if (!vk_directive_find(engine, version, name))
			buf_printf(fails, "%s: listed by CONFIG GET *, missing from the table\n",
			           name);
	}
	vk_reply_free(r);
}

/* One server of ec's engine with an admin connection; false (skipped) when not installed. */
static bool start_single(const struct engine_case *ec, struct live_server *s,
                         struct vk_conn **admin)
{
	if (live_skip_missing(ec->bin))
		return false;
	live_server_paths(s, 0);
	live_server_start(s, ec->bin, NULL, NULL);
	*admin = connect_to(s, NULL, NULL);
	return true;
}

START_TEST(directives_live)
{
	const struct engine_case *ec = &engines[_i];
	struct buf fails = BUF_INIT(BUF_NO_LIMIT);
	struct live_server s;
	struct vk_conn *c;
	unsigned version;
	size_t checked = 0;

	if (live_skip_missing(ec->bin))
		return;
	live_server_paths(&s, 0);
	live_server_start(&s, ec->bin, NULL, NULL);
	c = connect_to(&s, NULL, NULL);
	server_version(c, ec->engine, &version);
	for (size_t i = 0; i < vk_directive_count(); i++) {
		const struct vk_directive *d = vk_directive_at(i);

		if (!vk_directive_find(ec->engine, version, d->name))
			continue;
		check_row(c, d, &fails);
		checked++;
	}
	check_complete(c, ec->engine, version, &fails);
	vk_conn_free(c);
	live_server_stop(&s);
	ck_assert_uint_gt(checked, 180);
	ck_assert_msg(fails.len == 0, "%s:\n%s", ec->bin, buf_cstr(&fails));
	buf_release(&fails);
}
END_TEST

/* --- config file quoting, read back by the server ---------------------------------- */

static const struct vk_kv file_values[] = {
	{ "syslog-ident", "my \"ident\" with \\ back\\slash, 'single' and #hash" },
	{ "masteruser", "caf\xc3\xa9 user" },
	{ "requirepass", "p@ss \"w0rd\" \\ 'x' #notcomment" },
	{ "save", "3600 1 300 100" },
	{ "maxmemory-policy", "allkeys-lru" },
	{ "proc-title-template", "{title} \"quoted\" {port}" },
	{ "client-output-buffer-limit", "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60" },
};

/* What CONFIG GET answers for values the server normalises. */
static const char *read_back(const struct vk_kv *kv)
{
	if (!strcmp(kv->name, "client-output-buffer-limit"))
		return "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";
	return kv->value;
}

START_TEST(config_file_roundtrip)
{
	const struct engine_case *ec = &engines[_i];
	struct buf conf = BUF_INIT(1 << 16), v = BUF_INIT(4096);
	struct live_server s;
	struct vk_conn *c;
	struct vk_kv mm = { "maxmemory", "123mb" };
	struct err e;
	char path[200];
	FILE *f;

	if (live_skip_missing(ec->bin))
		return;
	live_server_paths(&s, 0);
	err_clear(&e);
	must(vk_config_line("port", "0", &conf, &e), &e, "port");
	must(vk_config_line("unixsocket", s.sock, &conf, &e), &e, "unixsocket");
	must(vk_config_line("dir", s.dir, &conf, &e), &e, "dir");
	must(vk_config_line("appendonly", "no", &conf, &e), &e, "appendonly");
	for (size_t i = 0; i < ARRAY_LEN(file_values); i++)
		must(vk_config_line(file_values[i].name, file_values[i].value, &conf, &e), &e,
		     file_values[i].name);
	snprintf(path, sizeof(path), "%s/server.conf", s.dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(conf.data, 1, conf.len, f), conf.len);
	fclose(f);
	live_server_start(&s, ec->bin, path, NULL);

	c = connect_to(&s, NULL, file_values[2].value);
	ck_assert_int_eq(config_get(c, "unixsocket", &v), 0);
	ck_assert_str_eq(buf_cstr(&v), s.sock);
	for (size_t i = 0; i < ARRAY_LEN(file_values); i++) {
		ck_assert_int_eq(config_get(c, file_values[i].name, &v), 0);
		ck_assert_msg(!strcmp(buf_cstr(&v), read_back(&file_values[i])),
		              "%s: wrote [%s], read [%s]", file_values[i].name,
		              file_values[i].value, buf_cstr(&v));
	}
	/* The config file is writable, so CONFIG REWRITE persists a live change. */
	must(vk_config_set(c, &mm, 1, &e), &e, "CONFIG SET maxmemory");
	must(vk_config_rewrite(c, &e), &e, "CONFIG REWRITE");
	vk_conn_free(c);
	live_server_stop(&s);
	buf_clear(&conf);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	for (int ch; (ch = fgetc(f)) != EOF;)
		buf_append_char(&conf, (char)ch);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&conf), "maxmemory 123mb"));
	buf_release(&conf);
	buf_release(&v);
}
END_TEST

/* --- conn.c on a real server -------------------------------------------------------- */

START_TEST(acl_two_passwords)
{
	const struct engine_case *ec = &engines[_i];
	static const char *const rules[] = { "on", ">old-pw", ">new-pw", "~*", "+@all" };
	static const char *const drop_old[] = { "<old-pw" };
	struct live_server s;
	struct vk_conn *admin, *c;
	struct err e;

	if (!start_single(ec, &s, &admin))
		return;
	err_clear(&e);
	must(vk_acl_setuser(admin, "u", rules, ARRAY_LEN(rules), &e), &e, "ACL SETUSER");

	c = connect_to(&s, "u", "old-pw");
	must(vk_ping(c, &e), &e, "AUTH u old");
	vk_conn_set_auth(c, "u", "new-pw");
	vk_conn_close(c);
	must(vk_ping(c, &e), &e, "AUTH u new");
	vk_conn_set_auth(c, "u", "wrong-pw");
	vk_conn_close(c);
	ck_assert_int_eq(vk_ping(c, &e), -EACCES);
	ck_assert_ptr_nonnull(strstr(e.msg, "WRONGPASS"));
	ck_assert_ptr_null(strstr(e.msg, "wrong-pw"));
	ck_assert(!vk_conn_is_connected(c));

	/* Rotation: the old password goes, the new one stays. */
	must(vk_acl_setuser(admin, "u", drop_old, 1, &e), &e, "ACL SETUSER <old");
	vk_conn_set_auth(c, "u", "old-pw");
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EACCES);
	vk_conn_set_auth(c, "u", "new-pw");
	must(vk_ping(c, &e), &e, "AUTH u new after rotation");
	vk_conn_free(c);

	/* A bad rule is refused, and the error does not echo the rules. */
	{
		static const char *const bad[] = { ">secret-pw", "+nosuchcommand" };

		err_clear(&e);
		ck_assert_int_eq(vk_acl_setuser(admin, "u", bad, 2, &e), -EIO);
		ck_assert_ptr_null(strstr(e.msg, "secret-pw"));
	}

	vk_conn_free(admin);
	live_server_stop(&s);
}
END_TEST

/* The default user gets a password: a connection without one gets NOAUTH. */
START_TEST(noauth_default_user)
{
	const struct engine_case *ec = &engines[_i];
	static const struct vk_kv requirepass[] = { { "requirepass", "default-pw" } };
	struct live_server s;
	struct vk_conn *admin, *c;
	struct err e;

	if (!start_single(ec, &s, &admin))
		return;
	err_clear(&e);
	must(vk_config_set(admin, requirepass, 1, &e), &e, "requirepass");
	/* The admin connection authenticated earlier (as default, no password): it stays. */
	must(vk_ping(admin, &e), &e, "PING on the earlier connection");
	c = connect_to(&s, NULL, NULL);
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EACCES);
	ck_assert_ptr_nonnull(strstr(e.msg, "NOAUTH"));
	vk_conn_free(c);
	c = connect_to(&s, NULL, "default-pw");
	must(vk_ping(c, &e), &e, "AUTH default");
	vk_conn_free(c);
	vk_conn_free(admin);
	live_server_stop(&s);
}
END_TEST

START_TEST(noperm_mapping)
{
	const struct engine_case *ec = &engines[_i];
	static const char *const rules[] = {
		"on", ">pw", "~*", "+@all", "-client|kill", "-config"
	};
	static const struct vk_kv kv[] = { { "maxmemory", "1mb" } };
	struct live_server s;
	struct vk_conn *admin, *c;
	struct buf v = BUF_INIT(64);
	struct err e;

	if (!start_single(ec, &s, &admin))
		return;
	err_clear(&e);
	must(vk_acl_setuser(admin, "limited", rules, ARRAY_LEN(rules), &e), &e, "ACL SETUSER");
	c = connect_to(&s, "limited", "pw");
	ck_assert_int_eq(vk_command(c, NULL, &e, "CLIENT", "KILL", "ID", "1"), -EPERM);
	ck_assert_ptr_nonnull(strstr(e.msg, "NOPERM"));
	err_clear(&e);
	ck_assert_int_eq(vk_config_set(c, kv, 1, &e), -EPERM);
	ck_assert_int_eq(vk_config_get(c, "maxmemory", &v, NULL), -EPERM);
	/* Still allowed: the rest of @all. */
	must(vk_command(c, NULL, &e, "SET", "k", "v"), &e, "SET");
	must(vk_command(c, NULL, &e, "CLIENT", "ID"), &e, "CLIENT ID");
	vk_conn_free(c);
	vk_conn_free(admin);
	live_server_stop(&s);
	buf_release(&v);
}
END_TEST

START_TEST(config_set_atomic)
{
	const struct engine_case *ec = &engines[_i];
	static const struct vk_kv good[] = { { "maxmemory", "100mb" },
		                             { "maxmemory-policy", "allkeys-lru" } };
	static const struct vk_kv bad[] = { { "maxmemory-policy", "volatile-lfu" },
		                            { "maxmemory", "not-a-size" } };
	static const struct vk_kv immutable[] = { { "maxmemory", "5mb" }, { "databases", "4" } };
	struct live_server s;
	struct vk_conn *c;
	struct buf v = BUF_INIT(64);
	struct err e;

	if (live_skip_missing(ec->bin))
		return;
	live_server_paths(&s, 0);
	live_server_start(&s, ec->bin, NULL, NULL);
	c = connect_to(&s, NULL, NULL);
	err_clear(&e);
	must(vk_config_set(c, good, 2, &e), &e, "CONFIG SET two");
	ck_assert_int_eq(config_get(c, "maxmemory", &v), 0);
	ck_assert_str_eq(buf_cstr(&v), "104857600");
	ck_assert_int_eq(config_get(c, "maxmemory-policy", &v), 0);
	ck_assert_str_eq(buf_cstr(&v), "allkeys-lru");
	/* One bad value: nothing changes. */
	ck_assert_int_eq(vk_config_set(c, bad, 2, &e), -EIO);
	ck_assert_ptr_nonnull(strstr(e.msg, "maxmemory"));
	ck_assert_int_eq(config_get(c, "maxmemory-policy", &v), 0);
	ck_assert_str_eq(buf_cstr(&v), "allkeys-lru");
	err_clear(&e);
	ck_assert_int_eq(vk_config_set(c, immutable, 2, &e), -EIO);
	ck_assert_ptr_nonnull(strstr(e.msg, "immutable"));
	ck_assert_int_eq(config_get(c, "maxmemory", &v), 0);
	ck_assert_str_eq(buf_cstr(&v), "104857600");
	ck_assert_int_eq(config_get(c, "no-such-directive", &v), -ENOENT);
	/* No config file: CONFIG REWRITE reports it. */
	err_clear(&e);
	ck_assert_int_eq(vk_config_rewrite(c, &e), -EIO);
	vk_conn_free(c);
	live_server_stop(&s);
	buf_release(&v);
}
END_TEST

/* A server loading a slow RDB answers LOADING: -EBUSY, and INFO says loading. */
START_TEST(loading_is_busy)
{
	const struct engine_case *ec = &engines[_i];
	static const char *const debug[] = { "--enable-debug-command", "local", NULL };
	static const char *const slow[] = { "--key-load-delay", "200",
		                            "--loading-process-events-interval-bytes", "1024",
		                            NULL };
	struct live_server s;
	struct vk_conn *c;
	struct vk_info info;
	struct err e;
	int rc;

	if (live_skip_missing(ec->bin))
		return;
	live_server_paths(&s, 0);
	live_server_start(&s, ec->bin, NULL, debug);
	c = connect_to(&s, NULL, NULL);
	err_clear(&e);
	must(vk_command(c, NULL, &e, "DEBUG", "POPULATE", "10000"), &e, "DEBUG POPULATE");
	must(vk_command(c, NULL, &e, "SAVE"), &e, "SAVE");
	vk_conn_free(c);
	live_server_stop(&s);

	live_server_start(&s, ec->bin, NULL, slow); /* same directory: loads dump.rdb */
	c = connect_to(&s, NULL, NULL);
	err_clear(&e);
	rc = vk_ping(c, &e);
	ck_assert_msg(rc == -EBUSY, "PING while loading: %s (%s)", err_name(rc), e.msg);
	ck_assert_ptr_nonnull(strstr(e.msg, "LOADING"));
	must(vk_info(c, "persistence", &info, &e), &e, "INFO while loading");
	ck_assert(info.loading);
	vk_conn_free(c);
	live_server_stop(&s);
}
END_TEST

static bool link_up(const struct vk_info *i)
{
	return i->role == VK_ROLE_REPLICA && i->master_link_up;
}

static bool replica_online(const struct vk_info *i)
{
	return i->nreplicas == 1 && !strcmp(i->replicas[0].state, "online");
}

static bool is_primary(const struct vk_info *i)
{
	return i->role == VK_ROLE_PRIMARY;
}

/* A primary and a replica linked over loopback TCP. */
struct pair {
	struct live_server p, r;
	struct vk_conn *pc, *rc;
	struct vk_info pi; /* the primary's replication INFO once the replica is online */
};

static void pair_start(struct pair *x, const char *bin)
{
	static const char *const fast[] = { "--repl-diskless-sync-delay", "0", NULL };
	struct vk_info ri;
	struct err e;

	live_server_paths(&x->p, live_free_port());
	live_server_start(&x->p, bin, NULL, fast);
	live_server_paths(&x->r, live_free_port());
	live_server_start(&x->r, bin, NULL, NULL);
	x->pc = connect_to(&x->p, NULL, NULL);
	x->rc = connect_to(&x->r, NULL, NULL);
	err_clear(&e);
	must(vk_command(x->pc, NULL, &e, "SET", "before", "1"), &e, "SET");
	must(vk_replicaof(x->rc, "127.0.0.1", x->p.port, &e), &e, "REPLICAOF");
	poll_info(x->rc, "replication", link_up, &ri);
	/* Following the same primary again: "+OK Already connected to specified master". */
	must(vk_replicaof(x->rc, "127.0.0.1", x->p.port, &e), &e, "REPLICAOF again");
	poll_info(x->pc, "replication", replica_online, &x->pi);
	ck_assert_int_eq(x->pi.replicas[0].port, x->r.port);
	ck_assert_str_eq(x->pi.replicas[0].ip, "127.0.0.1");
}

static void pair_stop(struct pair *x)
{
	vk_conn_free(x->pc);
	vk_conn_free(x->rc);
	live_server_stop(&x->r);
	live_server_stop(&x->p);
}

START_TEST(replication_wait_role)
{
	const struct engine_case *ec = &engines[_i];
	struct vk_role_info role;
	struct pair x;
	struct err e;
	long long acked = -1;

	if (live_skip_missing(ec->bin))
		return;
	pair_start(&x, ec->bin);
	err_clear(&e);
	/* A write acknowledged by WAIT is on the replica. */
	must(vk_command(x.pc, NULL, &e, "SET", "acked", "2"), &e, "SET");
	must(vk_wait(x.pc, 1, 5000, &acked, &e), &e, "WAIT");
	ck_assert_int_eq(acked, 1);

	must(vk_role(x.pc, &role, &e), &e, "ROLE primary");
	ck_assert_int_eq(role.role, VK_ROLE_PRIMARY);
	ck_assert_uint_eq(role.nreplicas, 1);
	ck_assert_int_eq(role.replicas[0].port, x.r.port);
	ck_assert_int_gt(role.offset, 0);
	must(vk_role(x.rc, &role, &e), &e, "ROLE replica");
	ck_assert_int_eq(role.role, VK_ROLE_REPLICA);
	ck_assert_str_eq(role.master_host, "127.0.0.1");
	ck_assert_int_eq(role.master_port, x.p.port);
	ck_assert_str_eq(role.state, "connected");

	/* The replica refuses writes. */
	err_clear(&e);
	ck_assert_int_eq(vk_command(x.rc, NULL, &e, "SET", "x", "1"), -EROFS);
	ck_assert_ptr_nonnull(strstr(e.msg, "READONLY"));
	pair_stop(&x);
}
END_TEST

/* Promotion keeps the old history as replid2 and forks one byte past it. */
START_TEST(replication_promote)
{
	const struct engine_case *ec = &engines[_i];
	struct vk_info pi, promoted;
	struct pair x;
	struct err e;

	if (live_skip_missing(ec->bin))
		return;
	pair_start(&x, ec->bin);
	err_clear(&e);
	must(vk_info(x.pc, "replication", &pi, &e), &e, "INFO primary");
	must(vk_replicaof_no_one(x.rc, &e), &e, "REPLICAOF NO ONE");
	poll_info(x.rc, "replication", is_primary, &promoted);
	ck_assert_str_eq(promoted.master_replid2, pi.master_replid);
	ck_assert_str_ne(promoted.master_replid, pi.master_replid);
	ck_assert_int_le(promoted.second_repl_offset, pi.master_repl_offset + 1);
	ck_assert_int_gt(promoted.second_repl_offset, 0);
	must(vk_command(x.rc, NULL, &e, "SET", "after", "3"), &e, "SET on the promoted replica");
	pair_stop(&x);
}
END_TEST

struct writer {
	const struct live_server *s;
	int rc;
	volatile int done;
};

static void *write_one(void *arg)
{
	struct writer *w = arg;
	struct vk_conn *c = connect_to(w->s, NULL, NULL); /* one connection per thread */

	w->rc = vk_command(c, NULL, NULL, "SET", "paused", "yes");
	__atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
	vk_conn_free(c);
	return NULL;
}

static bool has_blocked(const struct vk_info *i)
{
	return i->blocked_clients >= 1;
}

START_TEST(pause_write_blocks)
{
	const struct engine_case *ec = &engines[_i];
	struct live_server s;
	struct vk_conn *c;
	struct vk_reply *r = NULL;
	struct vk_info info;
	struct writer w = { 0 };
	pthread_t t;
	struct err e;

	if (live_skip_missing(ec->bin))
		return;
	live_server_paths(&s, 0);
	live_server_start(&s, ec->bin, NULL, NULL);
	c = connect_to(&s, NULL, NULL);
	err_clear(&e);
	must(vk_client_pause_write(c, 20000, &e), &e, "CLIENT PAUSE");
	w.s = &s;
	ck_assert_int_eq(pthread_create(&t, NULL, write_one, &w), 0);
	poll_info(c, "clients", has_blocked, &info);
	ck_assert_int_eq(__atomic_load_n(&w.done, __ATOMIC_SEQ_CST), 0);
	/* Reads go on during the pause; the write has not happened. */
	must(vk_command(c, &r, &e, "GET", "paused"), &e, "GET");
	ck_assert_int_eq(vk_reply_type(r), VK_REPLY_NIL);
	vk_reply_free(r);
	must(vk_client_unpause(c, &e), &e, "CLIENT UNPAUSE");
	pthread_join(t, NULL);
	ck_assert_int_eq(w.rc, 0);
	must(vk_command(c, &r, &e, "GET", "paused"), &e, "GET");
	ck_assert_str_eq(vk_reply_str(r, NULL), "yes");
	vk_reply_free(r);
	vk_conn_free(c);
	live_server_stop(&s);
}
END_TEST

static Suite *valkey_live_suite(void)
{
	Suite *s = suite_create("valkey_live");
	TCase *tc = tcase_create("servers");

	tcase_add_unchecked_fixture(tc, live_base_setup, live_base_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, directives_live, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, config_file_roundtrip, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, acl_two_passwords, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, noauth_default_user, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, noperm_mapping, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, config_set_atomic, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, loading_is_busy, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, replication_wait_role, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, replication_promote, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, pause_write_blocks, 0, ARRAY_LEN(engines));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(valkey_live_suite)

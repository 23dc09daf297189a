/*
 * Unit tests for lib/valkey/conn without a real server.
 *
 * A scripted fake server (one thread, a Unix socket in a temporary directory) records
 * the exact bytes it receives and answers each command with the next step of its
 * script: a reply, a reply after a delay, silence until the client gives up, or a
 * closed connection. That covers the wire format (no injection through arguments),
 * AUTH, error mapping and withheld secrets, timeouts and reconnects, WAIT's longer
 * deadline, and the helpers' argument checks. ROLE parsing and reply decoding use
 * RESP fixtures. test_valkey_live.c runs the same code against real servers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/valkey/conn.h"
#include "testutil.h"
#include "unit.h"

/* --- the fake server --------------------------------------------------------------- */

enum act { SEND, HANG, CLOSE };

struct step {
	enum act act;
	const char *reply; /* SEND: bytes to answer with */
	int delay_ms;      /* SEND: wait this long first */
};

struct fake {
	char path[108];
	int lfd;
	pthread_t thread;
	const struct step *steps;
	size_t nsteps;
	struct buf wire; /* every byte received, in order */
};

static char base_dir[64];

static void base_setup(void)
{
	tu_tmpdir(base_dir, sizeof(base_dir), "vk-conn");
}

static void base_teardown(void)
{
	tu_rmtree(base_dir);
}

/* Reads until one whole command (a RESP array) has arrived. False on EOF or timeout. */
static bool read_command(struct fake *f, int fd)
{
	size_t start = f->wire.len;
	char chunk[4096];

	for (;;) {
		struct vk_reply *r = NULL;
		ssize_t n;

		if (f->wire.len > start &&
		    vk_reply_decode(f->wire.data + start, f->wire.len - start, &r, NULL) == 0) {
			vk_reply_free(r);
			return true;
		}
		n = read(fd, chunk, sizeof(chunk));
		if (n <= 0)
			return false;
		buf_append(&f->wire, chunk, (size_t)n);
	}
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;
	struct timeval tv = { 5, 0 };
	int fd = -1;

	for (size_t i = 0; i < f->nsteps; i++) {
		const struct step *s = &f->steps[i];
		char sink[256];

		if (fd < 0) {
			fd = accept(f->lfd, NULL, NULL);
			if (fd < 0)
				return NULL;
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		}
		if (!read_command(f, fd)) { /* the client hung up: the step waits for the next */
			close(fd);
			fd = -1;
			i--;
			continue;
		}
		if (s->act == SEND) {
			if (s->delay_ms)
				usleep((useconds_t)s->delay_ms * 1000);
			if (write(fd, s->reply, strlen(s->reply)) < 0)
				break;
			continue;
		}
		if (s->act == HANG) /* until the client hangs up (or 5 s) */
			while (read(fd, sink, sizeof(sink)) > 0)
				;
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void fake_start(struct fake *f, const char *name, const struct step *steps, size_t n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s/%s.sock", base_dir, name);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->path);
	f->steps = steps;
	f->nsteps = n;
	buf_init(&f->wire, BUF_NO_LIMIT);
	f->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	ck_assert_int_ge(f->lfd, 0);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(f->lfd, 4), 0);
	ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_main, f), 0);
}

/* Waits for the script to finish (the test must have used every step); f->wire stays
 * readable until fake_release. */
static void fake_stop(struct fake *f)
{
	pthread_join(f->thread, NULL);
	close(f->lfd);
	unlink(f->path);
}

static void fake_release(struct fake *f)
{
	buf_release(&f->wire);
}

static struct vk_conn *conn_to(const struct fake *f, int command_timeout_ms, const char *user,
                               const char *password)
{
	struct vk_conn_config cfg = {
		.unix_path = f->path,
		.connect_timeout_ms = 1000,
		.command_timeout_ms = command_timeout_ms,
		.user = user,
		.password = password,
	};

	return vk_conn_new(&cfg);
}

/* --- wire format and auth ------------------------------------------------------------ */

START_TEST(wire_is_argv)
{
	static const struct step steps[] = { { SEND, "+OK\r\n", 0 }, { SEND, ":7\r\n", 0 } };
	static const char *const argv[] = { "SET", "k\0x", "v" };
	static const size_t lens[] = { 3, 3, 1 };
	static const char want[] = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$13\r\na b\r\nFLUSHALL\r\n"
	                           "*3\r\n$3\r\nSET\r\n$3\r\nk\0x\r\n$1\r\nv\r\n";
	struct fake f;
	struct vk_conn *c;
	struct vk_reply *r = NULL;
	struct err e;
	size_t len;

	fake_start(&f, "wire", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 1000, NULL, NULL);
	ck_assert(!vk_conn_is_connected(c));
	err_clear(&e);
	/* A value with CRLF and a command in it stays one argument. */
	ck_assert_int_eq(vk_command(c, &r, &e, "SET", "k", "a b\r\nFLUSHALL"), 0);
	ck_assert_int_eq(vk_reply_type(r), VK_REPLY_STATUS);
	ck_assert_str_eq(vk_reply_str(r, &len), "OK");
	ck_assert_uint_eq(len, 2);
	vk_reply_free(r);
	/* Binary-safe arguments with explicit lengths. */
	ck_assert_int_eq(vk_command_argv(c, 3, argv, lens, &r, &e), 0);
	ck_assert_int_eq(vk_reply_type(r), VK_REPLY_INTEGER);
	ck_assert_int_eq(vk_reply_int(r), 7);
	vk_reply_free(r);
	ck_assert(vk_conn_is_connected(c));
	vk_conn_free(c);
	fake_stop(&f);
	ck_assert_uint_eq(f.wire.len, sizeof(want) - 1);
	ck_assert_mem_eq(f.wire.data, want, sizeof(want) - 1);
	fake_release(&f);
}
END_TEST

START_TEST(auth_user_and_default)
{
	static const struct step steps[] = {
		{ SEND, "+OK\r\n", 0 },
		{ SEND, "+PONG\r\n", 0 },
		{ SEND, "+OK\r\n", 0 },
		{ SEND, "+PONG\r\n", 0 },
	};
	struct fake f;
	struct vk_conn *c;
	struct err e;

	fake_start(&f, "auth", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 1000, "op", "hunter2");
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), 0);
	vk_conn_close(c);
	ck_assert(!vk_conn_is_connected(c));
	/* Rotated credentials for the next connection; no user: AUTH password. */
	vk_conn_set_auth(c, NULL, "s3cret");
	ck_assert_int_eq(vk_conn_connect(c, &e), 0);
	ck_assert_int_eq(vk_conn_connect(c, &e), 0); /* already connected: no I/O */
	ck_assert_int_eq(vk_ping(c, &e), 0);
	vk_conn_free(c);
	fake_stop(&f);
	ck_assert_str_eq(buf_cstr(&f.wire), "*3\r\n$4\r\nAUTH\r\n$2\r\nop\r\n$7\r\nhunter2\r\n"
	                                    "*1\r\n$4\r\nPING\r\n"
	                                    "*2\r\n$4\r\nAUTH\r\n$6\r\ns3cret\r\n"
	                                    "*1\r\n$4\r\nPING\r\n");
	fake_release(&f);
}
END_TEST

START_TEST(auth_failure_withheld)
{
	static const struct step steps[] = {
		{ SEND, "-ERR invalid password hunter2\r\n", 0 },
		{ SEND, "-WRONGPASS invalid username-password pair\r\n", 0 },
	};
	struct fake f;
	struct vk_conn *c;
	struct err e;

	fake_start(&f, "authfail", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 1000, "op", "hunter2");
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EIO);
	ck_assert_ptr_null(strstr(e.msg, "hunter2"));
	ck_assert_ptr_nonnull(strstr(e.msg, "AUTH: ERR (details withheld"));
	ck_assert(!vk_conn_is_connected(c));
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EACCES);
	ck_assert_ptr_nonnull(strstr(e.msg, "WRONGPASS"));
	vk_conn_free(c);
	fake_stop(&f);
	fake_release(&f);
}
END_TEST

/* --- errors -------------------------------------------------------------------------- */

static const struct {
	const char *reply;
	int code;
} server_errors[] = {
	{ "-NOPERM this user has no permissions to run the 'client|kill' command\r\n", -EPERM },
	{ "-WRONGPASS invalid username-password pair or user is disabled.\r\n", -EACCES },
	{ "-NOAUTH Authentication required.\r\n", -EACCES },
	{ "-LOADING Redis is loading the dataset in memory\r\n", -EBUSY },
	{ "-BUSY Redis is busy running a script.\r\n", -EBUSY },
	{ "-READONLY You can't write against a read only replica.\r\n", -EROFS },
	{ "-BUSYKEY Target key name already exists.\r\n", -EIO },
	{ "-ERR unknown command 'FOO'\r\n", -EIO },
	{ "-NOPERM\r\n", -EPERM },
	{ "-\r\n", -EIO },
};

START_TEST(server_error_mapping)
{
	struct step step = { SEND, server_errors[_i].reply, 0 };
	struct fake f;
	struct vk_conn *c;
	struct vk_reply *r = (struct vk_reply *)&f; /* must stay untouched */
	struct err e;
	const char *text = server_errors[_i].reply + 1;

	fake_start(&f, "err", &step, 1);
	c = conn_to(&f, 1000, NULL, NULL);
	err_clear(&e);
	ck_assert_int_eq(vk_command(c, &r, &e, "FOO"), server_errors[_i].code);
	ck_assert_ptr_eq(r, (struct vk_reply *)&f);
	ck_assert_ptr_nonnull(strstr(e.msg, "FOO: "));
	ck_assert_msg(strncmp(strstr(e.msg, "FOO: ") + 5, text, strlen(text) - 2) == 0, "%s",
	              e.msg);
	/* A server error leaves the connection usable. */
	ck_assert(vk_conn_is_connected(c));
	vk_conn_free(c);
	fake_stop(&f);
	ck_assert_int_eq(vk_error_code(text, strlen(text) - 2), server_errors[_i].code);
	fake_release(&f);
}
END_TEST

START_TEST(timeout_then_reconnect)
{
	static const struct step steps[] = {
		{ HANG, NULL, 0 },           { SEND, "+PONG\r\n", 0 }, { CLOSE, NULL, 0 },
		{ SEND, "!garbage\r\n", 0 }, { SEND, "+PONG\r\n", 0 },
	};
	struct fake f;
	struct vk_conn *c;
	struct err e;
	int64_t t0;

	fake_start(&f, "timeout", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 150, NULL, NULL);
	err_clear(&e);
	t0 = clock_mono_ms();
	ck_assert_int_eq(vk_ping(c, &e), -ETIMEDOUT);
	ck_assert_int_lt(clock_mono_ms() - t0, 2000);
	ck_assert_ptr_nonnull(strstr(e.msg, f.path));
	ck_assert(!vk_conn_is_connected(c));
	ck_assert_int_eq(vk_ping(c, NULL), 0); /* a new connection */
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EIO);
	ck_assert_ptr_nonnull(strstr(e.msg, "connection closed"));
	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EPROTO);
	ck_assert(!vk_conn_is_connected(c));
	ck_assert_int_eq(vk_ping(c, NULL), 0);
	vk_conn_free(c);
	fake_stop(&f);
	fake_release(&f);
}
END_TEST

START_TEST(connect_refused)
{
	struct vk_conn_config cfg = { .unix_path = "/nonexistent/vk.sock",
		                      .connect_timeout_ms = 100,
		                      .command_timeout_ms = 100 };
	struct vk_conn *c = vk_conn_new(&cfg);
	struct vk_conn_config tcp = {
		.host = "127.0.0.1", .port = 1, .connect_timeout_ms = 100, .command_timeout_ms = 100
	};
	struct vk_conn *t = vk_conn_new(&tcp);
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(vk_ping(c, &e), -EIO);
	ck_assert_ptr_nonnull(strstr(e.msg, "unix:/nonexistent/vk.sock: "));
	ck_assert_str_eq(vk_conn_addr(c), "unix:/nonexistent/vk.sock");
	ck_assert(!vk_conn_is_connected(c));
	err_clear(&e);
	ck_assert_int_eq(vk_conn_connect(t, &e), -EIO);
	ck_assert_str_eq(vk_conn_addr(t), "127.0.0.1:1");
	ck_assert_ptr_nonnull(strstr(e.msg, "127.0.0.1:1: "));
	vk_conn_free(c);
	vk_conn_free(t);
	vk_conn_free(NULL);
}
END_TEST

/* WAIT may block longer than the command timeout; the next command gets it back. */
START_TEST(wait_extends_deadline)
{
	static const struct step steps[] = { { SEND, ":1\r\n", 400 },
		                             { HANG, NULL, 0 },
		                             { SEND, "+nope\r\n", 0 } };
	struct fake f;
	struct vk_conn *c;
	struct err e;
	long long acked = -1;
	int64_t t0;

	fake_start(&f, "wait", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 100, NULL, NULL);
	err_clear(&e);
	ck_assert_int_eq(vk_wait(c, 1, 1000, &acked, &e), 0);
	ck_assert_int_eq(acked, 1);
	t0 = clock_mono_ms();
	ck_assert_int_eq(vk_ping(c, &e), -ETIMEDOUT);
	ck_assert_int_lt(clock_mono_ms() - t0, 800);
	err_clear(&e);
	ck_assert_int_eq(vk_wait(c, 1, 1000, &acked, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "expected an integer"));
	vk_conn_free(c);
	fake_stop(&f);
	ck_assert_ptr_nonnull(
	        strstr(buf_cstr(&f.wire), "*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n1000\r\n"));
	fake_release(&f);
}
END_TEST

/* --- helpers over the fake ------------------------------------------------------------ */

START_TEST(helpers_wire)
{
	static const struct step steps[] = {
		{ SEND, "+OK\r\n", 0 },                                /* CONFIG SET */
		{ SEND, "*2\r\n$9\r\nmaxmemory\r\n$3\r\n100\r\n", 0 }, /* CONFIG GET */
		{ SEND, "*0\r\n", 0 },                                 /* CONFIG GET unknown */
		{ SEND, "+OK\r\n", 0 },                                /* CONFIG REWRITE */
		{ SEND, "+OK\r\n", 0 },                                /* REPLICAOF */
		{ SEND, "+OK\r\n", 0 },                                /* REPLICAOF NO ONE */
		{ SEND, "+OK\r\n", 0 },                                /* CLIENT PAUSE */
		{ SEND, "+OK\r\n", 0 },                                /* CLIENT UNPAUSE */
		{ SEND, "+OK\r\n", 0 },                                /* ACL SETUSER */
		{ SEND, "$-1\r\n", 0 },                                /* CONFIG REWRITE: not OK */
		{ SEND, "*1\r\n$1\r\nx\r\n", 0 },                      /* CONFIG GET: bad shape */
		{ SEND, "*2\r\n$1\r\nx\r\n$5\r\nhello\r\n", 0 },       /* CONFIG GET: too long */
	};
	static const struct vk_kv kv[] = { { "maxmemory", "100mb" },
		                           { "maxmemory-policy", "allkeys-lru" } };
	static const char *const rules[] = { "on", ">pw", "~*", "+@all" };
	struct buf v = BUF_INIT(4);
	struct fake f;
	struct vk_conn *c;
	struct err e;

	fake_start(&f, "helpers", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 1000, NULL, NULL);
	err_clear(&e);
	ck_assert_int_eq(vk_config_set(c, kv, 2, &e), 0);
	ck_assert_int_eq(vk_config_get(c, "maxmemory", &v, &e), 0);
	ck_assert_str_eq(buf_cstr(&v), "100");
	ck_assert_int_eq(vk_config_get(c, "nosuch", &v, &e), -ENOENT);
	ck_assert_int_eq(vk_config_rewrite(c, NULL), 0);
	ck_assert_int_eq(vk_replicaof(c, "10.0.0.7", 6379, NULL), 0);
	ck_assert_int_eq(vk_replicaof_no_one(c, NULL), 0);
	ck_assert_int_eq(vk_client_pause_write(c, 2500, NULL), 0);
	ck_assert_int_eq(vk_client_unpause(c, NULL), 0);
	ck_assert_int_eq(vk_acl_setuser(c, "app", rules, ARRAY_LEN(rules), NULL), 0);
	err_clear(&e);
	ck_assert_int_eq(vk_config_rewrite(c, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "expected +OK"));
	ck_assert_int_eq(vk_config_get(c, "x", &v, NULL), -EPROTO);
	buf_clear(&v);
	ck_assert_int_eq(vk_config_get(c, "x", &v, NULL), -EMSGSIZE);
	ck_assert_uint_eq(v.len, 0);
	vk_conn_free(c);
	fake_stop(&f);
	ck_assert_str_eq(buf_cstr(&f.wire),
	                 "*6\r\n$6\r\nCONFIG\r\n$3\r\nSET\r\n$9\r\nmaxmemory\r\n$5\r\n100mb\r\n"
	                 "$16\r\nmaxmemory-policy\r\n$11\r\nallkeys-lru\r\n"
	                 "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$9\r\nmaxmemory\r\n"
	                 "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$6\r\nnosuch\r\n"
	                 "*2\r\n$6\r\nCONFIG\r\n$7\r\nREWRITE\r\n"
	                 "*3\r\n$9\r\nREPLICAOF\r\n$8\r\n10.0.0.7\r\n$4\r\n6379\r\n"
	                 "*3\r\n$9\r\nREPLICAOF\r\n$2\r\nNO\r\n$3\r\nONE\r\n"
	                 "*4\r\n$6\r\nCLIENT\r\n$5\r\nPAUSE\r\n$4\r\n2500\r\n$5\r\nWRITE\r\n"
	                 "*2\r\n$6\r\nCLIENT\r\n$7\r\nUNPAUSE\r\n"
	                 "*7\r\n$3\r\nACL\r\n$7\r\nSETUSER\r\n$3\r\napp\r\n$2\r\non\r\n"
	                 "$3\r\n>pw\r\n$2\r\n~*\r\n$5\r\n+@all\r\n"
	                 "*2\r\n$6\r\nCONFIG\r\n$7\r\nREWRITE\r\n"
	                 "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$1\r\nx\r\n"
	                 "*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$1\r\nx\r\n");
	buf_release(&v);
	fake_release(&f);
}
END_TEST

START_TEST(secrets_withheld)
{
	static const struct step steps[] = {
		{ SEND, "-ERR Invalid argument 'hunter2' for CONFIG SET 'requirepass'\r\n", 0 },
		{ SEND, "-ERR Invalid argument 'zzz' for CONFIG SET 'maxmemory'\r\n", 0 },
		{ SEND, "-ERR Error in ACL SETUSER modifier '>hunter2': Syntax error\r\n", 0 },
		{ SEND, "-ERR echo hunter2\r\n", 0 },
	};
	static const struct vk_kv secret[] = { { "maxmemory", "1" }, { "requirepass", "hunter2" } };
	static const struct vk_kv plain[] = { { "maxmemory", "zzz" } };
	static const char *const rules[] = { ">hunter2" };
	static const char *const argv[] = { "X", "hunter2" };
	struct fake f;
	struct vk_conn *c;
	struct err e;

	fake_start(&f, "secrets", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 1000, NULL, NULL);
	err_clear(&e);
	ck_assert_int_eq(vk_config_set(c, secret, 2, &e), -EIO);
	ck_assert_ptr_null(strstr(e.msg, "hunter2"));
	ck_assert_ptr_nonnull(strstr(e.msg, "CONFIG: ERR (details withheld"));
	err_clear(&e);
	ck_assert_int_eq(vk_config_set(c, plain, 1, &e), -EIO);
	ck_assert_ptr_nonnull(strstr(e.msg, "Invalid argument 'zzz'"));
	err_clear(&e);
	ck_assert_int_eq(vk_acl_setuser(c, "u", rules, 1, &e), -EIO);
	ck_assert_ptr_null(strstr(e.msg, "hunter2"));
	err_clear(&e);
	ck_assert_int_eq(vk_command_argv_secret(c, 2, argv, NULL, NULL, &e), -EIO);
	ck_assert_ptr_null(strstr(e.msg, "hunter2"));
	vk_conn_free(c);
	fake_stop(&f);
	fake_release(&f);
}
END_TEST

START_TEST(info_over_fake)
{
	static const struct step steps[] = {
		{ SEND, "$32\r\n# Replication\r\nrole:slave\r\nx:1\r\n\r\n", 0 },
		{ SEND, "+OK\r\n", 0 },
		{ SEND, "$13\r\nrole:sentinel\r\n", 0 },
	};
	struct fake f;
	struct vk_conn *c;
	struct vk_info info;
	struct err e;

	fake_start(&f, "info", steps, ARRAY_LEN(steps));
	c = conn_to(&f, 1000, NULL, NULL);
	err_clear(&e);
	ck_assert_int_eq(vk_info(c, "replication", &info, &e), 0);
	ck_assert_int_eq(info.role, VK_ROLE_REPLICA);
	ck_assert_int_eq(vk_info(c, NULL, &info, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "bulk string"));
	err_clear(&e);
	ck_assert_int_eq(vk_info(c, NULL, &info, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "field role"));
	vk_conn_free(c);
	fake_stop(&f);
	ck_assert_str_eq(buf_cstr(&f.wire), "*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n"
	                                    "*1\r\n$4\r\nINFO\r\n*1\r\n$4\r\nINFO\r\n");
	fake_release(&f);
}
END_TEST

/* Bad arguments fail before any I/O (the socket does not even exist). */
START_TEST(argument_checks)
{
	struct vk_conn_config cfg = { .unix_path = "/nonexistent/vk.sock",
		                      .connect_timeout_ms = 100,
		                      .command_timeout_ms = 100 };
	struct vk_conn *c = vk_conn_new(&cfg);
	struct buf v = BUF_INIT(64);
	long long acked = 42;

	ck_assert_int_eq(vk_config_set(c, NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(vk_config_get(c, "max*", &v, NULL), -EINVAL);
	ck_assert_int_eq(vk_config_get(c, "", &v, NULL), -EINVAL);
	ck_assert_int_eq(vk_replicaof(c, "h", 0, NULL), -EINVAL);
	ck_assert_int_eq(vk_replicaof(c, "h", 65536, NULL), -EINVAL);
	ck_assert_int_eq(vk_replicaof(c, "", 6379, NULL), -EINVAL);
	ck_assert_int_eq(vk_client_pause_write(c, 0, NULL), -EINVAL);
	ck_assert_int_eq(vk_wait(c, 1, 0, &acked, NULL), -EINVAL);
	ck_assert_int_eq(vk_wait(c, -1, 10, &acked, NULL), -EINVAL);
	ck_assert_int_eq(acked, 42);
	ck_assert_int_eq(vk_acl_setuser(c, "", NULL, 0, NULL), -EINVAL);
	ck_assert_int_eq(vk_command_list(c, NULL, NULL, (const char *)NULL), -EINVAL);
	ck_assert_int_eq(vk_command_argv(c, 0, NULL, NULL, NULL, NULL), -EINVAL);
	/* The first real command reports the missing socket. */
	ck_assert_int_eq(vk_replicaof(c, "h", 6379, NULL), -EIO);
	vk_conn_free(c);
	buf_release(&v);
}
END_TEST

/* --- replies and ROLE --------------------------------------------------------------- */

START_TEST(reply_decode)
{
	struct vk_reply *r = NULL;
	const struct vk_reply *x;
	struct err e;
	size_t len;
	static const char nested[] = "*4\r\n$3\r\nabc\r\n:-5\r\n$-1\r\n*1\r\n-ERR inner\r\n";

	ck_assert_int_eq(vk_reply_decode(nested, strlen(nested), &r, NULL), 0);
	ck_assert_int_eq(vk_reply_type(r), VK_REPLY_ARRAY);
	ck_assert_uint_eq(vk_reply_len(r), 4);
	ck_assert_str_eq(vk_reply_str(vk_reply_elem(r, 0), &len), "abc");
	ck_assert_uint_eq(len, 3);
	ck_assert_int_eq(vk_reply_int(vk_reply_elem(r, 1)), -5);
	ck_assert_int_eq(vk_reply_type(vk_reply_elem(r, 2)), VK_REPLY_NIL);
	x = vk_reply_elem(vk_reply_elem(r, 3), 0);
	ck_assert_int_eq(vk_reply_type(x), VK_REPLY_ERROR);
	ck_assert_str_eq(vk_reply_str(x, NULL), "ERR inner");
	ck_assert_ptr_null(vk_reply_elem(r, 4));
	ck_assert_ptr_null(vk_reply_elem(vk_reply_elem(r, 0), 0));
	ck_assert_ptr_null(vk_reply_str(r, NULL));
	ck_assert_int_eq(vk_reply_int(r), 0);
	ck_assert_uint_eq(vk_reply_len(vk_reply_elem(r, 0)), 0);
	vk_reply_free(r);
	vk_reply_free(NULL);

	r = (struct vk_reply *)&e;
	err_clear(&e);
	ck_assert_int_eq(vk_reply_decode("$5\r\nab", 6, &r, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "incomplete"));
	err_clear(&e);
	ck_assert_int_eq(vk_reply_decode("+OK\r\n+OK\r\n", 10, &r, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "after the reply"));
	err_clear(&e);
	ck_assert_int_eq(vk_reply_decode("?what\r\n", 7, &r, &e), -EPROTO);
	ck_assert_int_eq(vk_reply_decode("", 0, &r, NULL), -EPROTO);
	ck_assert_int_eq(vk_reply_decode("x", VK_REPLY_MAX_LEN + 1, &r, NULL), -EMSGSIZE);
	ck_assert_ptr_eq(r, (struct vk_reply *)&e);
}
END_TEST

static const struct role_case {
	const char *resp;
	size_t len; /* 0: strlen(resp) */
	int want;
	enum vk_role role;
	long long offset;
	const char *host;
	long long port;
	size_t nreplicas;
} roles[] = {
	{ "*3\r\n$6\r\nmaster\r\n:3129659\r\n*2\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n9001\r\n"
	  "$7\r\n3129242\r\n*3\r\n$3\r\n::1\r\n$4\r\n9002\r\n$7\r\n3129543\r\n",
	  0, 0, VK_ROLE_PRIMARY, 3129659, "", -1, 2 },
	{ "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n", 0, 0, VK_ROLE_PRIMARY, 0, "", -1, 0 },
	{ "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:9000\r\n$9\r\nconnected\r\n:3167038\r\n", 0, 0,
	  VK_ROLE_REPLICA, 3167038, "127.0.0.1", 9000, 0 },
	{ "*5\r\n$5\r\nslave\r\n$4\r\nhost\r\n:6379\r\n$7\r\nconnect\r\n:-1\r\n", 0, 0,
	  VK_ROLE_REPLICA, -1, "host", 6379, 0 },
	{ "*2\r\n$8\r\nsentinel\r\n*1\r\n$8\r\nmymaster\r\n", 0, 0, VK_ROLE_SENTINEL, -1, "", -1,
	  0 },
	/* Malformed shapes. */
	{ "+OK\r\n", 0, -EPROTO },
	{ "*0\r\n", 0, -EPROTO },
	{ "*1\r\n$7\r\nunknown\r\n", 0, -EPROTO },
	{ "*2\r\n$6\r\nmaster\r\n:1\r\n", 0, -EPROTO },
	{ "*3\r\n$6\r\nmaster\r\n$1\r\n1\r\n*0\r\n", 0, -EPROTO },
	{ "*3\r\n$6\r\nmaster\r\n:1\r\n*1\r\n*3\r\n$1\r\na\r\n$1\r\nx\r\n$1\r\n1\r\n", 0, -EPROTO },
	{ "*3\r\n$6\r\nmaster\r\n:1\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n", 0, -EPROTO },
	{ "*3\r\n$6\r\nmaster\r\n:1\r\n*1\r\n:5\r\n", 0, -EPROTO },
	{ "*5\r\n$5\r\nslave\r\n$1\r\nh\r\n$4\r\n6379\r\n$7\r\nconnect\r\n:1\r\n", 0, -EPROTO },
	{ "*4\r\n$5\r\nslave\r\n$1\r\nh\r\n:6379\r\n$7\r\nconnect\r\n", 0, -EPROTO },
	{ "*5\r\n$5\r\nslave\r\n$3\r\nh\0x\r\n:6379\r\n$7\r\nconnect\r\n:1\r\n", 48, -EPROTO },
};

START_TEST(role_parse)
{
	const struct role_case *c = &roles[_i];
	struct vk_reply *r = NULL;
	struct vk_role_info info;
	size_t len = c->len ? c->len : strlen(c->resp);

	ck_assert_int_eq(vk_reply_decode(c->resp, len, &r, NULL), 0);
	memset(&info, 0x5a, sizeof(info));
	ck_assert_int_eq(vk_role_parse(r, &info, NULL), c->want);
	vk_reply_free(r);
	if (c->want) {
		ck_assert_int_eq(((unsigned char *)&info)[0], 0x5a);
		return;
	}
	ck_assert_int_eq(info.role, c->role);
	ck_assert_int_eq(info.offset, c->offset);
	ck_assert_str_eq(info.master_host, c->host);
	ck_assert_int_eq(info.master_port, c->port);
	ck_assert_uint_eq(info.nreplicas, c->nreplicas);
	if (c->nreplicas == 2) {
		ck_assert_str_eq(info.replicas[1].ip, "::1");
		ck_assert_int_eq(info.replicas[1].port, 9002);
		ck_assert_int_eq(info.replicas[1].offset, 3129543);
	}
}
END_TEST

static Suite *valkey_conn_suite(void)
{
	Suite *s = suite_create("valkey_conn");
	TCase *tc = tcase_create("fake_server");
	TCase *pure = tcase_create("pure");

	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, wire_is_argv);
	tcase_add_test(tc, auth_user_and_default);
	tcase_add_test(tc, auth_failure_withheld);
	tcase_add_loop_test(tc, server_error_mapping, 0, ARRAY_LEN(server_errors));
	tcase_add_test(tc, timeout_then_reconnect);
	tcase_add_test(tc, connect_refused);
	tcase_add_test(tc, wait_extends_deadline);
	tcase_add_test(tc, helpers_wire);
	tcase_add_test(tc, secrets_withheld);
	tcase_add_test(tc, info_over_fake);
	tcase_add_test(tc, argument_checks);
	suite_add_tcase(s, tc);
	tcase_add_test(pure, reply_decode);
	tcase_add_loop_test(pure, role_parse, 0, ARRAY_LEN(roles));
	suite_add_tcase(s, pure);
	return s;
}

UNIT_MAIN(valkey_conn_suite)

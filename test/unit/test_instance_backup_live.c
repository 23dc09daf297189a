/*
 * Live tests of the backup's snapshots (instance/backup_repl.c, instance/backup_save.c)
 * against the real servers, redis-server (7.0 here) and valkey-server (8.0 here), each
 * test looped over both engines; plus the pure parsers of the replication handshake.
 *
 * - repl_stream: the RDB from the replication stream, disk-based ($<len>) and diskless
 *   ($EOF:<mark>, repl-diskless-sync-delay 0 in the test's own server): the spool is
 *   loaded by a second server, which has every key; the replid is the server's; once the
 *   upload says it sent everything, the spool holds no data block (punched out).
 * - repl_not_a_replica: with min-replicas-to-write 1 and no real replica, a write is
 *   refused and WAIT 1 answers 0 while our transfer runs (rdb-key-save-delay slows it)
 *   and after it, and the server lists no replica once it ended.
 * - repl_during_rewrite: PSYNC while an AOF rewrite runs: the server starts our
 *   transfer once the rewrite ended; the spool is complete.
 * - bgsave_during_rewrite: BGSAVE asked while an AOF rewrite runs ("Another child
 *   process is active") waits and succeeds; with a bound shorter than the rewrite it
 *   fails with -EBUSY naming the AOF rewrite.
 * Servers are started with PR_SET_PDEATHSIG and killed at the end of each test; a
 * missing binary passes with a "SKIP" line.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instance/backup.h"
#include "lib/clock.h"
#include "lib/valkey/conn.h"
#include "testutil.h"
#include "unit.h"

#define KEYS 3000

static const char *const engines[] = { "redis-server", "valkey-server" };

struct server {
	pid_t pid;
	char dir[160], sock[200];
};

static char base_dir[64];
static int seq;

static void base_setup(void)
{
	tu_tmpdir(base_dir, sizeof(base_dir), "bk-live");
}

static void base_teardown(void)
{
	tu_rmtree(base_dir);
}

static bool skip_missing(const char *bin)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", bin);
	if (system(cmd) == 0)
		return false;
	printf("SKIP: %s is not installed; its live tests did not run\n", bin);
	return true;
}

static struct vk_conn *conn(const struct server *s, int timeout_ms)
{
	struct vk_conn_config cfg = { .unix_path = s->sock,
		                      .connect_timeout_ms = 500,
		                      .command_timeout_ms = timeout_ms };

	return vk_conn_new(&cfg);
}

static void wait_up(const struct server *s)
{
	struct vk_conn *c = conn(s, 500);
	int64_t deadline = clock_mono_ms() + 10000;

	while (vk_ping(c, NULL) != 0) {
		ck_assert_msg(clock_mono_ms() < deadline, "server in %s not up", s->dir);
		usleep(20 * 1000);
	}
	vk_conn_free(c);
}

/* bin with a Unix socket in a new directory, no TCP, no save; dbfile NULL: none. */
static void server_start(struct server *s, const char *bin, const char *dir)
{
	pid_t parent = getpid();

	memset(s, 0, sizeof(*s));
	if (dir)
		snprintf(s->dir, sizeof(s->dir), "%s", dir);
	else
		snprintf(s->dir, sizeof(s->dir), "%s/s%d-%d", base_dir, (int)getpid(), seq++);
	snprintf(s->sock, sizeof(s->sock), "%s/s.sock", s->dir);
	(void)mkdir(s->dir, 0700);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		char log[220];
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		snprintf(log, sizeof(log), "%s/log", s->dir);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600)) >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execlp(bin, bin, "--port", "0", "--unixsocket", s->sock, "--dir", s->dir, "--save",
		       "", "--appenddirname", "aof", (char *)NULL);
		_exit(127);
	}
	wait_up(s);
}

static void server_stop(struct server *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, NULL, 0);
	}
	s->pid = 0;
}

#define cmd_ok(c, ...)                                                                             \
	do {                                                                                       \
		struct err e_ = { 0 };                                                             \
		ck_assert_msg(vk_command((c), NULL, &e_, __VA_ARGS__) == 0, "%s", e_.msg);         \
	} while (0)

static void fill(struct vk_conn *c)
{
	char k[32], v[300];

	memset(v, 'v', sizeof(v) - 1);
	v[sizeof(v) - 1] = '\0';
	for (int i = 0; i < KEYS; i++) {
		snprintf(k, sizeof(k), "k:%d", i);
		cmd_ok(c, "SET", k, v);
	}
}

static long long dbsize(struct vk_conn *c)
{
	struct vk_reply *r = NULL;
	long long n;

	ck_assert_int_eq(vk_command(c, &r, NULL, "DBSIZE"), 0);
	n = vk_reply_int(r);
	vk_reply_free(r);
	return n;
}

static struct inst_repl_conf repl_conf(const struct server *s, bool diskless)
{
	return (struct inst_repl_conf){ .sock_path = s->sock,
		                        .spool_dir = s->dir,
		                        .diskless = diskless,
		                        .io_timeout_ms = 5000,
		                        .start_timeout_ms = 60000 };
}

/* Until final: the spool's size. */
static uint64_t drain(struct inst_repl_snap *snap)
{
	uint64_t have = 0;
	bool final = false;
	struct err e = { 0 };
	int64_t deadline = clock_mono_ms() + 60000;

	while (!final) {
		ck_assert_msg(inst_repl_snap_avail(snap, 0, have + 1, &have, &final, &e) == 0, "%s",
		              e.msg);
		ck_assert(clock_mono_ms() < deadline);
	}
	return have;
}

/* The spool copied to dir/dump.rdb and loaded by a new server of bin: its DBSIZE. */
static long long load_spool(const char *bin, struct inst_repl_snap *snap, uint64_t size)
{
	struct server s2;
	char dir[160], path[200], *buf = xmalloc(size ? size : 1);
	int fd;
	long long n;

	snprintf(dir, sizeof(dir), "%s/load%d-%d", base_dir, (int)getpid(), seq++);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/dump.rdb", dir);
	ck_assert_int_eq(pread(inst_repl_snap_fd(snap), buf, size, 0), (ssize_t)size);
	ck_assert_int_eq(memcmp(buf, "REDIS", 5), 0);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, buf, size), (ssize_t)size);
	close(fd);
	free(buf);
	server_start(&s2, bin, dir);
	{
		struct vk_conn *c = conn(&s2, 2000);

		n = dbsize(c);
		vk_conn_free(c);
	}
	server_stop(&s2);
	return n;
}

/* Once the upload says everything is sent, the spool holds no data block. */
static void punched_out(struct inst_repl_snap *snap, uint64_t size)
{
	struct stat st;
	uint64_t have;
	bool final;

	ck_assert(!inst_repl_snap_consumed(snap));
	ck_assert_int_eq(inst_repl_snap_avail(snap, size, size, &have, &final, NULL), 0);
	ck_assert(final && have == size);
	ck_assert(inst_repl_snap_consumed(snap));
	ck_assert_int_eq(fstat(inst_repl_snap_fd(snap), &st), 0);
	ck_assert_msg(st.st_blocks * 512 < 64 * 1024, "%lld bytes still allocated of %llu",
	              (long long)st.st_blocks * 512, (unsigned long long)size);
}

START_TEST(repl_stream)
{
	const char *bin = engines[_i / 2];
	bool diskless = _i % 2;
	struct server s;
	struct vk_conn *c;
	struct inst_repl_snap *snap = NULL;
	struct inst_repl_conf cf;
	struct vk_info info;
	struct err e = { 0 };
	uint64_t size;

	if (skip_missing(bin))
		return;
	server_start(&s, bin, NULL);
	c = conn(&s, 5000);
	fill(c);
	cmd_ok(c, "CONFIG", "SET", "repl-diskless-sync-delay", "0"); /* the test's own server */
	cmd_ok(c, "CONFIG", "SET", "repl-diskless-sync", diskless ? "yes" : "no");
	cf = repl_conf(&s, diskless);
	ck_assert_msg(inst_repl_snapshot(&cf, NULL, &snap, &e) == 0, "%s: %s", bin, e.msg);
	size = drain(snap);
	ck_assert_int_eq(vk_info(c, "replication", &info, NULL), 0);
	ck_assert_str_eq(inst_repl_snap_replid(snap), info.master_replid);
	ck_assert_int_le(inst_repl_snap_offset(snap), info.master_repl_offset);
	ck_assert_int_eq(load_spool(bin, snap, size), KEYS);
	punched_out(snap, size);
	inst_repl_snap_free(snap);
	vk_conn_free(c);
	server_stop(&s);
}
END_TEST

static bool write_refused(struct vk_conn *w)
{
	struct err e = { 0 };
	long long acked = -1;
	int rc = vk_command(w, NULL, &e, "SET", "guard", "x");

	ck_assert_int_eq(vk_wait(w, 1, 100, &acked, NULL), 0);
	ck_assert_int_eq(acked, 0);
	return rc != 0 && strstr(e.msg, "NOREPLICAS");
}

START_TEST(repl_not_a_replica)
{
	const char *bin = engines[_i];
	struct server s;
	struct vk_conn *c, *w;
	struct inst_repl_snap *snap = NULL;
	struct inst_repl_conf cf;
	struct vk_info info;
	struct err e = { 0 };
	uint64_t have = 0;
	bool final = false;
	int during = 0;
	int64_t deadline;

	if (skip_missing(bin))
		return;
	server_start(&s, bin, NULL);
	c = conn(&s, 5000);
	w = conn(&s, 5000);
	fill(c);
	cmd_ok(c, "CONFIG", "SET", "repl-diskless-sync-delay", "0");
	cmd_ok(c, "CONFIG", "SET", "rdb-key-save-delay", "300"); /* µs per key: about 1 s */
	cmd_ok(c, "CONFIG", "SET", "min-replicas-to-write", "1");
	cf = repl_conf(&s, true);
	ck_assert_msg(inst_repl_snapshot(&cf, NULL, &snap, &e) == 0, "%s: %s", bin, e.msg);
	while (!final) {
		ck_assert_msg(write_refused(w), "%s: a write accepted during our transfer", bin);
		during++;
		ck_assert_int_eq(inst_repl_snap_avail(snap, 0, have + 1, &have, &final, &e), 0);
	}
	ck_assert_int_gt(during, 3);
	ck_assert_msg(inst_repl_snap_dropped(snap), "%s did not drop the rdb-only replica", bin);
	deadline = clock_mono_ms() + 5000;
	do {
		ck_assert_msg(write_refused(w), "%s: a write accepted after our transfer", bin);
		ck_assert_int_eq(vk_info(c, "replication", &info, NULL), 0);
		ck_assert(clock_mono_ms() < deadline);
	} while (info.connected_slaves != 0);
	inst_repl_snap_free(snap);
	ck_assert_msg(write_refused(w), "%s: a write accepted after the close", bin);
	vk_conn_free(w);
	vk_conn_free(c);
	server_stop(&s);
}
END_TEST

/* An AOF rewrite of about 1 s running on a filled server. */
static struct vk_conn *rewriting(struct server *s, const char *bin)
{
	struct vk_conn *c;
	struct vk_info info;

	server_start(s, bin, NULL);
	c = conn(s, 5000);
	fill(c);
	cmd_ok(c, "CONFIG", "SET", "appendonly", "yes");
	do /* the rewrite that appendonly yes starts */
		ck_assert_int_eq(vk_info(c, "persistence", &info, NULL), 0);
	while (info.aof_rewrite_in_progress && !usleep(20000));
	cmd_ok(c, "CONFIG", "SET", "rdb-key-save-delay", "300");
	ck_assert_int_eq(vk_command(c, NULL, NULL, "BGREWRITEAOF"), 0);
	return c;
}

START_TEST(repl_during_rewrite)
{
	const char *bin = engines[_i];
	struct server s;
	struct vk_conn *c;
	struct inst_repl_snap *snap = NULL;
	struct inst_repl_conf cf;
	struct err e = { 0 };
	uint64_t size;

	if (skip_missing(bin))
		return;
	c = rewriting(&s, bin);
	cmd_ok(c, "CONFIG", "SET", "repl-diskless-sync-delay", "0");
	cf = repl_conf(&s, true);
	ck_assert_msg(inst_repl_snapshot(&cf, NULL, &snap, &e) == 0, "%s: %s", bin, e.msg);
	cmd_ok(c, "CONFIG", "SET", "rdb-key-save-delay", "0");
	size = drain(snap);
	ck_assert_int_eq(load_spool(bin, snap, size), KEYS);
	inst_repl_snap_free(snap);
	vk_conn_free(c);
	server_stop(&s);
}
END_TEST

START_TEST(bgsave_during_rewrite)
{
	const char *bin = engines[_i];
	struct server s;
	struct vk_conn *c;
	struct vk_info info;
	struct err e = { 0 };
	int rc;

	if (skip_missing(bin))
		return;
	c = rewriting(&s, bin);
	rc = inst_bgsave(c, NULL, 100, &e);
	ck_assert_msg(rc == -EBUSY && strstr(e.msg, "an AOF rewrite still runs"), "%s: %d %s", bin,
	              rc, e.msg);
	ck_assert_int_eq(vk_info(c, "persistence", &info, NULL), 0);
	ck_assert(info.aof_rewrite_in_progress); /* the bound ended the wait, not the rewrite */
	cmd_ok(c, "CONFIG", "SET", "rdb-key-save-delay", "0");
	err_clear(&e);
	rc = inst_bgsave(c, NULL, 60000, &e);
	ck_assert_msg(rc == 0, "%s: %s", bin, e.msg);
	ck_assert_int_eq(vk_info(c, "persistence", &info, NULL), 0);
	ck_assert(!info.rdb_bgsave_in_progress && !info.rdb_last_bgsave_failed);
	vk_conn_free(c);
	server_stop(&s);
}
END_TEST

START_TEST(parse_handshake)
{
	char id[48], mark[40];
	int64_t off = -1;
	uint64_t len = 0;
	bool eof = false;
	struct err e = { 0 };

	ck_assert_int_eq(
	        inst_repl_parse_fullresync(
	                "+FULLRESYNC ab0532335b0441530e8ccc4af1889acca8e0b646 180", id, &off, &e),
	        0);
	ck_assert_str_eq(id, "ab0532335b0441530e8ccc4af1889acca8e0b646");
	ck_assert_int_eq(off, 180);
	ck_assert_int_eq(inst_repl_parse_fullresync("+CONTINUE", id, &off, &e), -EPROTO);
	ck_assert_int_eq(inst_repl_parse_fullresync("+FULLRESYNC short 1", id, &off, &e), -EPROTO);
	ck_assert_int_eq(
	        inst_repl_parse_fullresync(
	                "+FULLRESYNC ab0532335b0441530e8ccc4af1889acca8e0b646 1 x", id, &off, &e),
	        -EPROTO);
	ck_assert_int_eq(inst_repl_parse_bulk("$EOF:94c6264a6820a310dc0802c414038dddbaff751a", &eof,
	                                      mark, &len, &e),
	                 0);
	ck_assert(eof);
	ck_assert_int_eq(memcmp(mark, "94c6264a6820a310dc0802c414038dddbaff751a", 40), 0);
	ck_assert_int_eq(inst_repl_parse_bulk("$1039077", &eof, mark, &len, &e), 0);
	ck_assert(!eof);
	ck_assert_int_eq(len, 1039077);
	ck_assert_int_eq(inst_repl_parse_bulk("$EOF:short", &eof, mark, &len, &e), -EPROTO);
	ck_assert_int_eq(inst_repl_parse_bulk("$-1", &eof, mark, &len, &e), -EPROTO);
	err_clear(&e);
	ck_assert_int_eq(inst_repl_parse_bulk("$12x", &eof, mark, &len, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "$12x"));
}
END_TEST

START_TEST(diskless_choice)
{
	ck_assert(!inst_repl_diskless(false, 0, 1LL << 40));
	ck_assert(inst_repl_diskless(true, 0, 0));
	ck_assert(!inst_repl_diskless(true, 5, 5 * INST_REPL_BYTES_PER_DELAY_S - 1));
	ck_assert(inst_repl_diskless(true, 5, 5 * INST_REPL_BYTES_PER_DELAY_S));
}
END_TEST

static Suite *backup_live_suite(void)
{
	Suite *s = suite_create("instance_backup_live");
	TCase *pure = tcase_create("pure");
	TCase *tc = tcase_create("servers");

	tcase_add_test(pure, parse_handshake);
	tcase_add_test(pure, diskless_choice);
	suite_add_tcase(s, pure);
	tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, repl_stream, 0, 2 * ARRAY_LEN(engines));
	tcase_add_loop_test(tc, repl_not_a_replica, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, repl_during_rewrite, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, bgsave_during_rewrite, 0, ARRAY_LEN(engines));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(backup_live_suite)

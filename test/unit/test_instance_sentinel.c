/*
 * Unit tests for instance/sentinel (sentinel_conf.c): the sentinel.conf golden file and
 * its refusals, the master address flag, the parsers of SENTINEL MASTER (a reply
 * recorded from redis-sentinel 7.0.15, plus the flags a failover shows) and SENTINEL
 * CKQUORUM, and the runtime re-assertion commands.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "instance/sentinel.h"
#include "instance/settings.h"
#include "lib/buf.h"
#include "testutil.h"
#include "unit.h"

#define GOLDEN_DIR "test/data/instance/sentinel/"

static struct inst_sentinel_conf base(void)
{
	return (struct inst_sentinel_conf){ .port = 26379,
		                            .bind = "0.0.0.0",
		                            .dir = "/data",
		                            .announce_ip = "10.1.2.3",
		                            .master_host = "10.1.2.4",
		                            .master_port = 6379,
		                            .quorum = 2,
		                            .down_after_ms = 5000,
		                            .failover_timeout_ms = 180000,
		                            .parallel_syncs = 1,
		                            .auth_user = "redis-operator",
		                            .auth_pass = "op pw \"quoted\"",
		                            .requirepass = "default-pw" };
}

START_TEST(render_golden)
{
	struct inst_sentinel_conf c = base();
	struct buf out = BUF_INIT(INST_SENTINEL_CONF_MAX);
	struct err e = { 0 };

	ck_assert_int_eq(inst_sentinel_render(&c, &out, &e), 0);
	tu_golden(GOLDEN_DIR, "sentinel.conf.golden", buf_cstr(&out));
	buf_release(&out);
}
END_TEST

START_TEST(render_minimal)
{
	struct inst_sentinel_conf c = base();
	struct buf out = BUF_INIT(INST_SENTINEL_CONF_MAX);
	struct err e = { 0 };

	c.announce_ip = "";
	c.bind = NULL;
	c.auth_pass = c.requirepass = NULL;
	ck_assert_int_eq(inst_sentinel_render(&c, &out, &e), 0);
	tu_golden(GOLDEN_DIR, "sentinel-minimal.conf.golden", buf_cstr(&out));
	ck_assert_ptr_null(strstr(buf_cstr(&out), "pass"));
	ck_assert_ptr_null(strstr(buf_cstr(&out), "announce-ip"));
	buf_release(&out);
}
END_TEST

/* TLS on: port 0, tls-port, the three files, tls-replication (to the data pods and the
 * other sentinels). */
START_TEST(render_tls)
{
	struct inst_sentinel_conf c = base();
	struct buf out = BUF_INIT(INST_SENTINEL_CONF_MAX);
	struct err e = { 0 };

	c.tls_cert = "/etc/redis-operator/tls/tls.crt";
	c.tls_key = "/etc/redis-operator/tls/tls.key";
	c.tls_ca = "/etc/redis-operator/tls/ca.crt";
	ck_assert_int_eq(inst_sentinel_render(&c, &out, &e), 0);
	tu_golden(GOLDEN_DIR, "sentinel-tls.conf.golden", buf_cstr(&out));
	buf_release(&out);
}
END_TEST

static void no_host(struct inst_sentinel_conf *c)
{
	c->master_host = "";
}
static void bad_host(struct inst_sentinel_conf *c)
{
	c->master_host = "10.0.0.1 6380";
}
static void bad_port(struct inst_sentinel_conf *c)
{
	c->master_port = 0;
}
static void bad_quorum(struct inst_sentinel_conf *c)
{
	c->quorum = 0;
}
static void bad_down(struct inst_sentinel_conf *c)
{
	c->down_after_ms = 0;
}
static void bad_syncs(struct inst_sentinel_conf *c)
{
	c->parallel_syncs = 0;
}
static void bad_announce(struct inst_sentinel_conf *c)
{
	c->announce_ip = "a\nb";
}
static void bad_own_port(struct inst_sentinel_conf *c)
{
	c->port = 70000;
}

static void half_tls(struct inst_sentinel_conf *c)
{
	c->tls_cert = "/tls/tls.crt";
	c->tls_key = "/tls/tls.key";
}

static const struct {
	void (*mod)(struct inst_sentinel_conf *);
	const char *msg;
} bad[] = {
	{ no_host, "master host: \"\" is not an address" },
	{ bad_host, "master host: \"10.0.0.1 6380\" is not an address" },
	{ bad_port, "master port: 0 is out of range [1, 65535]" },
	{ bad_quorum, "sentinel.quorum: 0 is out of range [1, 64]" },
	{ bad_down, "sentinel.downAfter: 0 is out of range [1, 2147483647]" },
	{ bad_syncs, "sentinel.parallelSyncs: 0 is out of range [1, 64]" },
	{ bad_announce, "announce ip: \"a\nb\" is not an address" },
	{ bad_own_port, "sentinel port: 70000 is out of range [1, 65535]" },
	{ half_tls, "sentinel TLS: tls.crt, tls.key and ca.crt go together" },
};

START_TEST(render_refused)
{
	struct inst_sentinel_conf c = base();
	struct buf out = BUF_INIT(INST_SENTINEL_CONF_MAX);
	struct err e = { 0 };

	bad[_i].mod(&c);
	ck_assert_int_eq(inst_sentinel_render(&c, &out, &e), -EINVAL);
	ck_assert_str_eq(e.msg, bad[_i].msg);
	ck_assert_uint_eq(out.len, 0);
	buf_release(&out);
}
END_TEST

START_TEST(render_too_big)
{
	struct inst_sentinel_conf c = base();
	struct buf out = BUF_INIT(64);
	struct err e = { 0 };

	ck_assert_int_eq(inst_sentinel_render(&c, &out, &e), -ENOSPC);
	buf_release(&out);
}
END_TEST

static const struct {
	const char *in, *host;
	int port, rc;
} addrs[] = {
	{ "10.0.0.5:6379", "10.0.0.5", 6379, 0 }, { "cache-0.ns.svc:1", "cache-0.ns.svc", 1, 0 },
	{ "10.0.0.5", NULL, 0, -EINVAL },         { ":6379", NULL, 0, -EINVAL },
	{ "10.0.0.5:0", NULL, 0, -EINVAL },       { "10.0.0.5:65536", NULL, 0, -EINVAL },
	{ "10.0.0.5:63x", NULL, 0, -EINVAL },     { "10 0.0.5:6379", NULL, 0, -EINVAL },
};

START_TEST(parse_addr)
{
	char host[64] = "unchanged";
	int port = -7;
	struct err e = { 0 };
	int rc = inst_sentinel_parse_addr(addrs[_i].in, host, sizeof(host), &port, &e);

	ck_assert_int_eq(rc, addrs[_i].rc);
	if (rc == 0) {
		ck_assert_str_eq(host, addrs[_i].host);
		ck_assert_int_eq(port, addrs[_i].port);
	} else {
		ck_assert_str_eq(host, "unchanged");
		ck_assert_int_eq(port, -7);
		ck_assert_ptr_nonnull(strstr(e.msg, "is not host:port"));
	}
}
END_TEST

/* A RESP array of bulk strings from NULL-terminated pairs. */
static struct vk_reply *resp_array(const char *const *v)
{
	struct buf b = BUF_INIT(1 << 16);
	struct vk_reply *r = NULL;
	size_t n = 0;

	while (v[n])
		n++;
	buf_printf(&b, "*%zu\r\n", n);
	for (size_t i = 0; i < n; i++)
		buf_printf(&b, "$%zu\r\n%s\r\n", strlen(v[i]), v[i]);
	ck_assert_int_eq(vk_reply_decode(b.data, b.len, &r, NULL), 0);
	buf_release(&b);
	return r;
}

/* Recorded from redis-sentinel 7.0.15 (SENTINEL MASTER mymaster), flags replaced. */
#define MASTER_REPLY(flags)                                                                        \
	"name", "mymaster", "ip", "127.0.0.1", "port", "28901", "runid",                           \
	        "131eaf0522522b7c39ec6f8f9b12a56bfac573d4", "flags", flags,                        \
	        "link-pending-commands", "0", "link-refcount", "1", "last-ping-sent", "0",         \
	        "last-ok-ping-reply", "494", "last-ping-reply", "494", "down-after-milliseconds",  \
	        "1000", "info-refresh", "1505", "role-reported", "master", "role-reported-time",   \
	        "1519", "config-epoch", "3", "num-slaves", "2", "num-other-sentinels", "2",        \
	        "quorum", "2", "failover-timeout", "180000", "parallel-syncs", "1"

static const struct {
	const char *flags, *status;
	bool failover;
} flag_cases[] = {
	{ "master", API_INST_MASTER_OK, false },
	{ "s_down,master", API_INST_MASTER_SDOWN, false },
	{ "s_down,o_down,master", API_INST_MASTER_ODOWN, false },
	{ "s_down,o_down,master,failover_in_progress", API_INST_MASTER_ODOWN, true },
	{ "master,disconnected", API_INST_MASTER_OK, false },
	{ "slave", API_INST_MASTER_UNKNOWN, false },
};

START_TEST(parse_master)
{
	const char *const v[] = { MASTER_REPLY(flag_cases[_i].flags), NULL };
	struct vk_reply *r = resp_array(v);
	struct inst_sentinel_master m;
	struct err e = { 0 };

	ck_assert_int_eq(inst_sentinel_parse_master(r, &m, &e), 0);
	ck_assert_str_eq(m.host, "127.0.0.1");
	ck_assert_int_eq(m.port, 28901);
	ck_assert_str_eq(m.status, flag_cases[_i].status);
	ck_assert(m.failover_in_progress == flag_cases[_i].failover);
	ck_assert_int_eq(m.config_epoch, 3);
	ck_assert_int_eq(m.quorum, 2);
	ck_assert_int_eq(m.other_sentinels, 2);
	ck_assert_int_eq(m.replicas, 2);
	ck_assert_str_eq(m.failover_state, "");
	vk_reply_free(r);
}
END_TEST

static const char *const bad_master[][8] = {
	{ "ip", "127.0.0.1", "port", "6379", NULL },    /* no flags */
	{ "ip", "127.0.0.1", "flags", "master", NULL }, /* no port */
	{ "port", "6379", "flags", "master", NULL },    /* no ip */
	{ "ip", "127.0.0.1", "port", "99999", "flags", "master", NULL },
	{ "ip", "127.0.0.1", "port", "6379", "flags", NULL }, /* odd */
};

START_TEST(parse_master_malformed)
{
	struct vk_reply *r = resp_array(bad_master[_i]);
	struct inst_sentinel_master m = { .port = 42 };
	struct err e = { 0 };

	ck_assert_int_eq(inst_sentinel_parse_master(r, &m, &e), -EPROTO);
	ck_assert_int_eq(m.port, 42);
	ck_assert_ptr_nonnull(strstr(e.msg, "SENTINEL MASTER"));
	vk_reply_free(r);
}
END_TEST

START_TEST(parse_master_not_array)
{
	struct vk_reply *r = NULL;
	struct inst_sentinel_master m;

	ck_assert_int_eq(vk_reply_decode("-ERR No such master with that name\r\n", 36, &r, NULL),
	                 0);
	ck_assert_int_eq(inst_sentinel_parse_master(r, &m, NULL), -EPROTO);
	vk_reply_free(r);
}
END_TEST

START_TEST(quorum)
{
	static const char ok[] = "+OK 3 usable Sentinels. Quorum and failover authorization "
	                         "can be reached\r\n";
	static const char bulk[] = "$2\r\nOK\r\n";
	struct vk_reply *r = NULL;
	char why[128];

	ck_assert_int_eq(vk_reply_decode(ok, strlen(ok), &r, NULL), 0);
	ck_assert(inst_sentinel_quorum_ok(0, r, NULL, why, sizeof(why)));
	ck_assert_str_eq(why, "OK 3 usable Sentinels. Quorum and failover authorization can "
	                      "be reached");
	vk_reply_free(r);
	ck_assert_int_eq(vk_reply_decode(bulk, strlen(bulk), &r, NULL), 0);
	ck_assert(!inst_sentinel_quorum_ok(0, r, NULL, why, sizeof(why))); /* not a status */
	vk_reply_free(r);
	ck_assert(!inst_sentinel_quorum_ok(-EPROTO, NULL,
	                                   "NOQUORUM 1 usable Sentinels. Not enough available "
	                                   "Sentinels to reach the majority",
	                                   why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "NOQUORUM 1 usable"));
	ck_assert(!inst_sentinel_quorum_ok(-EIO, NULL, NULL, why, sizeof(why)));
	ck_assert_str_eq(why, "no answer");
}
END_TEST

START_TEST(live_cmds)
{
	struct inst_sentinel_conf c = base();
	struct inst_sentinel_live l;
	struct buf all = BUF_INIT(4096);

	inst_sentinel_live_cmds(&c, &l);
	ck_assert_uint_eq(l.n, 7);
	for (size_t i = 0; i < l.n; i++) {
		for (int j = 0; j < l.argc[i]; j++)
			buf_printf(&all, "%s%s", j ? " " : "",
			           l.secret[i] && j == 4 ? "***" : l.argv[i][j]);
		buf_append_char(&all, '\n');
		ck_assert(l.secret[i] == (strcmp(l.argv[i][3], "auth-pass") == 0));
	}
	ck_assert_str_eq(buf_cstr(&all), "SENTINEL CONFIG SET announce-ip 10.1.2.3\n"
	                                 "SENTINEL SET mymaster quorum 2\n"
	                                 "SENTINEL SET mymaster down-after-milliseconds 5000\n"
	                                 "SENTINEL SET mymaster failover-timeout 180000\n"
	                                 "SENTINEL SET mymaster parallel-syncs 1\n"
	                                 "SENTINEL SET mymaster auth-user redis-operator\n"
	                                 "SENTINEL SET mymaster auth-pass ***\n");
	ck_assert_str_eq(l.argv[6][4], "op pw \"quoted\"");
	c.announce_ip = NULL;
	c.auth_user = c.auth_pass = NULL;
	inst_sentinel_live_cmds(&c, &l);
	ck_assert_uint_eq(l.n, 4);
	buf_release(&all);
}
END_TEST

/* sentinel-pass is asserted only when given (not while a rotation runs), as a secret. */
START_TEST(live_sentinel_pass)
{
	struct inst_sentinel_conf c = base();
	struct inst_sentinel_live l;

	c.sentinel_pass = "new pw";
	inst_sentinel_live_cmds(&c, &l);
	ck_assert_uint_eq(l.n, 8);
	ck_assert_str_eq(l.argv[7][3], "sentinel-pass");
	ck_assert_str_eq(l.argv[7][4], "new pw");
	ck_assert(l.secret[7]);
}
END_TEST

/* The default user's line replaces every `user default` line Sentinel wrote (never a
 * second one: a duplicate user stops the load) and keeps everything else. */
static const struct {
	const char *in, *want;
} user_lines[] = {
	{ "port 26379\nrequirepass \"old\"\n",
	  "port 26379\nrequirepass \"old\"\nuser default reset on #h1 #h2 ~* &* +@all\n" },
	{ "port 26379\nuser default on #h0 ~* &* +@all\nsentinel myid x\n",
	  "port 26379\nsentinel myid x\nuser default reset on #h1 #h2 ~* &* +@all\n" },
	{ "user defaults-are-not-this on\nuser default\nport 1",
	  "user defaults-are-not-this on\nport 1\nuser default reset on #h1 #h2 ~* &* +@all\n" },
	{ "", "user default reset on #h1 #h2 ~* &* +@all\n" },
};

START_TEST(conf_user)
{
	static const char *const rules[] = { "reset", "on", "#h1", "#h2", "~*", "&*", "+@all" };
	struct buf out = BUF_INIT(INST_SENTINEL_CONF_MAX), tiny = BUF_INIT(8);
	struct err e = { 0 };
	const char *in = user_lines[_i].in;

	ck_assert_int_eq(inst_sentinel_conf_user(in, strlen(in), rules, ARRAY_LEN(rules), &out, &e),
	                 0);
	ck_assert_str_eq(buf_cstr(&out), user_lines[_i].want);
	ck_assert_int_eq(
	        inst_sentinel_conf_user(in, strlen(in), rules, ARRAY_LEN(rules), &tiny, &e),
	        -ENOSPC);
	buf_release(&out);
	buf_release(&tiny);
}
END_TEST

START_TEST(contract_names)
{
	ck_assert_str_eq(API_INST_SENTINEL_MASTER_ENV, INST_ENV_PREFIX "SENTINEL_MASTER");
	ck_assert_int_eq(API_PORT_SENTINEL, 26379);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_sentinel");
	TCase *t = tcase_create("sentinel");

	tcase_add_test(t, render_golden);
	tcase_add_test(t, render_minimal);
	tcase_add_test(t, render_tls);
	tcase_add_loop_test(t, render_refused, 0, ARRAY_LEN(bad));
	tcase_add_test(t, render_too_big);
	tcase_add_loop_test(t, parse_addr, 0, ARRAY_LEN(addrs));
	tcase_add_loop_test(t, parse_master, 0, ARRAY_LEN(flag_cases));
	tcase_add_loop_test(t, parse_master_malformed, 0, ARRAY_LEN(bad_master));
	tcase_add_test(t, parse_master_not_array);
	tcase_add_test(t, quorum);
	tcase_add_test(t, live_cmds);
	tcase_add_test(t, live_sentinel_pass);
	tcase_add_loop_test(t, conf_user, 0, ARRAY_LEN(user_lines));
	tcase_add_test(t, contract_names);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

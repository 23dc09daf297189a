/*
 * Unit tests for instance/request: a table of request bodies per operation, good and
 * bad, with the HTTP-facing errno and a fragment the message must contain (the field
 * name), plus the decoded values of the good ones and the path → operation table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "instance/request.h"
#include "unit.h"

/* A /v1/config body with one user "a" whose rules are the JSON strings r. */
#define RULES(r) "{\"users\":[{\"name\":\"a\",\"rules\":[" r "]}]}"

static const struct {
	enum inst_op op;
	const char *body;
	int want;
	const char *msg; /* substring of the error, or NULL */
} cases[] = {
	{ INST_OP_FENCE, "", 0, NULL },
	{ INST_OP_FENCE, "{}", 0, NULL },
	{ INST_OP_FENCE, "{\"reason\":\"maintenance\"}", 0, NULL },
	{ INST_OP_FENCE, "{\"reason\":7}", -EINVAL, "reason" },
	{ INST_OP_FENCE, "{\"reason\":\"a\\nb\"}", -EINVAL, "reason" },
	{ INST_OP_FENCE, "{\"why\":\"x\"}", -EINVAL, "why: unknown field" },
	{ INST_OP_FENCE, "[]", -EINVAL, "expected a JSON object" },
	{ INST_OP_FENCE, "\"x\"", -EPROTO, NULL },
	{ INST_OP_FENCE, "{", -EPROTO, NULL },
	{ INST_OP_FENCE, "{} {}", -EPROTO, NULL },
	{ INST_OP_FENCE, "{\"reason\":\"a\",\"reason\":\"b\"}", -EPROTO, NULL },
	{ INST_OP_UNFENCE, "{\"force\":true}", -EINVAL, "force: unknown field" },
	{ INST_OP_PROMOTE, "{\"force\":true}", 0, NULL },
	{ INST_OP_PROMOTE, "{\"force\":\"yes\"}", -EINVAL, "force" },
	{ INST_OP_REPLICATE, "{\"host\":\"10.0.0.5\",\"port\":6379}", 0, NULL },
	{ INST_OP_REPLICATE, "{\"host\":\"10.0.0.5\"}", -ENOENT, "port" },
	{ INST_OP_REPLICATE, "{\"port\":6379}", -ENOENT, "host" },
	{ INST_OP_REPLICATE, "{\"host\":\"10.0.0.5\",\"port\":70000}", -ERANGE, "port" },
	{ INST_OP_REPLICATE, "{\"host\":\"10.0.0.5\",\"port\":0}", -ERANGE, "port" },
	{ INST_OP_REPLICATE, "{\"host\":\"a b\",\"port\":1}", -EINVAL, "host" },
	{ INST_OP_REPLICATE, "{\"host\":\"\",\"port\":1}", -EINVAL, "host" },
	{ INST_OP_REPLICATE, "{\"host\":\"h/x\",\"port\":1}", -EINVAL, "host" },
	{ INST_OP_REPLICATE, "{\"host\":\"h\",\"port\":1.5}", -EINVAL, "port" },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"cache-2\"}", 0, NULL },
	{ INST_OP_SWITCHOVER, "{\"host\":\"10.0.0.6\",\"port\":6379,\"httpPort\":8001}", 0, NULL },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"cache-2\",\"timeout\":\"2s\"}", 0, NULL },
	{ INST_OP_SWITCHOVER, "{}", -EINVAL, "exactly one" },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"a\",\"host\":\"b\",\"port\":1}", -EINVAL, "exactly one" },
	{ INST_OP_SWITCHOVER, "{\"host\":\"b\"}", -ENOENT, "port" },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"Bad_Name\"}", -EINVAL, "pod" },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"a\",\"timeout\":\"soon\"}", -EINVAL, "timeout" },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"a\",\"timeout\":\"10m\"}", -EINVAL, "timeout" },
	{ INST_OP_SWITCHOVER, "{\"pod\":\"a\",\"httpPort\":-1}", -ERANGE, "httpPort" },
	{ INST_OP_CONFIG, "{}", 0, NULL },
	{ INST_OP_CONFIG,
	  "{\"redis\":{\"maxclients\":\"100\"},\"maxMemory\":\"256Mi\",\"maxMemoryPolicy\":"
	  "\"allkeys-lru\",\"minSyncReplicas\":1,\"users\":[{\"name\":\"alice\",\"rules\":["
	  "\"~a:*\",\"+get\"]}],\"dropOldPasswords\":true}",
	  0, NULL },
	{ INST_OP_CONFIG, "{\"redis\":{\"port\":\"1\"}}", -EINVAL, "redis.port" },
	{ INST_OP_CONFIG, "{\"redis\":{\"maxclients\":1}}", -EINVAL, "redis.maxclients" },
	{ INST_OP_CONFIG, "{\"redis\":{\"bad name\":\"1\"}}", -EINVAL, "redis" },
	{ INST_OP_CONFIG, "{\"redis\":{\"maxclients\":\"1\\n2\"}}", -EINVAL, "maxclients" },
	{ INST_OP_CONFIG, "{\"redis\":[]}", -EINVAL, "redis" },
	{ INST_OP_CONFIG, "{\"maxMemory\":\"lots\"}", -EINVAL, "maxMemory" },
	{ INST_OP_CONFIG, "{\"maxMemoryPolicy\":\"random\"}", -EINVAL, "maxMemoryPolicy" },
	{ INST_OP_CONFIG, "{\"minSyncReplicas\":64}", -ERANGE, "minSyncReplicas" },
	{ INST_OP_CONFIG, "{\"users\":{}}", -EINVAL, "users" },
	{ INST_OP_CONFIG, "{\"users\":[{\"rules\":[]}]}", -ENOENT, "users[0].name" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"default\"}]}", -EINVAL, "users[0].name" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"redis-operator\"}]}", -EINVAL, "name" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"a\",\"rules\":[\">pw\"]}]}", -EINVAL,
	  "users[0].rules[0]" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"a\",\"rules\":[\"nopass\"]}]}", -EINVAL,
	  "not allowed" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"a\",\"rules\":[\"+get set\"]}]}", -EINVAL,
	  "not allowed" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"a\",\"rules\":[1]}]}", -EINVAL, "expected" },
	/* Redis reads rule keywords in any case, so they are refused in any case */
	{ INST_OP_CONFIG, RULES("\"NoPass\""), -EINVAL,
	  "users[0].rules[0]: not allowed: lets any" },
	{ INST_OP_CONFIG, RULES("\"~a:*\",\"NOPASS\""), -EINVAL, "users[0].rules[1]: not allowed" },
	{ INST_OP_CONFIG, RULES("\"nOpAsS\""), -EINVAL, "passwordSecrets" },
	{ INST_OP_CONFIG, RULES("\"RESETPASS\""), -EINVAL, "removes the passwords" },
	{ INST_OP_CONFIG, RULES("\"ResetPass\""), -EINVAL, "removes the passwords" },
	{ INST_OP_CONFIG, RULES("\"Reset\""), -EINVAL, "resets the user" },
	{ INST_OP_CONFIG, RULES("\"On\""), -EINVAL, "on/off state; use enabled" },
	{ INST_OP_CONFIG, RULES("\"ON\""), -EINVAL, "on/off state" },
	{ INST_OP_CONFIG, RULES("\"oFF\""), -EINVAL, "on/off state" },
	/* a selector would escape the deny list; ACL SETUSER joins "(a" … "b)" into one */
	{ INST_OP_CONFIG, RULES("\"+get\",\"(+@all)\""), -EINVAL,
	  "users[0].rules[1]: not allowed: a selector" },
	{ INST_OP_CONFIG, RULES("\"(+@all\",\"~*)\""), -EINVAL,
	  "users[0].rules[0]: not allowed: a selector" },
	{ INST_OP_CONFIG, RULES("\"(~*\",\"+config)\""), -EINVAL, "rules[0]: not allowed" },
	{ INST_OP_CONFIG, RULES("\"()\""), -EINVAL, "selector" },
	{ INST_OP_CONFIG, RULES("\"+get (+@all)\""), -EINVAL, "one rule per element" },
	{ INST_OP_CONFIG, RULES("\"+get\\u00a0x\""), -EINVAL, "non-ASCII" },
	/* grants of any strength are fine: the deny list comes after them */
	{ INST_OP_CONFIG,
	  RULES("\"allcommands\",\"+@all\",\"+ACL\",\"+config|set\",\"+client|kill\","
	        "\"resetkeys\",\"%RW~*\",\"allchannels\",\"clearselectors\",\"~x)\","
	        "\"~(x\",\"~nopass\",\"resetkeys\",\"resetchannels\""),
	  0, NULL },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"Redis-Operator\"}]}", 0, NULL },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"a\",\"password\":\"x\"}]}", -EINVAL,
	  "users[0].password: unknown field" },
	{ INST_OP_CONFIG, "{\"users\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", -EINVAL, "twice" },
	{ INST_OP_CONFIG, "{\"dropOldPasswords\":1}", -EINVAL, "dropOldPasswords" },
	{ INST_OP_CONFIG, "{\"reload\":\"yes\"}", -EINVAL, "reload" },
	{ INST_OP_RESTART, "{\"now\":true}", -EINVAL, "now: unknown field" },
	{ INST_OP_COUNT, "{}", -EINVAL, "unknown operation" },
};

START_TEST(parse_table)
{
	struct inst_request r;
	struct err e = { 0 };
	int rc = inst_request_parse(cases[_i].op, cases[_i].body, strlen(cases[_i].body), &r, &e);

	ck_assert_msg(rc == cases[_i].want, "case %d %s: got %d (%s) want %d", _i, cases[_i].body,
	              rc, e.msg, cases[_i].want);
	if (rc == 0)
		inst_request_release(&r);
	else
		ck_assert_msg(!cases[_i].msg || strstr(e.msg, cases[_i].msg), "case %d: message %s",
		              _i, e.msg);
}
END_TEST

START_TEST(decoded_values)
{
	const char *sw = "{\"host\":\"10.0.0.6\",\"port\":6380,\"timeout\":\"1.5s\"}";
	const char *cfg = "{\"redis\":{\"b\":\"2\",\"a\":\"1\"},\"maxMemory\":\"1Gi\","
	                  "\"users\":[{\"name\":\"z\"},{\"name\":\"y\",\"enabled\":false}],"
	                  "\"dropOldPasswords\":true,\"reload\":true}";
	struct inst_request r;

	ck_assert_int_eq(inst_request_parse(INST_OP_SWITCHOVER, sw, strlen(sw), &r, NULL), 0);
	ck_assert_str_eq(r.host, "10.0.0.6");
	ck_assert_int_eq(r.port, 6380);
	ck_assert_int_eq(r.http_port, INST_HTTP_PORT_DEFAULT);
	ck_assert_int_eq(r.timeout_ms, 1500);
	inst_request_release(&r);
	ck_assert_int_eq(inst_request_parse(INST_OP_CONFIG, cfg, strlen(cfg), &r, NULL), 0);
	ck_assert(r.has_config && r.drop_old_passwords && r.reload);
	ck_assert_uint_eq(r.config.nredis, 2);
	ck_assert_str_eq(r.config.redis[0].name, "a"); /* sorted */
	ck_assert_uint_eq(r.config.maxmemory, 1ULL << 30);
	ck_assert_str_eq(r.config.users[0].name, "y");
	ck_assert(!r.config.users[0].enabled && r.config.users[1].enabled);
	inst_request_release(&r);
}
END_TEST

START_TEST(body_cap)
{
	size_t n = INST_HTTP_BODY_MAX + 1;
	char *big = malloc(n + 1);
	struct inst_request r;
	struct err e = { 0 };

	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	ck_assert_int_eq(inst_request_parse(INST_OP_FENCE, big, n, &r, &e), -EMSGSIZE);
	ck_assert_int_eq(inst_request_parse(INST_OP_FENCE, big, n - 2, &r, &e), -EPROTO);
	free(big);
}
END_TEST

START_TEST(paths)
{
	ck_assert_int_eq(inst_op_from_path("/v1/fence"), INST_OP_FENCE);
	ck_assert_int_eq(inst_op_from_path("/v1/switchover"), INST_OP_SWITCHOVER);
	ck_assert_int_eq(inst_op_from_path("/v1/restart"), INST_OP_RESTART);
	ck_assert_int_eq(inst_op_from_path("/v1/status"), -1);
	ck_assert_int_eq(inst_op_from_path("/v2/fence"), -1);
	ck_assert_int_eq(inst_op_from_path("/v1/fence/"), -1);
	ck_assert_str_eq(inst_op_name(INST_OP_CONFIG), "config");
	ck_assert_ptr_null(inst_op_name(INST_OP_COUNT));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_request");
	TCase *t = tcase_create("request");

	tcase_add_loop_test(t, parse_table, 0, ARRAY_LEN(cases));
	tcase_add_test(t, decoded_values);
	tcase_add_test(t, body_cap);
	tcase_add_test(t, paths);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

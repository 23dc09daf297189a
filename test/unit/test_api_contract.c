/*
 * Unit tests for the controller <-> instance contract (api/instance_v1.h, and
 * status.failover in api/rediscluster.h): for every type, a struct encoded then decoded
 * comes back equal, and a malformed body is refused with the field named. The instance
 * manager's own /v1/status goldens (test/data/instance/status-*.json, written by
 * test_instance_status from captured INFO) are decoded here and must encode back to the
 * same bytes: what one role writes, the other reads, through one pair of functions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backup_store.h"
#include "api/instance_v1.h"
#include "api/ports.h"
#include "api/rediscluster.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

/* j as the compact text the manager sends (sorted keys); j is consumed. */
static char *text_of(json_t *j)
{
	char *t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	ck_assert_ptr_nonnull(t);
	return t;
}

#define STR_EQ(a, b)                                                                               \
	ck_assert_msg(((a) == NULL) == ((b) == NULL) && (!(a) || !strcmp((a), (b))),               \
	              "%s: %s != %s", #a, (a) ? (a) : "(null)", (b) ? (b) : "(null)")

/* --- GET /v1/status ------------------------------------------------------------------------- */

static struct api_inst_replica replicas[] = {
	{ "10.0.0.6", 6379, "online", 1000, 0, 1 },
	{ "10.0.0.7", 6380, "wait_bgsave", 400, 600, 3 },
};

static struct api_inst_status full_status(void)
{
	return (struct api_inst_status){
		.pod = "cache-1",
		.state = API_INST_STATE_PRIMARY,
		.role = API_INST_ROLE_PRIMARY,
		.reason = "holds the lease",
		.ready = true,
		.not_ready_reason = NULL,
		.fenced = true,
		.fence_reason = "lease lost",
		.lease_held = true,
		.primary_crashed = true,
		.engine = "valkey",
		.version = "8.0.1",
		.session_id = "a98f3e12733c7340f8f4480ce4923ccd410cca07",
		.config_hash = "0123456789abcdef",
		.uptime_seconds = 61,
		.lease_renew_failures = 3,
		.http_tls = "https",
		.http_tls_error = "ca.crt missing",
		.server = { 42, true, 2, API_INST_ROLE_PRIMARY, true, true, 5, NULL },
		.has_replication = true,
		.replication = { "73a4c56d20aa7231a3f693d35400e7665ef9676c",
		                 "0000000000000000000000000000000000000000", 1000, 1000,
		                 API_INST_NULL, API_INST_LINK_NONE, "10.0.0.5", 6379, 7,
		                 API_INST_NULL, 2, replicas, ARRAY_LEN(replicas) },
	};
}

static void status_eq(const struct api_inst_status *a, const struct api_inst_status *b)
{
	const struct api_inst_replication *x = &a->replication, *y = &b->replication;

	STR_EQ(a->pod, b->pod);
	STR_EQ(a->state, b->state);
	STR_EQ(a->role, b->role);
	STR_EQ(a->reason, b->reason);
	STR_EQ(a->not_ready_reason, b->not_ready_reason);
	STR_EQ(a->fence_reason, b->fence_reason);
	STR_EQ(a->engine, b->engine);
	STR_EQ(a->version, b->version);
	STR_EQ(a->session_id, b->session_id);
	STR_EQ(a->config_hash, b->config_hash);
	STR_EQ(a->http_tls, b->http_tls);
	STR_EQ(a->http_tls_error, b->http_tls_error);
	ck_assert(a->ready == b->ready && a->fenced == b->fenced);
	ck_assert(a->lease_held == b->lease_held && a->primary_crashed == b->primary_crashed);
	ck_assert_int_eq(a->uptime_seconds, b->uptime_seconds);
	ck_assert_int_eq(a->lease_renew_failures, b->lease_renew_failures);
	ck_assert_int_eq(a->server.pid, b->server.pid);
	ck_assert(a->server.up == b->server.up && a->server.loading == b->server.loading);
	ck_assert(a->server.sync_in_progress == b->server.sync_in_progress);
	ck_assert_int_eq(a->server.restarts, b->server.restarts);
	ck_assert_int_eq(a->server.uptime_seconds, b->server.uptime_seconds);
	STR_EQ(a->server.role, b->server.role);
	STR_EQ(a->server.error, b->server.error);
	ck_assert(a->has_replication == b->has_replication);
	STR_EQ(x->repl_id, y->repl_id);
	STR_EQ(x->repl_id2, y->repl_id2);
	STR_EQ(x->link, y->link);
	STR_EQ(x->master_host, y->master_host);
	ck_assert_int_eq(x->offset, y->offset);
	ck_assert_int_eq(x->master_repl_offset, y->master_repl_offset);
	ck_assert_int_eq(x->second_offset, y->second_offset);
	ck_assert_int_eq(x->master_port, y->master_port);
	ck_assert_int_eq(x->lag_bytes, y->lag_bytes);
	ck_assert_int_eq(x->lag_seconds, y->lag_seconds);
	ck_assert_int_eq(x->connected_replicas, y->connected_replicas);
	ck_assert_uint_eq(x->n_replicas, y->n_replicas);
	for (size_t i = 0; i < x->n_replicas; i++) {
		STR_EQ(x->replicas[i].ip, y->replicas[i].ip);
		STR_EQ(x->replicas[i].state, y->replicas[i].state);
		ck_assert_int_eq(x->replicas[i].port, y->replicas[i].port);
		ck_assert_int_eq(x->replicas[i].offset, y->replicas[i].offset);
		ck_assert_int_eq(x->replicas[i].lag_bytes, y->replicas[i].lag_bytes);
		ck_assert_int_eq(x->replicas[i].lag_seconds, y->replicas[i].lag_seconds);
	}
}

START_TEST(status_round_trip)
{
	struct api_inst_status in = full_status(), out;
	char *text;

	if (_i == 1) { /* a server that does not answer: nulls everywhere they may be */
		in.fence_reason = in.engine = in.version = in.session_id = NULL;
		in.config_hash = in.http_tls_error = NULL;
		in.not_ready_reason = "server not answering";
		in.server = (struct api_inst_server){ API_INST_NULL,
			                              false,
			                              0,
			                              API_INST_ROLE_UNKNOWN,
			                              false,
			                              false,
			                              API_INST_NULL,
			                              "connection refused" };
		in.has_replication = false;
		memset(&in.replication, 0, sizeof(in.replication));
	}
	text = text_of(api_inst_status_encode(&in));
	ck_assert_int_eq(api_inst_status_decode(text, strlen(text), &out, NULL), 0);
	status_eq(&in, &out);
	api_inst_status_release(&out);
	api_inst_status_release(&out); /* zeroed: twice is fine */
	api_inst_status_release(NULL);
	free(text);
}
END_TEST

/* The manager's goldens, as the controller reads them: decoding then encoding is the
 * identity on the bytes, so no field is lost or retyped on the way. */
static const char *const status_goldens[] = {
	"test/data/instance/status-redis-primary.json",
	"test/data/instance/status-valkey-replica.json",
};

START_TEST(status_instance_goldens)
{
	size_t len = 0;
	char *want = tu_read_file(status_goldens[_i], &len), *got;
	struct api_inst_status s;
	struct err e = { 0 };

	ck_assert_ptr_nonnull(want);
	while (len && want[len - 1] == '\n')
		want[--len] = '\0';
	ck_assert_msg(api_inst_status_decode(want, len, &s, &e) == 0, "%s", e.msg);
	ck_assert(s.has_replication && s.http_tls);
	got = text_of(api_inst_status_encode(&s));
	ck_assert_str_eq(got, want);
	api_inst_status_release(&s);
	free(got);
	free(want);
}
END_TEST

#define MIN_STATUS "\"state\":\"primary\",\"role\":\"primary\",\"ready\":true,\"fenced\":false"

static const struct {
	const char *body;
	int rc;
	const char *field; /* a fragment of e.msg */
} bad_status[] = {
	{ "", -EPROTO, "" },
	{ "[1]", -EPROTO, "expected a JSON object" },
	{ "{" MIN_STATUS "}", -EPROTO, "server: required" },
	{ "{\"role\":\"primary\",\"ready\":true,\"fenced\":false,\"server\":{}}", -EPROTO,
	  "state: required" },
	{ "{" MIN_STATUS ",\"server\":[]}", -EPROTO, "server: expected object" },
	{ "{" MIN_STATUS ",\"ready\":\"yes\",\"server\":{}}", -EPROTO, "" },
	{ "{" MIN_STATUS ",\"server\":{\"up\":1}}", -EPROTO, "server.up: expected boolean" },
	{ "{" MIN_STATUS ",\"server\":{},\"replication\":{\"offset\":\"5\"}}", -EPROTO,
	  "replication.offset: expected integer" },
	{ "{" MIN_STATUS ",\"server\":{},\"replication\":{\"replicas\":[{\"port\":\"x\"}]}}",
	  -EPROTO, "replication.replicas[0].port" },
	{ "{" MIN_STATUS ",\"server\":{},\"replication\":{\"replicas\":[7]}}", -EPROTO,
	  "replication.replicas[0]: expected object" },
	{ "{" MIN_STATUS ",\"server\":{},\"httpTls\":false}", -EPROTO, "httpTls" },
};

START_TEST(status_malformed)
{
	struct api_inst_status s = { 0 };
	struct err e = { 0 };
	const char *b = bad_status[_i].body;

	ck_assert_int_eq(api_inst_status_decode(b, strlen(b), &s, &e), bad_status[_i].rc);
	ck_assert_msg(strstr(e.msg, bad_status[_i].field), "case %d: %s", _i, e.msg);
	ck_assert_ptr_null(s.json); /* out untouched */
}
END_TEST

/* An older manager: no httpTls, no leaseRenewFailures, nulls where it had none. */
START_TEST(status_older_manager)
{
	const char *b =
	        "{" MIN_STATUS ",\"server\":{\"up\":true,\"pid\":null},\"replication\":null}";
	struct api_inst_status s;

	ck_assert_int_eq(api_inst_status_decode(b, strlen(b), &s, NULL), 0);
	ck_assert_ptr_null(s.http_tls);
	ck_assert_int_eq(s.lease_renew_failures, 0);
	ck_assert_int_eq(s.server.pid, API_INST_NULL);
	ck_assert(s.server.up && !s.has_replication);
	api_inst_status_release(&s);
}
END_TEST

START_TEST(status_too_big)
{
	size_t n = API_INST_STATUS_BODY_MAX + 1;
	char *big = xmalloc(n);
	struct api_inst_status s;

	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	ck_assert_int_eq(api_inst_status_decode(big, n, &s, NULL), -EMSGSIZE);
	free(big);
}
END_TEST

/* --- POST /v1/<op> ------------------------------------------------------------------------------ */

static const char *rules_a[] = { "~a:*", "+get" };
static const char *rules_b[] = { "+@read" };
static struct api_user users[] = {
	{ .name = "alice", .enabled = true, .rules = rules_a, .n_rules = 2 },
	{ .name = "bob", .enabled = false, .rules = rules_b, .n_rules = 1 },
};

static void request_eq(const struct api_inst_request *a, const struct api_inst_request *b)
{
	const struct api_inst_config *x = &a->config, *y = &b->config;

	ck_assert_int_eq(a->op, b->op);
	STR_EQ(a->reason, b->reason);
	STR_EQ(a->host, b->host);
	STR_EQ(a->pod, b->pod);
	ck_assert(a->force == b->force);
	ck_assert_int_eq(a->port, b->port);
	ck_assert_int_eq(a->http_port, b->http_port);
	ck_assert_int_eq(a->timeout_ms, b->timeout_ms);
	ck_assert(json_equal(x->redis, y->redis) || (!x->redis && !json_object_size(y->redis)));
	ck_assert(x->has_max_memory == y->has_max_memory);
	ck_assert_uint_eq(x->max_memory, y->max_memory);
	ck_assert_int_eq(x->max_memory_policy, y->max_memory_policy);
	ck_assert_int_eq(x->min_sync_replicas, y->min_sync_replicas);
	ck_assert(x->drop_old_passwords == y->drop_old_passwords);
	ck_assert(x->reload == y->reload);
	ck_assert_uint_eq(x->n_users, y->n_users);
	for (size_t i = 0; i < x->n_users; i++) {
		STR_EQ(x->users[i].name, y->users[i].name);
		ck_assert(x->users[i].enabled == y->users[i].enabled);
		ck_assert_uint_eq(x->users[i].n_rules, y->users[i].n_rules);
		for (size_t k = 0; k < x->users[i].n_rules; k++)
			STR_EQ(x->users[i].rules[k], y->users[i].rules[k]);
	}
}

START_TEST(request_round_trip)
{
	json_t *redis = json_pack("{s:s,s:s}", "maxclients", "100", "timeout", "30");
	const struct api_inst_request reqs[] = {
		{ .op = API_INST_FENCE, .reason = "maintenance" },
		{ .op = API_INST_UNFENCE },
		{ .op = API_INST_PROMOTE, .force = true },
		{ .op = API_INST_PROMOTE, .force = false },
		{ .op = API_INST_REPLICATE, .host = "10.0.0.5", .port = API_PORT_SERVER },
		{ .op = API_INST_SWITCHOVER,
		  .host = "10.0.0.6",
		  .port = 6380,
		  .http_port = 8001,
		  .timeout_ms = 1500 },
		{ .op = API_INST_SWITCHOVER, .pod = "cache-2", .http_port = API_PORT_HTTP },
		{ .op = API_INST_CONFIG,
		  .config = { redis, true, 256u << 20, API_POLICY_ALLKEYS_LFU, 1, users,
		              ARRAY_LEN(users), true, true } },
		{ .op = API_INST_CONFIG },
		{ .op = API_INST_RESTART },
	};

	for (size_t i = 0; i < ARRAY_LEN(reqs); i++) {
		char *text = text_of(api_inst_request_encode(&reqs[i]));
		struct api_inst_request out;
		struct err e = { 0 };

		ck_assert_msg(api_inst_request_decode(reqs[i].op, text, strlen(text), &out, &e) ==
		                      0,
		              "%zu %s: %s", i, text, e.msg);
		request_eq(&reqs[i], &out);
		api_inst_request_release(&out);
		free(text);
	}
	json_decref(redis);
}
END_TEST

/* What the controller sent before this encoder, as the manager reads it (sorted keys). */
START_TEST(request_wire_bytes)
{
	struct api_inst_request rep = { .op = API_INST_REPLICATE,
		                        .host = "10.0.0.5",
		                        .port = 6379 };
	struct api_inst_request sw = { .op = API_INST_SWITCHOVER,
		                       .host = "10.0.0.6",
		                       .port = API_PORT_SERVER,
		                       .http_port = API_PORT_HTTP };
	struct api_inst_request pr = { .op = API_INST_PROMOTE };
	struct api_inst_request fe = { .op = API_INST_FENCE, .reason = "failover" };
	char *t;

	t = text_of(api_inst_request_encode(&rep));
	ck_assert_str_eq(t, "{\"host\":\"10.0.0.5\",\"port\":6379}");
	free(t);
	t = text_of(api_inst_request_encode(&sw));
	ck_assert_str_eq(t, "{\"host\":\"10.0.0.6\",\"httpPort\":8000,\"port\":6379}");
	free(t);
	t = text_of(api_inst_request_encode(&pr));
	ck_assert_str_eq(t, "{\"force\":false}");
	free(t);
	t = text_of(api_inst_request_encode(&fe));
	ck_assert_str_eq(t, "{\"reason\":\"failover\"}");
	free(t);
}
END_TEST

static const struct {
	enum api_inst_op op;
	const char *body;
	int rc;
	const char *field;
} bad_requests[] = {
	{ API_INST_FENCE, "{\"why\":1}", -EINVAL, "why: unknown field" },
	{ API_INST_FENCE, "{\"reason\":7}", -EINVAL, "reason: expected string" },
	{ API_INST_FENCE, "[]", -EINVAL, "body: expected a JSON object" },
	{ API_INST_FENCE, "{", -EPROTO, "" },
	{ API_INST_PROMOTE, "{\"force\":\"yes\"}", -EINVAL, "force" },
	{ API_INST_REPLICATE, "{\"host\":\"h\"}", -ENOENT, "port: required" },
	{ API_INST_REPLICATE, "{\"host\":\"h\",\"port\":70000}", -ERANGE, "port: 70000" },
	{ API_INST_REPLICATE, "{\"host\":\"a/b\",\"port\":1}", -EINVAL, "host" },
	{ API_INST_SWITCHOVER, "{}", -EINVAL, "pod, host" },
	{ API_INST_SWITCHOVER, "{\"pod\":\"x\",\"timeout\":\"1h\"}", -EINVAL, "timeout" },
	{ API_INST_SWITCHOVER, "{\"pod\":\"x\",\"httpPort\":0}", -ERANGE, "httpPort" },
	{ API_INST_CONFIG, "{\"redis\":{\"maxclients\":1}}", -EINVAL, "redis.maxclients" },
	{ API_INST_CONFIG, "{\"maxMemory\":\"lots\"}", -EINVAL, "maxMemory" },
	{ API_INST_CONFIG, "{\"maxMemoryPolicy\":\"lru\"}", -EINVAL, "maxMemoryPolicy" },
	{ API_INST_CONFIG, "{\"minSyncReplicas\":64}", -ERANGE, "minSyncReplicas" },
	{ API_INST_CONFIG, "{\"users\":[{}]}", -ENOENT, "users[0].name: required" },
	{ API_INST_CONFIG, "{\"users\":[{\"name\":\"a\",\"rules\":[1]}]}", -EINVAL,
	  "users[0].rules[0]: expected string" },
	{ API_INST_CONFIG, "{\"users\":[{\"name\":\"a\",\"pw\":1}]}", -EINVAL,
	  "users[0].pw: unknown field" },
	{ API_INST_CONFIG, "{\"users\":[1]}", -EINVAL, "users[0]: expected object" },
	{ API_INST_CONFIG, "{\"dropOldPasswords\":1}", -EINVAL, "dropOldPasswords" },
	{ API_INST_RESTART, "{\"now\":true}", -EINVAL, "now: unknown field" },
	{ API_INST_SENTINEL_FAILOVER, "{\"pod\":\"c-1\"}", -EINVAL, "pod: unknown field" },
	{ API_INST_SENTINEL_RESET, "[]", -EINVAL, "expected a JSON object" },
	{ API_INST_OP_COUNT, "{}", -EINVAL, "unknown operation" },
};

START_TEST(request_malformed)
{
	struct api_inst_request r = { 0 };
	struct err e = { 0 };
	const char *b = bad_requests[_i].body;

	ck_assert_int_eq(api_inst_request_decode(bad_requests[_i].op, b, strlen(b), &r, &e),
	                 bad_requests[_i].rc);
	ck_assert_msg(strstr(e.msg, bad_requests[_i].field), "case %d: %s", _i, e.msg);
	ck_assert_ptr_null(r.json);
}
END_TEST

START_TEST(op_names)
{
	for (int op = 0; op < API_INST_OP_COUNT; op++) {
		char path[32];

		snprintf(path, sizeof(path), "/v1/%s", api_inst_op_name(op));
		ck_assert_int_eq(api_inst_op_from_path(path), op);
	}
	ck_assert_int_eq(api_inst_op_from_path("/v1/status"), -1);
	ck_assert_ptr_null(api_inst_op_name(API_INST_OP_COUNT));
	/* the controller builds these paths from API_INST_SENTINEL_OP_* */
	ck_assert_int_eq(api_inst_op_from_path("/v1/" API_INST_SENTINEL_OP_FAILOVER),
	                 API_INST_SENTINEL_FAILOVER);
	ck_assert_int_eq(api_inst_op_from_path("/v1/sentinel/reset"), API_INST_SENTINEL_RESET);
	ck_assert_int_eq(api_inst_op_from_path("/v1/sentinel/"), -1);
}
END_TEST

/* --- answers ------------------------------------------------------------------------------------ */

START_TEST(answers_round_trip)
{
	struct api_inst_result r = { .result = "promoted",
		                     .fenced = false,
		                     .lease_held = true,
		                     .has_offsets = true,
		                     .role = "primary",
		                     .repl_id = "aa",
		                     .repl_id2 = "bb",
		                     .offset = 605 },
	                       r2;
	struct api_inst_switchover_result s = { .result = "switched over",
		                                .target = "10.0.0.6",
		                                .target_port = 6379,
		                                .offset = 9,
		                                .demoted = false,
		                                .catch_up_ms = 0.25,
		                                .lease_release_ms = 4.5,
		                                .promote_ms = 7,
		                                .write_pause_ms = 11.75,
		                                .old_primary_paused_ms = 30,
		                                .demote_error = "ROLE does not show it" },
	                                  s2;
	const char *restart[] = { "port", "databases" };
	struct api_inst_config_result c = { .result = "applied",
		                            .restart_required = restart,
		                            .n_restart_required = 2 },
	                              c2;
	struct api_inst_error er = { .error = "not primary" }, er2;
	char *t;

	t = text_of(api_inst_result_encode(&r));
	ck_assert_int_eq(api_inst_result_decode(t, strlen(t), &r2, NULL), 0);
	STR_EQ(r.result, r2.result);
	STR_EQ(r.role, r2.role);
	STR_EQ(r.repl_id, r2.repl_id);
	STR_EQ(r.repl_id2, r2.repl_id2);
	ck_assert(r2.has_offsets && r2.lease_held && !r2.fenced && r2.offset == 605);
	api_inst_result_release(&r2);
	free(t);
	r.has_offsets = false; /* INFO did not answer */
	t = text_of(api_inst_result_encode(&r));
	ck_assert_str_eq(t, "{\"fenced\":false,\"leaseHeld\":true,\"result\":\"promoted\"}");
	ck_assert_int_eq(api_inst_result_decode(t, strlen(t), &r2, NULL), 0);
	ck_assert(!r2.has_offsets);
	api_inst_result_release(&r2);
	free(t);

	t = text_of(api_inst_switchover_result_encode(&s));
	ck_assert_int_eq(api_inst_switchover_result_decode(t, strlen(t), &s2, NULL), 0);
	STR_EQ(s.result, s2.result);
	STR_EQ(s.target, s2.target);
	STR_EQ(s.demote_error, s2.demote_error);
	ck_assert(s2.target_port == 6379 && s2.offset == 9 && !s2.demoted);
	ck_assert(s2.catch_up_ms == 0.25 && s2.lease_release_ms == 4.5 && s2.promote_ms == 7);
	ck_assert(s2.write_pause_ms == 11.75 && s2.old_primary_paused_ms == 30);
	api_inst_switchover_result_release(&s2);
	free(t);

	t = text_of(api_inst_config_result_encode(&c));
	ck_assert_int_eq(api_inst_config_result_decode(t, strlen(t), &c2, NULL), 0);
	STR_EQ(c.result, c2.result);
	ck_assert_uint_eq(c2.n_restart_required, 2);
	STR_EQ(c2.restart_required[1], "databases");
	api_inst_config_result_release(&c2);
	free(t);

	t = text_of(api_inst_error_encode(&er));
	ck_assert_str_eq(t, "{\"error\":\"not primary\"}");
	ck_assert_int_eq(api_inst_error_decode(t, strlen(t), &er2, NULL), 0);
	STR_EQ(er.error, er2.error);
	api_inst_error_release(&er2);
	free(t);
}
END_TEST

START_TEST(answers_malformed)
{
	struct api_inst_result r;
	struct api_inst_switchover_result s;
	struct api_inst_config_result c;
	struct api_inst_error er;
	struct err e = { 0 };
	const char *b;

	b = "{\"fenced\":true}";
	ck_assert_int_eq(api_inst_result_decode(b, strlen(b), &r, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "result: required"));
	err_clear(&e);
	b = "{\"result\":\"x\",\"offset\":\"7\"}";
	ck_assert_int_eq(api_inst_result_decode(b, strlen(b), &r, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "offset: expected integer"));
	err_clear(&e);
	b = "{\"result\":\"switched over\",\"writePauseMs\":\"fast\"}";
	ck_assert_int_eq(api_inst_switchover_result_decode(b, strlen(b), &s, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "writePauseMs: expected number"));
	err_clear(&e);
	b = "{\"result\":\"applied\",\"restartRequired\":[\"a\",2]}";
	ck_assert_int_eq(api_inst_config_result_decode(b, strlen(b), &c, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "restartRequired[1]: expected string"));
	err_clear(&e);
	b = "{\"error\":42}";
	ck_assert_int_eq(api_inst_error_decode(b, strlen(b), &er, &e), -EPROTO);
	ck_assert_ptr_nonnull(strstr(e.msg, "error: expected string"));
	ck_assert_int_eq(api_inst_error_decode("", 0, &er, NULL), -EPROTO);
}
END_TEST

/* --- status.failover ------------------------------------------------------------------------------ */

static json_t *load(const char *text)
{
	json_t *j = NULL;

	ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 16, &j, NULL), 0);
	return j;
}

START_TEST(failover_round_trip)
{
	const struct api_failover_status in[] = {
		{ true, API_PHASE_FENCING, "c-1", NULL, "primary c-1 is down", NULL,
		  "2026-01-02T03:04:05Z" },
		{ true, API_PHASE_PROMOTING, "c-1", "c-2", "primary c-1 is down", "no catch-up",
		  "2026-01-02T03:04:05Z" },
		{ true, API_PHASE_SWITCHOVER, "c-1", "c-3", "rolling update", NULL,
		  "2026-01-02T00:00:00Z" },
		{ true, API_PHASE_PRIMARY_RESTART, "c-1", "c-1", "rolling update", NULL,
		  "2026-01-02T00:00:00Z" },
	};

	for (size_t i = 0; i < ARRAY_LEN(in); i++) {
		json_t *j = api_failover_status_encode(&in[i]);
		struct api_failover_status out;

		ck_assert_int_eq(api_failover_status_decode(j, "status.failover", &out, NULL), 0);
		ck_assert(out.set && out.phase == in[i].phase);
		STR_EQ(out.from, in[i].from);
		STR_EQ(out.to, in[i].to);
		STR_EQ(out.reason, in[i].reason);
		STR_EQ(out.catch_up, in[i].catch_up);
		STR_EQ(out.started_at, in[i].started_at);
		json_decref(j);
	}
}
END_TEST

START_TEST(failover_absent_and_wire)
{
	struct api_failover_status none = { 0 }, out = { .set = true };
	const struct api_failover_status f = { true, API_PHASE_FENCING,     NULL, "", NULL,
		                               NULL, "2026-01-02T03:04:05Z" };
	json_t *j = api_failover_status_encode(&none);
	char *t;

	ck_assert(json_is_null(j)); /* a merge patch that removes it */
	ck_assert_int_eq(api_failover_status_decode(j, "status.failover", &out, NULL), 0);
	ck_assert(!out.set);
	json_decref(j);
	ck_assert_int_eq(api_failover_status_decode(NULL, "status.failover", &out, NULL), 0);
	ck_assert(!out.set);
	/* the controller's shape: from and reason always, to only when known */
	t = text_of(api_failover_status_encode(&f));
	ck_assert_str_eq(t, "{\"from\":\"\",\"phase\":\"Fencing\",\"reason\":\"\","
	                    "\"startedAt\":\"2026-01-02T03:04:05Z\"}");
	free(t);
}
END_TEST

static const struct {
	const char *json;
	const char *field;
} bad_failover[] = {
	{ "{\"phase\":\"Electing\"}", "status.failover.phase: Unsupported value: \"Electing\"" },
	{ "{\"phase\":\"Fencing\",\"from\":3}", "status.failover.from: expected string" },
	{ "{\"phase\":\"Fencing\",\"catchUp\":[]}", "status.failover.catchUp" },
	{ "[]", "status.failover: expected object" },
};

START_TEST(failover_malformed)
{
	json_t *j = load(bad_failover[_i].json);
	struct api_failover_status out = { 0 };
	struct err e = { 0 };

	ck_assert_int_eq(api_failover_status_decode(j, "status.failover", &out, &e), -EINVAL);
	ck_assert_msg(strstr(e.msg, bad_failover[_i].field), "case %d: %s", _i, e.msg);
	ck_assert(!out.set);
	json_decref(j);
}
END_TEST

/* --- ports and policies ------------------------------------------------------------------------ */

START_TEST(ports_and_policies)
{
	ck_assert_str_eq(API_PORT_TEXT(API_PORT_SERVER), "6379");
	ck_assert_str_eq(API_PORT_TEXT(API_PORT_HTTP), "8000");
	ck_assert_str_eq(API_PORT_TEXT(API_PORT_METRICS), "9121");
	for (int p = API_POLICY_NOEVICTION; p <= API_POLICY_VOLATILE_TTL; p++)
		ck_assert_int_eq(api_maxmemory_policy_from_name(api_maxmemory_policy_name(p)), p);
	ck_assert_ptr_null(api_maxmemory_policy_name(0));
	ck_assert_int_eq(api_maxmemory_policy_from_name("lru"), 0);
	ck_assert_int_eq(api_maxmemory_policy_from_name(NULL), 0);
	for (int p = API_PHASE_FENCING; p <= API_PHASE_PRIMARY_RESTART; p++)
		ck_assert_int_eq(api_failover_phase_from_name(api_failover_phase_name(p)), p);
	ck_assert_str_eq(api_failover_phase_name(API_PHASE_PROMOTING), API_FAILOVER_PROMOTING);
	ck_assert_int_eq(api_failover_phase_from_name("Electing"), 0);
}
END_TEST

/* --- the sentinel role's status ------------------------------------------------------------ */

static struct api_inst_sentinel_status full_sentinel(void)
{
	return (struct api_inst_sentinel_status){
		.pod = "cache-sentinel-1",
		.state = "running",
		.role = API_INST_ROLE_SENTINEL,
		.reason = "sentinel started",
		.ready = true,
		.engine = "valkey",
		.version = "8.0.1",
		.uptime_seconds = 12,
		.server = { .pid = 7,
		            .up = true,
		            .restarts = 1,
		            .role = API_INST_ROLE_SENTINEL,
		            .uptime_seconds = 11 },
		.has_sentinel = true,
		.sentinel = { .master_name = API_INST_SENTINEL_MASTER_NAME,
		              .master_host = "10.0.0.5",
		              .master_port = 6379,
		              .master_status = API_INST_MASTER_ODOWN,
		              .failover_in_progress = true,
		              .failover_state = "wait_promotion",
		              .config_epoch = 4,
		              .quorum = 2,
		              .quorum_ok = true,
		              .quorum_reason = "OK 3 usable Sentinels",
		              .sentinels = 3,
		              .replicas = 2 },
	};
}

START_TEST(sentinel_status_round_trip)
{
	struct api_inst_sentinel_status in = full_sentinel(), out;
	const struct api_inst_sentinel_view *a = &in.sentinel, *b = &out.sentinel;
	char *t;

	if (_i == 1) { /* the sentinel does not answer */
		in.ready = in.server.up = in.has_sentinel = false;
		in.not_ready_reason = "connection refused";
		in.server.pid = API_INST_NULL;
	}
	t = text_of(api_inst_sentinel_status_encode(&in));
	ck_assert_int_eq(api_inst_sentinel_status_decode(t, strlen(t), &out, NULL), 0);
	STR_EQ(in.pod, out.pod);
	STR_EQ(in.state, out.state);
	STR_EQ(in.role, out.role);
	STR_EQ(in.reason, out.reason);
	STR_EQ(in.not_ready_reason, out.not_ready_reason);
	STR_EQ(in.engine, out.engine);
	STR_EQ(in.version, out.version);
	ck_assert(in.ready == out.ready && in.uptime_seconds == out.uptime_seconds);
	ck_assert(in.server.pid == out.server.pid && in.server.up == out.server.up);
	ck_assert(in.server.restarts == out.server.restarts);
	STR_EQ(in.server.role, out.server.role);
	ck_assert(in.has_sentinel == out.has_sentinel);
	if (_i == 1) {
		ck_assert_ptr_nonnull(strstr(t, "\"sentinel\":null"));
		ck_assert_ptr_nonnull(strstr(t, "\"pid\":null"));
	} else {
		STR_EQ(a->master_name, b->master_name);
		STR_EQ(a->master_host, b->master_host);
		STR_EQ(a->master_status, b->master_status);
		STR_EQ(a->failover_state, b->failover_state);
		STR_EQ(a->quorum_reason, b->quorum_reason);
		ck_assert(a->master_port == b->master_port && a->config_epoch == b->config_epoch);
		ck_assert(a->failover_in_progress == b->failover_in_progress);
		ck_assert(a->quorum == b->quorum && a->quorum_ok == b->quorum_ok);
		ck_assert(a->sentinels == b->sentinels && a->replicas == b->replicas);
	}
	api_inst_sentinel_status_release(&out);
	free(t);
}
END_TEST

static const struct {
	const char *body, *msg;
} bad_sentinel[] = {
	{ "{\"role\":\"sentinel\",\"ready\":true,\"server\":{}}", "state: required" },
	{ "{\"state\":\"running\",\"role\":\"sentinel\",\"ready\":true}", "server: required" },
	{ "{\"state\":\"running\",\"role\":\"sentinel\",\"ready\":true,\"server\":{},"
	  "\"sentinel\":{\"masterName\":\"mymaster\"}}",
	  "sentinel.masterStatus: required" },
	{ "{\"state\":\"running\",\"role\":\"sentinel\",\"ready\":true,\"server\":{},"
	  "\"sentinel\":{\"masterName\":\"m\",\"masterStatus\":\"ok\",\"masterPort\":\"1\"}}",
	  "sentinel.masterPort: expected integer" },
	{ "[]", "expected a JSON object" },
};

START_TEST(sentinel_status_malformed)
{
	struct api_inst_sentinel_status s = { .pod = "untouched" };
	struct err e = { 0 };
	const char *b = bad_sentinel[_i].body;

	ck_assert_int_eq(api_inst_sentinel_status_decode(b, strlen(b), &s, &e), -EPROTO);
	ck_assert_msg(strstr(e.msg, bad_sentinel[_i].msg), "%s", e.msg);
	ck_assert_str_eq(s.pod, "untouched");
}
END_TEST

/* Every credential key sets its own member, and the store config takes each from there:
 * S3 by access key and token, Azure by its four, the account falling back to accountName. */
START_TEST(credentials_to_store_config)
{
	static const char *const want[API_INST_CREDENTIAL_KEYS] = {
		"AWS_ACCESS_KEY_ID",       "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN",       "AZURE_STORAGE_CONNECTION_STRING",
		"AZURE_STORAGE_ACCOUNT",   "AZURE_STORAGE_KEY",
		"AZURE_STORAGE_SAS_TOKEN",
	};
	struct api_inst_credentials k = { 0 };
	struct api_destination d = { 0 };
	struct objstore_config s3 = { .user_agent = "ua" }, az = { 0 };

	for (size_t i = 0; i < API_INST_CREDENTIAL_KEYS; i++) {
		ck_assert_str_eq(api_inst_credential_key(i), want[i]);
		api_inst_credentials_set(&k, i, want[i]);
	}
	ck_assert_ptr_null(api_inst_credential_key(API_INST_CREDENTIAL_KEYS));
	d.s3.set = true;
	d.s3.bucket = "b";
	d.s3.region = "r";
	d.s3.force_path_style = true;
	api_backup_store_config(&d, &k, &s3);
	ck_assert_int_eq(s3.provider, OBJSTORE_S3);
	ck_assert_str_eq(s3.bucket, "b");
	ck_assert(s3.path_style);
	ck_assert_str_eq(s3.user_agent, "ua");
	ck_assert_str_eq(s3.access_key_id, "AWS_ACCESS_KEY_ID");
	ck_assert_str_eq(s3.secret_access_key, "AWS_SECRET_ACCESS_KEY");
	ck_assert_str_eq(s3.session_token, "AWS_SESSION_TOKEN");
	ck_assert_ptr_null(s3.account_key);
	d.s3.set = false;
	d.azure.container = "c";
	d.azure.account_name = "from-spec";
	api_backup_store_config(&d, &k, &az);
	ck_assert_int_eq(az.provider, OBJSTORE_AZURE);
	ck_assert_str_eq(az.bucket, "c");
	ck_assert_str_eq(az.connection_string, "AZURE_STORAGE_CONNECTION_STRING");
	ck_assert_str_eq(az.account, "AZURE_STORAGE_ACCOUNT");
	ck_assert_str_eq(az.account_key, "AZURE_STORAGE_KEY");
	ck_assert_str_eq(az.sas_token, "AZURE_STORAGE_SAS_TOKEN");
	ck_assert_ptr_null(az.access_key_id);
	k.azure_account = NULL;
	api_backup_store_config(&d, &k, &az);
	ck_assert_str_eq(az.account, "from-spec");
}
END_TEST

START_TEST(backup_key_join)
{
	const char *parts[] = { "/backups/", "", "c1", "ns/", "run-1" };
	char out[API_BACKUP_KEY_MAX], longp[API_BACKUP_KEY_MAX];
	const char *too_long[] = { "a", longp };

	ck_assert_int_eq(api_backup_key_join(parts, 5, out), 0);
	ck_assert_str_eq(out, "backups/c1/ns/run-1");
	memset(longp, 'x', sizeof(longp) - 2); /* "a/" + 1022 x: one byte over */
	longp[sizeof(longp) - 2] = '\0';
	snprintf(out, sizeof(out), "kept");
	ck_assert_int_eq(api_backup_key_join(too_long, 2, out), -ENAMETOOLONG);
	ck_assert_str_eq(out, "kept");
	longp[sizeof(longp) - 3] = '\0'; /* exactly API_BACKUP_KEY_MAX - 1 bytes */
	ck_assert_int_eq(api_backup_key_join(too_long, 2, out), 0);
	ck_assert_uint_eq(strlen(out), API_BACKUP_KEY_MAX - 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("api_contract");
	TCase *t = tcase_create("contract");

	tcase_add_loop_test(t, status_round_trip, 0, 2);
	tcase_add_loop_test(t, status_instance_goldens, 0, ARRAY_LEN(status_goldens));
	tcase_add_loop_test(t, status_malformed, 0, ARRAY_LEN(bad_status));
	tcase_add_test(t, status_older_manager);
	tcase_add_test(t, status_too_big);
	tcase_add_test(t, request_round_trip);
	tcase_add_test(t, request_wire_bytes);
	tcase_add_loop_test(t, request_malformed, 0, ARRAY_LEN(bad_requests));
	tcase_add_test(t, op_names);
	tcase_add_test(t, answers_round_trip);
	tcase_add_test(t, answers_malformed);
	tcase_add_test(t, failover_round_trip);
	tcase_add_test(t, failover_absent_and_wire);
	tcase_add_loop_test(t, failover_malformed, 0, ARRAY_LEN(bad_failover));
	tcase_add_test(t, ports_and_policies);
	tcase_add_loop_test(t, sentinel_status_round_trip, 0, 2);
	tcase_add_loop_test(t, sentinel_status_malformed, 0, ARRAY_LEN(bad_sentinel));
	tcase_add_test(t, credentials_to_store_config);
	tcase_add_test(t, backup_key_join);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

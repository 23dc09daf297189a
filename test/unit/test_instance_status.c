/*
 * Unit tests for instance/status and instance/metrics: the /v1/status JSON and the
 * Prometheus text rendered from captured INFO output (golden files; UPDATE_GOLDEN=1
 * rewrites them), the readiness verdict table, the stale/failed-poll cases, and the
 * httpTls/httpTlsError fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance/status.h"
#include "lib/alloc.h"
#include "testutil.h"
#include "unit.h"

#define DIR     "test/data/instance/"
#define NOW     1800000000000LL
#define MAX_AGE 2500

static struct inst_snapshot *snap_from(const char *info_file, enum inst_state st)
{
	struct inst_snapshot *s = xcalloc(1, sizeof(*s));
	char *text = tu_read_file(info_file, NULL);

	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(vk_info_parse(text, strlen(text), &s->info, NULL), 0);
	free(text);
	snprintf(s->pod, sizeof(s->pod), "cache-1");
	s->state = st;
	snprintf(s->reason, sizeof(s->reason), "test");
	s->server_pid = 42;
	s->info_ok = true;
	s->info_wall_ms = NOW - 100;
	s->started_wall_ms = NOW - 60000;
	s->server_restarts = 2;
	s->lease_renew_failures = 3;
	s->lease_held = st == INST_STATE_PRIMARY;
	s->primary_offset = st == INST_STATE_REPLICA ? s->info.slave_repl_offset + 100 : -1;
	snprintf(s->config_hash, sizeof(s->config_hash), "0123456789abcdef");
	snprintf(s->engine, sizeof(s->engine), "%s", vk_engine_name(s->info.engine));
	snprintf(s->engine_version, sizeof(s->engine_version), "%.31s", s->info.engine_version);
	return s;
}

static const struct {
	const char *info;
	enum inst_state state;
	const char *status_golden, *metrics_golden;
} files[] = {
	{ DIR "info-redis-primary.txt", INST_STATE_PRIMARY, "status-redis-primary.json",
	  "metrics-redis-primary.prom" },
	{ DIR "info-valkey-replica.txt", INST_STATE_REPLICA, "status-valkey-replica.json",
	  "metrics-valkey-replica.prom" },
};

START_TEST(golden_status_and_metrics)
{
	struct inst_snapshot *s = snap_from(files[_i].info, files[_i].state);
	struct buf b = BUF_INIT(1 << 20);

	ck_assert_int_eq(inst_status_json(s, NOW, MAX_AGE, &b), 0);
	ck_assert_int_eq(buf_append_char(&b, '\n'), 0);
	tu_golden(DIR, files[_i].status_golden, buf_cstr(&b));
	buf_clear(&b);
	ck_assert_int_eq(inst_metrics_render(s, NOW, MAX_AGE, &b), 0);
	tu_golden(DIR, files[_i].metrics_golden, buf_cstr(&b));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "redis_up 1\n"));
	ck_assert_ptr_nonnull(
	        strstr(buf_cstr(&b), "redis_operator_instance_server_restarts_total 2\n"));
	buf_release(&b);
	free(s);
}
END_TEST

START_TEST(stale_info_is_down)
{
	struct inst_snapshot *s = snap_from(DIR "info-redis-primary.txt", INST_STATE_PRIMARY);
	struct buf b = BUF_INIT(1 << 20);

	s->info_wall_ms = NOW - MAX_AGE - 1;
	ck_assert_int_eq(inst_metrics_render(s, NOW, MAX_AGE, &b), 0);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "redis_up 0\n"));
	ck_assert_ptr_null(strstr(buf_cstr(&b), "redis_connected_clients"));
	buf_clear(&b);
	ck_assert_int_eq(inst_status_json(s, NOW, MAX_AGE, &b), 0);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "\"replication\":null"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "\"ready\":false"));
	buf_release(&b);
	free(s);
}
END_TEST

enum tweak { T_NONE, T_LOADING, T_FENCED, T_LINK_DOWN, T_SYNCING, T_NO_INFO, T_NO_PID, T_PARKED };

static const struct {
	const char *info;
	enum inst_state state;
	enum tweak tweak;
	bool ready;
	const char *why;
} ready_cases[] = {
	{ DIR "info-redis-primary.txt", INST_STATE_PRIMARY, T_NONE, true, "" },
	{ DIR "info-redis-primary.txt", INST_STATE_PRIMARY, T_LOADING, false, "loading" },
	{ DIR "info-redis-primary.txt", INST_STATE_PRIMARY, T_FENCED, false, "fenced" },
	{ DIR "info-redis-primary.txt", INST_STATE_PRIMARY, T_NO_INFO, false, "not answering" },
	{ DIR "info-redis-primary.txt", INST_STATE_PRIMARY, T_NO_PID, false, "not answering" },
	{ DIR "info-redis-primary.txt", INST_STATE_REPLICA, T_NONE, false, "link down" },
	{ DIR "info-valkey-replica.txt", INST_STATE_REPLICA, T_NONE, true, "" },
	{ DIR "info-valkey-replica.txt", INST_STATE_REPLICA, T_FENCED, true, "" },
	{ DIR "info-valkey-replica.txt", INST_STATE_REPLICA, T_LINK_DOWN, false, "link down" },
	{ DIR "info-valkey-replica.txt", INST_STATE_REPLICA, T_SYNCING, false, "full sync" },
	{ DIR "info-valkey-replica.txt", INST_STATE_PRIMARY, T_NONE, false, "not primary" },
	{ DIR "info-valkey-replica.txt", INST_STATE_PARKED, T_PARKED, false, "parked" },
};

START_TEST(readiness_table)
{
	struct inst_snapshot *s = snap_from(ready_cases[_i].info, ready_cases[_i].state);
	const char *why = NULL;
	bool ready;

	switch (ready_cases[_i].tweak) {
	case T_LOADING: s->info.loading = true; break;
	case T_FENCED: s->fenced = true; break;
	case T_LINK_DOWN: s->info.master_link_up = false; break;
	case T_SYNCING: s->info.master_sync_in_progress = true; break;
	case T_NO_INFO: s->info_ok = false; break;
	case T_NO_PID: s->server_pid = 0; break;
	default: break;
	}
	ready = inst_status_ready(s, NOW, MAX_AGE, &why);
	ck_assert_msg(ready == ready_cases[_i].ready, "case %d: ready=%d why=%s", _i, ready, why);
	ck_assert_msg(strstr(why, ready_cases[_i].why), "case %d: why=%s", _i, why);
	free(s);
}
END_TEST

/* What the API serves, and why mutations are refused (null unless they are). */
static const struct {
	enum inst_http_serve serve;
	const char *want;
} tls_cases[] = {
	{ INST_HTTP_SERVE_HTTPS, "\"httpTls\":\"https\",\"httpTlsError\":null" },
	{ INST_HTTP_SERVE_PLAIN, "\"httpTls\":\"plain\",\"httpTlsError\":null" },
	{ INST_HTTP_SERVE_REFUSED, "\"httpTls\":\"refused\",\"httpTlsError\":\"TLS material "
	                           "incomplete: ca.crt missing in /x; mutations refused\"" },
};

START_TEST(http_tls_fields)
{
	struct inst_snapshot *s = snap_from(DIR "info-redis-primary.txt", INST_STATE_PRIMARY);
	struct buf b = BUF_INIT(1 << 20);

	s->http_serve = tls_cases[_i].serve;
	snprintf(s->http_tls_error, sizeof(s->http_tls_error),
	         "TLS material incomplete: ca.crt missing in /x; mutations refused");
	ck_assert_int_eq(inst_status_json(s, NOW, MAX_AGE, &b), 0);
	ck_assert_msg(strstr(buf_cstr(&b), tls_cases[_i].want), "%s", buf_cstr(&b));
	buf_release(&b);
	free(s);
}
END_TEST

START_TEST(state_names)
{
	ck_assert_str_eq(inst_state_name(INST_STATE_PARKED), "parked");
	ck_assert_str_eq(inst_state_name((enum inst_state)42), "unknown");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_status");
	TCase *t = tcase_create("status");

	tcase_add_loop_test(t, golden_status_and_metrics, 0, ARRAY_LEN(files));
	tcase_add_test(t, stale_info_is_down);
	tcase_add_loop_test(t, readiness_table, 0, ARRAY_LEN(ready_cases));
	tcase_add_loop_test(t, http_tls_fields, 0, ARRAY_LEN(tls_cases));
	tcase_add_test(t, state_names);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

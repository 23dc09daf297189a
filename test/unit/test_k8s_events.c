/*
 * Unit tests for lib/k8s/events: validation, the Event object on the wire, dedup into
 * series PATCHes, coalescing of queued repeats, the per-object token bucket, the queue
 * cap, a vanished Event (404 → create again), and the worker thread with flush/stop.
 *
 * Most tests run without the worker: k8s_events_process sends one queued request at a
 * time, and a manual clock moves the dedup window and the buckets, so every request
 * the fake API server (k8s_fake.h) records is deterministic: "METHOD path body".
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "k8s_fake.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/events.h"
#include "lib/log.h"
#include "unit.h"

#define EVENTS_PATH "/apis/events.k8s.io/v1/namespaces/prod/events"

struct fake {
	pthread_mutex_t mu;
	json_t *reqs;   /* [{method, target, body}] */
	bool patch_404; /* PATCH answers NotFound */
	bool fail;      /* everything answers 500 */
};

static void handle(void *ctx, int fd, const struct kf_req *r)
{
	struct fake *f = ctx;
	json_t *body = json_loadb(r->body, r->body_len, 0, NULL);
	char *text = body ? json_dumps(body, JSON_COMPACT) : xstrdup("{}");

	pthread_mutex_lock(&f->mu);
	json_array_append_new(f->reqs, json_pack("{s:s, s:s, s:o}", "method", r->method, "target",
	                                         r->target, "body", body ? body : json_null()));
	if (f->fail)
		kf_reply_status(fd, 500, "InternalError", "down");
	else if (!strcmp(r->method, "PATCH") && f->patch_404)
		kf_reply_status(fd, 404, "NotFound", "events not found");
	else
		kf_reply(fd, !strcmp(r->method, "POST") ? 201 : 200, text);
	pthread_mutex_unlock(&f->mu);
	free(text);
}

struct env {
	struct kf_server srv;
	struct fake f;
	struct k8s_config cfg;
	struct k8s_client *client;
	struct clock clk;
	struct k8s_events *ev;
	char server[64];
};

static const struct k8s_events_ref cache_ref = { "redis.io/v1", "RedisCluster", "prod", "cache",
	                                         "uid-1" };
static const struct k8s_events_ref other_ref = { "redis.io/v1", "RedisCluster", "prod", "other",
	                                         NULL };

static void env_start(struct env *v, const struct k8s_events_opts *o_in)
{
	struct k8s_client_opts co = { .retries = -1, .timeout_ms = 5000 };
	struct k8s_events_opts o = { .controller = "redis.io/redis-operator", .instance = "op-0" };

	memset(v, 0, sizeof(*v));
	if (o_in)
		o = *o_in;
	pthread_mutex_init(&v->f.mu, NULL);
	v->f.reqs = json_array();
	ck_assert_int_eq(kf_start(&v->srv, handle, &v->f), 0);
	snprintf(v->server, sizeof(v->server), "http://127.0.0.1:%d", v->srv.port);
	v->cfg.server = v->server;
	v->client = k8s_client_new(&v->cfg, &co, NULL);
	clock_manual_init(&v->clk, 1000000);
	o.clock = &v->clk;
	v->ev = k8s_events_new(v->client, &o, NULL);
	ck_assert_ptr_nonnull(v->ev);
}

static void env_stop(struct env *v)
{
	k8s_events_free(v->ev);
	kf_stop(&v->srv);
	k8s_client_free(v->client);
	json_decref(v->f.reqs);
	pthread_mutex_destroy(&v->f.mu);
}

static json_t *req(struct env *v, size_t i)
{
	json_t *r = json_array_get(v->f.reqs, i);

	ck_assert_msg(r != NULL, "no request %zu (have %zu)", i, json_array_size(v->f.reqs));
	return r;
}

static const char *req_s(struct env *v, size_t i, const char *path)
{
	return json_string_value(jsonx_get(req(v, i), path));
}

static void process_all(struct env *v)
{
	while (k8s_events_process(v->ev) == 0)
		;
}

/* ---- validation ----------------------------------------------------------------------------- */

static const struct {
	struct k8s_events_ref ref;
	int type;
	const char *reason, *action;
} bad_emits[] = {
	{ { "v1", NULL, "prod", "x", NULL }, 0, "R", "A" },
	{ { "v1", "", "prod", "x", NULL }, 0, "R", "A" },
	{ { "v1", "Pod", "prod", NULL, NULL }, 0, "R", "A" },
	{ { "v1", "Pod", "prod", "Bad_Name", NULL }, 0, "R", "A" },
	{ { "v1", "Pod", "Bad_NS", "x", NULL }, 0, "R", "A" },
	{ { "v1", "Pod", "prod", "x", NULL }, 2, "R", "A" },
	{ { "v1", "Pod", "prod", "x", NULL }, 0, "", "A" },
	{ { "v1", "Pod", "prod", "x", NULL }, 0, NULL, "A" },
	{ { "v1", "Pod", "prod", "x", NULL }, 0, "R", NULL },
	{ { "v1", "Pod", "prod", "x", NULL }, 0, "R\nX", "A" },
	{ { "v1", "Pod", "prod", "x", NULL },
	  0,
	  "R123456789012345678901234567890123456789012345678901234567890123456789012345678901234"
	  "567890123456789012345678901234567890123456789",
	  "A" },
};

START_TEST(test_emit_invalid)
{
	struct env v;
	struct k8s_events_stats st;

	env_start(&v, NULL);
	ck_assert_int_eq(k8s_events_emit(v.ev, &bad_emits[_i].ref,
	                                 (enum k8s_events_type)bad_emits[_i].type,
	                                 bad_emits[_i].reason, bad_emits[_i].action, "n"),
	                 -EINVAL);
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.emitted, 0);
	ck_assert_uint_eq(st.queued, 0);
	env_stop(&v);
}
END_TEST

START_TEST(test_new_invalid)
{
	struct k8s_events_opts o = { .controller = "c" };
	struct err e;

	err_clear(&e);
	ck_assert_ptr_null(k8s_events_new(NULL, &o, &e));
	ck_assert_int_eq(e.code, -EINVAL);
	ck_assert_ptr_null(k8s_events_new(NULL, NULL, NULL));
	o.instance = "";
	ck_assert_ptr_null(k8s_events_new(NULL, &o, NULL));
	k8s_events_free(NULL);
}
END_TEST

/* ---- the wire ------------------------------------------------------------------------------ */

START_TEST(test_create_object)
{
	struct env v;
	const char *name;

	env_start(&v, NULL);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, K8S_EVENTS_WARNING, "FailoverStarted",
	                                 "Failover", "primary %s unreachable for %d s", "cache-1",
	                                 5),
	                 0);
	ck_assert_int_eq(k8s_events_process(v.ev), 0);
	ck_assert_int_eq(k8s_events_process(v.ev), -ENOENT);
	ck_assert_uint_eq(json_array_size(v.f.reqs), 1);
	ck_assert_str_eq(req_s(&v, 0, "method"), "POST");
	ck_assert_str_eq(req_s(&v, 0, "target"), EVENTS_PATH);
	ck_assert_str_eq(req_s(&v, 0, "body.apiVersion"), "events.k8s.io/v1");
	ck_assert_str_eq(req_s(&v, 0, "body.kind"), "Event");
	ck_assert_str_eq(req_s(&v, 0, "body.metadata.namespace"), "prod");
	name = req_s(&v, 0, "body.metadata.name");
	ck_assert_int_eq(strncmp(name, "cache.", 6), 0);
	ck_assert_uint_eq(strlen(name), 6 + 16);
	ck_assert_str_eq(req_s(&v, 0, "body.eventTime"), "1970-01-01T00:16:40.000000Z");
	ck_assert_str_eq(req_s(&v, 0, "body.reportingController"), "redis.io/redis-operator");
	ck_assert_str_eq(req_s(&v, 0, "body.reportingInstance"), "op-0");
	ck_assert_str_eq(req_s(&v, 0, "body.reason"), "FailoverStarted");
	ck_assert_str_eq(req_s(&v, 0, "body.action"), "Failover");
	ck_assert_str_eq(req_s(&v, 0, "body.type"), "Warning");
	ck_assert_str_eq(req_s(&v, 0, "body.note"), "primary cache-1 unreachable for 5 s");
	ck_assert_str_eq(req_s(&v, 0, "body.regarding.kind"), "RedisCluster");
	ck_assert_str_eq(req_s(&v, 0, "body.regarding.apiVersion"), "redis.io/v1");
	ck_assert_str_eq(req_s(&v, 0, "body.regarding.namespace"), "prod");
	ck_assert_str_eq(req_s(&v, 0, "body.regarding.name"), "cache");
	ck_assert_str_eq(req_s(&v, 0, "body.regarding.uid"), "uid-1");
	ck_assert_ptr_null(jsonx_get(req(&v, 0), "body.series"));
	env_stop(&v);
}
END_TEST

START_TEST(test_cluster_scoped_and_note_cap)
{
	struct env v;
	struct k8s_events_ref node = { "v1", "Node", NULL, "node-1", NULL };
	char note[1100];

	env_start(&v, NULL);
	memset(note, 'a', 1023);
	memcpy(note + 1023, "\xc3\xa9tail", 7); /* 'é' straddles the 1024-byte cap */
	ck_assert_int_eq(k8s_events_emit(v.ev, &node, K8S_EVENTS_NORMAL, "R", "A", "%s", note), 0);
	process_all(&v);
	ck_assert_str_eq(req_s(&v, 0, "target"),
	                 "/apis/events.k8s.io/v1/namespaces/default/events");
	ck_assert_ptr_null(jsonx_get(req(&v, 0), "body.regarding.namespace"));
	ck_assert_uint_eq(strlen(req_s(&v, 0, "body.note")), 1023);
	ck_assert_str_eq(req_s(&v, 0, "body.type"), "Normal");
	env_stop(&v);
}
END_TEST

/* ---- dedup -------------------------------------------------------------------------------- */

START_TEST(test_dedup_series)
{
	struct env v;
	struct k8s_events_stats st;
	char target[256];

	env_start(&v, NULL);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "Scaled", "Scale", "to %d", 3), 0);
	process_all(&v);
	snprintf(target, sizeof(target), EVENTS_PATH "/%s", req_s(&v, 0, "body.metadata.name"));
	clock_manual_advance(&v.clk, 1500);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "Scaled", "Scale", "to %d", 3), 0);
	process_all(&v);
	clock_manual_advance(&v.clk, 1000);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "Scaled", "Scale", "to %d", 3), 0);
	process_all(&v);
	ck_assert_str_eq(req_s(&v, 1, "method"), "PATCH");
	ck_assert_str_eq(req_s(&v, 1, "target"), target);
	ck_assert_int_eq(json_integer_value(jsonx_get(req(&v, 1), "body.series.count")), 2);
	ck_assert_str_eq(req_s(&v, 1, "body.series.lastObservedTime"),
	                 "1970-01-01T00:16:41.500000Z");
	ck_assert_str_eq(req_s(&v, 2, "target"), target);
	ck_assert_int_eq(json_integer_value(jsonx_get(req(&v, 2), "body.series.count")), 3);
	/* another note is another series; the same after the window is a new Event */
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "Scaled", "Scale", "to %d", 4), 0);
	process_all(&v);
	ck_assert_str_eq(req_s(&v, 3, "method"), "POST");
	clock_manual_advance(&v.clk, K8S_EVENTS_WINDOW_MS_DEFAULT);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "Scaled", "Scale", "to %d", 3), 0);
	process_all(&v);
	ck_assert_str_eq(req_s(&v, 4, "method"), "POST");
	ck_assert_str_ne(req_s(&v, 4, "body.metadata.name"), target + strlen(EVENTS_PATH "/"));
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.created, 3);
	ck_assert_uint_eq(st.patched, 2);
	ck_assert_uint_eq(st.emitted, 5);
	env_stop(&v);
}
END_TEST

START_TEST(test_coalesce_queued)
{
	struct env v;
	struct k8s_events_stats st;

	env_start(&v, NULL);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 1, "Hot", "Loop", "again"), 0);
		clock_manual_advance(&v.clk, 100);
	}
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.queued, 1);
	ck_assert_uint_eq(st.coalesced, 4);
	process_all(&v);
	ck_assert_uint_eq(json_array_size(v.f.reqs), 1);
	ck_assert_int_eq(json_integer_value(jsonx_get(req(&v, 0), "body.series.count")), 5);
	ck_assert_str_eq(req_s(&v, 0, "body.series.lastObservedTime"),
	                 "1970-01-01T00:16:40.400000Z");
	ck_assert_str_eq(req_s(&v, 0, "body.eventTime"), "1970-01-01T00:16:40.000000Z");
	/* the next repeat continues the series from 5 */
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 1, "Hot", "Loop", "again"), 0);
	process_all(&v);
	ck_assert_int_eq(json_integer_value(jsonx_get(req(&v, 1), "body.series.count")), 6);
	env_stop(&v);
}
END_TEST

START_TEST(test_patch_404_recreates)
{
	struct env v;

	env_start(&v, NULL);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n"), 0);
	process_all(&v);
	v.f.patch_404 = true; /* the Event expired (TTL) meanwhile */
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n"), 0);
	process_all(&v);
	ck_assert_uint_eq(json_array_size(v.f.reqs), 3);
	ck_assert_str_eq(req_s(&v, 1, "method"), "PATCH");
	ck_assert_str_eq(req_s(&v, 2, "method"), "POST");
	env_stop(&v);
}
END_TEST

/* ---- limits --------------------------------------------------------------------------------- */

START_TEST(test_rate_limit_per_object)
{
	struct k8s_events_opts o = {
		.controller = "c", .instance = "i", .burst = 3, .refill_per_s = 1.0
	};
	struct k8s_events_stats st;
	struct env v;

	env_start(&v, &o);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n%d", i),
		                 i < 3 ? 0 : -EAGAIN);
	/* a repeat of a queued one is free; another object has its own bucket */
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n%d", 0), 0);
	ck_assert_int_eq(k8s_events_emit(v.ev, &other_ref, 0, "R", "A", "n"), 0);
	clock_manual_advance(&v.clk, 1000);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n9"), 0);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n10"), -EAGAIN);
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.dropped_rate, 3);
	ck_assert_uint_eq(st.queued, 5);
	process_all(&v);
	ck_assert_uint_eq(json_array_size(v.f.reqs), 5);
	env_stop(&v);
}
END_TEST

START_TEST(test_queue_cap)
{
	struct k8s_events_opts o = { .controller = "c", .instance = "i", .queue_max = 2 };
	struct k8s_events_stats st;
	struct env v;

	env_start(&v, &o);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "1"), 0);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "2"), 0);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "3"), -ENOBUFS);
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.dropped_queue, 1);
	ck_assert_uint_eq(st.queued, 2);
	env_stop(&v);
}
END_TEST

START_TEST(test_api_failure_counted)
{
	struct env v;
	struct k8s_events_stats st;

	env_start(&v, NULL);
	v.f.fail = true;
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n"), 0);
	ck_assert_int_eq(k8s_events_process(v.ev), 0);
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.failed, 1);
	ck_assert_uint_eq(st.created, 0);
	/* nothing was cached: the next one creates again */
	v.f.fail = false;
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n"), 0);
	process_all(&v);
	ck_assert_str_eq(req_s(&v, 1, "method"), "POST");
	env_stop(&v);
}
END_TEST

/* ---- the worker ---------------------------------------------------------------------------- */

START_TEST(test_worker_flush_stop)
{
	struct env v;
	struct k8s_events_stats st;

	env_start(&v, NULL);
	ck_assert_int_eq(k8s_events_start(v.ev, NULL), 0);
	ck_assert_int_eq(k8s_events_start(v.ev, NULL), -EALREADY);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n%d", i), 0);
	ck_assert_int_eq(k8s_events_flush(v.ev, 5000), 0);
	ck_assert_uint_eq(json_array_size(v.f.reqs), 3);
	k8s_events_stop(v.ev, 1000);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "late"), -ECANCELED);
	k8s_events_stop(v.ev, 1000); /* idempotent */
	k8s_events_stats(v.ev, &st);
	ck_assert_uint_eq(st.created, 3);
	env_stop(&v);
}
END_TEST

START_TEST(test_flush_timeout_without_worker)
{
	struct env v;

	env_start(&v, NULL);
	ck_assert_int_eq(k8s_events_emit(v.ev, &cache_ref, 0, "R", "A", "n"), 0);
	ck_assert_int_eq(k8s_events_flush(v.ev, 20), -ETIMEDOUT);
	env_stop(&v); /* drops the queued one */
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("k8s_events");
	TCase *tv = tcase_create("validation");
	TCase *tw = tcase_create("wire");

	log_configure(LOG_LEVEL_ERROR, LOG_FORMAT_LOGFMT, NULL, NULL);
	tcase_add_loop_test(tv, test_emit_invalid, 0, ARRAY_LEN(bad_emits));
	tcase_add_test(tv, test_new_invalid);
	suite_add_tcase(s, tv);
	tcase_set_timeout(tw, 20);
	tcase_add_test(tw, test_create_object);
	tcase_add_test(tw, test_cluster_scoped_and_note_cap);
	tcase_add_test(tw, test_dedup_series);
	tcase_add_test(tw, test_coalesce_queued);
	tcase_add_test(tw, test_patch_404_recreates);
	tcase_add_test(tw, test_rate_limit_per_object);
	tcase_add_test(tw, test_queue_cap);
	tcase_add_test(tw, test_api_failure_counted);
	tcase_add_test(tw, test_worker_flush_stop);
	tcase_add_test(tw, test_flush_timeout_without_worker);
	suite_add_tcase(s, tw);
	return s;
}

UNIT_MAIN(make_suite)

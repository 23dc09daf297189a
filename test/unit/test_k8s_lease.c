/*
 * Unit tests for lib/k8s/lease: the pure decision table, then the state machine driven
 * step by step with a manual clock against a fake Lease API (k8s_fake.h) that keeps one
 * Lease in memory with real resourceVersion semantics (GET 404/200, POST 201/409
 * AlreadyExists, PUT 200/409 Conflict on a stale resourceVersion), and finally the
 * thread helper with real time, including the watchdog that ends leadership at the
 * renew deadline while a renew request hangs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "k8s_fake.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/lease.h"
#include "lib/log.h"
#include "unit.h"

#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/ns/leases"

/* ---- decide ------------------------------------------------------------------------------ */

static const struct {
	const char *spec; /* the Lease's spec */
	int64_t observed, now;
	enum k8s_lease_action want;
	int64_t expires;
} decide_cases[] = {
	{ "{}", 0, 0, K8S_LEASE_TAKEOVER, 0 },
	{ "{\"holderIdentity\":\"\",\"leaseDurationSeconds\":15}", 100, 100, K8S_LEASE_TAKEOVER,
	  15100 },
	{ "{\"holderIdentity\":\"me\",\"leaseDurationSeconds\":15}", 0, 99999, K8S_LEASE_RENEW,
	  15000 },
	{ "{\"holderIdentity\":\"other\",\"leaseDurationSeconds\":15}", 1000, 15999, K8S_LEASE_WAIT,
	  16000 },
	{ "{\"holderIdentity\":\"other\",\"leaseDurationSeconds\":15}", 1000, 16000,
	  K8S_LEASE_TAKEOVER, 16000 },
	{ "{\"holderIdentity\":\"other\"}", 1000, 1000, K8S_LEASE_TAKEOVER, 1000 },
	{ "{\"holderIdentity\":\"other\",\"leaseDurationSeconds\":-5}", 1000, 1000,
	  K8S_LEASE_TAKEOVER, 1000 },
	{ "{\"holderIdentity\":\"other\",\"leaseDurationSeconds\":\"15\"}", 7, 7,
	  K8S_LEASE_TAKEOVER, 7 },
	{ "{\"holderIdentity\":7,\"leaseDurationSeconds\":15}", 0, 0, K8S_LEASE_TAKEOVER, 15000 },
	{ "{\"holderIdentity\":\"me2\",\"leaseDurationSeconds\":1}", 0, 999, K8S_LEASE_WAIT, 1000 },
};

START_TEST(test_decide)
{
	json_t *lease = json_pack("{s:o}", "spec", json_loads(decide_cases[_i].spec, 0, NULL));
	int64_t expires = -1;

	ck_assert_int_eq(k8s_lease_decide(lease, "me", decide_cases[_i].observed,
	                                  decide_cases[_i].now, &expires),
	                 decide_cases[_i].want);
	ck_assert_int_eq(expires, decide_cases[_i].expires);
	json_decref(lease);
}
END_TEST

START_TEST(test_decide_no_spec)
{
	json_t *lease = json_object();

	ck_assert_int_eq(k8s_lease_decide(lease, "me", 0, 0, NULL), K8S_LEASE_TAKEOVER);
	json_decref(lease);
}
END_TEST

/* ---- the expiry rule (k8s_lease_judge, k8s_lease_seen_update) ------------------------------- */

/* The rule the candidates and the controller share: a holder's record expires a whole
 * leaseDurationSeconds after it was OBSERVED in its current form, by the local clock. */
static const struct {
	const char *spec;
	int64_t observed, now;
	enum k8s_lease_record want;
	int64_t expires;
} judge_cases[] = {
	{ "{}", 5, 5, K8S_LEASE_RECORD_FREE, 5 },
	{ "{\"holderIdentity\":\"\",\"leaseDurationSeconds\":10}", 0, 0, K8S_LEASE_RECORD_FREE,
	  10000 },
	{ "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":10}", 1000, 10999,
	  K8S_LEASE_RECORD_VALID, 11000 },
	{ "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":10}", 1000, 11000,
	  K8S_LEASE_RECORD_EXPIRED, 11000 },
	/* renewTime is another machine's wall clock: it plays no part */
	{ "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":10,"
	  "\"renewTime\":\"2000-01-01T00:00:00.000000Z\"}",
	  1000, 2000, K8S_LEASE_RECORD_VALID, 11000 },
	{ "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":\"10\"}", 1000, 1000,
	  K8S_LEASE_RECORD_EXPIRED, 1000 },
	{ "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":-3}", 1000, 1000,
	  K8S_LEASE_RECORD_EXPIRED, 1000 },
	{ "{\"holderIdentity\":\"a\",\"leaseDurationSeconds\":99999999999}", 0,
	  365LL * 24 * 3600 * 1000 - 1, K8S_LEASE_RECORD_VALID, 365LL * 24 * 3600 * 1000 },
};

START_TEST(test_judge)
{
	json_t *rec = json_pack("{s:o}", "spec", json_loads(judge_cases[_i].spec, 0, NULL));
	int64_t expires = -1;

	ck_assert_int_eq(
	        k8s_lease_judge(rec, judge_cases[_i].observed, judge_cases[_i].now, &expires),
	        judge_cases[_i].want);
	ck_assert_int_eq(expires, judge_cases[_i].expires);
	ck_assert_int_eq(k8s_lease_judge(rec, judge_cases[_i].observed, judge_cases[_i].now, NULL),
	                 judge_cases[_i].want);
	json_decref(rec);
}
END_TEST

static json_t *record(const char *holder, const char *renew, const char *rv)
{
	return json_pack("{s:{s:s},s:{s:s,s:s,s:i}}", "metadata", "resourceVersion", rv, "spec",
	                 "holderIdentity", holder, "renewTime", renew, "leaseDurationSeconds", 10);
}

/* The clock restarts at the RECEIVE time of a changed record, and only then. */
START_TEST(test_seen_update)
{
	struct k8s_lease_seen seen = { 0 };
	json_t *r1 = record("a", "2026-11-29T17:41:20.000000Z", "1");
	json_t *r2 = record("a", "2026-11-29T17:41:21.000000Z", "2");
	json_t *r3 = record("b", "2026-11-29T17:41:21.000000Z", "2");

	ck_assert(k8s_lease_seen_update(&seen, r1, 100));
	ck_assert_int_eq(seen.since_ms, 100);
	ck_assert(!k8s_lease_seen_update(&seen, r1, 5000)); /* the same record again */
	ck_assert_int_eq(seen.since_ms, 100);
	ck_assert_int_eq(k8s_lease_judge(r1, seen.since_ms, 10099, NULL), K8S_LEASE_RECORD_VALID);
	ck_assert_int_eq(k8s_lease_judge(r1, seen.since_ms, 10100, NULL), K8S_LEASE_RECORD_EXPIRED);
	ck_assert(k8s_lease_seen_update(&seen, r2, 7000)); /* a renewal, received at 7000 */
	ck_assert_int_eq(seen.since_ms, 7000);
	ck_assert_int_eq(k8s_lease_judge(r2, seen.since_ms, 16999, NULL), K8S_LEASE_RECORD_VALID);
	ck_assert(k8s_lease_seen_update(&seen, r3, 8000)); /* another holder, same rv: changed */
	ck_assert_int_eq(seen.since_ms, 8000);
	json_decref(r1);
	json_decref(r2);
	json_decref(r3);
}
END_TEST

/* ---- options ------------------------------------------------------------------------------ */

static const struct k8s_lease_opts bad_opts[] = {
	{ NULL, "ns", "me", 0, 0, 0 },
	{ "Bad_Name", "ns", "me", 0, 0, 0 },
	{ "l", NULL, "me", 0, 0, 0 },
	{ "l", "ns", NULL, 0, 0, 0 },
	{ "l", "ns", "", 0, 0, 0 },
	{ "l", "ns", "me", 1000, 1000, 100 }, /* renew deadline must be below the duration */
	{ "l", "ns", "me", 1000, 500, 500 },  /* retry period must be below the deadline */
	{ "l", "ns", "me", 1000, 500, -1 },
	{ "l", "ns", "me", 20000, 0, 0 }, /* defaults: 10 s deadline, 2 s retry */
};

START_TEST(test_bad_opts)
{
	struct err e;
	struct k8s_lease *l;

	err_clear(&e);
	l = k8s_lease_new(NULL, &bad_opts[_i], &e);
	if (_i == ARRAY_LEN(bad_opts) - 1) {
		ck_assert_ptr_nonnull(l); /* the one valid row */
		k8s_lease_free(l);
		return;
	}
	ck_assert_ptr_null(l);
	ck_assert_int_eq(e.code, -EINVAL);
}
END_TEST

START_TEST(test_identity_too_long)
{
	char id[K8S_LEASE_IDENTITY_MAX + 2];
	struct k8s_lease_opts o = { "l", "ns", id };

	memset(id, 'x', sizeof(id) - 1);
	id[sizeof(id) - 1] = '\0';
	ck_assert_ptr_null(k8s_lease_new(NULL, &o, NULL));
	ck_assert_ptr_null(k8s_lease_new(NULL, NULL, NULL));
	k8s_lease_free(NULL);
}
END_TEST

/* ---- the fake Lease API ------------------------------------------------------------------- */

struct fake_api {
	pthread_mutex_t mu;
	json_t *lease; /* NULL: absent */
	long rv;
	int fail_left; /* answer this many requests with 500 */
	int delay_ms;  /* before answering */
	int gets, posts, puts, conflicts;
	bool steal_on_post; /* another candidate's POST lands just before ours */
	struct clock *clk;  /* the test's manual clock, for slow_reply_ms */
	int slow_reply_ms;  /* the next reply takes this long: the clock moves on by it */
	struct kf_server *srv;
};

static void api_store(struct fake_api *a, json_t *obj)
{
	char rv[32];

	snprintf(rv, sizeof(rv), "%ld", ++a->rv);
	json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(rv));
	json_decref(a->lease);
	a->lease = obj;
}

static void api_reply_lease(struct fake_api *a, int fd, int status)
{
	char *s = json_dumps(a->lease, JSON_COMPACT);

	kf_reply(fd, status, s);
	free(s);
}

static void api_put(struct fake_api *a, int fd, json_t *body)
{
	const char *want = json_string_value(jsonx_get(body, "metadata.resourceVersion"));
	const char *have = json_string_value(jsonx_get(a->lease, "metadata.resourceVersion"));

	if (!a->lease) {
		kf_reply_status(fd, 404, "NotFound", "leases \\\"l\\\" not found");
	} else if (!want || strcmp(want, have) != 0) {
		a->conflicts++;
		kf_reply_status(fd, 409, "Conflict", "the object has been modified");
	} else {
		api_store(a, json_incref(body));
		api_reply_lease(a, fd, 200);
	}
}

static void api_handle(void *ctx, int fd, const struct kf_req *r)
{
	struct fake_api *a = ctx;
	json_t *body = r->body_len ? json_loadb(r->body, r->body_len, 0, NULL) : NULL;
	int delay;

	pthread_mutex_lock(&a->mu);
	delay = a->delay_ms;
	pthread_mutex_unlock(&a->mu);
	kf_sleep(a->srv, delay);
	pthread_mutex_lock(&a->mu);
	if (a->slow_reply_ms) {
		clock_manual_advance(a->clk, a->slow_reply_ms);
		a->slow_reply_ms = 0;
	}
	if (a->fail_left > 0) {
		a->fail_left--;
		kf_reply_status(fd, 500, "InternalError", "scripted");
	} else if (!strcmp(r->method, "GET")) {
		a->gets++;
		if (a->lease)
			api_reply_lease(a, fd, 200);
		else
			kf_reply_status(fd, 404, "NotFound", "not found");
	} else if (!strcmp(r->method, "POST") && !strcmp(r->target, LEASE_PATH)) {
		a->posts++;
		if (a->steal_on_post && !a->lease)
			api_store(a, json_pack("{s:{s:s},s:{s:s,s:i}}", "metadata", "name", "l",
			                       "spec", "holderIdentity", "pod-x",
			                       "leaseDurationSeconds", 15));
		if (a->lease) {
			kf_reply_status(fd, 409, "AlreadyExists", "already exists");
		} else {
			api_store(a, json_incref(body));
			api_reply_lease(a, fd, 201);
		}
	} else if (!strcmp(r->method, "PUT") && !strcmp(r->target, LEASE_PATH "/l")) {
		a->puts++;
		api_put(a, fd, body);
	} else {
		kf_reply_status(fd, 400, "BadRequest", "unexpected request");
	}
	pthread_mutex_unlock(&a->mu);
	json_decref(body);
}

struct env {
	struct kf_server srv;
	struct fake_api api;
	struct k8s_config cfg;
	struct k8s_client *client;
	struct clock clk;
	char server[64];
};

static void env_start(struct env *v)
{
	struct k8s_client_opts co = { .retries = -1, .timeout_ms = 5000 };

	memset(v, 0, sizeof(*v));
	pthread_mutex_init(&v->api.mu, NULL);
	v->api.srv = &v->srv;
	ck_assert_int_eq(kf_start(&v->srv, api_handle, &v->api), 0);
	snprintf(v->server, sizeof(v->server), "http://127.0.0.1:%d", v->srv.port);
	v->cfg.server = v->server;
	v->client = k8s_client_new(&v->cfg, &co, NULL);
	ck_assert_ptr_nonnull(v->client);
	clock_manual_init(&v->clk, 1000000);
	v->api.clk = &v->clk;
}

static void env_stop(struct env *v)
{
	kf_stop(&v->srv);
	k8s_client_free(v->client);
	json_decref(v->api.lease);
	pthread_mutex_destroy(&v->api.mu);
}

struct transitions {
	pthread_mutex_t mu;
	char log[256];
};

static void on_change(void *ctx, bool leading)
{
	struct transitions *t = ctx;
	size_t n = strlen(t->log);

	snprintf(t->log + n, sizeof(t->log) - n, "%s", leading ? "+" : "-");
}

static struct k8s_lease *lease_new(struct env *v, const char *id, struct transitions *t)
{
	struct k8s_lease_opts o = {
		.name = "l",
		.ns = "ns",
		.identity = id,
		.lease_duration_ms = 15000,
		.renew_deadline_ms = 10000,
		.retry_period_ms = 2000,
		.clock = &v->clk,
		.on_change = t ? on_change : NULL,
		.ctx = t,
	};
	struct k8s_lease *l = k8s_lease_new(v->client, &o, NULL);

	ck_assert_ptr_nonnull(l);
	return l;
}

static int64_t now(struct env *v)
{
	return clock_now_mono(&v->clk);
}

static const char *spec_s(struct env *v, const char *key)
{
	json_t *j = json_object_get(json_object_get(v->api.lease, "spec"), key);

	return json_is_string(j) ? json_string_value(j) : NULL;
}

static json_int_t spec_i(struct env *v, const char *key)
{
	return json_integer_value(json_object_get(json_object_get(v->api.lease, "spec"), key));
}

/* ---- the state machine, step by step --------------------------------------------------- */

START_TEST(test_acquire_creates)
{
	struct env v;
	struct transitions t = { .log = "" };
	struct k8s_lease *a;
	char holder[64];

	env_start(&v);
	a = lease_new(&v, "pod-a", &t);
	ck_assert(!k8s_lease_is_leader(a, now(&v)));
	ck_assert_int_eq(k8s_lease_transitions(a), -1);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	ck_assert(k8s_lease_is_leader(a, now(&v)));
	ck_assert_int_eq(k8s_lease_valid_until(a), now(&v) + 10000);
	ck_assert_int_eq(v.api.posts, 1);
	ck_assert_str_eq(spec_s(&v, "holderIdentity"), "pod-a");
	ck_assert_int_eq(spec_i(&v, "leaseDurationSeconds"), 15);
	ck_assert_int_eq(spec_i(&v, "leaseTransitions"), 0);
	/* the manual wall clock starts where the monotonic one does: 1000 s after the epoch */
	ck_assert_str_eq(spec_s(&v, "renewTime"), "1970-01-01T00:16:40.000000Z");
	ck_assert_str_eq(spec_s(&v, "acquireTime"), "1970-01-01T00:16:40.000000Z");
	k8s_lease_holder(a, holder, sizeof(holder));
	ck_assert_str_eq(holder, "pod-a");
	ck_assert_str_eq(t.log, "+");
	k8s_lease_free(a);
	env_stop(&v);
}
END_TEST

START_TEST(test_renew_is_one_put)
{
	struct env v;
	struct k8s_lease *a;

	env_start(&v);
	a = lease_new(&v, "pod-a", NULL);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	for (int i = 0; i < 5; i++) {
		clock_manual_advance(&v.clk, 2000);
		ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
		ck_assert_int_eq(k8s_lease_valid_until(a), now(&v) + 10000);
	}
	ck_assert_int_eq(v.api.gets, 1); /* only the first acquire reads */
	ck_assert_int_eq(v.api.puts, 5);
	ck_assert_str_eq(spec_s(&v, "renewTime"), "1970-01-01T00:16:50.000000Z");
	ck_assert_str_eq(spec_s(&v, "acquireTime"), "1970-01-01T00:16:40.000000Z");
	k8s_lease_free(a);
	env_stop(&v);
}
END_TEST

START_TEST(test_takeover_after_expiry)
{
	struct env v;
	struct transitions ta = { .log = "" }, tb = { .log = "" };
	struct k8s_lease *a, *b;
	struct err e;

	env_start(&v);
	a = lease_new(&v, "pod-a", &ta);
	b = lease_new(&v, "pod-b", &tb);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	err_clear(&e);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), &e), -EBUSY);
	ck_assert_str_eq(e.msg, "lease l: held by pod-a");
	/* a renews once more, which restarts b's expiry clock */
	clock_manual_advance(&v.clk, 2000);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), -EBUSY);
	/* a goes silent: b waits a full duration from when it saw the last change */
	clock_manual_advance(&v.clk, 14999);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), -EBUSY);
	ck_assert(!k8s_lease_is_leader(a, now(&v))); /* a fenced itself long before */
	ck_assert_str_eq(ta.log, "+");               /* nobody told it yet: no step */
	ck_assert(!k8s_lease_check(a, now(&v)));
	ck_assert_str_eq(ta.log, "+-");
	clock_manual_advance(&v.clk, 1);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), 0);
	ck_assert_str_eq(spec_s(&v, "holderIdentity"), "pod-b");
	ck_assert_int_eq(spec_i(&v, "leaseTransitions"), 1);
	ck_assert_int_eq(k8s_lease_transitions(b), 1);
	ck_assert_str_eq(tb.log, "+");
	/* a comes back: its cached PUT conflicts, it re-reads and sees b */
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), -EBUSY);
	ck_assert_int_eq(v.api.conflicts, 1);
	ck_assert_str_eq(spec_s(&v, "holderIdentity"), "pod-b");
	ck_assert_str_eq(ta.log, "+-");
	k8s_lease_free(a);
	k8s_lease_free(b);
	env_stop(&v);
}
END_TEST

/* A candidate that kept observing takes over a duration after the last renewal it saw,
 * not a duration after it was asked to acquire; observing never writes. */
START_TEST(test_observe_starts_the_clock)
{
	struct env v;
	struct k8s_lease *a, *b;
	int puts;

	env_start(&v);
	a = lease_new(&v, "pod-a", NULL);
	b = lease_new(&v, "pod-b", NULL);
	ck_assert_int_eq(k8s_lease_observe(b, NULL), 0); /* no Lease yet: fine */
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	for (int i = 0; i < 3; i++) {
		clock_manual_advance(&v.clk, 2000);
		ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
		ck_assert_int_eq(k8s_lease_observe(b, NULL), 0);
	}
	puts = v.api.puts;
	/* a goes silent; b keeps observing the same record */
	for (int i = 0; i < 7; i++) {
		clock_manual_advance(&v.clk, 2000);
		ck_assert_int_eq(k8s_lease_observe(b, NULL), 0);
	}
	ck_assert_int_eq(v.api.puts, puts);
	clock_manual_advance(&v.clk, 999); /* 14999 ms after the last change b saw */
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), -EBUSY);
	clock_manual_advance(&v.clk, 1);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), 0);
	ck_assert_str_eq(spec_s(&v, "holderIdentity"), "pod-b");
	k8s_lease_free(a);
	k8s_lease_free(b);
	env_stop(&v);
}
END_TEST

/* The expiry clock starts when the record ARRIVED: a GET answered 3 s late carries a
 * record that may have been renewed just before the answer, so counting from when the
 * request was sent would let b take over 3 s early, inside the holder's fence margin. */
START_TEST(test_observe_counts_from_receipt)
{
	struct env v;
	struct k8s_lease *a, *b;

	env_start(&v);
	a = lease_new(&v, "pod-a", NULL);
	b = lease_new(&v, "pod-b", NULL);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	v.api.slow_reply_ms = 3000;
	ck_assert_int_eq(k8s_lease_observe(b, NULL), 0); /* sent at t0, received at t0 + 3 s */
	clock_manual_advance(&v.clk, 14999);             /* 15 s - 1 ms after receipt */
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), -EBUSY);
	clock_manual_advance(&v.clk, 1);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), 0);
	/* the same for an acquire attempt's own GET */
	v.api.slow_reply_ms = 3000;
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), -EBUSY);
	clock_manual_advance(&v.clk, 14999);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), -EBUSY);
	k8s_lease_free(a);
	k8s_lease_free(b);
	env_stop(&v);
}
END_TEST

START_TEST(test_renew_deadline)
{
	struct env v;
	struct transitions t = { .log = "" };
	struct k8s_lease *a;
	int64_t t0;

	env_start(&v);
	a = lease_new(&v, "pod-a", &t);
	t0 = now(&v);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, t0, NULL), 0);
	v.api.fail_left = 100;
	for (int i = 1; i <= 4; i++) {
		clock_manual_advance(&v.clk, 2000);
		ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), -EIO);
		ck_assert(k8s_lease_is_leader(a, now(&v))); /* still inside the deadline */
	}
	ck_assert(k8s_lease_is_leader(a, t0 + 9999));
	ck_assert(!k8s_lease_is_leader(a, t0 + 10000)); /* at once, no I/O */
	ck_assert_str_eq(t.log, "+");
	clock_manual_advance(&v.clk, 2000);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), -EIO);
	ck_assert_str_eq(t.log, "+-");
	ck_assert(!k8s_lease_check(a, now(&v)));
	ck_assert_str_eq(t.log, "+-"); /* reported once */
	/* the API is back and nobody took over: a renews and leads again */
	v.api.fail_left = 0;
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	ck_assert_str_eq(t.log, "+-+");
	ck_assert_int_eq(spec_i(&v, "leaseTransitions"), 0);
	k8s_lease_free(a);
	env_stop(&v);
}
END_TEST

START_TEST(test_release_fast_path)
{
	struct env v;
	struct transitions ta = { .log = "" };
	struct k8s_lease *a, *b;

	env_start(&v);
	a = lease_new(&v, "pod-a", &ta);
	b = lease_new(&v, "pod-b", NULL);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), -EBUSY);
	ck_assert_int_eq(k8s_lease_release(a, NULL), 0);
	ck_assert(!k8s_lease_is_leader(a, now(&v)));
	ck_assert_str_eq(ta.log, "+-");
	ck_assert_ptr_null(spec_s(&v, "holderIdentity"));
	ck_assert_int_eq(spec_i(&v, "leaseDurationSeconds"), 1);
	/* no clock advance at all: b takes it at its next step */
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(b, now(&v), NULL), 0);
	ck_assert_str_eq(spec_s(&v, "holderIdentity"), "pod-b");
	ck_assert_int_eq(spec_i(&v, "leaseDurationSeconds"), 15);
	ck_assert_int_eq(spec_i(&v, "leaseTransitions"), 1);
	/* releasing what we do not hold writes nothing */
	v.api.puts = 0;
	ck_assert_int_eq(k8s_lease_release(a, NULL), 0);
	ck_assert_int_eq(v.api.puts, 0);
	k8s_lease_free(a);
	k8s_lease_free(b);
	env_stop(&v);
}
END_TEST

/* Someone else touched the Lease (a label, say) but we still hold it: 409, re-read, renew. */
START_TEST(test_conflict_reread)
{
	struct env v;
	struct k8s_lease *a;

	env_start(&v);
	a = lease_new(&v, "pod-a", NULL);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	pthread_mutex_lock(&v.api.mu);
	api_store(&v.api, json_deep_copy(v.api.lease)); /* bumps the resourceVersion */
	pthread_mutex_unlock(&v.api.mu);
	clock_manual_advance(&v.clk, 2000);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), 0);
	ck_assert_int_eq(v.api.conflicts, 1);
	ck_assert_int_eq(v.api.gets, 2);
	ck_assert_int_eq(spec_i(&v, "leaseTransitions"), 0);
	ck_assert(k8s_lease_is_leader(a, now(&v)));
	k8s_lease_free(a);
	env_stop(&v);
}
END_TEST

/* Two candidates create at once: the other's POST lands first; ours is AlreadyExists. */
START_TEST(test_create_race)
{
	struct env v;
	struct k8s_lease *a;
	struct err e;

	env_start(&v);
	a = lease_new(&v, "pod-a", NULL);
	v.api.steal_on_post = true;
	err_clear(&e);
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), &e), -EBUSY);
	ck_assert_str_eq(e.msg, "lease l: created by another candidate");
	ck_assert(!k8s_lease_is_leader(a, now(&v)));
	ck_assert_int_eq(k8s_lease_try_acquire_or_renew(a, now(&v), NULL), -EBUSY);
	ck_assert_str_eq(spec_s(&v, "holderIdentity"), "pod-x");
	k8s_lease_free(a);
	env_stop(&v);
}
END_TEST

/* ---- the thread helper, real time ------------------------------------------------------- */

struct flag {
	pthread_mutex_t mu;
	char log[64];
	int64_t lost_at;
};

static void on_change_rt(void *ctx, bool leading)
{
	struct flag *f = ctx;

	pthread_mutex_lock(&f->mu);
	snprintf(f->log + strlen(f->log), sizeof(f->log) - strlen(f->log), "%s",
	         leading ? "+" : "-");
	if (!leading)
		f->lost_at = clock_mono_ms();
	pthread_mutex_unlock(&f->mu);
}

static bool flag_is(struct flag *f, const char *want)
{
	bool eq;

	pthread_mutex_lock(&f->mu);
	eq = strcmp(f->log, want) == 0;
	pthread_mutex_unlock(&f->mu);
	return eq;
}

START_TEST(test_thread_watchdog)
{
	struct env v;
	struct flag f = { .log = "" };
	struct k8s_lease_opts o = {
		.name = "l",
		.ns = "ns",
		.identity = "pod-a",
		.lease_duration_ms = 1500,
		.renew_deadline_ms = 600,
		.retry_period_ms = 100,
		.on_change = on_change_rt,
		.ctx = &f,
	};
	struct k8s_lease *a;
	int64_t valid;

	pthread_mutex_init(&f.mu, NULL);
	env_start(&v);
	a = k8s_lease_new(v.client, &o, NULL);
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(k8s_lease_start(a, NULL), 0);
	ck_assert_int_eq(k8s_lease_start(a, NULL), -EALREADY);
	for (int i = 0; i < 200 && !flag_is(&f, "+"); i++)
		kf_msleep(5);
	ck_assert(flag_is(&f, "+"));
	kf_msleep(300);
	pthread_mutex_lock(&v.api.mu);
	ck_assert_int_ge(v.api.puts, 2); /* renewing every ~100 ms */
	pthread_mutex_unlock(&v.api.mu);
	/* every request now hangs for 3 s: the watchdog must end leadership at the deadline */
	pthread_mutex_lock(&v.api.mu);
	v.api.delay_ms = 3000;
	pthread_mutex_unlock(&v.api.mu);
	kf_msleep(150);
	valid = k8s_lease_valid_until(a);
	for (int i = 0; i < 400 && !flag_is(&f, "+-"); i++)
		kf_msleep(5);
	ck_assert(flag_is(&f, "+-"));
	ck_assert_int_le(f.lost_at - valid, 50); /* at once: within 50 ms of the deadline */
	ck_assert(!k8s_lease_is_leader(a, clock_mono_ms()));
	pthread_mutex_lock(&v.api.mu);
	v.api.delay_ms = 0;
	pthread_mutex_unlock(&v.api.mu);
	kf_stop(&v.srv); /* ends the hanging request */
	k8s_lease_stop(a, false);
	k8s_lease_free(a);
	k8s_client_free(v.client);
	json_decref(v.api.lease);
	pthread_mutex_destroy(&f.mu);
}
END_TEST

START_TEST(test_thread_release_on_stop)
{
	struct env v;
	struct k8s_lease_opts o = {
		.name = "l",
		.ns = "ns",
		.identity = "pod-a",
		.lease_duration_ms = 1500,
		.renew_deadline_ms = 600,
		.retry_period_ms = 100,
	};
	struct k8s_lease *a;

	env_start(&v);
	a = k8s_lease_new(v.client, &o, NULL);
	ck_assert_int_eq(k8s_lease_start(a, NULL), 0);
	for (int i = 0; i < 200 && !k8s_lease_is_leader(a, clock_mono_ms()); i++)
		kf_msleep(5);
	ck_assert(k8s_lease_is_leader(a, clock_mono_ms()));
	k8s_lease_stop(a, true);
	ck_assert(!k8s_lease_is_leader(a, clock_mono_ms()));
	ck_assert_ptr_null(spec_s(&v, "holderIdentity"));
	k8s_lease_stop(a, false); /* idempotent */
	k8s_lease_free(a);
	env_stop(&v);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("k8s_lease");
	TCase *tp = tcase_create("pure");
	TCase *ts = tcase_create("steps");
	TCase *tt = tcase_create("thread");

	log_configure(LOG_LEVEL_ERROR, LOG_FORMAT_LOGFMT, NULL, NULL);
	tcase_add_loop_test(tp, test_decide, 0, ARRAY_LEN(decide_cases));
	tcase_add_test(tp, test_decide_no_spec);
	tcase_add_loop_test(tp, test_judge, 0, ARRAY_LEN(judge_cases));
	tcase_add_test(tp, test_seen_update);
	tcase_add_loop_test(tp, test_bad_opts, 0, ARRAY_LEN(bad_opts));
	tcase_add_test(tp, test_identity_too_long);
	suite_add_tcase(s, tp);
	tcase_add_test(ts, test_acquire_creates);
	tcase_add_test(ts, test_renew_is_one_put);
	tcase_add_test(ts, test_takeover_after_expiry);
	tcase_add_test(ts, test_observe_starts_the_clock);
	tcase_add_test(ts, test_observe_counts_from_receipt);
	tcase_add_test(ts, test_renew_deadline);
	tcase_add_test(ts, test_release_fast_path);
	tcase_add_test(ts, test_conflict_reread);
	tcase_add_test(ts, test_create_race);
	suite_add_tcase(s, ts);
	tcase_set_timeout(tt, 20);
	tcase_add_test(tt, test_thread_watchdog);
	tcase_add_test(tt, test_thread_release_on_stop);
	suite_add_tcase(s, tt);
	return s;
}

UNIT_MAIN(make_suite)

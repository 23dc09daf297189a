/*
 * Unit tests for lib/k8s/multi against a local HTTP server (k8s_fake.h) with fast,
 * slow, large, failing and missing endpoints: results in URL order, per-request
 * timeouts, a call that lasts about the slowest request and never the sum, the body
 * cap, refused connections, bad URLs, the bearer header, and reuse of one k8s_multi.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "k8s_fake.h"
#include "lib/clock.h"
#include "lib/k8s/multi.h"
#include "unit.h"

struct srv_ctx {
	struct kf_server *srv;
	char auth[256]; /* the last Authorization header seen */
	pthread_mutex_t mu;
};

static void handle(void *ctx, int fd, const struct kf_req *r)
{
	struct srv_ctx *c = ctx;
	const char *a = strcasestr(r->headers, "\r\nAuthorization: ");
	static char big[8192];

	if (a) {
		pthread_mutex_lock(&c->mu);
		snprintf(c->auth, sizeof(c->auth), "%.*s", (int)strcspn(a + 2, "\r"), a + 2);
		pthread_mutex_unlock(&c->mu);
	}
	if (!strcmp(r->target, "/fast")) {
		kf_reply(fd, 200, "{\"role\":\"primary\"}");
	} else if (!strncmp(r->target, "/sleep/", 7)) {
		kf_sleep(c->srv, (int)strtol(r->target + 7, NULL, 10));
		kf_reply(fd, 200, "{\"slept\":true}");
	} else if (!strcmp(r->target, "/big")) {
		memset(big, 'x', sizeof(big));
		kf_reply_n(fd, 200, big, sizeof(big));
	} else if (!strcmp(r->target, "/drop")) {
		return; /* closes without an answer */
	} else {
		kf_reply(fd, 404, "{\"error\":\"not found\"}");
	}
}

struct env {
	struct kf_server srv;
	struct srv_ctx c;
	char base[64];
};

static void env_start(struct env *v)
{
	memset(v, 0, sizeof(*v));
	v->c.srv = &v->srv;
	pthread_mutex_init(&v->c.mu, NULL);
	ck_assert_int_eq(kf_start(&v->srv, handle, &v->c), 0);
	snprintf(v->base, sizeof(v->base), "http://127.0.0.1:%d", v->srv.port);
}

static void env_stop(struct env *v)
{
	kf_stop(&v->srv);
	pthread_mutex_destroy(&v->c.mu);
}

/* A port on which nothing listens: bind, read the port, close. */
static int closed_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static const struct {
	const char *path; /* appended to the server's base; "@refused" for a closed port */
	long http;
	int err;
	const char *body;
} cases[] = {
	{ "/fast", 200, 0, "{\"role\":\"primary\"}" },
	{ "/sleep/3000", 0, -ETIMEDOUT, NULL },
	{ "/fast", 200, 0, "{\"role\":\"primary\"}" },
	{ "/missing", 404, 0, "{\"error\":\"not found\"}" },
	{ "/big", 200, -EMSGSIZE, NULL },
	{ "/drop", 0, -ECONNRESET, NULL },
	{ "@refused", 0, -ECONNREFUSED, NULL },
	{ "@bad", 0, -EINVAL, NULL },
	{ "@null", 0, -EINVAL, NULL },
	{ "/sleep/200", 200, 0, "{\"slept\":true}" },
};

START_TEST(test_mixed)
{
	struct k8s_multi_opts o = { .timeout_ms = 800, .body_max = 1024 };
	struct k8s_multi_result res[ARRAY_LEN(cases)];
	const char *urls[ARRAY_LEN(cases)];
	char buf[ARRAY_LEN(cases)][96];
	struct env v;
	int64_t t0, took;

	env_start(&v);
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		if (!strcmp(cases[i].path, "@refused"))
			snprintf(buf[i], sizeof(buf[i]), "http://127.0.0.1:%d/x", closed_port());
		else if (!strcmp(cases[i].path, "@bad"))
			snprintf(buf[i], sizeof(buf[i]), "gopher://127.0.0.1/x");
		else
			snprintf(buf[i], sizeof(buf[i]), "%s%s", v.base, cases[i].path);
		urls[i] = strcmp(cases[i].path, "@null") ? buf[i] : NULL;
	}
	t0 = clock_mono_ms();
	ck_assert_int_eq(k8s_multi_get_once(urls, ARRAY_LEN(cases), &o, res, NULL), 0);
	took = clock_mono_ms() - t0;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		ck_assert_msg(res[i].err == cases[i].err, "%s: err %d, want %d (%s)", cases[i].path,
		              res[i].err, cases[i].err, res[i].msg);
		ck_assert_int_eq(res[i].http, cases[i].http);
		if (cases[i].body)
			ck_assert_str_eq(res[i].body, cases[i].body);
	}
	ck_assert(res[4].truncated);
	ck_assert_uint_eq(res[4].body_len, 1024);
	ck_assert_int_ge(res[1].elapsed_ms, 790);
	ck_assert_int_lt(res[0].elapsed_ms, 500 * unit_time_scale());
	/* the slow one bounds the call: about 800 ms, not 800 + 200 + ... */
	ck_assert_int_lt(took, 1400 * unit_time_scale());
	k8s_multi_results_release(res, ARRAY_LEN(cases));
	env_stop(&v);
}
END_TEST

/* Eight 300 ms requests in parallel take about 300 ms, not 2.4 s; twice on one handle. */
START_TEST(test_parallel_reuse)
{
	struct k8s_multi_opts o = { .timeout_ms = 2000, .bearer_token = "s3cret" };
	struct k8s_multi_result res[8];
	const char *urls[8];
	char url[96];
	struct env v;
	struct k8s_multi *m;

	env_start(&v);
	snprintf(url, sizeof(url), "%s/sleep/300", v.base);
	for (size_t i = 0; i < ARRAY_LEN(urls); i++)
		urls[i] = url;
	m = k8s_multi_new(&o);
	for (int round = 0; round < 2; round++) {
		int64_t t0 = clock_mono_ms(), took;

		ck_assert_int_eq(k8s_multi_get(m, urls, ARRAY_LEN(urls), res, NULL), 0);
		took = clock_mono_ms() - t0;
		for (size_t i = 0; i < ARRAY_LEN(urls); i++) {
			ck_assert_int_eq(res[i].err, 0);
			ck_assert_int_eq(res[i].http, 200);
		}
		ck_assert_int_lt(took, 1000 * unit_time_scale());
		ck_assert_int_ge(took, 290);
		k8s_multi_results_release(res, ARRAY_LEN(urls));
	}
	ck_assert_str_eq(v.c.auth, "Authorization: Bearer s3cret");
	k8s_multi_free(m);
	env_stop(&v);
}
END_TEST

START_TEST(test_limits)
{
	struct k8s_multi_result r;
	const char *url = "http://127.0.0.1:1/x";
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(k8s_multi_get_once(&url, K8S_MULTI_URLS_MAX + 1, NULL, &r, &e), -EINVAL);
	ck_assert_int_eq(e.code, -EINVAL);
	ck_assert_int_eq(k8s_multi_get_once(&url, 0, NULL, &r, NULL), 0);
	k8s_multi_results_release(NULL, 3);
	k8s_multi_free(NULL);
}
END_TEST

/* TLS options reach libcurl: a CA file that does not exist fails the request cleanly. */
START_TEST(test_tls_bad_ca)
{
	struct k8s_multi_tls tls = { .ca_file = "/nonexistent/ca.crt" };
	struct k8s_multi_opts o = { .timeout_ms = 1000, .tls = &tls };
	struct k8s_multi_result r;
	struct env v;
	char url[96];
	const char *u = url;

	env_start(&v);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/fast", v.srv.port);
	ck_assert_int_eq(k8s_multi_get_once(&u, 1, &o, &r, NULL), 0);
	ck_assert_int_lt(r.err, 0);
	ck_assert_int_eq(r.http, 0);
	k8s_multi_results_release(&r, 1);
	env_stop(&v);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("k8s_multi");
	TCase *tc = tcase_create("multi");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_mixed);
	tcase_add_test(tc, test_parallel_reuse);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_tls_bad_ca);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)

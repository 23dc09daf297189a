/*
 * Unit tests for lib/httpc: the shared CURLcode and status tables and every caller's
 * map over them (the differences httpc.h lists), and the options a request puts on the
 * wire, checked against the fake HTTP server of k8s_fake.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "k8s_fake.h"
#include "lib/httpc.h"
#include "unit.h"

/* ---- the tables ----------------------------------------------------------------------- */

static const struct {
	const struct httpc_errmap *m;
	CURLcode cc;
	int want;
} curl_cases[] = {
	{ NULL, CURLE_OK, 0 },
	{ &httpc_errmap_shared, CURLE_COULDNT_CONNECT, -ECONNREFUSED },
	{ &httpc_errmap_shared, CURLE_COULDNT_RESOLVE_HOST, -EHOSTUNREACH },
	{ &httpc_errmap_shared, CURLE_COULDNT_RESOLVE_PROXY, -EHOSTUNREACH },
	{ &httpc_errmap_shared, CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ &httpc_errmap_shared, CURLE_RECV_ERROR, -ECONNRESET },
	{ &httpc_errmap_shared, CURLE_PARTIAL_FILE, -EIO },
	{ &httpc_errmap_shared, CURLE_FILESIZE_EXCEEDED, -EMSGSIZE },
	{ &httpc_errmap_shared, CURLE_PEER_FAILED_VERIFICATION, -EACCES },
	{ &httpc_errmap_shared, CURLE_SSL_CERTPROBLEM, -EINVAL },
	{ &httpc_errmap_shared, CURLE_ABORTED_BY_CALLBACK, -ECANCELED },
	{ &httpc_errmap_shared, CURLE_OUT_OF_MEMORY, -ENOMEM },
	{ &httpc_errmap_shared, CURLE_WEIRD_SERVER_REPLY, -EPROTO },
	{ &httpc_errmap_shared, CURLE_WRITE_ERROR, -EIO }, /* not listed */
	{ &httpc_errmap_multi, CURLE_COULDNT_CONNECT, -ECONNREFUSED },
	{ &httpc_errmap_multi, CURLE_PEER_FAILED_VERIFICATION, -EACCES },
	{ &httpc_errmap_multi, CURLE_COULDNT_RESOLVE_PROXY, -EIO },
	{ &httpc_errmap_multi, CURLE_WEIRD_SERVER_REPLY, -EIO },
	{ &httpc_errmap_multi, CURLE_OUT_OF_MEMORY, -EIO },
	{ &httpc_errmap_objstore, CURLE_PARTIAL_FILE, -ECONNRESET },
	{ &httpc_errmap_objstore, CURLE_WEIRD_SERVER_REPLY, -EIO },
	{ &httpc_errmap_objstore, CURLE_OUT_OF_MEMORY, -ENOMEM },
	{ &httpc_errmap_objstore, CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ &httpc_errmap_instclient, CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ &httpc_errmap_instclient, CURLE_COULDNT_CONNECT, -ECONNREFUSED },
	{ &httpc_errmap_instclient, CURLE_COULDNT_RESOLVE_HOST, -EIO },
	{ &httpc_errmap_instclient, CURLE_PEER_FAILED_VERIFICATION, -EIO },
	{ &httpc_errmap_peer, CURLE_COULDNT_CONNECT, -EIO },
	{ &httpc_errmap_peer, CURLE_OPERATION_TIMEDOUT, -EIO },
};

START_TEST(curl_table)
{
	int got = httpc_curl_errno(curl_cases[_i].cc, curl_cases[_i].m);

	ck_assert_msg(got == curl_cases[_i].want, "case %d: CURLcode %d: got %s want %s", _i,
	              (int)curl_cases[_i].cc, err_name(got), err_name(curl_cases[_i].want));
}
END_TEST

static const struct {
	const struct httpc_errmap *m;
	long status;
	const char *reason;
	int want;
} status_cases[] = {
	{ NULL, 200, NULL, 0 },
	{ &httpc_errmap_shared, 201, NULL, 0 },
	{ &httpc_errmap_shared, 400, NULL, -EBADMSG },
	{ &httpc_errmap_shared, 404, NULL, -ENOENT },
	{ &httpc_errmap_shared, 409, "AlreadyExists", -EEXIST },
	{ &httpc_errmap_shared, 409, NULL, -EBUSY },
	{ &httpc_errmap_shared, 503, NULL, -EAGAIN },
	{ &httpc_errmap_shared, 302, NULL, -EPROTO },
	{ &httpc_errmap_objstore, 404, NULL, -ENOENT },
	{ &httpc_errmap_instclient, 200, NULL, 0 },
	{ &httpc_errmap_instclient, 204, NULL, -EIO }, /* 200 alone is success */
	{ &httpc_errmap_instclient, 400, NULL, -EINVAL },
	{ &httpc_errmap_instclient, 409, NULL, -EBUSY },
	{ &httpc_errmap_instclient, 409, "AlreadyExists", -EBUSY }, /* reasons not read */
	{ &httpc_errmap_instclient, 503, NULL, -EAGAIN },
	{ &httpc_errmap_instclient, 504, NULL, -ETIMEDOUT },
	{ &httpc_errmap_instclient, 404, NULL, -EIO },
	{ &httpc_errmap_instclient, 401, NULL, -EIO },
	{ &httpc_errmap_instclient, 500, NULL, -EIO },
	{ &httpc_errmap_peer, 200, NULL, 0 },
	{ &httpc_errmap_peer, 201, NULL, -EIO },
	{ &httpc_errmap_peer, 409, NULL, -EIO },
	{ &httpc_errmap_peer, 503, NULL, -EIO },
};

START_TEST(status_table)
{
	int got = httpc_status_errno(status_cases[_i].status, status_cases[_i].reason,
	                             status_cases[_i].m);

	ck_assert_msg(got == status_cases[_i].want, "case %d: HTTP %ld: got %s want %s", _i,
	              status_cases[_i].status, err_name(got), err_name(status_cases[_i].want));
}
END_TEST

/* ---- on the wire ------------------------------------------------------------------------- */

struct seen {
	pthread_mutex_t lock;
	char method[16];
	char headers[2048];
	char body[256];
	size_t body_len;
	int status;        /* what the server answers */
	const char *reply; /* its body */
	int delay_ms;
};

static void record(void *ctx, int fd, const struct kf_req *r)
{
	struct seen *s = ctx;

	pthread_mutex_lock(&s->lock);
	snprintf(s->method, sizeof(s->method), "%s", r->method);
	snprintf(s->headers, sizeof(s->headers), "%s", r->headers ? r->headers : "");
	snprintf(s->body, sizeof(s->body), "%.*s", (int)r->body_len, r->body ? r->body : "");
	s->body_len = r->body_len;
	pthread_mutex_unlock(&s->lock);
	if (s->delay_ms)
		kf_msleep(s->delay_ms);
	kf_reply(fd, s->status, s->reply);
}

static struct kf_server srv;
static struct seen seen;
static char url[64];

static void start(int status, const char *reply)
{
	memset(&seen, 0, sizeof(seen));
	pthread_mutex_init(&seen.lock, NULL);
	seen.status = status;
	seen.reply = reply;
	kf_start(&srv, record, &seen);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/x", srv.port);
}

static bool has_header(const char *name_value)
{
	return strcasestr(seen.headers, name_value) != NULL;
}

static const struct {
	const char *method;
	const char *body; /* NULL: none */
	const char *want_method;
} method_cases[] = {
	{ NULL, NULL, "GET" },         { "GET", NULL, "GET" },
	{ "HEAD", NULL, "HEAD" },      { "POST", "{}", "POST" },
	{ "PUT", "{\"a\":1}", "PUT" }, { "DELETE", "{\"kind\":\"DeleteOptions\"}", "DELETE" },
	{ "PATCH", "[]", "PATCH" },    { "POST", NULL, "POST" },
};

START_TEST(methods_and_bodies)
{
	struct httpc_body b = HTTPC_BODY_INIT(1024);
	struct httpc_req rq = { .method = method_cases[_i].method,
		                .body = method_cases[_i].body,
		                .body_len =
		                        method_cases[_i].body ? strlen(method_cases[_i].body) : 0,
		                .has_body = method_cases[_i].body != NULL,
		                .timeout_ms = 5000,
		                .connect_timeout_ms = 1000 };
	long status;
	int rc;

	start(200, "{\"ok\":true}");
	rq.url = url;
	rc = httpc_perform(&rq, &b, &status, NULL, NULL);
	kf_stop(&srv);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(status, 200);
	ck_assert_str_eq(seen.method, method_cases[_i].want_method);
	ck_assert_str_eq(seen.body, method_cases[_i].body ? method_cases[_i].body : "");
	if (strcmp(method_cases[_i].want_method, "HEAD") == 0)
		ck_assert_uint_eq(b.buf.len, 0);
	else
		ck_assert_str_eq(buf_cstr(&b.buf), "{\"ok\":true}");
	ck_assert(!has_header("User-Agent:")); /* none unless asked */
	buf_release(&b.buf);
}
END_TEST

START_TEST(headers_and_user_agent)
{
	struct httpc_body b = HTTPC_BODY_INIT(1024);
	struct curl_slist *h = httpc_headers_add(NULL, "Accept: application/json");
	struct httpc_req rq = { .user_agent = "redis-operator-test", .timeout_ms = 5000 };
	long status;

	h = httpc_headers_add(h, "X-Test: 1");
	rq.headers = h;
	start(200, "{}");
	rq.url = url;
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, NULL, NULL), 0);
	kf_stop(&srv);
	ck_assert(has_header("User-Agent: redis-operator-test"));
	ck_assert(has_header("Accept: application/json"));
	ck_assert(has_header("X-Test: 1"));
	httpc_headers_free(h);
	httpc_headers_free(NULL);
	buf_release(&b.buf);
}
END_TEST

/* A body past the cap: the head is kept, the transfer stops, and each map reads it. */
START_TEST(body_cap)
{
	struct httpc_body b = HTTPC_BODY_INIT(4);
	struct httpc_req rq = { .timeout_ms = 5000 };
	struct err e;
	long status;

	err_clear(&e);
	start(200, "0123456789");
	rq.url = url;
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, &httpc_errmap_instclient, &e), -EIO);
	kf_stop(&srv);
	ck_assert(b.overflow);
	ck_assert_str_eq(buf_cstr(&b.buf), "0123");
	ck_assert_int_eq(status, 0);
	ck_assert_ptr_nonnull(strstr(e.msg, url));
	buf_release(&b.buf);
}
END_TEST

START_TEST(status_through_map)
{
	struct httpc_body b = HTTPC_BODY_INIT(1024);
	struct httpc_req rq = { .method = "POST", .body = "{}", .body_len = 2, .has_body = true };
	long status;

	start(400, "{\"error\":\"bad\"}");
	rq.url = url;
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, &httpc_errmap_instclient, NULL), -EINVAL);
	ck_assert_int_eq(status, 400);
	ck_assert_str_eq(buf_cstr(&b.buf), "{\"error\":\"bad\"}");
	buf_clear(&b.buf);
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, NULL, NULL), -EBADMSG);
	kf_stop(&srv);
	buf_release(&b.buf);
}
END_TEST

START_TEST(deadline)
{
	struct httpc_body b = HTTPC_BODY_INIT(1024);
	struct httpc_req rq = { .timeout_ms = 200, .connect_timeout_ms = 5000 };
	long status;

	start(200, "{}");
	seen.delay_ms = 2000;
	rq.url = url;
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, NULL, NULL), -ETIMEDOUT);
	kf_stop(&srv);
	buf_release(&b.buf);
}
END_TEST

START_TEST(refused_and_protocols)
{
	struct httpc_body b = HTTPC_BODY_INIT(1024);
	struct httpc_req rq = { .timeout_ms = 2000 };
	long status;
	int port;

	start(200, "{}");
	port = srv.port;
	rq.url = url;
	rq.protocols = "https"; /* an http:// URL is refused before anything is sent */
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, NULL, NULL), -EINVAL);
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, &httpc_errmap_peer, NULL), -EIO);
	ck_assert_str_eq(seen.method, "");
	kf_stop(&srv);
	rq.protocols = NULL;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/x", port);
	ck_assert_int_eq(httpc_perform(&rq, &b, &status, NULL, NULL), -ECONNREFUSED);
	buf_release(&b.buf);
}
END_TEST

static Suite *httpc_suite(void)
{
	Suite *s = suite_create("httpc");
	TCase *tables = tcase_create("tables");
	TCase *wire = tcase_create("wire");

	tcase_add_loop_test(tables, curl_table, 0, ARRAY_LEN(curl_cases));
	tcase_add_loop_test(tables, status_table, 0, ARRAY_LEN(status_cases));
	tcase_add_loop_test(wire, methods_and_bodies, 0, ARRAY_LEN(method_cases));
	tcase_add_test(wire, headers_and_user_agent);
	tcase_add_test(wire, body_cap);
	tcase_add_test(wire, status_through_map);
	tcase_add_test(wire, deadline);
	tcase_add_test(wire, refused_and_protocols);
	tcase_set_timeout(wire, 20);
	suite_add_tcase(s, tables);
	suite_add_tcase(s, wire);
	return s;
}

UNIT_MAIN(httpc_suite)

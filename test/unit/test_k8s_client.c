/*
 * Unit tests for lib/k8s/client and k8s_watch_run, against a fake API server.
 *
 * The fake server is a thread on 127.0.0.1, port 0, that answers each connection with
 * the next scripted response (Connection: close, so one request per connection) and
 * records the raw request bytes, so tests check what went on the wire: request line,
 * headers, body, retries (how many requests arrived) and timing. The client talks
 * plain http:// to it, which the client allows for tests only.
 * The struct k8s_config is built by hand (lib/k8s/config.c is another module).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api/resources.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/k8s/client.h"
#include "lib/k8s/watch.h"
#include "k8s_fake.h"
#include "unit.h"

/* ---- the fake API server ------------------------------------------------------------ */

#define FAKE_MAX_REQ 8
#define FAKE_REQ_MAX (1u << 20)

struct fake_resp {
	const char *status;        /* "200 OK" */
	const char *headers;       /* extra header lines, each ending in \r\n, or NULL */
	const char *body;          /* sent with Content-Length unless chunks is set */
	size_t pad;                /* bytes of 'x' appended to the body */
	const char *const *chunks; /* chunked body pieces, NULL-terminated */
	int delay_ms;              /* before answering */
	int gap_ms;                /* between chunks */
	int hang_ms;               /* after the chunks, before the last chunk and close */
};

struct fake_server {
	int fd, port;
	pthread_t thread;
	const struct fake_resp *script; /* one response per connection, in order */
	size_t n_script;
	atomic_bool stop;
	atomic_int served;
	struct buf req[FAKE_MAX_REQ];
};

static const struct fake_resp unscripted = { "599 Unscripted", NULL, "unscripted request" };

/* True once r holds the headers and Content-Length bytes of body. */
static bool request_complete(const struct buf *r)
{
	const char *end = strstr(buf_cstr(r), "\r\n\r\n");
	const char *cl = strcasestr(buf_cstr(r), "\r\ncontent-length:");
	long n = 0;

	if (!end)
		return false;
	if (cl && cl < end)
		n = strtol(cl + 17, NULL, 10);
	return r->len >= (size_t)(end + 4 - buf_cstr(r)) + (size_t)n;
}

static void fake_read_request(struct fake_server *s, int fd, struct buf *r)
{
	char chunk[4096];
	struct pollfd pfd = { fd, POLLIN, 0 };

	for (int waited = 0; !request_complete(r) && waited < 2000 && !atomic_load(&s->stop);) {
		ssize_t n;

		if (poll(&pfd, 1, 20) <= 0) {
			waited += 20;
			continue;
		}
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n <= 0 || buf_append(r, chunk, (size_t)n) != 0)
			return;
	}
}

static void fake_send_chunks(struct fake_server *s, int fd, const struct fake_resp *rs)
{
	char size[32];

	for (const char *const *c = rs->chunks; *c; c++) {
		if (c != rs->chunks && !kf_sleep_unless(&s->stop, rs->gap_ms))
			return;
		snprintf(size, sizeof(size), "%zx\r\n", strlen(*c));
		kf_send(fd, size, strlen(size));
		kf_send(fd, *c, strlen(*c));
		kf_send(fd, "\r\n", 2);
	}
	if (kf_sleep_unless(&s->stop, rs->hang_ms))
		kf_send(fd, "0\r\n\r\n", 5);
}

static void fake_answer(struct fake_server *s, int fd, const struct fake_resp *rs)
{
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	size_t blen = rs->body ? strlen(rs->body) : 0;

	if (!kf_sleep_unless(&s->stop, rs->delay_ms))
		return;
	buf_printf(&out, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nConnection: close\r\n%s",
	           rs->status, rs->headers ? rs->headers : "");
	if (rs->chunks)
		buf_printf(&out, "Transfer-Encoding: chunked\r\n\r\n");
	else
		buf_printf(&out, "Content-Length: %zu\r\n\r\n%s", blen + rs->pad,
		           rs->body ? rs->body : "");
	for (size_t i = 0; !rs->chunks && i < rs->pad; i++)
		buf_append_char(&out, 'x');
	kf_send(fd, out.data, out.len);
	buf_release(&out);
	if (rs->chunks)
		fake_send_chunks(s, fd, rs);
}

static void fake_serve(struct fake_server *s, int fd)
{
	int idx = atomic_load(&s->served);
	struct buf scratch = BUF_INIT(FAKE_REQ_MAX);
	struct buf *r = idx < FAKE_MAX_REQ ? &s->req[idx] : &scratch;

	fake_read_request(s, fd, r);
	atomic_fetch_add(&s->served, 1);
	fake_answer(s, fd, (size_t)idx < s->n_script ? &s->script[idx] : &unscripted);
	buf_release(&scratch);
}

static void *fake_main(void *arg)
{
	struct fake_server *s = arg;
	struct pollfd pfd = { s->fd, POLLIN, 0 };
	int fd;

	while (!atomic_load(&s->stop)) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		fd = accept(s->fd, NULL, NULL);
		if (fd < 0)
			continue;
		fake_serve(s, fd);
		close(fd);
	}
	return NULL;
}

static void fake_start(struct fake_server *s, const char *addr, const struct fake_resp *script,
                       size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int one = 1;

	memset(s, 0, sizeof(*s));
	for (int i = 0; i < FAKE_MAX_REQ; i++)
		buf_init(&s->req[i], FAKE_REQ_MAX);
	s->script = script;
	s->n_script = n;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(s->fd, 0);
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(inet_pton(AF_INET, addr, &sa.sin_addr), 1);
	ck_assert_int_eq(bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s->fd, 16), 0);
	ck_assert_int_eq(getsockname(s->fd, (struct sockaddr *)&sa, &len), 0);
	s->port = ntohs(sa.sin_port);
	ck_assert_int_eq(pthread_create(&s->thread, NULL, fake_main, s), 0);
}

static void fake_stop(struct fake_server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	close(s->fd);
}

static void fake_release(struct fake_server *s)
{
	for (int i = 0; i < FAKE_MAX_REQ; i++)
		buf_release(&s->req[i]);
}

/* ---- a client for it -------------------------------------------------------------------- */

static struct k8s_config cfg;

static struct k8s_client *client_for(const char *addr, int port, const struct k8s_client_opts *o)
{
	struct err e;
	struct k8s_client *c;

	memset(&cfg, 0, sizeof(cfg));
	cfg.server = xasprintf("http://%s:%d", addr, port);
	cfg.token = xstrdup("s3cr3t-token");
	err_clear(&e);
	c = k8s_client_new(&cfg, o, &e);
	ck_assert_msg(c != NULL, "k8s_client_new: %s", e.msg);
	return c;
}

static void client_done(struct k8s_client *c)
{
	k8s_client_free(c);
	free(cfg.server);
	free_secret(cfg.token);
	memset(&cfg, 0, sizeof(cfg));
}

/* ---- canned API answers (recorded from kube-apiserver, trimmed) ------------------------- */

#define RC_CACHE                                                                                   \
	"{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\",\"metadata\":{\"name\":"        \
	"\"cache\",\"namespace\":\"prod\",\"resourceVersion\":\"7\"},\"spec\":{\"instances\":3}}"
#define STATUS(code, reason, msg)                                                                  \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","       \
	"\"message\":\"" msg "\",\"reason\":\"" reason "\",\"code\":" #code "}"
#define NOT_FOUND STATUS(404, "NotFound", "redisclusters.redis.io \\\"cache\\\" not found")
#define EXISTS    STATUS(409, "AlreadyExists", "redisclusters.redis.io \\\"cache\\\" already exists")
#define CONFLICT                                                                                   \
	STATUS(409, "Conflict",                                                                    \
	       "Operation cannot be fulfilled on redisclusters.redis.io \\\"cache\\\": the "       \
	       "object "                                                                           \
	       "has been modified; please apply your changes to the latest version and try again")
#define INVALID                                                                                    \
	STATUS(422, "Invalid",                                                                     \
	       "RedisCluster.redis.io \\\"cache\\\" is invalid: spec.instances: Invalid value: "   \
	       "0: "                                                                               \
	       "spec.instances in body should be greater than or equal to 1")
#define TOO_MANY STATUS(429, "TooManyRequests", "Too many requests, please try again later.")
#define INTERNAL STATUS(500, "InternalError", "Internal error occurred: etcdserver: leader changed")
#define EXPIRED                                                                                    \
	STATUS(410, "Expired",                                                                     \
	       "The provided continue parameter is too old to display a consistent list result.")
#define UNAUTH STATUS(401, "Unauthorized", "Unauthorized")
#define SUCCESS                                                                                    \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\","       \
	"\"details\":{\"name\":\"db-0\",\"kind\":\"pods\",\"uid\":\"u-1\"}}"
#define PAGE1                                                                                      \
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"100\","   \
	"\"continue\":\"tok/1==\",\"remainingItemCount\":1},\"items\":[{\"metadata\":{\"name\":"   \
	"\"db-0\"}}]}"
#define PAGE2                                                                                      \
	"{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"101\"},"  \
	"\"items\":[{\"metadata\":{\"name\":\"db-1\"}}]}"

/* ---- request cases ------------------------------------------------------------------------ */

static int run_get(struct k8s_client *c, struct err *e)
{
	json_t *obj = NULL;
	int rc = k8s_get(c, &api_res_redisclusters, "prod", "cache", &obj, e);

	if (!rc)
		ck_assert_str_eq(json_string_value(
		                         json_object_get(json_object_get(obj, "metadata"), "name")),
		                 "cache");
	else
		ck_assert_ptr_null(obj);
	json_decref(obj);
	return rc;
}

static int run_create(struct k8s_client *c, struct err *e)
{
	json_t *obj = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "redis.io/v1", "kind",
	                        "RedisCluster", "metadata", "name", "cache");
	struct k8s_write_opts wo = { .field_manager = "redis-operator" };
	int rc = k8s_create(c, &api_res_redisclusters, "prod", obj, &wo, NULL, e);

	json_decref(obj);
	return rc;
}

static int run_replace_status(struct k8s_client *c, struct err *e)
{
	json_t *obj = json_pack("{s:{s:s, s:s}, s:{s:s}}", "metadata", "name", "cache",
	                        "resourceVersion", "6", "status", "phase", "Healthy");
	int rc = k8s_replace(c, &api_res_redisclusters, "prod", "cache", "status", obj, NULL, NULL,
	                     e);

	json_decref(obj);
	return rc;
}

static int run_patch_merge(struct k8s_client *c, struct err *e)
{
	json_t *p = json_pack("{s:{s:i}}", "spec", "instances", 0);
	int rc = k8s_patch(c, &api_res_redisclusters, "prod", "cache", NULL, K8S_PATCH_MERGE, p,
	                   NULL, NULL, e);

	json_decref(p);
	return rc;
}

static int run_patch_apply(struct k8s_client *c, struct err *e)
{
	json_t *p = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "redis.io/v1", "kind",
	                      "RedisCluster", "status", "phase", "Healthy");
	struct k8s_patch_opts po = { .field_manager = "redis-operator", .force = true };
	json_t *out = NULL;
	int rc = k8s_patch(c, &api_res_redisclusters, "prod", "cache", "status", K8S_PATCH_APPLY, p,
	                   &po, &out, e);

	if (!rc)
		ck_assert_ptr_nonnull(out);
	json_decref(out);
	json_decref(p);
	return rc;
}

static int run_patch_json(struct k8s_client *c, struct err *e)
{
	json_t *p = json_pack("[{s:s, s:s, s:i}]", "op", "replace", "path", "/spec/instances",
	                      "value", 3);
	struct k8s_patch_opts po = { .dry_run = true };
	int rc = k8s_patch(c, &api_res_redisclusters, "prod", "cache", NULL, K8S_PATCH_JSON, p, &po,
	                   NULL, e);

	json_decref(p);
	return rc;
}

static int run_patch_strategic(struct k8s_client *c, struct err *e)
{
	json_t *p = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "redis.io/role", "primary");
	int rc = k8s_patch(c, &k8s_res_pods, "prod", "db-0", NULL, K8S_PATCH_STRATEGIC, p, NULL,
	                   NULL, e);

	json_decref(p);
	return rc;
}

static int run_delete(struct k8s_client *c, struct err *e)
{
	struct k8s_delete_opts d = { .propagation_policy = "Foreground",
		                     .precondition_uid = "u-1",
		                     .precondition_rv = "42",
		                     .set_grace_period = true,
		                     .grace_period_seconds = 0 };

	return k8s_delete(c, &k8s_res_pods, "prod", "db-0", &d, e);
}

static int run_delete_default(struct k8s_client *c, struct err *e)
{
	return k8s_delete(c, &k8s_res_pods, "prod", "db-0", NULL, e);
}

static int run_list(struct k8s_client *c, struct err *e)
{
	struct k8s_list_opts lo = { .label_selector = "app=db", .limit = 1 };
	json_t *items = NULL;
	char *rv = NULL;
	int rc = k8s_list(c, &k8s_res_pods, "prod", &lo, &items, &rv, e);

	if (!rc) {
		ck_assert_uint_eq(json_array_size(items), 2);
		ck_assert_str_eq(
		        json_string_value(json_object_get(
		                json_object_get(json_array_get(items, 1), "metadata"), "name")),
		        "db-1");
		ck_assert_str_eq(rv, "100"); /* the first page's: the list's snapshot */
	} else {
		ck_assert_ptr_null(items);
		ck_assert_ptr_null(rv);
	}
	json_decref(items);
	free(rv);
	return rc;
}

static int run_bad_name(struct k8s_client *c, struct err *e)
{
	return k8s_get(c, &k8s_res_pods, "prod", "Bad_Name", NULL, e);
}

static int run_apply_no_manager(struct k8s_client *c, struct err *e)
{
	json_t *p = json_object();
	int rc = k8s_patch(c, &k8s_res_pods, "prod", "db-0", NULL, K8S_PATCH_APPLY, p, NULL, NULL,
	                   e);

	json_decref(p);
	return rc;
}

static int run_merge_with_array(struct k8s_client *c, struct err *e)
{
	json_t *p = json_array();
	int rc = k8s_patch(c, &k8s_res_pods, "prod", "db-0", NULL, K8S_PATCH_MERGE, p, NULL, NULL,
	                   e);

	json_decref(p);
	return rc;
}

static int run_bad_policy(struct k8s_client *c, struct err *e)
{
	struct k8s_delete_opts d = { .propagation_policy = "Now" };

	return k8s_delete(c, &k8s_res_pods, "prod", "db-0", &d, e);
}

#define R(...)                                                                                     \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define OK_RC R("200 OK", NULL, RC_CACHE)

struct wire_check {
	int req;         /* which request */
	const char *has; /* a substring of its raw bytes */
};

static const struct client_case {
	const char *name;
	int (*run)(struct k8s_client *c, struct err *e);
	struct fake_resp resp[4];
	struct k8s_client_opts opts;
	int want_rc;
	const char *want_msg; /* substring of e.msg */
	int want_requests;
	int min_ms, max_ms; /* elapsed bounds; 0: unchecked */
	struct wire_check wire[6];
} client_cases[] = {
	{ "get 200",
	  run_get,
	  { OK_RC },
	  { 0 },
	  0,
	  NULL,
	  1,
	  0,
	  0,
	  { { 0, "GET /apis/redis.io/v1/namespaces/prod/redisclusters/cache HTTP/1.1\r\n" },
	    { 0, "\r\nAccept: application/json\r\n" },
	    { 0, "\r\nUser-Agent: redis-operator\r\n" },
	    { 0, "\r\nAuthorization: Bearer s3cr3t-token\r\n" } } },
	{ "get 404",
	  run_get,
	  { R("404 Not Found", NULL, NOT_FOUND) },
	  { 0 },
	  -ENOENT,
	  "redisclusters.redis.io \"cache\" not found",
	  1 },
	{ "get 401",
	  run_get,
	  { R("401 Unauthorized", NULL, UNAUTH) },
	  { 0 },
	  -EACCES,
	  "Unauthorized",
	  1 },
	{ "create 409 exists",
	  run_create,
	  { R("409 Conflict", NULL, EXISTS) },
	  { 0 },
	  -EEXIST,
	  "redisclusters.redis.io \"cache\" already exists",
	  1,
	  0,
	  0,
	  { { 0, "POST /apis/redis.io/v1/namespaces/prod/redisclusters?fieldManager=redis-operator "
	         "HTTP/1.1\r\n" },
	    { 0, "\r\nContent-Type: application/json\r\n" },
	    { 0, "\r\n\r\n{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\",\"metadata\":"
	         "{\"name\":\"cache\"}}" } } },
	{ "replace status 409 conflict",
	  run_replace_status,
	  { R("409 Conflict", NULL, CONFLICT) },
	  { 0 },
	  -EBUSY,
	  "the object has been modified",
	  1,
	  0,
	  0,
	  { { 0, "PUT /apis/redis.io/v1/namespaces/prod/redisclusters/cache/status HTTP/1.1\r\n" },
	    { 0, "\"resourceVersion\":\"6\"" } } },
	{ "patch 422 invalid",
	  run_patch_merge,
	  { R("422 Unprocessable Entity", NULL, INVALID) },
	  { 0 },
	  -EINVAL,
	  "RedisCluster.redis.io \"cache\" is invalid: spec.instances: Invalid value: 0",
	  1,
	  0,
	  0,
	  { { 0, "PATCH /apis/redis.io/v1/namespaces/prod/redisclusters/cache HTTP/1.1\r\n" },
	    { 0, "\r\nContent-Type: application/merge-patch+json\r\n" },
	    { 0, "\r\n\r\n{\"spec\":{\"instances\":0}}" } } },
	{ "get 429 retry-after then 200",
	  run_get,
	  { R("429 Too Many Requests", "Retry-After: 1\r\n", TOO_MANY), OK_RC },
	  { 0 },
	  0,
	  NULL,
	  2,
	  900,
	  5000 },
	{ "get 500 then 200",
	  run_get,
	  { R("500 Internal Server Error", NULL, INTERNAL), OK_RC },
	  { 0 },
	  0,
	  NULL,
	  2,
	  50,
	  2000 },
	{ "get retries exhausted",
	  run_get,
	  { R("503 Service Unavailable", NULL, "upstream connect error"),
	    R("503 Service Unavailable", NULL, "upstream connect error") },
	  { .retries = 1 },
	  -EAGAIN,
	  "HTTP 503: upstream connect error",
	  2 },
	{ "get no retries",
	  run_get,
	  { R("500 Internal Server Error", NULL, INTERNAL) },
	  { .retries = -1 },
	  -EIO,
	  "leader changed",
	  1 },
	{ "create 500 not retried",
	  run_create,
	  { R("500 Internal Server Error", NULL, INTERNAL) },
	  { 0 },
	  -EIO,
	  "etcdserver: leader changed",
	  1 },
	{ "patch 429 not retried",
	  run_patch_merge,
	  { R("429 Too Many Requests", "Retry-After: 1\r\n", TOO_MANY) },
	  { 0 },
	  -EAGAIN,
	  "Too many requests",
	  1 },
	{ "get 200 not json",
	  run_get,
	  { R("200 OK", NULL, "<html>hello</html>") },
	  { 0 },
	  -EPROTO,
	  "response is not JSON",
	  1 },
	{ "get oversize content-length",
	  run_get,
	  { R("200 OK", NULL, "{", 4096) },
	  { .max_body = 1024 },
	  -EMSGSIZE,
	  "over 1024 bytes",
	  1 },
	{ "get oversize chunked",
	  run_get,
	  { { "200 OK", NULL, NULL, 0,
	      (const char *const[]){
	              "{\"a\":\"", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	              "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "\"}", NULL } } },
	  { .max_body = 64 },
	  -EMSGSIZE,
	  "over 64 bytes",
	  1 },
	{ "get slow hits deadline",
	  run_get,
	  { { "200 OK", NULL, RC_CACHE, 0, NULL, 3000 } },
	  { .timeout_ms = 300 },
	  -ETIMEDOUT,
	  "GET http://127.0.0.1:",
	  1,
	  250,
	  2500 },
	{ "list two pages",
	  run_list,
	  { R("200 OK", NULL, PAGE1), R("200 OK", NULL, PAGE2) },
	  { 0 },
	  0,
	  NULL,
	  2,
	  0,
	  0,
	  { { 0, "GET /api/v1/namespaces/prod/pods?labelSelector=app%3Ddb&limit=1 HTTP/1.1\r\n" },
	    { 1,
	      "GET "
	      "/api/v1/namespaces/prod/pods?labelSelector=app%3Ddb&limit=1&continue=tok%2F1%3D%3D "
	      "HTTP/1.1\r\n" } } },
	{ "list continue expired",
	  run_list,
	  { R("200 OK", NULL, PAGE1), R("410 Gone", NULL, EXPIRED) },
	  { 0 },
	  -ESTALE,
	  "continue parameter is too old",
	  2 },
	{ "list not a list",
	  run_list,
	  { R("200 OK", NULL, "{\"items\":7}") },
	  { 0 },
	  -EPROTO,
	  "not a list",
	  1 },
	{ "delete with preconditions",
	  run_delete,
	  { R("200 OK", NULL, SUCCESS) },
	  { 0 },
	  0,
	  NULL,
	  1,
	  0,
	  0,
	  { { 0, "DELETE /api/v1/namespaces/prod/pods/db-0 HTTP/1.1\r\n" },
	    { 0, "\r\n\r\n{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"propagationPolicy\":"
	         "\"Foreground\",\"gracePeriodSeconds\":0,\"preconditions\":{\"uid\":\"u-1\","
	         "\"resourceVersion\":\"42\"}}" } } },
	{ "delete 404",
	  run_delete_default,
	  { R("404 Not Found", NULL, STATUS(404, "NotFound", "pods \\\"db-0\\\" not found")) },
	  { 0 },
	  -ENOENT,
	  "pods \"db-0\" not found",
	  1,
	  0,
	  0,
	  { { 0, "\r\n\r\n{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"}" } } },
	{ "patch apply status",
	  run_patch_apply,
	  { OK_RC },
	  { 0 },
	  0,
	  NULL,
	  1,
	  0,
	  0,
	  { { 0, "PATCH /apis/redis.io/v1/namespaces/prod/redisclusters/cache/status"
	         "?fieldManager=redis-operator&force=true HTTP/1.1\r\n" },
	    { 0, "\r\nContent-Type: application/apply-patch+yaml\r\n" } } },
	{ "patch json dry run",
	  run_patch_json,
	  { OK_RC },
	  { 0 },
	  0,
	  NULL,
	  1,
	  0,
	  0,
	  { { 0,
	      "PATCH /apis/redis.io/v1/namespaces/prod/redisclusters/cache?dryRun=All HTTP/1.1" },
	    { 0, "\r\nContent-Type: application/json-patch+json\r\n" },
	    { 0, "\r\n\r\n[{\"op\":\"replace\",\"path\":\"/spec/instances\",\"value\":3}]" } } },
	{ "patch strategic",
	  run_patch_strategic,
	  { OK_RC },
	  { 0 },
	  0,
	  NULL,
	  1,
	  0,
	  0,
	  { { 0, "PATCH /api/v1/namespaces/prod/pods/db-0 HTTP/1.1\r\n" },
	    { 0, "\r\nContent-Type: application/strategic-merge-patch+json\r\n" } } },
	/* Refused before any request. */
	{ "bad name", run_bad_name, { OK_RC }, { 0 }, -EINVAL, "DNS-1123", 0 },
	{ "apply without field manager",
	  run_apply_no_manager,
	  { OK_RC },
	  { 0 },
	  -EINVAL,
	  "field manager",
	  0 },
	{ "merge patch with an array",
	  run_merge_with_array,
	  { OK_RC },
	  { 0 },
	  -EINVAL,
	  "must be a JSON object",
	  0 },
	{ "delete unknown policy",
	  run_bad_policy,
	  { OK_RC },
	  { 0 },
	  -EINVAL,
	  "propagationPolicy",
	  0 },
};

static size_t script_len(const struct fake_resp *r, size_t max)
{
	size_t n = 0;

	while (n < max && r[n].status)
		n++;
	return n;
}

START_TEST(client_table)
{
	const struct client_case *tc = &client_cases[_i];
	struct fake_server s;
	struct k8s_client *c;
	struct err e;
	int64_t t0, ms;
	int rc;

	fake_start(&s, "127.0.0.1", tc->resp, script_len(tc->resp, ARRAY_LEN(tc->resp)));
	c = client_for("127.0.0.1", s.port, &tc->opts);
	err_clear(&e);
	t0 = clock_mono_ms();
	rc = tc->run(c, &e);
	ms = clock_mono_ms() - t0;
	fake_stop(&s);
	ck_assert_msg(rc == tc->want_rc, "%s: rc %s want %s (%s)", tc->name, err_name(rc),
	              err_name(tc->want_rc), e.msg);
	ck_assert_int_eq(e.code, rc);
	if (tc->want_msg)
		ck_assert_msg(strstr(e.msg, tc->want_msg), "%s: message \"%s\"", tc->name, e.msg);
	ck_assert_msg(atomic_load(&s.served) == tc->want_requests, "%s: %d requests, want %d",
	              tc->name, atomic_load(&s.served), tc->want_requests);
	ck_assert_msg(!tc->min_ms || ms >= tc->min_ms, "%s: %lld ms", tc->name, (long long)ms);
	ck_assert_msg(!tc->max_ms || ms <= tc->max_ms, "%s: %lld ms", tc->name, (long long)ms);
	for (size_t i = 0; i < ARRAY_LEN(tc->wire) && tc->wire[i].has; i++)
		ck_assert_msg(strstr(buf_cstr(&s.req[tc->wire[i].req]), tc->wire[i].has),
		              "%s: request %d lacks %s:\n%s", tc->name, tc->wire[i].req,
		              tc->wire[i].has, buf_cstr(&s.req[tc->wire[i].req]));
	client_done(c);
	fake_release(&s);
}
END_TEST

/* ---- transport and configuration -------------------------------------------------------- */

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	close(fd);
	return ntohs(sa.sin_port);
}

START_TEST(connection_refused)
{
	struct k8s_client_opts o = { .retries = 1 };
	struct k8s_client *c = client_for("127.0.0.1", free_port(), &o);
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(run_get(c, &e), -ECONNREFUSED);
	ck_assert_ptr_nonnull(strstr(e.msg, "GET http://127.0.0.1:"));
	err_clear(&e);
	ck_assert_int_eq(run_create(c, &e), -ECONNREFUSED); /* retried: nothing was sent */
	client_done(c);
}
END_TEST

/* k8s_get_raw: the path as given, the body as it came (not JSON), GETs' retries, errors
 * through the Status table, a body past the caller's limit refused. */
START_TEST(get_raw)
{
	static const struct fake_resp script[] = {
		{ "503 Service Unavailable", NULL, "busy" },
		{ "200 OK", "Content-Type: text/plain\r\n", "line 1\nline 2\n" },
		{ "404 Not Found", NULL, NOT_FOUND },
		{ "200 OK", NULL, "0123456789" },
	};
	const char *path = "/api/v1/namespaces/prod/pods/https:cache-1:8000/proxy/v1/status";
	struct fake_server s;
	struct buf out = BUF_INIT(BUF_NO_LIMIT), small = BUF_INIT(4);
	struct k8s_client *c;
	struct err e = { 0 };

	fake_start(&s, "127.0.0.1", script, ARRAY_LEN(script));
	c = client_for("127.0.0.1", s.port, NULL);
	ck_assert_int_eq(k8s_get_raw(c, path, &out, &e), 0);
	ck_assert_str_eq(buf_cstr(&out), "line 1\nline 2\n");
	ck_assert_int_eq(k8s_get_raw(c, "/api/v1/namespaces/prod/pods/cache-1/log", &out, &e),
	                 -ENOENT);
	ck_assert_str_eq(buf_cstr(&out), "line 1\nline 2\n"); /* untouched on failure */
	err_clear(&e);
	ck_assert_int_eq(k8s_get_raw(c, "/api/v1/x", &small, &e), -EMSGSIZE);
	ck_assert_int_eq(k8s_get_raw(c, "no-slash", &out, &e), -EINVAL);
	fake_stop(&s);
	ck_assert_ptr_nonnull(
	        strstr(buf_cstr(&s.req[1]),
	               "GET /api/v1/namespaces/prod/pods/https:cache-1:8000/proxy/v1/status "
	               "HTTP/1.1\r\n"));
	ck_assert_int_eq(atomic_load(&s.served), 4);
	buf_release(&out);
	buf_release(&small);
	client_done(c);
	fake_release(&s);
}
END_TEST

/* Plain http carries a token only to loopback (127.0.0.1 / localhost / ::1). */
START_TEST(no_token_over_plain_http_elsewhere)
{
	static const struct fake_resp ok[] = { OK_RC };
	struct fake_server s;
	struct k8s_client *c;

	fake_start(&s, "127.0.0.2", ok, 1);
	c = client_for("127.0.0.2", s.port, NULL);
	ck_assert_int_eq(run_get(c, NULL), 0);
	fake_stop(&s);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&s.req[0]), "GET /apis/redis.io/"));
	ck_assert_ptr_null(strcasestr(buf_cstr(&s.req[0]), "authorization"));
	ck_assert_ptr_null(strstr(buf_cstr(&s.req[0]), "s3cr3t"));
	client_done(c);
	fake_release(&s);
}
END_TEST

/* The token comes from k8s_config_token, so a token file (in-cluster) is read. */
START_TEST(token_from_file)
{
	static const struct fake_resp ok[] = { OK_RC };
	char path[] = "/tmp/test_k8s_client_tokenXXXXXX";
	struct fake_server s;
	struct k8s_client *c;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "file-token\n", 11), 11);
	close(fd);
	fake_start(&s, "127.0.0.1", ok, 1);
	c = client_for("127.0.0.1", s.port, NULL);
	free_secret(cfg.token);
	cfg.token = NULL;
	cfg.token_file = xstrdup(path);
	ck_assert_int_eq(run_get(c, NULL), 0);
	fake_stop(&s);
	unlink(path);
	ck_assert_msg(strstr(buf_cstr(&s.req[0]), "\r\nAuthorization: Bearer file-token\r\n"),
	              "request: %s", buf_cstr(&s.req[0]));
	free(cfg.token_file);
	client_done(c);
	fake_release(&s);
}
END_TEST

START_TEST(client_new_rejects_bad_server)
{
	static const char *const bad[] = { NULL, "", "ftp://x", "10.0.0.1:6443", "file:///etc" };
	struct k8s_config bc;
	struct err e;

	ck_assert_ptr_null(k8s_client_new(NULL, NULL, NULL));
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		memset(&bc, 0, sizeof(bc));
		bc.server = (char *)(uintptr_t)bad[i];
		err_clear(&e);
		ck_assert_ptr_null(k8s_client_new(&bc, NULL, &e));
		ck_assert_int_eq(e.code, -EINVAL);
	}
	k8s_client_free(NULL);
}
END_TEST

/* qps 5, burst 1: the third request waits ~400 ms for its token. */
START_TEST(rate_limit_spaces_requests)
{
	static const struct fake_resp ok[] = { OK_RC, OK_RC, OK_RC };
	struct k8s_client_opts o = { .qps = 5, .burst = 1 };
	struct fake_server s;
	struct k8s_client *c;
	int64_t t0, ms;

	fake_start(&s, "127.0.0.1", ok, 3);
	c = client_for("127.0.0.1", s.port, &o);
	t0 = clock_mono_ms();
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(run_get(c, NULL), 0);
	ms = clock_mono_ms() - t0;
	fake_stop(&s);
	ck_assert_msg(ms >= 350 && ms < 2000, "%lld ms", (long long)ms);
	client_done(c);
	fake_release(&s);
}
END_TEST

/* Threads share one client: the handle pool and the token read are locked. */
#define THREADS         4
#define GETS_PER_THREAD 3

static void *get_loop(void *arg)
{
	struct k8s_client *c = arg;
	intptr_t failures = 0;

	for (int i = 0; i < GETS_PER_THREAD; i++)
		failures += run_get(c, NULL) != 0;
	return (void *)failures;
}

START_TEST(concurrent_requests)
{
	static struct fake_resp ok[THREADS * GETS_PER_THREAD];
	struct fake_server s;
	struct k8s_client *c;
	pthread_t th[THREADS];
	void *failures;

	for (size_t i = 0; i < ARRAY_LEN(ok); i++)
		ok[i] = (struct fake_resp)OK_RC;
	fake_start(&s, "127.0.0.1", ok, ARRAY_LEN(ok));
	c = client_for("127.0.0.1", s.port, NULL);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, get_loop, c), 0);
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], &failures);
		ck_assert_int_eq((intptr_t)failures, 0);
	}
	fake_stop(&s);
	ck_assert_int_eq(atomic_load(&s.served), THREADS * GETS_PER_THREAD);
	client_done(c);
	fake_release(&s);
}
END_TEST

/* ---- Status bodies → errno and message ---------------------------------------------------- */

static const struct {
	long http;
	const char *body;
	int want;
	const char *want_msg; /* exact */
} status_cases[] = {
	{ 200, "whatever", 0, "" },
	{ 201, NULL, 0, "" },
	{ 404, NOT_FOUND, -ENOENT, "redisclusters.redis.io \"cache\" not found" },
	{ 409, EXISTS, -EEXIST, "redisclusters.redis.io \"cache\" already exists" },
	{ 409, CONFLICT, -EBUSY,
	  "Operation cannot be fulfilled on redisclusters.redis.io \"cache\": the object has been "
	  "modified; please apply your changes to the latest version and try again" },
	{ 410, EXPIRED, -ESTALE,
	  "The provided continue parameter is too old to display a consistent list result." },
	{ 422, INVALID, -EINVAL,
	  "RedisCluster.redis.io \"cache\" is invalid: spec.instances: Invalid value: 0: "
	  "spec.instances in body should be greater than or equal to 1" },
	{ 429, TOO_MANY, -EAGAIN, "Too many requests, please try again later." },
	{ 500, INTERNAL, -EIO, "Internal error occurred: etcdserver: leader changed" },
	{ 401, UNAUTH, -EACCES, "Unauthorized" },
	{ 403,
	  STATUS(403, "Forbidden",
	         "pods is forbidden: User \\\"system:serviceaccount:ops:redis\\\" cannot list "
	         "resource \\\"pods\\\" in API group \\\"\\\" in the namespace \\\"prod\\\""),
	  -EPERM,
	  "pods is forbidden: User \"system:serviceaccount:ops:redis\" cannot list resource "
	  "\"pods\" in API group \"\" in the namespace \"prod\"" },
	/* The reason wins over the status code. */
	{ 500, STATUS(504, "Timeout", "Timeout: request did not complete within 60s"), -ETIMEDOUT,
	  "Timeout: request did not complete within 60s" },
	/* No message: reason and code. */
	{ 429, "{\"kind\":\"Status\",\"reason\":\"TooManyRequests\",\"code\":429}", -EAGAIN,
	  "HTTP 429 TooManyRequests" },
	{ 404, "{\"kind\":\"Status\"}", -ENOENT, "HTTP 404" },
	/* Not a Status: an excerpt of the body. */
	{ 502, "<html>Bad Gateway</html>", -EIO, "HTTP 502: <html>Bad Gateway</html>" },
	{ 500, "{\"error\":\"x\"}", -EIO, "HTTP 500: {\"error\":\"x\"}" },
	{ 404, "{\"kind\":\"Status\",\"message\":\"trunc", -ENOENT,
	  "HTTP 404: {\"kind\":\"Status\",\"message\":\"trunc" },
	{ 400, "bad\r\nrequest\x01", -EBADMSG, "HTTP 400: bad  request " },
	{ 503, NULL, -EAGAIN, "HTTP 503" },
	{ 503, "", -EAGAIN, "HTTP 503" },
	{ 0, NULL, -EPROTO, "HTTP 0" },
	{ 302, "", -EPROTO, "HTTP 302" },
};

START_TEST(status_table)
{
	struct err e;
	const char *b = status_cases[_i].body;
	int rc;

	err_clear(&e);
	rc = k8s_status_to_err(status_cases[_i].http, b, b ? strlen(b) : 0, &e);
	ck_assert_msg(rc == status_cases[_i].want, "case %d: %s", _i, err_name(rc));
	ck_assert_str_eq(e.msg, status_cases[_i].want_msg);
}
END_TEST

START_TEST(status_long_body_is_cut)
{
	char body[1000];
	struct err e;

	memset(body, 'a', sizeof(body));
	err_clear(&e);
	ck_assert_int_eq(k8s_status_to_err(502, body, sizeof(body), &e), -EIO);
	ck_assert_uint_lt(strlen(e.msg), 140);
	ck_assert_ptr_nonnull(strstr(e.msg, "aaa..."));
}
END_TEST

/* ---- k8s_watch_run over the fake server --------------------------------------------------- */

#define EV(type, name, rv)                                                                         \
	"{\"type\":\"" type                                                                        \
	"\",\"object\":{\"kind\":\"RedisCluster\",\"metadata\":{\"name\":\"" name                  \
	"\",\"namespace\":\"prod\",\"resourceVersion\":\"" rv "\"}}}\n"
#define BOOKMARK(rv)                                                                               \
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"RedisCluster\",\"metadata\":"               \
	"{\"resourceVersion\":\"" rv "\"}}}\n"
#define GONE_EVENT                                                                                 \
	"{\"type\":\"ERROR\",\"object\":" STATUS(410, "Expired",                                   \
	                                         "too old resource version: 5 (9)") "}\n"

struct watch_seen {
	struct buf log;
	int stop_after;         /* return 7 after this many events; 0: never */
	atomic_bool *stop_flag; /* set after the first event, if not NULL */
	int n;
};

static int watch_record(void *ctx, enum k8s_event_type type, json_t *obj, const char *rv)
{
	struct watch_seen *w = ctx;
	const char *name =
	        json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));

	buf_printf(&w->log, "%s %s %s\n", k8s_event_type_name(type), name ? name : "-", rv);
	w->n++;
	if (w->stop_flag)
		atomic_store(w->stop_flag, true);
	return w->stop_after && w->n >= w->stop_after ? 7 : 0;
}

static const struct watch_case {
	const char *name;
	struct fake_resp resp;
	int stop_after;
	bool use_stop_flag;
	int want_rc;
	const char *want_log;
	const char *want_msg;
	int max_ms;
} watch_cases[] = {
	{ "stream closes normally",
	  { "200 OK", NULL, NULL, 0,
	    (const char *const[]){
	            "{\"type\":\"ADDED\",\"object\":{\"kind\":\"RedisCluster\",\"meta",
	            "data\":{\"name\":\"cache\",\"namespace\":\"prod\",\"resourceVersion\":\"6\"}}}"
	            "\n" BOOKMARK("8"),
	            "\n", /* keepalive */
	            EV("MODIFIED", "cache", "9"), NULL },
	    0, 20 },
	  0,
	  false,
	  0,
	  "ADDED cache 6\nBOOKMARK - 8\nMODIFIED cache 9\n",
	  NULL,
	  3000 },
	{ "410 error event",
	  { "200 OK", NULL, NULL, 0,
	    (const char *const[]){ EV("ADDED", "cache", "6"), GONE_EVENT, NULL } },
	  0,
	  false,
	  -ESTALE,
	  "ADDED cache 6\n",
	  "resource version too old: relist",
	  3000 },
	{ "410 status",
	  { "410 Gone", NULL, STATUS(410, "Gone", "too old resource version") },
	  0,
	  false,
	  -ESTALE,
	  "",
	  "too old resource version",
	  3000 },
	{ "403 status",
	  { "403 Forbidden", NULL, STATUS(403, "Forbidden", "redisclusters is forbidden") },
	  0,
	  false,
	  -EPERM,
	  "",
	  "redisclusters is forbidden",
	  3000 },
	{ "callback stops",
	  { "200 OK", NULL, NULL, 0,
	    (const char *const[]){
	            EV("ADDED", "a", "6") EV("ADDED", "b", "7") EV("ADDED", "c", "8"), NULL } },
	  2,
	  false,
	  7,
	  "ADDED a 6\nADDED b 7\n",
	  NULL,
	  3000 },
	{ "malformed line",
	  { "200 OK", NULL, NULL, 0,
	    (const char *const[]){ EV("ADDED", "a", "6") "nonsense\n", NULL } },
	  0,
	  false,
	  -EPROTO,
	  "ADDED a 6\n",
	  "nonsense",
	  3000 },
	{ "stop flag ends a quiet stream",
	  { "200 OK", NULL, NULL, 0, (const char *const[]){ EV("ADDED", "a", "6"), NULL }, 0, 0,
	    10000 },
	  0,
	  true,
	  -ECANCELED,
	  "ADDED a 6\n",
	  NULL,
	  3500 },
};

START_TEST(watch_table)
{
	const struct watch_case *wc = &watch_cases[_i];
	struct k8s_list_opts lo = { .label_selector = "app=x" };
	struct watch_seen seen = { .stop_after = wc->stop_after };
	atomic_bool stop = false;
	struct fake_server s;
	struct k8s_client *c;
	struct err e;
	int64_t t0, ms;
	const char *q;
	long t;
	int rc;

	buf_init(&seen.log, 4096);
	seen.stop_flag = wc->use_stop_flag ? &stop : NULL;
	fake_start(&s, "127.0.0.1", &wc->resp, 1);
	c = client_for("127.0.0.1", s.port, NULL);
	err_clear(&e);
	t0 = clock_mono_ms();
	rc = k8s_watch_run(c, &api_res_redisclusters, "prod", &lo, "5", 60, watch_record, &seen,
	                   &stop, &e);
	ms = clock_mono_ms() - t0;
	fake_stop(&s);
	ck_assert_msg(rc == wc->want_rc, "%s: rc %s (%s)", wc->name, err_name(rc), e.msg);
	ck_assert_str_eq(buf_cstr(&seen.log), wc->want_log);
	if (wc->want_msg)
		ck_assert_msg(strstr(e.msg, wc->want_msg), "%s: message \"%s\"", wc->name, e.msg);
	ck_assert_msg(ms <= wc->max_ms, "%s: %lld ms", wc->name, (long long)ms);
	q = strstr(buf_cstr(&s.req[0]),
	           "GET /apis/redis.io/v1/namespaces/prod/redisclusters?labelSelector=app%3Dx"
	           "&resourceVersion=5&watch=1&allowWatchBookmarks=true&timeoutSeconds=");
	ck_assert_msg(q != NULL, "request: %s", buf_cstr(&s.req[0]));
	t = strtol(strstr(q, "timeoutSeconds=") + 15, NULL, 10);
	ck_assert_msg(t >= 60 && t <= 75, "timeoutSeconds=%ld", t); /* jitter: up to a quarter */
	client_done(c);
	fake_release(&s);
	buf_release(&seen.log);
}
END_TEST

static Suite *k8s_client_suite(void)
{
	Suite *s = suite_create("k8s_client");
	TCase *tc = tcase_create("client");
	TCase *tw = tcase_create("watch");

	/* The fake server is local: a proxy from the environment must not intercept. */
	for (const char *const *v = (const char *const[]){ "http_proxy", "HTTP_PROXY", "all_proxy",
	                                                   "ALL_PROXY", NULL };
	     *v; v++)
		unsetenv(*v);

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, client_table, 0, ARRAY_LEN(client_cases));
	tcase_add_test(tc, connection_refused);
	tcase_add_test(tc, get_raw);
	tcase_add_test(tc, no_token_over_plain_http_elsewhere);
	tcase_add_test(tc, token_from_file);
	tcase_add_test(tc, client_new_rejects_bad_server);
	tcase_add_test(tc, rate_limit_spaces_requests);
	tcase_add_test(tc, concurrent_requests);
	tcase_add_loop_test(tc, status_table, 0, ARRAY_LEN(status_cases));
	tcase_add_test(tc, status_long_body_is_cut);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tw, 30);
	tcase_add_loop_test(tw, watch_table, 0, ARRAY_LEN(watch_cases));
	suite_add_tcase(s, tw);
	return s;
}

UNIT_MAIN(k8s_client_suite)

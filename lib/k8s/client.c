/*
 * k8s/client: requests to the Kubernetes API over libcurl (see client.h).
 *
 * A call is built in a `struct k8s_call` (URL, method, body, sinks), run on an easy
 * handle borrowed from the client's pool, and mapped to an errno by k8s_call_result().
 * Invariants: the pool, the token read and the rate limiter are touched only under
 * c->lock; a handle is used by one thread between handle_get and handle_put; every
 * transfer has a deadline (CURLOPT_TIMEOUT_MS) and every response body a cap.
 * The Authorization header is built in a buffer that is wiped, and the header list
 * entry holding it is wiped before it is freed.
 */
#include "client.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/backoff.h"
#include "lib/clock.h"
#include "lib/httpc.h"
#include "lib/k8s/rate.h"
#include "lib/log.h"

#define RETRY_BASE_MS   200
#define RETRY_CAP_MS    5000
#define TCP_KEEPIDLE_S  30
#define TCP_KEEPINTVL_S 10
#define EXCERPT_MAX     120 /* bytes of a non-Status error body quoted in a message */

struct k8s_client {
	struct k8s_config *cfg; /* borrowed */
	struct k8s_client_opts o;
	char *user_agent;
	bool plain_http;      /* http:// (tests only) */
	bool send_token;      /* https://, or http:// to a loopback address */
	pthread_mutex_t lock; /* guards everything below */
	CURL *idle[K8S_POOL_MAX];
	size_t n_idle;
	struct k8s_rate rate; /* the adaptive token bucket (rate.h) */
	uint64_t rng;
	atomic_ullong requests[K8S_VERB_COUNT]; /* sent, by verb: lock-free */
};

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Plain http is for a local fake server: a token goes only to loopback there. */
static bool is_loopback_http(const char *server)
{
	static const char *const loopback[] = { "http://127.0.0.1:", "http://localhost:",
		                                "http://[::1]:" };

	for (size_t i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++)
		if (has_prefix(server, loopback[i]))
			return true;
	return false;
}

static void opts_defaults(struct k8s_client_opts *o)
{
	if (o->timeout_ms <= 0)
		o->timeout_ms = K8S_TIMEOUT_MS_DEFAULT;
	if (o->connect_timeout_ms <= 0)
		o->connect_timeout_ms = K8S_CONNECT_TIMEOUT_MS_DEFAULT;
	if (o->max_body == 0)
		o->max_body = K8S_BODY_MAX_DEFAULT;
	if (o->retries == 0)
		o->retries = K8S_RETRIES_DEFAULT;
	if (o->retries < 0)
		o->retries = 0;
	if (o->burst < 1)
		o->burst = 1;
}

struct k8s_client *k8s_client_new(struct k8s_config *cfg, const struct k8s_client_opts *o,
                                  struct err *e)
{
	struct k8s_client *c;
	const char *server = cfg ? cfg->server : NULL;

	if (!server || !(has_prefix(server, "https://") || has_prefix(server, "http://"))) {
		err_set(e, -EINVAL, "k8s client: server URL must start with https://");
		return NULL;
	}
	httpc_global_init();
	c = xcalloc(1, sizeof(*c));
	c->cfg = cfg;
	if (o)
		c->o = *o;
	opts_defaults(&c->o);
	c->user_agent = xstrdup(c->o.user_agent ? c->o.user_agent : K8S_USER_AGENT_DEFAULT);
	c->o.user_agent = c->user_agent;
	c->plain_http = has_prefix(server, "http://");
	c->send_token = !c->plain_http || is_loopback_http(server);
	pthread_mutex_init(&c->lock, NULL);
	k8s_rate_init(&c->rate, c->o.qps, c->o.burst, clock_mono_ms());
	c->rng = (uint64_t)clock_wall_ms() ^ (uint64_t)(uintptr_t)c;
	return c;
}

void k8s_client_free(struct k8s_client *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_idle; i++)
		curl_easy_cleanup(c->idle[i]);
	pthread_mutex_destroy(&c->lock);
	free(c->user_agent);
	free(c);
}

const char *k8s_verb_name(enum k8s_verb v)
{
	static const char *const names[K8S_VERB_COUNT] = {
		[K8S_VERB_GET] = "get",       [K8S_VERB_LIST] = "list",
		[K8S_VERB_WATCH] = "watch",   [K8S_VERB_CREATE] = "create",
		[K8S_VERB_UPDATE] = "update", [K8S_VERB_PATCH] = "patch",
		[K8S_VERB_DELETE] = "delete",
	};

	return (unsigned)v < K8S_VERB_COUNT ? names[v] : "unknown";
}

void k8s_client_requests(const struct k8s_client *c, unsigned long long out[K8S_VERB_COUNT])
{
	for (int i = 0; i < K8S_VERB_COUNT; i++)
		out[i] = c ? atomic_load(&c->requests[i]) : 0;
}

size_t k8s_client_max_body(const struct k8s_client *c)
{
	return c->o.max_body;
}

CURL *k8s_client_handle_get(struct k8s_client *c)
{
	CURL *h = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->n_idle)
		h = c->idle[--c->n_idle];
	pthread_mutex_unlock(&c->lock);
	if (!h)
		h = curl_easy_init();
	if (!h)
		abort(); /* only out of memory gets here */
	return h;
}

void k8s_client_handle_put(struct k8s_client *c, CURL *h)
{
	if (!h)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->n_idle < K8S_POOL_MAX) {
		c->idle[c->n_idle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (h)
		curl_easy_cleanup(h);
}

/* The adaptive token bucket (rate.h): waits for this request's slot. */
int k8s_client_throttle(struct k8s_client *c, int64_t deadline_ms, struct err *e)
{
	int64_t now, wait;
	double qps, ceiling;

	pthread_mutex_lock(&c->lock);
	now = clock_mono_ms();
	wait = k8s_rate_take(&c->rate, now);
	qps = c->rate.qps;
	ceiling = c->rate.ceiling;
	if (now + wait > deadline_ms)
		k8s_rate_give_back(&c->rate); /* not taken after all */
	pthread_mutex_unlock(&c->lock);
	if (now + wait > deadline_ms)
		return err_set(e, -ETIMEDOUT,
		               "k8s client: rate limit (%.1f qps now, %.1f configured) passes the "
		               "deadline",
		               qps, ceiling);
	sleep_ms(wait);
	return 0;
}

void k8s_client_answered(struct k8s_client *c, CURL *h, const struct k8s_call *call)
{
	long http = 0;
	unsigned long long cuts;
	char qps[32], hold[32];

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
	if (http != 429)
		return;
	pthread_mutex_lock(&c->lock);
	cuts = c->rate.cuts;
	k8s_rate_throttled(&c->rate, clock_mono_ms());
	if (c->rate.ceiling > 0)
		snprintf(qps, sizeof(qps), "%.1f", c->rate.qps);
	else
		snprintf(qps, sizeof(qps), "unlimited");
	cuts = c->rate.cuts - cuts;
	pthread_mutex_unlock(&c->lock);
	if (!cuts)
		return; /* the same congestion event: logged once */
	snprintf(hold, sizeof(hold), "%ld", call->retry_after_ms);
	log_warn("k8s",
	         "the API server throttles this client (429 Too Many Requests): slowing down",
	         "qps", qps, "retry_after_ms", hold, (char *)NULL);
}

void k8s_client_set_rate(struct k8s_client *c, double qps, int burst)
{
	unsigned long long cuts;

	pthread_mutex_lock(&c->lock);
	cuts = c->rate.cuts;
	k8s_rate_init(&c->rate, qps, burst, clock_mono_ms());
	c->rate.cuts = cuts;
	pthread_mutex_unlock(&c->lock);
}

void k8s_client_rate(struct k8s_client *c, double *qps, unsigned long long *throttled)
{
	pthread_mutex_lock(&c->lock);
	*qps = c->rate.ceiling > 0 ? c->rate.qps : 0;
	*throttled = c->rate.cuts;
	pthread_mutex_unlock(&c->lock);
}

static uint64_t client_seed(struct k8s_client *c)
{
	uint64_t s;

	pthread_mutex_lock(&c->lock);
	s = backoff_rand64(&c->rng);
	pthread_mutex_unlock(&c->lock);
	return s;
}

/* ---- calls ---------------------------------------------------------------------- */

void k8s_call_init(struct k8s_call *call, const char *method, size_t resp_max)
{
	memset(call, 0, sizeof(*call));
	call->method = method;
	buf_init(&call->url, K8S_URL_MAX);
	buf_init(&call->resp, resp_max);
	call->retry_after_ms = -1;
}

void k8s_call_release(struct k8s_call *call)
{
	if (!call)
		return;
	buf_release(&call->url);
	buf_release(&call->resp);
	free(call->body);
	call->body = NULL;
	httpc_headers_free(call->headers);
	call->headers = NULL;
}

/* The verb of a call from its method, whether it names an object, and watch=1. */
static enum k8s_verb verb_of(const char *method, bool named, bool watch)
{
	static const struct {
		const char *method;
		enum k8s_verb verb;
	} writes[] = { { "POST", K8S_VERB_CREATE },
		       { "PUT", K8S_VERB_UPDATE },
		       { "PATCH", K8S_VERB_PATCH },
		       { "DELETE", K8S_VERB_DELETE } };

	for (size_t i = 0; method && i < sizeof(writes) / sizeof(writes[0]); i++)
		if (strcmp(method, writes[i].method) == 0)
			return writes[i].verb;
	return watch ? K8S_VERB_WATCH : named ? K8S_VERB_GET : K8S_VERB_LIST;
}

int k8s_call_set_url(struct k8s_client *c, struct k8s_call *call, const struct k8s_resource *res,
                     const char *ns, const char *name, const char *sub, const struct k8s_query *q,
                     struct err *e)
{
	char *path = NULL;
	int rc = k8s_path(res, ns, name, sub, &path, e);

	if (rc)
		return rc;
	call->verb = verb_of(call->method, name != NULL, q && q->watch);
	buf_clear(&call->url);
	rc = buf_printf(&call->url, "%s%s", c->cfg->server, path);
	free(path);
	if (rc)
		return err_set(e, rc, "%s: URL too long", res->plural);
	return q ? k8s_query_append(&call->url, q, e) : 0;
}

/* ---- handle setup ----------------------------------------------------------------- */

static size_t resp_write(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct k8s_call *call = ctx;
	size_t n = size * nmemb;

	if (buf_append(&call->resp, ptr, n) != 0) {
		call->overflow = true;
		return 0; /* aborts the transfer */
	}
	return n;
}

/* Only "Retry-After: <seconds>" is honoured; an HTTP-date is ignored. */
static size_t header_read(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	static const char name[] = "retry-after:";
	struct k8s_call *call = ctx;
	size_t n = size * nmemb;
	char val[16];
	char *end;
	long s;

	if (n <= sizeof(name) - 1 || strncasecmp(ptr, name, sizeof(name) - 1) != 0)
		return n;
	snprintf(val, sizeof(val), "%.*s", (int)(n - (sizeof(name) - 1)), ptr + sizeof(name) - 1);
	errno = 0;
	s = strtol(val, &end, 10);
	while (*end == ' ' || *end == '\r' || *end == '\n')
		end++;
	if (errno || end == val || *end || s < 0)
		return n;
	call->retry_after_ms =
	        s > K8S_RETRY_AFTER_MAX_MS / 1000 ? K8S_RETRY_AFTER_MAX_MS : s * 1000;
	return n;
}

static int progress_cb(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	struct k8s_call *call = ctx;

	(void)dt, (void)dn, (void)ut, (void)un;
	return call->progress_fn(call->progress_ctx) ? 1 : 0;
}

static void add_header(struct k8s_call *call, const char *h)
{
	call->headers = httpc_headers_add(call->headers, h);
}

/* Reads the token under the lock: k8s_config_token is not thread-safe. */
static void add_auth_header(struct k8s_client *c, struct k8s_call *call)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	const char *tok;

	if (!c->send_token)
		return;
	pthread_mutex_lock(&c->lock);
	tok = k8s_config_token(c->cfg, clock_mono_ms());
	if (tok && tok[0] && !strpbrk(tok, "\r\n")) /* never a header injection */
		buf_printf(&b, "Authorization: Bearer %s", tok);
	pthread_mutex_unlock(&c->lock);
	if (b.len)
		add_header(call, buf_cstr(&b));
	buf_release_secret(&b);
}

static void set_headers(struct k8s_client *c, struct k8s_call *call)
{
	char ct[128];

	httpc_headers_free(call->headers);
	call->headers = NULL;
	add_header(call, "Accept: application/json");
	add_header(call, "Expect:"); /* no 100-continue round trip */
	if (call->body) {
		snprintf(ct, sizeof(ct), "Content-Type: %s",
		         call->content_type ? call->content_type : "application/json");
		add_header(call, ct);
	}
	add_auth_header(c, call);
}

/* The config's PEM strings are passed without copies (CURL_BLOB_NOCOPY): cfg outlives c. */
static const struct httpc_tls *tls_of(const struct k8s_client *c, struct httpc_tls *t)
{
	const struct k8s_config *cfg = c->cfg;

	if (c->plain_http)
		return NULL;
	*t = (struct httpc_tls){ .ca_file = cfg->ca_file,
		                 .ca_pem = cfg->ca_pem,
		                 .cert_file = cfg->cert_file,
		                 .cert_pem = cfg->cert_pem,
		                 .key_file = cfg->key_file,
		                 .key_pem = cfg->key_pem,
		                 .insecure = cfg->insecure_skip_verify };
	return t;
}

int k8s_client_prepare_handle(struct k8s_client *c, CURL *h, struct k8s_call *call, struct err *e)
{
	struct httpc_tls t;
	struct httpc_req rq = { .method = call->method,
		                .url = buf_cstr(&call->url),
		                .protocols = c->plain_http ? "http" : "https",
		                .user_agent = c->user_agent,
		                .body = call->body,
		                .body_len = call->body_len,
		                .has_body = call->body != NULL,
		                .timeout_ms = call->timeout_ms,
		                .connect_timeout_ms = c->o.connect_timeout_ms,
		                .low_speed_bytes = 1,
		                .low_speed_time_s = call->low_speed_time_s,
		                .tcp_keepalive = true,
		                .keepidle_s = TCP_KEEPIDLE_S,
		                .keepintvl_s = TCP_KEEPINTVL_S,
		                .errbuf = call->errbuf,
		                .write_fn = call->write_fn,
		                .write_ctx = call->write_ctx,
		                .header_fn = header_read,
		                .header_ctx = call,
		                .progress_fn = call->progress_fn ? progress_cb : NULL,
		                .progress_ctx = call };
	CURLcode cc;

	atomic_fetch_add(&c->requests[(unsigned)call->verb < K8S_VERB_COUNT ? call->verb : 0], 1);
	curl_easy_reset(h);
	call->errbuf[0] = '\0';
	call->overflow = false;
	call->retry_after_ms = -1;
	buf_clear(&call->resp);
	set_headers(c, call);
	rq.headers = call->headers;
	rq.tls = tls_of(c, &t);
	if (!call->write_fn) {
		rq.write_fn = resp_write;
		rq.write_ctx = call;
		rq.max_filesize = c->o.max_body;
	}
	cc = httpc_setup(h, &rq);
	if (cc != CURLE_OK)
		return err_set(e, -EOPNOTSUPP, "k8s client: TLS setup: %s", curl_easy_strerror(cc));
	return 0;
}

/* ---- results ---------------------------------------------------------------------- */

static int curl_to_err(CURLcode cc, const struct k8s_call *call, struct err *e)
{
	return err_set(e, httpc_curl_errno(cc, &httpc_errmap_shared), "%s %s: %s", call->method,
	               buf_cstr(&call->url),
	               call->errbuf[0] ? call->errbuf : curl_easy_strerror(cc));
}

int k8s_call_result(CURL *h, CURLcode cc, const struct k8s_call *call, struct err *e)
{
	long http = 0;

	if (call->overflow || cc == CURLE_FILESIZE_EXCEEDED)
		return err_set(e, -EMSGSIZE, "%s %s: response body over %zu bytes", call->method,
		               buf_cstr(&call->url), call->resp.limit);
	if (cc != CURLE_OK)
		return curl_to_err(cc, call, e);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
	return k8s_status_to_err(http, call->resp.data, call->resp.len, e);
}

int k8s_status_object_to_err(long http, json_t *status, struct err *e)
{
	const char *reason = json_string_value(json_object_get(status, "reason"));
	const char *msg = json_string_value(json_object_get(status, "message"));
	json_t *code = json_object_get(status, "code");
	int rc;

	if (http == 0 && json_is_integer(code))
		http = (long)json_integer_value(code);
	rc = httpc_status_errno(http, reason, &httpc_errmap_shared);
	if (rc == 0)
		return 0;
	if (msg && msg[0])
		return err_set(e, rc, "%s", msg);
	return err_set(e, rc, "HTTP %ld%s%s", http, reason ? " " : "", reason ? reason : "");
}

/* Quotes a printable excerpt of a body that is not a Status (a proxy's HTML, say). */
static int status_from_text(long http, const char *body, size_t len, struct err *e)
{
	char excerpt[EXCERPT_MAX + 1];
	size_t n = len < EXCERPT_MAX ? len : EXCERPT_MAX;
	int rc = httpc_status_errno(http, NULL, &httpc_errmap_shared);

	for (size_t i = 0; i < n; i++)
		excerpt[i] = isprint((unsigned char)body[i]) ? body[i] : ' ';
	excerpt[n] = '\0';
	if (n == 0)
		return err_set(e, rc, "HTTP %ld", http);
	return err_set(e, rc, "HTTP %ld: %s%s", http, excerpt, len > n ? "..." : "");
}

int k8s_status_to_err(long http, const char *body, size_t len, struct err *e)
{
	json_t *j = NULL;
	const char *kind;
	int rc;

	if (http >= 200 && http < 300)
		return 0;
	if (body && len)
		j = json_loadb(body, len, 0, NULL);
	kind = json_string_value(json_object_get(j, "kind"));
	if (kind && strcmp(kind, "Status") == 0)
		rc = k8s_status_object_to_err(http, j, e);
	else
		rc = status_from_text(http, body, body ? len : 0, e);
	json_decref(j);
	return rc;
}

/* ---- running a call with retries ---------------------------------------------------- */

static int call_attempt(struct k8s_client *c, struct k8s_call *call, int64_t deadline,
                        struct err *e)
{
	CURL *h;
	CURLcode cc;
	int rc = k8s_client_throttle(c, deadline, e);

	if (rc)
		return rc;
	call->timeout_ms = (long)(deadline - clock_mono_ms());
	if (call->timeout_ms <= 0)
		return err_set(e, -ETIMEDOUT, "%s %s: deadline passed", call->method,
		               buf_cstr(&call->url));
	h = k8s_client_handle_get(c);
	rc = k8s_client_prepare_handle(c, h, call, e);
	if (!rc) {
		cc = curl_easy_perform(h);
		rc = k8s_call_result(h, cc, call, e);
		k8s_client_answered(c, h, call);
	}
	httpc_headers_free(call->headers);
	call->headers = NULL;
	k8s_client_handle_put(c, h);
	return rc;
}

/* Reads are retried on transient errors; writes only when nothing was sent. */
static bool should_retry(int rc, bool idempotent)
{
	return rc == -ECONNREFUSED || (idempotent && err_is_transient(rc));
}

static int call_perform(struct k8s_client *c, struct k8s_call *call, bool idempotent, struct err *e)
{
	int64_t deadline = clock_mono_ms() + c->o.timeout_ms, delay;
	struct backoff bo;
	struct err ae;
	int rc;

	backoff_init(&bo, RETRY_BASE_MS, RETRY_CAP_MS, 2.0, 0.5, client_seed(c));
	for (int attempt = 0;; attempt++) {
		err_clear(&ae);
		rc = call_attempt(c, call, deadline, &ae);
		if (!rc || attempt >= c->o.retries || !should_retry(rc, idempotent))
			break;
		delay = call->retry_after_ms >= 0 ? call->retry_after_ms : backoff_next(&bo);
		if (clock_mono_ms() + delay >= deadline)
			break;
		sleep_ms(delay);
	}
	return rc ? err_set(e, rc, "%s", ae.msg) : 0;
}

/* Parses the 2xx body into *out (when out is not NULL). */
static int call_json(const struct k8s_call *call, json_t **out, struct err *e)
{
	json_error_t jerr;
	json_t *j;

	if (!out)
		return 0;
	j = json_loadb(buf_cstr(&call->resp), call->resp.len, 0, &jerr);
	if (!j)
		return err_set(e, -EPROTO, "%s %s: response is not JSON: %s", call->method,
		               buf_cstr(&call->url), jerr.text);
	*out = j;
	return 0;
}

/* ---- requests ------------------------------------------------------------------------- */

int k8s_get(struct k8s_client *c, const struct k8s_resource *res, const char *ns, const char *name,
            json_t **out, struct err *e)
{
	struct k8s_call call;
	int rc;

	if (!name)
		return err_set(e, -EINVAL, "k8s_get %s: a name is required", res->plural);
	k8s_call_init(&call, "GET", c->o.max_body);
	rc = k8s_call_set_url(c, &call, res, ns, name, NULL, NULL, e);
	if (!rc)
		rc = call_perform(c, &call, true, e);
	if (!rc)
		rc = call_json(&call, out, e);
	k8s_call_release(&call);
	return rc;
}

int k8s_get_raw(struct k8s_client *c, const char *path, struct buf *out, struct err *e)
{
	struct k8s_call call;
	int rc;

	if (!path || path[0] != '/')
		return err_set(e, -EINVAL, "k8s_get_raw: the path must start with /");
	k8s_call_init(&call, "GET", c->o.max_body);
	call.verb = K8S_VERB_GET;
	rc = buf_printf(&call.url, "%s%s", c->cfg->server, path);
	if (rc)
		rc = err_set(e, rc, "%s: URL too long", path);
	if (!rc)
		rc = call_perform(c, &call, true, e);
	if (!rc && buf_append(out, call.resp.data, call.resp.len))
		rc = err_set(e, -EMSGSIZE, "GET %s: the body passes the caller's limit", path);
	k8s_call_release(&call);
	return rc;
}

struct list_page {
	json_t *items; /* all items so far */
	char *rv;      /* the first page's resourceVersion */
	char *cont;    /* continue token for the next page, or NULL */
};

/* Moves one page's items, resourceVersion and continue token into lp. */
static int list_take_page(json_t *page, struct list_page *lp, const char *what, struct err *e)
{
	json_t *items = json_object_get(page, "items");
	json_t *meta = json_object_get(page, "metadata");
	const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
	const char *cont = json_string_value(json_object_get(meta, "continue"));

	if (!json_is_object(page) || !(json_is_array(items) || json_is_null(items) || !items))
		return err_set(e, -EPROTO, "list %s: not a list", what);
	if (!rv)
		return err_set(e, -EPROTO, "list %s: no metadata.resourceVersion", what);
	json_array_extend(lp->items, items);
	if (!lp->rv)
		lp->rv = xstrdup(rv);
	free(lp->cont);
	lp->cont = cont && cont[0] ? xstrdup(cont) : NULL;
	return 0;
}

static int list_page(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const struct k8s_list_opts *lo, struct list_page *lp, struct err *e)
{
	struct k8s_query q = { .continue_token = lp->cont, .limit = K8S_LIST_PAGE_DEFAULT };
	struct k8s_call call;
	json_t *page = NULL;
	int rc;

	if (lo) {
		q.label_selector = lo->label_selector;
		q.field_selector = lo->field_selector;
		q.limit = lo->limit > 0 ? lo->limit : q.limit;
	}
	k8s_call_init(&call, "GET", c->o.max_body);
	rc = k8s_call_set_url(c, &call, res, ns, NULL, NULL, &q, e);
	if (!rc)
		rc = call_perform(c, &call, true, e);
	if (!rc)
		rc = call_json(&call, &page, e);
	if (!rc)
		rc = list_take_page(page, lp, res->plural, e);
	json_decref(page);
	k8s_call_release(&call);
	return rc;
}

int k8s_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
             const struct k8s_list_opts *lo, json_t **items_out, char **resource_version_out,
             struct err *e)
{
	struct list_page lp = { .items = json_array() };
	int rc = 0, pages = 0;

	do {
		if (pages++ == K8S_LIST_PAGES_MAX) {
			rc = err_set(e, -EMSGSIZE, "list %s: more than %d pages", res->plural,
			             K8S_LIST_PAGES_MAX);
			break;
		}
		rc = list_page(c, res, ns, lo, &lp, e);
	} while (!rc && lp.cont);
	if (!rc && items_out) {
		*items_out = lp.items;
		lp.items = NULL;
	}
	if (!rc && resource_version_out) {
		*resource_version_out = lp.rv;
		lp.rv = NULL;
	}
	json_decref(lp.items);
	free(lp.rv);
	free(lp.cont);
	return rc;
}

/* Serialises body into call (capped like responses: we never send what we'd refuse). */
static int call_set_body(struct k8s_client *c, struct k8s_call *call, json_t *body, struct err *e)
{
	char *text = json_dumps(body, JSON_COMPACT);

	if (!text)
		return err_set(e, -EINVAL, "%s %s: body cannot be serialised", call->method,
		               buf_cstr(&call->url));
	call->body_len = strlen(text);
	call->body = text;
	if (call->body_len > c->o.max_body)
		return err_set(e, -EMSGSIZE, "%s %s: request body over %zu bytes", call->method,
		               buf_cstr(&call->url), c->o.max_body);
	return 0;
}

struct write_req {
	const char *method;
	const char *ns, *name, *sub;
	const struct k8s_query *q;
	const char *content_type;
	json_t *body;
};

static int call_write(struct k8s_client *c, const struct k8s_resource *res,
                      const struct write_req *w, json_t **out, struct err *e)
{
	struct k8s_call call;
	int rc;

	k8s_call_init(&call, w->method, c->o.max_body);
	call.content_type = w->content_type;
	rc = k8s_call_set_url(c, &call, res, w->ns, w->name, w->sub, w->q, e);
	if (!rc && w->body)
		rc = call_set_body(c, &call, w->body, e);
	if (!rc)
		rc = call_perform(c, &call, false, e);
	if (!rc)
		rc = call_json(&call, out, e);
	k8s_call_release(&call);
	return rc;
}

int k8s_create(struct k8s_client *c, const struct k8s_resource *res, const char *ns, json_t *obj,
               const struct k8s_write_opts *wo, json_t **out, struct err *e)
{
	struct k8s_query q = { 0 };
	struct write_req w = { .method = "POST", .ns = ns, .q = &q, .body = obj };

	if (wo) {
		q.dry_run = wo->dry_run;
		q.field_manager = wo->field_manager;
	}
	if (!json_is_object(obj))
		return err_set(e, -EINVAL, "create %s: the object must be a JSON object",
		               res->plural);
	return call_write(c, res, &w, out, e);
}

int k8s_replace(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                const char *name, const char *subresource, json_t *obj,
                const struct k8s_write_opts *wo, json_t **out, struct err *e)
{
	struct k8s_query q = { 0 };
	struct write_req w = {
		.method = "PUT", .ns = ns, .name = name, .sub = subresource, .q = &q, .body = obj
	};

	if (wo) {
		q.dry_run = wo->dry_run;
		q.field_manager = wo->field_manager;
	}
	if (!name || !json_is_object(obj))
		return err_set(e, -EINVAL, "replace %s: a name and a JSON object are required",
		               res->plural);
	return call_write(c, res, &w, out, e);
}

/* metav1.DeleteOptions as the request body. */
static json_t *delete_body(const struct k8s_delete_opts *d)
{
	json_t *b = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
	json_t *pre = json_object();

	if (d->propagation_policy)
		json_object_set_new(b, "propagationPolicy", json_string(d->propagation_policy));
	if (d->set_grace_period)
		json_object_set_new(b, "gracePeriodSeconds", json_integer(d->grace_period_seconds));
	if (d->dry_run)
		json_object_set_new(b, "dryRun", json_pack("[s]", "All"));
	if (d->precondition_uid)
		json_object_set_new(pre, "uid", json_string(d->precondition_uid));
	if (d->precondition_rv)
		json_object_set_new(pre, "resourceVersion", json_string(d->precondition_rv));
	if (json_object_size(pre))
		json_object_set(b, "preconditions", pre);
	json_decref(pre);
	return b;
}

int k8s_delete(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
               const char *name, const struct k8s_delete_opts *dopts, struct err *e)
{
	static const struct k8s_delete_opts none = { 0 };
	static const char *const policies[] = { "Orphan", "Background", "Foreground" };
	struct write_req w = { .method = "DELETE", .ns = ns, .name = name };
	bool policy_ok = false;
	int rc;

	dopts = dopts ? dopts : &none;
	for (size_t i = 0; i < sizeof(policies) / sizeof(policies[0]); i++)
		policy_ok |= dopts->propagation_policy &&
		             !strcmp(dopts->propagation_policy, policies[i]);
	if (!name || (dopts->propagation_policy && !policy_ok))
		return err_set(e, -EINVAL,
		               "delete %s: a name and a known propagationPolicy "
		               "are required",
		               res->plural);
	w.body = delete_body(dopts);
	rc = call_write(c, res, &w, NULL, e);
	json_decref(w.body);
	return rc;
}

static const struct {
	const char *content_type;
	bool wants_array; /* JSON patch is a list of operations; the others are objects */
} patch_types[] = {
	[K8S_PATCH_MERGE] = { "application/merge-patch+json", false },
	[K8S_PATCH_JSON] = { "application/json-patch+json", true },
	[K8S_PATCH_STRATEGIC] = { "application/strategic-merge-patch+json", false },
	/* JSON is YAML, so JSON text with the apply content type is a valid apply patch. */
	[K8S_PATCH_APPLY] = { "application/apply-patch+yaml", false },
};

static int patch_check(enum k8s_patch_type type, json_t *patch, const struct k8s_patch_opts *po,
                       const char *what, struct err *e)
{
	if ((unsigned)type >= sizeof(patch_types) / sizeof(patch_types[0]))
		return err_set(e, -EINVAL, "patch %s: unknown patch type %d", what, (int)type);
	if (patch_types[type].wants_array ? !json_is_array(patch) : !json_is_object(patch))
		return err_set(e, -EINVAL, "patch %s: the patch must be a JSON %s", what,
		               patch_types[type].wants_array ? "array" : "object");
	if (type == K8S_PATCH_APPLY && !(po && po->field_manager))
		return err_set(e, -EINVAL, "patch %s: server-side apply needs a field manager",
		               what);
	if (type != K8S_PATCH_APPLY && po && po->force)
		return err_set(e, -EINVAL, "patch %s: force is for server-side apply only", what);
	return 0;
}

int k8s_patch(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
              const char *name, const char *subresource, enum k8s_patch_type type, json_t *patch,
              const struct k8s_patch_opts *po, json_t **out, struct err *e)
{
	struct k8s_query q = { 0 };
	struct write_req w = { .method = "PATCH",
		               .ns = ns,
		               .name = name,
		               .sub = subresource,
		               .q = &q,
		               .body = patch };
	int rc = patch_check(type, patch, po, res->plural, e);

	if (rc)
		return rc;
	if (!name)
		return err_set(e, -EINVAL, "patch %s: a name is required", res->plural);
	if (po) {
		q.field_manager = po->field_manager;
		q.force = po->force;
		q.dry_run = po->dry_run;
	}
	w.content_type = patch_types[type].content_type;
	return call_write(c, res, &w, out, e);
}

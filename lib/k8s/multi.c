/*
 * k8s/multi: parallel GETs over one curl multi handle (see multi.h).
 *
 * A k8s_multi keeps its CURLM (and so its connection cache) and a pool of easy handles
 * across calls, so a poll every second reuses TLS connections. During a call, xfer[i]
 * ties easy handle i to results[i]; every easy handle has its own CURLOPT_TIMEOUT_MS,
 * and the loop also stops at an overall deadline (timeout + LOOP_SLACK_MS) as a guard.
 *
 * The loop is curl's socket interface on an epoll set: curl says which sockets it waits
 * on (on_socket) and when its next timeout is due (on_timer), and each readiness event is
 * handed to curl_multi_socket_action for that socket alone. curl_multi_perform would walk
 * every transfer on every wake-up: with thousands of pods that is O(n) per answer, O(n^2)
 * per round, and it starved the poller at 3,000 pods. The epoll set lives as long as the
 * k8s_multi, like the connections whose sockets it holds.
 *
 * curl's DNS cache is off (CURLOPT_DNS_CACHE_TIMEOUT 0): the poller's URLs are pod IPs,
 * which need no lookup, and with the cache on curl walks every entry of it on each
 * transfer to prune old ones (one entry per pod address: O(n^2) per round; measured with
 * libcurl 7.88, 6,000 transfers to distinct addresses: 0.94 CPU-s per round with the
 * cache, 0.28 without). Entries for addresses that pods no longer have would also stay.
 *
 * The bearer token is kept in a header list whose bytes are wiped before it is freed.
 */
#include "multi.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/httpc.h"

#define LOOP_SLACK_MS 2000
#define POLL_MS       100 /* longest wait without news, a guard */
#define EVENTS_MAX    256

struct k8s_multi {
	struct k8s_multi_opts o;
	struct k8s_multi_tls tls;
	bool has_tls;
	char *user_agent;
	struct curl_slist *headers; /* Accept, and Authorization when a token is set */
	CURLM *cm;
	int ep;           /* epoll set of the sockets curl waits on */
	int64_t timer_at; /* curl's next timeout (monotonic ms); -1: none */
	CURL **pool;
	size_t n_pool;
};

struct xfer {
	struct k8s_multi_result *r;
	struct httpc_body body;
	int64_t start_ms;
	char errbuf[CURL_ERROR_SIZE];
};

/* curl: watch socket s for what (or stop watching it). */
static int on_socket(CURL *h, curl_socket_t s, int what, void *userp, void *socketp)
{
	struct k8s_multi *m = userp;
	struct epoll_event ev = { .data.fd = s };

	(void)h;
	(void)socketp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(m->ep, EPOLL_CTL_DEL, s, NULL); /* ENOENT when already closed: fine */
		return 0;
	}
	ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
	if (epoll_ctl(m->ep, EPOLL_CTL_MOD, s, &ev) < 0 && errno == ENOENT &&
	    epoll_ctl(m->ep, EPOLL_CTL_ADD, s, &ev) < 0)
		return -1; /* curl fails the transfers on this socket */
	return 0;
}

/* curl: call curl_multi_socket_action(CURL_SOCKET_TIMEOUT) in ms (-1: never). */
static int on_timer(CURLM *cm, long ms, void *userp)
{
	struct k8s_multi *m = userp;

	(void)cm;
	m->timer_at = ms < 0 ? -1 : clock_mono_ms() + ms;
	return 0;
}

struct k8s_multi *k8s_multi_new(const struct k8s_multi_opts *o)
{
	struct k8s_multi *m = xcalloc(1, sizeof(*m));
	char *auth;

	httpc_global_init();
	if (o)
		m->o = *o;
	if (m->o.timeout_ms <= 0)
		m->o.timeout_ms = K8S_MULTI_TIMEOUT_MS_DEFAULT;
	if (m->o.connect_timeout_ms <= 0 || m->o.connect_timeout_ms > m->o.timeout_ms)
		m->o.connect_timeout_ms = m->o.timeout_ms;
	if (m->o.body_max == 0)
		m->o.body_max = K8S_MULTI_BODY_MAX_DEFAULT;
	if (m->o.tls) {
		m->tls = *m->o.tls;
		m->has_tls = true;
	}
	m->o.tls = NULL;
	m->user_agent = xstrdup(m->o.user_agent ? m->o.user_agent : "redis-operator");
	m->o.user_agent = NULL;
	m->headers = httpc_headers_add(NULL, "Accept: application/json");
	if (m->o.bearer_token && !strpbrk(m->o.bearer_token, "\r\n")) {
		auth = xasprintf("Authorization: Bearer %s", m->o.bearer_token);
		m->headers = httpc_headers_add(m->headers, auth);
		free_secret(auth);
	}
	m->o.bearer_token = NULL;
	m->cm = curl_multi_init();
	m->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!m->cm || m->ep < 0)
		abort(); /* out of memory or descriptors at start-up */
	m->timer_at = -1;
	curl_multi_setopt(m->cm, CURLMOPT_SOCKETFUNCTION, on_socket);
	curl_multi_setopt(m->cm, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->cm, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(m->cm, CURLMOPT_TIMERDATA, m);
	return m;
}

void k8s_multi_free(struct k8s_multi *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_pool; i++)
		curl_easy_cleanup(m->pool[i]);
	free(m->pool);
	curl_multi_cleanup(m->cm);
	close(m->ep);
	httpc_headers_free(m->headers);
	free(m->user_agent);
	free(m);
}

void k8s_multi_results_release(struct k8s_multi_result *results, size_t n)
{
	for (size_t i = 0; results && i < n; i++) {
		free(results[i].body);
		results[i].body = NULL;
	}
}

/* ---- one transfer ------------------------------------------------------------------- */

/* This request's own TLS (its CA replaces every other one), else the k8s_multi's, into
 * out; NULL when there is none. */
static const struct httpc_tls *tls_of(const struct k8s_multi *m, const struct k8s_multi_tls *own,
                                      struct httpc_tls *out)
{
	const struct k8s_multi_tls *t = own ? own : &m->tls;

	if (!own && !m->has_tls)
		return NULL;
	*out = (struct httpc_tls){ .ca_file = t->ca_file,
		                   .ca_pem = t->ca_pem,
		                   .cert_file = t->cert_file,
		                   .cert_pem = t->cert_pem,
		                   .key_file = t->key_file,
		                   .key_pem = t->key_pem,
		                   .insecure = t->insecure_skip_verify,
		                   .skip_host_check = t->skip_host_check };
	return out;
}

static void setup(const struct k8s_multi *m, CURL *h, const char *url,
                  const struct k8s_multi_tls *tls, struct xfer *x)
{
	struct httpc_tls t; /* read by httpc_setup only (the PEM inside is borrowed longer) */
	struct httpc_req rq = { .url = url,
		                .user_agent = m->user_agent,
		                .headers = m->headers,
		                .timeout_ms = m->o.timeout_ms,
		                .connect_timeout_ms = m->o.connect_timeout_ms,
		                .no_dns_cache = true, /* see the header comment */
		                .tls = tls_of(m, tls, &t),
		                .errbuf = x->errbuf,
		                .write_fn = httpc_body_write,
		                .write_ctx = &x->body,
		                .private_ptr = x };

	curl_easy_reset(h);
	(void)httpc_setup(h, &rq);
}

/* Fills x->r from the finished transfer on h. */
static void finish(CURL *h, CURLcode cc, struct xfer *x)
{
	struct k8s_multi_result *r = x->r;

	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->http);
	r->elapsed_ms = clock_mono_ms() - x->start_ms;
	r->truncated = x->body.overflow;
	if (x->body.overflow)
		r->err = -EMSGSIZE;
	else
		r->err = httpc_curl_errno(cc, &httpc_errmap_multi);
	if (x->body.overflow)
		snprintf(r->msg, sizeof(r->msg), "body over %zu bytes: truncated",
		         x->body.buf.limit);
	else if (cc != CURLE_OK)
		snprintf(r->msg, sizeof(r->msg), "%.*s", (int)sizeof(r->msg) - 1,
		         x->errbuf[0] ? x->errbuf : curl_easy_strerror(cc));
	else
		snprintf(r->msg, sizeof(r->msg), "HTTP %ld", r->http);
	if (x->body.buf.len) {
		r->body_len = x->body.buf.len;
		r->body = buf_detach(&x->body.buf, NULL);
	}
}

/* ---- the call --------------------------------------------------------------------------- */

static void pool_grow(struct k8s_multi *m, size_t n)
{
	if (m->n_pool >= n)
		return;
	m->pool = xreallocarray(m->pool, n, sizeof(*m->pool));
	while (m->n_pool < n) {
		m->pool[m->n_pool] = curl_easy_init();
		if (!m->pool[m->n_pool])
			abort();
		m->n_pool++;
	}
}

static void drain_messages(CURLM *cm)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(cm, &left))) {
		struct xfer *x = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (x)
			finish(msg->easy_handle, msg->data.result, x);
	}
}

/* curl's due timeouts (connects, deadlines, transfers just added). */
static void run_timers(struct k8s_multi *m, int *running)
{
	m->timer_at = -1;
	curl_multi_socket_action(m->cm, CURL_SOCKET_TIMEOUT, 0, running);
}

/* How long to wait for socket events: until curl's timer, at most POLL_MS. */
static int wait_ms(const struct k8s_multi *m)
{
	int64_t left = m->timer_at < 0 ? POLL_MS : m->timer_at - clock_mono_ms();

	return left < 0 ? 0 : left > POLL_MS ? POLL_MS : (int)left;
}

/* Runs the added transfers until all are done or the guard deadline passes. */
static void run(struct k8s_multi *m)
{
	int64_t guard = clock_mono_ms() + m->o.timeout_ms + LOOP_SLACK_MS;
	struct epoll_event ev[EVENTS_MAX];
	int running = 1;

	run_timers(m, &running);
	drain_messages(m->cm);
	while (running > 0 && clock_mono_ms() < guard) {
		int n = epoll_wait(m->ep, ev, EVENTS_MAX, wait_ms(m));

		for (int i = 0; i < n; i++) {
			int flags = (ev[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
			            (ev[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
			            (ev[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);

			curl_multi_socket_action(m->cm, ev[i].data.fd, flags, &running);
		}
		if (n <= 0 || (m->timer_at >= 0 && clock_mono_ms() >= m->timer_at))
			run_timers(m, &running);
		drain_messages(m->cm);
	}
	drain_messages(m->cm);
}

static void result_init(struct k8s_multi_result *r, int err, const char *msg)
{
	memset(r, 0, sizeof(*r));
	r->err = err;
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
}

int k8s_multi_get(struct k8s_multi *m, const char *const *urls, size_t n,
                  struct k8s_multi_result *results, struct err *e)
{
	return k8s_multi_get_tls(m, urls, NULL, n, results, e);
}

int k8s_multi_get_tls(struct k8s_multi *m, const char *const *urls,
                      const struct k8s_multi_tls *const *tls, size_t n,
                      struct k8s_multi_result *results, struct err *e)
{
	struct xfer *x;

	if (n > K8S_MULTI_URLS_MAX)
		return err_set(e, -EINVAL, "multi: %zu requests (at most %d)", n,
		               K8S_MULTI_URLS_MAX);
	if (n == 0)
		return 0;
	pool_grow(m, n);
	x = xcalloc(n, sizeof(*x));
	for (size_t i = 0; i < n; i++) {
		result_init(&results[i], -ETIMEDOUT, "not finished");
		x[i].r = &results[i];
		buf_init(&x[i].body.buf, m->o.body_max);
		x[i].start_ms = clock_mono_ms();
		if (!urls[i]) {
			result_init(&results[i], -EINVAL, "no URL");
			continue;
		}
		setup(m, m->pool[i], urls[i], tls ? tls[i] : NULL, &x[i]);
		curl_multi_add_handle(m->cm, m->pool[i]);
	}
	run(m);
	for (size_t i = 0; i < n; i++) {
		if (urls[i])
			curl_multi_remove_handle(m->cm, m->pool[i]);
		buf_release(&x[i].body.buf);
	}
	free(x);
	return 0;
}

int k8s_multi_get_once(const char *const *urls, size_t n, const struct k8s_multi_opts *o,
                       struct k8s_multi_result *results, struct err *e)
{
	struct k8s_multi *m = k8s_multi_new(o);
	int rc = k8s_multi_get(m, urls, n, results, e);

	k8s_multi_free(m);
	return rc;
}

/*
 * k8s/watch: the watch-stream splitter and the streaming watch loop (see watch.h).
 *
 * Invariants of the parser: p->line holds the bytes of the current line seen so far
 * (never its newline), at most line_max of them; while p->skipping, bytes are dropped
 * until the next newline. A complete line that arrives in one chunk is parsed in place
 * without copying. p->rv only ever holds a resourceVersion the server sent (or the
 * caller's starting one).
 */
#include "watch.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/backoff.h"
#include "lib/clock.h"

#define EXCERPT_MAX     64          /* bytes of a bad line quoted in the message */
#define LINE_KEEP_MAX   (64u << 10) /* a line buffer grown past this is freed after use */
#define STATUS_BODY_MAX K8S_STATUS_BODY_MAX

static const char *const event_names[] = {
	[K8S_EVENT_ADDED] = "ADDED",     [K8S_EVENT_MODIFIED] = "MODIFIED",
	[K8S_EVENT_DELETED] = "DELETED", [K8S_EVENT_BOOKMARK] = "BOOKMARK",
	[K8S_EVENT_ERROR] = "ERROR",
};

const char *k8s_event_type_name(enum k8s_event_type t)
{
	if ((unsigned)t >= sizeof(event_names) / sizeof(event_names[0]))
		return "?";
	return event_names[t];
}

static int event_type_parse(const char *s, enum k8s_event_type *out)
{
	for (size_t i = 0; s && i < sizeof(event_names) / sizeof(event_names[0]); i++) {
		if (strcmp(s, event_names[i]) == 0) {
			*out = (enum k8s_event_type)i;
			return 0;
		}
	}
	return -EPROTO;
}

void k8s_watch_parser_init(struct k8s_watch_parser *p, size_t line_max, const char *start_rv)
{
	memset(p, 0, sizeof(*p));
	p->line_max = line_max ? line_max : K8S_WATCH_LINE_MAX;
	buf_init(&p->line, p->line_max);
	snprintf(p->rv, sizeof(p->rv), "%s", start_rv ? start_rv : "");
}

void k8s_watch_parser_release(struct k8s_watch_parser *p)
{
	if (!p)
		return;
	buf_release(&p->line);
	p->skipping = false;
}

const char *k8s_watch_parser_rv(const struct k8s_watch_parser *p)
{
	return p->rv;
}

/* A printable, bounded copy of a bad line for the error message. */
static void excerpt(const char *s, size_t n, char out[EXCERPT_MAX + 4])
{
	size_t m = n < EXCERPT_MAX ? n : EXCERPT_MAX;

	for (size_t i = 0; i < m; i++)
		out[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
	memcpy(out + m, n > m ? "..." : "", n > m ? 4 : 1);
}

static int line_malformed(const char *s, size_t n, const char *why, struct err *e)
{
	char ex[EXCERPT_MAX + 4];

	excerpt(s, n, ex);
	return err_set(e, -EPROTO, "watch: malformed event (%s): '%s'", why, ex);
}

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

/* An ERROR event carries a metav1.Status; 410 means our resourceVersion is gone. */
static int error_event(json_t *status, struct err *e)
{
	struct err se;
	int rc;

	if (!json_is_integer(json_object_get(status, "code")) &&
	    !json_is_string(json_object_get(status, "reason")))
		return err_set(e, -EPROTO, "watch: ERROR event without a Status code or reason");
	err_clear(&se);
	rc = k8s_status_object_to_err(0, status, &se);
	if (rc == -ESTALE)
		return err_set(e, rc, "resource version too old: relist (%s)", se.msg);
	if (rc == 0)
		rc = -EPROTO;
	return err_set(e, rc, "watch: error event: %s", se.msg);
}

static int event_rv(struct k8s_watch_parser *p, json_t *obj, struct err *e)
{
	const char *rv = json_string_value(
	        json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));

	if (!rv || !rv[0])
		return err_set(e, -EPROTO, "watch: event without metadata.resourceVersion");
	if (strlen(rv) > K8S_RV_MAX)
		return err_set(e, -EPROTO, "watch: resourceVersion longer than %d bytes",
		               K8S_RV_MAX);
	memcpy(p->rv, rv, strlen(rv) + 1);
	return 0;
}

static int parse_line(struct k8s_watch_parser *p, const char *s, size_t n,
                      k8s_watch_event_fn on_event, void *ctx, struct err *e)
{
	enum k8s_event_type type;
	json_error_t jerr;
	json_t *ev, *obj;
	int rc;

	if (n && s[n - 1] == '\r')
		n--;
	if (is_blank(s, n))
		return 0; /* keepalive */
	ev = json_loadb(s, n, 0, &jerr);
	if (!ev)
		return line_malformed(s, n, jerr.text, e);
	obj = json_object_get(ev, "object");
	if (event_type_parse(json_string_value(json_object_get(ev, "type")), &type) != 0)
		rc = line_malformed(s, n, "unknown or missing type", e);
	else if (!json_is_object(obj))
		rc = line_malformed(s, n, "object is not an object", e);
	else if (type == K8S_EVENT_ERROR)
		rc = error_event(obj, e);
	else if ((rc = event_rv(p, obj, e)) == 0)
		rc = on_event(ctx, type, obj, p->rv);
	json_decref(ev);
	return rc;
}

/* One piece of a line: seg[0..n), which ends the line when complete is true. */
static int feed_segment(struct k8s_watch_parser *p, const char *seg, size_t n, bool complete,
                        k8s_watch_event_fn on_event, void *ctx, struct err *e)
{
	int rc;

	if (p->skipping) {
		p->skipping = !complete;
		return 0;
	}
	if (n > p->line_max - p->line.len) {
		buf_release(&p->line);
		p->skipping = !complete;
		return err_set(e, -EMSGSIZE, "watch: event line over %zu bytes: skipped",
		               p->line_max);
	}
	if (!complete)
		return buf_append(&p->line, seg, n);
	if (p->line.len == 0)
		return parse_line(p, seg, n, on_event, ctx, e);
	buf_append(&p->line, seg, n); /* fits: checked above */
	rc = parse_line(p, p->line.data, p->line.len, on_event, ctx, e);
	if (p->line.cap > LINE_KEEP_MAX)
		buf_release(&p->line);
	else
		buf_clear(&p->line);
	return rc;
}

int k8s_watch_feed(struct k8s_watch_parser *p, const char *data, size_t len,
                   k8s_watch_event_fn on_event, void *ctx, struct err *e)
{
	size_t off = 0;
	int rc = 0;

	while (off < len && rc == 0) {
		const char *nl = memchr(data + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (data + off)) : len - off;

		rc = feed_segment(p, data + off, n, nl != NULL, on_event, ctx, e);
		off += n + (nl ? 1 : 0);
	}
	p->consumed = off;
	return rc;
}

int k8s_watch_finish(struct k8s_watch_parser *p, k8s_watch_event_fn on_event, void *ctx,
                     struct err *e)
{
	int rc = 0;

	if (!p->skipping && p->line.len)
		rc = parse_line(p, p->line.data, p->line.len, on_event, ctx, e);
	buf_release(&p->line);
	p->skipping = false;
	return rc;
}

/* ---- the streaming loop --------------------------------------------------------------- */

struct watch_run {
	struct k8s_watch_parser parser;
	struct k8s_call call;
	CURL *h;
	k8s_watch_event_fn on_event;
	void *ctx;
	const atomic_bool *stop;
	long http;       /* response status, read at the first body byte */
	int rc;          /* first error of the parser or the callback */
	struct err perr; /* its detail */
};

/* A 2xx body feeds the parser; any other body is kept (bounded) for the Status. */
static size_t watch_write(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct watch_run *w = ctx;
	size_t n = size * nmemb;

	if (w->http == 0)
		curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->http);
	if (w->http < 200 || w->http >= 300) {
		buf_append(&w->call.resp, ptr, n); /* past the cap the rest is dropped */
		return n;
	}
	w->rc = k8s_watch_feed(&w->parser, ptr, n, w->on_event, w->ctx, &w->perr);
	return w->rc ? 0 : n;
}

static int watch_stopped(void *ctx)
{
	const struct watch_run *w = ctx;

	return w->stop && atomic_load(w->stop);
}

/* timeoutSeconds plus up to a quarter more, so many watches do not restart together. */
static int jittered(int timeout_s)
{
	uint64_t seed = (uint64_t)clock_mono_ms() ^ ((uint64_t)(uintptr_t)&seed << 16);

	if (timeout_s <= 0)
		timeout_s = K8S_WATCH_TIMEOUT_S_DEFAULT;
	return timeout_s + (int)(backoff_rand64(&seed) % ((uint64_t)timeout_s / 4 + 1));
}

static int watch_setup(struct k8s_client *c, struct watch_run *w, const struct k8s_resource *res,
                       const char *ns, const struct k8s_list_opts *lo, const char *rv,
                       int timeout_s, struct err *e)
{
	struct k8s_query q = {
		.watch = true,
		.allow_watch_bookmarks = true,
		.timeout_seconds = jittered(timeout_s),
		.resource_version = rv && rv[0] ? rv : NULL,
		.label_selector = lo ? lo->label_selector : NULL,
		.field_selector = lo ? lo->field_selector : NULL,
	};

	k8s_call_init(&w->call, "GET", STATUS_BODY_MAX);
	w->call.write_fn = watch_write;
	w->call.write_ctx = w;
	w->call.progress_fn = watch_stopped;
	w->call.progress_ctx = w;
	w->call.timeout_ms = (long)(q.timeout_seconds + K8S_WATCH_MARGIN_S) * 1000;
	return k8s_call_set_url(c, &w->call, res, ns, NULL, NULL, &q, e);
}

/* Maps the end of the transfer: the parser's or callback's verdict comes first. */
static int watch_result(struct watch_run *w, CURLcode cc, struct err *e)
{
	if (w->rc)
		return w->perr.code ? err_set(e, w->rc, "%s", w->perr.msg) : w->rc;
	if (cc == CURLE_OK && w->http >= 200 && w->http < 300) {
		err_clear(&w->perr);
		w->rc = k8s_watch_finish(&w->parser, w->on_event, w->ctx, &w->perr);
		return w->perr.code ? err_set(e, w->rc, "%s", w->perr.msg) : w->rc;
	}
	return k8s_call_result(w->h, cc, &w->call, e);
}

int k8s_watch_run(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                  const struct k8s_list_opts *lo, const char *resource_version, int timeout_s,
                  k8s_watch_event_fn on_event, void *ctx, const atomic_bool *stop, struct err *e)
{
	struct watch_run w = { .on_event = on_event, .ctx = ctx, .stop = stop };
	int rc;

	err_clear(&w.perr);
	k8s_watch_parser_init(&w.parser, 0, resource_version);
	rc = watch_setup(c, &w, res, ns, lo, resource_version, timeout_s, e);
	if (!rc)
		rc = k8s_client_throttle(c, clock_mono_ms() + w.call.timeout_ms, e);
	if (!rc) {
		w.h = k8s_client_handle_get(c);
		rc = k8s_client_prepare_handle(c, w.h, &w.call, e);
	}
	if (!rc) {
		rc = watch_result(&w, curl_easy_perform(w.h), e);
		k8s_client_answered(c, w.h, &w.call);
	}
	k8s_client_handle_put(c, w.h);
	k8s_call_release(&w.call);
	k8s_watch_parser_release(&w.parser);
	return rc;
}

/*
 * k8s/watch: Kubernetes watch streams — a pure line splitter and a streaming loop.
 *
 * A watch answer is one JSON event per line:
 *   {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}\n
 *
 * (a) The parser is fed arbitrary byte chunks (as they arrive from the network) and
 *     calls on_event once per complete event line, in order, whatever the chunking.
 *     It tracks the latest resourceVersion (metadata.resourceVersion of every event,
 *     bookmarks included), so the caller can re-watch from where it stopped. Blank
 *     lines (keepalives) are skipped; a trailing "\r" is dropped (CRLF).
 *     Errors: an ERROR event whose Status says 410 (Gone/Expired) is -ESTALE ("resource
 *     version too old: relist"); another ERROR event is the Status's errno; a line that
 *     is not such an event is -EPROTO with a short excerpt; a line longer than the
 *     parser's line_max is -EMSGSIZE — its bytes are discarded up to the next newline,
 *     so memory stays bounded and the parser resyncs on the following line.
 *     k8s_watch_feed returns at the first error; p->consumed then says how many bytes
 *     of the chunk it used, and feeding the rest continues exactly where it stopped.
 *
 * (b) k8s_watch_run streams one watch request (watch=1, allowWatchBookmarks=true,
 *     server-side timeoutSeconds with jitter) through the parser, and returns 0 when the
 *     server ends the stream normally: re-watch from the last resourceVersion seen;
 *     -ESTALE on 410: relist, then watch from the list's resourceVersion.
 *
 * Ownership: the object passed to on_event is borrowed (json_incref to keep it); rv is
 * borrowed, valid during the callback. A parser belongs to one thread; k8s_watch_run
 * may run on any thread (one per watch) with a shared client.
 */
#ifndef REDIS_OPERATOR_K8S_WATCH_H
#define REDIS_OPERATOR_K8S_WATCH_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/k8s/client.h"

#define K8S_WATCH_LINE_MAX          (8u << 20) /* longest event line accepted */
#define K8S_RV_MAX                  128        /* longest resourceVersion accepted */
#define K8S_WATCH_TIMEOUT_S_DEFAULT 300        /* server-side timeoutSeconds before jitter */
#define K8S_WATCH_MARGIN_S          30         /* client deadline past the server's timeout */

enum k8s_event_type {
	K8S_EVENT_ADDED,
	K8S_EVENT_MODIFIED,
	K8S_EVENT_DELETED,
	K8S_EVENT_BOOKMARK, /* object carries only metadata.resourceVersion */
	K8S_EVENT_ERROR,    /* never passed to on_event: turned into an error code */
};

/* Non-zero stops the stream; k8s_watch_feed/k8s_watch_run return that value. */
typedef int (*k8s_watch_event_fn)(void *ctx, enum k8s_event_type type, json_t *object,
                                  const char *rv);

struct k8s_watch_parser {
	struct buf line; /* the incomplete line so far */
	size_t line_max;
	bool skipping;           /* discarding an over-long line up to its newline */
	char rv[K8S_RV_MAX + 1]; /* latest resourceVersion, "" before any */
	size_t consumed;         /* bytes of the last k8s_watch_feed chunk used */
};

/* line_max 0 means K8S_WATCH_LINE_MAX. start_rv (may be NULL) seeds the tracked RV. */
void k8s_watch_parser_init(struct k8s_watch_parser *p, size_t line_max, const char *start_rv);
void k8s_watch_parser_release(struct k8s_watch_parser *p);
/* The latest resourceVersion seen ("" if none); borrowed. */
const char *k8s_watch_parser_rv(const struct k8s_watch_parser *p);

/* Feeds len bytes; see the header comment for the error contract. */
int k8s_watch_feed(struct k8s_watch_parser *p, const char *data, size_t len,
                   k8s_watch_event_fn on_event, void *ctx, struct err *e);
/* At end of stream: a final line without newline is parsed as an event (a truncated one
 * is -EPROTO). The parser is empty afterwards. */
int k8s_watch_finish(struct k8s_watch_parser *p, k8s_watch_event_fn on_event, void *ctx,
                     struct err *e);

/* "ADDED" … "ERROR"; "?" for an unknown value. */
const char *k8s_event_type_name(enum k8s_event_type t);

/*
 * Runs one watch on res in ns (NULL: all namespaces, or a cluster-scoped resource) with
 * lo's selectors (lo->limit is ignored), from resource_version (NULL or "": the server
 * starts with synthetic ADDED events for what exists). timeout_s: the server-side
 * timeoutSeconds before jitter (0: K8S_WATCH_TIMEOUT_S_DEFAULT); the client gives up
 * K8S_WATCH_MARGIN_S later (-ETIMEDOUT), so a dead connection is noticed.
 * stop (may be NULL) is polled about once a second: when it becomes true the watch ends
 * with -ECANCELED. on_event's non-zero return ends it with that value.
 * Returns 0 when the server closed the stream, -ESTALE (relist), or another error.
 * The last resourceVersion seen is what on_event last received as rv.
 */
int k8s_watch_run(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                  const struct k8s_list_opts *lo, const char *resource_version, int timeout_s,
                  k8s_watch_event_fn on_event, void *ctx, const atomic_bool *stop, struct err *e);

#endif

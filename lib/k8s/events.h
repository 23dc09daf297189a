/*
 * k8s/events: an asynchronous, deduplicating, rate-limited recorder of
 * events.k8s.io/v1 Events.
 *
 *   struct k8s_events *ev = k8s_events_new(client, &(struct k8s_events_opts){
 *           .controller = "redis.io/redis-operator", .instance = pod_name }, &e);
 *   k8s_events_start(ev, &e);
 *   struct k8s_events_ref rc = { "redis.io/v1", "RedisCluster", "prod", "cache", uid };
 *   k8s_events_emit(ev, &rc, K8S_EVENTS_WARNING, "FailoverStarted", "Failover",
 *                   "primary %s unreachable for %d s", pod, secs);
 *   ...
 *   k8s_events_free(ev);                 (drains for up to K8S_EVENTS_DRAIN_MS)
 *
 * emit never blocks on the API: it queues and returns. A worker thread turns the queue
 * into requests, one at a time.
 *
 * Deduplication: events with the same (regarding, type, reason, action, note) are one
 * series. While one is still queued, another emit only bumps its count (coalescing:
 * no extra request). Once posted, the same event again within dedup_window_ms of the
 * last observation becomes a merge PATCH of the existing Event's series {count,
 * lastObservedTime}; after the window, or if that Event is gone (404), a new Event is
 * created. The dedup cache holds at most cache_max series (oldest observations go first).
 *
 * Rate limit: a token bucket per regarding object (burst, refill_per_s); an emit that
 * would queue a new request with the bucket empty is dropped and counted (coalesced
 * emits are free). The queue holds at most queue_max requests; more are dropped and
 * counted. At most objects_max buckets are kept (full ones are forgotten first).
 *
 * Limits follow the API's validation: reason and action 1..128 bytes, note truncated
 * to 1024 bytes (at a UTF-8 boundary), reporting controller/instance 1..128 bytes.
 *
 * Time: opts.clock (NULL: real) gives the monotonic time for windows and buckets and the
 * wall time for eventTime/lastObservedTime, so tests drive it by hand. Tests may also
 * leave the thread off and call k8s_events_process to run queued requests one by one.
 *
 * Threads: emit, stats and flush from any thread; new/start/stop/free from the owner.
 */
#ifndef REDIS_OPERATOR_K8S_EVENTS_H
#define REDIS_OPERATOR_K8S_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/clock.h"
#include "lib/err.h"
#include "lib/k8s/client.h"

#define K8S_EVENTS_WINDOW_MS_DEFAULT 600000 /* 10 min */
#define K8S_EVENTS_BURST_DEFAULT     25
#define K8S_EVENTS_REFILL_DEFAULT    0.1 /* tokens per second per object */
#define K8S_EVENTS_QUEUE_MAX         1000
#define K8S_EVENTS_CACHE_MAX         4096
#define K8S_EVENTS_OBJECTS_MAX       4096
#define K8S_EVENTS_DRAIN_MS          2000 /* what k8s_events_free waits for the queue */
#define K8S_EVENTS_FIELD_MAX         128  /* reason, action, reporting controller/instance */
#define K8S_EVENTS_NOTE_MAX          1024

enum k8s_events_type { K8S_EVENTS_NORMAL, K8S_EVENTS_WARNING };

/* The object an event is about (copied on emit). uid and api_version may be NULL. */
struct k8s_events_ref {
	const char *api_version;
	const char *kind;
	const char *ns; /* NULL for cluster-scoped objects: the Event goes to "default" */
	const char *name;
	const char *uid;
};

struct k8s_events_opts {
	const char *controller;    /* reportingController, e.g. "redis.io/redis-operator" */
	const char *instance;      /* reportingInstance, e.g. the pod name */
	int64_t dedup_window_ms;   /* 0: K8S_EVENTS_WINDOW_MS_DEFAULT */
	int burst;                 /* per object; 0: K8S_EVENTS_BURST_DEFAULT */
	double refill_per_s;       /* per object; 0: K8S_EVENTS_REFILL_DEFAULT */
	size_t queue_max;          /* 0: K8S_EVENTS_QUEUE_MAX */
	size_t cache_max;          /* 0: K8S_EVENTS_CACHE_MAX */
	size_t objects_max;        /* 0: K8S_EVENTS_OBJECTS_MAX */
	const struct clock *clock; /* NULL: real clocks; must outlive the recorder */
};

struct k8s_events_stats {
	uint64_t emitted;       /* emit calls accepted (queued or coalesced) */
	uint64_t coalesced;     /* emits folded into a queued request */
	uint64_t created;       /* Events created (POST) */
	uint64_t patched;       /* series updates (PATCH) */
	uint64_t dropped_rate;  /* emits dropped by the per-object rate limit */
	uint64_t dropped_queue; /* emits dropped because the queue was full */
	uint64_t failed;        /* requests that failed */
	size_t queued;          /* requests waiting now */
};

struct k8s_events;

/* The client is borrowed (must outlive the recorder). NULL with e set (-EINVAL) for a
 * missing or over-long controller/instance. */
struct k8s_events *k8s_events_new(struct k8s_client *c, const struct k8s_events_opts *o,
                                  struct err *e);
/* Stops (draining up to K8S_EVENTS_DRAIN_MS) and frees. NULL-safe. */
void k8s_events_free(struct k8s_events *ev);

/* Starts the worker. 0, -EALREADY, or -errno of pthread_create. */
int k8s_events_start(struct k8s_events *ev, struct err *e);
/* Lets the worker send what is queued for up to drain_ms, then stops it; whatever is
 * left is dropped (counted as dropped_queue). Idempotent. */
void k8s_events_stop(struct k8s_events *ev, int64_t drain_ms);

/*
 * Records an event; note is a printf format. 0 (queued or coalesced), -EAGAIN (rate
 * limited: dropped), -ENOBUFS (queue full: dropped), -EINVAL (missing or over-long
 * reason/action, missing kind/name, bad type), -ECANCELED (stopped).
 */
int k8s_events_emit(struct k8s_events *ev, const struct k8s_events_ref *regarding,
                    enum k8s_events_type type, const char *reason, const char *action,
                    const char *note_fmt, ...) __attribute__((format(printf, 6, 7)));

/* Runs the oldest queued request on the calling thread (without a worker: tests).
 * 0 when one ran (even if the API refused it: counted as failed), -ENOENT when the
 * queue is empty. */
int k8s_events_process(struct k8s_events *ev);
/* Waits until the queue is empty and no request is in flight: 0 or -ETIMEDOUT. */
int k8s_events_flush(struct k8s_events *ev, int64_t timeout_ms);
void k8s_events_stats(struct k8s_events *ev, struct k8s_events_stats *out);

#endif

/*
 * k8s/informer: a local, always-current copy of one kind of object (list + watch).
 *
 *   struct k8s_informer_opts o = {
 *           .res = &k8s_res_pods, .ns = NULL,
 *           .label_selector = "app.kubernetes.io/managed-by=redis-operator",
 *           .trim = keep_what_i_read, .on_update = pod_changed, .ctx = ctl,
 *   };
 *   struct k8s_informer *inf = k8s_informer_new(client, &o, &e);
 *   k8s_informer_start(inf, &e);
 *   k8s_informer_wait_synced(inf, 30000);
 *   json_t *pod = k8s_informer_get(inf, "prod", "cache-1");   (a reference you own)
 *   ...
 *   k8s_informer_free(inf);                                    (stops, then frees)
 *
 * The loop (on the informer's own thread): LIST every page, store the items (objects
 * that vanished since the last list are deleted, handlers see the difference), mark
 * the store synced, then WATCH from the list's resourceVersion. When the server closes
 * the watch normally it re-watches from the last resourceVersion seen (bookmarks
 * included); on a transport or server error it waits (exponential backoff with jitter)
 * and re-watches from that same resourceVersion. It lists again only when it must: the
 * resourceVersion is gone (410, -ESTALE), or an event could not be read (-EPROTO,
 * -EMSGSIZE: the stream lost an event), or a list failed. There is never a periodic
 * full LIST in steady state.
 *
 * Store: keyed "namespace/name" ("name" for cluster-scoped kinds). Every object is
 * trimmed before it is stored: metadata.managedFields and the
 * kubectl.kubernetes.io/last-applied-configuration annotation always go, then the
 * caller's trim callback may drop more (keep only the fields it reads). Stored objects
 * are shared and READ-ONLY: getters hand out references (json_incref), never copies;
 * json_deep_copy before changing one. At most max_objects are held (a peer-controlled
 * size): an event that would pass the cap fails the watch with -ENOSPC, counted, and
 * the informer relists after backoff.
 *
 * Index: with index_label set, the store also keeps, per "namespace/<label value>", the
 * keys of the objects carrying that label, so that k8s_informer_list_indexed reads one
 * owner's objects without scanning the whole store (a controller with thousands of
 * clusters reconciles each one several times a minute).
 *
 * Handlers run on the informer thread, in event order, without any informer lock held
 * (they may call the getters). on_add(new), on_update(old, new), on_delete(old): the
 * objects are borrowed for the duration of the call (trimmed, as stored). A DELETED
 * event passes the object's final state; a delete found by a relist passes the last
 * stored state. An event whose resourceVersion equals the stored one changes nothing
 * and calls nothing.
 *
 * Stop: k8s_informer_stop sets a flag that the watch polls (about once a second), and
 * wakes a backoff wait at once; a LIST in flight finishes within the client's deadline.
 *
 * Threads: new/start/stop/free from one owner thread; getters, has_synced, stats and
 * wait_synced from any thread. k8s_informer_apply/replace are for feeding the store by
 * hand (tests, benchmarks, an informer created with a NULL client) and must not be
 * used while the informer thread runs.
 */
#ifndef REDIS_OPERATOR_K8S_INFORMER_H
#define REDIS_OPERATOR_K8S_INFORMER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/k8s/client.h"
#include "lib/k8s/path.h"
#include "lib/k8s/watch.h"

#define K8S_INFORMER_OBJECTS_MAX     200000 /* default cap on stored objects */
#define K8S_INFORMER_BACKOFF_BASE_MS 200
#define K8S_INFORMER_BACKOFF_CAP_MS  30000
#define K8S_INFORMER_KEY_MAX         (K8S_NAMESPACE_MAX + 1 + K8S_NAME_MAX)

struct k8s_informer;

struct k8s_informer_opts {
	const struct k8s_resource *res; /* required; borrowed, must outlive the informer */
	const char *ns;                 /* NULL: all namespaces (or cluster-scoped) */
	const char *label_selector;     /* copied; NULL: none */
	const char *field_selector;     /* copied; NULL: none */
	long list_page;                 /* LIST page size; 0: the client's default */
	int watch_timeout_s;            /* server-side watch timeout; 0: the watch default */
	int64_t backoff_base_ms;        /* 0: K8S_INFORMER_BACKOFF_BASE_MS */
	int64_t backoff_cap_ms;         /* 0: K8S_INFORMER_BACKOFF_CAP_MS */
	size_t max_objects;             /* 0: K8S_INFORMER_OBJECTS_MAX */
	/*
	 * Resume: when set, the first cycle skips the LIST and watches from this
	 * resourceVersion, as if the store (fed with k8s_informer_replace) reflected it.
	 * A 410 then relists. For tests and warm restarts; NULL normally.
	 */
	const char *start_rv;
	/* Called on each object (owned by the informer, not yet shared) before it is
	 * stored; removes what the caller never reads. NULL: only the standard trim. */
	void (*trim)(void *ctx, json_t *obj);
	/* A label key to index the store by (see "Index"); copied; NULL: no index. */
	const char *index_label;
	void (*on_add)(void *ctx, json_t *obj);
	void (*on_update)(void *ctx, json_t *old_obj, json_t *new_obj);
	void (*on_delete)(void *ctx, json_t *old_obj);
	void *ctx; /* passed to trim and the handlers */
};

/* Counters since k8s_informer_new, for metrics and tests. */
struct k8s_informer_stats {
	uint64_t lists;          /* LIST cycles started */
	uint64_t watches;        /* watch requests started */
	uint64_t events;         /* ADDED/MODIFIED/DELETED events applied */
	uint64_t bookmarks;      /* BOOKMARK events */
	uint64_t errors;         /* failed lists and watches (not normal closes) */
	uint64_t relists;        /* lists after the first one */
	uint64_t stale;          /* -ESTALE (410) answers */
	size_t objects;          /* in the store now */
	int last_error;          /* errno of the last failure, 0 if none */
	char rv[K8S_RV_MAX + 1]; /* last resourceVersion seen */
};

/*
 * client may be NULL for a store fed by hand (k8s_informer_start is then -EINVAL).
 * The client is borrowed and must outlive the informer. NULL (e: -EINVAL) without a
 * resource, or with a bad namespace.
 */
struct k8s_informer *k8s_informer_new(struct k8s_client *client, const struct k8s_informer_opts *o,
                                      struct err *e);
/* Stops (if running) and frees; drops every stored reference. NULL-safe. */
void k8s_informer_free(struct k8s_informer *inf);

/* Starts the informer thread. 0, -EINVAL (no client), -EALREADY, or -errno of
 * pthread_create. */
int k8s_informer_start(struct k8s_informer *inf, struct err *e);
/* Stops the thread and waits for it (see "Stop" above). The store stays readable.
 * Idempotent. */
void k8s_informer_stop(struct k8s_informer *inf);

/* True once the first LIST is stored (stays true across relists). */
bool k8s_informer_has_synced(struct k8s_informer *inf);
/* Waits up to timeout_ms for has_synced: 0 or -ETIMEDOUT. */
int k8s_informer_wait_synced(struct k8s_informer *inf, int64_t timeout_ms);

/* A new reference to the stored object, or NULL. ns NULL for cluster-scoped kinds. */
json_t *k8s_informer_get(struct k8s_informer *inf, const char *ns, const char *name);
/* The same by store key ("ns/name"). */
json_t *k8s_informer_get_key(struct k8s_informer *inf, const char *key);
/* A new array holding a reference to every stored object of namespace ns (NULL for
 * cluster-scoped kinds) whose index_label is value, in no particular order; an empty
 * array when the informer has no index_label. */
json_t *k8s_informer_list_indexed(struct k8s_informer *inf, const char *ns, const char *value);
/* A new array holding a reference to every stored object (a consistent snapshot). */
json_t *k8s_informer_list(struct k8s_informer *inf);
size_t k8s_informer_len(struct k8s_informer *inf);
void k8s_informer_stats(struct k8s_informer *inf, struct k8s_informer_stats *out);

/*
 * The store key of obj ("ns/name", or "name" without a namespace) into out.
 * -EPROTO without metadata.name, -EMSGSIZE when it does not fit (len >= needed) or
 * passes K8S_INFORMER_KEY_MAX. Pure.
 */
int k8s_informer_key(json_t *obj, char *out, size_t len, struct err *e);
/* The standard trim: drops metadata.managedFields and the last-applied annotation. */
void k8s_informer_trim_standard(json_t *obj);

/*
 * Applies one watch event to the store as the loop does (obj borrowed; a trimmed copy
 * is stored) and calls the handlers. BOOKMARK only records the resourceVersion.
 * 0, -EINVAL (ERROR or unknown type), -EPROTO (no name), -ENOSPC (store full).
 */
int k8s_informer_apply(struct k8s_informer *inf, enum k8s_event_type type, json_t *obj,
                       struct err *e);
/*
 * Replaces the whole store with items (an array, borrowed) as after a LIST: new keys
 * are added, changed ones updated, missing ones deleted, handlers called for each;
 * rv (may be NULL) becomes the last resourceVersion; the store is marked synced.
 * 0, -EINVAL (not an array), -EPROTO (an item without a name), -ENOSPC.
 */
int k8s_informer_replace(struct k8s_informer *inf, json_t *items, const char *rv, struct err *e);

#endif

/*
 * k8s/informer: list + watch into a trimmed, shared, read-only store (see informer.h).
 *
 * Invariants: inf->store maps "ns/name" to a json_t reference the store owns; a stored
 * object is never modified after insertion (readers hold references without a lock).
 * inf->lock guards the store, the stats, `synced` and `rv`; handlers are called with
 * no lock held, after the store already shows the change. The loop state (need_list,
 * backoff) belongs to the informer thread alone. `stop` is atomic and also signalled
 * through `cond`, so a backoff wait ends at once.
 */
#include "informer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/backoff.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/strmap.h"

#define LOG_COMP         "k8s-informer"
#define LAST_APPLIED     "kubectl.kubernetes.io/last-applied-configuration"
#define WATCH_HEALTHY_MS 10000 /* a watch that lasted this long resets the backoff */
#define BACKOFF_FACTOR   2.0
#define BACKOFF_JITTER   0.2

struct k8s_informer {
	struct k8s_client *client; /* borrowed; NULL for a hand-fed store */
	struct k8s_informer_opts o;
	char *ns, *label_selector, *field_selector, *start_rv, *index_label; /* owned copies */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled on synced and on stop */
	struct strmap store; /* key → json_t * (owned reference) */
	struct strmap index; /* "ns/<index_label value>" → struct strmap * of store keys */
	struct k8s_informer_stats st;
	bool synced;
	atomic_bool stop;
	bool running;
	pthread_t thread;
	struct backoff bo; /* informer thread only */
};

/* One change for the handlers, collected under the lock and delivered after it. */
enum change_op { CHANGE_ADD, CHANGE_UPDATE, CHANGE_DELETE };

struct change {
	enum change_op op;
	json_t *old_obj, *new_obj; /* references held until delivered */
};

struct changes {
	struct change *v;
	size_t len, cap;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

struct k8s_informer *k8s_informer_new(struct k8s_client *client, const struct k8s_informer_opts *o,
                                      struct err *e)
{
	struct k8s_informer *inf;

	if (!o || !o->res) {
		err_set(e, -EINVAL, "informer: a resource is required");
		return NULL;
	}
	if (o->ns && !k8s_namespace_is_valid(o->ns)) {
		err_set(e, -EINVAL, "informer %s: invalid namespace", o->res->plural);
		return NULL;
	}
	inf = xcalloc(1, sizeof(*inf));
	inf->client = client;
	inf->o = *o;
	inf->o.ns = inf->ns = dup_or_null(o->ns);
	inf->o.label_selector = inf->label_selector = dup_or_null(o->label_selector);
	inf->o.field_selector = inf->field_selector = dup_or_null(o->field_selector);
	inf->o.start_rv = inf->start_rv = dup_or_null(o->start_rv);
	inf->o.index_label = inf->index_label = dup_or_null(o->index_label);
	if (inf->o.max_objects == 0)
		inf->o.max_objects = K8S_INFORMER_OBJECTS_MAX;
	if (inf->o.backoff_base_ms <= 0)
		inf->o.backoff_base_ms = K8S_INFORMER_BACKOFF_BASE_MS;
	if (inf->o.backoff_cap_ms <= 0)
		inf->o.backoff_cap_ms = K8S_INFORMER_BACKOFF_CAP_MS;
	backoff_init(&inf->bo, inf->o.backoff_base_ms, inf->o.backoff_cap_ms, BACKOFF_FACTOR,
	             BACKOFF_JITTER, (uint64_t)clock_mono_ms() ^ (uint64_t)(uintptr_t)inf);
	pthread_mutex_init(&inf->lock, NULL);
	clock_cond_init(&inf->cond);
	strmap_init(&inf->store);
	strmap_init(&inf->index);
	atomic_init(&inf->stop, false);
	return inf;
}

static void json_decref_void(void *p)
{
	json_decref(p);
}

static void key_set_free(void *p)
{
	strmap_release(p, NULL);
	free(p);
}

void k8s_informer_free(struct k8s_informer *inf)
{
	if (!inf)
		return;
	k8s_informer_stop(inf);
	strmap_release(&inf->store, json_decref_void);
	strmap_release(&inf->index, key_set_free);
	pthread_cond_destroy(&inf->cond);
	pthread_mutex_destroy(&inf->lock);
	free(inf->ns);
	free(inf->label_selector);
	free(inf->index_label);
	free(inf->field_selector);
	free(inf->start_rv);
	free(inf);
}

/* ---- keys and trimming ------------------------------------------------------------ */

int k8s_informer_key(json_t *obj, char *out, size_t len, struct err *e)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	int n;

	if (!name || !name[0])
		return err_set(e, -EPROTO, "informer: object without metadata.name");
	if (ns && ns[0])
		n = snprintf(out, len, "%s/%s", ns, name);
	else
		n = snprintf(out, len, "%s", name);
	if (n < 0 || (size_t)n >= len || n > K8S_INFORMER_KEY_MAX)
		return err_set(e, -EMSGSIZE, "informer: object key longer than %d bytes",
		               K8S_INFORMER_KEY_MAX);
	return 0;
}

void k8s_informer_trim_standard(json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");

	json_object_del(meta, "managedFields");
	json_object_del(json_object_get(meta, "annotations"), LAST_APPLIED);
}

static void trim(struct k8s_informer *inf, json_t *obj)
{
	k8s_informer_trim_standard(obj);
	if (inf->o.trim)
		inf->o.trim(inf->o.ctx, obj);
}

static const char *obj_rv(json_t *obj)
{
	return json_string_value(
	        json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
}

static bool same_rv(json_t *a, json_t *b)
{
	const char *ra = obj_rv(a), *rb = obj_rv(b);

	return ra && rb && strcmp(ra, rb) == 0;
}

static void set_rv(struct k8s_informer *inf, const char *rv)
{
	if (rv && strlen(rv) <= K8S_RV_MAX)
		memcpy(inf->st.rv, rv, strlen(rv) + 1);
}

/* ---- delivering changes ---------------------------------------------------------- */

static void changes_push(struct changes *c, enum change_op op, json_t *old_obj, json_t *new_obj)
{
	if (c->len == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->v = xreallocarray(c->v, c->cap, sizeof(*c->v));
	}
	c->v[c->len++] = (struct change){ op, old_obj, new_obj };
}

/* Calls the handlers in order and drops the references; no lock held. */
static void changes_deliver(struct k8s_informer *inf, struct changes *c)
{
	const struct k8s_informer_opts *o = &inf->o;

	for (size_t i = 0; i < c->len; i++) {
		struct change *ch = &c->v[i];

		if (ch->op == CHANGE_ADD && o->on_add)
			o->on_add(o->ctx, ch->new_obj);
		else if (ch->op == CHANGE_UPDATE && o->on_update)
			o->on_update(o->ctx, ch->old_obj, ch->new_obj);
		else if (ch->op == CHANGE_DELETE && o->on_delete)
			o->on_delete(o->ctx, ch->old_obj);
		json_decref(ch->old_obj);
		json_decref(ch->new_obj);
	}
	free(c->v);
	c->v = NULL;
	c->len = c->cap = 0;
}

/* ---- applying events ---------------------------------------------------------------- */

/* ---- the index (lock held) -------------------------------------------------------------- */

/* obj's index entry name ("ns/value", or "value" cluster-scoped); false when none. */
static bool index_name(const struct k8s_informer *inf, json_t *obj, char *out, size_t size)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *ns = json_string_value(json_object_get(meta, "namespace"));
	const char *v = json_string_value(
	        json_object_get(json_object_get(meta, "labels"), inf->o.index_label));
	int n;

	if (!inf->o.index_label || !v)
		return false;
	n = ns ? snprintf(out, size, "%s/%s", ns, v) : snprintf(out, size, "%s", v);
	return n > 0 && (size_t)n < size;
}

static void index_add(struct k8s_informer *inf, const char *key, json_t *obj)
{
	char name[K8S_INFORMER_KEY_MAX + 2];
	struct strmap_entry *en;
	bool created;

	if (!index_name(inf, obj, name, sizeof(name)))
		return;
	en = strmap_upsert(&inf->index, name, &created);
	if (created)
		en->value = xcalloc(1, sizeof(struct strmap));
	strmap_set(en->value, key, NULL);
}

static void index_remove(struct k8s_informer *inf, const char *key, json_t *obj)
{
	char name[K8S_INFORMER_KEY_MAX + 2];
	struct strmap *keys;
	void *gone = NULL;

	if (!obj || !index_name(inf, obj, name, sizeof(name)))
		return;
	keys = strmap_get(&inf->index, name);
	if (keys && strmap_remove(keys, key, NULL) && strmap_len(keys) == 0 &&
	    strmap_remove(&inf->index, name, &gone))
		key_set_free(gone);
}

static void index_rebuild(struct k8s_informer *inf)
{
	struct strmap_entry *en;
	size_t it = 0;

	strmap_release(&inf->index, key_set_free);
	strmap_init(&inf->index);
	while ((en = strmap_next(&inf->store, &it)))
		index_add(inf, en->key, en->value);
}

/* ---- the store (lock held) -------------------------------------------------------------- */

/* Stores obj (a reference we own, already trimmed) under key; lock held. */
static int store_upsert(struct k8s_informer *inf, const char *key, json_t *obj, struct changes *ch,
                        struct err *e)
{
	struct strmap_entry *en = strmap_find(&inf->store, key);
	json_t *old = en ? en->value : NULL;

	if (old && same_rv(old, obj)) {
		json_decref(obj);
		return 0;
	}
	if (!old && strmap_len(&inf->store) >= inf->o.max_objects) {
		json_decref(obj);
		return err_set(e, -ENOSPC, "informer %s: more than %zu objects", inf->o.res->plural,
		               inf->o.max_objects);
	}
	index_remove(inf, key, old);
	strmap_set(&inf->store, key, json_incref(obj));
	index_add(inf, key, obj);
	changes_push(ch, old ? CHANGE_UPDATE : CHANGE_ADD, old, obj);
	return 0;
}

/* obj: a reference we own, trimmed; a DELETED event's final state. Lock held. */
static void store_delete(struct k8s_informer *inf, const char *key, json_t *obj, struct changes *ch)
{
	void *old = NULL;

	if (strmap_remove(&inf->store, key, &old)) {
		index_remove(inf, key, old);
		changes_push(ch, CHANGE_DELETE, obj, NULL);
		json_decref(old);
	} else {
		json_decref(obj);
	}
}

/* obj: a reference we own that nobody else reads (trimmed here, in place). */
static int apply_owned(struct k8s_informer *inf, enum k8s_event_type type, json_t *obj,
                       struct err *e)
{
	struct changes ch = { 0 };
	char key[K8S_INFORMER_KEY_MAX + 1];
	int rc = 0;

	if (type > K8S_EVENT_BOOKMARK) {
		json_decref(obj);
		return err_set(e, -EINVAL, "informer: event type %d cannot be applied", (int)type);
	}
	if (type == K8S_EVENT_BOOKMARK) {
		pthread_mutex_lock(&inf->lock);
		inf->st.bookmarks++;
		set_rv(inf, obj_rv(obj));
		pthread_mutex_unlock(&inf->lock);
		json_decref(obj);
		return 0;
	}
	rc = k8s_informer_key(obj, key, sizeof(key), e);
	if (rc) {
		json_decref(obj);
		return rc;
	}
	trim(inf, obj);
	pthread_mutex_lock(&inf->lock);
	set_rv(inf, obj_rv(obj));
	inf->st.events++;
	if (type == K8S_EVENT_DELETED)
		store_delete(inf, key, obj, &ch);
	else
		rc = store_upsert(inf, key, obj, &ch, e);
	inf->st.objects = strmap_len(&inf->store);
	pthread_mutex_unlock(&inf->lock);
	changes_deliver(inf, &ch);
	return rc;
}

int k8s_informer_apply(struct k8s_informer *inf, enum k8s_event_type type, json_t *obj,
                       struct err *e)
{
	if (!json_is_object(obj))
		return err_set(e, -EINVAL, "informer: event object is not an object");
	return apply_owned(inf, type, json_deep_copy(obj), e);
}

/* ---- replacing the store after a LIST ------------------------------------------------ */

/* Builds next from items (trimming them in place when owned, else copies). */
static int build_next(struct k8s_informer *inf, json_t *items, bool owned, struct strmap *next,
                      struct err *e)
{
	char key[K8S_INFORMER_KEY_MAX + 1];
	size_t i;
	json_t *it;
	int rc;

	json_array_foreach (items, i, it) {
		json_t *obj = owned ? json_incref(it) : json_deep_copy(it);

		rc = k8s_informer_key(obj, key, sizeof(key), e);
		if (!rc && strmap_len(next) >= inf->o.max_objects)
			rc = err_set(e, -ENOSPC, "informer %s: more than %zu objects",
			             inf->o.res->plural, inf->o.max_objects);
		if (rc) {
			json_decref(obj);
			return rc;
		}
		trim(inf, obj);
		json_decref(strmap_set(next, key, obj));
	}
	return 0;
}

/* Diffs the current store against next (lock held); next keeps unchanged old objects. */
static void diff_store(struct k8s_informer *inf, struct strmap *next, struct changes *ch)
{
	struct strmap_entry *en;
	size_t it = 0;

	while ((en = strmap_next(next, &it))) {
		json_t *old = strmap_get(&inf->store, en->key);

		if (old && same_rv(old, en->value)) {
			json_decref(en->value);
			en->value = json_incref(old);
		} else {
			changes_push(ch, old ? CHANGE_UPDATE : CHANGE_ADD, json_incref(old),
			             json_incref(en->value));
		}
	}
	it = 0;
	while ((en = strmap_next(&inf->store, &it)))
		if (!strmap_contains(next, en->key))
			changes_push(ch, CHANGE_DELETE, json_incref(en->value), NULL);
}

static int replace_items(struct k8s_informer *inf, json_t *items, bool owned, const char *rv,
                         struct err *e)
{
	struct strmap next = STRMAP_INIT;
	struct changes ch = { 0 };
	int rc;

	if (!json_is_array(items))
		return err_set(e, -EINVAL, "informer: list items are not an array");
	rc = build_next(inf, items, owned, &next, e);
	if (rc) {
		strmap_release(&next, json_decref_void);
		return rc;
	}
	pthread_mutex_lock(&inf->lock);
	diff_store(inf, &next, &ch);
	strmap_release(&inf->store, json_decref_void);
	inf->store = next;
	index_rebuild(inf);
	inf->st.objects = strmap_len(&inf->store);
	set_rv(inf, rv);
	inf->synced = true;
	pthread_cond_broadcast(&inf->cond);
	pthread_mutex_unlock(&inf->lock);
	changes_deliver(inf, &ch);
	return 0;
}

int k8s_informer_replace(struct k8s_informer *inf, json_t *items, const char *rv, struct err *e)
{
	return replace_items(inf, items, false, rv, e);
}

/* ---- getters ------------------------------------------------------------------------ */

json_t *k8s_informer_get_key(struct k8s_informer *inf, const char *key)
{
	json_t *obj;

	pthread_mutex_lock(&inf->lock);
	obj = json_incref(strmap_get(&inf->store, key));
	pthread_mutex_unlock(&inf->lock);
	return obj;
}

json_t *k8s_informer_get(struct k8s_informer *inf, const char *ns, const char *name)
{
	char key[K8S_INFORMER_KEY_MAX + 2];
	int n;

	if (!name)
		return NULL;
	n = ns ? snprintf(key, sizeof(key), "%s/%s", ns, name)
	       : snprintf(key, sizeof(key), "%s", name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return NULL;
	return k8s_informer_get_key(inf, key);
}

json_t *k8s_informer_list_indexed(struct k8s_informer *inf, const char *ns, const char *value)
{
	char name[K8S_INFORMER_KEY_MAX + 2];
	json_t *arr = json_array();
	struct strmap_entry *en;
	struct strmap *keys;
	size_t it = 0;
	int n = ns ? snprintf(name, sizeof(name), "%s/%s", ns, value ? value : "")
	           : snprintf(name, sizeof(name), "%s", value ? value : "");

	if (!value || n < 0 || (size_t)n >= sizeof(name))
		return arr;
	pthread_mutex_lock(&inf->lock);
	keys = strmap_get(&inf->index, name);
	while (keys && (en = strmap_next(keys, &it)))
		json_array_append(arr, strmap_get(&inf->store, en->key));
	pthread_mutex_unlock(&inf->lock);
	return arr;
}

json_t *k8s_informer_list(struct k8s_informer *inf)
{
	json_t *arr = json_array();
	struct strmap_entry *en;
	size_t it = 0;

	pthread_mutex_lock(&inf->lock);
	while ((en = strmap_next(&inf->store, &it)))
		json_array_append(arr, en->value);
	pthread_mutex_unlock(&inf->lock);
	return arr;
}

size_t k8s_informer_len(struct k8s_informer *inf)
{
	size_t n;

	pthread_mutex_lock(&inf->lock);
	n = strmap_len(&inf->store);
	pthread_mutex_unlock(&inf->lock);
	return n;
}

void k8s_informer_stats(struct k8s_informer *inf, struct k8s_informer_stats *out)
{
	pthread_mutex_lock(&inf->lock);
	*out = inf->st;
	pthread_mutex_unlock(&inf->lock);
}

bool k8s_informer_has_synced(struct k8s_informer *inf)
{
	bool s;

	pthread_mutex_lock(&inf->lock);
	s = inf->synced;
	pthread_mutex_unlock(&inf->lock);
	return s;
}

int k8s_informer_wait_synced(struct k8s_informer *inf, int64_t timeout_ms)
{
	int64_t until = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int rc = 0;

	pthread_mutex_lock(&inf->lock);
	while (!inf->synced && rc == 0)
		rc = clock_cond_wait_until(&inf->cond, &inf->lock, until);
	rc = inf->synced ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&inf->lock);
	return rc;
}

/* ---- the loop ---------------------------------------------------------------------- */

/* Sleeps ms unless stopped first; false when stopped. */
static bool wait_or_stop(struct k8s_informer *inf, int64_t ms)
{
	int64_t until = clock_mono_ms() + ms;
	int rc = 0;

	pthread_mutex_lock(&inf->lock);
	while (!atomic_load(&inf->stop) && rc == 0)
		rc = clock_cond_wait_until(&inf->cond, &inf->lock, until);
	pthread_mutex_unlock(&inf->lock);
	return !atomic_load(&inf->stop);
}

static void count_error(struct k8s_informer *inf, int rc, const struct err *e, const char *what)
{
	char code[16];

	pthread_mutex_lock(&inf->lock);
	inf->st.errors++;
	inf->st.stale += rc == -ESTALE;
	inf->st.last_error = rc;
	pthread_mutex_unlock(&inf->lock);
	snprintf(code, sizeof(code), "%s", err_name(rc));
	log_warn(LOG_COMP, what, "resource", inf->o.res->plural, "ns", inf->ns ? inf->ns : "",
	         "code", code, "error", e->msg, (char *)NULL);
}

static void list_opts(const struct k8s_informer *inf, struct k8s_list_opts *lo)
{
	*lo = (struct k8s_list_opts){ .label_selector = inf->label_selector,
		                      .field_selector = inf->field_selector,
		                      .limit = inf->o.list_page };
}

static int do_list(struct k8s_informer *inf, struct err *e)
{
	struct k8s_list_opts lo;
	json_t *items = NULL;
	char *rv = NULL;
	int rc;

	list_opts(inf, &lo);
	pthread_mutex_lock(&inf->lock);
	inf->st.relists += inf->st.lists > 0;
	inf->st.lists++;
	pthread_mutex_unlock(&inf->lock);
	rc = k8s_list(inf->client, inf->o.res, inf->ns, &lo, &items, &rv, e);
	if (!rc)
		rc = replace_items(inf, items, true, rv, e);
	json_decref(items);
	free(rv);
	return rc;
}

struct watch_ctx {
	struct k8s_informer *inf;
	uint64_t events;
	struct err err; /* why apply failed */
};

static int on_watch_event(void *ctx, enum k8s_event_type type, json_t *object, const char *rv)
{
	struct watch_ctx *w = ctx;
	int rc;

	(void)rv; /* the object carries it */
	rc = apply_owned(w->inf, type, json_incref(object), &w->err);
	w->events += rc == 0;
	return rc;
}

static int do_watch(struct k8s_informer *inf, bool *healthy, struct err *e)
{
	struct watch_ctx w = { .inf = inf };
	struct k8s_list_opts lo;
	char rv[K8S_RV_MAX + 1];
	int64_t start = clock_mono_ms();
	int rc;

	list_opts(inf, &lo);
	err_clear(&w.err);
	pthread_mutex_lock(&inf->lock);
	inf->st.watches++;
	memcpy(rv, inf->st.rv, sizeof(rv));
	pthread_mutex_unlock(&inf->lock);
	rc = k8s_watch_run(inf->client, inf->o.res, inf->ns, &lo, rv, inf->o.watch_timeout_s,
	                   on_watch_event, &w, &inf->stop, e);
	if (rc && w.err.code)
		err_set(e, rc, "%s", w.err.msg);
	*healthy = w.events > 0 || clock_mono_ms() - start >= WATCH_HEALTHY_MS;
	return rc;
}

/* Lost events or an unusable resourceVersion: only a LIST recovers. */
static bool needs_relist(int rc)
{
	return rc == -ESTALE || rc == -EPROTO || rc == -EMSGSIZE || rc == -ENOSPC;
}

/* One cycle: a LIST or a WATCH, then what follows from its result. */
static void cycle(struct k8s_informer *inf, bool *need_list, bool *stale_before)
{
	bool healthy = false;
	struct err e;
	int rc;

	err_clear(&e);
	rc = *need_list ? do_list(inf, &e) : do_watch(inf, &healthy, &e);
	if (atomic_load(&inf->stop))
		return;
	if (*need_list && rc == 0) {
		*need_list = false;
		return;
	}
	if (healthy) {
		backoff_reset(&inf->bo);
		*stale_before = false;
	}
	if (rc == 0 && healthy)
		return; /* normal close: re-watch from the last resourceVersion at once */
	if (rc)
		count_error(inf, rc, &e, *need_list ? "list failed" : "watch failed");
	*need_list = *need_list || needs_relist(rc);
	/* The first 410 relists at once; anything else (or a 410 again) waits first. */
	if (rc == -ESTALE && !*stale_before) {
		*stale_before = true;
		return;
	}
	*stale_before = rc == -ESTALE;
	wait_or_stop(inf, backoff_next(&inf->bo));
}

static void *informer_main(void *arg)
{
	struct k8s_informer *inf = arg;
	bool need_list = !(inf->start_rv && inf->start_rv[0]);
	bool stale_before = false;

	if (!need_list) {
		pthread_mutex_lock(&inf->lock);
		set_rv(inf, inf->start_rv);
		pthread_mutex_unlock(&inf->lock);
	}
	while (!atomic_load(&inf->stop))
		cycle(inf, &need_list, &stale_before);
	return NULL;
}

int k8s_informer_start(struct k8s_informer *inf, struct err *e)
{
	int rc;

	if (!inf->client)
		return err_set(e, -EINVAL, "informer %s: no client", inf->o.res->plural);
	if (inf->running)
		return err_set(e, -EALREADY, "informer %s: already running", inf->o.res->plural);
	atomic_store(&inf->stop, false);
	rc = pthread_create(&inf->thread, NULL, informer_main, inf);
	if (rc)
		return err_set(e, -rc, "informer %s: pthread_create failed", inf->o.res->plural);
	inf->running = true;
	return 0;
}

void k8s_informer_stop(struct k8s_informer *inf)
{
	if (!inf || !inf->running)
		return;
	pthread_mutex_lock(&inf->lock);
	atomic_store(&inf->stop, true);
	pthread_cond_broadcast(&inf->cond);
	pthread_mutex_unlock(&inf->lock);
	pthread_join(inf->thread, NULL);
	inf->running = false;
}

/*
 * k8s/events: the asynchronous Event recorder (see events.h).
 *
 * Under ev->mu: the FIFO of requests (head/tail), `pending` (dedup key → queued item,
 * for coalescing), `cache` (dedup key → the posted series), `buckets` (object key →
 * token bucket), the stats, `busy` (a request in flight) and the stop state. A queued
 * item is owned by the queue until popped, then by the thread that pops it; requests
 * run without the lock. Dedup keys join the fields with \x1f, which no field contains
 * after validation (reason/action/kind are checked; the note is part of the key as is).
 */
#include "events.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/rfc3339.h"
#include "lib/strmap.h"

#define LOG_COMP  "k8s-events"
#define SEP       "\x1f"
#define UID_MAX   128
#define NAME_ROOM (K8S_NAME_MAX - 17) /* "<name>.<16 hex>" fits a name */

static const char *const type_names[] = {
	[K8S_EVENTS_NORMAL] = "Normal", [K8S_EVENTS_WARNING] = "Warning"
};

struct ev_item {
	struct ev_item *next;
	char *key, *obj_key;
	char *ns, *name; /* the Event's namespace; the regarding object's name */
	json_t *regarding;
	enum k8s_events_type type;
	char *reason, *action, *note;
	uint64_t count;
	int64_t first_wall, last_wall, last_mono;
};

struct ev_series {
	char *name, *ns;
	uint64_t count;
	int64_t last_mono;
};

struct ev_bucket {
	double tokens;
	int64_t refill_ms;
};

struct k8s_events {
	struct k8s_client *c;
	struct k8s_events_opts o;
	char *controller, *instance;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* work, idle and stop */
	struct ev_item *head, *tail;
	struct strmap pending, cache, buckets;
	struct k8s_events_stats st;
	uint64_t seq;
	bool busy, stopping, running;
	int64_t drain_until; /* monotonic, when stopping */
	pthread_t thread;
};

static bool field_ok(const char *s)
{
	return s && s[0] && strlen(s) <= K8S_EVENTS_FIELD_MAX && !strpbrk(s, SEP "\n");
}

static void opts_defaults(struct k8s_events_opts *o)
{
	if (o->dedup_window_ms <= 0)
		o->dedup_window_ms = K8S_EVENTS_WINDOW_MS_DEFAULT;
	if (o->burst <= 0)
		o->burst = K8S_EVENTS_BURST_DEFAULT;
	if (o->refill_per_s <= 0)
		o->refill_per_s = K8S_EVENTS_REFILL_DEFAULT;
	if (o->queue_max == 0)
		o->queue_max = K8S_EVENTS_QUEUE_MAX;
	if (o->cache_max == 0)
		o->cache_max = K8S_EVENTS_CACHE_MAX;
	if (o->objects_max == 0)
		o->objects_max = K8S_EVENTS_OBJECTS_MAX;
}

struct k8s_events *k8s_events_new(struct k8s_client *c, const struct k8s_events_opts *o,
                                  struct err *e)
{
	struct k8s_events *ev;

	if (!o || !field_ok(o->controller) || !field_ok(o->instance)) {
		err_set(e, -EINVAL, "events: reporting controller and instance must be 1..%d bytes",
		        K8S_EVENTS_FIELD_MAX);
		return NULL;
	}
	ev = xcalloc(1, sizeof(*ev));
	ev->c = c;
	ev->o = *o;
	opts_defaults(&ev->o);
	ev->o.controller = ev->controller = xstrdup(o->controller);
	ev->o.instance = ev->instance = xstrdup(o->instance);
	pthread_mutex_init(&ev->mu, NULL);
	clock_cond_init(&ev->cv);
	strmap_init(&ev->pending);
	strmap_init(&ev->cache);
	strmap_init(&ev->buckets);
	return ev;
}

static void item_free(struct ev_item *it)
{
	if (!it)
		return;
	free(it->key);
	free(it->obj_key);
	free(it->ns);
	free(it->name);
	json_decref(it->regarding);
	free(it->reason);
	free(it->action);
	free(it->note);
	free(it);
}

static void series_free(void *p)
{
	struct ev_series *s = p;

	if (!s)
		return;
	free(s->name);
	free(s->ns);
	free(s);
}

void k8s_events_free(struct k8s_events *ev)
{
	if (!ev)
		return;
	k8s_events_stop(ev, K8S_EVENTS_DRAIN_MS);
	while (ev->head) {
		struct ev_item *it = ev->head;

		ev->head = it->next;
		item_free(it);
	}
	strmap_release(&ev->pending, NULL);
	strmap_release(&ev->cache, series_free);
	strmap_release(&ev->buckets, free);
	pthread_cond_destroy(&ev->cv);
	pthread_mutex_destroy(&ev->mu);
	free(ev->controller);
	free(ev->instance);
	free(ev);
}

/* ---- emit ------------------------------------------------------------------------------ */

static bool ref_ok(const struct k8s_events_ref *r)
{
	return r && field_ok(r->kind) && r->name && k8s_name_is_valid(r->name) &&
	       (!r->ns || k8s_namespace_is_valid(r->ns)) &&
	       (!r->uid || strlen(r->uid) <= UID_MAX) &&
	       (!r->api_version || field_ok(r->api_version));
}

/* Cuts s to at most max bytes without splitting a UTF-8 sequence. */
static void truncate_utf8(char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	s[max] = '\0';
}

static json_t *ref_json(const struct k8s_events_ref *r)
{
	json_t *j = json_pack("{s:s, s:s}", "kind", r->kind, "name", r->name);

	if (r->api_version)
		json_object_set_new(j, "apiVersion", json_string(r->api_version));
	if (r->ns)
		json_object_set_new(j, "namespace", json_string(r->ns));
	if (r->uid)
		json_object_set_new(j, "uid", json_string(r->uid));
	return j;
}

static struct ev_item *item_new(struct k8s_events *ev, const struct k8s_events_ref *r,
                                enum k8s_events_type type, const char *reason, const char *action,
                                char *note)
{
	struct ev_item *it = xcalloc(1, sizeof(*it));

	it->obj_key = xasprintf("%s" SEP "%s" SEP "%s" SEP "%s", r->kind, r->ns ? r->ns : "",
	                        r->name, r->uid ? r->uid : "");
	it->key = xasprintf("%s" SEP "%s" SEP "%s" SEP "%s" SEP "%s", it->obj_key, type_names[type],
	                    reason, action, note);
	it->ns = xstrdup(r->ns ? r->ns : "default");
	it->name = xstrndup(r->name, NAME_ROOM);
	it->regarding = ref_json(r);
	it->type = type;
	it->reason = xstrdup(reason);
	it->action = xstrdup(action);
	it->note = note;
	it->count = 1;
	it->first_wall = it->last_wall = clock_now_wall(ev->o.clock);
	it->last_mono = clock_now_mono(ev->o.clock);
	return it;
}

/* Forgets full buckets (they are as good as new) when there are too many. Lock held. */
static void buckets_trim(struct k8s_events *ev, int64_t now)
{
	struct strmap_entry *en;
	size_t it = 0;
	char *victim = NULL;

	while ((en = strmap_next(&ev->buckets, &it)) && !victim) {
		struct ev_bucket *b = en->value;
		double t = b->tokens + (double)(now - b->refill_ms) * ev->o.refill_per_s / 1000.0;

		if (t >= ev->o.burst || strmap_len(&ev->buckets) > ev->o.objects_max)
			victim = xstrdup(en->key);
	}
	if (victim) {
		void *v = NULL;

		strmap_remove(&ev->buckets, victim, &v);
		free(v);
		free(victim);
	}
}

/* Takes a token from obj_key's bucket; false when it is empty. Lock held. */
static bool bucket_take(struct k8s_events *ev, const char *obj_key, int64_t now)
{
	struct strmap_entry *en;
	struct ev_bucket *b;
	bool created;

	if (strmap_len(&ev->buckets) >= ev->o.objects_max &&
	    !strmap_contains(&ev->buckets, obj_key))
		buckets_trim(ev, now);
	en = strmap_upsert(&ev->buckets, obj_key, &created);
	if (created) {
		b = xcalloc(1, sizeof(*b));
		b->tokens = ev->o.burst;
		b->refill_ms = now;
		en->value = b;
	}
	b = en->value;
	b->tokens += (double)(now - b->refill_ms) * ev->o.refill_per_s / 1000.0;
	if (b->tokens > ev->o.burst)
		b->tokens = ev->o.burst;
	b->refill_ms = now;
	if (b->tokens < 1.0)
		return false;
	b->tokens -= 1.0;
	return true;
}

/* Coalesces into a queued twin, or queues it; takes it. Lock held. */
static int enqueue(struct k8s_events *ev, struct ev_item *it)
{
	struct ev_item *twin = strmap_get(&ev->pending, it->key);

	if (twin) {
		twin->count++;
		twin->last_wall = it->last_wall;
		twin->last_mono = it->last_mono;
		ev->st.coalesced++;
		ev->st.emitted++;
		item_free(it);
		return 0;
	}
	if (!bucket_take(ev, it->obj_key, it->last_mono)) {
		ev->st.dropped_rate++;
		item_free(it);
		return -EAGAIN;
	}
	if (ev->st.queued >= ev->o.queue_max) {
		ev->st.dropped_queue++;
		item_free(it);
		return -ENOBUFS;
	}
	strmap_set(&ev->pending, it->key, it);
	if (ev->tail)
		ev->tail->next = it;
	else
		ev->head = it;
	ev->tail = it;
	ev->st.queued++;
	ev->st.emitted++;
	pthread_cond_broadcast(&ev->cv);
	return 0;
}

int k8s_events_emit(struct k8s_events *ev, const struct k8s_events_ref *regarding,
                    enum k8s_events_type type, const char *reason, const char *action,
                    const char *note_fmt, ...)
{
	struct buf note = BUF_INIT(BUF_NO_LIMIT);
	struct ev_item *it;
	va_list ap;
	int rc;

	if (!ref_ok(regarding) || !field_ok(reason) || !field_ok(action) ||
	    (unsigned)type > K8S_EVENTS_WARNING || !note_fmt)
		return -EINVAL;
	va_start(ap, note_fmt);
	buf_vprintf(&note, note_fmt, ap);
	va_end(ap);
	it = item_new(ev, regarding, type, reason, action, buf_detach(&note, NULL));
	truncate_utf8(it->note, K8S_EVENTS_NOTE_MAX);
	pthread_mutex_lock(&ev->mu);
	rc = ev->stopping ? -ECANCELED : enqueue(ev, it);
	if (rc == -ECANCELED)
		item_free(it);
	pthread_mutex_unlock(&ev->mu);
	return rc;
}

/* ---- requests ---------------------------------------------------------------------------- */

static json_t *series_json(uint64_t count, int64_t last_wall)
{
	char ts[RFC3339_MAX];

	rfc3339_format(last_wall, RFC3339_MICROS, ts);
	return json_pack("{s:I, s:s}", "count", (json_int_t)count, "lastObservedTime", ts);
}

static json_t *event_object(struct k8s_events *ev, const struct ev_item *it, uint64_t seq)
{
	char ts[RFC3339_MAX], name[K8S_NAME_MAX + 1];
	json_t *note = json_string(it->note);
	uint64_t suffix = (uint64_t)it->first_wall * 1000000u + seq % 1000000u; /* unique */
	json_t *obj;

	rfc3339_format(it->first_wall, RFC3339_MICROS, ts);
	snprintf(name, sizeof(name), "%s.%016" PRIx64, it->name, suffix);
	obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:O}", "apiVersion",
	                "events.k8s.io/v1", "kind", "Event", "metadata", "name", name, "namespace",
	                it->ns, "eventTime", ts, "reportingController", ev->controller,
	                "reportingInstance", ev->instance, "action", it->action, "reason",
	                it->reason, "type", type_names[it->type], "regarding", it->regarding);
	json_object_set_new(obj, "note", note ? note : json_string("(note is not valid UTF-8)"));
	if (it->count > 1)
		json_object_set_new(obj, "series", series_json(it->count, it->last_wall));
	return obj;
}

static int create_event(struct k8s_events *ev, const struct ev_item *it, uint64_t seq,
                        char **name_out, struct err *e)
{
	json_t *obj = event_object(ev, it, seq);
	int rc = k8s_create(ev->c, &k8s_res_events, it->ns, obj, NULL, NULL, e);

	if (!rc)
		*name_out = xstrdup(json_string_value(
		        json_object_get(json_object_get(obj, "metadata"), "name")));
	json_decref(obj);
	return rc;
}

static int patch_series(struct k8s_events *ev, const char *ns, const char *name, uint64_t count,
                        int64_t last_wall, struct err *e)
{
	json_t *patch = json_pack("{s:o}", "series", series_json(count, last_wall));
	int rc = k8s_patch(ev->c, &k8s_res_events, ns, name, NULL, K8S_PATCH_MERGE, patch, NULL,
	                   NULL, e);

	json_decref(patch);
	return rc;
}

/* ---- the series cache ----------------------------------------------------------------- */

/* Makes room for one series: the least recently observed one goes. Lock held. */
static void cache_trim(struct k8s_events *ev)
{
	struct strmap_entry *en;
	char *victim = NULL;
	int64_t oldest = INT64_MAX;
	size_t it = 0;
	void *v = NULL;

	while ((en = strmap_next(&ev->cache, &it))) {
		struct ev_series *s = en->value;

		if (s->last_mono < oldest) {
			oldest = s->last_mono;
			free(victim);
			victim = xstrdup(en->key);
		}
	}
	if (victim && strmap_remove(&ev->cache, victim, &v))
		series_free(v);
	free(victim);
}

/* Records the series posted for it. Lock held. name: taken (NULL keeps the old one). */
static void cache_put(struct k8s_events *ev, const struct ev_item *it, char *name, uint64_t count)
{
	struct strmap_entry *en;
	struct ev_series *s;
	bool created;

	if (strmap_len(&ev->cache) >= ev->o.cache_max && !strmap_contains(&ev->cache, it->key))
		cache_trim(ev);
	en = strmap_upsert(&ev->cache, it->key, &created);
	if (created)
		en->value = xcalloc(1, sizeof(struct ev_series));
	s = en->value;
	if (name) {
		free(s->name);
		free(s->ns);
		s->name = name;
		s->ns = xstrdup(it->ns);
	}
	s->count = count;
	s->last_mono = it->last_mono;
}

/* The live series for it (copied out), if one was posted within the window. Lock held. */
static bool cache_get(struct k8s_events *ev, const struct ev_item *it, char **name, uint64_t *count)
{
	struct ev_series *s = strmap_get(&ev->cache, it->key);

	if (!s || !s->name || it->last_mono - s->last_mono >= ev->o.dedup_window_ms)
		return false;
	*name = xstrdup(s->name);
	*count = s->count;
	return true;
}

/* ---- the worker ----------------------------------------------------------------------- */

/* Sends one popped item: PATCH the live series, or create a new Event. */
static void send_item(struct k8s_events *ev, struct ev_item *it, uint64_t seq)
{
	char *name = NULL, *created = NULL;
	uint64_t count = 0;
	struct err e;
	bool live;
	int rc = -ENOENT;

	err_clear(&e);
	pthread_mutex_lock(&ev->mu);
	live = cache_get(ev, it, &name, &count);
	pthread_mutex_unlock(&ev->mu);
	if (live)
		rc = patch_series(ev, it->ns, name, count + it->count, it->last_wall, &e);
	if (rc == -ENOENT) {
		err_clear(&e);
		live = false;
		rc = create_event(ev, it, seq, &created, &e);
	}
	pthread_mutex_lock(&ev->mu);
	if (!rc) {
		cache_put(ev, it, created, live ? count + it->count : it->count);
		created = NULL;
	}
	ev->st.patched += !rc && live;
	ev->st.created += !rc && !live;
	ev->st.failed += rc != 0;
	pthread_mutex_unlock(&ev->mu);
	if (rc)
		log_warn(LOG_COMP, "event not recorded", "reason", it->reason, "ns", it->ns,
		         "error", e.msg, (char *)NULL);
	free(name);
	free(created);
}

/* Pops the oldest item (NULL when none) and marks the recorder busy. Lock held. */
static struct ev_item *pop(struct k8s_events *ev, uint64_t *seq)
{
	struct ev_item *it = ev->head;

	if (!it)
		return NULL;
	ev->head = it->next;
	if (!ev->head)
		ev->tail = NULL;
	it->next = NULL;
	strmap_remove(&ev->pending, it->key, NULL);
	ev->st.queued--;
	ev->busy = true;
	*seq = ++ev->seq;
	return it;
}

static void done(struct k8s_events *ev, struct ev_item *it)
{
	item_free(it);
	pthread_mutex_lock(&ev->mu);
	ev->busy = false;
	pthread_cond_broadcast(&ev->cv);
	pthread_mutex_unlock(&ev->mu);
}

int k8s_events_process(struct k8s_events *ev)
{
	struct ev_item *it;
	uint64_t seq = 0;

	pthread_mutex_lock(&ev->mu);
	it = pop(ev, &seq);
	pthread_mutex_unlock(&ev->mu);
	if (!it)
		return -ENOENT;
	send_item(ev, it, seq);
	done(ev, it);
	return 0;
}

/* Stopping: the worker ends when the queue is empty or the drain time is over. */
static bool worker_should_exit(struct k8s_events *ev)
{
	return ev->stopping && (!ev->head || clock_mono_ms() >= ev->drain_until);
}

static void *worker_main(void *arg)
{
	struct k8s_events *ev = arg;

	pthread_mutex_lock(&ev->mu);
	while (!worker_should_exit(ev)) {
		struct ev_item *it;
		uint64_t seq = 0;

		if (!ev->head) {
			pthread_cond_wait(&ev->cv, &ev->mu);
			continue;
		}
		it = pop(ev, &seq);
		pthread_mutex_unlock(&ev->mu);
		send_item(ev, it, seq);
		done(ev, it);
		pthread_mutex_lock(&ev->mu);
	}
	pthread_mutex_unlock(&ev->mu);
	return NULL;
}

int k8s_events_start(struct k8s_events *ev, struct err *e)
{
	int rc;

	if (ev->running)
		return err_set(e, -EALREADY, "events: already running");
	rc = pthread_create(&ev->thread, NULL, worker_main, ev);
	if (rc)
		return err_set(e, -rc, "events: pthread_create failed");
	ev->running = true;
	return 0;
}

/* Drops what is still queued, counting it. Lock held. */
static void drop_queue(struct k8s_events *ev)
{
	while (ev->head) {
		struct ev_item *it = ev->head;

		ev->head = it->next;
		strmap_remove(&ev->pending, it->key, NULL);
		ev->st.dropped_queue += it->count;
		ev->st.queued--;
		item_free(it);
	}
	ev->tail = NULL;
}

void k8s_events_stop(struct k8s_events *ev, int64_t drain_ms)
{
	if (!ev)
		return;
	pthread_mutex_lock(&ev->mu);
	if (!ev->stopping) {
		ev->stopping = true;
		ev->drain_until = clock_mono_ms() + (drain_ms > 0 ? drain_ms : 0);
	}
	pthread_cond_broadcast(&ev->cv);
	pthread_mutex_unlock(&ev->mu);
	if (ev->running) {
		pthread_join(ev->thread, NULL);
		ev->running = false;
	}
	pthread_mutex_lock(&ev->mu);
	drop_queue(ev);
	pthread_mutex_unlock(&ev->mu);
}

int k8s_events_flush(struct k8s_events *ev, int64_t timeout_ms)
{
	int64_t until = clock_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int rc = 0;

	pthread_mutex_lock(&ev->mu);
	while ((ev->head || ev->busy) && rc == 0)
		rc = clock_cond_wait_until(&ev->cv, &ev->mu, until);
	rc = ev->head || ev->busy ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&ev->mu);
	return rc;
}

void k8s_events_stats(struct k8s_events *ev, struct k8s_events_stats *out)
{
	pthread_mutex_lock(&ev->mu);
	*out = ev->st;
	pthread_mutex_unlock(&ev->mu);
}

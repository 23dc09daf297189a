/*
 * Unit tests for lib/k8s/informer: the store (keys, trimming, apply, replace, handlers)
 * fed by hand, and the list/watch loop against a scripted fake API server (k8s_fake.h).
 *
 * The loop tests give the fake server a script, one step per request: a LIST answer or
 * a WATCH stream (chunks, then a normal close, or a hang until the server stops). The
 * server records every request as "LIST" or "WATCH rv=N", and the handlers record
 * every change as "ADD|UPDATE|DELETE key rv"; each test compares both transcripts with
 * the expected ones, so re-watch positions, relists and handler order are all checked.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "k8s_fake.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/informer.h"
#include "unit.h"

#define OBJ(name, rv)                                                                              \
	"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"" name "\",\"resourceVersion\":\"" rv "\"" \
	"}}"
#define EV(type, name, rv) "{\"type\":\"" type "\",\"object\":" OBJ(name, rv) "}\n"
#define BOOKMARK(rv)                                                                               \
	"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"" rv "\"}}}\n"
#define LIST(rv, items)                                                                            \
	"{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"" rv                      \
	"\"},\"items\":[" items "]}"
#define GONE                                                                                       \
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"," \
	"\"message\":\"too old resource version: 1 (5)\"}}\n"

/* ---- handler transcript ------------------------------------------------------------- */

struct rec {
	pthread_mutex_t mu;
	struct buf log;
};

static const char *rv_of(json_t *obj)
{
	return json_string_value(jsonx_get(obj, "metadata.resourceVersion"));
}

static void rec_obj(struct buf *b, const char *op, json_t *obj)
{
	char key[K8S_INFORMER_KEY_MAX + 1] = "?";
	const char *rv = rv_of(obj);

	k8s_informer_key(obj, key, sizeof(key), NULL);
	buf_printf(b, "%s %s %s\n", op, key, rv ? rv : "-");
}

static void on_add(void *ctx, json_t *obj)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->mu);
	rec_obj(&r->log, "ADD", obj);
	pthread_mutex_unlock(&r->mu);
}

static void on_update(void *ctx, json_t *old_obj, json_t *new_obj)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->mu);
	rec_obj(&r->log, "UPDATE-FROM", old_obj);
	rec_obj(&r->log, "UPDATE", new_obj);
	pthread_mutex_unlock(&r->mu);
}

static void on_delete(void *ctx, json_t *old_obj)
{
	struct rec *r = ctx;

	pthread_mutex_lock(&r->mu);
	rec_obj(&r->log, "DELETE", old_obj);
	pthread_mutex_unlock(&r->mu);
}

/* Keeps metadata only: a caller that reads nothing else. */
static void trim_spec(void *ctx, json_t *obj)
{
	(void)ctx;
	json_object_del(obj, "data");
}

static void rec_init(struct rec *r)
{
	pthread_mutex_init(&r->mu, NULL);
	buf_init(&r->log, BUF_NO_LIMIT);
}

static void rec_release(struct rec *r)
{
	buf_release(&r->log);
	pthread_mutex_destroy(&r->mu);
}

static struct k8s_informer *store_new(struct rec *r, size_t max)
{
	struct k8s_informer_opts o = {
		.res = &k8s_res_configmaps,
		.max_objects = max,
		.trim = trim_spec,
		.on_add = on_add,
		.on_update = on_update,
		.on_delete = on_delete,
		.ctx = r,
	};
	struct k8s_informer *inf = k8s_informer_new(NULL, &o, NULL);

	ck_assert_ptr_nonnull(inf);
	return inf;
}

static json_t *parse(const char *s)
{
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);

	ck_assert_msg(j != NULL, "bad test JSON: %s: %s", je.text, s);
	return j;
}

/* ---- keys and trim ---------------------------------------------------------------------- */

static const struct {
	const char *obj;
	int rc;
	const char *key;
} key_cases[] = {
	{ OBJ("a", "1"), 0, "ns/a" },
	{ "{\"metadata\":{\"name\":\"node-1\"}}", 0, "node-1" },
	{ "{\"metadata\":{\"name\":\"x\",\"namespace\":\"\"}}", 0, "x" },
	{ "{\"metadata\":{\"namespace\":\"ns\"}}", -EPROTO, NULL },
	{ "{\"metadata\":{\"name\":\"\"}}", -EPROTO, NULL },
	{ "{\"metadata\":{\"name\":7}}", -EPROTO, NULL },
	{ "{\"kind\":\"Pod\"}", -EPROTO, NULL },
	{ "[]", -EPROTO, NULL },
};

START_TEST(test_key)
{
	json_t *obj = parse(key_cases[_i].obj);
	char key[K8S_INFORMER_KEY_MAX + 1];
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(k8s_informer_key(obj, key, sizeof(key), &e), key_cases[_i].rc);
	if (key_cases[_i].key)
		ck_assert_str_eq(key, key_cases[_i].key);
	else
		ck_assert_str_eq(e.msg, "informer: object without metadata.name");
	json_decref(obj);
}
END_TEST

START_TEST(test_key_too_long)
{
	char name[400], key[K8S_INFORMER_KEY_MAX + 1], small[4];
	json_t *obj;

	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	obj = json_pack("{s:{s:s}}", "metadata", "name", name);
	ck_assert_int_eq(k8s_informer_key(obj, key, sizeof(key), NULL), -EMSGSIZE);
	json_decref(obj);
	obj = parse(OBJ("abc", "1"));
	ck_assert_int_eq(k8s_informer_key(obj, small, sizeof(small), NULL), -EMSGSIZE);
	json_decref(obj);
}
END_TEST

START_TEST(test_trim_standard)
{
	json_t *obj = parse("{\"metadata\":{\"name\":\"a\",\"managedFields\":[{\"manager\":\"k\"}],"
	                    "\"annotations\":{\"kubectl.kubernetes.io/last-applied-configuration\":"
	                    "\"{}\",\"keep\":\"me\"}},\"data\":{\"k\":\"v\"}}");
	char *s;

	k8s_informer_trim_standard(obj);
	s = jsonx_dumps_compact(obj);
	ck_assert_str_eq(s,
	                 "{\"data\":{\"k\":\"v\"},\"metadata\":{\"annotations\":{\"keep\":\"me\"},"
	                 "\"name\":\"a\"}}");
	free(s);
	k8s_informer_trim_standard(NULL); /* no crash on nothing */
	json_decref(obj);
}
END_TEST

/* ---- apply by hand ------------------------------------------------------------------- */

START_TEST(test_apply_sequence)
{
	struct rec r;
	struct k8s_informer *inf;
	struct k8s_informer_stats st;
	json_t *obj, *got;

	rec_init(&r);
	inf = store_new(&r, 0);
	ck_assert(!k8s_informer_has_synced(inf));
	obj = parse("{\"metadata\":{\"namespace\":\"ns\",\"name\":\"a\",\"resourceVersion\":\"1\","
	            "\"managedFields\":[]},\"data\":{\"k\":\"v\"}}");
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_ADDED, obj, NULL), 0);
	/* the caller's object is untouched; the stored one is trimmed */
	ck_assert_ptr_nonnull(json_object_get(obj, "data"));
	got = k8s_informer_get(inf, "ns", "a");
	ck_assert_ptr_nonnull(got);
	ck_assert_ptr_null(json_object_get(got, "data"));
	ck_assert_ptr_null(json_object_get(json_object_get(got, "metadata"), "managedFields"));
	json_decref(got);
	json_decref(obj);

	obj = parse(OBJ("a", "1")); /* same resourceVersion: nothing happens */
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_MODIFIED, obj, NULL), 0);
	json_decref(obj);
	obj = parse(OBJ("a", "2"));
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_MODIFIED, obj, NULL), 0);
	json_decref(obj);
	obj = parse(OBJ("b", "3")); /* MODIFIED for an unknown key is an add */
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_MODIFIED, obj, NULL), 0);
	json_decref(obj);
	obj = parse(OBJ("a", "4"));
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_DELETED, obj, NULL), 0);
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_DELETED, obj, NULL), 0); /* again */
	json_decref(obj);
	obj = parse(BOOKMARK("9"));
	ck_assert_int_eq(
	        k8s_informer_apply(inf, K8S_EVENT_BOOKMARK, json_object_get(obj, "object"), NULL),
	        0);
	json_decref(obj);

	ck_assert_str_eq(buf_cstr(&r.log), "ADD ns/a 1\nUPDATE-FROM ns/a 1\nUPDATE ns/a 2\n"
	                                   "ADD ns/b 3\nDELETE ns/a 4\n");
	k8s_informer_stats(inf, &st);
	ck_assert_str_eq(st.rv, "9");
	ck_assert_uint_eq(st.bookmarks, 1);
	ck_assert_uint_eq(st.objects, 1);
	ck_assert_uint_eq(k8s_informer_len(inf), 1);
	ck_assert_ptr_null(k8s_informer_get(inf, "ns", "a"));
	ck_assert_ptr_null(k8s_informer_get(inf, "ns", NULL));
	k8s_informer_free(inf);
	rec_release(&r);
}
END_TEST

static const struct {
	const char *obj;
	enum k8s_event_type type;
	int rc;
} apply_errors[] = {
	{ OBJ("a", "1"), K8S_EVENT_ERROR, -EINVAL },
	{ OBJ("a", "1"), (enum k8s_event_type)42, -EINVAL },
	{ "{\"metadata\":{}}", K8S_EVENT_ADDED, -EPROTO },
	{ "{\"metadata\":{}}", K8S_EVENT_DELETED, -EPROTO },
	{ "[1]", K8S_EVENT_ADDED, -EINVAL },
	{ OBJ("c", "1"), K8S_EVENT_ADDED, -ENOSPC }, /* the store holds 2 */
};

START_TEST(test_apply_errors)
{
	struct rec r;
	struct k8s_informer *inf;
	json_t *a = parse(OBJ("a", "1")), *b = parse(OBJ("b", "1")), *obj;
	struct err e;

	rec_init(&r);
	inf = store_new(&r, 2);
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_ADDED, a, NULL), 0);
	ck_assert_int_eq(k8s_informer_apply(inf, K8S_EVENT_ADDED, b, NULL), 0);
	obj = parse(apply_errors[_i].obj);
	err_clear(&e);
	ck_assert_int_eq(k8s_informer_apply(inf, apply_errors[_i].type, obj, &e),
	                 apply_errors[_i].rc);
	ck_assert_int_eq(e.code, apply_errors[_i].rc);
	ck_assert_uint_eq(k8s_informer_len(inf), 2);
	json_decref(obj);
	json_decref(a);
	json_decref(b);
	k8s_informer_free(inf);
	rec_release(&r);
}
END_TEST

START_TEST(test_replace_diff)
{
	struct rec r;
	struct k8s_informer *inf;
	json_t *first = parse("[" OBJ("a", "1") "," OBJ("b", "1") "," OBJ("c", "1") "]");
	json_t *second = parse("[" OBJ("a", "1") "," OBJ("b", "5") "," OBJ("d", "5") "]");
	json_t *all, *a1, *a2;

	rec_init(&r);
	inf = store_new(&r, 0);
	ck_assert_int_eq(k8s_informer_replace(inf, first, "3", NULL), 0);
	ck_assert(k8s_informer_has_synced(inf));
	ck_assert_int_eq(k8s_informer_wait_synced(inf, 0), 0);
	a1 = k8s_informer_get(inf, "ns", "a");
	buf_clear(&r.log);
	ck_assert_int_eq(k8s_informer_replace(inf, second, "6", NULL), 0);
	a2 = k8s_informer_get(inf, "ns", "a");
	ck_assert_ptr_eq(a1, a2); /* unchanged objects are kept, not replaced */
	/* order among keys is the map's; check membership line by line */
	ck_assert_ptr_nonnull(strstr(buf_cstr(&r.log), "UPDATE-FROM ns/b 1\nUPDATE ns/b 5\n"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&r.log), "ADD ns/d 5\n"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&r.log), "DELETE ns/c 1\n"));
	ck_assert_ptr_null(strstr(buf_cstr(&r.log), "ns/a"));
	all = k8s_informer_list(inf);
	ck_assert_uint_eq(json_array_size(all), 3);
	json_decref(all);
	ck_assert_int_eq(k8s_informer_replace(inf, a1, "7", NULL), -EINVAL);
	ck_assert_uint_eq(k8s_informer_len(inf), 3);
	json_decref(a1);
	json_decref(a2);
	json_decref(first);
	json_decref(second);
	k8s_informer_free(inf);
	rec_release(&r);
}
END_TEST

/* ---- the index ---------------------------------------------------------------------------- */

/* ns/name at resourceVersion rv, labelled owner=<owner> (none when owner is NULL). */
static json_t *owned(const char *ns, const char *name, const char *rv, const char *owner)
{
	json_t *o = json_pack("{s:{s:s,s:s,s:s}}", "metadata", "namespace", ns, "name", name,
	                      "resourceVersion", rv);

	if (owner)
		json_object_set_new(json_object_get(o, "metadata"), "labels",
		                    json_pack("{s:s}", "owner", owner));
	return o;
}

/* The sorted names of ns's objects owned by owner, space-separated. */
static const char *indexed(struct k8s_informer *inf, const char *ns, const char *owner)
{
	static char out[256];
	json_t *arr = k8s_informer_list_indexed(inf, ns, owner), *o;
	const char *names[16];
	size_t i, n = json_array_size(arr);

	ck_assert_uint_le(n, 16);
	json_array_foreach (arr, i, o)
		names[i] =
		        json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
	for (size_t a = 1; a < n; a++) /* insertion sort: a handful of names */
		for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
			const char *t = names[b];

			names[b] = names[b - 1];
			names[b - 1] = t;
		}
	out[0] = 0;
	for (i = 0; i < n; i++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? " " : "",
		         names[i]);
	json_decref(arr);
	return out;
}

static void put(struct k8s_informer *inf, enum k8s_event_type type, json_t *obj)
{
	ck_assert_int_eq(k8s_informer_apply(inf, type, obj, NULL), 0);
	json_decref(obj);
}

START_TEST(test_index)
{
	struct k8s_informer_opts o = { .res = &k8s_res_configmaps, .index_label = "owner" };
	struct k8s_informer *inf = k8s_informer_new(NULL, &o, NULL), *plain;
	json_t *items;

	put(inf, K8S_EVENT_ADDED, owned("a", "x-1", "1", "x"));
	put(inf, K8S_EVENT_ADDED, owned("a", "x-2", "2", "x"));
	put(inf, K8S_EVENT_ADDED, owned("a", "y-1", "3", "y"));
	put(inf, K8S_EVENT_ADDED, owned("b", "x-1", "4", "x")); /* same owner name, other ns */
	put(inf, K8S_EVENT_ADDED, owned("a", "stray", "5", NULL));
	ck_assert_str_eq(indexed(inf, "a", "x"), "x-1 x-2");
	ck_assert_str_eq(indexed(inf, "b", "x"), "x-1");
	ck_assert_str_eq(indexed(inf, "a", "y"), "y-1");
	ck_assert_str_eq(indexed(inf, "a", "z"), "");
	ck_assert_str_eq(indexed(inf, "a", NULL), "");
	/* a relabel moves the object; a delete removes it */
	put(inf, K8S_EVENT_MODIFIED, owned("a", "x-2", "6", "y"));
	ck_assert_str_eq(indexed(inf, "a", "x"), "x-1");
	ck_assert_str_eq(indexed(inf, "a", "y"), "x-2 y-1");
	put(inf, K8S_EVENT_MODIFIED, owned("a", "y-1", "7", NULL));
	ck_assert_str_eq(indexed(inf, "a", "y"), "x-2");
	put(inf, K8S_EVENT_DELETED, owned("a", "x-1", "8", "x"));
	ck_assert_str_eq(indexed(inf, "a", "x"), "");
	/* a relist rebuilds it from the new items */
	items = json_pack("[o,o]", owned("a", "x-9", "9", "x"), owned("b", "x-1", "4", "x"));
	ck_assert_int_eq(k8s_informer_replace(inf, items, "9", NULL), 0);
	ck_assert_str_eq(indexed(inf, "a", "x"), "x-9");
	ck_assert_str_eq(indexed(inf, "a", "y"), "");
	ck_assert_str_eq(indexed(inf, "b", "x"), "x-1");
	/* an informer without index_label lists nothing by index */
	o.index_label = NULL;
	plain = k8s_informer_new(NULL, &o, NULL);
	ck_assert_int_eq(k8s_informer_replace(plain, items, "9", NULL), 0);
	ck_assert_str_eq(indexed(plain, "a", "x"), "");
	json_decref(items);
	k8s_informer_free(plain);
	k8s_informer_free(inf);
}
END_TEST

START_TEST(test_replace_errors)
{
	struct rec r;
	struct k8s_informer *inf;
	json_t *noname = parse("[" OBJ("a", "1") ",{\"metadata\":{}}]");
	json_t *three = parse("[" OBJ("a", "1") "," OBJ("b", "1") "," OBJ("c", "1") "]");

	rec_init(&r);
	inf = store_new(&r, 2);
	ck_assert_int_eq(k8s_informer_replace(inf, noname, "1", NULL), -EPROTO);
	ck_assert_int_eq(k8s_informer_replace(inf, three, "1", NULL), -ENOSPC);
	ck_assert(!k8s_informer_has_synced(inf)); /* nothing stored on failure */
	ck_assert_uint_eq(k8s_informer_len(inf), 0);
	ck_assert_int_eq(k8s_informer_wait_synced(inf, 20), -ETIMEDOUT);
	ck_assert_int_eq(k8s_informer_start(inf, NULL), -EINVAL); /* no client */
	ck_assert_str_eq(buf_cstr(&r.log), "");
	json_decref(noname);
	json_decref(three);
	k8s_informer_free(inf);
	rec_release(&r);
}
END_TEST

START_TEST(test_new_errors)
{
	struct k8s_informer_opts o = { .res = &k8s_res_pods, .ns = "Bad_NS" };
	struct err e;

	err_clear(&e);
	ck_assert_ptr_null(k8s_informer_new(NULL, NULL, &e));
	ck_assert_int_eq(e.code, -EINVAL);
	err_clear(&e);
	ck_assert_ptr_null(k8s_informer_new(NULL, &o, &e));
	ck_assert_int_eq(e.code, -EINVAL);
	k8s_informer_free(NULL);
	k8s_informer_stop(NULL);
}
END_TEST

/* ---- the loop against a scripted server ------------------------------------------------ */

struct step {
	bool watch;
	int status;            /* an error answer when not 200 */
	const char *body;      /* LIST answer */
	const char *chunks[6]; /* WATCH stream pieces */
	bool hang;             /* WATCH: keep the stream open until the server stops */
};

struct script {
	const struct step *steps;
	size_t n;
	pthread_mutex_t mu;
	size_t next;
	struct buf log; /* "LIST sel=..." / "WATCH rv=N" per request */
	struct kf_server *srv;
};

static void serve_step(struct script *sc, int fd, const struct step *st)
{
	if (st->status != 200) {
		kf_reply_status(fd, st->status, st->status == 410 ? "Expired" : "InternalError",
		                "scripted failure");
		return;
	}
	if (!st->watch) {
		kf_reply(fd, 200, st->body);
		return;
	}
	kf_stream_begin(fd);
	for (size_t i = 0; i < ARRAY_LEN(st->chunks) && st->chunks[i]; i++)
		kf_stream_chunk(fd, st->chunks[i]);
	if (st->hang)
		kf_sleep(sc->srv, 60000);
	kf_stream_end(fd);
}

static void script_handle(void *ctx, int fd, const struct kf_req *r)
{
	struct script *sc = ctx;
	char rv[64], watch[8], sel[128];
	const struct step *st = NULL;

	kf_query(r->target, "watch", watch, sizeof(watch));
	kf_query(r->target, "resourceVersion", rv, sizeof(rv));
	kf_query(r->target, "labelSelector", sel, sizeof(sel));
	pthread_mutex_lock(&sc->mu);
	if (watch[0])
		buf_printf(&sc->log, "WATCH rv=%s\n", rv);
	else
		buf_printf(&sc->log, "LIST sel=%s\n", sel);
	if (sc->next < sc->n)
		st = &sc->steps[sc->next++];
	pthread_mutex_unlock(&sc->mu);
	if (!st) {
		kf_reply_status(fd, 500, "InternalError", "unscripted");
		return;
	}
	if (st->watch != (watch[0] != 0)) {
		pthread_mutex_lock(&sc->mu);
		buf_printf(&sc->log, "MISMATCH %s\n", r->target);
		pthread_mutex_unlock(&sc->mu);
	}
	serve_step(sc, fd, st);
}

struct loop {
	struct kf_server srv;
	struct script sc;
	struct k8s_config cfg;
	struct k8s_client *client;
	struct rec r;
	struct k8s_informer *inf;
	char server[64];
};

static void loop_start(struct loop *l, const struct step *steps, size_t n, const char *start_rv,
                       int64_t backoff_ms)
{
	struct k8s_client_opts co = { .retries = -1, .timeout_ms = 5000 };
	struct k8s_informer_opts o = {
		.res = &k8s_res_configmaps,
		.ns = "ns",
		.label_selector = "app=x",
		.backoff_base_ms = backoff_ms,
		.backoff_cap_ms = backoff_ms,
		.start_rv = start_rv,
		.on_add = on_add,
		.on_update = on_update,
		.on_delete = on_delete,
		.ctx = &l->r,
	};

	memset(l, 0, sizeof(*l));
	l->sc.steps = steps;
	l->sc.n = n;
	l->sc.srv = &l->srv;
	pthread_mutex_init(&l->sc.mu, NULL);
	buf_init(&l->sc.log, BUF_NO_LIMIT);
	rec_init(&l->r);
	ck_assert_int_eq(kf_start(&l->srv, script_handle, &l->sc), 0);
	snprintf(l->server, sizeof(l->server), "http://127.0.0.1:%d", l->srv.port);
	l->cfg.server = l->server;
	l->client = k8s_client_new(&l->cfg, &co, NULL);
	ck_assert_ptr_nonnull(l->client);
	l->inf = k8s_informer_new(l->client, &o, NULL);
	ck_assert_ptr_nonnull(l->inf);
}

/* Waits (bounded) until the server has served n requests. */
static void loop_wait_requests(struct loop *l, int n)
{
	for (int i = 0; i < 1000 && atomic_load(&l->srv.requests) < n; i++)
		kf_msleep(5);
	ck_assert_int_ge(atomic_load(&l->srv.requests), n);
}

/* Stops (checking that it is prompt, even with a watch open) and compares requests. */
static void loop_stop(struct loop *l, const char *want_requests)
{
	int64_t t0 = clock_mono_ms();

	k8s_informer_stop(l->inf);
	ck_assert_int_lt(clock_mono_ms() - t0, 2500);
	kf_stop(&l->srv);
	ck_assert_str_eq(buf_cstr(&l->sc.log), want_requests);
}

static void loop_free(struct loop *l)
{
	k8s_informer_free(l->inf);
	k8s_client_free(l->client);
	buf_release(&l->sc.log);
	pthread_mutex_destroy(&l->sc.mu);
	rec_release(&l->r);
}

static void loop_finish(struct loop *l, const char *want_requests, const char *want_changes)
{
	loop_stop(l, want_requests);
	ck_assert_str_eq(buf_cstr(&l->r.log), want_changes);
	loop_free(l);
}

/* Each line of want appears in log, and log has no other lines (order free). */
static void assert_lines(const char *log, const char *const *want, size_t n)
{
	size_t lines = 0;

	for (const char *p = log; *p; p++)
		lines += *p == '\n';
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strstr(log, want[i]) != NULL, "'%s' missing from:\n%s", want[i], log);
	ck_assert_uint_eq(lines, n);
}

/* List, watch, normal close, re-watch from the bookmark, 410, relist, watch again. */
static const struct step steps_main[] = {
	{ false, 200, LIST("10", OBJ("a", "5") "," OBJ("b", "6")) },
	{ true, 200, NULL, { EV("MODIFIED", "a", "11"), BOOKMARK("12") } },
	{ true, 200, NULL, { EV("ADDED", "c", "13"), GONE } },
	{ false, 200, LIST("20", OBJ("a", "11") "," OBJ("c", "14")) },
	{ true, 200, NULL, { EV("DELETED", "c", "21") }, true },
};

static const char *const changes_main[] = {
	"ADD ns/a 5\n",          "ADD ns/b 6\n",     "UPDATE-FROM ns/a 5\n",
	"UPDATE ns/a 11\n",      "ADD ns/c 13\n",    "DELETE ns/b 6\n",
	"UPDATE-FROM ns/c 13\n", "UPDATE ns/c 14\n", "DELETE ns/c 21\n",
};

START_TEST(test_loop_list_watch_relist)
{
	struct loop l;
	struct k8s_informer_stats st;
	json_t *a;

	loop_start(&l, steps_main, ARRAY_LEN(steps_main), NULL, 20);
	ck_assert_int_eq(k8s_informer_start(l.inf, NULL), 0);
	ck_assert_int_eq(k8s_informer_start(l.inf, NULL), -EALREADY);
	ck_assert_int_eq(k8s_informer_wait_synced(l.inf, 5000), 0);
	loop_wait_requests(&l, 5);
	for (int i = 0; i < 500 && k8s_informer_len(l.inf) != 1; i++)
		kf_msleep(5);
	a = k8s_informer_get(l.inf, "ns", "a");
	ck_assert_str_eq(rv_of(a), "11");
	json_decref(a);
	k8s_informer_stats(l.inf, &st);
	ck_assert_uint_eq(st.lists, 2);
	ck_assert_uint_eq(st.relists, 1);
	ck_assert_uint_eq(st.stale, 1);
	ck_assert_uint_eq(st.bookmarks, 1);
	ck_assert_str_eq(st.rv, "21");
	loop_stop(&l,
	          "LIST sel=app%3Dx\nWATCH rv=10\nWATCH rv=12\nLIST sel=app%3Dx\nWATCH rv=20\n");
	assert_lines(buf_cstr(&l.r.log), changes_main, ARRAY_LEN(changes_main));
	/* order: the watch events after the first list, the relist's after them */
	ck_assert_ptr_nonnull(strstr(buf_cstr(&l.r.log), "UPDATE-FROM ns/a 5\nUPDATE ns/a 11\n"
	                                                 "ADD ns/c 13\n"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&l.r.log), "DELETE ns/c 21\n"));
	ck_assert(strstr(buf_cstr(&l.r.log), "DELETE ns/c 21\n") >
	          strstr(buf_cstr(&l.r.log), "DELETE ns/b 6\n"));
	loop_free(&l);
}
END_TEST

/* A transport or server error re-watches from the same resourceVersion (no LIST). */
static const struct step steps_error[] = {
	{ false, 200, LIST("10", OBJ("a", "5")) },          { true, 500 },
	{ true, 200, NULL, { EV("MODIFIED", "a", "11") } }, { true, 500 },
	{ true, 200, NULL, { BOOKMARK("15") }, true },
};

START_TEST(test_loop_error_rewatch)
{
	struct loop l;
	struct k8s_informer_stats st;

	loop_start(&l, steps_error, ARRAY_LEN(steps_error), NULL, 20);
	ck_assert_int_eq(k8s_informer_start(l.inf, NULL), 0);
	loop_wait_requests(&l, 5);
	k8s_informer_stats(l.inf, &st);
	ck_assert_uint_eq(st.errors, 2);
	ck_assert_int_eq(st.last_error, -EIO);
	loop_finish(&l, "LIST sel=app%3Dx\nWATCH rv=10\nWATCH rv=10\nWATCH rv=11\nWATCH rv=11\n",
	            "ADD ns/a 5\nUPDATE-FROM ns/a 5\nUPDATE ns/a 11\n");
}
END_TEST

/* A malformed line means a lost event: relist. A failed list is retried. */
static const struct step steps_proto[] = {
	{ false, 500 },
	{ false, 200, LIST("10", OBJ("a", "5")) },
	{ true, 200, NULL, { "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":\n" } },
	{ false, 200, LIST("30", OBJ("a", "29")) },
	{ true, 200, NULL, { NULL }, true },
};

START_TEST(test_loop_malformed_relists)
{
	struct loop l;

	loop_start(&l, steps_proto, ARRAY_LEN(steps_proto), NULL, 20);
	ck_assert_int_eq(k8s_informer_start(l.inf, NULL), 0);
	loop_wait_requests(&l, 5);
	loop_finish(&l,
	            "LIST sel=app%3Dx\nLIST sel=app%3Dx\nWATCH rv=10\nLIST sel=app%3Dx\n"
	            "WATCH rv=30\n",
	            "ADD ns/a 5\nUPDATE-FROM ns/a 5\nUPDATE ns/a 29\n");
}
END_TEST

/* Resuming from a stored resourceVersion: watch first; 410 relists and converges. */
static const struct step steps_resume[] = {
	{ true, 200, NULL, { GONE } },
	{ false, 200, LIST("40", OBJ("b", "39")) },
	{ true, 200, NULL, { NULL }, true },
};

static const char *const changes_resume[] = { "DELETE ns/a 1\n", "ADD ns/b 39\n" };

START_TEST(test_loop_resume_stale)
{
	struct loop l;
	json_t *seed = parse("[" OBJ("a", "1") "]");

	loop_start(&l, steps_resume, ARRAY_LEN(steps_resume), "2", 20);
	ck_assert_int_eq(k8s_informer_replace(l.inf, seed, "2", NULL), 0);
	buf_clear(&l.r.log);
	ck_assert_int_eq(k8s_informer_start(l.inf, NULL), 0);
	loop_wait_requests(&l, 3);
	for (int i = 0; i < 500 && k8s_informer_len(l.inf) != 1; i++)
		kf_msleep(5);
	loop_stop(&l, "WATCH rv=2\nLIST sel=app%3Dx\nWATCH rv=40\n");
	assert_lines(buf_cstr(&l.r.log), changes_resume, ARRAY_LEN(changes_resume));
	loop_free(&l);
	json_decref(seed);
}
END_TEST

/* Stop interrupts a long backoff at once. */
static const struct step steps_backoff[] = {
	{ false, 500 },
};

START_TEST(test_loop_stop_during_backoff)
{
	struct loop l;

	loop_start(&l, steps_backoff, ARRAY_LEN(steps_backoff), NULL, 10000);
	ck_assert_int_eq(k8s_informer_start(l.inf, NULL), 0);
	loop_wait_requests(&l, 1);
	ck_assert(!k8s_informer_has_synced(l.inf));
	loop_finish(&l, "LIST sel=app%3Dx\n", "");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("k8s_informer");
	TCase *tc = tcase_create("store");
	TCase *tl = tcase_create("loop");

	tcase_add_loop_test(tc, test_key, 0, ARRAY_LEN(key_cases));
	tcase_add_test(tc, test_key_too_long);
	tcase_add_test(tc, test_trim_standard);
	tcase_add_test(tc, test_apply_sequence);
	tcase_add_loop_test(tc, test_apply_errors, 0, ARRAY_LEN(apply_errors));
	tcase_add_test(tc, test_replace_diff);
	tcase_add_test(tc, test_replace_errors);
	tcase_add_test(tc, test_index);
	tcase_add_test(tc, test_new_errors);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tl, 20);
	tcase_add_test(tl, test_loop_list_watch_relist);
	tcase_add_test(tl, test_loop_error_rewatch);
	tcase_add_test(tl, test_loop_malformed_relists);
	tcase_add_test(tl, test_loop_resume_stale);
	tcase_add_test(tl, test_loop_stop_during_backoff);
	suite_add_tcase(s, tl);
	return s;
}

UNIT_MAIN(make_suite)

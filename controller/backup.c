/*
 * backup: the RedisBackup reconciler (the decisions are backup_decide.c's, backup.h).
 * A worker hands it "backup:<ns>/<name>" keys; it reads the backup and its cluster from
 * the caches, the credentials Secret from the API (a user's Secret carries none of our
 * labels, so it is in no cache), the instances from the poller, decides, writes the
 * status subresource when it changed, and does at most one action: POST /v1/backup to
 * the instance written in status.instance (api_inst_backup_request: the Secret's values
 * go in the body, over the cluster's mutual TLS; the pods' Role gets no Secret).
 *
 * The poller hands every /v1/status "backup" object to ctl_backup_observe, which keeps
 * the last one per pod (ctl->bk_obs) and queues the RedisBackup it names when it changed.
 *
 * deletionPolicy Delete: a finalizer (BK_FINALIZER); on deletion the controller itself
 * deletes the stored objects (lib/objstore; it reaches the storage), the manifest FIRST:
 * without it the backup is no longer complete for a restore or for retention at once,
 * and a data object left by a crash in between is an incomplete backup, which retention
 * removes later. A Running backup is followed to its end before that (no upload may
 * finish after the delete). Retain: no finalizer (one left by a policy change is taken off).
 *
 * Backups of a cluster this controller does not reconcile (--cluster-selector) are left
 * alone: another controller may own them. Workers only; any worker thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/backup_store.h"
#include "api/instance_v1.h"
#include "api/resources.h"
#include "controller/backup.h"
#include "controller/internal.h"
#include "controller/owner.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/objstore/objstore.h"
#include "lib/rfc3339.h"

#define POST_TIMEOUT_MS 10000
#define CRED_VALUE_MAX  API_INST_BACKUP_CRED_MAX

struct ctl_backup_creds {
	char *v[API_INST_CREDENTIAL_KEYS]; /* decoded values, wiped on release; NULL: absent */
	struct api_inst_credentials k;     /* the same, as the contract's struct (borrowing v) */
};

static void creds_release(struct ctl_backup_creds *cr)
{
	if (!cr)
		return;
	for (size_t i = 0; i < API_INST_CREDENTIAL_KEYS; i++) {
		free_secret(cr->v[i]);
		cr->v[i] = NULL;
	}
}

/* --- credentials ------------------------------------------------------------------------ */

const char *ctl_backup_secret_name(json_t *cluster, const struct api_destination *d)
{
	const char *own =
	        d->s3.set ? d->s3.credentials_secret.name : d->azure.credentials_secret.name;

	return own ? own : jsonx_get_string(cluster, "spec.backupCredentialsSecret.name");
}

static char *b64_value(json_t *data, const char *key)
{
	const char *s = json_string_value(json_object_get(data, key));
	size_t n = s ? strlen(s) : 0, len;
	char *out;

	if (n == 0 || n > CRED_VALUE_MAX * 2 || base64_decode(s, n, 0, &out, &len) < 0)
		return NULL;
	return out;
}

/* 0 (out filled), -ENOENT (no such Secret), or the API's errno. */
static int creds_read(struct ctl *c, const char *ns, const char *secret,
                      struct ctl_backup_creds *out, struct err *e)
{
	json_t *sec = NULL, *data;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!secret)
		return 0;
	rc = k8s_get(c->kube, &k8s_res_secrets, ns, secret, &sec, e);
	if (rc < 0)
		return rc;
	data = json_object_get(sec, "data");
	for (size_t i = 0; i < API_INST_CREDENTIAL_KEYS; i++) {
		out->v[i] = b64_value(data, api_inst_credential_key(i));
		api_inst_credentials_set(&out->k, i, out->v[i]);
	}
	json_decref(sec);
	return 0;
}

/* --- the object store (deletion) --------------------------------------------------------- */

static struct objstore *open_store(const struct api_destination *d,
                                   const struct ctl_backup_creds *cr, struct err *e)
{
	struct objstore_config cfg = { 0 };
	struct objstore_err oe = { 0 };
	struct objstore *os;

	api_backup_store_config(d, &cr->k, &cfg);
	cfg.timeout_ms = 30000;
	os = objstore_new(&cfg, &oe);
	if (!os)
		err_set(e, oe.err.code ? oe.err.code : -EINVAL, "%s", oe.err.msg);
	return os;
}

/* The data object's key: status.location without the destination's URL prefix. */
static const char *data_key(const struct api_destination *d, const char *location)
{
	char prefix[BK_LOCATION_MAX];
	size_t n;

	if (!location || !*location)
		return NULL;
	bk_location(d, "", prefix);
	n = strlen(prefix);
	return strncmp(location, prefix, n) == 0 && location[n] ? location + n : NULL;
}

struct objstore *ctl_backup_store_open(struct ctl *c, const char *ns, json_t *cluster,
                                       const struct api_destination *d, struct err *e)
{
	struct ctl_backup_creds cr;
	struct objstore *os;

	if (creds_read(c, ns, ctl_backup_secret_name(cluster, d), &cr, e) < 0)
		return NULL;
	os = open_store(d, &cr, e);
	creds_release(&cr);
	return os;
}

int ctl_backup_delete_objects(struct ctl *c, const char *ns, json_t *cluster,
                              const struct api_redis_backup *b, struct err *e)
{
	const char *keys[2] = { b->status.manifest_key, /* first: see the top */
		                data_key(&b->spec.destination, b->status.location) };
	struct ctl_backup_creds cr;
	struct objstore_err oe = { 0 };
	struct objstore *os;
	int rc;

	if (!keys[0] && !keys[1])
		return 0;
	rc = creds_read(c, ns, ctl_backup_secret_name(cluster, &b->spec.destination), &cr, e);
	if (rc < 0)
		return rc;
	os = open_store(&b->spec.destination, &cr, e);
	for (int i = 0; os && i < 2 && rc == 0; i++) {
		if (keys[i] && *keys[i] && objstore_delete(os, keys[i], &oe) < 0)
			rc = err_set(e, oe.err.code, "%s", oe.err.msg);
	}
	if (!os)
		rc = e && e->code ? e->code : -EINVAL;
	objstore_free(os);
	creds_release(&cr);
	return rc;
}

/* --- what the poller saw ---------------------------------------------------------------- */

/* An instance-side name is at most BK_INST_NAME_MAX bytes (the /v1 decoder refuses
 * longer ones), so each RedisBackup key it stands for fits, and so does its queue key:
 * nothing is ever cut. */
#define OBS_KEY_MAX BK_INST_NAME_MAX
_Static_assert(sizeof(BK_QUEUE_BACKUP) - 1 + OBS_KEY_MAX <= WQ_KEY_MAX,
               "a backup's queue key fits the work queue's");

/* The RedisBackup keys ("ns/name") an instance-side name may stand for: itself, and
 * without an attempt's ".r<N>" (bk_instance_name). n: 0 (too long to be one), 1 or 2. */
static size_t backup_keys(const char *inst_name, char out[2][OBS_KEY_MAX + 1])
{
	const char *dot = strrchr(inst_name, '.');
	size_t len = strlen(inst_name);

	if (len > OBS_KEY_MAX)
		return 0;
	memcpy(out[0], inst_name, len + 1);
	if (!dot || dot[1] != 'r' || dot[2] < '0' || dot[2] > '9')
		return 1;
	len = (size_t)(dot - inst_name);
	memcpy(out[1], inst_name, len);
	out[1][len] = '\0';
	return 2;
}

/* Whether a RedisBackup that inst_name stands for is in the cache (else: deleted). */
static bool backup_known(struct ctl *c, const char *inst_name)
{
	char keys[2][OBS_KEY_MAX + 1];
	size_t n = backup_keys(inst_name, keys);
	json_t *o = NULL;

	for (size_t i = 0; i < n && !o; i++)
		o = k8s_informer_get_key(c->inf[CTL_INF_BACKUPS], keys[i]);
	json_decref(o);
	return o != NULL;
}

static void queue_named(struct ctl *c, const char *inst_name)
{
	char keys[2][OBS_KEY_MAX + 1], key[sizeof(BK_QUEUE_BACKUP) + OBS_KEY_MAX];
	size_t n = backup_keys(inst_name, keys);

	for (size_t i = 0; i < n; i++) {
		memcpy(key, BK_QUEUE_BACKUP, sizeof(BK_QUEUE_BACKUP) - 1);
		memcpy(key + sizeof(BK_QUEUE_BACKUP) - 1, keys[i], strlen(keys[i]) + 1);
		(void)wq_add(c->q, key);
	}
}

/* [mu held] Stores text (taken; NULL: forget the pod); true when it differs. */
static bool obs_store(struct ctl *c, const char *pod_key, char *text)
{
	void *old = NULL;
	bool changed;

	if (!text) {
		changed = strmap_remove(&c->bk_obs, pod_key, &old);
		free(old);
		return changed;
	}
	old = strmap_set(&c->bk_obs, pod_key, text);
	changed = !old || strcmp(old, text) != 0;
	free(old);
	return changed;
}

/* An entry only while the pod reports a backup whose RedisBackup exists: a pod keeps
 * reporting its last backup for good, and that one may have been deleted long ago. */
void ctl_backup_observe(struct ctl *c, const char *pod_key, const char *body, size_t len)
{
	struct api_inst_status st = { 0 };
	char *text = NULL, *name = NULL;
	bool changed;

	if (api_inst_status_decode(body, len, &st, NULL) < 0)
		return;
	if (st.has_backup && st.backup.name && backup_known(c, st.backup.name)) {
		json_t *j = api_inst_backup_state_encode(&st.backup);

		text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
		json_decref(j);
		name = xstrdup(st.backup.name);
	}
	api_inst_status_release(&st);
	pthread_mutex_lock(&c->mu);
	changed = obs_store(c, pod_key, text);
	pthread_mutex_unlock(&c->mu);
	if (changed && name)
		queue_named(c, name);
	free(name);
}

void ctl_backup_forget_locked(struct ctl *c, const char *pod_key)
{
	(void)obs_store(c, pod_key, NULL);
}

/* The last "backup" object of ns/pod (release it), or false. */
static bool observed(struct ctl *c, const char *ns, const char *pod,
                     struct api_inst_backup_state *out)
{
	char key[K8S_INFORMER_KEY_MAX + 1], *text = NULL;
	const char *v;
	int rc = -ENOENT;

	snprintf(key, sizeof(key), "%s/%s", ns, pod);
	pthread_mutex_lock(&c->mu);
	v = strmap_get(&c->bk_obs, key);
	text = v ? xstrdup(v) : NULL;
	pthread_mutex_unlock(&c->mu);
	if (text)
		rc = api_inst_backup_state_decode(text, strlen(text), out, NULL);
	free(text);
	return rc == 0;
}

/* --- one reconcile ----------------------------------------------------------------------- */

struct gathered {
	json_t *obj, *cluster, *pods, *backups;
	struct api_redis_backup b;
	bool decoded;
	struct bk_candidate *cand;
	size_t ncand;
	const char *secret;
	struct ctl_inst inst; /* status.instance's last poll */
	const char *inst_ip, *inst_uid;
	bool inst_found, inst_tls;
	struct api_inst_backup_state obs;
	bool has_obs;
	char inst_name[BK_INST_NAME_MAX + 1];
	char location[BK_LOCATION_MAX];
	char now[RFC3339_MAX];
	char web_identity[API_BACKUP_WEB_IDENTITY_MSG_MAX];
};

static void release(struct gathered *g)
{
	if (g->decoded)
		api_redis_backup_release(&g->b);
	if (g->has_obs)
		api_inst_backup_state_release(&g->obs);
	json_decref(g->obj);
	json_decref(g->cluster);
	json_decref(g->pods);
	json_decref(g->backups);
	free(g->cand);
}

static int64_t attempt_of(json_t *obj)
{
	const char *s = json_string_value(
	        json_object_get(jsonx_get(obj, "metadata.annotations"), BK_ANN_ATTEMPT));
	long long v = s ? strtoll(s, NULL, 10) : 0;

	return v > 0 && v < 1000 ? v : 0;
}

/* Another backup of the same cluster that goes first (bk_first), or NULL. */
static const char *blocker(struct gathered *g, const char *ns)
{
	struct bk_entry *e = xcalloc(json_array_size(g->backups) + 1, sizeof(*e));
	const char *me = g->b.meta.name, *who = NULL;
	size_t n = 0, i;
	json_t *o;
	int first;

	json_array_foreach (g->backups, i, o) {
		const char *cl = jsonx_get_string(o, "spec.clusterName");
		const char *bns = jsonx_get_string(o, "metadata.namespace");

		if (!cl || !bns || strcmp(bns, ns) != 0 ||
		    strcmp(cl, g->b.spec.cluster_name) != 0 ||
		    jsonx_get(o, "metadata.deletionTimestamp"))
			continue;
		e[n].name = jsonx_get_string(o, "metadata.name");
		e[n].phase = bk_phase_of(o);
		e[n++].created_ms = bk_time_of(o, "metadata.creationTimestamp");
	}
	first = bk_first(e, n);
	if (first >= 0 && strcmp(e[first].name, me) != 0)
		who = e[first].name;
	free(e);
	return who;
}

static void candidates(struct ctl *c, struct gathered *g, const char *ns)
{
	const char *uid = jsonx_get_string(g->cluster, "metadata.uid");
	const char *primary = jsonx_get_string(g->cluster, "status.currentPrimary");
	size_t i;
	json_t *o;

	g->pods = k8s_informer_list_indexed(c->inf[CTL_INF_PODS], ns, g->b.spec.cluster_name);
	g->cand = xcalloc(json_array_size(g->pods) + 1, sizeof(*g->cand));
	json_array_foreach (g->pods, i, o) {
		struct bk_candidate *k = &g->cand[g->ncand];
		struct ctl_inst inst;
		const char *name = jsonx_get_string(o, "metadata.name"),
		           *puid = jsonx_get_string(o, "metadata.uid");

		if (!name || !ctl_owner_is(o, uid) || jsonx_get(o, "metadata.deletionTimestamp"))
			continue;
		ctl_poller_get(c, ns, name, &inst);
		if (puid && strcmp(inst.uid, puid) != 0)
			memset(&inst, 0, sizeof(inst));
		if (strcmp(name, g->b.status.instance ? g->b.status.instance : "") == 0) {
			g->inst = inst;
			g->inst_found = true;
			g->inst_ip = jsonx_get_string(o, "status.podIP");
			g->inst_tls =
			        json_object_get(jsonx_get(o, "metadata.annotations"), CTL_PKI_ANN);
		}
		k->pod = name;
		k->primary = primary && strcmp(primary, name) == 0;
		k->ok = ctl_inst_ok(&inst);
		k->ready = inst.ready;
		k->link = NULL;
		k->lag_bytes = inst.lag_bytes;
		g->ncand++;
		/* the link lives in the copy: keep the candidate's own */
		k->link = strcmp(inst.link, API_INST_LINK_UP) == 0 ? API_INST_LINK_UP
		                                                   : API_INST_LINK_DOWN;
	}
}

static void instance_state(struct ctl *c, struct gathered *g, const char *ns, struct bk_input *in)
{
	int64_t mono = clock_mono_ms();

	if (!g->inst_found) {
		in->inst = BK_INST_GONE;
		return;
	}
	if (!ctl_inst_ok(&g->inst)) {
		in->inst = BK_INST_UNREACHABLE;
		in->silent_ms = g->inst.seen ? mono - g->inst.last_ok_mono : 0;
		return;
	}
	in->inst = BK_INST_ANSWERS;
	g->has_obs = observed(c, ns, g->b.status.instance, &g->obs);
	in->obs = g->has_obs ? &g->obs : NULL;
	if (g->has_obs && g->obs.key) {
		bk_location(&g->b.spec.destination, g->obs.key, g->location);
		in->location = g->location;
	}
}

/* The value of the variable name in the env of a container of pod (its spec: where a
 * workload-identity webhook injects it), or NULL. */
static const char *pod_env(void *pod, const char *name)
{
	json_t *ct, *ev;
	size_t i, j;

	json_array_foreach (jsonx_get(pod, "spec.containers"), i, ct) {
		json_array_foreach (json_object_get(ct, "env"), j, ev) {
			const char *n = jsonx_get_string(ev, "name");

			if (n && strcmp(n, name) == 0)
				return jsonx_get_string(ev, "value");
		}
	}
	return NULL;
}

/* No credentials, and the pod to back up shows cloud workload identity: its message. */
static bool web_identity(struct gathered *g, const char *pod, const struct api_inst_credentials *k)
{
	json_t *o;
	size_t i;

	json_array_foreach (g->pods, i, o) {
		const char *name = jsonx_get_string(o, "metadata.name");

		if (name && strcmp(name, pod) == 0)
			return api_backup_web_identity(&g->b.spec.destination, k, pod_env, o,
			                               g->web_identity);
	}
	return false;
}

static void build_input(struct ctl *c, struct gathered *g, const char *ns, struct bk_status *cur,
                        struct bk_input *in)
{
	int64_t now = clock_wall_ms(), attempt = attempt_of(g->obj);
	struct err e = { 0 };
	struct ctl_backup_creds cr;
	int idx = -1;

	rfc3339_format(now, RFC3339_SECONDS, g->now);
	bk_status_from_api(&g->b.status, cur);
	bk_instance_name(ns, g->b.meta.name, attempt, g->inst_name);
	in->name = g->b.meta.name;
	in->inst_name = g->inst_name;
	in->cur = cur;
	in->attempt = attempt;
	in->created_ms = bk_time_of(g->obj, "metadata.creationTimestamp");
	in->now_ms = now;
	in->now = g->now;
	in->cluster = g->b.spec.cluster_name;
	in->cluster_found = g->cluster != NULL;
	if (!g->cluster)
		return;
	g->secret = ctl_backup_secret_name(g->cluster, &g->b.spec.destination);
	in->secret = g->secret;
	in->secret_found = creds_read(c, ns, g->secret, &cr, &e) != -ENOENT;
	g->backups = k8s_informer_list(c->inf[CTL_INF_BACKUPS]);
	in->blocker = blocker(g, ns);
	candidates(c, g, ns);
	idx = bk_choose(g->b.spec.target, g->cand, g->ncand, BK_REPLICA_LAG_MAX, &in->why);
	in->chosen = idx >= 0 ? g->cand[idx].pod : NULL;
	if (in->chosen && web_identity(g, in->chosen, &cr.k))
		in->web_identity = g->web_identity;
	creds_release(&cr);
	if (cur->phase == API_BACKUP_RUNNING)
		instance_state(c, g, ns, in);
}

static int write_status(struct ctl *c, struct gathered *g, const struct bk_status *s, struct err *e)
{
	json_t *body = json_pack("{s:o}", "status", bk_status_json(s, g->b.meta.generation));
	int rc = k8s_patch(c->kube, &api_res_redisbackups, g->b.meta.namespace, g->b.meta.name,
	                   "status", K8S_PATCH_MERGE, body, NULL, NULL, e);

	json_decref(body);
	return rc;
}

static int patch_meta(struct ctl *c, struct gathered *g, json_t *meta, struct err *e)
{
	json_t *body = json_pack("{s:o}", "metadata", meta);
	int rc;

	json_object_set_new(meta, "resourceVersion", json_string(g->b.meta.resource_version));
	rc = k8s_patch(c->kube, &api_res_redisbackups, g->b.meta.namespace, g->b.meta.name, NULL,
	               K8S_PATCH_MERGE, body, NULL, NULL, e);
	json_decref(body);
	return rc;
}

static int bump_attempt(struct ctl *c, struct gathered *g, struct err *e)
{
	char v[24];

	snprintf(v, sizeof(v), "%lld", (long long)attempt_of(g->obj) + 1);
	return patch_meta(c, g, json_pack("{s:{s:s}}", "annotations", BK_ANN_ATTEMPT, v), e);
}

static bool has_finalizer(json_t *obj)
{
	json_t *f = jsonx_get(obj, "metadata.finalizers"), *x;
	size_t i;

	json_array_foreach (f, i, x) {
		if (json_string_value(x) && strcmp(json_string_value(x), BK_FINALIZER) == 0)
			return true;
	}
	return false;
}

/* The finalizers with ours added or taken off. */
static int set_finalizer(struct ctl *c, struct gathered *g, bool on, struct err *e)
{
	json_t *f = json_array(), *x;
	size_t i;

	json_array_foreach (jsonx_get(g->obj, "metadata.finalizers"), i, x) {
		if (!json_string_value(x) || strcmp(json_string_value(x), BK_FINALIZER) != 0)
			json_array_append(f, x);
	}
	if (on)
		json_array_append_new(f, json_string(BK_FINALIZER));
	return patch_meta(c, g, json_pack("{s:o}", "finalizers", f), e);
}

static void event(struct ctl *c, struct gathered *g, const struct bk_step *st)
{
	struct k8s_events_ref ref = { API_GROUP_VERSION, API_REDIS_BACKUP_KIND, g->b.meta.namespace,
		                      g->b.meta.name, g->b.meta.uid };

	if (!st->event)
		return;
	atomic_fetch_add(&c->metrics.events, 1);
	log_emit(st->warning ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, "backup", st->event_msg, "ns",
	         g->b.meta.namespace, "name", g->b.meta.name, "reason", st->event, (char *)NULL);
	(void)k8s_events_emit(c->events, &ref, st->warning ? K8S_EVENTS_WARNING : K8S_EVENTS_NORMAL,
	                      st->event, "Backup", "%s", st->event_msg);
}

static void record(struct ctl *c, struct gathered *g, const struct bk_step *st)
{
	char key[K8S_INFORMER_KEY_MAX + 1];
	struct strmap_entry *ent;
	struct ctl_backup_stats *s;
	int64_t t0 = 0, t1 = 0;

	if (!st->completed && !st->failed)
		return;
	snprintf(key, sizeof(key), "%s/%s", g->b.meta.namespace, g->b.spec.cluster_name);
	pthread_mutex_lock(&c->mu);
	ent = strmap_upsert(&c->bk_stats, key, NULL);
	if (!ent->value)
		ent->value = xcalloc(1, sizeof(struct ctl_backup_stats));
	s = ent->value;
	if (st->failed) {
		s->failed++;
	} else {
		s->completed++;
		(void)rfc3339_parse(st->next.started_at, &t0);
		(void)rfc3339_parse(st->next.stopped_at, &t1);
		s->last_success_wall_ms = t1 ? t1 : clock_wall_ms();
		s->last_duration_s = t0 && t1 >= t0 ? (double)(t1 - t0) / 1000.0 : 0;
		s->last_size = st->next.size;
	}
	pthread_mutex_unlock(&c->mu);
}

static int post(struct ctl *c, struct gathered *g, const char *pod, struct err *e)
{
	struct api_inst_backup_request rq = { 0 };
	struct ctl_backup_creds cr;
	struct ctl_pki_client tls = { 0 };
	json_t *body;
	int rc;

	if (!g->inst_ip || !*g->inst_ip)
		return err_set(e, -EAGAIN, "pod %s has no IP yet", pod);
	rc = creds_read(c, g->b.meta.namespace, g->secret, &cr, e);
	if (rc < 0)
		return rc;
	if (g->inst_tls)
		rc = ctl_instance_tls(c, g->b.meta.namespace, g->b.spec.cluster_name, &tls, e);
	rq.name = g->inst_name;
	rq.method = g->b.spec.method;
	rq.destination = g->b.spec.destination;
	rq.credentials = cr.k;
	body = api_inst_backup_request_encode(&rq);
	if (rc == 0)
		rc = ctl_instance_post(g->inst_ip, "backup", body, POST_TIMEOUT_MS,
		                       g->inst_tls ? &tls : NULL, NULL, e);
	json_t *creds = json_object_get(body, "credentials");
	const char *k;
	json_t *v;
	json_object_foreach (creds, k, v) {
		if (json_string_value(v))
			secure_zero((void *)json_string_value(v), strlen(json_string_value(v)));
	}
	json_decref(body);
	ctl_pki_client_release(&tls);
	creds_release(&cr);
	return rc;
}

/* Start (status first, then the POST), or POST again; the status when it changed. */
static int act(struct ctl *c, struct gathered *g, const struct bk_status *cur,
               const struct bk_step *st)
{
	struct err e = { 0 };
	int rc = 0;

	/* the attempt first: its patch carries the cached resourceVersion, which a status
	 * write would make stale (a Conflict, and the retry would reuse the attempt's name);
	 * a status write failing after it costs one attempt at most */
	if (st->retry && (rc = bump_attempt(c, g, &e)) < 0)
		goto out;
	if (!bk_status_equal(cur, &st->next) && (rc = write_status(c, g, &st->next, &e)) < 0)
		goto out;
	event(c, g, st);
	record(c, g, st);
	if (st->action == BK_START) {
		g->inst_ip =
		        NULL; /* the informer's copy of the status is behind: look the pod up */
		json_t *pod = k8s_informer_get(c->inf[CTL_INF_PODS], g->b.meta.namespace,
		                               st->next.instance);
		g->inst_ip = jsonx_get_string(pod, "status.podIP");
		g->inst_tls = json_object_get(jsonx_get(pod, "metadata.annotations"), CTL_PKI_ANN);
		rc = post(c, g, st->next.instance, &e);
		json_decref(pod);
	} else if (st->action == BK_POST) {
		rc = post(c, g, st->next.instance, &e);
	}
	if (rc < 0 && st->action != BK_NOTHING) {
		/* the instance is followed anyway: the lost window decides (backup.h) */
		log_warn("backup", "POST /v1/backup failed", "ns", g->b.meta.namespace, "name",
		         g->b.meta.name, "error", e.msg, (char *)NULL);
		rc = 0;
	}
out:
	if (rc < 0)
		log_warn("backup", "cannot update", "ns", g->b.meta.namespace, "name",
		         g->b.meta.name, "error", e.msg, (char *)NULL);
	return rc;
}

static int on_delete(struct ctl *c, struct gathered *g)
{
	struct err e = { 0 };
	int rc;

	if (!has_finalizer(g->obj))
		return 0;
	rc = ctl_backup_delete_objects(c, g->b.meta.namespace, g->cluster, &g->b, &e);
	if (rc < 0) {
		log_warn("backup", "cannot delete the stored objects", "ns", g->b.meta.namespace,
		         "name", g->b.meta.name, "error", e.msg, (char *)NULL);
		return rc;
	}
	return set_finalizer(c, g, false, &e);
}

static int reconcile(struct ctl *c, struct gathered *g, const char *key)
{
	struct bk_status cur;
	struct bk_input in = { 0 };
	struct bk_step st;
	struct err e = { 0 };
	bool want_fin = g->b.spec.deletion_policy == API_DELETION_DELETE;
	bool deleting = jsonx_get(g->obj, "metadata.deletionTimestamp") != NULL;
	int rc;

	if (!deleting && want_fin != has_finalizer(g->obj))
		return set_finalizer(c, g, want_fin, &e);
	build_input(c, g, g->b.meta.namespace, &cur, &in);
	if (deleting && cur.phase != API_BACKUP_RUNNING)
		return on_delete(c, g);
	bk_decide(&in, &st);
	rc = act(c, g, &cur, &st);
	if (rc == 0 && st.requeue_ms)
		(void)wq_add_after(c->q, key, st.requeue_ms);
	return rc;
}

int ctl_backup_reconcile(struct ctl *c, const char *key)
{
	const char *nskey = key + strlen(BK_QUEUE_BACKUP);
	struct gathered g = { 0 };
	struct err e = { 0 };
	int rc = 0;

	g.obj = k8s_informer_get_key(c->inf[CTL_INF_BACKUPS], nskey);
	if (!g.obj)
		return 0;
	if (api_redis_backup_decode(g.obj, &g.b, &e) < 0) {
		log_error("backup", "cannot decode the RedisBackup", "key", nskey, "error", e.msg,
		          (char *)NULL);
		goto out;
	}
	g.decoded = true;
	g.cluster = k8s_informer_get(c->inf[CTL_INF_CLUSTERS], g.b.meta.namespace,
	                             g.b.spec.cluster_name);
	if (!g.cluster && c->set.cluster_selector && *c->set.cluster_selector)
		goto out; /* perhaps another controller's cluster */
	rc = reconcile(c, &g, key);
out:
	release(&g);
	return rc;
}

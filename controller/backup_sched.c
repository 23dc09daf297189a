/*
 * backup_sched: the RedisScheduledBackup reconciler. The rules are backup_schedule.c's
 * (pure): this file reads the object and its RedisBackups (label
 * redis.io/scheduled-backup=<name>) from the caches, asks bs_decide, creates the
 * RedisBackup of a due run under its deterministic name (bs_backup_name: a controller
 * that restarts between the create and the status write gets AlreadyExists, never a
 * second backup), deletes what the history limits (bs_prune_history: RedisBackup objects
 * only, their deletionPolicy decides about their data) and the retention window say,
 * writes the status when it changed, and requeues itself at the next fire time.
 *
 * Retention (spec.retention) works from the store, not from the RedisBackup objects: it
 * lists the schedule's prefix (bs_store_prefix), groups the keys by run directory
 * (bs_stored_group: only "<run>[.r<N>]/" of this schedule, nothing else under the
 * prefix), asks bs_past_retention (never the newest completed, never one whose
 * RedisBackup is still Pending or Running) and deletes each directory, manifest first,
 * then its RedisBackup if one is left. So the objects of a Retain RedisBackup that the
 * history limit deleted, and those of failed attempts, go too once past the window.
 * Before a directory is deleted every object of it is checked for Object Lock (S3) or
 * immutability (Azure) (objstore_lock_get, bs_lock_fold): a locked run, or one whose
 * state the store would not tell, is kept whole, logged, named in an Event and in the
 * condition RetentionBlocked of the schedule, and never counted as deleted.
 * Workers only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/resources.h"
#include "controller/backup.h"
#include "controller/backup_schedule.h"
#include "controller/internal.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/objstore/lock.h"
#include "lib/objstore/objstore.h"
#include "lib/rfc3339.h"

struct run {
	json_t *obj, *backups; /* this schedule's RedisBackups */
	json_t *cluster;       /* its RedisCluster (its backupCredentialsSecret); NULL: none */
	struct api_redis_scheduled_backup sb;
	bool decoded;
	struct cron cron;
	struct tz *tz;
	int64_t now;
};

static json_t *own_backups(struct ctl *c, const struct run *r)
{
	json_t *all = k8s_informer_list(c->inf[CTL_INF_BACKUPS]), *out = json_array(), *o;
	size_t i;

	json_array_foreach (all, i, o) {
		const char *l = json_string_value(
		        json_object_get(jsonx_get(o, "metadata.labels"), BK_LABEL_SCHEDULE));
		const char *ns = jsonx_get_string(o, "metadata.namespace");

		if (l && ns && strcmp(l, r->sb.meta.name) == 0 &&
		    strcmp(ns, r->sb.meta.namespace) == 0 &&
		    !jsonx_get(o, "metadata.deletionTimestamp"))
			json_array_append(out, o);
	}
	json_decref(all);
	return out;
}

static int write_status(struct ctl *c, const struct run *r, json_t *status, struct err *e)
{
	json_t *body;
	int rc;

	if (jsonx_contains(json_object_get(r->obj, "status"), status)) {
		json_decref(status);
		return 0;
	}
	body = json_pack("{s:o}", "status", status);
	rc = k8s_patch(c->kube, &api_res_redisscheduledbackups, r->sb.meta.namespace,
	               r->sb.meta.name, "status", K8S_PATCH_MERGE, body, NULL, NULL, e);
	json_decref(body);
	return rc;
}

/* A condition of the schedule, its transition time kept while its status stays. */
static json_t *condition(const struct run *r, const char *type, const char *st, const char *reason,
                         const char *msg)
{
	char now[RFC3339_MAX];
	json_t *cd = jsonx_find(jsonx_get(r->obj, "status.conditions"), "type", type);
	const char *was = jsonx_get_string(cd, "status");
	const char *since = jsonx_get_string(cd, "lastTransitionTime");

	rfc3339_format(r->now, RFC3339_SECONDS, now);
	return json_pack("{s:s,s:s,s:I,s:s,s:s,s:s}", "type", type, "status", st,
	                 "observedGeneration", (json_int_t)r->sb.meta.generation,
	                 "lastTransitionTime", was && since && strcmp(was, st) == 0 ? since : now,
	                 "reason", reason, "message", msg);
}

static json_t *schedule_condition(const struct run *r, bool ok, const char *reason, const char *msg)
{
	return condition(r, BS_CONDITION_SCHEDULE, ok ? "True" : "False", reason, msg);
}

static int invalid(struct ctl *c, const struct run *r, const char *reason, const struct err *e)
{
	struct err we = { 0 };

	return write_status(c, r,
	                    json_pack("{s:[o],s:I}", "conditions",
	                              schedule_condition(r, false, reason, e->msg),
	                              "observedGeneration", (json_int_t)r->sb.meta.generation),
	                    &we);
}

static json_t *backup_object(const struct run *r, const char *name)
{
	json_t *spec = json_object(), *src = jsonx_get(r->obj, "spec");
	const struct api_backup_spec *b = &r->sb.spec.backup;
	json_t *tmpl = json_object_get(src, "template");
	json_t *from = r->sb.spec.has_template && tmpl ? tmpl : src;

	json_object_set_new(spec, "clusterName", json_string(b->cluster_name));
	json_object_set_new(
	        spec, "target",
	        json_string(b->target == API_TARGET_PRIMARY ? "primary" : "prefer-replica"));
	json_object_set_new(spec, "method",
	                    json_string(b->method == API_METHOD_AOF ? "aof" : "rdb"));
	json_object_set_new(
	        spec, "deletionPolicy",
	        json_string(b->deletion_policy == API_DELETION_DELETE ? "Delete" : "Retain"));
	json_object_set(spec, "destination", json_object_get(from, "destination"));
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s},s:[{s:s,s:s,s:s,s:s,s:b}]},s:o}",
	                 "apiVersion", API_GROUP_VERSION, "kind", API_REDIS_BACKUP_KIND, "metadata",
	                 "name", name, "namespace", r->sb.meta.namespace, "labels",
	                 BK_LABEL_SCHEDULE, r->sb.meta.name, BK_LABEL_CLUSTER, b->cluster_name,
	                 "ownerReferences", "apiVersion", API_GROUP_VERSION, "kind",
	                 API_REDIS_SCHEDULED_BACKUP_KIND, "name", r->sb.meta.name, "uid",
	                 r->sb.meta.uid, "controller", 1, "spec", spec);
}

static int create_backup(struct ctl *c, const struct run *r, int64_t at, char *name, struct err *e)
{
	json_t *obj;
	int rc;

	bs_backup_name(r->sb.meta.name, at, name);
	obj = backup_object(r, name);
	rc = k8s_create(c->kube, &api_res_redisbackups, r->sb.meta.namespace, obj, NULL, NULL, e);
	json_decref(obj);
	if (rc == -EEXIST)
		rc = 0; /* made before a restart: the same run */
	if (rc == 0)
		log_info("schedule", "backup created", "ns", r->sb.meta.namespace, "name",
		         r->sb.meta.name, "backup", name, (char *)NULL);
	return rc;
}

static void delete_backup(struct ctl *c, const struct run *r, const char *name)
{
	struct err e = { 0 };
	int rc = k8s_delete(c->kube, &api_res_redisbackups, r->sb.meta.namespace, name, NULL, &e);

	if (rc < 0 && rc != -ENOENT)
		log_warn("schedule", "cannot delete a backup", "ns", r->sb.meta.namespace, "backup",
		         name, "error", e.msg, (char *)NULL);
}

/* The history limits: RedisBackup objects only (their deletionPolicy decides about their
 * objects; what a Retain one leaves is retention's, from the store). */
static void prune_history(struct ctl *c, const struct run *r)
{
	size_t n = json_array_size(r->backups), k, *idx = xcalloc(n + 1, sizeof(*idx));
	struct bs_backup *h = xcalloc(n + 1, sizeof(*h));
	json_t *o;
	size_t i;

	json_array_foreach (r->backups, i, o)
		h[i] = (struct bs_backup){ jsonx_get_string(o, "metadata.name"), bk_phase_of(o),
			                   bk_time_of(o, "metadata.creationTimestamp") };
	k = bs_prune_history(h, n, r->sb.spec.successful_backups_history_limit,
	                     r->sb.spec.failed_backups_history_limit, idx);
	for (size_t j = 0; j < k; j++)
		delete_backup(c, r, h[idx[j]].name);
	free(idx);
	free(h);
}

/* --- retention, from the store (backup_schedule.h) ---------------------------------------- */

struct listing {
	char **keys;
	size_t n;
};

static int list_key(void *ctx, const struct objstore_entry *ent)
{
	struct listing *l = ctx;

	if (l->n == BS_LIST_KEYS_MAX)
		return -E2BIG;
	l->keys[l->n++] = xstrdup(ent->key);
	return 0;
}

/* A RedisBackup of this schedule named name is Pending or Running: its directory may
 * still be uploading. */
static bool is_running(const struct run *r, const char *name)
{
	json_t *o;
	size_t i;

	json_array_foreach (r->backups, i, o) {
		const char *n = jsonx_get_string(o, "metadata.name");
		enum api_backup_phase p = bk_phase_of(o);

		if (n && strcmp(n, name) == 0 && p != API_BACKUP_COMPLETED &&
		    p != API_BACKUP_FAILED)
			return true;
	}
	return false;
}

/* Deletes a run directory: its manifest first (it is no longer a complete backup for a
 * restore or for retention at once), then every other key; then its RedisBackup. -EPERM
 * when the store refused for an immutability it enforces but did not show (an Azure
 * container-level policy: 409 BlobImmutableDueToPolicy): k then says so. */
static int delete_dir(struct ctl *c, const struct run *r, struct objstore *os,
                      const struct listing *l, const struct bs_stored *d, struct bs_kept *k)
{
	char man[BS_KEY_MAX + sizeof(BS_MANIFEST)];
	struct objstore_err oe = { 0 };
	int rc;

	snprintf(man, sizeof(man), "%s%s", d->dir, BS_MANIFEST);
	rc = d->completed ? objstore_delete(os, man, &oe) : 0;
	for (size_t i = d->first; rc == 0 && i < d->first + d->count; i++)
		if (strcmp(l->keys[i], man) != 0)
			rc = objstore_delete(os, l->keys[i], &oe);
	if (rc < 0) {
		log_warn("schedule", "retention: cannot delete a stored backup", "ns",
		         r->sb.meta.namespace, "name", r->sb.meta.name, "prefix", d->dir, "error",
		         oe.err.msg, (char *)NULL);
		*k = (struct bs_kept){ d->dir, BS_LOCKED, "" };
		snprintf(k->detail, sizeof(k->detail), "%.180s", oe.err.msg);
		return rc;
	}
	log_info("schedule", "retention: stored backup deleted", "ns", r->sb.meta.namespace, "name",
	         r->sb.meta.name, "prefix", d->dir, (char *)NULL);
	delete_backup(c, r, d->backup);
	return 0;
}

/* Reads the lock state of every object of run d (stopping at a locked one) into k. */
static enum bs_lock_verdict run_lock(struct objstore *os, const struct listing *l,
                                     const struct bs_stored *d, int64_t now, struct bs_kept *k)
{
	enum bs_lock_verdict v = BS_DELETABLE;

	for (size_t i = d->first; i < d->first + d->count && v != BS_LOCKED; i++) {
		struct objstore_lock lk;
		struct objstore_err oe = { 0 };
		int rc = objstore_lock_get(os, l->keys[i], &lk, &oe);
		enum bs_lock_verdict nv =
		        bs_lock_fold(v, rc, rc == 0 && objstore_lock_active(&lk, now));
		char what[64];

		if (nv == v)
			continue;
		objstore_lock_describe(&lk, what);
		snprintf(k->detail, sizeof(k->detail), "%.40s: %.140s", l->keys[i] + strlen(d->dir),
		         rc < 0 ? oe.err.msg : what);
		v = nv;
	}
	k->dir = d->dir;
	k->why = v;
	return v;
}

/* The kept runs: logged, an Event on the schedule (Warning when a state is unknown). */
static void report_kept(struct ctl *c, const struct run *r, const struct bs_kept *k, size_t n,
                        const char *reason, const char *msg)
{
	struct k8s_events_ref ref = { API_GROUP_VERSION, API_REDIS_SCHEDULED_BACKUP_KIND,
		                      r->sb.meta.namespace, r->sb.meta.name, r->sb.meta.uid };
	bool warn = strcmp(reason, BS_REASON_LOCK_UNKNOWN) == 0;

	for (size_t i = 0; i < n; i++)
		log_emit(k[i].why == BS_LOCKED ? LOG_LEVEL_INFO : LOG_LEVEL_WARN, "schedule",
		         k[i].why == BS_LOCKED
		                 ? "retention: stored backup kept: Object Lock"
		                 : "retention: stored backup kept: lock state unknown",
		         "ns", r->sb.meta.namespace, "name", r->sb.meta.name, "prefix", k[i].dir,
		         "detail", k[i].detail, (char *)NULL);
	if (n == 0)
		return;
	atomic_fetch_add(&c->metrics.events, 1);
	(void)k8s_events_emit(c->events, &ref, warn ? K8S_EVENTS_WARNING : K8S_EVENTS_NORMAL,
	                      BS_CONDITION_RETENTION, "Retention", "%s", msg);
}

/* Decides on the listed directories and deletes what is past the retention and not
 * locked; the condition BS_CONDITION_RETENTION of this pass. */
static json_t *expire(struct ctl *c, const struct run *r, struct objstore *os, struct listing *l,
                      const char *prefix)
{
	struct bs_stored *d = xcalloc(BS_STORED_MAX, sizeof(*d));
	size_t n = bs_stored_group(prefix, l->keys, l->n, d, BS_STORED_MAX), k, nk = 0;
	struct bs_artifact *a = xcalloc(n + 1, sizeof(*a));
	struct bs_kept *kept = xcalloc(n + 1, sizeof(*kept));
	size_t *idx = xcalloc(n + 1, sizeof(*idx));
	const char *status, *reason;
	char msg[1024];
	json_t *cond;

	for (size_t i = 0; i < n; i++)
		a[i] = (struct bs_artifact){ d[i].dir, d[i].completed,
			                     is_running(r, d[i].backup) ? 0 : d[i].time_ms, false };
	k = bs_past_retention(a, n, r->sb.spec.retention_ms, r->now, idx);
	for (size_t j = 0; j < k; j++) {
		int rc = run_lock(os, l, &d[idx[j]], r->now, &kept[nk]) != BS_DELETABLE
		                 ? -EPERM
		                 : delete_dir(c, r, os, l, &d[idx[j]], &kept[nk]);

		if (rc == -EPERM)
			nk++; /* kept whole, never counted as deleted */
		else if (rc < 0)
			break; /* the store fails: the next reconcile tries again */
	}
	reason = bs_retention_message(kept, nk, &status, msg, sizeof(msg));
	report_kept(c, r, kept, nk, reason, msg);
	cond = condition(r, BS_CONDITION_RETENTION, status, reason, msg);
	free(idx);
	free(kept);
	free(a);
	free(d);
	return cond;
}

/* Applies spec.retention; the condition of this pass, or NULL when the store could not
 * be listed (the previous one stays). */
static json_t *retention(struct ctl *c, const struct run *r, json_t *cluster)
{
	const struct api_destination *dest = &r->sb.spec.backup.destination;
	const char *path = dest->s3.set ? dest->s3.path : dest->azure.path;
	struct listing l = { xcalloc(BS_LIST_KEYS_MAX, sizeof(char *)), 0 };
	struct objstore_err oe = { 0 };
	struct err e = { 0 };
	struct objstore *os = NULL;
	char prefix[BS_KEY_MAX];
	json_t *cond = NULL;
	int rc;

	rc = bs_store_prefix(path, r->sb.spec.backup.cluster_name, r->sb.meta.namespace,
	                     r->sb.meta.name, prefix);
	if (rc < 0)
		err_set(&e, rc, "the prefix is longer than %d bytes", BS_KEY_MAX - 1);
	if (rc == 0 && !(os = ctl_backup_store_open(c, r->sb.meta.namespace, cluster, dest, &e)))
		rc = e.code ? e.code : -EINVAL;
	if (rc == 0 && (rc = objstore_list(os, prefix, list_key, &l, &oe)) < 0)
		snprintf(e.msg, sizeof(e.msg), "%s",
		         rc == -E2BIG ? "more keys than BS_LIST_KEYS_MAX" : oe.err.msg);
	if (rc == 0)
		cond = expire(c, r, os, &l, prefix);
	else
		log_warn("schedule", "retention: cannot list the stored backups", "ns",
		         r->sb.meta.namespace, "name", r->sb.meta.name, "error", e.msg,
		         (char *)NULL);
	for (size_t i = 0; i < l.n; i++)
		free(l.keys[i]);
	free(l.keys);
	objstore_free(os);
	return cond;
}

/* Retention (its condition appended to conds: this pass's, else the previous one) and the
 * history limits. */
static void prune(struct ctl *c, const struct run *r, json_t *conds)
{
	json_t *cond = NULL;

	if (r->sb.spec.retention_ms > 0 && r->sb.spec.backup.destination.set) {
		cond = retention(c, r, r->cluster);
		if (!cond)
			cond = json_incref(jsonx_find(jsonx_get(r->obj, "status.conditions"),
			                              "type", BS_CONDITION_RETENTION));
	}
	if (cond)
		json_array_append_new(conds, cond);
	prune_history(c, r);
}

static bool any_running(const struct run *r)
{
	json_t *o;
	size_t i;

	json_array_foreach (r->backups, i, o) {
		enum api_backup_phase p = bk_phase_of(o);

		if (p == 0 || p == API_BACKUP_PENDING || p == API_BACKUP_RUNNING)
			return true;
	}
	return false;
}

/* The newest Completed backup's name and stop time into status. */
static void last_success(const struct run *r, json_t *status)
{
	const char *best = NULL, *when = NULL;
	int64_t t_best = 0;
	json_t *o;
	size_t i;

	json_array_foreach (r->backups, i, o) {
		int64_t t = bk_time_of(o, "status.stoppedAt");

		if (bk_phase_of(o) == API_BACKUP_COMPLETED && t >= t_best) {
			t_best = t;
			best = jsonx_get_string(o, "metadata.name");
			when = jsonx_get_string(o, "status.stoppedAt");
		}
	}
	if (best) {
		json_object_set_new(status, "lastSuccessfulBackup", json_string(best));
		json_object_set_new(status, "lastSuccessfulTime", json_string(when));
	}
}

static void set_time(json_t *o, const char *k, int64_t ms)
{
	char t[RFC3339_MAX];

	if (ms <= 0) {
		json_object_set_new(o, k, json_null());
		return;
	}
	rfc3339_format(ms, RFC3339_SECONDS, t);
	json_object_set_new(o, k, json_string(t));
}

static int run_once(struct ctl *c, struct run *r, const char *key)
{
	struct bs_input in = { &r->cron,
		               r->tz,
		               r->sb.spec.suspend,
		               r->sb.spec.immediate,
		               bk_time_of(r->obj, "metadata.creationTimestamp"),
		               bk_time_of(r->obj, "status.lastScheduleTime"),
		               r->now,
		               any_running(r) };
	struct bs_decision d;
	struct err e = { 0 };
	char name[BS_NAME_MAX + 1];
	json_t *status;
	int rc;

	if (bs_decide(&in, &d, &e) < 0)
		return invalid(c, r, BS_REASON_NEVER_FIRES, &e);
	status = json_pack("{s:[o],s:I}", "conditions",
	                   schedule_condition(r, true, BS_REASON_VALID,
	                                      "the schedule and time zone are valid"),
	                   "observedGeneration", (json_int_t)r->sb.meta.generation);
	if (d.action == BS_CREATE || d.action == BS_CATCH_UP) {
		rc = create_backup(c, r, d.schedule_ms, name, &e);
		if (rc < 0) {
			json_decref(status);
			log_warn("schedule", "cannot create the backup", "ns", r->sb.meta.namespace,
			         "name", r->sb.meta.name, "error", e.msg, (char *)NULL);
			return rc;
		}
		set_time(status, "lastScheduleTime", d.schedule_ms);
		json_object_set_new(status, "lastBackupName", json_string(name));
	}
	set_time(status, "nextScheduleTime", d.next_ms);
	last_success(r, status);
	prune(c, r, json_object_get(status, "conditions"));
	rc = write_status(c, r, status, &e);
	if (rc == 0 && d.next_ms > r->now)
		(void)wq_add_after(c->q, key, d.next_ms - r->now + 200);
	return rc;
}

int ctl_schedule_reconcile(struct ctl *c, const char *key)
{
	struct run r = { 0 };
	struct err e = { 0 };
	int rc = 0;

	r.obj = k8s_informer_get_key(c->inf[CTL_INF_SCHEDULES], key + strlen(BK_QUEUE_SCHEDULE));
	if (!r.obj)
		return 0;
	if (api_redis_scheduled_backup_decode(r.obj, &r.sb, &e) < 0) {
		log_error("schedule", "cannot decode the RedisScheduledBackup", "key", key, "error",
		          e.msg, (char *)NULL);
		goto out;
	}
	r.decoded = true;
	r.now = clock_wall_ms();
	r.cluster = k8s_informer_get(c->inf[CTL_INF_CLUSTERS], r.sb.meta.namespace,
	                             r.sb.spec.backup.cluster_name);
	if (!r.cluster && c->set.cluster_selector && *c->set.cluster_selector)
		goto out; /* perhaps another controller's cluster */
	if (jsonx_get(r.obj, "metadata.deletionTimestamp"))
		goto out;
	if (cron_parse(r.sb.spec.schedule, &r.cron, &e) < 0) {
		rc = invalid(c, &r, BS_REASON_BAD_SCHEDULE, &e);
		goto out;
	}
	if (tz_load(r.sb.spec.time_zone, &r.tz, &e) < 0) {
		rc = invalid(c, &r, BS_REASON_BAD_TIME_ZONE, &e);
		goto out;
	}
	r.backups = own_backups(c, &r);
	rc = run_once(c, &r, key);
out:
	if (r.decoded)
		api_redis_scheduled_backup_release(&r.sb);
	tz_free(r.tz);
	json_decref(r.backups);
	json_decref(r.cluster);
	json_decref(r.obj);
	return rc;
}

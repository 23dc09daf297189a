/*
 * backup_sched: the RedisScheduledBackup reconciler. The rules are backup_schedule.c's
 * (pure): this file reads the object and its RedisBackups (label
 * redis.io/scheduled-backup=<name>) from the caches, asks bs_decide, creates the
 * RedisBackup of a due run under its deterministic name (bs_backup_name: a controller
 * that restarts between the create and the status write gets AlreadyExists, never a
 * second backup), deletes what the history limits (bs_prune_history) and the retention
 * window (bs_past_retention: the stored objects first, manifest before data, then the
 * RedisBackup; never the newest completed one) say, writes the status when it changed,
 * and requeues itself at the next fire time.
 *
 * Retention works from the RedisBackup objects of this schedule (their status has the
 * keys): the controller deletes only what it made, never other objects under the prefix.
 * Workers only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/backup.h"
#include "controller/backup_schedule.h"
#include "controller/ctl.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/rfc3339.h"

struct run {
	json_t *obj, *backups; /* this schedule's RedisBackups */
	struct api_redis_scheduled_backup sb;
	bool decoded;
	struct cron cron;
	struct tz *tz;
	int64_t now;
};

static int64_t time_at(json_t *obj, const char *path)
{
	int64_t t;

	return rfc3339_parse(ctl_json_str(obj, path), &t) == 0 ? t : 0;
}

static enum api_backup_phase phase_at(json_t *obj)
{
	static const char *const names[] = { NULL, "Pending", "Running", "Completed", "Failed" };
	const char *p = ctl_json_str(obj, "status.phase");

	for (int i = 1; p && i <= API_BACKUP_FAILED; i++)
		if (strcmp(p, names[i]) == 0)
			return (enum api_backup_phase)i;
	return 0;
}

static json_t *own_backups(struct ctl *c, const struct run *r)
{
	json_t *all = k8s_informer_list(c->inf[CTL_INF_BACKUPS]), *out = json_array(), *o;
	size_t i;

	json_array_foreach (all, i, o) {
		const char *l = json_string_value(
		        json_object_get(jsonx_get(o, "metadata.labels"), BK_LABEL_SCHEDULE));
		const char *ns = ctl_json_str(o, "metadata.namespace");

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

	if (ctl_json_contains(json_object_get(r->obj, "status"), status)) {
		json_decref(status);
		return 0;
	}
	body = json_pack("{s:o}", "status", status);
	rc = k8s_patch(c->kube, &k8s_res_redisscheduledbackups, r->sb.meta.namespace,
	               r->sb.meta.name, "status", K8S_PATCH_MERGE, body, NULL, NULL, e);
	json_decref(body);
	return rc;
}

/* The ScheduleValid condition, its transition time kept while its status stays. */
static json_t *condition(const struct run *r, bool ok, const char *reason, const char *msg)
{
	char now[RFC3339_MAX];
	const char *st = ok ? "True" : "False", *was = NULL, *since = NULL;
	json_t *cd;
	size_t i;

	json_array_foreach (jsonx_get(r->obj, "status.conditions"), i, cd) {
		const char *t = ctl_json_str(cd, "type");

		if (t && strcmp(t, BS_CONDITION_SCHEDULE) == 0) {
			was = ctl_json_str(cd, "status");
			since = ctl_json_str(cd, "lastTransitionTime");
		}
	}
	rfc3339_format(r->now, RFC3339_SECONDS, now);
	return json_pack("[{s:s,s:s,s:I,s:s,s:s,s:s}]", "type", BS_CONDITION_SCHEDULE, "status", st,
	                 "observedGeneration", (json_int_t)r->sb.meta.generation,
	                 "lastTransitionTime", was && since && strcmp(was, st) == 0 ? since : now,
	                 "reason", reason, "message", msg);
}

static int invalid(struct ctl *c, const struct run *r, const char *reason, const struct err *e)
{
	struct err we = { 0 };

	return write_status(c, r,
	                    json_pack("{s:o,s:I}", "conditions",
	                              condition(r, false, reason, e->msg), "observedGeneration",
	                              (json_int_t)r->sb.meta.generation),
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
	rc = k8s_create(c->kube, &k8s_res_redisbackups, r->sb.meta.namespace, obj, NULL, NULL, e);
	json_decref(obj);
	if (rc == -EEXIST)
		rc = 0; /* made before a restart: the same run */
	if (rc == 0)
		log_info("schedule", "backup created", "ns", r->sb.meta.namespace, "name",
		         r->sb.meta.name, "backup", name, (char *)NULL);
	return rc;
}

static void delete_backup(struct ctl *c, const struct run *r, json_t *o, bool remote)
{
	struct api_redis_backup b;
	struct err e = { 0 };
	json_t *cluster;
	int rc = 0;

	if (remote && api_redis_backup_decode(o, &b, &e) == 0) {
		cluster = k8s_informer_get(c->inf[CTL_INF_CLUSTERS], r->sb.meta.namespace,
		                           b.spec.cluster_name);
		rc = ctl_backup_delete_objects(c, r->sb.meta.namespace, cluster, &b, &e);
		json_decref(cluster);
		api_redis_backup_release(&b);
	}
	if (rc == 0)
		rc = k8s_delete(c->kube, &k8s_res_redisbackups, r->sb.meta.namespace,
		                ctl_json_str(o, "metadata.name"), NULL, &e);
	if (rc < 0 && rc != -ENOENT)
		log_warn("schedule", "cannot delete a backup", "ns", r->sb.meta.namespace, "backup",
		         ctl_json_str(o, "metadata.name"), "error", e.msg, (char *)NULL);
}

static void prune(struct ctl *c, const struct run *r)
{
	size_t n = json_array_size(r->backups), k, *idx = xcalloc(n + 1, sizeof(*idx));
	struct bs_backup *h = xcalloc(n + 1, sizeof(*h));
	struct bs_artifact *a = xcalloc(n + 1, sizeof(*a));
	bool *gone = xcalloc(n + 1, sizeof(*gone));
	json_t *o;
	size_t i;

	json_array_foreach (r->backups, i, o) {
		enum api_backup_phase p = phase_at(o);

		h[i] = (struct bs_backup){ ctl_json_str(o, "metadata.name"), p,
			                   time_at(o, "metadata.creationTimestamp") };
		a[i].key = h[i].name;
		a[i].completed = p == API_BACKUP_COMPLETED;
		a[i].time_ms = p == API_BACKUP_COMPLETED ? time_at(o, "status.stoppedAt")
		               : p == API_BACKUP_FAILED  ? time_at(o, "status.startedAt")
		                                         : 0; /* running: never */
	}
	k = bs_past_retention(a, n, r->sb.spec.retention_ms, r->now, idx);
	for (size_t j = 0; j < k; j++) {
		gone[idx[j]] = true;
		delete_backup(c, r, json_array_get(r->backups, idx[j]), true);
	}
	k = bs_prune_history(h, n, r->sb.spec.successful_backups_history_limit,
	                     r->sb.spec.failed_backups_history_limit, idx);
	for (size_t j = 0; j < k; j++)
		if (!gone[idx[j]])
			delete_backup(c, r, json_array_get(r->backups, idx[j]), false);
	free(idx);
	free(h);
	free(a);
	free(gone);
}

static bool any_running(const struct run *r)
{
	json_t *o;
	size_t i;

	json_array_foreach (r->backups, i, o) {
		enum api_backup_phase p = phase_at(o);

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
		int64_t t = time_at(o, "status.stoppedAt");

		if (phase_at(o) == API_BACKUP_COMPLETED && t >= t_best) {
			t_best = t;
			best = ctl_json_str(o, "metadata.name");
			when = ctl_json_str(o, "status.stoppedAt");
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
		               time_at(r->obj, "metadata.creationTimestamp"),
		               time_at(r->obj, "status.lastScheduleTime"),
		               r->now,
		               any_running(r) };
	struct bs_decision d;
	struct err e = { 0 };
	char name[BS_NAME_MAX + 1];
	json_t *status;
	int rc;

	if (bs_decide(&in, &d, &e) < 0)
		return invalid(c, r, BS_REASON_NEVER_FIRES, &e);
	status = json_pack(
	        "{s:o,s:I}", "conditions",
	        condition(r, true, BS_REASON_VALID, "the schedule and time zone are valid"),
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
	prune(c, r);
	rc = write_status(c, r, status, &e);
	if (rc == 0 && d.next_ms > r->now)
		(void)wq_add_after(c->q, key, d.next_ms - r->now + 200);
	return rc;
}

int ctl_schedule_reconcile(struct ctl *c, const char *key)
{
	struct run r = { 0 };
	struct err e = { 0 };
	json_t *cluster;
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
	cluster = k8s_informer_get(c->inf[CTL_INF_CLUSTERS], r.sb.meta.namespace,
	                           r.sb.spec.backup.cluster_name);
	json_decref(cluster);
	if (!cluster && c->set.cluster_selector && *c->set.cluster_selector)
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
	json_decref(r.obj);
	return rc;
}

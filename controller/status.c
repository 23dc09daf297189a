/*
 * status: the RedisCluster status the controller shows, computed from a view (pure),
 * and the comparison that decides whether it is worth a write.
 *
 * Only the cluster's own pods count (the view holds no other); the labelled pods that
 * are not its own are listed in foreignPods, such PVCs with the dangling ones
 * (controller/owner.h).
 *
 * Conditions keep their lastTransitionTime while their status stays the same. The
 * volatile fields (offsets, lags, lastSeen) change with every write the users make, so
 * they alone never cause a write: the reconciler asks for them every refresh period.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/acl_config.h"
#include "controller/plan.h"
#include "controller/sentinel.h"
#include "controller/unsupported.h"
#include "lib/jsonx.h"

#define TIME_TO_READY_MAX 16

static const char *const volatile_fields[] = { "replicationOffset", "lagBytes", "lagSeconds",
	                                       "lastSeen", NULL };

static const char *inst_role(const struct ctl_pod *pod, const struct plan_state *s)
{
	if (!ctl_inst_ok(&pod->inst))
		return "unknown";
	if (strcmp(pod->inst.role, API_INST_ROLE_PRIMARY) == 0 ||
	    strcmp(pod->inst.role, API_INST_ROLE_REPLICA) == 0)
		return pod->inst.role;
	return strcmp(pod->name, s->primary) == 0 ? "primary" : "unknown";
}

static json_t *instance_json(const struct ctl_pod *pod, const struct plan_state *s)
{
	const struct ctl_inst *i = &pod->inst;
	json_t *j = json_pack("{s:s,s:s,s:b,s:b}", "name", pod->name, "role", inst_role(pod, s),
	                      "ready", pod->ready, "fenced", i->fenced);
	char t[CTL_TIME_MAX];

	if (i->offset >= 0)
		json_object_set_new(j, "replicationOffset", json_integer(i->offset));
	if (i->lag_bytes >= 0)
		json_object_set_new(j, "lagBytes", json_integer(i->lag_bytes));
	if (i->lag_seconds >= 0)
		json_object_set_new(j, "lagSeconds", json_real((double)i->lag_seconds));
	if (ctl_inst_ok(i) && i->link[0])
		json_object_set_new(j, "link", json_string(i->link));
	if (i->seen) {
		rfc3339_format(i->last_ok_wall, RFC3339_SECONDS, t);
		json_object_set_new(j, "lastSeen", json_string(t));
	}
	if (!ctl_inst_ok(i))
		json_object_set_new(j, "message",
		                    json_string(i->seen ? "not answering" : "no status yet"));
	else if (!pod->ready && i->reason[0])
		json_object_set_new(j, "message", json_string(i->reason));
	return j;
}

static json_t *instances_json(const struct ctl_view *v, const struct plan_state *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->npods; i++)
		json_array_append_new(a, instance_json(&v->pods[i], s));
	return a;
}

/* --- conditions --------------------------------------------------------------------- */

static json_t *old_condition(const struct ctl_view *v, const char *type)
{
	return jsonx_find(jsonx_get(v->obj, "status.conditions"), "type", type);
}

static json_t *condition(const struct ctl_view *v, const char *type, bool status,
                         const char *reason, const char *message)
{
	json_t *old = old_condition(v, type);
	const char *st = status ? "True" : "False", *was = jsonx_get_string(old, "status");
	const char *since = jsonx_get_string(old, "lastTransitionTime");
	char now[CTL_TIME_MAX];

	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, now);
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:I}", "type", type, "status", st, "reason", reason,
	                 "message", message, "lastTransitionTime",
	                 was && since && strcmp(was, st) == 0 ? since : now, "observedGeneration",
	                 (json_int_t)v->rc->meta.generation);
}

struct facts {
	size_t pods, ready;
	bool primary_ok, replication_ok, ready_all;
	bool sentinels_ok;       /* sentinel mode: sentinel_ready; true in the other modes */
	int64_t not_ready_since; /* wall ms */
};

/*
 * Ready: the Pod's condition (the readiness probe, every few seconds) AND the manager's
 * last answer, taken after the last role change, saying ready. The probe alone lags: right
 * after a failover the old primary's pod was still Ready while its server restarted.
 * One failed poll keeps the last answer (no flapping).
 */
static bool instance_ready(const struct ctl_view *v, const struct ctl_pod *pod)
{
	const struct ctl_inst *i = &pod->inst;

	return pod->ready && i->seen && i->ready && i->last_ok_mono > v->roles_epoch_mono;
}

static void gather(const struct ctl_view *v, const struct plan_state *s, struct facts *f)
{
	json_t *old = old_condition(v, "Ready");
	const char *since = jsonx_get_string(old, "lastTransitionTime");
	const char *created = v->rc->meta.creation_timestamp;

	memset(f, 0, sizeof(*f));
	f->replication_ok = true;
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod->deleting)
			continue;
		f->pods++;
		f->ready += instance_ready(v, pod);
		if (strcmp(pod->name, s->primary) == 0)
			f->primary_ok =
			        instance_ready(v, pod) && ctl_inst_is_writable_primary(&pod->inst);
		else if (!ctl_inst_ok(&pod->inst) || strcmp(pod->inst.link, API_INST_LINK_UP) != 0)
			f->replication_ok = false;
	}
	f->sentinels_ok = sentinel_ready(v, s);
	f->ready_all = f->primary_ok && (int64_t)f->ready == v->rc->spec.instances &&
	               f->pods == f->ready && !v->fo.active && f->sentinels_ok;
	if (old &&
	    strcmp(jsonx_get_string(old, "status") ? jsonx_get_string(old, "status") : "",
	           "False") == 0 &&
	    since && rfc3339_parse(since, &f->not_ready_since) == 0)
		return;
	if (!old && created && rfc3339_parse(created, &f->not_ready_since) == 0)
		return;
	f->not_ready_since = v->now_wall_ms;
}

/* The spec fields nothing acts on (controller/unsupported.h); none: no condition. */
static void unsupported_condition(const struct ctl_view *v, json_t *a)
{
	char msg[CTL_UNSUPPORTED_MSG_MAX];

	if (ctl_unsupported_message(v->rc, msg, sizeof(msg)))
		json_array_append_new(
		        a, condition(v, CTL_COND_UNSUPPORTED, true, CTL_REASON_UNSUPPORTED, msg));
}

static json_t *conditions(const struct ctl_view *v, const struct plan_state *s,
                          const struct facts *f, bool *failed)
{
	int64_t limit = v->rc->spec.failed_after.ms > 0 ? v->rc->spec.failed_after.ms : 600000;
	char msg[256];
	json_t *a = json_array();

	*failed = !f->ready_all && v->now_wall_ms - f->not_ready_since >= limit;
	snprintf(msg, sizeof(msg), "%zu of %lld instances ready", f->ready,
	         (long long)v->rc->spec.instances);
	json_array_append_new(a, condition(v, "Ready", f->ready_all,
	                                   f->ready_all ? "AllInstancesReady" : "InstancesNotReady",
	                                   msg));
	json_array_append_new(a, condition(v, "PrimaryAvailable", f->primary_ok,
	                                   f->primary_ok ? "PrimaryServing" : "PrimaryUnavailable",
	                                   s->primary));
	json_array_append_new(a,
	                      condition(v, "ReplicationHealthy", f->replication_ok,
	                                f->replication_ok ? "ReplicasStreaming" : "ReplicaLagging",
	                                f->replication_ok ? "every replica is linked"
	                                                  : "a replica is not linked"));
	json_array_append_new(a, condition(v, "Progressing", s->progressing,
	                                   s->progressing ? "Reconciling" : "Stable",
	                                   s->phase ? s->phase : "nothing to do"));
	if (v->rc->spec.mode == API_MODE_SENTINEL)
		json_array_append_new(
		        a,
		        condition(v, "SentinelsReady", f->sentinels_ok,
		                  f->sentinels_ok ? "QuorumReachable" : "SentinelsNotReady",
		                  f->sentinels_ok ? "every sentinel is ready (SENTINEL CKQUORUM), "
		                                    "names the current primary and knows its "
		                                    "replicas"
		                                  : "a sentinel is missing or not ready, or "
		                                    "they do not name the current primary or "
		                                    "know its replicas yet"));
	if (s->boot.wanted)
		json_array_append_new(a, condition(v, CTL_COND_BOOTSTRAP, s->boot.ok,
		                                   s->boot.reason, s->boot.message));
	unsupported_condition(v, a);
	if (v->acl_config)
		json_array_append_new(
		        a, condition(v, CTL_COND_ACL_CONFIG, v->acl_config_ok,
		                     v->acl_config_ok ? CTL_REASON_ACL_OK : CTL_REASON_ACL_REFUSED,
		                     v->acl_config));
	json_array_append_new(a, condition(v, "Failed", *failed,
	                                   *failed ? "NotReadyTooLong" : "NotFailed",
	                                   *failed ? "not ready for longer than spec.failedAfter"
	                                           : "ready, or not for long"));
	return a;
}

/* Appends the time it took to become ready when Ready turns True. */
static json_t *time_to_ready(const struct ctl_view *v, const struct facts *f)
{
	json_t *old = jsonx_get(v->obj, "status.timeToReadySeconds"),
	       *cond = old_condition(v, "Ready");
	const char *was = jsonx_get_string(cond, "status");
	json_t *a;

	if (!f->ready_all || (was && strcmp(was, "True") == 0))
		return NULL;
	a = json_is_array(old) ? json_deep_copy(old) : json_array();
	json_array_append_new(a, json_real((double)(v->now_wall_ms - f->not_ready_since) / 1000.0));
	while (json_array_size(a) > TIME_TO_READY_MAX)
		json_array_remove(a, 0);
	return a;
}

/* The names of a and then b (either may be NULL), at most PLAN_DANGLING_MAX (the CRD's
 * maxItems of both lists); null when there are none. */
static json_t *names_or_null(json_t *a, json_t *b)
{
	json_t *all = json_array(), *lists[] = { a, b }, *n;
	size_t i;

	for (size_t k = 0; k < 2; k++) {
		json_array_foreach (lists[k], i, n) {
			if (json_array_size(all) < PLAN_DANGLING_MAX)
				json_array_append_new(all, json_copy(n));
		}
	}
	if (json_array_size(all))
		return all;
	json_decref(all);
	return json_null();
}

json_t *ctl_status_build(const struct ctl_view *v, const struct plan_state *s)
{
	struct facts f;
	bool failed;
	json_t *st, *ttr;
	char sel[CTL_NAME_MAX + 32];
	const char *phase;

	gather(v, s, &f);
	snprintf(sel, sizeof(sel), "%s=%s", CTL_LABEL_CLUSTER, v->rc->meta.name);
	st = json_pack("{s:I,s:s,s:I,s:I,s:s,s:o}", "observedGeneration",
	               (json_int_t)v->rc->meta.generation, "engine",
	               vk_engine_name(v->rc->spec.engine ? v->rc->spec.engine : VK_ENGINE_REDIS),
	               "instances", (json_int_t)f.pods, "readyInstances", (json_int_t)f.ready,
	               "selector", sel, "instancesStatus", instances_json(v, s));
	json_object_set_new(st, "conditions", conditions(v, s, &f, &failed));
	phase = s->phase ? s->phase : failed ? "Failed" : f.ready_all ? "Healthy" : "Not ready";
	json_object_set_new(st, "phase", json_string(phase));
	json_object_set_new(st, "phaseReason", json_string(s->phase_reason ? s->phase_reason : ""));
	if ((ttr = time_to_ready(v, &f)))
		json_object_set_new(st, "timeToReadySeconds", ttr);
	/* null removes a list shown earlier (merge patch) and matches an absent one */
	json_object_set_new(st, "danglingPVCs", names_or_null(s->dangling, v->foreign_pvcs));
	json_object_set_new(st, "foreignPods", names_or_null(v->foreign_pods, NULL));
	if (v->rc->spec.mode == API_MODE_SENTINEL)
		json_object_set_new(st, "sentinels", sentinel_status(v));
	return st;
}

static void strip_volatile(json_t *status)
{
	json_t *a = json_object_get(status, "instancesStatus"), *it;
	size_t i;

	json_array_foreach (a, i, it) {
		for (size_t k = 0; volatile_fields[k]; k++)
			json_object_del(it, volatile_fields[k]);
	}
}

/* Instance entries compared without their volatile fields: copies of current's items
 * lose them too, so that a removed lag does not count as a change either way. */
bool ctl_status_changed(json_t *current, json_t *want, bool refresh)
{
	json_t *w, *c;
	bool changed;

	if (!current)
		return true;
	if (refresh)
		return !jsonx_contains(current, want);
	w = json_deep_copy(want);
	c = json_deep_copy(current);
	strip_volatile(w);
	strip_volatile(c);
	changed = !jsonx_contains(c, w);
	json_decref(w);
	json_decref(c);
	return changed;
}

/* The parts of a RedisCluster's metadata a reconcile reads. */
static const char *const meta_read[] = { "generation",        "labels",     "annotations",
	                                 "deletionTimestamp", "finalizers", NULL };

static bool same_member(json_t *a, json_t *b, const char *key)
{
	json_t *x = json_object_get(a, key), *y = json_object_get(b, key);

	return x == y || (x && y && json_equal(x, y));
}

bool ctl_cluster_update_matters(json_t *old, json_t *obj)
{
	json_t *om = json_object_get(old, "metadata"), *nm = json_object_get(obj, "metadata");
	json_t *os = json_object_get(old, "status"), *ns = json_object_get(obj, "status");

	if (!same_member(old, obj, "spec"))
		return true;
	for (size_t i = 0; meta_read[i]; i++)
		if (!same_member(om, nm, meta_read[i]))
			return true;
	if (!os || !ns)
		return os != ns;
	return ctl_status_changed(os, ns, false) || ctl_status_changed(ns, os, false);
}

/*
 * apply: executes a plan (plan.h) against the API server and the instance managers.
 *
 * Actions run in order; a failed non-optional action stops the rest (they assumed it),
 * and the reconcile is retried with backoff. A failed optional action does not stop the
 * rest, but the reconcile is retried with backoff all the same: nothing else may change
 * to bring the cluster back here (a replica whose repointing was refused answers the
 * same on every poll, which queues nothing), and the resync is 30 s away. Before every
 * write the leader flag is checked: a controller that lost its Lease sends nothing more,
 * even mid-plan.
 * Creating something that already exists counts as done (the cache was behind), unless
 * what exists has the cluster's labels but is not its own (controller/owner.h); deleting
 * something already gone counts as done. The plan's status is patched last, best effort.
 *
 * Each API write is checked against the operator's RBAC table (controller/rbac.h) first.
 * Generated Secrets get their contents here, just before they are sent (random
 * passwords; the cluster's TLS material, controller/pki.h), and the copy is wiped right
 * after: the plan itself never holds a secret, and no log line quotes one. Instance
 * POSTs go over HTTPS with the cluster's material to pods that mount it (instclient.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/resources.h"
#include "controller/internal.h"
#include "controller/desired.h"
#include "controller/metrics_cluster.h"
#include "controller/owner.h"
#include "controller/pki.h"
#include "controller/rbac.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/log.h"

#define SWITCHOVER_EXTRA_MS 15000

static void log_action(const struct ctl_view *v, const struct ctl_action *a, int rc,
                       const struct err *e)
{
	const char *what = a->op ? a->op : a->res ? a->res->kind : "status";
	static const char *const kinds[] = { "create",  "patch",    "delete", "status",
		                             "cluster", "instance", "event" };

	if (rc)
		log_warn("apply", "action failed", "ns", v->ns, "name", v->name, "action",
		         kinds[a->kind], "what", what, "object", a->name, "error", e->msg,
		         (char *)NULL);
	else
		log_info("apply", "done", "ns", v->ns, "name", v->name, "action", kinds[a->kind],
		         "what", what, "object", a->name, (char *)NULL);
}

static int fill_password(json_t *obj)
{
	char *pw = ctl_random_password();

	if (!pw)
		return -EIO;
	json_object_set_new(obj, "stringData", json_pack("{s:s}", "password", pw));
	free_secret(pw);
	return 0;
}

/* <cluster>-operator-tls as the cache has it, else as the API server has it (it may have
 * been created a moment ago, by the action before this one). */
static json_t *operator_tls(struct ctl *c, const struct ctl_view *v, struct err *e)
{
	char name[CTL_NAME_MAX + 1];
	json_t *sec;

	desired_name(v->rc, DESIRED_OPERATOR_TLS, name, sizeof(name));
	sec = k8s_informer_get(c->inf[CTL_INF_SECRETS], v->ns, name);
	if (!sec && k8s_get(c->kube, &k8s_res_secrets, v->ns, name, &sec, e) < 0)
		return NULL;
	return sec;
}

static int fill_tls(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                    json_t *obj, struct err *e)
{
	json_t *op;
	int rc;

	if (a->fill_tls == CTL_FILL_TLS_OPERATOR && a->kind == CTL_ACT_CREATE)
		return ctl_pki_fill_operator(obj, v->name, e);
	if (!(op = operator_tls(c, v, e)))
		return e->code ? e->code : -ENOENT;
	if (a->fill_tls == CTL_FILL_TLS_OPERATOR) /* a renewal: CAs kept unless due */
		rc = ctl_pki_renew_operator(obj, op, v->name, clock_wall_ms(), e);
	else
		rc = ctl_pki_fill_instance(obj, op, v->name, e);
	json_decref(op);
	return rc;
}

/*
 * AlreadyExists: done when what exists is the cluster's own (the cache was behind) or is
 * in no cache (unlabelled: the planner does not see it either). One with the cluster's
 * labels that is not its own (controller/owner.h) is left alone and stops the plan: the
 * pod after this PVC would mount it, the steps after this Secret would trust it.
 */
static int exists(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                  struct err *e)
{
	struct k8s_informer *inf = ctl_informer_of(c, a->res);
	json_t *have = inf ? k8s_informer_get(inf, v->ns, a->name) : NULL;
	bool foreign = have && !ctl_owner_is(have, v->rc->meta.uid);

	json_decref(have);
	if (!foreign)
		return 0;
	return err_set(e, -EEXIST,
	               "%s %s/%s exists and is not this cluster's (no controller owner "
	               "reference to it): left alone",
	               a->res->kind, v->ns, a->name);
}

static int do_create(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                     struct err *e)
{
	json_t *obj = json_deep_copy(a->obj);
	int rc = a->fill_password ? fill_password(obj) : 0;

	if (!rc && a->fill_tls)
		rc = fill_tls(c, v, a, obj, e);
	if (!rc)
		rc = k8s_create(c->kube, a->res, v->ns, obj, NULL, NULL, e);
	ctl_pki_wipe(obj); /* the generated password or key material */
	json_decref(obj);
	return rc == -EEXIST ? exists(c, v, a, e) : rc;
}

/* A merge patch; with fill_tls, of the TLS material the applier generates (a renewal). */
static int do_patch(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                    struct err *e)
{
	json_t *obj = json_deep_copy(a->obj);
	int rc = a->fill_tls ? fill_tls(c, v, a, obj, e) : 0;

	if (!rc)
		rc = k8s_patch(c->kube, a->res, v->ns, a->name, NULL, K8S_PATCH_MERGE, obj, NULL,
		               NULL, e);
	ctl_pki_wipe(obj);
	json_decref(obj);
	return rc;
}

static int do_delete(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                     struct err *e)
{
	struct k8s_delete_opts o = { .propagation_policy = "Background" };
	int rc = k8s_delete(c->kube, a->res, v->ns, a->name, &o, e);

	return rc == -ENOENT ? 0 : rc;
}

/* POST to the pod's manager: HTTPS with the cluster's material when the pod mounts it. */
static int post(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                int64_t timeout, json_t **answer, struct err *e)
{
	const struct ctl_pod *pod =
	        ctl_view_pod(v, a->name) ? ctl_view_pod(v, a->name) : ctl_view_sentinel(v, a->name);
	struct ctl_pki_client tls = { 0 };
	bool https = pod && ctl_pki_pod_uses_tls(pod->obj);
	int rc = https ? ctl_instance_tls(c, v->ns, v->name, &tls, e) : 0;

	if (!rc)
		rc = ctl_instance_post(a->ip, a->op, a->obj, timeout, https ? &tls : NULL, answer,
		                       e);
	ctl_pki_client_release(&tls);
	return rc;
}

/* A switchover succeeded: its answer (api_inst_switchover_result) into the metrics. */
static void switchover_done(struct ctl *c, const struct ctl_view *v, json_t *answer)
{
	struct api_inst_switchover_result r = { 0 };
	struct err e = { 0 };
	char *body = answer ? json_dumps(answer, JSON_COMPACT) : NULL;
	int rc = body ? api_inst_switchover_result_decode(body, strlen(body), &r, &e)
	              : err_set(&e, -EPROTO, "no answer");

	free(body);
	atomic_fetch_add(&c->metrics.switchovers, 1);
	ctl_cm_bump(c, v->ns, v->name, CTL_CM_SWITCHOVERS);
	if (rc) {
		log_warn("apply", "switchover done; its answer does not decode", "ns", v->ns,
		         "name", v->name, "error", e.msg, (char *)NULL);
		return;
	}
	ctl_hist_observe(&c->metrics.pause_seconds, r.write_pause_ms / 1000.0);
	log_info("apply", "switchover done", "ns", v->ns, "name", v->name, "answer", r.result,
	         (char *)NULL);
	api_inst_switchover_result_release(&r);
}

static int do_instance(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                       struct err *e)
{
	int64_t timeout = c->set.instance_timeout_ms;
	json_t *answer = NULL;
	int rc;

	if (!a->ip || !*a->ip)
		return err_set(e, -EADDRNOTAVAIL, "pod %s has no IP", a->name);
	if (strcmp(a->op, "switchover") == 0)
		timeout += v->rc->spec.failover.switchover_timeout.ms + SWITCHOVER_EXTRA_MS;
	rc = post(c, v, a, timeout, &answer, e);
	if (!rc && a->metric == CTL_METRIC_SWITCHOVER)
		switchover_done(c, v, answer);
	json_decref(answer);
	return rc;
}

static int do_event(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a)
{
	struct k8s_events_ref ref = { API_GROUP_VERSION, API_REDIS_CLUSTER_KIND, v->ns, v->name,
		                      v->rc->meta.uid };

	atomic_fetch_add(&c->metrics.events, 1);
	log_emit(a->warning ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, "event", a->note, "ns", v->ns,
	         "name", v->name, "reason", a->reason, (char *)NULL);
	return k8s_events_emit(c->events, &ref, a->warning ? K8S_EVENTS_WARNING : K8S_EVENTS_NORMAL,
	                       a->reason, a->reason, "%s", a->note) == -ECANCELED
	               ? -ECANCELED
	               : 0;
}

static int do_status(struct ctl *c, const struct ctl_view *v, json_t *patch, struct err *e)
{
	json_t *body = json_pack("{s:O}", "status", patch);
	int rc = k8s_patch(c->kube, &api_res_redisclusters, v->ns, v->name, "status",
	                   K8S_PATCH_MERGE, body, NULL, NULL, e);

	if (!rc)
		ctl_cm_status_written(c, v->ns, v->name, patch);
	json_decref(body);
	return rc;
}

static int run(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a, struct err *e)
{
	switch (a->kind) {
	case CTL_ACT_CREATE: return do_create(c, v, a, e);
	case CTL_ACT_PATCH: return do_patch(c, v, a, e);
	case CTL_ACT_DELETE: return do_delete(c, v, a, e);
	case CTL_ACT_STATUS: return do_status(c, v, a->obj, e);
	case CTL_ACT_CLUSTER:
		return k8s_patch(c->kube, &api_res_redisclusters, v->ns, v->name, NULL,
		                 K8S_PATCH_MERGE, a->obj, NULL, NULL, e);
	case CTL_ACT_INSTANCE: return do_instance(c, v, a, e);
	case CTL_ACT_EVENT: return do_event(c, v, a);
	}
	return -EINVAL;
}

/* Every API write an action makes is one the operator's ClusterRole grants
 * (controller/rbac.h): a planner change that needs a new permission fails here, by name,
 * in every test, and not only where the controller runs with that ClusterRole. */
static int permitted(const struct ctl_action *a, struct err *e)
{
	static const struct {
		enum k8s_verb verb;
		const char *sub;
	} call[] = {
		[CTL_ACT_CREATE] = { K8S_VERB_CREATE, NULL },
		[CTL_ACT_PATCH] = { K8S_VERB_PATCH, NULL },
		[CTL_ACT_DELETE] = { K8S_VERB_DELETE, NULL },
		[CTL_ACT_STATUS] = { K8S_VERB_PATCH, "status" },
		[CTL_ACT_CLUSTER] = { K8S_VERB_PATCH, NULL },
	};
	const struct k8s_resource *res = a->kind == CTL_ACT_STATUS || a->kind == CTL_ACT_CLUSTER
	                                         ? &api_res_redisclusters
	                                         : a->res;

	if (a->kind == CTL_ACT_INSTANCE || a->kind == CTL_ACT_EVENT)
		return 0; /* not the API server's; Events: lib/k8s/events, in the table too */
	if (res && ctl_rbac_allows(&ctl_rbac_operator, res, call[a->kind].sub, call[a->kind].verb))
		return 0;
	return err_set(e, -EACCES, "%s %s%s%s: not granted to the operator (controller/rbac.c)",
	               k8s_verb_name(call[a->kind].verb), res ? res->plural : "(none)",
	               call[a->kind].sub ? "/" : "", call[a->kind].sub ? call[a->kind].sub : "");
}

static void record(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                   int64_t failover_ms)
{
	char key[K8S_INFORMER_KEY_MAX + 1];

	if (a->new_epoch) {
		snprintf(key, sizeof(key), "%s/%s", v->ns, v->name);
		ctl_memo_epoch(c, key);
		ctl_poller_kick(c, CTL_KICK_ROLES_MS);
	}
	if (a->metric != CTL_METRIC_FAILOVER)
		return;
	atomic_fetch_add(&c->metrics.failovers, 1);
	ctl_cm_bump(c, v->ns, v->name, CTL_CM_FAILOVERS);
	ctl_hist_observe(&c->metrics.failover_seconds, (double)failover_ms / 1000.0);
}

/* A failover's status: the duration measured now, from when it started. */
static int do_failover_status(struct ctl *c, const struct ctl_view *v, const struct ctl_action *a,
                              int64_t *ms, struct err *e)
{
	json_t *patch = json_deep_copy(a->obj);
	json_t *last = json_object_get(patch, "lastFailover");
	int rc;

	*ms = clock_wall_ms() - a->metric_value;
	if (*ms < 0)
		*ms = 0;
	if (last)
		json_object_set_new(last, "durationMs", json_integer(*ms));
	rc = do_status(c, v, patch, e);
	json_decref(patch);
	return rc;
}

/* The action refused with "not yet" by an instance that the plan may simply wait for. */
static bool not_yet(const struct ctl_action *a, int rc)
{
	return a->busy_retry_ms > 0 && (rc == -EBUSY || rc == -EAGAIN);
}

int ctl_apply(struct ctl *c, const struct ctl_view *v, const struct ctl_plan *p,
              int64_t *not_yet_ms)
{
	struct err e = { 0 };
	int64_t fo_ms = 0;
	int rc = 0, optional_rc = 0;
	bool stopped = false;

	*not_yet_ms = 0;
	for (size_t i = 0; i < p->n && !stopped; i++) {
		const struct ctl_action *a = &p->acts[i];
		int arc;

		if (!atomic_load(&c->leading))
			return -ECANCELED;
		err_clear(&e);
		arc = permitted(a, &e);
		if (!arc && a->kind == CTL_ACT_STATUS && a->metric == CTL_METRIC_FAILOVER)
			arc = do_failover_status(c, v, a, &fo_ms, &e);
		else if (!arc)
			arc = run(c, v, a, &e);
		atomic_fetch_add(&c->metrics.actions, 1);
		if (a->kind != CTL_ACT_EVENT)
			log_action(v, a, arc, &e);
		if (!arc) {
			record(c, v, a, fo_ms);
			continue;
		}
		atomic_fetch_add(&c->metrics.action_errors, 1);
		if (a->optional) {
			if (!optional_rc)
				optional_rc = arc;
			continue;
		}
		stopped = true;
		if (not_yet(a, arc))
			*not_yet_ms = a->busy_retry_ms;
		else
			rc = arc;
	}
	if (p->status && atomic_load(&c->leading)) {
		err_clear(&e);
		if (do_status(c, v, p->status, &e) < 0)
			log_warn("apply", "status update failed", "ns", v->ns, "name", v->name,
			         "error", e.msg, (char *)NULL);
	}
	if (*not_yet_ms)
		return 0;
	return rc ? rc : optional_rc;
}

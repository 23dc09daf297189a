/*
 * informers: the controller's caches (lib/k8s/informer), one per kind. RedisClusters
 * are all cached; every child kind only with app.kubernetes.io/managed-by=redis-operator.
 * Handlers map an object to its cluster's work-queue key ("ns/<redis.io/cluster>") and
 * queue it. Labels only select and queue: whether an object is the cluster's is its
 * controller owner reference's to say (owner.h). Pods and PVCs are trimmed to what the
 * controller reads (the keep tables): a pod's spec is never compared, its spec-hash
 * annotation is. Pods and
 * PVCs are indexed by their cluster label, so a reconcile reads its own without a scan.
 * A RedisCluster update that changed only volatile status fields (the controller's own
 * refresh of offsets and lastSeen) queues nothing (ctl_cluster_update_matters).
 * Lease renewals (one a second per cluster) change nothing the planner reads unless the
 * holder changes, so only those updates queue the cluster.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/backup_store.h"
#include "api/resources.h"
#include "controller/backup.h"
#include "controller/internal.h"
#include "controller/plan.h"
#include "lib/jsonx.h"
#include "lib/log.h"

/* The Kubernetes EndpointSlice controller copies a Service's labels onto the slices it
 * makes (those of <name>-replica and <name>-any): only the controller's own are cached. */
#define SELECTOR_OWN_SLICES                                                                        \
	CTL_SELECTOR_MANAGED ",endpointslice.kubernetes.io/managed-by=" CTL_ENDPOINTS_MANAGER

static const struct {
	const struct k8s_resource *res;
	bool managed_only;
	const char *selector; /* instead of CTL_SELECTOR_MANAGED */
	bool all;             /* no selector at all (backups: a user's objects, like clusters) */
} kinds[CTL_INF_COUNT] = {
	[CTL_INF_CLUSTERS] = { &api_res_redisclusters, false },
	[CTL_INF_PODS] = { &k8s_res_pods, true },
	[CTL_INF_PVCS] = { &k8s_res_pvcs, true },
	[CTL_INF_SERVICES] = { &k8s_res_services, true },
	[CTL_INF_SECRETS] = { &k8s_res_secrets, true },
	[CTL_INF_SAS] = { &k8s_res_serviceaccounts, true },
	[CTL_INF_ROLES] = { &k8s_res_roles, true },
	[CTL_INF_ROLEBINDINGS] = { &k8s_res_rolebindings, true },
	[CTL_INF_PDBS] = { &k8s_res_pdbs, true },
	[CTL_INF_NETPOLS] = { &k8s_res_networkpolicies, true },
	[CTL_INF_LEASES] = { &k8s_res_leases, true },
	[CTL_INF_ENDPOINTSLICES] = { &k8s_res_endpointslices, true, SELECTOR_OWN_SLICES },
	[CTL_INF_BACKUPS] = { &api_res_redisbackups, false, NULL, true },
	[CTL_INF_SCHEDULES] = { &api_res_redisscheduledbackups, false, NULL, true },
};

static void enqueue_owner(struct ctl *c, json_t *obj, bool is_cluster)
{
	const char *ns = jsonx_get_string(obj, "metadata.namespace");
	const char *name =
	        is_cluster ? jsonx_get_string(obj, "metadata.name")
	                   : json_string_value(json_object_get(jsonx_get(obj, "metadata.labels"),
	                                                       CTL_LABEL_CLUSTER));
	char key[K8S_INFORMER_KEY_MAX + 1];

	if (!ns || !name)
		return;
	snprintf(key, sizeof(key), "%s/%s", ns, name);
	(void)wq_add(c->q, key);
}

static void on_cluster(void *ctx, json_t *obj)
{
	enqueue_owner(ctx, obj, true);
}

static void on_cluster_update(void *ctx, json_t *old, json_t *obj)
{
	if (ctl_cluster_update_matters(old, obj))
		enqueue_owner(ctx, obj, true);
}

static void on_child(void *ctx, json_t *obj)
{
	enqueue_owner(ctx, obj, false);
}

static void on_child_update(void *ctx, json_t *old, json_t *obj)
{
	(void)old;
	enqueue_owner(ctx, obj, false);
}

/* RedisBackups queue themselves, and their schedule (history, lastSuccessfulBackup). */
static void on_backup(void *ctx, json_t *obj)
{
	const char *ns = jsonx_get_string(obj, "metadata.namespace");
	const char *name = jsonx_get_string(obj, "metadata.name");
	const char *sched = json_string_value(
	        json_object_get(jsonx_get(obj, "metadata.labels"), BK_LABEL_SCHEDULE));
	char key[WQ_KEY_MAX + 1];

	if (!ns || !name)
		return;
	snprintf(key, sizeof(key), BK_QUEUE_BACKUP "%s/%s", ns, name);
	(void)wq_add(((struct ctl *)ctx)->q, key);
	if (!sched)
		return;
	snprintf(key, sizeof(key), BK_QUEUE_SCHEDULE "%s/%s", ns, sched);
	(void)wq_add(((struct ctl *)ctx)->q, key);
}

static void on_backup_update(void *ctx, json_t *old, json_t *obj)
{
	(void)old;
	on_backup(ctx, obj);
}

static void on_schedule(void *ctx, json_t *obj)
{
	const char *ns = jsonx_get_string(obj, "metadata.namespace");
	const char *name = jsonx_get_string(obj, "metadata.name");
	char key[WQ_KEY_MAX + 1];

	if (!ns || !name)
		return;
	snprintf(key, sizeof(key), BK_QUEUE_SCHEDULE "%s/%s", ns, name);
	(void)wq_add(((struct ctl *)ctx)->q, key);
}

static void on_schedule_update(void *ctx, json_t *old, json_t *obj)
{
	(void)old;
	on_schedule(ctx, obj);
}

static const struct {
	void (*add)(void *, json_t *);
	void (*update)(void *, json_t *, json_t *);
} backup_handlers[CTL_INF_COUNT] = {
	[CTL_INF_BACKUPS] = { on_backup, on_backup_update },
	[CTL_INF_SCHEDULES] = { on_schedule, on_schedule_update },
};

static void on_lease_update(void *ctx, json_t *old, json_t *obj)
{
	const char *a = jsonx_get_string(old, "spec.holderIdentity");
	const char *b = jsonx_get_string(obj, "spec.holderIdentity");

	if (strcmp(a ? a : "", b ? b : "") == 0)
		return;
	/* a released Lease is the fast failover signal: look at the instances now */
	ctl_poller_kick(ctx, CTL_KICK_LEASE_MS);
	enqueue_owner(ctx, obj, false);
}

/*
 * What each kind keeps of the parts below metadata (docs/footprint.md; each path here is
 * one the controller reads, test_controller_informers_trim checks them): "part" holds
 * only the members listed; NULL keep drops the part. Metadata stays whole (labels,
 * annotations, owners and uid are read everywhere), less the standard trim and, for
 * PVCs, the PV binder's annotations.
 */
struct keep {
	const char *part;
	const char *const *keep;
};
static const char *const pod_top[] = { "metadata", "spec", "status", NULL };
static const char *const pod_spec[] = { "containers", NULL };
static const char *const container[] = { "env", NULL };
static const char *const pod_status[] = { "phase", "podIP", "conditions", NULL };
static const char *const condition[] = { "type", "status", NULL };
static const char *const pvc_spec[] = { "resources", NULL };
static const char *const pvc_status[] = { "capacity", NULL };
static const char *const pvc_binder[] = { "pv.kubernetes.io/", "volume.beta.kubernetes.io/",
	                                  "volume.kubernetes.io/", NULL };

static const struct keep keep_pod[] = {
	{ "", pod_top }, { "spec", pod_spec }, { "status", pod_status }, { NULL }
};
static const struct keep keep_pvc[] = { { "spec", pvc_spec }, { "status", pvc_status }, { NULL } };

static bool listed(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* Drops every member of part not in keep. */
static void keep_members(json_t *part, const char *const *keep)
{
	const char *k;
	json_t *v;
	void *tmp;

	json_object_foreach_safe (part, tmp, k, v) {
		if (!listed(keep, k))
			json_object_del(part, k);
	}
}

static void keep_parts(json_t *obj, const struct keep *t)
{
	for (; t->part; t++)
		keep_members(*t->part ? json_object_get(obj, t->part) : obj, t->keep);
}

/* Of the containers' env, only the web-identity variables a backup looks for
 * (api_backup_web_identity, controller/backup.c pod_env); no spec when none is set. */
static void trim_pod_env(json_t *obj)
{
	json_t *cts = jsonx_get(obj, "spec.containers"), *ct;
	size_t kept = 0, i, j;

	json_array_foreach (cts, i, ct) {
		json_t *env;

		keep_members(ct, container);
		env = json_object_get(ct, "env");
		for (j = json_array_size(env); j-- > 0;) {
			const char *n = jsonx_get_string(json_array_get(env, j), "name");

			if (n && listed(api_backup_web_identity_vars, n))
				kept++;
			else
				json_array_remove(env, j);
		}
	}
	if (!kept)
		json_object_del(obj, "spec");
}

static void trim_pod(void *ctx, json_t *obj)
{
	json_t *cd;
	size_t i;

	(void)ctx;
	keep_parts(obj, keep_pod);
	trim_pod_env(obj);
	json_array_foreach (jsonx_get(obj, "status.conditions"), i, cd) {
		keep_members(cd, condition);
	}
}

static void trim_pvc(void *ctx, json_t *obj)
{
	json_t *ann = jsonx_get(obj, "metadata.annotations"), *v;
	const char *k;
	void *tmp;

	(void)ctx;
	keep_parts(obj, keep_pvc);
	json_object_foreach_safe (ann, tmp, k, v) {
		for (size_t i = 0; pvc_binder[i]; i++)
			if (strncmp(k, pvc_binder[i], strlen(pvc_binder[i])) == 0) {
				json_object_del(ann, k);
				break;
			}
	}
}

/* What each kind drops before it is stored, after the standard trim (managedFields and
 * the last-applied annotation). NULL: nothing more. */
static void (*const trims[CTL_INF_COUNT])(void *, json_t *) = {
	[CTL_INF_PODS] = trim_pod,
	[CTL_INF_PVCS] = trim_pvc,
};

void ctl_informer_trim(enum ctl_inf i, json_t *obj)
{
	k8s_informer_trim_standard(obj);
	if (i >= 0 && i < CTL_INF_COUNT && trims[i])
		trims[i](NULL, obj);
}

int ctl_informer_kind(const char *plural)
{
	for (int i = 0; i < CTL_INF_COUNT; i++)
		if (strcmp(kinds[i].res->plural, plural) == 0)
			return i;
	return -1;
}

struct k8s_informer *ctl_informer_of(struct ctl *c, const struct k8s_resource *res)
{
	for (int i = 0; i < CTL_INF_COUNT; i++)
		if (kinds[i].res == res)
			return c->inf[i];
	return NULL;
}

static int start_one(struct ctl *c, enum ctl_inf i, struct err *e)
{
	struct k8s_informer_opts o = { 0 };

	o.res = kinds[i].res;
	o.ns = c->set.watch_namespace;
	o.label_selector = !kinds[i].managed_only ? c->set.cluster_selector
	                   : kinds[i].selector    ? kinds[i].selector
	                                          : CTL_SELECTOR_MANAGED;
	o.ctx = c;
	o.on_add = i == CTL_INF_CLUSTERS ? on_cluster : on_child;
	o.on_update = i == CTL_INF_CLUSTERS ? on_cluster_update
	              : i == CTL_INF_LEASES ? on_lease_update
	                                    : on_child_update;
	o.on_delete = i == CTL_INF_CLUSTERS ? on_cluster : on_child;
	if (kinds[i].all) {
		o.label_selector = NULL;
		o.on_add = o.on_delete = backup_handlers[i].add;
		o.on_update = backup_handlers[i].update;
	}
	o.trim = trims[i];
	o.index_label = i == CTL_INF_PODS || i == CTL_INF_PVCS ? CTL_LABEL_CLUSTER : NULL;
	c->inf[i] = k8s_informer_new(c->kube, &o, e);
	if (!c->inf[i])
		return e ? e->code : -EINVAL;
	return k8s_informer_start(c->inf[i], e);
}

int ctl_informers_start(struct ctl *c, struct err *e)
{
	for (int i = 0; i < CTL_INF_COUNT; i++) {
		int rc = start_one(c, (enum ctl_inf)i, e);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static void *stop_one(void *arg)
{
	k8s_informer_stop(arg);
	return NULL;
}

/* Each stop waits up to a second for its watch to notice: stop them all at once. */
void ctl_informers_stop(struct ctl *c)
{
	pthread_t t[CTL_INF_COUNT];
	bool started[CTL_INF_COUNT] = { false };

	for (int i = 0; i < CTL_INF_COUNT; i++)
		started[i] = c->inf[i] && pthread_create(&t[i], NULL, stop_one, c->inf[i]) == 0;
	for (int i = 0; i < CTL_INF_COUNT; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		k8s_informer_free(c->inf[i]);
		c->inf[i] = NULL;
	}
}

int ctl_informers_wait(struct ctl *c, int64_t timeout_ms)
{
	for (int i = 0; i < CTL_INF_COUNT; i++) {
		if (k8s_informer_wait_synced(c->inf[i], timeout_ms) < 0) {
			log_error("informers", "cache not synced", "kind", kinds[i].res->plural,
			          (char *)NULL);
			return -ETIMEDOUT;
		}
	}
	atomic_store(&c->synced, true);
	return 0;
}

void ctl_enqueue_all(struct ctl *c)
{
	json_t *all = k8s_informer_list(c->inf[CTL_INF_CLUSTERS]), *obj;
	size_t i;

	json_array_foreach (all, i, obj) {
		enqueue_owner(c, obj, true);
	}
	json_decref(all);
	all = k8s_informer_list(c->inf[CTL_INF_BACKUPS]);
	json_array_foreach (all, i, obj) {
		on_backup(c, obj);
	}
	json_decref(all);
	all = k8s_informer_list(c->inf[CTL_INF_SCHEDULES]);
	json_array_foreach (all, i, obj) {
		on_schedule(c, obj);
	}
	json_decref(all);
}

/*
 * rbac: the tables of rbac.h, and rules built from them.
 *
 * Each grant says who needs it. "pods' Role" marks a permission the controller holds
 * only to hand it to the pods (see rbac.h: no escalate). Owner references with
 * blockOwnerDeletion (desired_owner_ref, on every child) need update on the owner's
 * finalizers where the OwnerReferencesPermissionEnforcement admission plugin runs.
 */
#include "controller/rbac.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "controller/desired.h"

#define GET    CTL_RBAC_VERB(K8S_VERB_GET)
#define LIST   CTL_RBAC_VERB(K8S_VERB_LIST)
#define WATCH  CTL_RBAC_VERB(K8S_VERB_WATCH)
#define CREATE CTL_RBAC_VERB(K8S_VERB_CREATE)
#define UPDATE CTL_RBAC_VERB(K8S_VERB_UPDATE)
#define PATCH  CTL_RBAC_VERB(K8S_VERB_PATCH)
#define DELETE CTL_RBAC_VERB(K8S_VERB_DELETE)
#define CACHED (LIST | WATCH) /* an informer (informers.c) */

static const struct ctl_rbac_grant operator_grants[] = {
	{ &api_res_redisclusters, NULL, GET | CACHED | PATCH, CTL_RBAC_ANY,
	  "cached; patch: handled annotations removed (apply.c); get: pods' Role" },
	{ &api_res_redisclusters, "status", PATCH, CTL_RBAC_ANY, "the status (apply.c)" },
	{ &api_res_redisclusters, "finalizers", UPDATE, CTL_RBAC_ANY,
	  "owner references with blockOwnerDeletion (desired_owner_ref)" },
	{ &api_res_redisbackups, NULL, CACHED | CREATE | PATCH | DELETE, CTL_RBAC_ANY,
	  "cached; create, delete: schedules and their history (backup_sched.c); patch: "
	  "finalizer, attempt (backup.c)" },
	{ &api_res_redisbackups, "status", PATCH, CTL_RBAC_ANY, "the status (backup.c)" },
	{ &api_res_redisscheduledbackups, NULL, CACHED, CTL_RBAC_ANY, "cached (backup_sched.c)" },
	{ &api_res_redisscheduledbackups, "status", PATCH, CTL_RBAC_ANY,
	  "the status (backup_sched.c)" },
	{ &k8s_res_pods, NULL, GET | CACHED | CREATE | PATCH | DELETE, CTL_RBAC_ANY,
	  "data pods (plan.c: created, role labels, deleted); get: pods' Role" },
	{ &k8s_res_pvcs, NULL, CACHED | CREATE | PATCH | DELETE, CTL_RBAC_ANY,
	  "data PVCs (plan.c: patch grows them, delete on scale-down)" },
	{ &k8s_res_services, NULL, CACHED | CREATE | PATCH, CTL_RBAC_ANY,
	  "<name>-leader, -replica, -any (plan.c)" },
	{ &k8s_res_secrets, NULL, GET | CACHED | CREATE | PATCH, CTL_RBAC_ANY,
	  "generated and connection Secrets (plan.c); get: spec.authSecret (reconcile.c), "
	  "<name>-operator-tls before the cache has it (apply.c)" },
	{ &k8s_res_serviceaccounts, NULL, CACHED | CREATE | PATCH, CTL_RBAC_ANY,
	  "the pods' ServiceAccount (plan.c)" },
	{ &k8s_res_roles, NULL, CACHED | CREATE | PATCH, CTL_RBAC_ANY, "the pods' Role (plan.c)" },
	{ &k8s_res_rolebindings, NULL, CACHED | CREATE | PATCH, CTL_RBAC_ANY,
	  "the pods' RoleBinding (plan.c)" },
	{ &k8s_res_pdbs, NULL, CACHED | CREATE | PATCH | DELETE, CTL_RBAC_ANY,
	  "<name>-primary, -replica; deleted below 2 or 3 instances (plan.c)" },
	{ &k8s_res_networkpolicies, NULL, CACHED | CREATE | PATCH | DELETE, CTL_RBAC_ANY,
	  "spec.networkPolicy; deleted when disabled (plan.c)" },
	{ &k8s_res_leases, NULL, GET | CACHED | CREATE | UPDATE, CTL_RBAC_ANY,
	  "cached; create: <name>-primary (plan.c); get, update: pods' Role" },
	{ &k8s_res_events, NULL, CREATE | PATCH, CTL_RBAC_ANY,
	  "Events and their series (lib/k8s/events)" },
	{ &k8s_res_endpointslices, NULL, CACHED | CREATE | PATCH, CTL_RBAC_ANY,
	  "the <name>-leader EndpointSlice (plan.c)" },
};

static const struct ctl_rbac_grant leader_grants[] = {
	{ &k8s_res_leases, NULL, GET | CREATE | UPDATE, CTL_RBAC_ANY,
	  "leader election (lib/k8s/lease, controller/main.c)" },
};

static const struct ctl_rbac_grant pods_grants[] = {
	{ &api_res_redisclusters, NULL, GET, CTL_RBAC_CLUSTER,
	  "the manager reads its RedisCluster (instance/kube.c)" },
	{ &k8s_res_leases, NULL, GET | UPDATE, CTL_RBAC_LEASE,
	  "take, renew, release the primary Lease (lib/k8s/lease, instance/lease.c)" },
	{ &k8s_res_leases, NULL, CREATE, CTL_RBAC_ANY,
	  "recreate the primary Lease when someone deleted it (create takes no names)" },
	{ &k8s_res_pods, NULL, GET | LIST, CTL_RBAC_ANY,
	  "peers' addresses (get) and other pods at boot (list) (instance/kube.c)" },
};

#define NGRANTS(g) (sizeof(g) / sizeof((g)[0]))

const struct ctl_rbac_role ctl_rbac_operator = { "ClusterRole redis-operator", operator_grants,
	                                         NGRANTS(operator_grants) };
const struct ctl_rbac_role ctl_rbac_leader = { "Role redis-operator-leader-election", leader_grants,
	                                       NGRANTS(leader_grants) };
const struct ctl_rbac_role ctl_rbac_pods = { "the pods' Role <cluster>", pods_grants,
	                                     NGRANTS(pods_grants) };

static bool same_sub(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

bool ctl_rbac_allows(const struct ctl_rbac_role *role, const struct k8s_resource *res,
                     const char *sub, enum k8s_verb verb)
{
	for (size_t i = 0; i < role->n; i++) {
		const struct ctl_rbac_grant *g = &role->grants[i];

		if (g->res == res && same_sub(g->sub, sub) && (g->verbs & CTL_RBAC_VERB(verb)))
			return true;
	}
	return false;
}

static json_t *names_of(const struct ctl_rbac_grant *g, const struct api_redis_cluster *rc)
{
	char name[CTL_NAME_MAX + 1];

	if (g->names == CTL_RBAC_ANY)
		return NULL;
	if (g->names == CTL_RBAC_CLUSTER)
		return json_pack("[s]", rc->meta.name);
	desired_name(rc, "-primary", name, sizeof(name));
	return json_pack("[s]", name);
}

static json_t *rule(const struct ctl_rbac_grant *g, const struct api_redis_cluster *rc)
{
	json_t *verbs = json_array(), *names = names_of(g, rc), *r;
	char resource[128];

	snprintf(resource, sizeof(resource), "%s%s%s", g->res->plural, g->sub ? "/" : "",
	         g->sub ? g->sub : "");
	for (int v = 0; v < K8S_VERB_COUNT; v++)
		if (g->verbs & CTL_RBAC_VERB(v))
			json_array_append_new(verbs, json_string(k8s_verb_name((enum k8s_verb)v)));
	r = json_pack("{s:[s],s:[s],s:o}", "apiGroups", g->res->group, "resources", resource,
	              "verbs", verbs);
	if (names)
		json_object_set_new(r, "resourceNames", names);
	return r;
}

json_t *ctl_rbac_rules(const struct ctl_rbac_role *role, const struct api_redis_cluster *rc)
{
	json_t *rules = json_array();

	for (size_t i = 0; i < role->n; i++) {
		assert(rc || role->grants[i].names == CTL_RBAC_ANY);
		json_array_append_new(rules, rule(&role->grants[i], rc));
	}
	return rules;
}

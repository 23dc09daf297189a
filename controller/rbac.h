/*
 * rbac: every permission the operator holds or hands out, as data: the one source of
 * truth for the three roles.
 *
 *   ctl_rbac_operator  ClusterRole redis-operator (config/rbac/role.yaml): what the
 *                      controller calls, plus what the pods' Role grants (below)
 *   ctl_rbac_leader    Role redis-operator-leader-election in the operator's namespace
 *                      (config/rbac/leader_election_role.yaml): leader election
 *   ctl_rbac_pods      Role <cluster> for each cluster's pods (desired_role builds its
 *                      rules from it): what the instance manager calls
 *
 * A grant is a resource (a k8s_resource and an optional subresource), a set of verbs and,
 * for the pods' Role, which names it is limited to. The API server lets the controller
 * create or update a Role only when it holds every permission the Role grants (it has
 * neither `escalate` nor `bind`): so ctl_rbac_operator holds every grant of
 * ctl_rbac_pods, each marked as such in its reason.
 *
 * test_controller_rbac keeps the tables honest in both directions: config/rbac must
 * grant exactly what the tables say, and the tables exactly what the code calls (the
 * call sites of the k8s client, the planner's actions, the informers' kinds, scanned from
 * the sources): a grant nothing uses, or a call nothing grants, fails the test. The
 * applier checks every action against ctl_rbac_operator before sending it.
 *
 * Constant tables and pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_RBAC_H
#define REDIS_OPERATOR_CONTROLLER_RBAC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/rediscluster.h"
#include "api/resources.h"
#include "lib/k8s/client.h"
#include "lib/k8s/path.h"

#define CTL_RBAC_VERB(v) (1u << (v)) /* v: an enum k8s_verb */

/* Which objects a grant of the pods' Role is limited to (resourceNames). */
enum ctl_rbac_names {
	CTL_RBAC_ANY,     /* every object of the kind in the namespace */
	CTL_RBAC_CLUSTER, /* the RedisCluster itself: <cluster> */
	CTL_RBAC_LEASE,   /* the primary Lease: <cluster>-primary */
};

struct ctl_rbac_grant {
	const struct k8s_resource *res;
	const char *sub; /* subresource ("status", "finalizers"), or NULL */
	unsigned verbs;  /* CTL_RBAC_VERB(K8S_VERB_GET) | ... */
	enum ctl_rbac_names names;
	const char *why; /* who calls it, for readers of the table */
};

struct ctl_rbac_role {
	const char *name; /* for messages: "ClusterRole redis-operator" */
	const struct ctl_rbac_grant *grants;
	size_t n;
};

extern const struct ctl_rbac_role ctl_rbac_operator;
extern const struct ctl_rbac_role ctl_rbac_leader;
extern const struct ctl_rbac_role ctl_rbac_pods;

/* True when a grant of role covers verb on res (and sub, NULL for none), whatever names
 * it is limited to. */
bool ctl_rbac_allows(const struct ctl_rbac_role *role, const struct k8s_resource *res,
                     const char *sub, enum k8s_verb verb);

/*
 * The rules of role as a Role or ClusterRole lists them (a new array): one rule per
 * grant, in the table's order, verbs in enum k8s_verb order, resourceNames from rc for
 * grants limited to names (rc may be NULL only when no grant is).
 */
json_t *ctl_rbac_rules(const struct ctl_rbac_role *role, const struct api_redis_cluster *rc);

#endif

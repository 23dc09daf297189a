/*
 * unsupported: the table of every spec field (see unsupported.h) and the report built
 * from it. The table is in the CRD's order; a field's decision lives here and nowhere
 * else (docs/USER-GUIDE.md's field reference says the same in prose).
 *
 * Evidence names a test that exists today (test_controller_unsupported checks that the
 * file exists and holds that test); the golden of test_controller_desired renders
 * test/data/controller/cluster-full.json, whose fields it lists, into every object.
 */
#include "controller/unsupported.h"

#include <stdio.h>
#include <string.h>

#include "lib/jsonx.h"

#define CHECKS    "test/integration/controller/checks.sh: "
#define DESIRED   "test/unit/test_controller_desired.c: "
#define PLAN      "test/unit/test_controller_plan.c: "
#define SELF      "test/unit/test_controller_unsupported.c: "
#define INST_SPEC "test/unit/test_instance_spec.c: full"
#define SENTINEL  "test/integration/controller/sentinel_checks.sh: "
#define NOT_CLUSTER                                                                                \
	"cluster mode only, and mode: cluster (Redis Cluster) is not implemented by this "         \
	"controller"

#define ACTED(p, t)                                                                                \
	{                                                                                          \
		.path = (p), .verdict = CTL_FIELD_ACTED, .text = (t)                               \
	}
#define ACTED_V(p, v, t)                                                                           \
	{                                                                                          \
		.path = (p), .value = (v), .verdict = CTL_FIELD_ACTED, .text = (t)                 \
	}
#define UNSUP(p, why, f)                                                                           \
	{                                                                                          \
		.path = (p), .verdict = CTL_FIELD_UNSUPPORTED, .text = (why), .in_effect = (f)     \
	}
#define UNSUP_V(p, v, why, f)                                                                      \
	{                                                                                          \
		.path = (p), .value = (v), .verdict = CTL_FIELD_UNSUPPORTED, .text = (why),        \
		.in_effect = (f)                                                                   \
	}

/* --- when an unsupported field is in effect ------------------------------------------ */

static bool cluster_mode(const struct api_redis_cluster *rc)
{
	return rc->spec.mode == API_MODE_CLUSTER;
}

static bool replica_mode_on(const struct api_redis_cluster *rc)
{
	return rc->spec.replica_mode.set &&
	       (rc->spec.replica_mode.enabled || rc->spec.replica_mode.promote);
}

static bool max_sync_above_min(const struct api_redis_cluster *rc)
{
	return rc->spec.max_sync_replicas > rc->spec.min_sync_replicas;
}

static bool isolation_off(const struct api_redis_cluster *rc)
{
	return rc->spec.primary_isolation.set && !rc->spec.primary_isolation.enabled;
}

static bool maintenance_on(const struct api_redis_cluster *rc)
{
	return rc->spec.node_maintenance_window.set && rc->spec.node_maintenance_window.in_progress;
}

static bool exposure_on(const struct api_redis_cluster *rc)
{
	return rc->spec.exposure.set && rc->spec.exposure.enabled;
}

/* --- the table ------------------------------------------------------------------------ */

const struct ctl_field ctl_fields[] = {
	ACTED("instances", CHECKS "t_scale"),
	ACTED_V("mode", "standalone", CHECKS "t_three"),
	ACTED_V("mode", "sentinel", SENTINEL "t_sentinel_failover"), /* e2e ONLY=sentinel */
	UNSUP_V("mode", "cluster",
	        "Redis Cluster is not implemented: no pod is created (phase Unsupported)",
	        cluster_mode),
	UNSUP("shards", NOT_CLUSTER, NULL),
	UNSUP("replicasPerShard", NOT_CLUSTER, NULL),
	ACTED("imageName", DESIRED "golden"),
	ACTED("engine", INST_SPEC), /* the manager picks the server binary */
	ACTED("primaryUpdateStrategy", CHECKS "t_supervised"),
	ACTED("primaryUpdateMethod", PLAN "rolling update: method restart deletes the primary"),
	ACTED("storage.type", CHECKS "t_emptydir"),
	ACTED("storage.size", CHECKS "t_grow"),
	ACTED("storage.storageClassName", DESIRED "golden"),
	ACTED("storage.pvcRetention", CHECKS "t_retain"),
	ACTED("memory.maxMemory", CHECKS "t_live"),
	ACTED("memory.maxMemoryPercent", DESIRED "golden"),
	ACTED("memory.maxMemoryPolicy", DESIRED "golden"),
	ACTED("redis", CHECKS "t_rolling"),
	ACTED("resources", DESIRED "golden"),
	ACTED("authSecret", DESIRED "golden"),
	ACTED("users", DESIRED "golden"),
	ACTED("tlsSecret", DESIRED "golden"),
	ACTED("caSecret", DESIRED "golden"),
	ACTED("tlsClientAuth", "test/integration/controller/tls_checks.sh: t_tls_client_auth"),
	ACTED("connectionSecret", CHECKS "t_password"),
	ACTED("backupCredentialsSecret",
	      "test/integration/controller/backup_checks.sh: t_backup_s3"),
	ACTED("aclConfigSecret", "test/integration/controller/acl_checks.sh: t_acl_config"),
	ACTED("bootstrap", "test/integration/controller/bootstrap_checks.sh: t_bootstrap_azure"),
	UNSUP("replicaMode",
	      "replica clusters are not implemented: this cluster is an independent writable "
	      "primary, not a replica of the source",
	      replica_mode_on),
	ACTED("minSyncReplicas", DESIRED "golden"),
	UNSUP("maxSyncReplicas",
	      "min-replicas-to-write stays at spec.minSyncReplicas: raising it toward "
	      "maxSyncReplicas while more replicas are healthy is not implemented",
	      max_sync_above_min),
	ACTED("failover.leaseDuration", INST_SPEC),
	ACTED("failover.renewDeadline", INST_SPEC),
	ACTED("failover.renewPeriod", INST_SPEC),
	ACTED("failover.delay", PLAN "failover delay: detected, not yet acted on"),
	ACTED("failover.switchoverTimeout", INST_SPEC),
	UNSUP_V("primaryIsolation.enabled", "false",
	        "the primary's Lease self-fence cannot be turned off: it is what makes a failover "
	        "safe (DESIGN.md §4)",
	        isolation_off),
	ACTED("primaryIsolation.apiServerTimeout",
	      "test/integration/instance/checks.sh: lease_deadline"),
	UNSUP("primaryIsolation.peerTimeout",
	      "the self-fence consults no peer: a primary that cannot renew its Lease stops "
	      "writes even when its peers answer",
	      NULL),
	ACTED("sentinel", SENTINEL "t_sentinel_create"),
	ACTED("enablePodDisruptionBudget", PLAN "changed service and PDB are patched"),
	UNSUP("nodeMaintenanceWindow",
	      "node maintenance is not handled: the PDBs are not relaxed and an instance on a "
	      "drained node is not moved elsewhere (reusePVC has no effect)",
	      maintenance_on),
	ACTED("nodeSelector", DESIRED "golden"),
	ACTED("affinity", SELF "pod_carries_scheduling_fields"),
	ACTED("tolerations", DESIRED "golden"),
	ACTED("topologySpreadConstraints", SELF "pod_carries_scheduling_fields"),
	ACTED("priorityClassName", DESIRED "golden"),
	ACTED("podTemplate", DESIRED "golden"),
	ACTED("networkPolicy", DESIRED "golden"),
	UNSUP("exposure",
	      "Traefik exposure is not implemented: no IngressRouteTCP or MiddlewareTCP is "
	      "created, so nothing outside Kubernetes reaches the cluster",
	      exposure_on),
	ACTED("failedAfter", PLAN "status_failed_after"),
};

const size_t ctl_n_fields = sizeof(ctl_fields) / sizeof(ctl_fields[0]);

/* --- the report ------------------------------------------------------------------------ */

static bool in_effect(const struct ctl_field *f, const struct api_redis_cluster *rc)
{
	char path[128];
	json_t *v;

	if (f->verdict != CTL_FIELD_UNSUPPORTED)
		return false;
	if (f->in_effect)
		return f->in_effect(rc);
	snprintf(path, sizeof(path), "spec.%s", f->path);
	v = jsonx_get(rc->json, path);
	return v && !json_is_null(v);
}

/* Appends s to out (used bytes *len of size) only when all of it fits. */
static void append_whole(char *out, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > size)
		return;
	memcpy(out + *len, s, n + 1);
	*len += n;
}

/* "spec.PATH[: VALUE]" of a row. */
static void field_name(const struct ctl_field *f, char *out, size_t size)
{
	snprintf(out, size, "spec.%s%s%s", f->path, f->value ? ": " : "", f->value ? f->value : "");
}

size_t ctl_unsupported_message(const struct api_redis_cluster *rc, char *out, size_t size)
{
	char one[512], name[160];
	size_t n = 0, len = 0;

	if (size)
		out[0] = '\0';
	for (size_t i = 0; i < ctl_n_fields; i++) {
		if (!in_effect(&ctl_fields[i], rc))
			continue;
		field_name(&ctl_fields[i], name, sizeof(name));
		snprintf(one, sizeof(one), "%s%s: %s", len ? "; " : "", name, ctl_fields[i].text);
		append_whole(out, size, &len, one);
		n++;
	}
	return n;
}

/* The condition CTL_COND_UNSUPPORTED the cached status shows, or NULL. */
static json_t *shown(const struct ctl_view *v)
{
	return jsonx_find(jsonx_get(v->obj, "status.conditions"), "type", CTL_COND_UNSUPPORTED);
}

void ctl_unsupported_event(const struct ctl_view *v, struct ctl_plan *p)
{
	char msg[CTL_UNSUPPORTED_MSG_MAX], names[768], name[160];
	json_t *old = shown(v);
	const char *was = jsonx_get_string(old, "message"), *st = jsonx_get_string(old, "status");
	size_t len = 0;

	if (!ctl_unsupported_message(v->rc, msg, sizeof(msg)))
		return;
	if (was && st && strcmp(was, msg) == 0 && strcmp(st, "True") == 0)
		return;
	names[0] = '\0';
	for (size_t i = 0; i < ctl_n_fields; i++) {
		if (!in_effect(&ctl_fields[i], v->rc))
			continue;
		field_name(&ctl_fields[i], name, sizeof(name));
		if (len + strlen(name) + 3 > sizeof(names))
			break; /* the condition names them all */
		if (len)
			append_whole(names, sizeof(names), &len, ", ");
		append_whole(names, sizeof(names), &len, name);
	}
	ctl_plan_event(p, true, CTL_REASON_UNSUPPORTED,
	               "not implemented, accepted but not acted on: %s (condition %s says why)",
	               names, CTL_COND_UNSUPPORTED);
}

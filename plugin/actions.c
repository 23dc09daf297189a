/*
 * actions: the verbs that ask the controller for something, each through a way it
 * already honours (controller/view.h CTL_ANN_*, controller/README.md "Other annotations
 * and operations"): a merge patch of one annotation or field of the RedisCluster, or a
 * new RedisBackup. None waits for the result; `kubectl redis status` shows it. The
 * annotation names are written here once (the plugin may not include controller/).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/resources.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/rfc3339.h"
#include "plugin/plugin.h"

#define ANN_SWITCHOVER "redis.io/switchover-to"
#define ANN_APPROVE    "redis.io/approve-primary-update"
#define ANN_HIBERNATE  "redis.io/hibernation"
#define ANN_RESTARTED  "kubectl.kubernetes.io/restartedAt" /* as `kubectl rollout restart` */
#define ANN_RESTART    "redis.io/restart-instance"         /* controller/restart.h */
#define ANN_RELOAD     "redis.io/reload"                   /* controller/reload.h */
#define LABEL_CLUSTER  "redis.io/cluster"

/* Merge-patches the cluster's metadata.annotations[key] = value (NULL removes it). */
static int annotate(struct plugin_ctx *ctx, const char *name, const char *key, const char *value,
                    struct err *e)
{
	json_t *p = json_pack("{s:{s:{s:o}}}", "metadata", "annotations", key,
	                      value ? json_string(value) : json_null());
	int rc = k8s_patch(ctx->client, &api_res_redisclusters, ctx->ns, name, NULL,
	                   K8S_PATCH_MERGE, p, NULL, NULL, e);

	json_decref(p);
	return rc;
}

/* POD must be a data pod of cluster NAME. */
static int check_member(struct plugin_ctx *ctx, const char *name, const char *pod, struct err *e)
{
	json_t *obj = NULL;
	const char *owner;
	int rc = k8s_get(ctx->client, &k8s_res_pods, ctx->ns, pod, &obj, e);

	if (rc)
		return rc;
	owner = jsonx_get_string(obj, "metadata.labels[\"" LABEL_CLUSTER "\"]");
	if (!owner || strcmp(owner, name) != 0)
		rc = err_set(e, -EINVAL, "pod %s/%s is not an instance of %s (label %s=%s)",
		             ctx->ns, pod, name, LABEL_CLUSTER, owner ? owner : "(none)");
	json_decref(obj);
	return rc;
}

int plugin_switchover(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	const char *target = a->npos > 1 ? a->pos[1] : "auto";
	int rc = 0;

	if (a->npos > 1)
		rc = check_member(ctx, a->pos[0], target, e);
	if (!rc)
		rc = annotate(ctx, a->pos[0], ANN_SWITCHOVER, target, e);
	if (!rc)
		printf("switchover of %s/%s to %s requested (%s=%s)\n", ctx->ns, a->pos[0], target,
		       ANN_SWITCHOVER, target);
	return rc;
}

int plugin_promote(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	return plugin_switchover(ctx, a, e);
}

int plugin_hibernate(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	const char *v = a->pos[1];
	int rc;

	if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0)
		return err_set(e, -EINVAL, "hibernate: \"%s\": expected on or off", v);
	/* off removes the annotation: the controller wakes a cluster that has none */
	rc = annotate(ctx, a->pos[0], ANN_HIBERNATE, strcmp(v, "on") == 0 ? "on" : NULL, e);
	if (!rc)
		printf("hibernation of %s/%s: %s\n", ctx->ns, a->pos[0], v);
	return rc;
}

int plugin_approve(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	int rc = annotate(ctx, a->pos[0], ANN_APPROVE, "true", e);

	if (!rc)
		printf("primary update of %s/%s approved (%s=true)\n", ctx->ns, a->pos[0],
		       ANN_APPROVE);
	return rc;
}

/*
 * One instance (controller/restart.h): refused here while a failover or switchover is in
 * flight (status.failover) or another instance's restart is pending, since the
 * controller would only start it afterwards.
 */
static int restart_one(struct plugin_ctx *ctx, const char *name, const char *pod, struct err *e)
{
	json_t *rc_obj = NULL;
	const char *phase, *pending;
	int rc = check_member(ctx, name, pod, e);

	if (rc || (rc = k8s_get(ctx->client, &api_res_redisclusters, ctx->ns, name, &rc_obj, e)))
		return rc;
	phase = jsonx_get_string(rc_obj, "status.failover.phase");
	pending = jsonx_get_string(rc_obj, "metadata.annotations[\"" ANN_RESTART "\"]");
	if (phase)
		rc = err_set(e, -EBUSY,
		             "%s/%s is in the middle of a failover or switchover (status.failover "
		             "phase %s): try again once it is over",
		             ctx->ns, name, phase);
	else if (pending && strcmp(pending, pod) != 0)
		rc = err_set(e, -EBUSY, "the restart of %s is still pending (%s): one at a time",
		             pending, ANN_RESTART);
	json_decref(rc_obj);
	if (!rc)
		rc = annotate(ctx, name, ANN_RESTART, pod, e);
	if (!rc)
		printf("restart of %s/%s requested (%s=%s)\n", ctx->ns, pod, ANN_RESTART, pod);
	return rc;
}

/* A change of spec.podTemplate.metadata.annotations is a restart-tier input
 * (controller/desired_pod.c): the controller rolls the pods, replicas first. */
int plugin_restart(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	char now[RFC3339_MAX];
	json_t *p;
	int rc;

	if (a->npos > 1)
		return restart_one(ctx, a->pos[0], a->pos[1], e);

	rfc3339_format(clock_wall_ms(), RFC3339_SECONDS, now);
	p = json_pack("{s:{s:{s:{s:{s:s}}}}}", "spec", "podTemplate", "metadata", "annotations",
	              ANN_RESTARTED, now);
	rc = k8s_patch(ctx->client, &api_res_redisclusters, ctx->ns, a->pos[0], NULL,
	               K8S_PATCH_MERGE, p, NULL, NULL, e);
	json_decref(p);
	if (!rc)
		printf("rolling restart of %s/%s requested "
		       "(spec.podTemplate.metadata.annotations.%s=%s)\n",
		       ctx->ns, a->pos[0], ANN_RESTARTED, now);
	return rc;
}

/* A new value each time (the time to the millisecond): the controller reloads every
 * instance once and echoes it in status.lastReload (controller/reload.h). */
int plugin_reload(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	char now[RFC3339_MAX];
	int rc;

	rfc3339_format(clock_wall_ms(), RFC3339_MILLIS, now);
	rc = annotate(ctx, a->pos[0], ANN_RELOAD, now, e);
	if (!rc)
		printf("reload of %s/%s requested (%s=%s); done when status.lastReload says so\n",
		       ctx->ns, a->pos[0], ANN_RELOAD, now);
	return rc;
}

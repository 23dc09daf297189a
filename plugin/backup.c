/*
 * backup: `kubectl redis backup NAME [--name B]` creates a RedisBackup of the cluster.
 * A RedisCluster names no backup destination (docs/backup.md), so the new backup takes
 * the destination, method, target and deletionPolicy of the cluster's most recent
 * RedisBackup (by
 * creationTimestamp); with none the verb says how to create the first one. The name
 * defaults to NAME-YYYYMMDDHHMMSS (UTC).
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

/* The newest of items whose spec.clusterName is cluster (borrowed), or NULL. */
static json_t *newest_of(json_t *items, const char *cluster)
{
	json_t *best = NULL, *it;
	const char *ts, *bts = "";
	size_t i;

	json_array_foreach (items, i, it) {
		const char *cn = jsonx_get_string(it, "spec.clusterName");

		ts = jsonx_get_string(it, "metadata.creationTimestamp");
		if (!cn || strcmp(cn, cluster) != 0 || !ts)
			continue;
		if (strcmp(ts, bts) >= 0) { /* RFC 3339 UTC at one precision sorts as text */
			best = it;
			bts = ts;
		}
	}
	return best;
}

/* "NAME-YYYYMMDDHHMMSS" from the wall clock. */
static void default_name(const char *cluster, char *out, size_t len)
{
	char t[RFC3339_MAX], d[16];
	size_t j = 0;

	rfc3339_format(clock_wall_ms(), RFC3339_SECONDS, t);
	for (size_t i = 0; t[i] && j < sizeof(d) - 1; i++)
		if (t[i] >= '0' && t[i] <= '9')
			d[j++] = t[i];
	d[j] = '\0';
	snprintf(out, len, "%s-%s", cluster, d);
}

static json_t *backup_object(const char *ns, const char *name, const char *cluster, json_t *from)
{
	json_t *spec = json_pack("{s:s,s:O}", "clusterName", cluster, "destination",
	                         json_object_get(json_object_get(from, "spec"), "destination"));
	const char *keep[] = { "method", "target", "deletionPolicy" };

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		json_t *v = json_object_get(json_object_get(from, "spec"), keep[i]);
		if (v)
			json_object_set(spec, keep[i], v);
	}
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion", API_GROUP_VERSION, "kind",
	                 "RedisBackup", "metadata", "name", name, "namespace", ns, "spec", spec);
}

int plugin_backup(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	const char *cluster = a->pos[0];
	char name[254];
	json_t *items = NULL, *from, *obj;
	int rc = k8s_list(ctx->client, &api_res_redisbackups, ctx->ns, NULL, &items, NULL, e);

	if (rc)
		return rc;
	from = newest_of(items, cluster);
	if (!from) {
		json_decref(items);
		return err_set(
		        e, -ENOENT,
		        "%s/%s has no RedisBackup to take a destination from: create the first "
		        "one with kubectl apply (docs/backup.md)",
		        ctx->ns, cluster);
	}
	if (a->opt[PLUGIN_F_NAME])
		snprintf(name, sizeof(name), "%s", a->opt[PLUGIN_F_NAME]);
	else
		default_name(cluster, name, sizeof(name));
	obj = backup_object(ctx->ns, name, cluster, from);
	rc = k8s_create(ctx->client, &api_res_redisbackups, ctx->ns, obj, NULL, NULL, e);
	if (!rc)
		printf("redisbackup %s/%s created (destination of %s)\n", ctx->ns, name,
		       jsonx_get_string(from, "metadata.name"));
	json_decref(obj);
	json_decref(items);
	return rc;
}

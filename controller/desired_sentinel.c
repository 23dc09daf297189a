/*
 * desired_sentinel: the sentinel pods and the <cluster>-sentinel Service of a cluster in
 * sentinel mode (desired.h; docs/sentinel.md).
 *
 * A sentinel pod is the data pod of desired_pod with what differs from it changed, so
 * that the security context, scheduling, the copy-binary init container, the env and
 * the Secret volumes have one home: PID 1 is `redis-operator instance --role sentinel`;
 * /data is an emptyDir (Sentinel re-learns the master, the replicas and the other
 * sentinels from the master and the hello channel; sentinel.conf survives a restart of
 * the container, not a new pod); the http-tls volume, REDIS_OPERATOR_HTTP_TLS=required
 * and the CTL_PKI_ANN annotation as a data pod (the sentinel manager serves HTTPS with
 * the same code, and POST /v1/sentinel/{failover,reset} need the controller's client
 * certificate); the server TLS volume when TLS is on (the sentinels are TLS-only then,
 * as the servers); no users volume; ports 26379 "sentinel" and 8000 "http";
 * label redis.io/role=sentinel, which keeps it out of the data pods' Services and PDBs.
 */
#include "desired.h"

#include <stdio.h>
#include <string.h>

#include "controller/pki.h"
#include "lib/jsonx.h"

void desired_sentinel_name(const struct api_redis_cluster *rc, int index, char *out, size_t len)
{
	snprintf(out, len, "%s%s-%d", rc->meta.name, DESIRED_SENTINEL_SUFFIX, index);
}

int desired_sentinel_index(const struct api_redis_cluster *rc, const char *pod)
{
	char prefix[CTL_NAME_MAX + 1];
	size_t n;
	long v = 0;

	snprintf(prefix, sizeof(prefix), "%s%s-", rc->meta.name, DESIRED_SENTINEL_SUFFIX);
	n = strlen(prefix);
	if (!pod || strncmp(pod, prefix, n) != 0 || !pod[n] || pod[n] == '0')
		return -1;
	for (const char *p = pod + n; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

int64_t desired_sentinel_count(const struct api_redis_cluster *rc)
{
	if (rc->spec.mode != API_MODE_SENTINEL)
		return 0;
	return rc->spec.sentinel.set && rc->spec.sentinel.count > 0 ? rc->spec.sentinel.count : 3;
}

/* Removes the entries of array a whose "name" is in names (NULL-terminated). */
static void drop_named(json_t *a, const char *const *names)
{
	for (size_t i = json_array_size(a); i-- > 0;) {
		const char *n = jsonx_get_string(json_array_get(a, i), "name");

		for (size_t k = 0; n && names[k]; k++)
			if (strcmp(n, names[k]) == 0) {
				json_array_remove(a, i);
				break;
			}
	}
}

static void sentinel_container(json_t *c)
{
	static const char *const mounts_gone[] = { "users", NULL };
	json_t *cmd = json_object_get(c, "command");

	json_object_set_new(c, "name", json_string("sentinel"));
	json_array_append_new(cmd, json_string("--role"));
	json_array_append_new(cmd, json_string(CTL_ROLE_SENTINEL));
	drop_named(json_object_get(c, "volumeMounts"), mounts_gone);
	json_object_set_new(c, "ports",
	                    json_pack("[{s:s,s:i,s:s},{s:s,s:i,s:s}]", "name",
	                              API_PORT_NAME_SENTINEL, "containerPort", CTL_PORT_SENTINEL,
	                              "protocol", "TCP", "name", "http", "containerPort",
	                              CTL_PORT_HTTP, "protocol", "TCP"));
}

json_t *desired_sentinel_pod(const struct api_redis_cluster *rc, const struct ctl_config *cfg,
                             int index)
{
	static const char *const vols_gone[] = { "data", "users", NULL };
	json_t *pod = desired_pod(rc, cfg, 1, CTL_ROLE_SENTINEL);
	json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");
	json_t *labels = json_object_get(meta, "labels");
	json_t *ann = json_object_get(meta, "annotations");
	char name[CTL_NAME_MAX + 1];

	desired_sentinel_name(rc, index, name, sizeof(name));
	json_object_set_new(meta, "name", json_string(name));
	json_object_set_new(labels, CTL_LABEL_POD, json_string(name));
	json_object_set_new(labels, CTL_LABEL_COMPONENT, json_string(CTL_ROLE_SENTINEL));
	json_object_del(ann, CTL_ANN_LIVE_HASH);
	drop_named(json_object_get(spec, "volumes"), vols_gone);
	json_array_insert_new(json_object_get(spec, "volumes"), 0,
	                      json_pack("{s:s,s:{}}", "name", "data", "emptyDir"));
	sentinel_container(json_array_get(json_object_get(spec, "containers"), 0));
	return pod;
}

json_t *desired_sentinel_service(const struct api_redis_cluster *rc)
{
	char name[CTL_NAME_MAX + 1];
	json_t *o;

	if (rc->spec.mode != API_MODE_SENTINEL)
		return NULL;
	desired_name(rc, DESIRED_SENTINEL_SUFFIX, name, sizeof(name));
	o = json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "Service", "metadata",
	              desired_meta(rc, name, "service", NULL));
	json_object_set_new(o, "spec",
	                    json_pack("{s:s,s:{s:s,s:s},s:[{s:s,s:s,s:i,s:i}],s:b}", "type",
	                              "ClusterIP", "selector", CTL_LABEL_CLUSTER, rc->meta.name,
	                              CTL_LABEL_ROLE, CTL_ROLE_SENTINEL, "ports", "name",
	                              API_PORT_NAME_SENTINEL, "protocol", "TCP", "port",
	                              CTL_PORT_SENTINEL, "targetPort", CTL_PORT_SENTINEL,
	                              "publishNotReadyAddresses", 0));
	return o;
}

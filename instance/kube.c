/*
 * kube: what the instance manager reads from the API server: its RedisCluster, the
 * address of another pod, whether other pods of the cluster exist, and (sentinel mode)
 * the sentinel pods' addresses. Every request
 * has the client's deadline (--api-timeout); callers on the boot path retry.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/instance_v1.h"
#include "api/ports.h"
#include "api/resources.h"
#include "instance/internal.h"
#include "lib/jsonx.h"

int inst_kube_cluster(struct inst *in, struct inst_spec *out, struct err *e)
{
	json_t *obj = NULL;
	int rc = k8s_get(in->kube, &api_res_redisclusters, in->set.pod_namespace,
	                 in->set.cluster_name, &obj, e);

	if (rc)
		return rc;
	rc = inst_spec_decode(obj, out, e);
	json_decref(obj);
	return rc;
}

/* The containerPort named `name` in any container of the pod, or def. */
static int named_port(json_t *pod, const char *name, int def)
{
	json_t *containers = jsonx_get(pod, "spec.containers"), *c, *p;
	size_t i, j;

	json_array_foreach (containers, i, c) {
		json_array_foreach (json_object_get(c, "ports"), j, p) {
			json_t *n = json_object_get(p, "name");
			json_int_t v = json_integer_value(json_object_get(p, "containerPort"));

			if (json_is_string(n) && strcmp(json_string_value(n), name) == 0 && v > 0 &&
			    v < 65536)
				return (int)v;
		}
	}
	return def;
}

int inst_kube_pod_addr(struct inst *in, const char *pod, char *host, size_t hlen, int *port,
                       int *http_port, struct err *e)
{
	json_t *obj = NULL;
	const char *ip = NULL;
	int rc = k8s_get(in->kube, &k8s_res_pods, in->set.pod_namespace, pod, &obj, e);

	if (rc)
		return rc;
	rc = jsonx_string(obj, "status.podIP", NULL, &ip, e);
	if (!rc && (!ip || !*ip))
		rc = err_set(e, -EADDRNOTAVAIL, "pod %s: no IP yet", pod);
	if (!rc) {
		snprintf(host, hlen, "%s", ip);
		*port = named_port(obj, API_PORT_NAME_SERVER, API_PORT_SERVER);
		if (http_port)
			*http_port = named_port(obj, API_PORT_NAME_HTTP, API_PORT_HTTP);
	}
	json_decref(obj);
	return rc;
}

/* The cluster's pods whose role label matches role_match ("=sentinel", "!=sentinel"). */
static int list_cluster_pods(struct inst *in, const char *role_match, json_t **items, struct err *e)
{
	struct k8s_list_opts lo = { 0 };
	char sel[320];

	snprintf(sel, sizeof(sel), "redis.io/cluster=%s,redis.io/role%s", in->set.cluster_name,
	         role_match);
	lo.label_selector = sel;
	return k8s_list(in->kube, &k8s_res_pods, in->set.pod_namespace, &lo, items, NULL, e);
}

int inst_kube_other_pods(struct inst *in, bool *out, struct err *e)
{
	json_t *items = NULL, *it;
	size_t i;
	int rc;

	/* data pods only: sentinel pods hold no data */
	if ((rc = list_cluster_pods(in, "!=sentinel", &items, e)) != 0)
		return rc;
	*out = false;
	json_array_foreach (items, i, it) {
		const char *name = json_string_value(jsonx_get(it, "metadata.name"));

		if (name && strcmp(name, in->set.pod_name) != 0)
			*out = true;
	}
	json_decref(items);
	return 0;
}

int inst_kube_sentinels(struct inst *in, struct inst_sentinel_addr *out, size_t max, size_t *n,
                        struct err *e)
{
	json_t *items = NULL, *it;
	size_t i;
	int rc;

	if ((rc = list_cluster_pods(in, "=sentinel", &items, e)) != 0)
		return rc;
	*n = 0;
	json_array_foreach (items, i, it) {
		const char *ip = json_string_value(jsonx_get(it, "status.podIP"));

		if (*n == max || !ip || !*ip || strlen(ip) >= sizeof(out->host) ||
		    json_is_string(jsonx_get(it, "metadata.deletionTimestamp")))
			continue;
		snprintf(out[*n].host, sizeof(out->host), "%s", ip);
		out[*n].port = named_port(it, API_PORT_NAME_SENTINEL, API_PORT_SENTINEL);
		(*n)++;
	}
	json_decref(items);
	return 0;
}

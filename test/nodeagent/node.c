/*
 * node: the Nodes this agent is the kubelet of.
 *
 * Registration creates the Node (labels kubernetes.io/hostname, os, arch; annotation
 * NA_MANAGED_ANNOT so that a restarted agent knows the Node is its own; optional
 * --register-taint), then patches its status (capacity = allocatable: the host's CPUs,
 * memory and the state directory's disk, pods 110 (light mode: the range's addresses);
 * conditions MemoryPressure, DiskPressure, PIDPressure False and Ready True; the address
 * InternalIP (--host-ip, where the kubelet API listens: no Hostname address, which the API
 * server would try first and could not resolve); daemonEndpoints.kubeletEndpoint.Port,
 * the port the kubelet API bound (kubelet.h); nodeInfo), then creates or takes over its Lease in
 * kube-node-lease (holderIdentity the node, leaseDurationSeconds --lease-duration,
 * owner-referenced to the Node so the garbage collector follows it). A Node that exists
 * without our annotation is served but never deleted: the agent deletes nothing it did
 * not create.
 *
 * Heartbeats: the Lease's renewTime every --lease-renew-interval and the status
 * (lastHeartbeatTime) every --node-status-interval, the first status half an interval
 * after the first renewal so that the two interleave. kube-controller-manager's
 * node-lifecycle controller counts either as a heartbeat; it marks the Node Ready
 * Unknown after --node-monitor-grace-period (10 s here) without one, and removes the
 * not-ready taint once Ready is True.
 *
 * node-lose stops both heartbeats and freezes the node's pods (a dead machine);
 * node-restore thaws them, posts Ready True at once (with a new lastTransitionTime, as
 * a restarted kubelet does) and re-reports every pod's status, which the controller had
 * turned not Ready.
 *
 * Main thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/informer.h"
#include "lib/log.h"
#include "lib/rfc3339.h"

#define NODE_MAX_PODS "110"
#define RETRY_MS      1000

static const char *go_arch(void)
{
	static const char *const map[][2] = { { "x86_64", "amd64" },
		                              { "aarch64", "arm64" },
		                              { "armv7l", "arm" } };
	static struct utsname u;

	if (!u.machine[0])
		uname(&u);
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(u.machine, map[i][0]) == 0)
			return map[i][1];
	return u.machine;
}

json_t *na_node_object(const char *name, const char *taint)
{
	json_t *node = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:{s:s}}, s:{}}",
	                         "apiVersion", "v1", "kind", "Node", "metadata", "name", name,
	                         "labels", "kubernetes.io/hostname", name, "kubernetes.io/os",
	                         "linux", "kubernetes.io/arch", go_arch(), "annotations",
	                         NA_MANAGED_ANNOT, "true", "spec");
	const char *colon = taint ? strrchr(taint, ':') : NULL, *eq;

	if (colon) {
		json_t *t = json_object();

		eq = memchr(taint, '=', (size_t)(colon - taint));
		json_object_set_new(t, "key",
		                    json_stringn(taint, (size_t)((eq ? eq : colon) - taint)));
		if (eq)
			json_object_set_new(t, "value",
			                    json_stringn(eq + 1, (size_t)(colon - eq - 1)));
		json_object_set_new(t, "effect", json_string(colon + 1));
		json_object_set_new(json_object_get(node, "spec"), "taints", json_pack("[o]", t));
	}
	return node;
}

static json_t *condition(const char *type, bool value, const char *reason, const char *msg,
                         const char *now, const char *since)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
	                 value ? "True" : "False", "reason", reason, "message", msg,
	                 "lastHeartbeatTime", now, "lastTransitionTime", since);
}

static json_t *capacity(const struct agent *ag)
{
	json_t *pods = na_light_max_pods(ag) ? json_sprintf("%zu", na_light_max_pods(ag))
	                                     : json_string(NODE_MAX_PODS);

	return json_pack("{s:o, s:o, s:o, s:o}", "cpu",
	                 json_sprintf("%lld", (long long)(ag->node_cpu_milli / 1000)), "memory",
	                 json_sprintf("%lluKi", (unsigned long long)(ag->node_memory / 1024)),
	                 "ephemeral-storage",
	                 json_sprintf("%lluKi", (unsigned long long)(ag->node_storage / 1024)),
	                 "pods", pods);
}

static json_t *node_info(void)
{
	struct utsname u;

	uname(&u);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "machineID", "",
	                 "systemUUID", "", "bootID", "", "kernelVersion", u.release, "osImage",
	                 "nodeagent (the host's root)", "containerRuntimeVersion", NA_RUNTIME_VER,
	                 "kubeletVersion", NA_KUBELET_VER, "kubeProxyVersion", "",
	                 "operatingSystem", "linux", "architecture", go_arch());
}

json_t *na_node_status(const struct agent *ag, const struct na_node *n, int64_t now_ms)
{
	char now[RFC3339_MAX], since[RFC3339_MAX];
	json_t *conds;

	rfc3339_format(now_ms, RFC3339_SECONDS, now);
	rfc3339_format(n->ready_since, RFC3339_SECONDS, since);
	conds = json_pack("[o, o, o, o]",
	                  condition("MemoryPressure", false, "KubeletHasSufficientMemory",
	                            "kubelet has sufficient memory available", now, since),
	                  condition("DiskPressure", false, "KubeletHasNoDiskPressure",
	                            "kubelet has no disk pressure", now, since),
	                  condition("PIDPressure", false, "KubeletHasSufficientPID",
	                            "kubelet has sufficient PID available", now, since),
	                  condition("Ready", true, "KubeletReady",
	                            "kubelet is posting ready status", now, since));
	/* A Hostname address an older agent posted is deleted (strategic merge directive). */
	return json_pack("{s:{s:o, s:o, s:o, s:[{s:s, s:s}, {s:s, s:s}], s:{s:{s:i}}, s:o}}",
	                 "status", "capacity", capacity(ag), "allocatable", capacity(ag),
	                 "conditions", conds, "addresses", "type", "InternalIP", "address",
	                 ag->set.host_ip, "type", "Hostname", "$patch", "delete", "daemonEndpoints",
	                 "kubeletEndpoint", "Port", ag->kubelet_port, "nodeInfo", node_info());
}

json_t *na_lease_object(const char *node, const char *node_uid, int64_t duration_s, int64_t now_ms)
{
	char renew[RFC3339_MAX];

	rfc3339_format(now_ms, RFC3339_MICROS, renew);
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:[{s:s, s:s, s:s, s:s}]}, "
	                 "s:{s:s, s:I, s:s}}",
	                 "apiVersion", "coordination.k8s.io/v1", "kind", "Lease", "metadata",
	                 "name", node, "namespace", NA_LEASE_NS, "ownerReferences", "apiVersion",
	                 "v1", "kind", "Node", "name", node, "uid", node_uid, "spec",
	                 "holderIdentity", node, "leaseDurationSeconds", (json_int_t)duration_s,
	                 "renewTime", renew);
}

/* --- API calls ---------------------------------------------------------------------------------- */

static int status_patch(struct agent *ag, struct na_node *n, struct err *e)
{
	json_t *st = na_node_status(ag, n, clock_wall_ms());
	int rc = k8s_patch(ag->client, &k8s_res_nodes, NULL, n->name, "status", K8S_PATCH_STRATEGIC,
	                   st, NULL, NULL, e);

	json_decref(st);
	return rc;
}

/* Renews the Lease, taking it over (owner reference included) or creating it. */
static int lease_renew(struct agent *ag, struct na_node *n, struct err *e)
{
	json_t *l = na_lease_object(n->name, n->uid, (ag->set.lease_duration_ms + 999) / 1000,
	                            clock_wall_ms());
	int rc = k8s_patch(ag->client, &k8s_res_leases, NA_LEASE_NS, n->name, NULL, K8S_PATCH_MERGE,
	                   l, NULL, NULL, e);

	if (rc == -ENOENT) {
		err_clear(e);
		rc = k8s_create(ag->client, &k8s_res_leases, NA_LEASE_NS, l, NULL, NULL, e);
	}
	json_decref(l);
	return rc;
}

/* Creates the Node, or adopts an existing one; *out is the object. */
static int node_create(struct agent *ag, struct na_node *n, json_t **out, struct err *e)
{
	json_t *obj = na_node_object(n->name, ag->set.register_taint);
	const char *mine;
	int rc = k8s_create(ag->client, &k8s_res_nodes, NULL, obj, NULL, out, e);

	json_decref(obj);
	n->created = rc == 0;
	if (rc != -EEXIST)
		return rc;
	err_clear(e);
	if ((rc = k8s_get(ag->client, &k8s_res_nodes, NULL, n->name, out, e)))
		return rc;
	mine = json_string_value(jsonx_get(*out, "metadata.annotations[\"" NA_MANAGED_ANNOT "\"]"));
	n->created = mine && strcmp(mine, "true") == 0;
	if (!n->created)
		log_warn(NA_COMPONENT,
		         "serving a Node this agent did not create (kept at shutdown)", "node",
		         n->name, NULL);
	return 0;
}

int na_node_register(struct agent *ag, struct na_node *n, struct err *e)
{
	json_t *obj = NULL;
	int64_t now = clock_mono_ms();
	int rc;

	if ((rc = node_create(ag, n, &obj, e)))
		return rc;
	free(n->uid);
	n->uid = xstrdup(json_string_value(jsonx_get(obj, "metadata.uid")));
	json_decref(obj);
	n->ready_since = clock_wall_ms();
	if ((rc = status_patch(ag, n, e)) || (rc = lease_renew(ag, n, e)))
		return rc;
	n->registered = true;
	n->next_lease = now + ag->set.lease_renew_ms;
	n->next_status = now + ag->set.node_status_ms / 2;
	log_info(NA_COMPONENT, "node registered", "node", n->name, "uid", n->uid, "created",
	         n->created ? "true" : "false", NULL);
	return 0;
}

void na_node_tick(struct agent *ag, struct na_node *n, int64_t now)
{
	struct err e;
	int rc;

	if (n->lost)
		return;
	err_clear(&e);
	if (!n->registered) {
		if (now >= n->next_status && na_node_register(ag, n, &e) < 0) {
			log_warn(NA_COMPONENT, "node registration failed", "node", n->name, "error",
			         e.msg, NULL);
			n->next_status = now + RETRY_MS;
		}
		return;
	}
	if (now >= n->next_lease) {
		rc = lease_renew(ag, n, &e);
		n->next_lease = now + (rc ? RETRY_MS : ag->set.lease_renew_ms);
		if (rc)
			log_warn(NA_COMPONENT, "lease renewal failed", "node", n->name, "error",
			         e.msg, NULL);
	}
	err_clear(&e);
	if (now >= n->next_status) {
		rc = status_patch(ag, n, &e);
		n->next_status = now + (rc ? RETRY_MS : ag->set.node_status_ms);
		n->registered = rc != -ENOENT; /* deleted behind our back: register again */
		if (rc)
			log_warn(NA_COMPONENT, "node status failed", "node", n->name, "error",
			         e.msg, NULL);
	}
}

int64_t na_node_next_due(const struct na_node *n)
{
	if (n->lost)
		return INT64_MAX;
	if (!n->registered)
		return n->next_status;
	return n->next_lease < n->next_status ? n->next_lease : n->next_status;
}

void na_node_unregister(struct agent *ag, struct na_node *n)
{
	struct k8s_delete_opts d = { .precondition_uid = n->uid };
	struct err e;

	if (!n->created || !n->uid)
		return;
	err_clear(&e);
	if (k8s_delete(ag->client, &k8s_res_leases, NA_LEASE_NS, n->name, NULL, &e) < 0 &&
	    e.code != -ENOENT)
		log_warn(NA_COMPONENT, "lease delete failed", "node", n->name, "error", e.msg,
		         NULL);
	err_clear(&e);
	if (k8s_delete(ag->client, &k8s_res_nodes, NULL, n->name, &d, &e) < 0 && e.code != -ENOENT)
		log_warn(NA_COMPONENT, "node delete failed", "node", n->name, "error", e.msg, NULL);
	else
		log_info(NA_COMPONENT, "node deleted", "node", n->name, NULL);
}

struct na_node *na_node_find(struct agent *ag, const char *name)
{
	for (size_t i = 0; i < ag->n_nodes; i++)
		if (strcmp(ag->nodes[i].name, name) == 0)
			return &ag->nodes[i];
	return NULL;
}

/* --- node-lose / node-restore --------------------------------------------------------------------- */

static void freeze_pod(struct agent *ag, struct na_pod *p)
{
	struct err e;

	(void)ag;
	err_clear(&e);
	if (p->rt && rt_fault_freeze(p->rt, true, &e) < 0)
		log_warn(NA_COMPONENT, "freeze failed", "pod", p->key, "error", e.msg, NULL);
}

static void thaw_pod(struct agent *ag, struct na_pod *p)
{
	char *key = xasprintf("pod:%s", p->key);
	struct err e;

	err_clear(&e);
	if (p->rt && rt_fault_freeze(p->rt, false, &e) < 0)
		log_warn(NA_COMPONENT, "thaw failed", "pod", p->key, "error", e.msg, NULL);
	na_pod_force_report(ag, p);
	na_enqueue(ag, key);
	free(key);
}

/* Every Pod the informer holds for n: what arrived while it was lost is synced now. */
static void enqueue_node_pods(struct agent *ag, struct na_node *n)
{
	json_t *all = k8s_informer_list(n->pods), *pod;
	size_t i;

	json_array_foreach (all, i, pod) {
		char *key = xasprintf("pod:%s/%s",
		                      json_string_value(jsonx_get(pod, "metadata.namespace")),
		                      json_string_value(jsonx_get(pod, "metadata.name")));

		na_enqueue(ag, key);
		free(key);
	}
	json_decref(all);
}

int na_node_set_lost(struct agent *ag, struct na_node *n, bool lost, struct err *e)
{
	(void)e;
	if (n->lost == lost)
		return 0;
	n->lost = lost;
	na_pods_of_node(ag, n, lost ? freeze_pod : thaw_pod);
	if (!lost) {
		n->ready_since = clock_wall_ms();
		n->next_lease = n->next_status = 0;
		enqueue_node_pods(ag, n);
	}
	log_info(NA_COMPONENT, lost ? "node lost (fault)" : "node restored", "node", n->name, NULL);
	return 0;
}

/*
 * desired_objects: the pure builders of every child but the pod and its PVC (see
 * desired.h): metadata and owner references, per-cluster RBAC, the NetworkPolicy,
 * Secrets, Services, PDBs and the primary Lease.
 *
 * Objects are complete enough to be created as they are and are compared with the
 * cached ones by jsonx_contains, so they spell out what the API server would
 * otherwise default in the fields the controller owns (protocol: TCP, type: ClusterIP…).
 */
#include "desired.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/rbac.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "lib/k8s/path.h"

void desired_name(const struct api_redis_cluster *rc, const char *suffix, char *out, size_t len)
{
	snprintf(out, len, "%s%s", rc->meta.name, suffix ? suffix : "");
}

void desired_auth_secret_name(const struct api_redis_cluster *rc, char *out, size_t len)
{
	if (rc->spec.auth_secret.name)
		snprintf(out, len, "%s", rc->spec.auth_secret.name);
	else
		desired_name(rc, DESIRED_AUTH_SECRET, out, len);
}

json_t *desired_owner_ref(const struct api_redis_cluster *rc)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion", API_GROUP_VERSION, "kind",
	                 API_REDIS_CLUSTER_KIND, "name", rc->meta.name, "uid",
	                 rc->meta.uid ? rc->meta.uid : "", "controller", 1, "blockOwnerDeletion",
	                 1);
}

json_t *desired_meta(const struct api_redis_cluster *rc, const char *name, const char *component,
                     json_t *extra_labels)
{
	json_t *labels =
	        json_pack("{s:s,s:s,s:s,s:s,s:s}", CTL_LABEL_MANAGED_BY, CTL_MANAGED_BY,
	                  CTL_LABEL_NAME, "redis", CTL_LABEL_INSTANCE, rc->meta.name,
	                  CTL_LABEL_COMPONENT, component, CTL_LABEL_CLUSTER, rc->meta.name);

	if (extra_labels)
		json_object_update(labels, extra_labels);
	return json_pack("{s:s,s:s,s:o,s:[o]}", "name", name, "namespace", rc->meta.namespace,
	                 "labels", labels, "ownerReferences", desired_owner_ref(rc));
}

static json_t *object(const char *api_version, const char *kind, json_t *meta)
{
	return json_pack("{s:s,s:s,s:o}", "apiVersion", api_version, "kind", kind, "metadata",
	                 meta);
}

static json_t *cluster_selector(const struct api_redis_cluster *rc, const char *role)
{
	json_t *m = json_pack("{s:s}", CTL_LABEL_CLUSTER, rc->meta.name);

	if (role)
		json_object_set_new(m, CTL_LABEL_ROLE, json_string(role));
	return m;
}

/* --- RBAC --------------------------------------------------------------------------- */

json_t *desired_service_account(const struct api_redis_cluster *rc)
{
	json_t *o = object("v1", "ServiceAccount", desired_meta(rc, rc->meta.name, "rbac", NULL));

	json_object_set_new(o, "automountServiceAccountToken", json_true());
	return o;
}

/* The pods' Role: what the instance manager calls, from the table (controller/rbac.h).
 * No Secret: the pods read theirs from their volumes, so none (least of all
 * <cluster>-operator-tls, whose keys would let a pod act as the operator) is readable
 * through the API with the pods' token. */
json_t *desired_role(const struct api_redis_cluster *rc)
{
	json_t *o = object("rbac.authorization.k8s.io/v1", "Role",
	                   desired_meta(rc, rc->meta.name, "rbac", NULL));

	json_object_set_new(o, "rules", ctl_rbac_rules(&ctl_rbac_pods, rc));
	return o;
}

json_t *desired_role_binding(const struct api_redis_cluster *rc)
{
	json_t *o = object("rbac.authorization.k8s.io/v1", "RoleBinding",
	                   desired_meta(rc, rc->meta.name, "rbac", NULL));

	json_object_set_new(o, "roleRef",
	                    json_pack("{s:s,s:s,s:s}", "apiGroup", "rbac.authorization.k8s.io",
	                              "kind", "Role", "name", rc->meta.name));
	json_object_set_new(o, "subjects",
	                    json_pack("[{s:s,s:s,s:s}]", "kind", "ServiceAccount", "name",
	                              rc->meta.name, "namespace", rc->meta.namespace));
	return o;
}

/* --- NetworkPolicy ------------------------------------------------------------------ */

static json_t *tcp_ports(int a, int b, int c)
{
	json_t *ports = json_array();
	int all[] = { a, b, c };

	for (size_t i = 0; i < 3; i++)
		if (all[i])
			json_array_append_new(
			        ports, json_pack("{s:s,s:i}", "protocol", "TCP", "port", all[i]));
	return ports;
}

static json_t *clients_peer(const struct api_allowed_client *c)
{
	json_t *peer = json_object();

	if (c->pod_selector)
		json_object_set(peer, "podSelector", c->pod_selector);
	if (c->namespace_selector)
		json_object_set(peer, "namespaceSelector", c->namespace_selector);
	return peer;
}

static json_t *ingress_rules(const struct api_redis_cluster *rc, const struct ctl_config *cfg)
{
	const struct api_network_policy *np = &rc->spec.network_policy;
	/* sentinel mode: the sentinels talk to each other, and clients ask them */
	int sentinel = rc->spec.mode == API_MODE_SENTINEL ? CTL_PORT_SENTINEL : 0;
	json_t *in = json_array(), *clients;

	json_array_append_new(in, json_pack("{s:[{s:{s:o}}],s:o}", "from", "podSelector",
	                                    "matchLabels", cluster_selector(rc, NULL), "ports",
	                                    tcp_ports(CTL_PORT_REDIS, CTL_PORT_HTTP, sentinel)));
	json_array_append_new(
	        in, json_pack("{s:[{s:{s:{s:s}},s:{s:{s:s}}}],s:o}", "from", "namespaceSelector",
	                      "matchLabels", "kubernetes.io/metadata.name",
	                      cfg->operator_namespace ? cfg->operator_namespace : "default",
	                      "podSelector", "matchLabels", CTL_LABEL_NAME, CTL_MANAGED_BY, "ports",
	                      tcp_ports(CTL_PORT_REDIS, CTL_PORT_HTTP, CTL_PORT_METRICS)));
	if (np->n_allowed_clients) {
		clients = json_array();
		for (size_t i = 0; i < np->n_allowed_clients; i++)
			json_array_append_new(clients, clients_peer(&np->allowed_clients[i]));
		json_array_append_new(in, json_pack("{s:o,s:o}", "from", clients, "ports",
		                                    tcp_ports(CTL_PORT_REDIS, sentinel, 0)));
	} else {
		json_array_append_new(
		        in, json_pack("{s:o}", "ports", tcp_ports(CTL_PORT_REDIS, sentinel, 0)));
	}
	json_array_append_new(in, json_pack("{s:o}", "ports", tcp_ports(CTL_PORT_METRICS, 0, 0)));
	return in;
}

static json_t *egress_rules(const struct api_redis_cluster *rc)
{
	json_t *out = json_array();

	json_array_append_new(out, json_pack("{s:[{s:{s:o}}]}", "to", "podSelector", "matchLabels",
	                                     cluster_selector(rc, NULL)));
	json_array_append_new(out, json_pack("{s:[{s:s,s:i},{s:s,s:i}]}", "ports", "protocol",
	                                     "UDP", "port", 53, "protocol", "TCP", "port", 53));
	/* the API server (443 behind its Service, 6443 direct) and HTTPS backup targets */
	json_array_append_new(out, json_pack("{s:[{s:s,s:i},{s:s,s:i}]}", "ports", "protocol",
	                                     "TCP", "port", 443, "protocol", "TCP", "port", 6443));
	return out;
}

json_t *desired_network_policy(const struct api_redis_cluster *rc, const struct ctl_config *cfg)
{
	json_t *o;

	if (!rc->spec.network_policy.enabled)
		return NULL;
	o = object("networking.k8s.io/v1", "NetworkPolicy",
	           desired_meta(rc, rc->meta.name, "network", NULL));
	json_object_set_new(o, "spec",
	                    json_pack("{s:{s:o},s:[s,s],s:o,s:o}", "podSelector", "matchLabels",
	                              cluster_selector(rc, NULL), "policyTypes", "Ingress",
	                              "Egress", "ingress", ingress_rules(rc, cfg), "egress",
	                              egress_rules(rc)));
	return o;
}

/* --- Secrets ------------------------------------------------------------------------ */

static json_t *secret(const struct api_redis_cluster *rc, const char *suffix, const char *comp)
{
	char name[CTL_NAME_MAX + 1];
	json_t *o;

	desired_name(rc, suffix, name, sizeof(name));
	o = object("v1", "Secret", desired_meta(rc, name, comp, NULL));
	json_object_set_new(o, "type", json_string("Opaque"));
	return o;
}

json_t *desired_auth_secret(const struct api_redis_cluster *rc)
{
	return secret(rc, DESIRED_AUTH_SECRET, "auth");
}

json_t *desired_operator_secret(const struct api_redis_cluster *rc)
{
	return secret(rc, DESIRED_OPERATOR_SECRET, "auth");
}

json_t *desired_operator_tls_secret(const struct api_redis_cluster *rc)
{
	return secret(rc, DESIRED_OPERATOR_TLS, "tls");
}

json_t *desired_instance_tls_secret(const struct api_redis_cluster *rc)
{
	return secret(rc, DESIRED_INSTANCE_TLS, "tls");
}

/* s base64-encoded as a JSON string; the encoding of a password is wiped. */
static json_t *b64(const char *s)
{
	char *out = base64_encode(s, strlen(s));
	json_t *j = json_string(out);

	free_secret(out);
	return j;
}

bool desired_server_tls(const struct api_redis_cluster *rc)
{
	return rc->spec.tls_secret.name && rc->spec.ca_secret.name; /* as tls_volume */
}

static void add_endpoint(json_t *data, const struct api_redis_cluster *rc, const char *suffix,
                         const char *key_host, const char *key_url, const char *password)
{
	struct buf url = BUF_INIT(BUF_NO_LIMIT);
	char host[CTL_NAME_MAX * 2];

	snprintf(host, sizeof(host), "%s%s.%s.svc", rc->meta.name, suffix, rc->meta.namespace);
	json_object_set_new(data, key_host, b64(host));
	buf_append_str(&url, desired_server_tls(rc) ? "rediss://default:" : "redis://default:");
	k8s_url_encode(&url, password);
	buf_printf(&url, "@%s:%d", host, CTL_PORT_REDIS);
	json_object_set_new(data, key_url, b64(buf_cstr(&url)));
	buf_release_secret(&url);
}

json_t *desired_connection_secret(const struct api_redis_cluster *rc, const char *password)
{
	return desired_connection_secret_ca(rc, password, NULL);
}

json_t *desired_connection_secret_ca(const struct api_redis_cluster *rc, const char *password,
                                     const char *ca_b64)
{
	const char *name = rc->spec.connection_secret.name;
	json_t *o, *data;
	char port[16];

	if (!name || !password)
		return NULL;
	o = object("v1", "Secret", desired_meta(rc, name, "connection", NULL));
	json_object_set_new(o, "type", json_string("Opaque"));
	data = json_object();
	snprintf(port, sizeof(port), "%d", CTL_PORT_REDIS);
	json_object_set_new(data, "port", b64(port));
	json_object_set_new(data, "username", b64("default"));
	json_object_set_new(data, "password", b64(password));
	add_endpoint(data, rc, "-leader", "host", "url", password);
	add_endpoint(data, rc, "-replica", "host-replica", "url-replica", password);
	add_endpoint(data, rc, "-any", "host-any", "url-any", password);
	if (desired_server_tls(rc) && ca_b64 && *ca_b64) /* already base64 */
		json_object_set_new(data, "ca.crt", json_string(ca_b64));
	json_object_set_new(o, "data", data);
	return o;
}

/* --- Services, PDBs, Lease ---------------------------------------------------------- */

static const struct {
	const char *suffix, *role;
} services[DESIRED_SVC_COUNT] = {
	[DESIRED_SVC_LEADER] = { "-leader", CTL_ROLE_PRIMARY },
	[DESIRED_SVC_REPLICA] = { "-replica", CTL_ROLE_REPLICA },
	[DESIRED_SVC_ANY] = { "-any", NULL },
};

json_t *desired_service(const struct api_redis_cluster *rc, enum desired_service which)
{
	char name[CTL_NAME_MAX + 1];
	json_t *o, *selector = which == DESIRED_SVC_LEADER
	                               ? json_null() /* desired_leader_endpoints */
	                               : cluster_selector(rc, services[which].role);

	if (which == DESIRED_SVC_ANY && rc->spec.mode == API_MODE_SENTINEL) /* no sentinel pod */
		json_object_set_new(selector, CTL_LABEL_COMPONENT, json_string("database"));
	desired_name(rc, services[which].suffix, name, sizeof(name));
	o = object("v1", "Service", desired_meta(rc, name, "service", NULL));
	json_object_set_new(o, "spec",
	                    json_pack("{s:s,s:o,s:[{s:s,s:s,s:i,s:i}],s:b}", "type", "ClusterIP",
	                              "selector", selector, "ports", "name", "redis", "protocol",
	                              "TCP", "port", CTL_PORT_REDIS, "targetPort", CTL_PORT_REDIS,
	                              "publishNotReadyAddresses", 0));
	return o;
}

json_t *desired_leader_endpoints(const struct api_redis_cluster *rc, const char *pod,
                                 const char *uid, const char *ip, bool ready)
{
	char name[CTL_NAME_MAX + 1];
	json_t *o, *eps = json_array(), *labels;

	desired_name(rc, services[DESIRED_SVC_LEADER].suffix, name, sizeof(name));
	labels = json_pack("{s:s,s:s}", "kubernetes.io/service-name", name,
	                   "endpointslice.kubernetes.io/managed-by", CTL_ENDPOINTS_MANAGER);
	o = object("discovery.k8s.io/v1", "EndpointSlice",
	           desired_meta(rc, name, "service", labels));
	json_decref(labels);
	if (pod && uid && ip && *ip)
		json_array_append_new(eps, json_pack("{s:[s],s:{s:b,s:b,s:b},s:{s:s,s:s,s:s,s:s}}",
		                                     "addresses", ip, "conditions", "ready", ready,
		                                     "serving", ready, "terminating", 0,
		                                     "targetRef", "kind", "Pod", "namespace",
		                                     rc->meta.namespace, "name", pod, "uid", uid));
	json_object_set_new(o, "addressType", json_string(ip && strchr(ip, ':') ? "IPv6" : "IPv4"));
	json_object_set_new(o, "endpoints", eps);
	json_object_set_new(o, "ports",
	                    json_pack("[{s:s,s:s,s:i}]", "name", "redis", "protocol", "TCP", "port",
	                              CTL_PORT_REDIS));
	return o;
}

/*
 * The pods a voluntary eviction must leave; below 1, no PDB. The primary: kept (a drain
 * moves it by switchover first) once there is a replica to move to. The replicas: all
 * but one of them. The sentinels: a failover needs `quorum` of them to call the master
 * down and a majority of all of them to elect the one that promotes.
 */
static int64_t pdb_min_available(const struct api_redis_cluster *rc, enum desired_pdb which)
{
	int64_t n = rc->spec.instances, majority = rc->spec.sentinel.count / 2 + 1;

	switch (which) {
	case DESIRED_PDB_PRIMARY: return n >= 2;
	case DESIRED_PDB_REPLICA: return n - 2;
	case DESIRED_PDB_SENTINEL:
		if (rc->spec.mode != API_MODE_SENTINEL)
			return 0;
		return rc->spec.sentinel.quorum > majority ? rc->spec.sentinel.quorum : majority;
	}
	return 0;
}

json_t *desired_pdb(const struct api_redis_cluster *rc, enum desired_pdb which)
{
	static const struct {
		const char *suffix, *role;
	} pdbs[] = { [DESIRED_PDB_PRIMARY] = { "-primary", CTL_ROLE_PRIMARY },
		     [DESIRED_PDB_REPLICA] = { "-replica", CTL_ROLE_REPLICA },
		     [DESIRED_PDB_SENTINEL] = { DESIRED_SENTINEL_SUFFIX, CTL_ROLE_SENTINEL } };
	int64_t min = pdb_min_available(rc, which);
	char name[CTL_NAME_MAX + 1];
	json_t *o;

	if (!rc->spec.enable_pod_disruption_budget || min < 1)
		return NULL;
	desired_name(rc, pdbs[which].suffix, name, sizeof(name));
	o = object("policy/v1", "PodDisruptionBudget", desired_meta(rc, name, "pdb", NULL));
	json_object_set_new(o, "spec",
	                    json_pack("{s:{s:o},s:I}", "selector", "matchLabels",
	                              cluster_selector(rc, pdbs[which].role), "minAvailable",
	                              (json_int_t)min));
	return o;
}

json_t *desired_lease(const struct api_redis_cluster *rc)
{
	char name[CTL_NAME_MAX + 1];
	int64_t ms = rc->spec.failover.lease_duration.ms;
	json_t *o;

	desired_name(rc, "-primary", name, sizeof(name));
	o = object("coordination.k8s.io/v1", "Lease", desired_meta(rc, name, "lease", NULL));
	json_object_set_new(o, "spec",
	                    json_pack("{s:I}", "leaseDurationSeconds",
	                              (json_int_t)(ms > 0 ? (ms + 999) / 1000 : 10)));
	return o;
}

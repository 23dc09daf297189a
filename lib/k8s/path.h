/*
 * k8s/path: API paths and query strings for the Kubernetes REST API.
 *
 * A resource kind is described by a `struct k8s_resource` (group, version, plural,
 * scope); the well-known ones we use are constants below. k8s_path() turns a resource,
 * a namespace, a name and a subresource into the path the API server serves:
 *
 *   core  (group ""):  /api/v1[/namespaces/NS]/PLURAL[/NAME[/SUB]]
 *   other (group G):   /apis/G/V[/namespaces/NS]/PLURAL[/NAME[/SUB]]
 *
 * Names are validated before any request (DNS-1123 subdomain, at most 253 bytes;
 * namespaces are DNS-1123 labels, at most 63), so a path never needs escaping and a bad
 * name fails with -EINVAL locally instead of as a confusing 404.
 *
 * k8s_query_append() renders a `struct k8s_query` as "?k=v&k=v", percent-encoding
 * every value (RFC 3986: only ALPHA DIGIT - . _ ~ stay literal), so selectors such as
 * "app.kubernetes.io/name in (a,b)" and opaque continue tokens travel intact.
 *
 * Pure functions, no I/O; thread-safe.
 */
#ifndef REDIS_OPERATOR_K8S_PATH_H
#define REDIS_OPERATOR_K8S_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"

#define K8S_NAME_MAX          253   /* DNS-1123 subdomain */
#define K8S_NAMESPACE_MAX     63    /* DNS-1123 label */
#define K8S_URL_MAX           16384 /* path + query; longer requests are refused */
#define K8S_FIELD_MANAGER_MAX 128   /* the API server's own limit */

struct k8s_resource {
	const char *group;   /* "" for the core group */
	const char *version; /* "v1" */
	const char *plural;  /* "pods" */
	const char *kind;    /* "Pod": for messages and for building objects */
	bool namespaced;
};

/* Well-known resources. */
extern const struct k8s_resource k8s_res_pods;
extern const struct k8s_resource k8s_res_services;
extern const struct k8s_resource k8s_res_secrets;
extern const struct k8s_resource k8s_res_configmaps;
extern const struct k8s_resource k8s_res_pvcs;
extern const struct k8s_resource k8s_res_serviceaccounts;
extern const struct k8s_resource k8s_res_nodes;
extern const struct k8s_resource k8s_res_namespaces;
extern const struct k8s_resource k8s_res_events;          /* events.k8s.io/v1 */
extern const struct k8s_resource k8s_res_leases;          /* coordination.k8s.io/v1 */
extern const struct k8s_resource k8s_res_roles;           /* rbac.authorization.k8s.io/v1 */
extern const struct k8s_resource k8s_res_rolebindings;    /* rbac.authorization.k8s.io/v1 */
extern const struct k8s_resource k8s_res_pdbs;            /* policy/v1 */
extern const struct k8s_resource k8s_res_networkpolicies; /* networking.k8s.io/v1 */
extern const struct k8s_resource k8s_res_endpointslices;  /* discovery.k8s.io/v1 */
extern const struct k8s_resource k8s_res_crds;            /* apiextensions.k8s.io/v1 */

/* True for a DNS-1123 subdomain of at most K8S_NAME_MAX bytes ("a.b-c"). */
bool k8s_name_is_valid(const char *name);
/* True for a DNS-1123 label of at most K8S_NAMESPACE_MAX bytes ("kube-system"). */
bool k8s_namespace_is_valid(const char *ns);

/*
 * Builds the path for r. ns: NULL for a cluster-scoped resource, or for a namespaced
 * resource listed across all namespaces; name: NULL for a collection; subresource:
 * NULL, or a lower-case word ("status", "scale", "eviction") that needs a name.
 * *out is a fresh string (free it). -EINVAL for a bad name, namespace, subresource or
 * scope (a namespace on a cluster-scoped resource, a named namespaced object without one).
 */
int k8s_path(const struct k8s_resource *r, const char *ns, const char *name,
             const char *subresource, char **out, struct err *e);

/* "apps/v1" or "v1": the apiVersion of objects of r. Writes at most len bytes. */
void k8s_api_version(const struct k8s_resource *r, char *out, size_t len);

/* Query parameters; zero / NULL / false means "absent". */
struct k8s_query {
	const char *label_selector;
	const char *field_selector;
	const char *continue_token;
	long limit; /* page size, >= 0 */
	const char *resource_version;
	const char *resource_version_match; /* "NotOlderThan" | "Exact" */
	bool allow_watch_bookmarks;         /* allowWatchBookmarks=true */
	int timeout_seconds;                /* >= 0 */
	bool watch;                         /* watch=1 */
	bool dry_run;                       /* dryRun=All */
	const char *field_manager;          /* at most K8S_FIELD_MANAGER_MAX bytes */
	bool force;                         /* force=true (server-side apply) */
	const char *propagation_policy;     /* "Orphan" | "Background" | "Foreground" */
};

/*
 * Appends "?k=v&..." for every present field of q (nothing when none is) to out, in a
 * fixed order. -EINVAL for an out-of-range value, -EMSGSIZE when out's limit is passed
 * (out may then hold a partial query).
 */
int k8s_query_append(struct buf *out, const struct k8s_query *q, struct err *e);
/* Appends s percent-encoded (RFC 3986 unreserved characters stay literal). */
int k8s_url_encode(struct buf *out, const char *s);

#endif

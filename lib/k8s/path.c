/*
 * k8s/path: resource paths, name validation and query strings (see path.h).
 *
 * Everything here is a pure function of its arguments. Validation happens before a
 * single byte of path is written, so a path that exists is a path that is safe to put
 * on the wire verbatim; query values are always percent-encoded.
 */
#include "path.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/alloc.h"

/* group, version, plural, kind, namespaced */
const struct k8s_resource k8s_res_pods = { "", "v1", "pods", "Pod", true };
const struct k8s_resource k8s_res_services = { "", "v1", "services", "Service", true };
const struct k8s_resource k8s_res_secrets = { "", "v1", "secrets", "Secret", true };
const struct k8s_resource k8s_res_configmaps = { "", "v1", "configmaps", "ConfigMap", true };
const struct k8s_resource k8s_res_pvcs = { "", "v1", "persistentvolumeclaims",
	                                   "PersistentVolumeClaim", true };
const struct k8s_resource k8s_res_serviceaccounts = { "", "v1", "serviceaccounts", "ServiceAccount",
	                                              true };
const struct k8s_resource k8s_res_nodes = { "", "v1", "nodes", "Node", false };
const struct k8s_resource k8s_res_namespaces = { "", "v1", "namespaces", "Namespace", false };
const struct k8s_resource k8s_res_events = { "events.k8s.io", "v1", "events", "Event", true };
const struct k8s_resource k8s_res_leases = { "coordination.k8s.io", "v1", "leases", "Lease", true };
const struct k8s_resource k8s_res_roles = { "rbac.authorization.k8s.io", "v1", "roles", "Role",
	                                    true };
const struct k8s_resource k8s_res_rolebindings = { "rbac.authorization.k8s.io", "v1",
	                                           "rolebindings", "RoleBinding", true };
const struct k8s_resource k8s_res_pdbs = { "policy", "v1", "poddisruptionbudgets",
	                                   "PodDisruptionBudget", true };
const struct k8s_resource k8s_res_networkpolicies = { "networking.k8s.io", "v1", "networkpolicies",
	                                              "NetworkPolicy", true };
const struct k8s_resource k8s_res_endpointslices = { "discovery.k8s.io", "v1", "endpointslices",
	                                             "EndpointSlice", true };
const struct k8s_resource k8s_res_crds = { "apiextensions.k8s.io", "v1",
	                                   "customresourcedefinitions", "CustomResourceDefinition",
	                                   false };

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* One DNS-1123 label of s[0..len): [a-z0-9]([-a-z0-9]*[a-z0-9])?, 1..63 bytes. */
static bool label_is_valid(const char *s, size_t len)
{
	if (len == 0 || len > 63 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
		return false;
	for (size_t i = 1; i + 1 < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

bool k8s_name_is_valid(const char *name)
{
	size_t len, start = 0;

	if (!name)
		return false;
	len = strnlen(name, K8S_NAME_MAX + 1);
	if (len == 0 || len > K8S_NAME_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && name[i] != '.')
			continue;
		if (!label_is_valid(name + start, i - start))
			return false;
		start = i + 1;
	}
	return true;
}

bool k8s_namespace_is_valid(const char *ns)
{
	return ns && label_is_valid(ns, strnlen(ns, K8S_NAMESPACE_MAX + 1));
}

/* Subresources are short lower-case words; anything else is a caller bug. */
static bool subresource_is_valid(const char *s)
{
	size_t len = strnlen(s, 33);

	if (len == 0 || len > 32)
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 'a' || s[i] > 'z')
			return false;
	return true;
}

static int path_check(const struct k8s_resource *r, const char *ns, const char *name,
                      const char *sub, struct err *e)
{
	if (ns && !r->namespaced)
		return err_set(e, -EINVAL, "%s is cluster-scoped: no namespace allowed", r->plural);
	if (ns && !k8s_namespace_is_valid(ns))
		return err_set(e, -EINVAL, "invalid namespace \"%.63s\": must be a DNS-1123 label",
		               ns);
	if (name && r->namespaced && !ns)
		return err_set(e, -EINVAL, "%s \"%.253s\": a namespace is required", r->plural,
		               name);
	if (name && !k8s_name_is_valid(name))
		return err_set(e, -EINVAL,
		               "invalid %s name \"%.253s\": must be a DNS-1123 subdomain",
		               r->plural, name);
	if (sub && !name)
		return err_set(e, -EINVAL, "subresource %.32s needs a name", sub);
	if (sub && !subresource_is_valid(sub))
		return err_set(e, -EINVAL, "invalid subresource \"%.32s\"", sub);
	return 0;
}

int k8s_path(const struct k8s_resource *r, const char *ns, const char *name,
             const char *subresource, char **out, struct err *e)
{
	struct buf b = BUF_INIT(K8S_URL_MAX);
	int rc = path_check(r, ns, name, subresource, e);

	if (rc)
		return rc;
	if (r->group[0])
		rc = buf_printf(&b, "/apis/%s/%s", r->group, r->version);
	else
		rc = buf_printf(&b, "/api/%s", r->version);
	if (!rc && ns)
		rc = buf_printf(&b, "/namespaces/%s", ns);
	if (!rc)
		rc = buf_printf(&b, "/%s", r->plural);
	if (!rc && name)
		rc = buf_printf(&b, "/%s", name);
	if (!rc && subresource)
		rc = buf_printf(&b, "/%s", subresource);
	if (rc) {
		buf_release(&b);
		return err_set(e, rc, "path for %s too long", r->plural);
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

void k8s_api_version(const struct k8s_resource *r, char *out, size_t len)
{
	if (r->group[0])
		snprintf(out, len, "%s/%s", r->group, r->version);
	else
		snprintf(out, len, "%s", r->version);
}

static bool is_unreserved(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

int k8s_url_encode(struct buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p && !rc; p++) {
		if (is_unreserved(*p)) {
			rc = buf_append_char(out, (char)*p);
			continue;
		}
		char esc[3] = { '%', hex[*p >> 4], hex[*p & 15] };
		rc = buf_append(out, esc, sizeof(esc));
	}
	return rc;
}

/* How a field of struct k8s_query is rendered. */
enum query_kind {
	QUERY_STR,  /* const char *, percent-encoded; NULL = absent */
	QUERY_LONG, /* long, >= 0; 0 = absent */
	QUERY_INT,  /* int, >= 0; 0 = absent */
	QUERY_FLAG, /* bool; renders `value` when true */
};

static const struct {
	const char *key;
	size_t off;
	enum query_kind kind;
	const char *value; /* QUERY_FLAG only */
} query_fields[] = {
	{ "labelSelector", offsetof(struct k8s_query, label_selector), QUERY_STR, NULL },
	{ "fieldSelector", offsetof(struct k8s_query, field_selector), QUERY_STR, NULL },
	{ "limit", offsetof(struct k8s_query, limit), QUERY_LONG, NULL },
	{ "continue", offsetof(struct k8s_query, continue_token), QUERY_STR, NULL },
	{ "resourceVersion", offsetof(struct k8s_query, resource_version), QUERY_STR, NULL },
	{ "resourceVersionMatch", offsetof(struct k8s_query, resource_version_match), QUERY_STR,
	  NULL },
	{ "watch", offsetof(struct k8s_query, watch), QUERY_FLAG, "1" },
	{ "allowWatchBookmarks", offsetof(struct k8s_query, allow_watch_bookmarks), QUERY_FLAG,
	  "true" },
	{ "timeoutSeconds", offsetof(struct k8s_query, timeout_seconds), QUERY_INT, NULL },
	{ "dryRun", offsetof(struct k8s_query, dry_run), QUERY_FLAG, "All" },
	{ "fieldManager", offsetof(struct k8s_query, field_manager), QUERY_STR, NULL },
	{ "force", offsetof(struct k8s_query, force), QUERY_FLAG, "true" },
	{ "propagationPolicy", offsetof(struct k8s_query, propagation_policy), QUERY_STR, NULL },
};

static bool one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return true;
	return false;
}

static int query_check(const struct k8s_query *q, struct err *e)
{
	static const char *const matches[] = { "NotOlderThan", "Exact", NULL };
	static const char *const policies[] = { "Orphan", "Background", "Foreground", NULL };

	if (q->limit < 0 || q->timeout_seconds < 0)
		return err_set(e, -EINVAL, "query: limit and timeoutSeconds must be >= 0");
	if (q->resource_version_match && !one_of(q->resource_version_match, matches))
		return err_set(e, -EINVAL, "query: resourceVersionMatch \"%.32s\" unknown",
		               q->resource_version_match);
	if (q->propagation_policy && !one_of(q->propagation_policy, policies))
		return err_set(e, -EINVAL, "query: propagationPolicy \"%.32s\" unknown",
		               q->propagation_policy);
	if (q->field_manager &&
	    (!q->field_manager[0] || strlen(q->field_manager) > K8S_FIELD_MANAGER_MAX))
		return err_set(e, -EINVAL, "query: fieldManager must be 1..%d bytes",
		               K8S_FIELD_MANAGER_MAX);
	return 0;
}

/* Renders field i of q into val (a number or flag) or *str (a string); false if absent. */
static bool query_value(const struct k8s_query *q, size_t i, char val[32], const char **str)
{
	const char *field = (const char *)q + query_fields[i].off;

	*str = val;
	switch (query_fields[i].kind) {
	case QUERY_STR: *str = *(const char *const *)(const void *)field; return *str != NULL;
	case QUERY_LONG: snprintf(val, 32, "%ld", *(const long *)(const void *)field); break;
	case QUERY_INT: snprintf(val, 32, "%d", *(const int *)(const void *)field); break;
	case QUERY_FLAG:
		if (!*(const bool *)(const void *)field)
			return false;
		snprintf(val, 32, "%s", query_fields[i].value);
		return true;
	}
	return strcmp(val, "0") != 0;
}

int k8s_query_append(struct buf *out, const struct k8s_query *q, struct err *e)
{
	char val[32];
	const char *str;
	char sep = '?';
	int rc = query_check(q, e);

	for (size_t i = 0; !rc && i < sizeof(query_fields) / sizeof(query_fields[0]); i++) {
		if (!query_value(q, i, val, &str))
			continue;
		rc = buf_printf(out, "%c%s=", sep, query_fields[i].key);
		if (!rc)
			rc = k8s_url_encode(out, str);
		sep = '&';
		if (rc)
			err_set(e, rc, "query too long at %s", query_fields[i].key);
	}
	return rc;
}

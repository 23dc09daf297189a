/*
 * fields: values a Pod reads from elsewhere, shared by env (pods.c) and volumes
 * (volumes.c): downward-API field paths, resourceFieldRefs (rounded up as the kubelet
 * does, unset limits defaulting to the node's capacity), and the bytes of a Secret or
 * ConfigMap key (base64 decoded). Pure functions; any thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/parse.h"

/* The container named name among spec.containers and spec.initContainers, or NULL. */
static json_t *container_named(json_t *pod, const char *name)
{
	static const char *const lists[] = { "spec.containers", "spec.initContainers" };
	json_t *c;
	size_t i;

	for (size_t l = 0; l < 2; l++) {
		json_array_foreach (jsonx_get(pod, lists[l]), i, c) {
			const char *n = json_string_value(json_object_get(c, "name"));

			if (n && strcmp(n, name) == 0)
				return c;
		}
	}
	return NULL;
}

/* --- field and resource references ------------------------------------------------------------- */

/* path is prefix['key'] (or ["key"]): the key into out. */
static bool map_subscript(const char *path, const char *prefix, char *out, size_t len)
{
	size_t pl = strlen(prefix), n = strlen(path);

	if (strncmp(path, prefix, pl) != 0 || n < pl + 4 || path[pl] != '[' || path[n - 1] != ']')
		return false;
	if (!((path[pl + 1] == '\'' && path[n - 2] == '\'') ||
	      (path[pl + 1] == '"' && path[n - 2] == '"')) ||
	    n - pl - 4 >= len)
		return false;
	memcpy(out, path + pl + 2, n - pl - 4);
	out[n - pl - 4] = '\0';
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* k="v" lines, sorted by key, as the kubelet's fieldpath.FormatMap writes them. */
static char *format_map(json_t *map)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	size_t n = json_object_size(map), i = 0;
	const char **keys = xcalloc(n + 1, sizeof(*keys));
	const char *k;
	json_t *v;

	json_object_foreach (map, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n; i++) {
		const char *s = json_string_value(json_object_get(map, keys[i]));

		buf_printf(&b, "%s=\"", keys[i]);
		for (; s && *s; s++) {
			if (*s == '"' || *s == '\\')
				buf_append_char(&b, '\\');
			if (*s == '\n')
				buf_append_str(&b, "\\n");
			else
				buf_append_char(&b, *s);
		}
		buf_append_str(&b, "\"\n");
	}
	free(keys);
	return buf_detach(&b, NULL);
}

static int map_field(json_t *pod, const char *path, bool for_volume, char **out)
{
	static const char *const maps[] = { "metadata.labels", "metadata.annotations" };
	char key[320];

	for (size_t i = 0; i < 2; i++) {
		json_t *m = jsonx_get(pod, maps[i]);

		if (for_volume && strcmp(path, maps[i]) == 0) {
			*out = format_map(m);
			return 0;
		}
		if (map_subscript(path, maps[i], key, sizeof(key))) {
			const char *v = json_string_value(json_object_get(m, key));

			*out = xstrdup(v ? v : "");
			return 0;
		}
	}
	return -EINVAL;
}

int na_field_ref(json_t *pod, const char *path, const struct na_pod_ctx *ctx, bool for_volume,
                 char **out, struct err *e)
{
	static const char *const plain[] = { "metadata.name", "metadata.namespace", "metadata.uid",
		                             "spec.serviceAccountName" };
	const char *v;

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		if (strcmp(path, plain[i]) != 0)
			continue;
		v = json_string_value(jsonx_get(pod, path));
		*out = xstrdup(v ? v : "");
		return 0;
	}
	if (strcmp(path, "spec.nodeName") == 0) {
		v = json_string_value(jsonx_get(pod, path));
		*out = xstrdup(v ? v : ctx->node_name);
	} else if (strcmp(path, "status.hostIP") == 0 || strcmp(path, "status.hostIPs") == 0) {
		*out = xstrdup(ctx->host_ip);
	} else if (strcmp(path, "status.podIP") == 0 || strcmp(path, "status.podIPs") == 0) {
		*out = xstrdup(ctx->pod_ip ? ctx->pod_ip : NA_POD_IP_MARK);
	} else if (map_field(pod, path, for_volume, out) < 0) {
		return err_set(e, -EINVAL, "fieldRef %.200s: unsupported field path", path);
	}
	return 0;
}

enum res_kind { RES_CPU, RES_BYTES };

static const struct {
	const char *name; /* resourceFieldRef.resource */
	const char *path; /* in the container */
	enum res_kind kind;
	bool limit;      /* unset: the node's capacity; else 0 */
	size_t node_off; /* the node's capacity in struct na_pod_ctx (RES_BYTES) */
} res_table[] = {
	{ "limits.cpu", "resources.limits.cpu", RES_CPU, true, 0 },
	{ "requests.cpu", "resources.requests.cpu", RES_CPU, false, 0 },
	{ "limits.memory", "resources.limits.memory", RES_BYTES, true,
	  offsetof(struct na_pod_ctx, node_memory) },
	{ "requests.memory", "resources.requests.memory", RES_BYTES, false, 0 },
	{ "limits.ephemeral-storage", "resources.limits.ephemeral-storage", RES_BYTES, true,
	  offsetof(struct na_pod_ctx, node_storage) },
	{ "requests.ephemeral-storage", "resources.requests.ephemeral-storage", RES_BYTES, false,
	  0 },
};

/* value / divisor rounded up, both parsed in kind's unit. */
static int res_value(enum res_kind kind, const char *val, const char *div, uint64_t deflt,
                     uint64_t *out, struct err *e)
{
	uint64_t v = deflt, d;
	int64_t m;

	if (kind == RES_CPU) {
		if (val && parse_quantity_milli(val, &m, e) < 0)
			return -EINVAL;
		v = val ? (uint64_t)m : deflt;
		if (parse_quantity_milli(div, &m, e) < 0 || m <= 0)
			return err_set(e, -EINVAL, "divisor %.64s: must be positive", div);
		d = (uint64_t)m;
	} else {
		if ((val && parse_quantity_bytes(val, &v, e) < 0) ||
		    parse_quantity_bytes(div, &d, e) < 0 || d == 0)
			return err_set(e, -EINVAL, "divisor %.64s: must be positive", div);
	}
	*out = v / d + (v % d != 0);
	return 0;
}

int na_resource_ref(json_t *pod, json_t *ref, const char *default_ctr, const struct na_pod_ctx *ctx,
                    char **out, struct err *e)
{
	const char *cname = NULL, *res = NULL, *div = NULL, *val;
	json_t *ctr;
	uint64_t v = 0;

	if (jsonx_string(ref, "containerName", default_ctr, &cname, e) ||
	    jsonx_string_req(ref, "resource", &res, e) ||
	    jsonx_string(ref, "divisor", "1", &div, e))
		return -EINVAL;
	if (!cname || !(ctr = container_named(pod, cname)))
		return err_set(e, -EINVAL, "resourceFieldRef: no container %.64s",
		               cname ? cname : "(containerName is required)");
	for (size_t i = 0; i < sizeof(res_table) / sizeof(res_table[0]); i++) {
		uint64_t deflt = 0;

		if (strcmp(res, res_table[i].name) != 0)
			continue;
		val = json_string_value(jsonx_get(ctr, res_table[i].path));
		if (res_table[i].limit && res_table[i].kind == RES_CPU)
			deflt = (uint64_t)ctx->node_cpu_milli;
		else if (res_table[i].limit)
			deflt = *(const uint64_t *)((const char *)ctx + res_table[i].node_off);
		if (res_value(res_table[i].kind, val, div, deflt, &v, e) < 0)
			return -EINVAL;
		*out = xasprintf("%llu", (unsigned long long)v);
		return 0;
	}
	return err_set(e, -EINVAL, "resourceFieldRef: unsupported resource %.64s", res);
}

/* The bytes of key in obj: a Secret's data (base64), a ConfigMap's data or binaryData. */
int na_source_value(json_t *obj, bool is_secret, const char *key, char **out, size_t *len)
{
	json_t *d = json_object_get(json_object_get(obj, "data"), key);
	json_t *bin = json_object_get(json_object_get(obj, "binaryData"), key);

	if (json_is_string(d) && !is_secret) {
		*len = json_string_length(d);
		*out = xstrndup(json_string_value(d), *len);
		return 0;
	}
	if (!is_secret && json_is_string(bin))
		d = bin;
	if (!json_is_string(d))
		return -ENOENT;
	return base64_decode(json_string_value(d), json_string_length(d), 0, out, len);
}

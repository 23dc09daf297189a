/*
 * fence: `fence` and `unfence` edit the redis.io/fencedInstances annotation, a JSON list
 * of pod names or ["*"] (controller/README.md): the controller fences every listed pod
 * through its instance manager and unfences a pod once it leaves the list. The edit of
 * the list is pure (plugin_fence_edit, unit-tested); the verbs read, edit and
 * merge-patch it. The read-edit-write is guarded by the resourceVersion it read, so a
 * concurrent edit is refused (-EBUSY) rather than lost; the verb then reads and edits
 * again, up to FENCE_TRIES times (the controller's own writes, its status among them,
 * move the resourceVersion every few seconds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/resources.h"
#include "lib/jsonx.h"
#include "plugin/fence.h"

#define ANN_FENCED  "redis.io/fencedInstances"
#define ALL         "*"
#define FENCE_TRIES 5

static bool listed(json_t *list, const char *pod, size_t *at)
{
	size_t i;
	json_t *v;

	json_array_foreach (list, i, v) {
		if (json_is_string(v) && strcmp(json_string_value(v), pod) == 0) {
			*at = i;
			return true;
		}
	}
	return false;
}

static int load_list(const char *current, json_t **out, struct err *e)
{
	json_t *l;

	if (!current || !*current) {
		*out = json_array();
		return 0;
	}
	if (jsonx_loadb(current, strlen(current), 65536, &l, e))
		return err_set(e, -EPROTO, "%s: not JSON", ANN_FENCED);
	if (!json_is_array(l)) {
		json_decref(l);
		return err_set(e, -EPROTO, "%s: expected a JSON list of pod names", ANN_FENCED);
	}
	*out = l;
	return 0;
}

/* The new list for one edit; NULL: remove the annotation. */
static int edit(json_t *l, const char *pod, bool fence, json_t **out, struct err *e)
{
	bool all = strcmp(pod, "all") == 0;
	size_t at;

	if (fence) {
		if (all)
			json_array_clear(l);
		if (all || !(listed(l, ALL, &at) || listed(l, pod, &at)))
			json_array_append_new(l, json_string(all ? ALL : pod));
	} else if (all) {
		json_array_clear(l);
	} else if (listed(l, pod, &at)) {
		json_array_remove(l, at);
	} else if (listed(l, ALL, &at)) {
		return err_set(e, -EINVAL,
		               "every pod is fenced (%s=[\"*\"]): unfence all, then fence "
		               "the pods that must stay fenced",
		               ANN_FENCED);
	}
	*out = json_array_size(l) ? json_incref(l) : NULL;
	return 0;
}

int plugin_fence_edit(const char *current, const char *pod, bool fence, char **out, struct err *e)
{
	json_t *l = NULL, *n = NULL;
	int rc = load_list(current, &l, e);

	if (!rc)
		rc = edit(l, pod, fence, &n, e);
	if (!rc)
		*out = n ? jsonx_dumps_compact(n) : NULL;
	json_decref(n);
	json_decref(l);
	return rc;
}

static int fence_once(struct plugin_ctx *ctx, const struct plugin_args *a, bool fence,
                      struct err *e)
{
	const char *name = a->pos[0], *pod = a->pos[1];
	json_t *obj = NULL, *p;
	char *list = NULL;
	int rc = k8s_get(ctx->client, &api_res_redisclusters, ctx->ns, name, &obj, e);

	if (!rc)
		rc = plugin_fence_edit(
		        jsonx_get_string(obj, "metadata.annotations[\"" ANN_FENCED "\"]"), pod,
		        fence, &list, e);
	if (rc)
		goto out;
	p = json_pack("{s:{s:s,s:{s:o}}}", "metadata", "resourceVersion",
	              jsonx_get_string(obj, "metadata.resourceVersion"), "annotations", ANN_FENCED,
	              list ? json_string(list) : json_null());
	rc = k8s_patch(ctx->client, &api_res_redisclusters, ctx->ns, name, NULL, K8S_PATCH_MERGE, p,
	               NULL, NULL, e);
	json_decref(p);
	if (!rc)
		printf("%s %s/%s %s: %s=%s\n", fence ? "fenced" : "unfenced", ctx->ns, name, pod,
		       ANN_FENCED, list ? list : "(removed)");
out:
	free(list);
	json_decref(obj);
	return rc;
}

static int fence_verb(struct plugin_ctx *ctx, const struct plugin_args *a, bool fence,
                      struct err *e)
{
	int rc = -EBUSY;

	for (int i = 0; i < FENCE_TRIES && rc == -EBUSY; i++) {
		if (i)
			err_clear(e);
		rc = fence_once(ctx, a, fence, e);
	}
	return rc;
}

int plugin_fence(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	return fence_verb(ctx, a, true, e);
}

int plugin_unfence(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	return fence_verb(ctx, a, false, e);
}

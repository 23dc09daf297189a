/*
 * logs: `kubectl redis logs NAME`: the log of every container of every pod of the
 * cluster (data and sentinel pods, by name; init containers left out), pod after pod,
 * each line prefixed "[POD] " (or "[POD/CONTAINER] " for a pod with several
 * containers). At most LOG_LIMIT_BYTES per container; a pod whose log cannot be read is
 * said on stderr and the others still printed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/jsonx.h"
#include "plugin/plugin.h"

#define LOG_LIMIT_BYTES (8u << 20)
#define LABEL_CLUSTER   "redis.io/cluster"

void plugin_logs_prefix(const char *prefix, const char *text, size_t len, struct buf *out)
{
	const char *p = text, *end = text + len, *nl;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		buf_printf(out, "[%s] ", prefix);
		buf_append(out, p, nl ? (size_t)(nl - p) : (size_t)(end - p));
		buf_append_char(out, '\n');
		p = nl ? nl + 1 : end;
	}
}

/* One container's log, prefixed, to stdout; 0 or the error (said on stderr). */
static int one(struct plugin_ctx *ctx, const char *pod, const char *c, bool several)
{
	char path[800], prefix[600];
	struct buf body = BUF_INIT(LOG_LIMIT_BYTES + 65536), out = BUF_INIT(BUF_NO_LIMIT);
	struct err e = { 0 };
	int rc;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/log?container=%s&limitBytes=%u",
	         ctx->ns, pod, c, LOG_LIMIT_BYTES);
	snprintf(prefix, sizeof(prefix), several ? "%s/%s" : "%s", pod, c);
	rc = k8s_get_raw(ctx->client, path, &body, &e);
	if (rc) {
		fprintf(stderr, "kubectl redis logs: %s: %s\n", prefix, e.msg);
	} else {
		plugin_logs_prefix(prefix, body.data ? body.data : "", body.len, &out);
		fwrite(out.data ? out.data : "", 1, out.len, stdout);
	}
	buf_release(&body);
	buf_release(&out);
	return rc;
}

int plugin_logs(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	char sel[300];
	struct k8s_list_opts lo = { .label_selector = sel };
	json_t *pods, *pod, *c;
	size_t i, j, failed = 0;
	int rc;

	snprintf(sel, sizeof(sel), "%s=%s", LABEL_CLUSTER, a->pos[0]);
	if ((rc = k8s_list(ctx->client, &k8s_res_pods, ctx->ns, &lo, &pods, NULL, e)))
		return rc;
	if (!json_array_size(pods))
		rc = err_set(e, -ENOENT, "no pod labelled %s in %s", sel, ctx->ns);
	json_array_foreach (pods, i, pod) {
		json_t *cs = jsonx_get(pod, "spec.containers");

		json_array_foreach (cs, j, c) {
			failed += one(ctx, jsonx_get_string(pod, "metadata.name"),
			              jsonx_get_string(c, "name"), json_array_size(cs) > 1) != 0;
		}
	}
	if (!rc && failed)
		rc = err_set(e, -EIO, "%zu log(s) could not be read (above)", failed);
	json_decref(pods);
	return rc;
}

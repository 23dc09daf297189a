/*
 * status: the fetching half of `kubectl redis status NAME [-o json|yaml]` (status.h).
 *
 * Each pod's /v1/status comes through the API server's pod proxy subresource
 * (GET /api/v1/namespaces/NS/pods/https:POD:8000/proxy/v1/status), so the user needs
 * only the RBAC verb `get` on pods/proxy and no certificate of their own: the instance
 * manager asks HTTPS clients for a certificate but requires one only for mutations
 * (instance/http.c), and the API server does not verify the pod's serving certificate
 * on that path. A pod that cannot be reached that way (no pods/proxy right, not
 * running, an API server that cannot route to pod IPs) is shown from the RedisCluster's
 * status.instancesStatus, marked "cluster status" with the reason.
 * The pods are asked all at once (lib/k8s/multi, with the kubeconfig's credentials),
 * each under PLUGIN_INST_TIMEOUT_MS.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/instance_v1.h"
#include "api/resources.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/multi.h"
#include "plugin/plugin.h"
#include "plugin/status.h"
#include "plugin/yaml.h"

#define LABEL_CLUSTER "redis.io/cluster"

static const char *name_of(json_t *obj)
{
	const char *n = jsonx_get_string(obj, "metadata.name");

	return n ? n : "";
}

/* The cluster's pods (data and sentinel), sorted by name (insertion: a few pods): a new
 * array. */
static int list_pods(struct plugin_ctx *ctx, const char *name, json_t **out, struct err *e)
{
	char sel[300];
	struct k8s_list_opts lo = { .label_selector = sel };
	json_t *items, *sorted, *it;
	size_t i, at;
	int rc;

	snprintf(sel, sizeof(sel), "%s=%s", LABEL_CLUSTER, name);
	if ((rc = k8s_list(ctx->client, &k8s_res_pods, ctx->ns, &lo, &items, NULL, e)))
		return rc;
	sorted = json_array();
	json_array_foreach (items, i, it) {
		for (at = 0; at < json_array_size(sorted); at++)
			if (strcmp(name_of(it), name_of(json_array_get(sorted, at))) < 0)
				break;
		json_array_insert(sorted, at, it);
	}
	json_decref(items);
	*out = sorted;
	return 0;
}

/* The primary Lease's holder (a new string), or NULL when there is none. */
static char *lease_holder(struct plugin_ctx *ctx, const char *name)
{
	char lname[300];
	json_t *l = NULL;
	char *h = NULL;

	snprintf(lname, sizeof(lname), "%s-primary", name);
	if (k8s_get(ctx->client, &k8s_res_leases, ctx->ns, lname, &l, NULL) == 0 &&
	    jsonx_get_string(l, "spec.holderIdentity") &&
	    *jsonx_get_string(l, "spec.holderIdentity"))
		h = xstrdup(jsonx_get_string(l, "spec.holderIdentity"));
	json_decref(l);
	return h;
}

/* The pod's Ready condition: 1, 0, or -1 when it has none. */
static int pod_ready(json_t *pod)
{
	const char *st = jsonx_get_string(
	        jsonx_find(jsonx_get(pod, "status.conditions"), "type", "Ready"), "status");

	return st ? strcmp(st, "True") == 0 : -1;
}

/* The pod's labels and readiness into f; false for a sentinel pod (no /v1/status asked). */
static bool describe(json_t *pod, struct plugin_inst_fetch *f)
{
	const char *role = jsonx_get_string(pod, "metadata.labels[\"redis.io/role\"]");

	f->pod = jsonx_get_string(pod, "metadata.name");
	f->role_label = role;
	f->pod_ready = pod_ready(pod);
	if (role && strcmp(role, API_INST_ROLE_SENTINEL) == 0) {
		f->error = "a sentinel pod";
		return false;
	}
	return true;
}

/* One answer of the proxy: the body, or why there is none (in why). */
static void take_result(const struct k8s_multi_result *r, struct plugin_inst_fetch *f, char *why,
                        size_t len)
{
	struct err e = { 0 };

	if (r->err == 0 && r->http == 200) {
		f->body = r->body;
		f->len = r->body_len;
		return;
	}
	if (r->err == 0)
		k8s_status_to_err(r->http, r->body, r->body_len, &e);
	snprintf(why, len, "GET pods/%s/proxy/v1/status: %s", f->pod, r->err ? r->msg : e.msg);
	f->error = why;
}

struct fetched {
	json_t *cluster, *pods, *backups;
	char *holder;
	struct plugin_inst_fetch *inst;
	struct k8s_multi_result *res;
	char **urls;
	char (*why)[ERR_MSG_MAX + 64];
	size_t n;
};

static void fetched_release(struct fetched *f)
{
	k8s_multi_results_release(f->res, f->n);
	for (size_t i = 0; i < f->n; i++)
		free(f->urls[i]);
	free(f->urls);
	free(f->res);
	free(f->inst);
	free(f->why);
	free(f->holder);
	json_decref(f->cluster);
	json_decref(f->pods);
	json_decref(f->backups);
}

/* Every data pod's /v1/status through the API server's pod proxy, all at once, with the
 * kubeconfig's credentials; each request under PLUGIN_INST_TIMEOUT_MS. */
static void fetch_instances(struct plugin_ctx *ctx, struct fetched *f)
{
	const struct k8s_config *c = ctx->cfg;
	struct k8s_multi_tls tls = { .ca_file = c->ca_file,
		                     .ca_pem = c->ca_pem,
		                     .cert_file = c->cert_file,
		                     .cert_pem = c->cert_pem,
		                     .key_file = c->key_file,
		                     .key_pem = c->key_pem,
		                     .insecure_skip_verify = c->insecure_skip_verify };
	struct k8s_multi_opts o = { .timeout_ms = PLUGIN_INST_TIMEOUT_MS,
		                    .tls = &tls,
		                    .body_max = API_INST_STATUS_BODY_MAX,
		                    .bearer_token = k8s_config_token(ctx->cfg, clock_mono_ms()),
		                    .user_agent = "kubectl-redis" };

	for (size_t i = 0; i < f->n; i++)
		if (describe(json_array_get(f->pods, i), &f->inst[i]))
			f->urls[i] = xasprintf(
			        "%s/api/v1/namespaces/%s/pods/https:%s:%d/proxy/v1/status",
			        c->server, ctx->ns, f->inst[i].pod, API_PORT_HTTP);
	k8s_multi_get_once((const char *const *)f->urls, f->n, &o, f->res, NULL);
	for (size_t i = 0; i < f->n; i++)
		if (f->urls[i])
			take_result(&f->res[i], &f->inst[i], f->why[i], sizeof(f->why[i]));
}

static int fetch(struct plugin_ctx *ctx, const char *name, struct fetched *f, struct err *e)
{
	int rc = k8s_get(ctx->client, &api_res_redisclusters, ctx->ns, name, &f->cluster, e);

	if (!rc)
		rc = list_pods(ctx, name, &f->pods, e);
	if (rc)
		return rc;
	f->holder = lease_holder(ctx, name);
	f->n = json_array_size(f->pods);
	f->inst = xcalloc(f->n + 1, sizeof(*f->inst));
	f->res = xcalloc(f->n + 1, sizeof(*f->res));
	f->urls = xcalloc(f->n + 1, sizeof(*f->urls));
	f->why = xcalloc(f->n + 1, sizeof(*f->why));
	if (f->n)
		fetch_instances(ctx, f);
	/* a cluster's backups are not worth failing the status for */
	if (k8s_list(ctx->client, &api_res_redisbackups, ctx->ns, NULL, &f->backups, NULL, NULL))
		f->backups = json_array();
	return 0;
}

static int print_view(json_t *view, const char *format, bool colour, struct err *e)
{
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	char *t;

	if (!format) {
		plugin_status_render(view, colour, &out);
	} else if (strcmp(format, "json") == 0) {
		t = json_dumps(view, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		buf_printf(&out, "%s\n", t);
		free(t);
	} else if (strcmp(format, "yaml") == 0) {
		plugin_yaml_emit(view, &out);
	} else {
		buf_release(&out);
		return err_set(e, -EINVAL, "-o %s: expected json or yaml", format);
	}
	fputs(buf_cstr(&out), stdout);
	buf_release(&out);
	return 0;
}

int plugin_status(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	struct fetched f = { 0 };
	const char *format = a->opt[PLUGIN_F_OUTPUT];
	json_t *view;
	int rc;

	if (format && strcmp(format, "json") != 0 && strcmp(format, "yaml") != 0)
		return err_set(e, -EINVAL, "-o %s: expected json or yaml", format);
	rc = fetch(ctx, a->pos[0], &f, e);
	if (!rc) {
		view = plugin_status_view(f.cluster, f.holder, f.inst, f.n, f.backups);
		rc = print_view(view, format, ctx->colour, e);
		json_decref(view);
	}
	fetched_release(&f);
	return rc;
}

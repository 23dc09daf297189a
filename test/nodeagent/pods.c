/*
 * pods: a Pod object as the runtime wants it (struct rt_pod_spec), and the runtime's view
 * (struct rt_pod_status) back as the Pod's status. Pure functions of their arguments: the
 * lookup callbacks of struct na_pod_ctx answer Secrets and ConfigMaps, so the tests feed
 * Pod JSON and compare with golden files.
 *
 * Environment, as the kubelet builds it: KUBERNETES_SERVICE_HOST/PORT first (the API
 * server's own address: nothing here routes the ClusterIP), then envFrom, then env; a
 * later name wins (the runtime replaces). Literal env values keep $(VAR) references, which
 * the runtime expands; values that come from valueFrom or envFrom are escaped ("$" ->
 * "$$") so they stay literal, as in Kubernetes. status.podIP is unknown until the sandbox
 * exists: NA_POD_IP_MARK stands in and na_spec_fill_pod_ip replaces it afterwards.
 *
 * Approximations, documented: a grpc probe is a TCP check of its port; a preStop sleep
 * is an exec of `sleep N`; a preStop httpGet is ignored; subPathExpr is refused.
 * Downward-API values and Secret/ConfigMap bytes come from fields.c; the status the
 * other way round is podstatus.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "imagemap.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/path.h"
#include "lib/parse.h"

/* --- small helpers -------------------------------------------------------------------------- */

/* A Pod of the wrong shape is -EINVAL whatever jsonx said (-ENOENT for a missing required
 * field, -ERANGE): -ENOENT is kept for missing Secrets and ConfigMaps. */
static int shape(int rc)
{
	return rc ? -EINVAL : 0;
}

/* "$" -> "$$": a value the runtime must not expand. */
static char *escape_dollar(const char *s)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (; *s; s++) {
		if (*s == '$')
			buf_append_char(&b, '$');
		buf_append_char(&b, *s);
	}
	return buf_detach(&b, NULL);
}

/* A JSON array of strings as a NULL-terminated vector (NULL when absent). */
static int strv_from_json(json_t *root, const char *path, char ***out, struct err *e)
{
	json_t *arr, *it;
	char **v;
	size_t i;
	int rc;

	if ((rc = shape(jsonx_array(root, path, &arr, e))))
		return rc;
	if (!arr) {
		*out = NULL;
		return 0;
	}
	v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
	json_array_foreach (arr, i, it) {
		if (!json_is_string(it)) {
			for (size_t k = 0; k < i; k++)
				free(v[k]);
			free(v);
			return err_set(e, -EINVAL, "%s[%zu]: expected string", path, i);
		}
		v[i] = xstrdup(json_string_value(it));
	}
	*out = v;
	return 0;
}

/* --- Secret and ConfigMap keys ------------------------------------------------------------------ */

struct src_kind {
	const struct k8s_resource *res;
	const char *word; /* "secret", "configmap": the kubelet's messages */
	const char *kind; /* "Secret", "ConfigMap" */
};

static const struct src_kind src_secret = { &k8s_res_secrets, "secret", "Secret" };
static const struct src_kind src_configmap = { &k8s_res_configmaps, "configmap", "ConfigMap" };

/* ns/name of kind: a new reference, NULL + 0 when absent and optional, else -ENOENT. */
static int source_get(const struct src_kind *k, const struct na_pod_ctx *ctx, const char *ns,
                      const char *name, bool optional, json_t **out, struct err *e)
{
	json_t *obj = ctx->lookup->get(ctx->lookup->ctx, k->res, ns, name);

	*out = obj;
	if (!obj && !optional)
		return err_set(e, -ENOENT, "%s \"%.200s\" not found", k->word, name);
	return 0;
}

/* A secretKeyRef or configMapKeyRef: *out NULL when optional and missing. */
static int key_ref(json_t *ref, const struct src_kind *k, const char *ns,
                   const struct na_pod_ctx *ctx, char **out, struct err *e)
{
	const char *name = NULL, *key = NULL;
	bool optional = false;
	json_t *obj;
	size_t len;
	int rc;

	if (jsonx_string_req(ref, "name", &name, e) || jsonx_string_req(ref, "key", &key, e) ||
	    jsonx_bool(ref, "optional", false, &optional, e))
		return -EINVAL;
	*out = NULL;
	if ((rc = source_get(k, ctx, ns, name, optional, &obj, e)) || !obj)
		return rc;
	rc = na_source_value(obj, k == &src_secret, key, out, &len);
	json_decref(obj);
	if (rc == -ENOENT && optional)
		return 0;
	if (rc == -ENOENT)
		return err_set(e, -ENOENT, "couldn't find key %.100s in %s %.63s/%.200s", key,
		               k->kind, ns, name);
	if (rc)
		return err_set(e, rc, "%s %.63s/%.200s: key %.100s is not valid base64", k->kind,
		               ns, name, key);
	return 0;
}

/* --- environment -------------------------------------------------------------------------------- */

struct envv {
	struct rt_env *v;
	size_t n;
};

static void envv_push(struct envv *ev, const char *name, char *value_owned)
{
	ev->v = xreallocarray(ev->v, ev->n + 1, sizeof(*ev->v));
	ev->v[ev->n].name = xstrdup(name);
	ev->v[ev->n].value = value_owned;
	ev->n++;
}

static void envv_release(struct envv *ev)
{
	for (size_t i = 0; i < ev->n; i++) {
		free(ev->v[i].name);
		free_secret(ev->v[i].value);
	}
	free(ev->v);
	memset(ev, 0, sizeof(*ev));
}

/* Kubernetes' IsEnvVarName: [-._a-zA-Z][-._a-zA-Z0-9]*. */
static bool env_name_is_valid(const char *s)
{
	static const char letters[] = "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	size_t n = strlen(s);

	if (!n || !strchr(letters, s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!strchr(letters, s[i]) && (s[i] < '0' || s[i] > '9'))
			return false;
	return true;
}

struct env_in {
	json_t *pod, *ctr;
	const char *ns, *ctr_name;
	const struct na_pod_ctx *ctx;
};

static int value_from(const struct env_in *in, json_t *from, char **out, struct err *e)
{
	json_t *ref;
	const char *path = NULL;
	char *raw = NULL;
	int rc = -EINVAL;

	if ((ref = json_object_get(from, "fieldRef"))) {
		if (!jsonx_string_req(ref, "fieldPath", &path, e))
			rc = na_field_ref(in->pod, path, in->ctx, false, &raw, e);
	} else if ((ref = json_object_get(from, "resourceFieldRef"))) {
		rc = na_resource_ref(in->pod, ref, in->ctr_name, in->ctx, &raw, e);
	} else if ((ref = json_object_get(from, "secretKeyRef"))) {
		rc = key_ref(ref, &src_secret, in->ns, in->ctx, &raw, e);
	} else if ((ref = json_object_get(from, "configMapKeyRef"))) {
		rc = key_ref(ref, &src_configmap, in->ns, in->ctx, &raw, e);
	} else {
		return err_set(e, -EINVAL, "valueFrom: no supported source");
	}
	if (rc)
		return rc;
	*out = raw && strcmp(raw, NA_POD_IP_MARK) != 0 ? escape_dollar(raw) : raw;
	if (*out != raw)
		free_secret(raw);
	return 0;
}

/* Every message below is relative to the container; container_build prefixes its path. */

static int env_list(const struct env_in *in, struct envv *ev, struct err *e)
{
	json_t *env, *it;
	struct err ie;
	size_t i;
	int rc;

	err_clear(&ie);
	if ((rc = shape(jsonx_array(in->ctr, "env", &env, e))))
		return rc;
	json_array_foreach (env, i, it) {
		const char *name = NULL, *value = NULL;
		json_t *from = json_object_get(it, "valueFrom");
		char *v = NULL;

		if ((rc = shape(jsonx_string_req(it, "name", &name, &ie))) ||
		    (rc = shape(jsonx_string(it, "value", "", &value, &ie))))
			return err_set(e, rc, "env[%zu]: %s", i, ie.msg);
		if (from && (rc = value_from(in, from, &v, &ie)))
			return err_set(e, rc, "env[%zu] (%.64s): %s", i, name, ie.msg);
		if (from && !v)
			continue; /* optional and missing */
		envv_push(ev, name, from ? v : xstrdup(value));
	}
	return 0;
}

/* Every key of obj as PREFIX+key (values escaped), invalid names skipped. */
static void env_from_object(json_t *obj, bool is_secret, const char *prefix, struct envv *ev)
{
	static const char *const maps[] = { "data", "binaryData" };

	for (size_t m = 0; m < 2; m++) {
		const char *key;
		json_t *v;

		json_object_foreach (json_object_get(obj, maps[m]), key, v) {
			char *name = xasprintf("%s%s", prefix, key), *raw;
			size_t len;

			if (env_name_is_valid(name) &&
			    na_source_value(obj, is_secret, key, &raw, &len) == 0) {
				envv_push(ev, name, escape_dollar(raw));
				free_secret(raw);
			}
			free(name);
		}
	}
}

static int env_from_one(const struct env_in *in, json_t *it, struct envv *ev, struct err *e)
{
	json_t *cm = json_object_get(it, "configMapRef"), *sec = json_object_get(it, "secretRef");
	const char *prefix = NULL, *name = NULL;
	bool optional = false;
	json_t *obj = NULL;
	int rc;

	if (!cm && !sec)
		return err_set(e, -EINVAL, "neither configMapRef nor secretRef");
	if ((rc = shape(jsonx_string(it, "prefix", "", &prefix, e))) ||
	    (rc = shape(jsonx_string_req(cm ? cm : sec, "name", &name, e))) ||
	    (rc = shape(jsonx_bool(cm ? cm : sec, "optional", false, &optional, e))))
		return rc;
	rc = source_get(cm ? &src_configmap : &src_secret, in->ctx, in->ns, name, optional, &obj,
	                e);
	if (!rc)
		env_from_object(obj, !cm, prefix, ev);
	json_decref(obj);
	return rc;
}

static int env_from(const struct env_in *in, struct envv *ev, struct err *e)
{
	json_t *list, *it;
	struct err ie;
	size_t i;
	int rc;

	err_clear(&ie);
	if ((rc = shape(jsonx_array(in->ctr, "envFrom", &list, e))))
		return rc;
	json_array_foreach (list, i, it)
		if ((rc = env_from_one(in, it, ev, &ie)))
			return err_set(e, rc, "envFrom[%zu]: %s", i, ie.msg);
	return 0;
}

static int env_build(const struct env_in *in, struct rt_container *out, struct err *e)
{
	struct envv ev = { NULL, 0 };
	int rc;

	envv_push(&ev, "KUBERNETES_SERVICE_HOST", escape_dollar(in->ctx->service_host));
	envv_push(&ev, "KUBERNETES_SERVICE_PORT", escape_dollar(in->ctx->service_port));
	if ((rc = env_from(in, &ev, e)) || (rc = env_list(in, &ev, e))) {
		envv_release(&ev);
		return rc;
	}
	out->env = ev.v;
	out->n_env = ev.n;
	return 0;
}

/* --- probes and hooks ------------------------------------------------------------------------------ */

static int port_resolve(json_t *port, json_t *ctr, const char *what, int *out, struct err *e)
{
	int64_t n;
	json_t *p;
	size_t i;

	if (json_is_integer(port) && json_integer_value(port) >= 1 &&
	    json_integer_value(port) <= 65535) {
		*out = (int)json_integer_value(port);
		return 0;
	}
	if (json_is_string(port) && parse_int64(json_string_value(port), 1, 65535, &n, NULL) == 0) {
		*out = (int)n;
		return 0;
	}
	json_array_foreach (json_object_get(ctr, "ports"), i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));

		if (json_is_string(port) && name && strcmp(name, json_string_value(port)) == 0 &&
		    json_is_integer(json_object_get(p, "containerPort"))) {
			*out = (int)json_integer_value(json_object_get(p, "containerPort"));
			return 0;
		}
	}
	return err_set(e, -EINVAL, "%s.port: %s", what,
	               json_is_string(port) ? "no container port of that name" : "not 1..65535");
}

static int probe_handler(json_t *pj, json_t *ctr, struct rt_probe *out, struct err *e)
{
	const char *scheme = NULL, *path = NULL;
	json_t *h;
	int rc;

	if ((h = json_object_get(pj, "exec"))) {
		out->kind = RT_PROBE_EXEC;
		return strv_from_json(h, "command", &out->exec_argv, e);
	}
	if ((h = json_object_get(pj, "httpGet"))) {
		if ((rc = shape(jsonx_string(h, "scheme", "HTTP", &scheme, e))) ||
		    (rc = shape(jsonx_string(h, "path", "/", &path, e))))
			return rc;
		out->kind = RT_PROBE_HTTP;
		out->https = strcmp(scheme, "HTTPS") == 0;
		out->path = xstrdup(path);
		return port_resolve(json_object_get(h, "port"), ctr, "httpGet", &out->port, e);
	}
	if ((h = json_object_get(pj, "tcpSocket")) || (h = json_object_get(pj, "grpc"))) {
		out->kind = RT_PROBE_TCP;
		return port_resolve(json_object_get(h, "port"), ctr,
		                    json_object_get(pj, "grpc") ? "grpc" : "tcpSocket", &out->port,
		                    e);
	}
	return err_set(e, -EINVAL, "no exec, httpGet, tcpSocket or grpc handler");
}

static const struct {
	const char *key;
	size_t off;
} probe_times[] = {
	{ "initialDelaySeconds", offsetof(struct rt_probe, initial_delay_s) },
	{ "periodSeconds", offsetof(struct rt_probe, period_s) },
	{ "timeoutSeconds", offsetof(struct rt_probe, timeout_s) },
	{ "successThreshold", offsetof(struct rt_probe, success_threshold) },
	{ "failureThreshold", offsetof(struct rt_probe, failure_threshold) },
};

static int probe_build(json_t *ctr, const char *key, struct rt_probe *out, struct err *e)
{
	json_t *pj = json_object_get(ctr, key);
	struct err ie;
	int64_t v;
	int rc;

	if (!pj || json_is_null(pj))
		return 0;
	err_clear(&ie);
	if ((rc = probe_handler(pj, ctr, out, &ie)))
		return err_set(e, rc, "%s: %s", key, ie.msg);
	for (size_t i = 0; i < sizeof(probe_times) / sizeof(probe_times[0]); i++) {
		if ((rc = shape(jsonx_int(pj, probe_times[i].key, 0, INT_MAX, 0, &v, &ie))))
			return err_set(e, rc, "%s: %s", key, ie.msg);
		*(int *)((char *)out + probe_times[i].off) = (int)v;
	}
	return 0;
}

static int pre_stop_build(json_t *ctr, struct rt_container *out, struct err *e)
{
	json_t *ps = jsonx_get(ctr, "lifecycle.preStop");
	int64_t secs = 0;
	struct err ie;
	int rc;

	err_clear(&ie);
	if (ps && json_object_get(ps, "exec")) {
		if ((rc = strv_from_json(ps, "exec.command", &out->pre_stop_exec, &ie)))
			return err_set(e, rc, "lifecycle.preStop: %s", ie.msg);
		return 0;
	}
	if (!ps || !json_object_get(ps, "sleep"))
		return 0; /* none, or httpGet: not supported, ignored */
	if ((rc = shape(jsonx_int_req(ps, "sleep.seconds", 0, INT_MAX, &secs, &ie))))
		return err_set(e, rc, "lifecycle.preStop: %s", ie.msg);
	out->pre_stop_exec = xcalloc(3, sizeof(char *));
	out->pre_stop_exec[0] = xstrdup("sleep");
	out->pre_stop_exec[1] = xasprintf("%lld", (long long)secs);
	return 0;
}

/* --- mounts, security, containers ---------------------------------------------------------------- */

static json_t *volume_named(json_t *pod, const char *name)
{
	json_t *v;
	size_t i;

	json_array_foreach (jsonx_get(pod, "spec.volumes"), i, v) {
		const char *n = json_string_value(json_object_get(v, "name"));

		if (n && strcmp(n, name) == 0)
			return v;
	}
	return NULL;
}

static int mount_build(json_t *pod, json_t *m, struct rt_mount *out, struct err *e)
{
	const char *name = NULL, *path = NULL, *sub = NULL;
	bool ro = false;
	int rc;

	if ((rc = shape(jsonx_string_req(m, "name", &name, e))) ||
	    (rc = shape(jsonx_string_req(m, "mountPath", &path, e))) ||
	    (rc = shape(jsonx_bool(m, "readOnly", false, &ro, e))) ||
	    (rc = shape(jsonx_string(m, "subPath", NULL, &sub, e))))
		return rc;
	if (json_object_get(m, "subPathExpr"))
		return err_set(e, -EINVAL, "subPathExpr: not supported by the node agent");
	out->volume = xstrdup(name);
	out->mount_path = xstrdup(path);
	out->sub_path = sub && sub[0] ? xstrdup(sub) : NULL;
	out->read_only = ro || na_volume_is_content(volume_named(pod, name));
	return 0;
}

static int mounts_build(json_t *pod, json_t *ctr, struct rt_container *out, struct err *e)
{
	json_t *list, *m;
	struct err ie;
	size_t i;
	int rc;

	err_clear(&ie);
	if ((rc = shape(jsonx_array(ctr, "volumeMounts", &list, e))))
		return rc;
	out->mounts =
	        json_array_size(list) ? xcalloc(json_array_size(list), sizeof(*out->mounts)) : NULL;
	json_array_foreach (list, i, m) {
		out->n_mounts = i + 1;
		if ((rc = mount_build(pod, m, &out->mounts[i], &ie)))
			return err_set(e, rc, "volumeMounts[%zu]: %s", i, ie.msg);
	}
	return 0;
}

/* runAsUser/runAsGroup: the container's, else the pod's, else -1. */
static int security_build(json_t *pod, json_t *ctr, struct rt_container *out, struct err *e)
{
	int64_t pu, pg, u, g;
	bool ro;
	int rc;

	if ((rc = shape(
	             jsonx_int(pod, "spec.securityContext.runAsUser", 0, INT_MAX, -1, &pu, e))) ||
	    (rc = shape(
	             jsonx_int(pod, "spec.securityContext.runAsGroup", 0, INT_MAX, -1, &pg, e))) ||
	    (rc = shape(jsonx_int(ctr, "securityContext.runAsUser", 0, INT_MAX, pu, &u, e))) ||
	    (rc = shape(jsonx_int(ctr, "securityContext.runAsGroup", 0, INT_MAX, pg, &g, e))) ||
	    (rc = shape(jsonx_bool(ctr, "securityContext.readOnlyRootFilesystem", false, &ro, e))))
		return rc;
	out->run_as_user = (long)u;
	out->run_as_group = (long)g;
	out->read_only_root = ro;
	return 0;
}

static int container_fields(json_t *pod, json_t *ctr, const struct na_pod_ctx *ctx,
                            struct rt_container *out, struct err *e)
{
	struct env_in in = { pod, ctr, json_string_value(jsonx_get(pod, "metadata.namespace")),
		             NULL, ctx };
	const char *name = NULL, *image = NULL, *wd = NULL;
	int rc;

	if ((rc = shape(jsonx_string_req(ctr, "name", &name, e))) ||
	    (rc = shape(jsonx_string_req(ctr, "image", &image, e))) ||
	    (rc = shape(jsonx_string(ctr, "workingDir", NULL, &wd, e))))
		return rc;
	out->name = xstrdup(name);
	out->image = xstrdup(image);
	out->working_dir = wd && wd[0] ? xstrdup(wd) : NULL;
	in.ctr_name = name;
	if ((rc = strv_from_json(ctr, "command", &out->command, e)) ||
	    (rc = strv_from_json(ctr, "args", &out->args, e)) ||
	    (rc = security_build(pod, ctr, out, e)) || (rc = env_build(&in, out, e)) ||
	    (rc = probe_build(ctr, "startupProbe", &out->startup, e)) ||
	    (rc = probe_build(ctr, "livenessProbe", &out->liveness, e)) ||
	    (rc = probe_build(ctr, "readinessProbe", &out->readiness, e)) ||
	    (rc = pre_stop_build(ctr, out, e)) || (rc = mounts_build(pod, ctr, out, e)))
		return rc;
	return 0;
}

static int containers_build(json_t *pod, const char *list, const struct na_pod_ctx *ctx,
                            struct rt_container **out, size_t *n, struct err *e)
{
	json_t *arr = jsonx_get(pod, list), *c;
	struct err ie;
	size_t i;
	int rc;

	*out = xcalloc(json_array_size(arr) + 1, sizeof(**out));
	*n = json_array_size(arr);
	err_clear(&ie);
	json_array_foreach (arr, i, c)
		if ((rc = container_fields(pod, c, ctx, &(*out)[i], &ie)))
			return err_set(e, rc, "%s[%zu]: %s", list, i, ie.msg);
	return 0;
}
static const char *const restart_names[] = {
	[RT_RESTART_ALWAYS] = "Always",
	[RT_RESTART_ON_FAILURE] = "OnFailure",
	[RT_RESTART_NEVER] = "Never",
};

static int pod_fields(json_t *pod, struct rt_pod_spec *s, struct err *e)
{
	const char *uid = NULL, *ns = NULL, *name = NULL, *rp = NULL;
	int64_t grace, fsg;

	if (jsonx_string_req(pod, "metadata.uid", &uid, e) ||
	    jsonx_string_req(pod, "metadata.namespace", &ns, e) ||
	    jsonx_string_req(pod, "metadata.name", &name, e) ||
	    jsonx_string(pod, "spec.restartPolicy", "Always", &rp, e) ||
	    jsonx_int(pod, "spec.terminationGracePeriodSeconds", 0, INT_MAX, 30, &grace, e) ||
	    jsonx_int(pod, "spec.securityContext.fsGroup", 0, INT_MAX, -1, &fsg, e))
		return -EINVAL;
	s->uid = xstrdup(uid);
	s->ns = xstrdup(ns);
	s->name = xstrdup(name);
	s->grace_period_s = (int)grace;
	s->fs_group = (long)fsg;
	for (size_t i = 0; i < sizeof(restart_names) / sizeof(restart_names[0]); i++)
		if (strcmp(rp, restart_names[i]) == 0) {
			s->restart_policy = (enum rt_restart_policy)i;
			return 0;
		}
	return err_set(e, -EINVAL, "spec.restartPolicy: unknown value %.32s", rp);
}

int na_pod_spec_build(json_t *pod, const struct na_pod_ctx *ctx, struct rt_pod_spec *out,
                      struct err *e)
{
	struct rt_pod_spec s;
	int rc;

	memset(&s, 0, sizeof(s));
	if ((rc = pod_fields(pod, &s, e)) ||
	    (rc = containers_build(pod, "spec.initContainers", ctx, &s.init, &s.n_init, e)) ||
	    (rc = containers_build(pod, "spec.containers", ctx, &s.containers, &s.n_containers,
	                           e))) {
		rt_pod_spec_release(&s);
		return rc;
	}
	if (!s.n_containers) {
		rt_pod_spec_release(&s);
		return err_set(e, -EINVAL, "spec.containers: at least one is required");
	}
	*out = s;
	return 0;
}

static bool fill_ip(struct rt_container *c, size_t n, const char *ip)
{
	bool any = false;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < c[i].n_env; k++) {
			if (!c[i].env[k].value || strcmp(c[i].env[k].value, NA_POD_IP_MARK) != 0)
				continue;
			free(c[i].env[k].value);
			c[i].env[k].value = xstrdup(ip);
			any = true;
		}
	return any;
}

bool na_spec_fill_pod_ip(struct rt_pod_spec *spec, const char *ip)
{
	bool a = fill_ip(spec->init, spec->n_init, ip);
	bool b = fill_ip(spec->containers, spec->n_containers, ip);

	return a || b;
}

/* --- /etc/hosts ------------------------------------------------------------------------------------ */

char *na_hosts_file(json_t *pod, const char *ip)
{
	const char *host = json_string_value(jsonx_get(pod, "spec.hostname"));
	const char *sub = json_string_value(jsonx_get(pod, "spec.subdomain"));
	const char *ns = json_string_value(jsonx_get(pod, "metadata.namespace"));
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	json_t *alias, *h;
	size_t i, k;

	host = host && host[0] ? host : json_string_value(jsonx_get(pod, "metadata.name"));
	buf_append_str(&b, "# Kubernetes-managed hosts file (test node agent).\n"
	                   "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
	                   "fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\n"
	                   "fe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n");
	if (sub && sub[0])
		buf_printf(&b, "%s\t%s.%s.%s.svc.cluster.local\t%s\n", ip, host, sub, ns ? ns : "",
		           host);
	else
		buf_printf(&b, "%s\t%s\n", ip, host ? host : "");
	json_array_foreach (jsonx_get(pod, "spec.hostAliases"), i, alias) {
		if (!i)
			buf_append_str(&b, "\n# Entries added by HostAliases.\n");
		h = json_object_get(alias, "ip");
		buf_append_str(&b, json_is_string(h) ? json_string_value(h) : "");
		json_array_foreach (json_object_get(alias, "hostnames"), k, h)
			buf_printf(&b, "\t%s", json_string_value(h) ? json_string_value(h) : "");
		buf_append_char(&b, '\n');
	}
	return buf_detach(&b, NULL);
}

static void add_mount(struct rt_container *c, const char *volume, const char *path)
{
	for (size_t i = 0; i < c->n_mounts; i++)
		if (strcmp(c->mounts[i].mount_path, path) == 0)
			return; /* the pod mounts its own */
	c->mounts = xreallocarray(c->mounts, c->n_mounts + 1, sizeof(*c->mounts));
	memset(&c->mounts[c->n_mounts], 0, sizeof(*c->mounts));
	c->mounts[c->n_mounts].volume = xstrdup(volume);
	c->mounts[c->n_mounts].mount_path = xstrdup(path);
	c->n_mounts++;
}

void na_spec_add_file(struct rt_pod_spec *s, const char *volume, const char *host_path,
                      const char *path)
{
	s->volumes = xreallocarray(s->volumes, s->n_volumes + 1, sizeof(*s->volumes));
	s->volumes[s->n_volumes].name = xstrdup(volume);
	s->volumes[s->n_volumes].kind = RT_VOL_DIR;
	s->volumes[s->n_volumes].host_path = xstrdup(host_path);
	s->n_volumes++;
	for (size_t i = 0; i < s->n_init; i++)
		add_mount(&s->init[i], volume, path);
	for (size_t i = 0; i < s->n_containers; i++)
		add_mount(&s->containers[i], volume, path);
}

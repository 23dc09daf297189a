/*
 * k8s-it: request-level checks — CRUD, conflicts, server-side apply, pagination, the
 * status subresource, parallel GETs with TLS client certificates, and Events.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "it.h"
#include "api/resources.h"
#include "lib/jsonx.h"
#include "lib/k8s/events.h"
#include "lib/k8s/multi.h"

static const char *str_at(json_t *j, const char *path)
{
	const char *s = json_string_value(jsonx_get(j, path));

	return s ? s : "";
}

int check_crud(struct it *t)
{
	json_t *cm = it_configmap("crud", true, "v1"), *got = NULL, *items = NULL;
	json_t *patch = json_pack("{s:{s:s}}", "data", "k", "v3");
	struct err e;
	int rc;

	if (it_ns_create(t, "crud"))
		goto out;
	err_clear(&e);
	if ((rc = k8s_create(t->client, &k8s_res_configmaps, t->ns, cm, NULL, &got, &e)))
		goto fail;
	json_object_set_new(json_object_get(got, "data"), "k", json_string("v2"));
	if ((rc = k8s_replace(t->client, &k8s_res_configmaps, t->ns, "crud", NULL, got, NULL, NULL,
	                      &e)))
		goto fail;
	if ((rc = k8s_patch(t->client, &k8s_res_configmaps, t->ns, "crud", NULL, K8S_PATCH_MERGE,
	                    patch, NULL, NULL, &e)))
		goto fail;
	json_decref(got);
	got = NULL;
	if ((rc = k8s_get(t->client, &k8s_res_configmaps, t->ns, "crud", &got, &e)))
		goto fail;
	if (strcmp(str_at(got, "data.k"), "v3"))
		it_fail(t, "data.k is '%s' after replace+patch, want v3", str_at(got, "data.k"));
	if ((rc = k8s_list(t->client, &k8s_res_configmaps, t->ns,
	                   &(struct k8s_list_opts){ .label_selector = IT_LABEL }, &items, NULL,
	                   &e)))
		goto fail;
	if (json_array_size(items) != 1)
		it_fail(t, "list by label: %zu items, want 1", json_array_size(items));
	if ((rc = k8s_delete(t->client, &k8s_res_configmaps, t->ns, "crud", NULL, &e)))
		goto fail;
	rc = k8s_get(t->client, &k8s_res_configmaps, t->ns, "crud", NULL, NULL);
	if (rc != -ENOENT)
		it_fail(t, "get after delete: %s, want ENOENT", err_name(rc));
	rc = k8s_delete(t->client, &k8s_res_configmaps, t->ns, "crud", NULL, NULL);
	if (rc != -ENOENT)
		it_fail(t, "second delete: %s, want ENOENT", err_name(rc));
	it_note(t, "create, replace, merge patch, get, list, delete, 404");
	goto out;
fail:
	it_fail(t, "%s: %s", err_name(rc), e.msg);
out:
	json_decref(cm);
	json_decref(got);
	json_decref(items);
	json_decref(patch);
	return 0;
}

int check_conflicts(struct it *t)
{
	json_t *cm = it_configmap("c", false, "1"), *first = NULL, *stale;
	struct err e;
	int rc;

	if (it_ns_create(t, "conflicts"))
		goto out;
	err_clear(&e);
	if ((rc = k8s_create(t->client, &k8s_res_configmaps, t->ns, cm, NULL, &first, &e))) {
		it_fail(t, "create: %s", e.msg);
		goto out;
	}
	stale = json_deep_copy(first);
	json_object_set_new(json_object_get(first, "data"), "k", json_string("2"));
	if ((rc = k8s_replace(t->client, &k8s_res_configmaps, t->ns, "c", NULL, first, NULL, NULL,
	                      &e)))
		it_fail(t, "first update: %s", e.msg);
	json_object_set_new(json_object_get(stale, "data"), "k", json_string("3"));
	err_clear(&e);
	rc = k8s_replace(t->client, &k8s_res_configmaps, t->ns, "c", NULL, stale, NULL, NULL, &e);
	if (rc != -EBUSY)
		it_fail(t, "stale update: %s, want EBUSY", err_name(rc));
	else
		it_note(t, "stale resourceVersion: EBUSY \"%.60s...\"", e.msg);
	json_decref(stale);
	err_clear(&e);
	rc = k8s_create(t->client, &k8s_res_configmaps, t->ns, cm, NULL, NULL, &e);
	if (rc != -EEXIST)
		it_fail(t, "create again: %s, want EEXIST", err_name(rc));
	else
		it_note(t, "AlreadyExists: EEXIST");
out:
	json_decref(cm);
	json_decref(first);
	return 0;
}

static int apply(struct it *t, const char *manager, const char *value, bool force, json_t **out,
                 struct err *e)
{
	json_t *cm = it_configmap("ssa", false, value);
	struct k8s_patch_opts po = { .field_manager = manager, .force = force };
	int rc;

	err_clear(e);
	rc = k8s_patch(t->client, &k8s_res_configmaps, t->ns, "ssa", NULL, K8S_PATCH_APPLY, cm, &po,
	               out, e);
	json_decref(cm);
	return rc;
}

int check_ssa(struct it *t)
{
	json_t *got = NULL;
	struct err e;
	int rc;

	if (it_ns_create(t, "ssa"))
		return 0;
	if ((rc = apply(t, "manager-a", "1", false, NULL, &e)))
		return it_fail(t, "first apply: %s", e.msg);
	rc = apply(t, "manager-b", "2", false, NULL, &e);
	if (rc != -EBUSY || !strstr(e.msg, "conflict"))
		return it_fail(t, "conflicting apply: %s '%s', want EBUSY with a conflict message",
		               err_name(rc), e.msg);
	it_note(t, "conflict: EBUSY \"%.70s...\"", e.msg);
	if ((rc = apply(t, "manager-b", "2", true, &got, &e)))
		return it_fail(t, "forced apply: %s", e.msg);
	if (strcmp(str_at(got, "data.k"), "2"))
		it_fail(t, "after force data.k = '%s'", str_at(got, "data.k"));
	else if (strcmp(str_at(got, "metadata.managedFields[0].manager"), "manager-b"))
		it_fail(t, "after force the field manager is '%s'",
		        str_at(got, "metadata.managedFields[0].manager"));
	else
		it_note(t, "force=true wins: manager-b owns data.k");
	json_decref(got);
	return 0;
}

int check_pagination(struct it *t)
{
	struct k8s_list_opts lo = { .label_selector = IT_LABEL, .limit = 2 };
	json_t *items = NULL;
	char url[512], body[8192], name[16];
	json_t *page;
	long http = 0;
	struct err e;

	if (it_ns_create(t, "pages"))
		return 0;
	for (int i = 0; i < 7; i++) {
		json_t *cm;

		snprintf(name, sizeof(name), "p%d", i);
		cm = it_configmap(name, true, "x");
		k8s_create(t->client, &k8s_res_configmaps, t->ns, cm, NULL, NULL, NULL);
		json_decref(cm);
	}
	err_clear(&e);
	if (k8s_list(t->client, &k8s_res_configmaps, t->ns, &lo, &items, NULL, &e))
		return it_fail(t, "list: %s", e.msg);
	if (json_array_size(items) != 7)
		it_fail(t, "limit=2 list returned %zu items, want 7", json_array_size(items));
	json_decref(items);
	/* one raw page proves the server paged: 2 items and a continue token */
	snprintf(url, sizeof(url), "%s/api/v1/namespaces/%s/configmaps?labelSelector=%s&limit=2",
	         t->cfg->server, t->ns, "app.kubernetes.io%2Fmanaged-by%3Dredis-operator");
	it_admin_get(t, url, &http, body, sizeof(body));
	page = json_loads(body, 0, NULL);
	if (http != 200 || json_array_size(json_object_get(page, "items")) != 2 ||
	    !str_at(page, "metadata.continue")[0])
		it_fail(t, "raw page: HTTP %ld, %zu items, continue '%s'", http,
		        json_array_size(json_object_get(page, "items")),
		        str_at(page, "metadata.continue"));
	else
		it_note(t, "7 objects in 4 pages of 2");
	json_decref(page);
	return 0;
}

static int ensure_crds(struct it *t)
{
	char out[2048];

	if (k8s_get(t->client, &k8s_res_crds, NULL, "redisclusters.redis.io", NULL, NULL) == 0)
		return 0;
	if (it_kubectl(t, NULL, out, sizeof(out), "apply", "-f", "config/crd/bases", NULL) ||
	    it_kubectl(t, NULL, out, sizeof(out), "wait", "--for", "condition=Established",
	               "--timeout", "30s", "crd/redisclusters.redis.io", NULL))
		return it_fail(t, "CRDs: %s", out);
	return 0;
}

int check_status(struct it *t)
{
	json_t *rc_obj = NULL, *got = NULL, *patch, *spec_before;
	struct err e;

	if (ensure_crds(t) || it_ns_create(t, "status"))
		return 0;
	rc_obj = json_pack("{s:s, s:s, s:{s:s}, s:{s:s, s:i}}", "apiVersion", "redis.io/v1", "kind",
	                   "RedisCluster", "metadata", "name", "cache", "spec", "mode",
	                   "standalone", "instances", 1);
	err_clear(&e);
	if (k8s_create(t->client, &api_res_redisclusters, t->ns, rc_obj, NULL, &got, &e)) {
		it_fail(t, "create RedisCluster: %s", e.msg);
		goto out;
	}
	spec_before = json_incref(json_object_get(got, "spec"));
	patch = json_pack("{s:{s:s}}", "status", "phase", "Testing");
	if (k8s_patch(t->client, &api_res_redisclusters, t->ns, "cache", "status", K8S_PATCH_MERGE,
	              patch, NULL, NULL, &e))
		it_fail(t, "status patch: %s", e.msg);
	json_decref(patch);
	/* the main resource ignores status; the status subresource ignores spec */
	json_decref(got);
	got = NULL;
	k8s_get(t->client, &api_res_redisclusters, t->ns, "cache", &got, &e);
	json_object_set_new(got, "status", json_pack("{s:s}", "phase", "Ignored"));
	json_object_set_new(json_object_get(got, "spec"), "instances", json_integer(2));
	if (k8s_replace(t->client, &api_res_redisclusters, t->ns, "cache", "status", got, NULL,
	                NULL, &e))
		it_fail(t, "status replace: %s", e.msg);
	json_decref(got);
	got = NULL;
	k8s_get(t->client, &api_res_redisclusters, t->ns, "cache", &got, &e);
	if (strcmp(str_at(got, "status.phase"), "Ignored") ||
	    !json_equal(json_object_get(got, "spec"), spec_before))
		it_fail(t, "after status writes: phase '%s', spec changed: %s",
		        str_at(got, "status.phase"),
		        json_equal(json_object_get(got, "spec"), spec_before) ? "no" : "yes");
	else
		it_note(t, "status merge patch and PUT on /status; spec untouched");
	json_decref(spec_before);
out:
	json_decref(rc_obj);
	json_decref(got);
	return 0;
}

/* Parallel GETs to the API server: CA only, and with the admin client certificate. */
int check_multi_tls(struct it *t)
{
	struct k8s_multi_tls ca = { .ca_file = t->cfg->ca_file, .ca_pem = t->cfg->ca_pem };
	struct k8s_multi_tls full = ca;
	struct k8s_multi_result r[3], a[1];
	char u_ready[256], u_ns[256];
	const char *urls[3] = { u_ready, u_ns, u_ready };

	full.cert_file = t->cfg->cert_file;
	full.cert_pem = t->cfg->cert_pem;
	full.key_file = t->cfg->key_file;
	full.key_pem = t->cfg->key_pem;
	snprintf(u_ready, sizeof(u_ready), "%s/readyz", t->cfg->server);
	snprintf(u_ns, sizeof(u_ns), "%s/api/v1/namespaces/default", t->cfg->server);
	k8s_multi_get_once(urls, 3, &(struct k8s_multi_opts){ .timeout_ms = 5000, .tls = &ca }, r,
	                   NULL);
	k8s_multi_get_once(&urls[1], 1,
	                   &(struct k8s_multi_opts){ .timeout_ms = 5000, .tls = &full }, a, NULL);
	if (r[0].err || r[0].http != 200 || r[2].http != 200)
		it_fail(t, "readyz with the CA: %ld %s", r[0].http, r[0].msg);
	else if (r[1].http != 401 && r[1].http != 403)
		it_fail(t, "namespace without a client cert: HTTP %ld, want 401/403", r[1].http);
	else if (a[0].err || a[0].http != 200)
		it_fail(t, "namespace with the admin cert: HTTP %ld %s", a[0].http, a[0].msg);
	else
		it_note(t, "readyz 200, anonymous %ld, admin cert 200", r[1].http);
	k8s_multi_results_release(r, 3);
	k8s_multi_results_release(a, 1);
	return 0;
}

/* The recorder against the real schema: a create, then a series PATCH. */
int check_events(struct it *t)
{
	struct k8s_events_opts o = { .controller = "redis.io/redis-operator", .instance = "it-0" };
	struct k8s_events_ref ref = { "v1", "ConfigMap", NULL, "target", NULL };
	struct k8s_events_stats st;
	struct k8s_events *ev;
	json_t *items = NULL;

	if (it_ns_create(t, "events"))
		return 0;
	ref.ns = t->ns;
	ev = k8s_events_new(t->client, &o, NULL);
	k8s_events_start(ev, NULL);
	k8s_events_emit(ev, &ref, K8S_EVENTS_WARNING, "ProbeFailed", "Probe", "attempt %d", 1);
	k8s_events_flush(ev, 10000);
	k8s_events_emit(ev, &ref, K8S_EVENTS_WARNING, "ProbeFailed", "Probe", "attempt %d", 1);
	k8s_events_emit(ev, &ref, K8S_EVENTS_NORMAL, "Scaled", "Scale", "to 3");
	k8s_events_flush(ev, 10000);
	k8s_events_stats(ev, &st);
	k8s_events_free(ev);
	k8s_list(t->client, &k8s_res_events, t->ns, NULL, &items, NULL, NULL);
	if (st.failed || st.created != 2 || st.patched != 1)
		it_fail(t, "created %llu patched %llu failed %llu", (unsigned long long)st.created,
		        (unsigned long long)st.patched, (unsigned long long)st.failed);
	else if (json_array_size(items) != 2)
		it_fail(t, "%zu Events on the server, want 2", json_array_size(items));
	else
		it_note(t, "2 Events, one with series.count %lld",
		        (long long)(json_integer_value(
		                            jsonx_get(json_array_get(items, 0), "series.count")) +
		                    json_integer_value(
		                            jsonx_get(json_array_get(items, 1), "series.count"))));
	json_decref(items);
	return 0;
}

/*
 * k8s-it: the runner and shared helpers of the lib/k8s integration tests (see it.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "it.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/httpc.h"
#include "lib/jsonx.h"
#include "lib/k8s/multi.h"
#include "lib/log.h"

#define KUBECTL_DEFAULT "/root/.cache/redis-operator/k8s/v1.37.2-etcd-v3.7.0/bin/kubectl"

static const struct {
	const char *name;
	int (*fn)(struct it *t);
} checks[] = {
	{ "crud-configmap", check_crud },
	{ "conflicts", check_conflicts },
	{ "server-side-apply", check_ssa },
	{ "pagination", check_pagination },
	{ "status-subresource", check_status },
	{ "multi-tls", check_multi_tls },
	{ "events", check_events },
	{ "watch-410", check_watch_410 },
	{ "informer-kubectl", check_informer },
	{ "lease-handover", check_lease_handover },
	{ "token-refresh", check_token_refresh },
	{ "apf-429", check_apf_429 },
	{ "fault-proxy", check_fault_proxy },
	{ "apiserver-restart", check_apiserver_restart },
};

void it_sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int it_fail(struct it *t, const char *fmt, ...)
{
	va_list ap;

	if (t->detail[0] == '!')
		return -1;
	t->detail[0] = '!';
	va_start(ap, fmt);
	vsnprintf(t->detail + 1, sizeof(t->detail) - 1, fmt, ap);
	va_end(ap);
	return -1;
}

void it_note(struct it *t, const char *fmt, ...)
{
	size_t n = strlen(t->detail);
	va_list ap;

	if (t->detail[0] == '!' || n + 3 >= sizeof(t->detail))
		return;
	if (n)
		t->detail[n++] = ';', t->detail[n++] = ' ';
	va_start(ap, fmt);
	vsnprintf(t->detail + n, sizeof(t->detail) - n, fmt, ap);
	va_end(ap);
}

/* ---- processes ---------------------------------------------------------------------- */

static void child_exec(char *const argv[], int in_fd, int out_fd)
{
	dup2(in_fd, 0);
	dup2(out_fd, 1);
	dup2(out_fd, 2);
	execv(argv[0], argv);
	_exit(127);
}

int it_run(char *const argv[], const char *in, char *out, size_t outlen)
{
	int pin[2], pout[2], status = 0;
	size_t got = 0;
	pid_t pid;

	if (pipe(pin) || pipe(pout))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(pin[1]);
		close(pout[0]);
		child_exec(argv, pin[0], pout[1]);
	}
	close(pin[0]);
	close(pout[1]);
	if (in && write(pin[1], in, strlen(in)) < 0)
		status = -1;
	close(pin[1]);
	for (;;) {
		char buf[4096];
		ssize_t n = read(pout[0], buf, sizeof(buf));

		if (n <= 0)
			break;
		for (ssize_t i = 0; out && i < n && got + 1 < outlen; i++)
			out[got++] = buf[i];
	}
	if (out && outlen)
		out[got] = '\0';
	close(pout[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int it_kubectl(struct it *t, const char *in, char *out, size_t outlen, ...)
{
	static char kc_flag[] = "--kubeconfig";
	char *argv[32] = { (char *)(uintptr_t)t->kubectl, kc_flag,
		           (char *)(uintptr_t)t->kubeconfig };
	size_t n = 3;
	va_list ap;

	va_start(ap, outlen);
	while (n < 31 && (argv[n] = va_arg(ap, char *)))
		n++;
	va_end(ap);
	argv[n] = NULL;
	return it_run(argv, in, out, outlen);
}

int it_ns_create(struct it *t, const char *name)
{
	json_t *ns;
	struct err e;
	int rc;

	snprintf(t->ns, sizeof(t->ns), "k8s-it-%s-%d", name, (int)getpid());
	ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace", "metadata",
	               "name", t->ns);
	err_clear(&e);
	rc = k8s_create(t->client, &k8s_res_namespaces, NULL, ns, NULL, NULL, &e);
	json_decref(ns);
	if (rc && rc != -EEXIST)
		return it_fail(t, "create namespace %s: %s", t->ns, e.msg);
	return 0;
}

void it_ns_delete(struct it *t)
{
	if (t->ns[0])
		k8s_delete(t->client, &k8s_res_namespaces, NULL, t->ns, NULL, NULL);
	t->ns[0] = '\0';
}

json_t *it_configmap(const char *name, bool labelled, const char *value)
{
	json_t *cm = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind",
	                       "ConfigMap", "metadata", "name", name, "data", "k", value);

	if (labelled)
		json_object_set_new(json_object_get(cm, "metadata"), "labels",
		                    json_pack("{s:s}", IT_LABEL_KEY, "redis-operator"));
	return cm;
}

/* ---- convergence ----------------------------------------------------------------------- */

static json_t *rv_map(json_t *items)
{
	json_t *m = json_object(), *it;
	char key[K8S_INFORMER_KEY_MAX + 1];
	size_t i;

	json_array_foreach (items, i, it) {
		const char *rv = json_string_value(jsonx_get(it, "metadata.resourceVersion"));

		if (k8s_informer_key(it, key, sizeof(key), NULL) == 0)
			json_object_set_new(m, key, json_string(rv ? rv : "?"));
	}
	return m;
}

int it_store_matches(struct it *t, struct k8s_informer *inf, const struct k8s_resource *res,
                     const char *selector, char *why, size_t len)
{
	struct k8s_list_opts lo = { .label_selector = selector };
	json_t *items = NULL, *store = k8s_informer_list(inf), *a, *b;
	struct err e;
	int rc;

	err_clear(&e);
	rc = k8s_list(t->client, res, t->ns, &lo, &items, NULL, &e);
	if (rc) {
		snprintf(why, len, "list: %s", e.msg);
		json_decref(store);
		return -1;
	}
	a = rv_map(items);
	b = rv_map(store);
	rc = json_equal(a, b) ? 0 : -1;
	if (rc)
		snprintf(why, len, "server has %zu objects, store %zu (or resourceVersions differ)",
		         json_object_size(a), json_object_size(b));
	json_decref(a);
	json_decref(b);
	json_decref(items);
	json_decref(store);
	return rc;
}

int it_wait_converged(struct it *t, struct k8s_informer *inf, const struct k8s_resource *res,
                      const char *selector, int64_t timeout_ms, int64_t *took_ms, char *why,
                      size_t len)
{
	int64_t t0 = clock_mono_ms();

	for (;;) {
		if (it_store_matches(t, inf, res, selector, why, len) == 0) {
			if (took_ms)
				*took_ms = clock_mono_ms() - t0;
			return 0;
		}
		if (clock_mono_ms() - t0 > timeout_ms)
			return -1;
		it_sleep_ms(50);
	}
}

/* ---- etcd and the API server process ------------------------------------------------------ */

static int etcd_post(struct it *t, const char *path, const char *body, json_t **out)
{
	struct httpc_body resp = HTTPC_BODY_INIT(1 << 20);
	char url[256];
	struct httpc_req rq = { .method = "POST",
		                .url = url,
		                .body = body,
		                .body_len = strlen(body),
		                .has_body = true,
		                .timeout_ms = 10000 };
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", t->etcd_url, path);
	(void)httpc_perform(&rq, &resp, &status, NULL, NULL);
	*out = status ? json_loads(buf_cstr(&resp.buf), 0, NULL) : NULL; /* any answer */
	buf_release(&resp.buf);
	return *out ? 0 : -1;
}

int it_etcd_revision(struct it *t, int64_t *rev)
{
	json_t *j = NULL;
	const char *s;

	if (etcd_post(t, "/v3/kv/range", "{\"key\":\"Zm9v\"}", &j))
		return -1;
	s = json_string_value(jsonx_get(j, "header.revision"));
	*rev = s ? strtoll(s, NULL, 10) : 0;
	json_decref(j);
	return *rev > 0 ? 0 : -1;
}

int it_etcd_compact(struct it *t, int64_t rev)
{
	char body[64];
	json_t *j = NULL;

	snprintf(body, sizeof(body), "{\"revision\":\"%lld\"}", (long long)rev);
	if (etcd_post(t, "/v3/kv/compaction", body, &j))
		return -1;
	json_decref(j);
	return 0;
}

int it_admin_get(struct it *t, const char *url, long *http, char *out, size_t outlen)
{
	struct k8s_multi_tls tls = { .ca_file = t->cfg->ca_file,
		                     .ca_pem = t->cfg->ca_pem,
		                     .cert_file = t->cfg->cert_file,
		                     .cert_pem = t->cfg->cert_pem,
		                     .key_file = t->cfg->key_file,
		                     .key_pem = t->cfg->key_pem };
	struct k8s_multi_opts o = { .timeout_ms = 5000, .tls = &tls };
	struct k8s_multi_result r;

	k8s_multi_get_once(&url, 1, &o, &r, NULL);
	*http = r.http;
	snprintf(out, outlen, "%s", r.body ? r.body : r.msg);
	k8s_multi_results_release(&r, 1);
	return r.err;
}

/* ---- main ------------------------------------------------------------------------------------ */

static int it_init(struct it *t, const char *argv0)
{
	struct k8s_config_opts co = { 0 };
	struct k8s_client_opts cl = { .timeout_ms = 15000 };
	struct err e;
	static char env_dir[512];

	t->exe = argv0;
	t->kubeconfig = getenv("KUBECONFIG") ? getenv("KUBECONFIG") : "build/env/kubeconfig";
	t->kubectl = getenv("KUBECTL") ? getenv("KUBECTL") : KUBECTL_DEFAULT;
	t->etcd_url = getenv("ETCD_URL") ? getenv("ETCD_URL") : "http://127.0.0.1:23790";
	snprintf(env_dir, sizeof(env_dir), "%s", t->kubeconfig);
	if (strrchr(env_dir, '/'))
		*strrchr(env_dir, '/') = '\0';
	else
		snprintf(env_dir, sizeof(env_dir), ".");
	t->env_dir = getenv("ENV_DIR") ? getenv("ENV_DIR") : env_dir;
	co.kubeconfig = t->kubeconfig;
	err_clear(&e);
	if (k8s_config_load(&co, &t->cfg, &e)) {
		fprintf(stderr, "k8s-it: %s: %s\n", t->kubeconfig, e.msg);
		return -1;
	}
	t->client = k8s_client_new(t->cfg, &cl, &e);
	return t->client ? 0 : -1;
}

static bool selected(int argc, char **argv, const char *name)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], name) == 0)
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct it t = { 0 };
	int passed = 0, failed = 0;

	alloc_install_jansson();
	signal(SIGPIPE, SIG_IGN);
	log_configure(LOG_LEVEL_ERROR, LOG_FORMAT_LOGFMT, NULL, NULL);
	httpc_global_init();
	if (it_init(&t, argv[0]))
		return 2;
	if (argc > 1 && strcmp(argv[1], "lease-child") == 0)
		return it_lease_child(&t, argc - 2, argv + 2);
	for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
		int64_t t0 = clock_mono_ms();
		int rc;

		if (!selected(argc, argv, checks[i].name))
			continue;
		t.detail[0] = '\0';
		rc = checks[i].fn(&t);
		it_ns_delete(&t);
		if (rc == 0 && t.detail[0] != '!') {
			printf("ok   k8s-client: %s (%s%s%.1f s)\n", checks[i].name, t.detail,
			       t.detail[0] ? "; " : "", (double)(clock_mono_ms() - t0) / 1000.0);
			passed++;
		} else {
			printf("FAIL k8s-client: %s: %s\n", checks[i].name,
			       t.detail[0] == '!' ? t.detail + 1 : "failed");
			failed++;
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	k8s_client_free(t.client);
	k8s_config_free(t.cfg);
	return failed ? 1 : 0;
}

/*
 * k8s-it: watch and informer checks — 410 after an etcd compaction, an informer that
 * follows kubectl, and an informer that survives a kube-apiserver restart.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "it.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/events.h"
#include "lib/k8s/watch.h"

static int count_event(void *ctx, enum k8s_event_type type, json_t *obj, const char *rv)
{
	int *n = ctx;

	(void)type, (void)obj, (void)rv;
	(*n)++;
	return 0;
}

/* Events bypass the API server's watch cache, so a compacted revision really is gone. */
static int make_event(struct it *t, const char *name, char **rv)
{
	json_t *ev = json_pack("{s:s, s:s, s:{s:s}, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s,s:s,s:s}}",
	                       "apiVersion", "events.k8s.io/v1", "kind", "Event", "metadata",
	                       "name", name, "eventTime", "2026-01-01T00:00:00.000000Z",
	                       "reportingController", "redis.io/it", "reportingInstance", "it",
	                       "action", "Test", "reason", "Test", "type", "Normal", "regarding",
	                       "kind", "Pod", "name", "p", "namespace", t->ns);
	json_t *out = NULL;
	int rc = k8s_create(t->client, &k8s_res_events, t->ns, ev, NULL, &out, NULL);

	if (!rc && rv)
		*rv = xstrdup(json_string_value(jsonx_get(out, "metadata.resourceVersion")));
	json_decref(ev);
	json_decref(out);
	return rc;
}

static int watch_410_direct(struct it *t, const char *old_rv)
{
	struct err e;
	int n = 0, rc;

	err_clear(&e);
	rc = k8s_watch_run(t->client, &k8s_res_events, t->ns, NULL, old_rv, 5, count_event, &n,
	                   NULL, &e);
	if (rc != -ESTALE)
		return it_fail(t, "watch from compacted rv %s: %s (%s), want ESTALE", old_rv,
		               err_name(rc), e.msg);
	it_note(t, "watch from rv %s: ESTALE \"%.50s\"", old_rv, e.msg);
	return 0;
}

int check_watch_410(struct it *t)
{
	struct k8s_informer_opts o = { .res = &k8s_res_events,
		                       .backoff_base_ms = 100,
		                       .backoff_cap_ms = 1000 };
	struct k8s_informer_stats st;
	struct k8s_informer *inf = NULL;
	json_t *seed = NULL;
	char *old_rv = NULL, why[256], name[16];
	int64_t rev, took;

	if (it_ns_create(t, "w410"))
		return 0;
	if (make_event(t, "first", &old_rv))
		return it_fail(t, "create event failed");
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		make_event(t, name, NULL);
	}
	if (it_etcd_revision(t, &rev) || it_etcd_compact(t, rev))
		return it_fail(t, "etcd compaction through %s failed", t->etcd_url);
	it_note(t, "compacted etcd at %lld", (long long)rev);
	if (watch_410_direct(t, old_rv))
		goto out;
	/* an informer resuming from that rv with a stale store: 410, relist, converge */
	o.ns = t->ns;
	o.start_rv = old_rv;
	inf = k8s_informer_new(t->client, &o, NULL);
	seed = json_pack("[{s:{s:s,s:s,s:s}}]", "metadata", "namespace", t->ns, "name", "ghost",
	                 "resourceVersion", "1");
	k8s_informer_replace(inf, seed, old_rv, NULL);
	k8s_informer_start(inf, NULL);
	if (it_wait_converged(t, inf, &k8s_res_events, NULL, 20000, &took, why, sizeof(why))) {
		it_fail(t, "informer did not converge after 410: %s", why);
		goto out;
	}
	k8s_informer_stats(inf, &st);
	if (st.stale < 1 || st.lists < 1)
		it_fail(t, "informer saw %llu 410s and %llu lists", (unsigned long long)st.stale,
		        (unsigned long long)st.lists);
	else
		it_note(t, "informer: 410 → relist → converged in %lld ms, ghost dropped",
		        (long long)took);
out:
	k8s_informer_free(inf);
	json_decref(seed);
	free(old_rv);
	return 0;
}

/* ---- an informer following kubectl ------------------------------------------------------ */

struct counts {
	int adds, updates, deletes;
};

static void on_add(void *ctx, json_t *obj)
{
	(void)obj;
	__atomic_add_fetch(&((struct counts *)ctx)->adds, 1, __ATOMIC_RELAXED);
}

static void on_update(void *ctx, json_t *o, json_t *n)
{
	(void)o, (void)n;
	__atomic_add_fetch(&((struct counts *)ctx)->updates, 1, __ATOMIC_RELAXED);
}

static void on_delete(void *ctx, json_t *obj)
{
	(void)obj;
	__atomic_add_fetch(&((struct counts *)ctx)->deletes, 1, __ATOMIC_RELAXED);
}

static void kubectl_churn(struct it *t)
{
	char out[1024], name[16];

	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "cm%d", i);
		it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "create", "configmap", name,
		           "--from-literal=k=v", NULL);
		it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "label", "configmap", name,
		           IT_LABEL, NULL);
	}
	it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "create", "configmap", "unlabelled",
	           NULL);
	it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "annotate", "configmap", "cm1", "a=b",
	           NULL);
	it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "delete", "configmap", "cm2", NULL);
	/* losing the label is a DELETED event for a selector watch */
	it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "label", "configmap", "cm3",
	           IT_LABEL_KEY "-", NULL);
	it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "label", "--overwrite", "configmap",
	           "unlabelled", IT_LABEL, NULL);
}

int check_informer(struct it *t)
{
	struct counts c = { 0 };
	struct k8s_informer_opts o = { .res = &k8s_res_configmaps,
		                       .label_selector = IT_LABEL,
		                       .on_add = on_add,
		                       .on_update = on_update,
		                       .on_delete = on_delete,
		                       .ctx = &c };
	struct k8s_informer_stats st;
	struct k8s_informer *inf;
	json_t *cm1;
	char why[256];
	int64_t took;

	if (it_ns_create(t, "informer"))
		return 0;
	o.ns = t->ns;
	inf = k8s_informer_new(t->client, &o, NULL);
	k8s_informer_start(inf, NULL);
	if (k8s_informer_wait_synced(inf, 10000)) {
		k8s_informer_free(inf);
		return it_fail(t, "not synced in 10 s");
	}
	kubectl_churn(t);
	if (it_wait_converged(t, inf, &k8s_res_configmaps, IT_LABEL, 15000, &took, why,
	                      sizeof(why)))
		it_fail(t, "store != server: %s", why);
	k8s_informer_stats(inf, &st);
	cm1 = k8s_informer_get(inf, t->ns, "cm1");
	if (k8s_informer_len(inf) != 5 || !cm1 || jsonx_get(cm1, "metadata.managedFields"))
		it_fail(t, "store has %zu objects (want 5), cm1 %s", k8s_informer_len(inf),
		        cm1 ? "untrimmed" : "missing");
	else if (st.lists != 1)
		it_fail(t, "%llu LISTs in steady state, want 1", (unsigned long long)st.lists);
	else
		it_note(t,
		        "5 objects; adds %d updates %d deletes %d; 1 LIST, %llu watches; "
		        "converged %lld ms after the last kubectl",
		        c.adds, c.updates, c.deletes, (unsigned long long)st.watches,
		        (long long)took);
	json_decref(cm1);
	k8s_informer_free(inf);
	return 0;
}

/* ---- kube-apiserver restart ------------------------------------------------------------------- */

static char **read_cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	char **argv;
	ssize_t n;
	size_t argc = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	argv = xcalloc((size_t)n + 1, sizeof(*argv));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	return argv;
}

static pid_t read_pid(const char *file)
{
	char buf[32] = "";
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return (pid_t)strtol(buf, NULL, 10);
}

/* Starts argv detached (its own session, log appended), returns its pid. */
static pid_t spawn_detached(char **argv, const char *log)
{
	int p[2];
	pid_t pid = -1, child;

	if (pipe(p))
		return -1;
	child = fork();
	if (child == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		pid_t g;

		setsid();
		g = fork();
		if (g == 0) {
			dup2(open("/dev/null", O_RDONLY), 0);
			dup2(fd, 1);
			dup2(fd, 2);
			execv(argv[0], argv);
			_exit(127);
		}
		if (write(p[1], &g, sizeof(g)) < 0)
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &pid, sizeof(pid)) != sizeof(pid))
		pid = -1;
	close(p[0]);
	waitpid(child, NULL, 0);
	return pid;
}

static bool api_ready_at(struct it *t, const char *server)
{
	char url[256], body[64];
	long http = 0;

	snprintf(url, sizeof(url), "%s/readyz", server);
	return it_admin_get(t, url, &http, body, sizeof(body)) == 0 && http == 200;
}

static bool wait_ready(struct it *t, const char *server, int64_t timeout_ms)
{
	int64_t end = clock_mono_ms() + timeout_ms;

	while (!api_ready_at(t, server) && clock_mono_ms() < end)
		it_sleep_ms(100);
	return api_ready_at(t, server);
}

/* SIGTERM (then SIGKILL after grace_ms) and wait until pid is gone. */
static void stop_pid(pid_t pid, int grace_ms)
{
	kill(pid, SIGTERM);
	for (int i = 0; i < grace_ms / 50 && kill(pid, 0) == 0; i++)
		it_sleep_ms(50);
	if (kill(pid, 0) == 0) {
		kill(pid, SIGKILL);
		for (int i = 0; i < 100 && kill(pid, 0) == 0; i++)
			it_sleep_ms(50);
	}
}

int it_apiserver_restart(struct it *t)
{
	char pidfile[512], log[512], cmd[16384];
	pid_t pid, npid;
	char **argv;
	FILE *f;

	snprintf(pidfile, sizeof(pidfile), "%s/kube-apiserver.pid", t->env_dir);
	snprintf(log, sizeof(log), "%s/logs/kube-apiserver.log", t->env_dir);
	pid = read_pid(pidfile);
	argv = pid > 0 ? read_cmdline(pid, cmd, sizeof(cmd)) : NULL;
	if (!argv)
		return it_fail(t, "cannot read kube-apiserver's command line (pid file %s)",
		               pidfile);
	stop_pid(pid, 30000);
	npid = spawn_detached(argv, log);
	free(argv);
	if (npid <= 0)
		return it_fail(t, "could not start kube-apiserver again");
	f = fopen(pidfile, "w");
	if (f) {
		fprintf(f, "%d\n", (int)npid);
		fclose(f);
	}
	return wait_ready(t, t->cfg->server, 120000)
	               ? 0
	               : it_fail(t, "kube-apiserver not ready 120 s after restart");
}

/* ---- a private kube-apiserver --------------------------------------------------------- */

/*
 * A second kube-apiserver with the shared one's command line (same etcd, certificates
 * and flags) but bound to 127.0.0.1:<port>: it can be restarted at will without anyone
 * else noticing (another session's test/env/up.sh would tear the whole environment down
 * if it found the shared API server not ready), and it is the same program.
 */
struct private_api {
	char cmd[16384];
	char **argv;
	char port[16], log[512], server[64];
	pid_t pid;
};

static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

/* Points --bind-address and --secure-port of argv at 127.0.0.1:port. */
static int private_args(struct private_api *pa)
{
	static char loopback[] = "127.0.0.1";
	int found = 0;

	for (size_t i = 0; pa->argv[i] && pa->argv[i + 1]; i++) {
		if (!strcmp(pa->argv[i], "--bind-address"))
			pa->argv[i + 1] = loopback, found++;
		else if (!strcmp(pa->argv[i], "--secure-port"))
			pa->argv[i + 1] = pa->port, found++;
	}
	return found == 2 ? 0 : -1;
}

static int private_start(struct it *t, struct private_api *pa)
{
	char pidfile[512];
	pid_t shared;

	if (!pa->argv) {
		snprintf(pidfile, sizeof(pidfile), "%s/kube-apiserver.pid", t->env_dir);
		shared = read_pid(pidfile);
		pa->argv = shared > 0 ? read_cmdline(shared, pa->cmd, sizeof(pa->cmd)) : NULL;
		snprintf(pa->port, sizeof(pa->port), "%d", free_port());
		snprintf(pa->server, sizeof(pa->server), "https://127.0.0.1:%s", pa->port);
		snprintf(pa->log, sizeof(pa->log), "/tmp/k8s-it-apiserver-%d.log", (int)getpid());
		if (!pa->argv || private_args(pa))
			return it_fail(t, "cannot derive a private kube-apiserver command line");
	}
	pa->pid = spawn_detached(pa->argv, pa->log);
	if (pa->pid <= 0 || !wait_ready(t, pa->server, 120000))
		return it_fail(t, "private kube-apiserver on %s not ready (log %s)", pa->server,
		               pa->log);
	return 0;
}

static void private_stop(struct private_api *pa)
{
	if (pa->pid > 0)
		stop_pid(pa->pid, 5000); /* it drains watches for a long time otherwise */
	pa->pid = -1;
}

static void create_cms(struct it *t, const char *prefix, int n)
{
	char name[32];

	for (int i = 0; i < n; i++) {
		json_t *cm;

		snprintf(name, sizeof(name), "%s%d", prefix, i);
		cm = it_configmap(name, true, prefix);
		k8s_create(t->client, &k8s_res_configmaps, t->ns, cm, NULL, NULL, NULL);
		json_decref(cm);
	}
}

/*
 * An informer through a kube-apiserver that is restarted under it: a private one by
 * default, the shared one (the environment's own process) with K8S_IT_RESTART_SHARED=1.
 * Changes are made through the shared server meanwhile; the informer must converge.
 */
int check_apiserver_restart(struct it *t)
{
	struct k8s_informer_opts o = { .res = &k8s_res_configmaps,
		                       .label_selector = IT_LABEL,
		                       .backoff_base_ms = 100,
		                       .backoff_cap_ms = 1000 };
	bool shared =
	        getenv("K8S_IT_RESTART_SHARED") && !strcmp(getenv("K8S_IT_RESTART_SHARED"), "1");
	struct private_api pa = { .pid = -1 };
	struct k8s_config *pcfg = NULL;
	struct k8s_config_opts lo = { .kubeconfig = t->kubeconfig };
	struct k8s_client *c = t->client;
	struct k8s_informer_stats st;
	struct k8s_informer *inf = NULL;
	char why[256];
	int64_t t0, down = 0, took = 0;

	if (it_ns_create(t, "restart") || (!shared && private_start(t, &pa)))
		goto out;
	if (!shared) {
		k8s_config_load(&lo, &pcfg, NULL);
		free(pcfg->server);
		pcfg->server = xstrdup(pa.server);
		c = k8s_client_new(pcfg, NULL, NULL);
	}
	o.ns = t->ns;
	inf = k8s_informer_new(c, &o, NULL);
	k8s_informer_start(inf, NULL);
	create_cms(t, "before", 3);
	if (it_wait_converged(t, inf, &k8s_res_configmaps, IT_LABEL, 10000, NULL, why,
	                      sizeof(why))) {
		it_fail(t, "before the restart: %s", why);
		goto out;
	}
	t0 = clock_mono_ms();
	if (shared ? it_apiserver_restart(t) : (private_stop(&pa), private_start(t, &pa)))
		goto out;
	down = clock_mono_ms() - t0;
	k8s_delete(t->client, &k8s_res_configmaps, t->ns, "before0", NULL, NULL);
	create_cms(t, "after", 3);
	if (it_wait_converged(t, inf, &k8s_res_configmaps, IT_LABEL, 30000, &took, why,
	                      sizeof(why)))
		it_fail(t, "after the restart: %s", why);
	k8s_informer_stats(inf, &st);
	it_note(t,
	        "%s kube-apiserver back in %.1f s; informer converged %lld ms later "
	        "(%llu errors, %llu lists, %llu watches)",
	        shared ? "shared" : "private", (double)down / 1000.0, (long long)took,
	        (unsigned long long)st.errors, (unsigned long long)st.lists,
	        (unsigned long long)st.watches);
out:
	k8s_informer_free(inf);
	if (c != t->client)
		k8s_client_free(c);
	k8s_config_free(pcfg);
	private_stop(&pa);
	free(pa.argv);
	if (pa.log[0] && t->detail[0] != '!')
		unlink(pa.log); /* kept for a failure */
	return 0;
}

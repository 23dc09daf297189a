/*
 * nodeagent: the kubelet of the local test environment (see agent.h for the files).
 *
 *   nodeagent [flags]                         run as the kubelet of --nodes Nodes
 *   nodeagent logs [--previous] NS/POD [C]    print a container's log
 *   nodeagent ctl OP ARGS...                  inject a fault (ctl.c lists the ops)
 *
 * The daemon runs as root (network namespaces, cgroups, mounts). Start-up: settings,
 * the image map, sandboxes left by a previous agent removed (pods restart: see
 * podsync.c), the StorageClass, the Nodes and their Leases, informers (Secrets,
 * ConfigMaps, PVCs cluster-wide; Pods per node with fieldSelector spec.nodeName), the
 * control socket. Then one loop on the main thread, which owns the runtime: poll() on a
 * signalfd (SIGCHLD, SIGTERM, SIGINT), an eventfd (work queued by informer threads) and
 * the control socket, with a timeout at the next due step, probe, heartbeat, token
 * refresh or retry. Children are reaped there with waitpid(-1, WNOHANG).
 *
 * SIGTERM/SIGINT: every pod is stopped (preStop, SIGTERM, SIGKILL after at most
 * --shutdown-grace), the sandboxes destroyed, then the Nodes this agent created and their
 * Leases deleted, so `make env-down` (which waits 5 s) leaves no Node behind. Pods stay in
 * the API (the pod garbage collector removes pods of deleted Nodes).
 *
 * --light CIDR: no pod is run; light.c gives each an address from CIDR and reports it
 * Running, and sim.c answers for its instance manager (benchmarks of the controller with
 * thousands of instances). No Secret/ConfigMap informers then, no sandboxes.
 *
 * KUBERNETES_SERVICE_HOST/PORT in every container are the API server's own address and
 * port (from the kubeconfig, or --service-host/--service-port): nothing in this
 * environment routes the kubernetes Service's ClusterIP.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent.h"
#include "imagemap.h"
#include "kubelet.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/config.h"
#include "lib/k8s/informer.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "lib/wq.h"
#include "ociimage.h"

#define ENV_PREFIX      "NODEAGENT_"
#define SYNC_WAIT_MS    30000
#define LOOP_MAX_MS     1000
#define STOP_EXTRA_MS   1000
#define QUEUE_BUDGET_MS 200 /* keys taken per loop turn: then the Nodes' heartbeats go out */

static const char *const levels[] = { "debug", "info", "warn", "error", NULL };
static const char *const formats[] = { "json", "logfmt", NULL };
static const char *const authz_modes[] = { "Webhook", "AlwaysAllow", NULL };

#define OFF(f) offsetof(struct na_settings, f)
static const struct settings_desc na_table[] = {
	{ "kubeconfig", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(kubeconfig),
	  "Kubeconfig of a system:masters identity; unset: $KUBECONFIG, ~/.kube/config." },
	{ "state-dir", SETTINGS_STRING, NA_DEFAULT_STATE_DIR, 0, 0, NULL, false, false,
	  OFF(state_dir), "Pods, volumes, logs, PV directories, ctl.sock." },
	{ "nodes", SETTINGS_INT, "1", 1, NA_MAX_NODES, NULL, false, false, OFF(nodes),
	  "How many Nodes to act for: <node-prefix>1 .. <node-prefix>N." },
	{ "node-prefix", SETTINGS_STRING, "ro-node-", 0, 0, NULL, false, false, OFF(node_prefix),
	  "Node names are this prefix and a number." },
	{ "images", SETTINGS_STRING, "test/nodeagent/images.conf", 0, 0, NULL, false, false,
	  OFF(images), "The image map (imagemap.h)." },
	{ "operator-bin", SETTINGS_STRING, "build/redis-operator", 0, 0, NULL, false, false,
	  OFF(operator_bin), "${OPERATOR_BIN} of the image map (made absolute)." },
	{ "oci-images", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(oci_images),
	  "REF=PATH[,REF=PATH...]: image REF is the OCI image layout in the tar file PATH "
	  "(unpacked once into <state-dir>/images; wins over the image map's patterns)." },
	{ "umoci", SETTINGS_STRING, "umoci", 0, 0, NULL, false, false, OFF(umoci),
	  "The umoci binary that unpacks --oci-images (image/tool.sh builds it)." },
	{ "host-ip", SETTINGS_STRING, "10.240.0.1", 0, 0, NULL, false, false, OFF(host_ip),
	  "The Nodes' InternalIP, hostIP of pods, the pods' gateway (on the bridge)." },
	{ "bridge", SETTINGS_STRING, "ro-br0", 0, 0, NULL, false, false, OFF(bridge),
	  "The bridge pod veths join." },
	{ "pod-cidr", SETTINGS_STRING, "10.240.1.0/24", 0, 0, NULL, false, false, OFF(pod_cidr),
	  "Where pod addresses come from." },
	{ "link-prefix", SETTINGS_INT, "16", 8, 30, NULL, false, false, OFF(link_prefix),
	  "Prefix length of pod addresses (the bridge's subnet)." },
	{ "cgroup-root", SETTINGS_STRING, "/sys/fs/cgroup/freezer/ro-pods", 0, 0, NULL, false,
	  false, OFF(cgroup_root), "Freezer cgroup under which each pod gets one." },
	{ "service-host", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(service_host),
	  "KUBERNETES_SERVICE_HOST for containers; unset: the kubeconfig server's host." },
	{ "service-port", SETTINGS_INT, "0", 0, 65535, NULL, false, false, OFF(service_port),
	  "KUBERNETES_SERVICE_PORT for containers; 0: the kubeconfig server's port." },
	{ "register-taint", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(register_taint),
	  "KEY[=VALUE]:EFFECT put on each Node at creation (keeps other pods away)." },
	{ "lease-renew-interval", SETTINGS_DURATION, "10s", 500, 600000, NULL, false, false,
	  OFF(lease_renew_ms), "How often each Node's Lease is renewed." },
	{ "lease-duration", SETTINGS_DURATION, "40s", 1000, 3600000, NULL, false, false,
	  OFF(lease_duration_ms), "leaseDurationSeconds of the Leases." },
	{ "node-status-interval", SETTINGS_DURATION, "10s", 500, 600000, NULL, false, false,
	  OFF(node_status_ms), "How often each Node's status (heartbeat) is posted." },
	{ "shutdown-grace", SETTINGS_DURATION, "2s", 0, 60000, NULL, false, false,
	  OFF(shutdown_grace_ms), "Longest grace period of pods stopped at agent shutdown." },
	{ "api-timeout", SETTINGS_DURATION, "5s", 100, 60000, NULL, false, false,
	  OFF(api_timeout_ms), "Deadline of each API request." },
	{ "config-retry", SETTINGS_DURATION, "2s", 100, 60000, NULL, false, false,
	  OFF(config_retry_ms), "Retry period of pods waiting for a Secret, ConfigMap or PVC." },
	{ "light", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(light),
	  "Light mode: pods are not run but simulated, with addresses from this CIDR (routed "
	  "to the host with an AnyIP route, served by one listener on 0.0.0.0:8000)." },
	{ "provision", SETTINGS_BOOL, "true", 0, 0, NULL, false, false, OFF(provision),
	  "Provision the PVCs of pods on this agent's Nodes (off: they stay Pending)." },
	{ "kubelet-port", SETTINGS_INT, "0", 0, 65535, NULL, false, false, OFF(kubelet_port),
	  "Port of the kubelet API (container logs) on --host-ip; 0: a free one. The Nodes "
	  "advertise the bound port (daemonEndpoints.kubeletEndpoint)." },
	{ "kubelet-client-ca-file", SETTINGS_STRING, NULL, 0, 0, NULL, false, false,
	  OFF(kubelet_client_ca),
	  "CA bundle of the client certificates the kubelet API accepts (the API server's "
	  "--kubelet-client-certificate); unset: no certificate authentication." },
	{ "kubelet-anonymous-auth", SETTINGS_BOOL, "false", 0, 0, NULL, false, false,
	  OFF(kubelet_anonymous),
	  "A kubelet API request without a certificate is system:anonymous (else 401)." },
	{ "kubelet-authorization-mode", SETTINGS_ENUM, "Webhook", 0, 0, authz_modes, false, false,
	  OFF(kubelet_authz),
	  "Webhook: a SubjectAccessReview (get nodes/proxy) per kubelet API request; "
	  "AlwaysAllow: every authenticated one." },
	{ "log-level", SETTINGS_ENUM, "info", 0, 0, levels, false, false, OFF(log_level),
	  "Log level." },
	{ "log-format", SETTINGS_ENUM, "logfmt", 0, 0, formats, false, false, OFF(log_format),
	  "Log line format." },
};
#undef OFF
#define N_SETTINGS (sizeof(na_table) / sizeof(na_table[0]))

/* --- work queue ------------------------------------------------------------------------------ */

static void run_pvgc(struct agent *ag, const char *arg)
{
	(void)arg;
	na_pv_gc(ag);
}

static const struct {
	const char *prefix;
	void (*fn)(struct agent *ag, const char *arg);
} key_table[] = {
	{ "pod:", na_pod_sync },
	{ "pvc:", na_pvc_sync },
	{ "ns:", na_ns_changed },
	{ "pvgc", run_pvgc },
};

/* Runs queued keys for at most QUEUE_BUDGET_MS (a burst of thousands of pods must not
 * starve the heartbeats: the Node would be marked unreachable); the rest stay queued and
 * the loop comes back at once. */
static void process_queue(struct agent *ag)
{
	int64_t until = clock_mono_ms() + QUEUE_BUDGET_MS;
	char *key;

	while (clock_mono_ms() < until && wq_get(ag->wq, 0, &key) == 0) {
		for (size_t i = 0; !ag->stopping && i < sizeof(key_table) / sizeof(key_table[0]);
		     i++) {
			size_t n = strlen(key_table[i].prefix);

			if (strncmp(key, key_table[i].prefix, n) == 0) {
				key_table[i].fn(ag, key + n);
				break;
			}
		}
		wq_done(ag->wq, key);
		free(key);
	}
}

/* --- informer handlers (informer threads: they only enqueue) ------------------------------- */

static void enqueue_obj(struct agent *ag, const char *prefix, json_t *obj, bool ns_only)
{
	const char *ns = json_string_value(jsonx_get(obj, "metadata.namespace"));
	const char *name = json_string_value(jsonx_get(obj, "metadata.name"));
	char *key;

	if (!ns || !name)
		return;
	key = ns_only ? xasprintf("%s%s", prefix, ns) : xasprintf("%s%s/%s", prefix, ns, name);
	na_enqueue(ag, key);
	free(key);
}

static void pod_add(void *ctx, json_t *obj)
{
	enqueue_obj(ctx, "pod:", obj, false);
}

static void pod_update(void *ctx, json_t *old_obj, json_t *new_obj)
{
	(void)old_obj;
	enqueue_obj(ctx, "pod:", new_obj, false);
}

static void source_add(void *ctx, json_t *obj)
{
	enqueue_obj(ctx, "ns:", obj, true);
}

static void source_update(void *ctx, json_t *old_obj, json_t *new_obj)
{
	(void)old_obj;
	enqueue_obj(ctx, "ns:", new_obj, true);
}

static void pvc_add(void *ctx, json_t *obj)
{
	enqueue_obj(ctx, "pvc:", obj, false);
}

static void pvc_update(void *ctx, json_t *old_obj, json_t *new_obj)
{
	(void)old_obj;
	enqueue_obj(ctx, "pvc:", new_obj, false);
}

static void pvc_delete(void *ctx, json_t *obj)
{
	(void)obj;
	na_enqueue(ctx, "pvgc");
}

static struct k8s_informer *informer_start(struct agent *ag, struct k8s_informer_opts *o,
                                           struct err *e)
{
	struct k8s_informer *inf;

	o->ctx = ag;
	if (!(inf = k8s_informer_new(ag->client, o, e)))
		return NULL;
	if (k8s_informer_start(inf, e) < 0) {
		k8s_informer_free(inf);
		return NULL;
	}
	return inf;
}

static int start_source_informers(struct agent *ag, struct err *e)
{
	struct k8s_informer_opts sec = { .res = &k8s_res_secrets,
		                         .on_add = source_add,
		                         .on_update = source_update,
		                         .on_delete = source_add };
	struct k8s_informer_opts cm = sec;
	struct k8s_informer_opts pvc = { .res = &k8s_res_pvcs,
		                         .on_add = pvc_add,
		                         .on_update = pvc_update,
		                         .on_delete = pvc_delete };

	cm.res = &k8s_res_configmaps;
	if (!ag->set.provision) { /* the informer still answers PVC lookups for volumes */
		pvc.on_add = pvc.on_delete = NULL;
		pvc.on_update = NULL;
	}
	if (!(ag->pvcs = informer_start(ag, &pvc, e)))
		return e->code ? e->code : -EIO;
	if (ag->set.light) /* nothing to mount: Secrets and ConfigMaps are never read */
		return k8s_informer_wait_synced(ag->pvcs, SYNC_WAIT_MS) ? -ETIMEDOUT : 0;
	if (!(ag->secrets = informer_start(ag, &sec, e)) ||
	    !(ag->configmaps = informer_start(ag, &cm, e)))
		return e->code ? e->code : -EIO;
	if (k8s_informer_wait_synced(ag->secrets, SYNC_WAIT_MS) ||
	    k8s_informer_wait_synced(ag->configmaps, SYNC_WAIT_MS) ||
	    k8s_informer_wait_synced(ag->pvcs, SYNC_WAIT_MS))
		log_warn(NA_COMPONENT, "informers not synced yet: going on", NULL);
	return 0;
}

static int start_pod_informers(struct agent *ag, struct err *e)
{
	for (size_t i = 0; i < ag->n_nodes; i++) {
		char *sel = xasprintf("spec.nodeName=%s", ag->nodes[i].name);
		struct k8s_informer_opts o = { .res = &k8s_res_pods,
			                       .field_selector = sel,
			                       .on_add = pod_add,
			                       .on_update = pod_update,
			                       .on_delete = pod_add };

		ag->nodes[i].pods = informer_start(ag, &o, e);
		free(sel);
		if (!ag->nodes[i].pods)
			return e->code ? e->code : -EIO;
	}
	return 0;
}

/* --- start-up ------------------------------------------------------------------------------------ */

/* path made absolute against the working directory (it need not exist). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *real = realpath(path, NULL);

	if (real)
		return real;
	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return xstrdup(path);
	return xasprintf("%s/%s", cwd, path);
}

static int state_dir_init(struct agent *ag, struct err *e)
{
	char *p = absolute(ag->set.state_dir);

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		int rc = err_set(e, -errno, "%s: %s", p, strerror(errno));

		free(p);
		return rc;
	}
	free(ag->state_dir);
	ag->state_dir = absolute(p);
	free(p);
	return 0;
}

/* Each REF=PATH of --oci-images into the map, logged with its root. */
static int oci_images_init(struct agent *ag, struct err *e)
{
	char *cache = xasprintf("%s/images", ag->state_dir);
	struct ociimg_opts o = { .umoci = ag->set.umoci, .tar = "tar", .cache_dir = cache };
	int rc = ociimg_load_list(ag->images, ag->set.oci_images, &o, e);

	for (size_t i = 0; !rc && i < ag->images->n; i++)
		if (ag->images->entries[i].exact)
			log_info(NA_COMPONENT, "image loaded", "image",
			         ag->images->entries[i].pattern, "rootfs",
			         ag->images->entries[i].rootfs, NULL);
	free(cache);
	return rc;
}

static int images_init(struct agent *ag, struct err *e)
{
	char *op = absolute(ag->set.operator_bin);
	struct imagemap_var vars[] = { { "OPERATOR_BIN", op } };
	int rc = imagemap_load(ag->set.images, NULL, vars, 1, &ag->images, e);

	free(op);
	if (!rc && ag->set.oci_images && !ag->set.light)
		rc = oci_images_init(ag, e);
	return rc;
}

static void runtime_init(struct agent *ag)
{
	struct statvfs vfs;

	rt_config_init(&ag->rt);
	ag->rt.state_dir = ag->state_dir;
	ag->rt.bridge = ag->set.bridge;
	ag->rt.gateway = ag->set.host_ip;
	ag->rt.link_prefix = (int)ag->set.link_prefix;
	ag->rt.pod_cidr = ag->set.pod_cidr;
	ag->rt.cgroup_root = ag->set.cgroup_root;
	ag->rt.images = ag->images;
	ag->node_cpu_milli = sysconf(_SC_NPROCESSORS_ONLN) * 1000;
	ag->node_memory = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	if (statvfs(ag->state_dir, &vfs) == 0)
		ag->node_storage = (uint64_t)vfs.f_blocks * vfs.f_frsize;
}

/* KUBERNETES_SERVICE_HOST/PORT: the flags, else the server URL's host and port. */
static int service_init(struct agent *ag, struct err *e)
{
	const char *s = strstr(ag->kcfg->server, "://");
	const char *host = s ? s + 3 : ag->kcfg->server, *colon = strrchr(host, ':');
	size_t hlen = colon ? (size_t)(colon - host) : strcspn(host, "/");

	if (hlen >= sizeof(ag->service_host))
		return err_set(e, -EINVAL, "server %s: host too long", ag->kcfg->server);
	snprintf(ag->service_host, sizeof(ag->service_host), "%.*s", (int)hlen, host);
	snprintf(ag->service_port, sizeof(ag->service_port), "%.*s",
	         colon ? (int)strcspn(colon + 1, "/") : 3, colon ? colon + 1 : "443");
	if (ag->set.service_host)
		snprintf(ag->service_host, sizeof(ag->service_host), "%s", ag->set.service_host);
	if (ag->set.service_port)
		snprintf(ag->service_port, sizeof(ag->service_port), "%lld",
		         (long long)ag->set.service_port);
	return 0;
}

static int client_init(struct agent *ag, struct err *e)
{
	struct k8s_config_opts co = { .kubeconfig = ag->set.kubeconfig };
	struct k8s_client_opts o = { .timeout_ms = (int)ag->set.api_timeout_ms,
		                     .user_agent = "redis-operator-nodeagent" };
	int rc;

	if ((rc = k8s_config_load(&co, &ag->kcfg, e)))
		return rc;
	if (!(ag->client = k8s_client_new(ag->kcfg, &o, e)))
		return -EINVAL;
	return service_init(ag, e);
}

static int fds_init(struct agent *ag, struct err *e)
{
	struct wq_options wo;
	sigset_t set;

	wq_options_default(&wo);
	wo.backoff_base_ms = 200;
	wo.backoff_cap_ms = 10000;
	wo.qps = 0;
	ag->wq = wq_new(&wo);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	ag->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ag->sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (ag->efd < 0 || ag->sfd < 0)
		return err_set(e, -errno, "eventfd/signalfd: %s", strerror(errno));
	return 0;
}

/* KEY[=VALUE]:EFFECT, as the kubelet's --register-with-taints; unset is fine. */
static bool taint_is_valid(const char *t)
{
	const char *colon = t ? strrchr(t, ':') : NULL;

	return !t || (colon && colon > t && colon[1]);
}

static int nodes_init(struct agent *ag, struct err *e)
{
	int rc;

	if (!taint_is_valid(ag->set.register_taint))
		return err_set(e, -EINVAL, "--register-taint %s: want KEY[=VALUE]:EFFECT",
		               ag->set.register_taint);
	ag->n_nodes = (size_t)ag->set.nodes;
	ag->nodes = xcalloc(ag->n_nodes, sizeof(*ag->nodes));
	for (size_t i = 0; i < ag->n_nodes; i++) {
		struct na_node *n = &ag->nodes[i];

		n->ag = ag;
		n->name = xasprintf("%s%zu", ag->set.node_prefix, i + 1);
		if (!k8s_name_is_valid(n->name))
			return err_set(e, -EINVAL, "node name %s: not a DNS-1123 subdomain",
			               n->name);
		if ((rc = na_node_register(ag, n, e)))
			return rc;
	}
	return 0;
}

static int agent_init(struct agent *ag, struct err *e)
{
	int rc;

	if ((rc = state_dir_init(ag, e)) || (rc = images_init(ag, e)))
		return rc;
	runtime_init(ag);
	if (!ag->set.light)
		na_pods_remove_stale(ag);
	if ((rc = client_init(ag, e)) || (rc = fds_init(ag, e)) ||
	    (ag->set.light && (rc = na_light_init(ag, e))) ||
	    (ag->set.provision && (rc = na_storage_class_ensure(ag, e))) ||
	    (rc = start_source_informers(ag, e)) || (rc = na_kubelet_start(ag, e)) ||
	    (rc = nodes_init(ag, e)) || (rc = start_pod_informers(ag, e)) ||
	    (rc = na_ctl_listen(ag, e)))
		return rc;
	if (ag->set.provision)
		na_enqueue(ag, "pvgc");
	return 0;
}

/* --- the loop ----------------------------------------------------------------------------------- */

static void begin_stop(struct agent *ag)
{
	char g[24];

	if (ag->stopping)
		return;
	ag->stopping = true;
	ag->stop_deadline = clock_mono_ms() + ag->set.shutdown_grace_ms + STOP_EXTRA_MS;
	snprintf(g, sizeof(g), "%lld", (long long)ag->set.shutdown_grace_ms);
	log_info(NA_COMPONENT, "stopping: killing every pod", "graceMs", g, NULL);
	na_pods_kill_all(ag, ag->set.shutdown_grace_ms);
}

static void handle_signals(struct agent *ag)
{
	struct signalfd_siginfo si;
	pid_t pid;
	int st;

	while (read(ag->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			begin_stop(ag);
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		na_pods_on_exit(ag, pid, st);
}

static int loop_timeout(struct agent *ag, int64_t now)
{
	int64_t due = na_pods_next_due(ag), q = wq_next_ready_ms(ag->wq);

	if (ag->light && na_light_next_due(ag) < due)
		due = na_light_next_due(ag);

	for (size_t i = 0; !ag->stopping && i < ag->n_nodes; i++) {
		int64_t d = na_node_next_due(&ag->nodes[i]);

		due = d < due ? d : due;
	}
	if (ag->stopping && ag->stop_deadline < due)
		due = ag->stop_deadline;
	due = due == INT64_MAX ? LOOP_MAX_MS : due - now;
	if (q >= 0 && q < due)
		due = q;
	return (int)(due < 0 ? 0 : due > LOOP_MAX_MS ? LOOP_MAX_MS : due);
}

static void agent_loop(struct agent *ag)
{
	for (;;) {
		struct pollfd fds[3] = { { ag->sfd, POLLIN, 0 },
			                 { ag->efd, POLLIN, 0 },
			                 { ag->ctl_fd, POLLIN, 0 } };
		uint64_t cnt;
		int64_t now;

		if (poll(fds, 3, loop_timeout(ag, clock_mono_ms())) < 0 && errno != EINTR)
			log_warn(NA_COMPONENT, "poll failed", "error", strerror(errno), NULL);
		handle_signals(ag);
		if (fds[1].revents && read(ag->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
			log_warn(NA_COMPONENT, "eventfd read failed", NULL);
		if (fds[2].revents)
			na_ctl_serve(ag);
		process_queue(ag);
		now = clock_mono_ms();
		for (size_t i = 0; !ag->stopping && i < ag->n_nodes; i++)
			na_node_tick(ag, &ag->nodes[i], now);
		na_pods_run(ag, now);
		if (ag->light)
			na_light_run(ag, now);
		if (ag->stopping && (na_pods_all_stopped(ag) || now >= ag->stop_deadline))
			return;
	}
}

/* --- shutdown ------------------------------------------------------------------------------------ */

static void *informer_free_thread(void *arg)
{
	k8s_informer_free(arg);
	return NULL;
}

/*
 * Each informer takes up to a second to notice its stop flag, so they are stopped in
 * parallel: each one is handed to a thread of its own, which becomes its only owner.
 */
static void informers_free(struct k8s_informer **v, size_t n)
{
	pthread_t *t = xcalloc(n + 1, sizeof(*t));
	bool *started = xcalloc(n + 1, sizeof(*started));

	for (size_t i = 0; i < n; i++)
		started[i] = v[i] && pthread_create(&t[i], NULL, informer_free_thread, v[i]) == 0;
	for (size_t i = 0; i < n; i++) {
		if (started[i])
			pthread_join(t[i], NULL);
		else
			k8s_informer_free(v[i]);
		v[i] = NULL;
	}
	free(started);
	free(t);
}

static void all_informers_free(struct agent *ag)
{
	struct k8s_informer **v = xcalloc(ag->n_nodes + 3, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < ag->n_nodes; i++)
		v[n++] = ag->nodes[i].pods;
	v[n++] = ag->secrets;
	v[n++] = ag->configmaps;
	v[n++] = ag->pvcs;
	informers_free(v, n);
	free(v);
}

/* The slow part (informers) last: the Nodes are gone by then. */
static void agent_free(struct agent *ag)
{
	na_pods_destroy_all(ag);
	na_light_free(ag);
	for (size_t i = 0; i < ag->n_nodes; i++)
		if (ag->nodes[i].registered)
			na_node_unregister(ag, &ag->nodes[i]);
	na_ctl_close(ag);
	na_kubelet_stop(ag);
	all_informers_free(ag);
	log_info(NA_COMPONENT, "stopped", NULL);
	for (size_t i = 0; i < ag->n_nodes; i++) {
		free(ag->nodes[i].name);
		free(ag->nodes[i].uid);
	}
	free(ag->nodes);
	k8s_client_free(ag->client);
	k8s_config_free(ag->kcfg);
	imagemap_free(ag->images);
	wq_free(ag->wq);
	if (ag->efd >= 0)
		close(ag->efd);
	if (ag->sfd >= 0)
		close(ag->sfd);
	free(ag->state_dir);
	settings_release(na_table, N_SETTINGS, &ag->set);
}

static int settings_init(struct agent *ag, int argc, char **argv)
{
	struct buf errs = BUF_INIT(8192), dump = BUF_INIT(8192);
	enum log_level lvl;
	enum log_format fmt;
	int next = 0, rc;

	rc = settings_load(na_table, N_SETTINGS, ENV_PREFIX, NULL, argc, argv, &next, &ag->set,
	                   &errs);
	if (rc == SETTINGS_HELP)
		settings_help(na_table, N_SETTINGS, ENV_PREFIX, stdout);
	else if (rc < 0 || next != argc)
		fprintf(stderr, "%s%s", buf_cstr(&errs),
		        rc < 0 ? "" : "nodeagent: unexpected argument (subcommands: logs, ctl)\n");
	if (rc == 0 && next == argc) {
		log_parse_level(ag->set.log_level, &lvl);
		log_parse_format(ag->set.log_format, &fmt);
		log_configure(lvl, fmt, NULL, NULL);
		settings_dump(na_table, N_SETTINGS, &ag->set, &dump);
		log_info(NA_COMPONENT, "starting", "settings", buf_cstr(&dump), NULL);
	}
	buf_release(&errs);
	buf_release(&dump);
	return rc == SETTINGS_HELP ? 1 : (rc < 0 || next != argc) ? 2 : 0;
}

static int agent_main(int argc, char **argv)
{
	struct agent ag;
	struct err e;
	sigset_t set;
	int rc;

	memset(&ag, 0, sizeof(ag));
	ag.efd = ag.sfd = ag.ctl_fd = -1;
	strmap_init(&ag.pods);
	if ((rc = settings_init(&ag, argc, argv))) {
		settings_release(na_table, N_SETTINGS, &ag.set);
		return rc == 1 ? 0 : rc;
	}
	/* Before any thread exists, so that every thread inherits the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	err_clear(&e);
	if (geteuid() != 0)
		rc = err_set(&e, -EPERM, "must run as root (namespaces, cgroups, mounts)");
	else
		rc = agent_init(&ag, &e);
	if (rc)
		log_error(NA_COMPONENT, "start-up failed", "error", e.msg, NULL);
	else
		agent_loop(&ag);
	agent_free(&ag);
	return rc ? 1 : 0;
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} subcommands[] = {
	{ "logs", na_logs_main },
	{ "ctl", na_ctl_main },
};

int main(int argc, char **argv)
{
	alloc_install_jansson();
	for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].run(argc - 1, argv + 1);
	return agent_main(argc, argv);
}

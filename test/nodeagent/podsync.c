/*
 * podsync: a pod's life on this agent, from the Pod object to processes and back.
 *
 * The table ag->pods maps a Pod's uid to its struct na_pod; "pod:NS/NAME" keys from the
 * node informers lead to na_pod_sync, which compares the Pod the informers hold with the
 * table:
 *   - a local pod whose Pod is gone, or whose name now belongs to another uid, is killed
 *     with its grace period and destroyed (nothing is deleted from the API);
 *   - a Pod with a deletionTimestamp is killed with metadata.deletionGracePeriodSeconds;
 *     once every process is gone its sandbox is destroyed and the Pod is deleted with
 *     gracePeriodSeconds 0 and a uid precondition (a Pod we never ran is deleted at once);
 *   - a new Pod (not terminal) gets its volumes, its translated spec and a sandbox; a
 *     missing Secret/ConfigMap/PVC leaves it waiting (CreateContainerConfigError, retried
 *     every config-retry interval and at every change in its namespace);
 *   - a running Pod gets its content volumes refreshed (labels, sources, tokens).
 * na_pods_run steps every pod, finishes kills and patches pods/status (strategic merge)
 * whenever rt_pod_version changed since the last patch that succeeded.
 *
 * status.podIP in env: the spec is translated with NA_POD_IP_MARK; right after
 * rt_pod_create (which allocates the address) and before the first rt_pod_step (which
 * starts containers), runtime_fill_pod_ip writes the address into the runtime's own copy
 * of the spec. That is the one place this half reaches into runtime_int.h.
 *
 * A pod on a lost node (node-lose fault) is neither stepped, synced nor reported: its
 * kubelet is "down". Agent restart: every sandbox found under <state>/pods is removed at
 * start (na_pods_remove_stale) and pods are recreated from the API, as after a kubelet
 * restart with a fresh container runtime (restart counts and emptyDirs start over).
 *
 * Main thread only.
 */
#include "runtime_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/informer.h"
#include "lib/log.h"

#define RETRY_MS 1000

static void runtime_fill_pod_ip(struct rt_pod *pod)
{
	na_spec_fill_pod_ip(&pod->spec, rt_pod_ip(pod));
}

static const char *jstr(json_t *root, const char *path)
{
	return json_string_value(jsonx_get(root, path));
}

/* --- the table ----------------------------------------------------------------------------- */

static struct na_pod *pod_new(struct agent *ag, struct na_node *n, json_t *api)
{
	struct na_pod *p = xcalloc(1, sizeof(*p));

	p->uid = xstrdup(jstr(api, "metadata.uid"));
	p->ns = xstrdup(jstr(api, "metadata.namespace"));
	p->name = xstrdup(jstr(api, "metadata.name"));
	p->key = xasprintf("%s/%s", p->ns, p->name);
	p->node = n;
	p->api = json_incref(api);
	p->dir = rt_pod_dir(&ag->rt, p->uid);
	p->start_ms = clock_wall_ms();
	p->reported = UINT64_MAX;
	p->fs_group = -1;
	strmap_set(&ag->pods, p->uid, p);
	return p;
}

static void pod_free(struct na_pod *p)
{
	na_volumes_release(p);
	free(p->uid);
	free(p->ns);
	free(p->name);
	free(p->key);
	free(p->dir);
	free(p->wait_reason);
	free(p->wait_msg);
	free(p->ids);
	json_decref(p->api);
	free(p);
}

static void pod_remove(struct agent *ag, struct na_pod *p)
{
	strmap_remove(&ag->pods, p->uid, NULL);
	if (p->rt)
		rt_pod_destroy(p->rt);
	pod_free(p);
}

/* The Pod NS/NAME as the informers hold it (a new reference) and its node. */
static json_t *api_pod(struct agent *ag, const char *ns, const char *name, struct na_node **node)
{
	for (size_t i = 0; i < ag->n_nodes; i++) {
		json_t *obj = k8s_informer_get(ag->nodes[i].pods, ns, name);

		if (obj) {
			*node = &ag->nodes[i];
			return obj;
		}
	}
	return NULL;
}

struct na_pod *na_pod_find(struct agent *ag, const char *ns_name)
{
	struct na_pod *found = NULL;
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;

		if (strcmp(p->key, ns_name) == 0 && (!found || found->killing))
			found = p;
	}
	return found;
}

void na_pods_of_node(struct agent *ag, struct na_node *n,
                     void (*fn)(struct agent *, struct na_pod *))
{
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));)
		if (((struct na_pod *)en->value)->node == n)
			fn(ag, en->value);
}

void na_pod_force_report(struct agent *ag, struct na_pod *p)
{
	(void)ag;
	p->report_force = true;
	p->report_retry_at = 0;
}

/* --- waiting, starting ------------------------------------------------------------------------ */

static void pod_wait(struct na_pod *p, const char *reason, const char *msg)
{
	if (p->wait_reason && strcmp(p->wait_reason, reason) == 0 && p->wait_msg &&
	    strcmp(p->wait_msg, msg) == 0)
		return;
	free(p->wait_reason);
	free(p->wait_msg);
	p->wait_reason = xstrdup(reason);
	p->wait_msg = xstrdup(msg);
	p->report_force = true;
	log_warn(NA_COMPONENT, "pod waiting", "pod", p->key, "reason", reason, "message", msg,
	         NULL);
}

/* <pod dir>/pod.json: who this sandbox is (for `nodeagent logs` and the kubelet API),
 * its container names and emptyDir size limits. */
static void write_pod_json(struct na_pod *p)
{
	json_t *meta =
	        json_pack("{s:s, s:s, s:s, s:s, s:{}, s:[]}", "namespace", p->ns, "name", p->name,
	                  "uid", p->uid, "node", p->node->name, "emptyDirSizeLimits", "containers");
	json_t *v, *limits = json_object_get(meta, "emptyDirSizeLimits");
	char *path = xasprintf("%s/pod.json", p->dir);
	static const char *const kinds[] = { "spec.initContainers", "spec.containers" };
	size_t i;

	/* The container names: the kubelet API's log endpoint tells a wrong one (kubelet.c). */
	for (size_t k = 0; k < 2; k++)
		json_array_foreach (jsonx_get(p->api, kinds[k]), i, v)
			json_array_append(json_object_get(meta, "containers"),
			                  json_object_get(v, "name"));

	json_array_foreach (jsonx_get(p->api, "spec.volumes"), i, v) {
		json_t *lim = jsonx_get(v, "emptyDir.sizeLimit");

		if (json_is_string(lim))
			json_object_set(limits, jstr(v, "name"), lim);
	}
	if (json_dump_file(meta, path, JSON_COMPACT) < 0)
		log_warn(NA_COMPONENT, "pod.json not written", "path", path, NULL);
	free(path);
	json_decref(meta);
}

/* Replaces path's content (a new file renamed over it). 0 or -errno. */
static int write_text(const char *path, const char *text)
{
	char *tmp = xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "we");
	int rc = 0;

	if (!f || fputs(text, f) < 0)
		rc = -errno ? -errno : -EIO;
	if (f && fclose(f) != 0 && !rc)
		rc = -errno;
	if (!rc && (chmod(tmp, 0644) < 0 || rename(tmp, path) < 0))
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

/* Volumes and spec (plus /etc/hosts, filled in once the IP is known): 0, or a config
 * error in e (the pod waits). */
static int pod_translate(struct agent *ag, struct na_pod *p, struct rt_pod_spec *spec,
                         struct err *e)
{
	struct na_lookup_ctx lc;
	struct na_lookup lk;
	struct na_pod_ctx ctx;
	struct rt_volume *vols = NULL;
	char *hosts_path;
	size_t nv = 0;
	int64_t fsg;
	int rc;

	jsonx_int(p->api, "spec.securityContext.fsGroup", 0, INT32_MAX, -1, &fsg, NULL);
	p->fs_group = (long)fsg;
	na_pod_ctx_init(ag, p, &lc, &lk, &ctx);
	if ((rc = na_volumes_prepare(ag, p, &vols, &nv, e)))
		return rc;
	if ((rc = na_pod_spec_build(p->api, &ctx, spec, e))) {
		for (size_t i = 0; i < nv; i++) {
			free(vols[i].name);
			free(vols[i].host_path);
		}
		free(vols);
		return rc;
	}
	spec->volumes = vols;
	spec->n_volumes = nv;
	hosts_path = xasprintf("%s/etc-hosts", p->dir);
	if ((rc = na_mkdir_p(p->dir, 0755)) || (rc = write_text(hosts_path, "")))
		err_set(e, rc, "%s: %s", hosts_path, strerror(-rc));
	else
		na_spec_add_file(spec, NA_HOSTS_VOLUME, hosts_path, "/etc/hosts");
	free(hosts_path);
	if (rc)
		rt_pod_spec_release(spec);
	return rc;
}

static void pod_retry(struct agent *ag, struct na_pod *p, int64_t delay_ms)
{
	char *key = xasprintf("pod:%s", p->key);

	na_enqueue_after(ag, key, delay_ms);
	free(key);
}

/* Missing sources and bad specs are the pod's fault; the rest is the sandbox's. */
static const char *start_reason(int rc)
{
	return rc == -EINVAL || rc == -ENOENT ? "CreateContainerConfigError" : "ContainerCreating";
}

static size_t count_containers(json_t *api)
{
	return json_array_size(jsonx_get(api, "spec.initContainers")) +
	       json_array_size(jsonx_get(api, "spec.containers"));
}

/* <pod dir>/etc-hosts, bind-mounted at /etc/hosts when the containers start. */
static void write_hosts(struct na_pod *p)
{
	char *text = na_hosts_file(p->api, rt_pod_ip(p->rt));
	char *path = xasprintf("%s/etc-hosts", p->dir);
	int rc = write_text(path, text);

	if (rc)
		log_warn(NA_COMPONENT, "hosts file not written", "path", path, "error",
		         strerror(-rc), NULL);
	free(path);
	free(text);
}

static void pod_start(struct agent *ag, struct na_pod *p)
{
	struct rt_pod_spec spec;
	struct err e;
	int64_t t0 = clock_mono_ms();
	char ms[24];
	int rc;

	err_clear(&e);
	if ((rc = pod_translate(ag, p, &spec, &e)) == 0) {
		rc = rt_pod_create(&spec, &ag->rt, &p->rt, &e);
		rt_pod_spec_release(&spec);
	}
	if (rc) {
		p->rt = NULL;
		pod_wait(p, start_reason(rc), e.msg);
		pod_retry(ag, p, ag->set.config_retry_ms);
		return;
	}
	runtime_fill_pod_ip(p->rt);
	write_hosts(p);
	free(p->ids);
	p->n_ids = count_containers(p->api);
	p->ids = xcalloc(p->n_ids + 1, sizeof(*p->ids));
	free(p->wait_reason);
	free(p->wait_msg);
	p->wait_reason = p->wait_msg = NULL;
	write_pod_json(p);
	rt_pod_step(p->rt, clock_mono_ms());
	snprintf(ms, sizeof(ms), "%lld", (long long)(clock_mono_ms() - t0));
	log_info(NA_COMPONENT, "pod started", "pod", p->key, "uid", p->uid, "ip", rt_pod_ip(p->rt),
	         "node", p->node->name, "ms", ms, NULL);
}

/* --- killing ------------------------------------------------------------------------------------ */

static int64_t grace_of(json_t *api, bool deletion)
{
	json_t *g = deletion ? jsonx_get(api, "metadata.deletionGracePeriodSeconds") : NULL;

	if (!json_is_integer(g))
		g = jsonx_get(api, "spec.terminationGracePeriodSeconds");
	return json_is_integer(g) && json_integer_value(g) >= 0 ? json_integer_value(g) : 30;
}

/* Starts (or hurries: an earlier deadline wins) the pod's stop. */
static void pod_kill(struct na_pod *p, int64_t grace_ms, const char *why)
{
	char g[24];

	if (!p->killing) {
		snprintf(g, sizeof(g), "%lld", (long long)grace_ms);
		log_info(NA_COMPONENT, "killing pod", "pod", p->key, "uid", p->uid, "reason", why,
		         "graceMs", g, NULL);
	}
	p->killing = true;
	if (p->rt)
		rt_pod_kill(p->rt, grace_ms);
}

/* Local pods named key that are not uid (NULL: none is): their Pod is gone. */
static void orphan_others(struct agent *ag, const char *key, const char *uid)
{
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;

		if (strcmp(p->key, key) != 0 || (uid && strcmp(p->uid, uid) == 0) || p->node->lost)
			continue;
		p->api_gone = true;
		p->delete_api = false;
		pod_kill(p, grace_of(p->api, false) * 1000, "PodGone");
	}
}

int na_delete_api_pod(struct agent *ag, const char *ns, const char *name, const char *uid)
{
	struct k8s_delete_opts d = { .precondition_uid = uid, .set_grace_period = true };
	struct err e;
	int rc;

	err_clear(&e);
	rc = k8s_delete(ag->client, &k8s_res_pods, ns, name, &d, &e);
	if (rc == -ENOENT || rc == -EBUSY) /* gone, or the name is someone else's now */
		rc = 0;
	if (rc)
		log_warn(NA_COMPONENT, "pod delete failed", "ns", ns, "name", name, "error", e.msg,
		         NULL);
	else
		log_info(NA_COMPONENT, "pod deleted", "ns", ns, "name", name, "uid", uid, NULL);
	return rc;
}

/* --- sync --------------------------------------------------------------------------------------- */

static bool is_terminal(json_t *api)
{
	const char *ph = jstr(api, "status.phase");

	return ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

static void sync_api(struct agent *ag, struct na_node *n, json_t *api)
{
	const char *uid = jstr(api, "metadata.uid");
	struct na_pod *p = uid ? strmap_get(&ag->pods, uid) : NULL;

	if (!uid || n->lost || ag->stopping)
		return;
	if (p) {
		json_decref(p->api);
		p->api = json_incref(api);
	}
	if (jsonx_get(api, "metadata.deletionTimestamp")) {
		if (!p && na_delete_api_pod(ag, jstr(api, "metadata.namespace"),
		                            jstr(api, "metadata.name"), uid)) {
			char *key = xasprintf("pod:%s/%s", jstr(api, "metadata.namespace"),
			                      jstr(api, "metadata.name"));

			na_enqueue_after(ag, key, RETRY_MS);
			free(key);
		}
		if (!p)
			return;
		p->delete_api = true;
		pod_kill(p, grace_of(api, true) * 1000, "PodDeleted");
		return;
	}
	if (!p && is_terminal(api))
		return;
	if (!p)
		p = pod_new(ag, n, api);
	if (p->killing)
		return;
	if (!p->rt)
		pod_start(ag, p);
	else
		na_volumes_refresh(ag, p);
}

void na_pod_sync(struct agent *ag, const char *ns_name)
{
	const char *slash = strchr(ns_name, '/');
	struct na_node *n = NULL;
	char ns[K8S_NAMESPACE_MAX + 1];
	json_t *api;

	if (ag->light) {
		na_light_pod_sync(ag, ns_name);
		return;
	}
	if (!slash || (size_t)(slash - ns_name) > K8S_NAMESPACE_MAX)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ns_name), ns_name);
	api = api_pod(ag, ns, slash + 1, &n);
	orphan_others(ag, ns_name, api ? jstr(api, "metadata.uid") : NULL);
	if (api)
		sync_api(ag, n, api);
	json_decref(api);
}

void na_ns_changed(struct agent *ag, const char *ns)
{
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;

		if (strcmp(p->ns, ns) != 0 || p->killing || p->node->lost)
			continue;
		if (p->rt)
			na_volumes_refresh(ag, p);
		else
			pod_retry(ag, p, 0);
	}
}

/* --- status ----------------------------------------------------------------------------------- */

static bool report_due(const struct na_pod *p, int64_t now)
{
	if (p->api_gone || p->node->lost || now < p->report_retry_at)
		return false;
	if (p->rt)
		return p->report_force || rt_pod_version(p->rt) != p->reported;
	return p->report_force && p->wait_reason;
}

static void pod_report(struct agent *ag, struct na_pod *p, int64_t now)
{
	struct na_status_in in = { p->api,      NULL,        ag->set.host_ip, p->wait_reason,
		                   p->wait_msg, p->start_ms, clock_wall_ms() };
	struct rt_pod_status st;
	uint64_t version = p->reported;
	json_t *patch;
	struct err e;
	int rc;

	if (!report_due(p, now))
		return;
	memset(&st, 0, sizeof(st));
	if (p->rt) {
		rt_pod_snapshot(p->rt, &st);
		in.rt = &st;
		version = st.version;
	}
	patch = na_status_build(&in, p->conds, p->ids, p->n_ids);
	err_clear(&e);
	rc = k8s_patch(ag->client, &k8s_res_pods, p->ns, p->name, "status", K8S_PATCH_STRATEGIC,
	               patch, NULL, NULL, &e);
	if (rc && rc != -ENOENT) {
		log_warn(NA_COMPONENT, "pod status patch failed", "pod", p->key, "error", e.msg,
		         NULL);
		p->report_retry_at = now + RETRY_MS;
	} else {
		p->reported = version;
		p->report_force = false;
	}
	json_decref(patch);
	rt_pod_status_release(&st);
}

/* --- finishing kills ---------------------------------------------------------------------------- */

/* True when p is done with and may be removed. */
static bool pod_finish(struct agent *ag, struct na_pod *p, int64_t now)
{
	if (!p->killing || (p->rt && !rt_pod_is_stopped(p->rt)) || now < p->report_retry_at)
		return false;
	if (p->rt) {
		p->report_force = true;
		pod_report(ag, p, now); /* the terminated containers, once */
		rt_pod_destroy(p->rt);
		p->rt = NULL;
		log_info(NA_COMPONENT, "pod destroyed", "pod", p->key, "uid", p->uid, NULL);
	}
	if (p->delete_api && !p->api_gone && na_delete_api_pod(ag, p->ns, p->name, p->uid)) {
		p->report_retry_at = now + RETRY_MS;
		return false;
	}
	return true;
}

void na_pods_run(struct agent *ag, int64_t now)
{
	struct strmap_entry *en;
	struct na_pod **done = xcalloc(strmap_len(&ag->pods) + 1, sizeof(*done));
	size_t n_done = 0;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;
		bool frozen = p->node->lost && !ag->stopping;

		if (p->rt && !frozen)
			rt_pod_step(p->rt, now);
		if (p->rt && !frozen && !p->killing && now >= na_volumes_next_due(p))
			na_volumes_refresh(ag, p);
		if (!ag->stopping)
			pod_report(ag, p, now);
		if (!ag->stopping && pod_finish(ag, p, now))
			done[n_done++] = p;
	}
	for (size_t i = 0; i < n_done; i++)
		pod_remove(ag, done[i]);
	free(done);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

int64_t na_pods_next_due(struct agent *ag)
{
	struct strmap_entry *en;
	int64_t due = INT64_MAX;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;

		if (p->node->lost && !ag->stopping)
			continue;
		if (p->rt)
			due = min64(due, min64(rt_pod_next_due(p->rt), na_volumes_next_due(p)));
		if (p->report_retry_at && (p->killing || report_due(p, p->report_retry_at)))
			due = min64(due, p->report_retry_at);
	}
	return due;
}

void na_pods_on_exit(struct agent *ag, pid_t pid, int status)
{
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;

		if (p->rt && rt_pod_on_exit(p->rt, pid, status))
			return;
	}
}

/* --- shutdown and start-up ---------------------------------------------------------------------- */

void na_pods_kill_all(struct agent *ag, int64_t grace_ms)
{
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;
		int64_t g = grace_of(p->api, false) * 1000;

		pod_kill(p, g < grace_ms ? g : grace_ms, "AgentShutdown");
	}
}

bool na_pods_all_stopped(struct agent *ag)
{
	struct strmap_entry *en;

	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;

		if (p->rt && !rt_pod_is_stopped(p->rt))
			return false;
	}
	return true;
}

static void free_value(void *v)
{
	struct na_pod *p = v;

	if (p->rt)
		rt_pod_destroy(p->rt);
	pod_free(p);
}

void na_pods_destroy_all(struct agent *ag)
{
	strmap_release(&ag->pods, free_value);
}

void na_pods_remove_stale(struct agent *ag)
{
	char *dir = xasprintf("%s/pods", ag->state_dir);
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		log_info(NA_COMPONENT, "removing a sandbox left by a previous agent", "uid",
		         de->d_name, NULL);
		rt_pod_remove_stale(&ag->rt, de->d_name);
	}
	if (d)
		closedir(d);
	free(dir);
}

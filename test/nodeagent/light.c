/*
 * light: the node agent's light mode (--light CIDR), for benchmarks of the controller with
 * thousands of instances on a small machine. The agent registers its Nodes as usual, but
 * runs no pod: each Pod bound to them gets an address from CIDR, phase Running and Ready
 * conditions as a kubelet would report them, and its instance manager is simulated by
 * one listener for every address (sim.h). Nothing else of the pod exists (no processes,
 * volumes, network namespace or cgroup); its PVCs must be Bound first, as for a real
 * pod (the agent provisions them as for its pods that run: pvc.c, unless --provision=false).
 *
 * A pod's "boot": every persistentVolumeClaim volume Bound (else it waits, Pending with
 * ContainerCreating, retried every --config-retry), then its RedisCluster is read (label
 * redis.io/cluster: status.currentPrimary, metadata.uid, spec.failover's lease timings)
 * as the instance manager reads it, and, when the pod mounts the volume "http-tls" (its
 * cluster's instance TLS Secret), that Secret's tls.crt, tls.key and ca.crt (a missing
 * Secret or key keeps it waiting, as a kubelet would), then it gets an address (its old status.podIP when
 * that is in the range and free: an agent restart keeps addresses) and joins the
 * simulator. A pod without that label is only reported Running and Ready. Ready follows
 * the simulated /readyz; statuses are patched when it changes.
 *
 * Deletion: a Pod with a deletionTimestamp leaves the simulator at once (its Lease is
 * released, as a clean stop does) and is deleted with gracePeriodSeconds 0 and a uid
 * precondition, as the kubelet does once the containers stopped.
 *
 * Addresses: `ip route add local CIDR dev lo` at start (an AnyIP route: every address of
 * the range is the host's own, so the simulator's one socket on 0.0.0.0:8000 accepts
 * them all) and `ip route del` at the end. The route must not exist beforehand: another
 * light agent, or one that died, owns it. Pick a range no other agent hands out.
 *
 * Main thread only (the simulator has its own threads, see sim.h).
 */
#include "runtime_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "agent.h"
#include "api/resources.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/informer.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "sim.h"

#define LIGHT_MIN_PREFIX  16
#define LIGHT_RETRY_MS    1000
#define LIGHT_STATS_MS    60000
#define LIGHT_CONN_SLACK  256
#define LIGHT_BUDGET_MS   200  /* API calls per loop turn, so that heartbeats go out */
#define LIGHT_FAKE_PID    4096 /* containerIDs nodeagent://<n>: no process behind them */
#define LABEL_CLUSTER     "redis.io/cluster"
#define HTTP_TLS_VOLUME   "http-tls" /* the instance manager's --http-tls-dir volume */
#define LEASE_DURATION_MS 10000      /* the instance manager's defaults (instance/spec.h) */
#define RENEW_DEADLINE_MS 6000
#define RENEW_PERIOD_MS   1000

struct na_lpod {
	char *uid, *ns, *name, *key;
	json_t *api;
	char ip[16];
	bool started, simulated;
	int reported; /* the Ready value last reported; -1: none */
	bool report_force;
	char *wait_reason, *wait_msg;
	int64_t start_ms, retry_at;
	struct na_cond conds[NA_CONDS];
	struct na_ctr_ids *ids;
	size_t n_ids;
};

struct na_light {
	char cidr[32];
	uint32_t net, size, next; /* host order; next: the round-robin cursor */
	uint8_t *used;
	struct strmap pods; /* uid -> struct na_lpod * */
	struct na_sim *sim;
	uint64_t gen_seen;
	bool route_added;
	int64_t stats_at;
};

static const char *jstr(json_t *root, const char *path)
{
	return json_string_value(jsonx_get(root, path));
}

/* --- the range --------------------------------------------------------------------------------- */

static int cidr_parse(const char *s, struct na_light *l, struct err *e)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	struct in_addr in;
	int64_t len;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return err_set(e, -EINVAL, "--light %s: want a.b.c.d/len", s);
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1 ||
	    parse_int64(slash + 1, LIGHT_MIN_PREFIX, 30, &len, NULL) < 0)
		return err_set(e, -EINVAL, "--light %s: want a.b.c.d/len, len %d..30", s,
		               LIGHT_MIN_PREFIX);
	l->size = 1U << (32 - len);
	l->net = ntohl(in.s_addr) & ~(l->size - 1);
	in.s_addr = htonl(l->net);
	inet_ntop(AF_INET, &in, addr, sizeof(addr));
	snprintf(l->cidr, sizeof(l->cidr), "%s/%lld", addr, (long long)len);
	return 0;
}

static void ip_format(uint32_t a, char out[16])
{
	struct in_addr in = { htonl(a) };

	inet_ntop(AF_INET, &in, out, 16);
}

/* Offset of ip in the range, -1 outside (or the network/broadcast address). */
static long ip_offset(const struct na_light *l, const char *ip)
{
	struct in_addr in;
	uint32_t off;

	if (!ip || inet_pton(AF_INET, ip, &in) != 1)
		return -1;
	off = ntohl(in.s_addr) - l->net;
	return off > 0 && off < l->size - 1 ? (long)off : -1;
}

/* An address for a pod: want (its old one) if free, else the next free one round-robin. */
static bool ip_take(struct na_light *l, const char *want, char out[16])
{
	long off = ip_offset(l, want);

	if (off >= 0 && l->used[off])
		off = -1;
	for (uint32_t k = 0; off < 0 && k < l->size; k++) {
		uint32_t o = (l->next + k) % l->size;

		if (o > 0 && o < l->size - 1 && !l->used[o])
			off = (long)o;
	}
	if (off < 0)
		return false;
	l->used[off] = 1;
	l->next = (uint32_t)off + 1;
	ip_format(l->net + (uint32_t)off, out);
	return true;
}

static void ip_give(struct na_light *l, const char *ip)
{
	long off = ip_offset(l, ip);

	if (off >= 0)
		l->used[off] = 0;
}

size_t na_light_max_pods(const struct agent *ag)
{
	return ag->light ? ag->light->size - 2 : 0;
}

/* --- the table ----------------------------------------------------------------------------------- */

static struct na_lpod *lpod_new(struct na_light *l, json_t *api)
{
	struct na_lpod *p = xcalloc(1, sizeof(*p));

	p->uid = xstrdup(jstr(api, "metadata.uid"));
	p->ns = xstrdup(jstr(api, "metadata.namespace"));
	p->name = xstrdup(jstr(api, "metadata.name"));
	p->key = xasprintf("%s/%s", p->ns, p->name);
	p->api = json_incref(api);
	p->reported = -1;
	p->start_ms = clock_wall_ms();
	p->n_ids = json_array_size(jsonx_get(api, "spec.initContainers")) +
	           json_array_size(jsonx_get(api, "spec.containers"));
	p->ids = xcalloc(p->n_ids + 1, sizeof(*p->ids));
	strmap_set(&l->pods, p->uid, p);
	return p;
}

static void lpod_free(void *v)
{
	struct na_lpod *p = v;

	free(p->uid);
	free(p->ns);
	free(p->name);
	free(p->key);
	free(p->wait_reason);
	free(p->wait_msg);
	free(p->ids);
	json_decref(p->api);
	free(p);
}

/* Takes p out of the simulator and the table, and frees it. */
static void lpod_forget(struct na_light *l, struct na_lpod *p)
{
	if (p->ip[0]) {
		if (p->simulated)
			na_sim_remove(l->sim, p->ip);
		ip_give(l, p->ip);
	}
	strmap_remove(&l->pods, p->uid, NULL);
	lpod_free(p);
}

static void lpod_wait(struct na_lpod *p, const char *reason, const char *msg)
{
	bool same = p->wait_msg && strcmp(p->wait_msg, msg) == 0;

	if (!same) {
		free(p->wait_reason);
		free(p->wait_msg);
		p->wait_reason = xstrdup(reason);
		p->wait_msg = xstrdup(msg);
		p->report_force = true;
		log_info(NA_COMPONENT, "light pod waiting", "pod", p->key, "reason", msg,
		         (char *)NULL);
	}
}

/* --- a pod's boot --------------------------------------------------------------------------------- */

/* Every persistentVolumeClaim volume of the pod is Bound; else msg says which is not. */
static bool pvcs_bound(struct agent *ag, struct na_lpod *p, char *msg, size_t len)
{
	json_t *vols = jsonx_get(p->api, "spec.volumes"), *v;
	size_t i;

	json_array_foreach (vols, i, v) {
		const char *claim = jstr(v, "persistentVolumeClaim.claimName");
		json_t *pvc = claim ? k8s_informer_get(ag->pvcs, p->ns, claim) : NULL;
		const char *phase = jstr(pvc, "status.phase");
		bool bound = phase && strcmp(phase, "Bound") == 0;

		json_decref(pvc);
		if (claim && !bound) {
			snprintf(msg, len, "persistentvolumeclaim \"%.200s\" is not bound", claim);
			return false;
		}
	}
	return true;
}

static int64_t duration_of(json_t *rc, const char *path, int64_t def)
{
	const char *s = jstr(rc, path);
	int64_t ms;

	return s && parse_duration_ms(s, &ms, NULL) == 0 && ms > 0 ? ms : def;
}

/* The boot record of p from its RedisCluster rc (strings borrowed from rc and p). */
static void boot_of(struct na_lpod *p, json_t *rc, const char *cluster, struct na_sim_boot *b)
{
	memset(b, 0, sizeof(*b));
	b->ns = p->ns;
	b->pod = p->name;
	b->uid = p->uid;
	b->cluster = cluster;
	b->ip = p->ip;
	b->current_primary = jstr(rc, "status.currentPrimary");
	b->cluster_uid = jstr(rc, "metadata.uid");
	b->lease_duration_ms = duration_of(rc, "spec.failover.leaseDuration", LEASE_DURATION_MS);
	b->renew_deadline_ms = duration_of(rc, "spec.failover.renewDeadline", RENEW_DEADLINE_MS);
	b->renew_period_ms = duration_of(rc, "spec.failover.renewPeriod", RENEW_PERIOD_MS);
}

/* Reads the pod's RedisCluster (NULL *rc: the pod has no cluster label). 0 or -errno. */
static int cluster_of(struct agent *ag, struct na_lpod *p, const char **name, json_t **rc,
                      struct err *e)
{
	*name = json_string_value(
	        json_object_get(jsonx_get(p->api, "metadata.labels"), LABEL_CLUSTER));
	*rc = NULL;
	if (!*name)
		return 0;
	return k8s_get(ag->client, &api_res_redisclusters, p->ns, *name, rc, e);
}

/* The TLS material of p's "http-tls" volume (none: all three NULL). 0 or -errno with msg. */
struct tls_pem {
	char *cert, *key, *ca;
};

static void tls_pem_release(struct tls_pem *t)
{
	free(t->cert);
	free_secret(t->key);
	free(t->ca);
	memset(t, 0, sizeof(*t));
}

static int tls_of(struct agent *ag, struct na_lpod *p, struct tls_pem *t, char *msg, size_t len)
{
	json_t *vols = jsonx_get(p->api, "spec.volumes"), *v, *sec = NULL;
	const char *name = NULL;
	struct err e;
	size_t i, n;
	int rc;

	memset(t, 0, sizeof(*t));
	json_array_foreach (vols, i, v)
		if (jstr(v, "name") && strcmp(jstr(v, "name"), HTTP_TLS_VOLUME) == 0)
			name = jstr(v, "secret.secretName");
	if (!name)
		return 0;
	err_clear(&e);
	if ((rc = k8s_get(ag->client, &k8s_res_secrets, p->ns, name, &sec, &e)) < 0) {
		snprintf(msg, len, "secret \"%.150s\": %.150s", name, e.msg);
		return rc;
	}
	if ((rc = na_source_value(sec, true, "tls.crt", &t->cert, &n)) ||
	    (rc = na_source_value(sec, true, "tls.key", &t->key, &n)) ||
	    (rc = na_source_value(sec, true, "ca.crt", &t->ca, &n))) {
		snprintf(msg, len, "secret \"%.200s\": tls.crt, tls.key or ca.crt %s", name,
		         rc == -ENOENT ? "missing" : "not base64");
		tls_pem_release(t);
	}
	json_decref(sec);
	return rc;
}

/* Boots p in the simulator (rc: its RedisCluster). 0, or -errno with msg. */
static int lpod_boot(struct agent *ag, struct na_lpod *p, json_t *rc, const char *cluster,
                     char *msg, size_t len)
{
	struct na_sim_boot b;
	struct tls_pem t;
	struct err e;
	int ret;

	if ((ret = tls_of(ag, p, &t, msg, len)))
		return ret;
	boot_of(p, rc, cluster, &b);
	b.tls_cert = t.cert;
	b.tls_key = t.key;
	b.tls_ca = t.ca;
	err_clear(&e);
	if ((ret = na_sim_add(ag->light->sim, &b, &e)))
		snprintf(msg, len, "%.250s", e.msg);
	tls_pem_release(&t);
	return ret;
}

static void lpod_start(struct agent *ag, struct na_lpod *p)
{
	struct na_light *l = ag->light;
	const char *cluster;
	char msg[512];
	json_t *rc = NULL;
	struct err e;

	err_clear(&e);
	if (!pvcs_bound(ag, p, msg, sizeof(msg)))
		goto wait;
	if (cluster_of(ag, p, &cluster, &rc, &e) < 0) {
		snprintf(msg, sizeof(msg), "reading its RedisCluster: %.200s", e.msg);
		goto wait;
	}
	if (!ip_take(l, jstr(p->api, "status.podIP"), p->ip)) {
		snprintf(msg, sizeof(msg), "light range %s: no free address", l->cidr);
		goto wait;
	}
	if (rc && lpod_boot(ag, p, rc, cluster, msg, sizeof(msg)) < 0) {
		ip_give(l, p->ip);
		p->ip[0] = '\0';
		goto wait;
	}
	p->simulated = rc != NULL;
	json_decref(rc);
	p->started = true;
	p->report_force = true;
	log_info(NA_COMPONENT, "light pod started", "pod", p->key, "ip", p->ip, (char *)NULL);
	return;
wait:
	json_decref(rc);
	lpod_wait(p, "ContainerCreating", msg);
	p->retry_at = clock_mono_ms() + ag->set.config_retry_ms;
}

/* --- sync ---------------------------------------------------------------------------------------- */

/* The Pod NS/NAME as the node informers hold it (a new reference). */
static json_t *api_pod(struct agent *ag, const char *ns, const char *name)
{
	for (size_t i = 0; i < ag->n_nodes; i++) {
		json_t *obj = k8s_informer_get(ag->nodes[i].pods, ns, name);

		if (obj)
			return obj;
	}
	return NULL;
}

/* Local pods named key whose Pod is gone (or is another uid now). */
static void forget_others(struct na_light *l, const char *key, const char *uid)
{
	struct na_lpod **v = xcalloc(strmap_len(&l->pods) + 1, sizeof(*v));
	struct strmap_entry *en;
	size_t n = 0;

	for (size_t it = 0; (en = strmap_next(&l->pods, &it));) {
		struct na_lpod *p = en->value;

		if (strcmp(p->key, key) == 0 && (!uid || strcmp(p->uid, uid) != 0))
			v[n++] = p;
	}
	for (size_t i = 0; i < n; i++)
		lpod_forget(l, v[i]);
	free(v);
}

static bool is_terminal(json_t *api)
{
	const char *ph = jstr(api, "status.phase");

	return ph && (strcmp(ph, "Succeeded") == 0 || strcmp(ph, "Failed") == 0);
}

static void sync_api(struct agent *ag, json_t *api)
{
	struct na_light *l = ag->light;
	const char *uid = jstr(api, "metadata.uid");
	struct na_lpod *p = uid ? strmap_get(&l->pods, uid) : NULL;

	if (!uid || ag->stopping)
		return;
	if (jsonx_get(api, "metadata.deletionTimestamp")) {
		if (p)
			lpod_forget(l, p);
		if (na_delete_api_pod(ag, jstr(api, "metadata.namespace"),
		                      jstr(api, "metadata.name"), uid)) {
			char *key = xasprintf("pod:%s/%s", jstr(api, "metadata.namespace"),
			                      jstr(api, "metadata.name"));

			na_enqueue_after(ag, key, LIGHT_RETRY_MS);
			free(key);
		}
		return;
	}
	if (!p && is_terminal(api))
		return;
	if (!p)
		p = lpod_new(l, api);
	json_decref(p->api);
	p->api = json_incref(api);
	if (!p->started && clock_mono_ms() >= p->retry_at)
		lpod_start(ag, p);
}

void na_light_pod_sync(struct agent *ag, const char *ns_name)
{
	const char *slash = strchr(ns_name, '/');
	char ns[K8S_NAMESPACE_MAX + 1];
	json_t *api;

	if (!slash || (size_t)(slash - ns_name) > K8S_NAMESPACE_MAX)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ns_name), ns_name);
	api = api_pod(ag, ns, slash + 1);
	forget_others(ag->light, ns_name, api ? jstr(api, "metadata.uid") : NULL);
	if (api)
		sync_api(ag, api);
	json_decref(api);
}

/* --- status -------------------------------------------------------------------------------------- */

static void ctr_fill(struct rt_ctr_status *c, json_t *spec, bool init, bool ready, int64_t t,
                     pid_t pid)
{
	c->name = xstrdup(jstr(spec, "name") ? jstr(spec, "name") : "");
	c->image = xstrdup(jstr(spec, "image") ? jstr(spec, "image") : "");
	c->state.kind = init ? RT_STATE_TERMINATED : RT_STATE_RUNNING;
	c->state.reason = init ? xstrdup("Completed") : NULL;
	c->state.started_at_ms = t;
	c->state.finished_at_ms = init ? t : 0;
	c->ready = init || ready;
	c->started = !init;
	c->pid = pid;
}

/* What the runtime would say of a pod whose containers run (init ones completed). */
static void fake_status(struct na_lpod *p, bool ready, struct rt_pod_status *st)
{
	json_t *ini = jsonx_get(p->api, "spec.initContainers");
	json_t *ctr = jsonx_get(p->api, "spec.containers");
	size_t ni = json_array_size(ini), nc = json_array_size(ctr);
	pid_t pid = LIGHT_FAKE_PID + (pid_t)(strmap_hash(p->uid) % 1000000) * 8;

	memset(st, 0, sizeof(*st));
	st->phase = RT_PHASE_RUNNING;
	snprintf(st->pod_ip, sizeof(st->pod_ip), "%s", p->ip);
	st->initialized = true;
	st->containers_ready = ready;
	st->init = xcalloc(ni + 1, sizeof(*st->init));
	st->containers = xcalloc(nc + 1, sizeof(*st->containers));
	st->n_init = ni;
	st->n_containers = nc;
	for (size_t i = 0; i < ni; i++)
		ctr_fill(&st->init[i], json_array_get(ini, i), true, true, p->start_ms, pid++);
	for (size_t i = 0; i < nc; i++)
		ctr_fill(&st->containers[i], json_array_get(ctr, i), false, ready, p->start_ms,
		         pid++);
}

static bool lpod_ready(struct na_light *l, struct na_lpod *p)
{
	return p->started && (!p->simulated || na_sim_ready(l->sim, p->ip));
}

static void lpod_report(struct agent *ag, struct na_lpod *p, bool ready, int64_t now)
{
	struct na_status_in in = { p->api,      NULL,        ag->set.host_ip, p->wait_reason,
		                   p->wait_msg, p->start_ms, clock_wall_ms() };
	struct rt_pod_status st;
	json_t *patch;
	struct err e;
	int rc;

	memset(&st, 0, sizeof(st));
	if (p->started) {
		fake_status(p, ready, &st);
		in.rt = &st;
	}
	patch = na_status_build(&in, p->conds, p->ids, p->n_ids);
	err_clear(&e);
	rc = k8s_patch(ag->client, &k8s_res_pods, p->ns, p->name, "status", K8S_PATCH_STRATEGIC,
	               patch, NULL, NULL, &e);
	if (rc && rc != -ENOENT) {
		log_warn(NA_COMPONENT, "pod status patch failed", "pod", p->key, "error", e.msg,
		         (char *)NULL);
		p->retry_at = now + LIGHT_RETRY_MS;
		p->report_force = true;
	} else {
		p->reported = p->started ? ready : -1;
		p->report_force = false;
	}
	json_decref(patch);
	rt_pod_status_release(&st);
}

static void log_stats(struct na_light *l, int64_t now)
{
	struct na_sim_stats s;
	char a[24], b[24], c[24], d[24], f[24], g[24], h[24];

	if (now < l->stats_at)
		return;
	l->stats_at = now + LIGHT_STATS_MS;
	na_sim_stats(l->sim, &s);
	snprintf(a, sizeof(a), "%zu", s.instances);
	snprintf(b, sizeof(b), "%zu", s.leases_held);
	snprintf(c, sizeof(c), "%llu", (unsigned long long)s.requests);
	snprintf(d, sizeof(d), "%llu", (unsigned long long)s.lease_calls);
	snprintf(f, sizeof(f), "%llu", (unsigned long long)s.lease_failures);
	snprintf(g, sizeof(g), "%llu", (unsigned long long)s.rejected);
	snprintf(h, sizeof(h), "%llu", (unsigned long long)s.plain_to_tls);
	log_info(NA_COMPONENT, "light simulator", "instances", a, "leasesHeld", b, "requests", c,
	         "leaseCalls", d, "leaseFailures", f, "rejected", g, "plainToTLS", h, (char *)NULL);
}

/* Reports p if due; false when it needs nothing. */
static bool lpod_step(struct agent *ag, struct na_lpod *p, bool sweep, int64_t now)
{
	bool ready;

	if (now < p->retry_at || !p->started || (!sweep && !p->report_force))
		return false;
	ready = lpod_ready(ag->light, p);
	if (!p->report_force && p->reported == (int)ready)
		return false;
	lpod_report(ag, p, ready, now);
	return true;
}

/*
 * Statuses whose Ready changed since the simulator's last change are patched; pods still
 * waiting are tried again. At most LIGHT_BUDGET_MS of API calls per turn: what is left
 * waits for the next turn (the sweep is then repeated: gen_seen stays behind).
 */
void na_light_run(struct agent *ag, int64_t now)
{
	struct na_light *l = ag->light;
	uint64_t gen = na_sim_generation(l->sim);
	int64_t until = clock_mono_ms() + LIGHT_BUDGET_MS;
	struct strmap_entry *en;
	char **retry = xcalloc(strmap_len(&l->pods) + 1, sizeof(*retry));
	size_t n_retry = 0, it = 0;
	bool done = true;

	for (; !ag->stopping && (en = strmap_next(&l->pods, &it));) {
		struct na_lpod *p = en->value;

		if (clock_mono_ms() >= until) {
			done = false;
			break;
		}
		if (!p->started && now >= p->retry_at && p->report_force)
			lpod_report(ag, p, false, now); /* Pending, and why */
		if (!p->started && now >= p->retry_at)
			retry[n_retry++] = xstrdup(p->key);
		else
			lpod_step(ag, p, gen != l->gen_seen, now);
	}
	if (done)
		l->gen_seen = gen;
	for (size_t i = 0; i < n_retry; i++) {
		if (clock_mono_ms() < until)
			na_light_pod_sync(ag, retry[i]);
		free(retry[i]);
	}
	free(retry);
	log_stats(l, now);
}

int64_t na_light_next_due(struct agent *ag)
{
	struct strmap_entry *en;
	int64_t due = ag->light->stats_at;

	if (na_sim_generation(ag->light->sim) != ag->light->gen_seen)
		return clock_mono_ms(); /* a sweep is due (or was cut short) */
	for (size_t it = 0; (en = strmap_next(&ag->light->pods, &it));) {
		struct na_lpod *p = en->value;

		if ((!p->started || p->report_force) && p->retry_at < due)
			due = p->retry_at;
	}
	return due;
}

/* --- start and stop --------------------------------------------------------------------------- */

static int route(const char *verb, const char *cidr, struct err *e)
{
	const char *argv[] = { "ip", "route", verb, "local", cidr, "dev", "lo", NULL };

	return rt_run(argv, e);
}

/* Room for a connection per pod (the controller keeps one to each) within RLIMIT_NOFILE. */
static unsigned conn_limit(uint32_t pods)
{
	struct rlimit r;
	rlim_t want = (rlim_t)pods + 2 * LIGHT_CONN_SLACK;

	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < want) {
		r.rlim_cur = r.rlim_max < want ? r.rlim_max : want;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur <= 2 * LIGHT_CONN_SLACK)
		return LIGHT_CONN_SLACK;
	return r.rlim_cur - LIGHT_CONN_SLACK < want - LIGHT_CONN_SLACK
	               ? (unsigned)(r.rlim_cur - LIGHT_CONN_SLACK)
	               : (unsigned)(want - LIGHT_CONN_SLACK);
}

int na_light_init(struct agent *ag, struct err *e)
{
	struct na_light *l = xcalloc(1, sizeof(*l));
	struct na_sim_opts so = { .client = ag->client };
	int rc;

	ag->light = l;
	strmap_init(&l->pods);
	if ((rc = cidr_parse(ag->set.light, l, e)))
		return rc;
	l->used = xcalloc(l->size, 1);
	l->next = 1;
	so.net = l->net;
	so.size = l->size;
	so.conn_limit = conn_limit(l->size);
	if (!(l->sim = na_sim_new(&so)))
		return err_set(e, -EINVAL, "--light %s: cannot make the simulator", l->cidr);
	if ((rc = na_sim_start(l->sim, e)))
		return rc;
	if ((rc = route("add", l->cidr, e)))
		return err_set(e, rc,
		               "--light %s: %s (is another light agent running, or was its route "
		               "left behind? `ip route del local %s dev lo`)",
		               l->cidr, e->msg, l->cidr);
	l->route_added = true;
	l->stats_at = clock_mono_ms() + LIGHT_STATS_MS;
	log_info(NA_COMPONENT, "light mode: pods are simulated, not run", "range", l->cidr,
	         (char *)NULL);
	return 0;
}

void na_light_free(struct agent *ag)
{
	struct na_light *l = ag->light;
	struct err e;

	if (!l)
		return;
	err_clear(&e);
	if (l->route_added && route("del", l->cidr, &e) < 0)
		log_warn(NA_COMPONENT, "cannot remove the light route", "error", e.msg,
		         (char *)NULL);
	na_sim_free(l->sim);
	strmap_release(&l->pods, lpod_free);
	free(l->used);
	free(l);
	ag->light = NULL;
}

/*
 * poller: every poll period, GET /v1/status of every data and sentinel pod at once (lib/k8s/multi,
 * one deadline for all), store the answers in ctl->insts and queue the clusters whose
 * instances changed in a way the planner reads (ctl_inst_significant_change): a role,
 * readiness, fencing or link change, or an instance becoming unreachable. Offsets alone
 * never queue anything (the status refresh picks them up). Once a minute the thread hands
 * the allocator's free pages back (malloc_trim: docs/footprint.md).
 *
 * Only the leader polls. A result is kept per "ns/pod" together with the pod uid it
 * was for; a new incarnation of the pod starts with a fresh entry. Entries of pods that
 * left the cache are dropped.
 *
 * TLS: a pod that mounts <cluster>-instance-tls is polled over HTTPS with its cluster's
 * material (instclient.c: the cluster's server CA only, no host name check, the
 * controller's client certificate), parsed once per version of its Secret and kept
 * between rounds (struct cluster_tls). While a cluster's <cluster>-operator-tls is missing or bad, its pods are not
 * polled at all (their last result stays, no failure is counted: "unknown" is not
 * "down"), the cluster is queued (within TLS_REQUEUE_MS) so that the planner recreates
 * the Secret, and the reason is logged once per change.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/internal.h"
#include "controller/metrics_cluster.h"
#include "controller/owner.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/multi.h"
#include "lib/log.h"

#define TLS_REQUEUE_MS 5000  /* a cluster without TLS material is looked at again */
#define HEAP_TRIM_MS   60000 /* malloc_trim(0) at most this often (trim_heap) */

struct target {
	char key[K8S_INFORMER_KEY_MAX + 1];     /* ns/pod */
	char cluster[K8S_INFORMER_KEY_MAX + 1]; /* ns/cluster */
	char uid[64];
	bool sentinel;                   /* a sentinel pod: ctl_inst_parse_sentinel */
	char *url;                       /* NULL: not polled this round (no TLS material) */
	const struct k8s_multi_tls *tls; /* borrowed from poll_state.clusters; NULL: http */
};

/* One cluster's TLS material, kept between rounds: parsing PEM costs OpenSSL about a
 * millisecond, a thousand clusters a second would cost a core. It is read again only when
 * its Secret changes (uid or resourceVersion) or the client certificate expires. */
struct cluster_tls {
	char version[160]; /* "uid/resourceVersion" of the Secret read; "" when there was none */
	struct ctl_pki_client pem;
	struct k8s_multi_tls tls; /* points into pem */
	int rc;                   /* 0, or why its pods are skipped */
	char *msg;                /* the problem last logged (rc != 0) */
	bool used;                /* a pod of this round needed it */
};

/* What the poller thread keeps between rounds: the k8s_multi (its connections stay open)
 * and the TLS material by "ns/cluster". */
struct poll_state {
	struct k8s_multi *m;
	struct strmap clusters;
};

/* A sentinel's view of the master changed (its epoch alone too: a failover ended). */
static bool sentinel_change(const struct ctl_sentinel_obs *a, const struct ctl_sentinel_obs *b)
{
	return a->has_view != b->has_view || strcmp(a->master_host, b->master_host) != 0 ||
	       a->master_port != b->master_port ||
	       strcmp(a->master_status, b->master_status) != 0 ||
	       a->failover_in_progress != b->failover_in_progress || a->quorum_ok != b->quorum_ok ||
	       a->config_epoch != b->config_epoch || a->known_sentinels != b->known_sentinels ||
	       a->known_replicas != b->known_replicas;
}

bool ctl_inst_significant_change(const struct ctl_inst *a, const struct ctl_inst *b,
                                 int failures_down)
{
	bool down_a = a->failures >= failures_down, down_b = b->failures >= failures_down;

	if (a->seen != b->seen || (a->failures == 0) != (b->failures == 0) || down_a != down_b)
		return true;
	if (strcmp(a->restore_phase, b->restore_phase) != 0) /* spec.bootstrap's condition */
		return true;
	return strcmp(a->state, b->state) != 0 || strcmp(a->role, b->role) != 0 ||
	       a->ready != b->ready || a->fenced != b->fenced || a->lease_held != b->lease_held ||
	       a->primary_crashed != b->primary_crashed || a->server_up != b->server_up ||
	       a->loading != b->loading || a->syncing != b->syncing ||
	       strcmp(a->link, b->link) != 0 || strcmp(a->master_host, b->master_host) != 0 ||
	       a->master_port != b->master_port || strcmp(a->repl_id, b->repl_id) != 0 ||
	       a->server_pid != b->server_pid || sentinel_change(&a->sen, &b->sen);
}

/* The pod's cluster is one this controller reconciles (--cluster-selector), and the pod
 * is that cluster's own (owner.h): a foreign pod with its labels is not called at all. */
static bool ours(struct ctl *c, const char *ns, const char *cluster, json_t *pod)
{
	json_t *obj = k8s_informer_get(c->inf[CTL_INF_CLUSTERS], ns, cluster);
	bool own = obj && ctl_owner_is(pod, jsonx_get_string(obj, "metadata.uid"));

	json_decref(obj);
	return own;
}

static void cluster_tls_free(void *v)
{
	struct cluster_tls *ct = v;

	ctl_pki_client_release(&ct->pem);
	free(ct->msg);
	free(ct);
}

/* Logs a change of ct's usability (once per change, not once per round). */
static void note_tls(struct cluster_tls *ct, const char *key, int rc, const char *msg)
{
	if (rc && (!ct->msg || strcmp(ct->msg, msg) != 0)) {
		log_warn("poller", "not polling the cluster's pods: no usable TLS material", "key",
		         key, "error", msg, (char *)NULL);
		free(ct->msg);
		ct->msg = xstrdup(msg);
	} else if (!rc && ct->msg) {
		log_info("poller", "TLS material usable again", "key", key, (char *)NULL);
		free(ct->msg);
		ct->msg = NULL;
	}
}

/* Reads ns/cl's material into ct unless what ct holds came from the same Secret and has
 * not expired. */
static void refresh_tls(struct ctl *c, struct cluster_tls *ct, const char *ns, const char *cl,
                        const char *key)
{
	struct err e = { 0 };
	json_t *sec = ctl_operator_tls_secret(c, ns, cl, &e);
	char version[sizeof(ct->version)] = "";
	struct ctl_pki_client pem = { 0 };
	int rc = sec ? 0 : -ENOENT;

	if (sec)
		snprintf(version, sizeof(version), "%s/%s", jsonx_get_string(sec, "metadata.uid"),
		         jsonx_get_string(sec, "metadata.resourceVersion"));
	if (sec && strcmp(version, ct->version) == 0 &&
	    (ct->rc || ct->pem.not_after_ms > clock_wall_ms())) {
		json_decref(sec);
		return;
	}
	if (sec)
		rc = ctl_pki_client_read(sec, clock_wall_ms(), &pem, &e);
	json_decref(sec);
	ctl_pki_client_release(&ct->pem);
	ct->pem = pem;
	ct->tls = (struct k8s_multi_tls){ .ca_pem = pem.ca_pem,
		                          .cert_pem = pem.cert_pem,
		                          .key_pem = pem.key_pem,
		                          .skip_host_check = true };
	ct->rc = rc;
	snprintf(ct->version, sizeof(ct->version), "%s", version);
	note_tls(ct, key, rc, e.msg);
}

/* This round's material for ns/cl (refreshed on its first use in the round). */
static struct cluster_tls *cluster_tls(struct ctl *c, struct poll_state *ps, const char *ns,
                                       const char *cl, const char *key)
{
	bool created;
	struct strmap_entry *ent = strmap_upsert(&ps->clusters, key, &created);
	struct cluster_tls *ct = ent->value;

	if (created)
		ent->value = ct = xcalloc(1, sizeof(*ct));
	if (!ct->used)
		refresh_tls(c, ct, ns, cl, key);
	ct->used = true;
	return ct;
}

/* Forgets the material of clusters that had no HTTPS pod this round; clears the marks. */
static void prune_tls(struct poll_state *ps)
{
	struct strmap_entry *ent;
	char **gone = xcalloc(strmap_len(&ps->clusters) + 1, sizeof(*gone));
	size_t n = 0, it = 0;
	void *v;

	while ((ent = strmap_next(&ps->clusters, &it))) {
		struct cluster_tls *ct = ent->value;

		if (!ct->used)
			gone[n++] = xstrdup(ent->key);
		ct->used = false;
	}
	for (size_t i = 0; i < n; i++) {
		if (strmap_remove(&ps->clusters, gone[i], &v))
			cluster_tls_free(v);
		free(gone[i]);
	}
	free(gone);
}

/* Data pods with an address, from the pod cache. */
static size_t targets(struct ctl *c, struct poll_state *ps, struct target **out)
{
	json_t *pods = k8s_informer_list(c->inf[CTL_INF_PODS]), *pod;
	struct target *t = xcalloc(json_array_size(pods) + 1, sizeof(*t));
	struct cluster_tls *ct = NULL;
	size_t i, n = 0;

	json_array_foreach (pods, i, pod) {
		const char *ns = jsonx_get_string(pod, "metadata.namespace");
		const char *name = jsonx_get_string(pod, "metadata.name");
		const char *uid = jsonx_get_string(pod, "metadata.uid");
		const char *ip = jsonx_get_string(pod, "status.podIP");
		const char *cl = json_string_value(
		        json_object_get(jsonx_get(pod, "metadata.labels"), CTL_LABEL_CLUSTER));
		const char *role = json_string_value(
		        json_object_get(jsonx_get(pod, "metadata.labels"), CTL_LABEL_ROLE));
		bool https = ctl_pki_pod_uses_tls(pod);

		if (!ns || !name || !ip || !*ip || !cl || !uid || !ours(c, ns, cl, pod))
			continue;
		snprintf(t[n].key, sizeof(t[n].key), "%s/%s", ns, name);
		snprintf(t[n].cluster, sizeof(t[n].cluster), "%s/%s", ns, cl);
		snprintf(t[n].uid, sizeof(t[n].uid), "%s", uid);
		t[n].sentinel = role && strcmp(role, CTL_ROLE_SENTINEL) == 0;
		if (https)
			ct = cluster_tls(c, ps, ns, cl, t[n].cluster);
		if (https && ct->rc == 0)
			t[n].tls = &ct->tls;
		if (!https || ct->rc == 0)
			t[n].url = xasprintf("%s://%s:%d/v1/status", https ? "https" : "http", ip,
			                     CTL_PORT_HTTP);
		n++;
	}
	json_decref(pods);
	*out = t;
	return n;
}

static bool absorb(struct ctl *c, const struct target *t, const struct k8s_multi_result *r,
                   int64_t mono, int64_t wall)
{
	struct strmap_entry *ent;
	struct ctl_inst *cur, nw;
	bool created, changed;
	int rc = -EIO;

	pthread_mutex_lock(&c->mu);
	ent = strmap_upsert(&c->insts, t->key, &created);
	if (created || strcmp(((struct ctl_inst *)ent->value)->uid, t->uid) != 0) {
		free(ent->value);
		ent->value = xcalloc(1, sizeof(struct ctl_inst));
		snprintf(((struct ctl_inst *)ent->value)->uid, 64, "%s", t->uid);
	}
	cur = ent->value;
	nw = *cur;
	if (r->err == 0 && r->http == 200)
		rc = t->sentinel ? ctl_inst_parse_sentinel(r->body, r->body_len, &nw, NULL)
		                 : ctl_inst_parse(r->body, r->body_len, &nw, NULL);
	if (rc == 0) {
		nw.seen = true;
		nw.failures = 0;
		nw.last_ok_mono = mono;
		nw.last_ok_wall = wall;
	} else {
		nw.failures = cur->failures < 1000 ? cur->failures + 1 : cur->failures;
	}
	changed = ctl_inst_significant_change(cur, &nw, (int)c->set.poll_failures_down);
	*cur = nw;
	pthread_mutex_unlock(&c->mu);
	if (rc == 0 && !t->sentinel)
		ctl_backup_observe(c, t->key, r->body, r->body_len);
	if (rc)
		atomic_fetch_add(&c->metrics.poll_errors, 1);
	return changed;
}

/* Drops entries of pods no longer polled. */
static void forget_gone(struct ctl *c, const struct target *t, size_t n)
{
	struct strmap keep = STRMAP_INIT;
	struct strmap_entry *ent;
	char **gone = NULL;
	size_t ngone = 0, it = 0;

	for (size_t i = 0; i < n; i++)
		strmap_set(&keep, t[i].key, (void *)&t[i]);
	pthread_mutex_lock(&c->mu);
	gone = xcalloc(strmap_len(&c->insts) + 1, sizeof(*gone));
	while ((ent = strmap_next(&c->insts, &it)))
		if (!strmap_contains(&keep, ent->key))
			gone[ngone++] = xstrdup(ent->key);
	for (size_t i = 0; i < ngone; i++) {
		void *v = NULL;

		strmap_remove(&c->insts, gone[i], &v);
		free(v);
		ctl_backup_forget_locked(c, gone[i]);
		free(gone[i]);
	}
	pthread_mutex_unlock(&c->mu);
	free(gone);
	strmap_release(&keep, NULL);
}

static void poll_once(struct ctl *c, struct poll_state *ps)
{
	struct target *t = NULL;
	size_t n = targets(c, ps, &t), k = 0;
	const char **urls = xcalloc(n + 1, sizeof(*urls));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	const struct k8s_multi_tls **tl = xcalloc(n + 1, sizeof(*tl));
	size_t *idx = xcalloc(n + 1, sizeof(*idx)); /* request k polls t[idx[k]] */
	struct k8s_multi_result *res = xcalloc(n + 1, sizeof(*res));
	int64_t mono = clock_mono_ms(), wall = clock_wall_ms();

	for (size_t i = 0; i < n; i++) {
		if (!t[i].url) { /* its cluster's TLS material is missing: the planner makes it */
			(void)wq_add_after(c->q, t[i].cluster, TLS_REQUEUE_MS);
			continue;
		}
		idx[k] = i;
		tl[k] = t[i].tls;
		urls[k++] = t[i].url;
	}
	if (k && k8s_multi_get_tls(ps->m, urls, tl, k, res, NULL) == 0) {
		for (size_t i = 0; i < k; i++)
			if (absorb(c, &t[idx[i]], &res[i], mono, wall))
				(void)wq_add(c->q, t[idx[i]].cluster);
	}
	for (size_t i = 0; i < n; i++)
		ctl_cm_observe(c, t[i].cluster, t[i].key);
	ctl_cm_round_end(c, mono);
	atomic_fetch_add(&c->metrics.polls, k);
	atomic_fetch_add(&c->poll_rounds, 1);
	forget_gone(c, t, n);
	k8s_multi_results_release(res, k);
	for (size_t i = 0; i < n; i++)
		free(t[i].url);
	prune_tls(ps);
	free(t);
	free(urls);
	free(tl);
	free(idx);
	free(res);
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* An early poll is due (and is consumed). */
static bool early(struct ctl *c)
{
	int64_t at = atomic_load(&c->poll_at);

	if (!at || clock_mono_ms() < at)
		return false;
	atomic_store(&c->poll_at, 0);
	return true;
}

/* The once-a-second churn (answers, parsed statuses, reconcile views) leaves glibc holding
 * freed memory: at 100 clusters 37 % of the heap (docs/footprint.md); give its free pages
 * back once a minute. */
static void trim_heap(int64_t *last_ms)
{
	int64_t now = clock_mono_ms();

	if (now - *last_ms < HEAP_TRIM_MS)
		return;
	*last_ms = now;
	(void)malloc_trim(0);
}

static void *poller_main(void *arg)
{
	struct ctl *c = arg;
	struct k8s_multi_opts o = { .timeout_ms = (long)c->set.poll_timeout_ms,
		                    .connect_timeout_ms = (long)c->set.poll_timeout_ms };
	struct poll_state ps = { .m = k8s_multi_new(&o), .clusters = STRMAP_INIT };
	int64_t trimmed_ms = clock_mono_ms();

	while (!atomic_load(&c->poller_stop)) {
		int64_t start = clock_mono_ms(), left;

		if (atomic_load(&c->leading))
			poll_once(c, &ps);
		trim_heap(&trimmed_ms);
		left = c->set.poll_period_ms - (clock_mono_ms() - start);
		while (left > 0 && !atomic_load(&c->poller_stop) && !early(c)) {
			sleep_ms(left < 20 ? left : 20);
			left -= 20;
		}
	}
	k8s_multi_free(ps.m);
	strmap_release(&ps.clusters, cluster_tls_free);
	return NULL;
}

int ctl_poller_start(struct ctl *c, struct err *e)
{
	int rc;

	atomic_store(&c->poller_stop, false);
	rc = pthread_create(&c->poller, NULL, poller_main, c);
	if (rc)
		return err_set(e, -rc, "poller thread: %s", strerror(rc));
	c->poller_running = true;
	return 0;
}

void ctl_poller_stop(struct ctl *c)
{
	if (!c->poller_running)
		return;
	atomic_store(&c->poller_stop, true);
	pthread_join(c->poller, NULL);
	c->poller_running = false;
}

void ctl_poller_kick(struct ctl *c, int64_t delay_ms)
{
	int64_t at = clock_mono_ms() + delay_ms, cur = atomic_load(&c->poll_at);

	while ((!cur || at < cur) && !atomic_compare_exchange_weak(&c->poll_at, &cur, at))
		;
}

void ctl_poller_get(struct ctl *c, const char *ns, const char *pod, struct ctl_inst *out)
{
	char key[K8S_INFORMER_KEY_MAX + 1];
	struct ctl_inst *i;

	snprintf(key, sizeof(key), "%s/%s", ns, pod);
	pthread_mutex_lock(&c->mu);
	i = strmap_get(&c->insts, key);
	if (i)
		*out = *i;
	else
		memset(out, 0, sizeof(*out));
	pthread_mutex_unlock(&c->mu);
}

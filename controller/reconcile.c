/*
 * reconcile: the workers. Each takes a cluster key from the work queue, builds a view
 * (view.h) from the caches, the poll results and a few reads (the user's auth Secret),
 * asks the planner what to do, has the applier do it, and schedules the next look:
 * soon when the plan waits for something, at the resync period otherwise, with backoff
 * when an action failed. The view holds only the children the cluster controls
 * (owner.h); the labelled others are reported and left alone.
 *
 * The only state kept between reconciles (ctl->memos) is what the API cannot tell: when
 * the primary Lease's record was first seen unchanged (to judge its expiry on our own
 * clock by lib/k8s/lease.h's rule, as client-go does) and when the status was last
 * written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/acl_config.h"
#include "controller/backup.h"
#include "controller/bootstrap.h"
#include "controller/internal.h"
#include "controller/desired.h"
#include "controller/failover_state.h"
#include "controller/metrics_cluster.h"
#include "controller/owner.h"
#include "controller/plan.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/parse.h"

#define WORKER_WAIT_MS 1000
#define PASSWORD_MAX   4096

/* Everything a view borrows, released together. */
struct gathered {
	struct api_redis_cluster rc;
	bool decoded;
	json_t *cluster;
	json_t *pods_json, *pvcs_json;       /* the cluster's own (owner.h) */
	json_t *foreign_pods, *foreign_pvcs; /* names of the labelled others */
	json_t *child[CTL_CHILD_COUNT];
	char *password;
	char auth_rv[K8S_RV_MAX + 1];
	struct api_redis_backup boot; /* spec.bootstrap.backupName, when read */
	bool boot_decoded;
	struct err boot_err;
	char *acl_config; /* controller/acl_config.h */
	char *tls_ca;     /* v->tls_ca_b64 */
};

static struct ctl_memo *memo(struct ctl *c, const char *key)
{
	struct strmap_entry *e = strmap_upsert(&c->memos, key, NULL);

	if (!e->value)
		e->value = xcalloc(1, sizeof(struct ctl_memo));
	return e->value;
}

/* --- children -------------------------------------------------------------------------- */

/* Labelled for the cluster and controlled by it (owner.h): a namesake of another's, or
 * one a user made, is no child; creating ours then fails with AlreadyExists (apply.c). */
static bool owned_by(json_t *obj, const struct api_redis_cluster *rc)
{
	const char *l = json_string_value(
	        json_object_get(jsonx_get(obj, "metadata.labels"), CTL_LABEL_CLUSTER));

	return l && strcmp(l, rc->meta.name) == 0 && ctl_owner_is(obj, rc->meta.uid);
}

static json_t *child(struct ctl *c, enum ctl_inf inf, const char *ns, const char *name,
                     const struct api_redis_cluster *rc)
{
	json_t *o;

	if (!name)
		return NULL;
	o = k8s_informer_get(c->inf[inf], ns, name);
	if (o && !owned_by(o, rc)) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static void children(struct ctl *c, struct gathered *g, const char *ns)
{
	const struct api_redis_cluster *rc = &g->rc;
	static const struct {
		enum ctl_child slot;
		enum ctl_inf inf;
		const char *suffix;
	} named[] = {
		{ CTL_CHILD_SA, CTL_INF_SAS, "" },
		{ CTL_CHILD_ROLE, CTL_INF_ROLES, "" },
		{ CTL_CHILD_ROLEBINDING, CTL_INF_ROLEBINDINGS, "" },
		{ CTL_CHILD_NETPOL, CTL_INF_NETPOLS, "" },
		{ CTL_CHILD_OPERATOR_SECRET, CTL_INF_SECRETS, DESIRED_OPERATOR_SECRET },
		{ CTL_CHILD_SVC_LEADER, CTL_INF_SERVICES, "-leader" },
		{ CTL_CHILD_SVC_REPLICA, CTL_INF_SERVICES, "-replica" },
		{ CTL_CHILD_SVC_ANY, CTL_INF_SERVICES, "-any" },
		{ CTL_CHILD_PDB_PRIMARY, CTL_INF_PDBS, "-primary" },
		{ CTL_CHILD_PDB_REPLICA, CTL_INF_PDBS, "-replica" },
		{ CTL_CHILD_PDB_SENTINEL, CTL_INF_PDBS, "-sentinel" },
		{ CTL_CHILD_LEASE, CTL_INF_LEASES, "-primary" },
		{ CTL_CHILD_OPERATOR_TLS, CTL_INF_SECRETS, DESIRED_OPERATOR_TLS },
		{ CTL_CHILD_INSTANCE_TLS, CTL_INF_SECRETS, DESIRED_INSTANCE_TLS },
		{ CTL_CHILD_LEADER_ENDPOINTS, CTL_INF_ENDPOINTSLICES, "-leader" },
		{ CTL_CHILD_SVC_SENTINEL, CTL_INF_SERVICES, DESIRED_SENTINEL_SUFFIX },
	};
	char name[CTL_NAME_MAX + 1];

	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		desired_name(rc, named[i].suffix, name, sizeof(name));
		g->child[named[i].slot] = child(c, named[i].inf, ns, name, rc);
	}
	if (!rc->spec.auth_secret.name) {
		desired_name(rc, DESIRED_AUTH_SECRET, name, sizeof(name));
		g->child[CTL_CHILD_AUTH_SECRET] = child(c, CTL_INF_SECRETS, ns, name, rc);
	}
	g->child[CTL_CHILD_CONN_SECRET] =
	        child(c, CTL_INF_SECRETS, ns, rc->spec.connection_secret.name, rc);
}

/* The pods or PVCs labelled redis.io/cluster=<name> (the caches are indexed by it): the
 * cluster's own into *own (a new array), the names of the others into *foreign. */
static void list_of(struct ctl *c, enum ctl_inf inf, const struct api_redis_cluster *rc,
                    json_t **own, json_t **foreign)
{
	json_t *all = k8s_informer_list_indexed(c->inf[inf], rc->meta.namespace, rc->meta.name);

	ctl_owner_split(all, rc->meta.uid, own, foreign);
	json_decref(all);
}

static bool condition_true(json_t *pod, const char *type)
{
	const char *s = jsonx_get_string(
	        jsonx_find(jsonx_get(pod, "status.conditions"), "type", type), "status");

	return s && strcmp(s, "True") == 0;
}

static const char *annotation(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(jsonx_get(obj, "metadata.annotations"), key));
}

static int cmp_pod(const void *a, const void *b)
{
	const struct ctl_pod *x = a, *y = b;

	return x->serial != y->serial ? (x->serial > y->serial) - (x->serial < y->serial)
	                              : strcmp(x->name, y->name);
}

/* A sentinel pod (redis.io/role=sentinel) goes to v->sentinels, every other to v->pods. */
static struct ctl_pod *pod_slot(struct ctl_view *v, json_t *o)
{
	const char *role =
	        json_string_value(json_object_get(jsonx_get(o, "metadata.labels"), CTL_LABEL_ROLE));

	if (role && strcmp(role, CTL_ROLE_SENTINEL) == 0)
		return &v->sentinels[v->nsentinels++];
	return &v->pods[v->npods++];
}

static void fill_pods(struct ctl *c, struct gathered *g, struct ctl_view *v)
{
	size_t i;
	json_t *o;

	v->pods = xcalloc(json_array_size(g->pods_json) + 1, sizeof(*v->pods));
	v->sentinels = xcalloc(json_array_size(g->pods_json) + 1, sizeof(*v->sentinels));
	json_array_foreach (g->pods_json, i, o) {
		struct ctl_pod *p = pod_slot(v, o);

		p->obj = o;
		p->name = jsonx_get_string(o, "metadata.name");
		p->serial = ctl_serial_of(v->name, p->name);
		p->uid = jsonx_get_string(o, "metadata.uid");
		p->ip = jsonx_get_string(o, "status.podIP");
		if (p->ip && !*p->ip)
			p->ip = NULL;
		p->phase = jsonx_get_string(o, "status.phase");
		p->role_label = json_string_value(
		        json_object_get(jsonx_get(o, "metadata.labels"), CTL_LABEL_ROLE));
		p->spec_hash = annotation(o, CTL_ANN_SPEC_HASH);
		p->live_hash = annotation(o, CTL_ANN_LIVE_HASH);
		p->deleting = jsonx_get(o, "metadata.deletionTimestamp") != NULL;
		p->ready = condition_true(o, "Ready");
		ctl_poller_get(c, v->ns, p->name, &p->inst);
		if (p->uid && strcmp(p->inst.uid, p->uid) != 0)
			memset(&p->inst, 0, sizeof(p->inst)); /* a poll of an older incarnation */
	}
	qsort(v->pods, v->npods, sizeof(*v->pods), cmp_pod);
	qsort(v->sentinels, v->nsentinels, sizeof(*v->sentinels), cmp_pod);
}

static void fill_pvcs(struct gathered *g, struct ctl_view *v)
{
	const char *size;
	size_t i;
	json_t *o;

	v->pvcs = xcalloc(json_array_size(g->pvcs_json) + 1, sizeof(*v->pvcs));
	json_array_foreach (g->pvcs_json, i, o) {
		struct ctl_pvc *p = &v->pvcs[v->npvcs++];

		p->obj = o;
		p->name = jsonx_get_string(o, "metadata.name");
		p->serial = ctl_serial_of(v->name, p->name);
		p->deleting = jsonx_get(o, "metadata.deletionTimestamp") != NULL;
		size = jsonx_get_string(o, "spec.resources.requests.storage");
		if (!size || parse_quantity_bytes(size, &p->size, NULL) < 0)
			p->size = 0;
		size = jsonx_get_string(o, "status.capacity.storage");
		if (!size || parse_quantity_bytes(size, &p->capacity, NULL) < 0)
			p->capacity = 0;
	}
}

/* --- the primary Lease ---------------------------------------------------------------- */

/*
 * The primary Lease as the controller judges it: by the one rule of lib/k8s/lease.h
 * (k8s_lease_judge), the same the candidates' managers follow, from when this controller
 * first saw the record in its current form. It observes at the reconcile (now), which
 * comes after the watch event that carried the record: its expiry is never earlier than
 * a candidate's that received the same record.
 */
static void lease_state(struct ctl *c, const char *key, json_t *lease, struct ctl_lease *out,
                        int64_t now)
{
	static const enum ctl_lease_state states[] = {
		[K8S_LEASE_RECORD_FREE] = CTL_LEASE_RELEASED,
		[K8S_LEASE_RECORD_VALID] = CTL_LEASE_HELD,
		[K8S_LEASE_RECORD_EXPIRED] = CTL_LEASE_EXPIRED,
	};
	const char *holder = jsonx_get_string(lease, "spec.holderIdentity");
	json_t *tr = jsonx_get(lease, "spec.leaseTransitions");
	struct ctl_memo *m;
	int64_t expires;

	memset(out, 0, sizeof(*out));
	if (!lease)
		return;
	out->ever_acquired = jsonx_get(lease, "spec.acquireTime") || json_integer_value(tr) > 0;
	snprintf(out->holder, sizeof(out->holder), "%s", holder ? holder : "");
	pthread_mutex_lock(&c->mu);
	m = memo(c, key);
	(void)k8s_lease_seen_update(&m->lease_seen, lease, now);
	out->state = states[k8s_lease_judge(lease, m->lease_seen.since_ms, now, &expires)];
	pthread_mutex_unlock(&c->mu);
	out->expires_in_ms = expires - now;
}

/* --- the auth Secret -------------------------------------------------------------------- */

/* The password data.password encodes (lib/base64); NULL: empty, over PASSWORD_MAX or
 * not base64. */
static char *b64_decode(const char *s)
{
	size_t n = strlen(s), len;
	char *out;

	if (n == 0 || n > PASSWORD_MAX || base64_decode(s, n, 0, &out, &len) < 0)
		return NULL;
	return out;
}

static void auth_secret(struct ctl *c, struct gathered *g, struct ctl_view *v)
{
	json_t *sec = NULL;
	const char *b64;
	int rc;

	if (!g->rc.spec.auth_secret.name) {
		sec = json_incref(g->child[CTL_CHILD_AUTH_SECRET]);
	} else {
		rc = k8s_get(c->kube, &k8s_res_secrets, v->ns, g->rc.spec.auth_secret.name, &sec,
		             NULL);
		v->auth_secret_missing = rc == -ENOENT;
	}
	b64 = jsonx_get_string(sec, "data.password");
	if (b64)
		g->password = b64_decode(b64);
	snprintf(g->auth_rv, sizeof(g->auth_rv), "%s",
	         jsonx_get_string(sec, "metadata.resourceVersion")
	                 ? jsonx_get_string(sec, "metadata.resourceVersion")
	                 : "");
	v->password = g->password;
	v->auth_secret_rv = g->auth_rv[0] ? g->auth_rv : NULL;
	json_decref(sec);
}

/* spec.caSecret's ca.crt for the connection Secret (controller/desired.h). */
static void server_ca(struct ctl *c, struct gathered *g, struct ctl_view *v)
{
	json_t *sec = NULL;
	const char *b64;

	if (!desired_server_tls(&g->rc) || !g->rc.spec.connection_secret.name ||
	    k8s_get(c->kube, &k8s_res_secrets, v->ns, g->rc.spec.ca_secret.name, &sec, NULL) < 0)
		return;
	if ((b64 = jsonx_get_string(sec, "data[\"ca.crt\"]")))
		v->tls_ca_b64 = g->tls_ca = xstrdup(b64);
	json_decref(sec);
}

/* When this controller first saw the auth Secret's current resourceVersion. */
static void auth_seen(struct ctl *c, const char *key, struct ctl_view *v)
{
	struct ctl_memo *m;

	pthread_mutex_lock(&c->mu);
	m = memo(c, key);
	if (v->auth_secret_rv && strcmp(m->auth_rv, v->auth_secret_rv) != 0) {
		snprintf(m->auth_rv, sizeof(m->auth_rv), "%s", v->auth_secret_rv);
		m->auth_seen_mono = v->now_mono_ms;
	}
	v->auth_secret_seen_mono = m->auth_seen_mono;
	pthread_mutex_unlock(&c->mu);
}

/* --- spec.bootstrap --------------------------------------------------------------------- */

/* The RedisBackup to bootstrap from (the backups' cache), only while the cluster is not
 * bootstrapped (controller/bootstrap.h), and whether its credentials Secret exists (read
 * only while the first primary is still to be created). */
static void boot_source(struct ctl *c, struct gathered *g, struct ctl_view *v)
{
	const struct api_bootstrap *bs = &g->rc.spec.bootstrap;
	const char *cur = g->rc.status.current_primary;
	json_t *obj, *sec = NULL;

	if (!bs->set || !bs->backup_name || ctl_bootstrap_done(g->cluster))
		return;
	obj = k8s_informer_get(c->inf[CTL_INF_BACKUPS], v->ns, bs->backup_name);
	v->boot.lookup = CTL_BOOT_NOT_FOUND;
	if (!obj)
		return;
	if (api_redis_backup_decode(obj, &g->boot, &g->boot_err) < 0) {
		v->boot.lookup = CTL_BOOT_INVALID;
		v->boot.error = g->boot_err.msg;
		json_decref(obj);
		return;
	}
	json_decref(obj); /* the decoded copy keeps what it borrows (api/redisbackup.h) */
	g->boot_decoded = true;
	v->boot.lookup = CTL_BOOT_FOUND;
	v->boot.backup = &g->boot;
	v->boot.secret = ctl_backup_secret_name(g->cluster, &g->boot.spec.destination);
	if (!v->boot.secret || (cur && *cur && ctl_view_pod(v, cur)))
		return;
	v->boot.secret_missing =
	        k8s_get(c->kube, &k8s_res_secrets, v->ns, v->boot.secret, &sec, NULL) == -ENOENT;
	json_decref(sec);
}

/* --- one reconcile ----------------------------------------------------------------------- */

static void release(struct gathered *g, struct ctl_view *v)
{
	if (g->decoded)
		api_redis_cluster_release(&g->rc);
	json_decref(g->cluster);
	json_decref(g->pods_json);
	json_decref(g->pvcs_json);
	json_decref(g->foreign_pods);
	json_decref(g->foreign_pvcs);
	for (int i = 0; i < CTL_CHILD_COUNT; i++)
		json_decref(g->child[i]);
	free_secret(g->password);
	free(g->acl_config);
	free(g->tls_ca);
	if (g->boot_decoded)
		api_redis_backup_release(&g->boot);
	free(v->pods);
	free(v->sentinels);
	free(v->pvcs);
}

static void build_view(struct ctl *c, const char *key, struct gathered *g, struct ctl_view *v)
{
	int64_t now = clock_mono_ms();
	struct ctl_memo *m;

	v->rc = &g->rc;
	v->obj = g->cluster;
	v->ns = g->rc.meta.namespace;
	v->name = g->rc.meta.name;
	v->cfg = &c->cfg;
	v->now_mono_ms = now;
	v->now_wall_ms = clock_wall_ms();
	children(c, g, v->ns);
	memcpy(v->child, g->child, sizeof(v->child));
	list_of(c, CTL_INF_PODS, &g->rc, &g->pods_json, &g->foreign_pods);
	list_of(c, CTL_INF_PVCS, &g->rc, &g->pvcs_json, &g->foreign_pvcs);
	v->foreign_pods = g->foreign_pods;
	v->foreign_pvcs = g->foreign_pvcs;
	fill_pods(c, g, v);
	fill_pvcs(g, v);
	lease_state(c, key, g->child[CTL_CHILD_LEASE], &v->lease, now);
	ctl_failover_read(g->cluster, &v->fo);
	auth_secret(c, g, v);
	server_ca(c, g, v);
	auth_seen(c, key, v);
	boot_source(c, g, v);
	v->acl_config = g->acl_config = ctl_acl_config_check(c->kube, &g->rc, &v->acl_config_ok);
	pthread_mutex_lock(&c->mu);
	m = memo(c, key);
	v->refresh_volatile =
	        ctl_volatile_due(now - m->status_written_mono, c->set.status_refresh_ms,
	                         ctl_lag_print(v->pods, v->npods) != m->lag_print);
	v->roles_epoch_mono = m->roles_epoch_mono;
	pthread_mutex_unlock(&c->mu);
}

/* A lag that changed is worth a write within refresh_ms; offsets and lastSeen alone move
 * on every poll of a live cluster (a primary's offset with each replication ping), so a
 * write for them alone would be one per resync for ever: they wait longer. */
bool ctl_volatile_due(int64_t age_ms, int64_t refresh_ms, bool lag_changed)
{
	if (age_ms >= CTL_VOLATILE_AGE_FACTOR * refresh_ms)
		return true;
	return lag_changed && age_ms >= refresh_ms;
}

uint64_t ctl_lag_print(const struct ctl_pod *pods, size_t npods)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a over the lags */

	for (size_t i = 0; i < npods; i++) {
		h ^= (uint64_t)pods[i].inst.lag_bytes;
		h *= 1099511628211ull;
	}
	return h;
}

/* Look again when the primary Lease would expire while its holder does not answer. */
static void schedule_lease_check(struct ctl *c, const char *key, const struct ctl_view *v)
{
	const struct ctl_pod *pp = ctl_view_pod(v, v->rc->status.current_primary);
	int64_t left = v->lease.expires_in_ms;

	if (v->lease.state != CTL_LEASE_HELD || (pp && ctl_inst_ok(&pp->inst)))
		return;
	(void)wq_add_after(c->q, key, left > 0 ? left + 50 : 50);
}

static void log_plan(const struct ctl_view *v, const struct ctl_plan *p)
{
	char *text;
	json_t *d;

	if (!log_enabled(LOG_LEVEL_DEBUG, "plan"))
		return;
	/* The dump quotes the actions' bodies, the connection Secret's password among them:
	 * lib/log prints it with every secret redacted (lib/redact.h), and the text is wiped. */
	d = ctl_plan_dump(p);
	text = json_dumps(d, JSON_COMPACT);
	log_debug("plan", "planned", "ns", v->ns, "name", v->name, "plan", text, (char *)NULL);
	free_secret(text);
	json_decref(d);
}

static int run_plan(struct ctl *c, const char *key, struct ctl_view *v)
{
	struct ctl_plan p;
	int64_t not_yet_ms;
	int rc;

	ctl_plan_init(&p);
	ctl_owner_events(v, &p);
	ctl_plan_build(v, &p);
	log_plan(v, &p);
	rc = ctl_apply(c, v, &p, &not_yet_ms);
	if (not_yet_ms) /* an instance said "not yet": wait, this is no failure */
		p.requeue_ms = not_yet_ms;
	if (p.status) { /* written whole: the volatile fields are fresh, whatever caused it */
		pthread_mutex_lock(&c->mu);
		memo(c, key)->status_written_mono = v->now_mono_ms;
		memo(c, key)->lag_print = ctl_lag_print(v->pods, v->npods);
		pthread_mutex_unlock(&c->mu);
	}
	if (!rc && p.requeue_ms)
		(void)wq_add_after(c->q, key, p.requeue_ms);
	schedule_lease_check(c, key, v);
	ctl_plan_release(&p);
	return rc;
}

void ctl_memo_epoch(struct ctl *c, const char *key)
{
	pthread_mutex_lock(&c->mu);
	memo(c, key)->roles_epoch_mono = clock_mono_ms();
	pthread_mutex_unlock(&c->mu);
}

static void forget(struct ctl *c, const char *key)
{
	void *m = NULL;

	pthread_mutex_lock(&c->mu);
	if (strmap_remove(&c->memos, key, &m))
		free(m);
	ctl_cm_forget_locked(c, key);
	pthread_mutex_unlock(&c->mu);
}

int ctl_reconcile(struct ctl *c, const char *key)
{
	struct gathered g = { 0 };
	struct ctl_view v = { 0 };
	struct err e = { 0 };
	int rc = 0;

	if (strncmp(key, BK_QUEUE_BACKUP, strlen(BK_QUEUE_BACKUP)) == 0)
		return ctl_backup_reconcile(c, key);
	if (strncmp(key, BK_QUEUE_SCHEDULE, strlen(BK_QUEUE_SCHEDULE)) == 0)
		return ctl_schedule_reconcile(c, key);
	g.cluster = k8s_informer_get_key(c->inf[CTL_INF_CLUSTERS], key);
	if (!g.cluster) {
		forget(c, key);
		return 0;
	}
	if (jsonx_get(g.cluster, "metadata.deletionTimestamp"))
		goto out; /* the garbage collector removes the children */
	if (api_redis_cluster_decode(g.cluster, &g.rc, &e) < 0) {
		log_error("reconcile", "cannot decode the RedisCluster", "key", key, "error", e.msg,
		          (char *)NULL);
		goto out;
	}
	g.decoded = true;
	build_view(c, key, &g, &v);
	rc = run_plan(c, key, &v);
out:
	release(&g, &v);
	return rc;
}

/* --- workers --------------------------------------------------------------------------- */

static void work(struct ctl *c, const char *key)
{
	int64_t t0 = clock_mono_ms(), delay = 0;
	char ms[32];
	int rc = ctl_reconcile(c, key);

	atomic_fetch_add(&c->metrics.reconciles, 1);
	ctl_hist_observe(&c->metrics.reconcile_seconds, (double)(clock_mono_ms() - t0) / 1000.0);
	ctl_cm_reconciled(c, key, (double)(clock_mono_ms() - t0) / 1000.0, rc && rc != -ECANCELED);
	if (rc && rc != -ECANCELED) {
		atomic_fetch_add(&c->metrics.reconcile_errors, 1);
		(void)wq_add_rate_limited(c->q, key, &delay);
		snprintf(ms, sizeof(ms), "%lld", (long long)delay);
		log_warn("reconcile", "retrying", "key", key, "error", err_name(rc), "delayMs", ms,
		         (char *)NULL);
	} else {
		wq_forget(c->q, key);
		(void)wq_add_after(c->q, key, c->set.resync_ms);
	}
}

static void *worker_main(void *arg)
{
	struct ctl *c = arg;
	char *key;
	int rc;

	while ((rc = wq_get(c->q, WORKER_WAIT_MS, &key)) != -ECANCELED) {
		if (rc < 0)
			continue;
		if (atomic_load(&c->leading))
			work(c, key);
		wq_done(c->q, key);
		free(key);
	}
	return NULL;
}

int ctl_workers_start(struct ctl *c, struct err *e)
{
	while (c->nworkers < (size_t)c->tun.workers && c->nworkers < CTL_WORKERS_MAX) {
		int rc = pthread_create(&c->workers[c->nworkers], NULL, worker_main, c);

		if (rc)
			return err_set(e, -rc, "worker thread: %s", strerror(rc));
		c->nworkers++;
	}
	return 0;
}

void ctl_workers_stop(struct ctl *c)
{
	wq_shutdown(c->q);
	for (size_t i = 0; i < c->nworkers; i++)
		pthread_join(c->workers[i], NULL);
	c->nworkers = 0;
}

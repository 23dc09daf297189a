/*
 * test_controller_plan: the planner, table-driven. Each case describes a world (the
 * cluster's spec, status and annotations; its pods with what their instance managers
 * last answered; the primary Lease; the time) and the exact actions the planner must
 * choose, written as a signature ("create:Pod:c-1 | promote:c-2 | ..."). The clock is
 * the view's: no case sleeps.
 *
 * The failover cases cover DESIGN.md §4: never on one failed poll, fencing or waiting
 * out the Lease, the highest offset within the old primary's history, and resuming
 * from every persisted phase of status.failover.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "controller/desired.h"
#include "controller/failover.h"
#include "controller/actions.h"
#include "controller/failover_state.h"
#include "controller/plan.h"
#include "controller/pki.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

#define NOW_WALL 1795974083000LL /* 2026-11-29T17:41:23Z */
#define NOW_MONO 500000
#define T0       "2026-11-29T17:41:20Z" /* 3 s before now */
#define OLD      "2026-11-29T17:30:00Z" /* long ago */
#define MAXPODS  6

static const struct ctl_config cfg = {
	.operator_image = "redis-operator:dev",
	.operator_namespace = "redis-operator-system",
	.run_as_user = 999,
	.poll_failures_down = 2,
	.promote_timeout_ms = 30000,
	.restart_timeout_ms = 300000,
	.max_lag_bytes = 1 << 20,
	.rotation_grace_ms = 90000,
};

/* What one pod looks like. State NULL: no poll answer ever. */
struct pod_def {
	int serial;
	const char *state;       /* primary replica parked crashed booting */
	const char *role;        /* label; NULL: from state */
	const char *server_role; /* what the server reports; NULL: from state */
	bool not_ready;          /* the pod's Ready condition is False */
	bool fenced, crashed, no_lease;
	int failures;
	long long offset;
	const char *replid; /* NULL: "A" */
	const char *master; /* replicas: the IP they follow; NULL: the primary's */
	bool old_spec;      /* spec-hash annotation of another spec */
	bool old_live;      /* live-hash annotation of other live settings */
	bool deleting;
	bool stale; /* the poll answered before the last role change */
	long long lag;
	const char *fence_reason;
};

enum lease_def { L_HELD, L_RELEASED, L_EXPIRED, L_ABSENT, L_NEVER };

struct scenario {
	const char *name;
	const char *spec;        /* JSON object merged into the spec */
	const char *status;      /* JSON status; NULL: {} */
	const char *annotations; /* JSON; NULL: none */
	struct pod_def pods[MAXPODS];
	bool no_pvcs; /* PVCs only for listed pods otherwise */
	enum lease_def lease;
	const char *holder;    /* NULL: the status' currentPrimary */
	bool bare;             /* no children exist yet (a new cluster) */
	const char *auth_rv;   /* the auth Secret's resourceVersion; NULL: unknown */
	int64_t auth_seen_ago; /* ms since the controller first saw auth_rv */
	uint64_t pvc_bytes;    /* the PVCs' requested size; 0: unknown */
	uint64_t pvc_capacity; /* their status.capacity; 0: unknown */
	const char *foreign;   /* JSON array: status.foreignPods of the view; NULL: none */
	const char *want;      /* the exact signature */
	const char *phase;     /* NULL: not checked */
};

/* --- building the view ------------------------------------------------------------ */

struct world {
	struct api_redis_cluster rc;
	json_t *obj;
	struct ctl_pod pods[MAXPODS];
	struct ctl_pvc pvcs[MAXPODS];
	json_t *pod_objs[MAXPODS], *pvc_objs[MAXPODS];
	char names[MAXPODS][64], ips[MAXPODS][32];
	struct ctl_view v;
};

static json_t *parse(const char *text)
{
	json_t *j = NULL;

	ck_assert_msg(jsonx_loadb(text, strlen(text), 1 << 16, &j, NULL) == 0, "bad JSON: %s",
	              text);
	return j;
}

static json_t *cluster_obj(const struct scenario *s)
{
	json_t *obj = parse("{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\","
	                    "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u-1\","
	                    "\"generation\":3,\"creationTimestamp\":\"" OLD "\"},"
	                    "\"spec\":{\"instances\":3,\"failover\":{\"leaseDuration\":\"10s\"}}}");

	if (s->spec) {
		json_t *patch = parse(s->spec);

		json_object_update_recursive(json_object_get(obj, "spec"), patch);
		json_decref(patch);
	}
	json_object_set_new(obj, "status", parse(s->status ? s->status : "{}"));
	if (s->annotations)
		json_object_set_new(json_object_get(obj, "metadata"), "annotations",
		                    parse(s->annotations));
	return obj;
}

static const char *primary_name(const struct world *w)
{
	return w->rc.status.current_primary ? w->rc.status.current_primary : "";
}

static void fill_inst(struct world *w, const struct pod_def *d, struct ctl_inst *i,
                      const char *primary_ip)
{
	i->seen = d->state != NULL;
	i->failures = d->failures;
	i->last_ok_mono = d->stale ? NOW_MONO - 2000 : NOW_MONO - 100;
	if (!d->state)
		return;
	snprintf(i->state, sizeof(i->state), "%s", d->state);
	snprintf(i->role, sizeof(i->role), "%s",
	         d->server_role                     ? d->server_role
	         : strcmp(d->state, "primary") == 0 ? "primary"
	                                            : "replica");
	i->server_up = strcmp(d->state, "crashed") != 0 && strcmp(d->state, "booting") != 0;
	i->fenced = d->fenced || d->crashed;
	i->primary_crashed = d->crashed;
	i->lease_held = strcmp(d->state, "primary") == 0 && !d->no_lease && !i->fenced;
	i->ready = !d->not_ready;
	i->offset = d->offset;
	i->lag_bytes = strcmp(d->state, "replica") == 0 ? d->lag : -1;
	snprintf(i->repl_id, sizeof(i->repl_id), "%s", d->replid ? d->replid : "A");
	snprintf(i->link, sizeof(i->link), "%s",
	         strcmp(d->state, "replica") == 0  ? "up"
	         : strcmp(d->state, "parked") == 0 ? "down"
	                                           : "none");
	if (strcmp(d->state, "replica") == 0) {
		snprintf(i->master_host, sizeof(i->master_host), "%s",
		         d->master ? d->master : primary_ip);
		i->master_port = CTL_PORT_REDIS;
	}
	snprintf(i->fence_reason, sizeof(i->fence_reason), "%s",
	         d->fence_reason ? d->fence_reason : "");
	(void)w;
}

static void add_pod(struct world *w, const struct pod_def *d, size_t k, const char *primary_ip)
{
	struct ctl_pod *p = &w->pods[w->v.npods++];
	char spec[DESIRED_HASH_LEN + 1], live[DESIRED_HASH_LEN + 1];
	const char *role = d->role                                     ? d->role
	                   : strcmp(w->names[k], primary_name(w)) == 0 ? CTL_ROLE_PRIMARY
	                                                               : CTL_ROLE_REPLICA;

	desired_spec_hash(&w->rc, &cfg, spec);
	desired_live_hash(&w->rc, live);
	w->pod_objs[k] = desired_pod(&w->rc, &cfg, d->serial, role);
	p->obj = w->pod_objs[k];
	p->name = w->names[k];
	p->serial = d->serial;
	p->uid = "uid";
	p->ip = w->ips[k];
	p->phase = "Running";
	p->role_label = role;
	p->spec_hash =
	        d->old_spec
	                ? "0000000000000000"
	                : jsonx_get_string(p->obj, "metadata.annotations[\"redis.io/spec-hash\"]");
	p->live_hash =
	        d->old_live
	                ? "1111111111111111"
	                : jsonx_get_string(p->obj, "metadata.annotations[\"redis.io/live-hash\"]");
	(void)spec;
	(void)live;
	p->deleting = d->deleting;
	p->ready = d->state && !d->not_ready && !d->fenced && !d->crashed && d->failures == 0 &&
	           !d->deleting;
	fill_inst(w, d, &p->inst, primary_ip);
}

static void add_children(struct world *w)
{
	const struct api_redis_cluster *rc = &w->rc;

	w->v.child[CTL_CHILD_SA] = desired_service_account(rc);
	w->v.child[CTL_CHILD_ROLE] = desired_role(rc);
	w->v.child[CTL_CHILD_ROLEBINDING] = desired_role_binding(rc);
	w->v.child[CTL_CHILD_NETPOL] = desired_network_policy(rc, &cfg);
	w->v.child[CTL_CHILD_AUTH_SECRET] = desired_auth_secret(rc);
	w->v.child[CTL_CHILD_OPERATOR_SECRET] = desired_operator_secret(rc);
	w->v.child[CTL_CHILD_CONN_SECRET] = desired_connection_secret(rc, "pw");
	w->v.child[CTL_CHILD_SVC_LEADER] = desired_service(rc, DESIRED_SVC_LEADER);
	w->v.child[CTL_CHILD_SVC_REPLICA] = desired_service(rc, DESIRED_SVC_REPLICA);
	w->v.child[CTL_CHILD_SVC_ANY] = desired_service(rc, DESIRED_SVC_ANY);
	w->v.child[CTL_CHILD_PDB_PRIMARY] = desired_pdb(rc, DESIRED_PDB_PRIMARY);
	w->v.child[CTL_CHILD_PDB_REPLICA] = desired_pdb(rc, DESIRED_PDB_REPLICA);
	w->v.child[CTL_CHILD_LEASE] = desired_lease(rc);
	w->v.child[CTL_CHILD_OPERATOR_TLS] = desired_operator_tls_secret(rc);
	w->v.child[CTL_CHILD_INSTANCE_TLS] = desired_instance_tls_secret(rc);
	/* the leader EndpointSlice as the controller left it: on the primary */
	for (size_t k = 0; k < w->v.npods; k++) {
		const struct ctl_pod *pod = &w->pods[k];

		if (strcmp(pod->name, primary_name(w)) == 0)
			w->v.child[CTL_CHILD_LEADER_ENDPOINTS] = desired_leader_endpoints(
			        rc, pod->name, pod->uid, pod->ip, !pod->inst.fenced);
	}
	if (!w->v.child[CTL_CHILD_LEADER_ENDPOINTS])
		w->v.child[CTL_CHILD_LEADER_ENDPOINTS] =
		        desired_leader_endpoints(rc, NULL, NULL, NULL, false);
}

static void lease(struct world *w, const struct scenario *s)
{
	struct ctl_lease *l = &w->v.lease;
	const char *holder = s->holder ? s->holder : primary_name(w);

	l->ever_acquired = s->lease != L_NEVER;
	switch (s->lease) {
	case L_HELD: l->state = CTL_LEASE_HELD; break;
	case L_RELEASED:
		l->state = CTL_LEASE_RELEASED;
		holder = "";
		break;
	case L_EXPIRED: l->state = CTL_LEASE_EXPIRED; break;
	case L_ABSENT:
		l->state = CTL_LEASE_ABSENT;
		holder = "";
		break;
	case L_NEVER:
		l->state = CTL_LEASE_RELEASED;
		holder = "";
		break;
	}
	snprintf(l->holder, sizeof(l->holder), "%s", holder);
}

static void world_init(struct world *w, const struct scenario *s)
{
	struct err e = { 0 };
	char primary_ip[32] = "";

	memset(w, 0, sizeof(*w));
	w->obj = cluster_obj(s);
	ck_assert_msg(api_redis_cluster_decode(w->obj, &w->rc, &e) == 0, "%s", e.msg);
	for (size_t k = 0; k < MAXPODS && s->pods[k].serial; k++) {
		snprintf(w->names[k], sizeof(w->names[k]), "c-%d", s->pods[k].serial);
		snprintf(w->ips[k], sizeof(w->ips[k]), "10.0.0.%d", s->pods[k].serial);
		if (strcmp(w->names[k], primary_name(w)) == 0)
			snprintf(primary_ip, sizeof(primary_ip), "%s", w->ips[k]);
	}
	w->v.rc = &w->rc;
	w->v.obj = w->obj;
	w->v.ns = "ns";
	w->v.name = "c";
	w->v.pods = w->pods;
	w->v.pvcs = w->pvcs;
	w->v.cfg = &cfg;
	w->v.now_wall_ms = NOW_WALL;
	w->v.now_mono_ms = NOW_MONO;
	w->v.roles_epoch_mono = NOW_MONO - 1000;
	w->v.password = "pw";
	for (size_t k = 0; k < MAXPODS && s->pods[k].serial; k++) {
		add_pod(w, &s->pods[k], k, primary_ip);
		if (s->no_pvcs)
			continue;
		w->pvc_objs[k] = desired_pvc(&w->rc, s->pods[k].serial);
		w->pvcs[w->v.npvcs++] = (struct ctl_pvc){ .name = w->names[k],
			                                  .serial = s->pods[k].serial,
			                                  .obj = w->pvc_objs[k],
			                                  .size = s->pvc_bytes,
			                                  .capacity = s->pvc_capacity };
	}
	if (!s->bare)
		add_children(w);
	lease(w, s);
	ctl_failover_read(w->obj, &w->v.fo);
	w->v.auth_secret_rv = s->auth_rv;
	w->v.auth_secret_seen_mono = NOW_MONO - s->auth_seen_ago;
	w->v.foreign_pods = s->foreign ? json_loads(s->foreign, 0, NULL) : NULL;
}

static void world_release(struct world *w)
{
	for (size_t k = 0; k < MAXPODS; k++) {
		json_decref(w->pod_objs[k]);
		json_decref(w->pvc_objs[k]);
	}
	for (int i = 0; i < CTL_CHILD_COUNT; i++)
		json_decref(w->v.child[i]);
	api_redis_cluster_release(&w->rc);
	json_decref(w->obj);
	json_decref(w->v.foreign_pods);
}

/* --- signatures ----------------------------------------------------------------------- */

static void sig_status(struct buf *b, json_t *obj)
{
	const char *k, *sep = "";
	json_t *v;

	buf_append_str(b, "status:");
	json_object_foreach (obj, k, v) {
		if (strcmp(k, "failover") == 0)
			buf_printf(b, "%sfailover=%s", sep,
			           json_is_null(v) ? "null" : jsonx_get_string(v, "phase"));
		else
			buf_printf(b, "%s%s", sep, k);
		sep = ",";
	}
}

static void sig_one(struct buf *b, const struct ctl_action *a)
{
	json_t *labels = jsonx_get(a->obj, "metadata.labels");
	const char *role = json_string_value(json_object_get(labels, CTL_LABEL_ROLE));

	switch (a->kind) {
	case CTL_ACT_CREATE: buf_printf(b, "create:%s:%s", a->res->kind, a->name); break;
	case CTL_ACT_DELETE: buf_printf(b, "delete:%s:%s", a->res->kind, a->name); break;
	case CTL_ACT_PATCH:
		buf_printf(b, "patch:%s:%s", a->res->kind, a->name);
		if (role)
			buf_printf(b, ":role=%s", role);
		if (json_object_get(jsonx_get(a->obj, "metadata.annotations"), CTL_ANN_LIVE_HASH))
			buf_append_str(b, ":live");
		break;
	case CTL_ACT_STATUS: sig_status(b, a->obj); break;
	case CTL_ACT_CLUSTER: buf_append_str(b, "cluster"); break;
	case CTL_ACT_INSTANCE:
		buf_printf(b, "%s:%s%s", a->op, a->name, a->optional ? "?" : "");
		break;
	case CTL_ACT_EVENT: buf_printf(b, "event:%s", a->reason); break;
	}
}

static char *signature(const struct ctl_plan *p)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < p->n; i++) {
		if (i)
			buf_append_str(&b, " | ");
		sig_one(&b, &p->acts[i]);
	}
	return buf_detach(&b, NULL);
}

/* --- the cases ------------------------------------------------------------------------- */

#define P1                                                                                         \
	{                                                                                          \
		.serial = 1, .state = "primary", .offset = 1000                                    \
	}
#define R2                                                                                         \
	{                                                                                          \
		.serial = 2, .state = "replica", .offset = 1000                                    \
	}
#define R3                                                                                         \
	{                                                                                          \
		.serial = 3, .state = "replica", .offset = 1000                                    \
	}
#define ST_C1 "{\"currentPrimary\":\"c-1\",\"targetPrimary\":\"c-1\"}"
/* c-1's failover in phase Fencing, started at `when` (T0 or OLD) */
#define ST_FENCING_C1(when)                                                                        \
	"{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Fencing\",\"from\":\"c-1\","        \
	"\"reason\":\"r\",\"startedAt\":\"" when "\"}}"

static const struct scenario cases[] = {
	{ .name = "new cluster: children in order, currentPrimary before the first pod",
	  .bare = true,
	  .lease = L_ABSENT,
	  .want = "create:ServiceAccount:c | create:Role:c | create:RoleBinding:c | "
	          "create:Secret:c-auth | create:Secret:c-operator | "
	          "create:Secret:c-operator-tls | create:Secret:c-instance-tls | "
	          "create:Lease:c-primary | "
	          "create:Service:c-leader | create:Service:c-replica | create:Service:c-any | "
	          "status:currentPrimary,targetPrimary | event:PrimarySelected | "
	          "create:PersistentVolumeClaim:c-1 | create:Pod:c-1",
	  .phase = "Creating the primary" },
	{ .name = "at rest: nothing to do",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "",
	  .phase = NULL },
	{ .name = "primary ready: replicas created together",
	  .status = ST_C1,
	  .pods = { P1 },
	  .lease = L_HELD,
	  .want = "create:PersistentVolumeClaim:c-2 | create:Pod:c-2 | "
	          "create:PersistentVolumeClaim:c-3 | create:Pod:c-3" },
	{ .name = "primary not ready: no replica yet",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "booting", .not_ready = true } },
	  .lease = L_NEVER,
	  .want = "",
	  .phase = "Waiting for the primary" },
	{ .name = "emptyDir: no PVCs",
	  .spec = "{\"storage\":{\"type\":\"emptyDir\"}}",
	  .status = ST_C1,
	  .pods = { P1 },
	  .no_pvcs = true,
	  .lease = L_HELD,
	  .want = "create:Pod:c-2 | create:Pod:c-3" },
	{ .name = "failover: crashed primary, highest offset wins, labels move",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "parked", .crashed = true, .offset = 900 },
	            { .serial = 2, .state = "replica", .offset = 950, .master = "10.0.0.1" },
	            { .serial = 3, .state = "replica", .offset = 990, .master = "10.0.0.1" } },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:FailoverStarted | "
	          "status:failover=Promoting | event:FailoverPromoting | promote:c-3 | "
	          "patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-3:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted | "
	          "replicate:c-2? | event:ReplicaRepointed",
	  .phase = "Failing over" },
	{ .name = "pod deleted, lease released on the way out: Promoting is the first record",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .offset = 990, .deleting = true },
	            { .serial = 2, .state = "replica", .offset = 990, .master = "10.0.0.1" },
	            { .serial = 3, .state = "replica", .offset = 990, .master = "10.0.0.1" } },
	  .lease = L_RELEASED,
	  .want = "event:FailoverStarted | status:failover=Promoting | event:FailoverPromoting | "
	          "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | event:FailoverCompleted | "
	          "replicate:c-3? | event:ReplicaRepointed",
	  .phase = "Failing over" },
	{ .name = "pod deleted, lease released, spec.failover.delay: Fencing first",
	  .spec = "{\"failover\":{\"delay\":\"5s\"}}",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .offset = 990, .deleting = true },
	            { .serial = 2, .state = "replica", .offset = 990, .master = "10.0.0.1" },
	            { .serial = 3, .state = "replica", .offset = 990, .master = "10.0.0.1" } },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:FailoverStarted" },
	{ .name = "one failed poll is never a failover",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .failures = 1 }, R2, R3 },
	  .lease = L_RELEASED,
	  .want = "" },
	{ .name = "unreachable primary, lease still held: wait",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .failures = 5 }, R2, R3 },
	  .lease = L_HELD,
	  .want = "" },
	{ .name = "unreachable primary, lease expired: promote without fencing",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .failures = 5 },
	            { .serial = 2, .state = "replica", .offset = 700, .master = "10.0.0.1" },
	            { .serial = 3, .state = "replica", .offset = 600, .master = "10.0.0.1" } },
	  .lease = L_EXPIRED,
	  .want = "status:failover=Fencing | event:FailoverStarted | "
	          "status:failover=Promoting | event:FailoverPromoting | promote:c-2 | "
	          "patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted | "
	          "replicate:c-3? | event:ReplicaRepointed" },
	{ .name = "same history first: a higher offset in another history loses",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "parked", .crashed = true, .replid = "A" },
	            { .serial = 2, .state = "replica", .offset = 100, .replid = "A" },
	            { .serial = 3, .state = "replica", .offset = 500, .replid = "B" } },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:FailoverStarted | "
	          "status:failover=Promoting | event:FailoverPromoting | promote:c-2 | "
	          "patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted | "
	          "replicate:c-3? | event:ReplicaRepointed" },
	{ .name = "resume Fencing: a reachable old primary whose lease is not free is fenced first",
	  .status = ST_FENCING_C1(T0),
	  .pods = { { .serial = 1, .state = "primary", .offset = 10, .no_lease = true },
	            { .serial = 2, .state = "replica", .offset = 10 } },
	  .lease = L_HELD,
	  .want = "fence:c-1 | status:failover=Promoting | event:FailoverPromoting | "
	          "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "fenced old primary ahead of every replica: wait for the elected one to catch up",
	  .status = ST_FENCING_C1(T0),
	  .pods = { { .serial = 1, .state = "primary", .fenced = true, .offset = 2000 },
	            { .serial = 2, .state = "replica", .offset = 1500 },
	            { .serial = 3, .state = "replica", .offset = 1400 } },
	  .lease = L_RELEASED,
	  .want = "",
	  .phase = "Failing over" },
	{ .name = "fenced old primary caught up with: promoted, the case in status",
	  .status = ST_FENCING_C1(T0),
	  .pods = { { .serial = 1, .state = "primary", .fenced = true, .offset = 2000 },
	            { .serial = 2, .state = "replica", .offset = 2000 } },
	  .lease = L_RELEASED,
	  .want = "status:failover=Promoting | event:FailoverPromoting | "
	          "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "fenced old primary still ahead after the bound: promoted anyway",
	  .status = ST_FENCING_C1(OLD),
	  .pods = { { .serial = 1, .state = "primary", .fenced = true, .offset = 2000 },
	            { .serial = 2, .state = "replica", .offset = 1500 } },
	  .lease = L_RELEASED,
	  .want = "status:failover=Promoting | event:FailoverPromoting | "
	          "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "resume Fencing: unreachable old primary, lease not free: wait it out",
	  .status = ST_FENCING_C1(T0),
	  .pods = { { .serial = 1, .state = "primary", .failures = 3 }, R2 },
	  .lease = L_HELD,
	  .want = "",
	  .phase = "Failing over" },
	{ .name = "resume Fencing: fence optional once the lease is free",
	  .status = ST_FENCING_C1(T0),
	  .pods = { { .serial = 1, .state = "booting" }, R2 },
	  .lease = L_RELEASED,
	  .want = "fence:c-1? | status:failover=Promoting | event:FailoverPromoting | "
	          "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "resume Promoting: target already primary with the lease: only finish",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Promoting\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { { .serial = 1, .state = "parked", .crashed = true },
	            { .serial = 2, .state = "primary", .role = CTL_ROLE_REPLICA } },
	  .lease = L_HELD,
	  .holder = "c-2",
	  .want = "patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "resume Promoting: target still a replica: promote again",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Promoting\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { { .serial = 1, .state = "parked", .crashed = true }, R2 },
	  .lease = L_RELEASED,
	  .want = "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "resume Promoting: old primary back, holding the lease: cancelled",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Promoting\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "status:failover=null | event:FailoverCancelled" },
	{ .name = "resume Promoting: old primary up but its lease gone: promote",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Promoting\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { { .serial = 1, .state = "parked", .offset = 1000, .no_lease = true }, R2 },
	  .lease = L_EXPIRED,
	  .want = "promote:c-2 | patch:EndpointSlice:c-leader | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:FailoverCompleted" },
	{ .name = "resume Promoting: target gone: elect again",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Promoting\",\"from\":"
	            "\"c-1\",\"to\":\"c-9\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { { .serial = 1, .state = "parked", .crashed = true }, R2 },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:FailoverRetarget" },
	{ .name = "resume Switchover: target is primary: finish and drop the annotation",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Switchover\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"requested\",\"startedAt\":\"" T0 "\"}}",
	  .annotations = "{\"redis.io/switchover-to\":\"c-2\"}",
	  .pods = { { .serial = 1, .state = "replica", .master = "10.0.0.2" },
	            { .serial = 2, .state = "primary" } },
	  .lease = L_HELD,
	  .holder = "c-2",
	  .want = "status:currentPrimary,targetPrimary,failover=null | "
	          "patch:EndpointSlice:c-leader | patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | cluster | "
	          "event:SwitchoverCompleted" },
	{ .name = "resume Switchover: old primary still primary: ask it again",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Switchover\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"requested\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { P1, R2 },
	  .lease = L_HELD,
	  .want = "switchover:c-1 | status:currentPrimary,targetPrimary,failover=null | "
	          "patch:EndpointSlice:c-leader | patch:Pod:c-2:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:SwitchoverCompleted" },
	{ .name = "resume Switchover: failed half-way (old fenced, target replica): fail over",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"Switchover\",\"from\":"
	            "\"c-1\",\"to\":\"c-2\",\"reason\":\"requested\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { { .serial = 1, .state = "primary", .fenced = true }, R2 },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:SwitchoverFailed" },
	{ .name = "resume PrimaryRestart: back as primary: done",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"PrimaryRestart\","
	            "\"from\":\"c-1\",\"to\":\"c-1\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .spec = "{\"instances\":1}",
	  .pods = { P1 },
	  .lease = L_HELD,
	  .want = "status:failover=null | event:PrimaryRestarted" },
	{ .name = "resume PrimaryRestart: pod gone: recreate it, no failover",
	  .status = "{\"currentPrimary\":\"c-1\",\"failover\":{\"phase\":\"PrimaryRestart\","
	            "\"from\":\"c-1\",\"to\":\"c-1\",\"reason\":\"r\",\"startedAt\":\"" T0 "\"}}",
	  .pods = { R2, R3 },
	  .lease = L_RELEASED,
	  .want = "create:PersistentVolumeClaim:c-1 | create:Pod:c-1" },
	{ .name = "failover delay: detected, not yet acted on",
	  .spec = "{\"failover\":{\"delay\":\"5s\"}}",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "parked", .crashed = true }, R2 },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:FailoverStarted" },
	{ .name = "no lease ever acquired: a new primary booting is not a failure",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "booting", .not_ready = true } },
	  .lease = L_NEVER,
	  .want = "" },
	{ .name = "one instance crashed: promoted again in place",
	  .spec = "{\"instances\":1}",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "parked", .crashed = true } },
	  .lease = L_RELEASED,
	  .want = "status:failover=Fencing | event:FailoverStarted | "
	          "status:failover=Promoting | event:FailoverPromoting | promote:c-1 | "
	          "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "event:FailoverCompleted" },
	{ .name = "woken from hibernation: no failover, the primary is recreated",
	  .status = ST_C1,
	  .lease = L_RELEASED,
	  .want = "create:PersistentVolumeClaim:c-1 | create:Pod:c-1",
	  .phase = "Creating the primary" },
	{ .name = "primary pod gone but its lease still held: wait before recreating it",
	  .status = ST_C1,
	  .spec = "{\"instances\":1}",
	  .lease = L_HELD,
	  .want = "" },
	{ .name = "split brain: a replica claiming primary is fenced",
	  .status = ST_C1,
	  .pods = { P1, { .serial = 2, .state = "primary" }, R3 },
	  .lease = L_HELD,
	  .want = "fence:c-2 | event:SplitBrainFenced | replicate:c-2? | event:ReplicaRepointed" },
	{ .name = "failed demotion: manager says replica, server says master: fenced, repointed",
	  .status = "{\"currentPrimary\":\"c-2\",\"targetPrimary\":\"c-2\"}",
	  .pods = { { .serial = 1, .state = "replica", .server_role = "primary" },
	            { .serial = 2, .state = "primary", .offset = 1000 },
	            R3 },
	  .lease = L_HELD,
	  .want = "fence:c-1 | event:SplitBrainFenced | replicate:c-1? | event:ReplicaRepointed" },
	{ .name = "failed demotion, fenced by its manager: repointed, not fenced again",
	  .status = "{\"currentPrimary\":\"c-2\",\"targetPrimary\":\"c-2\"}",
	  .pods = { { .serial = 1, .state = "parked", .server_role = "primary", .fenced = true },
	            { .serial = 2, .state = "primary", .offset = 1000 },
	            R3 },
	  .lease = L_HELD,
	  .want = "replicate:c-1? | event:ReplicaRepointed" },
	{ .name = "a foreign pod holds the next serial: the new replica goes above it",
	  .status = ST_C1,
	  .spec = "{\"instances\":2}",
	  .pods = { P1 },
	  .foreign = "[\"c-2\"]",
	  .lease = L_HELD,
	  .want = "create:PersistentVolumeClaim:c-3 | create:Pod:c-3" },
	{ .name = "split brain judged on stale polls: nothing",
	  .status = ST_C1,
	  .pods = { P1, { .serial = 2, .state = "primary", .stale = true }, R3 },
	  .lease = L_HELD,
	  .want = "" },
	{ .name = "replica following someone else is repointed; a fenced follower unfenced",
	  .status = ST_C1,
	  .pods = { P1,
	            { .serial = 2, .state = "replica", .master = "10.0.0.9" },
	            { .serial = 3, .state = "replica", .fenced = true, .fence_reason = "x" } },
	  .lease = L_HELD,
	  .want = "replicate:c-2? | event:ReplicaRepointed | unfence:c-3?" },
	{ .name = "parked replica is repointed",
	  .status = ST_C1,
	  .pods = { P1, R2, { .serial = 3, .state = "parked" } },
	  .lease = L_HELD,
	  .want = "replicate:c-3? | event:ReplicaRepointed" },
	{ .name = "user fencing and unfencing",
	  .status = ST_C1,
	  .annotations = "{\"redis.io/fencedInstances\":\"[\\\"c-2\\\"]\"}",
	  .pods = { P1,
	            R2,
	            { .serial = 3,
	              .state = "replica",
	              .fenced = true,
	              .fence_reason = CTL_USER_FENCE_REASON } },
	  .lease = L_HELD,
	  .want = "fence:c-2? | event:Fenced | unfence:c-3? | event:Unfenced" },
	{ .name = "live settings pushed to rolled-out ready pods only",
	  .status = ST_C1,
	  .pods = { P1,
	            { .serial = 2, .state = "replica", .old_live = true },
	            { .serial = 3, .state = "replica", .old_live = true, .not_ready = true } },
	  .lease = L_HELD,
	  .want = "config:c-2 | patch:Pod:c-2:live | event:ConfigApplied" },
	{ .name = "rolling update: the most lagging outdated replica first",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .old_spec = true },
	            { .serial = 2, .state = "replica", .old_spec = true, .lag = 10 },
	            { .serial = 3, .state = "replica", .old_spec = true, .lag = 20 } },
	  .lease = L_HELD,
	  .want = "delete:Pod:c-3 | event:RollingUpdate",
	  .phase = "Upgrading" },
	{ .name = "rolling update: waits while an instance is not ready",
	  .status = ST_C1,
	  .pods = { P1,
	            { .serial = 2, .state = "replica", .old_spec = true },
	            { .serial = 3, .state = "replica", .not_ready = true } },
	  .lease = L_HELD,
	  .want = "",
	  .phase = "Upgrading" },
	{ .name = "rolling update: the primary last, by switchover to the best replica",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .old_spec = true },
	            { .serial = 2, .state = "replica", .offset = 990 },
	            { .serial = 3, .state = "replica", .offset = 995 } },
	  .lease = L_HELD,
	  .want = "status:failover=Switchover | event:SwitchoverStarted | switchover:c-1 | "
	          "status:currentPrimary,targetPrimary,failover=null | "
	          "patch:EndpointSlice:c-leader | patch:Pod:c-3:role=primary | "
	          "patch:Pod:c-1:role=replica | "
	          "event:SwitchoverCompleted",
	  .phase = "Switching over" },
	{ .name = "rolling update: supervised waits for approval",
	  .spec = "{\"primaryUpdateStrategy\":\"supervised\"}",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .old_spec = true }, R2, R3 },
	  .lease = L_HELD,
	  .want = "",
	  .phase = "Waiting for the user to approve the primary's update" },
	{ .name = "rolling update: method restart deletes the primary in place",
	  .spec = "{\"primaryUpdateMethod\":\"restart\"}",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .old_spec = true }, R2, R3 },
	  .lease = L_HELD,
	  .want = "status:failover=PrimaryRestart | delete:Pod:c-1 | event:RollingUpdate" },
	{ .name = "rolling update: lone emptyDir primary is not restarted without approval",
	  .spec = "{\"instances\":1,\"storage\":{\"type\":\"emptyDir\"}}",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .old_spec = true } },
	  .no_pvcs = true,
	  .lease = L_HELD,
	  .want = "event:PrimaryRestartSkipped",
	  .phase = "Primary update skipped" },
	{ .name = "scale down: highest serials first, PVCs too, never the primary",
	  .spec = "{\"instances\":2}",
	  .status = "{\"currentPrimary\":\"c-5\"}",
	  .pods = { R2,
	            { .serial = 3, .state = "replica" },
	            { .serial = 4, .state = "replica" },
	            { .serial = 5, .state = "primary" } },
	  .lease = L_HELD,
	  .want = "delete:Pod:c-4 | event:ScaleDown | delete:PersistentVolumeClaim:c-4 | "
	          "delete:Pod:c-3 | event:ScaleDown | delete:PersistentVolumeClaim:c-3" },
	{ .name = "scale down, pvcRetention Retain: pods go, their PVCs stay",
	  .spec = "{\"instances\":2,\"storage\":{\"pvcRetention\":\"Retain\"}}",
	  .status = "{\"currentPrimary\":\"c-5\"}",
	  .pods = { R2,
	            { .serial = 3, .state = "replica" },
	            { .serial = 4, .state = "replica" },
	            { .serial = 5, .state = "primary" } },
	  .lease = L_HELD,
	  .want = "delete:Pod:c-4 | event:ScaleDown | delete:Pod:c-3 | event:ScaleDown" },
	{ .name = "scale up: new serials after the highest ever seen",
	  .spec = "{\"instances\":4}",
	  .status = ST_C1,
	  .pods = { P1, { .serial = 5, .state = "replica" } },
	  .lease = L_HELD,
	  .want = "create:PersistentVolumeClaim:c-6 | create:Pod:c-6 | "
	          "create:PersistentVolumeClaim:c-7 | create:Pod:c-7" },
	{ .name = "hibernation: pods deleted, PVCs kept, nothing else",
	  .annotations = "{\"redis.io/hibernation\":\"on\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "delete:Pod:c-1 | delete:Pod:c-2 | delete:Pod:c-3 | event:Hibernating",
	  .phase = "Hibernated" },
	{ .name = "switchover on request",
	  .annotations = "{\"redis.io/switchover-to\":\"c-3\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "status:failover=Switchover | event:SwitchoverStarted | switchover:c-1 | "
	          "status:currentPrimary,targetPrimary,failover=null | "
	          "patch:EndpointSlice:c-leader | patch:Pod:c-3:role=primary | "
	          "patch:Pod:c-1:role=replica | cluster | "
	          "event:SwitchoverCompleted" },
	{ .name = "reload request: every instance re-reads and re-applies, lastReload echoed",
	  .annotations = "{\"redis.io/reload\":\"2026-12-07T19:30:00Z\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "config:c-1 | config:c-2 | config:c-3 | status:lastReload | event:Reloaded" },
	{ .name = "reload request already done: nothing",
	  .annotations = "{\"redis.io/reload\":\"2026-12-07T19:30:00Z\"}",
	  .status = "{\"currentPrimary\":\"c-1\",\"targetPrimary\":\"c-1\","
	            "\"lastReload\":\"2026-12-07T19:30:00Z\"}",
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "" },
	{ .name = "reload request, an instance not ready: wait",
	  .annotations = "{\"redis.io/reload\":\"2026-12-07T19:31:00Z\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, { .serial = 3, .state = "booting", .not_ready = true } },
	  .lease = L_HELD,
	  .want = "" },
	{ .name = "reload request, live configuration still rolling out: wait",
	  .annotations = "{\"redis.io/reload\":\"2026-12-07T19:32:00Z\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, { .serial = 3, .state = "replica", .offset = 1000, .old_live = true } },
	  .lease = L_HELD,
	  .want = "config:c-3 | patch:Pod:c-3:live | event:ConfigApplied" },
	{ .name = "restart request, a replica: deleted on its own volume, annotation dropped",
	  .annotations = "{\"redis.io/restart-instance\":\"c-2\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "delete:Pod:c-2 | cluster | event:InstanceRestart" },
	{ .name = "restart request, the primary: a switchover to the best replica first",
	  .annotations = "{\"redis.io/restart-instance\":\"c-1\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, { .serial = 3, .state = "replica", .offset = 1200 } },
	  .lease = L_HELD,
	  .want = "event:InstanceRestartSwitchover | status:failover=Switchover | "
	          "event:SwitchoverStarted | switchover:c-1 | "
	          "status:currentPrimary,targetPrimary,failover=null | "
	          "patch:EndpointSlice:c-leader | patch:Pod:c-3:role=primary | "
	          "patch:Pod:c-1:role=replica | event:SwitchoverCompleted" },
	{ .name = "restart request, the old primary now a replica: deleted",
	  .annotations = "{\"redis.io/restart-instance\":\"c-1\"}",
	  .status = "{\"currentPrimary\":\"c-3\",\"targetPrimary\":\"c-3\"}",
	  .pods = { { .serial = 1, .state = "replica", .master = "10.0.0.3" },
	            { .serial = 2, .state = "replica", .master = "10.0.0.3" },
	            { .serial = 3, .state = "primary" } },
	  .lease = L_HELD,
	  .holder = "c-3",
	  .want = "delete:Pod:c-1 | cluster | event:InstanceRestart" },
	{ .name = "restart request, an instance not ready: wait (never two at once)",
	  .annotations = "{\"redis.io/restart-instance\":\"c-3\"}",
	  .status = ST_C1,
	  .pods = { P1, { .serial = 2, .state = "booting", .not_ready = true }, R3 },
	  .lease = L_HELD,
	  .want = "" },
	{ .name = "restart request, a pod not of the cluster: refused",
	  .annotations = "{\"redis.io/restart-instance\":\"other-1\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "cluster | event:RestartRefused" },
	{ .name = "restart request, the only instance: refused",
	  .spec = "{\"instances\":1}",
	  .annotations = "{\"redis.io/restart-instance\":\"c-1\"}",
	  .status = ST_C1,
	  .pods = { P1 },
	  .lease = L_HELD,
	  .want = "cluster | event:RestartRefused" },
	{ .name = "switchover to the primary itself: annotation dropped",
	  .annotations = "{\"redis.io/switchover-to\":\"c-1\"}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "cluster | event:SwitchoverNotNeeded" },
	{ .name = "role label repaired",
	  .status = ST_C1,
	  .pods = { { .serial = 1, .state = "primary", .role = CTL_ROLE_REPLICA },
	            { .serial = 2, .state = "replica", .role = CTL_ROLE_PRIMARY } },
	  .lease = L_HELD,
	  .want = "create:PersistentVolumeClaim:c-3 | create:Pod:c-3 | "
	          "patch:Pod:c-1:role=primary | patch:Pod:c-2:role=replica" },
	{ .name = "missing auth Secret: wait",
	  .spec = "{\"authSecret\":{\"name\":\"mine\"}}",
	  .status = ST_C1,
	  .pods = { P1 },
	  .lease = L_HELD,
	  .want = "event:AuthSecretMissing",
	  .phase = "Waiting for the auth Secret" },
	{ .name = "changed service and PDB are patched, stale NetworkPolicy deleted",
	  .spec = "{\"enablePodDisruptionBudget\":false}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .want = "" /* overwritten below: see the world hook */ },
	{ .name = "auth Secret: its resourceVersion recorded the first time",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .auth_rv = "41",
	  .want = "status:secretsResourceVersion" },
	{ .name = "auth Secret changed: old passwords kept during the grace",
	  .status = "{\"currentPrimary\":\"c-1\",\"secretsResourceVersion\":{\"c-auth\":\"41\"}}",
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .auth_rv = "42",
	  .auth_seen_ago = 5000,
	  .want = "" },
	{ .name = "auth Secret changed: after the grace, old passwords dropped everywhere",
	  .status = "{\"currentPrimary\":\"c-1\",\"secretsResourceVersion\":{\"c-auth\":\"41\"}}",
	  .pods = { P1, R2, R3 },
	  .lease = L_HELD,
	  .auth_rv = "42",
	  .auth_seen_ago = 95000,
	  .want = "config:c-1 | config:c-2 | config:c-3 | event:PasswordRotated | "
	          "status:secretsResourceVersion" },
	{ .name = "auth Secret changed: a pod not ready holds the drop back",
	  .status = "{\"currentPrimary\":\"c-1\",\"secretsResourceVersion\":{\"c-auth\":\"41\"}}",
	  .pods = { P1, R2, { .serial = 3, .state = "replica", .not_ready = true } },
	  .lease = L_HELD,
	  .auth_rv = "42",
	  .auth_seen_ago = 95000,
	  .want = "" },
	{ .name = "storage grows in place",
	  .spec = "{\"storage\":{\"size\":\"2Gi\"}}",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .pvc_bytes = 1073741824,
	  .lease = L_HELD,
	  .want = "patch:PersistentVolumeClaim:c-1 | event:StorageResized | "
	          "patch:PersistentVolumeClaim:c-2 | event:StorageResized | "
	          "patch:PersistentVolumeClaim:c-3 | event:StorageResized",
	  .phase = "Resizing storage" },
	{ .name = "storage asked for, capacity not there yet: the status says so, no new patch",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .pvc_bytes = 1073741824,
	  .pvc_capacity = 536870912,
	  .lease = L_HELD,
	  .want = "",
	  .phase = "Resizing storage" },
	{ .name = "storage grown: at rest",
	  .status = ST_C1,
	  .pods = { P1, R2, R3 },
	  .pvc_bytes = 1073741824,
	  .pvc_capacity = 1073741824,
	  .lease = L_HELD,
	  .want = "",
	  .phase = NULL },
	{ .name = "cluster mode is refused (sentinel mode: test_controller_sentinel)",
	  .spec = "{\"mode\":\"cluster\"}",
	  .status = ST_C1,
	  .lease = L_HELD,
	  .want = "event:UnsupportedFields", /* controller/unsupported.h */
	  .phase = "Unsupported" },
};

/* Per-case tweaks of the world that the table cannot say. */
static void hook(size_t i, struct world *w)
{
	if (strncmp(cases[i].name, "changed service", 15) == 0) {
		json_object_set_new(json_object_get(w->v.child[CTL_CHILD_SVC_LEADER], "spec"),
		                    "selector", json_pack("{s:s}", "x", "y"));
		w->v.child[CTL_CHILD_PDB_PRIMARY] =
		        json_pack("{s:{s:s}}", "metadata", "name", "c-primary");
		w->v.child[CTL_CHILD_NETPOL] = json_pack("{s:{s:s}}", "metadata", "name", "c");
	}
	if (strncmp(cases[i].name, "missing auth", 12) == 0)
		w->v.auth_secret_missing = true;
}

static const char *const hook_want[] = {
	"changed service",
	"delete:NetworkPolicy:c | patch:Service:c-leader | delete:PodDisruptionBudget:c-primary",
};

/* The next phase is one the table allows (failover.h): from none, the entries (Promoting:
 * a primary that released its Lease on its way out, failover.c:released_on_way_out). */
static bool phase_allowed(const char *from, const char *to)
{
	static const char *const entries[] = { CTL_FO_FENCING, CTL_FO_PROMOTING, CTL_FO_SWITCHOVER,
		                               CTL_FO_RESTART };
	const struct failover_phase *t;
	size_t n;

	if (!from) {
		for (size_t i = 0; i < ARRAY_LEN(entries); i++)
			if (strcmp(to, entries[i]) == 0)
				return true;
		return false;
	}
	t = failover_phases(&n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; strcmp(t[i].name, from) == 0 && t[i].next[k]; k++)
			if (strcmp(t[i].next[k], to) == 0)
				return true;
	return false;
}

/* Every status.failover the plan writes follows the table, from the persisted phase. */
static void check_transitions(const struct ctl_view *v, const struct ctl_plan *p, const char *name)
{
	const char *cur = v->fo.active ? v->fo.phase : NULL;

	for (size_t i = 0; i < p->n; i++) {
		json_t *fo = json_object_get(p->acts[i].obj, "failover");
		const char *to;

		if (p->acts[i].kind != CTL_ACT_STATUS || !fo)
			continue;
		to = json_is_null(fo) ? "" : json_string_value(json_object_get(fo, "phase"));
		ck_assert_msg(to && phase_allowed(cur, to), "%s: status.failover %s -> %s", name,
		              cur ? cur : "(none)", to ? to : "(no phase)");
		cur = *to ? to : NULL;
	}
}

START_TEST(plan_cases)
{
	const struct scenario *s = &cases[_i];
	struct world w;
	struct ctl_plan p;
	const char *want = s->want;
	char *got;

	world_init(&w, s);
	hook(_i, &w);
	if (strncmp(s->name, hook_want[0], strlen(hook_want[0])) == 0)
		want = hook_want[1];
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	got = signature(&p);
	ck_assert_msg(strcmp(got, want) == 0, "%s:\n  want %s\n  got  %s", s->name, want, got);
	check_transitions(&w.v, &p, s->name);
	if (s->phase)
		ck_assert_msg(p.phase && strcmp(p.phase, s->phase) == 0, "%s: phase %s", s->name,
		              p.phase ? p.phase : "(none)");
	free(got);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* A plan's status, once written, is not written again (and the cluster at rest plans
 * nothing): the reconcile loop converges. Offsets alone do not cause a write. */
/* The reload's /v1/config bodies carry "reload": true and the spec's live config. */
START_TEST(reload_bodies)
{
	struct world w;
	struct ctl_plan p;
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		if (strncmp(cases[i].name, "reload request: every", 21) == 0)
			world_init(&w, &cases[i]);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	for (size_t i = 0; i < p.n; i++) {
		if (p.acts[i].kind != CTL_ACT_INSTANCE)
			continue;
		ck_assert_str_eq(p.acts[i].op, "config");
		ck_assert(json_is_true(json_object_get(p.acts[i].obj, API_INST_RELOAD)));
		ck_assert_ptr_nonnull(json_object_get(p.acts[i].obj, "users"));
		n++;
	}
	ck_assert_uint_eq(n, 3);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

START_TEST(status_converges)
{
	const struct scenario *s = &cases[1];
	struct world w;
	struct ctl_plan p;

	world_init(&w, s);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_str_eq(jsonx_get_string(p.status, "phase"), "Healthy");
	ck_assert_int_eq(json_integer_value(json_object_get(p.status, "readyInstances")), 3);
	ck_assert_str_eq(jsonx_get_string(p.status, "conditions[0].status"), "True");
	ck_assert_ptr_nonnull(json_object_get(p.status, "timeToReadySeconds"));
	json_object_update(json_object_get(w.obj, "status"), p.status);
	ctl_plan_release(&p);
	w.pods[1].inst.offset += 5000; /* volatile */
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_int_eq(p.n, 0);
	ck_assert_ptr_null(p.status);
	ctl_plan_release(&p);
	w.v.refresh_volatile = true;
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_ptr_nonnull(p.status);
	ctl_plan_release(&p);
	w.v.refresh_volatile = false;
	w.pods[2].inst.fenced = true; /* not volatile */
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_ptr_nonnull(p.status);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* An instance counts as ready only from a manager answer newer than the last role change,
 * saying ready: the pod's Ready condition alone lags behind a failover. */
START_TEST(status_ready_needs_fresh_polls)
{
	struct world w;
	struct ctl_plan p;

	world_init(&w, &cases[1]);
	w.pods[2].inst.last_ok_mono = w.v.roles_epoch_mono - 1; /* answered before the change */
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status, "readyInstances")), 2);
	ck_assert_str_eq(jsonx_get_string(p.status, "conditions[0].status"), "False");
	ctl_plan_release(&p);
	w.pods[2].inst.last_ok_mono = NOW_MONO - 100;
	w.pods[2].inst.ready = false; /* fresh, but its server is restarting */
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status, "readyInstances")), 2);
	ctl_plan_release(&p);
	w.pods[2].inst.ready = true;
	w.pods[2].inst.failures = 1; /* one failed poll keeps the last good answer */
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status, "readyInstances")), 3);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* A cache update queues a reconcile unless only volatile status fields changed. */
static const struct {
	const char *edit; /* what differs from BASE_CLUSTER */
	const char *obj;
	bool matters;
} update_cases[] = {
#define BASE_CLUSTER(spec, meta, inst)                                                             \
	"{\"metadata\":{\"name\":\"c\",\"generation\":1,\"resourceVersion\":\"9\"" meta "},"       \
	"\"spec\":{\"instances\":" spec "},\"status\":{\"phase\":\"Ready\",\"instancesStatus\":"   \
	"[{\"name\":\"c-1\",\"role\":\"primary\"" inst "}]}}"
	{ "nothing", BASE_CLUSTER("3", "", ",\"replicationOffset\":5"), false },
	{ "offset and lastSeen",
	  BASE_CLUSTER("3", ",\"resourceVersion\":\"10\"",
	               ",\"replicationOffset\":7,\"lastSeen\":\"2026-11-30T00:00:00Z\""),
	  false },
	{ "lag gone", BASE_CLUSTER("3", "", ""), false },
	{ "spec", BASE_CLUSTER("5", "", ",\"replicationOffset\":5"), true },
	{ "annotation",
	  BASE_CLUSTER("3", ",\"annotations\":{\"a\":\"b\"}", ",\"replicationOffset\":5"), true },
	{ "deletion",
	  BASE_CLUSTER("3", ",\"deletionTimestamp\":\"2026-11-30T00:00:00Z\"",
	               ",\"replicationOffset\":5"),
	  true },
	{ "role", BASE_CLUSTER("3", "", ",\"replicationOffset\":5,\"role\":\"replica\""), true },
	{ "fenced", BASE_CLUSTER("3", "", ",\"replicationOffset\":5,\"fenced\":true"), true },
};

START_TEST(cluster_update_matters)
{
	json_t *old = json_loads(update_cases[0].obj, 0, NULL);
	json_t *obj = json_loads(update_cases[_i].obj, 0, NULL);

	ck_assert_ptr_nonnull(old);
	ck_assert_msg(obj != NULL, "bad JSON in case %s", update_cases[_i].edit);
	ck_assert_msg(ctl_cluster_update_matters(old, obj) == update_cases[_i].matters, "%s",
	              update_cases[_i].edit);
	ck_assert_msg(ctl_cluster_update_matters(obj, old) == update_cases[_i].matters,
	              "%s (reversed)", update_cases[_i].edit);
	json_decref(old);
	json_decref(obj);
}
END_TEST

/* The leader EndpointSlice follows the primary's fencing and deletion. */
START_TEST(leader_endpoints)
{
	struct world w;
	struct ctl_plan p;
	struct ctl_pod *primary;
	json_t *ready;

	world_init(&w, &cases[1]); /* at rest: the slice is on the primary, ready */
	primary = &w.pods[0];
	ck_assert_str_eq(primary->name, primary_name(&w));
	ctl_plan_init(&p);
	failover_leader_endpoints(&w.v, &p, primary);
	ck_assert_uint_eq(p.n, 0);
	ctl_plan_release(&p);
	primary->inst.fenced = true;
	primary->inst.failures = 100; /* unreachable does not matter, fenced does */
	ctl_plan_init(&p);
	failover_leader_endpoints(&w.v, &p, primary);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_int_eq(p.acts[0].kind, CTL_ACT_PATCH);
	ready = jsonx_get(p.acts[0].obj, "endpoints[0].conditions.ready");
	ck_assert(json_is_false(ready));
	ctl_plan_release(&p);
	primary->inst.fenced = false;
	primary->deleting = true;
	ctl_plan_init(&p);
	failover_leader_endpoints(&w.v, &p, primary);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_uint_eq(json_array_size(json_object_get(p.acts[0].obj, "endpoints")), 0);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* --- TLS renewal (controller/pki.h) ----------------------------------------------------- */

/* New TLS Secrets of w (as cached), made for real. */
static void real_tls(struct world *w)
{
	json_t *fresh = desired_operator_tls_secret(&w->rc), *op,
	       *inst = desired_instance_tls_secret(&w->rc);
	struct err e = { 0 };

	ck_assert_msg(ctl_pki_fill_operator(fresh, "c", &e) == 0, "%s", e.msg);
	op = tu_secret_as_read(fresh);
	json_decref(fresh);
	ck_assert_msg(ctl_pki_fill_instance(inst, op, "c", &e) == 0, "%s", e.msg);
	json_decref(w->v.child[CTL_CHILD_OPERATOR_TLS]);
	json_decref(w->v.child[CTL_CHILD_INSTANCE_TLS]);
	w->v.child[CTL_CHILD_OPERATOR_TLS] = op;
	w->v.child[CTL_CHILD_INSTANCE_TLS] = tu_secret_as_read(inst);
	json_decref(inst);
}

/* "<name>:<fill>" of each PATCH of a Secret with TLS material in the plan at now, and
 * the CertificatesRenewed events. */
static void renewals(struct world *w, int64_t now, char *out, size_t len)
{
	struct ctl_plan p;
	size_t used = 0;

	out[0] = '\0';
	w->v.now_wall_ms = now;
	ctl_plan_init(&p);
	ctl_plan_build(&w->v, &p);
	for (size_t i = 0; i < p.n; i++) {
		const struct ctl_action *a = &p.acts[i];
		int n = 0;

		if (a->kind == CTL_ACT_PATCH && a->fill_tls)
			n = snprintf(out + used, len - used, "%s%s:%s", used ? " " : "", a->name,
			             a->fill_tls == CTL_FILL_TLS_OPERATOR ? "operator"
			                                                  : "instance");
		else if (a->kind == CTL_ACT_EVENT && strcmp(a->reason, "CertificatesRenewed") == 0)
			n = snprintf(out + used, len - used, "%sevent", used ? " " : "");
		if (n > 0 && (size_t)n < len - used)
			used += (size_t)n;
	}
	ctl_plan_release(&p);
}

START_TEST(tls_renewal)
{
	struct world w;
	int64_t now = (int64_t)time(NULL) * 1000, day = 86400LL * 1000;
	char got[256];
	json_t *keep;

	world_init(&w, &cases[1]); /* at rest */
	real_tls(&w);
	renewals(&w, now, got, sizeof(got));
	ck_assert_str_eq(got, "");
	/* 61 days on: both Secrets' leaves due; the operator's CAs kept, so the instance
	 * Secret is re-issued in the same round */
	renewals(&w, now + 61 * day, got, sizeof(got));
	ck_assert_str_eq(got, "c-operator-tls:operator event c-instance-tls:instance event");
	/* a CA due: the operator Secret now, the instance Secret from the new CAs next round */
	renewals(&w, now + 1300 * day, got, sizeof(got));
	ck_assert_str_eq(got, "c-operator-tls:operator event");
	/* the operator Secret made anew (deleted and created again): the instance Secret
	 * names other CAs and is re-issued alone */
	keep = json_incref(w.v.child[CTL_CHILD_INSTANCE_TLS]);
	real_tls(&w);
	json_decref(w.v.child[CTL_CHILD_INSTANCE_TLS]);
	w.v.child[CTL_CHILD_INSTANCE_TLS] = keep;
	renewals(&w, now, got, sizeof(got));
	ck_assert_str_eq(got, "c-instance-tls:instance event");
	/* an instance Secret from before the annotation: re-issued once */
	real_tls(&w);
	json_object_del(jsonx_get(w.v.child[CTL_CHILD_INSTANCE_TLS], "metadata.annotations"),
	                CTL_PKI_CA_ANN);
	renewals(&w, now, got, sizeof(got));
	ck_assert_str_eq(got, "c-instance-tls:instance event");
	/* nothing that parses (as the golden worlds): nothing to judge */
	json_decref(w.v.child[CTL_CHILD_OPERATOR_TLS]);
	json_decref(w.v.child[CTL_CHILD_INSTANCE_TLS]);
	w.v.child[CTL_CHILD_OPERATOR_TLS] = desired_operator_tls_secret(&w.rc);
	w.v.child[CTL_CHILD_INSTANCE_TLS] = desired_instance_tls_secret(&w.rc);
	renewals(&w, now + 1300 * day, got, sizeof(got));
	ck_assert_str_eq(got, "");
	world_release(&w);
}
END_TEST

/* A pod whose last answer predates the last role change is not used for role decisions
 * and is looked at again soon: the poll after the change queues nothing when that answer
 * did not change. Both a replica to repoint and the primary to follow (found in the
 * chaos net-cut runs: the new primary's answer predated the repointing of a replica, and
 * the old primary rejoined only at the 30 s resync). */
static void plan_with_old_answer(struct world *w, size_t pod, bool old, struct ctl_plan *p)
{
	w->pods[pod].inst.last_ok_mono = w->v.roles_epoch_mono + (old ? -1 : 1);
	ctl_plan_init(p);
	ctl_plan_build(&w->v, p);
}

static bool repoints(const struct ctl_plan *p, const char *pod)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->acts[i].kind == CTL_ACT_INSTANCE &&
		    strcmp(p->acts[i].op, "replicate") == 0 && strcmp(p->acts[i].name, pod) == 0)
			return true;
	return false;
}

START_TEST(follow_waits_for_a_current_answer)
{
	struct world w;
	struct ctl_plan p;

	world_init(&w, &cases[1]); /* at rest: c-1 primary, c-2 and c-3 follow it */
	snprintf(w.pods[2].inst.master_host, sizeof(w.pods[2].inst.master_host), "10.9.9.9");
	for (size_t who = 0; who < 3; who += 2) { /* the primary's answer is old, the replica's */
		plan_with_old_answer(&w, who, true, &p);
		ck_assert(!repoints(&p, w.pods[2].name)); /* not on an old answer */
		ck_assert_int_gt(p.requeue_ms, 0);
		ck_assert_int_le(p.requeue_ms, 1000);
		ctl_plan_release(&p);
		plan_with_old_answer(&w, who, false, &p); /* the poll came */
		ck_assert(repoints(&p, w.pods[2].name));
		ctl_plan_release(&p);
	}
	/* an answer no poll refreshes (its cluster's TLS material is missing): no busy loop */
	w.pods[0].inst.last_ok_mono = w.v.now_mono_ms - 60000;
	w.v.roles_epoch_mono = w.v.now_mono_ms - 30000;
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert(p.requeue_ms == 0 || p.requeue_ms > 1000);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* Failed after spec.failedAfter of not being ready. */
START_TEST(status_failed_after)
{
	struct scenario s = cases[3];
	struct world w;
	struct ctl_plan p;

	s.status =
	        "{\"currentPrimary\":\"c-1\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
	        "\"False\",\"reason\":\"x\",\"message\":\"\",\"lastTransitionTime\":\"" OLD "\"}]}";
	world_init(&w, &s);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_str_eq(jsonx_get_string(p.status, "conditions[4].type"), "Failed");
	ck_assert_str_eq(jsonx_get_string(p.status, "conditions[4].status"), "True");
	ck_assert_str_eq(jsonx_get_string(p.status, "conditions[0].lastTransitionTime"), OLD);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* The election alone: reachable, serving replicas of the right history only. */
START_TEST(elect_rules)
{
	struct scenario s = {
		.status = ST_C1,
		.pods = { { .serial = 1, .state = "parked", .crashed = true, .replid = "A" },
		          { .serial = 2, .state = "replica", .offset = 500, .failures = 2 },
		          { .serial = 3, .state = "replica", .offset = 400, .deleting = true },
		          { .serial = 4, .state = "booting", .offset = 900 },
		          { .serial = 5, .state = "replica", .offset = 300 },
		          { .serial = 6, .state = "replica", .offset = 300 } },
		.lease = L_RELEASED
	};
	struct world w;
	const struct ctl_pod *p;

	world_init(&w, &s);
	p = failover_elect(&w.v, "c-1", "A");
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "c-5"); /* ties go to the lower serial */
	w.pods[4].inst.loading = true;
	ck_assert_str_eq(failover_elect(&w.v, "c-1", "A")->name, "c-6");
	snprintf(w.pods[5].inst.link, sizeof(w.pods[5].inst.link), "syncing");
	ck_assert_ptr_null(failover_elect(&w.v, "c-1", "A"));
	world_release(&w);
}
END_TEST

/* --- status.danglingPVCs ------------------------------------------------------------ */

static void add_pvc(struct world *w, const char *name, bool deleting)
{
	struct ctl_pvc *pvc = &w->pvcs[w->v.npvcs++];

	ck_assert_uint_le(w->v.npvcs, MAXPODS);
	*pvc = (struct ctl_pvc){ .name = name,
		                 .serial = ctl_serial_of("c", name),
		                 .deleting = deleting,
		                 .size = 1073741824 };
}

/* The plan's status.danglingPVCs as "a,b" ("null" when it clears the field, "-" when the
 * status is not written at all); with apply, the status is then stored as written. */
static char *dangling_of(struct world *w, char **sig, bool apply)
{
	struct ctl_plan p;
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	json_t *d, *it;
	size_t i;

	ctl_plan_init(&p);
	ctl_plan_build(&w->v, &p);
	*sig = signature(&p);
	d = json_object_get(p.status, "danglingPVCs");
	if (!p.status)
		buf_append_str(&b, "-");
	else if (json_is_null(d))
		buf_append_str(&b, "null");
	json_array_foreach (d, i, it)
		buf_printf(&b, "%s%s", i ? "," : "", json_string_value(it));
	if (apply && p.status)
		json_object_update(json_object_get(w->obj, "status"), p.status);
	ctl_plan_release(&p);
	return buf_detach(&b, NULL);
}

static const struct {
	const char *name;
	struct scenario world;
	const char *extra[3]; /* PVCs without a pod; a leading '~' marks one being deleted */
	const char *want;     /* status.danglingPVCs */
	const char *want_sig; /* the actions; NULL: not checked */
} dangling_cases[] = {
	{ "a name that is no serial is listed; a removed serial is deleted, not listed",
	  { .status = ST_C1, .pods = { P1, R2, R3 }, .lease = L_HELD },
	  { "c-restored", "c-7" },
	  "c-restored",
	  "delete:PersistentVolumeClaim:c-7" },
	{ "a PVC being deleted is not listed",
	  { .status = ST_C1, .pods = { P1, R2, R3 }, .lease = L_HELD },
	  { "~c-restored" },
	  "null",
	  "" },
	{ "hibernated: every PVC is kept for the pods to come back",
	  { .status = ST_C1,
	    .annotations = "{\"redis.io/hibernation\":\"on\"}",
	    .lease = L_RELEASED },
	  { "c-1", "c-2", "c-3" },
	  "null",
	  "" },
	{ "hibernated, one serial above spec.instances: listed (not reused, not deleted yet)",
	  { .status = ST_C1,
	    .annotations = "{\"redis.io/hibernation\":\"on\"}",
	    .lease = L_RELEASED,
	    .spec = "{\"instances\":2}" },
	  { "c-1", "c-2", "c-3" },
	  "c-3",
	  "" },
	{ "a pod deleted by hand: its PVC is reused, not listed",
	  { .status = ST_C1, .pods = { P1, R2 }, .lease = L_HELD },
	  { "c-3" },
	  "null",
	  "create:Pod:c-3" },
	{ "pvcRetention Retain, scaled down: the kept PVC is listed, at rest",
	  { .status = ST_C1,
	    .spec = "{\"instances\":2,\"storage\":{\"pvcRetention\":\"Retain\"}}",
	    .pods = { P1, R2 },
	    .lease = L_HELD },
	  { "c-3" },
	  "c-3",
	  "" },
	{ "pvcRetention Retain, scaled up again: the kept PVC is reused first",
	  { .status = ST_C1,
	    .spec = "{\"instances\":3,\"storage\":{\"pvcRetention\":\"Retain\"}}",
	    .pods = { P1, R2 },
	    .lease = L_HELD },
	  { "c-3" },
	  "null",
	  "create:Pod:c-3" },
	{ "emptyDir: any PVC labelled for the cluster is listed",
	  { .status = ST_C1,
	    .spec = "{\"storage\":{\"type\":\"emptyDir\"}}",
	    .pods = { P1, R2, R3 },
	    .no_pvcs = true,
	    .lease = L_HELD },
	  { "c-1" },
	  "c-1",
	  "" },
};

START_TEST(dangling_pvcs)
{
	struct world w;
	char *got, *sig;

	world_init(&w, &dangling_cases[_i].world);
	for (size_t k = 0; k < 3 && dangling_cases[_i].extra[k]; k++) {
		const char *n = dangling_cases[_i].extra[k];

		add_pvc(&w, n[0] == '~' ? n + 1 : n, n[0] == '~');
	}
	got = dangling_of(&w, &sig, false);
	ck_assert_msg(strcmp(got, dangling_cases[_i].want) == 0, "%s: danglingPVCs %s, want %s",
	              dangling_cases[_i].name, got, dangling_cases[_i].want);
	if (dangling_cases[_i].want_sig)
		ck_assert_msg(strcmp(sig, dangling_cases[_i].want_sig) == 0, "%s: plan %s, want %s",
		              dangling_cases[_i].name, sig, dangling_cases[_i].want_sig);
	free(got);
	free(sig);
	world_release(&w);
}
END_TEST

/* A list shown earlier is cleared once the PVC is gone; an unchanged one is not rewritten. */
START_TEST(dangling_pvcs_cleared)
{
	static const struct {
		bool present; /* the PVC c-restored exists */
		const char *want;
	} steps[] = { { true, "c-restored" }, { true, "-" }, { false, "null" }, { false, "-" } };
	struct world w;
	char *got, *sig;

	world_init(&w, &cases[1]);
	add_pvc(&w, "c-restored", false);
	for (size_t i = 0; i < ARRAY_LEN(steps); i++) {
		w.v.npvcs = steps[i].present ? 4 : 3;
		got = dangling_of(&w, &sig, true);
		ck_assert_msg(strcmp(got, steps[i].want) == 0, "step %zu: %s, want %s", i, got,
		              steps[i].want);
		free(got);
		free(sig);
	}
	world_release(&w);
}
END_TEST

/* --- spec.bootstrap (controller/bootstrap.h) ----------------------------------------- */

#define BOOT_SPEC "{\"instances\":2,\"bootstrap\":{\"backupName\":\"nightly\"}}"
#define ST_BOOTED                                                                                  \
	"{\"currentPrimary\":\"c-1\",\"conditions\":[{\"type\":\"BootstrapReady\",\"status\":"     \
	"\"True\",\"reason\":\"Restored\",\"message\":\"restored from RedisBackup nightly into "   \
	"c-1\",\"lastTransitionTime\":\"" OLD "\"}]}"
#define BOOTING_C1                                                                                 \
	{                                                                                          \
		.serial = 1, .state = "booting", .not_ready = true                                 \
	}

static const struct {
	const char *name;
	struct scenario world;
	enum ctl_boot_lookup lookup;
	const char *phase;      /* the backup's status.phase; NULL: none */
	bool no_manifest;       /* Completed without status.manifestKey */
	bool secret_missing;    /* its credentials Secret does not exist */
	const char *restore[2]; /* the first primary's status.restore phase and error */
	const char *want_sig;
	const char *want_cond; /* BootstrapReady: "True" "False", NULL: absent */
	const char *want_reason;
	bool want_restore; /* the created primary carries the restore source */
	bool want_wait;    /* blocked: requeued by the back-off */
} boot_cases[] = {
	{ "backup missing: no pod, no primary chosen",
	  { .spec = BOOT_SPEC, .lease = L_NEVER },
	  CTL_BOOT_NOT_FOUND,
	  NULL,
	  false,
	  false,
	  { NULL, NULL },
	  "",
	  "False",
	  "BackupNotFound",
	  false,
	  true },
	{ "backup Pending: no pod",
	  { .spec = BOOT_SPEC, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Pending",
	  false,
	  false,
	  { NULL, NULL },
	  "",
	  "False",
	  "BackupNotCompleted",
	  false,
	  true },
	{ "backup Failed: no pod",
	  { .spec = BOOT_SPEC, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Failed",
	  false,
	  false,
	  { NULL, NULL },
	  "",
	  "False",
	  "BackupNotCompleted",
	  false,
	  true },
	{ "backup Completed without a manifest key: no pod",
	  { .spec = BOOT_SPEC, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Completed",
	  true,
	  false,
	  { NULL, NULL },
	  "",
	  "False",
	  "BackupInvalid",
	  false,
	  true },
	{ "credentials Secret missing: no pod",
	  { .spec = BOOT_SPEC, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Completed",
	  false,
	  true,
	  { NULL, NULL },
	  "",
	  "False",
	  "CredentialsMissing",
	  false,
	  true },
	{ "backup Completed: the first primary carries the restore source",
	  { .spec = BOOT_SPEC, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Completed",
	  false,
	  false,
	  { NULL, NULL },
	  "status:currentPrimary,targetPrimary | event:PrimarySelected | "
	  "create:PersistentVolumeClaim:c-1 | create:Pod:c-1",
	  "False",
	  "Restoring",
	  true,
	  false },
	{ "restoring: no replica yet",
	  { .spec = BOOT_SPEC, .status = ST_C1, .pods = { BOOTING_C1 }, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Completed",
	  false,
	  false,
	  { "restoring", NULL },
	  "",
	  "False",
	  "Restoring",
	  false,
	  false },
	{ "restore failed: the manager's reason, no replica, no new primary",
	  { .spec = BOOT_SPEC, .status = ST_C1, .pods = { BOOTING_C1 }, .lease = L_NEVER },
	  CTL_BOOT_FOUND,
	  "Completed",
	  false,
	  false,
	  { "failed", "dump.rdb: sha256 mismatch" },
	  "",
	  "False",
	  "RestoreFailed",
	  false,
	  false },
	{ "backup deleted while its restore runs: the pod goes on",
	  { .spec = BOOT_SPEC, .status = ST_C1, .pods = { BOOTING_C1 }, .lease = L_NEVER },
	  CTL_BOOT_NOT_FOUND,
	  NULL,
	  false,
	  false,
	  { "restoring", NULL },
	  "",
	  "False",
	  "Restoring",
	  false,
	  false },
	{ "restored, primary serving: replicas as usual, done",
	  { .spec = BOOT_SPEC, .status = ST_C1, .pods = { P1 }, .lease = L_HELD },
	  CTL_BOOT_FOUND,
	  "Completed",
	  false,
	  false,
	  { "completed", NULL },
	  "create:PersistentVolumeClaim:c-2 | create:Pod:c-2",
	  "True",
	  "Restored",
	  false,
	  false },
	{ "bootstrapped, primary pod gone: recreated without any restore source",
	  { .spec = BOOT_SPEC, .status = ST_BOOTED, .lease = L_RELEASED },
	  CTL_BOOT_UNREAD,
	  NULL,
	  false,
	  false,
	  { NULL, NULL },
	  "create:PersistentVolumeClaim:c-1 | create:Pod:c-1",
	  "True",
	  "Restored",
	  false,
	  false },
	{ "a cluster that ran before bootstrap was handled: never restored",
	  { .spec = BOOT_SPEC, .status = ST_C1, .pods = { P1, R2 }, .lease = L_HELD },
	  CTL_BOOT_NOT_FOUND,
	  NULL,
	  false,
	  false,
	  { NULL, NULL },
	  "",
	  "True",
	  "NotRestored",
	  false,
	  false },
	{ "no bootstrap: no condition",
	  { .spec = "{\"instances\":2}", .status = ST_C1, .pods = { P1, R2 }, .lease = L_HELD },
	  CTL_BOOT_UNREAD,
	  NULL,
	  false,
	  false,
	  { NULL, NULL },
	  "",
	  NULL,
	  NULL,
	  false,
	  false },
};

static json_t *boot_condition(json_t *status)
{
	json_t *c;
	size_t i;

	json_array_foreach (json_object_get(status, "conditions"), i, c) {
		if (strcmp(jsonx_get_string(c, "type"), CTL_COND_BOOTSTRAP) == 0)
			return c;
	}
	return NULL;
}

/* The env var REDIS_OPERATOR_RESTORE_SOURCE of the first Pod the plan creates. */
static const char *created_restore_source(const struct ctl_plan *p)
{
	json_t *e;
	size_t i;

	for (size_t k = 0; k < p->n; k++) {
		if (p->acts[k].kind != CTL_ACT_CREATE || strcmp(p->acts[k].res->kind, "Pod") != 0)
			continue;
		json_array_foreach (jsonx_get(p->acts[k].obj, "spec.containers[0].env"), i, e) {
			if (strcmp(jsonx_get_string(e, "name"), "REDIS_OPERATOR_RESTORE_SOURCE") ==
			    0)
				return jsonx_get_string(e, "value");
		}
	}
	return NULL;
}

static void boot_backup(struct api_redis_backup *b, const char *phase, bool no_manifest)
{
	struct err e = { 0 };
	json_t *obj =
	        parse("{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisBackup\","
	              "\"metadata\":{\"name\":\"nightly\",\"namespace\":\"ns\",\"uid\":\"b\"},"
	              "\"spec\":{\"clusterName\":\"old\",\"destination\":{\"s3\":{"
	              "\"bucket\":\"bk\",\"path\":\"p\",\"region\":\"us-east-1\"}}}}");
	json_t *st = json_object();

	if (phase)
		json_object_set_new(st, "phase", json_string(phase));
	if (!no_manifest)
		json_object_set_new(st, "manifestKey",
		                    json_string("p/old/ns/nightly/manifest.json"));
	json_object_set_new(obj, "status", st);
	ck_assert_msg(api_redis_backup_decode(obj, b, &e) == 0, "%s", e.msg);
	json_decref(obj);
}

START_TEST(bootstrap_cases)
{
	const __typeof__(boot_cases[0]) *c = &boot_cases[_i];
	struct api_redis_backup b = { 0 };
	struct world w;
	struct ctl_plan p;
	json_t *cond;
	char *got;

	world_init(&w, &c->world);
	w.v.boot.lookup = c->lookup;
	if (c->lookup == CTL_BOOT_FOUND) {
		boot_backup(&b, c->phase, c->no_manifest);
		w.v.boot.backup = &b;
		w.v.boot.secret = "bk-creds";
		w.v.boot.secret_missing = c->secret_missing;
	}
	if (c->restore[0]) {
		snprintf(w.pods[0].inst.restore_phase, sizeof(w.pods[0].inst.restore_phase), "%s",
		         c->restore[0]);
		snprintf(w.pods[0].inst.restore_error, sizeof(w.pods[0].inst.restore_error), "%s",
		         c->restore[1] ? c->restore[1] : "");
	}
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	got = signature(&p);
	ck_assert_msg(strcmp(got, c->want_sig) == 0, "%s:\n  want %s\n  got  %s", c->name,
	              c->want_sig, got);
	cond = boot_condition(p.status ? p.status : jsonx_get(w.obj, "status"));
	if (!c->want_cond) {
		ck_assert_msg(!cond, "%s: a %s condition", c->name, CTL_COND_BOOTSTRAP);
	} else {
		ck_assert_msg(cond, "%s: no condition", c->name);
		ck_assert_str_eq(jsonx_get_string(cond, "status"), c->want_cond);
		ck_assert_msg(strcmp(jsonx_get_string(cond, "reason"), c->want_reason) == 0,
		              "%s: reason %s: %s", c->name, jsonx_get_string(cond, "reason"),
		              jsonx_get_string(cond, "message"));
		ck_assert_ptr_nonnull(strstr(jsonx_get_string(cond, "message"), "nightly"));
		if (c->restore[1])
			ck_assert_ptr_nonnull(
			        strstr(jsonx_get_string(cond, "message"), c->restore[1]));
	}
	ck_assert_msg(!created_restore_source(&p) == !c->want_restore, "%s: restore source %s",
	              c->name, created_restore_source(&p) ? "set" : "absent");
	if (c->want_wait) {
		ck_assert_str_eq(p.phase, "Waiting for the bootstrap backup");
		ck_assert_int_ge(p.requeue_ms, CTL_BOOT_REQUEUE_MIN_MS);
		ck_assert_int_le(p.requeue_ms, CTL_BOOT_REQUEUE_MAX_MS);
	}
	free(got);
	ctl_plan_release(&p);
	api_redis_backup_release(&b);
	world_release(&w);
}
END_TEST

/* The back-off while the backup is unusable grows with the time waited, within bounds. */
START_TEST(bootstrap_backoff)
{
	static const struct {
		const char *since;
		int64_t want;
	} steps[] = { { NULL, CTL_BOOT_REQUEUE_MIN_MS },
		      { T0, CTL_BOOT_REQUEUE_MIN_MS + 500 },
		      { OLD, CTL_BOOT_REQUEUE_MAX_MS } };
	char st[512];

	for (size_t i = 0; i < ARRAY_LEN(steps); i++) {
		struct scenario s = { .spec = BOOT_SPEC, .lease = L_NEVER, .status = "{}" };
		struct world w;
		struct ctl_plan p;

		if (steps[i].since) {
			snprintf(st, sizeof(st),
			         "{\"conditions\":[{\"type\":\"BootstrapReady\",\"status\":"
			         "\"False\","
			         "\"reason\":\"BackupNotFound\",\"message\":\"m\","
			         "\"lastTransitionTime\":\"%s\"}]}",
			         steps[i].since);
			s.status = st;
		}
		world_init(&w, &s);
		w.v.boot.lookup = CTL_BOOT_NOT_FOUND;
		ctl_plan_init(&p);
		ctl_plan_build(&w.v, &p);
		ck_assert_int_eq(p.requeue_ms, steps[i].want);
		ctl_plan_release(&p);
		world_release(&w);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_plan");
	TCase *t = tcase_create("all");

	tcase_add_loop_test(t, plan_cases, 0, ARRAY_LEN(cases));
	tcase_add_test(t, reload_bodies);
	tcase_add_test(t, status_converges);
	tcase_add_test(t, status_ready_needs_fresh_polls);
	tcase_add_test(t, status_failed_after);
	tcase_add_test(t, leader_endpoints);
	tcase_add_test(t, tls_renewal);
	tcase_add_test(t, follow_waits_for_a_current_answer);
	tcase_add_loop_test(t, cluster_update_matters, 0, ARRAY_LEN(update_cases));
	tcase_add_test(t, elect_rules);
	tcase_add_loop_test(t, dangling_pvcs, 0, ARRAY_LEN(dangling_cases));
	tcase_add_test(t, dangling_pvcs_cleared);
	tcase_add_loop_test(t, bootstrap_cases, 0, ARRAY_LEN(boot_cases));
	tcase_add_test(t, bootstrap_backoff);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

/*
 * test_controller_sentinel: the planner in spec.mode sentinel (controller/sentinel.h),
 * table-driven like test_controller_plan: each case is a world (data pods with their
 * managers' answers, sentinel pods with their view of the master) and the exact actions
 * wanted, as a signature ("create:Pod:c-sentinel-1 | sentinel/reset:c-sentinel-2? | …",
 * "?" marking an optional action).
 *
 * The rule every case is also checked against: in sentinel mode no plan ever fences,
 * promotes, re-points or switches over a data instance (Sentinel is the only promoter).
 * Then the shapes: the sentinel pod, the <name>-sentinel Service, the -any Service
 * without sentinels; the status (sentinels listed, Ready gated by CKQUORUM); the
 * sentinel /v1/status parser against the contract's encoder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/rediscluster.h"
#include "controller/actions.h"
#include "controller/desired.h"
#include "controller/failover_state.h"
#include "controller/internal.h"
#include "controller/plan.h"
#include "controller/sentinel.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "unit.h"

#define NOW_WALL 1795974083000LL /* 2026-11-29T17:41:23Z */
#define NOW_MONO 500000
#define T_3S     "2026-11-29T17:41:20Z"
#define T_OLD    "2026-11-29T17:30:00Z"
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

struct data_def {
	int serial;
	const char *state; /* primary replica parked crashed; NULL: never answered */
	bool fenced, crashed, old_spec;
};

struct sen_def {
	int index;
	int master; /* the data serial it names as master; 0: no view yet */
	int epoch;  /* config epoch */
	bool no_quorum, failover, not_ready, deleting, old_spec, silent;
	int known;    /* known sentinels; 0: exactly spec.sentinel.count */
	int replicas; /* known replicas; 0: 2 (the other data pods); -1: none */
	const char *phase;
	const char *reset_at; /* its reset annotation; NULL: none */
};

struct scenario {
	const char *name;
	const char *spec;   /* merged into the spec */
	const char *status; /* NULL: currentPrimary c-1 */
	const char *annotations;
	struct data_def pods[MAXPODS];
	struct sen_def sens[MAXPODS];
	bool lease_free;      /* the primary Lease released (else held by c-1) */
	bool no_sentinel_svc; /* <name>-sentinel does not exist yet */
	const char *want;
	const char *phase; /* NULL: not checked */
};

struct world {
	struct api_redis_cluster rc;
	json_t *obj;
	struct ctl_pod pods[MAXPODS], sens[MAXPODS];
	json_t *objs[2 * MAXPODS];
	char names[2 * MAXPODS][64], ips[2 * MAXPODS][32];
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
	json_t *obj =
	        parse("{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\","
	              "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u-1\","
	              "\"generation\":3,\"creationTimestamp\":\"" T_OLD "\"},"
	              "\"spec\":{\"mode\":\"sentinel\",\"instances\":3,"
	              "\"sentinel\":{\"count\":3,\"quorum\":2,\"failoverTimeout\":\"10s\"}}}");
	json_t *patch = s->spec ? parse(s->spec) : NULL;

	if (patch)
		json_object_update_recursive(json_object_get(obj, "spec"), patch);
	json_decref(patch);
	json_object_set_new(obj, "status",
	                    parse(s->status ? s->status
	                                    : "{\"currentPrimary\":\"c-1\","
	                                      "\"targetPrimary\":\"c-1\"}"));
	if (s->annotations)
		json_object_set_new(json_object_get(obj, "metadata"), "annotations",
		                    parse(s->annotations));
	return obj;
}

static void data_inst(const struct data_def *d, struct ctl_inst *i)
{
	bool primary = d->state && strcmp(d->state, "primary") == 0;

	i->seen = d->state != NULL;
	i->last_ok_mono = NOW_MONO - 100;
	i->offset = 1000;
	i->lag_bytes = i->lag_seconds = -1;
	if (!d->state)
		return;
	snprintf(i->state, sizeof(i->state), "%s", d->state);
	snprintf(i->role, sizeof(i->role), "%s", primary ? "primary" : "replica");
	i->server_up = !d->crashed;
	i->fenced = d->fenced || d->crashed;
	i->primary_crashed = d->crashed;
	i->ready = !i->fenced;
	snprintf(i->repl_id, sizeof(i->repl_id), "A");
	snprintf(i->link, sizeof(i->link), "%s", primary ? "none" : "up");
	if (!primary) {
		i->lag_bytes = 0;
		snprintf(i->master_host, sizeof(i->master_host), "10.0.0.1");
		i->master_port = CTL_PORT_REDIS;
	}
}

static void add_data(struct world *w, const struct data_def *d, size_t k)
{
	struct ctl_pod *p = &w->pods[w->v.npods++];
	const char *role;

	snprintf(w->names[k], sizeof(w->names[k]), "c-%d", d->serial);
	/* labelled as the controller left them: role=primary on currentPrimary */
	role = strcmp(w->names[k], w->rc.status.current_primary) == 0 ? CTL_ROLE_PRIMARY
	                                                              : CTL_ROLE_REPLICA;
	snprintf(w->ips[k], sizeof(w->ips[k]), "10.0.0.%d", d->serial);
	w->objs[k] = desired_pod(&w->rc, &cfg, d->serial, role);
	*p = (struct ctl_pod){ .name = w->names[k],
		               .serial = d->serial,
		               .obj = w->objs[k],
		               .uid = "uid",
		               .ip = w->ips[k],
		               .phase = "Running",
		               .role_label = role };
	p->spec_hash =
	        d->old_spec ? "0000000000000000"
	                    : jsonx_get_string(p->obj,
	                                       "metadata.annotations[\"" CTL_ANN_SPEC_HASH "\"]");
	p->live_hash = jsonx_get_string(p->obj, "metadata.annotations[\"" CTL_ANN_LIVE_HASH "\"]");
	data_inst(d, &p->inst);
	p->ready = d->state && p->inst.ready;
}

static void sen_inst(const struct world *w, const struct sen_def *d, struct ctl_inst *i)
{
	struct ctl_sentinel_obs *o = &i->sen;
	int64_t count = w->rc.spec.sentinel.count;

	i->seen = !d->silent;
	i->last_ok_mono = NOW_MONO - 100;
	snprintf(i->state, sizeof(i->state), "running");
	snprintf(i->role, sizeof(i->role), "%s", CTL_ROLE_SENTINEL);
	i->server_up = true;
	i->offset = i->lag_bytes = i->lag_seconds = -1;
	o->config_epoch = o->known_sentinels = -1;
	if (!d->master)
		return;
	o->has_view = true;
	snprintf(o->master_host, sizeof(o->master_host), "10.0.0.%d", d->master);
	o->master_port = CTL_PORT_REDIS;
	snprintf(o->master_status, sizeof(o->master_status), "ok");
	o->failover_in_progress = d->failover;
	o->quorum_ok = !d->no_quorum;
	if (d->no_quorum)
		snprintf(o->quorum_reason, sizeof(o->quorum_reason), "NOQUORUM 1 usable Sentinels");
	o->config_epoch = d->epoch;
	o->known_sentinels = d->known ? d->known : count;
	o->known_replicas = d->replicas < 0 ? 0 : d->replicas ? d->replicas : 2;
	i->ready = o->quorum_ok;
}

static void add_sentinel(struct world *w, const struct sen_def *d, size_t k)
{
	struct ctl_pod *p = &w->sens[w->v.nsentinels++];
	size_t slot = MAXPODS + k;
	json_t *ann;

	desired_sentinel_name(&w->rc, d->index, w->names[slot], sizeof(w->names[slot]));
	snprintf(w->ips[slot], sizeof(w->ips[slot]), "10.0.1.%d", d->index);
	w->objs[slot] = desired_sentinel_pod(&w->rc, &cfg, d->index);
	ann = jsonx_get(w->objs[slot], "metadata.annotations");
	if (d->reset_at)
		json_object_set_new(ann, CTL_ANN_SENTINEL_RESET, json_string(d->reset_at));
	*p = (struct ctl_pod){ .name = w->names[slot],
		               .serial = -1,
		               .obj = w->objs[slot],
		               .uid = "uid-s",
		               .ip = w->ips[slot],
		               .phase = d->phase ? d->phase : "Running",
		               .role_label = CTL_ROLE_SENTINEL,
		               .deleting = d->deleting };
	p->spec_hash = d->old_spec ? "0000000000000000"
	                           : json_string_value(json_object_get(ann, CTL_ANN_SPEC_HASH));
	sen_inst(w, d, &p->inst);
	p->ready = !d->not_ready && !d->silent && p->inst.ready;
}

static void add_children(struct world *w, const struct scenario *s)
{
	const struct api_redis_cluster *rc = &w->rc;
	const struct ctl_pod *pp = ctl_view_pod(&w->v, rc->status.current_primary);

	w->v.child[CTL_CHILD_SA] = desired_service_account(rc);
	w->v.child[CTL_CHILD_ROLE] = desired_role(rc);
	w->v.child[CTL_CHILD_ROLEBINDING] = desired_role_binding(rc);
	w->v.child[CTL_CHILD_AUTH_SECRET] = desired_auth_secret(rc);
	w->v.child[CTL_CHILD_OPERATOR_SECRET] = desired_operator_secret(rc);
	w->v.child[CTL_CHILD_SVC_LEADER] = desired_service(rc, DESIRED_SVC_LEADER);
	w->v.child[CTL_CHILD_SVC_REPLICA] = desired_service(rc, DESIRED_SVC_REPLICA);
	w->v.child[CTL_CHILD_SVC_ANY] = desired_service(rc, DESIRED_SVC_ANY);
	w->v.child[CTL_CHILD_SVC_SENTINEL] =
	        s->no_sentinel_svc ? NULL : desired_sentinel_service(rc);
	w->v.child[CTL_CHILD_PDB_PRIMARY] = desired_pdb(rc, DESIRED_PDB_PRIMARY);
	w->v.child[CTL_CHILD_PDB_REPLICA] = desired_pdb(rc, DESIRED_PDB_REPLICA);
	w->v.child[CTL_CHILD_PDB_SENTINEL] = desired_pdb(rc, DESIRED_PDB_SENTINEL);
	w->v.child[CTL_CHILD_LEASE] = desired_lease(rc);
	w->v.child[CTL_CHILD_OPERATOR_TLS] = desired_operator_tls_secret(rc);
	w->v.child[CTL_CHILD_INSTANCE_TLS] = desired_instance_tls_secret(rc);
	w->v.child[CTL_CHILD_LEADER_ENDPOINTS] =
	        pp ? desired_leader_endpoints(rc, pp->name, pp->uid, pp->ip, !pp->inst.fenced)
	           : desired_leader_endpoints(rc, NULL, NULL, NULL, false);
}

static void world_init(struct world *w, const struct scenario *s)
{
	struct err e = { 0 };

	memset(w, 0, sizeof(*w));
	w->obj = cluster_obj(s);
	ck_assert_msg(api_redis_cluster_decode(w->obj, &w->rc, &e) == 0, "%s", e.msg);
	w->v = (struct ctl_view){ .rc = &w->rc,
		                  .obj = w->obj,
		                  .ns = "ns",
		                  .name = "c",
		                  .pods = w->pods,
		                  .sentinels = w->sens,
		                  .cfg = &cfg,
		                  .now_wall_ms = NOW_WALL,
		                  .now_mono_ms = NOW_MONO,
		                  .roles_epoch_mono = NOW_MONO - 1000,
		                  .password = "pw" };
	for (size_t k = 0; k < MAXPODS && s->pods[k].serial; k++)
		add_data(w, &s->pods[k], k);
	for (size_t k = 0; k < MAXPODS && s->sens[k].index; k++)
		add_sentinel(w, &s->sens[k], k);
	add_children(w, s);
	w->v.lease.state = s->lease_free ? CTL_LEASE_RELEASED : CTL_LEASE_HELD;
	w->v.lease.ever_acquired = true;
	snprintf(w->v.lease.holder, sizeof(w->v.lease.holder), "%s", s->lease_free ? "" : "c-1");
	ctl_failover_read(w->obj, &w->v.fo);
}

static void world_release(struct world *w)
{
	for (size_t k = 0; k < 2 * MAXPODS; k++)
		json_decref(w->objs[k]);
	for (int i = 0; i < CTL_CHILD_COUNT; i++)
		json_decref(w->v.child[i]);
	api_redis_cluster_release(&w->rc);
	json_decref(w->obj);
}

/* --- signatures ----------------------------------------------------------------------- */

static void sig_one(struct buf *b, const struct ctl_action *a)
{
	const char *role = json_string_value(
	        json_object_get(jsonx_get(a->obj, "metadata.labels"), CTL_LABEL_ROLE));
	const char *k, *sep = "";
	json_t *v;

	switch (a->kind) {
	case CTL_ACT_CREATE: buf_printf(b, "create:%s:%s", a->res->kind, a->name); break;
	case CTL_ACT_DELETE: buf_printf(b, "delete:%s:%s", a->res->kind, a->name); break;
	case CTL_ACT_PATCH:
		buf_printf(b, "patch:%s:%s%s%s", a->res->kind, a->name, role ? ":role=" : "",
		           role ? role : "");
		break;
	case CTL_ACT_STATUS:
		buf_append_str(b, "status:");
		json_object_foreach (a->obj, k, v) {
			buf_printf(b, "%s%s", sep, k);
			if (strcmp(k, "failover") == 0)
				buf_printf(b, "=%s",
				           json_is_null(v) ? "null" : jsonx_get_string(v, "phase"));
			sep = ",";
		}
		break;
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
		.serial = 1, .state = "primary"                                                    \
	}
#define R2                                                                                         \
	{                                                                                          \
		.serial = 2, .state = "replica"                                                    \
	}
#define R3                                                                                         \
	{                                                                                          \
		.serial = 3, .state = "replica"                                                    \
	}
#define S(k, m)                                                                                    \
	{                                                                                          \
		.index = (k), .master = (m), .epoch = 0                                            \
	}
#define THREE_ON(m)                                                                                \
	{                                                                                          \
		S(1, m), S(2, m), S(3, m)                                                          \
	}
/* our own request to Sentinel, started at `when` */
#define ST_SWITCHOVER(when)                                                                        \
	"{\"currentPrimary\":\"c-1\",\"targetPrimary\":\"c-1\",\"failover\":{\"phase\":"           \
	"\"Switchover\",\"from\":\"c-1\",\"reason\":\"requested\",\"startedAt\":\"" when "\"}}"

static const struct scenario cases[] = {
	{ .name = "at rest: nothing to do",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "" },
	{ .name = "standalone → sentinel in place: the Service and the sentinels come, no pod "
	          "rolls (sentinel hashes as standalone: move_keeps_the_pods), the primary stays",
	  .pods = { P1, R2, R3 },
	  .no_sentinel_svc = true,
	  .want = "create:Service:c-sentinel | create:Pod:c-sentinel-1 | create:Pod:c-sentinel-2 | "
	          "create:Pod:c-sentinel-3" },
	{ .name = "just moved from standalone, the primary's server crashed (parked): the "
	          "sentinels come all the same (only Sentinel can fail over now)",
	  .pods = { { .serial = 1, .state = "parked", .crashed = true }, R2, R3 },
	  .want = "create:Pod:c-sentinel-1 | create:Pod:c-sentinel-2 | create:Pod:c-sentinel-3" },
	{ .name = "primary serving, no sentinel yet: all three created",
	  .pods = { P1, R2, R3 },
	  .want = "create:Pod:c-sentinel-1 | create:Pod:c-sentinel-2 | create:Pod:c-sentinel-3" },
	{ .name = "primary not answering yet: no sentinel (it boots from the primary's address)",
	  .pods = { { .serial = 1 } },
	  .want = "",
	  .phase = "Waiting for the primary" },
	{ .name = "a lost sentinel pod is recreated",
	  .pods = { P1, R2, R3 },
	  .sens = { S(1, 1), S(3, 1) },
	  .want = "create:Pod:c-sentinel-2" },
	{ .name = "an ended sentinel pod is deleted to be recreated",
	  .pods = { P1, R2, R3 },
	  .sens = { S(1, 1), { .index = 2, .master = 1, .phase = "Failed" }, S(3, 1) },
	  .want = "delete:Pod:c-sentinel-2 | event:PodRecreated" },
	{ .name = "primary's server crashed: no fence, no promote (Sentinel's call)",
	  .pods = { { .serial = 1, .state = "parked", .crashed = true }, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "" },
	{ .name = "Sentinel promoted c-2: currentPrimary, labels and the leader follow",
	  .pods = { { .serial = 1, .state = "replica" }, { .serial = 2, .state = "primary" }, R3 },
	  .sens = { { .index = 1, .master = 2, .epoch = 1 },
	            S(2, 1),
	            { .index = 3, .master = 2, .epoch = 1 } },
	  .want = "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "event:SentinelFailover | patch:EndpointSlice:c-leader | "
	          "patch:Pod:c-2:role=primary | patch:Pod:c-1:role=replica" },
	{ .name = "one sentinel of three names c-2 (a newer epoch): no majority, nothing moves",
	  .pods = { P1, { .serial = 2, .state = "primary" }, R3 },
	  .sens = { { .index = 1, .master = 2, .epoch = 1 }, S(2, 1), S(3, 1) },
	  .want = "" },
	{ .name = "the sentinels name c-2 but it is not a writable primary yet: wait",
	  .pods = { P1, R2, R3 },
	  .sens = { { .index = 1, .master = 2, .epoch = 1 },
	            { .index = 2, .master = 2, .epoch = 1 },
	            S(3, 1) },
	  .want = "" },
	{ .name = "a failover running: nothing moves, phase says so",
	  .pods = { { .serial = 1, .state = "parked", .crashed = true }, R2, R3 },
	  .sens = { { .index = 1, .master = 1, .failover = true }, S(2, 1), S(3, 1) },
	  .want = "",
	  .phase = "Sentinel is failing over" },
	{ .name = "primary pod gone with replicas left: not recreated, Sentinel promotes",
	  .pods = { R2, R3 },
	  .sens = THREE_ON(1),
	  .lease_free = true,
	  .want = "",
	  .phase = "Waiting for Sentinel to promote a replica" },
	{ .name = "primary pod gone and no sentinel answering: the primary is recreated",
	  .pods = { R2, R3 },
	  .lease_free = true,
	  .want = "create:PersistentVolumeClaim:c-1 | create:Pod:c-1",
	  .phase = "Creating the primary" },
	{ .name = "a writable non-primary is not fenced in sentinel mode",
	  .pods = { P1, { .serial = 2, .state = "primary" }, R3 },
	  .sens = THREE_ON(1),
	  .want = "" },
	{ .name = "switchover annotation: the primary's manager pauses, then SENTINEL FAILOVER; "
	          "recorded, annotation cleared",
	  .annotations = "{\"redis.io/switchover-to\":\"auto\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "switchover:c-1 | status:failover=Switchover | cluster | "
	          "event:SwitchoverStarted",
	  .phase = "Switching over through Sentinel" },
	{ .name = "switchover to a named replica: the same request, naming the pod (the primary's "
	          "manager steers Sentinel to it)",
	  .annotations = "{\"redis.io/switchover-to\":\"c-3\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "switchover:c-1 | status:failover=Switchover | cluster | "
	          "event:SwitchoverStarted",
	  .phase = "Switching over through Sentinel" },
	{ .name = "switchover to a pod that does not exist: waits, nothing asked",
	  .annotations = "{\"redis.io/switchover-to\":\"c-9\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "event:SwitchoverWaiting" },
	{ .name = "switchover to a parked pod (not a replica): waits",
	  .annotations = "{\"redis.io/switchover-to\":\"c-3\"}",
	  .pods = { P1, R2, { .serial = 3, .state = "parked" } },
	  .sens = THREE_ON(1),
	  .want = "event:SwitchoverWaiting" },
	{ .name = "switchover to the primary itself: not needed, annotation cleared",
	  .annotations = "{\"redis.io/switchover-to\":\"c-1\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "cluster | event:SwitchoverNotNeeded" },
	{ .name = "switchover annotation while the sentinels lack quorum: waits",
	  .annotations = "{\"redis.io/switchover-to\":\"c-2\"}",
	  .pods = { P1, R2, R3 },
	  .sens = { { .index = 1, .master = 1, .no_quorum = true },
	            { .index = 2, .master = 1, .no_quorum = true },
	            { .index = 3, .master = 1, .no_quorum = true } },
	  .want = "event:SwitchoverWaiting" },
	{ .name = "our request moved the master: SwitchoverCompleted",
	  .status = ST_SWITCHOVER(T_3S),
	  .pods = { { .serial = 1, .state = "replica" }, R2, { .serial = 3, .state = "primary" } },
	  .sens = { { .index = 1, .master = 3, .epoch = 1 },
	            { .index = 2, .master = 3, .epoch = 1 },
	            { .index = 3, .master = 3, .epoch = 1 } },
	  .want = "status:currentPrimary,targetPrimary,failover=null,lastFailover | "
	          "event:SwitchoverCompleted | patch:EndpointSlice:c-leader | "
	          "patch:Pod:c-3:role=primary | patch:Pod:c-1:role=replica" },
	{ .name = "our request still pending: wait",
	  .status = ST_SWITCHOVER(T_3S),
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "",
	  .phase = "Switching over through Sentinel" },
	{ .name = "our request never moved the master: given up",
	  .status = ST_SWITCHOVER(T_OLD),
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "status:failover=null | event:SwitchoverFailed" },
	{ .name = "restart request of the primary: Sentinel moves it first, annotation kept",
	  .annotations = "{\"redis.io/restart-instance\":\"c-1\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "switchover:c-1 | status:failover=Switchover | event:SwitchoverStarted | "
	          "event:InstanceRestartSwitchover" },
	{ .name = "restart request of a replica: its pod made again",
	  .annotations = "{\"redis.io/restart-instance\":\"c-3\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "delete:Pod:c-3 | cluster | event:InstanceRestart" },
	{ .name = "rolling update: replicas first",
	  .pods = { P1, R2, { .serial = 3, .state = "replica", .old_spec = true } },
	  .sens = THREE_ON(1),
	  .want = "delete:Pod:c-3 | event:RollingUpdate" },
	{ .name = "rolling update: the primary through its manager's safe switchover",
	  .pods = { { .serial = 1, .state = "primary", .old_spec = true }, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "switchover:c-1 | status:failover=Switchover | "
	          "event:SwitchoverStarted" },
	{ .name = "an outdated sentinel rolls once all are ready",
	  .pods = { P1, R2, R3 },
	  .sens = { S(1, 1), { .index = 2, .master = 1, .old_spec = true }, S(3, 1) },
	  .want = "delete:Pod:c-sentinel-2 | event:RollingUpdate" },
	{ .name = "scale down 5 → 3: the highest go, no reset while they go",
	  .pods = { P1, R2, R3 },
	  .sens = { { .index = 1, .master = 1, .known = 5 },
	            { .index = 2, .master = 1, .known = 5 },
	            { .index = 3, .master = 1, .known = 5 },
	            { .index = 4, .master = 1, .known = 5 },
	            { .index = 5, .master = 1, .known = 5 } },
	  .want = "delete:Pod:c-sentinel-4 | event:ScaleDown | delete:Pod:c-sentinel-5 | "
	          "event:ScaleDown" },
	{ .name = "a sentinel counting gone ones is reset",
	  .pods = { P1, R2, R3 },
	  .sens = { S(1, 1), { .index = 2, .master = 1, .known = 5 }, S(3, 1) },
	  .want = "sentinel/reset:c-sentinel-2? | patch:Pod:c-sentinel-2 | "
	          "event:SentinelReset" },
	{ .name = "no reset while a failover runs",
	  .pods = { P1, R2, R3 },
	  .sens = { { .index = 1, .master = 1, .failover = true },
	            { .index = 2, .master = 1, .known = 5 },
	            S(3, 1) },
	  .want = "" },
	{ .name = "no reset within 30 s of the last one",
	  .pods = { P1, R2, R3 },
	  .sens = { { .index = 1, .master = 1, .reset_at = T_3S },
	            { .index = 2, .master = 1, .known = 5 },
	            S(3, 1) },
	  .want = "" },
	{ .name = "hibernation: the sentinel pods go with the data pods",
	  .annotations = "{\"redis.io/hibernation\":\"on\"}",
	  .pods = { P1, R2, R3 },
	  .sens = THREE_ON(1),
	  .want = "delete:Pod:c-1 | delete:Pod:c-2 | delete:Pod:c-3 | delete:Pod:c-sentinel-1 | "
	          "delete:Pod:c-sentinel-2 | delete:Pod:c-sentinel-3 | event:Hibernating",
	  .phase = "Hibernated" },
	{ .name = "no reset while a sentinel pod is missing (it comes first)",
	  .pods = { P1, R2, R3 },
	  .sens = { S(1, 1), { .index = 2, .master = 1, .known = 4 } },
	  .want = "create:Pod:c-sentinel-3" },
};

/* The controller never fences, promotes or re-points in this mode; a switchover goes
 * only to the current primary's manager (which pauses it and asks Sentinel). */
static bool forbidden_op(const struct ctl_action *a, const char *primary)
{
	static const char *const ops[] = { "fence", "promote", "replicate", "unfence", NULL };

	if (strcmp(a->op, "switchover") == 0)
		return !primary || strcmp(a->name, primary) != 0;
	for (size_t i = 0; ops[i]; i++)
		if (strcmp(a->op, ops[i]) == 0)
			return true;
	return false;
}

START_TEST(sentinel_cases)
{
	const struct scenario *s = &cases[_i];
	struct world w;
	struct ctl_plan p;
	char *got;

	world_init(&w, s);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	got = signature(&p);
	ck_assert_msg(strcmp(got, s->want) == 0, "%s:\n  want %s\n  got  %s", s->name, s->want,
	              got);
	for (size_t i = 0; i < p.n; i++)
		ck_assert_msg(p.acts[i].kind != CTL_ACT_INSTANCE ||
		                      !forbidden_op(&p.acts[i], w.rc.status.current_primary),
		              "%s: %s in sentinel mode", s->name, p.acts[i].op);
	if (s->phase)
		ck_assert_msg(p.phase && strcmp(p.phase, s->phase) == 0, "%s: phase %s", s->name,
		              p.phase ? p.phase : "(none)");
	free(got);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* The named target's rules (controller/sentinel.h sentinel_target_refusal), first match
 * refuses; and the request that names it. */
static const struct {
	const char *name;
	struct data_def target; /* serial 0: no such pod */
	bool deleting, no_ip, silent, link_down;
	const char *want; /* NULL: accepted */
} targets[] = {
	{ "a linked replica", R3, false, false, false, false, NULL },
	{ "no such pod", { 0 }, false, false, false, false, "not a replica pod" },
	{ "the primary", P1, false, false, false, false, "not a replica pod" },
	{ "being deleted", R3, true, false, false, false, "being deleted" },
	{ "no IP", R3, false, true, false, false, "no IP" },
	{ "its manager silent", R3, false, false, true, false, "does not answer" },
	{ "parked",
	  { .serial = 3, .state = "parked" },
	  false,
	  false,
	  false,
	  false,
	  "not a replica" },
	{ "its link down", R3, false, false, false, true, "link to the primary is down" },
};

START_TEST(target_rules)
{
	struct scenario sc = { .pods = { P1, R2 }, .sens = THREE_ON(1) };
	struct plan_state st = { 0 };
	struct ctl_pod *t = NULL;
	struct world w;
	const char *why;

	if (targets[_i].target.serial && targets[_i].target.serial != 1)
		sc.pods[2] = targets[_i].target;
	world_init(&w, &sc);
	st.primary_pod = &w.pods[0];
	if (targets[_i].target.serial == 1)
		t = &w.pods[0];
	else if (targets[_i].target.serial)
		t = &w.pods[2];
	if (t) {
		t->deleting = targets[_i].deleting;
		if (targets[_i].no_ip)
			t->ip = NULL;
		if (targets[_i].silent)
			t->inst.seen = false;
		if (targets[_i].link_down)
			snprintf(t->inst.link, sizeof(t->inst.link), "down");
	}
	why = sentinel_target_refusal(&st, t);
	if (!targets[_i].want)
		ck_assert_msg(!why, "%s: refused: %s", targets[_i].name, why);
	else
		ck_assert_msg(why && strstr(why, targets[_i].want), "%s: %s", targets[_i].name,
		              why ? why : "(accepted)");
	world_release(&w);
}
END_TEST

START_TEST(target_named_in_request)
{
	struct scenario sc = { .pods = { P1, R2, R3 },
		               .sens = THREE_ON(1),
		               .annotations = "{\"redis.io/switchover-to\":\"c-3\"}" };
	json_t *body = NULL, *status = NULL;
	struct world w;
	struct ctl_plan p;

	world_init(&w, &sc);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	for (size_t i = 0; i < p.n; i++) {
		if (p.acts[i].kind == CTL_ACT_INSTANCE && strcmp(p.acts[i].op, "switchover") == 0)
			body = p.acts[i].obj;
		if (p.acts[i].kind == CTL_ACT_STATUS && json_object_get(p.acts[i].obj, "failover"))
			status = json_object_get(p.acts[i].obj, "failover");
	}
	ck_assert_ptr_nonnull(body);
	ck_assert_str_eq(jsonx_get_string(body, "pod"), "c-3");
	ck_assert_ptr_null(json_object_get(body, "host")); /* pod or host+port, not both */
	ck_assert_ptr_nonnull(status);
	ck_assert_str_eq(jsonx_get_string(status, "to"), "c-3");
	ctl_plan_release(&p);
	world_release(&w);
	/* auto: no pod named, Sentinel picks */
	sc.annotations = "{\"redis.io/switchover-to\":\"auto\"}";
	world_init(&w, &sc);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	for (size_t i = 0; i < p.n; i++)
		if (p.acts[i].kind == CTL_ACT_INSTANCE && strcmp(p.acts[i].op, "switchover") == 0)
			ck_assert_ptr_null(json_object_get(p.acts[i].obj, "pod"));
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* A password rotation past its grace: the old password is dropped on the sentinels (first:
 * they switch sentinel-pass) and the data pods; a sentinel whose manager does not answer
 * holds the drop back, as a data pod does. */
static const struct {
	const char *name;
	bool silent; /* c-sentinel-2 does not answer */
	const char *want;
} rotations[] = {
	{ "every pod answers", false,
	  "config:c-sentinel-1 | config:c-sentinel-2 | config:c-sentinel-3 | config:c-1 | "
	  "config:c-2 | config:c-3 | event:PasswordRotated | status:secretsResourceVersion" },
	{ "a sentinel does not answer", true, "" },
};

START_TEST(rotation_reaches_sentinels)
{
	struct scenario s = { .pods = { P1, R2, R3 },
		              .sens = THREE_ON(1),
		              .status = "{\"currentPrimary\":\"c-1\",\"targetPrimary\":\"c-1\","
		                        "\"secretsResourceVersion\":{\"c-auth\":\"1\"}}" };
	struct world w;
	struct ctl_plan p;
	char *got;

	s.sens[1].silent = rotations[_i].silent;
	world_init(&w, &s);
	w.v.auth_secret_rv = "2";
	w.v.auth_secret_seen_mono = NOW_MONO - cfg.rotation_grace_ms - 1;
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	got = signature(&p);
	ck_assert_msg(strcmp(got, rotations[_i].want) == 0, "%s:\n  want %s\n  got  %s",
	              rotations[_i].name, rotations[_i].want, got);
	for (size_t i = 0; i < p.n; i++)
		if (p.acts[i].kind == CTL_ACT_INSTANCE &&
		    strncmp(p.acts[i].name, "c-sentinel", 10) == 0)
			ck_assert(json_is_true(
			        json_object_get(p.acts[i].obj, API_INST_DROP_OLD_PASSWORDS)));
	free(got);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* The sentinel pod: PID 1 `instance --role sentinel`, emptyDir data, HTTPS with the
 * http-tls volume as a data pod (required, the annotation the poller reads), ports 26379
 * and 8000, label role=sentinel; the Services. */
/* How many entries of array a are named name. */
static int named(json_t *a, const char *name)
{
	int n = 0;

	for (size_t i = 0; i < json_array_size(a); i++)
		n += strcmp(jsonx_get_string(json_array_get(a, i), "name"), name) == 0;
	return n;
}

/* With server TLS the sentinel pod keeps the data pods' tls volume: TLS-only too. */
static void sentinel_tls_volume(struct world *w)
{
	json_t *pod, *c;

	w->rc.spec.tls_secret.name = "c-server";
	w->rc.spec.ca_secret.name = "c-ca";
	pod = desired_sentinel_pod(&w->rc, &cfg, 1);
	c = jsonx_get(pod, "spec.containers[0]");
	ck_assert_int_eq(named(jsonx_get(pod, "spec.volumes"), "tls"), 1);
	ck_assert_int_eq(named(json_object_get(c, "volumeMounts"), "tls"), 1);
	w->rc.spec.tls_secret.name = w->rc.spec.ca_secret.name = NULL;
	json_decref(pod);
}

START_TEST(shapes)
{
	static const struct scenario s = { .name = "shapes" };
	struct world w;
	json_t *pod, *svc, *any, *c, *np;
	char *cmd;

	world_init(&w, &s);
	pod = desired_sentinel_pod(&w.rc, &cfg, 2);
	c = jsonx_get(pod, "spec.containers[0]");
	cmd = json_dumps(json_object_get(c, "command"), JSON_COMPACT);
	ck_assert_str_eq(cmd,
	                 "[\"/controller/redis-operator\",\"instance\",\"--role\",\"sentinel\"]");
	free(cmd);
	ck_assert_str_eq(jsonx_get_string(pod, "metadata.name"), "c-sentinel-2");
	ck_assert_str_eq(jsonx_get_string(pod, "metadata.labels[\"redis.io/role\"]"), "sentinel");
	ck_assert_ptr_nonnull(jsonx_get(pod, "metadata.annotations[\"redis.io/http-tls\"]"));
	ck_assert_str_eq(jsonx_get_string(pod, "spec.volumes[0].name"), "data");
	ck_assert_ptr_nonnull(jsonx_get(pod, "spec.volumes[0].emptyDir"));
	for (size_t i = 0; i < json_array_size(jsonx_get(pod, "spec.volumes")); i++)
		ck_assert_ptr_null(
		        json_object_get(json_array_get(jsonx_get(pod, "spec.volumes"), i),
		                        "persistentVolumeClaim"));
	ck_assert_str_eq(jsonx_get_string(c, "readinessProbe.httpGet.scheme"), "HTTPS");
	ck_assert_str_eq(jsonx_get_string(c, "livenessProbe.httpGet.scheme"), "HTTPS");
	ck_assert_int_eq(json_integer_value(jsonx_get(c, "ports[0].containerPort")), 26379);
	ck_assert_str_eq(jsonx_get_string(c, "ports[0].name"), "sentinel");
	ck_assert_int_eq(named(json_object_get(c, "volumeMounts"), "http-tls"), 1);
	ck_assert_int_eq(named(jsonx_get(pod, "spec.volumes"), "http-tls"), 1);
	ck_assert_int_eq(named(json_object_get(c, "volumeMounts"), "users"), 0);
	ck_assert_int_eq(named(jsonx_get(pod, "spec.volumes"), "tls"), 0); /* no server TLS */
	ck_assert_int_eq(named(json_object_get(c, "env"), "REDIS_OPERATOR_HTTP_TLS"), 1);
	sentinel_tls_volume(&w);
	ck_assert_int_eq(desired_sentinel_index(&w.rc, "c-sentinel-2"), 2);
	ck_assert_int_eq(desired_sentinel_index(&w.rc, "c-2"), -1);
	ck_assert_int_eq(desired_sentinel_index(&w.rc, "c-sentinel-02"), -1);
	svc = desired_sentinel_service(&w.rc);
	ck_assert_str_eq(jsonx_get_string(svc, "metadata.name"), "c-sentinel");
	ck_assert_int_eq(json_integer_value(jsonx_get(svc, "spec.ports[0].port")), 26379);
	ck_assert_str_eq(jsonx_get_string(svc, "spec.selector[\"redis.io/role\"]"), "sentinel");
	np = desired_network_policy(&w.rc, &cfg);
	ck_assert_ptr_null(np); /* not enabled */
	any = desired_service(&w.rc, DESIRED_SVC_ANY);
	ck_assert_str_eq(jsonx_get_string(any, "spec.selector[\"app.kubernetes.io/component\"]"),
	                 "database");
	json_decref(pod);
	json_decref(svc);
	json_decref(any);
	world_release(&w);
}
END_TEST

static const char *condition(json_t *status, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach (json_object_get(status, "conditions"), i, c) {
		if (strcmp(jsonx_get_string(c, "type"), type) == 0)
			return jsonx_get_string(c, "status");
	}
	return NULL;
}

/* The in-place move: the pods of a standalone cluster keep their spec hash when it moves to
 * sentinel mode and scales (no rolling update: the managers follow without a restart); a
 * restart input still changes it. */
START_TEST(move_keeps_the_pods)
{
	static const struct scenario sa = { .name = "standalone",
		                            .spec = "{\"mode\":\"standalone\",\"instances\":1}" };
	static const struct scenario img = { .name = "image", .spec = "{\"imageName\":\"x:1\"}" };
	static const struct scenario sen = { .name = "sentinel" };
	char h_sa[DESIRED_HASH_LEN + 1], h_sen[DESIRED_HASH_LEN + 1], h_img[DESIRED_HASH_LEN + 1];
	struct world w;

	world_init(&w, &sa);
	ck_assert_int_eq(w.rc.spec.mode, API_MODE_STANDALONE);
	desired_spec_hash(&w.rc, &cfg, h_sa);
	world_release(&w);
	world_init(&w, &sen);
	ck_assert_int_eq(w.rc.spec.mode, API_MODE_SENTINEL);
	desired_spec_hash(&w.rc, &cfg, h_sen);
	world_release(&w);
	world_init(&w, &img);
	desired_spec_hash(&w.rc, &cfg, h_img);
	world_release(&w);
	ck_assert_str_eq(h_sa, h_sen);
	ck_assert_str_ne(h_sen, h_img);
}
END_TEST

/* The sentinels' PDB keeps as many as a failover needs: the larger of quorum and a
 * majority of spec.sentinel.count; none without enablePodDisruptionBudget or outside
 * sentinel mode. */
static const struct {
	const char *spec;
	int64_t min; /* 0: no PDB */
} pdb_cases[] = {
	{ "{}", 2 },
	{ "{\"sentinel\":{\"count\":5,\"quorum\":2}}", 3 },
	{ "{\"sentinel\":{\"count\":5,\"quorum\":4}}", 4 },
	{ "{\"sentinel\":{\"count\":7,\"quorum\":3}}", 4 },
	{ "{\"enablePodDisruptionBudget\":false}", 0 },
	{ "{\"mode\":\"standalone\"}", 0 },
};

START_TEST(pdb_sentinel)
{
	struct scenario s = { .name = "pdb", .spec = pdb_cases[_i].spec };
	struct world w;
	json_t *pdb;

	world_init(&w, &s);
	pdb = desired_pdb(&w.rc, DESIRED_PDB_SENTINEL);
	if (!pdb_cases[_i].min) {
		ck_assert_ptr_null(pdb);
	} else {
		ck_assert_str_eq(jsonx_get_string(pdb, "metadata.name"), "c-sentinel");
		ck_assert_str_eq(
		        jsonx_get_string(pdb, "spec.selector.matchLabels[\"redis.io/role\"]"),
		        "sentinel");
		ck_assert_int_eq(json_integer_value(jsonx_get(pdb, "spec.minAvailable")),
		                 pdb_cases[_i].min);
	}
	json_decref(pdb);
	world_release(&w);
}
END_TEST

/* With a NetworkPolicy, the sentinels reach each other and clients reach them. */
START_TEST(network_policy_sentinel_port)
{
	static const struct scenario s = { .name = "netpol",
		                           .spec = "{\"networkPolicy\":{\"enabled\":true}}" };
	struct world w;
	json_t *np;
	char *text;

	world_init(&w, &s);
	np = desired_network_policy(&w.rc, &cfg);
	text = json_dumps(jsonx_get(np, "spec.ingress"), JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_ptr_nonnull(strstr(
	        text,
	        "{\"from\":[{\"podSelector\":{\"matchLabels\":{\"redis.io/"
	        "cluster\":\"c\"}}}],\"ports\":[{\"port\":6379,\"protocol\":\"TCP\"},{\"port\":"
	        "8000,\"protocol\":\"TCP\"},{\"port\":26379,\"protocol\":\"TCP\"}]}"));
	ck_assert_ptr_nonnull(strstr(text, "{\"ports\":[{\"port\":6379,\"protocol\":\"TCP\"},{"
	                                   "\"port\":26379,\"protocol\":\"TCP\"}]}"));
	free(text);
	json_decref(np);
	world_release(&w);
}
END_TEST

/* Ready needs every sentinel ready (CKQUORUM) and naming the primary; the status lists
 * them with their view. */
START_TEST(status_gated_by_quorum)
{
	static const struct scenario ok = { .name = "ok",
		                            .pods = { P1, R2, R3 },
		                            .sens = THREE_ON(1) };
	static const struct scenario noq = {
		.name = "noq",
		.pods = { P1, R2, R3 },
		.sens = { S(1, 1), S(2, 1), { .index = 3, .master = 1, .no_quorum = true } },
	};
	struct world w;
	struct ctl_plan p;

	world_init(&w, &ok);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_str_eq(condition(p.status, "Ready"), "True");
	ck_assert_str_eq(condition(p.status, "SentinelsReady"), "True");
	ck_assert_int_eq(json_array_size(json_object_get(p.status, "sentinels")), 3);
	ck_assert_str_eq(jsonx_get_string(p.status, "sentinels[1].master"), "c-1");
	ck_assert_str_eq(jsonx_get_string(p.status, "sentinels[1].masterAddress"), "10.0.0.1:6379");
	ck_assert(json_is_true(jsonx_get(p.status, "sentinels[1].quorumOk")));
	ck_assert_int_eq(json_integer_value(jsonx_get(p.status, "instances")), 3);
	ctl_plan_release(&p);
	world_release(&w);

	world_init(&w, &noq);
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_str_eq(condition(p.status, "Ready"), "False");
	ck_assert_str_eq(condition(p.status, "SentinelsReady"), "False");
	ck_assert(json_is_false(jsonx_get(p.status, "sentinels[2].quorumOk")));
	ck_assert_str_eq(jsonx_get_string(p.status, "sentinels[2].message"),
	                 "NOQUORUM 1 usable Sentinels");
	ctl_plan_release(&p);
	world_release(&w);

	/* a sentinel that has not learnt the replicas yet could promote none */
	world_init(&w, &ok);
	w.sens[1].inst.sen.known_replicas = 0;
	ctl_plan_init(&p);
	ctl_plan_build(&w.v, &p);
	ck_assert_str_eq(condition(p.status, "Ready"), "False");
	ck_assert_int_eq(json_integer_value(jsonx_get(p.status, "sentinels[1].knownReplicas")), 0);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

/* What the sentinel manager encodes, the poller parses (api/instance_v1.h). */
START_TEST(parse_sentinel_status)
{
	struct api_inst_sentinel_status st = {
		.pod = "c-sentinel-1",
		.state = "running",
		.role = API_INST_ROLE_SENTINEL,
		.reason = "sentinel started",
		.ready = true,
		.engine = "redis",
		.version = "7.2.4",
		.server = { .pid = 42,
		            .up = true,
		            .role = API_INST_ROLE_SENTINEL,
		            .uptime_seconds = 3 },
		.has_sentinel = true,
		.sentinel = { .master_name = API_INST_SENTINEL_MASTER_NAME,
		              .master_host = "10.0.0.2",
		              .master_port = 6379,
		              .master_status = API_INST_MASTER_OK,
		              .failover_in_progress = true,
		              .config_epoch = 4,
		              .quorum = 2,
		              .quorum_ok = true,
		              .quorum_reason = "OK 3 usable Sentinels",
		              .sentinels = 3,
		              .replicas = 2 },
	};
	json_t *j = api_inst_sentinel_status_encode(&st);
	char *body = json_dumps(j, JSON_COMPACT);
	struct ctl_inst in = { 0 };
	struct err e = { 0 };

	ck_assert_int_eq(ctl_inst_parse_sentinel(body, strlen(body), &in, &e), 0);
	ck_assert_str_eq(in.role, "sentinel");
	ck_assert(in.ready && in.server_up && in.sen.has_view && in.sen.quorum_ok);
	ck_assert(in.sen.failover_in_progress);
	ck_assert_str_eq(in.sen.master_host, "10.0.0.2");
	ck_assert_int_eq(in.sen.master_port, 6379);
	ck_assert_int_eq(in.sen.config_epoch, 4);
	ck_assert_int_eq(in.sen.known_sentinels, 3);
	ck_assert_int_eq(ctl_inst_parse_sentinel("{}", 2, &in, &e), -EPROTO);
	free(body);
	json_decref(j);
}
END_TEST

/* The poller queues the cluster when a sentinel's view changes (controller/poller.c). */
START_TEST(sentinel_change_queues)
{
	struct ctl_inst a = { .seen = true, .ready = true };
	struct ctl_inst b;

	snprintf(a.role, sizeof(a.role), "%s", CTL_ROLE_SENTINEL);
	a.sen = (struct ctl_sentinel_obs){ .has_view = true,
		                           .master_port = 6379,
		                           .quorum_ok = true,
		                           .config_epoch = 1,
		                           .known_sentinels = 3,
		                           .known_replicas = 2 };
	snprintf(a.sen.master_host, sizeof(a.sen.master_host), "10.0.0.1");
	b = a;
	ck_assert(!ctl_inst_significant_change(&a, &b, 2));
	snprintf(b.sen.master_host, sizeof(b.sen.master_host), "10.0.0.2");
	ck_assert(ctl_inst_significant_change(&a, &b, 2));
	b = a;
	b.sen.failover_in_progress = true;
	ck_assert(ctl_inst_significant_change(&a, &b, 2));
	b = a;
	b.sen.known_replicas = 1;
	ck_assert(ctl_inst_significant_change(&a, &b, 2));
	b = a;
	b.sen.quorum_ok = false;
	ck_assert(ctl_inst_significant_change(&a, &b, 2));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_sentinel");
	TCase *t = tcase_create("sentinel");

	tcase_add_loop_test(t, sentinel_cases, 0, ARRAY_LEN(cases));
	tcase_add_loop_test(t, rotation_reaches_sentinels, 0, ARRAY_LEN(rotations));
	tcase_add_loop_test(t, target_rules, 0, ARRAY_LEN(targets));
	tcase_add_test(t, target_named_in_request);
	tcase_add_test(t, shapes);
	tcase_add_test(t, move_keeps_the_pods);
	tcase_add_test(t, network_policy_sentinel_port);
	tcase_add_loop_test(t, pdb_sentinel, 0, ARRAY_LEN(pdb_cases));
	tcase_add_test(t, status_gated_by_quorum);
	tcase_add_test(t, parse_sentinel_status);
	tcase_add_test(t, sentinel_change_queues);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

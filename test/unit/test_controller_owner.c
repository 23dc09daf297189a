/*
 * test_controller_owner: pods and PVCs carrying a cluster's labels are the cluster's only
 * when their controller owner reference has its uid (controller/owner.h).
 *
 * The view case: a healthy 1-instance cluster "c" (primary c-1) and, with the same
 * labels, a pod c-2 that claims to be a writable primary and a PVC c-2, neither owned by
 * "c" (made by hand, or left by a deleted namesake). Seen as the cluster's, c-2 would be
 * fenced as a split brain and deleted by the scale-down to 1; split off as foreign it is
 * not touched at all, not counted, listed in status.foreignPods (its PVC in
 * status.danglingPVCs), and announced by one Warning event each, until the status lists
 * them.
 */
#include <stdio.h>
#include <string.h>

#include "api/rediscluster.h"
#include "controller/desired.h"
#include "controller/actions.h"
#include "controller/failover_state.h"
#include "controller/owner.h"
#include "controller/plan.h"
#include "lib/jsonx.h"
#include "unit.h"

#define NOW_WALL 1795974083000LL
#define NOW_MONO 500000
#define UID      "u-1"

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

static json_t *parse(const char *text)
{
	json_t *j = NULL;

	ck_assert_msg(jsonx_loadb(text, strlen(text), 1 << 16, &j, NULL) == 0, "bad JSON: %s",
	              text);
	return j;
}

/* --- the predicate and the split -------------------------------------------------------- */

static const struct {
	const char *name, *refs; /* metadata.ownerReferences; NULL: none */
	bool owned;
} refs[] = {
	{ "no owner references", NULL, false },
	{ "empty list", "[]", false },
	{ "the cluster, controller", "[{\"uid\":\"" UID "\",\"controller\":true}]", true },
	{ "the cluster, not as controller", "[{\"uid\":\"" UID "\"}]", false },
	{ "the cluster, controller false", "[{\"uid\":\"" UID "\",\"controller\":false}]", false },
	{ "a deleted namesake", "[{\"uid\":\"u-0\",\"controller\":true,\"name\":\"c\"}]", false },
	{ "another owner first", "[{\"uid\":\"x\"},{\"uid\":\"" UID "\",\"controller\":true}]",
	  true },
	{ "not a list", "{\"uid\":\"" UID "\",\"controller\":true}", false },
};

START_TEST(owner_is)
{
	json_t *o = parse("{\"metadata\":{\"name\":\"c-1\"}}");

	if (refs[_i].refs)
		json_object_set_new(json_object_get(o, "metadata"), "ownerReferences",
		                    parse(refs[_i].refs));
	ck_assert_msg(ctl_owner_is(o, UID) == refs[_i].owned, "%s", refs[_i].name);
	ck_assert(!ctl_owner_is(o, ""));
	ck_assert(!ctl_owner_is(o, NULL));
	json_decref(o);
}
END_TEST

START_TEST(split_by_owner)
{
	json_t *all = parse("[{\"metadata\":{\"name\":\"c-1\",\"ownerReferences\":[{\"uid\":\"" UID
	                    "\",\"controller\":true}]}},"
	                    "{\"metadata\":{\"name\":\"c-2\"}},"
	                    "{\"metadata\":{\"name\":\"c-3\",\"ownerReferences\":[{\"uid\":\"" UID
	                    "\",\"controller\":true}]}},"
	                    "{\"metadata\":{\"name\":\"c-by-hand\",\"ownerReferences\":"
	                    "[{\"uid\":\"u-0\",\"controller\":true}]}}]");
	json_t *own, *foreign, *want = parse("[\"c-2\",\"c-by-hand\"]");

	ctl_owner_split(all, UID, &own, &foreign);
	ck_assert_int_eq(json_array_size(own), 2);
	ck_assert_ptr_eq(json_array_get(own, 0), json_array_get(all, 0)); /* same references */
	ck_assert_ptr_eq(json_array_get(own, 1), json_array_get(all, 2));
	ck_assert(json_equal(foreign, want));
	json_decref(own);
	json_decref(foreign);
	ctl_owner_split(NULL, UID, &own, &foreign);
	ck_assert_int_eq(json_array_size(own) + json_array_size(foreign), 0);
	json_decref(own);
	json_decref(foreign);
	json_decref(want);
	json_decref(all);
}
END_TEST

/* --- a view with a foreign pod and PVC ----------------------------------------------------- */

struct world {
	struct api_redis_cluster rc;
	json_t *obj;
	json_t *pods_json, *pvcs_json; /* as the caches have them: ours and foreign */
	json_t *own_pods, *own_pvcs, *foreign_pods, *foreign_pvcs;
	struct ctl_pod pods[4];
	struct ctl_pvc pvcs[4];
	struct ctl_view v;
};

static json_t *without_owner(json_t *obj)
{
	json_object_del(json_object_get(obj, "metadata"), "ownerReferences");
	return obj;
}

/* A pod that answers as a writable primary (c-1 holds the Lease). */
static void fill_pod(struct ctl_pod *p, json_t *o, size_t n)
{
	static char ips[4][32];
	struct ctl_inst *i = &p->inst;

	snprintf(ips[n], sizeof(ips[n]), "10.0.0.%zu", n + 1);
	p->obj = o;
	p->name = jsonx_get_string(o, "metadata.name");
	p->serial = ctl_serial_of("c", p->name);
	p->uid = p->name;
	p->ip = ips[n];
	p->phase = "Running";
	p->role_label = CTL_ROLE_PRIMARY;
	p->spec_hash = jsonx_get_string(o, "metadata.annotations[\"redis.io/spec-hash\"]");
	p->live_hash = jsonx_get_string(o, "metadata.annotations[\"redis.io/live-hash\"]");
	p->ready = true;
	i->seen = i->ready = i->server_up = true;
	i->lease_held = p->serial == 1;
	i->last_ok_mono = NOW_MONO - 100;
	snprintf(i->state, sizeof(i->state), "primary");
	snprintf(i->role, sizeof(i->role), "primary");
	snprintf(i->repl_id, sizeof(i->repl_id), "A");
	snprintf(i->link, sizeof(i->link), "none");
	i->offset = 100;
	i->lag_bytes = i->lag_seconds = -1;
}

static void add_children(struct world *w)
{
	const struct api_redis_cluster *rc = &w->rc;
	json_t **ch = w->v.child;

	ch[CTL_CHILD_SA] = desired_service_account(rc);
	ch[CTL_CHILD_ROLE] = desired_role(rc);
	ch[CTL_CHILD_ROLEBINDING] = desired_role_binding(rc);
	ch[CTL_CHILD_NETPOL] = desired_network_policy(rc, &cfg);
	ch[CTL_CHILD_AUTH_SECRET] = desired_auth_secret(rc);
	ch[CTL_CHILD_OPERATOR_SECRET] = desired_operator_secret(rc);
	ch[CTL_CHILD_SVC_LEADER] = desired_service(rc, DESIRED_SVC_LEADER);
	ch[CTL_CHILD_SVC_REPLICA] = desired_service(rc, DESIRED_SVC_REPLICA);
	ch[CTL_CHILD_SVC_ANY] = desired_service(rc, DESIRED_SVC_ANY);
	ch[CTL_CHILD_LEASE] = desired_lease(rc);
	ch[CTL_CHILD_OPERATOR_TLS] = desired_operator_tls_secret(rc);
	ch[CTL_CHILD_INSTANCE_TLS] = desired_instance_tls_secret(rc);
	ch[CTL_CHILD_LEADER_ENDPOINTS] =
	        desired_leader_endpoints(rc, "c-1", "c-1", "10.0.0.1", true);
}

/* split: the view as the reconciler builds it now; else every labelled pod and PVC, as
 * it did before owner references were checked. */
static void world_init(struct world *w, bool split, const char *status)
{
	struct err e = { 0 };
	json_t *pods, *pvcs, *o;
	size_t i;

	memset(w, 0, sizeof(*w));
	w->obj = parse("{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\","
	               "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"" UID "\","
	               "\"generation\":1,\"creationTimestamp\":\"2026-11-29T17:30:00Z\"},"
	               "\"spec\":{\"instances\":1}}");
	json_object_set_new(w->obj, "status", parse(status));
	ck_assert_msg(api_redis_cluster_decode(w->obj, &w->rc, &e) == 0, "%s", e.msg);
	w->pods_json = json_pack("[o,o]", desired_pod(&w->rc, &cfg, 1, CTL_ROLE_PRIMARY),
	                         without_owner(desired_pod(&w->rc, &cfg, 2, CTL_ROLE_PRIMARY)));
	w->pvcs_json =
	        json_pack("[o,o]", desired_pvc(&w->rc, 1), without_owner(desired_pvc(&w->rc, 2)));
	ctl_owner_split(w->pods_json, UID, &w->own_pods, &w->foreign_pods);
	ctl_owner_split(w->pvcs_json, UID, &w->own_pvcs, &w->foreign_pvcs);
	pods = split ? w->own_pods : w->pods_json;
	pvcs = split ? w->own_pvcs : w->pvcs_json;
	w->v = (struct ctl_view){ .rc = &w->rc,
		                  .obj = w->obj,
		                  .ns = "ns",
		                  .name = "c",
		                  .pods = w->pods,
		                  .pvcs = w->pvcs,
		                  .cfg = &cfg,
		                  .now_wall_ms = NOW_WALL,
		                  .now_mono_ms = NOW_MONO,
		                  .roles_epoch_mono = NOW_MONO - 1000,
		                  .password = "pw" };
	json_array_foreach (pods, i, o) {
		fill_pod(&w->pods[w->v.npods], o, w->v.npods);
		w->v.npods++;
	}
	json_array_foreach (pvcs, i, o) {
		w->pvcs[w->v.npvcs++] = (struct ctl_pvc){
			.name = jsonx_get_string(o, "metadata.name"), .serial = (int)i + 1, .obj = o
		};
	}
	if (split) {
		w->v.foreign_pods = w->foreign_pods;
		w->v.foreign_pvcs = w->foreign_pvcs;
	}
	add_children(w);
	w->v.lease = (struct ctl_lease){ .state = CTL_LEASE_HELD,
		                         .holder = "c-1",
		                         .ever_acquired = true };
	ctl_failover_read(w->obj, &w->v.fo);
}

static void world_release(struct world *w)
{
	for (int i = 0; i < CTL_CHILD_COUNT; i++)
		json_decref(w->v.child[i]);
	json_decref(w->pods_json);
	json_decref(w->pvcs_json);
	json_decref(w->own_pods);
	json_decref(w->own_pvcs);
	json_decref(w->foreign_pods);
	json_decref(w->foreign_pvcs);
	api_redis_cluster_release(&w->rc);
	json_decref(w->obj);
}

/* As controller/reconcile.c runs it: the events first, then the plan. */
static void plan(struct world *w, struct ctl_plan *p)
{
	ctl_plan_init(p);
	ctl_owner_events(&w->v, p);
	ctl_plan_build(&w->v, p);
}

/* Does any action other than an event act on the object named name? */
static bool touches(const struct ctl_plan *p, const char *name)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct ctl_action *a = &p->acts[i];

		if (a->kind != CTL_ACT_EVENT && a->name && strcmp(a->name, name) == 0)
			return true;
	}
	return false;
}

static size_t events(const struct ctl_plan *p, const char *reason)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++)
		n += p->acts[i].kind == CTL_ACT_EVENT && strcmp(p->acts[i].reason, reason) == 0;
	return n;
}

/* The scenario is one where acting on c-2 is what a cluster does with its own pod. */
START_TEST(seen_as_the_clusters_it_would_be_acted_on)
{
	struct world w;
	struct ctl_plan p;

	world_init(&w, false, "{\"currentPrimary\":\"c-1\"}");
	plan(&w, &p);
	ck_assert_msg(touches(&p, "c-2"), "the planner leaves its own extra primary alone");
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

START_TEST(foreign_pod_and_pvc_left_alone_and_reported)
{
	json_t *want_pods = parse("[\"c-2\"]");
	struct world w;
	struct ctl_plan p;

	world_init(&w, true, "{\"currentPrimary\":\"c-1\"}");
	ck_assert_int_eq(w.v.npods, 1);
	ck_assert_int_eq(w.v.npvcs, 1);
	plan(&w, &p);
	ck_assert_msg(!touches(&p, "c-2"), "an action on the foreign pod or PVC");
	for (size_t i = 0; i < p.n; i++)
		ck_assert_msg(p.acts[i].kind != CTL_ACT_INSTANCE ||
		                      strcmp(p.acts[i].ip, "10.0.0.2") != 0,
		              "a POST to the foreign pod's manager");
	ck_assert_int_eq(events(&p, "ForeignPod"), 1);
	ck_assert_int_eq(events(&p, "ForeignPVC"), 1);
	ck_assert_ptr_nonnull(p.status);
	ck_assert(json_equal(json_object_get(p.status, "foreignPods"), want_pods));
	ck_assert(json_equal(json_object_get(p.status, "danglingPVCs"), want_pods));
	ck_assert_int_eq(json_integer_value(json_object_get(p.status, "instances")), 1);
	ck_assert_int_eq(json_array_size(json_object_get(p.status, "instancesStatus")), 1);
	ctl_plan_release(&p);
	world_release(&w);
	json_decref(want_pods);
}
END_TEST

START_TEST(announced_once)
{
	struct world w;
	struct ctl_plan p;

	world_init(&w, true,
	           "{\"currentPrimary\":\"c-1\",\"foreignPods\":[\"c-2\"],"
	           "\"danglingPVCs\":[\"c-2\"]}");
	plan(&w, &p);
	ck_assert_int_eq(events(&p, "ForeignPod") + events(&p, "ForeignPVC"), 0);
	ck_assert(!touches(&p, "c-2"));
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

START_TEST(none_foreign_status_null)
{
	struct world w;
	struct ctl_plan p;
	json_t *st;

	world_init(&w, true, "{\"currentPrimary\":\"c-1\",\"foreignPods\":[\"c-9\"]}");
	json_array_clear(w.foreign_pods);
	json_array_clear(w.foreign_pvcs);
	plan(&w, &p);
	st = p.status;
	ck_assert_ptr_nonnull(st); /* the list shown earlier goes */
	ck_assert(json_is_null(json_object_get(st, "foreignPods")));
	ck_assert_int_eq(events(&p, "ForeignPod"), 0);
	ctl_plan_release(&p);
	world_release(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_owner");
	TCase *t = tcase_create("all");

	tcase_add_loop_test(t, owner_is, 0, ARRAY_LEN(refs));
	tcase_add_test(t, split_by_owner);
	tcase_add_test(t, seen_as_the_clusters_it_would_be_acted_on);
	tcase_add_test(t, foreign_pod_and_pvc_left_alone_and_reported);
	tcase_add_test(t, announced_once);
	tcase_add_test(t, none_foreign_status_null);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

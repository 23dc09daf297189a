/*
 * plan: the planner's steps (see plan.h). Each step is a function of the view; the
 * table at the end is the order. A step returns false when the plan must stop after
 * it (its actions have to take effect before anything later makes sense).
 *
 * Owned objects are compared with jsonx_contains (only the fields the controller
 * writes), so a step adds a patch only when something it owns differs, and a cluster
 * at rest produces an empty plan.
 */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/acl_config.h"
#include "controller/failover.h"
#include "controller/pki.h"
#include "controller/reload.h"
#include "controller/restart.h"
#include "controller/sentinel.h"
#include "controller/unsupported.h"
#include "lib/alloc.h"
#include "lib/jsonx.h"

#define REQUEUE_FAST_MS     500
#define REQUEUE_SLOW_MS     5000
#define ANSWER_REFRESHED_MS 10000 /* a poll answer younger than this is being refreshed */

static const char *annotation(const struct ctl_view *v, const char *key)
{
	return json_string_value(json_object_get(v->rc->meta.annotations, key));
}

/* Creates obj when absent, else patches the fields of `owned` (paths in obj) that differ. */
static void ensure(struct ctl_plan *p, const struct k8s_resource *res, json_t *have, json_t *want,
                   const char *const *owned)
{
	json_t *patch = json_object();

	if (!want) {
		json_decref(patch);
		return;
	}
	if (!have) {
		json_decref(patch);
		ctl_plan_create(p, res, want);
		return;
	}
	for (size_t i = 0; owned[i]; i++) {
		json_t *w = jsonx_get(want, owned[i]);

		if (w && !jsonx_contains(jsonx_get(have, owned[i]), w))
			jsonx_set_path(patch, owned[i], json_incref(w));
	}
	if (json_object_size(patch))
		ctl_plan_patch(p, res, jsonx_get_string(want, "metadata.name"), patch);
	else
		json_decref(patch);
	json_decref(want);
}

static const char *const own_meta[] = { "metadata.labels", "metadata.ownerReferences", NULL };
static const char *const own_spec[] = { "metadata.labels", "spec", NULL };
static const char *const own_role[] = { "metadata.labels", "rules", NULL };
static const char *const own_binding[] = { "metadata.labels", "subjects", NULL };
static const char *const own_data[] = { "metadata.labels", "data", NULL };

/* --- the failover module (failover.h): it is handed the primary and hands back what moved */

static struct failover_io io_of(const struct plan_state *s)
{
	return (struct failover_io){ .primary = s->primary, .primary_pod = s->primary_pod };
}

static void io_back(struct plan_state *s, const struct failover_io *io)
{
	s->primary = io->primary;
	s->primary_pod = io->primary_pod;
	if (io->phase)
		s->phase = io->phase;
	if (io->phase_reason)
		s->phase_reason = io->phase_reason;
	s->progressing |= io->progressing;
}

static bool sentinel_mode(const struct ctl_view *v)
{
	return v->rc->spec.mode == API_MODE_SENTINEL;
}

/* Failover, switchover and primary restart in flight, or a primary just confirmed down.
 * In sentinel mode Sentinel is the only promoter: the controller follows it instead
 * (controller/sentinel.h), and never starts a failover of its own. */
static bool step_failover(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	struct failover_io io = io_of(s);
	bool go;

	if (sentinel_mode(v))
		return sentinel_step_primary(v, s, p);
	go = failover_step(v, &io, p);

	io_back(s, &io);
	return go;
}

void plan_start_switchover(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                           const struct ctl_pod *target, const char *reason)
{
	struct failover_io io = io_of(s);

	failover_start_switchover(v, &io, p, target, reason);
	io_back(s, &io);
}

static void start_restart(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	struct failover_io io = io_of(s);

	failover_start_restart(v, &io, p);
	io_back(s, &io);
}

/* --- steps: the objects around the pods -------------------------------------------------- */

static bool step_mode(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	(void)p;
	if (v->rc->spec.mode == API_MODE_STANDALONE || sentinel_mode(v))
		return true;
	s->phase = "Unsupported";
	s->phase_reason = "only modes standalone and sentinel are implemented by this controller";
	return false;
}

static bool step_rbac(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	(void)s;
	ensure(p, &k8s_res_serviceaccounts, v->child[CTL_CHILD_SA], desired_service_account(v->rc),
	       own_meta);
	ensure(p, &k8s_res_roles, v->child[CTL_CHILD_ROLE], desired_role(v->rc), own_role);
	ensure(p, &k8s_res_rolebindings, v->child[CTL_CHILD_ROLEBINDING],
	       desired_role_binding(v->rc), own_binding);
	return true;
}

static bool step_netpol(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	json_t *want = desired_network_policy(v->rc, v->cfg);

	(void)s;
	if (want)
		ensure(p, &k8s_res_networkpolicies, v->child[CTL_CHILD_NETPOL], want, own_spec);
	else if (v->child[CTL_CHILD_NETPOL])
		ctl_plan_delete(p, &k8s_res_networkpolicies, v->rc->meta.name);
	return true;
}

static void random_secret(struct ctl_plan *p, json_t *obj)
{
	ctl_plan_create(p, &k8s_res_secrets, obj);
	p->acts[p->n - 1].fill_password = true;
	p->acts[p->n - 1].ignore_exists = true;
}

/* The applier generates the material (controller/pki.h). */
static void tls_secret(struct ctl_plan *p, json_t *obj, enum ctl_fill_tls fill)
{
	ctl_plan_create(p, &k8s_res_secrets, obj);
	p->acts[p->n - 1].fill_tls = fill;
	p->acts[p->n - 1].ignore_exists = true;
}

/* Re-issues a TLS Secret's material by a merge patch (controller/pki.h: renewal). */
static void tls_renew(struct ctl_plan *p, const struct ctl_view *v, const char *suffix,
                      enum ctl_fill_tls fill, const char *why)
{
	char name[CTL_NAME_MAX + 1];

	desired_name(v->rc, suffix, name, sizeof(name));
	ctl_plan_patch(p, &k8s_res_secrets, name, json_object());
	p->acts[p->n - 1].fill_tls = fill;
	ctl_plan_event(p, false, "CertificatesRenewed", "Secret %s/%s re-issued: %s", v->ns, name,
	               why);
}

/* The two TLS Secrets: made when missing, re-issued when due or signed by other CAs. */
static void tls_secrets(const struct ctl_view *v, struct ctl_plan *p)
{
	json_t *op = v->child[CTL_CHILD_OPERATOR_TLS], *inst = v->child[CTL_CHILD_INSTANCE_TLS];
	enum ctl_pki_renewal op_due = CTL_PKI_RENEW_NONE;
	char why[CTL_PKI_WHY_MAX];

	if (!op)
		tls_secret(p, desired_operator_tls_secret(v->rc), CTL_FILL_TLS_OPERATOR);
	else if ((op_due = ctl_pki_operator_due(op, v->now_wall_ms, why, sizeof(why))))
		tls_renew(p, v, DESIRED_OPERATOR_TLS, CTL_FILL_TLS_OPERATOR, why);
	if (!inst) /* after the operator's: signed by its CAs */
		tls_secret(p, desired_instance_tls_secret(v->rc), CTL_FILL_TLS_INSTANCE);
	else if (op && op_due != CTL_PKI_RENEW_CAS && /* new CAs: next round, from the new Secret */
	         ctl_pki_instance_due(inst, op, v->now_wall_ms, why, sizeof(why)))
		tls_renew(p, v, DESIRED_INSTANCE_TLS, CTL_FILL_TLS_INSTANCE, why);
}

static bool step_secrets(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	if (!v->rc->spec.auth_secret.name && !v->child[CTL_CHILD_AUTH_SECRET])
		random_secret(p, desired_auth_secret(v->rc));
	if (!v->child[CTL_CHILD_OPERATOR_SECRET])
		random_secret(p, desired_operator_secret(v->rc));
	tls_secrets(v, p);
	if (!v->auth_secret_missing)
		return true;
	s->phase = "Waiting for the auth Secret";
	s->phase_reason = "spec.authSecret names a Secret that does not exist";
	ctl_plan_event(p, true, "AuthSecretMissing", "Secret %s (spec.authSecret) does not exist",
	               v->rc->spec.auth_secret.name);
	ctl_plan_requeue(p, REQUEUE_SLOW_MS);
	return false;
}

static bool step_lease(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	(void)s;
	if (!v->child[CTL_CHILD_LEASE]) {
		ctl_plan_create(p, &k8s_res_leases, desired_lease(v->rc));
		p->acts[p->n - 1].ignore_exists = true;
	}
	return true;
}

static bool step_services(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	static const enum ctl_child slot[DESIRED_SVC_COUNT] = {
		[DESIRED_SVC_LEADER] = CTL_CHILD_SVC_LEADER,
		[DESIRED_SVC_REPLICA] = CTL_CHILD_SVC_REPLICA,
		[DESIRED_SVC_ANY] = CTL_CHILD_SVC_ANY,
	};
	static const char *const own_svc[] = { "metadata.labels", "spec.selector", "spec.ports",
		                               NULL };

	(void)s;
	for (int i = 0; i < DESIRED_SVC_COUNT; i++)
		ensure(p, &k8s_res_services, v->child[slot[i]],
		       desired_service(v->rc, (enum desired_service)i), own_svc);
	ensure(p, &k8s_res_services, v->child[CTL_CHILD_SVC_SENTINEL],
	       desired_sentinel_service(v->rc), own_svc);
	return true;
}

static bool step_hibernation(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	const char *h = annotation(v, CTL_ANN_HIBERNATION);
	bool any = false;

	if (!h || strcmp(h, "on") != 0)
		return true;
	for (size_t i = 0; i < v->npods; i++) {
		if (!v->pods[i].deleting) {
			ctl_plan_delete(p, &k8s_res_pods, v->pods[i].name);
			any = true;
		}
	}
	for (size_t i = 0; i < v->nsentinels; i++) /* they would call the master down */
		if (!v->sentinels[i].deleting)
			ctl_plan_delete(p, &k8s_res_pods, v->sentinels[i].name);
	if (any)
		ctl_plan_event(p, false, "Hibernating",
		               "hibernation on: deleting the pods, keeping "
		               "the PVCs");
	s->phase = "Hibernated";
	s->phase_reason = "annotation redis.io/hibernation=on";
	return false;
}

/* --- steps: pods ------------------------------------------------------------------------ */

static bool pod_ready(const struct ctl_pod *pod)
{
	return pod && !pod->deleting && (pod->ready || ctl_inst_is_writable_primary(&pod->inst));
}

static bool found_primary(const struct ctl_view *v)
{
	for (size_t i = 0; i < v->npods; i++)
		if (ctl_inst_is_writable_primary(&v->pods[i].inst) && v->pods[i].serial > 0)
			return true;
	return false;
}

/* spec.bootstrap: no pod before its backup is usable (controller/bootstrap.h). */
static bool bootstrap(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	ctl_bootstrap_judge(v, &s->boot);
	if (s->boot.wanted && !s->boot.done) {
		s->phase = "Bootstrapping from a backup";
		s->phase_reason = s->boot.message;
		s->progressing = true;
	}
	if (!s->boot.blocked)
		return true;
	s->phase = "Waiting for the bootstrap backup";
	s->phase_reason = s->boot.message;
	ctl_plan_requeue(p, s->boot.requeue_ms);
	return false;
}

/* After bootstrap: no primary is chosen before spec.bootstrap's backup is usable. */
static bool step_choose_primary(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	int best = 0;
	char now[CTL_TIME_MAX];

	if (!bootstrap(v, s, p))
		return false;

	if (v->rc->status.current_primary && *v->rc->status.current_primary) {
		s->primary = v->rc->status.current_primary;
		s->primary_pod = ctl_view_pod(v, s->primary);
		return true;
	}
	for (size_t i = 0; i < v->npods; i++)
		if (ctl_inst_is_writable_primary(&v->pods[i].inst) && v->pods[i].serial > 0)
			best = v->pods[i].serial;
	for (size_t i = 0; i < v->npvcs && !found_primary(v); i++)
		if (v->pvcs[i].serial > 0 && !v->pvcs[i].deleting &&
		    (!best || v->pvcs[i].serial < best))
			best = v->pvcs[i].serial;
	snprintf(s->primary_buf, sizeof(s->primary_buf), "%s-%d", v->rc->meta.name,
	         best ? best : 1);
	s->primary = s->primary_buf;
	s->primary_pod = ctl_view_pod(v, s->primary);
	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, now);
	/* Before the pod exists: its instance manager boots as primary only because of this. */
	ctl_plan_status(p, json_pack("{s:s,s:s}", "currentPrimary", s->primary, "targetPrimary",
	                             s->primary));
	ctl_plan_event(p, false, "PrimarySelected", "%s will be the first primary", s->primary);
	s->progressing = true;
	return true;
}

struct slots {
	int keep[128];
	size_t nkeep;
	int all[256];
	size_t nall;
};

static void add_serial(struct slots *sl, int serial)
{
	if (serial <= 0)
		return;
	for (size_t i = 0; i < sl->nall; i++)
		if (sl->all[i] == serial)
			return;
	if (sl->nall < sizeof(sl->all) / sizeof(sl->all[0]))
		sl->all[sl->nall++] = serial;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static const struct ctl_pvc *pvc_of(const struct ctl_view *v, int serial)
{
	for (size_t i = 0; i < v->npvcs; i++)
		if (v->pvcs[i].serial == serial)
			return &v->pvcs[i];
	return NULL;
}

static const struct ctl_pod *pod_of(const struct ctl_view *v, int serial)
{
	for (size_t i = 0; i < v->npods; i++)
		if (v->pods[i].serial == serial)
			return &v->pods[i];
	return NULL;
}

/* The highest serial a foreign pod or PVC (owner.h) holds: new instances go above it,
 * so that a hand-made `<cluster>-N` cannot block the next create. */
static int foreign_max(const struct ctl_view *v)
{
	json_t *const lists[] = { v->foreign_pods, v->foreign_pvcs };
	int max = 0;

	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < json_array_size(lists[l]); i++) {
			int n = ctl_serial_of(v->rc->meta.name,
			                      json_string_value(json_array_get(lists[l], i)));

			if (n > max)
				max = n;
		}
	return max;
}

/* Which serials run: the primary's, then the lowest others, then new ones. */
static void plan_slots(const struct ctl_view *v, const struct plan_state *s, struct slots *sl)
{
	int primary = ctl_serial_of(v->rc->meta.name, s->primary);
	int64_t want = v->rc->spec.instances;
	int next, taken = foreign_max(v);

	memset(sl, 0, sizeof(*sl));
	for (size_t i = 0; i < v->npods; i++)
		add_serial(sl, v->pods[i].serial);
	for (size_t i = 0; i < v->npvcs; i++)
		add_serial(sl, v->pvcs[i].serial);
	add_serial(sl, primary);
	qsort(sl->all, sl->nall, sizeof(int), cmp_int);
	if (want > (int64_t)(sizeof(sl->keep) / sizeof(sl->keep[0])))
		want = sizeof(sl->keep) / sizeof(sl->keep[0]);
	if (primary > 0)
		sl->keep[sl->nkeep++] = primary;
	for (size_t i = 0; i < sl->nall && (int64_t)sl->nkeep < want; i++) {
		const struct ctl_pvc *pvc = pvc_of(v, sl->all[i]);

		if (sl->all[i] != primary && !(pvc && pvc->deleting))
			sl->keep[sl->nkeep++] = sl->all[i];
	}
	next = (sl->nall && sl->all[sl->nall - 1] > taken ? sl->all[sl->nall - 1] : taken) + 1;
	while ((int64_t)sl->nkeep < want)
		sl->keep[sl->nkeep++] = next++;
}

static bool kept(const struct slots *sl, int serial)
{
	for (size_t i = 0; i < sl->nkeep; i++)
		if (sl->keep[i] == serial)
			return true;
	return false;
}

/* boot: the bootstrap's judgement for the first primary (restore source); NULL: none. */
static void create_instance(const struct ctl_view *v, struct ctl_plan *p, int serial,
                            const char *role, const struct ctl_bootstrap *boot)
{
	if (v->rc->spec.storage.type != API_STORAGE_EMPTYDIR && !pvc_of(v, serial)) {
		ctl_plan_create(p, &k8s_res_pvcs, desired_pvc(v->rc, serial));
		p->acts[p->n - 1].ignore_exists = true;
	}
	ctl_plan_create(p, &k8s_res_pods,
	                boot && boot->restore ? desired_bootstrap_pod(v->rc, v->cfg, serial,
	                                                              boot->restore, boot->secret)
	                                      : desired_pod(v->rc, v->cfg, serial, role));
}

/* Highest serials go first (the slots keep the lowest); Retain keeps their PVCs, which a
 * later scale-up reuses (the lowest serials with a PVC are kept first). */
static void scale_down(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                       const struct slots *sl)
{
	bool retain = v->rc->spec.storage.pvc_retention == API_PVC_RETAIN;

	for (size_t i = sl->nall; i-- > 0;) {
		const struct ctl_pod *pod = pod_of(v, sl->all[i]);
		const struct ctl_pvc *pvc = pvc_of(v, sl->all[i]);

		if (kept(sl, sl->all[i]) || (pod && strcmp(pod->name, s->primary) == 0))
			continue;
		if (pod && !pod->deleting) {
			ctl_plan_delete(p, &k8s_res_pods, pod->name);
			ctl_plan_event(p, false, "ScaleDown", "removing replica %s%s", pod->name,
			               retain ? " (its PVC is kept: pvcRetention Retain)" : "");
		}
		if (pvc && !pvc->deleting && !retain)
			ctl_plan_delete(p, &k8s_res_pvcs, pvc->name);
		if (pod || (pvc && !retain))
			s->progressing = true; /* a retained PVC alone is at rest (dangling) */
	}
}

/*
 * PVCs grow in place (the storage class must allow expansion); they never shrink. The
 * storage class's resizer then raises status.capacity; until every kept PVC shows the
 * size asked for, the status says the storage is being resized.
 */
static void grow_pvcs(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                      const struct slots *sl)
{
	const struct api_quantity *want = &v->rc->spec.storage.size;
	size_t growing = 0;

	if (v->rc->spec.storage.type == API_STORAGE_EMPTYDIR || !want->valid || !want->text)
		return;
	for (size_t i = 0; i < v->npvcs; i++) {
		const struct ctl_pvc *pvc = &v->pvcs[i];

		if (pvc->deleting || !pvc->size || !kept(sl, pvc->serial))
			continue;
		if (pvc->capacity && pvc->capacity < pvc->size && pvc->size >= want->value)
			growing++; /* asked for earlier, not there yet */
		if (pvc->size >= want->value)
			continue;
		ctl_plan_patch(p, &k8s_res_pvcs, pvc->name,
		               json_pack("{s:{s:{s:{s:s}}}}", "spec", "resources", "requests",
		                         "storage", want->text));
		ctl_plan_event(p, false, "StorageResized", "growing %s to %s", pvc->name,
		               want->text);
		growing++;
	}
	if (!growing)
		return; /* a PVC's status update queues the cluster again */
	s->progressing = true;
	s->phase = s->phase ? s->phase : "Resizing storage";
	s->phase_reason = s->phase_reason ? s->phase_reason
	                                  : "waiting for the PVCs' capacity to reach "
	                                    "spec.storage.size (the storage class's resizer)";
}

/* --- PVCs left behind ------------------------------------------------------------------- */

static bool deleted_by(const struct ctl_plan *p, const char *pvc)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->acts[i].kind == CTL_ACT_DELETE && p->acts[i].res == &k8s_res_pvcs &&
		    strcmp(p->acts[i].name, pvc) == 0)
			return true;
	return false;
}

/*
 * A data pod mounts the PVC of its own name, so a PVC is in use while the pod of its
 * serial exists. One the controller keeps (a slot it runs, or will run again after
 * hibernation) is not dangling either; nor is one being deleted.
 */
static bool dangling(const struct ctl_view *v, const struct slots *sl, const struct ctl_plan *p,
                     const struct ctl_pvc *pvc)
{
	if (pvc->deleting || deleted_by(p, pvc->name))
		return false;
	if (v->rc->spec.storage.type == API_STORAGE_EMPTYDIR || pvc->serial <= 0)
		return true; /* never mounted by this cluster's pods */
	return !pod_of(v, pvc->serial) && !kept(sl, pvc->serial);
}

json_t *plan_dangling_pvcs(const struct ctl_view *v, const struct plan_state *s,
                           const struct ctl_plan *p)
{
	json_t *names = json_array();
	struct slots sl;

	plan_slots(v, s, &sl);
	for (size_t i = 0; i < v->npvcs && json_array_size(names) < PLAN_DANGLING_MAX; i++)
		if (dangling(v, &sl, p, &v->pvcs[i]))
			json_array_append_new(names, json_string(v->pvcs[i].name));
	return names;
}

static bool step_pods(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	int primary = ctl_serial_of(v->rc->meta.name, s->primary);
	struct slots sl;

	plan_slots(v, s, &sl);
	if (!s->primary_pod && primary > 0 && sentinel_holds_primary(v, s)) {
		s->phase = "Waiting for Sentinel to promote a replica";
		s->progressing = true;
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return true; /* the sentinel pods, labels... go on */
	}
	if (!s->primary_pod && primary > 0 && v->lease.state == CTL_LEASE_HELD &&
	    strcmp(v->lease.holder, s->primary) == 0) {
		/* its old incarnation may still run: its release (or expiry) comes first */
		s->phase = "Waiting for the old primary to stop";
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return false;
	}
	if (!s->primary_pod && primary > 0) {
		create_instance(v, p, primary, CTL_ROLE_PRIMARY, &s->boot);
		s->phase = "Creating the primary";
		s->progressing = true;
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return false; /* replicas, labels, PDBs... once it exists */
	}
	if (!v->fo.active)
		scale_down(v, s, p, &sl);
	grow_pvcs(v, s, p, &sl);
	if (!pod_ready(s->primary_pod)) {
		if (!s->phase)
			s->phase = "Waiting for the primary";
		ctl_plan_requeue(p, REQUEUE_SLOW_MS);
		return true;
	}
	for (size_t i = 0; i < sl.nkeep; i++) {
		const struct ctl_pod *pod = pod_of(v, sl.keep[i]);
		const char *ph = pod ? pod->phase : NULL;

		if (sl.keep[i] == primary)
			continue;
		if (!pod) {
			create_instance(v, p, sl.keep[i], CTL_ROLE_REPLICA, NULL);
			s->progressing = true;
		} else if (!pod->deleting && ph &&
		           (strcmp(ph, "Failed") == 0 || strcmp(ph, "Succeeded") == 0)) {
			ctl_plan_delete(p, &k8s_res_pods, pod->name);
			ctl_plan_event(p, true, "PodRecreated", "pod %s ended (%s): recreating it",
			               pod->name, ph);
		}
	}
	return true;
}

/* Sentinel mode: the sentinel pods (controller/sentinel.h). */
static bool step_sentinels(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	return sentinel_step_pods(v, s, p);
}

/* --- steps: keeping the instances in line -------------------------------------------- */

static bool step_labels(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	failover_leader_endpoints(v, p, s->primary_pod);
	failover_label(p, s->primary_pod, CTL_ROLE_PRIMARY); /* first: see failover_label */
	for (size_t i = 0; i < v->npods; i++)
		if (strcmp(v->pods[i].name, s->primary) != 0)
			failover_label(p, &v->pods[i], CTL_ROLE_REPLICA);
	return true;
}

/* Holds the primary Lease now (a switchover's target between its promote and the status
 * naming it current primary). */
static bool lease_holder(const struct ctl_view *v, const struct ctl_pod *pod)
{
	return v->lease.state == CTL_LEASE_HELD && strcmp(v->lease.holder, pod->name) == 0;
}

/*
 * Any other instance whose SERVER reports master without a confirmed fence is fenced,
 * whatever its manager calls itself: only the current primary and the Lease holder may
 * be writable.
 */
static bool step_split_brain(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	if (sentinel_mode(v))
		return true; /* Sentinel demotes a returning old master (docs/sentinel.md) */
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (strcmp(pod->name, s->primary) == 0 || !pod->ip || lease_holder(v, pod) ||
		    !ctl_inst_current(v, &pod->inst) || !ctl_inst_server_writable(&pod->inst))
			continue;
		ctl_plan_instance(p, pod, "fence",
		                  ctl_body_fence("split brain: not status.currentPrimary"));
		ctl_plan_event(p, true, "SplitBrainFenced",
		               "%s claimed to be primary while %s is the current primary: fenced",
		               pod->name, s->primary);
	}
	return true;
}

static bool step_user_fencing(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	(void)s;
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];
		bool want = failover_user_fenced(v, pod->name);
		bool ours = strcmp(pod->inst.fence_reason, CTL_USER_FENCE_REASON) == 0;

		if (pod->deleting || !pod->ip || !ctl_inst_current(v, &pod->inst))
			continue;
		if (want && !pod->inst.fenced) {
			ctl_plan_instance(p, pod, "fence", ctl_body_fence(CTL_USER_FENCE_REASON))
			        ->optional = true;
			ctl_plan_event(p, false, "Fenced", "%s fenced as requested", pod->name);
		} else if (!want && pod->inst.fenced && ours) {
			ctl_plan_instance(p, pod, "unfence", NULL)->optional = true;
			ctl_plan_event(p, false, "Unfenced", "%s unfenced as requested", pod->name);
		}
	}
	return true;
}

static bool step_follow(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	const struct ctl_pod *pp = s->primary_pod;

	if (sentinel_mode(v))
		return true; /* Sentinel re-points the replicas */
	if (pp && pp->ip && ctl_inst_current(v, &pp->inst) &&
	    ctl_inst_is_writable_primary(&pp->inst))
		failover_follow(v, p, pp, NULL);
	return true;
}

static bool rolled_out(const struct ctl_pod *pod, const struct plan_state *s)
{
	return pod->spec_hash && strcmp(pod->spec_hash, s->spec_hash) == 0;
}

static bool step_live(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	size_t pushed = 0;

	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod->deleting || !pod->ip || !pod->ready || !ctl_inst_ok(&pod->inst) ||
		    !rolled_out(pod, s) ||
		    (pod->live_hash && strcmp(pod->live_hash, s->live_hash) == 0))
			continue;
		ctl_plan_instance(p, pod, "config", desired_live_config(v->rc));
		ctl_plan_patch(p, &k8s_res_pods, pod->name,
		               json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
		                         CTL_ANN_LIVE_HASH, s->live_hash));
		pushed++;
	}
	if (pushed)
		ctl_plan_event(p, false, "ConfigApplied",
		               "live configuration %s applied to %zu instance(s) without restart",
		               s->live_hash, pushed);
	return true;
}

/*
 * The auth Secret changed: the instance managers add the new password as soon as their
 * Secret volume shows it (old and new both work), and the connection Secret follows
 * (step_connection). Once every pod had the rotation grace to see it, the old password
 * is dropped everywhere (the sentinel pods first: controller/sentinel.h), and the
 * Secret's resourceVersion is recorded in the status.
 */
static bool step_password(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	char name[CTL_NAME_MAX + 1];
	const char *had;
	int64_t left;
	json_t *body;

	desired_auth_secret_name(v->rc, name, sizeof(name));
	had = json_string_value(json_object_get(v->rc->status.secrets_resource_version, name));
	if (!v->auth_secret_rv || (had && strcmp(had, v->auth_secret_rv) == 0))
		return true;
	if (had) {
		left = v->cfg->rotation_grace_ms - (v->now_mono_ms - v->auth_secret_seen_mono);
		if (left > 0) {
			s->progressing = true;
			ctl_plan_requeue(p, left);
			return true;
		}
		for (size_t i = 0; i < v->npods; i++) {
			const struct ctl_pod *pod = &v->pods[i];

			if (pod->deleting)
				continue;
			if (!pod->ip || !pod->ready || !ctl_inst_ok(&pod->inst)) {
				ctl_plan_requeue(p, REQUEUE_SLOW_MS);
				return true; /* every pod first: a pod left out keeps the old one */
			}
		}
		if (sentinel_rotation_blocked(v)) {
			ctl_plan_requeue(p, REQUEUE_SLOW_MS);
			return true;
		}
		sentinel_drop_old_passwords(v, p); /* first: they switch sentinel-pass */
		for (size_t i = 0; i < v->npods; i++) {
			if (v->pods[i].deleting)
				continue;
			body = desired_live_config(v->rc);
			json_object_set_new(body, API_INST_DROP_OLD_PASSWORDS, json_true());
			ctl_plan_instance(p, &v->pods[i], "config", body);
		}
		ctl_plan_event(p, false, "PasswordRotated",
		               "Secret %s changed: old passwords dropped on every instance", name);
	}
	ctl_plan_status(p,
	                json_pack("{s:{s:s}}", "secretsResourceVersion", name, v->auth_secret_rv));
	return true;
}

static const struct ctl_pod *switchover_target(const struct ctl_view *v, const struct plan_state *s,
                                               const char *want)
{
	const struct ctl_pod *t;

	if (strcmp(want, "auto") == 0)
		return failover_elect(v, s->primary,
		                      s->primary_pod ? s->primary_pod->inst.repl_id : NULL);
	t = ctl_view_pod(v, want);
	if (!t || t->deleting || !t->ip || !ctl_inst_ok(&t->inst) ||
	    strcmp(t->inst.state, "replica") != 0 || strcmp(t->inst.link, "up") != 0)
		return NULL;
	return t;
}

static bool step_switchover_request(const struct ctl_view *v, struct plan_state *s,
                                    struct ctl_plan *p)
{
	const char *want = annotation(v, CTL_ANN_SWITCHOVER);
	const struct ctl_pod *t;
	const char *why;

	if (!want)
		return true;
	if (sentinel_mode(v) && strcmp(want, s->primary) != 0) {
		if (sentinel_start_switchover(v, s, p, "requested", true, want, &why))
			return false;
		ctl_plan_event(p, true, "SwitchoverWaiting", "switchover through Sentinel: %s",
		               why);
		ctl_plan_requeue(p, REQUEUE_SLOW_MS);
		return true;
	}
	if (strcmp(want, s->primary) == 0) {
		ctl_plan_add(p, CTL_ACT_CLUSTER)->obj =
		        json_pack("{s:{s:{s:n}}}", "metadata", "annotations", CTL_ANN_SWITCHOVER);
		ctl_plan_event(p, false, "SwitchoverNotNeeded", "%s is already the primary", want);
		return true;
	}
	if (!pod_ready(s->primary_pod) || !ctl_inst_is_writable_primary(&s->primary_pod->inst) ||
	    !(t = switchover_target(v, s, want))) {
		ctl_plan_event(p, true, "SwitchoverWaiting",
		               "switchover to %s: waiting for a ready primary and a linked replica",
		               want);
		ctl_plan_requeue(p, REQUEUE_SLOW_MS);
		return true;
	}
	plan_start_switchover(v, s, p, t, "requested");
	return false;
}

/* --- rolling update ------------------------------------------------------------------ */

static bool caught_up(const struct ctl_view *v, const struct ctl_pod *pod)
{
	const struct ctl_inst *i = &pod->inst;

	if (strcmp(i->state, "primary") == 0)
		return true;
	return strcmp(i->link, "up") == 0 && i->lag_bytes >= 0 &&
	       i->lag_bytes <= v->cfg->max_lag_bytes;
}

/* Every pod exists, is Ready, answers and is caught up: one may restart. */
bool plan_all_settled(const struct ctl_view *v)
{
	size_t live = 0;

	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod->deleting || !pod->ready || !ctl_inst_ok(&pod->inst) || !caught_up(v, pod))
			return false;
		live++;
	}
	return (int64_t)live == v->rc->spec.instances;
}

static const struct ctl_pod *most_lagging_outdated(const struct ctl_view *v,
                                                   const struct plan_state *s)
{
	const struct ctl_pod *best = NULL;

	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod == s->primary_pod || rolled_out(pod, s))
			continue;
		if (!best || pod->inst.lag_bytes > best->inst.lag_bytes ||
		    (pod->inst.lag_bytes == best->inst.lag_bytes && pod->serial > best->serial))
			best = pod;
	}
	return best;
}

static const struct ctl_pod *best_updated_replica(const struct ctl_view *v,
                                                  const struct plan_state *s)
{
	const struct ctl_pod *best = NULL;

	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod == s->primary_pod || !rolled_out(pod, s) || !pod->ready ||
		    strcmp(pod->inst.link, "up") != 0 || failover_user_fenced(v, pod->name))
			continue;
		if (!best || pod->inst.offset > best->inst.offset)
			best = pod;
	}
	return best;
}

/* Sentinel moves the primary away (the only promoter); the old one then rolls as a
 * replica. */
static bool update_primary_sentinel(const struct ctl_view *v, struct plan_state *s,
                                    struct ctl_plan *p)
{
	const char *why;

	if (sentinel_start_switchover(v, s, p, "rolling update", false, NULL, &why))
		return false;
	s->phase_reason = why;
	ctl_plan_requeue(p, REQUEUE_SLOW_MS);
	return true;
}

static bool update_primary(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	const char *approve = annotation(v, CTL_ANN_APPROVE);
	bool approved = approve && strcmp(approve, "true") == 0;
	const struct ctl_pod *t = best_updated_replica(v, s);
	bool ephemeral = v->rc->spec.storage.type == API_STORAGE_EMPTYDIR;

	if (v->rc->spec.primary_update_strategy == API_UPDATE_SUPERVISED && !approved) {
		s->phase = "Waiting for the user to approve the primary's update";
		s->phase_reason = "set annotation redis.io/approve-primary-update=true";
		return true;
	}
	if (approved)
		ctl_plan_add(p, CTL_ACT_CLUSTER)->obj =
		        json_pack("{s:{s:{s:n}}}", "metadata", "annotations", CTL_ANN_APPROVE);
	if (sentinel_mode(v))
		return update_primary_sentinel(v, s, p);
	if (t && (v->rc->spec.primary_update_method != API_UPDATE_RESTART || ephemeral)) {
		plan_start_switchover(v, s, p, t, "rolling update");
		return false;
	}
	if (ephemeral && !approved) {
		s->phase = "Primary update skipped";
		s->phase_reason = "restarting an emptyDir primary loses its data; approve it with "
		                  "redis.io/approve-primary-update=true";
		ctl_plan_event(p, true, "PrimaryRestartSkipped", "%s", s->phase_reason);
		return true;
	}
	start_restart(v, s, p);
	return false;
}

static bool step_rolling(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	const struct ctl_pod *victim;
	bool outdated = false;

	for (size_t i = 0; i < v->npods; i++)
		outdated |= !v->pods[i].deleting && !rolled_out(&v->pods[i], s);
	if (!outdated)
		return true;
	s->progressing = true;
	s->phase = "Upgrading";
	if (sentinel_mode(v) && v->fo.active) {
		s->phase_reason = "waiting for the move Sentinel was asked for";
		return true;
	}
	if (!plan_all_settled(v)) {
		s->phase_reason = "waiting for every instance to be ready and caught up";
		ctl_plan_requeue(p, REQUEUE_SLOW_MS);
		return true;
	}
	victim = most_lagging_outdated(v, s);
	if (!victim)
		return update_primary(v, s, p);
	ctl_plan_delete(p, &k8s_res_pods, victim->name);
	ctl_plan_event(p, false, "RollingUpdate", "restarting replica %s with the new spec",
	               victim->name);
	return false;
}

/* --- PDBs and the connection Secret --------------------------------------------------- */

static bool step_pdb(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	static const struct {
		enum desired_pdb which;
		enum ctl_child slot;
		const char *suffix;
	} pdbs[] = { { DESIRED_PDB_PRIMARY, CTL_CHILD_PDB_PRIMARY, "-primary" },
		     { DESIRED_PDB_REPLICA, CTL_CHILD_PDB_REPLICA, "-replica" },
		     { DESIRED_PDB_SENTINEL, CTL_CHILD_PDB_SENTINEL, "-sentinel" } };
	char name[CTL_NAME_MAX + 1];

	(void)s;
	for (size_t i = 0; i < sizeof(pdbs) / sizeof(pdbs[0]); i++) {
		json_t *want = desired_pdb(v->rc, pdbs[i].which);

		if (want) {
			ensure(p, &k8s_res_pdbs, v->child[pdbs[i].slot], want, own_spec);
		} else if (v->child[pdbs[i].slot]) {
			desired_name(v->rc, pdbs[i].suffix, name, sizeof(name));
			ctl_plan_delete(p, &k8s_res_pdbs, name);
		}
	}
	return true;
}

static bool step_connection(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	json_t *want = desired_connection_secret_ca(v->rc, v->password, v->tls_ca_b64);

	(void)s;
	if (want)
		ensure(p, &k8s_res_secrets, v->child[CTL_CHILD_CONN_SECRET], want, own_data);
	return true;
}

/* --- the table ----------------------------------------------------------------------- */

static bool (*const steps[])(const struct ctl_view *, struct plan_state *, struct ctl_plan *) = {
	step_mode,
	step_rbac,
	step_netpol,
	step_secrets,
	step_lease,
	step_services,
	step_hibernation,
	step_choose_primary,
	step_failover,
	step_pods,
	step_sentinels, /* sentinel mode only */
	step_labels,
	step_split_brain,
	step_user_fencing,
	step_follow,
	step_live,
	step_password,
	ctl_reload_step, /* controller/reload.h */
	step_switchover_request,
	ctl_restart_step, /* controller/restart.h */
	step_rolling,
	step_pdb,
	step_connection,
};

/*
 * A pod answered, but before the last role change: the steps do not use that answer for
 * role decisions (ctl_inst_current), and the poll that replaces it queues nothing when
 * the answer itself did not change. So look again after that poll, or the step that
 * skipped it (a replica to repoint, the new primary to follow, a split brain to fence)
 * waits for the resync. Only for answers younger than ANSWER_REFRESHED_MS: an older one
 * is not being refreshed (the poller skips a cluster without TLS material and queues it
 * itself), and looking again every REQUEUE_FAST_MS would change nothing.
 */
static void wait_for_current_answers(const struct ctl_view *v, struct ctl_plan *p)
{
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_inst *in = &v->pods[i].inst;

		if (ctl_inst_ok(in) && !ctl_inst_current(v, in) &&
		    v->now_mono_ms - in->last_ok_mono < ANSWER_REFRESHED_MS)
			ctl_plan_requeue(p, REQUEUE_FAST_MS);
	}
}

void ctl_plan_build(const struct ctl_view *v, struct ctl_plan *p)
{
	struct plan_state s = { 0 };
	json_t *status;

	desired_spec_hash(v->rc, v->cfg, s.spec_hash);
	desired_live_hash(v->rc, s.live_hash);
	s.primary = v->rc->status.current_primary ? v->rc->status.current_primary : "";
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (!steps[i](v, &s, p))
			break;
	ctl_unsupported_event(v, p);
	ctl_acl_config_event(v, p);
	wait_for_current_answers(v, p);
	p->phase = s.phase;
	s.dangling = plan_dangling_pvcs(v, &s, p);
	status = ctl_status_build(v, &s);
	json_decref(s.dangling);
	if (ctl_status_changed(jsonx_get(v->obj, "status"), status, v->refresh_volatile))
		p->status = status;
	else
		json_decref(status);
}

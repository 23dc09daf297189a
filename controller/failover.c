/*
 * failover: the state machine (see failover.h for the contract, docs/failover.md for
 * the whole sequence across both processes). The table phases[] at the end is the
 * machine: one row per phase persisted in status.failover.phase, with its entry
 * condition, its function, the phases it may write next and its timeout.
 *
 * "Down" is never one failed poll: the primary must say it is fenced (its manager does
 * that when its server crashes or its Lease is lost), or its Lease must be free
 * (released or expired) while it does not answer as primary. Promotion goes through
 * the target's instance manager, which takes the Lease first, so two writable
 * primaries cannot exist even if this controller is wrong about the world.
 *
 * This module never calls the planner: the role moves it shares with it are in
 * failover_roles.c.
 */
#include <stdio.h>
#include <string.h>

#include "controller/failover.h"
#include "lib/alloc.h"

#define REQUEUE_FAST_MS   300
#define REQUEUE_WAIT_MS   2000
#define SWITCHOVER_MARGIN 30000
#define CATCH_UP_MAX_MS   5000 /* from the failover's start: a fenced primary's tail */

static bool lease_free(const struct ctl_view *v)
{
	return v->lease.state == CTL_LEASE_RELEASED || v->lease.state == CTL_LEASE_EXPIRED;
}

static int64_t elapsed_ms(const struct ctl_view *v, const struct ctl_failover *fo)
{
	return fo->started_wall_ms ? v->now_wall_ms - fo->started_wall_ms : 0;
}

/* --- the phases' timeouts (the table's, from startedAt) ---------------------------------- */

/* Fencing: only the catch-up with a fenced old primary is bounded; the wait for a fence
 * or a free Lease is bounded by the Lease itself. */
static int64_t timeout_fencing(const struct ctl_view *v)
{
	(void)v;
	return CATCH_UP_MAX_MS;
}

static int64_t timeout_promoting(const struct ctl_view *v)
{
	return v->cfg->promote_timeout_ms;
}

/* The old primary's manager may spend switchoverTimeout catching up, then the promote's
 * own timeouts: three times that, plus a margin, is a switchover that will not end. */
static int64_t timeout_switchover(const struct ctl_view *v)
{
	return v->rc->spec.failover.switchover_timeout.ms * 3 + SWITCHOVER_MARGIN;
}

static int64_t timeout_restart(const struct ctl_view *v)
{
	return v->cfg->restart_timeout_ms;
}

/* status.failover = fo in phase, with to and catch_up (NULL: left out). */
static struct ctl_action *status_fo_note(struct ctl_plan *p, const char *phase,
                                         const struct ctl_failover *fo, const char *to,
                                         const char *catch_up)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_STATUS);
	struct api_failover_status f;

	ctl_failover_status(fo, phase, to, catch_up, &f);
	a->obj = json_pack("{s:o}", "failover", api_failover_status_encode(&f));
	return a;
}

static struct ctl_action *status_fo(struct ctl_plan *p, const char *phase,
                                    const struct ctl_failover *fo, const char *to)
{
	return status_fo_note(p, phase, fo, to, NULL);
}

/* --- catch-up with a fenced old primary --------------------------------------------- */

enum catch_up {
	CATCH_UP_NONE,      /* the old primary is gone, crashed or in another history */
	CATCH_UP_DONE,      /* the candidate reached the fenced primary's offset */
	CATCH_UP_WAITING,   /* not yet: look again at the next poll */
	CATCH_UP_TIMED_OUT, /* CATCH_UP_MAX_MS passed: promote anyway */
};

/*
 * When the old primary is reachable, fenced and still serving in the candidate's history,
 * its last writes (after the candidate's offset; never WAIT-acknowledged ones, which the
 * most advanced replica always has) are not lost if the candidate first reaches its
 * offset: wait for that, bounded by CATCH_UP_MAX_MS from the failover's start.
 */
static enum catch_up catch_up(const struct ctl_view *v, const struct ctl_failover *fo,
                              const struct ctl_pod *old, const struct ctl_pod *cand)
{
	const struct ctl_inst *o = old ? &old->inst : NULL;

	if (!o || old == cand || !old->ip || old->deleting || !ctl_inst_current(v, o) ||
	    !o->fenced || o->primary_crashed || !o->server_up || o->offset < 0 ||
	    strcmp(o->repl_id, cand->inst.repl_id) != 0)
		return CATCH_UP_NONE;
	if (cand->inst.offset >= o->offset)
		return CATCH_UP_DONE;
	return elapsed_ms(v, fo) < timeout_fencing(v) ? CATCH_UP_WAITING : CATCH_UP_TIMED_OUT;
}

/* What status.failover.catchUp says about the case that applied. */
static void catch_up_note(enum catch_up c, const struct ctl_pod *old, const struct ctl_pod *cand,
                          char *out, size_t len)
{
	long long gap = old ? old->inst.offset - cand->inst.offset : 0;

	if (old && c == CATCH_UP_DONE)
		snprintf(out, len, "%s reached the fenced %s's offset %lld", cand->name, old->name,
		         old->inst.offset);
	else if (old && c == CATCH_UP_TIMED_OUT) /* both imply old (catch_up) */
		snprintf(out, len,
		         "%s still %lld bytes behind the fenced %s after %d ms: promoted anyway "
		         "(those writes were never acknowledged by a replica)",
		         cand->name, gap, old->name, CATCH_UP_MAX_MS);
	else
		snprintf(out, len, "the old primary is not reachable and fenced: no catch-up");
}

static void clear_fo(struct ctl_plan *p)
{
	ctl_plan_status(p, json_pack("{s:n}", "failover"));
}

/* --- detection ------------------------------------------------------------------------ */

/* Is the current primary confirmed down (DESIGN.md §4)? *why gets a static reason. */
static bool primary_down(const struct ctl_view *v, const struct failover_io *s, const char **why)
{
	const struct ctl_pod *cp = s->primary_pod;
	const struct ctl_lease *l = &v->lease;

	if (!s->primary || !*s->primary || !l->ever_acquired || failover_user_fenced(v, s->primary))
		return false;
	if (l->state == CTL_LEASE_HELD && strcmp(l->holder, s->primary) != 0)
		return false; /* another holder: not a failover (split brain is fenced elsewhere) */
	if (cp && ctl_inst_ok(&cp->inst) && (cp->inst.primary_crashed || cp->inst.fenced)) {
		*why = cp->inst.primary_crashed ? "its server crashed; its manager fenced it"
		                                : "its manager reports it fenced";
		return true;
	}
	if (!lease_free(v))
		return false;
	if (!cp || cp->deleting)
		*why = !cp ? "its pod is gone and the primary lease is free"
		           : "its pod is being deleted and the primary lease is free";
	else if (cp->inst.failures >= v->cfg->poll_failures_down)
		*why = "it stopped answering and the primary lease is free";
	else if (ctl_inst_current(v, &cp->inst) && strcmp(cp->inst.state, "primary") != 0)
		*why = "it is not serving as primary and the primary lease is free";
	else
		return false;
	return true;
}

/* --- election ----------------------------------------------------------------------- */

static bool candidate(const struct ctl_view *v, const struct ctl_pod *pod, const char *exclude)
{
	const struct ctl_inst *i = &pod->inst;

	return strcmp(pod->name, exclude) != 0 && !pod->deleting && pod->ip && ctl_inst_ok(i) &&
	       i->server_up && !i->loading && !i->syncing && strcmp(i->link, "syncing") != 0 &&
	       i->offset >= 0 && i->repl_id[0] &&
	       (strcmp(i->state, "replica") == 0 || strcmp(i->state, "parked") == 0) &&
	       !failover_user_fenced(v, pod->name);
}

static size_t group_size(const struct ctl_view *v, const char *exclude, const char *replid)
{
	size_t n = 0;

	for (size_t i = 0; i < v->npods; i++)
		if (candidate(v, &v->pods[i], exclude) &&
		    strcmp(v->pods[i].inst.repl_id, replid) == 0)
			n++;
	return n;
}

static bool better(const struct ctl_pod *a, const struct ctl_pod *b)
{
	if (!b)
		return true;
	if (a->inst.offset != b->inst.offset)
		return a->inst.offset > b->inst.offset;
	if (a->ready != b->ready)
		return a->ready;
	return a->serial < b->serial;
}

const struct ctl_pod *failover_elect(const struct ctl_view *v, const char *exclude,
                                     const char *primary_replid)
{
	const char *history = NULL;
	const struct ctl_pod *best = NULL;
	size_t most = 0;

	if (primary_replid && *primary_replid && group_size(v, exclude, primary_replid))
		history = primary_replid;
	for (size_t i = 0; !history && i < v->npods; i++) {
		size_t n;

		if (!candidate(v, &v->pods[i], exclude))
			continue;
		n = group_size(v, exclude, v->pods[i].inst.repl_id);
		if (n > most) {
			most = n;
			history = v->pods[i].inst.repl_id;
		}
	}
	for (size_t i = 0; history && i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (candidate(v, pod, exclude) && strcmp(pod->inst.repl_id, history) == 0 &&
		    better(pod, best))
			best = pod;
	}
	return best;
}

/* With no replica at all, a crashed primary that kept its data is promoted again. */
static bool self_promotion_ok(const struct ctl_view *v, const struct ctl_pod *cp)
{
	if (!cp || cp->deleting || !cp->ip || !ctl_inst_ok(&cp->inst) || !cp->inst.server_up ||
	    cp->inst.loading)
		return false;
	for (size_t i = 0; i < v->npods; i++)
		if (&v->pods[i] != cp && !v->pods[i].deleting)
			return false;
	return true;
}

/* --- failover ----------------------------------------------------------------------- */

static void finalize(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                     const struct ctl_failover *fo, const struct ctl_pod *to)
{
	int64_t dur = elapsed_ms(v, fo);
	char now[CTL_TIME_MAX];
	struct ctl_action *a;

	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, now);
	/* the leader EndpointSlice first: clients wait on it, the status can follow it (a
	 * failed status write leaves Promoting, whose next reconcile finalizes again) */
	failover_leader_endpoints(v, p, to);
	a = ctl_plan_status(p, json_pack("{s:s,s:s,s:n,s:{s:s,s:s,s:s,s:s,s:I}}", "currentPrimary",
	                                 to->name, "targetPrimary", to->name, "failover",
	                                 "lastFailover", "time", now, "from", fo->from, "to",
	                                 to->name, "reason", fo->reason, "durationMs",
	                                 (json_int_t)(dur > 0 ? dur : 0)));
	a->metric = CTL_METRIC_FAILOVER;
	a->metric_value = fo->started_wall_ms ? fo->started_wall_ms : v->now_wall_ms;
	failover_label(p, to, CTL_ROLE_PRIMARY); /* first: see failover_label */
	if (strcmp(fo->from, to->name) != 0)
		failover_label(p, ctl_view_pod(v, fo->from), CTL_ROLE_REPLICA);
	ctl_plan_event(p, false, "FailoverCompleted", "%s is the primary now (was %s): %s",
	               to->name, fo->from, fo->reason);
	/* The other replicas follow it now, not after the next poll: until one does, no
	 * write is acknowledged (WAIT). The old primary is left to step_follow. */
	failover_follow(v, p, to, fo->from);
	ctl_plan_requeue(p, 100);
	s->primary = to->name;
	s->primary_pod = to;
}

static bool promote_and_finish(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                               const struct ctl_failover *fo, const struct ctl_pod *to)
{
	/* 409: the target still sees the old primary's Lease as valid (it observes it a
	 * renewPeriod apart from us): retry soon, not with the failure backoff */
	ctl_plan_instance(p, to, "promote", ctl_body_promote(false))->busy_retry_ms =
	        REQUEUE_FAST_MS;
	finalize(v, s, p, fo, to);
	return false;
}

/*
 * The old primary serves again, holding the Lease (its manager restarted before the
 * promotion won the Lease): the failover is cancelled. Its Lease is proof that no
 * other pod can have been promoted meanwhile.
 */
static bool back_as_primary(const struct ctl_view *v, struct ctl_plan *p, const struct ctl_pod *old)
{
	if (!old || old->deleting || !old->ip || !ctl_inst_ok(&old->inst) ||
	    !ctl_inst_is_writable_primary(&old->inst) || !old->inst.lease_held ||
	    v->lease.state != CTL_LEASE_HELD || strcmp(v->lease.holder, old->name) != 0)
		return false;
	clear_fo(p);
	ctl_plan_event(p, false, "FailoverCancelled", "%s serves as primary again", old->name);
	return true;
}

static bool promote_elected(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                            const struct ctl_failover *fo, const struct ctl_pod *old,
                            const struct ctl_pod *cand)
{
	enum catch_up c = catch_up(v, fo, old, cand);
	char note[CTL_MSG_MAX];

	if (c == CATCH_UP_WAITING) {
		s->phase_reason =
		        "waiting for the elected replica to reach the fenced primary's offset";
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return false;
	}
	catch_up_note(c, old, cand, note, sizeof(note));
	status_fo_note(p, CTL_FO_PROMOTING, fo, cand->name, note);
	ctl_plan_event(p, c == CATCH_UP_TIMED_OUT, "FailoverPromoting",
	               "promoting %s (offset %lld) instead of %s: %s", cand->name,
	               cand->inst.offset, fo->from, note);
	return promote_and_finish(v, s, p, fo, cand);
}

static bool fencing(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                    const struct ctl_failover *fo)
{
	const struct ctl_pod *cp = ctl_view_pod(v, fo->from), *cand;
	bool reachable = cp && cp->ip && !cp->deleting && ctl_inst_ok(&cp->inst);
	bool fenced = reachable && cp->inst.fenced;
	bool need_fence = reachable && !cp->inst.fenced;
	int64_t delay = v->rc->spec.failover.delay.ms;

	s->phase = "Failing over";
	s->progressing = true;
	if (back_as_primary(v, p, cp))
		return true;
	if (!lease_free(v) && !fenced && !need_fence) {
		s->phase_reason = "waiting for the old primary to be fenced or its lease to expire";
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return false;
	}
	if (delay > 0 && elapsed_ms(v, fo) < delay) {
		ctl_plan_requeue(p, delay - elapsed_ms(v, fo));
		return false;
	}
	cand = failover_elect(v, fo->from, cp ? cp->inst.repl_id : NULL);
	if (!cand && self_promotion_ok(v, cp))
		cand = cp;
	if (!cand) {
		s->phase_reason = "no replica can be promoted yet";
		ctl_plan_event(p, true, "FailoverWaiting", "no replica of %s can be promoted yet",
		               fo->from);
		ctl_plan_requeue(p, REQUEUE_WAIT_MS);
		return true;
	}
	if (need_fence)
		ctl_plan_instance(p, cp, "fence", ctl_body_fence("failover"))->optional =
		        lease_free(v);
	return promote_elected(v, s, p, fo, cp, cand);
}

static bool promoting(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                      const struct ctl_failover *fo)
{
	const struct ctl_pod *to = ctl_view_pod(v, fo->to);

	s->phase = "Failing over";
	s->progressing = true;
	if (!fo->to[0])
		return fencing(v, s, p, fo);
	if (to && ctl_inst_is_writable_primary(&to->inst) && to->inst.lease_held) {
		finalize(v, s, p, fo, to);
		return false;
	}
	if (strcmp(fo->from, fo->to) != 0 && back_as_primary(v, p, ctl_view_pod(v, fo->from)))
		return true;
	if (!to || to->deleting ||
	    (!ctl_inst_ok(&to->inst) && elapsed_ms(v, fo) > timeout_promoting(v))) {
		status_fo(p, CTL_FO_FENCING, fo, NULL);
		ctl_plan_event(p, true, "FailoverRetarget", "%s cannot be promoted: electing again",
		               fo->to);
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return false;
	}
	if (!ctl_inst_ok(&to->inst) || !to->ip) {
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
		return false;
	}
	return promote_and_finish(v, s, p, fo, to);
}

/*
 * The primary released its Lease on its way out (its pod is being deleted or gone: a
 * graceful stop, instance/handover.h) and a replica can be promoted: nothing is left to
 * fence or wait for, so the first record is Promoting, not Fencing then Promoting in
 * the same plan (a booting old primary parks on either: role.c). An expired Lease, a
 * reachable primary or spec.failover.delay keep the Fencing record: a wait resumes there.
 */
static bool released_on_way_out(const struct ctl_view *v, const struct failover_io *s)
{
	const struct ctl_pod *cp = s->primary_pod;

	return v->lease.state == CTL_LEASE_RELEASED && (!cp || cp->deleting) &&
	       v->rc->spec.failover.delay.ms <= 0 &&
	       failover_elect(v, s->primary, cp ? cp->inst.repl_id : NULL);
}

static bool detect(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p)
{
	struct ctl_failover fo = { 0 };
	const char *why = NULL;

	if (!primary_down(v, s, &why))
		return true;
	/* A primary whose pod is gone with nobody to take over (hibernation just ended, a
	 * one-instance cluster): the pods step recreates it, and it boots as primary. */
	if (!s->primary_pod && !failover_elect(v, s->primary, NULL))
		return true;
	fo.active = true;
	snprintf(fo.phase, sizeof(fo.phase), "%s", CTL_FO_FENCING);
	snprintf(fo.from, sizeof(fo.from), "%s", s->primary);
	snprintf(fo.reason, sizeof(fo.reason), "primary %s is down: %s", s->primary, why);
	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, fo.started_at);
	fo.started_wall_ms = v->now_wall_ms;
	if (!released_on_way_out(v, s))
		status_fo(p, CTL_FO_FENCING, &fo, NULL);
	ctl_plan_event(p, true, "FailoverStarted", "%s", fo.reason);
	return fencing(v, s, p, &fo);
}

/* --- switchover --------------------------------------------------------------------- */

static void switchover_done(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                            const struct ctl_failover *fo, const struct ctl_pod *to)
{
	ctl_plan_status(p, json_pack("{s:s,s:s,s:n}", "currentPrimary", to->name, "targetPrimary",
	                             to->name, "failover"));
	failover_leader_endpoints(v, p, to);
	failover_label(p, to, CTL_ROLE_PRIMARY); /* first: see failover_label */
	failover_label(p, ctl_view_pod(v, fo->from), CTL_ROLE_REPLICA);
	if (json_object_get(v->rc->meta.annotations, CTL_ANN_SWITCHOVER))
		ctl_plan_add(p, CTL_ACT_CLUSTER)->obj =
		        json_pack("{s:{s:{s:n}}}", "metadata", "annotations", CTL_ANN_SWITCHOVER);
	ctl_plan_event(p, false, "SwitchoverCompleted", "%s is the primary now (was %s): %s",
	               to->name, fo->from, fo->reason);
	ctl_plan_requeue(p, 100);
	s->primary = to->name;
	s->primary_pod = to;
}

static void switchover_post(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                            const struct ctl_failover *fo, const struct ctl_pod *from,
                            const struct ctl_pod *to)
{
	struct ctl_action *a;

	a = ctl_plan_instance(p, from, "switchover",
	                      ctl_body_switchover(to->ip, CTL_PORT_REDIS, CTL_PORT_HTTP));
	a->metric = CTL_METRIC_SWITCHOVER;
	switchover_done(v, s, p, fo, to);
}

void failover_start_switchover(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                               const struct ctl_pod *target, const char *reason)
{
	struct ctl_failover fo = { 0 };

	fo.active = true;
	snprintf(fo.phase, sizeof(fo.phase), "%s", CTL_FO_SWITCHOVER);
	snprintf(fo.from, sizeof(fo.from), "%s", s->primary);
	snprintf(fo.to, sizeof(fo.to), "%s", target->name);
	snprintf(fo.reason, sizeof(fo.reason), "%s", reason);
	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, fo.started_at);
	status_fo(p, CTL_FO_SWITCHOVER, &fo, fo.to);
	ctl_plan_event(p, false, "SwitchoverStarted", "switching over from %s to %s: %s", fo.from,
	               fo.to, reason);
	s->phase = "Switching over";
	s->progressing = true;
	switchover_post(v, s, p, &fo, s->primary_pod, target);
}

static bool switchover(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                       const struct ctl_failover *fo)
{
	const struct ctl_pod *from = ctl_view_pod(v, fo->from), *to = ctl_view_pod(v, fo->to);
	int64_t limit = timeout_switchover(v);

	s->phase = "Switching over";
	s->progressing = true;
	if (to && ctl_inst_is_writable_primary(&to->inst) && to->inst.lease_held) {
		switchover_done(v, s, p, fo, to);
		return false;
	}
	if (from && ctl_inst_is_writable_primary(&from->inst)) {
		if (elapsed_ms(v, fo) > limit || !to || to->deleting) {
			clear_fo(p);
			if (json_object_get(v->rc->meta.annotations, CTL_ANN_SWITCHOVER))
				ctl_plan_add(p, CTL_ACT_CLUSTER)->obj =
				        json_pack("{s:{s:{s:n}}}", "metadata", "annotations",
				                  CTL_ANN_SWITCHOVER);
			ctl_plan_event(p, true, "SwitchoverFailed",
			               "switchover from %s to %s gave up; %s stays primary",
			               fo->from, fo->to, fo->from);
			return true;
		}
		if (!to->ip || !ctl_inst_ok(&to->inst)) {
			ctl_plan_requeue(p, REQUEUE_WAIT_MS);
			return false;
		}
		switchover_post(v, s, p, fo, from, to);
		return false;
	}
	if (!from || (ctl_inst_ok(&from->inst) && from->inst.fenced) ||
	    from->inst.failures >= v->cfg->poll_failures_down) {
		struct ctl_failover f = *fo;

		snprintf(f.reason, sizeof(f.reason), "switchover to %.200s failed half-way",
		         fo->to);
		status_fo(p, CTL_FO_FENCING, &f, NULL);
		ctl_plan_event(p, true, "SwitchoverFailed", "%s: failing over", f.reason);
		return false;
	}
	ctl_plan_requeue(p, REQUEUE_FAST_MS);
	return false;
}

/* --- in-place restart of the primary ---------------------------------------------------- */

static bool primary_restart(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p,
                            const struct ctl_failover *fo)
{
	const struct ctl_pod *pp = ctl_view_pod(v, fo->from);

	if (pp && !pp->deleting && pp->ready && ctl_inst_is_writable_primary(&pp->inst)) {
		clear_fo(p);
		ctl_plan_event(p, false, "PrimaryRestarted", "%s restarted as primary", fo->from);
		return true;
	}
	if (elapsed_ms(v, fo) > timeout_restart(v)) {
		struct ctl_failover f = *fo;

		snprintf(f.reason, sizeof(f.reason), "restart of the primary %.200s took too long",
		         fo->from);
		status_fo(p, CTL_FO_FENCING, &f, NULL);
		ctl_plan_event(p, true, "PrimaryRestartTimeout", "%s: failing over", f.reason);
		return false;
	}
	s->phase = "Restarting the primary";
	s->progressing = true;
	ctl_plan_requeue(p, 1000);
	return true;
}

void failover_start_restart(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p)
{
	struct ctl_failover fo = { 0 };

	fo.active = true;
	snprintf(fo.phase, sizeof(fo.phase), "%s", CTL_FO_RESTART);
	snprintf(fo.from, sizeof(fo.from), "%s", s->primary);
	snprintf(fo.reason, sizeof(fo.reason), "%s", "rolling update");
	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, fo.started_at);
	status_fo(p, CTL_FO_RESTART, &fo, s->primary);
	ctl_plan_delete(p, &k8s_res_pods, s->primary);
	ctl_plan_event(p, false, "RollingUpdate", "restarting the primary %s in place", s->primary);
}

/* --- the table ----------------------------------------------------------------------- */

static const struct failover_phase phases[] = {
	{
	        .name = CTL_FO_FENCING,
	        .entered_when = "the primary is confirmed down; a Promoting target is lost; a "
	                        "switchover failed half-way; a PrimaryRestart took too long",
	        .action = "the old primary back with the Lease: cancelled. Else wait until it "
	                  "is fenced or its Lease is free, honour spec.failover.delay, elect, "
	                  "POST /v1/fence to a reachable old primary, wait for the elected "
	                  "replica to reach a fenced old primary's offset, then Promoting",
	        .run = fencing,
	        .next = { CTL_FO_PROMOTING, "" },
	        .timeout_ms = timeout_fencing,
	        .on_timeout = "the catch-up ends: promoted anyway (FailoverPromoting, Warning)",
	},
	{
	        .name = CTL_FO_PROMOTING,
	        .entered_when = "a replica was elected (status.failover.to); at once from none "
	                        "when the primary released its Lease on its way out (pod "
	                        "deleted) and a replica can be promoted",
	        .action = "POST /v1/promote to `to` (it takes the Lease); once it is a "
	                  "writable primary holding the Lease: currentPrimary, lastFailover, "
	                  "labels, the leader EndpointSlice, the other replicas re-pointed",
	        .run = promoting,
	        .next = { "", CTL_FO_FENCING },
	        .timeout_ms = timeout_promoting,
	        .on_timeout = "`to` unreachable that long (or gone): Fencing, elect again",
	},
	{
	        .name = CTL_FO_SWITCHOVER,
	        .entered_when = "redis.io/switchover-to, or the primary's turn in a rolling "
	                        "update",
	        .action = "POST /v1/switchover to `from` (its manager pauses, waits for the "
	                  "target's offset, hands the Lease over); once `to` holds the Lease: "
	                  "currentPrimary, labels, the annotation removed",
	        .run = switchover,
	        .next = { "", CTL_FO_FENCING },
	        .timeout_ms = timeout_switchover,
	        .on_timeout = "`from` still the writable primary: given up (SwitchoverFailed)",
	},
	{
	        .name = CTL_FO_RESTART,
	        .entered_when = "the primary's turn in a rolling update with "
	                        "primaryUpdateMethod: restart",
	        .action = "wait for the recreated pod to be ready as a writable primary",
	        .run = primary_restart,
	        .next = { "", CTL_FO_FENCING },
	        .timeout_ms = timeout_restart,
	        .on_timeout = "Fencing (PrimaryRestartTimeout)",
	},
};

const struct failover_phase *failover_phases(size_t *n)
{
	*n = sizeof(phases) / sizeof(phases[0]);
	return phases;
}

bool failover_step(const struct ctl_view *v, struct failover_io *s, struct ctl_plan *p)
{
	if (!v->fo.active)
		return detect(v, s, p);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (strcmp(v->fo.phase, phases[i].name) == 0)
			return phases[i].run(v, s, p, &v->fo);
	clear_fo(p);
	ctl_plan_event(p, true, "FailoverStateUnknown",
	               "status.failover.phase %s is unknown: cleared", v->fo.phase);
	return true;
}

/*
 * sentinel: the planner's sentinel-mode steps (see sentinel.h). Everything here reads
 * the view: the sentinel pods with their managers' last /v1/status (struct
 * ctl_sentinel_obs) and the data pods; what it writes goes into the plan. Its only
 * memory is what the cluster holds: status.failover while a requested switchover runs,
 * the reset annotation on a sentinel pod.
 */
#include "controller/sentinel.h"

#include <stdio.h>
#include <string.h>

#include "controller/failover_state.h"
#include "lib/jsonx.h"

#define REQUEUE_FAST_MS          300
#define DEFAULT_FAILOVER_TIMEOUT 180000 /* Sentinel's own default, as the manager's */

static bool answering(const struct ctl_pod *sp)
{
	return !sp->deleting && ctl_inst_ok(&sp->inst) && sp->inst.sen.has_view;
}

static const struct ctl_pod *data_pod_at(const struct ctl_view *v, const char *ip)
{
	for (size_t i = 0; ip && *ip && i < v->npods; i++)
		if (v->pods[i].ip && !v->pods[i].deleting && strcmp(v->pods[i].ip, ip) == 0)
			return &v->pods[i];
	return NULL;
}

static const struct ctl_pod *sentinel_pod(const struct ctl_view *v, const char *name)
{
	for (size_t i = 0; i < v->nsentinels; i++)
		if (strcmp(v->sentinels[i].name, name) == 0)
			return &v->sentinels[i];
	return NULL;
}

static void take_view(struct sentinel_facts *f, const struct ctl_sentinel_obs *o)
{
	f->quorum_ok += o->quorum_ok;
	f->failover_running |= o->failover_in_progress;
	if (o->known_sentinels > f->known_max)
		f->known_max = o->known_sentinels;
	if (f->replicas_min < 0 || o->known_replicas < f->replicas_min)
		f->replicas_min = o->known_replicas;
	if (o->master_host[0] && o->config_epoch > f->epoch) {
		f->epoch = o->config_epoch;
		f->master_host = o->master_host;
		f->master_port = o->master_port;
	}
}

void sentinel_judge(const struct ctl_view *v, struct sentinel_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->want = desired_sentinel_count(v->rc);
	f->epoch = -2; /* below "unknown" (-1): any view beats none */
	f->known_max = -1;
	f->replicas_min = -1;
	for (size_t i = 0; i < v->nsentinels; i++) {
		const struct ctl_pod *sp = &v->sentinels[i];

		if (sp->deleting) {
			f->going = true;
			continue;
		}
		f->pods++;
		f->ready += sp->ready && ctl_inst_ok(&sp->inst) && sp->inst.ready;
		if (answering(sp))
			take_view(f, &sp->inst.sen);
	}
	for (size_t i = 0; f->master_host && i < v->nsentinels; i++) {
		const struct ctl_sentinel_obs *o = &v->sentinels[i].inst.sen;

		f->agree += answering(&v->sentinels[i]) &&
		            strcmp(o->master_host, f->master_host) == 0 &&
		            o->master_port == f->master_port;
	}
	f->majority =
	        2 * (int64_t)f->agree > ((int64_t)f->pods > f->want ? (int64_t)f->pods : f->want);
	f->master_pod = data_pod_at(v, f->master_host);
}

static int64_t failover_timeout_ms(const struct ctl_view *v)
{
	int64_t ms = v->rc->spec.sentinel.failover_timeout.ms;

	return ms > 0 ? ms : DEFAULT_FAILOVER_TIMEOUT;
}

/* --- following Sentinel ------------------------------------------------------------- */

static bool requested_by_us(const struct ctl_view *v, const char *primary)
{
	return v->fo.active && strcmp(v->fo.phase, CTL_FO_SWITCHOVER) == 0 &&
	       strcmp(v->fo.from, primary) == 0;
}

/* The master moved to `to`: currentPrimary (and through step_labels the labels and the
 * leader endpoint) follow it in this plan. */
static void follow(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                   const struct sentinel_facts *f, const struct ctl_pod *to)
{
	bool ours = requested_by_us(v, s->primary);
	const char *why = ours ? v->fo.reason : "Sentinel failed over";
	char now[CTL_TIME_MAX];

	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, now);
	ctl_plan_status(p, json_pack("{s:s,s:s,s:n,s:{s:s,s:s,s:s,s:s,s:n}}", "currentPrimary",
	                             to->name, "targetPrimary", to->name, "failover",
	                             "lastFailover", "time", now, "from", s->primary, "to",
	                             to->name, "reason", why, "durationMs"));
	if (ours)
		ctl_plan_event(p, false, "SwitchoverCompleted",
		               "Sentinel moved the master from %s to %s (%s)", s->primary, to->name,
		               why);
	else
		ctl_plan_event(p, true, "SentinelFailover",
		               "Sentinel promoted %s (config epoch %lld) while %s was the primary; "
		               "the controller follows",
		               to->name, f->epoch, s->primary);
	s->primary = to->name;
	s->primary_pod = to;
	s->progressing = true;
	ctl_plan_requeue(p, 100);
}

/* A request to Sentinel that has not moved the master: wait, or give up after Sentinel's
 * failover timeout (it retries a failed failover only after twice that). */
static void wait_for_request(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                             const struct sentinel_facts *f)
{
	int64_t limit = failover_timeout_ms(v) + CTL_SENTINEL_SWITCHOVER_SLACK_MS;

	s->phase = "Switching over through Sentinel";
	s->progressing = true;
	if (f->failover_running || !v->fo.started_wall_ms ||
	    v->now_wall_ms - v->fo.started_wall_ms <= limit) {
		ctl_plan_requeue(p, 1000);
		return;
	}
	ctl_plan_status(p, json_pack("{s:n}", "failover"));
	ctl_plan_event(p, true, "SwitchoverFailed",
	               "Sentinel did not move the master away from %s within %lld ms; it stays "
	               "the primary",
	               v->fo.from, (long long)limit);
}

bool sentinel_step_primary(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	struct sentinel_facts f;
	const struct ctl_pod *to;

	if (!s->primary || !*s->primary)
		return true;
	sentinel_judge(v, &f);
	to = f.master_pod;
	if (to && f.majority && strcmp(to->name, s->primary) != 0 &&
	    ctl_inst_current(v, &to->inst) && ctl_inst_server_writable(&to->inst)) {
		follow(v, s, p, &f, to);
		return true;
	}
	if (v->fo.active)
		wait_for_request(v, s, p, &f);
	if (f.failover_running) {
		s->phase = "Sentinel is failing over";
		s->progressing = true;
		ctl_plan_requeue(p, REQUEUE_FAST_MS);
	}
	return true;
}

bool sentinel_holds_primary(const struct ctl_view *v, const struct plan_state *s)
{
	bool watched = false;

	if (v->rc->spec.mode != API_MODE_SENTINEL)
		return false;
	for (size_t i = 0; i < v->nsentinels; i++)
		watched |= answering(&v->sentinels[i]);
	if (!watched)
		return false; /* no sentinel could promote anyone: the primary comes back */
	for (size_t i = 0; i < v->npods; i++)
		if (!v->pods[i].deleting && strcmp(v->pods[i].name, s->primary) != 0)
			return true;
	return false;
}

/* --- planned moves ---------------------------------------------------------------- */

static bool linked_replica(const struct ctl_view *v, const struct plan_state *s)
{
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod != s->primary_pod && !pod->deleting && ctl_inst_ok(&pod->inst) &&
		    strcmp(pod->inst.link, API_INST_LINK_UP) == 0)
			return true;
	}
	return false;
}

/* A linked replica: the body's target (the primary's manager waits for every replica
 * and Sentinel picks one: docs/sentinel.md "Planned switchover"). */
static const struct ctl_pod *a_linked_replica(const struct ctl_view *v, const struct plan_state *s)
{
	for (size_t i = 0; i < v->npods; i++) {
		const struct ctl_pod *pod = &v->pods[i];

		if (pod != s->primary_pod && !pod->deleting && pod->ip && ctl_inst_ok(&pod->inst) &&
		    strcmp(pod->inst.link, API_INST_LINK_UP) == 0)
			return pod;
	}
	return NULL;
}

static const struct ctl_pod *sentinel_to_ask(const struct ctl_view *v)
{
	for (size_t i = 0; i < v->nsentinels; i++) {
		const struct ctl_pod *sp = &v->sentinels[i];

		if (answering(sp) && sp->ready && sp->ip && sp->inst.sen.quorum_ok)
			return sp;
	}
	return NULL;
}

/* Why Sentinel cannot be asked now; NULL: it can. */
static const char *cannot_ask(const struct ctl_view *v, const struct plan_state *s,
                              const struct sentinel_facts *f)
{
	if (v->fo.active)
		return "a switchover is already in progress";
	if (f->failover_running)
		return "Sentinel is failing over";
	if (!s->primary_pod || !f->majority || f->master_pod != s->primary_pod)
		return "the sentinels do not name the current primary as their master yet";
	if (!linked_replica(v, s))
		return "no replica is linked to the primary";
	if (!sentinel_to_ask(v))
		return "no sentinel is ready with its quorum";
	return NULL;
}

/* --- a named target (switchover-to=<pod>): the rules, first match refuses ---------------- */

static bool t_missing(const struct ctl_pod *t, const struct plan_state *s)
{
	return !t || t == s->primary_pod;
}
static bool t_going(const struct ctl_pod *t, const struct plan_state *s)
{
	(void)s;
	return t->deleting;
}
static bool t_no_ip(const struct ctl_pod *t, const struct plan_state *s)
{
	(void)s;
	return !t->ip;
}
static bool t_silent(const struct ctl_pod *t, const struct plan_state *s)
{
	(void)s;
	return !ctl_inst_ok(&t->inst);
}
static bool t_not_replica(const struct ctl_pod *t, const struct plan_state *s)
{
	(void)s;
	return strcmp(t->inst.state, "replica") != 0;
}
static bool t_unlinked(const struct ctl_pod *t, const struct plan_state *s)
{
	(void)s;
	return strcmp(t->inst.link, API_INST_LINK_UP) != 0;
}

const char *sentinel_target_refusal(const struct plan_state *s, const struct ctl_pod *t)
{
	static const struct {
		bool (*refuses)(const struct ctl_pod *t, const struct plan_state *s);
		const char *why;
	} rules[] = {
		{ t_missing, "the target is not a replica pod of this cluster" },
		{ t_going, "the target is being deleted" },
		{ t_no_ip, "the target has no IP yet" },
		{ t_silent, "the target's manager does not answer" },
		{ t_not_replica, "the target is not a replica" },
		{ t_unlinked, "the target's link to the primary is down" },
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].refuses(t, s))
			return rules[i].why;
	return NULL;
}

/* The /v1/switchover body: host:port of a linked replica; with the target named, its pod
 * alone (the contract takes one of the two; the primary's manager reads the pod's
 * address and steers Sentinel to it). */
static json_t *switchover_body(const struct ctl_pod *to, bool named)
{
	struct api_inst_request r = { .op = API_INST_SWITCHOVER, .pod = to->name };

	if (!named)
		return ctl_body_switchover(to->ip, CTL_PORT_REDIS, CTL_PORT_HTTP);
	return api_inst_request_encode(&r);
}

bool sentinel_start_switchover(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                               const char *reason, bool clear_annotation, const char *target,
                               const char **why)
{
	bool named = target && strcmp(target, "auto") != 0;
	struct sentinel_facts f;
	const struct ctl_pod *sp, *to;
	char now[CTL_TIME_MAX];
	json_t *st;

	sentinel_judge(v, &f);
	if ((*why = cannot_ask(v, s, &f)))
		return false;
	sp = sentinel_to_ask(v);
	to = named ? ctl_view_pod(v, target) : a_linked_replica(v, s);
	if (named && (*why = sentinel_target_refusal(s, to)))
		return false;
	if (!to) {
		*why = "no linked replica has an IP";
		return false;
	}
	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, now);
	ctl_plan_instance(p, s->primary_pod, CTL_SENTINEL_OP_SWITCHOVER,
	                  switchover_body(to, named));
	st = json_pack("{s:s,s:s,s:s,s:s}", "phase", CTL_FO_SWITCHOVER, "from", s->primary,
	               "reason", reason, "startedAt", now);
	if (named)
		json_object_set_new(st, "to", json_string(to->name));
	ctl_plan_status(p, json_pack("{s:o}", "failover", st));
	if (clear_annotation)
		ctl_plan_add(p, CTL_ACT_CLUSTER)->obj =
		        json_pack("{s:{s:{s:n}}}", "metadata", "annotations", CTL_ANN_SWITCHOVER);
	ctl_plan_event(p, false, "SwitchoverStarted",
	               "asked %s's manager to pause writes until every replica has its offset, "
	               "then Sentinel (through %s's view) to move the master: %s; %s%s",
	               s->primary, sp->name, reason,
	               named ? "steered to " : "Sentinel picks the replica", named ? to->name : "");
	s->phase = "Switching over through Sentinel";
	s->progressing = true;
	ctl_plan_requeue(p, 500);
	return true;
}

/* --- the sentinel pods -------------------------------------------------------------- */

static bool ended(const struct ctl_pod *sp)
{
	return sp->phase &&
	       (strcmp(sp->phase, "Failed") == 0 || strcmp(sp->phase, "Succeeded") == 0);
}

static void create_missing(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                           int64_t want, bool may_create)
{
	char name[CTL_NAME_MAX + 1];

	for (int k = 1; k <= want; k++) {
		const struct ctl_pod *sp;

		desired_sentinel_name(v->rc, k, name, sizeof(name));
		sp = sentinel_pod(v, name);
		if (!sp && may_create) {
			ctl_plan_create(p, &k8s_res_pods, desired_sentinel_pod(v->rc, v->cfg, k));
			s->progressing = true;
		} else if (sp && !sp->deleting && ended(sp)) {
			ctl_plan_delete(p, &k8s_res_pods, sp->name);
			ctl_plan_event(p, true, "PodRecreated",
			               "sentinel %s ended (%s): recreating it", sp->name,
			               sp->phase);
		}
	}
}

static void remove_extra(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                         int64_t want)
{
	for (size_t i = 0; i < v->nsentinels; i++) {
		const struct ctl_pod *sp = &v->sentinels[i];
		int k = desired_sentinel_index(v->rc, sp->name);

		if (sp->deleting || (k >= 1 && k <= want))
			continue;
		ctl_plan_delete(p, &k8s_res_pods, sp->name);
		ctl_plan_event(p, false, "ScaleDown",
		               "removing sentinel %s (spec.sentinel.count %lld)", sp->name,
		               (long long)want);
		s->progressing = true;
	}
}

static bool settled(const struct sentinel_facts *f)
{
	return !f->going && (int64_t)f->pods == f->want && (int64_t)f->ready == f->want &&
	       !f->failover_running;
}

/* One outdated sentinel at a time, only while every one is ready. */
static bool roll_one(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                     const struct sentinel_facts *f)
{
	if (!settled(f) || v->fo.active)
		return false;
	for (size_t i = 0; i < v->nsentinels; i++) {
		const struct ctl_pod *sp = &v->sentinels[i];

		if (sp->spec_hash && strcmp(sp->spec_hash, s->spec_hash) == 0)
			continue;
		ctl_plan_delete(p, &k8s_res_pods, sp->name);
		ctl_plan_event(p, false, "RollingUpdate",
		               "restarting sentinel %s with the new spec", sp->name);
		s->progressing = true;
		return true;
	}
	return false;
}

/* When a sentinel pod was last reset (wall ms; 0: never). */
static int64_t last_reset(const struct ctl_view *v)
{
	int64_t last = 0, t;

	for (size_t i = 0; i < v->nsentinels; i++) {
		const char *at = json_string_value(
		        json_object_get(jsonx_get(v->sentinels[i].obj, "metadata.annotations"),
		                        CTL_ANN_SENTINEL_RESET));

		if (at && rfc3339_parse(at, &t) == 0 && t > last)
			last = t;
	}
	return last;
}

static const struct ctl_pod *needs_reset(const struct ctl_view *v, int64_t want)
{
	for (size_t i = 0; i < v->nsentinels; i++) {
		const struct ctl_pod *sp = &v->sentinels[i];

		if (answering(sp) && sp->ip && sp->inst.sen.known_sentinels > want)
			return sp;
	}
	return NULL;
}

/* A sentinel that counts sentinels which are gone (a removed or recreated pod: Sentinel
 * never forgets one by itself) is reset, one per CTL_SENTINEL_RESET_GAP_MS. */
static void reset_one(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p,
                      const struct sentinel_facts *f)
{
	const struct ctl_pod *sp = needs_reset(v, f->want);
	int64_t since = v->now_wall_ms - last_reset(v);
	char now[CTL_TIME_MAX];
	struct ctl_action *a;

	if (!sp || f->going || (int64_t)f->pods != f->want || f->failover_running || v->fo.active)
		return;
	s->progressing = true;
	if (since < CTL_SENTINEL_RESET_GAP_MS) {
		ctl_plan_requeue(p, CTL_SENTINEL_RESET_GAP_MS - since);
		return;
	}
	rfc3339_format(v->now_wall_ms, RFC3339_SECONDS, now);
	a = ctl_plan_instance(p, sp, CTL_SENTINEL_OP_RESET, NULL);
	a->new_epoch = false;
	/* a refused reset must not hold the plan's later steps (labels, the leader endpoint),
	 * and its attempt is recorded all the same: retried at the same pace */
	a->optional = true;
	ctl_plan_patch(
	        p, &k8s_res_pods, sp->name,
	        json_pack("{s:{s:{s:s}}}", "metadata", "annotations", CTL_ANN_SENTINEL_RESET, now));
	ctl_plan_event(p, false, "SentinelReset",
	               "%s counts %lld sentinels, %lld exist: SENTINEL RESET (it re-learns the "
	               "others and the replicas)",
	               sp->name, sp->inst.sen.known_sentinels, (long long)f->want);
	ctl_plan_requeue(p, CTL_SENTINEL_RESET_GAP_MS);
}

/* The first sentinels come once the primary serves (a sentinel manager boots from its
 * address), or once its server crashed and runs parked: a cluster just moved from
 * standalone, where only Sentinel can fail over from now on (docs/sentinel.md). */
static bool sentinels_may_start(const struct ctl_pod *pp)
{
	return pp && !pp->deleting && pp->ip &&
	       (ctl_inst_server_writable(&pp->inst) ||
	        (ctl_inst_ok(&pp->inst) && pp->inst.primary_crashed));
}

bool sentinel_step_pods(const struct ctl_view *v, struct plan_state *s, struct ctl_plan *p)
{
	struct sentinel_facts f;
	bool may_create;

	if (v->rc->spec.mode != API_MODE_SENTINEL)
		return true;
	sentinel_judge(v, &f);
	may_create = v->nsentinels > 0 || sentinels_may_start(s->primary_pod);
	create_missing(v, s, p, f.want, may_create);
	remove_extra(v, s, p, f.want);
	if (!roll_one(v, s, p, &f))
		reset_one(v, s, p, &f);
	return true;
}

/* --- status ------------------------------------------------------------------------ */

/* The data pods other than the primary. */
static long long other_data_pods(const struct ctl_view *v, const struct plan_state *s)
{
	long long n = 0;

	for (size_t i = 0; i < v->npods; i++)
		n += !v->pods[i].deleting && &v->pods[i] != s->primary_pod;
	return n;
}

bool sentinel_ready(const struct ctl_view *v, const struct plan_state *s)
{
	struct sentinel_facts f;

	if (v->rc->spec.mode != API_MODE_SENTINEL)
		return true;
	sentinel_judge(v, &f);
	return settled(&f) && f.majority && f.master_pod && f.master_pod == s->primary_pod &&
	       f.replicas_min >= other_data_pods(v, s);
}

static json_t *sentinel_entry(const struct ctl_view *v, const struct ctl_pod *sp)
{
	const struct ctl_sentinel_obs *o = &sp->inst.sen;
	const struct ctl_pod *m = answering(sp) ? data_pod_at(v, o->master_host) : NULL;
	json_t *j = json_pack("{s:s,s:b,s:b}", "name", sp->name, "ready",
	                      sp->ready && ctl_inst_ok(&sp->inst) && sp->inst.ready, "quorumOk",
	                      answering(sp) && o->quorum_ok);
	char addr[96];

	if (!answering(sp)) {
		json_object_set_new(j, "message",
		                    json_string(!sp->inst.seen            ? "no status yet"
		                                : !ctl_inst_ok(&sp->inst) ? "not answering"
		                                : sp->inst.reason[0]      ? sp->inst.reason
		                                                     : "no view of the master"));
		return j;
	}
	snprintf(addr, sizeof(addr), "%s:%d", o->master_host, o->master_port);
	json_object_set_new(j, "master", json_string(m ? m->name : ""));
	json_object_set_new(j, "masterAddress", json_string(addr));
	json_object_set_new(j, "masterStatus", json_string(o->master_status));
	json_object_set_new(j, "failoverInProgress", json_boolean(o->failover_in_progress));
	if (o->known_sentinels >= 0)
		json_object_set_new(j, "knownSentinels", json_integer(o->known_sentinels));
	if (o->config_epoch >= 0)
		json_object_set_new(j, "configEpoch", json_integer(o->config_epoch));
	if (o->known_replicas >= 0)
		json_object_set_new(j, "knownReplicas", json_integer(o->known_replicas));
	if (!o->quorum_ok && o->quorum_reason[0])
		json_object_set_new(j, "message", json_string(o->quorum_reason));
	return j;
}

json_t *sentinel_status(const struct ctl_view *v)
{
	json_t *a = json_array();

	for (size_t i = 0; i < v->nsentinels; i++)
		if (!v->sentinels[i].deleting)
			json_array_append_new(a, sentinel_entry(v, &v->sentinels[i]));
	return a;
}

bool sentinel_rotation_blocked(const struct ctl_view *v)
{
	for (size_t i = 0; i < v->nsentinels; i++) {
		const struct ctl_pod *sp = &v->sentinels[i];

		if (!sp->deleting && (!sp->ip || !ctl_inst_ok(&sp->inst)))
			return true;
	}
	return false;
}

void sentinel_drop_old_passwords(const struct ctl_view *v, struct ctl_plan *p)
{
	for (size_t i = 0; i < v->nsentinels; i++)
		if (!v->sentinels[i].deleting)
			ctl_plan_instance(p, &v->sentinels[i], "config",
			                  json_pack("{s:b}", API_INST_DROP_OLD_PASSWORDS, 1));
}

/*
 * sentinel_follow: a data manager in spec.mode sentinel follows the sentinels
 * (docs/sentinel.md). Sentinel is the only promoter: this module never runs
 * REPLICAOF NO ONE. It asks every sentinel pod (found through the API: labels
 * redis.io/cluster=<cluster>, redis.io/role=sentinel, container port "sentinel") for
 * SENTINEL get-master-addr-by-name, counts the answers (sentinel_vote.h) and makes
 * its own server and the primary Lease agree with the majority:
 *
 *   the crashed primary's server stays down until a majority names another master,
 *   then restarts as its replica (never writable with the data it had);
 *   a primary no longer named is demoted (REPLICAOF the named master) and releases
 *   the Lease; a primary no majority confirms for downAfter/2 fences and releases it;
 *   a server Sentinel promoted takes the Lease, so the controller's currentPrimary,
 *   -leader endpoints and labels, which follow the Lease holder, follow Sentinel.
 *
 * Invariant: this manager makes no server writable; it only stops writes (REPLICAOF,
 * the fence) or lifts its own fence once a majority names its server again and it
 * holds the Lease. The old primary stops first because it fences at downAfter/2 with
 * no majority, and Sentinel cannot promote before downAfter with no answer from it.
 *
 * POST /v1/switchover at the primary's manager is the safe planned move
 * (inst_sentinel_switchover): CLIENT PAUSE WRITE, every replica at the primary's offset
 * (inst_sentinel_caught_up), then SENTINEL FAILOVER to a sentinel; the pause ends at
 * the DEMOTE (CLIENT UNPAUSE after REPLICAOF) or at failoverTimeout + 5 s.
 *
 * A manager that booted in spec.mode standalone (in->sen_move) re-reads the cluster every
 * SEN_MODE_POLL_MS; once it says sentinel it asks the sentinel pods too, and when a
 * majority names a master (sentinel_move.h) it becomes one of this mode's (in->sen)
 * without a restart: the in-place move of docs/sentinel.md.
 *
 * All on the supervisor thread. The sentinels' password is the default user's
 * (--auth-dir/password), as the sentinel role's requirepass; it is re-read when the
 * sentinel pods are listed again and when the manager's secret poll saw the files change
 * (in->creds.stamp): a rotation's new password is used from the next connection on,
 * while the sentinels accept the old and the new one (sentinel_run.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/instance_v1.h"
#include "instance/internal.h"
#include "instance/sentinel.h"
#include "instance/sentinel_move.h"
#include "instance/sentinel_steer.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/file.h"
#include "lib/log.h"

#define SEN_ASK_MS           300 /* connect and command timeout per sentinel */
#define SEN_STEP_MIN_MS      100
#define SEN_DISCOVER_MS      10000 /* the sentinel pods are listed again this often */
#define SEN_DISCOVER_NONE_MS 2000  /* ... and this often while none is found */
#define SEN_PW_MAX           4096
#define SEN_SWITCH_POLL_MS   5    /* INFO while waiting for the replicas' offsets */
#define SEN_SWITCH_SLACK_MS  5000 /* the pause outlives failoverTimeout by this */
#define SEN_MODE_POLL_MS     5000 /* a standalone manager re-reads spec.mode this often */

struct inst_sentinels {
	size_t n;
	struct inst_sentinel_addr addr[INST_SENTINELS_MAX];
	struct vk_conn *conn[INST_SENTINELS_MAX];
	char *pw;
	uint64_t pw_stamp; /* in->creds.stamp when pw was read */
	bool hold, auto_fenced, last_failed;
	bool confirmed_once; /* a majority named this server since the manager started */
	int64_t hold_since, confirmed_at, step_at, discover_at;
	enum inst_follow_action last;
	/* the move from standalone (in->sen_move): spec.mode read sentinel; next read */
	bool spec_sentinel;
	int64_t mode_at;
	enum inst_move_action move_last;
	/* a switchover steered to a named replica (sentinel_steer.h): the priorities this
	 * manager lowered as the primary, or, as a replica, its own server's guard */
	struct inst_steer_state steer;
};

static int64_t now_ms(void)
{
	return clock_mono_ms();
}

static bool is_mode(const struct inst *in, const char *mode)
{
	return in->spec.mode && strcmp(in->spec.mode, mode) == 0;
}

static struct inst_sentinels *sentinels_new(void)
{
	struct inst_sentinels *s = xcalloc(1, sizeof(*s));

	s->confirmed_at = now_ms();
	s->last = (enum inst_follow_action) - 1;
	s->move_last = (enum inst_move_action) - 1;
	return s;
}

void inst_sentinel_follow_init(struct inst *in)
{
	if (!in->sen && is_mode(in, "sentinel"))
		in->sen = sentinels_new();
}

static void drop_conns(struct inst_sentinels *s)
{
	for (size_t i = 0; i < s->n; i++) {
		vk_conn_free(s->conn[i]);
		s->conn[i] = NULL;
	}
}

static void read_pw(struct inst *in, struct inst_sentinels *s)
{
	char path[PATH_MAX], *pw = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/password", in->set.auth_dir);
	if (file_read_all_secret(path, SEN_PW_MAX, &pw, &n, NULL) < 0)
		return;
	while (n && (pw[n - 1] == '\n' || pw[n - 1] == '\r'))
		pw[--n] = '\0';
	free_secret(s->pw);
	s->pw = pw;
	s->pw_stamp = in->creds.stamp;
}

/* Lists the sentinel pods; the connections are made again for the new list. */
static void discover(struct inst *in, struct inst_sentinels *s)
{
	struct inst_sentinel_addr a[INST_SENTINELS_MAX] = { 0 };
	struct inst_tls_files tls;
	struct err e = { 0 };
	size_t n = 0;
	bool tls_on;

	s->discover_at = now_ms() + (s->n ? SEN_DISCOVER_MS : SEN_DISCOVER_NONE_MS);
	if (inst_kube_sentinels(in, a, INST_SENTINELS_MAX, &n, &e) < 0) {
		log_debug("sentinel", "cannot list the sentinel pods", "error", e.msg,
		          (char *)NULL);
		return;
	}
	read_pw(in, s);
	drop_conns(s);
	memcpy(s->addr, a, n * sizeof(a[0]));
	s->n = n;
	tls_on = inst_tls_files(in, &tls); /* the sentinels are TLS-only then, as we are */
	for (size_t i = 0; i < n; i++) {
		struct vk_conn_config cfg = { .host = s->addr[i].host,
			                      .port = s->addr[i].port,
			                      .connect_timeout_ms = SEN_ASK_MS,
			                      .command_timeout_ms = SEN_ASK_MS,
			                      .password = s->pw,
			                      .tls = tls_on ? &tls.client : NULL };

		s->conn[i] = vk_conn_new(&cfg);
	}
}

/* Asks every sentinel; a failed one is listed again at the next discovery. */
static void ask(struct inst *in, struct inst_sentinels *s, struct inst_sentinel_tally *t)
{
	struct inst_sentinel_answer a[INST_SENTINELS_MAX] = { 0 };
	bool failed = false;

	if (s->pw_stamp != in->creds.stamp) {
		read_pw(in, s);
		for (size_t i = 0; i < s->n; i++)
			vk_conn_set_auth(s->conn[i], NULL, s->pw);
	}
	for (size_t i = 0; i < s->n; i++) {
		struct vk_reply *r = NULL;
		int rc = vk_command(s->conn[i], &r, NULL, "SENTINEL", "get-master-addr-by-name",
		                    API_INST_SENTINEL_MASTER_NAME);

		inst_sentinel_parse_addr_reply(rc, r, &a[i]);
		failed |= !a[i].ok;
		vk_reply_free(r);
	}
	inst_sentinel_tally(a, s->n,
	                    (size_t)(in->spec.sentinel_count > 0 ? in->spec.sentinel_count : 0),
	                    in->set.pod_ip, (int)in->set.server_port, t);
	if (t->verdict == INST_SENTINEL_SELF) {
		s->confirmed_at = now_ms();
		s->confirmed_once = true;
	}
	if (failed && s->discover_at > now_ms() + 1000)
		s->discover_at = now_ms() + 1000; /* a rescheduled sentinel has a new IP */
}

size_t inst_sentinel_boot_tally(struct inst *in, struct inst_sentinel_tally *t)
{
	memset(t, 0, sizeof(*t));
	if (!in->sen)
		return 0;
	discover(in, in->sen);
	if (in->sen->n)
		ask(in, in->sen, t);
	return in->sen->n;
}

void inst_sentinel_hold(struct inst *in, const char *why)
{
	in->sen->hold = true;
	in->sen->hold_since = now_ms();
	in->want = INST_STATE_PARKED;
	in->follow_primary = false;
	in->restart_at = 0;
	pthread_mutex_lock(&in->mu);
	snprintf(in->snap.reason, sizeof(in->snap.reason), "%s", why);
	pthread_mutex_unlock(&in->mu);
}

bool inst_sentinel_crashed(struct inst *in)
{
	if (!in->sen)
		return false;
	inst_sentinel_hold(in, "server crashed as primary: kept down until the sentinels name "
	                       "another master");
	return true;
}

bool inst_sentinel_holding(const struct inst *in)
{
	return in->sen && in->sen->hold;
}

void inst_sentinel_lease_lost(struct inst *in)
{
	struct inst_sentinels *s = in->sen ? in->sen : in->sen_move;

	if (s)
		s->auto_fenced = true; /* a manager moved from standalone lifts it too */
}

static void sentinels_free(struct inst_sentinels *s)
{
	if (!s)
		return;
	drop_conns(s);
	free_secret(s->pw);
	free(s);
}

void inst_sentinel_follow_free(struct inst *in)
{
	sentinels_free(in->sen);
	sentinels_free(in->sen_move);
	in->sen = NULL;
	in->sen_move = NULL;
}

/* --- following ------------------------------------------------------------------------ */

static void facts(struct inst *in, const struct inst_sentinel_tally *t, struct inst_follow_facts *f)
{
	struct inst_sentinels *s = in->sen;
	struct vk_role_info r = { 0 };
	bool role = in->server_pid > 0 && vk_role(in->server_conn, &r, NULL) == 0;

	f->tally = t;
	f->held = s->hold;
	f->held_ms = now_ms() - s->hold_since;
	f->failover_timeout_ms = in->spec.sentinel_failover_timeout_ms;
	f->primary = in->want == INST_STATE_PRIMARY;
	f->auto_fenced = s->auto_fenced;
	f->fenced_by_user = inst_is_fenced(in) && !s->auto_fenced && !s->hold && f->primary;
	f->server_master = role && r.role == VK_ROLE_PRIMARY;
	f->follows_named = role && r.role == VK_ROLE_REPLICA && r.master_port == t->port &&
	                   strcmp(r.master_host, t->host) == 0;
	f->parked = role && r.role == VK_ROLE_REPLICA && r.master_port == INST_PARK_PORT &&
	            strcmp(r.master_host, INST_PARK_HOST) == 0;
	/* the no-majority fence arms once a majority named this server: sentinels that
	 * are still starting never fence the primary they are about to monitor */
	f->unconfirmed_ms = s->confirmed_once ? now_ms() - s->confirmed_at : 0;
	f->fence_after_ms = in->spec.sentinel_down_after_ms / 2;
}

/* The held server restarts (timers) in the role wanted now; its fence marker goes. */
static int start_replica(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	(void)e;
	in->sen->hold = false;
	inst_clear_fenced(in);
	inst_become(in, INST_STATE_REPLICA, t->host, t->port,
	            "crashed as primary: restarting "
	            "as a replica of Sentinel's master");
	in->restart_at = now_ms();
	return 0;
}

static int start_primary(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	int rc = inst_lease_acquire(in, e);

	(void)t;
	if (!rc)
		rc = inst_lease_start(in, e);
	if (rc)
		return rc;
	in->sen->hold = false;
	inst_clear_fenced(in);
	inst_become(in, INST_STATE_PRIMARY, NULL, 0, "the sentinels kept naming it: primary");
	in->restart_at = now_ms();
	return 0;
}

/* REPLICAOF first (writes stop at once: a replica is read-only), then the Lease goes. */
static int demote(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	int rc = vk_replicaof(in->server_conn, t->host, t->port, e);

	if (rc)
		return rc;
	inst_lease_stop(in, true);
	(void)vk_client_unpause(in->server_conn, NULL);
	in->sen->auto_fenced = false;
	inst_clear_fenced(in);
	inst_become(in, INST_STATE_REPLICA, t->host, t->port,
	            "the sentinels name another master: demoted");
	return 0;
}

static int repoint(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	int rc = vk_replicaof(in->server_conn, t->host, t->port, e);

	if (rc)
		return rc;
	inst_become(in, INST_STATE_REPLICA, t->host, t->port,
	            "replica of the master the sentinels name");
	return 0;
}

/* Sentinel made the server master: the Lease follows; a fence of ours is lifted only
 * with the Lease held. */
static int take_lease(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	int rc = inst_lease_acquire(in, e);

	(void)t;
	if (!rc)
		rc = inst_lease_start(in, e);
	if (!rc && inst_is_fenced(in))
		rc = vk_client_unpause(in->server_conn, e);
	if (rc)
		return rc;
	in->sen->auto_fenced = false;
	inst_clear_fenced(in);
	inst_become(in, INST_STATE_PRIMARY, NULL, 0, "the sentinels name this server: primary");
	pthread_mutex_lock(&in->mu);
	in->snap.lease_held = true;
	pthread_mutex_unlock(&in->mu);
	return 0;
}

static int fence_unconfirmed(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	int rc = inst_fence_now(in, in->server_conn, "no majority of the sentinels names it",
	                        INST_FENCE_BUDGET_MS, e);

	(void)t;
	inst_lease_stop(in, true);
	in->sen->auto_fenced = true;
	in->fence_reassert_at = now_ms() + INST_FENCE_REASSERT_MS;
	return rc;
}

static int keep(struct inst *in, const struct inst_sentinel_tally *t, struct err *e)
{
	struct vk_role_info r;

	(void)e;
	/* Sentinel re-pointed the server: a restart of it follows the same master */
	if (t->verdict == INST_SENTINEL_OTHER && in->want == INST_STATE_REPLICA &&
	    (in->want_port != t->port || strcmp(in->want_host, t->host) != 0) &&
	    vk_role(in->server_conn, &r, NULL) == 0 && r.role == VK_ROLE_REPLICA &&
	    r.master_port == t->port && strcmp(r.master_host, t->host) == 0)
		inst_become(in, INST_STATE_REPLICA, t->host, t->port,
		            "replica of the master the sentinels name");
	/* a replica of Sentinel's master is read-only: a fence marker left there goes */
	if (t->verdict == INST_SENTINEL_OTHER && in->want == INST_STATE_REPLICA &&
	    inst_is_fenced(in) && !in->sen->hold)
		inst_clear_fenced(in);
	return 0;
}

static int (*const acts[])(struct inst *, const struct inst_sentinel_tally *, struct err *) = {
	[INST_FOLLOW_KEEP] = keep,
	[INST_FOLLOW_HOLD] = keep,
	[INST_FOLLOW_START_REPLICA] = start_replica,
	[INST_FOLLOW_START_PRIMARY] = start_primary,
	[INST_FOLLOW_DEMOTE] = demote,
	[INST_FOLLOW_REPOINT] = repoint,
	[INST_FOLLOW_TAKE_LEASE] = take_lease,
	[INST_FOLLOW_FENCE] = fence_unconfirmed,
};

static int64_t step_interval(const struct inst *in)
{
	int64_t v = in->spec.renew_period_ms, q = in->spec.sentinel_down_after_ms / 4;

	v = q < v ? q : v;
	return v < SEN_STEP_MIN_MS ? SEN_STEP_MIN_MS : v;
}

/* --- the move from standalone, in place (sentinel_move.h) ------------------------------- */

/* The cluster again, every SEN_MODE_POLL_MS until it says sentinel: its spec.mode and
 * spec.sentinel become this manager's, as a boot would have read them. */
static void read_mode(struct inst *in, struct inst_sentinels *s)
{
	struct inst_spec sp;
	struct err e = { 0 };

	if (s->spec_sentinel || now_ms() < s->mode_at)
		return;
	s->mode_at = now_ms() + SEN_MODE_POLL_MS;
	if (inst_kube_cluster(in, &sp, &e) < 0) {
		log_debug("sentinel", "cannot read the cluster's spec.mode", "error", e.msg,
		          (char *)NULL);
		return;
	}
	if (sp.mode && strcmp(sp.mode, "sentinel") == 0) {
		free(in->spec.mode);
		in->spec.mode = xstrdup(sp.mode);
		in->spec.sentinel_count = sp.sentinel_count;
		in->spec.sentinel_down_after_ms = sp.sentinel_down_after_ms;
		in->spec.sentinel_failover_timeout_ms = sp.sentinel_failover_timeout_ms;
		s->spec_sentinel = true;
		log_info("sentinel",
		         "spec.mode is sentinel now: following the sentinels once a majority "
		         "names a master",
		         "pod", in->set.pod_name, (char *)NULL);
	}
	inst_spec_release(&sp);
}

/* The server crashed as primary and was restarted parked (the standalone rule). */
static bool crashed_parked(struct inst *in)
{
	bool crashed;

	pthread_mutex_lock(&in->mu);
	crashed = in->snap.primary_crashed;
	pthread_mutex_unlock(&in->mu);
	return crashed && in->want == INST_STATE_PARKED;
}

/* From now on this manager is one of sentinel mode's (in->sen): no restart. */
static void start_following(struct inst *in, struct inst_sentinels *s,
                            const struct inst_move_decision *d, const struct inst_sentinel_tally *t)
{
	char votes[32];

	in->sen_move = NULL;
	in->sen = s;
	s->confirmed_at = now_ms();
	s->confirmed_once = t->verdict == INST_SENTINEL_SELF;
	s->step_at = 0;
	if (d->action == INST_MOVE_HOLD_FOLLOW) {
		inst_stop_server(in, in->set.shutdown_timeout_ms, in->spec.ephemeral);
		inst_sentinel_hold(in, "server crashed as primary: kept down until the sentinels "
		                       "name another master");
	}
	snprintf(votes, sizeof(votes), "%zu/%zu", t->votes, t->needed);
	log_info("sentinel", d->reason, "pod", in->set.pod_name, "action",
	         inst_move_action_name(d->action), "master", t->host, "votes", votes, (char *)NULL);
}

/* A manager that booted standalone: the old mode's rules hold until the move's table
 * says follow (the cluster says sentinel, and a majority of the sentinels names a master). */
static void move_step(struct inst *in)
{
	struct inst_sentinels *s = in->sen_move;
	struct inst_move_facts f = { 0 };
	struct inst_sentinel_tally t = { 0 };
	struct inst_move_decision d;

	if (!is_mode(in, "standalone") && !s)
		return;
	if (!s)
		s = in->sen_move = sentinels_new();
	read_mode(in, s);
	if (!s->spec_sentinel || now_ms() < s->step_at)
		return;
	s->step_at = now_ms() + step_interval(in);
	if (now_ms() >= s->discover_at)
		discover(in, s);
	if (s->n)
		ask(in, s, &t);
	f.spec_sentinel = true;
	f.sentinels = s->n;
	f.verdict = t.verdict;
	f.crashed_parked = crashed_parked(in);
	inst_sentinel_move_decide(&f, &d);
	if (d.action != INST_MOVE_WAIT)
		return start_following(in, s, &d, &t);
	if (d.action != s->move_last)
		log_info("sentinel", d.reason, "pod", in->set.pod_name, (char *)NULL);
	s->move_last = d.action;
}

/* The move's end, whichever path (sentinel_steer.h RESTORE): this server demoted (the
 * master moved) or the pause bound passed. As a replica, the guard. */
static void steer_step(struct inst *in, struct inst_sentinels *s)
{
	int64_t hold = in->spec.switchover_timeout_ms + in->spec.sentinel_failover_timeout_ms +
	               SEN_SWITCH_SLACK_MS + INST_STEER_SEEN_MS;

	if (s->steer.n && (in->want != INST_STATE_PRIMARY || now_ms() >= s->steer.restore_at))
		inst_steer_restore(in, &s->steer,
		                   in->want != INST_STATE_PRIMARY ? "the master moved"
		                                                  : "the pause bound passed");
	if (in->want == INST_STATE_REPLICA && in->server_pid > 0)
		inst_steer_guard(in, &s->steer, hold);
}

void inst_sentinel_step(struct inst *in)
{
	struct inst_sentinels *s = in->sen;
	struct inst_sentinel_tally t;
	struct inst_follow_facts f = { 0 };
	struct inst_follow_decision d;
	struct err e = { 0 };
	char votes[32];
	int rc;

	if (!s)
		return move_step(in);
	if (now_ms() < s->step_at)
		return;
	s->step_at = now_ms() + step_interval(in);
	if (now_ms() >= s->discover_at)
		discover(in, s);
	if (!s->n)
		return; /* no sentinel pod: nobody promotes, the Lease guards (role.h) */
	ask(in, s, &t);
	facts(in, &t, &f);
	inst_sentinel_follow(&f, &d);
	rc = acts[d.action](in, &t, &e);
	steer_step(in, s);
	if (d.action == s->last && (rc != 0) == s->last_failed)
		return; /* logged once per change */
	s->last = d.action;
	s->last_failed = rc != 0;
	snprintf(votes, sizeof(votes), "%zu/%zu", t.votes, t.needed);
	log_emit(rc ? LOG_LEVEL_WARN : LOG_LEVEL_INFO, "sentinel",
	         rc ? "following the sentinels failed" : d.reason, "pod", in->set.pod_name,
	         "action", inst_follow_action_name(d.action), "master", t.host, "votes", votes,
	         "error", e.msg, (char *)NULL);
}

/* --- the planned switchover (POST /v1/switchover in this mode) -------------------------- */

static void sw_answer(struct inst_cmd *c, unsigned status, json_t *j)
{
	c->status = status;
	c->body = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
}

static void sw_fail(struct inst *in, struct inst_cmd *c, unsigned status, bool paused,
                    const char *msg)
{
	if (paused)
		(void)vk_client_unpause(in->server_conn, NULL);
	inst_steer_restore(in, &in->sen->steer, "the switchover was refused");
	log_warn("sentinel", "planned switchover refused", "pod", in->set.pod_name, "error", msg,
	         (char *)NULL);
	sw_answer(c, status, json_pack("{s:s}", "error", msg));
}

/* The first sentinel answering SENTINEL MASTER: its index and num-slaves; -1: none. */
static int sw_sentinel(struct inst *in, int64_t *known)
{
	struct inst_sentinels *s = in->sen;

	for (size_t i = 0; i < s->n; i++) {
		struct inst_sentinel_master m = { 0 };
		struct vk_reply *r = NULL;
		int rc = vk_command(s->conn[i], &r, NULL, "SENTINEL", "MASTER",
		                    API_INST_SENTINEL_MASTER_NAME);

		if (!rc)
			rc = inst_sentinel_parse_master(r, &m, NULL);
		vk_reply_free(r);
		if (!rc) {
			*known = m.replicas;
			return (int)i;
		}
	}
	return -1;
}

/* Writes paused until every replica Sentinel could pick has the primary's offset. */
static bool sw_wait(struct inst *in, int64_t known, int64_t deadline, struct vk_info *info,
                    char *why, size_t len)
{
	struct timespec ts = { 0, SEN_SWITCH_POLL_MS * 1000000L };
	struct err e = { 0 };

	for (;;) {
		if (vk_info(in->server_conn, "replication", info, &e) < 0)
			snprintf(why, len, "%s", e.msg);
		else if (inst_sentinel_caught_up(info, known, why, len))
			return true;
		if (now_ms() >= deadline)
			return false;
		nanosleep(&ts, NULL);
	}
}

/* A named target (the request's pod; its host and port from the request, else from its
 * Pod object): every other replica's
 * replica-priority 0, until the sentinel that will be asked sees it (sentinel_steer.h);
 * writes are not paused meanwhile. 0, or the HTTP status with msg. */
static unsigned sw_steer(struct inst *in, struct inst_cmd *c, int k, int64_t deadline, char *msg,
                         size_t len)
{
	struct vk_info info;
	struct err e = { 0 };
	int64_t t0 = now_ms();
	char waited[24];
	unsigned st;

	if ((!c->req.host[0] || c->req.port <= 0) &&
	    inst_kube_pod_addr(in, c->req.pod, c->req.host, sizeof(c->req.host), &c->req.port, NULL,
	                       &e) < 0) {
		snprintf(msg, len, "the target pod: %s", e.msg);
		return 409;
	}
	if (vk_info(in->server_conn, "replication", &info, &e) < 0) {
		snprintf(msg, len, "%s", e.msg);
		return 503;
	}
	st = inst_steer_lower(in, &in->sen->steer, &info, c->req.host, c->req.port, msg, len);
	if (st)
		return st;
	if (!inst_steer_wait_seen(in->sen->conn[k], c->req.host, c->req.port, deadline, msg, len))
		return 409; /* sw_fail restores */
	snprintf(waited, sizeof(waited), "%lld", (long long)(now_ms() - t0));
	log_info("sentinel", "steered switchover: Sentinel sees the other replicas at priority 0",
	         "pod", in->set.pod_name, "target", c->req.pod, "waited_ms", waited, (char *)NULL);
	return 0;
}

void inst_sentinel_switchover(struct inst *in, struct inst_cmd *c)
{
	int64_t t0 = now_ms(), known = -1, pause, budget = c->req.timeout_ms;
	char why[ERR_MSG_MAX], msg[ERR_MSG_MAX + 128];
	struct vk_info info;
	struct err e = { 0 };
	unsigned st;
	int k;

	budget = budget > 0 ? budget : in->spec.switchover_timeout_ms;
	pause = in->spec.sentinel_failover_timeout_ms + SEN_SWITCH_SLACK_MS;
	if (in->want != INST_STATE_PRIMARY || inst_is_fenced(in))
		return sw_fail(in, c, 409, false,
		               "not an unfenced primary: a planned switchover starts at the "
		               "primary's manager");
	if ((k = sw_sentinel(in, &known)) < 0)
		return sw_fail(in, c, 503, false, "no sentinel answers SENTINEL MASTER");
	if (in->sen->steer.n)
		return sw_fail(in, c, 409, false, "a steered switchover is still in progress");
	if (c->req.pod[0] &&
	    (st = sw_steer(in, c, k, now_ms() + INST_STEER_SEEN_MS, msg, sizeof(msg))))
		return sw_fail(in, c, st, false, msg);
	t0 = now_ms(); /* the pause and the catch-up budget start now */
	if (vk_client_pause_write(in->server_conn, pause, &e) < 0)
		return sw_fail(in, c, 503, false, e.msg);
	if (!sw_wait(in, known, t0 + budget, &info, why, sizeof(why))) {
		snprintf(msg, sizeof(msg), "replicas not caught up within %lld ms: %s",
		         (long long)budget, why);
		return sw_fail(in, c, 409, true, msg);
	}
	if (vk_command(in->sen->conn[k], NULL, &e, "SENTINEL", "FAILOVER",
	               API_INST_SENTINEL_MASTER_NAME) < 0) {
		snprintf(msg, sizeof(msg), "SENTINEL FAILOVER refused: %s", e.msg);
		return sw_fail(in, c, 409, true, msg);
	}
	in->sen->steer.restore_at = now_ms() + pause;
	log_info("sentinel",
	         "planned switchover: writes paused, replicas caught up, SENTINEL "
	         "FAILOVER sent",
	         "pod", in->set.pod_name, "sentinel", in->sen->addr[k].host, "target",
	         c->req.pod[0] ? c->req.pod : "Sentinel's pick", (char *)NULL);
	sw_answer(c, 200,
	          json_pack("{s:s,s:I,s:I,s:I}", "result", "started", "pausedMs",
	                    (json_int_t)(now_ms() - t0), "offset",
	                    (json_int_t)info.master_repl_offset, "pauseBoundMs",
	                    (json_int_t)pause));
}

/*
 * ops: the mutations of the HTTP API, executed on the supervisor thread over `server_conn`
 * (see request.h for the bodies and internal.h for threads). Every operation is
 * idempotent: asking for the state the instance is already in answers 200 and
 * changes nothing.
 *
 * Invariant: nothing makes the server writable (REPLICAOF NO ONE, CLIENT UNPAUSE of a
 * primary, removing the fence of a primary) unless this instance holds the primary
 * Lease at that moment.
 *
 * Switchover (on the current primary): CLIENT PAUSE WRITE; read our
 * master_repl_offset after the pause began; poll the TARGET's offset directly over
 * TCP as the operator user (ROLE, a round trip each, not the ~1 s REPLCONF ACK) until
 * it reaches ours; stop renewing and release the lease; ask the target's instance
 * manager to promote (POST http(s)://target:httpPort/v1/promote; over HTTPS with the
 * peer certificate of --http-tls-dir, see controller/pki.h), which takes the lease
 * and runs REPLICAOF NO ONE; then REPLICAOF target on ourselves (a partial resync:
 * the target keeps our history as replid2), confirmed by our server's own ROLE, and
 * only then unpause: the writes that waited now get READONLY and clients move to the
 * new primary. The answer carries the measured pause. The manager drives the promote
 * itself (not the controller) so the pause is a few round trips; the controller then
 * moves status.currentPrimary and the labels.
 *
 * The pause has no end of its own (the fence's 24 h): a slow API server can stretch the
 * hand-over, never outlast the pause. Every exit lifts it only where that is safe: a
 * catch-up timeout (we still hold the lease: nothing changed); a failed promote after
 * we took the lease back; a confirmed demotion. A promote that failed when the lease
 * cannot be taken back, and a demotion that is not confirmed within DEMOTE_BUDGET_MS,
 * keep the pause as a fence (marker, `fenced`): the controller re-points this instance
 * with /v1/replicate, which confirms the same way before it unfences.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/instance_v1.h"
#include "instance/fault.h"
#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/httpc.h"
#include "lib/log.h"
#include "lib/engine/directives.h"

#define PROMOTE_TIMEOUT_MS 5000
#define DEMOTE_BUDGET_MS   2000 /* REPLICAOF retried this long before staying fenced */
#define DEMOTE_RETRY_MS    100
#define PEER_BODY_MAX      (64 * 1024)

static void reply(struct inst_cmd *c, unsigned status, json_t *j)
{
	c->status = status;
	c->body = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
}

static void fail(struct inst_cmd *c, unsigned status, const char *msg)
{
	struct api_inst_error a = { .error = msg };

	reply(c, status, api_inst_error_encode(&a));
}

/* 200: what was done, and the server's role and offsets when INFO answers. */
static void ok(struct inst *in, struct inst_cmd *c, const char *what)
{
	struct api_inst_result a = { .result = what };
	struct vk_info i;

	if (vk_info(in->server_conn, "replication", &i, NULL) == 0) {
		a.has_offsets = true;
		a.role = vk_role_name(i.role);
		a.repl_id = i.master_replid;
		a.repl_id2 = i.master_replid2;
		a.offset = i.role == VK_ROLE_REPLICA ? i.slave_repl_offset : i.master_repl_offset;
	}
	a.fenced = inst_is_fenced(in);
	a.lease_held = inst_lease_held(in);
	reply(c, 200, api_inst_result_encode(&a));
}

void inst_clear_fenced(struct inst *in)
{
	inst_marker_remove(in->marker_path);
	pthread_mutex_lock(&in->mu);
	in->snap.fenced = false;
	in->snap.fence_reason[0] = '\0';
	in->snap.primary_crashed = false;
	pthread_mutex_unlock(&in->mu);
	in->fence_reassert_at = 0;
}

/* Fences over server_conn (fence.c: confirmed, or the server is halted) and keeps it so. */
static int fence(struct inst *in, const char *reason, struct err *e)
{
	int rc = inst_fence_now(in, in->server_conn, reason, INST_FENCE_BUDGET_MS, e);

	if (!rc)
		in->fence_reassert_at = clock_mono_ms() + INST_FENCE_REASSERT_MS;
	return rc;
}

/* --- fence -------------------------------------------------------------------------- */

static void op_fence(struct inst *in, struct inst_cmd *c)
{
	struct err e = { 0 };

	if (fence(in, c->req.reason, &e) < 0)
		return fail(c, 503, e.msg);
	if (in->want == INST_STATE_PRIMARY)
		inst_lease_stop(in, true); /* a fenced primary gives the lease up */
	log_warn("ops", "fenced", "pod", in->set.pod_name, "reason", c->req.reason, (char *)NULL);
	ok(in, c, "fenced");
}

static int take_lease(struct inst *in, struct inst_cmd *c)
{
	char holder[K8S_LEASE_IDENTITY_MAX + 1], msg[256];
	struct err e = { 0 };
	int rc = inst_lease_acquire(in, &e);

	if (rc == 0)
		return inst_lease_start(in, &e);
	k8s_lease_holder(in->lease, holder, sizeof(holder));
	if (rc == -EBUSY)
		snprintf(msg, sizeof(msg), "the primary lease is held by %.128s", holder);
	else
		snprintf(msg, sizeof(msg), "the primary lease is unavailable: %.200s", e.msg);
	fail(c, rc == -EBUSY ? 409 : 503, msg);
	return rc;
}

static void op_unfence(struct inst *in, struct inst_cmd *c)
{
	struct err e = { 0 };

	if (!inst_is_fenced(in))
		return ok(in, c, "not fenced");
	if (in->want == INST_STATE_PRIMARY && take_lease(in, c) < 0)
		return;
	if (vk_client_unpause(in->server_conn, &e) < 0 && in->server_pid > 0)
		return fail(c, 503, e.msg);
	inst_clear_fenced(in);
	log_info("ops", "unfenced", "pod", in->set.pod_name, (char *)NULL);
	ok(in, c, "unfenced");
}

/* --- promote / replicate ----------------------------------------------------------- */

void inst_become(struct inst *in, enum inst_state st, const char *host, int port, const char *why)
{
	in->want = st;
	in->follow_primary = false;
	snprintf(in->want_host, sizeof(in->want_host), "%s", host ? host : "");
	in->want_port = port;
	pthread_mutex_lock(&in->mu);
	snprintf(in->snap.master_host, sizeof(in->snap.master_host), "%s", host ? host : "");
	in->snap.master_port = port;
	pthread_mutex_unlock(&in->mu);
	inst_set_state(in, st, why);
}

static void op_promote(struct inst *in, struct inst_cmd *c)
{
	struct vk_info info;
	struct err e = { 0 };

	if (in->want == INST_STATE_PRIMARY && inst_lease_held(in) && !inst_is_fenced(in))
		return ok(in, c, "already primary");
	if (vk_info(in->server_conn, "persistence", &info, &e) < 0)
		return fail(c, 503, e.msg);
	if (info.loading && !c->req.force)
		return fail(c, 409, "the server is still loading its data");
	if (take_lease(in, c) < 0)
		return;
	if (vk_replicaof_no_one(in->server_conn, &e) < 0 ||
	    vk_client_unpause(in->server_conn, &e) < 0) {
		inst_lease_stop(in, true);
		return fail(c, 503, e.msg);
	}
	inst_clear_fenced(in);
	inst_become(in, INST_STATE_PRIMARY, NULL, 0, "promoted");
	pthread_mutex_lock(&in->mu);
	in->snap.lease_held = true;
	pthread_mutex_unlock(&in->mu);
	log_info("ops", "promoted", "pod", in->set.pod_name, (char *)NULL);
	inst_poller_refresh(in, 0);
	ok(in, c, "promoted");
}

static bool is_self(struct inst *in, const char *host, int port)
{
	return port == in->set.server_port && in->set.pod_ip && strcmp(host, in->set.pod_ip) == 0;
}

/* Does the server itself (not this manager's state) replicate from host:port? */
static bool server_follows(struct inst *in, const char *host, int port)
{
	struct vk_role_info r;

	return vk_role(in->server_conn, &r, NULL) == 0 && r.role == VK_ROLE_REPLICA &&
	       r.master_port == port && strcmp(r.master_host, host) == 0;
}

/*
 * REPLICAOF host port until the server's own ROLE says it replicates from there (retried
 * every DEMOTE_RETRY_MS within budget_ms). 0 once confirmed: only then may a demoted
 * primary's pause be lifted (ops.c header). `refused`: the test fault point
 * (instance/fault.h) makes every attempt fail.
 */
static int demote(struct inst *in, const char *host, int port, int64_t budget_ms, bool refused,
                  struct err *e)
{
	int64_t deadline = clock_mono_ms() + budget_ms;
	struct timespec nap = { 0, DEMOTE_RETRY_MS * 1000000L };
	int rc;

	for (;;) {
		err_clear(e);
		if (refused)
			rc = err_set(e, -EIO, "REPLICAOF %s %d refused (injected fault)", host,
			             port);
		else if ((rc = vk_replicaof(in->server_conn, host, port, e)) == 0 &&
		         !server_follows(in, host, port))
			rc = err_set(e, -EIO, "REPLICAOF %s %d answered, but ROLE does not show it",
			             host, port);
		if (rc == 0 || clock_mono_ms() + DEMOTE_RETRY_MS >= deadline)
			return rc;
		nanosleep(&nap, NULL);
	}
}

static void op_replicate(struct inst *in, struct inst_cmd *c)
{
	struct err e = { 0 };
	bool same = in->want == INST_STATE_REPLICA && in->want_port == c->req.port &&
	            strcmp(in->want_host, c->req.host) == 0;

	if (is_self(in, c->req.host, c->req.port))
		return fail(c, 400, "host, port: that is this instance");
	if (same && !inst_is_fenced(in) && server_follows(in, c->req.host, c->req.port))
		return ok(in, c, "already replicating");
	if (demote(in, c->req.host, c->req.port, DEMOTE_BUDGET_MS, false, &e) < 0)
		return fail(c, 503, e.msg); /* a fence, if any, stays */
	if (in->want == INST_STATE_PRIMARY)
		inst_lease_stop(in, true);
	/* A replica is read-only: a fence's pause would only hold back its replication. */
	(void)vk_client_unpause(in->server_conn, NULL);
	inst_clear_fenced(in);
	inst_become(in, INST_STATE_REPLICA, c->req.host, c->req.port, "replicating as instructed");
	log_info("ops", "replicating", "pod", in->set.pod_name, "host", c->req.host, (char *)NULL);
	ok(in, c, "replicating");
}

/* --- switchover -------------------------------------------------------------------- */

/* What a manager shows the peer it promotes: the controller's layout (controller/pki.h)
 * has a peer pair (the server's own pair is refused as a client) and the CA of the
 * peers' servers; another layout has one CA for everything. paths holds the three
 * file names that t points into. */
static void peer_tls(struct inst *in, char paths[3][PATH_MAX * 2], struct httpc_tls *t)
{
	static const char *const peer_files[] = { "peer.crt", "peer.key", "peer-ca.crt" };
	static const char *const own_files[] = { "tls.crt", "tls.key", "ca.crt" };
	const char *const *files;

	snprintf(paths[0], sizeof(paths[0]), "%s/%s", in->set.http_tls_dir, peer_files[0]);
	files = access(paths[0], R_OK) == 0 ? peer_files : own_files;
	for (size_t i = 0; i < 3; i++)
		snprintf(paths[i], sizeof(paths[i]), "%s/%s", in->set.http_tls_dir, files[i]);
	*t = (struct httpc_tls){ .cert_file = paths[0],
		                 .key_file = paths[1],
		                 .ca_file = paths[2],
		                 .skip_host_check = true }; /* peers are addressed by IP */
}

static int post_promote(struct inst *in, const char *host, int port, struct err *e)
{
	struct httpc_body resp = HTTPC_BODY_INIT(PEER_BODY_MAX);
	char url[INST_HOST_MAX + 64], paths[3][PATH_MAX * 2];
	struct httpc_tls t;
	struct api_inst_request req = { .op = API_INST_PROMOTE };
	json_t *j = api_inst_request_encode(&req);
	char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
	struct httpc_req rq = { .method = "POST",
		                .url = url,
		                .body = body,
		                .body_len = body ? strlen(body) : 0,
		                .has_body = true,
		                .timeout_ms = PROMOTE_TIMEOUT_MS };
	struct err te;
	long status = 0;
	int rc;

	json_decref(j);
	if (!body)
		return err_set(e, -ENOMEM, "promote body");

	snprintf(url, sizeof(url), "%s://%s:%d/v1/promote", in->http_tls ? "https" : "http", host,
	         port);
	if (in->http_tls) {
		peer_tls(in, paths, &t);
		rq.tls = &t;
	}
	err_clear(&te);
	rc = httpc_perform(&rq, &resp, &status, &httpc_errmap_peer, &te);
	if (rc && status) /* "<url>: HTTP <body>" */
		err_set(e, -EIO, "%s: HTTP %s", url, buf_cstr(&resp.buf));
	else if (rc)
		err_set(e, -EIO, "%s %s", te.msg, buf_cstr(&resp.buf));
	buf_release(&resp.buf);
	free(body);
	return rc;
}

struct sw {
	char host[INST_HOST_MAX + 1];
	int port, http_port;
	int64_t timeout_ms;
	struct vk_conn *target;
	long long offset;
	int64_t t0, t_caught, t_released, t_promoted, t_end; /* mono µs */
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int sw_target(struct inst *in, struct inst_cmd *c, struct sw *s, struct err *e)
{
	struct vk_role_info r;
	int rc = 0;

	s->timeout_ms = c->req.timeout_ms ? c->req.timeout_ms : in->spec.switchover_timeout_ms;
	snprintf(s->host, sizeof(s->host), "%s", c->req.host);
	s->port = c->req.port;
	s->http_port = c->req.http_port;
	if (c->req.pod[0])
		rc = inst_kube_pod_addr(in, c->req.pod, s->host, sizeof(s->host), &s->port,
		                        &s->http_port, e);
	if (rc)
		return rc;
	s->target = inst_conn_new(in, s->host, s->port, 1000);
	rc = vk_role(s->target, &r, e);
	if (!rc && r.role != VK_ROLE_REPLICA)
		rc = err_set(e, -EINVAL, "target %s:%d is not a replica", s->host, s->port);
	return rc;
}

/* Polls the target's own offset until it reaches ours: 0, or -ETIMEDOUT. */
static int sw_catch_up(struct sw *s, struct err *e)
{
	int64_t deadline = now_us() + s->timeout_ms * 1000;
	struct vk_role_info r;

	while (now_us() < deadline) {
		if (vk_role(s->target, &r, NULL) == 0 && r.offset >= s->offset)
			return 0;
	}
	return err_set(e, -ETIMEDOUT, "target did not reach offset %lld within %lld ms", s->offset,
	               (long long)s->timeout_ms);
}

static void sw_abort(struct inst *in, struct inst_cmd *c, const char *why)
{
	struct err e = { 0 };
	struct vk_role_info r;

	if (inst_lease_acquire(in, &e) == 0 && inst_lease_start(in, &e) == 0 &&
	    vk_role(in->server_conn, &r, NULL) == 0 && r.role == VK_ROLE_PRIMARY) {
		vk_client_unpause(in->server_conn, NULL);
		return fail(c, 502, why);
	}
	fence(in, "switchover failed half-way", NULL);
	fail(c, 502, "switchover failed half-way; this instance stays fenced");
}

static double ms_between(int64_t a, int64_t b)
{
	return (double)(b - a) / 1000.0;
}

static void sw_answer(struct inst_cmd *c, const struct sw *s, const char *demote_error)
{
	/* where the pause went: catch-up, lease release, the target's promote (lease + REPLICAOF) */
	struct api_inst_switchover_result a = {
		.result = "switched over",
		.target = s->host,
		.target_port = s->port,
		.offset = s->offset,
		.demoted = !demote_error,
		.catch_up_ms = ms_between(s->t0, s->t_caught),
		.lease_release_ms = ms_between(s->t_caught, s->t_released),
		.promote_ms = ms_between(s->t_released, s->t_promoted),
		.write_pause_ms = ms_between(s->t0, s->t_promoted),
		.old_primary_paused_ms = ms_between(s->t0, s->t_end),
		.demote_error = demote_error,
	};

	reply(c, 200, api_inst_switchover_result_encode(&a));
}

/*
 * The target is primary: become its replica, confirmed by our own server's ROLE, and
 * only then lift the pause. A demotion that cannot be confirmed leaves this instance
 * paused as a fence (marker, `fenced`), parked: the controller re-points it with
 * /v1/replicate, which confirms the same way before unfencing.
 */
static void sw_demote(struct inst *in, struct inst_cmd *c, struct sw *s)
{
	struct err e = { 0 };

	if (demote(in, s->host, s->port, DEMOTE_BUDGET_MS,
	           inst_fault_hit(INST_FAULT_SWITCHOVER_DEMOTION), &e) == 0) {
		vk_client_unpause(in->server_conn, NULL);
		s->t_end = now_us();
		inst_become(in, INST_STATE_REPLICA, s->host, s->port, "switched over");
		return sw_answer(c, s, NULL);
	}
	log_error("ops", "switchover: demotion not confirmed; staying fenced", "error", e.msg,
	          (char *)NULL);
	(void)fence(in, "switchover: demotion to a replica not confirmed", NULL);
	s->t_end = now_us();
	inst_become(in, INST_STATE_PARKED, NULL, 0, "switched over; demotion failed: fenced");
	sw_answer(c, s, e.msg);
}

static void sw_run(struct inst *in, struct inst_cmd *c, struct sw *s)
{
	struct vk_info info;
	struct vk_role_info r;
	struct err e = { 0 };

	s->t0 = now_us();
	/* A pause without an end of its own (the fence's): however slow the API server makes
	 * the hand-over, it holds until this function lifts it or keeps it as a fence. */
	if (vk_client_pause_write(in->server_conn, INST_FENCE_PAUSE_MS, &e) < 0 ||
	    vk_info(in->server_conn, "replication", &info, &e) < 0) {
		vk_client_unpause(in->server_conn, NULL); /* we still hold the lease */
		return fail(c, 503, e.msg);
	}
	s->offset = info.master_repl_offset;
	if (sw_catch_up(s, &e) < 0) {
		vk_client_unpause(in->server_conn, NULL);
		return fail(c, 504, e.msg);
	}
	s->t_caught = now_us();
	inst_lease_stop(in, true);
	s->t_released = now_us();
	if (post_promote(in, s->host, s->http_port, &e) < 0 &&
	    !(vk_role(s->target, &r, NULL) == 0 && r.role == VK_ROLE_PRIMARY))
		return sw_abort(in, c, e.msg);
	s->t_promoted = now_us();
	sw_demote(in, c, s);
}

static void op_switchover(struct inst *in, struct inst_cmd *c)
{
	struct sw s = { 0 };
	struct err e = { 0 };

	if (in->want != INST_STATE_PRIMARY || inst_is_fenced(in) || !inst_lease_held(in))
		return fail(c, 409,
		            "switchover needs this instance to be the unfenced primary "
		            "holding the lease");
	if (sw_target(in, c, &s, &e) < 0)
		fail(c, e.code == -EINVAL ? 409 : 503, e.msg);
	else
		sw_run(in, c, &s);
	vk_conn_free(s.target);
	if (c->status == 200) {
		char ms[32];

		snprintf(ms, sizeof(ms), "%.3f", (double)(s.t_promoted - s.t0) / 1000.0);
		log_info("ops", "switched over", "pod", in->set.pod_name, "target", s.host,
		         "writePauseMs", ms, (char *)NULL);
	}
}

/* --- config, users, restart -------------------------------------------------------- */

static void kv_add(struct inst_strv *names, struct inst_strv *values, const char *n, const char *v)
{
	inst_strv_push(names, n);
	inst_strv_push(values, v);
}

/* The live directives that differ between old and new; the rest go to restart. */
static void diff_directives(struct inst *in, const struct inst_desired *old,
                            const struct inst_desired *nw, struct inst_strv *names,
                            struct inst_strv *values, struct inst_strv *restart)
{
	char num[32];

	for (size_t i = 0; i < nw->nredis; i++) {
		const char *was = old ? inst_desired_redis(old, nw->redis[i].name) : NULL;

		if (was && strcmp(was, nw->redis[i].value) == 0)
			continue;
		if (vk_directive_is_live(in->engine, in->version, nw->redis[i].name))
			kv_add(names, values, nw->redis[i].name, nw->redis[i].value);
		else if (restart)
			inst_strv_push(restart, nw->redis[i].name);
	}
	for (size_t i = 0; old && restart && i < old->nredis; i++)
		if (!inst_desired_redis(nw, old->redis[i].name))
			inst_strv_push(restart, old->redis[i].name);
	snprintf(num, sizeof(num), "%llu",
	         nw->has_maxmemory ? (unsigned long long)nw->maxmemory : 0ULL);
	if (!inst_desired_redis(nw, "maxmemory"))
		kv_add(names, values, "maxmemory", num);
	if (!inst_desired_redis(nw, "maxmemory-policy"))
		kv_add(names, values, "maxmemory-policy",
		       nw->maxmemory_policy ? nw->maxmemory_policy : "noeviction");
	snprintf(num, sizeof(num), "%lld", (long long)nw->min_sync_replicas);
	if (!inst_desired_redis(nw, "min-replicas-to-write"))
		kv_add(names, values, "min-replicas-to-write", num);
	kv_add(names, values, "masterauth", in->creds.operator_pw);
}

static int setuser(struct inst *in, const char *name, enum inst_acl_kind kind, bool enabled,
                   const struct inst_pwset *pw, char *const *rules, size_t n, struct err *e)
{
	struct inst_strv r = { 0 };
	int rc;

	inst_acl_rules(kind, enabled, pw, rules, n, &r);
	rc = vk_acl_setuser(in->server_conn, name, (const char *const *)r.v, r.n, e);
	inst_strv_release(&r);
	return rc;
}

static bool wanted_user(const struct inst_desired *d, const char *name)
{
	if (strcmp(name, "default") == 0 || strcmp(name, INST_OPERATOR_USER) == 0)
		return true;
	for (size_t i = 0; i < d->nusers; i++)
		if (strcmp(d->users[i].name, name) == 0)
			return true;
	return inst_acl_file_wants(d, name);
}

static int drop_unwanted_users(struct inst *in, const struct inst_desired *d, struct err *e)
{
	struct vk_reply *r = NULL;
	int rc = vk_command(in->server_conn, &r, e, "ACL", "USERS");

	for (size_t i = 0; !rc && i < vk_reply_len(r); i++) {
		const char *u = vk_reply_str(vk_reply_elem(r, i), NULL);

		if (u && !wanted_user(d, u))
			rc = vk_command(in->server_conn, NULL, e, "ACL", "DELUSER", u);
	}
	vk_reply_free(r);
	return rc;
}

static int apply_users(struct inst *in, struct inst_desired *d, struct err *e)
{
	static const struct inst_pwset none;
	int rc = setuser(in, INST_OPERATOR_USER, INST_ACL_OPERATOR, true, &in->creds.operator_all,
	                 NULL, 0, e);

	if (!rc)
		rc = setuser(in, "default", INST_ACL_DEFAULT, true, &in->creds.default_all, NULL, 0,
		             e);
	for (size_t i = 0; !rc && i < d->nusers; i++) {
		const struct inst_pwset *pw = inst_creds_user(&in->creds, d->users[i].name);

		rc = setuser(in, d->users[i].name, INST_ACL_CUSTOMER, d->users[i].enabled,
		             pw ? pw : &none, d->users[i].rules, d->users[i].nrules, e);
	}
	if (!rc)
		rc = inst_acl_file_apply(in, d, e);
	return rc ? rc : drop_unwanted_users(in, d, e);
}

int inst_apply_live(struct inst *in, const struct inst_desired *old, struct inst_strv *restart,
                    struct err *e)
{
	struct inst_strv names = { 0 }, values = { 0 };
	struct vk_kv *kv;
	int rc;

	diff_directives(in, old, &in->desired, &names, &values, restart);
	kv = xcalloc(names.n + 1, sizeof(*kv));
	for (size_t i = 0; i < names.n; i++)
		kv[i] = (struct vk_kv){ names.v[i], values.v[i] };
	rc = vk_config_set(in->server_conn, kv, names.n, e);
	if (!rc)
		rc = apply_users(in, &in->desired, e);
	if (!rc)
		rc = vk_config_rewrite(in->server_conn, e);
	free(kv);
	inst_strv_release(&names);
	for (size_t i = 0; i < values.n; i++)
		secure_zero(values.v[i], strlen(values.v[i]));
	inst_strv_release(&values);
	return rc;
}

static void op_config(struct inst *in, struct inst_cmd *c)
{
	struct inst_strv restart = { 0 };
	struct inst_desired old = in->desired;
	struct api_inst_config_result a = { .result = "applied" };
	struct err e = { 0 };
	int rc;

	if (c->req.reload)
		inst_reload_files(in);
	if (c->req.drop_old_passwords)
		inst_creds_drop_old(&in->creds);
	in->desired = c->req.config;
	in->desired.acl = old.acl; /* the file's users applied last stay the manager's */
	old.acl = (struct api_acl_file){ 0 };
	c->req.has_config = false; /* taken */
	rc = inst_apply_live(in, &old, &restart, &e);
	inst_desired_release(&old);
	if (rc) {
		inst_strv_release(&restart);
		return fail(c, rc == -EPERM || rc == -EIO ? 422 : 503, e.msg);
	}
	a.restart_required = (const char **)restart.v;
	a.n_restart_required = restart.n;
	reply(c, 200, api_inst_config_result_encode(&a));
	inst_strv_release(&restart);
}

static void op_restart(struct inst *in, struct inst_cmd *c)
{
	struct err e = { 0 };

	if (in->want == INST_STATE_PRIMARY && in->spec.ephemeral)
		return fail(c, 409,
		            "restarting an emptyDir primary loses its data: switch over "
		            "first");
	if (in->want == INST_STATE_PRIMARY && inst_is_fenced(in))
		return fail(c, 409,
		            "a fenced primary is not restarted: unfence it or make it a "
		            "replica first");
	inst_stop_server(in, in->set.shutdown_timeout_ms, in->spec.ephemeral);
	if (inst_start_server(in, &e) < 0 || inst_wait_server(in, 30000, &e) < 0)
		return fail(c, 503, e.msg);
	pthread_mutex_lock(&in->mu);
	in->snap.server_restarts++;
	pthread_mutex_unlock(&in->mu);
	if (inst_is_fenced(in))
		(void)inst_fence_server(in->server_conn, NULL);
	inst_poller_refresh(in, 0);
	ok(in, c, "restarted");
}

void inst_ops_execute(struct inst *in, struct inst_cmd *c)
{
	static void (*const ops[INST_OP_COUNT])(struct inst *, struct inst_cmd *) = {
		[INST_OP_FENCE] = op_fence,           [INST_OP_UNFENCE] = op_unfence,
		[INST_OP_PROMOTE] = op_promote,       [INST_OP_REPLICATE] = op_replicate,
		[INST_OP_SWITCHOVER] = op_switchover, [INST_OP_CONFIG] = op_config,
		[INST_OP_RESTART] = op_restart,
	};

	struct err e = { 0 };

	if (in->sen && (c->req.op == INST_OP_PROMOTE || c->req.op == INST_OP_REPLICATE))
		return fail(c, 409,
		            "spec.mode sentinel: Sentinel alone promotes and re-points "
		            "(a switchover is SENTINEL FAILOVER)");
	if (in->sen && c->req.op == INST_OP_SWITCHOVER && in->server_pid > 0)
		return inst_sentinel_switchover(in, c); /* sentinel_follow.c */
	if (in->server_pid <= 0 && c->req.op != INST_OP_FENCE)
		return fail(c, 503, "the server is not running");
	/* A fence kills every normal connection, ours included: reconnect first. */
	if (in->server_pid > 0 && vk_ping(in->server_conn, NULL) < 0 &&
	    vk_ping(in->server_conn, &e) < 0 && c->req.op != INST_OP_FENCE)
		return fail(c, 503, e.msg);
	ops[c->req.op](in, c);
}

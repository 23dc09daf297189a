/*
 * sentinel_run: `redis-operator instance --role sentinel`, PID 1 beside redis-sentinel
 * or valkey-sentinel (docs/sentinel.md). It shares the data role's start-up (settings,
 * secret files, the Kubernetes client, the signalfd of supervisor.c) and its process
 * helpers (inst_server_find/probe/spawn, inst_file_write_atomic), and runs its own
 * small loop on the main thread:
 *
 *   boot     read the RedisCluster (spec.sentinel, status.currentPrimary); find the
 *            sentinel binary; write sentinel.conf when it does not exist yet (the master
 *            from --sentinel-master, else the current primary's Pod IP); start it.
 *   running  every --poll-interval: PING; once per start re-assert what the operator
 *            owns (announce-ip, quorum, timings, auth: inst_sentinel_live_cmds); read
 *            SENTINEL MASTER and SENTINEL CKQUORUM into the snapshot.
 *   crashed  restart with the data role's backoff; sentinel.conf is kept (it is
 *            Sentinel's memory: its id, the epochs, the current master).
 *   secrets  every --secret-poll-interval the Secret volumes' stamp (secrets.c): a new
 *            default password is added (ACL SETUSER default with every valid hash: old
 *            and new both work, for the data managers, the clients and the other
 *            sentinels), a new internal password becomes auth-pass at once (SENTINEL
 *            SET: the data pods accept old and new during a rotation); POST /v1/config
 *            {"dropOldPasswords": true} from the controller, after its rotation grace,
 *            leaves only the new one and makes it sentinel-pass. Each change is flushed
 *            to sentinel.conf (SENTINEL FLUSHCONFIG), and every start writes the default
 *            user's line first (inst_sentinel_conf_user), so a restarted sentinel
 *            accepts what the manager holds. No restart, no failover.
 *
 *   ops      POST /v1/sentinel/failover and /v1/sentinel/reset, which only the
 *            controller sends: http.c serves this role's API with the data role's TLS
 *            and authorization (a client certificate signed by the operator's CA; a
 *            peer's certificate is refused), suspends the request and posts it to
 *            in->evfd like a data mutation; this loop runs it. FAILOVER is SENTINEL
 *            FAILOVER (Sentinel still elects and promotes: the controller only asks for
 *            a planned move); RESET is refused (409) while SENTINEL MASTER shows a
 *            failover in progress. Sentinel's refusals are 409 with its own text.
 *
 * It never sends SENTINEL REMOVE, nor FAILOVER or RESET on its own. The snapshot is
 * guarded by `mu`; the HTTP daemon's thread only copies it. Everything else belongs to
 * the main thread.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/resources.h"
#include "instance/instance.h"
#include "instance/internal.h"
#include "instance/sentinel.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/file.h"
#include "lib/log.h"

#define SEN_TICK_MS      200
#define SEN_BOOT_RETRY   1000
#define SEN_CMD_MS       2000
#define STABLE_UPTIME_MS 30000

struct sen_snap {
	char state[16], reason[160], not_ready[ERR_MSG_MAX];
	bool ready, up, have_view, quorum_ok;
	int64_t pid, restarts, started_wall_ms;
	struct inst_sentinel_master m;
	char quorum_reason[INST_SENTINEL_TEXT_MAX], error[ERR_MSG_MAX];
};

struct sen {
	struct inst *in;
	char bin[PATH_MAX], conf_path[PATH_MAX], engine[16], version[32];
	char master_host[API_INST_HOST_MAX + 1];
	struct inst_sentinel_conf conf;
	struct inst_tls_files tls; /* conf's and conn's TLS paths, when TLS is on */
	char *requirepass;         /* the default user's password: the sentinels' own (wiped) */
	pid_t pid;
	bool stop_expected, live_done, auth_dirty;
	int64_t restart_at, poll_at, secrets_at;
	struct vk_conn *conn;
	struct inst_sentinel_api api; /* in->sentinel_api: what http.c serves */
	pthread_mutex_t mu;
	struct sen_snap snap; /* [mu] */
};

static void set_state(struct sen *s, const char *state, const char *reason)
{
	pthread_mutex_lock(&s->mu);
	snprintf(s->snap.state, sizeof(s->snap.state), "%s", state);
	snprintf(s->snap.reason, sizeof(s->snap.reason), "%s", reason);
	pthread_mutex_unlock(&s->mu);
}

/* --- boot ------------------------------------------------------------------------------ */

static int64_t or_default(int64_t v, int64_t def)
{
	return v > 0 ? v : def;
}

/* Timings and the current primary from the RedisCluster; the pod's address of it. */
static int read_cluster(struct sen *s, char **primary, enum vk_engine *engine, struct err *e)
{
	struct api_redis_cluster rc = { 0 };
	struct inst_spec spec = { 0 };
	json_t *obj = NULL;
	int r = k8s_get(s->in->kube, &api_res_redisclusters, s->in->set.pod_namespace,
	                s->in->set.cluster_name, &obj, e);

	if (!r)
		r = api_redis_cluster_decode(obj, &rc, e);
	if (!r)
		r = inst_spec_from_cluster(&rc, &spec, e);
	if (!r) {
		const struct api_sentinel *sn = &rc.spec.sentinel;

		s->conf.quorum = or_default(sn->quorum, 2);
		s->conf.down_after_ms =
		        or_default(sn->down_after.ms, INST_SENTINEL_DOWN_AFTER_DEFAULT_MS);
		s->conf.failover_timeout_ms = or_default(sn->failover_timeout.ms,
		                                         INST_SENTINEL_FAILOVER_TIMEOUT_DEFAULT_MS);
		s->conf.parallel_syncs = or_default(sn->parallel_syncs, 1);
		*primary = rc.status.current_primary ? xstrdup(rc.status.current_primary) : NULL;
		*engine = spec.engine;
	}
	inst_spec_release(&spec);
	api_redis_cluster_release(&rc);
	json_decref(obj);
	return r;
}

/* The sentinel binary: --server-binary, else <engine>-sentinel beside the server. */
static int find_binary(struct sen *s, enum vk_engine want, struct err *e)
{
	enum vk_engine eng;
	unsigned ver;
	char *dash;
	int rc = inst_server_find(s->in->set.server_binary, want, s->bin, sizeof(s->bin), e);

	if (!rc && !s->in->set.server_binary && (dash = strrchr(s->bin, '-')) &&
	    strcmp(dash, "-server") == 0)
		snprintf(dash, sizeof(s->bin) - (size_t)(dash - s->bin), "-sentinel");
	if (!rc && access(s->bin, X_OK) < 0)
		rc = err_set(e, -ENOENT, "%s: not an executable", s->bin);
	if (!rc)
		rc = inst_server_probe(s->bin, &eng, &ver, s->version, sizeof(s->version), e);
	if (!rc)
		snprintf(s->engine, sizeof(s->engine), "%s", vk_engine_name(eng));
	return rc;
}

static int master_addr(struct sen *s, const char *primary, struct err *e)
{
	if (s->in->set.sentinel_master)
		return inst_sentinel_parse_addr(s->in->set.sentinel_master, s->master_host,
		                                sizeof(s->master_host), &s->conf.master_port, e);
	if (!primary)
		return err_set(e, -EAGAIN, "status.currentPrimary is not set yet");
	return inst_kube_pod_addr(s->in, primary, s->master_host, sizeof(s->master_host),
	                          &s->conf.master_port, NULL, e);
}

static int write_conf(struct sen *s, const char *primary, struct err *e)
{
	struct buf text = BUF_INIT(INST_SENTINEL_CONF_MAX);
	struct stat st;
	int rc;

	if (stat(s->conf_path, &st) == 0)
		return 0; /* Sentinel's own state: kept (sentinel.h) */
	rc = master_addr(s, primary, e);
	if (!rc)
		rc = inst_sentinel_render(&s->conf, &text, e);
	if (!rc)
		rc = inst_file_write_atomic(s->conf_path, text.data, text.len, e);
	buf_release_secret(&text);
	return rc;
}

/* The default user's rules: every password valid now (old ones until dropped), all
 * commands (a sentinel knows none of the data pods' denied ones: CONFIG, DEBUG…). */
static void default_rules(struct sen *s, struct inst_strv *r)
{
	const struct inst_pwset *pw = &s->in->creds.default_all;

	inst_strv_push(r, "reset");
	inst_strv_push(r, "on");
	for (size_t i = 0; i < pw->n; i++)
		inst_strv_pushf(r, "#%s", pw->hash[i]);
	inst_strv_push(r, "~*");
	inst_strv_push(r, "&*");
	inst_strv_push(r, "+@all");
}

/* sentinel.conf's `user default` line from the passwords held now (before a start). */
static int conf_user(struct sen *s, struct err *e)
{
	struct buf text = BUF_INIT(INST_SENTINEL_CONF_MAX);
	struct inst_strv r = { 0 };
	char *old = NULL;
	size_t n = 0;
	int rc = file_read_all_secret(s->conf_path, INST_SENTINEL_CONF_MAX, &old, &n, e);

	if (rc)
		return rc;
	default_rules(s, &r);
	rc = inst_sentinel_conf_user(old, n, (const char *const *)r.v, r.n, &text, e);
	if (!rc)
		rc = inst_file_write_atomic(s->conf_path, text.data, text.len, e);
	inst_strv_release(&r);
	free_secret(old);
	buf_release_secret(&text);
	return rc;
}

static int start(struct sen *s, struct err *e)
{
	pid_t pid;
	int rc = conf_user(s, e);

	if (!rc)
		rc = inst_server_spawn(s->bin, s->conf_path, &pid, e);
	if (rc)
		return rc;
	vk_conn_set_auth(s->conn, NULL, s->requirepass);
	s->auth_dirty = false;
	s->pid = pid;
	s->stop_expected = false;
	s->live_done = false;
	s->restart_at = 0;
	vk_conn_close(s->conn);
	pthread_mutex_lock(&s->mu);
	s->snap.pid = pid;
	s->snap.started_wall_ms = clock_wall_ms();
	pthread_mutex_unlock(&s->mu);
	set_state(s, "running", "sentinel started");
	log_info("sentinel", "sentinel started", "pod", s->in->set.pod_name, "binary", s->bin,
	         (char *)NULL);
	return 0;
}

static bool boot_step(struct sen *s)
{
	enum vk_engine engine = VK_ENGINE_UNKNOWN;
	struct err e = { 0 };
	char *primary = NULL;
	int rc = read_cluster(s, &primary, &engine, &e);

	if (!rc && !s->bin[0])
		rc = find_binary(s, engine, &e);
	if (!rc)
		rc = write_conf(s, primary, &e);
	if (!rc)
		rc = start(s, &e);
	free(primary);
	if (rc) {
		set_state(s, "booting", e.msg);
		log_info("sentinel", "boot waits", "pod", s->in->set.pod_name, "error", e.msg,
		         (char *)NULL);
	}
	return rc == 0;
}

/* --- passwords ------------------------------------------------------------------------ */

static bool rotating(const struct sen *s)
{
	return s->in->creds.default_all.n != s->in->creds.default_cur.n;
}

/* The default user's passwords now (over the connection still authenticated with what
 * worked before), written to sentinel.conf; then the new password for the next connection. */
static int apply_auth(struct sen *s, struct err *e)
{
	struct inst_strv r = { 0 };
	int rc;

	default_rules(s, &r);
	rc = vk_acl_setuser(s->conn, "default", (const char *const *)r.v, r.n, e);
	inst_strv_release(&r);
	if (!rc)
		rc = vk_command(s->conn, NULL, e, "SENTINEL", "FLUSHCONFIG");
	if (!rc)
		vk_conn_set_auth(s->conn, NULL, s->requirepass);
	return rc;
}

static char *read_requirepass(const struct inst *in)
{
	char path[PATH_MAX], *pw = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/password", in->set.auth_dir);
	if (file_read_all_secret(path, INST_PW_LEN_MAX + 2, &pw, &n, NULL) < 0)
		return NULL;
	while (n && (pw[n - 1] == '\n' || pw[n - 1] == '\r'))
		pw[--n] = '\0';
	return pw;
}

static void secrets_step(struct sen *s)
{
	struct err e = { 0 };
	char *pw;
	int rc;

	s->secrets_at = clock_mono_ms() + s->in->set.secret_poll_ms;
	if ((rc = inst_creds_refresh(&s->in->set, &s->in->creds, &e)) < 0)
		log_warn("sentinel", "secret files changed but cannot be read", "error", e.msg,
		         (char *)NULL);
	s->in->creds.acl_applied = true; /* spec.aclConfigSecret is the data pods' */
	if (rc <= 0)
		return;
	if ((pw = read_requirepass(s->in))) {
		free_secret(s->requirepass);
		s->requirepass = pw;
	}
	s->conf.requirepass = s->requirepass;
	s->conf.auth_pass = s->in->creds.operator_pw;
	s->auth_dirty = true;
	s->live_done = false;
	s->poll_at = 0;
	log_info("sentinel", "secret files changed: passwords added", "pod", s->in->set.pod_name,
	         (char *)NULL);
}

/* --- polling ------------------------------------------------------------------------ */

static int apply_live(struct sen *s, struct err *e)
{
	struct inst_sentinel_live l;
	int rc = 0;

	s->conf.sentinel_pass = rotating(s) ? NULL : s->requirepass;
	inst_sentinel_live_cmds(&s->conf, &l);
	for (size_t i = 0; i < l.n && !rc; i++)
		rc = l.secret[i]
		             ? vk_command_argv_secret(s->conn, l.argc[i], l.argv[i], NULL, NULL, e)
		             : vk_command_argv(s->conn, l.argc[i], l.argv[i], NULL, NULL, e);
	return rc;
}

static void read_view(struct sen *s, struct sen_snap *v)
{
	struct vk_reply *r = NULL;
	struct err e = { 0 };
	int rc = vk_command(s->conn, &r, &e, "SENTINEL", "MASTER", API_INST_SENTINEL_MASTER_NAME);

	if (!rc)
		rc = inst_sentinel_parse_master(r, &v->m, &e);
	vk_reply_free(r);
	r = NULL;
	v->have_view = rc == 0;
	if (rc) {
		snprintf(v->error, sizeof(v->error), "%s", e.msg);
		return;
	}
	err_clear(&e);
	rc = vk_command(s->conn, &r, &e, "SENTINEL", "CKQUORUM", API_INST_SENTINEL_MASTER_NAME);
	v->quorum_ok =
	        inst_sentinel_quorum_ok(rc, r, e.msg, v->quorum_reason, sizeof(v->quorum_reason));
	vk_reply_free(r);
}

static void poll_step(struct sen *s)
{
	struct sen_snap v = { 0 };
	struct err e = { 0 };

	s->poll_at = clock_mono_ms() + s->in->set.poll_interval_ms;
	v.up = vk_ping(s->conn, &e) == 0;
	if (v.up && s->auth_dirty) {
		s->auth_dirty = apply_auth(s, &e) != 0;
		if (s->auth_dirty)
			log_warn("sentinel", "cannot apply the new passwords", "error", e.msg,
			         (char *)NULL);
	}
	if (v.up && !s->live_done) {
		s->live_done = apply_live(s, &e) == 0;
		if (!s->live_done)
			log_warn("sentinel", "cannot apply the operator's sentinel settings",
			         "error", e.msg, (char *)NULL);
	}
	if (v.up)
		read_view(s, &v);
	else
		snprintf(v.error, sizeof(v.error), "%s", e.msg);
	v.ready = v.up && v.have_view && v.quorum_ok;
	snprintf(v.not_ready, sizeof(v.not_ready), "%s",
	         v.ready                 ? ""
	         : !v.up || !v.have_view ? v.error
	                                 : v.quorum_reason);
	pthread_mutex_lock(&s->mu);
	memcpy(v.state, s->snap.state, sizeof(v.state));
	memcpy(v.reason, s->snap.reason, sizeof(v.reason));
	v.pid = s->snap.pid;
	v.restarts = s->snap.restarts;
	v.started_wall_ms = s->snap.started_wall_ms;
	s->snap = v;
	pthread_mutex_unlock(&s->mu);
}

/* --- children ------------------------------------------------------------------------ */

static void exited(struct sen *s)
{
	int64_t up;

	pthread_mutex_lock(&s->mu);
	up = clock_wall_ms() - s->snap.started_wall_ms;
	s->snap.pid = 0;
	s->snap.up = s->snap.ready = false;
	s->snap.restarts++;
	pthread_mutex_unlock(&s->mu);
	s->pid = 0;
	vk_conn_close(s->conn);
	if (s->stop_expected)
		return;
	if (up > STABLE_UPTIME_MS)
		backoff_reset(&s->in->restart_backoff);
	s->restart_at = clock_mono_ms() + backoff_next(&s->in->restart_backoff);
	set_state(s, "crashed", "sentinel exited: restarting with the same sentinel.conf");
	log_error("sentinel", "sentinel exited unexpectedly", "pod", s->in->set.pod_name,
	          (char *)NULL);
}

static void reap(struct sen *s)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == s->pid)
			exited(s);
}

/* true when asked to stop */
static bool read_signals(struct sen *s)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(s->in->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGHUP)
			stop = true;
	reap(s);
	return stop;
}

static int stop(struct sen *s)
{
	int64_t deadline = clock_mono_ms() + s->in->set.shutdown_timeout_ms * 7 / 10;
	struct timespec ts = { 0, 10 * 1000 * 1000 };

	set_state(s, "stopping", "shutdown requested");
	s->stop_expected = true;
	if (s->pid > 0)
		kill(s->pid, SIGTERM);
	while (s->pid > 0 && clock_mono_ms() < deadline) {
		reap(s);
		nanosleep(&ts, NULL);
	}
	if (s->pid <= 0)
		return INST_EXIT_OK;
	kill(s->pid, SIGKILL);
	while (s->pid > 0 && waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	return INST_EXIT_SERVER_KILLED;
}

/* --- HTTP ------------------------------------------------------------------------------ */

static json_t *status_json(struct sen *s)
{
	struct api_inst_sentinel_status st = { 0 };
	struct sen_snap v;

	pthread_mutex_lock(&s->mu);
	v = s->snap;
	pthread_mutex_unlock(&s->mu);
	st.pod = s->in->set.pod_name;
	st.state = v.state;
	st.role = API_INST_ROLE_SENTINEL;
	st.reason = v.reason;
	st.ready = v.ready;
	st.not_ready_reason = v.not_ready;
	st.engine = s->engine;
	st.version = s->version;
	st.uptime_seconds = (clock_wall_ms() - s->in->snap.started_wall_ms) / 1000;
	st.server.pid = v.pid > 0 ? v.pid : API_INST_NULL;
	st.server.up = v.up;
	st.server.restarts = v.restarts;
	st.server.role = v.up ? API_INST_ROLE_SENTINEL : API_INST_ROLE_UNKNOWN;
	st.server.uptime_seconds =
	        v.pid > 0 ? (clock_wall_ms() - v.started_wall_ms) / 1000 : API_INST_NULL;
	st.server.error = v.up ? NULL : v.error;
	st.has_sentinel = v.have_view;
	st.sentinel = (struct api_inst_sentinel_view){
		.master_name = API_INST_SENTINEL_MASTER_NAME,
		.master_host = v.m.host,
		.master_port = v.m.port,
		.master_status = v.m.status,
		.failover_in_progress = v.m.failover_in_progress,
		.failover_state = v.m.failover_state,
		.config_epoch = v.m.config_epoch,
		.quorum = v.m.quorum,
		.quorum_ok = v.quorum_ok,
		.quorum_reason = v.quorum_reason,
		.sentinels = v.m.other_sentinels >= 0 ? v.m.other_sentinels + 1 : API_INST_NULL,
		.replicas = v.m.replicas,
	};
	return api_inst_sentinel_status_encode(&st);
}

static char *status_body(void *ctx)
{
	json_t *j = status_json(ctx);
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	return text;
}

static bool is_ready(void *ctx)
{
	struct sen *s = ctx;
	bool ready;

	pthread_mutex_lock(&s->mu);
	ready = s->snap.ready;
	pthread_mutex_unlock(&s->mu);
	return ready;
}

/* --- ops (POST /v1/sentinel/...) -------------------------------------------------------- */

static void answer(struct inst_cmd *c, unsigned status, json_t *body)
{
	c->status = status;
	c->body = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(body);
}

static void refuse(struct inst_cmd *c, unsigned status, const char *msg)
{
	answer(c, status, json_pack("{s:s}", "error", msg));
}

/* 0 when no failover runs; else 409 (one runs) or 503 (Sentinel's view unreadable). */
static unsigned failover_running(struct sen *s, char *why, size_t len)
{
	struct inst_sentinel_master m;
	struct vk_reply *r = NULL;
	struct err e = { 0 };
	int rc = vk_command(s->conn, &r, &e, "SENTINEL", "MASTER", API_INST_SENTINEL_MASTER_NAME);

	if (!rc)
		rc = inst_sentinel_parse_master(r, &m, &e);
	vk_reply_free(r);
	if (rc) {
		snprintf(why, len, "SENTINEL MASTER: %s", e.msg);
		return 503;
	}
	if (!m.failover_in_progress)
		return 0;
	snprintf(why, len, "a failover is in progress (%s): no SENTINEL RESET until it ends",
	         m.failover_state[0] ? m.failover_state : "failover_in_progress");
	return 409;
}

/* POST /v1/config: only dropOldPasswords applies here (the controller sends it after
 * its rotation grace); the new password becomes sentinel-pass. */
static void run_config(struct sen *s, struct inst_cmd *c)
{
	struct err e = { 0 };
	int rc;

	if (!c->req.drop_old_passwords)
		return refuse(c, 400, "a sentinel manager applies only dropOldPasswords");
	if (s->pid <= 0 || vk_ping(s->conn, &e) < 0)
		return refuse(c, 503, s->pid <= 0 ? "the sentinel is not running" : e.msg);
	inst_creds_drop_old(&s->in->creds);
	rc = apply_auth(s, &e);
	s->auth_dirty = rc != 0;
	if (!rc)
		rc = apply_live(s, &e);
	s->live_done = rc == 0;
	if (rc)
		return refuse(c, 503, e.msg);
	log_info("sentinel", "old passwords dropped", "pod", s->in->set.pod_name, (char *)NULL);
	answer(c, 200, json_pack("{s:s}", "result", "applied"));
}

/* SENTINEL FAILOVER or RESET <master>: Sentinel's refusal (-INPROG, -NOGOODSLAVE, …)
 * is 409 with its text; a sentinel that does not answer is 503. */
static void run_op(struct sen *s, struct inst_cmd *c)
{
	bool reset = c->req.op == INST_OP_SENTINEL_RESET;
	char why[ERR_MSG_MAX + 64];
	struct err e = { 0 };
	unsigned busy;

	if (s->pid <= 0 || vk_ping(s->conn, &e) < 0)
		return refuse(c, 503, s->pid <= 0 ? "the sentinel is not running" : e.msg);
	if (reset && (busy = failover_running(s, why, sizeof(why))))
		return refuse(c, busy, why);
	if (vk_command(s->conn, NULL, &e, "SENTINEL", reset ? "RESET" : "FAILOVER",
	               API_INST_SENTINEL_MASTER_NAME) < 0)
		return refuse(c, vk_ping(s->conn, NULL) < 0 ? 503 : 409, e.msg);
	log_info("sentinel", reset ? "SENTINEL RESET done" : "SENTINEL FAILOVER started", "pod",
	         s->in->set.pod_name, (char *)NULL);
	answer(c, 200, json_pack("{s:s}", "result", reset ? "reset" : "started"));
	s->poll_at = 0; /* the snapshot shows it at the next tick */
}

static void run_commands(struct sen *s)
{
	struct inst_cmd *c;

	while ((c = inst_take(s->in, "sentinel")) != NULL) {
		if (c->req.op == INST_OP_CONFIG)
			run_config(s, c);
		else
			run_op(s, c);
		inst_http_complete(s->in, c);
	}
}

/* --- the loop -------------------------------------------------------------------------- */

static int setup(struct sen *s, struct err *e)
{
	struct vk_conn_config cfg = { .host = "127.0.0.1",
		                      .port = (int)s->in->set.sentinel_port,
		                      .connect_timeout_ms = INST_CONNECT_MS,
		                      .command_timeout_ms = SEN_CMD_MS };

	snprintf(s->conf_path, sizeof(s->conf_path), "%s/%s", s->in->set.data_dir,
	         INST_SENTINEL_CONF_FILE);
	s->requirepass = read_requirepass(s->in);
	s->secrets_at = clock_mono_ms() + s->in->set.secret_poll_ms;
	s->conf = (struct inst_sentinel_conf){ .port = (int)s->in->set.sentinel_port,
		                               .bind = s->in->set.bind,
		                               .dir = s->in->set.data_dir,
		                               .announce_ip = s->in->set.pod_ip,
		                               .master_host = s->master_host,
		                               .auth_user = INST_OPERATOR_USER,
		                               .auth_pass = s->in->creds.operator_pw,
		                               .requirepass = s->requirepass };
	if (inst_tls_files(s->in, &s->tls)) { /* TLS-only: its own connection too */
		s->conf.tls_cert = s->tls.cert;
		s->conf.tls_key = s->tls.key;
		s->conf.tls_ca = s->tls.ca;
		cfg.tls = &s->tls.client;
	}
	cfg.password = s->requirepass;
	s->conn = vk_conn_new(&cfg);
	pthread_mutex_init(&s->mu, NULL);
	snprintf(s->snap.state, sizeof(s->snap.state), "booting");
	s->api = (struct inst_sentinel_api){ .ctx = s, .status = status_body, .ready = is_ready };
	s->in->sentinel_api = &s->api;
	return inst_http_start(s->in, e);
}

static void release(struct sen *s)
{
	inst_http_stop(s->in);
	vk_conn_free(s->conn);
	free_secret(s->requirepass);
	pthread_mutex_destroy(&s->mu);
}

static void tick(struct sen *s, int64_t *boot_at, int64_t boot_deadline, int *exit_code)
{
	int64_t now = clock_mono_ms();
	struct err e = { 0 };

	if (*boot_at && now >= *boot_at) {
		if (boot_step(s))
			*boot_at = 0;
		else if (now > boot_deadline)
			*exit_code = INST_EXIT_BOOT_TIMEOUT;
		else
			*boot_at = now + SEN_BOOT_RETRY;
	}
	if (s->restart_at && now >= s->restart_at && s->pid <= 0 && start(s, &e) < 0) {
		log_error("sentinel", "restart failed", "error", e.msg, (char *)NULL);
		s->restart_at = now + backoff_next(&s->in->restart_backoff);
	}
	if (now >= s->secrets_at)
		secrets_step(s);
	if (s->pid > 0 && now >= s->poll_at)
		poll_step(s);
}

int inst_sentinel_run(struct inst *in)
{
	struct sen *s = xcalloc(1, sizeof(*s));
	int64_t boot_at = clock_mono_ms(), deadline = boot_at + in->set.boot_timeout_ms;
	struct err e = { 0 };
	int code = -1;

	s->in = in;
	if (setup(s, &e) < 0) {
		log_error("sentinel", "cannot start", "error", e.msg, (char *)NULL);
		code = INST_EXIT_USAGE;
	}
	while (code < 0) {
		struct pollfd p[2] = { { .fd = in->sigfd, .events = POLLIN },
			               { .fd = in->evfd, .events = POLLIN } };

		if (poll(p, 2, SEN_TICK_MS) < 0 && errno != EINTR)
			code = INST_EXIT_ERROR;
		else if ((p[0].revents & POLLIN) && read_signals(s))
			code = stop(s);
		else
			tick(s, &boot_at, deadline, &code);
		if (code < 0 && (p[1].revents & POLLIN))
			run_commands(s);
	}
	inst_drain_commands(in); /* 503 "shutting down" for anything still queued */
	if (s->pid > 0)
		stop(s);
	release(s);
	free(s);
	return code;
}

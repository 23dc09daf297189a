/*
 * supervisor: the instance manager's main thread (see internal.h for who owns what).
 *
 * One loop: poll() on a signalfd (SIGCHLD, SIGTERM, SIGINT, SIGQUIT, SIGHUP) and an
 * eventfd (commands posted by HTTP handlers, lease loss), plus timers checked on every
 * wake-up (at least every SUP_TICK_MS): the next boot attempt, a scheduled server
 * restart, the secret volumes' stamp (passwords, TLS files), re-resolving the primary of a parked replica,
 * re-asserting a fence's pause, and (while not primary) reading the primary Lease.
 * Nothing here blocks without a deadline; the longest blocking step is a switchover
 * (bounded by its timeout).
 *
 * Crash policy: a replica's or parked server that exits is restarted with jittered
 * exponential backoff in the same role. A server that exits while primary is NEVER
 * restarted as a writable primary: the manager writes the fence marker, stops renewing
 * and releases the lease (the controller's fast failover signal), reports
 * primaryCrashed/fenced in /v1/status, and restarts the server parked (a read-only
 * replica of nothing) so its data and offset stay readable. From there only
 * /v1/replicate (follow the new primary) or /v1/promote (lease held) move it.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "instance/handover.h"
#include "instance/internal.h"
#include "instance/instance.h"
#include "instance/render.h"
#include "instance/role.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"

#define SUP_TICK_MS      200
#define BOOT_RETRY_MS    1000
#define FOLLOW_RETRY_MS  2000
#define SERVER_READY_MS  60000
#define STABLE_UPTIME_MS 30000

static int64_t now_ms(void)
{
	return clock_mono_ms();
}

void inst_set_state(struct inst *in, enum inst_state st, const char *reason)
{
	pthread_mutex_lock(&in->mu);
	in->snap.state = st;
	if (reason)
		snprintf(in->snap.reason, sizeof(in->snap.reason), "%s", reason);
	pthread_mutex_unlock(&in->mu);
}

void inst_share_password(struct inst *in)
{
	pthread_mutex_lock(&in->mu);
	free_secret(in->shared_pw);
	in->shared_pw = xstrdup(in->creds.operator_pw);
	in->creds_gen++;
	pthread_mutex_unlock(&in->mu);
	vk_conn_set_auth(in->server_conn, INST_OPERATOR_USER, in->creds.operator_pw);
}

/* The server's TLS files in dir; *on when all three are there (TLS is on then). */
static void tls_files(const char *dir, char cert[PATH_MAX], char key[PATH_MAX], char ca[PATH_MAX],
                      bool *on)
{
	struct stat st;

	snprintf(cert, PATH_MAX, "%s/tls.crt", dir);
	snprintf(key, PATH_MAX, "%s/tls.key", dir);
	snprintf(ca, PATH_MAX, "%s/ca.crt", dir);
	*on = stat(cert, &st) == 0 && stat(key, &st) == 0 && stat(ca, &st) == 0;
}

bool inst_tls_files(const struct inst *in, struct inst_tls_files *f)
{
	bool on;

	tls_files(in->set.tls_dir, f->cert, f->key, f->ca, &on);
	f->client = (struct vk_tls_config){ .ca_file = f->ca,
		                            .cert_file = f->cert,
		                            .key_file = f->key };
	return on;
}

/*
 * A connection to the local server (host NULL: the Unix socket) or to a peer's. With
 * the TLS files present, the peers serve TLS only (render.c: port 0), so a peer is
 * dialled with TLS: its chain verified against ca.crt, and tls.crt/tls.key offered as
 * the client certificate, as the server itself does for tls-replication.
 */
struct vk_conn *inst_conn_new(struct inst *in, const char *host, int port, int timeout_ms)
{
	struct inst_tls_files tls;
	struct vk_conn_config cfg = { 0 };
	struct vk_conn *c;

	cfg.unix_path = host ? NULL : in->sock_path;
	cfg.host = host;
	cfg.port = port;
	cfg.connect_timeout_ms = INST_CONNECT_MS;
	cfg.command_timeout_ms = timeout_ms;
	cfg.user = INST_OPERATOR_USER;
	cfg.tls = host && inst_tls_files(in, &tls) ? &tls.client : NULL;
	pthread_mutex_lock(&in->mu);
	cfg.password = in->shared_pw;
	c = vk_conn_new(&cfg);
	pthread_mutex_unlock(&in->mu);
	return c;
}

bool inst_post(struct inst *in, struct inst_cmd *cmd)
{
	uint64_t one = 1;
	ssize_t n;

	pthread_mutex_lock(&in->mu);
	if (in->stopping) {
		pthread_mutex_unlock(&in->mu);
		return false;
	}
	cmd->next = NULL;
	*in->q_tail = cmd;
	in->q_tail = &cmd->next;
	pthread_mutex_unlock(&in->mu);
	n = write(in->evfd, &one, sizeof(one));
	(void)n;
	return true;
}

struct inst_cmd *inst_take(struct inst *in, const char *component)
{
	struct inst_cmd *c;
	uint64_t n;

	if (read(in->evfd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_warn(component, "eventfd read failed", (char *)NULL);
	pthread_mutex_lock(&in->mu);
	c = in->q_head;
	if (c && !(in->q_head = c->next))
		in->q_tail = &in->q_head;
	pthread_mutex_unlock(&in->mu);
	return c;
}

/* --- config and server lifecycle ---------------------------------------------------- */

/* Fills r for the wanted role; upw (desired.nusers entries) and the TLS paths are the
 * caller's storage. */
static void render_input(struct inst *in, struct inst_render *r, struct inst_pwset *upw,
                         char cert[PATH_MAX], char key[PATH_MAX], char ca[PATH_MAX])
{
	bool tls;

	for (size_t i = 0; i < in->desired.nusers; i++) {
		const struct inst_pwset *p = inst_creds_user(&in->creds, in->desired.users[i].name);

		if (p)
			upw[i] = *p;
	}
	tls_files(in->set.tls_dir, cert, key, ca, &tls);
	r->engine = in->engine;
	r->version = in->version;
	r->port = (int)in->set.server_port;
	r->bind = in->set.bind;
	r->unix_socket = in->sock_path;
	r->data_dir = in->set.data_dir;
	r->announce_ip = in->set.pod_ip;
	r->ephemeral = in->spec.ephemeral;
	r->desired = &in->desired;
	r->default_pw = &in->creds.default_all;
	r->operator_pw = &in->creds.operator_all;
	r->user_pw = upw;
	r->masterauth = in->creds.operator_pw;
	if (in->want != INST_STATE_PRIMARY) {
		r->replicaof_host = in->want == INST_STATE_REPLICA ? in->want_host : INST_PARK_HOST;
		r->replicaof_port = in->want == INST_STATE_REPLICA ? in->want_port : INST_PARK_PORT;
	}
	r->tls_cert = tls ? cert : NULL;
	r->tls_key = tls ? key : NULL;
	r->tls_ca = tls ? ca : NULL;
	r->tls_clients_required = in->spec.tls_clients_required;
}

int inst_write_config(struct inst *in, struct err *e)
{
	struct inst_pwset *upw = xcalloc(in->desired.nusers + 1, sizeof(*upw));
	char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX];
	struct buf text = BUF_INIT(INST_CONF_MAX);
	struct inst_conf conf = { 0 };
	struct inst_render r = { 0 };
	int rc;

	render_input(in, &r, upw, cert, key, ca);
	rc = inst_render_lines(&r, &conf, e);
	if (!rc)
		rc = inst_conf_text(&conf, &text, e);
	if (!rc)
		rc = inst_file_write_atomic(in->conf_path, text.data, text.len, e);
	if (!rc) {
		in->server_tls = r.tls_cert != NULL;
		in->tls_stamp = inst_tls_stamp(&in->set);
		pthread_mutex_lock(&in->mu);
		inst_conf_hash(&conf, in->snap.config_hash);
		pthread_mutex_unlock(&in->mu);
	}
	inst_conf_release(&conf);
	buf_release_secret(&text);
	free(upw);
	return rc;
}

int inst_start_server(struct inst *in, struct err *e)
{
	pid_t pid;
	int rc = inst_write_config(in, e);

	if (!rc)
		rc = inst_server_spawn(in->server_bin, in->conf_path, &pid, e);
	if (rc)
		return rc;
	in->server_pid = pid;
	in->stop_expected = false;
	in->restart_at = 0;
	vk_conn_close(in->server_conn);
	pthread_mutex_lock(&in->mu);
	in->snap.server_pid = pid;
	in->snap.server_started_wall_ms = clock_wall_ms();
	in->snap.state = in->want;
	snprintf(in->snap.master_host, sizeof(in->snap.master_host), "%s",
	         in->want == INST_STATE_REPLICA ? in->want_host : "");
	in->snap.master_port = in->want == INST_STATE_REPLICA ? in->want_port : 0;
	pthread_mutex_unlock(&in->mu);
	log_info("supervisor", "server started", "pod", in->set.pod_name, "state",
	         inst_state_name(in->want), "binary", in->server_bin, (char *)NULL);
	return 0;
}

int inst_wait_server(struct inst *in, int64_t budget_ms, struct err *e)
{
	int64_t deadline = now_ms() + budget_ms;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int rc;

	do {
		err_clear(e);
		rc = vk_ping(in->server_conn, e);
		if (rc == 0)
			return 0;
		nanosleep(&ts, NULL);
	} while (now_ms() < deadline && in->server_pid > 0);
	return rc;
}

static bool reap_server(struct inst *in, int64_t until)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int st;

	while (in->server_pid > 0) {
		pid_t p = waitpid(in->server_pid, &st, WNOHANG);

		if (p == in->server_pid || (p < 0 && errno == ECHILD)) {
			in->server_pid = 0;
			break;
		}
		if (now_ms() >= until)
			return false;
		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&in->mu);
	in->snap.server_pid = 0;
	in->snap.server_started_wall_ms = 0;
	pthread_mutex_unlock(&in->mu);
	return true;
}

int inst_stop_server(struct inst *in, int64_t budget_ms, bool nosave)
{
	int64_t start = now_ms();
	struct err e = { 0 };

	if (in->server_pid <= 0)
		return 0;
	in->stop_expected = true;
	/* SHUTDOWN closes the connection on success: an I/O error is the normal answer. */
	(void)vk_command(in->server_conn, NULL, &e, "SHUTDOWN", nosave ? "NOSAVE" : "SAVE", "NOW");
	vk_conn_close(in->server_conn);
	if (reap_server(in, start + budget_ms * 6 / 10))
		return 0;
	log_warn("supervisor", "server ignored SHUTDOWN: SIGTERM", "pod", in->set.pod_name,
	         (char *)NULL);
	kill(in->server_pid, SIGTERM);
	if (reap_server(in, start + budget_ms * 9 / 10))
		return 0;
	log_error("supervisor", "server ignored SIGTERM: SIGKILL", "pod", in->set.pod_name,
	          (char *)NULL);
	kill(in->server_pid, SIGKILL);
	reap_server(in, start + budget_ms + 5000);
	return 1;
}

static void schedule_restart(struct inst *in)
{
	int64_t delay = backoff_next(&in->restart_backoff);

	in->restart_at = now_ms() + delay;
	pthread_mutex_lock(&in->mu);
	in->snap.state = INST_STATE_CRASHED;
	pthread_mutex_unlock(&in->mu);
}

static void primary_crashed(struct inst *in)
{
	struct err e = { 0 };

	if (inst_marker_write(in->marker_path, "server crashed as primary", &e) < 0)
		log_error("supervisor", "cannot write the fence marker", "error", e.msg,
		          (char *)NULL);
	inst_lease_stop(in, true);
	in->want = INST_STATE_PARKED;
	pthread_mutex_lock(&in->mu);
	in->snap.fenced = true;
	in->snap.primary_crashed = true;
	in->snap.lease_held = false;
	snprintf(in->snap.fence_reason, sizeof(in->snap.fence_reason), "%s",
	         "server crashed as primary");
	snprintf(in->snap.reason, sizeof(in->snap.reason), "%s",
	         "server crashed as primary: fenced, lease released, restarting parked");
	pthread_mutex_unlock(&in->mu);
}

static void server_exited(struct inst *in, int status)
{
	char how[64];
	bool was_primary;
	int64_t up;

	pthread_mutex_lock(&in->mu);
	up = clock_wall_ms() - in->snap.server_started_wall_ms;
	in->snap.server_pid = 0;
	in->snap.server_started_wall_ms = 0;
	in->snap.server_restarts++;
	pthread_mutex_unlock(&in->mu);
	in->server_pid = 0;
	vk_conn_close(in->server_conn);
	snprintf(how, sizeof(how), WIFSIGNALED(status) ? "signal %d" : "exit %d",
	         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	log_error("supervisor", "server exited unexpectedly", "pod", in->set.pod_name, "status",
	          how, "state", inst_state_name(in->want), (char *)NULL);
	if (up > STABLE_UPTIME_MS)
		backoff_reset(&in->restart_backoff);
	was_primary = in->want == INST_STATE_PRIMARY;
	if (was_primary)
		primary_crashed(in);
	schedule_restart(in);
	if (was_primary)
		(void)inst_sentinel_crashed(in); /* sentinel mode: held down, not parked */
}

static void reap_children(struct inst *in)
{
	int st;
	pid_t p;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
		if (p == in->server_pid && !in->stop_expected) {
			server_exited(in, st);
		} else if (p == in->server_pid) {
			in->server_pid = 0;
		} else {
			char pid[24];

			snprintf(pid, sizeof(pid), "%d", (int)p);
			log_debug("supervisor", "reaped an orphan", "pid", pid, (char *)NULL);
		}
	}
}

/* --- boot ------------------------------------------------------------------------ */

static int pick_binary(struct inst *in, struct err *e)
{
	enum vk_engine want = in->spec.engine;
	char vtext[32];
	int rc;

	if (in->set.engine)
		want = strcmp(in->set.engine, "valkey") == 0 ? VK_ENGINE_VALKEY : VK_ENGINE_REDIS;
	rc = inst_server_find(in->set.server_binary, want, in->server_bin, sizeof(in->server_bin),
	                      e);
	if (!rc)
		rc = inst_server_probe(in->server_bin, &in->engine, &in->version, vtext,
		                       sizeof(vtext), e);
	if (rc)
		return rc;
	pthread_mutex_lock(&in->mu);
	snprintf(in->snap.engine, sizeof(in->snap.engine), "%s", vk_engine_name(in->engine));
	snprintf(in->snap.engine_version, sizeof(in->snap.engine_version), "%s", vtext);
	pthread_mutex_unlock(&in->mu);
	return 0;
}

/* Reads the cluster; on the first success also sets up what depends on the spec. */
static enum inst_api_state boot_read(struct inst *in, struct err *e)
{
	struct inst_spec s;
	int rc = inst_kube_cluster(in, &s, e);

	if (rc == -ENOENT)
		return INST_API_NOT_FOUND;
	if (rc)
		return INST_API_UNREACHABLE;
	if (!in->lease) {
		inst_spec_release(&in->spec);
		in->spec = s;
		inst_desired_release(&in->desired);
		inst_desired_copy(&in->desired, &s.desired);
		if (pick_binary(in, e) < 0) {
			log_error("supervisor", "no server binary can be run", "error", e->msg,
			          (char *)NULL);
			in->exit_code = INST_EXIT_NO_SERVER;
			return INST_API_UNREACHABLE;
		}
		if (inst_lease_init(in, e) < 0)
			return INST_API_UNREACHABLE;
		inst_sentinel_follow_init(in);
		return INST_API_OK;
	}
	free(in->spec.current_primary);
	in->spec.current_primary = s.current_primary;
	s.current_primary = NULL;
	inst_spec_release(&s);
	return INST_API_OK;
}

/* Sentinel mode with sentinel pods: their majority instead of currentPrimary
 * (role.h rules S1-S4); the fence marker is read by the caller. */
static bool sentinel_facts(struct inst *in, struct inst_boot_facts *f)
{
	struct inst_sentinel_tally t;

	f->sentinels = inst_sentinel_boot_tally(in, &t);
	f->sentinel_verdict = t.verdict;
	if (t.verdict == INST_SENTINEL_OTHER) {
		snprintf(in->want_host, sizeof(in->want_host), "%s", t.host);
		in->want_port = t.port;
	}
	return f->sentinels > 0;
}

static void boot_facts(struct inst *in, struct inst_boot_facts *f, struct err *e)
{
	char reason[INST_REASON_MAX + 1];
	const char *cur = in->spec.current_primary;

	f->self = in->set.pod_name;
	f->current_primary = cur;
	f->fenced = inst_marker_read(in->marker_path, reason, sizeof(reason));
	f->has_data = inst_data_present(in->set.data_dir);
	f->instances = in->spec.instances;
	f->failover_phase = in->spec.failover_phase;
	f->failover_from = in->spec.failover_from;
	f->failover_to = in->spec.failover_to;
	if (cur && strcmp(cur, f->self) == 0 && !f->has_data &&
	    inst_kube_other_pods(in, &f->other_pods, e) < 0)
		f->other_pods = true; /* unknown counts as "others exist": the safe side */
	if (sentinel_facts(in, f))
		return;
	if (cur && strcmp(cur, f->self) != 0)
		f->primary_addr_known =
		        inst_kube_pod_addr(in, cur, in->want_host, sizeof(in->want_host),
		                           &in->want_port, NULL, e) == 0;
	if (f->fenced) {
		pthread_mutex_lock(&in->mu);
		in->snap.fenced = true;
		snprintf(in->snap.fence_reason, sizeof(in->snap.fence_reason), "%s", reason);
		pthread_mutex_unlock(&in->mu);
	}
}

static bool boot_act(struct inst *in, const struct inst_boot_decision *d, struct err *e)
{
	struct err se = { 0 };

	if (d->action == INST_BOOT_HOLD) {
		inst_sentinel_hold(in, d->reason);
		inst_set_state(in, INST_STATE_PARKED, d->reason);
		return true;
	}
	if (d->action == INST_BOOT_REPLICA && in->sen)
		inst_clear_fenced(in); /* Sentinel's master's replica: read-only */
	in->want = d->action == INST_BOOT_PRIMARY   ? INST_STATE_PRIMARY
	           : d->action == INST_BOOT_REPLICA ? INST_STATE_REPLICA
	                                            : INST_STATE_PARKED;
	in->follow_primary = d->action == INST_BOOT_PARK && !inst_is_fenced(in) && !in->sen;
	in->follow_at = now_ms() + FOLLOW_RETRY_MS;
	if (inst_start_server(in, &se) < 0) {
		log_error("supervisor", "cannot start the server", "error", se.msg, (char *)NULL);
		err_set(e, se.code, "%s", se.msg);
		schedule_restart(in);
	}
	if (d->action == INST_BOOT_PRIMARY && inst_lease_start(in, e) < 0)
		log_error("supervisor", "cannot start lease renewal", "error", e->msg,
		          (char *)NULL);
	inst_set_state(in, in->want, d->reason);
	return true;
}

/* A brand-new cluster's first primary restores its backup before the role decision
 * (restore.c): true while that holds the boot back. */
static bool restore_holds(struct inst *in, struct inst_boot_facts *f)
{
	const char *cur = in->spec.current_primary;

	if (!inst_restore_wanted(in) || f->has_data || f->other_pods || !cur ||
	    strcmp(cur, in->set.pod_name) != 0)
		return false;
	if (inst_restore_step(in) == 1) {
		f->has_data = inst_data_present(in->set.data_dir);
		return !f->has_data;
	}
	inst_set_state(in, INST_STATE_BOOTING, "restoring a backup (see restore)");
	return true;
}

/* One boot attempt: true when the server was started (in whatever role). */
static bool boot_step(struct inst *in)
{
	struct inst_boot_facts f = { 0 };
	struct inst_boot_decision d;
	struct err e = { 0 };

	f.api = boot_read(in, &e);
	if (f.api == INST_API_OK)
		boot_facts(in, &f, &e);
	if (f.api == INST_API_OK && restore_holds(in, &f))
		return false;
	inst_role_decide(&f, &d);
	if (d.action == INST_BOOT_NEED_LEASE) {
		int rc = inst_lease_acquire(in, &e);

		f.lease = rc == 0        ? INST_LEASE_ACQUIRED
		          : rc == -EBUSY ? INST_LEASE_OTHER
		                         : INST_LEASE_ERROR;
		inst_role_decide(&f, &d);
	}
	log_info("supervisor", "boot decision", "pod", in->set.pod_name, "action",
	         inst_boot_action_name(d.action), "reason", d.reason, "error", e.msg, (char *)NULL);
	if (d.action == INST_BOOT_WAIT) {
		inst_set_state(in, INST_STATE_BOOTING, d.reason);
		return false;
	}
	return boot_act(in, &d, &e);
}

/* --- timers ---------------------------------------------------------------------- */

static void follow_step(struct inst *in)
{
	char host[INST_HOST_MAX + 1];
	struct err e = { 0 };
	struct inst_spec s;
	int port;

	in->follow_at = now_ms() + FOLLOW_RETRY_MS;
	if (inst_kube_cluster(in, &s, &e) < 0)
		return;
	if (s.current_primary && strcmp(s.current_primary, in->set.pod_name) != 0 &&
	    inst_kube_pod_addr(in, s.current_primary, host, sizeof(host), &port, NULL, &e) == 0 &&
	    vk_replicaof(in->server_conn, host, port, &e) == 0) {
		snprintf(in->want_host, sizeof(in->want_host), "%s", host);
		in->want_port = port;
		in->want = INST_STATE_REPLICA;
		in->follow_primary = false;
		pthread_mutex_lock(&in->mu);
		snprintf(in->snap.master_host, sizeof(in->snap.master_host), "%s", host);
		in->snap.master_port = port;
		pthread_mutex_unlock(&in->mu);
		inst_set_state(in, INST_STATE_REPLICA, "replica of the current primary");
		log_info("supervisor", "parked replica now follows the primary", "host", host,
		         (char *)NULL);
	}
	inst_spec_release(&s);
}

/*
 * The TLS files changed (a renewed certificate in the projected volume): the server
 * re-reads them when the same paths are set again (REDIS-FACTS.md), so no restart.
 * Turning TLS on or off changes the listening ports: that one needs a restart.
 */
static void tls_step(struct inst *in)
{
	char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX];
	uint64_t stamp = inst_tls_stamp(&in->set);
	struct err e = { 0 };
	bool on;

	if (stamp == in->tls_stamp || in->server_pid <= 0)
		return;
	tls_files(in->set.tls_dir, cert, key, ca, &on);
	if (on && in->server_tls) {
		const struct vk_kv kv[] = { { "tls-cert-file", cert },
			                    { "tls-key-file", key },
			                    { "tls-ca-cert-file", ca } };

		if (vk_config_set(in->server_conn, kv, 3, &e) < 0) {
			log_warn("supervisor", "TLS files changed but the server refused them",
			         "error", e.msg, (char *)NULL);
			return; /* retried on the next tick: a half-written update settles */
		}
		log_info("supervisor", "TLS files changed: the server reloaded them", "pod",
		         in->set.pod_name, (char *)NULL);
	} else if (on != in->server_tls) {
		log_warn("supervisor", "TLS turned on or off in the files: needs a restart", "pod",
		         in->set.pod_name, (char *)NULL);
	}
	in->tls_stamp = stamp;
}

static void secrets_step(struct inst *in)
{
	struct err e = { 0 };
	int rc;

	in->secrets_at = now_ms() + in->set.secret_poll_ms;
	if ((rc = inst_creds_refresh(&in->set, &in->creds, &e)) < 0)
		log_warn("supervisor", "secret files changed but cannot be read", "error", e.msg,
		         (char *)NULL);
	if (rc <= 0)
		return;
	log_info("supervisor", "secret files changed: passwords added", "pod", in->set.pod_name,
	         (char *)NULL);
	if (in->server_pid > 0 && inst_apply_live(in, &in->desired, NULL, &e) < 0)
		log_warn("supervisor", "applying new passwords failed", "error", e.msg,
		         (char *)NULL);
	inst_share_password(in);
}

void inst_reload_files(struct inst *in)
{
	in->creds.stamp = ~inst_creds_stamp(&in->set); /* differs from what is there now */
	in->creds.acl_applied = false;
	in->tls_stamp = ~inst_tls_stamp(&in->set);
	secrets_step(in);
	tls_step(in);
	log_info("supervisor", "reload: Secret and TLS files re-read on request", "pod",
	         in->set.pod_name, "serverPid", in->server_pid > 0 ? "running" : "none",
	         (char *)NULL);
}

static void lease_lost_step(struct inst *in)
{
	if (!atomic_exchange(&in->lease_lost, false))
		return;
	inst_lease_stop(in, true);
	inst_sentinel_lease_lost(in);
	pthread_mutex_lock(&in->mu);
	in->snap.lease_held = false;
	snprintf(in->snap.reason, sizeof(in->snap.reason), "%s",
	         in->sen ? "primary lease lost: fenced; waiting for the sentinels and the lease"
	                 : "primary lease lost: fenced; waiting for the controller");
	pthread_mutex_unlock(&in->mu);
	in->fence_reassert_at = now_ms() + INST_FENCE_REASSERT_MS;
}

static void timers(struct inst *in, int64_t *boot_at, int64_t boot_deadline)
{
	int64_t now = now_ms();
	struct err e = { 0 };

	lease_lost_step(in);
	if (*boot_at && now >= *boot_at) {
		if (boot_step(in))
			*boot_at = 0;
		else if (now > boot_deadline && !inst_restore_pending(in))
			in->exit_code = INST_EXIT_BOOT_TIMEOUT;
		else
			*boot_at = now + BOOT_RETRY_MS;
	}
	if (in->restart_at && now >= in->restart_at && in->server_pid <= 0 &&
	    !inst_sentinel_holding(in) && inst_start_server(in, &e) < 0) {
		log_error("supervisor", "server restart failed", "error", e.msg, (char *)NULL);
		schedule_restart(in);
	}
	if (!*boot_at && now >= in->secrets_at) {
		secrets_step(in);
		tls_step(in);
	}
	if (in->follow_primary && now >= in->follow_at && in->server_pid > 0)
		follow_step(in);
	if (!*boot_at && in->want != INST_STATE_PRIMARY)
		inst_lease_observe_step(in);
	if (!*boot_at)
		inst_sentinel_step(in);
	if (in->fence_reassert_at && now >= in->fence_reassert_at && inst_is_fenced(in) &&
	    in->want == INST_STATE_PRIMARY) {
		in->fence_reassert_at = now + INST_FENCE_REASSERT_MS;
		(void)vk_client_pause_write(in->server_conn, INST_FENCE_PAUSE_MS, NULL);
	}
	pthread_mutex_lock(&in->mu);
	in->snap.lease_held = inst_lease_held(in);
	in->snap.lease_renew_failures = atomic_load(&in->lease_failures);
	pthread_mutex_unlock(&in->mu);
}

/* --- commands, signals, shutdown -------------------------------------------------- */

static void run_commands(struct inst *in, bool booting)
{
	struct inst_cmd *c;

	while ((c = inst_take(in, "supervisor")) != NULL) {
		if (booting || in->stopping) {
			c->status = 503;
			c->body =
			        xstrdup(booting ? "{\"error\":\"booting: the server is not started "
			                          "yet\"}"
			                        : "{\"error\":\"shutting down\"}");
		} else {
			inst_ops_execute(in, c);
		}
		inst_http_complete(in, c);
	}
}

void inst_drain_commands(struct inst *in)
{
	pthread_mutex_lock(&in->mu);
	in->stopping = true;
	pthread_mutex_unlock(&in->mu);
	run_commands(in, false);
}

static int shutdown_all(struct inst *in)
{
	int64_t budget = in->set.shutdown_timeout_ms;
	struct inst_handover h = { .sigterm_ms = clock_wall_ms(),
		                   .why = "fenced, or not the Lease holder" };
	bool primary = in->want == INST_STATE_PRIMARY, handed = false;
	int killed;

	log_info("supervisor", "shutting down", "pod", in->set.pod_name, (char *)NULL);
	inst_set_state(in, INST_STATE_STOPPING, "shutdown requested");
	pthread_mutex_lock(&in->mu);
	in->stopping = true;
	pthread_mutex_unlock(&in->mu);
	/* a hand-over (handover.h): every replica caught up, the Lease goes before the SAVE */
	if (primary && in->server_pid > 0 && !inst_is_fenced(in) && inst_lease_held(in))
		handed = inst_handover_drain(in, budget / 4 < 5000 ? budget / 4 : 5000, &h);
	if (handed) {
		inst_lease_stop(in, true);
		h.released_ms = clock_wall_ms();
	}
	if (primary)
		inst_handover_log(in, &h);
	killed = inst_stop_server(in, budget * 7 / 10, in->spec.ephemeral);
	if (!handed)
		inst_lease_stop(in, primary);
	log_info("supervisor", killed ? "stopped (server killed)" : "stopped cleanly", "pod",
	         in->set.pod_name, (char *)NULL);
	return killed ? INST_EXIT_SERVER_KILLED : INST_EXIT_OK;
}

static int setup_fds(struct inst *in)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGHUP);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	in->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	in->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return in->sigfd < 0 || in->evfd < 0 ? -errno : 0;
}

/* Returns true when asked to stop. */
static bool read_signals(struct inst *in)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(in->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap_children(in);
		else if (si.ssi_signo != SIGHUP)
			stop = true;
	}
	reap_children(in); /* coalesced SIGCHLDs */
	return stop;
}

int inst_run(struct inst *in)
{
	int64_t boot_at = now_ms(), boot_deadline = boot_at + in->set.boot_timeout_ms;
	struct pollfd pfd[2];

	in->exit_code = -1;
	in->secrets_at = now_ms() + in->set.secret_poll_ms;
	while (in->exit_code < 0) {
		pfd[0] = (struct pollfd){ .fd = in->sigfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = in->evfd, .events = POLLIN };
		if (poll(pfd, 2, SUP_TICK_MS) < 0 && errno != EINTR)
			return INST_EXIT_ERROR;
		if ((pfd[0].revents & POLLIN) && read_signals(in))
			return shutdown_all(in);
		if (pfd[1].revents & POLLIN)
			run_commands(in, boot_at != 0);
		timers(in, &boot_at, boot_deadline);
	}
	inst_stop_server(in, in->set.shutdown_timeout_ms, in->spec.ephemeral);
	return in->exit_code;
}

int inst_supervisor_setup(struct inst *in)
{
	return setup_fds(in);
}

bool inst_is_fenced(struct inst *in)
{
	bool f;

	pthread_mutex_lock(&in->mu);
	f = in->snap.fenced;
	pthread_mutex_unlock(&in->mu);
	return f;
}

/*
 * fence: stopping writes on this instance's server — confirmed, or not reported.
 *
 * A fence is `CLIENT PAUSE <24h> WRITE` (writes and key expiry stop, reads go on), then
 * the customers' connections are dropped (`CLIENT KILL USER u` for every ACL user but
 * the operator's, so nothing queued behind the pause is ever acknowledged, while the
 * manager's own connections — the reserved fence connection, the poller, replication —
 * stay open). The +OK of the pause is the confirmation: a server runs commands in
 * order, so every write after that reply waits.
 *
 * The snapshot's `fenced`, which the controller reads as "this primary cannot write any
 * more" before it promotes another instance, is set only once a fence is confirmed.
 * The pause is retried every FENCE_RETRY_MS within the caller's budget. A server that
 * confirms nothing within it (every client slot taken and no spare connection, a
 * `DEBUG SLEEP`, a busy script, a frozen process) is HALTED instead: SIGSTOP, checked
 * in /proc to have stopped, then SIGKILL. The supervisor reaps it as a crashed primary
 * and restarts it parked (read-only), so a halted server counts as fenced. Data the
 * server had not replicated is at most what no replica acknowledged (WAIT), which a
 * failover loses anyway. The fence marker in the data dir is written in every case, so
 * a restarted manager comes back fenced.
 *
 * Budgets: the self-fence on Lease loss gets half the fence margin (leaseDuration -
 * renewDeadline, lib/k8s/lease.h), so the server is paused or halted before anyone
 * else may take the Lease; /v1/fence and a failed switchover get INST_FENCE_BUDGET_MS.
 *
 * Threads: the lease thread fences over `fence_conn`, the supervisor over `server_conn`; both
 * may run this at once (different connections; the snapshot is under `mu`).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"

#define FENCE_RETRY_MS 50
#define HALT_CHECK_MS  500 /* SIGSTOP takes effect in microseconds; this is generous */

static void nap_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Drops the connections of every user but ours (best effort: the pause already holds). */
static void kill_customer_clients(struct vk_conn *c)
{
	struct vk_reply *users = NULL;

	if (vk_command(c, &users, NULL, "ACL", "USERS") < 0)
		return;
	for (size_t i = 0; i < vk_reply_len(users); i++) {
		const char *u = vk_reply_str(vk_reply_elem(users, i), NULL);

		if (u && strcmp(u, INST_OPERATOR_USER) != 0)
			(void)vk_command(c, NULL, NULL, "CLIENT", "KILL", "USER", u);
	}
	vk_reply_free(users);
}

int inst_fence_server(struct vk_conn *c, struct err *e)
{
	int rc = vk_client_pause_write(c, INST_FENCE_PAUSE_MS, e);

	if (!rc)
		kill_customer_clients(c);
	return rc;
}

/* The server's state letter from /proc/PID/stat ('T' stopped, 'Z' zombie …), or 0 when
 * the process is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *close_paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	close_paren = strrchr(buf, ')'); /* the command name may hold anything */
	return close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
}

static bool halted(pid_t pid)
{
	char s = proc_state(pid);

	return s == 0 || s == 'T' || s == 't' || s == 'Z' || s == 'X';
}

/*
 * The last resort: freezes the server, checks that it stopped, kills it. 0 when no server
 * process can write any more; -ESRCH-like errors only if the kernel refused (never seen).
 */
static int halt_server(struct inst *in, struct err *e)
{
	int64_t until = clock_mono_ms() + HALT_CHECK_MS;
	pid_t pid;

	pthread_mutex_lock(&in->mu);
	pid = in->snap.server_pid;
	pthread_mutex_unlock(&in->mu);
	if (pid <= 0)
		return 0; /* no server: nothing writes */
	if (kill(pid, SIGSTOP) < 0 && errno != ESRCH)
		return err_set(e, -errno, "cannot stop the server (pid %d): %s", (int)pid,
		               strerror(errno));
	while (!halted(pid) && clock_mono_ms() < until)
		nap_ms(1);
	if (!halted(pid))
		return err_set(e, -ETIMEDOUT, "the server (pid %d) did not stop", (int)pid);
	/* the supervisor reaps it as a crashed primary and restarts it parked */
	(void)kill(pid, SIGKILL);
	return 0;
}

static void set_fenced(struct inst *in, const char *reason)
{
	pthread_mutex_lock(&in->mu);
	in->snap.fenced = true;
	snprintf(in->snap.fence_reason, sizeof(in->snap.fence_reason), "%s", reason);
	pthread_mutex_unlock(&in->mu);
}

int inst_fence_now(struct inst *in, struct vk_conn *c, const char *reason, int64_t budget_ms,
                   struct err *e)
{
	int64_t deadline = clock_mono_ms() + budget_ms;
	char why[INST_REASON_MAX];
	struct err fe = { 0 };
	char *pw;
	int rc;

	pthread_mutex_lock(&in->mu);
	pw = in->shared_pw ? xstrdup(in->shared_pw) : NULL;
	pthread_mutex_unlock(&in->mu);
	vk_conn_set_auth(c, INST_OPERATOR_USER, pw);
	free_secret(pw);
	pthread_mutex_lock(&in->mu);
	rc = in->snap.server_pid > 0;
	pthread_mutex_unlock(&in->mu);
	if (!rc) { /* no server runs: nothing can write; a restart comes back fenced */
		set_fenced(in, reason);
		return inst_marker_write(in->marker_path, reason, e);
	}
	while ((rc = inst_fence_server(c, &fe)) < 0 &&
	       clock_mono_ms() + FENCE_RETRY_MS < deadline) {
		err_clear(&fe);
		nap_ms(FENCE_RETRY_MS);
	}
	/* after the pause (it comes first), before a halt: a restart comes back fenced */
	(void)inst_marker_write(in->marker_path, reason, NULL);
	if (rc == 0) {
		set_fenced(in, reason);
		return 0;
	}
	log_error("fence", "fence not confirmed: halting the server", "reason", reason, "error",
	          fe.msg, (char *)NULL);
	if ((rc = halt_server(in, e)) < 0)
		return rc;
	snprintf(why, sizeof(why), "%.120s (not confirmed within %lld ms: server halted)", reason,
	         (long long)budget_ms);
	set_fenced(in, why);
	return 0;
}

/*
 * probe: startup, liveness and readiness probes, scheduled as the kubelet does.
 *
 * Each probe runs in a child process so nothing blocks the agent's loop: httpGet is
 * `curl --fail` to the pod IP (2xx and 3xx succeed; HTTPS without verification),
 * tcpSocket a forked connect(), exec a helper inside the container's namespaces. The
 * child's exit status is the result (0 = success); a probe still running at its
 * deadline is SIGKILLed and counts as a failure. A killed or outdated probe stays
 * "abandoned" until reaped, and its slot starts nothing new meanwhile.
 *
 * Rules: the first run is initialDelaySeconds after the container started, then one
 * every periodSeconds; the startup probe runs until it succeeds once and holds the
 * others back; startup or liveness failing failureThreshold times in a row stops the
 * container (preStop, SIGTERM, SIGKILL after the pod's grace period) and the restart
 * policy decides what follows; readiness flips ready after successThreshold successes
 * or failureThreshold failures in a row. No readiness probe: ready once started.
 */
#include "runtime_int.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/err.h"
#include "lib/log.h"

static const size_t slot_offset[RT_PROBE_SLOTS] = {
	[RT_PROBE_STARTUP] = offsetof(struct rt_container, startup),
	[RT_PROBE_LIVENESS] = offsetof(struct rt_container, liveness),
	[RT_PROBE_READINESS] = offsetof(struct rt_container, readiness),
};

static const char *const slot_name[RT_PROBE_SLOTS] = { "startup", "liveness", "readiness" };

void rt_probe_defaults(struct rt_probe *p)
{
	if (p->kind == RT_PROBE_NONE)
		return;
	if (p->period_s <= 0)
		p->period_s = 10;
	if (p->timeout_s <= 0)
		p->timeout_s = 1;
	if (p->success_threshold <= 0)
		p->success_threshold = 1;
	if (p->failure_threshold <= 0)
		p->failure_threshold = 3;
	if (p->initial_delay_s < 0)
		p->initial_delay_s = 0;
}

static bool has_probe(const struct rt_probe_run *r)
{
	return r->spec && r->spec->kind != RT_PROBE_NONE;
}

void rt_probes_reset(struct rt_pod *pod, struct rt_ctr *c, int64_t now)
{
	(void)pod;
	for (int k = 0; k < RT_PROBE_SLOTS; k++) {
		struct rt_probe_run *r = &c->probes[k];

		r->spec = (const struct rt_probe *)((const char *)c->spec + slot_offset[k]);
		r->successes = r->failures = 0;
		r->next_due = now + (int64_t)r->spec->initial_delay_s * 1000;
	}
	c->started = !has_probe(&c->probes[RT_PROBE_STARTUP]);
	c->ready = c->started && !has_probe(&c->probes[RT_PROBE_READINESS]);
}

/* --- starting a probe ------------------------------------------------------------------ */

static int start_http(struct rt_pod *pod, struct rt_ctr *c, const struct rt_probe *p, pid_t *pid,
                      struct err *e)
{
	const char *path = p->path && p->path[0] ? p->path : "/";
	char url[2048], tmo[16];
	const char *argv[] = { pod->cfg->curl_bin,
		               "-sgk",
		               "--fail",
		               "--noproxy",
		               "*",
		               "-o",
		               "/dev/null",
		               "-A",
		               RT_PROBE_USER_AGENT,
		               "--max-time",
		               tmo,
		               url,
		               NULL };

	(void)c;
	if (snprintf(url, sizeof(url), "%s://%s:%d%s%s", p->https ? "https" : "http", pod->sb.ip,
	             p->port, path[0] == '/' ? "" : "/", path) >= (int)sizeof(url))
		return err_set(e, -ENAMETOOLONG, "probe path too long");
	snprintf(tmo, sizeof(tmo), "%d", p->timeout_s);
	return rt_spawn_cmd(argv, pid, e);
}

static int start_tcp(struct rt_pod *pod, struct rt_ctr *c, const struct rt_probe *p, pid_t *pid,
                     struct err *e)
{
	(void)c;
	return rt_spawn_tcp_check(pod->sb.ip, p->port, (int64_t)p->timeout_s * 1000, pid, e);
}

static int start_exec(struct rt_pod *pod, struct rt_ctr *c, const struct rt_probe *p, pid_t *pid,
                      struct err *e)
{
	struct rt_exec_in x = { .target = c->pid,
		                .argv = p->exec_argv,
		                .envp = c->envp,
		                .workdir = rt_ctr_workdir(c),
		                .cred = *rt_ctr_cred(c),
		                .cgroup_fd = pod->cg_fd };

	if (!p->exec_argv || !p->exec_argv[0])
		return err_set(e, -EINVAL, "exec probe without a command");
	return rt_spawn_exec_in(&x, pid, e);
}

static int (*const starters[])(struct rt_pod *, struct rt_ctr *, const struct rt_probe *, pid_t *,
                               struct err *) = {
	[RT_PROBE_HTTP] = start_http,
	[RT_PROBE_TCP] = start_tcp,
	[RT_PROBE_EXEC] = start_exec,
};

/* --- results ------------------------------------------------------------------------------ */

static void probe_failed_enough(struct rt_pod *pod, struct rt_ctr *c, int k, int64_t now)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", c->probes[k].failures);
	log_info("nodeagent", "probe failed, stopping container", "pod", pod->spec.name,
	         "container", c->spec->name, "probe", slot_name[k], "failures", n, NULL);
	c->probes[k].failures = 0;
	rt_ctr_stop(pod, c, (int64_t)pod->spec.grace_period_s * 1000, now);
}

static void set_ready(struct rt_pod *pod, struct rt_ctr *c, bool ready)
{
	if (c->ready == ready)
		return;
	c->ready = ready;
	rt_pod_touch(pod);
}

static void probe_result(struct rt_pod *pod, struct rt_ctr *c, int k, bool ok, int64_t now)
{
	struct rt_probe_run *r = &c->probes[k];

	if (ok) {
		r->successes++;
		r->failures = 0;
	} else {
		r->failures++;
		r->successes = 0;
	}
	if (k == RT_PROBE_STARTUP && ok) {
		c->started = true;
		rt_pod_touch(pod);
		if (!has_probe(&c->probes[RT_PROBE_READINESS]))
			set_ready(pod, c, true);
	} else if (k != RT_PROBE_READINESS && !ok && r->failures >= r->spec->failure_threshold) {
		probe_failed_enough(pod, c, k, now);
	} else if (k == RT_PROBE_READINESS && ok && r->successes >= r->spec->success_threshold) {
		set_ready(pod, c, true);
	} else if (k == RT_PROBE_READINESS && !ok && r->failures >= r->spec->failure_threshold) {
		set_ready(pod, c, false);
	}
}

/* Is slot k's turn now (not counting its schedule)? */
static bool slot_active(const struct rt_ctr *c, int k)
{
	if (!c->pid || c->stopping || !has_probe(&c->probes[k]))
		return false;
	return k == RT_PROBE_STARTUP ? !c->started : c->started;
}

static void probe_start(struct rt_pod *pod, struct rt_ctr *c, int k, int64_t now)
{
	struct rt_probe_run *r = &c->probes[k];
	struct err e;

	err_clear(&e);
	r->next_due = now + (int64_t)r->spec->period_s * 1000;
	if (starters[r->spec->kind](pod, c, r->spec, &r->pid, &e) < 0) {
		r->pid = 0;
		log_debug("nodeagent", "probe not started", "pod", pod->spec.name, "container",
		          c->spec->name, "probe", slot_name[k], "error", e.msg, NULL);
		probe_result(pod, c, k, false, now);
		return;
	}
	r->abandoned = false;
	r->deadline = now + (int64_t)r->spec->timeout_s * 1000;
}

void rt_probes_step(struct rt_pod *pod, struct rt_ctr *c, int64_t now)
{
	for (int k = 0; k < RT_PROBE_SLOTS; k++) {
		struct rt_probe_run *r = &c->probes[k];

		if (r->pid && !r->abandoned && now >= r->deadline) {
			kill(r->pid, SIGKILL);
			r->abandoned = true;
			if (slot_active(c, k))
				probe_result(pod, c, k, false, now);
		}
		if (!r->pid && slot_active(c, k) && now >= r->next_due)
			probe_start(pod, c, k, now);
	}
}

bool rt_probes_on_exit(struct rt_pod *pod, struct rt_ctr *c, pid_t pid, int status, int64_t now)
{
	for (int k = 0; k < RT_PROBE_SLOTS; k++) {
		struct rt_probe_run *r = &c->probes[k];
		bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;

		if (pid <= 0 || r->pid != pid)
			continue;
		r->pid = 0;
		if (!r->abandoned && slot_active(c, k))
			probe_result(pod, c, k, ok, now);
		r->abandoned = false;
		return true;
	}
	return false;
}

void rt_probes_cancel(struct rt_ctr *c)
{
	for (int k = 0; k < RT_PROBE_SLOTS; k++) {
		struct rt_probe_run *r = &c->probes[k];

		if (r->pid && !r->abandoned) {
			kill(r->pid, SIGKILL);
			r->abandoned = true;
		}
	}
}

bool rt_probes_busy(const struct rt_ctr *c)
{
	for (int k = 0; k < RT_PROBE_SLOTS; k++)
		if (c->probes[k].pid)
			return true;
	return false;
}

int64_t rt_probes_next_due(const struct rt_ctr *c)
{
	int64_t due = INT64_MAX;

	for (int k = 0; k < RT_PROBE_SLOTS; k++) {
		const struct rt_probe_run *r = &c->probes[k];

		if (r->pid && !r->abandoned && r->deadline < due)
			due = r->deadline;
		else if (!r->pid && slot_active(c, k) && r->next_due < due)
			due = r->next_due;
	}
	return due;
}

/*
 * runtime: a pod's life as the kubelet drives it (see runtime.h).
 *
 * Container states: waiting (never started, ErrImagePull, CrashLoopBackOff), running
 * (pid != 0) and terminated. A terminated instance becomes last_state when the next one
 * starts or the container waits in back-off. Init containers run one at a time, in
 * order; the next starts once the previous exited 0; regular containers start together
 * after the last init container. Whether an exited container comes back is the restart
 * policy's call (init containers: restarted on failure unless Never). Restarts wait out
 * the kubelet's back-off: the first restart is immediate, the next waits base, then
 * 2 * base ... up to max, counted from the instance's exit; an instance that ran longer
 * than 2 * max starts the count over.
 *
 * Invariants: pid != 0 only in state running; stopping only while pid != 0; every child
 * we made (container, preStop helper, probe) keeps its pid here until rt_pod_on_exit
 * hands its status back, so rt_pod_is_stopped means "nothing of ours left".
 */
#include "runtime_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "imagemap.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/log.h"

#define DESTROY_REAP_MS 5000

void rt_config_init(struct rt_config *c)
{
	memset(c, 0, sizeof(*c));
	c->state_dir = "/run/ro-nodeagent";
	c->bridge = "ro-br0";
	c->gateway = "10.240.0.1";
	c->link_prefix = 16;
	c->pod_cidr = "10.240.1.0/24";
	c->cgroup_root = "/sys/fs/cgroup/freezer/ro-pods";
	c->ip_bin = "ip";
	c->curl_bin = "curl";
	c->backoff_base_ms = 10 * 1000;
	c->backoff_max_ms = 300 * 1000;
	c->start_timeout_ms = 10 * 1000;
}

char *rt_pod_dir(const struct rt_config *cfg, const char *uid)
{
	return xasprintf("%s/pods/%s", cfg->state_dir, uid);
}

void rt_pod_touch(struct rt_pod *pod)
{
	pod->version++;
}

static int64_t wall_now(const struct rt_pod *pod)
{
	return clock_now_wall(pod->cfg->clock);
}

/* --- container state ---------------------------------------------------------------------- */

static void state_clear(struct rt_ctr_state *s)
{
	free(s->reason);
	free(s->message);
	memset(s, 0, sizeof(*s));
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A terminated current state moves to last_state before cur changes. */
static void retire_terminated(struct rt_ctr *c)
{
	if (c->cur.kind != RT_STATE_TERMINATED)
		return;
	state_clear(&c->last);
	c->last = c->cur;
	memset(&c->cur, 0, sizeof(c->cur));
}

static void set_waiting(struct rt_pod *pod, struct rt_ctr *c, const char *reason, const char *msg)
{
	if (c->cur.kind == RT_STATE_WAITING && str_eq(c->cur.reason, reason) &&
	    str_eq(c->cur.message, msg))
		return;
	retire_terminated(c);
	state_clear(&c->cur);
	c->cur.kind = RT_STATE_WAITING;
	c->cur.reason = xstrdup(reason);
	c->cur.message = msg ? xstrdup(msg) : NULL;
	rt_pod_touch(pod);
}

static void set_terminated(struct rt_pod *pod, struct rt_ctr *c, int code, int sig,
                           const char *reason, const char *msg)
{
	int64_t started = c->cur.kind == RT_STATE_RUNNING ? c->cur.started_at_ms : 0;

	retire_terminated(c);
	state_clear(&c->cur);
	c->cur.kind = RT_STATE_TERMINATED;
	c->cur.reason = xstrdup(reason);
	c->cur.message = msg ? xstrdup(msg) : NULL;
	c->cur.exit_code = code;
	c->cur.signal = sig;
	c->cur.started_at_ms = started;
	c->cur.finished_at_ms = wall_now(pod);
	c->last_exit = code;
	c->finished_mono = pod->now;
	rt_pod_touch(pod);
}

const struct rt_cred *rt_ctr_cred(const struct rt_ctr *c)
{
	return &c->cred;
}

/* --- starting ------------------------------------------------------------------------------ */

static bool ctr_should_run(const struct rt_pod *pod, const struct rt_ctr *c)
{
	static const bool restart[][2] = {
		/* [policy][failed] */
		[RT_RESTART_ALWAYS] = { true, true },
		[RT_RESTART_ON_FAILURE] = { false, true },
		[RT_RESTART_NEVER] = { false, false },
	};
	bool failed = c->last_exit != 0;

	if (pod->killing || c->pid)
		return false;
	if (!c->ever_started)
		return true;
	if (c->is_init)
		return failed && pod->spec.restart_policy != RT_RESTART_NEVER;
	return restart[pod->spec.restart_policy][failed];
}

static void backoff_message(const struct rt_pod *pod, const struct rt_ctr *c, char *out, size_t len)
{
	long long d = (long long)c->bo_delay;

	snprintf(out, len, "back-off %lld%s restarting failed container=%s pod=%s_%s(%s)",
	         d % 1000 ? d : d / 1000, d % 1000 ? "ms" : "s", c->spec->name, pod->spec.name,
	         pod->spec.ns, pod->spec.uid);
}

/* True when c may (re)start now; else it waits in CrashLoopBackOff. */
static bool backoff_allows(struct rt_pod *pod, struct rt_ctr *c)
{
	char msg[RT_MSG_MAX];

	if (!c->ever_started)
		return true;
	if (c->bo_delay && c->finished_mono - c->bo_last_update > 2 * pod->cfg->backoff_max_ms) {
		backoff_reset(&c->bo);
		c->bo_delay = 0;
	}
	if (pod->now >= c->finished_mono + c->bo_delay)
		return true;
	backoff_message(pod, c, msg, sizeof(msg));
	set_waiting(pod, c, "CrashLoopBackOff", msg);
	return false;
}

/* argv and env of the next instance. */
static int ctr_prepare(struct rt_pod *pod, struct rt_ctr *c, struct err *e)
{
	rt_strv_free(c->argv);
	rt_strv_free(c->envp);
	c->argv = NULL;
	c->envp = rt_build_env(pod, c);
	return rt_build_argv(c, c->envp, &c->argv, e);
}

/* The pod name cut to a legal hostname, as the kubelet does. */
static void pod_hostname(const struct rt_pod *pod, char out[64])
{
	size_t n = strlen(pod->spec.name);

	n = n > 63 ? 63 : n;
	while (n > 1 && (pod->spec.name[n - 1] == '-' || pod->spec.name[n - 1] == '.'))
		n--;
	memcpy(out, pod->spec.name, n);
	out[n] = '\0';
}

const char *rt_ctr_workdir(const struct rt_ctr *c)
{
	if (c->spec->working_dir)
		return c->spec->working_dir;
	return c->image && c->image->workdir ? c->image->workdir : "/";
}

/* Log, launch description, spawn: the part of a start that needs the root plan. */
static int ctr_launch(struct rt_pod *pod, struct rt_ctr *c, const struct rt_root_plan *plan,
                      pid_t *pid, struct err *e)
{
	struct rt_launch l;
	char host[64];
	int rc, log_fd;

	if (c->ever_started)
		rename(c->log_path, c->prev_log_path);
	log_fd = open(c->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log_fd < 0)
		return err_set(e, -errno, "%s: %s", c->log_path, strerror(errno));
	pod_hostname(pod, host);
	l = (struct rt_launch){ .root = plan,
		                .argv = c->argv,
		                .envp = c->envp,
		                .workdir = rt_ctr_workdir(c),
		                .hostname = host,
		                .cred = c->cred,
		                .netns_fd = pod->netns_fd,
		                .cgroup_fd = pod->cg_fd,
		                .log_fd = log_fd,
		                .timeout_ms = pod->cfg->start_timeout_ms };
	rc = rt_spawn_container(&l, pid, e);
	close(log_fd);
	return rc;
}

static int ctr_spawn(struct rt_pod *pod, struct rt_ctr *c, pid_t *pid, struct err *e)
{
	struct rt_root_plan plan;
	int rc;

	if ((rc = ctr_prepare(pod, c, e)))
		return rc;
	rc = rt_root_plan_build(&plan, pod, c, e);
	if (!rc)
		rc = ctr_launch(pod, c, &plan, pid, e);
	rt_root_plan_release(&plan);
	return rc;
}

static void ctr_start(struct rt_pod *pod, struct rt_ctr *c)
{
	struct err e;
	pid_t pid = 0;
	int rc;

	err_clear(&e);
	rc = ctr_spawn(pod, c, &pid, &e);
	if (c->ever_started) {
		c->restart_count++;
		c->bo_delay = backoff_next(&c->bo);
		c->bo_last_update = pod->now;
	}
	c->ever_started = true;
	if (rc) {
		log_warn("nodeagent", "container start failed", "pod", pod->spec.name, "container",
		         c->spec->name, "error", e.msg, NULL);
		set_terminated(pod, c, 128, 0, "StartError", e.msg);
		return;
	}
	retire_terminated(c);
	state_clear(&c->cur);
	c->cur.kind = RT_STATE_RUNNING;
	c->cur.started_at_ms = wall_now(pod);
	c->pid = pid;
	rt_probes_reset(pod, c, pod->now);
	rt_pod_touch(pod);
}

/* Starts c if it should run and may: image known, back-off over. */
static void ctr_try_start(struct rt_pod *pod, struct rt_ctr *c)
{
	if (!ctr_should_run(pod, c))
		return;
	if (!c->image) {
		char *pats = imagemap_patterns(pod->cfg->images);
		char msg[RT_MSG_MAX];

		snprintf(msg, sizeof(msg), "image \"%s\" is not in the image map %s (patterns: %s)",
		         c->spec->image, pod->cfg->images ? pod->cfg->images->source : "(none)",
		         pats);
		free(pats);
		set_waiting(pod, c, "ErrImagePull", msg);
		return;
	}
	if (backoff_allows(pod, c))
		ctr_start(pod, c);
}

/* --- stopping ------------------------------------------------------------------------------- */

static void send_term(struct rt_ctr *c)
{
	kill(c->pid, SIGTERM);
	c->term_sent = true;
}

static void stop_step(struct rt_pod *pod, struct rt_ctr *c)
{
	if (!c->pid || !c->stopping)
		return;
	if (!c->term_sent && !c->prestop_pid)
		send_term(c);
	if (pod->now < c->kill_deadline || c->kill_sent)
		return;
	if (c->prestop_pid)
		kill(c->prestop_pid, SIGKILL);
	if (rt_cgroup_is_frozen(pod->sb.cgroup))
		rt_cgroup_freeze(pod->sb.cgroup, false, NULL); /* or SIGKILL waits for a thaw */
	kill(c->pid, SIGKILL);
	c->kill_sent = true;
}

static void start_prestop(struct rt_pod *pod, struct rt_ctr *c)
{
	struct rt_exec_in x = { .target = c->pid,
		                .argv = c->spec->pre_stop_exec,
		                .envp = c->envp,
		                .workdir = rt_ctr_workdir(c),
		                .cred = c->cred,
		                .cgroup_fd = pod->cg_fd };
	struct err e;

	err_clear(&e);
	if (rt_spawn_exec_in(&x, &c->prestop_pid, &e) < 0) {
		c->prestop_pid = 0;
		log_warn("nodeagent", "preStop hook failed", "pod", pod->spec.name, "container",
		         c->spec->name, "error", e.msg, NULL);
	}
}

void rt_ctr_stop(struct rt_pod *pod, struct rt_ctr *c, int64_t grace_ms, int64_t now)
{
	int64_t deadline = now + (grace_ms > 0 ? grace_ms : 0);

	pod->now = now;
	if (!c->pid)
		return;
	if (c->stopping) {
		if (deadline < c->kill_deadline)
			c->kill_deadline = deadline;
	} else {
		c->stopping = true;
		c->term_sent = c->kill_sent = false;
		c->kill_deadline = deadline;
		rt_probes_cancel(c);
		if (c->spec->pre_stop_exec && c->spec->pre_stop_exec[0])
			start_prestop(pod, c);
	}
	stop_step(pod, c);
}

/* --- exits ------------------------------------------------------------------------------------ */

static void ctr_exited(struct rt_pod *pod, struct rt_ctr *c, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	char num[16];

	set_terminated(pod, c, code, sig, code ? "Error" : "Completed", NULL);
	c->pid = 0;
	c->ready = c->started = false;
	c->stopping = c->term_sent = c->kill_sent = false;
	rt_probes_cancel(c);
	if (c->prestop_pid)
		kill(c->prestop_pid, SIGKILL);
	snprintf(num, sizeof(num), "%d", code);
	log_info("nodeagent", "container exited", "pod", pod->spec.name, "container", c->spec->name,
	         "exitCode", num, NULL);
}

static bool ctr_on_exit(struct rt_pod *pod, struct rt_ctr *c, pid_t pid, int status)
{
	if (pid == c->pid) {
		ctr_exited(pod, c, status);
		return true;
	}
	if (pid == c->prestop_pid) {
		c->prestop_pid = 0;
		if (c->pid && c->stopping && !c->term_sent)
			send_term(c);
		return true;
	}
	return rt_probes_on_exit(pod, c, pid, status, pod->now);
}

bool rt_pod_on_exit(struct rt_pod *pod, pid_t pid, int status)
{
	if (pid <= 0)
		return false;
	pod->now = clock_now_mono(pod->cfg->clock);
	for (size_t i = 0; i < pod->spec.n_init; i++)
		if (ctr_on_exit(pod, &pod->init[i], pid, status))
			return true;
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		if (ctr_on_exit(pod, &pod->ctrs[i], pid, status))
			return true;
	return false;
}

/* --- the step --------------------------------------------------------------------------------- */

/* Runs the init containers in order; true once all have succeeded. */
static bool init_step(struct rt_pod *pod)
{
	while (pod->init_done < pod->spec.n_init) {
		struct rt_ctr *c = &pod->init[pod->init_done];

		if (c->pid)
			return false;
		if (c->ever_started && c->cur.kind == RT_STATE_TERMINATED && c->last_exit == 0) {
			pod->init_done++;
			rt_pod_touch(pod);
			continue;
		}
		if (c->ever_started && !ctr_should_run(pod, c) && !pod->killing) {
			if (!pod->init_failed)
				rt_pod_touch(pod);
			pod->init_failed = true;
			return false;
		}
		ctr_try_start(pod, c);
		return false;
	}
	return true;
}

bool rt_pod_step(struct rt_pod *pod, int64_t now_ms)
{
	uint64_t before = pod->version;

	pod->now = now_ms;
	for (size_t i = 0; i < pod->spec.n_init; i++)
		stop_step(pod, &pod->init[i]);
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		stop_step(pod, &pod->ctrs[i]);
	if (init_step(pod)) {
		for (size_t i = 0; i < pod->spec.n_containers; i++)
			ctr_try_start(pod, &pod->ctrs[i]);
	}
	for (size_t i = 0; i < pod->spec.n_init; i++)
		rt_probes_step(pod, &pod->init[i], now_ms);
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		rt_probes_step(pod, &pod->ctrs[i], now_ms);
	return pod->version != before;
}

/* startable: c's turn has come (the init containers before it are done). */
static int64_t ctr_next_due(const struct rt_pod *pod, const struct rt_ctr *c, bool startable)
{
	int64_t due = rt_probes_next_due(c);

	if (c->stopping && !c->kill_sent && c->kill_deadline < due)
		due = c->kill_deadline;
	if (startable && c->image && ctr_should_run(pod, c)) {
		int64_t at = c->ever_started ? c->finished_mono + c->bo_delay : pod->now;

		if (at < due)
			due = at;
	}
	return due;
}

int64_t rt_pod_next_due(const struct rt_pod *pod)
{
	bool init_done = pod->init_done == pod->spec.n_init;
	int64_t due = INT64_MAX;

	for (size_t i = 0; i < pod->spec.n_init; i++) {
		int64_t d = ctr_next_due(pod, &pod->init[i], i == pod->init_done);

		due = d < due ? d : due;
	}
	for (size_t i = 0; i < pod->spec.n_containers; i++) {
		int64_t d = ctr_next_due(pod, &pod->ctrs[i], init_done);

		due = d < due ? d : due;
	}
	return due;
}

/* --- kill, stopped, destroy ------------------------------------------------------------------- */

void rt_pod_kill(struct rt_pod *pod, int64_t grace_ms)
{
	int64_t now = clock_now_mono(pod->cfg->clock);

	if (!pod->killing)
		rt_pod_touch(pod);
	pod->killing = true;
	for (size_t i = 0; i < pod->spec.n_init; i++)
		rt_ctr_stop(pod, &pod->init[i], grace_ms, now);
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		rt_ctr_stop(pod, &pod->ctrs[i], grace_ms, now);
}

static bool ctr_is_stopped(const struct rt_ctr *c)
{
	return !c->pid && !c->prestop_pid && !rt_probes_busy(c);
}

bool rt_pod_is_stopped(const struct rt_pod *pod)
{
	for (size_t i = 0; i < pod->spec.n_init; i++)
		if (!ctr_is_stopped(&pod->init[i]))
			return false;
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		if (!ctr_is_stopped(&pod->ctrs[i]))
			return false;
	return true;
}

/* Every child of c that is still ours, for destroy's last sweep. */
static size_t ctr_pids(const struct rt_ctr *c, pid_t *out)
{
	size_t n = 0;

	if (c->pid)
		out[n++] = c->pid;
	if (c->prestop_pid)
		out[n++] = c->prestop_pid;
	for (int k = 0; k < RT_PROBE_SLOTS; k++)
		if (c->probes[k].pid)
			out[n++] = c->probes[k].pid;
	return n;
}

/* SIGKILLs and reaps c's children, waiting at most until deadline. */
static void ctr_reap_all(struct rt_pod *pod, struct rt_ctr *c, int64_t deadline)
{
	pid_t pids[2 + RT_PROBE_SLOTS];
	size_t n = ctr_pids(c, pids);

	for (size_t i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (size_t i = 0; i < n; i++) {
		int st;
		pid_t r;

		while ((r = waitpid(pids[i], &st, WNOHANG)) == 0 && clock_mono_ms() < deadline)
			usleep(1000);
		if (r == pids[i])
			ctr_on_exit(pod, c, pids[i], st);
	}
}

static void ctr_release(struct rt_ctr *c)
{
	state_clear(&c->cur);
	state_clear(&c->last);
	rt_strv_free(c->argv);
	rt_strv_free(c->envp);
	free(c->log_path);
	free(c->prev_log_path);
}

void rt_pod_destroy(struct rt_pod *pod)
{
	int64_t deadline = clock_mono_ms() + DESTROY_REAP_MS;

	if (!pod)
		return;
	pod->killing = true;
	if (pod->sb.has_cgroup)
		rt_cgroup_kill_all(pod->sb.cgroup);
	for (size_t i = 0; i < pod->spec.n_init; i++)
		ctr_reap_all(pod, &pod->init[i], deadline);
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		ctr_reap_all(pod, &pod->ctrs[i], deadline);
	if (pod->netns_fd >= 0)
		close(pod->netns_fd);
	if (pod->cg_fd >= 0)
		close(pod->cg_fd);
	rt_sandbox_destroy(&pod->sb, pod->cfg, pod->spec.uid);
	for (size_t i = 0; i < pod->spec.n_init; i++)
		ctr_release(&pod->init[i]);
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		ctr_release(&pod->ctrs[i]);
	free(pod->init);
	free(pod->ctrs);
	rt_pod_spec_release(&pod->spec);
	free(pod);
}

/* --- create ----------------------------------------------------------------------------------- */

static void ctr_init(struct rt_pod *pod, struct rt_ctr *c, struct rt_container *spec, bool is_init)
{
	const char *dir = pod->sb.dir;

	c->spec = spec;
	c->is_init = is_init;
	c->image = imagemap_find(pod->cfg->images, spec->image);
	c->log_path = xasprintf("%s/logs/%s.log", dir, spec->name);
	c->prev_log_path = xasprintf("%s/logs/%s.previous.log", dir, spec->name);
	/* runAsUser/runAsGroup win over the image's user, as with a kubelet. */
	c->cred.uid = spec->run_as_user >= 0 ? spec->run_as_user : c->image ? c->image->uid : -1;
	c->cred.gid = spec->run_as_group >= 0 ? spec->run_as_group : c->image ? c->image->gid : -1;
	if (pod->spec.fs_group >= 0)
		c->cred.groups[c->cred.n_groups++] = (gid_t)pod->spec.fs_group;
	backoff_init(&c->bo, pod->cfg->backoff_base_ms, pod->cfg->backoff_max_ms, 2.0, 0, 0);
	c->cur.kind = RT_STATE_WAITING;
	c->cur.reason = xstrdup(pod->spec.n_init ? "PodInitializing" : "ContainerCreating");
	rt_probes_reset(pod, c, 0);
}

static int pod_open_fds(struct rt_pod *pod, struct err *e)
{
	char path[4096];

	snprintf(path, sizeof(path), "/run/netns/%s", pod->sb.netns);
	pod->netns_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pod->netns_fd < 0)
		return err_set(e, -errno, "%s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s/cgroup.procs", pod->sb.cgroup);
	pod->cg_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (pod->cg_fd < 0)
		return err_set(e, -errno, "%s: %s", path, strerror(errno));
	return 0;
}

static int pod_fs_group(struct rt_pod *pod, struct err *e)
{
	int rc;

	for (size_t i = 0; pod->spec.fs_group >= 0 && i < pod->spec.n_volumes; i++)
		if ((rc = rt_fs_group_apply(pod->spec.volumes[i].host_path, pod->spec.fs_group, e)))
			return rc;
	return 0;
}

int rt_pod_create(const struct rt_pod_spec *spec, const struct rt_config *cfg, struct rt_pod **out,
                  struct err *e)
{
	struct rt_pod *pod;
	int rc;

	if ((rc = rt_spec_validate(spec, e)))
		return rc;
	pod = xcalloc(1, sizeof(*pod));
	pod->cfg = cfg;
	pod->netns_fd = pod->cg_fd = -1;
	pod->now = clock_now_mono(cfg->clock);
	rt_spec_copy(&pod->spec, spec);
	pod->init = xcalloc(spec->n_init + 1, sizeof(*pod->init));
	pod->ctrs = xcalloc(spec->n_containers, sizeof(*pod->ctrs));
	rc = rt_sandbox_create(&pod->sb, cfg, spec->uid, e);
	for (size_t i = 0; i < spec->n_init; i++)
		ctr_init(pod, &pod->init[i], &pod->spec.init[i], true);
	for (size_t i = 0; i < spec->n_containers; i++)
		ctr_init(pod, &pod->ctrs[i], &pod->spec.containers[i], false);
	if (!rc && !(rc = pod_open_fds(pod, e)))
		rc = pod_fs_group(pod, e);
	if (rc) {
		rt_pod_destroy(pod);
		return rc;
	}
	*out = pod;
	return 0;
}

/* --- status ----------------------------------------------------------------------------------- */

const char *rt_phase_name(enum rt_phase p)
{
	static const char *const names[] = { "Pending", "Running", "Succeeded", "Failed" };

	return p >= RT_PHASE_PENDING && p <= RT_PHASE_FAILED ? names[p] : "Unknown";
}

/* The kubelet's getPhase, for a pod whose init containers are done. */
static enum rt_phase regular_phase(const struct rt_pod *pod)
{
	size_t running = 0, waiting = 0, stopped = 0, succeeded = 0;

	for (size_t i = 0; i < pod->spec.n_containers; i++) {
		const struct rt_ctr *c = &pod->ctrs[i];

		if (c->pid) {
			running++;
		} else if (!c->ever_started) {
			waiting++;
		} else {
			stopped++;
			succeeded += c->last_exit == 0;
		}
	}
	if (waiting)
		return pod->killing && !running ? RT_PHASE_FAILED : RT_PHASE_PENDING;
	if (running)
		return RT_PHASE_RUNNING;
	if (pod->killing || pod->spec.restart_policy == RT_RESTART_NEVER)
		return stopped == succeeded ? RT_PHASE_SUCCEEDED : RT_PHASE_FAILED;
	if (pod->spec.restart_policy == RT_RESTART_ALWAYS)
		return RT_PHASE_RUNNING;
	return stopped == succeeded ? RT_PHASE_SUCCEEDED : RT_PHASE_RUNNING;
}

static enum rt_phase pod_phase(const struct rt_pod *pod)
{
	if (pod->init_failed)
		return RT_PHASE_FAILED;
	if (pod->init_done < pod->spec.n_init)
		return pod->killing && rt_pod_is_stopped(pod) ? RT_PHASE_FAILED : RT_PHASE_PENDING;
	return regular_phase(pod);
}

static void state_copy(struct rt_ctr_state *d, const struct rt_ctr_state *s)
{
	*d = *s;
	d->reason = s->reason ? xstrdup(s->reason) : NULL;
	d->message = s->message ? xstrdup(s->message) : NULL;
}

static void ctr_snapshot(const struct rt_ctr *c, struct rt_ctr_status *o)
{
	o->name = xstrdup(c->spec->name);
	o->image = xstrdup(c->spec->image);
	state_copy(&o->state, &c->cur);
	state_copy(&o->last_state, &c->last);
	/* Probe results count only for a running instance: a waiting or failed container
	 * without probes is neither ready nor started. */
	o->ready = c->ready && c->cur.kind == RT_STATE_RUNNING;
	o->started = c->started && c->cur.kind == RT_STATE_RUNNING;
	if (c->is_init) /* as the kubelet reports them: ready once done */
		o->ready = c->cur.kind == RT_STATE_TERMINATED && c->last_exit == 0;
	o->restart_count = c->restart_count;
	o->pid = c->pid;
	o->log_path = xstrdup(c->log_path);
	o->previous_log_path = xstrdup(c->prev_log_path);
}

void rt_pod_snapshot(const struct rt_pod *pod, struct rt_pod_status *out)
{
	memset(out, 0, sizeof(*out));
	out->phase = pod_phase(pod);
	snprintf(out->pod_ip, sizeof(out->pod_ip), "%s", pod->sb.ip);
	out->initialized = pod->init_done == pod->spec.n_init;
	out->containers_ready = true;
	out->n_init = pod->spec.n_init;
	out->n_containers = pod->spec.n_containers;
	out->init = xcalloc(out->n_init + 1, sizeof(*out->init));
	out->containers = xcalloc(out->n_containers + 1, sizeof(*out->containers));
	for (size_t i = 0; i < out->n_init; i++)
		ctr_snapshot(&pod->init[i], &out->init[i]);
	for (size_t i = 0; i < out->n_containers; i++) {
		ctr_snapshot(&pod->ctrs[i], &out->containers[i]);
		out->containers_ready = out->containers_ready && out->containers[i].ready;
	}
	out->version = pod->version;
}

static void ctr_status_release(struct rt_ctr_status *s)
{
	free(s->name);
	free(s->image);
	state_clear(&s->state);
	state_clear(&s->last_state);
	free(s->log_path);
	free(s->previous_log_path);
}

void rt_pod_status_release(struct rt_pod_status *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->init && i < s->n_init; i++)
		ctr_status_release(&s->init[i]);
	for (size_t i = 0; s->containers && i < s->n_containers; i++)
		ctr_status_release(&s->containers[i]);
	free(s->init);
	free(s->containers);
	memset(s, 0, sizeof(*s));
}

uint64_t rt_pod_version(const struct rt_pod *pod)
{
	return pod->version;
}

const char *rt_pod_ip(const struct rt_pod *pod)
{
	return pod->sb.ip;
}

const char *rt_pod_netns(const struct rt_pod *pod)
{
	return pod->sb.netns;
}

const char *rt_pod_host_veth(const struct rt_pod *pod)
{
	return pod->sb.host_veth;
}

const char *rt_pod_cgroup(const struct rt_pod *pod)
{
	return pod->sb.cgroup;
}

const char *rt_pod_uid(const struct rt_pod *pod)
{
	return pod->spec.uid;
}

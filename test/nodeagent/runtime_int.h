/*
 * runtime_int: what the runtime's files share and the API half does not see.
 *
 *   runtime.c  the pod and container state machine (create/step/on_exit/kill/destroy)
 *   spec.c     spec copies, validation, a container's argv and environment
 *   sandbox.c  per-pod network (netns, veth, address allocator), cgroup, stale clean-up
 *   mounts.c   the container root (plan in the agent, syscalls in the child), fsGroup
 *   spawn.c    processes: containers, exec inside a container, probe helpers, commands
 *   probe.c    probe scheduling and results
 *   faults.c   fault injection for the chaos suite
 *
 * Same threading rules as runtime.h: one thread. A function named *_child runs in a
 * freshly cloned child, between clone and exec: system calls and stack buffers only.
 */
#ifndef REDIS_OPERATOR_NODEAGENT_RUNTIME_INT_H
#define REDIS_OPERATOR_NODEAGENT_RUNTIME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/backoff.h"
#include "runtime.h"

struct err;
struct imagemap_entry;

#define RT_ID_LEN           10 /* hex digits of the uid hash in netns and veth names */
#define RT_MSG_MAX          512
#define RT_CMD_TIMEOUT      10000 /* ms a synchronous command (`ip ...`) may take */
#define RT_MAX_GROUPS       4
#define RT_OLDROOT          "/.oldroot" /* where the host's root sits during root setup */
#define RT_PROBE_USER_AGENT "kube-probe/1.37"

/* --- sandbox.c ------------------------------------------------------------------------ */

struct rt_sandbox {
	char id[RT_ID_LEN + 1];
	char netns[16];     /* "ro-<id>" */
	char host_veth[16]; /* "rov<id>" */
	char ip[16];
	char *dir;    /* <state_dir>/pods/<uid> */
	char *cgroup; /* <cgroup_root>/<uid> */
	bool has_dir, has_ip, has_netns, has_veth, has_cgroup;
	int loss_percent; /* current rt_fault_net_loss setting */
	int delay_ms;     /* current rt_fault_net_delay setting */
};

/* Names derived from uid (no system change). */
void rt_sandbox_names(struct rt_sandbox *sb, const struct rt_config *cfg, const char *uid);
int rt_sandbox_create(struct rt_sandbox *sb, const struct rt_config *cfg, const char *uid,
                      struct err *e);
/* Best effort, logs what fails; releases the strings. */
void rt_sandbox_destroy(struct rt_sandbox *sb, const struct rt_config *cfg, const char *uid);
/* Writes state ("FROZEN"/"THAWED") to the cgroup and waits until it holds. */
int rt_cgroup_freeze(const char *cgroup, bool frozen, struct err *e);
bool rt_cgroup_is_frozen(const char *cgroup);
/* Thaws the cgroup and SIGKILLs every process in it. Returns how many were signalled. */
int rt_cgroup_kill_all(const char *cgroup);

/* --- mounts.c --------------------------------------------------------------------------- */

struct rt_bind {
	char *src; /* absolute host path */
	char *dst; /* absolute container path */
	bool read_only;
	bool is_file; /* src is not a directory: the target is an empty file */
};

struct rt_root_plan {
	char *rootfs;                /* host directory the container's tmpfs is mounted on */
	char *upper, *work, *merged; /* inside that tmpfs */
	char *overlay_opts;          /* "lowerdir=/,upperdir=...,workdir=..." */
	struct rt_bind *binds;
	size_t n_binds;
	bool read_only_root;
};

struct rt_pod;
struct rt_ctr;

/* Resolves the image's binds and the container's volume mounts: -EINVAL, -ENOENT. */
int rt_root_plan_build(struct rt_root_plan *p, const struct rt_pod *pod, const struct rt_ctr *c,
                       struct err *e);
void rt_root_plan_release(struct rt_root_plan *p);
/*
 * In the container's new mount namespace: builds the root from p, pivots into it, and
 * leaves the caller in "/". -errno with what failed in msg.
 */
int rt_root_enter_child(const struct rt_root_plan *p, char *msg, size_t msglen);
/* mkdir -p, relative to the current root; mode for the directories it makes. */
int rt_mkdir_p(const char *path, mode_t mode);
/* rm -rf path without crossing into other mounts. 0 or -errno of the first failure. */
int rt_rmtree(const char *path);
/* sub_path: relative, no "." or ".." components, not empty. */
bool rt_sub_path_is_valid(const char *sub_path);

/* --- spawn.c ----------------------------------------------------------------------------- */

struct rt_cred {
	long uid, gid; /* -1: 0 */
	gid_t groups[RT_MAX_GROUPS];
	size_t n_groups;
};

struct rt_launch {
	const struct rt_root_plan *root;
	char *const *argv;
	char *const *envp;
	const char *workdir;
	const char *hostname;
	struct rt_cred cred;
	int netns_fd, cgroup_fd, log_fd;
	int64_t timeout_ms; /* for the setup before exec */
};

/*
 * Starts a container: its PID 1 (returned in *pid) is our direct child. Returns once
 * the child has exec'd its command; a failure on the way (-errno) carries the reason
 * in e, and the child has been reaped.
 */
int rt_spawn_container(const struct rt_launch *l, pid_t *pid, struct err *e);

struct rt_exec_in {
	pid_t target; /* PID 1 of the container, as we see it */
	char *const *argv;
	char *const *envp;
	const char *workdir;
	struct rt_cred cred;
	int cgroup_fd; /* -1: stay in ours */
};

/*
 * Runs argv in target's namespaces (mount, PID, network, UTS, IPC) as cred. *pid is a
 * helper process, our child, whose exit status is the command's (128 + signal if killed);
 * killing the helper kills the command.
 */
int rt_spawn_exec_in(const struct rt_exec_in *x, pid_t *pid, struct err *e);
/* Forks a child that exits 0 once a TCP connection to ip:port is made within timeout_ms. */
int rt_spawn_tcp_check(const char *ip, int port, int64_t timeout_ms, pid_t *pid, struct err *e);
/* Starts argv (PATH lookup) with stdio on /dev/null; does not wait. */
int rt_spawn_cmd(const char *const argv[], pid_t *pid, struct err *e);
/* SIGKILLs pid and reaps it, for children nobody else will reap. */
void rt_kill_and_reap(pid_t pid);
/*
 * Runs argv (looked up in PATH) with stdin from /dev/null, waits at most RT_CMD_TIMEOUT
 * ms. 0 when it exits 0; else -EIO (-ETIMEDOUT, -ENOENT) with its output in e.
 */
int rt_run(const char *const argv[], struct err *e);
/* rt_run with a deadline of its own (image unpacking takes longer than `ip`). */
int rt_run_timeout(const char *const argv[], int64_t timeout_ms, struct err *e);

/* --- probe.c ---------------------------------------------------------------------------- */

enum rt_probe_slot { RT_PROBE_STARTUP, RT_PROBE_LIVENESS, RT_PROBE_READINESS, RT_PROBE_SLOTS };

struct rt_probe_run {
	const struct rt_probe *spec; /* in the container's spec; kind NONE = no probe */
	pid_t pid;                   /* probe process in flight, 0 if none */
	bool abandoned;              /* killed (timeout, container gone): reap, ignore */
	int64_t deadline;            /* mono: the probe in flight times out */
	int64_t next_due;            /* mono: the next probe starts */
	int successes, failures;     /* consecutive */
};

/* Fills Kubernetes' defaults into zero fields. */
void rt_probe_defaults(struct rt_probe *p);
/* A new instance started at now: fresh counters, first runs after the initial delays. */
void rt_probes_reset(struct rt_pod *pod, struct rt_ctr *c, int64_t now);
/* Starts due probes, times out late ones. */
void rt_probes_step(struct rt_pod *pod, struct rt_ctr *c, int64_t now);
/* true when pid was one of c's probes. */
bool rt_probes_on_exit(struct rt_pod *pod, struct rt_ctr *c, pid_t pid, int status, int64_t now);
/* SIGKILLs probes in flight; their exits are still reaped through rt_probes_on_exit. */
void rt_probes_cancel(struct rt_ctr *c);
bool rt_probes_busy(const struct rt_ctr *c);
int64_t rt_probes_next_due(const struct rt_ctr *c);

/* --- spec.c ------------------------------------------------------------------------------- */

/* Deep copy; probes get their defaults. */
void rt_spec_copy(struct rt_pod_spec *dst, const struct rt_pod_spec *src);
/* -EINVAL naming the first bad field. */
int rt_spec_validate(const struct rt_pod_spec *s, struct err *e);
/*
 * The environment of a container instance: the image's, PATH, HOSTNAME, HOME, then the
 * container's own with $(VAR) expanded. NULL-terminated, free with rt_strv_free.
 */
char **rt_build_env(const struct rt_pod *pod, const struct rt_ctr *c);
/* argv from command/args and the image's entrypoint/cmd; -EINVAL when empty. */
int rt_build_argv(const struct rt_ctr *c, char *const *envp, char ***out, struct err *e);
/* Kubernetes' $(VAR) expansion over envp ("NAME=VALUE"): $$ is $, unknown stays. */
char *rt_expand(const char *s, char *const *envp);
void rt_strv_free(char **v);

/* --- runtime.c --------------------------------------------------------------------------- */

struct rt_ctr {
	struct rt_container *spec;          /* in the pod's spec copy, probes defaulted */
	const struct imagemap_entry *image; /* NULL: not in the map (ErrImagePull) */
	bool is_init;
	struct rt_ctr_state cur, last; /* strings owned */
	pid_t pid;                     /* PID 1 of the running instance */
	char **argv, **envp;           /* of the current instance */
	struct rt_cred cred;
	bool ever_started; /* an instance was started: later starts are restarts */
	int restart_count;
	int last_exit; /* exit code of the last instance */
	bool ready, started;
	int64_t finished_mono;
	struct backoff bo;
	int64_t bo_delay, bo_last_update; /* kubelet-style crash-loop backoff */
	bool stopping, term_sent, kill_sent;
	int64_t kill_deadline;
	pid_t prestop_pid;
	struct rt_probe_run probes[RT_PROBE_SLOTS];
	char *log_path, *prev_log_path;
};

struct rt_pod {
	struct rt_pod_spec spec; /* owned copy */
	const struct rt_config *cfg;
	struct rt_sandbox sb;
	struct rt_ctr *init, *ctrs;
	size_t init_done; /* init containers that have succeeded, in order */
	bool init_failed; /* one failed and will not be restarted */
	bool killing;
	uint64_t version;
	int netns_fd; /* /run/netns/<name>, for setns */
	int cg_fd;    /* the cgroup's cgroup.procs, for children to join with "0" */
	int64_t now;  /* mono time of the last step */
};

/* Bumps the pod's version: something the snapshot shows changed. */
void rt_pod_touch(struct rt_pod *pod);
/*
 * Stops a running container: preStop exec, SIGTERM, SIGKILL at now + grace_ms. An
 * earlier deadline than one already set wins.
 */
void rt_ctr_stop(struct rt_pod *pod, struct rt_ctr *c, int64_t grace_ms, int64_t now);
/* The container's credentials with the pod's fsGroup among the groups. */
const struct rt_cred *rt_ctr_cred(const struct rt_ctr *c);
/* workingDir, else the image's, else "/". */
const char *rt_ctr_workdir(const struct rt_ctr *c);

#endif

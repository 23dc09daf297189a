/*
 * runtime: runs a pod's containers as plain processes on this Linux machine. It is the
 * runtime half of the test node agent (test/nodeagent); it knows nothing of the
 * Kubernetes API. The API half translates a Pod into a struct rt_pod_spec, drives the
 * pod with the calls below and reports struct rt_pod_status back.
 *
 * A pod is made of:
 *   - a directory <state_dir>/pods/<uid>/ with logs/ and the containers' root mount points
 *     (rt_pod_dir() says where, so the API half can put emptyDirs under volumes/);
 *   - a network namespace "ro-<id>" (enter it with `ip netns exec ro-<id> ...`), a veth pair
 *     whose host end "rov<id>" sits on the bridge, the pod end is eth0 with an address from
 *     pod_cidr, lo is up and the default route goes through the gateway (<id>: 10 hex
 *     digits of a hash of the uid, see rt_pod_netns());
 *   - a freezer cgroup <cgroup_root>/<uid> holding every process of the pod.
 * Each container instance is a direct child of the agent: PID 1 of its own PID namespace,
 * in its own mount, UTS (hostname = pod name) and IPC namespaces, in the pod's network
 * namespace. Its root is an overlay of the host's root (or, for an image loaded from an
 * OCI layout, of that image's root: ociimage.h) with a throwaway upper directory;
 * /proc, /sys, /dev, /tmp and /run are fresh, the image's extra binds (imagemap.h) and
 * the pod's volumes are bind-mounted, then the root may be made read-only.
 * stdout and stderr go to <pod dir>/logs/<container>.log; at a restart the old file
 * becomes <container>.previous.log (what `kubectl logs --previous` shows).
 *
 * Life cycle, all from one thread (the agent's main loop):
 *   rt_pod_create   the sandbox only: directory, address, netns, veth, cgroup
 *   rt_pod_step     starts init containers one by one, then all containers; runs due
 *                   probes; restarts with kubelet's backoff. Call it at
 *                   rt_pod_next_due() at the latest, and after every rt_pod_on_exit.
 *   rt_pod_on_exit  hand every reaped child to each pod until one claims it
 *   rt_pod_kill     starts a graceful stop; keep stepping until rt_pod_is_stopped
 *   rt_pod_destroy  kills whatever is left and removes the sandbox
 * Children are reaped by the caller with waitpid(-1, &status, WNOHANG) in that same
 * main loop (signalfd or a self-pipe), never from a signal handler or another thread:
 * the synchronous helpers here run `ip` and wait for that child themselves.
 * Between fork and exec a child makes only system calls, so a multithreaded agent is
 * fine. Every child dies with the thread that made it (PR_SET_PDEATHSIG): a crashed
 * agent leaves no process behind (rt_pod_remove_stale clears the rest), and the thread
 * calling rt_* must live as long as the pods.
 * Times: "mono" is cfg->clock's monotonic clock (the now_ms given to step), "wall" its
 * Unix-epoch clock (timestamps in the status).
 *
 * Ownership: specs are deep-copied by rt_pod_create; the config (and the image map it
 * points to) is borrowed and must outlive every pod created with it.
 */
#ifndef REDIS_OPERATOR_NODEAGENT_RUNTIME_H
#define REDIS_OPERATOR_NODEAGENT_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct clock;
struct err;
struct imagemap;

/* --- configuration ------------------------------------------------------------------ */

struct rt_config {
	const char *state_dir;   /* pods/<uid>/ and the address allocator's file live here */
	const char *bridge;      /* "ro-br0": must exist and be up */
	const char *gateway;     /* "10.240.0.1": the bridge's address, the pods' default route */
	int link_prefix;         /* 16: prefix length of pod addresses (the bridge's subnet) */
	const char *pod_cidr;    /* "10.240.1.0/24": where pod addresses come from */
	const char *cgroup_root; /* "/sys/fs/cgroup/freezer/ro-pods" */
	const char *ip_bin;      /* "ip" (iproute2), looked up in PATH */
	const char *curl_bin;    /* "curl": runs httpGet probes */
	const struct imagemap *images; /* required: which image means what */
	int64_t backoff_base_ms;       /* 10 s: first crash-loop delay, doubled per restart ... */
	int64_t backoff_max_ms;        /* 5 min: ... up to this; reset after 2 * max of running */
	int64_t start_timeout_ms;      /* 10 s: the most a container's setup may take before exec */
	const struct clock *clock;     /* NULL: the real clocks */
};

/* Fills c with the defaults above (images stays NULL: the caller sets it). */
void rt_config_init(struct rt_config *c);

/* --- pod spec (what the API half fills in) ------------------------------------------ */

enum rt_volume_kind {
	RT_VOL_DIR, /* a host directory bind-mounted: emptyDir, PVC, secret, configMap, ... */
};

struct rt_volume {
	char *name;
	enum rt_volume_kind kind;
	char *host_path; /* absolute; exists before rt_pod_create */
};

struct rt_mount {
	char *volume;     /* a rt_volume name */
	char *mount_path; /* absolute path inside the container */
	bool read_only;
	char *sub_path; /* NULL or relative, no ".."; a missing directory is created */
};

struct rt_env {
	char *name, *value; /* $(VAR) references are expanded as the kubelet does */
};

enum rt_probe_kind { RT_PROBE_NONE, RT_PROBE_HTTP, RT_PROBE_TCP, RT_PROBE_EXEC };

/* Zero fields take Kubernetes' defaults: period 10 s, timeout 1 s, thresholds 1 and 3. */
struct rt_probe {
	enum rt_probe_kind kind;
	char *path;       /* HTTP: "/healthz" (NULL = "/") */
	int port;         /* HTTP, TCP: a port on the pod IP */
	bool https;       /* HTTP: scheme HTTPS, certificate not verified */
	char **exec_argv; /* EXEC: NULL-terminated, run inside the container */
	int initial_delay_s, period_s, timeout_s, success_threshold, failure_threshold;
};

struct rt_container {
	char *name, *image;
	/* NULL-terminated or NULL, Kubernetes' rules: command replaces the image's entrypoint,
	 * args its cmd; $(VAR) is expanded from the env and "$$" becomes "$" (so a shell's
	 * "$$" is written "$$$$", as in a real Pod). */
	char **command, **args;
	struct rt_env *env;
	size_t n_env;
	char *working_dir; /* NULL: the image's, else "/" */
	struct rt_mount *mounts;
	size_t n_mounts;
	long run_as_user, run_as_group; /* -1 = unset (root) */
	bool read_only_root;
	struct rt_probe startup, liveness, readiness;
	char **pre_stop_exec; /* NULL-terminated or NULL */
};

enum rt_restart_policy { RT_RESTART_ALWAYS, RT_RESTART_ON_FAILURE, RT_RESTART_NEVER };

struct rt_pod_spec {
	char *uid, *ns, *name;
	struct rt_volume *volumes;
	size_t n_volumes;
	struct rt_container *init, *containers;
	size_t n_init, n_containers;
	long fs_group;      /* -1 = unset */
	int grace_period_s; /* terminationGracePeriodSeconds, used by liveness kills */
	enum rt_restart_policy restart_policy;
};

/* Frees every field (all heap-allocated, argv arrays NULL-terminated). NULL-safe. */
void rt_pod_spec_release(struct rt_pod_spec *s);

/* --- observed state ------------------------------------------------------------------ */

enum rt_phase { RT_PHASE_PENDING, RT_PHASE_RUNNING, RT_PHASE_SUCCEEDED, RT_PHASE_FAILED };
enum rt_state { RT_STATE_NONE, RT_STATE_WAITING, RT_STATE_RUNNING, RT_STATE_TERMINATED };

struct rt_ctr_state {
	enum rt_state kind;     /* NONE only in last_state */
	char *reason;           /* waiting, terminated: "CrashLoopBackOff", "Completed", ... */
	char *message;          /* may be NULL */
	int exit_code;          /* terminated: exit status, 128 + signal when killed */
	int signal;             /* terminated by a signal: its number, else 0 */
	int64_t started_at_ms;  /* running, terminated: wall ms (0 if it never ran) */
	int64_t finished_at_ms; /* terminated: wall ms */
};

struct rt_ctr_status {
	char *name, *image;
	struct rt_ctr_state state, last_state;
	bool ready, started;
	int restart_count;
	pid_t pid; /* PID 1 of the running instance, as the agent sees it; else 0 */
	char *log_path, *previous_log_path;
};

struct rt_pod_status {
	enum rt_phase phase;
	char pod_ip[16];
	bool initialized;      /* every init container succeeded */
	bool containers_ready; /* every container ready (the Ready condition) */
	struct rt_ctr_status *init, *containers;
	size_t n_init, n_containers;
	uint64_t version; /* rt_pod_version() when taken */
};

/* "Pending", "Running", "Succeeded", "Failed". */
const char *rt_phase_name(enum rt_phase p);
/* Frees what rt_pod_snapshot filled in. NULL-safe. */
void rt_pod_status_release(struct rt_pod_status *s);

/* --- pods ------------------------------------------------------------------------------ */

struct rt_pod;

/*
 * Builds the sandbox for spec (deep-copied) and returns the pod in *out; no container
 * runs yet. -EINVAL for a spec that cannot run (bad names, a mount of an unknown volume,
 * relative paths), -EEXIST when the uid's cgroup still holds processes, or the errno of
 * the failed step; anything half built is removed again. A netns or veth of the same
 * name left by a dead agent is replaced. An image missing from the map is not an error
 * here: that container waits with reason ErrImagePull. Volumes get fsGroup here, so
 * their contents must be in place.
 */
int rt_pod_create(const struct rt_pod_spec *spec, const struct rt_config *cfg, struct rt_pod **out,
                  struct err *e);
/* Advances the state machine at mono time now_ms; true when the status changed. */
bool rt_pod_step(struct rt_pod *pod, int64_t now_ms);
/* The mono time by which rt_pod_step must run again (INT64_MAX: only after an exit). */
int64_t rt_pod_next_due(const struct rt_pod *pod);
/* Routes a reaped child (status as from waitpid); true when pid was this pod's. */
bool rt_pod_on_exit(struct rt_pod *pod, pid_t pid, int status);
/*
 * Stops the pod: no more starts or restarts; each running container gets its preStop
 * exec, then SIGTERM, then SIGKILL when grace_ms has passed (a frozen pod is thawed for
 * the SIGKILL). Returns at once; rt_pod_step delivers the rest.
 */
void rt_pod_kill(struct rt_pod *pod, int64_t grace_ms);
/* True when no process of the pod is left (after rt_pod_kill, or all terminated). */
bool rt_pod_is_stopped(const struct rt_pod *pod);
/*
 * SIGKILLs and reaps whatever still runs (blocking, bounded), then removes the veth,
 * the netns, the cgroup, the address and the pod directory. Frees pod. NULL-safe.
 */
void rt_pod_destroy(struct rt_pod *pod);
/* Fills out (release it with rt_pod_status_release). */
void rt_pod_snapshot(const struct rt_pod *pod, struct rt_pod_status *out);
/* Bumped on every change of what rt_pod_snapshot reports. */
uint64_t rt_pod_version(const struct rt_pod *pod);

/* Borrowed views, valid for the pod's life. */
const char *rt_pod_ip(const struct rt_pod *pod);
const char *rt_pod_netns(const struct rt_pod *pod);
const char *rt_pod_host_veth(const struct rt_pod *pod);
const char *rt_pod_cgroup(const struct rt_pod *pod);
const char *rt_pod_uid(const struct rt_pod *pod);

/* <state_dir>/pods/<uid>: a fresh string. */
char *rt_pod_dir(const struct rt_config *cfg, const char *uid);

/*
 * Gives dir and everything below it to group gid, group read/write (and search on
 * directories, with the setgid bit), as the kubelet does for fsGroup. For the API half
 * too, after it writes new volume contents (token refresh).
 */
int rt_fs_group_apply(const char *dir, long gid, struct err *e);

/*
 * Removes what an agent that died left of pod uid: processes still in its cgroup, the
 * cgroup, the veth, the netns, its address and <state_dir>/pods/<uid>. Best effort. For
 * an agent starting after a crash (the uids are the names under <state_dir>/pods/) and
 * for test clean-up.
 */
void rt_pod_remove_stale(const struct rt_config *cfg, const char *uid);

/*
 * Forgets the address the allocator holds for uid (a pod that is gone while the agent
 * was down); rt_pod_destroy does this itself. 0 or -errno.
 */
int rt_ipam_release(const struct rt_config *cfg, const char *uid, struct err *e);

/* --- faults (faults.c), for the chaos suite --------------------------------------------- */

/* SIGKILLs the running instance of container name: -ENOENT if none runs. */
int rt_fault_kill_container(struct rt_pod *pod, const char *name, struct err *e);
/* Freezes or thaws every process of the pod (cgroup freezer), waiting until done. */
int rt_fault_freeze(struct rt_pod *pod, bool frozen, struct err *e);
/* True when the pod's cgroup is frozen. */
bool rt_fault_is_frozen(const struct rt_pod *pod);
/* Cuts (true) or restores the pod's network both ways: the host veth goes down or up. */
int rt_fault_net_cut(struct rt_pod *pod, bool cut, struct err *e);
/*
 * Drops percent (0..100) of the packets the pod sends and receives (iptables statistic
 * rules in the pod's netns); 0 removes the rules.
 */
int rt_fault_net_loss(struct rt_pod *pod, int percent, struct err *e);
/*
 * Delays every packet the pod sends by delay_ms (tc netem); 0 removes it. -EOPNOTSUPP
 * when the kernel has no netem qdisc.
 */
int rt_fault_net_delay(struct rt_pod *pod, int delay_ms, struct err *e);

#endif

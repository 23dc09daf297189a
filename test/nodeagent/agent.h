/*
 * agent: the API half of the test node agent (build/nodeagent), the kubelet of the local
 * environment. The runtime half (runtime.h) runs pods as processes; this half reads the
 * Kubernetes API and drives it.
 *
 *   main.c       settings, subcommands (daemon, logs, ctl), the main loop, shutdown
 *   agent.c      handing work to the main thread (work queue + eventfd)
 *   node.c       Node registration, status heartbeats, Leases in kube-node-lease
 *   pods.c       pure: Pod JSON -> struct rt_pod_spec (containers, env, probes, mounts)
 *   fields.c     pure: downward-API fields, resourceFieldRefs, Secret/ConfigMap bytes
 *   podstatus.c  pure: rt_pod_status -> the Pod's status (conditions, container statuses)
 *   volumes.c    volume contents (secret, configMap, projected, downwardAPI) computed
 *                purely, written atomically with the kubelet's layout; per-pod setup and
 *                refresh, service-account tokens (TokenRequest)
 *   podsync.c    a pod's life: create, refresh, report, kill, destroy, DELETE
 *   pvc.c        the provisioner of StorageClass nodeagent-local (PVs on host directories,
 *                WaitForFirstConsumer: only for PVCs of pods on this agent's Nodes)
 *   ctl.c        the fault control socket (<state>/ctl.sock), the ctl and logs subcommands
 *   kubelet.c    the kubelet API's container logs over HTTPS (kubelet.h): `kubectl logs`
 *   light.c      --light CIDR: pods are not run but simulated (benchmarks of thousands of
 *                instances): an address each, Running/Ready statuses, PVCs waited for
 *   sim*.c       the simulated instance managers of light pods (sim.h, sim_int.h): one
 *                listener for every pod address (an AnyIP route), HTTP or HTTPS, the
 *                instance API's answers and operations, the primary Leases
 *
 * Threads: one main thread owns the runtime, the pod table, the nodes and every field
 * of struct agent; informer threads only call na_enqueue (thread-safe: a work-queue key
 * and an eventfd wake-up). Keys: "pod:NS/NAME", "pvc:NS/NAME", "ns:NS" (a Secret or
 * ConfigMap changed in NS: refresh the volumes of its pods), "pvgc" (PV clean-up).
 */
#ifndef REDIS_OPERATOR_NODEAGENT_AGENT_H
#define REDIS_OPERATOR_NODEAGENT_AGENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/strmap.h"
#include "runtime.h"

struct err;
struct k8s_client;
struct k8s_config;
struct k8s_informer;
struct k8s_resource;
struct MHD_Daemon;
struct wq;

#define NA_COMPONENT         "nodeagent"
#define NA_MANAGED_ANNOT     "nodeagent.redis-operator.test/managed"
#define NA_PV_LABEL          "nodeagent.redis-operator.test/provisioned"
#define NA_PV_AGENT_LABEL    "nodeagent.redis-operator.test/agent" /* na_agent_id */
#define NA_AGENT_ID_SIZE     64 /* a label value (63) and its NUL */
#define NA_PROVISIONER       "redis-operator.test/nodeagent"
#define NA_STORAGE_CLASS     "nodeagent-local"
#define NA_LEASE_NS          "kube-node-lease"
#define NA_MAX_NODES         64
#define NA_POD_IP_MARK       "\001nodeagent:status.podIP\001" /* env value until the IP is known */
#define NA_HOSTS_VOLUME      "nodeagent-etc-hosts"
#define NA_FILE_MAX          (4u << 20) /* largest volume file (a Secret holds at most 1 MiB) */
#define NA_KUBELET_VER       "v1.37.2"
#define NA_RUNTIME_VER       "nodeagent://0.1.0"
#define NA_TOKEN_EXP_S       3600
#define NA_TOKEN_EXP_MIN     600
#define NA_DEFAULT_STATE_DIR "build/env/nodeagent" /* relative to the repository's root */

/* --- settings (main.c) ---------------------------------------------------------------- */

struct na_settings {
	char *kubeconfig, *state_dir, *images, *operator_bin, *node_prefix, *host_ip;
	char *bridge, *pod_cidr, *cgroup_root, *service_host, *register_taint;
	char *log_level, *log_format;
	char *light; /* NULL: pods run; a CIDR: pods are simulated (light.c) */
	char *kubelet_client_ca, *kubelet_authz; /* kubelet.h */
	int64_t kubelet_port;
	bool kubelet_anonymous;
	char *oci_images, *umoci; /* REF=PATH,...: images from OCI layouts (ociimage.h) */
	int64_t nodes, link_prefix, service_port;
	int64_t lease_renew_ms, lease_duration_ms, node_status_ms, shutdown_grace_ms;
	int64_t api_timeout_ms, config_retry_ms;
	bool provision;
};

/* --- lookups: what pure code asks of the outside world -------------------------------- */

struct na_lookup {
	/* A new reference to NS/NAME of res (ns NULL: cluster-scoped), or NULL when absent. */
	json_t *(*get)(void *ctx, const struct k8s_resource *res, const char *ns, const char *name);
	/* A service-account token for this pod (audience NULL: the API server's default):
	 * 0 with *out (free_secret it), or -errno with e set. */
	int (*token)(void *ctx, const char *audience, int64_t exp_s, char **out, struct err *e);
	void *ctx;
};

/* Everything a Pod's translation needs besides the Pod. */
struct na_pod_ctx {
	const char *node_name, *host_ip;
	const char *pod_ip; /* NULL: not known yet, NA_POD_IP_MARK stands in */
	const char *service_host, *service_port;
	int64_t node_cpu_milli; /* resourceFieldRef defaults for unset limits */
	uint64_t node_memory;   /* bytes */
	uint64_t node_storage;  /* bytes */
	const struct na_lookup *lookup;
};

/* --- pods.c, fields.c, podstatus.c: translation (pure) -------------------------------------------------------- */

/*
 * Fills out from the Pod: uid/ns/name, restart policy, grace period, fsGroup, init and
 * regular containers (command, args, env with valueFrom and envFrom, workingDir,
 * security context, probes, preStop, mounts). Volumes are left empty (volumes.c).
 * -EINVAL for a Pod we cannot run (the message names the field), -ENOENT for a missing
 * Secret/ConfigMap or key that is not optional (message: `secret "x" not found`).
 * Outputs are written only on success.
 */
int na_pod_spec_build(json_t *pod, const struct na_pod_ctx *ctx, struct rt_pod_spec *out,
                      struct err *e);
/* The pod's /etc/hosts as the kubelet writes it: localhost lines, ip and hostname (FQDN
 * with spec.subdomain), spec.hostAliases. A fresh string. */
char *na_hosts_file(json_t *pod, const char *ip);
/* Adds host_path (a file or directory) as volume and mounts it at path in every container
 * that does not mount something there already. */
void na_spec_add_file(struct rt_pod_spec *s, const char *volume, const char *host_path,
                      const char *path);
/* Replaces every env value equal to NA_POD_IP_MARK in spec by ip; true if one was. */
bool na_spec_fill_pod_ip(struct rt_pod_spec *spec, const char *ip);

/*
 * The value of a downward-API fieldPath ("metadata.labels['a']", "status.podIP", ...).
 * for_volume: "metadata.labels" and "metadata.annotations" are allowed (k="v" lines).
 * *out is a fresh string. -EINVAL for an unsupported path.
 */
int na_field_ref(json_t *pod, const char *path, const struct na_pod_ctx *ctx, bool for_volume,
                 char **out, struct err *e);
/* A resourceFieldRef ({containerName, resource, divisor}); default_ctr names the container
 * when containerName is absent (env), NULL when it is required (volumes). */
int na_resource_ref(json_t *pod, json_t *ref, const char *default_ctr, const struct na_pod_ctx *ctx,
                    char **out, struct err *e);

/* Pod conditions the agent owns (PodScheduled is the scheduler's, kept by the merge). */
enum na_cond_type {
	NA_COND_SANDBOX, /* PodReadyToStartContainers */
	NA_COND_INIT,    /* Initialized */
	NA_COND_CREADY,  /* ContainersReady */
	NA_COND_READY,   /* Ready */
	NA_CONDS,
};

struct na_cond {
	bool set, value;
	int64_t since_ms; /* wall: lastTransitionTime */
};

/* Instance ids for containerID: the running pid, and the one before it. */
struct na_ctr_ids {
	pid_t cur, prev;
};

struct na_status_in {
	json_t *pod;                    /* the Pod: container names and images in spec order */
	const struct rt_pod_status *rt; /* NULL: no sandbox (yet) */
	const char *host_ip;
	const char *wait_reason, *wait_msg; /* rt == NULL: why every container waits */
	int64_t start_ms, now_ms;           /* wall */
};

/*
 * The status patch {"status": {...}} for a strategic merge on pods/status. conds (NA_CONDS)
 * keep the transition times across calls and are updated; ids (one per init container,
 * then one per container, as in rt) track pids for containerID and are updated.
 */
json_t *na_status_build(const struct na_status_in *in, struct na_cond *conds,
                        struct na_ctr_ids *ids, size_t n_ids);

/* The bytes of key in a Secret (is_secret: data is base64) or a ConfigMap (data, else
 * binaryData in base64; lib/base64, padding required, no whitespace): 0, -ENOENT (no such
 * key) or -EINVAL (bad base64). */
int na_source_value(json_t *obj, bool is_secret, const char *key, char **out, size_t *len);

/* --- volumes.c -------------------------------------------------------------------------- */

struct na_file {
	char *path; /* relative, validated */
	char *data;
	size_t len;
	int mode;
};

struct na_files {
	struct na_file *v;
	size_t n;
};

void na_files_release(struct na_files *f);
/* Same paths, modes and bytes (both sorted by path, as na_volume_files makes them). */
bool na_files_equal(const struct na_files *a, const struct na_files *b);

/* True for the kinds whose content the agent writes (secret, configMap, projected,
 * downwardAPI): mounted read-only, refreshed. */
bool na_volume_is_content(json_t *vol);
/*
 * The files of a content volume (vol is one entry of spec.volumes), sorted by path.
 * -ENOENT for a missing Secret/ConfigMap/key that is not optional, -EINVAL for a bad
 * item path or field, or the token callback's error.
 */
int na_volume_files(json_t *vol, json_t *pod, const struct na_pod_ctx *ctx, struct na_files *out,
                    struct err *e);
/*
 * Writes files into dir as the kubelet's atomic writer does: a new "..<timestamp>"
 * directory, the "..data" symlink swapped to it with rename(2), one symlink per top-level
 * name ("key" -> "..data/key"), stale names and the old directory removed. fs_group >= 0:
 * rt_fs_group_apply afterwards. dir is created if missing.
 */
int na_volume_write(const char *dir, const struct na_files *files, long fs_group, struct err *e);

/* mkdir -p path; mode for the directories it makes. 0 or -errno. */
int na_mkdir_p(const char *path, mode_t mode);
/* rm -rf path, not crossing mounts or following symlinks. 0 or -errno. */
int na_rmtree(const char *path);

/* Resources lib/k8s/path.h does not list (pvc.c). */
extern const struct k8s_resource na_res_pvs;
extern const struct k8s_resource na_res_storageclasses;

/* --- the agent's state (main thread) --------------------------------------------------- */

struct agent;

struct na_node {
	struct agent *ag;
	char *name, *uid;
	bool created;                    /* ours: deleted (with its Lease) at shutdown */
	bool lost;                       /* node-lose fault: no heartbeats, pods frozen */
	bool registered;                 /* the Node exists and has our status */
	int64_t next_lease, next_status; /* mono */
	int64_t ready_since;             /* wall: Ready's lastTransitionTime */
	struct k8s_informer *pods;
};

struct na_vol {
	char *name, *dir;
	json_t *src; /* the spec.volumes entry */
	struct na_files last;
};

struct na_token {
	char *audience; /* NULL: the default */
	int64_t exp_s;
	char *token;        /* secret */
	int64_t refresh_at; /* mono */
};

struct na_pod {
	char *uid, *ns, *name, *key; /* key: "NS/NAME" */
	struct na_node *node;
	json_t *api; /* the Pod as last seen */
	struct rt_pod *rt;
	char *dir;
	int64_t start_ms; /* wall */
	uint64_t reported;
	bool report_force;
	int64_t report_retry_at;
	char *wait_reason, *wait_msg; /* no sandbox: why */
	bool killing, api_gone, delete_api, destroyed;
	struct na_cond conds[NA_CONDS];
	struct na_ctr_ids *ids;
	size_t n_ids;
	struct na_vol *vols;
	size_t n_vols;
	struct na_token *tokens;
	size_t n_tokens;
	long fs_group;
};

struct na_light;

struct agent {
	struct na_settings set;
	char *state_dir; /* absolute */
	struct k8s_config *kcfg;
	struct k8s_client *client;
	struct imagemap *images;
	struct rt_config rt;
	struct wq *wq;
	int efd, sfd, ctl_fd;
	struct na_node *nodes;
	size_t n_nodes;
	struct strmap pods; /* uid -> struct na_pod * */
	struct k8s_informer *secrets, *configmaps, *pvcs;
	int64_t node_cpu_milli;
	uint64_t node_memory, node_storage;
	char service_host[64], service_port[8];
	bool stopping;
	int64_t stop_deadline;
	struct na_light *light;     /* --light: the simulated pods; NULL otherwise */
	struct MHD_Daemon *kubelet; /* kubelet.h: the container-log endpoint */
	int kubelet_port;           /* its bound port, advertised by every Node */
};

/* Queues key for the main thread and wakes it. Any thread. */
void na_enqueue(struct agent *ag, const char *key);
void na_enqueue_after(struct agent *ag, const char *key, int64_t delay_ms);

/* volumes.c: builds every volume of p (emptyDir, hostPath, PVC, content kinds) into
 * rt_volumes; content volumes are written and remembered in p->vols for refreshes. */
int na_volumes_prepare(struct agent *ag, struct na_pod *p, struct rt_volume **out, size_t *n,
                       struct err *e);
/* Rewrites the content volumes whose files changed (sources, token rotation). */
void na_volumes_refresh(struct agent *ag, struct na_pod *p);
/* The earliest token refresh of p (mono), INT64_MAX if none. */
int64_t na_volumes_next_due(const struct na_pod *p);
struct na_lookup_ctx {
	struct agent *ag;
	struct na_pod *p;
};
/* ctx for p's translation, with lookups answered from the informers (and the API for
 * PersistentVolumes and tokens); lc and lk are storage that must outlive ctx. */
void na_pod_ctx_init(struct agent *ag, struct na_pod *p, struct na_lookup_ctx *lc,
                     struct na_lookup *lk, struct na_pod_ctx *ctx);
void na_volumes_release(struct na_pod *p);

/* podsync.c */
void na_pod_sync(struct agent *ag, const char *ns_name);
/* DELETEs the API pod (grace 0, precondition uid); gone or replaced counts as done. */
int na_delete_api_pod(struct agent *ag, const char *ns, const char *name, const char *uid);
void na_ns_changed(struct agent *ag, const char *ns);
void na_pods_on_exit(struct agent *ag, pid_t pid, int status);
/* Steps pods, finishes kills, reports statuses, refreshes tokens. */
void na_pods_run(struct agent *ag, int64_t now);
int64_t na_pods_next_due(struct agent *ag);
struct na_pod *na_pod_find(struct agent *ag, const char *ns_name);
/* Shutdown: kills every pod with at most grace_ms. */
void na_pods_kill_all(struct agent *ag, int64_t grace_ms);
bool na_pods_all_stopped(struct agent *ag);
void na_pods_destroy_all(struct agent *ag);
/* Startup: removes what a previous agent left under <state>/pods. */
void na_pods_remove_stale(struct agent *ag);
void na_pods_of_node(struct agent *ag, struct na_node *n,
                     void (*fn)(struct agent *, struct na_pod *));
void na_pod_force_report(struct agent *ag, struct na_pod *p);

/* node.c */
int na_node_register(struct agent *ag, struct na_node *n, struct err *e);
void na_node_tick(struct agent *ag, struct na_node *n, int64_t now);
int64_t na_node_next_due(const struct na_node *n);
void na_node_unregister(struct agent *ag, struct na_node *n);
int na_node_set_lost(struct agent *ag, struct na_node *n, bool lost, struct err *e);
struct na_node *na_node_find(struct agent *ag, const char *name);
/* Pure builders, for tests. */
json_t *na_node_object(const char *name, const char *taint);
json_t *na_node_status(const struct agent *ag, const struct na_node *n, int64_t now_ms);
json_t *na_lease_object(const char *node, const char *node_uid, int64_t duration_s, int64_t now_ms);

/* pvc.c */
/* Makes StorageClass NA_STORAGE_CLASS WaitForFirstConsumer (deleted and made again when
 * found Immediate: the field is immutable). */
int na_storage_class_ensure(struct agent *ag, struct err *e);
void na_pvc_sync(struct agent *ag, const char *ns_name);
void na_pv_gc(struct agent *ag);
/* Pure, for tests. */
json_t *na_storage_class_object(void);
/* The agent's id on its PVs (label NA_PV_AGENT_LABEL): the node prefix as a label value
 * ("ro-node-" -> "ro-node"; "nodeagent" when nothing is left). */
void na_agent_id(const char *node_prefix, char out[NA_AGENT_ID_SIZE]);
/* The Node the scheduler selected for pvc when it is one the provisioner must make a
 * volume for (our class or none, unbound, not being deleted, no other provisioner
 * named), else NULL. Borrowed from pvc. */
const char *na_pvc_selected_node(json_t *pvc);
/* The PV the provisioner makes for pvc: hostPath dir, nodeAffinity to node, labelled
 * with agent_id. */
json_t *na_pv_object(json_t *pvc, const char *dir, const char *node, const char *agent_id);
/* pv is one this agent made: NA_PV_LABEL, NA_PV_AGENT_LABEL agent_id or none (an older
 * agent's), and a hostPath under <state_dir>/pvs/. */
bool na_pv_is_ours(json_t *pv, const char *state_dir, const char *agent_id);

/* light.c (only with --light: then pod keys go to na_light_pod_sync, not na_pod_sync) */
int na_light_init(struct agent *ag, struct err *e);
void na_light_pod_sync(struct agent *ag, const char *ns_name);
/* Reports statuses that changed, retries pods still waiting. */
void na_light_run(struct agent *ag, int64_t now);
int64_t na_light_next_due(struct agent *ag);
/* Removes the route, stops the simulator. NULL-safe on ag->light. */
void na_light_free(struct agent *ag);
/* The Nodes' pod capacity in light mode (the range's addresses); 0 otherwise. */
size_t na_light_max_pods(const struct agent *ag);

/* ctl.c */
int na_ctl_listen(struct agent *ag, struct err *e);
void na_ctl_serve(struct agent *ag);
void na_ctl_close(struct agent *ag);
int na_ctl_main(int argc, char **argv);
int na_logs_main(int argc, char **argv);
/* The sandbox directory of "NS/NAME" under state_dir/pods (the newest if several), from
 * the pod.json files, or NULL; meta (may be NULL) gets that pod.json (a new reference,
 * NULL when none). Any thread: the file system only. */
char *na_find_pod_dir(const char *state_dir, const char *key, json_t **meta);
/* Parses ctl argv (after "ctl") into a request object: -EINVAL with usage in e. */
int na_ctl_request(int argc, char **argv, json_t **out, struct err *e);

#endif

/*
 * rediscluster: the RedisCluster kind (redis.io/v1) as C: decoding with the CRD's
 * defaults. Validation is the API server's (config/crd/bases): what the controller reads
 * from it has been accepted by the CRD's schema and CEL rules.
 *
 *   struct api_redis_cluster rc;
 *   if (api_redis_cluster_decode(obj, &rc, &e) < 0)      e.msg names the JSON path
 *           ...;
 *   use(rc.spec.mode, rc.spec.instances, rc.spec.storage.size.value ...);
 *   api_redis_cluster_release(&rc);
 *
 * Ownership: decode makes its own deep copy of obj (the caller keeps obj and may free it
 * at once), applies the schema defaults to the copy, and keeps the copy in rc.json. Every
 * `const char *` and `json_t *` in the struct (names, pass-through JSON such as affinity,
 * tolerations, resources, nodeSelector, podTemplate labels) is borrowed from rc.json: valid
 * until api_redis_cluster_release; json_incref one to keep it longer. Arrays (users,
 * conditions, instancesStatus...) are allocated by decode and freed by release.
 *
 * Defaults: the schema's (mode standalone, storage {pvc, 1Gi}, failover timings, ...; see
 * config/README.md), then the decoder's own, which depend on other fields:
 *   instances unset        1 in standalone mode (0 in sentinel mode, where it is invalid,
 *                          and in cluster mode, where the size is shards x (1 + replicas))
 *   replicasPerShard unset 1
 *   maxSyncReplicas unset  minSyncReplicas
 *   engine unset           detected from imageName: a repository name containing "valkey"
 *                          is valkey, anything else (or no image) redis
 *   imageName unset        API_REDIS_DEFAULT_IMAGE or API_VALKEY_DEFAULT_IMAGE
 * The has_* flags keep what the object itself said.
 * Quantities are decoded to bytes (memory, storage) and millicores (cpu), durations to
 * milliseconds, by lib/parse; a value lib/parse refuses leaves valid false / ms -1 (the
 * CRD refuses such values; the flag keeps a reader from trusting one that slipped by,
 * e.g. an object stored before a rule existed).
 *
 * Thread-safety: a decoded struct is plain data; one thread at a time.
 */
#ifndef REDIS_OPERATOR_API_REDISCLUSTER_H
#define REDIS_OPERATOR_API_REDISCLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/meta.h"
#include "api/schema.h"
#include "lib/err.h"
#include "lib/engine/engine.h"

#define API_REDIS_CLUSTER_KIND   "RedisCluster"
#define API_REDIS_DEFAULT_IMAGE  "redis:7.0"
#define API_VALKEY_DEFAULT_IMAGE "valkey/valkey:8.0"

enum api_mode {
	API_MODE_STANDALONE = 1,
	API_MODE_SENTINEL,
	API_MODE_CLUSTER,
};

enum api_update_strategy {
	API_UPDATE_UNSUPERVISED = 1,
	API_UPDATE_SUPERVISED,
};

enum api_update_method {
	API_UPDATE_SWITCHOVER = 1,
	API_UPDATE_RESTART,
};

/* spec.tlsClientAuth: the servers' tls-auth-clients with server TLS on */
enum api_tls_client_auth {
	API_TLS_CLIENT_AUTH_OPTIONAL = 1, /* tls-auth-clients optional */
	API_TLS_CLIENT_AUTH_REQUIRED,     /* tls-auth-clients yes */
};

enum api_storage_type {
	API_STORAGE_PVC = 1,
	API_STORAGE_EMPTYDIR,
};

/* spec.storage.pvcRetention: what scale-down does with a removed replica's PVC. */
enum api_pvc_retention {
	API_PVC_DELETE = 1,
	API_PVC_RETAIN,
};

/* In the CRD's order (api_maxmemory_policies[i] names value i + 1); 0 when
 * spec.memory.maxMemoryPolicy is unset. The same list types /v1/config's maxMemoryPolicy
 * (api/instance_v1.h). */
enum api_maxmemory_policy {
	API_POLICY_NOEVICTION = 1,
	API_POLICY_ALLKEYS_LRU,
	API_POLICY_ALLKEYS_LFU,
	API_POLICY_ALLKEYS_RANDOM,
	API_POLICY_VOLATILE_LRU,
	API_POLICY_VOLATILE_LFU,
	API_POLICY_VOLATILE_RANDOM,
	API_POLICY_VOLATILE_TTL,
};

enum api_exposure_role {
	API_EXPOSURE_PRIMARY = 1,
	API_EXPOSURE_REPLICA,
};

enum api_instance_role {
	API_ROLE_PRIMARY = 1,
	API_ROLE_REPLICA,
	API_ROLE_SENTINEL,
	API_ROLE_UNKNOWN,
};

enum api_link_state {
	API_LINK_UP = 1,
	API_LINK_DOWN,
	API_LINK_SYNCING,
	API_LINK_NONE,
};

struct api_storage {
	enum api_storage_type type;
	struct api_quantity size; /* bytes */
	const char *storage_class_name;
	enum api_pvc_retention pvc_retention;
};

struct api_memory {
	bool set;
	struct api_quantity max_memory; /* bytes */
	bool has_max_memory_percent;
	int64_t max_memory_percent;
	enum api_maxmemory_policy max_memory_policy; /* 0: unset */
};

/* spec.resources: passed through to the container; memory and cpu also decoded. */
struct api_resources {
	json_t *json;                                       /* NULL when unset */
	json_t *limits, *requests;                          /* maps, or NULL */
	struct api_quantity limits_memory, requests_memory; /* bytes */
	struct api_quantity limits_cpu, requests_cpu;       /* millicores */
};

struct api_user {
	const char *name;
	bool enabled;
	const char **rules;
	size_t n_rules;
	struct api_secret_ref *password_secrets;
	size_t n_password_secrets;
};

struct api_bootstrap {
	bool set;
	const char *backup_name;
};

struct api_replica_source {
	bool set;
	const char *cluster_name; /* exactly one of cluster_name and host */
	const char *host;
	int64_t port;
	struct api_secret_ref auth_secret;
	struct api_secret_ref ca_secret;
};

struct api_replica_mode {
	bool set;
	bool enabled;
	bool promote;
	struct api_replica_source source;
};

struct api_failover {
	struct api_duration lease_duration;
	struct api_duration renew_deadline;
	struct api_duration renew_period;
	struct api_duration delay;
	struct api_duration switchover_timeout;
};

/* spec.primaryIsolation: the seed's split-brain check, mapped onto the Lease self-fence
 * (api_redis_cluster_fence_deadline_ms). */
struct api_primary_isolation {
	bool set;
	bool enabled;                           /* schema default true */
	struct api_duration api_server_timeout; /* schema default 5s */
	bool has_peer_timeout;
	struct api_duration peer_timeout; /* not used: the self-fence consults no peer */
};

struct api_sentinel {
	bool set;
	int64_t count;
	int64_t quorum;
	struct api_duration down_after;
	struct api_duration failover_timeout; /* Sentinel's failover-timeout */
	int64_t parallel_syncs;               /* replicas re-pointed at once after a failover */
};

struct api_maintenance_window {
	bool set;
	bool in_progress;
	bool reuse_pvc;
};

struct api_pod_template {
	json_t *labels;      /* spec.podTemplate.metadata.labels, or NULL */
	json_t *annotations; /* spec.podTemplate.metadata.annotations, or NULL */
};

struct api_allowed_client {
	json_t *pod_selector;       /* a LabelSelector, or NULL */
	json_t *namespace_selector; /* a LabelSelector, or NULL */
};

struct api_network_policy {
	bool set;
	bool enabled;
	struct api_allowed_client *allowed_clients;
	size_t n_allowed_clients;
};

struct api_exposure {
	bool set;
	bool enabled;
	const char **entry_points;
	size_t n_entry_points;
	const char *host_sni;
	enum api_exposure_role role;
	const char **ip_allow_list;
	size_t n_ip_allow_list;
	bool has_max_connections;
	int64_t max_connections;
};

struct api_redis_cluster_spec {
	bool has_instances;
	int64_t instances; /* decoder default: 1 in standalone mode */
	enum api_mode mode;
	bool has_shards;
	int64_t shards;
	bool has_replicas_per_shard;
	int64_t replicas_per_shard; /* decoder default: 1 */
	bool has_image_name;
	const char *image_name; /* decoder default: the engine's image */
	bool has_engine;
	enum vk_engine engine; /* decoder default: from the image */
	enum api_update_strategy primary_update_strategy;
	enum api_update_method primary_update_method;
	struct api_storage storage;
	struct api_memory memory;
	json_t *redis; /* directive → value (strings), or NULL */
	struct api_resources resources;
	struct api_secret_ref auth_secret;
	struct api_user *users;
	size_t n_users;
	struct api_secret_ref tls_secret;
	struct api_secret_ref ca_secret;
	enum api_tls_client_auth tls_client_auth;
	struct api_secret_ref connection_secret;
	struct api_secret_ref backup_credentials_secret; /* name NULL: none (workload identity) */
	struct api_secret_ref acl_config_secret;         /* name NULL: none (not loaded yet) */
	struct api_bootstrap bootstrap;
	struct api_replica_mode replica_mode;
	int64_t min_sync_replicas;
	bool has_max_sync_replicas;
	int64_t max_sync_replicas; /* unset: minSyncReplicas */
	struct api_failover failover;
	struct api_primary_isolation primary_isolation;
	struct api_sentinel sentinel;
	bool enable_pod_disruption_budget;
	struct api_maintenance_window node_maintenance_window;
	json_t *node_selector;               /* pass-through, or NULL */
	json_t *affinity;                    /* pass-through, or NULL */
	json_t *tolerations;                 /* pass-through array, or NULL */
	json_t *topology_spread_constraints; /* pass-through array, or NULL */
	const char *priority_class_name;
	struct api_pod_template pod_template;
	struct api_network_policy network_policy;
	struct api_exposure exposure;
	struct api_duration failed_after;
};

struct api_instance_status {
	const char *name;
	enum api_instance_role role; /* 0: unset */
	bool ready;
	bool has_shard;
	int64_t shard;
	int64_t replication_offset;
	int64_t lag_bytes;
	double lag_seconds;
	enum api_link_state link; /* 0: unset */
	bool fenced;
	const char *last_seen;
	const char *message;
};

struct api_shard_status {
	int64_t index;
	const char *primary;
	const char **replicas;
	size_t n_replicas;
	const char *slots;
	bool ready;
};

/*
 * status.failover: the controller's failover / switchover / in-place primary restart in
 * progress, absent when none is (controller/failover.c is its state machine). Both roles
 * read it: the controller resumes from its phase, and an instance manager whose pod is
 * `from` does not take the Lease back while a Fencing or Promoting phase moves the
 * primary away from it (instance/role.h). Field names as on the wire:
 *   {"phase": "Promoting", "from": "c-1", "to": "c-2", "reason": "...",
 *    "catchUp": "...", "startedAt": "2026-01-02T03:04:05Z"}
 * The controller always writes phase, from, reason and startedAt ("" for an unknown
 * from or reason), and to only when it is known.
 */
#define API_FAILOVER_FENCING         "Fencing"
#define API_FAILOVER_PROMOTING       "Promoting"
#define API_FAILOVER_SWITCHOVER      "Switchover"
#define API_FAILOVER_PRIMARY_RESTART "PrimaryRestart"

/* In the CRD's order; 0: no failover (status.failover absent). */
enum api_failover_phase {
	API_PHASE_FENCING = 1,
	API_PHASE_PROMOTING,
	API_PHASE_SWITCHOVER,
	API_PHASE_PRIMARY_RESTART,
};

struct api_failover_status {
	bool set; /* status.failover is present */
	enum api_failover_phase phase;
	const char *from;     /* NULL when absent */
	const char *to;       /* NULL when absent: not elected yet */
	const char *reason;   /* NULL when absent */
	const char *catch_up; /* Promoting: whether the elected replica caught up first */
	const char *started_at;
};

struct api_last_failover {
	bool set;
	const char *time;
	const char *from;
	const char *to;
	const char *reason;
	int64_t duration_ms;
};

struct api_redis_cluster_status {
	const char *phase;
	const char *phase_reason;
	int64_t observed_generation;
	enum vk_engine engine; /* 0: unset */
	struct api_condition *conditions;
	size_t n_conditions;
	const char *current_primary;
	const char *target_primary;
	int64_t instances;
	int64_t ready_instances;
	const char *selector;
	struct api_instance_status *instances_status;
	size_t n_instances_status;
	struct api_shard_status *shards;
	size_t n_shards;
	const char *last_reload;          /* redis.io/reload of the last reload, or NULL */
	json_t *secrets_resource_version; /* Secret name → resourceVersion, or NULL */
	double *time_to_ready_seconds;
	size_t n_time_to_ready_seconds;
	const char **dangling_pvcs; /* PVCs no pod uses, neither reused nor deleted */
	size_t n_dangling_pvcs;
	const char **foreign_pods; /* labelled pods that are not the cluster's own */
	size_t n_foreign_pods;
	json_t *sentinels; /* sentinel mode: the sentinel pods' reports (pass-through), or NULL */
	struct api_last_failover last_failover;
	struct api_failover_status failover;
};

struct api_redis_cluster {
	json_t *json; /* the defaulted copy everything borrows from (owned) */
	struct api_meta meta;
	struct api_redis_cluster_spec spec;
	struct api_redis_cluster_status status;
};

/* The decoder's table of the CRD (see api/schema.h), and its status.failover node. */
extern const struct api_schema api_redis_cluster_schema;
extern const struct api_schema api_failover_status_schema;

/*
 * Decodes a RedisCluster (see the header comment). 0, or -EINVAL with e naming the path
 * (a JSON type the struct cannot hold, an enum value outside the enum, wrong apiVersion or
 * kind). out is written only on success.
 */
int api_redis_cluster_decode(json_t *obj, struct api_redis_cluster *out, struct err *e);
/* Frees what decode allocated and drops rc->json; rc is zeroed. NULL-safe. */
void api_redis_cluster_release(struct api_redis_cluster *rc);

/* The decoded struct as JSON, decoder defaults and decoded quantities included (golden
 * files). A new reference. */
json_t *api_redis_cluster_dump(const struct api_redis_cluster *rc);

/* VK_ENGINE_VALKEY when the image's repository name (registry and tag or digest left
 * out) contains "valkey", else VK_ENGINE_REDIS; NULL is redis. */
enum vk_engine api_engine_from_image(const char *image);

/*
 * How long the primary may go without renewing its Lease before it fences itself, in ms:
 * spec.failover.renewDeadline, or spec.primaryIsolation.apiServerTimeout when that is
 * set and shorter (the seed's isolation check honoured by the Lease: a shorter deadline
 * only widens the fence margin, DESIGN.md §4), never under 2 x renewPeriod (the CRD
 * refuses such a timeout; an object stored before that rule keeps the retry). -1 when
 * renewDeadline is not a duration.
 */
int64_t api_redis_cluster_fence_deadline_ms(const struct api_redis_cluster_spec *sp);

/* "standalone", "sentinel", "cluster"; NULL for anything else. */
const char *api_mode_name(enum api_mode mode);

/* The policies in the CRD's order, NULL-terminated: "noeviction", "allkeys-lru", ... */
extern const char *const api_maxmemory_policies[];
/* "allkeys-lru" for API_POLICY_ALLKEYS_LRU; NULL for 0 (unset) or out of range. */
const char *api_maxmemory_policy_name(enum api_maxmemory_policy p);
/* The policy named name, or 0 when name is NULL or no policy. */
enum api_maxmemory_policy api_maxmemory_policy_from_name(const char *name);

/* "Fencing" for API_PHASE_FENCING ...; NULL for 0 or out of range. */
const char *api_failover_phase_name(enum api_failover_phase phase);
/* The phase named name, or 0. */
enum api_failover_phase api_failover_phase_from_name(const char *name);

/*
 * status.failover, the one encoder and decoder both roles use (the RedisCluster decoder
 * decodes it with the same table). Decode: obj absent or null gives out->set false; a
 * phase outside the enum or a field of the wrong type is -EINVAL naming the field under
 * path ("status.failover.phase: Unsupported value: ..."). Strings are borrowed from obj;
 * out is written only on success. Encode: the object as the controller writes it (see
 * struct api_failover_status; from and reason "" when NULL, to and catchUp only when
 * set and not empty); f->set false gives JSON null, which removes it in a merge patch. A
 * new reference.
 */
int api_failover_status_decode(json_t *obj, const char *path, struct api_failover_status *out,
                               struct err *e);
json_t *api_failover_status_encode(const struct api_failover_status *f);

#endif

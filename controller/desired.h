/*
 * desired: pure builders of the objects a RedisCluster owns (DESIGN.md §3, §8).
 *
 *   json_t *pod = desired_pod(rc, cfg, 2, CTL_ROLE_REPLICA);   (a new reference)
 *
 * Every object carries the owner reference (controller, blockOwnerDeletion), the
 * labels app.kubernetes.io/managed-by=redis-operator (what the informers select),
 * redis.io/cluster and the app.kubernetes.io labels. Names:
 *   ServiceAccount, Role, RoleBinding, NetworkPolicy   <cluster>
 *   Secrets        <cluster>-auth (spec.authSecret unset), <cluster>-operator,
 *                  <cluster>-operator-tls (the controller's CAs and client certificate:
 *                  never readable by the pods), <cluster>-instance-tls (the pods' HTTPS
 *                  material, see controller/pki.h), spec.connectionSecret.name
 *   Services       <cluster>-leader (role=primary), <cluster>-replica, <cluster>-any
 *   PDBs           <cluster>-primary (minAvailable 1), <cluster>-replica (replicas - 1)
 *   Lease          <cluster>-primary (created empty; the instance managers take it)
 *   PVC, Pod       <cluster>-<serial>
 *   sentinel mode  Pods <cluster>-sentinel-<index>, Service <cluster>-sentinel
 *
 * The pod layout is the instance manager's contract (instance/settings.c): env
 * REDIS_OPERATOR_{POD_NAME,POD_NAMESPACE,POD_IP,CLUSTER_NAME}; /data (PVC or emptyDir),
 * /run/redis-operator (socket), /etc/redis-operator/{auth,operator-auth,users,tls}
 * (Secrets: `password`; users/<user>/<secret>; tls.crt, tls.key, ca.crt),
 * /etc/redis-operator/http-tls (<cluster>-instance-tls: the API serves HTTPS, probes use
 * scheme HTTPS); ports 6379 "redis", 8000 "http", 9121 "metrics"; the binary copied to
 * /controller by the copy-binary init container. See controller/README.md.
 *
 * Hashes: desired_spec_hash (the pods' redis.io/spec-hash) covers the user's inputs that
 * need a restart: the spec fields listed by desired_restart_input (image, engine,
 * resources, scheduling, podTemplate metadata, storage type, the Secrets that become
 * volumes, static spec.redis directives, the managers' start-up timings...), the
 * --run-as-user setting and DESIRED_POD_GENERATION; never the pod as this operator
 * renders it, so an operator upgrade restarts no pod (DESIGN.md §3). desired_live_hash
 * covers the body of POST /v1/config (memory, live directives, users). Both are 16 hex
 * digits of SHA-256 over canonical JSON.
 *
 * Pure functions over a decoded cluster: any thread. Every json_t * returned is a new
 * reference; strings returned are malloc'd.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_DESIRED_H
#define REDIS_OPERATOR_CONTROLLER_DESIRED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/rediscluster.h"
#include "controller/view.h"

#define DESIRED_HASH_LEN        16
#define DESIRED_PASSWORD_LEN    32
#define DESIRED_GRACE_SECONDS   30
#define DESIRED_OPERATOR_SECRET "-operator"
#define DESIRED_AUTH_SECRET     "-auth"
#define DESIRED_OPERATOR_TLS    "-operator-tls" /* suffix; the controller's only */
#define DESIRED_INSTANCE_TLS    "-instance-tls" /* suffix; mounted by the pods */
#define DESIRED_HTTP_TLS_VOLUME "http-tls"      /* the pod volume of <cluster>-instance-tls */

enum desired_service {
	DESIRED_SVC_LEADER,
	DESIRED_SVC_REPLICA,
	DESIRED_SVC_ANY,
	DESIRED_SVC_COUNT,
};

enum desired_pdb {
	DESIRED_PDB_PRIMARY,
	DESIRED_PDB_REPLICA,
	DESIRED_PDB_SENTINEL, /* sentinel mode: as many sentinels as a failover needs */
};

/* "<cluster><suffix>" into out (len bytes). */
void desired_name(const struct api_redis_cluster *rc, const char *suffix, char *out, size_t len);
/* The auth Secret in use: spec.authSecret.name, else "<cluster>-auth". */
void desired_auth_secret_name(const struct api_redis_cluster *rc, char *out, size_t len);

/* metadata with name, namespace, labels (plus extra_labels, borrowed, may be NULL) and the
 * owner reference. */
json_t *desired_meta(const struct api_redis_cluster *rc, const char *name, const char *component,
                     json_t *extra_labels);
json_t *desired_owner_ref(const struct api_redis_cluster *rc);

json_t *desired_service_account(const struct api_redis_cluster *rc);
json_t *desired_role(const struct api_redis_cluster *rc);
json_t *desired_role_binding(const struct api_redis_cluster *rc);
/* NULL when spec.networkPolicy is not enabled. */
json_t *desired_network_policy(const struct api_redis_cluster *rc, const struct ctl_config *cfg);
/* Without data: the applier adds a random password (CTL action fill_password). */
json_t *desired_auth_secret(const struct api_redis_cluster *rc);
json_t *desired_operator_secret(const struct api_redis_cluster *rc);
/* Without data: the applier generates the material (CTL action fill_tls, controller/pki.h). */
json_t *desired_operator_tls_secret(const struct api_redis_cluster *rc);
json_t *desired_instance_tls_secret(const struct api_redis_cluster *rc);
/* NULL when spec.connectionSecret is unset or password is NULL. With server TLS on
 * (spec.tlsSecret and spec.caSecret) the URIs are rediss:// and ca_b64 (data["ca.crt"] of
 * spec.caSecret, base64 as the API has it; NULL: not read yet) is the key ca.crt. */
json_t *desired_connection_secret_ca(const struct api_redis_cluster *rc, const char *password,
                                     const char *ca_b64);
/* The same without the CA. */
json_t *desired_connection_secret(const struct api_redis_cluster *rc, const char *password);
/* Whether the pods' servers speak TLS only (spec.tlsSecret and spec.caSecret set). */
bool desired_server_tls(const struct api_redis_cluster *rc);
json_t *desired_service(const struct api_redis_cluster *rc, enum desired_service which);
/*
 * The <name>-leader Service has no selector: the controller writes its one EndpointSlice
 * (also <name>-leader) itself, listing the primary pod, ready unless its manager last
 * said it is fenced (pod NULL: no endpoint). A primary change is then one update of one
 * object, right after the promotion: with a selector, the move of the role labels took
 * two EndpointSlice syncs, and the second often waited out the EndpointSlice controller's
 * 1 s backoff (its cache had not seen its own first write), leaving the Service empty or
 * on the old primary for a second of every third failover.
 */
#define CTL_ENDPOINTS_MANAGER "redis-operator"
json_t *desired_leader_endpoints(const struct api_redis_cluster *rc, const char *pod,
                                 const char *uid, const char *ip, bool ready);
/* NULL when the PDB should not exist (disabled, or too few instances for it). */
json_t *desired_pdb(const struct api_redis_cluster *rc, enum desired_pdb which);
json_t *desired_lease(const struct api_redis_cluster *rc);
json_t *desired_pvc(const struct api_redis_cluster *rc, int serial);
/* role: CTL_ROLE_PRIMARY or CTL_ROLE_REPLICA (the redis.io/role label). */
json_t *desired_pod(const struct api_redis_cluster *rc, const struct ctl_config *cfg, int serial,
                    const char *role);

/*
 * The first primary of a cluster bootstrapped from the RedisBackup b (controller/
 * bootstrap.h): desired_pod(..., CTL_ROLE_PRIMARY) plus the env
 * REDIS_OPERATOR_RESTORE_SOURCE (b's destination and status.manifestKey, by
 * api_inst_restore_source_encode), the annotation DESIRED_ANN_RESTORE_FROM (b's name)
 * and, when secret is set, that Secret as the volume "restore-credentials" at the
 * manager's --restore-credentials-dir (every key a file). None of it is a restart input:
 * the spec hash is desired_pod's, so no pod rolls once the restore is done, and only this
 * one pod ever carries it.
 */
#define DESIRED_ANN_RESTORE_FROM "redis.io/restore-from"
json_t *desired_bootstrap_pod(const struct api_redis_cluster *rc, const struct ctl_config *cfg,
                              int serial, const struct api_redis_backup *b, const char *secret);

/*
 * Sentinel mode (controller/desired_sentinel.c): desired_sentinel_count sentinel pods
 * "<cluster>-sentinel-<index>" (index 1..count; the count is spec.sentinel.count, 3 when
 * unset, 0 outside sentinel mode), run by the same image as `instance --role sentinel`
 * over an emptyDir, and the Service "<cluster>-sentinel" (port 26379, the ready
 * sentinels; NULL outside sentinel mode). desired_sentinel_index is the index in a
 * sentinel pod's name, -1 for any other name.
 */
#define DESIRED_SENTINEL_SUFFIX "-sentinel"
void desired_sentinel_name(const struct api_redis_cluster *rc, int index, char *out, size_t len);
int desired_sentinel_index(const struct api_redis_cluster *rc, const char *pod);
int64_t desired_sentinel_count(const struct api_redis_cluster *rc);
json_t *desired_sentinel_pod(const struct api_redis_cluster *rc, const struct ctl_config *cfg,
                             int index);
json_t *desired_sentinel_service(const struct api_redis_cluster *rc);

/*
 * The pod template generation, hashed with the restart inputs. A release whose pods must
 * restart (a change of the pod contract that running pods cannot live without: see
 * controller/README.md, "Configuration tiers") bumps it deliberately; each bump rolls
 * every cluster once, through the usual rolling update.
 */
#define DESIRED_POD_GENERATION 1

/* The restart-tier hash into out (DESIRED_HASH_LEN + 1 bytes). */
void desired_spec_hash(const struct api_redis_cluster *rc, const struct ctl_config *cfg, char *out);
/* The i-th restart input, as its CRD path under spec ("failover.leaseDuration",
 * "users[].passwordSecrets[].name"), or NULL past the last (test_controller_desired). */
const char *desired_restart_input(size_t i);
/* The body of POST /v1/config for the live tier. */
json_t *desired_live_config(const struct api_redis_cluster *rc);
void desired_live_hash(const struct api_redis_cluster *rc, char *out);

/* 16 hex digits of SHA-256 over the compact, key-sorted text of j. */
void desired_hash_json(json_t *j, char *out);

#endif

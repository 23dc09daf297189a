/*
 * spec: what the instance manager needs from its RedisCluster, and the checks it makes on
 * its own authority before a setting reaches the server.
 *
 *   struct inst_spec s;
 *   if (inst_spec_decode(cluster_json, &s, &e) < 0) ... e.msg names the field
 *   ... s.desired.maxmemory, s.current_primary ...
 *   inst_spec_release(&s);
 *
 * The RedisCluster is decoded by api/rediscluster.h, the controller's own decoder, with
 * the CRD's defaults: this module adds no default of its own. What it adds is
 * instance-specific: the engine falls back to status.engine (then to what PATH has,
 * supervisor.c) instead of the image's guess; the Lease timings must leave the fence
 * margin (DESIGN.md §4) even if the CRD's rule was bypassed; and the live part.
 *
 * struct inst_desired is the live-settable part (memory, spec.redis, minSyncReplicas,
 * users): it comes from the RedisCluster at boot and, afterwards, from POST /v1/config
 * (api/instance_v1.h's struct api_inst_config, the same fields), and both go through the
 * same checks: directive names owned by the operator (lib/engine/directives) and values
 * that do not fit a config line, user names, ACL rules (instance/acl.h), and the caps
 * below, each refused with an error that names the field ("spec.users[0].rules[1]: not
 * allowed: a selector"; without "spec." for /v1/config), so a bad map never reaches the
 * config file.
 *
 * Ownership: every string is owned by the struct (free with _release). Decoding writes
 * the output only on success. Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_SPEC_H
#define REDIS_OPERATOR_INSTANCE_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/acl_file.h"
#include "api/instance_v1.h"
#include "api/rediscluster.h"
#include "lib/engine/engine.h"
#include "lib/err.h"

#define INST_USERS_MAX     32  /* spec.users maxItems */
#define INST_RULES_MAX     64  /* spec.users[].rules maxItems */
#define INST_RULE_LEN_MAX  256 /* one ACL rule */
#define INST_USER_NAME_MAX 64
#define INST_REDIS_MAX     64 /* spec.redis maxProperties */

/* Sentinel's own defaults, used when spec.sentinel leaves a value unset */
#define INST_SENTINEL_DOWN_AFTER_DEFAULT_MS       5000
#define INST_SENTINEL_FAILOVER_TIMEOUT_DEFAULT_MS 180000

struct inst_kv {
	char *name;
	char *value;
};

struct inst_user_spec {
	char *name;
	bool enabled;
	size_t nrules;
	char **rules; /* ACL rule tokens that passed inst_acl_rule_refusal (instance/acl.h) */
};

struct inst_desired {
	bool has_maxmemory;
	uint64_t maxmemory;     /* bytes */
	char *maxmemory_policy; /* NULL: unset */
	int64_t min_sync_replicas;
	size_t nredis;
	struct inst_kv *redis; /* sorted by name, unique */
	size_t nusers;
	struct inst_user_spec *users; /* sorted by name, unique */
	/* The users of spec.aclConfigSecret's file as the manager last applied them
	 * (instance/ops.c), for the next render; never from a request or the spec. */
	struct api_acl_file acl;
};

struct inst_spec {
	char *mode; /* standalone | sentinel | cluster */
	int64_t instances;
	enum vk_engine engine;     /* spec.engine, else status.engine, else unknown */
	bool ephemeral;            /* storage.type: emptyDir */
	bool tls_clients_required; /* spec.tlsClientAuth: required */
	struct inst_desired desired;
	int64_t lease_duration_ms, renew_deadline_ms, renew_period_ms, switchover_timeout_ms;
	/* spec.sentinel (mode sentinel; 0 when unset: the INST_SENTINEL_*_DEFAULT below) */
	int64_t sentinel_count, sentinel_down_after_ms, sentinel_failover_timeout_ms;
	char *current_primary; /* status; NULL when unset */
	/* status.failover while one runs (NULL otherwise): its phase, from and to */
	char *failover_phase, *failover_from, *failover_to;
};

/* Decodes a whole RedisCluster object (metadata, spec, status) with
 * api_redis_cluster_decode, then inst_spec_from_cluster. */
int inst_spec_decode(json_t *cluster, struct inst_spec *out, struct err *e);
/* What the manager needs from a decoded cluster (rc is only read). */
int inst_spec_from_cluster(const struct api_redis_cluster *rc, struct inst_spec *out,
                           struct err *e);
void inst_spec_release(struct inst_spec *s);

/* The live part of a /v1/config body (messages name fields without a prefix). */
int inst_desired_from_config(const struct api_inst_config *c, struct inst_desired *out,
                             struct err *e);
void inst_desired_release(struct inst_desired *d);
/* Deep copy. */
void inst_desired_copy(struct inst_desired *dst, const struct inst_desired *src);
/* Is name one of spec.users? (Such a user is spec.users', never the ACL file's.) */
bool inst_desired_spec_user(const struct inst_desired *d, const char *name);
/* The value of spec.redis name, or NULL. */
const char *inst_desired_redis(const struct inst_desired *d, const char *name);

#endif

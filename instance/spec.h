/*
 * spec: what the instance manager needs from a RedisCluster, decoded from its JSON.
 *
 *   struct inst_spec s;
 *   if (inst_spec_decode(cluster_json, &s, &e) < 0) ... e.msg names the field
 *   ... s.desired.maxmemory, s.current_primary ...
 *   inst_spec_release(&s);
 *
 * struct inst_desired is the live-settable part (memory, spec.redis, minSyncReplicas,
 * users): it comes from the RedisCluster at boot and, afterwards, from POST /v1/config,
 * whose body uses the same field names (inst_desired_decode serves both). Directive
 * names owned by the operator (lib/engine/directives) are refused with an error that
 * names the field, so a bad map never reaches the config file.
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

#include "lib/err.h"
#include "lib/engine/engine.h"

#define INST_USERS_MAX     32  /* spec.users maxItems */
#define INST_RULES_MAX     64  /* spec.users[].rules maxItems */
#define INST_RULE_LEN_MAX  256 /* one ACL rule */
#define INST_USER_NAME_MAX 64
#define INST_REDIS_MAX     64 /* spec.redis maxProperties */

/* Failover timing defaults (the CRD's defaults). */
#define INST_LEASE_DURATION_MS_DEFAULT 10000
#define INST_RENEW_DEADLINE_MS_DEFAULT 6000
#define INST_RENEW_PERIOD_MS_DEFAULT   1000
#define INST_SWITCHOVER_MS_DEFAULT     10000

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
};

struct inst_spec {
	char *mode; /* standalone | sentinel | cluster */
	int64_t instances;
	enum vk_engine engine; /* spec.engine, else status.engine, else unknown */
	bool ephemeral;        /* storage.type: emptyDir */
	struct inst_desired desired;
	int64_t lease_duration_ms, renew_deadline_ms, renew_period_ms, switchover_timeout_ms;
	char *current_primary; /* status; NULL when unset */
	/* status.failover while one runs (NULL otherwise): its phase, from and to */
	char *failover_phase, *failover_from, *failover_to;
};

/* Decodes a whole RedisCluster object (metadata, spec, status). */
int inst_spec_decode(json_t *cluster, struct inst_spec *out, struct err *e);
void inst_spec_release(struct inst_spec *s);

/*
 * Decodes the live part from obj (a RedisCluster spec, or a /v1/config body). Field
 * names: memory.{maxMemory,maxMemoryPercent,maxMemoryPolicy} when spec_layout is true,
 * else maxMemory/maxMemoryPolicy at the top; redis; minSyncReplicas; users. prefix is
 * put before field names in messages ("spec." or ""). limit_bytes is
 * resources.limits.memory for maxMemoryPercent (0: unknown).
 */
int inst_desired_decode(json_t *obj, bool spec_layout, const char *prefix, uint64_t limit_bytes,
                        struct inst_desired *out, struct err *e);
void inst_desired_release(struct inst_desired *d);
/* Deep copy. */
void inst_desired_copy(struct inst_desired *dst, const struct inst_desired *src);
/* The value of spec.redis name, or NULL. */
const char *inst_desired_redis(const struct inst_desired *d, const char *name);

#endif

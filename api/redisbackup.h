/*
 * redisbackup: the RedisBackup and RedisScheduledBackup kinds (redis.io/v1) as C:
 * decoding with the CRDs' defaults. Validation is the API server's (config/crd/bases).
 *
 *   struct api_redis_backup b;
 *   if (api_redis_backup_decode(obj, &b, &e) < 0) ...          e.msg names the JSON path
 *   ... b.spec.destination.s3.set ? b.spec.destination.s3.bucket : ...
 *   api_redis_backup_release(&b);
 *
 * Ownership is rediscluster.h's: decode keeps a defaulted deep copy in .json and every
 * string and json_t * borrows from it until release; arrays (conditions) are allocated by
 * decode and freed by release. Schema defaults: target prefer-replica, method rdb,
 * deletionPolicy Retain, s3.region us-east-1, s3.forcePathStyle false; scheduled: timeZone
 * UTC, suspend and immediate false, history limits 3 and 1. The decoder adds retention_ms
 * (retention in milliseconds: 0 when unset, -1 when it does not parse).
 *
 * A RedisScheduledBackup names what each run backs up inline (spec.clusterName, target,
 * method, deletionPolicy, destination: the documented form) or, in the older form, under
 * spec.template (the CRD allows one or the other). Decoding puts the effective one in
 * spec.backup either way (has_template says which form it was); read spec.backup.
 *
 * Credentials: a destination's credentials_secret is an optional override (name NULL:
 * use the RedisCluster's spec.backupCredentialsSecret); the Secret's keys choose the way
 * to authenticate (see config/crd/bases/redis.io_redisbackups.yaml).
 *
 * Thread-safety: plain data; one thread at a time.
 */
#ifndef REDIS_OPERATOR_API_REDISBACKUP_H
#define REDIS_OPERATOR_API_REDISBACKUP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/meta.h"
#include "api/schema.h"
#include "lib/err.h"

#define API_REDIS_BACKUP_KIND           "RedisBackup"
#define API_REDIS_SCHEDULED_BACKUP_KIND "RedisScheduledBackup"

enum api_backup_target {
	API_TARGET_PRIMARY = 1,
	API_TARGET_PREFER_REPLICA,
};

enum api_backup_method {
	API_METHOD_RDB = 1,
	API_METHOD_AOF, /* the append-only directory, archived as tar.gz */
};

enum api_deletion_policy {
	API_DELETION_RETAIN = 1,
	API_DELETION_DELETE, /* deleting the RedisBackup deletes its stored objects first */
};

enum api_backup_phase {
	API_BACKUP_PENDING = 1,
	API_BACKUP_RUNNING,
	API_BACKUP_COMPLETED,
	API_BACKUP_FAILED,
};

struct api_s3 {
	bool set;
	const char *bucket;
	const char *path;
	const char *endpoint; /* NULL: AWS for the region */
	const char *region;
	bool force_path_style;
	struct api_secret_ref credentials_secret; /* name NULL: the cluster's */
};

struct api_azure {
	bool set;
	const char *container;
	const char *path;
	const char *account_name;
	const char *endpoint; /* NULL: https://<accountName>.blob.core.windows.net */
	struct api_secret_ref credentials_secret; /* name NULL: the cluster's */
};

/* Exactly one of s3 and azure is set in a valid object. */
struct api_destination {
	bool set;
	struct api_s3 s3;
	struct api_azure azure;
};

/* A RedisBackup's spec, and a RedisScheduledBackup's template. */
struct api_backup_spec {
	const char *cluster_name;
	enum api_backup_target target;
	enum api_backup_method method;
	enum api_deletion_policy deletion_policy;
	struct api_destination destination;
};

struct api_redis_backup_status {
	enum api_backup_phase phase; /* 0: unset */
	const char *started_at;
	const char *stopped_at; /* completed or failed */
	const char *instance;   /* the pod that produced the snapshot */
	const char *location;
	const char *manifest_key;
	bool has_size;
	int64_t size;
	const char *checksum; /* "sha256:<hex>" */
	const char *engine;
	const char *engine_version;
	const char *repl_id;
	bool has_repl_offset;
	int64_t repl_offset;
	const char *reason;
	const char *message;
	struct api_condition *conditions;
	size_t n_conditions;
};

struct api_redis_backup {
	json_t *json; /* the defaulted copy everything borrows from (owned) */
	struct api_meta meta;
	struct api_backup_spec spec;
	struct api_redis_backup_status status;
};

struct api_redis_scheduled_backup_spec {
	const char *schedule;
	const char *time_zone;
	bool suspend;
	bool immediate;
	int64_t successful_backups_history_limit;
	int64_t failed_backups_history_limit;
	const char *retention;         /* NULL: keep forever */
	int64_t retention_ms;          /* decoded: 0 unset, -1 unparsable */
	struct api_backup_spec backup; /* what each run backs up: inline, or the template's */
	bool has_template;             /* the older form (spec.template) was used */
	struct api_backup_spec template;
};

struct api_redis_scheduled_backup_status {
	const char *last_schedule_time;
	const char *next_schedule_time;
	const char *last_successful_time;
	const char *last_backup_name;
	const char *last_successful_backup;
	int64_t observed_generation;
	struct api_condition *conditions;
	size_t n_conditions;
};

struct api_redis_scheduled_backup {
	json_t *json;
	struct api_meta meta;
	struct api_redis_scheduled_backup_spec spec;
	struct api_redis_scheduled_backup_status status;
};

/* The decoder's tables of the CRDs (see api/schema.h). */
extern const struct api_schema api_redis_backup_schema;
extern const struct api_schema api_redis_scheduled_backup_schema;

/* As api_redis_cluster_decode/_release/_dump, for each kind. */
int api_redis_backup_decode(json_t *obj, struct api_redis_backup *out, struct err *e);
void api_redis_backup_release(struct api_redis_backup *b);
json_t *api_redis_backup_dump(const struct api_redis_backup *b);

int api_redis_scheduled_backup_decode(json_t *obj, struct api_redis_scheduled_backup *out,
                                      struct err *e);
void api_redis_scheduled_backup_release(struct api_redis_scheduled_backup *sb);
json_t *api_redis_scheduled_backup_dump(const struct api_redis_scheduled_backup *sb);

/* "<1-9999><h|d|w>" in milliseconds: 0, or -EINVAL. */
int api_retention_ms(const char *s, int64_t *out);

#endif

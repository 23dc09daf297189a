/*
 * redisbackup: RedisBackup and RedisScheduledBackup: the decoder's tables, decoding and
 * dumping (see redisbackup.h). The template of a scheduled backup is a backup spec.
 */
#include "redisbackup.h"

#include <errno.h>
#include <string.h>

#include "lib/jsonx.h"
#include "lib/parse.h"

_Static_assert(sizeof(enum api_backup_target) == sizeof(int), "enums decode as int");

/* --- the tables ------------------------------------------------------------------------------ */

static const struct api_schema string = { .type = API_STRING };
static const struct api_schema integer = { .type = API_INTEGER };
static const struct api_schema boolean_false = { .type = API_BOOLEAN, .default_json = "false" };

static const struct api_schema s3 = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("bucket", &string, API_C_STRING, struct api_s3, bucket),
	                   API_FIELD("path", &string, API_C_STRING, struct api_s3, path),
	                   API_FIELD("endpoint", &string, API_C_STRING, struct api_s3, endpoint),
	                   API_FIELD("region",
	                             API_NODE(.type = API_STRING, .default_json = "\"us-east-1\""),
	                             API_C_STRING, struct api_s3, region),
	                   API_FIELD("forcePathStyle", &boolean_false, API_C_BOOL, struct api_s3,
	                             force_path_style),
	                   API_FIELD("credentialsSecret", &api_secret_ref_schema, API_C_STRUCT,
	                             struct api_s3, credentials_secret)),
};

static const struct api_schema azure = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("container", &string, API_C_STRING, struct api_azure, container),
	        API_FIELD("path", &string, API_C_STRING, struct api_azure, path),
	        API_FIELD("accountName", &string, API_C_STRING, struct api_azure, account_name),
	        API_FIELD("endpoint", &string, API_C_STRING, struct api_azure, endpoint),
	        API_FIELD("credentialsSecret", &api_secret_ref_schema, API_C_STRUCT,
	                  struct api_azure, credentials_secret)),
};

static const struct api_schema destination = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD_FLAG("s3", &s3, API_C_STRUCT, struct api_destination, s3, s3.set),
	        API_FIELD_FLAG("azure", &azure, API_C_STRUCT, struct api_destination, azure,
	                       azure.set)),
};

static const struct api_schema target = {
	.type = API_STRING,
	.enums = API_STRS("primary", "prefer-replica"),
	.default_json = "\"prefer-replica\"",
};

static const struct api_schema method = {
	.type = API_STRING,
	.enums = API_STRS("rdb", "aof"),
	.default_json = "\"rdb\"",
};

static const struct api_schema deletion_policy = {
	.type = API_STRING,
	.enums = API_STRS("Retain", "Delete"),
	.default_json = "\"Retain\"",
};

/* A RedisBackup's spec, and a RedisScheduledBackup's template. */
static const struct api_schema backup_spec = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("clusterName", &string, API_C_STRING, struct api_backup_spec,
	                             cluster_name),
	                   API_FIELD("target", &target, API_C_ENUM, struct api_backup_spec, target),
	                   API_FIELD("method", &method, API_C_ENUM, struct api_backup_spec, method),
	                   API_FIELD("deletionPolicy", &deletion_policy, API_C_ENUM,
	                             struct api_backup_spec, deletion_policy),
	                   API_FIELD_FLAG("destination", &destination, API_C_STRUCT,
	                                  struct api_backup_spec, destination, destination.set)),
};

#define STATUS struct api_redis_backup_status

static const struct api_schema conditions = { .type = API_ARRAY, .items = &api_condition_schema };

static const struct api_schema backup_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("phase",
	                  API_NODE(.type = API_STRING,
	                           .enums = API_STRS("Pending", "Running", "Completed", "Failed")),
	                  API_C_ENUM, STATUS, phase),
	        API_FIELD("startedAt", &string, API_C_STRING, STATUS, started_at),
	        API_FIELD("stoppedAt", &string, API_C_STRING, STATUS, stopped_at),
	        API_FIELD("instance", &string, API_C_STRING, STATUS, instance),
	        API_FIELD("location", &string, API_C_STRING, STATUS, location),
	        API_FIELD("manifestKey", &string, API_C_STRING, STATUS, manifest_key),
	        API_FIELD_FLAG("size", &integer, API_C_INT, STATUS, size, has_size),
	        API_FIELD("checksum", &string, API_C_STRING, STATUS, checksum),
	        API_FIELD("engine", &string, API_C_STRING, STATUS, engine),
	        API_FIELD("engineVersion", &string, API_C_STRING, STATUS, engine_version),
	        API_FIELD("replId", &string, API_C_STRING, STATUS, repl_id),
	        API_FIELD_FLAG("replOffset", &integer, API_C_INT, STATUS, repl_offset,
	                       has_repl_offset),
	        API_FIELD("reason", &string, API_C_STRING, STATUS, reason),
	        API_FIELD("message", &string, API_C_STRING, STATUS, message),
	        API_LIST("conditions", &conditions, STATUS, conditions, n_conditions, API_C_STRUCT,
	                 struct api_condition)),
};

/* The roots: apiVersion, kind and metadata are api_meta_decode's. */
const struct api_schema api_redis_backup_schema = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("spec", &backup_spec, API_C_STRUCT, struct api_redis_backup, spec),
	        API_FIELD("status", &backup_status, API_C_STRUCT, struct api_redis_backup, status)),
};

#define SCHED struct api_redis_scheduled_backup_spec

static const struct api_schema scheduled_spec = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("schedule", &string, API_C_STRING, SCHED, schedule),
	        API_FIELD("timeZone", API_NODE(.type = API_STRING, .default_json = "\"UTC\""),
	                  API_C_STRING, SCHED, time_zone),
	        API_FIELD("suspend", &boolean_false, API_C_BOOL, SCHED, suspend),
	        API_FIELD("immediate", &boolean_false, API_C_BOOL, SCHED, immediate),
	        API_FIELD("successfulBackupsHistoryLimit",
	                  API_NODE(.type = API_INTEGER, .default_json = "3"), API_C_INT, SCHED,
	                  successful_backups_history_limit),
	        API_FIELD("failedBackupsHistoryLimit",
	                  API_NODE(.type = API_INTEGER, .default_json = "1"), API_C_INT, SCHED,
	                  failed_backups_history_limit),
	        API_FIELD("retention", &string, API_C_STRING, SCHED, retention),
	        API_FIELD("clusterName", &string, API_C_STRING, SCHED, backup.cluster_name),
	        API_FIELD("target", &target, API_C_ENUM, SCHED, backup.target),
	        API_FIELD("method", &method, API_C_ENUM, SCHED, backup.method),
	        API_FIELD("deletionPolicy", &deletion_policy, API_C_ENUM, SCHED,
	                  backup.deletion_policy),
	        API_FIELD_FLAG("destination", &destination, API_C_STRUCT, SCHED, backup.destination,
	                       backup.destination.set),
	        API_FIELD_FLAG("template", &backup_spec, API_C_STRUCT, SCHED, template,
	                       has_template)),
};

#define SCHED_STATUS struct api_redis_scheduled_backup_status

static const struct api_schema scheduled_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("lastScheduleTime", &string, API_C_STRING, SCHED_STATUS,
	                  last_schedule_time),
	        API_FIELD("nextScheduleTime", &string, API_C_STRING, SCHED_STATUS,
	                  next_schedule_time),
	        API_FIELD("lastSuccessfulTime", &string, API_C_STRING, SCHED_STATUS,
	                  last_successful_time),
	        API_FIELD("lastBackupName", &string, API_C_STRING, SCHED_STATUS, last_backup_name),
	        API_FIELD("lastSuccessfulBackup", &string, API_C_STRING, SCHED_STATUS,
	                  last_successful_backup),
	        API_FIELD("observedGeneration", &integer, API_C_INT, SCHED_STATUS,
	                  observed_generation),
	        API_LIST("conditions", &conditions, SCHED_STATUS, conditions, n_conditions,
	                 API_C_STRUCT, struct api_condition)),
};

const struct api_schema api_redis_scheduled_backup_schema = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("spec", &scheduled_spec, API_C_STRUCT,
	                             struct api_redis_scheduled_backup, spec),
	                   API_FIELD("status", &scheduled_status, API_C_STRUCT,
	                             struct api_redis_scheduled_backup, status)),
};

/* --- decoding and dumping ----------------------------------------------------------------- */

/* The steps both kinds share: a defaulted copy, metadata, the table. */
static int decode_into(const struct api_schema *s, const char *kind, json_t *obj, json_t **copy,
                       struct api_meta *meta, void *out, struct err *e)
{
	int rc;

	if (!json_is_object(obj))
		return err_set(e, -EINVAL, "expected a %s object, got %s", kind,
		               jsonx_type_name(obj));
	*copy = json_deep_copy(obj);
	api_schema_default(s, *copy);
	rc = api_meta_decode(*copy, kind, meta, e);
	if (rc == 0)
		rc = api_schema_decode(s, *copy, "", out, e);
	if (rc) {
		json_decref(*copy);
		*copy = NULL;
	}
	return rc;
}

int api_redis_backup_decode(json_t *obj, struct api_redis_backup *out, struct err *e)
{
	struct api_redis_backup b = { 0 };
	int rc = decode_into(&api_redis_backup_schema, API_REDIS_BACKUP_KIND, obj, &b.json, &b.meta,
	                     &b, e);

	if (rc == 0)
		*out = b;
	return rc;
}

void api_redis_backup_release(struct api_redis_backup *b)
{
	if (!b)
		return;
	api_schema_release(&api_redis_backup_schema, b);
	json_decref(b->json);
	memset(b, 0, sizeof(*b));
}

json_t *api_redis_backup_dump(const struct api_redis_backup *b)
{
	json_t *d = api_schema_dump(&api_redis_backup_schema, b);

	json_object_set_new(d, "metadata", api_meta_dump(&b->meta));
	return d;
}

int api_retention_ms(const char *s, int64_t *out)
{
	static const struct {
		char unit;
		int64_t ms;
	} units[] = { { 'h', 3600000 }, { 'd', 86400000 }, { 'w', 604800000 } };
	size_t len = s ? strlen(s) : 0;
	char digits[8];
	int64_t n;

	if (len < 2 || len > 5)
		return -EINVAL;
	memcpy(digits, s, len - 1);
	digits[len - 1] = '\0';
	if (digits[0] == '0' || parse_int64(digits, 1, 9999, &n, NULL) < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (s[len - 1] == units[i].unit) {
			*out = n * units[i].ms;
			return 0;
		}
	}
	return -EINVAL;
}

int api_redis_scheduled_backup_decode(json_t *obj, struct api_redis_scheduled_backup *out,
                                      struct err *e)
{
	struct api_redis_scheduled_backup sb = { 0 };
	int rc = decode_into(&api_redis_scheduled_backup_schema, API_REDIS_SCHEDULED_BACKUP_KIND,
	                     obj, &sb.json, &sb.meta, &sb, e);

	if (rc)
		return rc;
	if (sb.spec.retention && api_retention_ms(sb.spec.retention, &sb.spec.retention_ms) < 0)
		sb.spec.retention_ms = -1;
	if (sb.spec.has_template) /* the older form: the inline fields are only defaults */
		sb.spec.backup = sb.spec.template;
	*out = sb;
	return 0;
}

void api_redis_scheduled_backup_release(struct api_redis_scheduled_backup *sb)
{
	if (!sb)
		return;
	api_schema_release(&api_redis_scheduled_backup_schema, sb);
	json_decref(sb->json);
	memset(sb, 0, sizeof(*sb));
}

json_t *api_redis_scheduled_backup_dump(const struct api_redis_scheduled_backup *sb)
{
	json_t *d = api_schema_dump(&api_redis_scheduled_backup_schema, sb);

	json_object_set_new(d, "metadata", api_meta_dump(&sb->meta));
	json_object_set_new(json_object_get(d, "spec"), "retention (decoded ms)",
	                    json_integer(sb->spec.retention_ms));
	return d;
}

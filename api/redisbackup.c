/*
 * redisbackup: RedisBackup and RedisScheduledBackup: the CRD tables with their CEL rules,
 * decoding, validation and dumping (see redisbackup.h). The two kinds share the
 * destination's s3/azure schema; the template of a scheduled backup is a backup spec
 * whose destination rule names spec.template.
 */
#include "redisbackup.h"

#include <errno.h>
#include <string.h>

#include "api/cel.h"
#include "api/validate.h"
#include "lib/jsonx.h"
#include "lib/parse.h"

_Static_assert(sizeof(enum api_backup_target) == sizeof(int), "enums decode as int");

const char api_cron_pattern[] =
        "^(\\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/[1-9][0-9]?)?(,(\\*|[0-5]?[0-9](-[0-5]?[0-9])?)"
        "(/[1-9][0-9]?)?)* (\\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?"
        "(,(\\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)* (\\*|(0?[1-9]|"
        "[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?(,(\\*|(0?[1-9]|[12]"
        "[0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)* (\\*|(0?[1-9]|1[0-2]|"
        "(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:jan|f"
        "eb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[1-9][0-9]?)?(,(\\*|(0?[1-9]|1[0"
        "-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?i:j"
        "an|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[1-9][0-9]?)?)* (\\*|([0-7]|"
        "(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat)))?)(/"
        "[1-9][0-9]?)?(,(\\*|([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-7]|(?i:sun|mon|"
        "tue|wed|thu|fri|sat)))?)(/[1-9][0-9]?)?)*$";

/* --- rules ------------------------------------------------------------------------------------ */

static bool rule_spec_immutable(json_t *self, json_t *old)
{
	return json_equal(self, old);
}

static bool rule_one_destination(json_t *self, json_t *old)
{
	(void)old;
	return !json_object_get(self, "s3") != !json_object_get(self, "azure");
}

/*
 * A || (B && duration(self.substring(7)) >= duration('1m')) || C: C cannot match what B
 * matches, so an error from duration() (a value beyond int64 nanoseconds) is the verdict.
 */
static int rule_schedule(json_t *self, json_t *old, const char **why)
{
	const char *s = json_string_value(self);
	int64_t ns;

	(void)old;
	if (api_cel_matches("^@(hourly|daily|weekly)$", s) == 1 ||
	    api_cel_matches(api_cron_pattern, s) == 1)
		return 1;
	if (api_cel_matches("^@every ([0-9]+(ms|s|m|h))+$", s) != 1)
		return 0;
	if (api_cel_duration_ns(s + 7, &ns) < 0) {
		*why = "type conversion error from 'string' to 'google.protobuf.Duration'";
		return -1;
	}
	return ns >= 60LL * 1000000000;
}

static const struct api_rule spec_rules[] = {
	{ .rule = "self == oldSelf",
	  .message = "RedisBackup spec is immutable; create a new RedisBackup instead",
	  .holds = rule_spec_immutable },
	{ NULL },
};

static const struct api_rule destination_rules[] = {
	{ .rule = "has(self.s3) != has(self.azure)",
	  .message = "spec.destination needs exactly one of s3 or azure; keep one and remove the "
	             "other",
	  .holds = rule_one_destination },
	{ NULL },
};

static const struct api_rule template_destination_rules[] = {
	{ .rule = "has(self.s3) != has(self.azure)",
	  .message = "spec.template.destination needs exactly one of s3 or azure; keep one and "
	             "remove the other",
	  .holds = rule_one_destination },
	{ NULL },
};

static const struct api_rule schedule_rules[] = {
	{ .rule = "self.matches('^@(hourly|daily|weekly)$') || (self.matches('^@every "
	          "([0-9]+(ms|s|m|h))+$') && duration(self.substring(7)) >= duration('1m')) || "
	          "self.matches('"
	          "^(\\\\*|[0-5]?[0-9](-[0-5]?[0-9])?)(/"
	          "[1-9][0-9]?)?(,(\\\\*|[0-5]?[0-9](-[0-5]?[0-9])"
	          "?)(/[1-9][0-9]?)?)* "
	          "(\\\\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]"
	          "?)?(,(\\\\*|([01]?[0-9]|2[0-3])(-([01]?[0-9]|2[0-3]))?)(/[1-9][0-9]?)?)* "
	          "(\\\\*|(0?["
	          "1-9]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/"
	          "[1-9][0-9]?)?(,(\\\\*|(0?[1-9"
	          "]|[12][0-9]|3[01])(-(0?[1-9]|[12][0-9]|3[01]))?)(/[1-9][0-9]?)?)* "
	          "(\\\\*|(0?[1-9]|"
	          "1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-2]|(?"
	          "i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/"
	          "[1-9][0-9]?)?(,(\\\\*|(0?["
	          "1-9]|1[0-2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(-(0?[1-9]|1[0-"
	          "2]|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)))?)(/[1-9][0-9]?)?)* "
	          "(\\\\*"
	          "|([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-7]|(?i:sun|mon|tue|wed|thu|fri|sa"
	          "t)))?)(/"
	          "[1-9][0-9]?)?(,(\\\\*|([0-7]|(?i:sun|mon|tue|wed|thu|fri|sat))(-([0-7]|(?i"
	          ":sun|mon|tue|wed|thu|fri|sat)))?)(/[1-9][0-9]?)?)*$"
	          "')",
	  .message = "spec.schedule must be a 5-field cron expression (minute hour day-of-month "
	             "month day-of-week, e.g. \"0 3 * * *\"; no seconds field) or @hourly, "
	             "@daily, @weekly or \"@every <duration>\" of at least 1m",
	  .eval = rule_schedule },
	{ NULL },
};

/* --- the schemas ------------------------------------------------------------------------------ */

#define STR(max) API_NODE(.type = API_STRING, .max_length = (max))
#define NAME(min, max, pat)                                                                        \
	API_NODE(.type = API_STRING, .min_length = (min), .max_length = (max), .pattern = (pat))
#define DATE_TIME       API_NODE(.type = API_STRING, .format = "date-time")
#define PATH_PATTERN    "^[^\\x00-\\x1f\\x7f]*$"
#define URL_PATTERN     "^https?://[^\\s/?#]+(/[^\\s]*)?$"
#define BOOL_DEFAULT(d) API_NODE(.type = API_BOOLEAN, .default_json = (d))
#define INT32(...)      API_NODE(.type = API_INTEGER, .format = "int32", __VA_ARGS__)

static const struct api_schema s3 = {
	.type = API_OBJECT,
	.required = API_STRS("bucket", "credentialsSecret"),
	.props = API_PROPS(
	        API_FIELD("bucket", NAME(3, 63, "^[a-z0-9][a-z0-9.-]*[a-z0-9]$"), API_C_STRING,
	                  struct api_s3, bucket),
	        API_FIELD("path",
	                  API_NODE(.type = API_STRING, .max_length = 512, .pattern = PATH_PATTERN),
	                  API_C_STRING, struct api_s3, path),
	        API_FIELD("endpoint",
	                  API_NODE(.type = API_STRING, .max_length = 512, .pattern = URL_PATTERN),
	                  API_C_STRING, struct api_s3, endpoint),
	        API_FIELD("region",
	                  API_NODE(.type = API_STRING, .max_length = 32, .pattern = "^[a-z0-9-]+$",
	                           .default_json = "\"us-east-1\""),
	                  API_C_STRING, struct api_s3, region),
	        API_FIELD("forcePathStyle", BOOL_DEFAULT("false"), API_C_BOOL, struct api_s3,
	                  force_path_style),
	        API_FIELD("credentialsSecret", &api_secret_ref_schema, API_C_STRUCT, struct api_s3,
	                  credentials_secret)),
};

static const struct api_schema azure = {
	.type = API_OBJECT,
	.required = API_STRS("container", "accountName", "credentialsSecret"),
	.props = API_PROPS(
	        API_FIELD("container", NAME(3, 63, "^[a-z0-9][a-z0-9-]*[a-z0-9]$"), API_C_STRING,
	                  struct api_azure, container),
	        API_FIELD("path",
	                  API_NODE(.type = API_STRING, .max_length = 512, .pattern = PATH_PATTERN),
	                  API_C_STRING, struct api_azure, path),
	        API_FIELD("accountName", NAME(3, 24, "^[a-z0-9]+$"), API_C_STRING, struct api_azure,
	                  account_name),
	        API_FIELD("endpoint",
	                  API_NODE(.type = API_STRING, .max_length = 512, .pattern = URL_PATTERN),
	                  API_C_STRING, struct api_azure, endpoint),
	        API_FIELD("credentialsSecret", &api_secret_ref_schema, API_C_STRUCT,
	                  struct api_azure, credentials_secret)),
};

/*
 * Named nodes throughout: cppcheck's preprocessor does not expand an API_NODE() written
 * inside another API_NODE()'s arguments.
 */
#define DESTINATION_PROPS                                                                          \
	API_PROPS(API_FIELD_FLAG("s3", &s3, API_C_STRUCT, struct api_destination, s3, s3.set),     \
	          API_FIELD_FLAG("azure", &azure, API_C_STRUCT, struct api_destination, azure,     \
	                         azure.set))

static const struct api_schema destination = {
	.type = API_OBJECT,
	.rules = destination_rules,
	.props = DESTINATION_PROPS,
};

static const struct api_schema template_destination = {
	.type = API_OBJECT,
	.rules = template_destination_rules,
	.props = DESTINATION_PROPS,
};

static const struct api_schema target = {
	.type = API_STRING,
	.enums = API_STRS("primary", "prefer-replica"),
	.default_json = "\"prefer-replica\"",
};

static const struct api_schema method = {
	.type = API_STRING,
	.enums = API_STRS("rdb"),
	.default_json = "\"rdb\"",
};

/* The props of a backup spec, with the destination node d. */
#define BACKUP_PROPS(d)                                                                            \
	API_PROPS(API_FIELD("clusterName", NAME(1, 50, API_PATTERN_CLUSTER_NAME), API_C_STRING,    \
	                    struct api_backup_spec, cluster_name),                                 \
	          API_FIELD("target", &target, API_C_ENUM, struct api_backup_spec, target),        \
	          API_FIELD("method", &method, API_C_ENUM, struct api_backup_spec, method),        \
	          API_FIELD_FLAG("destination", (d), API_C_STRUCT, struct api_backup_spec,         \
	                         destination, destination.set))

static const struct api_schema backup_spec = {
	.type = API_OBJECT,
	.required = API_STRS("clusterName", "destination"),
	.rules = spec_rules,
	.props = BACKUP_PROPS(&destination),
};

static const struct api_schema template = {
	.type = API_OBJECT,
	.required = API_STRS("clusterName", "destination"),
	.props = BACKUP_PROPS(&template_destination),
};

static const struct api_schema backup_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("phase",
	                  API_NODE(.type = API_STRING,
	                           .enums = API_STRS("Pending", "Running", "Completed", "Failed")),
	                  API_C_ENUM, struct api_redis_backup_status, phase),
	        API_FIELD("startedAt", DATE_TIME, API_C_STRING, struct api_redis_backup_status,
	                  started_at),
	        API_FIELD("completedAt", DATE_TIME, API_C_STRING, struct api_redis_backup_status,
	                  completed_at),
	        API_FIELD("pod", STR(253), API_C_STRING, struct api_redis_backup_status, pod),
	        API_FIELD_FLAG("size", API_NODE(.type = API_INTEGER, .format = "int64", API_MIN(0)),
	                       API_C_INT, struct api_redis_backup_status, size, has_size),
	        API_FIELD(
	                "sha256",
	                API_NODE(.type = API_STRING, .max_length = 64, .pattern = "^[0-9a-f]{64}$"),
	                API_C_STRING, struct api_redis_backup_status, sha256),
	        API_FIELD("location", STR(2048), API_C_STRING, struct api_redis_backup_status,
	                  location),
	        API_FIELD("error", STR(4096), API_C_STRING, struct api_redis_backup_status, error)),
};

const struct api_schema api_redis_backup_schema = {
	.type = API_OBJECT,
	.required = API_STRS("spec"),
	.props = API_PROPS(
	        API_SKIP("apiVersion", API_NODE(.type = API_STRING)),
	        API_SKIP("kind", API_NODE(.type = API_STRING)),
	        API_SKIP("metadata", API_NODE(.type = API_OBJECT)),
	        API_FIELD("spec", &backup_spec, API_C_STRUCT, struct api_redis_backup, spec),
	        API_FIELD("status", &backup_status, API_C_STRUCT, struct api_redis_backup, status)),
};

#define SCHED struct api_redis_scheduled_backup_spec

static const struct api_schema scheduled_spec = {
	.type = API_OBJECT,
	.required = API_STRS("schedule", "template"),
	.props = API_PROPS(
	        API_FIELD("schedule",
	                  API_NODE(.type = API_STRING, .min_length = 1, .max_length = 128,
	                           .rules = schedule_rules),
	                  API_C_STRING, SCHED, schedule),
	        API_FIELD("timeZone",
	                  API_NODE(.type = API_STRING, .min_length = 1, .max_length = 64,
	                           .pattern = "^(UTC|[A-Za-z][A-Za-z0-9_+-]*(/"
	                                      "[A-Za-z0-9][A-Za-z0-9_+-]*){0,2})$",
	                           .default_json = "\"UTC\""),
	                  API_C_STRING, SCHED, time_zone),
	        API_FIELD("suspend", BOOL_DEFAULT("false"), API_C_BOOL, SCHED, suspend),
	        API_FIELD("immediate", BOOL_DEFAULT("false"), API_C_BOOL, SCHED, immediate),
	        API_FIELD("successfulBackupsHistoryLimit",
	                  INT32(API_MIN(0), API_MAX(1000), .default_json = "3"), API_C_INT, SCHED,
	                  successful_backups_history_limit),
	        API_FIELD("failedBackupsHistoryLimit",
	                  INT32(API_MIN(0), API_MAX(1000), .default_json = "1"), API_C_INT, SCHED,
	                  failed_backups_history_limit),
	        API_FIELD("retention",
	                  API_NODE(.type = API_STRING, .max_length = 8,
	                           .pattern = "^[1-9][0-9]{0,3}[hdw]$"),
	                  API_C_STRING, SCHED, retention),
	        API_FIELD("template", &template, API_C_STRUCT, SCHED, template)),
};

#define SCHED_STATUS struct api_redis_scheduled_backup_status

static const struct api_schema scheduled_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("lastScheduleTime", DATE_TIME, API_C_STRING, SCHED_STATUS,
	                  last_schedule_time),
	        API_FIELD("nextScheduleTime", DATE_TIME, API_C_STRING, SCHED_STATUS,
	                  next_schedule_time),
	        API_FIELD("lastSuccessfulTime", DATE_TIME, API_C_STRING, SCHED_STATUS,
	                  last_successful_time),
	        API_FIELD("lastBackupName", STR(253), API_C_STRING, SCHED_STATUS, last_backup_name),
	        API_FIELD("observedGeneration",
	                  API_NODE(.type = API_INTEGER, .format = "int64", API_MIN(0)), API_C_INT,
	                  SCHED_STATUS, observed_generation),
	        API_LIST("conditions",
	                 API_NODE(.type = API_ARRAY, .max_items = 16, .list_type = "map",
	                          .list_map_keys = API_STRS("type"),
	                          .items = &api_condition_schema),
	                 SCHED_STATUS, conditions, n_conditions, API_C_STRUCT,
	                 struct api_condition)),
};

const struct api_schema api_redis_scheduled_backup_schema = {
	.type = API_OBJECT,
	.required = API_STRS("spec"),
	.props = API_PROPS(API_SKIP("apiVersion", API_NODE(.type = API_STRING)),
	                   API_SKIP("kind", API_NODE(.type = API_STRING)),
	                   API_SKIP("metadata", API_NODE(.type = API_OBJECT)),
	                   API_FIELD("spec", &scheduled_spec, API_C_STRUCT,
	                             struct api_redis_scheduled_backup, spec),
	                   API_FIELD("status", &scheduled_status, API_C_STRUCT,
	                             struct api_redis_scheduled_backup, status)),
};

/* --- decoding, validation, dumping ----------------------------------------------------------------- */

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

/* -EBADMSG (strict decoding refused the object) is an invalid object like any other. */
static int verdict(int rc)
{
	return rc == -EBADMSG ? -EINVAL : rc;
}

int api_redis_backup_validate(const struct api_redis_backup *obj,
                              const struct api_redis_backup *old, struct buf *errors)
{
	return verdict(
	        api_validate(&api_redis_backup_schema, obj->json, old ? old->json : NULL, errors));
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

int api_redis_scheduled_backup_validate(const struct api_redis_scheduled_backup *obj,
                                        const struct api_redis_scheduled_backup *old,
                                        struct buf *errors)
{
	return verdict(api_validate(&api_redis_scheduled_backup_schema, obj->json,
	                            old ? old->json : NULL, errors));
}

json_t *api_redis_scheduled_backup_dump(const struct api_redis_scheduled_backup *sb)
{
	json_t *d = api_schema_dump(&api_redis_scheduled_backup_schema, sb);

	json_object_set_new(d, "metadata", api_meta_dump(&sb->meta));
	json_object_set_new(json_object_get(d, "spec"), "retention (decoded ms)",
	                    json_integer(sb->spec.retention_ms));
	return d;
}

/*
 * meta: what the three redis.io/v1 kinds share: object metadata, Secret references,
 * status conditions, and the schema nodes their tables reuse.
 *
 * Metadata is not part of the CRDs' schemas (the API server checks it generically), so
 * api_meta_decode reads it with lib/jsonx: errors name the path ("metadata.name: expected
 * string, got integer"). Strings and JSON it returns are borrowed from the object.
 * Constant tables and pure functions: any thread.
 */
#ifndef REDIS_OPERATOR_API_META_H
#define REDIS_OPERATOR_API_META_H

#include <jansson.h>
#include <stdint.h>

#include "api/schema.h"
#include "lib/err.h"

#define API_GROUP         "redis.io"
#define API_VERSION       "v1"
#define API_GROUP_VERSION API_GROUP "/" API_VERSION /* "redis.io/v1" */

/* The metadata the controller needs. All borrowed; NULL (0) when absent. */
struct api_meta {
	const char *name;
	const char *namespace;
	const char *uid;
	const char *resource_version;
	const char *creation_timestamp;
	const char *deletion_timestamp; /* set: the object is being deleted */
	int64_t generation;
	json_t *labels;
	json_t *annotations;
};

/* {name: <Secret>} (the keys it holds are fixed per use; see config/README.md). */
struct api_secret_ref {
	const char *name; /* NULL when the reference is absent */
};

enum api_condition_status {
	API_CONDITION_TRUE = 1,
	API_CONDITION_FALSE,
	API_CONDITION_UNKNOWN,
};

struct api_condition {
	const char *type;
	enum api_condition_status status;
	int64_t observed_generation;
	const char *last_transition_time;
	const char *reason;
	const char *message;
};

/* Shared schema nodes: a Secret reference ({name}) and one status condition. */
extern const struct api_schema api_secret_ref_schema;
extern const struct api_schema api_condition_schema;

/*
 * Checks apiVersion and kind when present ("kind: Invalid value: \"Pod\": must be
 * RedisCluster"), then reads metadata into out. 0, or -EINVAL with e set; out is written
 * only on success.
 */
int api_meta_decode(json_t *obj, const char *kind, struct api_meta *out, struct err *e);
/* The metadata as JSON (for golden files); a new reference. */
json_t *api_meta_dump(const struct api_meta *m);

#endif

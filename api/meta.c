/*
 * meta: object metadata, Secret references and conditions shared by the kinds (see
 * meta.h). test_api_crd holds the schema nodes to the CRDs.
 */
#include "meta.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonx.h"

_Static_assert(sizeof(enum api_condition_status) == sizeof(int), "enums decode as int");

#define STRING API_NODE(.type = API_STRING)

const struct api_schema api_secret_ref_schema = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("name", STRING, API_C_STRING, struct api_secret_ref, name)),
};

const struct api_schema api_condition_schema = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("type", STRING, API_C_STRING, struct api_condition, type),
	        API_FIELD(
	                "status",
	                API_NODE(.type = API_STRING, .enums = API_STRS("True", "False", "Unknown")),
	                API_C_ENUM, struct api_condition, status),
	        API_FIELD("observedGeneration", API_NODE(.type = API_INTEGER), API_C_INT,
	                  struct api_condition, observed_generation),
	        API_FIELD("lastTransitionTime", STRING, API_C_STRING, struct api_condition,
	                  last_transition_time),
	        API_FIELD("reason", STRING, API_C_STRING, struct api_condition, reason),
	        API_FIELD("message", STRING, API_C_STRING, struct api_condition, message)),
};

/* ValidateTypeMeta's wording. */
static int check_type_meta(json_t *obj, const char *field, const char *want, struct err *e)
{
	json_t *v = json_object_get(obj, field);
	char *quoted;
	int rc;

	if (!v || (json_is_string(v) && strcmp(json_string_value(v), want) == 0))
		return 0;
	quoted = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
	rc = err_set(e, -EINVAL, "%s: Invalid value: %s: must be %s", field, quoted ? quoted : "?",
	             want);
	free(quoted);
	return rc;
}

int api_meta_decode(json_t *obj, const char *kind, struct api_meta *out, struct err *e)
{
	struct api_meta m = { 0 };
	json_t *meta = NULL;
	int rc;

	if (!json_is_object(obj))
		return err_set(e, -EINVAL, "expected a %s object, got %s", kind,
		               jsonx_type_name(obj));
	rc = check_type_meta(obj, "apiVersion", API_GROUP_VERSION, e);
	if (rc == 0)
		rc = check_type_meta(obj, "kind", kind, e);
	if (rc == 0)
		rc = jsonx_object(obj, "metadata", &meta, e);
	if (rc == 0)
		rc = jsonx_string(obj, "metadata.name", NULL, &m.name, e);
	if (rc == 0)
		rc = jsonx_string(obj, "metadata.namespace", NULL, &m.namespace, e);
	if (rc == 0)
		rc = jsonx_string(obj, "metadata.uid", NULL, &m.uid, e);
	if (rc == 0)
		rc = jsonx_string(obj, "metadata.resourceVersion", NULL, &m.resource_version, e);
	if (rc == 0)
		rc = jsonx_string(obj, "metadata.creationTimestamp", NULL, &m.creation_timestamp,
		                  e);
	if (rc == 0)
		rc = jsonx_string(obj, "metadata.deletionTimestamp", NULL, &m.deletion_timestamp,
		                  e);
	if (rc == 0)
		rc = jsonx_int(obj, "metadata.generation", INT64_MIN, INT64_MAX, 0, &m.generation,
		               e);
	if (rc == 0)
		rc = jsonx_object(obj, "metadata.labels", &m.labels, e);
	if (rc == 0)
		rc = jsonx_object(obj, "metadata.annotations", &m.annotations, e);
	if (rc == 0)
		*out = m;
	return rc;
}

json_t *api_meta_dump(const struct api_meta *m)
{
	return json_pack("{s:s?,s:s?,s:s?,s:s?,s:s?,s:s?,s:I,s:O?,s:O?}", "name", m->name,
	                 "namespace", m->namespace, "uid", m->uid, "resourceVersion",
	                 m->resource_version, "creationTimestamp", m->creation_timestamp,
	                 "deletionTimestamp", m->deletion_timestamp, "generation",
	                 (json_int_t)m->generation, "labels", m->labels, "annotations",
	                 m->annotations);
}

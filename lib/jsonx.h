/*
 * jsonx: jansson helpers whose errors name the JSON path.
 *
 *   const char *size;
 *   int64_t n;
 *   if (jsonx_string(spec, "storage.size", "1Gi", &size, e) < 0 ||
 *       jsonx_int(spec, "instances", 1, 64, 1, &n, e) < 0)
 *           return e->code;   e->msg: "storage.size: expected string, got integer"
 *
 * Paths: keys separated by '.', array indices as [N]: "spec.users[0].name". A key that
 * contains '.', '[' or ']' (annotations, labels) is written in brackets and double
 * quotes, with \" and \\ as its only escapes: metadata.annotations["redis.io/hash"].
 * The empty path names the root itself. A malformed path is -EINVAL (a caller's bug).
 *
 * Getters: absent → the default (0). JSON null counts as absent, as Kubernetes reads it.
 * The _req variants return -ENOENT instead. A value of the wrong type is -EINVAL
 * ("<path>: expected string, got integer"), so is an intermediate that is neither
 * absent nor of the type the path needs ("spec: expected object, got string"); an
 * integer outside [min, max] is -ERANGE ("<path>: 70 is out of range [1, 64]").
 * Reals are not integers. Outputs are written only on success.
 *
 * Ownership follows jansson: getters borrow (valid while root lives and is unchanged);
 * jsonx_set_path steals the value. Strings come from x-allocators (free()).
 * Thread-safety: as jansson, one json_t tree per thread at a time.
 */
#ifndef REDIS_OPERATOR_JSONX_H
#define REDIS_OPERATOR_JSONX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* The value at path (borrowed), or NULL when absent, not reachable or the path is malformed. */
json_t *jsonx_get(json_t *root, const char *path);

/* The string at path (borrowed), or NULL when absent, not a string or not reachable. */
const char *jsonx_get_string(json_t *root, const char *path);

/*
 * True when every field of want is in have with an equal value: objects key by key
 * (have may hold more keys), arrays element by element (same length), scalars equal
 * (integers and integral reals compare by value); a NULL want is contained in anything,
 * a JSON null in an absent value. For writers that own some fields of an object and
 * compare only those (the controller's children: fields the API server defaults cause
 * no churn).
 */
bool jsonx_contains(json_t *have, json_t *want);

/* "object", "array", "string", "integer", "real", "boolean", "null"; "absent" for NULL. */
const char *jsonx_type_name(const json_t *j);

/* The first object of array arr whose string member key equals value (borrowed), or
 * NULL: a condition by its type, an entry by its name. */
json_t *jsonx_find(json_t *arr, const char *key, const char *value);

/* Every key of object j is one of fields (NULL-terminated); else -EINVAL
 * "<prefix><key>: unknown field" for the first other key. */
int jsonx_only_fields(json_t *j, const char *prefix, const char *const *fields, struct err *e);

/* Typed getters (see the header comment). */
int jsonx_string(json_t *root, const char *path, const char *def, const char **out, struct err *e);
int jsonx_int(json_t *root, const char *path, int64_t min, int64_t max, int64_t def, int64_t *out,
              struct err *e);
int jsonx_bool(json_t *root, const char *path, bool def, bool *out, struct err *e);
/* Absent → *out = NULL (json_object_foreach and json_array_size accept NULL). */
int jsonx_object(json_t *root, const char *path, json_t **out, struct err *e);
int jsonx_array(json_t *root, const char *path, json_t **out, struct err *e);

/* Required: absent (or null) → -ENOENT "<path>: required". */
int jsonx_string_req(json_t *root, const char *path, const char **out, struct err *e);
int jsonx_int_req(json_t *root, const char *path, int64_t min, int64_t max, int64_t *out,
                  struct err *e);
int jsonx_bool_req(json_t *root, const char *path, bool *out, struct err *e);
int jsonx_object_req(json_t *root, const char *path, json_t **out, struct err *e);
int jsonx_array_req(json_t *root, const char *path, json_t **out, struct err *e);

/*
 * Sets the value at path (stolen, also on failure), creating what is missing on the way:
 * an object before a key, an array before an index (null counts as missing). An index
 * may address an element or append (N == size). 0; -EINVAL for a malformed or empty
 * path, or an intermediate of the wrong type (never overwritten); -ERANGE for N > size.
 * After a failure, empty containers created on the way may remain.
 */
int jsonx_set_path(json_t *root, const char *path, json_t *value_stolen);

/* Compact text with sorted keys, for hashing and golden files. Never NULL ("null" for
 * NULL); free() it. */
char *jsonx_dumps_compact(const json_t *j);

/*
 * Parses len bytes (an object or array at the top, nothing after it). 0, or -EMSGSIZE
 * (len > max_len), -EPROTO (a NUL byte, malformed JSON with "line L, column C: ...",
 * duplicate keys). *out is a new reference.
 */
int jsonx_loadb(const char *data, size_t len, size_t max_len, json_t **out, struct err *e);

#endif

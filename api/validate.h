/*
 * validate: the API server's verdict on a custom resource, computed from the schema
 * tables (api/schema.h) in the server's own order:
 *
 *   1. strict decoding: fields the schema does not know end validation at once
 *      (unknown field "spec.replicas"), as kubectl's default fieldValidation=Strict does;
 *   2. the OpenAPI schema (types, enums, patterns, lengths, bounds, int32/int64 ranges,
 *      item and property counts, required fields), metadata.name (the generic object
 *      check: an RFC 1123 subdomain), and duplicate keys in list-type maps;
 *   3. the CEL rules (x-kubernetes-validations), unless step 2 found a "blocking" error
 *      (Required value, Unsupported value, Too long, Too many, or a wrong type): then the
 *      server's line "<nil>: Invalid value: null: some validation rules were not checked
 *      because the object was invalid; ..." stands for them.
 *
 * Each error is one line of `errors` in the API server's words, as `kubectl` prints them
 * after "is invalid:" (field.Error.Error()):
 *   spec.instances: Invalid value: 0: spec.instances in body should be greater than or equal to 1
 *   spec: Invalid value: spec.tlsSecret and spec.caSecret must be set together; add ...
 * The order differs from the server's (it iterates Go maps); the set is the same.
 *
 * Updates (old != NULL) are validated with ratcheting, as the API server does since 1.33:
 * an error at a node is dropped when that node is unchanged from old, compared through
 * correlation (object keys, and list-type map items by their keys; items of other lists
 * have no old value of their own and follow their list). Transition rules (those using
 * oldSelf) and CEL run-time errors are never ratcheted; transition rules run only where an
 * old value correlates. Duplicate
 * list-map keys are checked only when old had none. metadata.name is checked on create
 * only (it is immutable).
 *
 * What is not reproduced: the root's status (the main endpoint drops status on create and
 * keeps the old one on update, so it is never validated there), metadata other than name
 * (generic ObjectMeta checks: labels, annotations, finalizers...), generateName, the
 * date-time format, and CEL cost limits. A CEL run-time error (duration() of a value
 * beyond int64 nanoseconds, an overflowing sum) is reported as the server does:
 * "<path>: Invalid value: \"string\": <error> evaluating rule: <message>".
 *
 * obj and old must be defaulted (api_schema_default) like the objects the server sees.
 * Pure over its arguments: any thread.
 */
#ifndef REDIS_OPERATOR_API_VALIDATE_H
#define REDIS_OPERATOR_API_VALIDATE_H

#include <jansson.h>

#include "api/schema.h"
#include "lib/buf.h"

/* The line that stands for the CEL rules when a blocking error stopped them. */
#define API_VALIDATE_NOT_CHECKED                                                                   \
	"<nil>: Invalid value: null: some validation rules were not checked because the "          \
	"object was invalid; correct the existing errors to complete validation"

/*
 * Validates resource obj against root (its openAPIV3Schema) as a create (old == NULL) or
 * an update of old; appends one line per error (with '\n') to errors, as many as its
 * limit holds. 0 when valid; -EINVAL with errors; -EBADMSG when step 1 refused unknown
 * fields (nothing else was checked, as on the server).
 */
int api_validate(const struct api_schema *root, json_t *obj, json_t *old, struct buf *errors);

/* Appends Go's fmt %v of a JSON value (strings bare, [a b], map[k:v]). */
void api_validate_go_value(const json_t *v, struct buf *out);

#endif

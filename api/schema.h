/*
 * schema: a CRD's openAPIV3Schema as a C table, and the table-driven work every kind
 * shares: schema defaulting, decoding into C structs, dumping them, releasing them.
 * Validation over the same tables is api/validate.h.
 *
 * One `struct api_schema` per schema node, with the keywords the CRDs use (type, format,
 * enum, pattern, lengths, bounds, items, properties, required, additionalProperties,
 * x-kubernetes-* list/map types, preserve-unknown-fields, default) and its CEL rules
 * (struct api_rule: the rule's CEL text and message verbatim from the CRD, plus the C
 * function that evaluates it). Each property (`struct api_prop`) also says where its value
 * goes in the kind's C struct: its C type and offsetof(). So one table is the decoder, the
 * validator and the list of field paths that test_api_crd compares with the CRD YAML,
 * keyword by keyword: a field, constraint, default or rule that exists on one side only
 * fails that test.
 *
 * Decoding (api_schema_decode) reads an object that api_schema_default already defaulted
 * and stores:
 *   API_C_STRING   const char *            borrowed from the JSON tree
 *   API_C_INT      int64_t                 (an integral real such as 3.0 counts)
 *   API_C_NUMBER   double
 *   API_C_BOOL     bool
 *   API_C_ENUM     an enum (int-sized)     1 + the value's index in the schema's enum
 *   API_C_DURATION struct api_duration     text and lib/parse milliseconds
 *   API_C_BYTES    struct api_quantity     text and lib/parse bytes
 *   API_C_STRUCT   a nested struct         decoded by the node's own props
 *   API_C_ARRAY    T * + size_t count      T per elem_ctype: STRING, NUMBER or STRUCT;
 *                                          allocated, freed by api_schema_release
 *   API_C_JSON     json_t *                the node itself, borrowed (pass-through)
 *   API_C_NONE     nothing                 (the kind decodes it another way)
 * Absent values (and JSON null) leave the member zero; a prop's optional flag_offset
 * names a bool set when the value is present. Decoding judges only shape: a JSON type the
 * member cannot hold, or an enum value outside the enum, fails with the API server's
 * wording, naming the path:
 *   spec.authSecret: Invalid value: "string": spec.authSecret in body must be of type object: "string"
 *   spec.mode: Unsupported value: "master": supported values: "standalone", "sentinel", "cluster"
 * Everything else (ranges, patterns, sizes, required fields, rules) is validation's.
 *
 * Tables are constant; functions are pure over their arguments: any thread.
 */
#ifndef REDIS_OPERATOR_API_SCHEMA_H
#define REDIS_OPERATOR_API_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/err.h"

enum api_type {
	API_OBJECT = 1,
	API_ARRAY,
	API_STRING,
	API_INTEGER,
	API_NUMBER,
	API_BOOLEAN,
	API_INT_OR_STRING, /* x-kubernetes-int-or-string with anyOf [integer, string] */
};

enum api_ctype {
	API_C_NONE = 0,
	API_C_STRING,
	API_C_INT,
	API_C_NUMBER,
	API_C_BOOL,
	API_C_ENUM,
	API_C_DURATION,
	API_C_BYTES,
	API_C_STRUCT,
	API_C_ARRAY,
	API_C_JSON,
};

/* A Go duration field: ms is -1 when text is not a duration (validation says why). */
struct api_duration {
	const char *text;
	int64_t ms;
};

/* A Kubernetes quantity: value in the unit its field documents (bytes, millicores);
 * valid is false when lib/parse refused text (validation says why). */
struct api_quantity {
	const char *text;
	uint64_t value;
	bool valid;
};

/*
 * One x-kubernetes-validations entry. holds() evaluates the rule on self (and, for a
 * transition rule, oldSelf; the rule does not run where no old value correlates). A rule
 * whose CEL can fail at run time (duration() of an out-of-range value, an overflowing
 * sum) has eval() instead: 1 holds, 0 does not, -1 CEL stops with the error text *why
 * (the server then reports "<why> evaluating rule: <message>"). format() renders a
 * messageExpression.
 */
struct api_rule {
	const char *rule;               /* the CEL text, verbatim from the CRD */
	const char *message;            /* verbatim */
	const char *message_expression; /* verbatim, or NULL */
	const char *field_path;         /* ".instances", or NULL */
	const char *reason;             /* "FieldValueForbidden"..., or NULL (Invalid) */
	bool (*holds)(json_t *self, json_t *old_self);
	int (*eval)(json_t *self, json_t *old_self, const char **why);
	void (*format)(json_t *self, json_t *old_self, struct buf *out);
};

struct api_schema;

/* One property of an object node, and where it goes in the C struct. */
struct api_prop {
	const char *name;
	const struct api_schema *schema;
	enum api_ctype ctype;
	size_t offset;             /* of the member; API_NO_OFFSET for API_C_NONE */
	size_t flag_offset;        /* bool "present", or API_NO_OFFSET */
	size_t count_offset;       /* API_C_ARRAY: the size_t count */
	enum api_ctype elem_ctype; /* API_C_ARRAY: API_C_STRING, API_C_NUMBER or API_C_STRUCT */
	size_t elem_size;          /* API_C_ARRAY */
};

#define API_NO_OFFSET SIZE_MAX

struct api_schema {
	enum api_type type;
	const char *format;             /* "int32", "int64", "date-time" */
	const char *const *enums;       /* NULL-terminated */
	const char *pattern;            /* RE2 syntax, as in the CRD */
	int64_t min_length, max_length; /* 0: none */
	bool has_minimum, has_maximum;
	int64_t minimum, maximum;
	int64_t min_items, max_items;     /* 0: none */
	int64_t max_properties;           /* 0: none */
	const char *list_type;            /* x-kubernetes-list-type */
	const char *const *list_map_keys; /* x-kubernetes-list-map-keys */
	const char *map_type;             /* x-kubernetes-map-type */
	bool preserve_unknown;            /* x-kubernetes-preserve-unknown-fields */
	const char *const *required;
	const struct api_prop *props; /* properties; NULL name ends them */
	const struct api_schema *items;
	const struct api_schema *values; /* additionalProperties */
	const char *default_json;        /* the default, as JSON text */
	const struct api_rule *rules;    /* NULL rule ends them */
};

/* Table-writing helpers (file-scope compound literals are static and constant). */
#define API_STRS(...)  ((const char *const[]){ __VA_ARGS__, NULL })
#define API_PROPS(...) ((const struct api_prop[]){ __VA_ARGS__, { NULL } })
#define API_RULES(...) ((const struct api_rule[]){ __VA_ARGS__, { NULL } })
#define API_NODE(...)  (&(const struct api_schema){ __VA_ARGS__ })
#define API_MIN(n)     .has_minimum = true, .minimum = (n)
#define API_MAX(n)     .has_maximum = true, .maximum = (n)
/* A property decoded into member m of struct T. */
#define API_FIELD(nm, sch, ct, T, m)                                                               \
	{                                                                                          \
		.name = (nm), .schema = (sch), .ctype = (ct), .offset = offsetof(T, m),            \
		.flag_offset = API_NO_OFFSET, .count_offset = API_NO_OFFSET                        \
	}
/* The same, with bool member f of T set when the value is present. */
#define API_FIELD_FLAG(nm, sch, ct, T, m, f)                                                       \
	{                                                                                          \
		.name = (nm), .schema = (sch), .ctype = (ct), .offset = offsetof(T, m),            \
		.flag_offset = offsetof(T, f), .count_offset = API_NO_OFFSET                       \
	}
/* An array into members m (ET *) and n (size_t) of struct T. */
#define API_LIST(nm, sch, T, m, n, ect, ET)                                                        \
	{                                                                                          \
		.name = (nm), .schema = (sch), .ctype = API_C_ARRAY, .offset = offsetof(T, m),     \
		.flag_offset = API_NO_OFFSET, .count_offset = offsetof(T, n), .elem_ctype = (ect), \
		.elem_size = sizeof(ET)                                                            \
	}
/* A property the table checks but does not decode into C. */
#define API_SKIP(nm, sch)                                                                          \
	{                                                                                          \
		.name = (nm), .schema = (sch), .ctype = API_C_NONE, .offset = API_NO_OFFSET,       \
		.flag_offset = API_NO_OFFSET, .count_offset = API_NO_OFFSET                        \
	}

/* The prop called name in s, or NULL. */
const struct api_prop *api_schema_prop(const struct api_schema *s, const char *name);

/*
 * Applies s's defaults to v in place, top-down, as the API server does when it decodes a
 * request or reads storage: a missing (or null) property with a default gets a copy of
 * it, a null property without one is removed, then children are defaulted (so a
 * defaulted {} gets its own properties' defaults).
 */
void api_schema_default(const struct api_schema *s, json_t *v);

/*
 * Decodes object v (already defaulted) into the C struct at out following s's props; path
 * is v's path for messages ("spec"). out must be zeroed by the caller. 0, or -EINVAL with
 * the message in e; on failure what was allocated is freed (api_schema_release).
 */
int api_schema_decode(const struct api_schema *s, json_t *v, const char *path, void *out,
                      struct err *e);
/* Frees the arrays api_schema_decode allocated in c (NULL-safe) and zeroes their counts. */
void api_schema_release(const struct api_schema *s, void *c);
/*
 * The decoded struct as JSON, for golden files: each prop under its name, enums by name,
 * durations as {"text", "ms"}, quantities as {"text", "value"} (value null when invalid),
 * pass-through JSON as is. A prop whose flag is false is written as "name (unset)": its
 * value, or null for a struct. A new reference.
 */
json_t *api_schema_dump(const struct api_schema *s, const void *c);

/* The name of enum value v of s (1-based, as decoded), or NULL. */
const char *api_schema_enum_name(const struct api_schema *s, int v);

/*
 * The API server's error line (kube-openapi's wording, no newline) when v's JSON type
 * does not fit s: appended to out, -EINVAL; 0 when it fits. path is kube-openapi's
 * ("spec.users[0].name", map values as "spec.redis.timeout").
 */
int api_schema_type_error(const struct api_schema *s, const json_t *v, const char *path,
                          struct buf *out);
/* The same for a value outside s's enum ("Unsupported value: ..."); 0 without an enum. */
int api_schema_enum_error(const struct api_schema *s, const json_t *v, const char *path,
                          struct buf *out);

/* Appends a field.Error bad value as the server prints it: strings quoted (Go %q),
 * numbers and booleans bare (Go %v), arrays and objects as compact JSON, sorted keys. */
void api_schema_bad_value(const json_t *v, struct buf *out);

/* The API server's JSON type name of v: "object", "array", "string", "integer", "number",
 * "boolean" or "null" (an integral real counts as "number"). */
const char *api_schema_json_type(const json_t *v);

#endif

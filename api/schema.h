/*
 * schema: the decoder's field table of a kind, and the table-driven work every kind
 * shares: defaulting, decoding into C structs, dumping them, releasing them.
 *
 * Validation is not here: the API server enforces the CRD (config/crd/bases), and the
 * controller and the instance manager only ever read objects it has accepted. So a node
 * holds what decoding needs and nothing else: its JSON type, its enum (decoded to a C
 * enum), its default, its properties, items and additionalProperties, and where each
 * property goes in the kind's C struct (its C type and offsetof()). test_api_crd walks the
 * tables in step with the CRD YAML: a property, type, enum or default on one side only
 * fails that test, so the table cannot drift from the CRD.
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
 * Absent values (and JSON null) leave the member zero; a prop's optional flag_offset
 * names a bool set when the value is present. Decoding judges only shape: a JSON type the
 * member cannot hold, or an enum value outside the enum, fails naming the path:
 *   spec.authSecret: expected object, got string
 *   spec.mode: Unsupported value: "master": supported values: "standalone", "sentinel", "cluster"
 * A pass-through node (API_C_JSON) is handed on as the server stored it: the table need
 * not describe its inside, and neither defaults nor decodes there.
 *
 * Tables are constant; functions are pure over their arguments: any thread.
 */
#ifndef REDIS_OPERATOR_API_SCHEMA_H
#define REDIS_OPERATOR_API_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

enum api_type {
	API_OBJECT = 1,
	API_ARRAY,
	API_STRING,
	API_INTEGER,
	API_NUMBER,
	API_BOOLEAN,
};

enum api_ctype {
	API_C_STRING = 1,
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

/* A Go duration field: ms is -1 when lib/parse cannot read text. */
struct api_duration {
	const char *text;
	int64_t ms;
};

/* A Kubernetes quantity: value in the unit its field documents (bytes, millicores);
 * valid is false when lib/parse refused text. */
struct api_quantity {
	const char *text;
	uint64_t value;
	bool valid;
};

struct api_schema;

/* One property of an object node, and where it goes in the C struct. */
struct api_prop {
	const char *name;
	const struct api_schema *schema;
	enum api_ctype ctype;
	size_t offset;             /* of the member */
	size_t flag_offset;        /* bool "present", or API_NO_OFFSET */
	size_t count_offset;       /* API_C_ARRAY: the size_t count */
	enum api_ctype elem_ctype; /* API_C_ARRAY: API_C_STRING, API_C_NUMBER or API_C_STRUCT */
	size_t elem_size;          /* API_C_ARRAY */
};

#define API_NO_OFFSET SIZE_MAX

struct api_schema {
	enum api_type type;
	const char *const *enums;        /* NULL-terminated */
	const struct api_prop *props;    /* properties; NULL name ends them */
	const struct api_schema *items;  /* of an array */
	const struct api_schema *values; /* additionalProperties */
	const char *default_json;        /* the default, as JSON text */
};

/* Table-writing helpers (file-scope compound literals are static and constant). */
#define API_STRS(...)  ((const char *const[]){ __VA_ARGS__, NULL })
#define API_PROPS(...) ((const struct api_prop[]){ __VA_ARGS__, { NULL } })
#define API_NODE(...)  (&(const struct api_schema){ __VA_ARGS__ })
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

/* The prop called name in s, or NULL. */
const struct api_prop *api_schema_prop(const struct api_schema *s, const char *name);

/*
 * Applies s's defaults to v in place, top-down, as the API server does when it decodes a
 * request or reads storage: a missing (or null) property with a default gets a copy of
 * it, a null property without one is removed, then children are defaulted (so a
 * defaulted {} gets its own properties' defaults). Objects read from the API server are
 * defaulted already (this is then a no-op); the unit tests' YAML is not.
 */
void api_schema_default(const struct api_schema *s, json_t *v);

/*
 * Decodes object v (already defaulted) into the C struct at out following s's props; path
 * is v's path for messages ("" at the root). out must be zeroed by the caller. 0, or
 * -EINVAL with the message in e; on failure what was allocated is freed
 * (api_schema_release).
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

#endif

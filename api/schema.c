/*
 * schema: defaulting, decoding, dumping and releasing driven by the schema tables (see
 * schema.h).
 *
 * Decoding writes C members through offsets into the caller's struct; arrays are the only
 * memory it allocates, and it stores each array's pointer and count before filling it,
 * so api_schema_release can free a half-decoded struct after a failure.
 */
#include "schema.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "lib/parse.h"

const struct api_prop *api_schema_prop(const struct api_schema *s, const char *name)
{
	for (const struct api_prop *p = s ? s->props : NULL; p && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

const char *api_schema_enum_name(const struct api_schema *s, int v)
{
	for (int i = 0; s->enums && s->enums[i]; i++)
		if (i + 1 == v)
			return s->enums[i];
	return NULL;
}

/* --- defaulting ------------------------------------------------------------------------- */

static json_t *default_value(const struct api_schema *s)
{
	json_t *d;

	if (!s || !s->default_json)
		return NULL;
	d = json_loads(s->default_json, JSON_DECODE_ANY, NULL);
	assert(d); /* the tables' defaults are checked by test_api_crd */
	return d;
}

/* The schema of key k inside object schema s: a property's, or additionalProperties'. */
static const struct api_schema *child_schema(const struct api_schema *s, const char *k)
{
	const struct api_prop *p = api_schema_prop(s, k);

	return p ? p->schema : s->values;
}

static void default_object(const struct api_schema *s, json_t *v)
{
	const struct api_schema *cs;
	const char *k;
	json_t *x, *d;
	void *tmp;

	for (const struct api_prop *p = s->props; p && p->name; p++) {
		x = json_object_get(v, p->name);
		if ((!x || json_is_null(x)) && (d = default_value(p->schema)))
			json_object_set_new(v, p->name, d);
	}
	json_object_foreach_safe (v, tmp, k, x) {
		cs = child_schema(s, k);
		if (cs && json_is_null(x))
			json_object_del(v, k); /* a null without a default: pruned */
		else if (cs)
			api_schema_default(cs, x);
	}
}

void api_schema_default(const struct api_schema *s, json_t *v)
{
	size_t i;
	json_t *x;

	if (!s)
		return;
	if (json_is_object(v)) {
		default_object(s, v);
		return;
	}
	json_array_foreach (v, i, x) {
		api_schema_default(s->items, x);
	}
}

/* --- shape checks -------------------------------------------------------------------------- */

static const char *const type_names[] = {
	[API_OBJECT] = "object",   [API_ARRAY] = "array",   [API_STRING] = "string",
	[API_INTEGER] = "integer", [API_NUMBER] = "number", [API_BOOLEAN] = "boolean",
};

/* Whether v's JSON type fits s: an integral real counts as an integer (kubectl and YAML
 * tools may send 3.0), an integer as a number. */
static bool type_fits(const struct api_schema *s, const json_t *v)
{
	double d;

	switch (s->type) {
	case API_OBJECT: return json_is_object(v);
	case API_ARRAY: return json_is_array(v);
	case API_STRING: return json_is_string(v);
	case API_NUMBER: return json_is_number(v);
	case API_BOOLEAN: return json_is_boolean(v);
	case API_INTEGER:
		d = json_is_real(v) ? json_real_value(v) : 0.5;
		return json_is_integer(v) || (d > -9e18 && d < 9e18 && d == (double)(int64_t)d);
	default: return false;
	}
}

static int type_error(const struct api_schema *s, const json_t *v, const char *path, struct err *e)
{
	if (type_fits(s, v))
		return 0;
	return err_set(e, -EINVAL, "%s: expected %s, got %s", *path ? path : "(root)",
	               type_names[s->type], jsonx_type_name(v));
}

/* "spec.mode: Unsupported value: "master": supported values: "standalone", ..." */
static int enum_error(const struct api_schema *s, const json_t *v, const char *path, struct err *e)
{
	struct buf msg = BUF_INIT(BUF_NO_LIMIT);
	const char *str = json_string_value(v);
	char *quoted;
	int rc;

	if (!s->enums)
		return 0;
	for (size_t i = 0; str && s->enums[i]; i++)
		if (strcmp(s->enums[i], str) == 0)
			return 0;
	quoted = json_dumps(v, JSON_ENCODE_ANY);
	buf_printf(&msg, "%s: Unsupported value: %s: supported values: ", path,
	           quoted ? quoted : "?");
	free(quoted);
	for (size_t i = 0; s->enums[i]; i++)
		buf_printf(&msg, "%s\"%s\"", i ? ", " : "", s->enums[i]);
	rc = err_set(e, -EINVAL, "%s", buf_cstr(&msg));
	buf_release(&msg);
	return rc;
}

/* --- decoding ----------------------------------------------------------------------------- */

struct decoder {
	struct buf path;
	struct err *e;
};

static int decode_object(const struct api_schema *s, json_t *v, void *out, struct decoder *d);

static size_t path_push_key(struct buf *path, const char *key)
{
	size_t len = path->len;

	buf_printf(path, "%s%s", len ? "." : "", key);
	return len;
}

static size_t path_push_index(struct buf *path, size_t i)
{
	size_t len = path->len;

	buf_printf(path, "[%zu]", i);
	return len;
}

static void path_pop(struct buf *path, size_t len)
{
	path->len = len;
	if (path->data)
		path->data[len] = '\0';
}

static void decode_scalar(enum api_ctype ct, const json_t *v, void *dst)
{
	const char *str = json_string_value(v);
	int64_t i;
	double n;
	bool b;

	switch (ct) {
	case API_C_STRING: memcpy(dst, &str, sizeof(str)); break;
	case API_C_INT:
		i = json_is_integer(v) ? (int64_t)json_integer_value(v)
		                       : (int64_t)json_real_value(v);
		memcpy(dst, &i, sizeof(i));
		break;
	case API_C_NUMBER:
		n = json_number_value(v);
		memcpy(dst, &n, sizeof(n));
		break;
	case API_C_BOOL:
		b = json_is_true(v);
		memcpy(dst, &b, sizeof(b));
		break;
	case API_C_DURATION: {
		struct api_duration dur = { str, -1 };

		if (parse_duration_ms(str, &dur.ms, NULL) < 0)
			dur.ms = -1;
		memcpy(dst, &dur, sizeof(dur));
		break;
	}
	case API_C_BYTES: {
		struct api_quantity q = { str, 0, false };

		q.valid = parse_quantity_bytes(str, &q.value, NULL) == 0;
		memcpy(dst, &q, sizeof(q));
		break;
	}
	default: break;
	}
}

static int decode_enum(const struct api_schema *s, const json_t *v, void *dst, struct decoder *d)
{
	const char *str = json_string_value(v);
	int rc = enum_error(s, v, buf_cstr(&d->path), d->e);

	for (int i = 0; rc == 0 && s->enums && s->enums[i]; i++) {
		if (strcmp(s->enums[i], str) == 0) {
			int e = i + 1;

			memcpy(dst, &e, sizeof(e));
		}
	}
	return rc;
}

static int decode_array(const struct api_prop *p, json_t *v, void *dst, struct decoder *d)
{
	size_t n = json_array_size(v), len;
	char *items = n ? xcalloc(n, p->elem_size) : NULL;
	const struct api_schema *is = p->schema->items;
	int rc = 0;

	memcpy(dst, &items, sizeof(items));
	memcpy((char *)dst - p->offset + p->count_offset, &n, sizeof(n));
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *x = json_array_get(v, i);

		len = path_push_index(&d->path, i);
		rc = type_error(is, x, buf_cstr(&d->path), d->e);
		if (rc == 0 && p->elem_ctype == API_C_STRUCT)
			rc = decode_object(is, x, items + i * p->elem_size, d);
		else if (rc == 0)
			decode_scalar(p->elem_ctype, x, items + i * p->elem_size);
		path_pop(&d->path, len);
	}
	return rc;
}

static int decode_prop(const struct api_prop *p, json_t *v, void *dst, struct decoder *d)
{
	int rc = type_error(p->schema, v, buf_cstr(&d->path), d->e);

	if (rc)
		return rc;
	switch (p->ctype) {
	case API_C_ENUM: return decode_enum(p->schema, v, dst, d);
	case API_C_STRUCT: return decode_object(p->schema, v, dst, d);
	case API_C_ARRAY: return decode_array(p, v, dst, d);
	case API_C_JSON: memcpy(dst, &v, sizeof(json_t *)); return 0;
	default: decode_scalar(p->ctype, v, dst); return 0;
	}
}

static int decode_object(const struct api_schema *s, json_t *v, void *out, struct decoder *d)
{
	bool present = true;
	size_t len;
	json_t *x;
	int rc;

	for (const struct api_prop *p = s->props; p && p->name; p++) {
		x = json_object_get(v, p->name);
		if (!x || json_is_null(x))
			continue;
		len = path_push_key(&d->path, p->name);
		rc = decode_prop(p, x, (char *)out + p->offset, d);
		path_pop(&d->path, len);
		if (rc)
			return rc;
		if (p->flag_offset != API_NO_OFFSET)
			memcpy((char *)out + p->flag_offset, &present, sizeof(present));
	}
	return 0;
}

int api_schema_decode(const struct api_schema *s, json_t *v, const char *path, void *out,
                      struct err *e)
{
	struct decoder d = { BUF_INIT(BUF_NO_LIMIT), e };
	int rc;

	buf_append_str(&d.path, path);
	rc = type_error(s, v, buf_cstr(&d.path), e);
	if (rc == 0)
		rc = decode_object(s, v, out, &d);
	buf_release(&d.path);
	if (rc)
		api_schema_release(s, out);
	return rc;
}

void api_schema_release(const struct api_schema *s, void *c)
{
	char *base = c, *items;
	size_t n;

	for (const struct api_prop *p = s && c ? s->props : NULL; p && p->name; p++) {
		if (p->ctype == API_C_STRUCT)
			api_schema_release(p->schema, base + p->offset);
		if (p->ctype != API_C_ARRAY)
			continue;
		memcpy(&items, base + p->offset, sizeof(items));
		memcpy(&n, base + p->count_offset, sizeof(n));
		for (size_t i = 0; items && p->elem_ctype == API_C_STRUCT && i < n; i++)
			api_schema_release(p->schema->items, items + i * p->elem_size);
		free(items);
		items = NULL;
		memcpy(base + p->offset, &items, sizeof(items));
		memset(base + p->count_offset, 0, sizeof(n));
	}
}

/* --- dumping ------------------------------------------------------------------------------ */

static json_t *dump_scalar(const struct api_schema *s, enum api_ctype ct, const void *src)
{
	const char *str;
	int64_t i;
	double n;
	bool b;
	int e;

	switch (ct) {
	case API_C_STRING:
		memcpy(&str, src, sizeof(str));
		return str ? json_string(str) : json_null();
	case API_C_INT: memcpy(&i, src, sizeof(i)); return json_integer(i);
	case API_C_NUMBER: memcpy(&n, src, sizeof(n)); return json_real(n);
	case API_C_BOOL: memcpy(&b, src, sizeof(b)); return json_boolean(b);
	case API_C_ENUM:
		memcpy(&e, src, sizeof(e));
		str = api_schema_enum_name(s, e);
		return str ? json_string(str) : json_null();
	case API_C_DURATION: {
		struct api_duration d;

		memcpy(&d, src, sizeof(d));
		return json_pack("{s:s?,s:I}", "text", d.text, "ms", (json_int_t)d.ms);
	}
	case API_C_BYTES: {
		struct api_quantity q;

		memcpy(&q, src, sizeof(q));
		return json_pack("{s:s?,s:o}", "text", q.text, "value",
		                 q.valid ? json_integer((json_int_t)q.value) : json_null());
	}
	default: return json_null();
	}
}

static json_t *dump_array(const struct api_prop *p, const void *src)
{
	json_t *a = json_array();
	const char *items;
	size_t n;

	memcpy(&items, src, sizeof(items));
	memcpy(&n, (const char *)src - p->offset + p->count_offset, sizeof(n));
	for (size_t i = 0; i < n; i++) {
		const void *x = items + i * p->elem_size;

		json_array_append_new(a, p->elem_ctype == API_C_STRUCT
		                                 ? api_schema_dump(p->schema->items, x)
		                                 : dump_scalar(p->schema->items, p->elem_ctype, x));
	}
	return a;
}

static json_t *dump_prop(const struct api_prop *p, const void *src, bool present)
{
	json_t *j;

	switch (p->ctype) {
	case API_C_STRUCT: return present ? api_schema_dump(p->schema, src) : json_null();
	case API_C_ARRAY: return dump_array(p, src);
	case API_C_JSON: memcpy(&j, src, sizeof(json_t *)); return j ? json_incref(j) : json_null();
	default: return dump_scalar(p->schema, p->ctype, src);
	}
}

json_t *api_schema_dump(const struct api_schema *s, const void *c)
{
	const char *base = c;
	json_t *obj = json_object();
	bool present = true;
	char key[128];

	for (const struct api_prop *p = s->props; p && p->name; p++) {
		if (p->flag_offset != API_NO_OFFSET)
			memcpy(&present, base + p->flag_offset, sizeof(present));
		snprintf(key, sizeof(key), present ? "%s" : "%s (unset)", p->name);
		json_object_set_new(obj, key, dump_prop(p, base + p->offset, present));
		present = true;
	}
	return obj;
}

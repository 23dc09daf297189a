/*
 * validate: strict decoding, OpenAPI validation, list-map duplicates and CEL rules over
 * the schema tables, with ratcheting (see validate.h). Each step mirrors its counterpart
 * in k8s.io/apiextensions-apiserver v0.37 (pruning, the kube-openapi validators,
 * listtype, schema/cel) and k8s.io/apiserver's CorrelatedObject.
 *
 * The walkers carry two spellings of the current path, because the server uses both:
 * kube-openapi's ("spec.redis.timeout", map keys after a dot) for schema errors and
 * unknown fields, field.Path's ("spec.redis[timeout]") for rules and duplicates.
 * Ratcheting state travels down as (old, unchanged): old is the correlated old value or
 * NULL, unchanged is "this node, or its nearest correlated ancestor, equals its old value".
 */
#include "validate.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "api/cel.h"
#include "lib/alloc.h"

#define NAME_MAX_LEN      253
#define DNS1123_SUBDOMAIN "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

struct walker {
	struct buf *out;
	struct buf line;  /* the error being written */
	struct buf opath; /* kube-openapi's path */
	struct buf fpath; /* field.Path's */
	bool blocking;    /* a blocking schema error was reported */
	size_t errors;    /* lines written (or that would have been) */
	bool emit;        /* false: count duplicates without writing them */
};

struct mark {
	size_t o, f;
};

static void cut(struct buf *b, size_t len)
{
	b->len = len;
	if (b->data)
		b->data[len] = '\0';
}

static struct mark push_prop(struct walker *w, const char *name)
{
	struct mark m = { w->opath.len, w->fpath.len };

	buf_printf(&w->opath, "%s%s", m.o ? "." : "", name);
	buf_printf(&w->fpath, "%s%s", m.f ? "." : "", name);
	return m;
}

static struct mark push_key(struct walker *w, const char *key)
{
	struct mark m = { w->opath.len, w->fpath.len };

	buf_printf(&w->opath, "%s%s", m.o ? "." : "", key);
	buf_printf(&w->fpath, "[%s]", key);
	return m;
}

static struct mark push_index(struct walker *w, size_t i)
{
	struct mark m = { w->opath.len, w->fpath.len };

	buf_printf(&w->opath, "[%zu]", i);
	buf_printf(&w->fpath, "[%zu]", i);
	return m;
}

static void pop(struct walker *w, struct mark m)
{
	cut(&w->opath, m.o);
	cut(&w->fpath, m.f);
}

/* Starts an error line (the caller fills w->line), then end_line() writes it. */
static struct buf *begin_line(struct walker *w)
{
	buf_clear(&w->line);
	return &w->line;
}

static void end_line(struct walker *w, bool blocking)
{
	w->errors++;
	w->blocking |= blocking;
	if (!w->emit)
		return;
	if (buf_append(w->out, w->line.data ? w->line.data : "", w->line.len) == 0)
		buf_append_char(w->out, '\n');
}

__attribute__((format(printf, 3, 4))) static void report(struct walker *w, bool blocking,
                                                         const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	buf_vprintf(begin_line(w), fmt, ap);
	va_end(ap);
	end_line(w, blocking);
}

/* --- correlation (CorrelatedObject) -------------------------------------------------------- */

static json_t *old_key(json_t *old, const char *k)
{
	return json_is_object(old) ? json_object_get(old, k) : NULL;
}

static bool scalar_key(json_t *item, const char *k, json_t **out)
{
	*out = json_object_get(item, k);
	return *out && (json_is_string(*out) || json_is_number(*out) || json_is_boolean(*out));
}

/* The old item of a list-type map with the same keys as item (the first one), or NULL. */
static json_t *old_item(const struct api_schema *s, json_t *old, json_t *item)
{
	size_t i;
	json_t *o, *a, *b;
	bool same;

	if (!s->list_type || strcmp(s->list_type, "map") != 0 || !json_is_array(old) ||
	    !json_is_object(item))
		return NULL;
	json_array_foreach (old, i, o) {
		same = json_is_object(o);
		for (size_t k = 0; same && s->list_map_keys[k]; k++)
			same = scalar_key(item, s->list_map_keys[k], &a) &&
			       scalar_key(o, s->list_map_keys[k], &b) && json_equal(a, b);
		if (same)
			return o;
	}
	return NULL;
}

static bool unchanged_child(json_t *v, json_t *old, bool parent_unchanged)
{
	return old ? json_equal(v, old) : parent_unchanged;
}

/* --- step 1: strict decoding (pruning) ------------------------------------------------------- */

struct unknown {
	char **paths;
	size_t n;
};

static void record_unknown(struct unknown *u, const struct buf *path, const char *k)
{
	u->paths = xreallocarray(u->paths, u->n + 1, sizeof(*u->paths));
	u->paths[u->n++] = xasprintf("%s%s%s", buf_cstr(path), path->len ? "." : "", k);
}

static bool is_meta_field(const char *k)
{
	return !strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata");
}

static void prune(const struct api_schema *s, json_t *v, struct buf *path, struct unknown *u,
                  bool root);

static void prune_child(const struct api_schema *s, json_t *v, struct buf *path, struct unknown *u,
                        const char *k, size_t i)
{
	size_t len = path->len;

	if (k)
		buf_printf(path, "%s%s", len ? "." : "", k);
	else
		buf_printf(path, "[%zu]", i);
	prune(s, v, path, u, false);
	cut(path, len);
}

/* skipPrune: below x-kubernetes-preserve-unknown-fields, only known children are pruned. */
static void prune_preserved(const struct api_schema *s, json_t *v, struct buf *path,
                            struct unknown *u)
{
	const struct api_prop *p;
	const char *k;
	size_t i;
	json_t *x;

	if (!s)
		return;
	json_object_foreach (v, k, x) {
		p = api_schema_prop(s, k);
		if (p || s->values)
			prune_child(p ? p->schema : s->values, x, path, u, k, 0);
	}
	json_array_foreach (v, i, x) {
		size_t len = path->len;

		buf_printf(path, "[%zu]", i);
		prune_preserved(s->items, x, path, u);
		cut(path, len);
	}
}

static void prune(const struct api_schema *s, json_t *v, struct buf *path, struct unknown *u,
                  bool root)
{
	const struct api_prop *p;
	const char *k;
	size_t i;
	json_t *x;

	if (s && s->preserve_unknown) {
		prune_preserved(s, v, path, u);
		return;
	}
	json_object_foreach (v, k, x) {
		p = api_schema_prop(s, k);
		if (root && is_meta_field(k))
			continue;
		if (s && (p || s->values))
			prune_child(p ? p->schema : s->values, x, path, u, k, 0);
		else
			record_unknown(u, path, k);
	}
	json_array_foreach (v, i, x) {
		prune_child(s ? s->items : NULL, x, path, u, NULL, i);
	}
}

static int cmp_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool unknown_fields(struct walker *w, const struct api_schema *root, json_t *obj)
{
	struct buf path = BUF_INIT(BUF_NO_LIMIT);
	struct unknown u = { NULL, 0 };

	prune(root, obj, &path, &u, true);
	if (u.n)
		qsort(u.paths, u.n, sizeof(*u.paths), cmp_paths);
	for (size_t i = 0; i < u.n; i++) {
		report(w, true, "unknown field \"%s\"", u.paths[i]);
		free(u.paths[i]);
	}
	free(u.paths);
	buf_release(&path);
	return u.n > 0;
}

/* --- step 2: the OpenAPI schema -------------------------------------------------------------- */

static void check_node(struct walker *w, const struct api_schema *s, json_t *v, json_t *old,
                       bool unchanged, bool root);

static void check_string(struct walker *w, const struct api_schema *s, const char *str)
{
	const char *p = buf_cstr(&w->opath);
	struct buf *l;
	size_t n = api_cel_runes(str);

	if (s->max_length && (int64_t)n > s->max_length) {
		report(w, true, "%s: Too long: may not be more than %lld %s", p,
		       (long long)s->max_length, s->max_length == 1 ? "byte" : "bytes");
	} else if (s->min_length && (int64_t)n < s->min_length) {
		l = begin_line(w);
		buf_printf(l, "%s: Invalid value: ", p);
		api_cel_quote(str, l);
		buf_printf(l, ": %s in body should be at least %lld chars long", p,
		           (long long)s->min_length);
		end_line(w, false);
	} else if (s->pattern && api_cel_matches(s->pattern, str) != 1) {
		l = begin_line(w);
		buf_printf(l, "%s: Invalid value: ", p);
		api_cel_quote(str, l);
		buf_printf(l, ": %s in body should match '%s'", p, s->pattern);
		end_line(w, false);
	}
}

/* IsValueValidAgainstRange: an int32/int64 field must hold an integer of that size. */
static bool number_in_format(const struct api_schema *s, const json_t *v)
{
	bool int32 = s->format && strcmp(s->format, "int32") == 0;
	double d = json_number_value(v);
	int64_t i;

	if (s->type != API_INTEGER)
		return true;
	if (json_is_real(v)) {
		if (d != d || d < -9223372036854775808.0 || d >= 9223372036854775808.0 ||
		    d != (double)(int64_t)d)
			return false;
		i = (int64_t)d;
	} else {
		i = (int64_t)json_integer_value(v);
	}
	return !int32 || (i >= INT32_MIN && i <= INT32_MAX);
}

static void bound_error(struct walker *w, const json_t *v, const char *what, int64_t bound)
{
	struct buf *l = begin_line(w);
	const char *p = buf_cstr(&w->opath);

	buf_printf(l, "%s: Invalid value: ", p);
	api_schema_bad_value(v, l);
	buf_printf(l, ": %s in body should be %s ", p, what);
	if (json_is_real(v))
		api_cel_format_float((double)bound, l);
	else
		buf_printf(l, "%lld", (long long)bound);
	end_line(w, false);
}

static bool below(const json_t *v, int64_t bound)
{
	return json_is_real(v) ? json_real_value(v) < (double)bound
	                       : (int64_t)json_integer_value(v) < bound;
}

static bool above(const json_t *v, int64_t bound)
{
	return json_is_real(v) ? json_real_value(v) > (double)bound
	                       : (int64_t)json_integer_value(v) > bound;
}

static void check_number(struct walker *w, const struct api_schema *s, const json_t *v)
{
	if (!number_in_format(s, v))
		report(w, false,
		       "<nil>: Invalid value: \"\": Checked value must be of type integer with "
		       "format %s in %s",
		       s->format, buf_cstr(&w->opath));
	if (s->has_minimum && below(v, s->minimum))
		bound_error(w, v, "greater than or equal to", s->minimum);
	if (s->has_maximum && above(v, s->maximum))
		bound_error(w, v, "less than or equal to", s->maximum);
}

static void check_array(struct walker *w, const struct api_schema *s, json_t *v, json_t *old,
                        bool unchanged)
{
	size_t n = json_array_size(v), i;
	struct mark m;
	json_t *x, *o;

	if (s->min_items && (int64_t)n < s->min_items)
		report(w, false,
		       "%s: Invalid value: %zu: %s in body should have at least %lld items",
		       buf_cstr(&w->opath), n, buf_cstr(&w->opath), (long long)s->min_items);
	if (s->max_items && (int64_t)n > s->max_items)
		report(w, true, "%s: Too many: %zu: must have at most %lld items",
		       buf_cstr(&w->opath), n, (long long)s->max_items);
	if (!s->items)
		return;
	json_array_foreach (v, i, x) {
		o = old_item(s, old, x);
		m = push_index(w, i);
		check_node(w, s->items, x, o, unchanged_child(x, o, unchanged), false);
		pop(w, m);
	}
}

static void check_object(struct walker *w, const struct api_schema *s, json_t *v, json_t *old,
                         bool unchanged, bool root)
{
	const struct api_prop *p;
	const char *k;
	struct mark m;
	json_t *x;

	if (s->max_properties && (int64_t)json_object_size(v) > s->max_properties)
		report(w, true, "%s: Too many: %zu: must have at most %lld items",
		       buf_cstr(&w->opath), json_object_size(v), (long long)s->max_properties);
	json_object_foreach (v, k, x) {
		p = api_schema_prop(s, k);
		if ((!p && !s->values) || (root && strcmp(k, "status") == 0))
			continue;
		m = p ? push_prop(w, k) : push_key(w, k);
		check_node(w, p ? p->schema : s->values, x, old_key(old, k),
		           unchanged_child(x, old_key(old, k), unchanged), false);
		pop(w, m);
	}
	for (size_t i = 0; s->required && s->required[i]; i++) {
		if (json_object_get(v, s->required[i]))
			continue;
		m = push_prop(w, s->required[i]);
		report(w, true, "%s: Required value", buf_cstr(&w->opath));
		pop(w, m);
	}
}

/* One node: the validators kube-openapi applies to the data's kind, in its order. */
static void check_node(struct walker *w, const struct api_schema *s, json_t *v, json_t *old,
                       bool unchanged, bool root)
{
	const char *p = buf_cstr(&w->opath);

	if (unchanged)
		return; /* ratcheted: errors of an unchanged node are dropped */
	if (api_schema_type_error(s, v, p, begin_line(w)))
		end_line(w, true);
	if (json_is_string(v))
		check_string(w, s, json_string_value(v));
	if (json_is_number(v))
		check_number(w, s, v);
	if (api_schema_enum_error(s, v, p, begin_line(w)))
		end_line(w, true);
	if (json_is_array(v) && s->type == API_ARRAY)
		check_array(w, s, v, old, unchanged);
	if (json_is_object(v) && s->type == API_OBJECT)
		check_object(w, s, v, old, unchanged, root);
}

/* ValidateObjectMeta's name check (create only; the name is immutable). */
static void check_name(struct walker *w, json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	const char *name = json_string_value(json_object_get(meta, "name"));
	struct buf *l;

	if (!name || !*name) {
		if (!json_string_value(json_object_get(meta, "generateName")))
			report(w, true,
			       "metadata.name: Required value: name or generateName is required");
		return;
	}
	if (strlen(name) > NAME_MAX_LEN) {
		l = begin_line(w);
		buf_append_str(l, "metadata.name: Invalid value: ");
		api_cel_quote(name, l);
		buf_printf(l, ": must be no more than %d characters", NAME_MAX_LEN);
		end_line(w, false);
	}
	if (api_cel_matches(DNS1123_SUBDOMAIN, name) != 1) {
		l = begin_line(w);
		buf_append_str(l, "metadata.name: Invalid value: ");
		api_cel_quote(name, l);
		buf_append_str(
		        l, ": a lowercase RFC 1123 subdomain must consist of lower case "
		           "alphanumeric characters, '-' or '.', and must start and end with "
		           "an alphanumeric character (e.g. 'example.com', regex used for "
		           "validation is "
		           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
		end_line(w, false);
	}
}

/* --- step 2b: list-type map keys (structurallisttype) ------------------------------------------ */

static void duplicates(struct walker *w, const struct api_schema *s, json_t *v, bool root);

/* The key of item i: an object of its key fields ({} when it has none). */
static json_t *map_key(const struct api_schema *s, json_t *item)
{
	json_t *key = json_object(), *x;

	for (size_t k = 0; s->list_map_keys && s->list_map_keys[k]; k++)
		if ((x = json_object_get(item, s->list_map_keys[k])))
			json_object_set(key, s->list_map_keys[k], x);
	return key;
}

static void map_duplicates(struct walker *w, const struct api_schema *s, json_t *v)
{
	size_t n = json_array_size(v);
	json_t **keys;
	struct mark m;
	size_t seen;

	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(v, i);

		if (json_is_null(x) || json_is_object(x))
			continue;
		m = push_index(w, i);
		buf_printf(begin_line(w), "%s: Invalid value: ", buf_cstr(&w->fpath));
		api_schema_bad_value(x, &w->line);
		buf_append_str(&w->line, ": must be an object for an array of list-type map");
		end_line(w, false);
		pop(w, m);
		return;
	}
	keys = xcalloc(n ? n : 1, sizeof(json_t *));
	for (size_t i = 0; i < n; i++) {
		keys[i] = map_key(s, json_array_get(v, i));
		seen = 0;
		for (size_t j = 0; j < i; j++)
			seen += json_equal(keys[j], keys[i]);
		if (seen != 1)
			continue; /* reported once, at the second occurrence */
		m = push_index(w, i);
		buf_printf(begin_line(w), "%s: Duplicate value: ", buf_cstr(&w->fpath));
		api_schema_bad_value(keys[i], &w->line);
		end_line(w, false);
		pop(w, m);
	}
	for (size_t i = 0; i < n; i++)
		json_decref(keys[i]);
	free(keys);
}

static void duplicates(struct walker *w, const struct api_schema *s, json_t *v, bool root)
{
	const struct api_prop *p;
	const char *k;
	struct mark m;
	size_t i;
	json_t *x;

	if (!s)
		return;
	if (json_is_array(v) && s->list_type && strcmp(s->list_type, "map") == 0)
		map_duplicates(w, s, v);
	json_array_foreach (v, i, x) {
		m = push_index(w, i);
		duplicates(w, s->items, x, false);
		pop(w, m);
	}
	json_object_foreach (v, k, x) {
		p = api_schema_prop(s, k);
		if ((!p && !s->values) || (root && strcmp(k, "status") == 0))
			continue;
		m = p ? push_prop(w, k) : push_key(w, k);
		duplicates(w, p ? p->schema : s->values, x, false);
		pop(w, m);
	}
}

/* --- step 3: CEL rules ------------------------------------------------------------------------ */

/* The field path of an error at the current node, or "<nil>" at the root. */
static void rule_path(struct walker *w, const char *field_path, struct buf *l)
{
	if (w->fpath.len || field_path)
		buf_printf(l, "%s%s%s", buf_cstr(&w->fpath), w->fpath.len && field_path ? "." : "",
		           field_path ? field_path + 1 : "");
	else
		buf_append_str(l, "<nil>");
}

static void rule_error(struct walker *w, const struct api_schema *s, const struct api_rule *r,
                       json_t *v, json_t *old)
{
	struct buf *l = begin_line(w);
	const char *reason = r->reason ? r->reason : "";

	rule_path(w, r->field_path, l);
	if (strcmp(reason, "FieldValueForbidden") == 0) {
		buf_append_str(l, ": Forbidden: ");
	} else if (strcmp(reason, "FieldValueRequired") == 0) {
		buf_append_str(l, ": Required value: ");
	} else {
		buf_append_str(l, ": Invalid value: ");
		if (s->type != API_OBJECT && s->type != API_ARRAY) {
			api_schema_bad_value(v, l);
			buf_append_str(l, ": ");
		}
	}
	if (r->format)
		r->format(v, old, l);
	else
		buf_append_str(l, r->message);
	end_line(w, false);
}

/* A rule CEL could not evaluate: reported at the node, never ratcheted. */
static void eval_error(struct walker *w, const struct api_schema *s, const struct api_rule *r,
                       const char *why)
{
	static const char *const names[] = {
		[API_OBJECT] = "object",   [API_ARRAY] = "array",   [API_STRING] = "string",
		[API_INTEGER] = "integer", [API_NUMBER] = "number", [API_BOOLEAN] = "boolean",
		[API_INT_OR_STRING] = "",
	};
	struct buf *l = begin_line(w);

	rule_path(w, NULL, l);
	buf_printf(l, ": Invalid value: \"%s\": %s evaluating rule: %s", names[s->type], why,
	           r->message);
	end_line(w, false);
}

static bool is_transition(const struct api_rule *r)
{
	return strstr(r->rule, "oldSelf") != NULL;
}

static void cel_node(struct walker *w, const struct api_schema *s, json_t *v, json_t *old,
                     bool unchanged, bool root)
{
	const struct api_prop *p;
	const char *k;
	struct mark m;
	json_t *x, *o;
	size_t i;

	if (!s || !v || json_is_null(v))
		return;
	for (const struct api_rule *r = s->rules; r && r->rule; r++) {
		bool transition = is_transition(r);
		const char *why = "";
		int verdict;

		if (transition && !old)
			continue;
		verdict = r->eval ? r->eval(v, old, &why) : r->holds(v, old);
		if (verdict < 0)
			eval_error(w, s, r, why);
		else if (verdict == 0 && !(unchanged && !transition))
			rule_error(w, s, r, v, old);
	}
	json_array_foreach (v, i, x) {
		o = old_item(s, old, x);
		m = push_index(w, i);
		cel_node(w, s->items, x, o, unchanged_child(x, o, unchanged), false);
		pop(w, m);
	}
	json_object_foreach (v, k, x) {
		p = api_schema_prop(s, k);
		if ((!p && !s->values) || (root && strcmp(k, "status") == 0))
			continue;
		m = p ? push_prop(w, k) : push_key(w, k);
		o = old_key(old, k);
		cel_node(w, p ? p->schema : s->values, x, o, unchanged_child(x, o, unchanged),
		         false);
		pop(w, m);
	}
}

/* --- the whole ------------------------------------------------------------------------------ */

static void walker_release(struct walker *w)
{
	buf_release(&w->line);
	buf_release(&w->opath);
	buf_release(&w->fpath);
}

/* Duplicate list-map keys, ratcheted as a whole: checked only when old had none. */
static void check_duplicates(struct walker *w, const struct api_schema *root, json_t *obj,
                             json_t *old)
{
	struct walker count = { w->out,
		                BUF_INIT(BUF_NO_LIMIT),
		                BUF_INIT(BUF_NO_LIMIT),
		                BUF_INIT(BUF_NO_LIMIT),
		                false,
		                0,
		                false };

	if (old)
		duplicates(&count, root, old, true);
	walker_release(&count);
	if (count.errors == 0)
		duplicates(w, root, obj, true);
}

int api_validate(const struct api_schema *root, json_t *obj, json_t *old, struct buf *errors)
{
	struct walker w = { errors,
		            BUF_INIT(BUF_NO_LIMIT),
		            BUF_INIT(BUF_NO_LIMIT),
		            BUF_INIT(BUF_NO_LIMIT),
		            false,
		            0,
		            true };
	bool unchanged = old && json_equal(obj, old);
	int rc = 0;

	if (unknown_fields(&w, root, obj)) {
		rc = -EBADMSG;
		goto out;
	}
	if (!old)
		check_name(&w, obj);
	check_node(&w, root, obj, old, unchanged, true);
	check_duplicates(&w, root, obj, old);
	if (w.blocking)
		report(&w, false, "%s", API_VALIDATE_NOT_CHECKED);
	else
		cel_node(&w, root, obj, old, unchanged, true);
	rc = w.errors ? -EINVAL : 0;
out:
	walker_release(&w);
	return rc;
}

/* --- Go's %v ------------------------------------------------------------------------------- */

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void api_validate_go_value(const json_t *v, struct buf *out)
{
	const char **keys, *k;
	size_t i, n = 0;
	json_t *x;

	switch (json_typeof(v)) {
	case JSON_STRING: buf_append_str(out, json_string_value(v)); return;
	case JSON_NULL: buf_append_str(out, "<nil>"); return;
	case JSON_ARRAY:
		buf_append_char(out, '[');
		json_array_foreach (v, i, x) {
			buf_append_str(out, i ? " " : "");
			api_validate_go_value(x, out);
		}
		buf_append_char(out, ']');
		return;
	case JSON_OBJECT:
		keys = xcalloc(json_object_size(v) + 1, sizeof(*keys));
		json_object_foreach ((json_t *)v, k, x) {
			keys[n++] = k;
		}
		qsort(keys, n, sizeof(*keys), cmp_keys);
		buf_append_str(out, "map[");
		for (i = 0; i < n; i++) {
			buf_printf(out, "%s%s:", i ? " " : "", keys[i]);
			api_validate_go_value(json_object_get(v, keys[i]), out);
		}
		buf_append_char(out, ']');
		free(keys);
		return;
	default: api_schema_bad_value(v, out); return;
	}
}

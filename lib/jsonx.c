/*
 * jsonx: path lookup, typed getters, containment, path setter, canonical dump and bounded
 * parse over jansson (see jsonx.h).
 *
 * A path is read one segment at a time by path_next(); a segment's key is copied into
 * the segment's buffer (unescaped), so lookups and the setter share one grammar.
 * Error messages quote paths, types and bounds, never values: values may be secrets.
 */
#include "jsonx.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/buf.h"

struct path_cursor {
	const char *path; /* the whole path, for error prefixes */
	const char *p;    /* next unread character */
};

struct path_seg {
	bool is_index;
	size_t index;
	struct buf key; /* the key, unescaped, when !is_index */
};

static const char *const type_names[] = {
	[JSON_OBJECT] = "object",   [JSON_ARRAY] = "array", [JSON_STRING] = "string",
	[JSON_INTEGER] = "integer", [JSON_REAL] = "real",   [JSON_TRUE] = "boolean",
	[JSON_FALSE] = "boolean",   [JSON_NULL] = "null",
};

const char *jsonx_type_name(const json_t *j)
{
	return j ? type_names[json_typeof(j)] : "absent";
}

/* How messages name a path: the root has no name of its own. */
static const char *path_name(const char *path)
{
	return path[0] ? path : "(root)";
}

/* --- path grammar ------------------------------------------------------------------------- */

static int parse_bare(struct path_cursor *c, struct path_seg *s)
{
	size_t n = strcspn(c->p, ".[]");

	if (n == 0)
		return -EINVAL;
	s->is_index = false;
	buf_clear(&s->key);
	buf_append(&s->key, c->p, n);
	c->p += n;
	return 1;
}

/* c->p is just past '["'. Reads up to the closing '"]'. */
static int parse_quoted(struct path_cursor *c, struct path_seg *s)
{
	const char *p = c->p;

	s->is_index = false;
	buf_clear(&s->key);
	for (; *p && *p != '"'; p++) {
		if (*p == '\\') {
			p++;
			if (*p != '"' && *p != '\\')
				return -EINVAL;
		}
		buf_append_char(&s->key, *p);
	}
	if (p[0] != '"' || p[1] != ']')
		return -EINVAL;
	c->p = p + 2;
	return 1;
}

/* c->p is just past '['. Reads decimal digits up to ']'. */
static int parse_index(struct path_cursor *c, struct path_seg *s)
{
	const char *p = c->p;
	size_t v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (SIZE_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (size_t)(*p - '0');
	}
	if (*p != ']')
		return -EINVAL;
	s->is_index = true;
	s->index = v;
	c->p = p + 1;
	return 1;
}

/* 1 with the next segment in s, 0 at the end of the path, -EINVAL when malformed. */
static int path_next(struct path_cursor *c, struct path_seg *s)
{
	if (*c->p == '\0')
		return 0;
	if (*c->p == '[') {
		c->p++;
		if (*c->p != '"')
			return parse_index(c, s);
		c->p++;
		return parse_quoted(c, s);
	}
	if (c->p == c->path)
		return parse_bare(c, s);
	if (*c->p != '.')
		return -EINVAL;
	c->p++;
	return parse_bare(c, s);
}

static void seg_init(struct path_seg *s)
{
	s->is_index = false;
	s->index = 0;
	buf_init(&s->key, BUF_NO_LIMIT);
}

static int path_check(const char *path)
{
	struct path_cursor c = { path, path };
	struct path_seg s;
	int r;

	seg_init(&s);
	while ((r = path_next(&c, &s)) > 0)
		;
	buf_release(&s.key);
	return r;
}

/* --- lookup ------------------------------------------------------------------------------- */

/* Moves *cur to its child named by s (NULL when absent). parent_len: length of cur's path. */
static int step(json_t **cur, const struct path_seg *s, const char *path, size_t parent_len,
                struct err *e)
{
	json_type want = s->is_index ? JSON_ARRAY : JSON_OBJECT;

	if (json_is_null(*cur)) {
		*cur = NULL;
		return 0;
	}
	if (json_typeof(*cur) != want && parent_len == 0)
		return err_set(e, -EINVAL, "(root): expected %s, got %s", type_names[want],
		               jsonx_type_name(*cur));
	if (json_typeof(*cur) != want)
		return err_set(e, -EINVAL, "%.*s: expected %s, got %s", (int)parent_len, path,
		               type_names[want], jsonx_type_name(*cur));
	if (s->is_index)
		*cur = json_array_get(*cur, s->index);
	else
		*cur = json_object_getn(*cur, buf_cstr(&s->key), s->key.len);
	return 0;
}

/* *out = the value at path, possibly JSON null, or NULL when absent. */
static int lookup(json_t *root, const char *path, json_t **out, struct err *e)
{
	struct path_cursor c = { path, path };
	struct path_seg s;
	json_t *cur = root;
	const char *start;
	int r = 0;

	if (path_check(path) < 0)
		return err_set(e, -EINVAL, "%s: malformed JSON path", path);
	seg_init(&s);
	for (start = c.p; cur && (r = path_next(&c, &s)) > 0; start = c.p) {
		r = step(&cur, &s, path, (size_t)(start - path), e);
		if (r < 0)
			break;
	}
	buf_release(&s.key);
	if (cur && r < 0)
		return r;
	*out = cur;
	return 0;
}

json_t *jsonx_get(json_t *root, const char *path)
{
	json_t *v = NULL;

	return lookup(root, path, &v, NULL) < 0 ? NULL : v;
}

const char *jsonx_get_string(json_t *root, const char *path)
{
	return json_string_value(jsonx_get(root, path));
}

/* --- containment -------------------------------------------------------------------------- */

static bool number_equal(json_t *a, json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) == json_integer_value(b);
	return json_number_value(a) == json_number_value(b);
}

static bool object_contains(json_t *have, json_t *want)
{
	const char *k;
	json_t *v;

	if (!json_is_object(have))
		return false;
	json_object_foreach (want, k, v) {
		if (!jsonx_contains(json_object_get(have, k), v))
			return false;
	}
	return true;
}

static bool array_contains(json_t *have, json_t *want)
{
	json_t *v;
	size_t i;

	if (!json_is_array(have) || json_array_size(have) != json_array_size(want))
		return false;
	json_array_foreach (want, i, v) {
		if (!jsonx_contains(json_array_get(have, i), v))
			return false;
	}
	return true;
}

bool jsonx_contains(json_t *have, json_t *want)
{
	if (!want)
		return true;
	if (!have)
		return json_is_null(want);
	if (json_is_object(want))
		return object_contains(have, want);
	if (json_is_array(want))
		return array_contains(have, want);
	if (json_is_number(want) && json_is_number(have))
		return number_equal(have, want);
	return json_equal(have, want);
}

/* --- typed getters ------------------------------------------------------------------------ */

/* *out = the value of type want (JSON_TRUE: either boolean), or NULL when absent or null. */
static int get_typed(json_t *root, const char *path, json_type want, bool required, json_t **out,
                     struct err *e)
{
	json_t *v = NULL;
	int r = lookup(root, path, &v, e);

	if (r < 0)
		return r;
	if (json_is_null(v))
		v = NULL;
	if (!v && required)
		return err_set(e, -ENOENT, "%s: required", path_name(path));
	if (v && json_typeof(v) != want && !(want == JSON_TRUE && json_is_boolean(v)))
		return err_set(e, -EINVAL, "%s: expected %s, got %s", path_name(path),
		               type_names[want], jsonx_type_name(v));
	*out = v;
	return 0;
}

static int get_string(json_t *root, const char *path, bool req, const char *def, const char **out,
                      struct err *e)
{
	json_t *v = NULL;
	int r = get_typed(root, path, JSON_STRING, req, &v, e);

	if (r < 0)
		return r;
	*out = v ? json_string_value(v) : def;
	return 0;
}

static int get_int(json_t *root, const char *path, bool req, int64_t min, int64_t max, int64_t def,
                   int64_t *out, struct err *e)
{
	json_t *v = NULL;
	int64_t n;
	int r = get_typed(root, path, JSON_INTEGER, req, &v, e);

	if (r < 0)
		return r;
	if (!v) {
		*out = def;
		return 0;
	}
	n = (int64_t)json_integer_value(v);
	if (n < min || n > max)
		return err_set(e, -ERANGE,
		               "%s: %" PRId64 " is out of range [%" PRId64 ", %" PRId64 "]",
		               path_name(path), n, min, max);
	*out = n;
	return 0;
}

static int get_bool(json_t *root, const char *path, bool req, bool def, bool *out, struct err *e)
{
	json_t *v = NULL;
	int r = get_typed(root, path, JSON_TRUE, req, &v, e);

	if (r < 0)
		return r;
	*out = v ? json_is_true(v) : def;
	return 0;
}

static int get_container(json_t *root, const char *path, json_type want, bool req, json_t **out,
                         struct err *e)
{
	json_t *v = NULL;
	int r = get_typed(root, path, want, req, &v, e);

	if (r < 0)
		return r;
	*out = v;
	return 0;
}

int jsonx_string(json_t *root, const char *path, const char *def, const char **out, struct err *e)
{
	return get_string(root, path, false, def, out, e);
}

int jsonx_string_req(json_t *root, const char *path, const char **out, struct err *e)
{
	return get_string(root, path, true, NULL, out, e);
}

int jsonx_int(json_t *root, const char *path, int64_t min, int64_t max, int64_t def, int64_t *out,
              struct err *e)
{
	return get_int(root, path, false, min, max, def, out, e);
}

int jsonx_int_req(json_t *root, const char *path, int64_t min, int64_t max, int64_t *out,
                  struct err *e)
{
	return get_int(root, path, true, min, max, 0, out, e);
}

json_t *jsonx_find(json_t *arr, const char *key, const char *value)
{
	json_t *it;
	size_t i;

	json_array_foreach (arr, i, it) {
		const char *v = json_string_value(json_object_get(it, key));

		if (v && strcmp(v, value) == 0)
			return it;
	}
	return NULL;
}

int jsonx_only_fields(json_t *j, const char *prefix, const char *const *fields, struct err *e)
{
	const char *k;
	json_t *v;

	json_object_foreach (j, k, v) {
		size_t i;

		for (i = 0; fields[i] && strcmp(fields[i], k) != 0; i++)
			;
		if (!fields[i])
			return err_set(e, -EINVAL, "%s%s: unknown field", prefix, k);
	}
	return 0;
}

int jsonx_bool(json_t *root, const char *path, bool def, bool *out, struct err *e)
{
	return get_bool(root, path, false, def, out, e);
}

int jsonx_bool_req(json_t *root, const char *path, bool *out, struct err *e)
{
	return get_bool(root, path, true, false, out, e);
}

int jsonx_object(json_t *root, const char *path, json_t **out, struct err *e)
{
	return get_container(root, path, JSON_OBJECT, false, out, e);
}

int jsonx_object_req(json_t *root, const char *path, json_t **out, struct err *e)
{
	return get_container(root, path, JSON_OBJECT, true, out, e);
}

int jsonx_array(json_t *root, const char *path, json_t **out, struct err *e)
{
	return get_container(root, path, JSON_ARRAY, false, out, e);
}

int jsonx_array_req(json_t *root, const char *path, json_t **out, struct err *e)
{
	return get_container(root, path, JSON_ARRAY, true, out, e);
}

/* --- setter ------------------------------------------------------------------------------- */

/* Puts value (stolen) into node at segment s. */
static int seg_put(json_t *node, const struct path_seg *s, json_t *value)
{
	if (!s->is_index) {
		if (!json_is_object(node)) {
			json_decref(value);
			return -EINVAL;
		}
		return json_object_setn_new(node, buf_cstr(&s->key), s->key.len, value) ? -EINVAL
		                                                                        : 0;
	}
	if (!json_is_array(node) || s->index > json_array_size(node)) {
		json_decref(value);
		return json_is_array(node) ? -ERANGE : -EINVAL;
	}
	if (s->index == json_array_size(node))
		return json_array_append_new(node, value) ? -EINVAL : 0;
	return json_array_set_new(node, s->index, value) ? -EINVAL : 0;
}

/* Moves *node to its child at s, creating an array (next segment is an index) or object. */
static int seg_descend(json_t **node, const struct path_seg *s, bool next_is_index)
{
	json_type want = next_is_index ? JSON_ARRAY : JSON_OBJECT;
	json_t *child;
	int r;

	if (json_typeof(*node) != (s->is_index ? JSON_ARRAY : JSON_OBJECT))
		return -EINVAL;
	if (s->is_index)
		child = json_array_get(*node, s->index);
	else
		child = json_object_getn(*node, buf_cstr(&s->key), s->key.len);
	if (child && !json_is_null(child)) {
		*node = child;
		return json_typeof(child) == want ? 0 : -EINVAL;
	}
	child = next_is_index ? json_array() : json_object();
	r = seg_put(*node, s, child);
	if (r == 0)
		*node = child;
	return r;
}

int jsonx_set_path(json_t *root, const char *path, json_t *value_stolen)
{
	struct path_cursor c = { path, path };
	struct path_seg segs[2];
	struct path_seg *cur = &segs[0], *next = &segs[1], *tmp;
	json_t *node = root;
	int r;

	if (!root || !path[0] || path_check(path) < 0) {
		json_decref(value_stolen);
		return -EINVAL;
	}
	seg_init(cur);
	seg_init(next);
	path_next(&c, cur);
	while ((r = path_next(&c, next)) > 0) {
		r = seg_descend(&node, cur, next->is_index);
		if (r < 0)
			break;
		tmp = cur;
		cur = next;
		next = tmp;
	}
	if (r == 0)
		r = seg_put(node, cur, value_stolen);
	else
		json_decref(value_stolen);
	buf_release(&segs[0].key);
	buf_release(&segs[1].key);
	return r;
}

/* --- text --------------------------------------------------------------------------------- */

static int dump_to_buf(const char *p, size_t n, void *data)
{
	return buf_append(data, p, n);
}

char *jsonx_dumps_compact(const json_t *j)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	if (!j || json_dump_callback(j, dump_to_buf, &b,
	                             JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) < 0) {
		buf_clear(&b);
		buf_append_str(&b, "null");
	}
	return buf_detach(&b, NULL);
}

int jsonx_loadb(const char *data, size_t len, size_t max_len, json_t **out, struct err *e)
{
	const char *nul;
	json_error_t je;
	json_t *j;

	if (len > max_len)
		return err_set(e, -EMSGSIZE,
		               "JSON text of %zu bytes exceeds the limit of %zu bytes", len,
		               max_len);
	if (len == 0)
		data = "";
	nul = memchr(data, '\0', len);
	if (nul)
		return err_set(e, -EPROTO, "NUL byte at offset %zu", (size_t)(nul - data));
	j = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!j)
		return err_set(e, -EPROTO, "line %d, column %d: %s", je.line, je.column, je.text);
	*out = j;
	return 0;
}

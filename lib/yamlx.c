/*
 * yamlx: libyaml's event parser driving a small tree builder (see yamlx.h).
 *
 * The builder keeps a stack of open collections. A scalar, a finished collection or
 * an alias copy becomes a "value" (add_value): the document root when the stack is
 * empty, else the next element of the array on top, or the value of the key the
 * mapping on top is waiting for. A mapping's keys arrive as scalars while its frame
 * has no pending key. Invariants: every json_t on the stack or in the anchors table is
 * owned there; a value reaches add_value exactly once and is owned by it from then on.
 */
#include "yamlx.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "lib/alloc.h"
#include "lib/file.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

struct yamlx_frame {
	json_t *node;      /* the object or array being filled */
	char *anchor;      /* registered when the collection ends, or NULL */
	char *key;         /* mapping: the key whose value comes next, or NULL */
	bool key_is_merge; /* the pending key is the merge key "<<" */
	json_t *merges;    /* mapping: sources of "<<", merged at its end, or NULL */
};

struct yamlx_loader {
	struct yamlx_frame stack[YAMLX_MAX_DEPTH];
	size_t depth;
	json_t *docs;    /* the result */
	json_t *root;    /* the current document's root, once complete */
	json_t *anchors; /* name → node, for the current document */
	size_t nodes;    /* nodes built so far, aliases by their size */
	struct err *e;
};

__attribute__((format(printf, 4, 5))) static int fail(struct yamlx_loader *l, const yaml_mark_t *m,
                                                      int code, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(l->e, code, "line %zu, column %zu: %s", m->line + 1, m->column + 1, msg);
}

static int count_nodes(struct yamlx_loader *l, size_t n, const yaml_mark_t *m)
{
	if (n > YAMLX_MAX_NODES - l->nodes)
		return fail(l, m, -EMSGSIZE, "more than %d nodes (aliases count by expansion)",
		            YAMLX_MAX_NODES);
	l->nodes += n;
	return 0;
}

/* --- scalars ------------------------------------------------------------------------------ */

static bool all_of(const char *s, size_t n, const char *set)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr(set, s[i]) || s[i] == '\0')
			return false;
	return true;
}

static bool is_one_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strcmp(s, *words) == 0)
			return true;
	return false;
}

#define DIGITS "0123456789"

/* Each returns 0 with *out, -EINVAL when s is not of its type, -ERANGE when JSON cannot hold it. */
static int as_string(const char *s, size_t n, json_t **out)
{
	*out = json_stringn(s, n);
	return *out ? 0 : -EILSEQ;
}

static int as_null(const char *s, size_t n, json_t **out)
{
	static const char *const words[] = { "", "~", "null", "Null", "NULL", NULL };

	(void)n;
	if (!is_one_of(s, words))
		return -EINVAL;
	*out = json_null();
	return 0;
}

static int as_bool(const char *s, size_t n, json_t **out)
{
	static const char *const yes[] = { "true", "True", "TRUE", NULL };
	static const char *const no[] = { "false", "False", "FALSE", NULL };

	(void)n;
	if (!is_one_of(s, yes) && !is_one_of(s, no))
		return -EINVAL;
	*out = json_boolean(is_one_of(s, yes));
	return 0;
}

static int as_int(const char *s, size_t n, json_t **out)
{
	size_t sign = (s[0] == '-' || s[0] == '+');
	int base = 10;
	const char *digits = s;
	long long v;
	char *end;

	if (n > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
		base = s[1] == 'o' ? 8 : 16;
		digits = s + 2;
		if (!all_of(digits, n - 2, base == 8 ? "01234567" : DIGITS "abcdefABCDEF"))
			return -EINVAL;
	} else if (!all_of(s + sign, n - sign, DIGITS)) {
		return -EINVAL;
	}
	errno = 0;
	v = strtoll(digits, &end, base);
	if (errno == ERANGE)
		return -ERANGE;
	*out = json_integer(v);
	return 0;
}

/* [-+]? ( \.[0-9]+ | [0-9]+ (\.[0-9]*)? ) ([eE][-+]?[0-9]+)? */
static bool is_float_syntax(const char *s)
{
	size_t whole, frac = 0, exp;

	s += (*s == '-' || *s == '+');
	whole = strspn(s, DIGITS);
	s += whole;
	if (*s == '.') {
		frac = strspn(s + 1, DIGITS);
		s += 1 + frac;
	}
	if (whole == 0 && frac == 0)
		return false;
	if (*s != 'e' && *s != 'E')
		return *s == '\0';
	s += 1 + (s[1] == '-' || s[1] == '+');
	exp = strspn(s, DIGITS);
	return exp > 0 && s[exp] == '\0';
}

static int as_float(const char *s, size_t n, json_t **out)
{
	static const char *const special[] = { ".inf",  ".Inf",  ".INF",  "+.inf", "+.Inf",
		                               "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
		                               ".NaN",  ".NAN",  NULL };
	double d;

	(void)n;
	if (is_one_of(s, special))
		return -ERANGE;
	if (!is_float_syntax(s))
		return -EINVAL;
	d = strtod(s, NULL);
	if (!isfinite(d))
		return -ERANGE;
	*out = json_real(d);
	return 0;
}

static const struct {
	const char *tag; /* after TAG_PREFIX, or "!" */
	const char *name;
	int (*resolve)(const char *s, size_t n, json_t **out);
} scalar_tags[] = {
	{ "str", "!!str", as_string },       { "!", "!", as_string },
	{ "binary", "!!binary", as_string }, { "timestamp", "!!timestamp", as_string },
	{ "null", "!!null", as_null },       { "bool", "!!bool", as_bool },
	{ "int", "!!int", as_int },          { "float", "!!float", as_float },
};

/* The order of the core schema: the first resolver that accepts a plain scalar wins. */
static int (*const plain_resolvers[])(const char *s, size_t n, json_t **out) = {
	as_null,
	as_bool,
	as_int,
	as_float,
};

static int resolve_plain(const char *s, size_t n, json_t **out)
{
	for (size_t i = 0; i < sizeof(plain_resolvers) / sizeof(plain_resolvers[0]); i++) {
		int r = plain_resolvers[i](s, n, out);

		if (r != -EINVAL)
			return r;
	}
	return as_string(s, n, out);
}

static bool tag_is(const char *tag, const char *name)
{
	if (strcmp(name, "!") == 0)
		return strcmp(tag, "!") == 0;
	return strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0 &&
	       strcmp(tag + strlen(TAG_PREFIX), name) == 0;
}

/* Tags as people write them: "!!int" rather than "tag:yaml.org,2002:int". */
static const char *tag_shown(const char *tag, char *out, size_t n)
{
	if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) != 0)
		return tag;
	snprintf(out, n, "!!%s", tag + strlen(TAG_PREFIX));
	return out;
}

static int resolve_tagged(const char *tag, const char *s, size_t n, const char **name, json_t **out)
{
	for (size_t i = 0; i < sizeof(scalar_tags) / sizeof(scalar_tags[0]); i++) {
		if (tag_is(tag, scalar_tags[i].tag)) {
			*name = scalar_tags[i].name;
			return scalar_tags[i].resolve(s, n, out);
		}
	}
	return -ENOTSUP;
}

static int resolve_scalar(struct yamlx_loader *l, const yaml_event_t *ev, json_t **out)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *name = "plain scalar";
	char shown[64];
	int r;

	if (tag)
		r = resolve_tagged(tag, s, n, &name, out);
	else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
		r = resolve_plain(s, n, out);
	else
		r = as_string(s, n, out);
	if (r == -ENOTSUP)
		return fail(l, &ev->start_mark, -EPROTO, "unsupported tag \"%s\"",
		            tag_shown(tag ? tag : "", shown, sizeof(shown)));
	if (r == -EINVAL)
		return fail(l, &ev->start_mark, -EPROTO, "invalid %s value", name);
	if (r == -ERANGE)
		return fail(l, &ev->start_mark, -ERANGE,
		            "number not representable in JSON (quote it to keep a string)");
	if (r == -EILSEQ)
		return fail(l, &ev->start_mark, -EPROTO, "invalid UTF-8");
	return 0;
}

/* --- the tree ----------------------------------------------------------------------------- */

static struct yamlx_frame *top(struct yamlx_loader *l)
{
	return l->depth ? &l->stack[l->depth - 1] : NULL;
}

static bool expecting_key(struct yamlx_loader *l)
{
	struct yamlx_frame *f = top(l);

	return f && json_is_object(f->node) && !f->key && !f->key_is_merge;
}

/* Accepts the value of "<<": a mapping or a sequence of mappings. */
static int add_merge(struct yamlx_loader *l, struct yamlx_frame *f, json_t *v, const yaml_mark_t *m)
{
	bool ok = json_is_array(v);
	json_t *src;
	size_t i;

	if (json_is_object(v)) {
		f->merges = json_array();
		json_array_append_new(f->merges, v);
		return 0;
	}
	json_array_foreach (v, i, src) {
		if (!json_is_object(src))
			ok = false;
	}
	if (!ok) {
		json_decref(v);
		return fail(l, m, -EPROTO,
		            "merge key \"<<\" needs a mapping or a list of mappings");
	}
	f->merges = v;
	return 0;
}

/* Applies the frame's merge sources: keys already present win, then earlier sources. */
static void apply_merges(struct yamlx_frame *f)
{
	size_t i;
	json_t *src, *v;
	const char *k;

	json_array_foreach (f->merges, i, src) {
		json_object_foreach (src, k, v) {
			if (!json_object_get(f->node, k))
				json_object_set(f->node, k, v);
		}
	}
}

/* Places v (stolen): document root, next array element, or the pending key's value. */
static int add_value(struct yamlx_loader *l, json_t *v, const char *anchor, const yaml_mark_t *m)
{
	struct yamlx_frame *f = top(l);
	char *key;
	int r;

	if (anchor)
		json_object_set(l->anchors, anchor, v);
	if (!f) {
		l->root = v;
		return 0;
	}
	if (json_is_array(f->node))
		return json_array_append_new(f->node, v) ? fail(l, m, -EPROTO, "invalid value") : 0;
	if (f->key_is_merge) {
		f->key_is_merge = false;
		return add_merge(l, f, v, m);
	}
	key = f->key;
	f->key = NULL;
	r = json_object_set_new(f->node, key, v);
	free(key);
	return r ? fail(l, m, -EPROTO, "invalid key") : 0;
}

static int take_key(struct yamlx_loader *l, const yaml_event_t *ev)
{
	struct yamlx_frame *f = top(l);
	const char *s = (const char *)ev->data.scalar.value;
	const char *anchor = (const char *)ev->data.scalar.anchor;
	bool merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag &&
	             strcmp(s, "<<") == 0;

	if (merge ? f->merges != NULL : json_object_get(f->node, s) != NULL)
		return fail(l, &ev->start_mark, -EPROTO, "duplicate key \"%s\"", s);
	if (anchor)
		json_object_set_new(l->anchors, anchor, json_string(s));
	f->key_is_merge = merge;
	if (!merge)
		f->key = xstrdup(s);
	return 0;
}

static int on_scalar(struct yamlx_loader *l, const yaml_event_t *ev)
{
	json_t *v;
	int r;

	if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
		return fail(l, &ev->start_mark, -EPROTO, "NUL character in a scalar");
	r = count_nodes(l, 1, &ev->start_mark);
	if (r < 0)
		return r;
	if (expecting_key(l))
		return take_key(l, ev);
	r = resolve_scalar(l, ev, &v);
	if (r < 0)
		return r;
	return add_value(l, v, (const char *)ev->data.scalar.anchor, &ev->start_mark);
}

static int push(struct yamlx_loader *l, const yaml_event_t *ev, const char *anchor, const char *tag,
                const char *want_tag)
{
	struct yamlx_frame *f;
	char shown[64];
	int r;

	if (expecting_key(l))
		return fail(l, &ev->start_mark, -EPROTO, "a mapping key must be a scalar");
	if (tag && strcmp(tag, "!") != 0 && !tag_is(tag, want_tag))
		return fail(l, &ev->start_mark, -EPROTO, "unsupported tag \"%s\" on a %s",
		            tag_shown(tag, shown, sizeof(shown)),
		            want_tag[0] == 'm' ? "mapping" : "sequence");
	if (l->depth == YAMLX_MAX_DEPTH)
		return fail(l, &ev->start_mark, -EMSGSIZE, "nesting deeper than %d",
		            YAMLX_MAX_DEPTH);
	r = count_nodes(l, 1, &ev->start_mark);
	if (r < 0)
		return r;
	f = &l->stack[l->depth++];
	memset(f, 0, sizeof(*f));
	f->node = strcmp(want_tag, "map") == 0 ? json_object() : json_array();
	f->anchor = anchor ? xstrdup(anchor) : NULL;
	return 0;
}

static int on_mapping_start(struct yamlx_loader *l, const yaml_event_t *ev)
{
	return push(l, ev, (const char *)ev->data.mapping_start.anchor,
	            (const char *)ev->data.mapping_start.tag, "map");
}

static int on_sequence_start(struct yamlx_loader *l, const yaml_event_t *ev)
{
	return push(l, ev, (const char *)ev->data.sequence_start.anchor,
	            (const char *)ev->data.sequence_start.tag, "seq");
}

static void frame_release(struct yamlx_frame *f)
{
	json_decref(f->node);
	json_decref(f->merges);
	free(f->anchor);
	free(f->key);
}

static int on_collection_end(struct yamlx_loader *l, const yaml_event_t *ev)
{
	struct yamlx_frame f = l->stack[--l->depth];
	int r;

	if (f.merges)
		apply_merges(&f);
	r = add_value(l, f.node, f.anchor, &ev->start_mark);
	f.node = NULL;
	frame_release(&f);
	return r;
}

/* Nodes in j counted as the parser counts them, and its depth in collections. */
static void tree_size(json_t *j, size_t *nodes, size_t *depth)
{
	size_t i, d, max = 0;
	const char *k;
	json_t *v;

	*nodes += 1;
	if (json_is_object(j)) {
		json_object_foreach (j, k, v) {
			d = 0;
			*nodes += 1;
			tree_size(v, nodes, &d);
			max = d > max ? d : max;
		}
	}
	json_array_foreach (j, i, v) {
		d = 0;
		tree_size(v, nodes, &d);
		max = d > max ? d : max;
	}
	*depth = (json_is_object(j) || json_is_array(j)) ? max + 1 : 0;
}

static int on_alias(struct yamlx_loader *l, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	json_t *target = json_object_get(l->anchors, name);
	size_t nodes = 0, depth = 0;
	int r;

	if (expecting_key(l))
		return fail(l, &ev->start_mark, -EPROTO, "an alias cannot be a mapping key");
	if (!target)
		return fail(l, &ev->start_mark, -EPROTO, "unknown anchor \"%s\"", name);
	tree_size(target, &nodes, &depth);
	if (l->depth + depth > YAMLX_MAX_DEPTH)
		return fail(l, &ev->start_mark, -EMSGSIZE, "nesting deeper than %d",
		            YAMLX_MAX_DEPTH);
	r = count_nodes(l, nodes, &ev->start_mark);
	if (r < 0)
		return r;
	return add_value(l, json_deep_copy(target), NULL, &ev->start_mark);
}

static int on_document_start(struct yamlx_loader *l, const yaml_event_t *ev)
{
	(void)ev;
	json_object_clear(l->anchors);
	return 0;
}

static int on_document_end(struct yamlx_loader *l, const yaml_event_t *ev)
{
	(void)ev;
	if (l->root && !json_is_null(l->root))
		json_array_append(l->docs, l->root);
	json_decref(l->root);
	l->root = NULL;
	return 0;
}

static int (*const handlers[])(struct yamlx_loader *l, const yaml_event_t *ev) = {
	[YAML_DOCUMENT_START_EVENT] = on_document_start,
	[YAML_DOCUMENT_END_EVENT] = on_document_end,
	[YAML_ALIAS_EVENT] = on_alias,
	[YAML_SCALAR_EVENT] = on_scalar,
	[YAML_SEQUENCE_START_EVENT] = on_sequence_start,
	[YAML_SEQUENCE_END_EVENT] = on_collection_end,
	[YAML_MAPPING_START_EVENT] = on_mapping_start,
	[YAML_MAPPING_END_EVENT] = on_collection_end,
};

/* --- driver ------------------------------------------------------------------------------- */

/* libyaml's reader reports a byte offset, not a mark: count lines ourselves. */
static yaml_mark_t mark_at(const char *data, size_t len, size_t offset)
{
	yaml_mark_t m = { offset, 0, 0 };
	size_t line_start = 0;

	for (size_t i = 0; i < offset && i < len; i++) {
		if (data[i] == '\n') {
			m.line++;
			line_start = i + 1;
		}
	}
	m.column = offset - line_start;
	return m;
}

static int parser_error(struct yamlx_loader *l, const yaml_parser_t *p, const char *data,
                        size_t len)
{
	yaml_mark_t m = p->problem_mark;
	const yaml_mark_t *c = &p->context_mark;

	if (p->error == YAML_MEMORY_ERROR)
		return err_set(l->e, -ENOMEM, "out of memory parsing YAML");
	if (p->error == YAML_READER_ERROR)
		m = mark_at(data, len, p->problem_offset);
	if (p->context)
		return fail(l, &m, -EPROTO, "%s (%s at line %zu, column %zu)", p->problem,
		            p->context, c->line + 1, c->column + 1);
	return fail(l, &m, -EPROTO, "%s", p->problem ? p->problem : "malformed YAML");
}

static int run(struct yamlx_loader *l, yaml_parser_t *p, const char *data, size_t len)
{
	yaml_event_t ev;
	bool done = false;
	int r = 0;

	while (!done && r == 0) {
		if (!yaml_parser_parse(p, &ev))
			return parser_error(l, p, data, len);
		done = ev.type == YAML_STREAM_END_EVENT;
		if ((size_t)ev.type < sizeof(handlers) / sizeof(handlers[0]) && handlers[ev.type])
			r = handlers[ev.type](l, &ev);
		yaml_event_delete(&ev);
	}
	return r;
}

int yamlx_load(const char *data, size_t len, json_t **docs_out, struct err *e)
{
	struct yamlx_loader l = { .e = e };
	yaml_parser_t p;
	int r;

	if (!data)
		data = "";
	l.docs = json_array();
	l.anchors = json_object();
	if (!yaml_parser_initialize(&p))
		abort(); /* out of memory */
	yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
	r = run(&l, &p, data, len);
	yaml_parser_delete(&p);
	while (l.depth)
		frame_release(&l.stack[--l.depth]);
	json_decref(l.root);
	json_decref(l.anchors);
	if (r == 0)
		*docs_out = l.docs;
	else
		json_decref(l.docs);
	return r;
}

/* --- files -------------------------------------------------------------------------------- */

int yamlx_load_file(const char *path, size_t max_len, json_t **docs_out, struct err *e)
{
	struct err le;
	char *data = NULL;
	size_t len = 0;
	int r;

	err_clear(&le);
	r = file_read_all_secret(path, max_len, &data, &len, e);
	if (r == 0)
		r = yamlx_load(data, len, docs_out, &le);
	if (data) {
		secure_zero(data, len);
		free(data);
	}
	if (r < 0 && le.code)
		err_set(e, r, "%s: %s", path, le.msg);
	return r;
}

/*
 * Unit tests for api/'s decoder tables against the CRDs themselves: the YAML files of
 * config/crd/bases are loaded with yamlx and each openAPIV3Schema is walked in step with
 * its C table. Where the table describes a node, the CRD must agree on what decoding
 * reads: the JSON type, the enum (in order: it numbers the C enum), the default, and the
 * set of properties; a property on one side only fails with its path. Where the table
 * stops (a pass-through node, kept as a json_t *), the CRD may go on, but must hold no
 * default below: the decoder would not apply it. Validation keywords (patterns, bounds,
 * sizes, required, CEL rules) are the API server's and are not compared: test/api sends
 * manifests to a real server for those.
 *
 * Also here: every property of the tables has a C type that fits its schema type, and
 * the CRD's spec.redis deny rules, read from the CRD's own CEL text, are compared with
 * lib/engine/directives' owned directives (the differences are pinned below).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "lib/engine/directives.h"
#include "testutil.h"
#include "unit.h"

#define CRD_MAX (1 << 20)

static const struct {
	const char *file;
	const struct api_schema *schema;
} crds[] = {
	{ "config/crd/bases/redis.io_redisclusters.yaml", &api_redis_cluster_schema },
	{ "config/crd/bases/redis.io_redisbackups.yaml", &api_redis_backup_schema },
	{ "config/crd/bases/redis.io_redisscheduledbackups.yaml",
	  &api_redis_scheduled_backup_schema },
};

/* openAPIV3Schema of a CRD file (a new reference). */
static json_t *load_schema(const char *file)
{
	json_t *docs = tu_load_yaml(file, CRD_MAX), *s;

	s = json_object_get(
	        json_array_get(json_object_get(json_object_get(json_array_get(docs, 0), "spec"),
	                                       "versions"),
	                       0),
	        "schema");
	s = json_incref(json_object_get(s, "openAPIV3Schema"));
	json_decref(docs);
	ck_assert_msg(json_is_object(s), "%s: no openAPIV3Schema", file);
	return s;
}

/* --- the comparison ------------------------------------------------------------------------------ */

struct diff {
	struct buf out;
	size_t n;
};

__attribute__((format(printf, 3, 4))) static void differ(struct diff *d, const char *path,
                                                         const char *fmt, ...)
{
	va_list ap;

	buf_printf(&d->out, "%s: ", *path ? path : "(root)");
	va_start(ap, fmt);
	buf_vprintf(&d->out, fmt, ap);
	va_end(ap);
	buf_append_char(&d->out, '\n');
	d->n++;
}

static const char *const type_names[] = {
	[API_OBJECT] = "object",   [API_ARRAY] = "array",   [API_STRING] = "string",
	[API_INTEGER] = "integer", [API_NUMBER] = "number", [API_BOOLEAN] = "boolean",
};

/* Read by api_meta_decode, not by the table. */
static bool is_meta(const char *path)
{
	return !strcmp(path, "apiVersion") || !strcmp(path, "kind") || !strcmp(path, "metadata");
}

static void check_type(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	const char *t = json_string_value(json_object_get(crd, "type"));

	if (!t || strcmp(t, type_names[s->type]) != 0)
		differ(d, path, "type %s in the CRD, %s in C", t ? t : "(none)",
		       type_names[s->type]);
}

static void check_enum(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	json_t *e = json_object_get(crd, "enum");
	size_t n = 0;

	while (s->enums && s->enums[n])
		n++;
	if (json_array_size(e) != n) {
		differ(d, path, "enum: %zu values in the CRD, %zu in C", json_array_size(e), n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!json_is_string(json_array_get(e, i)) ||
		    strcmp(json_string_value(json_array_get(e, i)), s->enums[i]) != 0)
			differ(d, path, "enum value %zu: %s in C", i, s->enums[i]);
}

static void check_default(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	json_t *want = json_object_get(crd, "default"), *have = NULL;

	if (s->default_json)
		have = json_loads(s->default_json, JSON_DECODE_ANY, NULL);
	if (s->default_json && !have)
		differ(d, path, "the C default %s is not JSON", s->default_json);
	else if (!want != !have || (want && !json_equal(want, have)))
		differ(d, path, "default differs (C: %s)",
		       s->default_json ? s->default_json : "none");
	json_decref(have);
}

/* Below a node the table does not describe: any default there is one decoding misses. */
static void no_default_below(struct diff *d, const char *path, json_t *crd)
{
	json_t *props = json_object_get(crd, "properties"), *x;
	char child[512];
	const char *k;

	if (json_object_get(crd, "default"))
		differ(d, path, "a default the decoder does not apply (the table stops above it)");
	json_object_foreach (props, k, x) {
		snprintf(child, sizeof(child), "%s.%s", path, k);
		no_default_below(d, child, x);
	}
	if ((x = json_object_get(crd, "items"))) {
		snprintf(child, sizeof(child), "%s[]", path);
		no_default_below(d, child, x);
	}
	if (json_is_object(x = json_object_get(crd, "additionalProperties"))) {
		snprintf(child, sizeof(child), "%s{}", path);
		no_default_below(d, child, x);
	}
}

static void compare(struct diff *d, const char *path, json_t *crd, const struct api_schema *s);

/* The CRD's child node crd_child under the table's child s_child (NULL: not described). */
static void compare_child(struct diff *d, const char *path, json_t *crd_child,
                          const struct api_schema *s_child, const char *what)
{
	if (s_child && !crd_child)
		differ(d, path, "%s in the C table, not in the CRD", what);
	else if (s_child)
		compare(d, path, crd_child, s_child);
	else if (json_is_object(crd_child))
		no_default_below(d, path, crd_child);
}

static void compare_props(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	json_t *props = json_object_get(crd, "properties"), *x;
	char child[512];
	const char *k;

	if (!s->props) {
		json_object_foreach (props, k, x) {
			snprintf(child, sizeof(child), "%s.%s", path, k);
			no_default_below(d, child, x);
		}
		return;
	}
	json_object_foreach (props, k, x) {
		const struct api_prop *p = api_schema_prop(s, k);

		snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", k);
		if (p)
			compare(d, child, x, p->schema);
		else if (!(*path == '\0' && is_meta(k)))
			differ(d, child, "in the CRD, not in the C table");
	}
	for (const struct api_prop *p = s->props; p->name; p++)
		if (!json_object_get(props, p->name))
			differ(d, path, "%s is in the C table, not in the CRD", p->name);
}

static void compare(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	char child[512];

	check_type(d, path, crd, s);
	check_enum(d, path, crd, s);
	check_default(d, path, crd, s);
	compare_props(d, path, crd, s);
	snprintf(child, sizeof(child), "%s[]", path);
	compare_child(d, child, json_object_get(crd, "items"), s->items, "items");
	snprintf(child, sizeof(child), "%s{}", path);
	compare_child(d, child, json_object_get(crd, "additionalProperties"), s->values,
	              "additionalProperties");
}

START_TEST(table_equals_crd)
{
	json_t *crd = load_schema(crds[_i].file);
	struct diff d = { BUF_INIT(BUF_NO_LIMIT), 0 };

	compare(&d, "", crd, crds[_i].schema);
	ck_assert_msg(d.n == 0, "%s differs from its C table in %zu places:\n%s", crds[_i].file,
	              d.n, buf_cstr(&d.out));
	buf_release(&d.out);
	json_decref(crd);
}
END_TEST

/* The comparison can fail: a changed copy of the CRD is reported with its path. */
static const struct {
	const char *edit;  /* JSON path in the schema, as a jsonx path */
	const char *value; /* JSON to put there */
	const char *report;
} mutations[] = {
	{ "properties.spec.properties.replicas", "{\"type\":\"integer\"}",
	  "spec.replicas: in the CRD, not in the C table" },
	{ "properties.spec.properties.instances.type", "\"string\"",
	  "spec.instances: type string in the CRD, integer in C" },
	{ "properties.spec.properties.mode.default", "\"sentinel\"", "spec.mode: default differs" },
	{ "properties.spec.properties.mode.enum", "[\"standalone\",\"cluster\",\"sentinel\"]",
	  "spec.mode: enum value 1" },
	{ "properties.spec.properties.storage.properties.size.default", "\"2Gi\"",
	  "spec.storage.size: default differs" },
	{ "properties.spec.properties.users.items.properties.enabled.default", "false",
	  "spec.users[].enabled: default differs" },
	{ "properties.spec.properties.tolerations.items.properties.operator.default", "\"Equal\"",
	  "spec.tolerations[].operator: a default the decoder does not apply" },
	{ "properties.spec.properties.redis.additionalProperties.default", "\"x\"",
	  "spec.redis{}: a default the decoder does not apply" },
	{ "properties.status.properties.phase.type", "\"integer\"",
	  "status.phase: type integer in the CRD, string in C" },
};

START_TEST(comparison_catches_drift)
{
	json_t *crd = load_schema(crds[0].file);
	struct diff d = { BUF_INIT(BUF_NO_LIMIT), 0 };

	ck_assert_int_eq(jsonx_set_path(crd, mutations[_i].edit,
	                                json_loads(mutations[_i].value, JSON_DECODE_ANY, NULL)),
	                 0);
	compare(&d, "", crd, crds[0].schema);
	ck_assert_msg(strstr(buf_cstr(&d.out), mutations[_i].report), "%s: no \"%s\" in:\n%s",
	              mutations[_i].edit, mutations[_i].report, buf_cstr(&d.out));
	buf_release(&d.out);
	json_decref(crd);
}
END_TEST

/* --- the tables as decoders ------------------------------------------------------------------------ */

/* The schema types a C type can hold. */
static bool ctype_fits(enum api_ctype ct, const struct api_schema *s)
{
	switch (ct) {
	case API_C_STRING:
	case API_C_DURATION:
	case API_C_BYTES: return s->type == API_STRING && !s->enums;
	case API_C_ENUM: return s->type == API_STRING && s->enums;
	case API_C_INT: return s->type == API_INTEGER;
	case API_C_NUMBER: return s->type == API_NUMBER;
	case API_C_BOOL: return s->type == API_BOOLEAN;
	case API_C_STRUCT: return s->type == API_OBJECT && s->props;
	case API_C_ARRAY: return s->type == API_ARRAY && s->items;
	case API_C_JSON: return !s->props && !s->items && !s->values && !s->default_json;
	default: return false;
	}
}

static void check_decoded(struct diff *d, const char *path, const struct api_schema *s);

static void check_prop(struct diff *d, const char *path, const struct api_prop *p)
{
	if (!ctype_fits(p->ctype, p->schema))
		differ(d, path, "C type %d cannot hold this schema", p->ctype);
	if (p->ctype == API_C_ARRAY) {
		if (p->count_offset == API_NO_OFFSET || !p->elem_size ||
		    !ctype_fits(p->elem_ctype, p->schema->items))
			differ(d, path, "array without a count, size or fitting element type");
		if (p->elem_ctype == API_C_STRUCT)
			check_decoded(d, path, p->schema->items);
	}
	if (p->ctype == API_C_STRUCT)
		check_decoded(d, path, p->schema);
}

/* Every property fits its C member; a pass-through node describes nothing inside. */
static void check_decoded(struct diff *d, const char *path, const struct api_schema *s)
{
	char child[512];

	for (const struct api_prop *p = s->props; p && p->name; p++) {
		snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", p->name);
		check_prop(d, child, p);
	}
}

START_TEST(every_field_fits)
{
	struct diff d = { BUF_INIT(BUF_NO_LIMIT), 0 };

	check_decoded(&d, "", crds[_i].schema);
	ck_assert_msg(d.n == 0, "%s:\n%s", crds[_i].file, buf_cstr(&d.out));
	buf_release(&d.out);
}
END_TEST

/* --- spec.redis: the CRD's deny rules and lib/engine's owned directives ---------------------- */

/*
 * The deny lists of the CRD's spec.redis rules, read from their CEL text:
 * "self.all(k, !(k in ['port', 'bind', ...]))" gives names, "!k.startsWith('tls-')" a
 * prefix. Each name and prefix is appended to names / prefixes, one per line.
 */
static void crd_denials(struct buf *names, struct buf *prefixes)
{
	json_t *crd = load_schema(crds[0].file), *rules, *r;
	const char *text, *p, *end;
	size_t i;

	rules = jsonx_get(crd, "properties.spec.properties.redis.x-kubernetes-validations");
	ck_assert_msg(json_array_size(rules) > 0, "spec.redis has no rules");
	json_array_foreach (rules, i, r) {
		text = json_string_value(json_object_get(r, "rule"));
		ck_assert_ptr_nonnull(text);
		if ((p = strstr(text, "!k.startsWith('"))) {
			p += strlen("!k.startsWith('");
			end = strchr(p, '\'');
			buf_printf(prefixes, "%.*s\n", (int)(end - p), p);
		}
		if (!(p = strstr(text, "!(k in [")))
			continue;
		end = strchr(p, ']');
		for (p = strchr(p, '\''); p && p < end; p = strchr(strchr(p + 1, '\'') + 1, '\''))
			buf_printf(names, "%.*s\n", (int)(strchr(p + 1, '\'') - p - 1), p + 1);
	}
	json_decref(crd);
}

static bool has_line(const char *lines, const char *s)
{
	size_t n = strlen(s);

	for (const char *p = lines; p && *p; p = strchr(p, '\n') + 1)
		if (strncmp(p, s, n) == 0 && p[n] == '\n')
			return true;
	return false;
}

/* Whether the CRD refuses spec.redis key name. */
static bool crd_denies(const char *names, const char *prefixes, const char *name)
{
	if (has_line(names, name))
		return true;
	for (const char *p = prefixes; *p; p = strchr(p, '\n') + 1)
		if (strncmp(name, p, (size_t)(strchr(p, '\n') - p)) == 0)
			return true;
	return false;
}

static const struct {
	const char *name;
	bool denied;
} directives[] = {
	{ "port", true },         { "bind", true },
	{ "syslog-ident", true }, { "user", true },
	{ "slaveof", true },      { "tls-port", true },
	{ "tls-anything", true }, { "cluster-enabled", true },
	{ "loadmodule", true },   { "enable-protected-configs", true },
	{ "maxmemory", false },   { "save", false },
	{ "appendonly", false },  { "hz", false },
	{ "Port", false },        { "tls", false },
	{ "clusterx", false },    { "replica-read-only", true },
	{ "primaryauth", true },  { "unixsocketgroup", true },
};

/* The reading of the rules: known names and prefixes, either way. */
START_TEST(directive_denied)
{
	struct buf names = BUF_INIT(BUF_NO_LIMIT), prefixes = BUF_INIT(BUF_NO_LIMIT);

	crd_denials(&names, &prefixes);
	ck_assert_msg(crd_denies(buf_cstr(&names), buf_cstr(&prefixes), directives[_i].name) ==
	                      directives[_i].denied,
	              "%s", directives[_i].name);
	buf_release(&names);
	buf_release(&prefixes);
}
END_TEST

/*
 * The CRD's deny lists and lib/engine/directives' owned directives are one decision made
 * twice (the CRD cannot call C): every directive the operator owns is refused in
 * spec.redis, and every name refused is owned. Both lists below must stay empty.
 */
START_TEST(denylists_versus_owned_directives)
{
	struct buf names = BUF_INIT(BUF_NO_LIMIT), prefixes = BUF_INIT(BUF_NO_LIMIT);
	struct buf owned = BUF_INIT(BUF_NO_LIMIT), denied = BUF_INIT(BUF_NO_LIMIT);
	const char *p;
	char name[128];

	crd_denials(&names, &prefixes);
	for (size_t i = 0; i < vk_directive_count(); i++) {
		const struct vk_directive *v = vk_directive_at(i);

		if ((v->flags & VK_DIRECTIVE_OWNED) &&
		    !crd_denies(buf_cstr(&names), buf_cstr(&prefixes), v->name))
			buf_printf(&owned, "%s ", v->name);
	}
	for (p = buf_cstr(&names); *p; p = strchr(p, '\n') + 1) {
		snprintf(name, sizeof(name), "%.*s", (int)(strchr(p, '\n') - p), p);
		if (!vk_directive_is_owned(name))
			buf_printf(&denied, "%s ", name);
	}
	ck_assert_msg(names.len > 0 && prefixes.len > 0, "no deny lists read from the CRD");
	ck_assert_msg(owned.len == 0, "owned but not refused by the CRD: %s", buf_cstr(&owned));
	ck_assert_msg(denied.len == 0, "refused by the CRD but not owned: %s", buf_cstr(&denied));
	buf_release(&names);
	buf_release(&prefixes);
	buf_release(&owned);
	buf_release(&denied);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("api_crd");
	TCase *tc = tcase_create("crd");

	tcase_add_loop_test(tc, table_equals_crd, 0, ARRAY_LEN(crds));
	tcase_add_loop_test(tc, comparison_catches_drift, 0, ARRAY_LEN(mutations));
	tcase_add_loop_test(tc, every_field_fits, 0, ARRAY_LEN(crds));
	tcase_add_loop_test(tc, directive_denied, 0, ARRAY_LEN(directives));
	tcase_add_test(tc, denylists_versus_owned_directives);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)

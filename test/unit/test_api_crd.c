/*
 * Unit tests for api/'s tables against the CRDs themselves: the YAML files of config/crd/bases are
 * loaded with yamlx and each openAPIV3Schema is walked in step with its C table. Every
 * keyword must agree (type, format, enum, pattern, lengths, bounds, item and property
 * counts, required, defaults, x-kubernetes-* markers) and so must every CEL rule's text,
 * message, messageExpression, fieldPath and reason; a property on one side only fails
 * with its path. A CRD keyword the tables cannot express fails too, so a new kind of
 * constraint cannot slip past the C validator unnoticed.
 *
 * Also here: every property of the tables is decoded into C (or lies inside a pass-through
 * node kept as a json_t *), with a C type that fits its schema type; every pattern
 * translates to a POSIX ERE; the spec.redis deny lists and the cron pattern match the
 * rules' text; and the deny lists are compared with lib/valkey/directives' owned
 * directives (the differences are pinned below).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/cel.h"
#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "lib/valkey/directives.h"
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

static const char *const known_keywords[] = {
	"type",
	"format",
	"enum",
	"pattern",
	"minLength",
	"maxLength",
	"minimum",
	"maximum",
	"minItems",
	"maxItems",
	"maxProperties",
	"required",
	"properties",
	"items",
	"additionalProperties",
	"default",
	"description",
	"anyOf",
	"x-kubernetes-validations",
	"x-kubernetes-list-type",
	"x-kubernetes-list-map-keys",
	"x-kubernetes-map-type",
	"x-kubernetes-preserve-unknown-fields",
	"x-kubernetes-int-or-string",
};

static void check_keywords(struct diff *d, const char *path, json_t *crd)
{
	const char *k;
	json_t *v;

	json_object_foreach (crd, k, v) {
		bool known = false;

		for (size_t i = 0; i < ARRAY_LEN(known_keywords); i++)
			known |= strcmp(k, known_keywords[i]) == 0;
		if (!known)
			differ(d, path, "the CRD uses %s, which the tables cannot express", k);
	}
}

static const char *const type_names[] = {
	[API_OBJECT] = "object",   [API_ARRAY] = "array",   [API_STRING] = "string",
	[API_INTEGER] = "integer", [API_NUMBER] = "number", [API_BOOLEAN] = "boolean",
};

static void check_type(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	const char *t = json_string_value(json_object_get(crd, "type"));

	if (json_is_true(json_object_get(crd, "x-kubernetes-int-or-string"))) {
		json_t *any = json_pack("[{s:s},{s:s}]", "type", "integer", "type", "string");

		if (s->type != API_INT_OR_STRING || !json_equal(any, json_object_get(crd, "anyOf")))
			differ(d, path,
			       "int-or-string with anyOf [integer, string] on one side only");
		json_decref(any);
		return;
	}
	if (json_object_get(crd, "anyOf"))
		differ(d, path, "anyOf without x-kubernetes-int-or-string");
	if (s->type == API_INT_OR_STRING || !t || strcmp(t, type_names[s->type]) != 0)
		differ(d, path, "type %s in the CRD, %d in C", t ? t : "(none)", s->type);
}

static void same_str(struct diff *d, const char *path, const char *what, json_t *crd, const char *c)
{
	const char *v = json_string_value(crd);

	if (!v != !c || (v && strcmp(v, c) != 0))
		differ(d, path, "%s: \"%s\" in the CRD, \"%s\" in C", what, v ? v : "(none)",
		       c ? c : "(none)");
}

static void same_int(struct diff *d, const char *path, const char *what, json_t *crd, bool has,
                     int64_t c)
{
	if (!!crd != has || (crd && json_integer_value(crd) != c))
		differ(d, path, "%s: %lld in the CRD, %s%lld in C", what,
		       crd ? (long long)json_integer_value(crd) : -1LL, has ? "" : "none/",
		       (long long)c);
}

/* A NULL-terminated C list against a JSON array of strings, in order. */
static void same_list(struct diff *d, const char *path, const char *what, json_t *crd,
                      const char *const *c)
{
	size_t n = 0;

	while (c && c[n])
		n++;
	if (json_array_size(crd) != n) {
		differ(d, path, "%s: %zu in the CRD, %zu in C", what, json_array_size(crd), n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		same_str(d, path, what, json_array_get(crd, i), c[i]);
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

static void check_rules(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	json_t *rules = json_object_get(crd, "x-kubernetes-validations"), *r;
	size_t n = 0;

	while (s->rules && s->rules[n].rule)
		n++;
	if (json_array_size(rules) != n) {
		differ(d, path, "%zu rules in the CRD, %zu in C", json_array_size(rules), n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct api_rule *c = &s->rules[i];

		r = json_array_get(rules, i);
		same_str(d, path, "rule", json_object_get(r, "rule"), c->rule);
		same_str(d, path, "message", json_object_get(r, "message"), c->message);
		same_str(d, path, "messageExpression", json_object_get(r, "messageExpression"),
		         c->message_expression);
		same_str(d, path, "fieldPath", json_object_get(r, "fieldPath"), c->field_path);
		same_str(d, path, "reason", json_object_get(r, "reason"), c->reason);
		if (!c->holds == !c->eval || !c->format != !c->message_expression)
			differ(d, path,
			       "rule %zu: needs holds or eval, and format with a "
			       "messageExpression",
			       i);
	}
}

static void compare(struct diff *d, const char *path, json_t *crd, const struct api_schema *s);

static void compare_children(struct diff *d, const char *path, json_t *crd,
                             const struct api_schema *s)
{
	json_t *props = json_object_get(crd, "properties"), *x;
	char child[512];
	const char *k;

	json_object_foreach (props, k, x) {
		const struct api_prop *p = api_schema_prop(s, k);

		snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", k);
		if (!p)
			differ(d, child, "in the CRD, not in the C table");
		else
			compare(d, child, x, p->schema);
	}
	for (const struct api_prop *p = s->props; p && p->name; p++)
		if (!json_object_get(props, p->name))
			differ(d, path, "%s is in the C table, not in the CRD", p->name);
	snprintf(child, sizeof(child), "%s[]", path);
	if (!json_object_get(crd, "items") != !s->items)
		differ(d, path, "items on one side only");
	else if (s->items)
		compare(d, child, json_object_get(crd, "items"), s->items);
	snprintf(child, sizeof(child), "%s{}", path);
	x = json_object_get(crd, "additionalProperties");
	if (!json_is_object(x) != !s->values)
		differ(d, path, "additionalProperties on one side only");
	else if (s->values)
		compare(d, child, x, s->values);
}

static void compare(struct diff *d, const char *path, json_t *crd, const struct api_schema *s)
{
	check_keywords(d, path, crd);
	check_type(d, path, crd, s);
	same_str(d, path, "format", json_object_get(crd, "format"), s->format);
	same_list(d, path, "enum", json_object_get(crd, "enum"), s->enums);
	same_str(d, path, "pattern", json_object_get(crd, "pattern"), s->pattern);
	same_int(d, path, "minLength", json_object_get(crd, "minLength"), s->min_length,
	         s->min_length);
	same_int(d, path, "maxLength", json_object_get(crd, "maxLength"), s->max_length,
	         s->max_length);
	same_int(d, path, "minimum", json_object_get(crd, "minimum"), s->has_minimum, s->minimum);
	same_int(d, path, "maximum", json_object_get(crd, "maximum"), s->has_maximum, s->maximum);
	same_int(d, path, "minItems", json_object_get(crd, "minItems"), s->min_items, s->min_items);
	same_int(d, path, "maxItems", json_object_get(crd, "maxItems"), s->max_items, s->max_items);
	same_int(d, path, "maxProperties", json_object_get(crd, "maxProperties"), s->max_properties,
	         s->max_properties);
	same_list(d, path, "required", json_object_get(crd, "required"), s->required);
	same_str(d, path, "x-kubernetes-list-type", json_object_get(crd, "x-kubernetes-list-type"),
	         s->list_type);
	same_list(d, path, "x-kubernetes-list-map-keys",
	          json_object_get(crd, "x-kubernetes-list-map-keys"), s->list_map_keys);
	same_str(d, path, "x-kubernetes-map-type", json_object_get(crd, "x-kubernetes-map-type"),
	         s->map_type);
	if (json_is_true(json_object_get(crd, "x-kubernetes-preserve-unknown-fields")) !=
	    s->preserve_unknown)
		differ(d, path, "x-kubernetes-preserve-unknown-fields differs");
	check_default(d, path, crd, s);
	check_rules(d, path, crd, s);
	compare_children(d, path, crd, s);
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
	{ "properties.spec.properties.instances.maximum", "65", "spec.instances: maximum: 65" },
	{ "properties.spec.properties.mode.default", "\"sentinel\"", "spec.mode: default differs" },
	{ "properties.spec.properties.imageName.pattern", "\"^x$\"", "spec.imageName: pattern" },
	{ "properties.spec.properties.failedAfter.x-kubernetes-validations[0].message", "\"x\"",
	  "spec.failedAfter: message" },
	{ "properties.spec.properties.storage.properties.size.x-kubernetes-validations[1]",
	  "{\"rule\":\"true\"}", "spec.storage.size: 2 rules in the CRD, 1 in C" },
	{ "properties.spec.properties.users.items.properties.name.maxLength", "63",
	  "spec.users[].name: maxLength" },
	{ "properties.spec.properties.redis.additionalProperties.maxLength", "10",
	  "spec.redis{}: maxLength" },
	{ "properties.spec.properties.instances.multipleOf", "2",
	  "the CRD uses multipleOf, which the tables cannot express" },
	{ "properties.status.properties.phase.enum", "[\"A\"]", "status.phase: enum" },
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
	case API_C_JSON: return true;
	default: return false;
	}
}

static void check_decoded(struct diff *d, const char *path, const struct api_schema *s, bool root);

static void check_prop(struct diff *d, const char *path, const struct api_prop *p, bool root)
{
	bool meta = root && (!strcmp(p->name, "apiVersion") || !strcmp(p->name, "kind") ||
	                     !strcmp(p->name, "metadata"));

	if (p->ctype == API_C_NONE) {
		if (!meta)
			differ(d, path, "not decoded into C");
		return;
	}
	if (!ctype_fits(p->ctype, p->schema))
		differ(d, path, "C type %d cannot hold this schema", p->ctype);
	if (p->ctype == API_C_ARRAY) {
		if (p->count_offset == API_NO_OFFSET || !p->elem_size ||
		    !ctype_fits(p->elem_ctype, p->schema->items))
			differ(d, path, "array without a count, size or fitting element type");
		if (p->elem_ctype == API_C_STRUCT)
			check_decoded(d, path, p->schema->items, false);
	}
	if (p->ctype == API_C_STRUCT)
		check_decoded(d, path, p->schema, false);
}

/* Every property is decoded, except below pass-through nodes (API_C_JSON), whose
 * properties are checked by validation and handed on as JSON. */
static void check_decoded(struct diff *d, const char *path, const struct api_schema *s, bool root)
{
	char child[512];

	for (const struct api_prop *p = s->props; p && p->name; p++) {
		snprintf(child, sizeof(child), "%s%s%s", path, *path ? "." : "", p->name);
		check_prop(d, child, p, root);
	}
}

START_TEST(every_field_is_decoded)
{
	struct diff d = { BUF_INIT(BUF_NO_LIMIT), 0 };

	check_decoded(&d, "", crds[_i].schema, true);
	ck_assert_msg(d.n == 0, "%s:\n%s", crds[_i].file, buf_cstr(&d.out));
	buf_release(&d.out);
}
END_TEST

/* Every pattern of the tables becomes a POSIX ERE regcomp accepts. */
static void check_patterns(struct diff *d, const char *path, const struct api_schema *s)
{
	char child[512];

	if (!s)
		return;
	if (s->pattern && api_cel_matches(s->pattern, "") < 0)
		differ(d, path, "pattern %s does not translate", s->pattern);
	for (const struct api_prop *p = s->props; p && p->name; p++) {
		snprintf(child, sizeof(child), "%s.%s", path, p->name);
		check_patterns(d, child, p->schema);
	}
	check_patterns(d, path, s->items);
	check_patterns(d, path, s->values);
}

START_TEST(every_pattern_translates)
{
	struct diff d = { BUF_INIT(BUF_NO_LIMIT), 0 };

	check_patterns(&d, "", crds[_i].schema);
	ck_assert_msg(d.n == 0, "%s", buf_cstr(&d.out));
	buf_release(&d.out);
}
END_TEST

/* --- the rules' own tables ------------------------------------------------------------------------ */

static const struct api_rule *redis_rules(void)
{
	const struct api_prop *spec = api_schema_prop(&api_redis_cluster_schema, "spec");

	return api_schema_prop(spec->schema, "redis")->schema->rules;
}

/* Rule i's list: the names between its brackets, or the startsWith prefix. */
START_TEST(denylists_match_rules)
{
	const struct api_rule *rules = redis_rules();
	const struct api_redis_denylist *dl = &api_redis_denylists[_i];
	const char *text = rules[_i + 1].rule, *p;
	char quoted[64], want[1024] = "", have[1024] = "";

	if (dl->prefix) {
		snprintf(quoted, sizeof(quoted), "!k.startsWith('%s')", dl->prefix);
		ck_assert_msg(strstr(text, quoted), "rule %s has no %s", text, quoted);
		return;
	}
	for (p = strchr(text, '['); p && (p = strchr(p, '\'')); p = strchr(p + 1, '\'') + 1) {
		size_t n = (size_t)(strchr(p + 1, '\'') - p - 1);

		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%.*s ", (int)n, p + 1);
	}
	for (size_t i = 0; dl->names[i]; i++)
		snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s ", dl->names[i]);
	ck_assert_str_eq(have, want);
}
END_TEST

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

START_TEST(directive_denied)
{
	ck_assert_msg(api_redis_directive_denied(directives[_i].name) == directives[_i].denied,
	              "%s", directives[_i].name);
}
END_TEST

/* The schedule rule's third regex is api_cron_pattern, escaped as a CEL string literal. */
START_TEST(cron_pattern_matches_rule)
{
	const struct api_prop *spec = api_schema_prop(&api_redis_scheduled_backup_schema, "spec");
	const char *rule = api_schema_prop(spec->schema, "schedule")->schema->rules[0].rule;
	struct buf cel = BUF_INIT(BUF_NO_LIMIT);

	for (const char *p = api_cron_pattern; *p; p++)
		buf_append_str(&cel, *p == '\\' ? "\\\\" : (char[]){ *p, 0 });
	ck_assert_ptr_nonnull(strstr(rule, buf_cstr(&cel)));
	buf_release(&cel);
}
END_TEST

/*
 * The CRD's deny lists and lib/valkey/directives' owned directives are one decision made
 * twice (the CRD cannot call C): every directive the operator owns is refused in
 * spec.redis, and everything refused is owned. Both lists below must stay empty.
 */
static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names, sorted, each followed by a space. */
static void join_sorted(const char *const *v, size_t n, struct buf *out)
{
	const char **copy = xcalloc(n + 1, sizeof(*copy));

	memcpy(copy, v, n * sizeof(*copy));
	qsort(copy, n, sizeof(*copy), cmp_strp);
	for (size_t i = 0; i < n; i++)
		buf_printf(out, "%s ", copy[i]);
	free(copy);
}

START_TEST(denylists_versus_owned_directives)
{
	const char *owned[256], *denied[256];
	size_t no = 0, nd = 0;
	struct buf have_o = BUF_INIT(BUF_NO_LIMIT), have_d = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < vk_directive_count(); i++) {
		const struct vk_directive *v = vk_directive_at(i);

		if ((v->flags & VK_DIRECTIVE_OWNED) && !api_redis_directive_denied(v->name))
			owned[no++] = v->name;
	}
	for (const struct api_redis_denylist *dl = api_redis_denylists; dl->names || dl->prefix;
	     dl++)
		for (size_t i = 0; dl->names && dl->names[i]; i++)
			if (!vk_directive_is_owned(dl->names[i]))
				denied[nd++] = dl->names[i];
	join_sorted(owned, no, &have_o);
	join_sorted(denied, nd, &have_d);
	ck_assert_msg(no == 0, "owned but not refused by the CRD: %s", buf_cstr(&have_o));
	ck_assert_msg(nd == 0, "refused by the CRD but not owned: %s", buf_cstr(&have_d));
	buf_release(&have_o);
	buf_release(&have_d);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("api_crd");
	TCase *tc = tcase_create("crd");

	tcase_add_loop_test(tc, table_equals_crd, 0, ARRAY_LEN(crds));
	tcase_add_loop_test(tc, comparison_catches_drift, 0, ARRAY_LEN(mutations));
	tcase_add_loop_test(tc, every_field_is_decoded, 0, ARRAY_LEN(crds));
	tcase_add_loop_test(tc, every_pattern_translates, 0, ARRAY_LEN(crds));
	tcase_add_loop_test(tc, denylists_match_rules, 0, 6);
	tcase_add_loop_test(tc, directive_denied, 0, ARRAY_LEN(directives));
	tcase_add_test(tc, cron_pattern_matches_rule);
	tcase_add_test(tc, denylists_versus_owned_directives);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)

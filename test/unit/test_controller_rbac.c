/*
 * test_controller_rbac: the RBAC tables (controller/rbac.h) against both sides.
 *
 *   config/rbac    role.yaml and leader_election_role.yaml grant exactly the tables'
 *                  (group, resource, verb) triples, no more, no fewer; desired_role is
 *                  the pods' table with its resourceNames;
 *   the code       the tables grant exactly what the code calls, scanned from the sources
 *                  (comments skipped): the k8s client's calls with a literal resource
 *                  (k8s_get list create replace patch delete watch_run; a "status"
 *                  argument of k8s_patch names the subresource), the planner's actions
 *                  (ctl_plan_create/patch/delete, ensure = create + patch), the informers'
 *                  kinds (list + watch), owner references with blockOwnerDeletion
 *                  (update on redisclusters/finalizers), and for the ClusterRole every
 *                  grant of the pods' Role (the API server refuses a Role granting more
 *                  than its creator holds).
 * Attribution: the .c files of controller/ and, as the controller creates an events
 * recorder, lib/k8s/events.c are the ClusterRole's; lib/k8s/lease.c is the
 * leader-election Role's (the controller elects a leader with it) and the pods' Role's
 * (the instance manager takes the primary Lease with it); those of instance/ are the
 * pods' Role's.
 * A call through a variable resource (apply.c's a->res) is the planner's, counted at the
 * planner's call sites. Tests run from the repository root.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "api/rediscluster.h"
#include "api/resources.h"
#include "controller/desired.h"
#include "controller/rbac.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

#define YAML_MAX (1u << 20)
#define MSG_MAX  3000

#define V(x) CTL_RBAC_VERB(K8S_VERB_##x)

/* --- triples ------------------------------------------------------------------------------ */

/* "group|resource|verb" → where (a set as a JSON object). */
static void add(json_t *set, const char *group, const char *resource, const char *verb,
                const char *where)
{
	char key[256];

	snprintf(key, sizeof(key), "%s|%s|%s", group, resource, verb);
	if (!json_object_get(set, key))
		json_object_set_new(set, key, json_string(where));
}

static void add_verbs(json_t *set, const struct k8s_resource *res, const char *sub, unsigned verbs,
                      const char *where)
{
	char resource[128];

	snprintf(resource, sizeof(resource), "%s%s%s", res->plural, sub ? "/" : "", sub ? sub : "");
	for (int v = 0; v < K8S_VERB_COUNT; v++)
		if (verbs & CTL_RBAC_VERB(v))
			add(set, res->group, resource, k8s_verb_name((enum k8s_verb)v), where);
}

static json_t *table_set(const struct ctl_rbac_role *r)
{
	json_t *set = json_object();

	for (size_t i = 0; i < r->n; i++)
		add_verbs(set, r->grants[i].res, r->grants[i].sub, r->grants[i].verbs,
		          r->grants[i].why);
	return set;
}

/* Every key of a missing from b, as "  what: verb group/resource (where)" lines. */
static void missing(struct buf *msg, json_t *a, json_t *b, const char *what)
{
	const char *k;
	json_t *where;

	json_object_foreach (a, k, where) {
		const char *r = strchr(k, '|'), *v = r ? strchr(r + 1, '|') : NULL;

		if (json_object_get(b, k) || !v)
			continue;
		buf_printf(msg, "\n  %s: %s %.*s%s%.*s (%s)", what, v + 1, (int)(r - k), k,
		           r > k ? "/" : "", (int)(v - r - 1), r + 1, json_string_value(where));
	}
}

static void assert_same(json_t *want, json_t *got, const char *want_name, const char *got_name,
                        const char *extra, const char *lacking)
{
	struct buf msg = BUF_INIT(BUF_NO_LIMIT);

	missing(&msg, got, want, extra);
	missing(&msg, want, got, lacking);
	ck_assert_msg(msg.len == 0, "%s vs %s:%.*s", got_name, want_name, MSG_MAX, buf_cstr(&msg));
	buf_release(&msg);
}

/* --- config/rbac ------------------------------------------------------------------------- */

static json_t *rule_set(json_t *rules, const char *where, bool names_allowed)
{
	json_t *set = json_object(), *rule, *g, *r, *v;
	size_t i, a, b, c;

	json_array_foreach (rules, i, rule) {
		ck_assert_msg(names_allowed || !json_object_get(rule, "resourceNames"),
		              "%s: rule %zu has resourceNames", where, i);
		ck_assert_msg(!json_object_get(rule, "nonResourceURLs"), "%s: nonResourceURLs",
		              where);
		json_array_foreach (json_object_get(rule, "apiGroups"), a, g) {
			json_array_foreach (json_object_get(rule, "resources"), b, r) {
				json_array_foreach (json_object_get(rule, "verbs"), c, v) {
					ck_assert_msg(strcmp(json_string_value(g), "*") &&
					                      strcmp(json_string_value(r), "*") &&
					                      strcmp(json_string_value(v), "*"),
					              "%s: a wildcard in rule %zu", where, i);
					add(set, json_string_value(g), json_string_value(r),
					    json_string_value(v), where);
				}
			}
		}
	}
	return set;
}

static json_t *yaml_rules(const char *path, const char *kind)
{
	json_t *docs = tu_load_yaml(path, YAML_MAX), *doc;
	json_t *rules = NULL;
	size_t i;

	json_array_foreach (docs, i, doc) {
		if (strcmp(jsonx_get_string(doc, "kind") ? jsonx_get_string(doc, "kind") : "",
		           kind) == 0)
			rules = json_incref(json_object_get(doc, "rules"));
	}
	json_decref(docs);
	ck_assert_msg(json_is_array(rules), "%s: no %s with rules", path, kind);
	return rules;
}

static const struct {
	const char *path, *kind;
	const struct ctl_rbac_role *role;
} manifests[] = {
	{ "config/rbac/role.yaml", "ClusterRole", &ctl_rbac_operator },
	{ "config/rbac/leader_election_role.yaml", "Role", &ctl_rbac_leader },
};

START_TEST(manifests_grant_the_tables)
{
	json_t *rules = yaml_rules(manifests[_i].path, manifests[_i].kind);
	json_t *got = rule_set(rules, manifests[_i].path, false);
	json_t *want = table_set(manifests[_i].role);

	assert_same(want, got, manifests[_i].role->name, manifests[_i].path,
	            "granted, not in the table", "in the table, not granted");
	json_decref(got);
	json_decref(want);
	json_decref(rules);
}
END_TEST

static void decode(const char *text, struct api_redis_cluster *rc)
{
	struct err e = { 0 };
	json_t *obj = NULL;

	ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 16, &obj, NULL), 0);
	ck_assert_msg(api_redis_cluster_decode(obj, rc, &e) == 0, "%s", e.msg);
	json_decref(obj);
}

/* desired_role: the pods' table, names as the table says; Secrets only through volumes,
 * even when the spec names <cluster>-operator-tls for its own TLS. */
START_TEST(pods_role_is_the_table)
{
	struct api_redis_cluster rc;
	json_t *role, *rules, *got, *want, *rule;
	size_t i;

	decode("{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\",\"metadata\":"
	       "{\"name\":\"shop\",\"namespace\":\"ns\",\"uid\":\"u\"},\"spec\":{\"instances\":3,"
	       "\"tlsSecret\":{\"name\":\"shop-operator-tls\"}}}",
	       &rc);
	role = desired_role(&rc);
	rules = json_object_get(role, "rules");
	got = rule_set(rules, "desired_role", true);
	want = table_set(&ctl_rbac_pods);
	assert_same(want, got, ctl_rbac_pods.name, "desired_role", "granted, not in the table",
	            "in the table, not granted");
	ck_assert_int_eq(json_array_size(rules), ctl_rbac_pods.n);
	json_array_foreach (rules, i, rule) {
		const char *names[] = { [CTL_RBAC_ANY] = NULL,
			                [CTL_RBAC_CLUSTER] = "shop",
			                [CTL_RBAC_LEASE] = "shop-primary" };
		const char *want_name = names[ctl_rbac_pods.grants[i].names];
		json_t *rn = json_object_get(rule, "resourceNames");

		if (!want_name)
			ck_assert_ptr_null(rn);
		else
			ck_assert_str_eq(jsonx_get_string(rule, "resourceNames[0]"), want_name);
		ck_assert_int_le(json_array_size(rn), 1);
		ck_assert_str_ne(
		        json_string_value(json_array_get(json_object_get(rule, "resources"), 0)),
		        "secrets");
	}
	json_decref(got);
	json_decref(want);
	json_decref(role);
	api_redis_cluster_release(&rc);
}
END_TEST

/* The API server's escalation check: the controller holds whatever its pods' Role grants. */
START_TEST(operator_holds_the_pods_grants)
{
	for (size_t i = 0; i < ctl_rbac_pods.n; i++) {
		const struct ctl_rbac_grant *g = &ctl_rbac_pods.grants[i];

		for (int v = 0; v < K8S_VERB_COUNT; v++)
			ck_assert_msg(!(g->verbs & CTL_RBAC_VERB(v)) ||
			                      ctl_rbac_allows(&ctl_rbac_operator, g->res, g->sub,
			                                      (enum k8s_verb)v),
			              "the pods' Role grants %s %s, the ClusterRole does not",
			              k8s_verb_name((enum k8s_verb)v), g->res->plural);
	}
	ck_assert(ctl_rbac_allows(&ctl_rbac_operator, &api_res_redisclusters, "status",
	                          K8S_VERB_PATCH));
	ck_assert(!ctl_rbac_allows(&ctl_rbac_operator, &api_res_redisclusters, "status",
	                           K8S_VERB_UPDATE));
	ck_assert(!ctl_rbac_allows(&ctl_rbac_operator, &api_res_redisclusters, NULL,
	                           K8S_VERB_UPDATE));
	ck_assert(!ctl_rbac_allows(&ctl_rbac_pods, &k8s_res_secrets, NULL, K8S_VERB_GET));
}
END_TEST

/* --- the code ---------------------------------------------------------------------------- */

static const struct {
	const char *ident;
	const struct k8s_resource *res;
} idents[] = {
	{ "k8s_res_pods", &k8s_res_pods },
	{ "k8s_res_services", &k8s_res_services },
	{ "k8s_res_secrets", &k8s_res_secrets },
	{ "k8s_res_configmaps", &k8s_res_configmaps },
	{ "k8s_res_pvcs", &k8s_res_pvcs },
	{ "k8s_res_serviceaccounts", &k8s_res_serviceaccounts },
	{ "k8s_res_nodes", &k8s_res_nodes },
	{ "k8s_res_namespaces", &k8s_res_namespaces },
	{ "k8s_res_events", &k8s_res_events },
	{ "k8s_res_leases", &k8s_res_leases },
	{ "k8s_res_roles", &k8s_res_roles },
	{ "k8s_res_rolebindings", &k8s_res_rolebindings },
	{ "k8s_res_pdbs", &k8s_res_pdbs },
	{ "k8s_res_networkpolicies", &k8s_res_networkpolicies },
	{ "k8s_res_endpointslices", &k8s_res_endpointslices },
	{ "k8s_res_crds", &k8s_res_crds },
	{ "api_res_redisclusters", &api_res_redisclusters },
	{ "api_res_redisbackups", &api_res_redisbackups },
	{ "api_res_redisscheduledbackups", &api_res_redisscheduledbackups },
};

/* Call sites: a function whose arguments name a resource, and what it asks for. */
static const struct {
	const char *fn;
	unsigned verbs;
	int sub_arg; /* the argument that may name a subresource; -1: none */
} calls[] = {
	{ "k8s_get", V(GET), -1 },
	{ "k8s_list", V(LIST), -1 },
	{ "k8s_watch_run", V(WATCH), -1 },
	{ "k8s_create", V(CREATE), -1 },
	{ "k8s_replace", V(UPDATE), 4 },
	{ "k8s_patch", V(PATCH), 4 },
	{ "k8s_delete", V(DELETE), -1 },
	{ "ctl_plan_create", V(CREATE), -1 },
	{ "ctl_plan_patch", V(PATCH), -1 },
	{ "ctl_plan_delete", V(DELETE), -1 },
	{ "ensure", V(CREATE) | V(PATCH), -1 }, /* plan.c: create when absent, else patch */
};

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* The source with comments blanked (newlines kept) and string contents kept. */
static char *strip_comments(const char *s)
{
	char *out = xstrdup(s), *o = out;
	char quote = 0;

	for (const char *p = s; *p; p++, o++) {
		if (quote) {
			if (*p == '\\' && p[1]) {
				p++;
				o++;
			} else if (*p == quote) {
				quote = 0;
			}
		} else if (*p == '"' || *p == '\'') {
			quote = *p;
		} else if (p[0] == '/' && p[1] == '*') {
			for (; *p && !(p[0] == '*' && p[1] == '/'); p++, o++)
				*o = *p == '\n' ? '\n' : ' ';
			if (!*p)
				break;
			o[0] = o[1] = ' ';
			p++;
			o++;
		} else if (p[0] == '/' && p[1] == '/') {
			for (; *p && *p != '\n'; p++, o++)
				*o = ' ';
			p--;
			o--;
		}
	}
	return out;
}

/* The top-level arguments of the call whose '(' is at open, each trimmed, into args. */
static size_t split_args(const char *open, char args[][128], size_t max)
{
	size_t n = 0, len = 0;
	int depth = 0;
	char quote = 0;

	for (const char *p = open + 1; *p; p++) {
		if (quote) {
			quote = *p == quote && p[-1] != '\\' ? 0 : quote;
		} else if (*p == '"' || *p == '\'') {
			quote = *p;
		} else if (*p == '(' || *p == '{' || *p == '[') {
			depth++;
		} else if ((*p == ')' || *p == '}' || *p == ']') && depth-- == 0) {
			break;
		} else if (*p == ',' && depth == 0) {
			args[n][len] = '\0';
			n += n + 1 < max;
			len = 0;
			continue;
		}
		if (len || (*p != ' ' && *p != '\t' && *p != '\n'))
			if (len + 1 < sizeof(args[0]))
				args[n][len++] = *p;
	}
	args[n][len] = '\0';
	return n + 1;
}

static const struct k8s_resource *resource_of(const char *ident, const char *where)
{
	for (size_t i = 0; i < ARRAY_LEN(idents); i++)
		if (strcmp(idents[i].ident, ident) == 0)
			return idents[i].res;
	ck_abort_msg("%s: unknown resource %s (add it to idents[])", where, ident);
	return NULL;
}

/* Whether arg starts with a descriptor's address: "&k8s_res_x" (lib/k8s) or "&api_res_x". */
static bool is_resource_literal(const char *arg)
{
	return strncmp(arg, "&k8s_res_", 9) == 0 || strncmp(arg, "&api_res_", 9) == 0;
}

/* "&k8s_res_x" or "&api_res_x" at the start of arg: its resource, else NULL (a variable). */
static const struct k8s_resource *literal_resource(const char *arg, const char *where)
{
	char ident[64];
	size_t n = 0;

	if (!is_resource_literal(arg))
		return NULL;
	for (const char *p = arg + 1; is_ident(*p) && n + 1 < sizeof(ident); p++)
		ident[n++] = *p;
	ident[n] = '\0';
	return resource_of(ident, where);
}

static int line_of(const char *text, const char *at)
{
	int line = 1;

	for (const char *p = text; p < at; p++)
		line += *p == '\n';
	return line;
}

static void scan_call(json_t *used, const char *path, const char *text, const char *at, size_t k)
{
	char args[12][128], where[256], sub[64] = "";
	size_t n = split_args(at + strlen(calls[k].fn), args, ARRAY_LEN(args));
	const struct k8s_resource *res = NULL;

	snprintf(where, sizeof(where), "%s:%d", path, line_of(text, at));
	for (size_t i = 0; i < n && !res; i++)
		res = literal_resource(args[i], where);
	if (!res)
		return;
	if (calls[k].sub_arg >= 0 && (size_t)calls[k].sub_arg < n &&
	    args[calls[k].sub_arg][0] == '"')
		sscanf(args[calls[k].sub_arg], "\"%63[a-z]\"", sub);
	add_verbs(used, res, sub[0] ? sub : NULL, calls[k].verbs, where);
}

static void scan_text(json_t *used, const char *path, const char *text)
{
	for (size_t k = 0; k < ARRAY_LEN(calls); k++) {
		size_t len = strlen(calls[k].fn);

		for (const char *p = strstr(text, calls[k].fn); p; p = strstr(p + len, calls[k].fn))
			if ((p == text || !is_ident(p[-1])) && p[len] == '(')
				scan_call(used, path, text, p, k);
	}
}

static char *source(const char *path)
{
	char *raw = tu_must_read(path, NULL), *text = strip_comments(raw);

	free(raw);
	return text;
}

static void scan_file(json_t *used, const char *path)
{
	char *text = source(path);

	scan_text(used, path, text);
	free(text);
}

/* Every .c file of dir, scanned; true when one of them contains needle (comments aside). */
static bool scan_dir(json_t *used, const char *dir, const char *needle)
{
	DIR *d = opendir(dir);
	struct dirent *ent;
	bool found = false;

	ck_assert_msg(d != NULL, "cannot open %s", dir);
	while ((ent = readdir(d))) {
		size_t n = strlen(ent->d_name);
		char path[512], *text;

		if (n < 3 || strcmp(ent->d_name + n - 2, ".c") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, ent->d_name);
		text = source(path);
		if (used)
			scan_text(used, path, text);
		found = found || strstr(text, needle) != NULL;
		free(text);
	}
	closedir(d);
	return found;
}

/* informers.c's kinds[]: "[CTL_INF_X] = { &k8s_res_y, ..." entries are cached kinds. */
static void scan_informers(json_t *used)
{
	const char *path = "controller/informers.c";
	char *text = source(path), where[256];
	size_t found = 0;

	for (const char *p = strstr(text, "] = { &"); p; p = strstr(p + 1, "] = { &")) {
		if (!is_resource_literal(p + 6))
			continue;
		snprintf(where, sizeof(where), "%s:%d (cached)", path, line_of(text, p));
		add_verbs(used, literal_resource(p + 6, where), NULL, V(LIST) | V(WATCH), where);
		found++;
	}
	ck_assert_msg(found >= 2, "%s: the kinds[] table was not found", path);
	free(text);
}

static json_t *operator_uses(void)
{
	json_t *used = json_object();
	bool owner_refs = scan_dir(used, "controller", "\"blockOwnerDeletion\"");

	ck_assert(scan_dir(NULL, "controller", "k8s_events_new("));
	scan_file(used, "lib/k8s/events.c");
	scan_informers(used);
	if (owner_refs)
		add_verbs(used, &api_res_redisclusters, "finalizers", V(UPDATE),
		          "blockOwnerDeletion (controller/)");
	for (size_t i = 0; i < ctl_rbac_pods.n; i++)
		add_verbs(used, ctl_rbac_pods.grants[i].res, ctl_rbac_pods.grants[i].sub,
		          ctl_rbac_pods.grants[i].verbs, "granted to the pods' Role");
	return used;
}

static json_t *leader_uses(void)
{
	json_t *used = json_object();

	if (scan_dir(NULL, "controller", "k8s_lease_new("))
		scan_file(used, "lib/k8s/lease.c");
	return used;
}

static json_t *pods_uses(void)
{
	json_t *used = json_object();

	if (scan_dir(used, "instance", "k8s_lease_new("))
		scan_file(used, "lib/k8s/lease.c");
	return used;
}

static const struct {
	const struct ctl_rbac_role *role;
	json_t *(*uses)(void);
} roles[] = {
	{ &ctl_rbac_operator, operator_uses },
	{ &ctl_rbac_leader, leader_uses },
	{ &ctl_rbac_pods, pods_uses },
};

START_TEST(tables_grant_what_the_code_calls)
{
	json_t *used = roles[_i].uses(), *want = table_set(roles[_i].role);

	assert_same(want, used, roles[_i].role->name, "the code",
	            "called, not in the table (controller/rbac.c)", "in the table, never called");
	json_decref(used);
	json_decref(want);
}
END_TEST

/* The scanner itself: comments, variable resources, subresources, ensure. */
START_TEST(scanner)
{
	const char *src = "/* k8s_get(c, &k8s_res_nodes, ns, n, &o, e); */\n"
	                  "// k8s_delete(c, &k8s_res_pods, ns, n, NULL, e);\n"
	                  "rc = k8s_patch(c->kube, &api_res_redisclusters, ns, name, \"status\",\n"
	                  "               K8S_PATCH_MERGE, body, NULL, NULL, e);\n"
	                  "k8s_create(c->kube, a->res, v->ns, obj, NULL, NULL, e);\n"
	                  "ensure(p, &k8s_res_services, f(a, b), want, own);\n"
	                  "my_k8s_get(c, &k8s_res_secrets);\n";
	char *text = strip_comments(src);
	json_t *used = json_object();
	const char *k;
	json_t *v;
	struct buf keys = BUF_INIT(BUF_NO_LIMIT);

	scan_text(used, "t.c", text);
	json_object_foreach (used, k, v) {
		buf_printf(&keys, "%s ", k);
	}
	ck_assert_str_eq(buf_cstr(&keys),
	                 "redis.io|redisclusters/status|patch |services|create |services|patch ");
	buf_release(&keys);
	json_decref(used);
	free(text);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_rbac");
	TCase *t = tcase_create("all");

	tcase_add_loop_test(t, manifests_grant_the_tables, 0, ARRAY_LEN(manifests));
	tcase_add_test(t, pods_role_is_the_table);
	tcase_add_test(t, operator_holds_the_pods_grants);
	tcase_add_loop_test(t, tables_grant_what_the_code_calls, 0, ARRAY_LEN(roles));
	tcase_add_test(t, scanner);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

/* Unit tests for lib/k8s/path: paths per scope and group, name validation, query encoding. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/resources.h"
#include "lib/k8s/path.h"
#include "unit.h"

static const struct {
	const struct k8s_resource *r;
	const char *ns, *name, *sub;
	int want_rc;
	const char *want;
} path_cases[] = {
	{ &k8s_res_pods, "default", NULL, NULL, 0, "/api/v1/namespaces/default/pods" },
	{ &k8s_res_pods, "default", "db-0", NULL, 0, "/api/v1/namespaces/default/pods/db-0" },
	{ &k8s_res_pods, "default", "db-0", "eviction", 0,
	  "/api/v1/namespaces/default/pods/db-0/eviction" },
	{ &k8s_res_pods, NULL, NULL, NULL, 0, "/api/v1/pods" }, /* all namespaces */
	{ &k8s_res_pvcs, "a", "data-db-1", NULL, 0,
	  "/api/v1/namespaces/a/persistentvolumeclaims/data-db-1" },
	{ &k8s_res_nodes, NULL, "node-1.example.com", NULL, 0, "/api/v1/nodes/node-1.example.com" },
	{ &k8s_res_nodes, NULL, "n1", "status", 0, "/api/v1/nodes/n1/status" },
	{ &k8s_res_namespaces, NULL, "kube-system", NULL, 0, "/api/v1/namespaces/kube-system" },
	{ &k8s_res_leases, "ns1", "db-primary", NULL, 0,
	  "/apis/coordination.k8s.io/v1/namespaces/ns1/leases/db-primary" },
	{ &k8s_res_events, "ns1", NULL, NULL, 0, "/apis/events.k8s.io/v1/namespaces/ns1/events" },
	{ &k8s_res_roles, "ns1", "r", NULL, 0,
	  "/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/roles/r" },
	{ &k8s_res_rolebindings, "ns1", NULL, NULL, 0,
	  "/apis/rbac.authorization.k8s.io/v1/namespaces/ns1/rolebindings" },
	{ &k8s_res_pdbs, "ns1", "p", NULL, 0,
	  "/apis/policy/v1/namespaces/ns1/poddisruptionbudgets/p" },
	{ &k8s_res_networkpolicies, "ns1", NULL, NULL, 0,
	  "/apis/networking.k8s.io/v1/namespaces/ns1/networkpolicies" },
	{ &k8s_res_endpointslices, "ns1", NULL, NULL, 0,
	  "/apis/discovery.k8s.io/v1/namespaces/ns1/endpointslices" },
	{ &k8s_res_crds, NULL, "redisclusters.redis.io", NULL, 0,
	  "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/redisclusters.redis.io" },
	{ &api_res_redisclusters, "prod", "cache", "status", 0,
	  "/apis/redis.io/v1/namespaces/prod/redisclusters/cache/status" },
	{ &api_res_redisbackups, "prod", NULL, NULL, 0,
	  "/apis/redis.io/v1/namespaces/prod/redisbackups" },
	{ &api_res_redisscheduledbackups, "prod", "nightly", NULL, 0,
	  "/apis/redis.io/v1/namespaces/prod/redisscheduledbackups/nightly" },
	{ &k8s_res_secrets, "x", "a.b.c", NULL, 0, "/api/v1/namespaces/x/secrets/a.b.c" },
	/* Scope errors. */
	{ &k8s_res_nodes, "default", "n1", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, NULL, "db-0", NULL, -EINVAL, NULL },
	/* Subresource errors. */
	{ &k8s_res_pods, "default", NULL, "status", -EINVAL, NULL },
	{ &k8s_res_pods, "default", "db-0", "Status", -EINVAL, NULL },
	{ &k8s_res_pods, "default", "db-0", "", -EINVAL, NULL },
	{ &k8s_res_pods, "default", "db-0", "../x", -EINVAL, NULL },
	/* Bad names and namespaces: never reach the wire. */
	{ &k8s_res_pods, "default", "", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "Db", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "-db", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "db-", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "a..b", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", ".a", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "a.", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "a/b", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "a%2Fb", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "a b", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "a_b", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "default", "..", NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "de.fault", "a", NULL, -EINVAL, NULL }, /* namespaces are labels */
	{ &k8s_res_pods, "", NULL, NULL, -EINVAL, NULL },
	{ &k8s_res_pods, "Default", NULL, NULL, -EINVAL, NULL },
};

START_TEST(path_table)
{
	struct err e;
	char *p = NULL;
	int rc;

	err_clear(&e);
	rc = k8s_path(path_cases[_i].r, path_cases[_i].ns, path_cases[_i].name, path_cases[_i].sub,
	              &p, &e);
	ck_assert_msg(rc == path_cases[_i].want_rc, "case %d: rc %s (%s)", _i, err_name(rc), e.msg);
	if (rc) {
		ck_assert_ptr_null(p);
		ck_assert_int_eq(e.code, rc);
		ck_assert(e.msg[0] != '\0');
		return;
	}
	ck_assert_str_eq(p, path_cases[_i].want);
	free(p);
}
END_TEST

static const struct {
	size_t len;
	char fill;
	const char *prefix;
	bool want;
} long_names[] = {
	{ 63, 'a', "", true },   /* the longest label */
	{ 64, 'a', "", false },  /* a label may not pass 63 */
	{ 253, 'a', "", false }, /* one 253-byte label */
	{ 5, 'a', "", true },    /* short */
};

START_TEST(name_lengths)
{
	char name[300];

	memset(name, long_names[_i].fill, long_names[_i].len);
	name[long_names[_i].len] = '\0';
	ck_assert_int_eq(k8s_name_is_valid(name), long_names[_i].want);
}
END_TEST

/* Dotted names up to exactly 253 bytes pass; 254 fail. */
START_TEST(name_subdomain_limit)
{
	char name[300];
	size_t i;

	for (i = 0; i < 253; i++)
		name[i] = (i % 50 == 49) ? '.' : 'a';
	name[253] = '\0';
	ck_assert(k8s_name_is_valid(name));
	name[253] = 'b';
	name[254] = '\0';
	ck_assert(!k8s_name_is_valid(name));
	ck_assert(!k8s_name_is_valid(NULL));
	ck_assert(!k8s_namespace_is_valid(NULL));
	memset(name, 'a', 63);
	name[63] = '\0';
	ck_assert(k8s_namespace_is_valid(name));
	name[63] = 'a';
	name[64] = '\0';
	ck_assert(!k8s_namespace_is_valid(name));
}
END_TEST

static const struct {
	const char *in, *want;
} encode_cases[] = {
	{ "", "" },
	{ "abcXYZ019-._~", "abcXYZ019-._~" },
	{ "app.kubernetes.io/managed-by=redis-operator",
	  "app.kubernetes.io%2Fmanaged-by%3Dredis-operator" },
	{ "redis.io/cluster in (a,b),!x", "redis.io%2Fcluster%20in%20%28a%2Cb%29%2C%21x" },
	{ "a+b&c=d?e#f%g", "a%2Bb%26c%3Dd%3Fe%23f%25g" },
	{ "\xc3\xa9\x01\x7f", "%C3%A9%01%7F" },
	{ "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ==",
	  "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ%3D%3D" },
};

START_TEST(encode_table)
{
	struct buf b = BUF_INIT(1024);

	ck_assert_int_eq(k8s_url_encode(&b, encode_cases[_i].in), 0);
	ck_assert_str_eq(buf_cstr(&b), encode_cases[_i].want);
	buf_release(&b);
}
END_TEST

static const struct {
	struct k8s_query q;
	int want_rc;
	const char *want;
} query_cases[] = {
	{ { 0 }, 0, "" },
	{ { .label_selector = "app=x,tier in (a,b)" },
	  0,
	  "?labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29" },
	{ { .field_selector = "metadata.name=db-0", .limit = 500 },
	  0,
	  "?fieldSelector=metadata.name%3Ddb-0&limit=500" },
	{ { .limit = 2, .continue_token = "abc/def==" }, 0, "?limit=2&continue=abc%2Fdef%3D%3D" },
	{ { .resource_version = "123", .resource_version_match = "NotOlderThan" },
	  0,
	  "?resourceVersion=123&resourceVersionMatch=NotOlderThan" },
	{ { .watch = true,
	    .allow_watch_bookmarks = true,
	    .timeout_seconds = 300,
	    .resource_version = "77",
	    .label_selector = "a=b" },
	  0,
	  "?labelSelector=a%3Db&resourceVersion=77&watch=1&allowWatchBookmarks=true&timeoutSeconds="
	  "300" },
	{ { .dry_run = true, .field_manager = "redis-operator", .force = true },
	  0,
	  "?dryRun=All&fieldManager=redis-operator&force=true" },
	{ { .propagation_policy = "Foreground" }, 0, "?propagationPolicy=Foreground" },
	{ { .resource_version = "" }, 0, "?resourceVersion=" },
	/* Rejected values. */
	{ { .limit = -1 }, -EINVAL, NULL },
	{ { .timeout_seconds = -5 }, -EINVAL, NULL },
	{ { .resource_version_match = "exact" }, -EINVAL, NULL },
	{ { .propagation_policy = "Now" }, -EINVAL, NULL },
	{ { .field_manager = "" }, -EINVAL, NULL },
};

START_TEST(query_table)
{
	struct buf b = BUF_INIT(K8S_URL_MAX);
	struct err e;
	int rc;

	err_clear(&e);
	rc = k8s_query_append(&b, &query_cases[_i].q, &e);
	ck_assert_msg(rc == query_cases[_i].want_rc, "case %d: %s (%s)", _i, err_name(rc), e.msg);
	if (!rc)
		ck_assert_str_eq(buf_cstr(&b), query_cases[_i].want);
	else
		ck_assert(e.msg[0] != '\0');
	buf_release(&b);
}
END_TEST

START_TEST(query_limits)
{
	struct buf b = BUF_INIT(40);
	struct k8s_query q = { .label_selector = "aaaaaaaaaaaaaaaaaaaa/aaaaaaaaaaaaaaaaaa" };
	char fm[K8S_FIELD_MANAGER_MAX + 2];
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(k8s_query_append(&b, &q, &e), -EMSGSIZE);
	ck_assert_int_eq(e.code, -EMSGSIZE);
	buf_release(&b);
	memset(fm, 'm', sizeof(fm) - 1);
	fm[sizeof(fm) - 1] = '\0';
	q = (struct k8s_query){ .field_manager = fm };
	buf_init(&b, K8S_URL_MAX);
	ck_assert_int_eq(k8s_query_append(&b, &q, NULL), -EINVAL);
	fm[K8S_FIELD_MANAGER_MAX] = '\0';
	ck_assert_int_eq(k8s_query_append(&b, &q, NULL), 0);
	buf_release(&b);
}
END_TEST

START_TEST(api_versions)
{
	char v[64];

	k8s_api_version(&k8s_res_pods, v, sizeof(v));
	ck_assert_str_eq(v, "v1");
	k8s_api_version(&api_res_redisclusters, v, sizeof(v));
	ck_assert_str_eq(v, "redis.io/v1");
	k8s_api_version(&k8s_res_leases, v, sizeof(v));
	ck_assert_str_eq(v, "coordination.k8s.io/v1");
	ck_assert_str_eq(k8s_res_pdbs.kind, "PodDisruptionBudget");
	ck_assert(!k8s_res_namespaces.namespaced);
	ck_assert(api_res_redisbackups.namespaced);
}
END_TEST

static Suite *k8s_path_suite(void)
{
	Suite *s = suite_create("k8s_path");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, path_table, 0, ARRAY_LEN(path_cases));
	tcase_add_loop_test(tc, name_lengths, 0, ARRAY_LEN(long_names));
	tcase_add_test(tc, name_subdomain_limit);
	tcase_add_loop_test(tc, encode_table, 0, ARRAY_LEN(encode_cases));
	tcase_add_loop_test(tc, query_table, 0, ARRAY_LEN(query_cases));
	tcase_add_test(tc, query_limits);
	tcase_add_test(tc, api_versions);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(k8s_path_suite)

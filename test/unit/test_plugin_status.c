/* Unit tests for the pure parts of `kubectl redis status` and friends: the view built
 * from a RedisCluster, /v1/status bodies (test/data/instance) and a pod that could not
 * be reached; its tables (golden test/data/plugin/), colours only when asked; the YAML
 * output read back by lib/yamlx; the table's alignment; the fencedInstances edits. */
#include <errno.h>
#include <string.h>

#include "lib/yamlx.h"
#include "plugin/fence.h"
#include "plugin/status.h"
#include "plugin/table.h"
#include "plugin/yaml.h"
#include "testutil.h"
#include "unit.h"

#define DATA "test/data/plugin/"

static const char cluster_json[] =
        "{\"metadata\":{\"name\":\"cache\",\"namespace\":\"prod\"},"
        "\"status\":{\"phase\":\"Healthy\",\"phaseReason\":\"\",\"currentPrimary\":\"cache-1\","
        "\"targetPrimary\":\"cache-1\",\"instances\":3,\"readyInstances\":2,"
        "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"NotAllReady\","
        "\"message\":\"2 of 3\"},{\"type\":\"PrimaryAvailable\",\"status\":\"True\"}],"
        "\"lastFailover\":{\"time\":\"2026-12-01T10:00:00Z\",\"from\":\"cache-3\","
        "\"to\":\"cache-1\",\"reason\":\"primary fenced\",\"durationMs\":812},"
        "\"instancesStatus\":[{\"name\":\"cache-3\",\"role\":\"replica\",\"ready\":false,"
        "\"lagBytes\":1024,\"lagSeconds\":3,\"link\":\"down\",\"fenced\":true}]}}";

static const char backups_json[] =
        "[{\"metadata\":{\"name\":\"b-old\",\"creationTimestamp\":\"2026-12-01T09:00:00Z\"},"
        "\"spec\":{\"clusterName\":\"cache\"},\"status\":{\"phase\":\"Completed\","
        "\"instance\":\"cache-2\",\"startedAt\":\"2026-12-01T09:00:01Z\","
        "\"stoppedAt\":\"2026-12-01T09:00:04Z\",\"size\":2048}},"
        "{\"metadata\":{\"name\":\"other\"},\"spec\":{\"clusterName\":\"web\"}}]";

static json_t *view_fixture(void)
{
	size_t l1, l2;
	char *p = tu_must_read("test/data/instance/status-redis-primary.json", &l1);
	char *r = tu_must_read("test/data/instance/status-valkey-replica.json", &l2);
	struct plugin_inst_fetch f[3] = {
		{ "cache-1", p, l1, NULL, "primary", 1 },
		{ "cache-2", r, l2, NULL, "replica", 1 },
		{ "cache-3", NULL, 0, "GET pods/cache-3/proxy/v1/status: connection refused",
		  "replica", 0 },
	};
	json_t *c = json_loads(cluster_json, 0, NULL), *b = json_loads(backups_json, 0, NULL), *v;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(b);
	v = plugin_status_view(c, "cache-1", f, 3, b);
	json_decref(c);
	json_decref(b);
	free(p);
	free(r);
	return v;
}

START_TEST(view_from_instances_and_fallback)
{
	json_t *v = view_fixture(), *i0, *i2;

	ck_assert_str_eq(json_string_value(json_object_get(v, "currentPrimary")), "cache-1");
	ck_assert_str_eq(json_string_value(json_object_get(v, "leaseHolder")), "cache-1");
	ck_assert_uint_eq(json_array_size(json_object_get(v, "instancesStatus")), 3);
	i0 = json_array_get(json_object_get(v, "instancesStatus"), 0);
	i2 = json_array_get(json_object_get(v, "instancesStatus"), 2);
	ck_assert_str_eq(json_string_value(json_object_get(i0, "source")), "instance");
	ck_assert_str_eq(json_string_value(json_object_get(i0, "role")), "primary");
	ck_assert(json_is_true(json_object_get(i0, "leaseHolder")));
	/* the pod name is the pod's, not what the body says (the replica fixture says cache-1) */
	ck_assert_str_eq(json_string_value(json_object_get(
	                         json_array_get(json_object_get(v, "instancesStatus"), 1), "pod")),
	                 "cache-2");
	ck_assert_str_eq(json_string_value(json_object_get(i2, "source")), "cluster status");
	ck_assert(json_is_true(json_object_get(i2, "fenced")));
	ck_assert_int_eq(json_integer_value(json_object_get(i2, "lagBytes")), 1024);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(i2, "error")), "refused"));
	/* only the cluster's own backups */
	ck_assert_uint_eq(json_array_size(json_object_get(v, "backups")), 1);
	tu_golden_json(DATA, "status-view.golden.json", v);
	json_decref(v);
}
END_TEST

START_TEST(render_plain_golden_and_colour)
{
	json_t *v = view_fixture();
	struct buf plain = BUF_INIT(BUF_NO_LIMIT), col = BUF_INIT(BUF_NO_LIMIT);

	plugin_status_render(v, false, &plain);
	plugin_status_render(v, true, &col);
	ck_assert_ptr_null(strchr(buf_cstr(&plain), '\033'));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&col), "\033[32mprimary\033[0m"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&col), "\033[31myes\033[0m")); /* fenced */
	tu_golden(DATA, "status.golden.txt", buf_cstr(&plain));
	buf_release(&plain);
	buf_release(&col);
	json_decref(v);
}
END_TEST

/* The YAML of the view (and of awkward scalars) reads back as the same JSON. */
START_TEST(yaml_round_trip)
{
	json_t *v = view_fixture(), *docs = NULL;
	struct buf y = BUF_INIT(BUF_NO_LIMIT);
	struct err e = { 0 };

	json_object_set_new(v, "awkward",
	                    json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:[],s:{},s:[[i,i],{s:n}],s:f}",
	                              "num", "123", "bool", "true", "colon", "a: b", "hash", "a #b",
	                              "empty", "", "nl", "two\nlines", "ea", "eo", "nested", 1, 2,
	                              "k", "real", 1.5));
	plugin_yaml_emit(v, &y);
	ck_assert_msg(yamlx_load(buf_cstr(&y), y.len, &docs, &e) == 0, "%s\n%s", e.msg,
	              buf_cstr(&y));
	ck_assert_uint_eq(json_array_size(docs), 1);
	ck_assert_msg(json_equal(json_array_get(docs, 0), v), "%s", buf_cstr(&y));
	json_decref(docs);
	json_decref(v);
	buf_release(&y);
}
END_TEST

START_TEST(table_alignment)
{
	struct plugin_table t;
	struct buf out = BUF_INIT(BUF_NO_LIMIT);

	plugin_table_init(&t, (const char *[]){ "A", "LONGER", "C", NULL });
	plugin_table_add(&t, (const char *[]){ "wide-cell", NULL, "x" }, NULL);
	plugin_table_add(&t, (const char *[]){ "", "y", "" },
	                 (const enum plugin_colour[]){ PLUGIN_RED, 0, 0 });
	plugin_table_render(&t, false, &out);
	ck_assert_str_eq(buf_cstr(&out), "A          LONGER  C\n"
	                                 "wide-cell  -       x\n"
	                                 "-          y       -\n");
	buf_clear(&out);
	plugin_table_render(&t, true, &out);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&out), "\033[31m-\033[0m          y"));
	plugin_table_release(&t);
	buf_release(&out);
}
END_TEST

static const struct {
	const char *current, *pod;
	bool fence;
	int rc;
	const char *want; /* NULL: annotation removed */
} fence_cases[] = {
	{ NULL, "c-1", true, 0, "[\"c-1\"]" },
	{ "[\"c-1\"]", "c-2", true, 0, "[\"c-1\",\"c-2\"]" },
	{ "[\"c-1\"]", "c-1", true, 0, "[\"c-1\"]" },
	{ "[\"c-1\"]", "all", true, 0, "[\"*\"]" },
	{ "[\"*\"]", "c-1", true, 0, "[\"*\"]" },
	{ "[\"c-1\",\"c-2\"]", "c-1", false, 0, "[\"c-2\"]" },
	{ "[\"c-1\"]", "c-1", false, 0, NULL },
	{ "[\"c-1\"]", "c-9", false, 0, "[\"c-1\"]" },
	{ "[\"*\"]", "all", false, 0, NULL },
	{ "[\"*\"]", "c-1", false, -EINVAL, NULL },
	{ "c-1", "c-2", true, -EPROTO, NULL },
	{ "{\"a\":1}", "c-2", true, -EPROTO, NULL },
};

START_TEST(fence_edits)
{
	char *out = (char *)"untouched";
	struct err e = { 0 };
	int rc = plugin_fence_edit(fence_cases[_i].current, fence_cases[_i].pod,
	                           fence_cases[_i].fence, &out, &e);

	ck_assert_msg(rc == fence_cases[_i].rc, "case %d: rc %d (%s)", _i, rc, e.msg);
	if (rc) {
		ck_assert_str_eq(out, "untouched");
		ck_assert(e.msg[0]);
		return;
	}
	if (!fence_cases[_i].want)
		ck_assert_ptr_null(out);
	else
		ck_assert_str_eq(out, fence_cases[_i].want);
	free(out);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("plugin_status");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, view_from_instances_and_fallback);
	tcase_add_test(tc, render_plain_golden_and_colour);
	tcase_add_test(tc, yaml_round_trip);
	tcase_add_test(tc, table_alignment);
	tcase_add_loop_test(tc, fence_edits, 0, ARRAY_LEN(fence_cases));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)

/*
 * Unit tests for controller/unsupported: the table of every spec field against the CRD
 * (a CRD property no row decides fails, so does a row the CRD lacks), the evidence of
 * every acted-on row (its test exists), the report (which fields of which spec are
 * unsupported), the condition in the status and the Warning Event (once per message),
 * and the user guide naming every unsupported field. Tests run from the repository root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/rediscluster.h"
#include "controller/plan.h"
#include "controller/unsupported.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

#define CRD "config/crd/bases/redis.io_redisclusters.yaml"

static json_t *crd_spec(void)
{
	json_t *docs = tu_load_yaml(CRD, 1 << 20), *s;

	s = jsonx_get(json_array_get(docs, 0), "spec.versions[0].schema.openAPIV3Schema");
	s = json_incref(jsonx_get(s, "properties.spec"));
	json_decref(docs);
	ck_assert_msg(json_object_get(s, "properties"), "no spec properties in " CRD);
	return s;
}

/* --- the table against the CRD -------------------------------------------------------- */

/* path is a row's path, or below one ("a.b" under "a", "a[].b" under "a"). */
static bool covered(const char *path)
{
	for (size_t i = 0; i < ctl_n_fields; i++) {
		size_t n = strlen(ctl_fields[i].path);

		if (strncmp(path, ctl_fields[i].path, n) == 0 &&
		    (path[n] == '\0' || path[n] == '.' || path[n] == '['))
			return true;
	}
	return false;
}

/* Some row is below path. */
static bool parent_of_rows(const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < ctl_n_fields; i++) {
		const char *p = ctl_fields[i].path;

		if (strncmp(p, path, n) == 0 && (p[n] == '.' || p[n] == '['))
			return true;
	}
	return false;
}

/* Every property of node under prefix; one that no row decides goes into missing. */
static void walk(json_t *node, const char *prefix, struct buf *missing)
{
	json_t *child, *items;
	const char *k;
	char path[256];

	json_object_foreach (json_object_get(node, "properties"), k, child) {
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (covered(path))
			continue;
		if (!parent_of_rows(path)) {
			buf_printf(missing, " spec.%s", path);
			continue;
		}
		items = json_object_get(child, "items");
		if (items) {
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "[]");
			child = items;
		}
		walk(child, path, missing);
	}
}

START_TEST(every_crd_field_has_a_decision)
{
	json_t *spec = crd_spec();
	struct buf missing = BUF_INIT(1 << 16);

	walk(spec, "", &missing);
	ck_assert_msg(missing.len == 0,
	              "CRD fields with no row in controller/unsupported.c (acted on, with the test "
	              "that shows it, or unsupported, with why):%s",
	              buf_cstr(&missing));
	buf_release(&missing);
	json_decref(spec);
}
END_TEST

/* The CRD node of a row's path ("a.b", "a[].b"), or NULL. */
static json_t *crd_node(json_t *spec, const char *path)
{
	char buf[256], *save = NULL, *tok;
	json_t *n = spec;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && n; tok = strtok_r(NULL, ".", &save)) {
		size_t len = strlen(tok);
		bool list = len > 2 && strcmp(tok + len - 2, "[]") == 0;

		if (list)
			tok[len - 2] = '\0';
		n = jsonx_get(json_object_get(n, "properties"), tok);
		if (n && list)
			n = json_object_get(n, "items");
	}
	return n;
}

START_TEST(every_row_is_in_the_crd)
{
	json_t *spec = crd_spec();

	for (size_t i = 0; i < ctl_n_fields; i++)
		ck_assert_msg(crd_node(spec, ctl_fields[i].path), "row spec.%s: no such CRD field",
		              ctl_fields[i].path);
	json_decref(spec);
}
END_TEST

/* The value a row singles out is one the CRD allows (its enum, or a boolean). */
START_TEST(row_values_exist)
{
	json_t *spec = crd_spec();

	for (size_t i = 0; i < ctl_n_fields; i++) {
		const struct ctl_field *f = &ctl_fields[i];
		json_t *n = crd_node(spec, f->path), *e;
		const char *type = jsonx_get_string(n, "type");
		bool found = false;
		size_t k;

		if (!f->value)
			continue;
		if (type && strcmp(type, "boolean") == 0)
			found = strcmp(f->value, "true") == 0 || strcmp(f->value, "false") == 0;
		json_array_foreach (json_object_get(n, "enum"), k, e)
			found |= json_is_string(e) && strcmp(json_string_value(e), f->value) == 0;
		ck_assert_msg(found, "row spec.%s: %s is no value of the CRD field", f->path,
		              f->value);
	}
	json_decref(spec);
}
END_TEST

/* --- evidence ----------------------------------------------------------------------- */

/* text names "<file>: <test>" and the file holds that test: a Check test, a shell
 * function, or a named case (a string that starts with it). */
static bool test_exists(const char *text, char *why, size_t size)
{
	char file[256], want[3][300];
	const char *sep = strstr(text, ": ");
	char *body;
	bool ok = false;

	if (!sep || (size_t)(sep - text) >= sizeof(file)) {
		snprintf(why, size, "not \"<file>: <test>\"");
		return false;
	}
	snprintf(file, sizeof(file), "%.*s", (int)(sep - text), text);
	body = tu_read_file(file, NULL);
	if (!body) {
		snprintf(why, size, "no file %s", file);
		return false;
	}
	snprintf(want[0], sizeof(want[0]), "START_TEST(%s)", sep + 2);
	snprintf(want[1], sizeof(want[1]), "\n%s() {", sep + 2);
	snprintf(want[2], sizeof(want[2]), "\"%s", sep + 2);
	for (size_t i = 0; i < 3; i++)
		ok |= strstr(body, want[i]) != NULL;
	if (!ok)
		snprintf(why, size, "%s has no test \"%s\"", file, sep + 2);
	free(body);
	return ok;
}

START_TEST(acted_rows_name_a_test)
{
	char why[512];

	for (size_t i = 0; i < ctl_n_fields; i++) {
		const struct ctl_field *f = &ctl_fields[i];

		if (f->verdict != CTL_FIELD_ACTED)
			continue;
		ck_assert_msg(test_exists(f->text, why, sizeof(why)), "row spec.%s: %s", f->path,
		              why);
	}
}
END_TEST

/* An unsupported row without a predicate is judged by presence: a plain path. */
START_TEST(unsupported_rows_are_judged)
{
	for (size_t i = 0; i < ctl_n_fields; i++) {
		const struct ctl_field *f = &ctl_fields[i];

		ck_assert(f->verdict == CTL_FIELD_ACTED || f->verdict == CTL_FIELD_UNSUPPORTED);
		ck_assert_msg(f->text && *f->text, "row spec.%s: no test or reason", f->path);
		if (f->verdict == CTL_FIELD_UNSUPPORTED && !f->in_effect)
			ck_assert_msg(!strchr(f->path, '[') && !f->value,
			              "row spec.%s: a list or value needs a predicate", f->path);
	}
}
END_TEST

/* docs/USER-GUIDE.md names every unsupported field. */
START_TEST(guide_names_unsupported_fields)
{
	char *guide = tu_must_read("docs/USER-GUIDE.md", NULL), want[160];

	for (size_t i = 0; i < ctl_n_fields; i++) {
		if (ctl_fields[i].verdict != CTL_FIELD_UNSUPPORTED)
			continue;
		snprintf(want, sizeof(want), "`spec.%s`", ctl_fields[i].path);
		ck_assert_msg(strstr(guide, want), "docs/USER-GUIDE.md does not name %s", want);
	}
	free(guide);
}
END_TEST

/* --- the report ---------------------------------------------------------------------- */

static struct api_redis_cluster decode(const char *spec)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:o}", "apiVersion", "redis.io/v1", "kind",
	                        "RedisCluster", "metadata", "name", "c", "namespace", "ns", "spec",
	                        json_loads(spec, 0, NULL));
	struct api_redis_cluster rc;
	struct err e = { 0 };

	ck_assert_msg(api_redis_cluster_decode(obj, &rc, &e) == 0, "%s: %s", spec, e.msg);
	json_decref(obj);
	return rc;
}

static const struct {
	const char *spec;
	size_t n;
	const char *has, *lacks; /* in the message; NULL: nothing to check */
} reports[] = {
	{ "{\"instances\":3}", 0, NULL, "spec." },
	{ "{\"mode\":\"sentinel\",\"instances\":3,\"sentinel\":{}}", 0, NULL, "spec." },
	{ "{\"mode\":\"cluster\",\"shards\":3}", 2, "spec.mode: cluster: Redis Cluster", NULL },
	{ "{\"aclConfigSecret\":{\"name\":\"acl\"}}", 0, NULL, "aclConfigSecret" }, /* loaded */
	{ "{\"minSyncReplicas\":1,\"maxSyncReplicas\":1}", 0, NULL, "maxSyncReplicas" },
	{ "{\"minSyncReplicas\":1,\"maxSyncReplicas\":2}", 1, "spec.maxSyncReplicas: ", NULL },
	{ "{\"primaryIsolation\":{\"apiServerTimeout\":\"3s\"}}", 0, NULL, "primaryIsolation" },
	{ "{\"primaryIsolation\":{\"enabled\":false}}", 1,
	  "spec.primaryIsolation.enabled: false: ", NULL },
	{ "{\"primaryIsolation\":{\"peerTimeout\":\"5s\"}}", 1, "spec.primaryIsolation.peerTimeout",
	  "enabled" },
	{ "{\"replicaMode\":{\"enabled\":false}}", 0, NULL, "replicaMode" },
	{ "{\"replicaMode\":{\"enabled\":true,\"source\":{\"host\":\"h\"}}}", 1,
	  "spec.replicaMode: replica clusters", NULL },
	{ "{\"exposure\":{\"enabled\":true,\"entryPoints\":[\"redis\"]}}", 1,
	  "spec.exposure: ", NULL },
	{ "{\"exposure\":{\"enabled\":false}}", 0, NULL, "exposure" },
	{ "{\"nodeMaintenanceWindow\":{\"inProgress\":true}}", 1,
	  "spec.nodeMaintenanceWindow: ", NULL },
	{ "{\"nodeMaintenanceWindow\":{\"inProgress\":false,\"reusePVC\":false}}", 0, NULL,
	  "nodeMaintenanceWindow" },
	{ "{\"maxSyncReplicas\":2,\"exposure\":{\"enabled\":true}}", 2,
	  "spec.maxSyncReplicas: min-replicas-to-write stays at spec.minSyncReplicas: raising it "
	  "toward maxSyncReplicas while more replicas are healthy is not implemented; "
	  "spec.exposure: ",
	  NULL },
};

START_TEST(report)
{
	struct api_redis_cluster rc = decode(reports[_i].spec);
	char msg[CTL_UNSUPPORTED_MSG_MAX];
	size_t n = ctl_unsupported_message(&rc, msg, sizeof(msg));

	ck_assert_msg(n == reports[_i].n, "%s: %zu fields (%s), want %zu", reports[_i].spec, n, msg,
	              reports[_i].n);
	ck_assert_msg(!reports[_i].has || strstr(msg, reports[_i].has), "%s: %s", reports[_i].spec,
	              msg);
	ck_assert_msg(!reports[_i].lacks || !strstr(msg, reports[_i].lacks), "%s: %s",
	              reports[_i].spec, msg);
	api_redis_cluster_release(&rc);
}
END_TEST

/* The seed's manifest: its peerTimeout is reported, nothing else (aclConfigSecret is
 * loaded). */
START_TEST(seed_manifest_report)
{
	json_t *docs = tu_load_yaml("test/data/api/decode/rediscluster-seed.yaml", 1 << 16);
	struct api_redis_cluster rc;
	struct err e = { 0 };
	char msg[CTL_UNSUPPORTED_MSG_MAX];

	ck_assert_msg(api_redis_cluster_decode(json_array_get(docs, 0), &rc, &e) == 0, "%s", e.msg);
	ck_assert_uint_eq(ctl_unsupported_message(&rc, msg, sizeof(msg)), 1);
	ck_assert_msg(strncmp(msg, "spec.primaryIsolation.peerTimeout: ", 35) == 0, "%s", msg);
	api_redis_cluster_release(&rc);
	json_decref(docs);
}
END_TEST

/* A short buffer holds whole fields only. */
START_TEST(report_truncated_at_a_field)
{
	struct api_redis_cluster rc =
	        decode("{\"maxSyncReplicas\":2,\"exposure\":{\"enabled\":true}}");
	char full[CTL_UNSUPPORTED_MSG_MAX], small[160];

	ck_assert_uint_eq(ctl_unsupported_message(&rc, full, sizeof(full)), 2);
	ck_assert_uint_eq(ctl_unsupported_message(&rc, small, sizeof(small)), 2);
	ck_assert_msg(strlen(small) < strlen(full) && strncmp(full, small, strlen(small)) == 0 &&
	                      strstr(small, "is not implemented") &&
	                      !strstr(small, "spec.exposure"),
	              "%s", small);
	ck_assert_uint_eq(ctl_unsupported_message(&rc, small, 1), 2);
	ck_assert_str_eq(small, "");
	api_redis_cluster_release(&rc);
	/* the first one too long, the second fits: no separator in front of it */
	rc = decode("{\"nodeMaintenanceWindow\":{\"inProgress\":true},\"exposure\":{\"enabled\":"
	            "true}}");
	ck_assert_uint_eq(ctl_unsupported_message(&rc, full, sizeof(full)), 2);
	ck_assert_msg(strlen(full) > sizeof(small) && strchr(full, ';'), "%s", full);
	ck_assert_uint_eq(ctl_unsupported_message(&rc, small, sizeof(small)), 2);
	ck_assert_msg(strncmp(small, "spec.exposure: ", 15) == 0, "%s", small);
	api_redis_cluster_release(&rc);
}
END_TEST

/* --- evidence of rows that no other test renders ------------------------------------- */

/* spec.topologySpreadConstraints and spec.affinity reach the data pod as written. */
START_TEST(pod_carries_scheduling_fields)
{
	static const struct ctl_config cfg = { .operator_image = "redis-operator:dev",
		                               .operator_namespace = "redis-operator-system",
		                               .run_as_user = 999 };
	struct api_redis_cluster rc = decode(
	        "{\"topologySpreadConstraints\":[{\"maxSkew\":1,\"topologyKey\":\"zone\","
	        "\"whenUnsatisfiable\":\"ScheduleAnyway\"}],\"affinity\":{\"podAntiAffinity\":"
	        "{\"requiredDuringSchedulingIgnoredDuringExecution\":[{\"topologyKey\":\"host\"}]}}"
	        "}");
	json_t *pod = desired_pod(&rc, &cfg, 1, CTL_ROLE_PRIMARY);

	ck_assert_ptr_nonnull(pod);
	ck_assert_str_eq(jsonx_get_string(pod, "spec.topologySpreadConstraints[0].topologyKey"),
	                 "zone");
	ck_assert_str_eq(jsonx_get_string(pod, "spec.affinity.podAntiAffinity."
	                                       "requiredDuringSchedulingIgnoredDuringExecution[0]."
	                                       "topologyKey"),
	                 "host");
	json_decref(pod);
	api_redis_cluster_release(&rc);
}
END_TEST

/* --- the condition and the event ------------------------------------------------------ */

static json_t *condition_of(json_t *status, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach (json_object_get(status, "conditions"), i, c)
		if (strcmp(jsonx_get_string(c, "type"), type) == 0)
			return c;
	return NULL;
}

/* The status the planner computes for a cluster with no pods yet. */
static json_t *status_of(const struct api_redis_cluster *rc, json_t *obj)
{
	struct ctl_config cfg = { 0 };
	struct ctl_view v = { .rc = rc, .obj = obj, .cfg = &cfg, .now_wall_ms = 1 };
	struct plan_state s = { .primary = "" };

	return ctl_status_build(&v, &s);
}

START_TEST(condition_in_status)
{
	struct api_redis_cluster rc = decode("{\"exposure\":{\"enabled\":true}}");
	json_t *st = status_of(&rc, rc.json), *c = condition_of(st, CTL_COND_UNSUPPORTED);
	char msg[CTL_UNSUPPORTED_MSG_MAX];

	ctl_unsupported_message(&rc, msg, sizeof(msg));
	ck_assert_msg(c, "no %s condition", CTL_COND_UNSUPPORTED);
	ck_assert_str_eq(jsonx_get_string(c, "status"), "True");
	ck_assert_str_eq(jsonx_get_string(c, "reason"), CTL_REASON_UNSUPPORTED);
	ck_assert_str_eq(jsonx_get_string(c, "message"), msg);
	json_decref(st);
	api_redis_cluster_release(&rc);
	rc = decode("{\"exposure\":{\"enabled\":false}}");
	st = status_of(&rc, rc.json);
	ck_assert_ptr_null(condition_of(st, CTL_COND_UNSUPPORTED));
	ck_assert_ptr_nonnull(condition_of(st, "Ready")); /* the others are still there */
	json_decref(st);
	api_redis_cluster_release(&rc);
}
END_TEST

/* Events of plan p with reason CTL_REASON_UNSUPPORTED. */
static size_t events(const struct ctl_plan *p, const char **note)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (p->acts[i].kind != CTL_ACT_EVENT ||
		    strcmp(p->acts[i].reason, CTL_REASON_UNSUPPORTED) != 0)
			continue;
		ck_assert(p->acts[i].warning);
		*note = p->acts[i].note;
		n++;
	}
	return n;
}

/* The event comes when the status does not show the same message yet. */
static size_t event_with(const struct api_redis_cluster *rc, const char *status, const char **note,
                         struct ctl_plan *p)
{
	json_t *obj = json_pack("{s:o}", "status", json_loads(status, 0, NULL));
	struct ctl_view v = { .rc = rc, .obj = obj };
	size_t n;

	ctl_plan_init(p);
	ctl_unsupported_event(&v, p);
	n = events(p, note);
	json_decref(obj);
	return n;
}

START_TEST(event_once_per_message)
{
	struct api_redis_cluster rc = decode("{\"mode\":\"cluster\",\"shards\":3}");
	char msg[CTL_UNSUPPORTED_MSG_MAX], shown[CTL_UNSUPPORTED_MSG_MAX + 128];
	const char *note = NULL;
	struct ctl_plan p;

	ctl_unsupported_message(&rc, msg, sizeof(msg));
	ck_assert_uint_eq(event_with(&rc, "{}", &note, &p), 1);
	ck_assert_msg(strstr(note, "spec.mode: cluster, spec.shards") &&
	                      strstr(note, CTL_COND_UNSUPPORTED),
	              "%s", note);
	ctl_plan_release(&p);
	snprintf(shown, sizeof(shown),
	         "{\"conditions\":[{\"type\":\"%s\",\"status\":\"True\",\"message\":\"%s\"}]}",
	         CTL_COND_UNSUPPORTED, msg);
	ck_assert_uint_eq(event_with(&rc, shown, &note, &p), 0);
	ctl_plan_release(&p);
	snprintf(shown, sizeof(shown),
	         "{\"conditions\":[{\"type\":\"%s\",\"status\":\"True\",\"message\":\"older\"}]}",
	         CTL_COND_UNSUPPORTED);
	ck_assert_uint_eq(event_with(&rc, shown, &note, &p), 1);
	ctl_plan_release(&p);
	api_redis_cluster_release(&rc);
	rc = decode("{}");
	ck_assert_uint_eq(event_with(&rc, "{}", &note, &p), 0);
	ctl_plan_release(&p);
	api_redis_cluster_release(&rc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("controller_unsupported");
	TCase *t = tcase_create("all");

	tcase_add_test(t, every_crd_field_has_a_decision);
	tcase_add_test(t, every_row_is_in_the_crd);
	tcase_add_test(t, row_values_exist);
	tcase_add_test(t, acted_rows_name_a_test);
	tcase_add_test(t, unsupported_rows_are_judged);
	tcase_add_test(t, guide_names_unsupported_fields);
	tcase_add_loop_test(t, report, 0, ARRAY_LEN(reports));
	tcase_add_test(t, seed_manifest_report);
	tcase_add_test(t, report_truncated_at_a_field);
	tcase_add_test(t, pod_carries_scheduling_fields);
	tcase_add_test(t, condition_in_status);
	tcase_add_test(t, event_once_per_message);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(make_suite)

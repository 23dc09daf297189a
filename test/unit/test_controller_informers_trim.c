/*
 * test_controller_informers_trim: what the caches keep (controller/informers.c,
 * ctl_informer_trim) on a Pod and a PVC as the API server sent them
 * (test/data/controller/trim-*.json, from the local environment): every path the
 * controller reads of the kind answers the same after the trim as before (reconcile.c
 * fill_pods/fill_pvcs, poller.c, backup.c, owner.c, the handlers' labels), and what it
 * never reads is gone (managedFields, the pod spec but the web-identity env, the PV
 * binder's annotations).
 */
#include <string.h>

#include "controller/internal.h"
#include "controller/view.h"
#include "lib/jsonx.h"
#include "unit.h"

#define DIR "test/data/controller/"

static json_t *load(const char *file)
{
	json_error_t je;
	json_t *j = json_load_file(file, 0, &je);

	ck_assert_msg(j != NULL, "%s: %s", file, je.text);
	return j;
}

/* Every path answers with an equal value (or is absent) in both. */
static void same_reads(json_t *full, json_t *trimmed, const char *const *paths)
{
	for (size_t i = 0; paths[i]; i++) {
		json_t *a = jsonx_get(full, paths[i]), *b = jsonx_get(trimmed, paths[i]);

		ck_assert_msg(a != NULL, "%s: not in the fixture", paths[i]);
		ck_assert_msg(b && json_equal(a, b), "%s: changed by the trim", paths[i]);
	}
}

static const char *const pod_reads[] = {
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"metadata.labels",
	"metadata.annotations",
	"metadata.ownerReferences",
	"metadata.resourceVersion",
	"status.podIP",
	"status.phase",
	NULL,
};

/* condition_true (reconcile.c): the Ready condition's type and status. */
static const char *ready_of(json_t *pod)
{
	json_t *cd;
	size_t i;

	json_array_foreach (jsonx_get(pod, "status.conditions"), i, cd) {
		if (strcmp(jsonx_get_string(cd, "type"), "Ready") == 0)
			return jsonx_get_string(cd, "status");
	}
	return NULL;
}

START_TEST(a_trimmed_pod_answers_every_read)
{
	json_t *full = load(DIR "trim-pod.json"), *t;

	json_object_set_new(json_object_get(full, "metadata"), "deletionTimestamp",
	                    json_string("2026-12-02T08:00:00Z"));
	t = json_deep_copy(full);
	ctl_informer_trim(CTL_INF_PODS, t);
	same_reads(full, t, pod_reads);
	ck_assert(jsonx_get(t, "metadata.deletionTimestamp") != NULL);
	ck_assert_str_eq(ready_of(t), "True");
	ck_assert_str_eq(ready_of(full), "True");
	ck_assert_int_eq(json_array_size(jsonx_get(t, "status.conditions")),
	                 json_array_size(jsonx_get(full, "status.conditions")));
	ck_assert(json_object_get(json_object_get(t, "metadata"), CTL_LABEL_CLUSTER) == NULL);
	ck_assert(json_object_get(jsonx_get(t, "metadata.labels"), CTL_LABEL_CLUSTER) != NULL);
	/* never read: gone */
	ck_assert(jsonx_get(t, "metadata.managedFields") == NULL);
	ck_assert(jsonx_get(full, "spec") && !jsonx_get(t, "spec"));
	ck_assert(jsonx_get(full, "status.hostIP") && !jsonx_get(t, "status.hostIP"));
	ck_assert(jsonx_get(full, "status.startTime") && !jsonx_get(t, "status.startTime"));
	ck_assert(!jsonx_get(json_array_get(jsonx_get(t, "status.conditions"), 0),
	                     "lastTransitionTime"));
	ck_assert_int_eq(json_object_size(jsonx_get(t, "status")), 3);
	json_decref(full);
	json_decref(t);
}
END_TEST

/* backup.c pod_env: the web-identity variables a webhook injected, and nothing else. */
START_TEST(a_trimmed_pod_keeps_the_web_identity_env)
{
	json_t *t = load(DIR "trim-pod.json"), *env;
	json_t *ct = json_array_get(jsonx_get(t, "spec.containers"), 0);

	json_object_set_new(ct, "env",
	                    json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "name", "HOME", "value",
	                              "/x", "name", "AWS_ROLE_ARN", "value",
	                              "arn:aws:iam::1:role/r", "name",
	                              "AWS_WEB_IDENTITY_TOKEN_FILE", "value", "/var/t"));
	ctl_informer_trim(CTL_INF_PODS, t);
	env = jsonx_get(t, "spec.containers[0].env");
	ck_assert_int_eq(json_array_size(env), 2);
	ck_assert_str_eq(jsonx_get_string(env, "[0].name"), "AWS_ROLE_ARN");
	ck_assert_str_eq(jsonx_get_string(env, "[0].value"), "arn:aws:iam::1:role/r");
	ck_assert_str_eq(jsonx_get_string(env, "[1].name"), "AWS_WEB_IDENTITY_TOKEN_FILE");
	ck_assert_int_eq(json_object_size(jsonx_get(t, "spec")), 1);
	ck_assert_int_eq(json_object_size(jsonx_get(t, "spec.containers[0]")), 1);
	json_decref(t);
}
END_TEST

static const char *const pvc_reads[] = {
	"metadata.name",
	"metadata.namespace",
	"metadata.uid",
	"metadata.labels",
	"metadata.ownerReferences",
	"metadata.resourceVersion",
	"metadata.finalizers",
	"spec.resources.requests.storage",
	"status.capacity.storage",
	NULL,
};

START_TEST(a_trimmed_pvc_answers_every_read)
{
	json_t *full = load(DIR "trim-pvc.json"), *t, *ann;

	json_object_set_new(json_object_get(full, "metadata"), "deletionTimestamp",
	                    json_string("2026-12-02T08:00:00Z"));
	json_object_set_new(jsonx_get(full, "metadata.annotations"), "example.com/mine",
	                    json_string("kept"));
	t = json_deep_copy(full);
	ctl_informer_trim(CTL_INF_PVCS, t);
	same_reads(full, t, pvc_reads);
	ck_assert(jsonx_get(t, "metadata.deletionTimestamp") != NULL);
	ann = jsonx_get(t, "metadata.annotations");
	ck_assert_str_eq(json_string_value(json_object_get(ann, "example.com/mine")), "kept");
	ck_assert_int_eq(json_object_size(ann), 1); /* the PV binder's are gone */
	ck_assert(jsonx_get(full, "spec.volumeName") && !jsonx_get(t, "spec.volumeName"));
	ck_assert(jsonx_get(full, "status.phase") && !jsonx_get(t, "status.phase"));
	ck_assert(jsonx_get(t, "metadata.managedFields") == NULL);
	json_decref(full);
	json_decref(t);
}
END_TEST

START_TEST(kinds_without_a_trim_keep_all_but_the_standard)
{
	json_t *full = load(DIR "trim-pvc.json"), *t = json_deep_copy(full);

	ctl_informer_trim(CTL_INF_SERVICES, t);
	ck_assert(jsonx_get(t, "metadata.managedFields") == NULL);
	json_object_del(json_object_get(full, "metadata"), "managedFields");
	ck_assert(json_equal(full, t));
	ck_assert_int_eq(ctl_informer_kind("persistentvolumeclaims"), CTL_INF_PVCS);
	ck_assert_int_eq(ctl_informer_kind("redisclusters"), CTL_INF_CLUSTERS);
	ck_assert_int_eq(ctl_informer_kind("nodes"), -1);
	json_decref(full);
	json_decref(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_informers_trim");
	TCase *t = tcase_create("all");

	tcase_add_test(t, a_trimmed_pod_answers_every_read);
	tcase_add_test(t, a_trimmed_pod_keeps_the_web_identity_env);
	tcase_add_test(t, a_trimmed_pvc_answers_every_read);
	tcase_add_test(t, kinds_without_a_trim_keep_all_but_the_standard);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

/*
 * Unit tests for the pure parts of backups: the object keys, the manifest, the state
 * file (a backup cut short by a restart reads back failed and retryable), and the /v1
 * contract's backup types (api/instance_v1.h): the request, status.backup and
 * status.restore, the restore source: encode, decode, equal; malformed bodies refused
 * with the field named and never a credential's value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/instance_v1.h"
#include "instance/backup.h"
#include "lib/jsonx.h"
#include "unit.h"

static const struct {
	const char *path, *cluster, *name, *dump, *manifest;
} keys[] = {
	{ "", "cache", "prod/b1", "cache/prod/b1/dump.rdb", "cache/prod/b1/manifest.json" },
	{ "backups", "cache", "b1", "backups/cache/b1/dump.rdb", "backups/cache/b1/manifest.json" },
	{ "/backups/x/", "c", "n/b", "backups/x/c/n/b/dump.rdb", "backups/x/c/n/b/manifest.json" },
	{ NULL, "c", "b", "c/b/dump.rdb", "c/b/manifest.json" },
};

START_TEST(key_layout)
{
	char d[INST_BACKUP_KEY_MAX], m[INST_BACKUP_KEY_MAX];

	ck_assert_int_eq(
	        inst_backup_keys(keys[_i].path, keys[_i].cluster, keys[_i].name, d, m, NULL), 0);
	ck_assert_str_eq(d, keys[_i].dump);
	ck_assert_str_eq(m, keys[_i].manifest);
}
END_TEST

START_TEST(key_limits)
{
	char d[INST_BACKUP_KEY_MAX] = "unchanged", m[INST_BACKUP_KEY_MAX];
	char *path = malloc(INST_BACKUP_KEY_MAX);
	struct err e = { 0 };

	memset(path, 'p', INST_BACKUP_KEY_MAX - 1);
	path[INST_BACKUP_KEY_MAX - 1] = '\0';
	ck_assert_int_eq(inst_backup_keys(path, "c", "b", d, m, &e), -ENAMETOOLONG);
	ck_assert_str_eq(d, "unchanged");
	free(path);
	ck_assert_int_eq(inst_backup_sibling("a/b/manifest.json", "dump.rdb", d, NULL), 0);
	ck_assert_str_eq(d, "a/b/dump.rdb");
	ck_assert_int_eq(inst_backup_sibling("manifest.json", "dump.rdb", d, NULL), 0);
	ck_assert_str_eq(d, "dump.rdb");
	ck_assert_int_eq(inst_backup_sibling("a/manifest.json", "../x", d, NULL), -EINVAL);
	ck_assert_int_eq(inst_backup_sibling("a/manifest.json", "..", d, NULL), -EINVAL);
	ck_assert_int_eq(inst_backup_sibling("a/manifest.json", "", d, NULL), -EINVAL);
}
END_TEST

#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

START_TEST(manifest_round_trip)
{
	struct inst_manifest m = { .format = 1, .size = 4242, .offset = 77 }, got;
	char *text, *again;

	strcpy(m.cluster, "cache");
	strcpy(m.name, "prod/b1");
	strcpy(m.method, "rdb");
	strcpy(m.file, "dump.rdb");
	strcpy(m.sha256, SHA);
	strcpy(m.engine, "valkey");
	strcpy(m.engine_version, "8.0.1");
	strcpy(m.repl_id, "0123456789abcdef0123456789abcdef01234567");
	strcpy(m.created_at, "2024-01-01T00:00:00Z");
	text = inst_manifest_encode(&m);
	ck_assert_ptr_nonnull(strstr(text, "\"sha256\":\"" SHA "\""));
	ck_assert_int_eq(inst_manifest_decode(text, strlen(text), &got, NULL), 0);
	ck_assert_int_eq(memcmp(&m, &got, sizeof(m)), 0);
	again = inst_manifest_encode(&got);
	ck_assert_str_eq(text, again);
	free(text);
	free(again);
}
END_TEST

static const struct {
	const char *body, *msg;
} bad_manifests[] = {
	{ "not json", "manifest: " },
	{ "[]", "manifest: expected a JSON object" },
	{ "{\"format\":1,\"size\":1,\"sha256\":\"" SHA "\"}", "manifest: file: required" },
	{ "{\"format\":1,\"file\":\"dump.rdb\",\"sha256\":\"" SHA "\"}",
	  "manifest: size: required" },
	{ "{\"format\":1,\"file\":\"dump.rdb\",\"size\":1,\"sha256\":\"ABC\"}",
	  "manifest: sha256: expected 64 lower-case hex digits" },
	{ "{\"format\":2,\"file\":\"dump.rdb\",\"size\":1,\"sha256\":\"" SHA "\"}",
	  "manifest: format: 2 is newer than this manager's 1" },
	{ "{\"file\":\"dump.rdb\",\"size\":1,\"sha256\":\"" SHA "\"}",
	  "manifest: format: required" },
	{ "{\"format\":1,\"file\":\"dump.rdb\",\"size\":-1,\"sha256\":\"" SHA "\"}",
	  "manifest: size: " },
};

START_TEST(manifest_malformed)
{
	struct inst_manifest m;
	struct err e = { 0 };
	const char *b = bad_manifests[_i].body;

	ck_assert_int_eq(inst_manifest_decode(b, strlen(b), &m, &e), -EPROTO);
	ck_assert_msg(strncmp(e.msg, bad_manifests[_i].msg, strlen(bad_manifests[_i].msg)) == 0,
	              "%s: %s", b, e.msg);
}
END_TEST

static struct inst_backup_view view(const char *phase)
{
	struct inst_backup_view v = { .set = true, .size = 10, .offset = 5, .attempts = 1 };

	strcpy(v.name, "prod/b1");
	strcpy(v.method, "rdb");
	snprintf(v.phase, sizeof(v.phase), "%s", phase);
	strcpy(v.started_at, "2024-01-01T00:00:00Z");
	strcpy(v.key, "c/prod/b1/dump.rdb");
	strcpy(v.manifest_key, "c/prod/b1/manifest.json");
	strcpy(v.repl_id, "abc");
	strcpy(v.engine, "redis");
	strcpy(v.engine_version, "7.0.15");
	return v;
}

START_TEST(state_file)
{
	struct inst_backup_view v = view(API_INST_BACKUP_COMPLETED), got;
	char *text;

	strcpy(v.stopped_at, "2024-01-01T00:00:09Z");
	strcpy(v.sha256, SHA);
	text = inst_backup_state_encode(&v);
	ck_assert_int_eq(inst_backup_state_decode(text, strlen(text), &got, NULL), 0);
	ck_assert_int_eq(memcmp(&v, &got, sizeof(v)), 0);
	free(text);

	v = view(API_INST_BACKUP_RUNNING);
	v.size = -1;
	text = inst_backup_state_encode(&v);
	ck_assert_ptr_nonnull(strstr(text, "\"size\":null"));
	ck_assert_int_eq(inst_backup_state_decode(text, strlen(text), &got, NULL), 0);
	ck_assert_str_eq(got.phase, API_INST_BACKUP_FAILED);
	ck_assert(got.retryable);
	ck_assert_ptr_nonnull(strstr(got.error, "restarted during the backup"));
	ck_assert_int_eq(got.size, -1);
	free(text);
	ck_assert_int_eq(inst_backup_state_decode("{}", 2, &got, NULL), -EPROTO);
}
END_TEST

/* --- the contract --- */

static const char *const good_requests[] = {
	"{\"credentials\":{\"AWS_ACCESS_KEY_ID\":\"id\",\"AWS_SECRET_ACCESS_KEY\":\"s\"},"
	"\"destination\":{\"s3\":{\"bucket\":\"b\",\"endpoint\":\"http://h:1\","
	"\"forcePathStyle\":true,\"path\":\"p/q\",\"region\":\"r\"}},\"method\":\"rdb\","
	"\"name\":\"prod/b1\"}",
	"{\"credentials\":{\"AZURE_STORAGE_ACCOUNT\":\"a\",\"AZURE_STORAGE_KEY\":\"k\"},"
	"\"destination\":{\"azure\":{\"accountName\":\"a\",\"container\":\"c\","
	"\"endpoint\":\"http://h:2/a\",\"path\":\"\"}},\"method\":\"aof\",\"name\":\"b1\"}",
};

START_TEST(request_round_trip)
{
	struct api_inst_backup_request r, again;
	const char *b = good_requests[_i];
	json_t *j;
	char *text;

	ck_assert_int_eq(api_inst_backup_request_decode(b, strlen(b), &r, NULL), 0);
	j = api_inst_backup_request_encode(&r);
	text = jsonx_dumps_compact(j);
	json_decref(j);
	ck_assert_str_eq(text, b);
	ck_assert_int_eq(api_inst_backup_request_decode(text, strlen(text), &again, NULL), 0);
	ck_assert_str_eq(again.name, r.name);
	ck_assert_int_eq(again.method, r.method);
	api_inst_backup_request_release(&again);
	api_inst_backup_request_release(&r);
	free(text);
}
END_TEST

START_TEST(request_defaults)
{
	const char *b = "{\"name\":\"b\",\"destination\":{\"s3\":{\"bucket\":\"x\"}}}";
	struct api_inst_backup_request r;

	ck_assert_int_eq(api_inst_backup_request_decode(b, strlen(b), &r, NULL), 0);
	ck_assert_int_eq(r.method, API_METHOD_RDB);
	ck_assert_str_eq(r.destination.s3.region, "us-east-1");
	ck_assert_str_eq(r.destination.s3.path, "");
	ck_assert(!r.destination.s3.force_path_style);
	ck_assert_ptr_null(r.credentials.aws_access_key_id);
	api_inst_backup_request_release(&r);
}
END_TEST

static const struct {
	const char *body, *msg;
} bad_requests[] = {
	{ "", "" },
	{ "[]", "body: expected a JSON object" },
	{ "{\"destination\":{\"s3\":{\"bucket\":\"x\"}}}", "name: required" },
	{ "{\"name\":\"a/b/c\",\"destination\":{\"s3\":{\"bucket\":\"x\"}}}",
	  "name: expected <namespace>/<name>" },
	{ "{\"name\":\"Bad_Name\",\"destination\":{\"s3\":{\"bucket\":\"x\"}}}",
	  "name: expected <namespace>/<name>" },
	{ "{\"name\":\"b\"}", "destination: required" },
	{ "{\"name\":\"b\",\"destination\":{}}", "destination: give exactly one" },
	{ "{\"name\":\"b\",\"destination\":{\"s3\":{\"bucket\":\"x\"},\"azure\":{\"container\":"
	  "\"c\"}}}",
	  "destination: give exactly one" },
	{ "{\"name\":\"b\",\"destination\":{\"s3\":{}}}", "destination.s3.bucket: required" },
	{ "{\"name\":\"b\",\"destination\":{\"s3\":{\"bucket\":\"x\",\"buckett\":1}}}",
	  "destination.s3.buckett: unknown field" },
	{ "{\"name\":\"b\",\"destination\":{\"gcs\":{}}}", "destination.gcs: unknown field" },
	{ "{\"name\":\"b\",\"method\":\"zip\",\"destination\":{\"s3\":{\"bucket\":\"x\"}}}",
	  "method: expected rdb or aof" },
	{ "{\"name\":\"b\",\"destination\":{\"s3\":{\"bucket\":\"x\"}},\"credentials\":"
	  "{\"PASSWORD\":\"hunter2\"}}",
	  "credentials.PASSWORD: unknown key" },
	{ "{\"name\":\"b\",\"destination\":{\"s3\":{\"bucket\":\"x\"}},\"credentials\":"
	  "{\"AWS_ACCESS_KEY_ID\":7}}",
	  "credentials.AWS_ACCESS_KEY_ID: expected a string" },
	{ "{\"name\":\"b\",\"extra\":1,\"destination\":{\"s3\":{\"bucket\":\"x\"}}}",
	  "extra: unknown field" },
};

START_TEST(request_malformed)
{
	struct api_inst_backup_request r;
	struct err e = { 0 };
	const char *b = bad_requests[_i].body;

	ck_assert_int_lt(api_inst_backup_request_decode(b, strlen(b), &r, &e), 0);
	ck_assert_msg(strncmp(e.msg, bad_requests[_i].msg, strlen(bad_requests[_i].msg)) == 0,
	              "%s: %s", b, e.msg);
	ck_assert_ptr_null(strstr(e.msg, "hunter2"));
}
END_TEST

START_TEST(status_round_trip)
{
	struct inst_backup_view bv = view(API_INST_BACKUP_FAILED);
	struct inst_restore_view rv = { .set = true, .size = -1, .retryable = true, .attempts = 3 };
	struct api_inst_status st = { .state = "booting", .role = "unknown" }, got;
	json_t *j, *j2;
	char *text, *text2;

	strcpy(bv.error, "s3 PutObject b/x: 403 InvalidAccessKeyId: nope");
	strcpy(rv.name, "prod/b1");
	strcpy(rv.phase, API_INST_RESTORE_FAILED);
	strcpy(rv.error, "c/prod/b1/dump.rdb is corrupt");
	st.has_backup = st.has_restore = true;
	inst_backup_view_api(&bv, &st.backup);
	inst_restore_view_api(&rv, &st.restore);
	j = api_inst_status_encode(&st);
	text = jsonx_dumps_compact(j);
	ck_assert_int_eq(api_inst_status_decode(text, strlen(text), &got, NULL), 0);
	ck_assert(got.has_backup && got.has_restore);
	ck_assert_str_eq(got.backup.error, bv.error);
	ck_assert_str_eq(got.restore.phase, API_INST_RESTORE_FAILED);
	ck_assert(got.restore.retryable);
	j2 = api_inst_status_encode(&got);
	text2 = jsonx_dumps_compact(j2);
	ck_assert_str_eq(text, text2);
	api_inst_status_release(&got);
	json_decref(j);
	json_decref(j2);
	free(text);
	free(text2);

	/* a status without them (an older manager, or none run) leaves them out */
	st.has_backup = st.has_restore = false;
	j = api_inst_status_encode(&st);
	ck_assert_ptr_null(json_object_get(j, "backup"));
	ck_assert_ptr_null(json_object_get(j, "restore"));
	json_decref(j);
}
END_TEST

START_TEST(restore_source)
{
	const char *b = "{\"destination\":{\"s3\":{\"bucket\":\"b\",\"forcePathStyle\":false,"
	                "\"path\":\"\",\"region\":\"us-east-1\"}},\"manifestKey\":"
	                "\"c/prod/b1/manifest.json\",\"name\":\"prod/b1\"}";
	struct api_inst_restore_source r;
	struct err e = { 0 };
	json_t *j;
	char *text;

	ck_assert_int_eq(api_inst_restore_source_decode(b, strlen(b), &r, NULL), 0);
	j = api_inst_restore_source_encode(&r);
	text = jsonx_dumps_compact(j);
	ck_assert_str_eq(text, b);
	json_decref(j);
	free(text);
	api_inst_restore_source_release(&r);
	ck_assert_int_lt(api_inst_restore_source_decode("{\"name\":\"x\"}", 12, &r, &e), 0);
	ck_assert_str_eq(e.msg, "manifestKey: required");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_backup");
	TCase *t = tcase_create("backup");

	tcase_add_loop_test(t, key_layout, 0, ARRAY_LEN(keys));
	tcase_add_test(t, key_limits);
	tcase_add_test(t, manifest_round_trip);
	tcase_add_loop_test(t, manifest_malformed, 0, ARRAY_LEN(bad_manifests));
	tcase_add_test(t, state_file);
	tcase_add_loop_test(t, request_round_trip, 0, ARRAY_LEN(good_requests));
	tcase_add_test(t, request_defaults);
	tcase_add_loop_test(t, request_malformed, 0, ARRAY_LEN(bad_requests));
	tcase_add_test(t, status_round_trip);
	tcase_add_test(t, restore_source);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

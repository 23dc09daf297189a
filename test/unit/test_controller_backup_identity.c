/*
 * Unit tests for cloud workload identity, which the operator does not support yet
 * (api/backup_store.h: api_backup_web_identity; docs/backup.md, "Credentials"): which
 * environments say so, for which provider, only without credentials; and the RedisBackup
 * that would use it fails at once with that message (bk_decide) instead of starting an
 * upload that fails with a generic missing-credentials error.
 */
#include <string.h>

#include "api/backup_store.h"
#include "controller/backup.h"
#include "unit.h"

/* An environment as "NAME=value" strings, NULL-terminated. */
static const char *env_in(void *ctx, const char *name)
{
	const char *const *env = ctx;
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

#define IRSA  "AWS_ROLE_ARN=arn:aws:iam::1:role/r", "AWS_WEB_IDENTITY_TOKEN_FILE=/var/run/t"
#define AZWI  "AZURE_CLIENT_ID=c", "AZURE_TENANT_ID=t", "AZURE_FEDERATED_TOKEN_FILE=/var/run/f"
#define S3    true
#define AZURE false

static const struct {
	const char *why;
	bool s3;
	const char *cred; /* one credential, "KEY" set to "v"; NULL: none */
	const char *env[6];
	const char *want; /* a substring of the message; NULL: not detected */
} cases[] = {
	{ "EKS IRSA, no Secret", S3, NULL, { IRSA }, "AWS web-identity credentials" },
	{ "IRSA with an access key: the key is used", S3, "AWS_ACCESS_KEY_ID", { IRSA }, NULL },
	{ "a role without a token file is not IRSA", S3, NULL, { "AWS_ROLE_ARN=arn:x" }, NULL },
	{ "an empty token file variable",
	  S3,
	  NULL,
	  { "AWS_ROLE_ARN=arn:x", "AWS_WEB_IDENTITY_TOKEN_FILE=" },
	  NULL },
	{ "Azure workload identity for an s3 destination", S3, NULL, { AZWI }, NULL },
	{ "Azure workload identity, no Secret",
	  AZURE,
	  NULL,
	  { AZWI },
	  "Azure workload-identity credentials (AZURE_FEDERATED_TOKEN_FILE)" },
	{ "Azure workload identity with a SAS token",
	  AZURE,
	  "AZURE_STORAGE_SAS_TOKEN",
	  { AZWI },
	  NULL },
	{ "Azure with a connection string",
	  AZURE,
	  "AZURE_STORAGE_CONNECTION_STRING",
	  { AZWI },
	  NULL },
	{ "IRSA for an azure destination", AZURE, NULL, { IRSA }, NULL },
	{ "nothing at all: the store's own error", S3, NULL, { NULL }, NULL },
};

START_TEST(detected)
{
	struct api_destination d = { .set = true };
	struct api_inst_credentials k = { 0 };
	char msg[API_BACKUP_WEB_IDENTITY_MSG_MAX] = "untouched";
	bool got;

	if (cases[_i].s3)
		d.s3 = (struct api_s3){ .set = true, .bucket = "b" };
	else
		d.azure = (struct api_azure){ .set = true, .container = "c" };
	for (size_t i = 0; cases[_i].cred && i < API_INST_CREDENTIAL_KEYS; i++)
		if (strcmp(api_inst_credential_key(i), cases[_i].cred) == 0)
			api_inst_credentials_set(&k, i, "v");
	got = api_backup_web_identity(&d, &k, env_in, (void *)cases[_i].env, msg);
	ck_assert_msg(got == (cases[_i].want != NULL), "%s: %s", cases[_i].why,
	              got ? msg : "not detected");
	if (!got) {
		ck_assert_str_eq(msg, "untouched");
		return;
	}
	ck_assert_msg(strstr(msg, cases[_i].want), "%s: %s", cases[_i].why, msg);
	ck_assert_ptr_nonnull(strstr(msg, "not supported by this operator yet"));
	ck_assert_ptr_nonnull(strstr(msg, "give a credentials Secret"));
}
END_TEST

/* Pending with no Secret and web identity on the chosen pod: Failed at once, that reason
 * and message, nothing started; without it the same input starts the backup. */
START_TEST(decide_fails_at_once)
{
	const char *msg = "AWS web-identity credentials (...) detected but not supported";
	struct bk_status cur = { 0 };
	struct bk_input in = { .name = "b1",
		               .inst_name = "ns/b1",
		               .cur = &cur,
		               .now_ms = INT64_C(1767225600000),
		               .created_ms = INT64_C(1767225600000),
		               .now = "2026-01-01T00:00:00Z",
		               .cluster = "c",
		               .cluster_found = true,
		               .chosen = "c-2",
		               .web_identity = msg };
	struct bk_step st;

	bk_decide(&in, &st);
	ck_assert_int_eq(st.next.phase, API_BACKUP_FAILED);
	ck_assert_int_eq(st.action, BK_NOTHING);
	ck_assert_str_eq(st.next.reason, API_BACKUP_WEB_IDENTITY_REASON);
	ck_assert_str_eq(st.next.message, msg);
	ck_assert_int_eq(st.next.cond, API_CONDITION_FALSE);
	ck_assert(st.failed && st.warning);
	ck_assert_str_eq(st.event, "BackupFailed");
	in.web_identity = NULL;
	bk_decide(&in, &st);
	ck_assert_int_eq(st.next.phase, API_BACKUP_RUNNING);
	ck_assert_int_eq(st.action, BK_START);
}
END_TEST

static Suite *identity_suite(void)
{
	Suite *s = suite_create("controller_backup_identity");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, detected, 0, ARRAY_LEN(cases));
	tcase_add_test(tc, decide_fails_at_once);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(identity_suite)

/*
 * testutil: the helpers of testutil.h. Stateless; the files they read are capped by
 * TU_FILE_MAX so that a wrong path (a device) fails the test instead of hanging it.
 */
#include "testutil.h"

#include <ftw.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"
#include "lib/file.h"
#include "lib/yamlx.h"
#include "unit.h"

char *tu_read_file(const char *path, size_t *len)
{
	char *text;

	if (file_read_all(path, TU_FILE_MAX, &text, len, NULL) < 0)
		return NULL;
	return text;
}

char *tu_must_read(const char *path, size_t *len)
{
	struct err e = { 0 };
	char *text = NULL;

	ck_assert_msg(file_read_all(path, TU_FILE_MAX, &text, len, &e) == 0, "cannot read %s",
	              e.msg);
	return text;
}

/* With UPDATE_GOLDEN set, (re)writes path with got and then end. */
static void tu_golden_update(const char *path, const char *got, const char *end)
{
	FILE *f;

	if (!getenv("UPDATE_GOLDEN"))
		return;
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(got, f);
	fputs(end, f);
	fclose(f);
}

void tu_golden(const char *dir, const char *name, const char *got)
{
	char path[256];
	char *want;

	snprintf(path, sizeof(path), "%s%s", dir, name);
	tu_golden_update(path, got, "");
	want = tu_read_file(path, NULL);
	ck_assert_msg(want != NULL, "%s: missing golden file", path);
	ck_assert_str_eq(got, want);
	free(want);
}

void tu_golden_json(const char *dir, const char *name, const json_t *j)
{
	char path[256], *want, *got = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	size_t len = 0;

	snprintf(path, sizeof(path), "%s%s", dir, name);
	tu_golden_update(path, got, "\n");
	want = tu_read_file(path, &len);
	ck_assert_msg(want != NULL, "no %s (UPDATE_GOLDEN=1 writes it)", path);
	if (len > 0 && want[len - 1] == '\n')
		want[len - 1] = '\0';
	ck_assert_msg(strcmp(want, got) == 0, "%s differs:\n%s", path, got);
	free(want);
	free(got);
}

json_t *tu_load_yaml(const char *path, size_t max_len)
{
	struct err e = { 0 };
	json_t *docs = NULL;

	ck_assert_msg(yamlx_load_file(path, max_len, &docs, &e) == 0, "%s: %s", path, e.msg);
	return docs;
}

void tu_tmpdir(char *dir, size_t len, const char *prefix)
{
	snprintf(dir, len, "/tmp/%s-XXXXXX", prefix);
	ck_assert_msg(mkdtemp(dir) != NULL, "mkdtemp %s failed", dir);
}

static int tu_rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

void tu_rmtree(const char *dir)
{
	nftw(dir, tu_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void *tu_x509_parse(const char *pem)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	X509 *x = PEM_read_bio_X509(b, NULL, NULL, NULL);

	BIO_free(b);
	ck_assert_ptr_nonnull(x);
	return x;
}

int tu_x509_verify(const char *ca_pem, const char *leaf_pem, int purpose)
{
	X509_STORE *st = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	X509 *ca = tu_x509_parse(ca_pem), *leaf = tu_x509_parse(leaf_pem);
	int rc;

	ck_assert_int_eq(X509_STORE_add_cert(st, ca), 1);
	ck_assert_int_eq(X509_STORE_CTX_init(ctx, st, leaf, NULL), 1);
	if (purpose >= 0)
		ck_assert_int_eq(X509_STORE_CTX_set_purpose(ctx, purpose), 1);
	rc = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(ca);
	X509_free(leaf);
	return rc;
}

json_t *tu_secret_as_read(const json_t *built)
{
	json_t *out = json_deep_copy(built), *data = json_object(), *v;
	const char *k;

	json_object_foreach (json_object_get(built, "stringData"), k, v) {
		char *b = base64_encode(json_string_value(v), json_string_length(v));

		json_object_set_new(data, k, json_string(b));
		free(b);
	}
	json_object_del(out, "stringData");
	json_object_set_new(out, "data", data);
	return out;
}

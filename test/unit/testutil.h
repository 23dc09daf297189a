/*
 * testutil.h: small helpers the Check tests share (test/unit/testutil.c; the Makefile
 * links every non-test_*.c file of test/unit into every unit test binary). Prefix tu_.
 *
 *   char *text = tu_must_read("test/data/x/in.txt", &len);     fails the test if unreadable
 *   tu_golden("test/data/x/", "out.golden", got);              UPDATE_GOLDEN=1 rewrites
 *   tu_golden_json("test/data/x/", "out.golden.json", obj);    the same, for JSON
 *   json_t *docs = tu_load_yaml("config/samples/a.yaml", 1 << 20);
 *   json_t *read = tu_secret_as_read(built);                   stringData as data, base64
 *   tu_tmpdir(dir, sizeof(dir), "vk-conn");  ...  tu_rmtree(dir);
 *   ck_assert_int_eq(tu_x509_verify(ca_pem, leaf_pem, X509_PURPOSE_SSL_SERVER), X509_V_OK);
 *
 * Paths are relative to the repository root, where the tests run. Files are read with
 * lib/file under TU_FILE_MAX. Call them from a test (or a fixture): a failed check
 * aborts the test like any ck_assert.
 */
#ifndef REDIS_OPERATOR_TEST_TESTUTIL_H
#define REDIS_OPERATOR_TEST_TESTUTIL_H

#include <jansson.h>
#include <stddef.h>

#define TU_FILE_MAX (64u << 20) /* the largest test input read whole */

/* The whole file, NUL-terminated (free() it), or NULL when it cannot be read. *len gets
 * its length (NULL: not wanted). */
char *tu_read_file(const char *path, size_t *len);
/* tu_read_file, failing the test ("cannot read PATH: why") when the file cannot be read. */
char *tu_must_read(const char *path, size_t *len);
/* Checks that got equals the file dir + name, after writing got there when the
 * environment sets UPDATE_GOLDEN. */
void tu_golden(const char *dir, const char *name, const char *got);
/* The same for a JSON document: dumped with 2-space indents and sorted keys, stored
 * with a final newline (which the comparison ignores). j is borrowed. */
void tu_golden_json(const char *dir, const char *name, const json_t *j);
/* The documents of a YAML file (a new JSON array, yamlx_load_file with max_len); fails
 * the test ("PATH: why") when it cannot be read or parsed. */
json_t *tu_load_yaml(const char *path, size_t max_len);
/* A copy of a Secret as built (stringData) as the API server returns it: data, base64. */
json_t *tu_secret_as_read(const json_t *built);
/* Makes a new directory /tmp/PREFIX-XXXXXX and writes its path into dir (len bytes);
 * fails the test when it cannot. */
void tu_tmpdir(char *dir, size_t len, const char *prefix);
/* Removes dir and everything below it, following no symbolic link. */
void tu_rmtree(const char *dir);
/* A PEM certificate parsed with OpenSSL (an X509 *, X509_free() it); fails the test when
 * it does not parse. */
void *tu_x509_parse(const char *pem);
/* X509_V_OK, or OpenSSL's verification error of leaf against ca alone for purpose
 * (an X509_PURPOSE_* id; -1: any). */
int tu_x509_verify(const char *ca_pem, const char *leaf_pem, int purpose);

#endif

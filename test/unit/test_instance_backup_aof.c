/*
 * test_instance_backup_aof: the pure parts of method aof (instance/backup_aof.c) and
 * the manifest's method (instance/backup_manifest.c): the AOF manifests Redis 7.0 and
 * Valkey 8.0 write, history files left out, malformed ones refused with the line named.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "instance/backup.h"
#include "lib/buf.h"
#include "test/unit/unit.h"

static const struct {
	const char *text;
	const char *want; /* inst_aof_manifest_text of the parse */
} good[] = {
	/* redis 7.0.15 after a BGREWRITEAOF */
	{ "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type "
	  "i\n",
	  "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type "
	  "i\n" },
	/* history files are the server's to delete; keys in another order; CRLF; the base
	 * listed after an increment */
	{ "file appendonly.aof.1.base.rdb seq 1 type h\r\n"
	  "type i seq 3 file appendonly.aof.3.incr.aof\r\n"
	  "file appendonly.aof.2.base.aof seq 2 type b\r\n"
	  "file appendonly.aof.4.incr.aof seq 4 type i\r\n",
	  "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.3.incr.aof seq 3 type "
	  "i\n"
	  "file appendonly.aof.4.incr.aof seq 4 type i\n" },
	/* a base alone; an unknown key of a newer server; a comment */
	{ "# written by a test\nfile a.1.base.rdb seq 1 type b future 7\n",
	  "file a.1.base.rdb seq 1 type b\n" },
};

START_TEST(aof_manifest_parses)
{
	struct inst_aof_set *s = xcalloc(1, sizeof(*s));
	struct err e = { 0 };
	char *text;
	size_t len;

	ck_assert_msg(inst_aof_manifest_parse(good[_i].text, strlen(good[_i].text), s, &e) == 0,
	              "%s", e.msg);
	text = inst_aof_manifest_text(s, &len);
	ck_assert_str_eq(text, good[_i].want);
	ck_assert_uint_eq(len, strlen(good[_i].want));
	free(text);
	free(s);
}
END_TEST

static const struct {
	const char *text;
	const char *msg;
} bad[] = {
	{ "", "aof manifest: no base file" },
	{ "file a.1.incr.aof seq 1 type i\n", "aof manifest: no base file" },
	{ "file a.1.base.rdb seq 1 type b", "aof manifest: line 1 does not end" },
	{ "file a seq 1 type b\nfile b seq 2 type b\n",
	  "aof manifest: line 2: a second base file" },
	{ "file ../etc/passwd seq 1 type b\n",
	  "aof manifest: line 1: file ../etc/passwd is not a plain name" },
	{ "file \"a b\" seq 1 type b\n", "aof manifest: line 1: file \"a is not a plain name" },
	{ "file .. seq 1 type b\n", "aof manifest: line 1: file .. is not a plain name" },
	{ "file a seq x type b\n", "aof manifest: line 1: seq x" },
	{ "file a seq 0 type b\n", "aof manifest: line 1: seq 0" },
	{ "file a seq 1 type z\n", "aof manifest: line 1: type z (b, h or i)" },
	{ "file a seq 1\n", "aof manifest: line 1: file, seq and type are required" },
	{ "file a seq 1 type\n", "aof manifest: line 1: key type without a value" },
};

START_TEST(aof_manifest_refused)
{
	struct inst_aof_set *s = xcalloc(1, sizeof(*s));
	struct err e = { 0 };

	ck_assert_int_eq(inst_aof_manifest_parse(bad[_i].text, strlen(bad[_i].text), s, &e),
	                 -EPROTO);
	ck_assert_str_eq(e.msg, bad[_i].msg);
	free(s);
}
END_TEST

START_TEST(aof_manifest_too_many_files)
{
	struct inst_aof_set *s = xcalloc(1, sizeof(*s));
	struct buf b = BUF_INIT(1u << 20);
	struct err e = { 0 };

	ck_assert_int_eq(buf_append_str(&b, "file a.1.base.rdb seq 1 type b\n"), 0);
	for (int i = 0; i < INST_AOF_FILES_MAX; i++)
		ck_assert_int_eq(buf_printf(&b, "file a.%d.incr.aof seq %d type i\n", i + 1, i + 1),
		                 0);
	ck_assert_int_eq(inst_aof_manifest_parse(b.data, b.len, s, &e), -EPROTO);
	ck_assert_str_eq(e.msg, "aof manifest: more than 256 files");
	buf_release(&b);
	free(s);
}
END_TEST

#define MANIFEST(method) "{\"format\":1,\"file\":\"f\",\"size\":1,\"sha256\":\"" SHA "\"" method "}"
#define SHA              "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct {
	const char *body;
	int rc;
	const char *method; /* decoded */
	const char *msg;
} methods[] = {
	{ MANIFEST(""), 0, "rdb", NULL }, /* the first managers' manifests */
	{ MANIFEST(",\"method\":\"rdb\""), 0, "rdb", NULL },
	{ MANIFEST(",\"method\":\"aof\""), 0, "aof", NULL },
	{ MANIFEST(",\"method\":\"zip\""), -EPROTO, NULL,
	  "manifest: method: zip is neither rdb nor aof" },
};

START_TEST(manifest_method)
{
	struct inst_manifest m;
	struct err e = { 0 };
	char *again;

	ck_assert_int_eq(inst_manifest_decode(methods[_i].body, strlen(methods[_i].body), &m, &e),
	                 methods[_i].rc);
	if (methods[_i].rc) {
		ck_assert_str_eq(e.msg, methods[_i].msg);
		return;
	}
	ck_assert_str_eq(m.method, methods[_i].method);
	again = inst_manifest_encode(&m);
	ck_assert_ptr_nonnull(strstr(again, methods[_i].method));
	free(again);
}
END_TEST

static Suite *aof_suite(void)
{
	Suite *s = suite_create("instance_backup_aof");
	TCase *tc = tcase_create("aof");

	tcase_add_loop_test(tc, aof_manifest_parses, 0, ARRAY_LEN(good));
	tcase_add_loop_test(tc, aof_manifest_refused, 0, ARRAY_LEN(bad));
	tcase_add_test(tc, aof_manifest_too_many_files);
	tcase_add_loop_test(tc, manifest_method, 0, ARRAY_LEN(methods));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(aof_suite)

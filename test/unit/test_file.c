/*
 * Unit tests for lib/file: both readers over a table of files made in a temporary
 * directory (empty, exactly at the cap, one byte over, NUL bytes inside, a directory, a
 * missing path, an unreadable one) plus the sources whose size fstat does not know (a
 * pipe through /dev/fd, /proc, /dev/null), which make the buffer grow. Every case checks
 * the code, the message, and that the outputs are untouched on failure.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/file.h"
#include "testutil.h"
#include "unit.h"

#define UNTOUCHED ((char *)"untouched")

static char dir[64];

static void dir_setup(void)
{
	tu_tmpdir(dir, sizeof(dir), "lib-file");
}

static void dir_teardown(void)
{
	tu_rmtree(dir);
}

static void write_bytes(const char *path, const char *data, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
	close(fd);
}

static const struct {
	const char *name;
	int (*read)(const char *path, size_t max_len, char **out, size_t *len, struct err *e);
} readers[] = {
	{ "file_read_all", file_read_all },
	{ "file_read_all_secret", file_read_all_secret },
};

static const struct {
	const char *file; /* under dir; NULL: the directory itself */
	const char *data; /* NULL: not created */
	size_t len;       /* of data */
	size_t max;
	int want_rc;
	const char *want_msg; /* after "<path>: " */
} cases[] = {
	{ "empty", "", 0, 10, 0, NULL },
	{ "small", "hello\n", 6, 10, 0, NULL },
	{ "at-cap", "0123456789", 10, 10, 0, NULL },
	{ "over-cap", "0123456789A", 11, 10, -EMSGSIZE, "larger than 10 bytes" },
	{ "far-over", "0123456789ABCDEFGHIJ", 20, 3, -EMSGSIZE, "larger than 3 bytes" },
	{ "zero-cap", "x", 1, 0, -EMSGSIZE, "larger than 0 bytes" },
	{ "zero-cap-empty", "", 0, 0, 0, NULL },
	{ "nul-inside", "a\0b\0c", 5, 10, 0, NULL },
	{ "missing", NULL, 0, 10, -ENOENT, "No such file or directory" },
	{ NULL, NULL, 0, 10, -EISDIR, "Is a directory" },
};

START_TEST(files)
{
	int ci = _i / (int)ARRAY_LEN(readers), ri = _i % (int)ARRAY_LEN(readers);
	char path[128], want_msg[256];
	char *out = UNTOUCHED;
	size_t len = 12345;
	struct err e = { 0 };
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, cases[ci].file ? cases[ci].file : "");
	if (cases[ci].data)
		write_bytes(path, cases[ci].data, cases[ci].len, 0600);
	rc = readers[ri].read(path, cases[ci].max, &out, &len, &e);
	ck_assert_msg(rc == cases[ci].want_rc, "%s %s: rc %s (%s)", readers[ri].name, path,
	              err_name(rc), e.msg);
	if (rc < 0) {
		snprintf(want_msg, sizeof(want_msg), "%s: %s", path, cases[ci].want_msg);
		ck_assert_int_eq(e.code, rc);
		ck_assert_str_eq(e.msg, want_msg);
		ck_assert_ptr_eq(out, UNTOUCHED);
		ck_assert_uint_eq(len, 12345);
		return;
	}
	ck_assert_int_eq(e.code, 0);
	ck_assert_uint_eq(len, cases[ci].len);
	ck_assert_int_eq(memcmp(out, cases[ci].data, len), 0);
	ck_assert_int_eq(out[len], '\0');
	free(out);
}
END_TEST

/* len and e may be NULL; errors still come back as codes. */
START_TEST(null_len_and_err)
{
	char path[128], *out = NULL;

	snprintf(path, sizeof(path), "%s/text", dir);
	write_bytes(path, "abc", 3, 0600);
	ck_assert_int_eq(readers[_i].read(path, 3, &out, NULL, NULL), 0);
	ck_assert_str_eq(out, "abc");
	free(out);
	ck_assert_int_eq(readers[_i].read(path, 2, &out, NULL, NULL), -EMSGSIZE);
	snprintf(path, sizeof(path), "%s/none", dir);
	ck_assert_int_eq(readers[_i].read(path, 2, &out, NULL, NULL), -ENOENT);
}
END_TEST

/* An unreadable file keeps open's errno; root reads it as nobody (euid 65534). */
START_TEST(no_permission)
{
	char path[128], *out = UNTOUCHED;
	struct err e = { 0 };
	bool root = geteuid() == 0;
	int rc;

	snprintf(path, sizeof(path), "%s/secret", dir);
	write_bytes(path, "s3cr3t", 6, 0200);
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert(!root || seteuid(65534) == 0);
	rc = readers[_i].read(path, 100, &out, NULL, &e);
	ck_assert(!root || seteuid(0) == 0);
	ck_assert_int_eq(rc, -EACCES);
	ck_assert_ptr_eq(out, UNTOUCHED);
	snprintf(path, sizeof(path), "%s/secret: Permission denied", dir);
	ck_assert_str_eq(e.msg, path);
}
END_TEST

/* A pipe: fstat knows no size, so the buffer starts at 4096 and grows to the cap. */
static const struct {
	size_t n, max;
	int want_rc;
} pipe_cases[] = {
	{ 10000, 20000, 0 },        /* grows twice */
	{ 10000, 10000, 0 },        /* the last step is exactly max + 1 */
	{ 10000, 9999, -EMSGSIZE }, /* one byte over, found while growing */
	{ 0, 100, 0 },
};

START_TEST(pipe_grows)
{
	static char data[20000];
	int p[2], ri = _i % (int)ARRAY_LEN(readers), pi = _i / (int)ARRAY_LEN(readers);
	char path[64], *out = UNTOUCHED;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (char)('a' + i % 26);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(write(p[1], data, pipe_cases[pi].n), (ssize_t)pipe_cases[pi].n);
	close(p[1]);
	snprintf(path, sizeof(path), "/dev/fd/%d", p[0]);
	ck_assert_int_eq(readers[ri].read(path, pipe_cases[pi].max, &out, &len, NULL),
	                 pipe_cases[pi].want_rc);
	close(p[0]);
	if (pipe_cases[pi].want_rc) {
		ck_assert_ptr_eq(out, UNTOUCHED);
		return;
	}
	ck_assert_uint_eq(len, pipe_cases[pi].n);
	ck_assert_int_eq(memcmp(out, data, len), 0);
	ck_assert_int_eq(out[len], '\0');
	free(out);
}
END_TEST

/* /proc files say size 0 and /dev/null is not a regular file: both are read whole. */
START_TEST(special_files)
{
	char *out = NULL;
	size_t len = 1;

	ck_assert_int_eq(readers[_i].read("/proc/self/status", 1 << 20, &out, &len, NULL), 0);
	ck_assert_uint_gt(len, 0);
	ck_assert_ptr_nonnull(strstr(out, "Name:"));
	free(out);
	ck_assert_int_eq(readers[_i].read("/dev/null", 8, &out, &len, NULL), 0);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

static Suite *file_suite(void)
{
	Suite *s = suite_create("file");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_loop_test(tc, files, 0, (int)(ARRAY_LEN(cases) * ARRAY_LEN(readers)));
	tcase_add_loop_test(tc, null_len_and_err, 0, ARRAY_LEN(readers));
	tcase_add_loop_test(tc, no_permission, 0, ARRAY_LEN(readers));
	tcase_add_loop_test(tc, pipe_grows, 0, (int)(ARRAY_LEN(pipe_cases) * ARRAY_LEN(readers)));
	tcase_add_loop_test(tc, special_files, 0, ARRAY_LEN(readers));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(file_suite)

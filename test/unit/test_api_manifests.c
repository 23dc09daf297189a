/*
 * Unit tests for api/ against the API server, case by case: every manifest the live CRD
 * test uses (test/api/invalid-manifests), the C side's edge cases (test/data/api/cases)
 * and the samples (config/samples) go through yamlx, decode and validate, exactly as the
 * controller would read them.
 *
 * Each case must get
 *   1. the verdict of its "# expect:" line: rejected (accepted for "accept"), and the
 *      expect text inside the C messages (source: cel and schema alike: api/ writes the
 *      server's wording for schema errors too);
 *   2. the same error lines as the real API server, recorded by
 *      test/data/api/record-server.sh into test/data/api/server/<case>.txt (compared as
 *      sets; the server's order follows Go map iteration). A decode failure is one line,
 *      which must be one of the server's.
 * A transition case validates its second document as an update of its first. The cases
 * where C and the server word a rejection differently are listed in known_differences
 * with the reason; they still must agree on the verdict.
 * Tests run from the repository root.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "lib/buf.h"
#include "testutil.h"
#include "unit.h"

#define INVALID_DIR "test/api/invalid-manifests"
#define CASES_DIR   "test/data/api/cases"
#define SAMPLES_DIR "config/samples"
#define SERVER_DIR  "test/data/api/server"
#define MAX_CASES   512
#define FILE_MAX    (1 << 20)

/* Where C's wording differs from the server's while the verdict is the same. */
static const struct {
	const char *name;
	const char *why;
} known_differences[] = {
	{ "edge-unknown-under-array",
	  "decoding checks the JSON type of spec.tolerations (kept as a json_t *) and fails "
	  "before validation's strict-decoding step; the server reports the unknown field "
	  "\"spec.tolerations.a\" first" },
};

/* --- one kind's entry points behind one signature ------------------------------------------- */

struct kind {
	const char *name;
	size_t size;
	int (*decode)(json_t *obj, void *out, struct err *e);
	int (*validate)(const void *obj, const void *old, struct buf *errors);
	void (*release)(void *obj);
};

static int rc_decode(json_t *obj, void *out, struct err *e)
{
	return api_redis_cluster_decode(obj, out, e);
}

static int rc_validate(const void *obj, const void *old, struct buf *errors)
{
	return api_redis_cluster_validate(obj, old, errors);
}

static void rc_release(void *obj)
{
	api_redis_cluster_release(obj);
}

static int bk_decode(json_t *obj, void *out, struct err *e)
{
	return api_redis_backup_decode(obj, out, e);
}

static int bk_validate(const void *obj, const void *old, struct buf *errors)
{
	return api_redis_backup_validate(obj, old, errors);
}

static void bk_release(void *obj)
{
	api_redis_backup_release(obj);
}

static int sb_decode(json_t *obj, void *out, struct err *e)
{
	return api_redis_scheduled_backup_decode(obj, out, e);
}

static int sb_validate(const void *obj, const void *old, struct buf *errors)
{
	return api_redis_scheduled_backup_validate(obj, old, errors);
}

static void sb_release(void *obj)
{
	api_redis_scheduled_backup_release(obj);
}

static const struct kind kinds[] = {
	{ "RedisCluster", sizeof(struct api_redis_cluster), rc_decode, rc_validate, rc_release },
	{ "RedisBackup", sizeof(struct api_redis_backup), bk_decode, bk_validate, bk_release },
	{ "RedisScheduledBackup", sizeof(struct api_redis_scheduled_backup), sb_decode, sb_validate,
	  sb_release },
};

static const struct kind *kind_of(json_t *doc)
{
	const char *k = json_string_value(json_object_get(doc, "kind"));

	for (size_t i = 0; k && i < ARRAY_LEN(kinds); i++)
		if (strcmp(kinds[i].name, k) == 0)
			return &kinds[i];
	ck_abort_msg("unknown kind %s", k ? k : "(none)");
	return NULL;
}

/* --- the case table -------------------------------------------------------------------------- */

struct api_case {
	char path[512];
	char name[256];
};

static struct api_case cases[MAX_CASES];
static size_t n_cases;

static int cmp_cases(const void *a, const void *b)
{
	return strcmp(((const struct api_case *)a)->path, ((const struct api_case *)b)->path);
}

/* Adds dir's *.yaml files (under SAMPLES_DIR only redis_*.yaml). */
static void add_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t len;

	if (!d) {
		fprintf(stderr, "cannot open %s: %s\n", dir, strerror(errno));
		exit(EXIT_FAILURE);
	}
	while ((de = readdir(d))) {
		len = strlen(de->d_name);
		if (len < 6 || strcmp(de->d_name + len - 5, ".yaml") != 0 ||
		    (strcmp(dir, SAMPLES_DIR) == 0 && strncmp(de->d_name, "redis_", 6) != 0))
			continue;
		if (n_cases == MAX_CASES) {
			fprintf(stderr, "more than %d cases\n", MAX_CASES);
			exit(EXIT_FAILURE);
		}
		snprintf(cases[n_cases].path, sizeof(cases[0].path), "%s/%s", dir, de->d_name);
		snprintf(cases[n_cases].name, sizeof(cases[0].name), "%.*s", (int)(len - 5),
		         de->d_name);
		n_cases++;
	}
	closedir(d);
}

/* --- helpers ----------------------------------------------------------------------------------- */

/* The value of the "# <key>: " header line, or NULL; free() it. */
static char *header(const char *text, const char *key)
{
	char prefix[64];
	const char *p, *end;

	snprintf(prefix, sizeof(prefix), "# %s: ", key);
	for (p = text; p && *p == '#'; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, prefix, strlen(prefix)) != 0)
			continue;
		p += strlen(prefix);
		end = strchr(p, '\n');
		return xstrndup(p, end ? (size_t)(end - p) : strlen(p));
	}
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text, sorted, as a NULL-terminated array; free_lines() it. */
static char **sorted_lines(const char *text, size_t *n)
{
	char **v = xcalloc(strlen(text) + 2, sizeof(*v));
	const char *p = text, *end;

	*n = 0;
	while (*p) {
		end = strchr(p, '\n');
		v[(*n)++] = xstrndup(p, end ? (size_t)(end - p) : strlen(p));
		p = end ? end + 1 : p + strlen(p);
	}
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void free_lines(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static const char *known_difference(const char *name)
{
	for (size_t i = 0; i < ARRAY_LEN(known_differences); i++)
		if (strcmp(known_differences[i].name, name) == 0)
			return known_differences[i].why;
	return NULL;
}

/*
 * Runs one case file: out gets the error lines (a decode failure is one line), and the
 * result is 0 when accepted. A transition file validates its second document as an
 * update of its first, which must be valid itself.
 */
static int run_case(const char *path, struct buf *out, bool *decode_failed)
{
	json_t *docs = NULL;
	struct err e = { 0 };
	const struct kind *k;
	void *obj, *old = NULL;
	size_t n;
	int rc;

	*decode_failed = false;
	docs = tu_load_yaml(path, FILE_MAX);
	n = json_array_size(docs);
	ck_assert_msg(n == 1 || n == 2, "%s: %zu documents", path, n);
	k = kind_of(json_array_get(docs, n - 1));
	obj = xcalloc(1, k->size);
	if (n == 2) {
		struct buf why = BUF_INIT(BUF_NO_LIMIT);

		old = xcalloc(1, k->size);
		ck_assert_msg(k->decode(json_array_get(docs, 0), old, &e) == 0, "%s: old: %s", path,
		              e.msg);
		ck_assert_msg(k->validate(old, NULL, &why) == 0,
		              "%s: the old object is invalid: %s", path, buf_cstr(&why));
		buf_release(&why);
	}
	rc = k->decode(json_array_get(docs, n - 1), obj, &e);
	if (rc) {
		buf_printf(out, "%s\n", e.msg);
		*decode_failed = true;
	} else {
		rc = k->validate(obj, old, out);
		ck_assert_msg(rc == 0 || rc == -EINVAL, "%s: validate returned %d", path, rc);
		ck_assert_msg((rc == 0) == (out->len == 0), "%s: rc %d with errors \"%s\"", path,
		              rc, buf_cstr(out));
	}
	k->release(obj);
	if (old)
		k->release(old);
	free(obj);
	free(old);
	json_decref(docs);
	return rc;
}

/* --- the tests --------------------------------------------------------------------------------- */

/* The "# expect:" verdict and text. */
START_TEST(expect_line)
{
	const struct api_case *c = &cases[_i];
	char *text = tu_read_file(c->path, NULL), *expect;
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	bool decode_failed;
	int rc;

	ck_assert_msg(text != NULL, "cannot read %s", c->path);
	expect = header(text, "expect");
	if (strncmp(c->path, SAMPLES_DIR, strlen(SAMPLES_DIR)) == 0)
		expect = expect ? expect : xstrdup("accept");
	ck_assert_msg(expect != NULL, "%s: no \"# expect:\" line", c->path);
	rc = run_case(c->path, &out, &decode_failed);
	if (strcmp(expect, "accept") == 0) {
		ck_assert_msg(rc == 0, "%s: rejected, expected accept:\n%s", c->name,
		              buf_cstr(&out));
	} else {
		ck_assert_msg(rc != 0, "%s: accepted, expected: %s", c->name, expect);
		ck_assert_msg(strstr(buf_cstr(&out), expect) || known_difference(c->name),
		              "%s: rejected without \"%s\":\n%s", c->name, expect, buf_cstr(&out));
	}
	buf_release(&out);
	free(expect);
	free(text);
}
END_TEST

/* The same error lines as the recorded API server. */
START_TEST(same_as_server)
{
	const struct api_case *c = &cases[_i];
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	char path[600], *server, **want, **got;
	size_t nw, ng, found = 0;
	bool decode_failed;
	int rc;

	snprintf(path, sizeof(path), SERVER_DIR "/%s.txt", c->name);
	server = tu_read_file(path, NULL);
	ck_assert_msg(server != NULL,
	              "%s: no server recording %s; run test/data/api/record-server.sh KUBECONFIG",
	              c->name, path);
	rc = run_case(c->path, &out, &decode_failed);
	if (strcmp(server, "accepted\n") == 0) {
		ck_assert_msg(rc == 0, "%s: the server accepts it; C says:\n%s", c->name,
		              buf_cstr(&out));
		goto out;
	}
	ck_assert_msg(rc != 0, "%s: the server rejects it:\n%s", c->name, server);
	if (known_difference(c->name))
		goto out;
	want = sorted_lines(server, &nw);
	got = sorted_lines(buf_cstr(&out), &ng);
	for (size_t i = 0; i < nw; i++)
		found += ng == 1 && strcmp(got[0], want[i]) == 0;
	if (decode_failed) {
		ck_assert_msg(found == 1,
		              "%s: C's decode error is none of the server's lines:\n%s\n"
		              "server:\n%s",
		              c->name, buf_cstr(&out), server);
	} else {
		ck_assert_msg(nw == ng, "%s: %zu lines, the server %zu:\nC:\n%sserver:\n%s",
		              c->name, ng, nw, buf_cstr(&out), server);
		for (size_t i = 0; i < nw; i++)
			ck_assert_msg(strcmp(want[i], got[i]) == 0, "%s:\nserver: %s\nC:      %s",
			              c->name, want[i], got[i]);
	}
	free_lines(want);
	free_lines(got);
out:
	buf_release(&out);
	free(server);
}
END_TEST

/* Every listed difference names a case that exists and still needs listing. */
START_TEST(known_differences_are_real)
{
	for (size_t i = 0; i < ARRAY_LEN(known_differences); i++) {
		bool present = false;

		for (size_t j = 0; j < n_cases; j++)
			present |= strcmp(cases[j].name, known_differences[i].name) == 0;
		ck_assert_msg(present, "known difference %s: no such case",
		              known_differences[i].name);
	}
}
END_TEST

/* The tables hold what the live test runs: at least its 136 cases and the 10 samples. */
START_TEST(every_case_is_listed)
{
	size_t invalid = 0, samples = 0;

	for (size_t i = 0; i < n_cases; i++) {
		invalid += strncmp(cases[i].path, INVALID_DIR, strlen(INVALID_DIR)) == 0;
		samples += strncmp(cases[i].path, SAMPLES_DIR, strlen(SAMPLES_DIR)) == 0;
	}
	ck_assert_uint_ge(invalid, 136);
	ck_assert_uint_eq(samples, 10);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("api_manifests");
	TCase *tc = tcase_create("cases");

	add_dir(INVALID_DIR);
	add_dir(CASES_DIR);
	add_dir(SAMPLES_DIR);
	qsort(cases, n_cases, sizeof(cases[0]), cmp_cases);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, expect_line, 0, (int)n_cases);
	tcase_add_loop_test(tc, same_as_server, 0, (int)n_cases);
	tcase_add_test(tc, known_differences_are_real);
	tcase_add_test(tc, every_case_is_listed);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)

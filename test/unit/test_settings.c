/*
 * Unit tests for lib/settings over a sample table with every type: precedence, every
 * error reported at once, flag forms, "--" and positionals, --help, the help golden
 * file (UPDATE_GOLDEN=1 rewrites it), dump redaction and release.
 * Tests pass their own envp, so the process environment never leaks in.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/parse.h"
#include "lib/settings.h"
#include "testutil.h"
#include "unit.h"

#define GOLDEN_DIR "test/data/settings/"
#define PREFIX     "REDIS_OPERATOR_"
#define NS         "REDIS_OPERATOR_NAMESPACE=ns"

struct sample {
	char *namespace;
	int64_t concurrency;
	bool dry_run;
	int64_t poll_ms;
	uint64_t maxmemory;
	char *log_format;
	char *password;
	int64_t retries;
	int64_t timeout_ms;
	int64_t pin;
	char *mode;
};

static const char *const log_formats[] = { "json", "logfmt", NULL };
static const char *const modes[] = { "a", "b", NULL };

#define OFF(f) offsetof(struct sample, f)
static const struct settings_desc sample_table[] = {
	{ "namespace", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, OFF(namespace),
	  "Namespace to watch." },
	{ "concurrency", SETTINGS_INT, "4", 1, 64, NULL, false, false, OFF(concurrency),
	  "Reconciles run in parallel." },
	{ "dry-run", SETTINGS_BOOL, "false", 0, 0, NULL, false, false, OFF(dry_run),
	  "Plan, but change nothing." },
	{ "poll-period", SETTINGS_DURATION, "5s", 100, 3600000, NULL, false, false, OFF(poll_ms),
	  "How often instances are polled." },
	{ "maxmemory", SETTINGS_BYTES, "1Gi", 1 << 20, 1LL << 40, NULL, false, false,
	  OFF(maxmemory), "Memory limit for each server." },
	{ "log-format", SETTINGS_ENUM, "json", 0, 0, log_formats, false, false, OFF(log_format),
	  "Log line format." },
	{ "password", SETTINGS_STRING, NULL, 0, 0, NULL, true, false, OFF(password), NULL },
	{ "retries", SETTINGS_INT, NULL, 0, 0, NULL, false, false, OFF(retries),
	  "Retries before giving up." },
	{ "timeout", SETTINGS_DURATION, "30s", 1000, INT64_MAX, NULL, false, false, OFF(timeout_ms),
	  "Deadline of each API call." },
	{ "pin", SETTINGS_INT, NULL, 1000, 9999, NULL, true, false, OFF(pin), "Secret number." },
	{ "mode", SETTINGS_ENUM, NULL, 0, 0, modes, true, false, OFF(mode), "Secret mode." },
};
#undef OFF

#define ARGS(...)  ((const char *const[]){ "prog", __VA_ARGS__, NULL })
#define ENV(...)   ((const char *const[]){ __VA_ARGS__, NULL })
#define NO_ARGS    ((const char *const[]){ "prog", NULL })
#define SAMPLE_LEN ARRAY_LEN(sample_table)

static int count(const char *const *v)
{
	int n = 0;

	while (v[n])
		n++;
	return n;
}

static int load(const char *const *argv, const char *const *envp, struct sample *s, int *next,
                struct buf *errors)
{
	return settings_load(sample_table, SAMPLE_LEN, PREFIX, (char **)envp, count(argv),
	                     (char **)argv, next, s, errors);
}

/* Loads and asserts success; the caller releases s. */
static void load_ok(const char *const *argv, const char *const *envp, struct sample *s, int *next)
{
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	int rc = load(argv, envp, s, next, &errs);

	ck_assert_msg(rc == 0, "rc %d, errors:\n%s", rc, buf_cstr(&errs));
	ck_assert_uint_eq(errs.len, 0);
	buf_release(&errs);
}

START_TEST(defaults)
{
	struct sample s;
	int next = -1;

	memset(&s, 0xa5, sizeof(s)); /* load must not read the fields */
	load_ok(NO_ARGS, ENV(NS), &s, &next);
	ck_assert_int_eq(next, 1);
	ck_assert_str_eq(s.namespace, "ns");
	ck_assert_int_eq(s.concurrency, 4);
	ck_assert(!s.dry_run);
	ck_assert_int_eq(s.poll_ms, 5000);
	ck_assert_uint_eq(s.maxmemory, 1ULL << 30);
	ck_assert_str_eq(s.log_format, "json");
	ck_assert_ptr_null(s.password);
	ck_assert_int_eq(s.retries, 0);
	ck_assert_int_eq(s.timeout_ms, 30000);
	ck_assert_int_eq(s.pin, 0);
	ck_assert_ptr_null(s.mode);
	settings_release(sample_table, SAMPLE_LEN, &s);
	ck_assert_ptr_null(s.namespace);
	ck_assert_ptr_null(s.log_format);
	settings_release(sample_table, SAMPLE_LEN, &s); /* twice is fine */
	settings_release(sample_table, SAMPLE_LEN, NULL);
}
END_TEST

/* default < environment < flag, on an INT and a STRING. */
static const struct {
	const char *const *argv;
	const char *const *envp;
	int64_t concurrency;
	const char *namespace;
} precedence_cases[] = {
	{ NO_ARGS, ENV(NS), 4, "ns" },
	{ NO_ARGS, ENV(NS, "REDIS_OPERATOR_CONCURRENCY=8"), 8, "ns" },
	{ ARGS("--concurrency=16"), ENV(NS, "REDIS_OPERATOR_CONCURRENCY=8"), 16, "ns" },
	{ ARGS("--concurrency", "16"), ENV(NS, "REDIS_OPERATOR_CONCURRENCY=8"), 16, "ns" },
	{ ARGS("--concurrency=2", "--concurrency=3"), ENV(NS), 3, "ns" }, /* last wins */
	{ NO_ARGS, ENV(NS, "REDIS_OPERATOR_CONCURRENCY="), 4, "ns" },     /* empty = unset */
	{ NO_ARGS, ENV(NS, "OTHER_CONCURRENCY=9"), 4, "ns" },
	{ NO_ARGS, ENV(NS, "REDIS_OPERATOR_CONCURRENCYX=9", "REDIS_OPERATOR_CONCURRENC=9"), 4,
	  "ns" },
	{ NO_ARGS, ENV(NS, "redis_operator_concurrency=9"), 4, "ns" },
	{ ARGS("--namespace=flag"), ENV(NS), 4, "flag" },
	{ ARGS("--namespace", "a=b c"), ENV(NS), 4, "a=b c" },
	{ ARGS("--namespace=x=y"), ENV(NS), 4, "x=y" },
	{ NO_ARGS, ENV("REDIS_OPERATOR_NAMESPACE=a=b"), 4, "a=b" },
};

START_TEST(precedence)
{
	struct sample s;
	int next;

	load_ok(precedence_cases[_i].argv, precedence_cases[_i].envp, &s, &next);
	ck_assert_int_eq(s.concurrency, precedence_cases[_i].concurrency);
	ck_assert_str_eq(s.namespace, precedence_cases[_i].namespace);
	settings_release(sample_table, SAMPLE_LEN, &s);
}
END_TEST

START_TEST(environ_when_envp_null)
{
	char *argv[] = { (char *)"prog", NULL };
	struct sample s;
	int next;

	/* Check forks each test, so this does not leak into others. */
	setenv("REDIS_OPERATOR_NAMESPACE", "from-environ", 1);
	setenv("REDIS_OPERATOR_CONCURRENCY", "7", 1);
	ck_assert_int_eq(
	        settings_load(sample_table, SAMPLE_LEN, PREFIX, NULL, 1, argv, &next, &s, NULL), 0);
	ck_assert_str_eq(s.namespace, "from-environ");
	ck_assert_int_eq(s.concurrency, 7);
	settings_release(sample_table, SAMPLE_LEN, &s);
}
END_TEST

/* Three bad inputs from three sources: three lines, unknown flags first, then table order. */
START_TEST(all_errors_at_once)
{
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	struct sample s;
	int next = -1;

	ck_assert_int_eq(load(ARGS("--poll-period=5x", "--foo"),
	                      ENV(NS, "REDIS_OPERATOR_CONCURRENCY=0"), &s, &next, &errs),
	                 -EINVAL);
	ck_assert_str_eq(buf_cstr(&errs),
	                 "--foo: unknown flag\n"
	                 "REDIS_OPERATOR_CONCURRENCY: 0 is below the minimum 1\n"
	                 "--poll-period: \"5x\" is not a duration: unknown unit (use ns, us, ms, "
	                 "s, m, h or d)\n");
	ck_assert_int_eq(next, -1); /* outputs only on success */
	/* Nothing is owned after a failure: the namespace that parsed was released. */
	ck_assert_ptr_null(s.namespace);
	ck_assert_ptr_null(s.log_format);
	buf_release(&errs);
}
END_TEST

static const struct {
	const char *const *argv;
	const char *const *envp;
	const char *want;
} error_cases[] = {
	{ NO_ARGS, ENV("REDIS_OPERATOR_NAMESPACE="),
	  "--namespace: required (set --namespace or REDIS_OPERATOR_NAMESPACE)\n" },
	{ ARGS("--namespace="), ENV(NS),
	  "--namespace: required (set --namespace or REDIS_OPERATOR_NAMESPACE)\n" },
	{ ARGS("--concurrency"), ENV(NS), "--concurrency: missing value\n" },
	{ ARGS("--concurrency", "--dry-run"), ENV(NS), "--concurrency: missing value\n" },
	{ ARGS("--concurrency=65"), ENV(NS), "--concurrency: 65 is above the maximum 64\n" },
	{ ARGS("--concurrency=four"), ENV(NS), "--concurrency: \"four\" is not an integer\n" },
	{ ARGS("-x"), ENV(NS), "-x: unknown flag\n" },
	{ ARGS("-x=1"), ENV(NS), "-x: unknown flag\n" },
	{ ARGS("---concurrency=1"), ENV(NS), "---concurrency: unknown flag\n" },
	{ ARGS("--pasword=hunter2"), ENV(NS), "--pasword: unknown flag\n" },
	{ ARGS("--no-dry-run"), ENV(NS), "--no-dry-run: unknown flag\n" },
	{ ARGS("--aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	  ENV(NS),
	  "--aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...: unknown flag\n" },
	{ ARGS("--log-format=xml"), ENV(NS), "--log-format: \"xml\" is not one of json, logfmt\n" },
	{ ARGS("--log-format=JSON"), ENV(NS),
	  "--log-format: \"JSON\" is not one of json, logfmt\n" },
	{ ARGS("--maxmemory=1Ki"), ENV(NS), "--maxmemory: 1Ki is below the minimum 1Mi\n" },
	{ ARGS("--maxmemory=2Ti"), ENV(NS), "--maxmemory: 2Ti is above the maximum 1Ti\n" },
	{ ARGS("--maxmemory=1000000"), ENV(NS), "--maxmemory: 1000000 is below the minimum 1Mi\n" },
	{ ARGS("--maxmemory=lots"), ENV(NS),
	  "--maxmemory: \"lots\" is not a quantity (use 512Mi, 1Gi, 1.5G, 100m)\n" },
	{ ARGS("--poll-period=10ms"), ENV(NS), "--poll-period: 10ms is below the minimum 100ms\n" },
	{ ARGS("--poll-period=1h0.5s"), ENV(NS),
	  "--poll-period: 1h500ms is above the maximum 1h\n" },
	{ ARGS("--poll-period=5"), ENV(NS),
	  "--poll-period: \"5\" is not a duration: a number needs a unit (use 250ms, 5s, "
	  "1m30s)\n" },
	{ ARGS("--timeout=500ms"), ENV(NS), "--timeout: 500ms is below the minimum 1s\n" },
	{ ARGS("--dry-run=maybe"), ENV(NS),
	  "--dry-run: \"maybe\" is not a boolean (use true or false)\n" },
	{ ARGS("--retries="), ENV(NS), "--retries: \"\" is not an integer\n" },
	{ NO_ARGS, ENV(NS, "REDIS_OPERATOR_RETRIES= 3"),
	  "REDIS_OPERATOR_RETRIES: \" 3\" is not an integer\n" },
	/* Sensitive values never appear, whatever went wrong. */
	{ ARGS("--pin=12"), ENV(NS),
	  "--pin: invalid value [REDACTED] (expected INT, range 1000..9999)\n" },
	{ ARGS("--pin=hunter2"), ENV(NS),
	  "--pin: invalid value [REDACTED] (expected INT, range 1000..9999)\n" },
	{ NO_ARGS, ENV(NS, "REDIS_OPERATOR_PIN=hunter2"),
	  "REDIS_OPERATOR_PIN: invalid value [REDACTED] (expected INT, range 1000..9999)\n" },
	{ ARGS("--mode=hunter2"), ENV(NS),
	  "--mode: invalid value [REDACTED] (expected ENUM: a, b)\n" },
	{ ARGS("--password"), ENV(NS), "--password: missing value\n" },
	{ ARGS("--concurrency=0", "--concurrency=1", "--bad", "--maxmemory", "1", "--retries=x"),
	  ENV("REDIS_OPERATOR_NAMESPACE="),
	  "--bad: unknown flag\n"
	  "--namespace: required (set --namespace or REDIS_OPERATOR_NAMESPACE)\n"
	  "--maxmemory: 1 is below the minimum 1Mi\n"
	  "--retries: \"x\" is not an integer\n" },
};

START_TEST(error_table)
{
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	struct sample s;
	int next;

	ck_assert_int_eq(load(error_cases[_i].argv, error_cases[_i].envp, &s, &next, &errs),
	                 -EINVAL);
	ck_assert_str_eq(buf_cstr(&errs), error_cases[_i].want);
	ck_assert_ptr_null(strstr(buf_cstr(&errs), "hunter2"));
	ck_assert_ptr_null(s.namespace);
	buf_release(&errs);
	/* errors == NULL still fails, just silently. */
	ck_assert_int_eq(load(error_cases[_i].argv, error_cases[_i].envp, &s, &next, NULL),
	                 -EINVAL);
}
END_TEST

START_TEST(bad_default)
{
	static const struct settings_desc table[] = {
		{ "workers", SETTINGS_INT, "many", 0, 0, NULL, false, false, 0, NULL },
	};
	char *argv[] = { (char *)"prog", NULL };
	char *envp[] = { NULL };
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	int64_t v;
	int next;

	ck_assert_int_eq(settings_load(table, 1, "X_", envp, 1, argv, &next, &v, &errs), -EINVAL);
	ck_assert_str_eq(buf_cstr(&errs), "workers default: \"many\" is not an integer\n");
	buf_release(&errs);
}
END_TEST

START_TEST(bool_forms)
{
	static const struct {
		const char *arg;
		bool want;
	} forms[] = {
		{ "--dry-run", true },        { "--dry-run=true", true },
		{ "--dry-run=false", false }, { "--dry-run=1", true },
		{ "--dry-run=0", false },     { "--dry-run=yes", true },
		{ "--dry-run=no", false },    { "--dry-run=on", true },
		{ "--dry-run=off", false },   { "--dry-run=True", true },
		{ "--dry-run=False", false },
	};
	struct sample s;
	int next;

	for (size_t i = 0; i < ARRAY_LEN(forms); i++) {
		/* The environment says the opposite; the flag must win. */
		load_ok(ARGS(forms[i].arg),
		        ENV(NS, forms[i].want ? "REDIS_OPERATOR_DRY_RUN=false"
		                              : "REDIS_OPERATOR_DRY_RUN=true"),
		        &s, &next);
		ck_assert_msg(s.dry_run == forms[i].want, "%s", forms[i].arg);
		settings_release(sample_table, SAMPLE_LEN, &s);
	}
	/* A bare bool never takes the next argument: "false" is a positional. */
	load_ok(ARGS("--dry-run", "false"), ENV(NS), &s, &next);
	ck_assert(s.dry_run);
	ck_assert_int_eq(next, 2);
	settings_release(sample_table, SAMPLE_LEN, &s);
}
END_TEST

/* Where scanning stops, and what *next_arg says. */
static const struct {
	const char *const *argv;
	int next;
	int64_t concurrency;
	bool dry_run;
} positional_cases[] = {
	{ NO_ARGS, 1, 4, false },
	{ ARGS("--concurrency=2", "--", "--dry-run", "x"), 3, 2, false },
	{ ARGS("--"), 2, 4, false },
	{ ARGS("--", "--help"), 2, 4, false },
	{ ARGS("--dry-run", "backup", "--concurrency=9"), 2, 4, true },
	{ ARGS("backup", "--dry-run"), 1, 4, false },
	{ ARGS("-", "--dry-run"), 1, 4, false },
	{ ARGS("--concurrency", "-5", "x"), 3, -5, false }, /* "-5" is a value here */
	{ ARGS("--concurrency", "5", "--", "--"), 4, 5, false },
};

START_TEST(positionals)
{
	const struct settings_desc *t;
	struct sample s;
	int next = -1;
	/* concurrency -5 is out of range in the sample table: use a looser copy. */
	struct settings_desc loose[ARRAY_LEN(sample_table)];
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	const char *const *argv = positional_cases[_i].argv;

	memcpy(loose, sample_table, sizeof(loose));
	loose[1].min = INT64_MIN;
	t = loose;
	ck_assert_int_eq(settings_load(t, SAMPLE_LEN, PREFIX, (char **)ENV(NS), count(argv),
	                               (char **)argv, &next, &s, &errs),
	                 0);
	ck_assert_int_eq(next, positional_cases[_i].next);
	ck_assert_int_eq(s.concurrency, positional_cases[_i].concurrency);
	ck_assert(s.dry_run == positional_cases[_i].dry_run);
	settings_release(t, SAMPLE_LEN, &s);
	buf_release(&errs);
}
END_TEST

START_TEST(no_argv)
{
	struct sample s;
	int next = -1;

	ck_assert_int_eq(settings_load(sample_table, SAMPLE_LEN, PREFIX, (char **)ENV(NS), 0, NULL,
	                               &next, &s, NULL),
	                 0);
	ck_assert_int_eq(next, 0);
	settings_release(sample_table, SAMPLE_LEN, &s);
	/* next_arg may be NULL when the caller takes no positionals. */
	ck_assert_int_eq(settings_load(sample_table, SAMPLE_LEN, PREFIX, (char **)ENV(NS), 0, NULL,
	                               NULL, &s, NULL),
	                 0);
	ck_assert_str_eq(s.namespace, "ns");
	settings_release(sample_table, SAMPLE_LEN, &s);
}
END_TEST

static const struct {
	const char *const *argv;
} help_cases[] = {
	{ ARGS("--help") },
	{ ARGS("-h") },
	{ ARGS("--concurrency=1", "--help") },
	{ ARGS("--bad", "--concurrency=x", "--help") }, /* help wins over errors */
	{ ARGS("--concurrency", "5", "-h", "--", "x") },
};

START_TEST(help_flag)
{
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	struct sample s;
	int next = -1;

	/* No namespace in the environment: help does not need required settings. */
	ck_assert_int_eq(load(help_cases[_i].argv, ENV("A=b"), &s, &next, &errs), SETTINGS_HELP);
	ck_assert_int_eq(next, -1);
	ck_assert_ptr_null(s.namespace);
	ck_assert_ptr_null(s.log_format);
	settings_release(sample_table, SAMPLE_LEN, &s);
	buf_release(&errs);
}
END_TEST

START_TEST(help_golden)
{
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	settings_help(sample_table, SAMPLE_LEN, PREFIX, f);
	fclose(f);
	tu_golden(GOLDEN_DIR, "help.golden", got);
	free(got);
}
END_TEST

START_TEST(help_redacts_sensitive_default)
{
	static const struct settings_desc table[] = {
		{ "token", SETTINGS_STRING, "hunter2", 0, 0, NULL, true, false, 0, "API token." },
	};
	char *got = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&got, &len);

	settings_help(table, 1, NULL, f);
	fclose(f);
	ck_assert_str_eq(got, "Options (flags override environment variables, which override "
	                      "defaults):\n"
	                      "  --token=STRING  TOKEN  default [REDACTED]\n"
	                      "      API token.\n"
	                      "  -h, --help      show this help and exit\n");
	free(got);
}
END_TEST

START_TEST(dump_redacts)
{
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	struct sample s;
	int next;

	load_ok(ARGS("--password=hunter2", "--pin=1234", "--namespace=my ns", "--poll-period=1m30s",
	             "--maxmemory=1536Ki", "--mode=b", "--retries=-3", "--timeout=1.5s"),
	        ENV("REDIS_OPERATOR_DRY_RUN=on"), &s, &next);
	settings_dump(sample_table, SAMPLE_LEN, &s, &out);
	ck_assert_str_eq(buf_cstr(&out), "namespace=\"my ns\" concurrency=4 dry-run=true "
	                                 "poll-period=1m30s maxmemory=1536Ki log-format=json "
	                                 "password=[REDACTED] retries=-3 timeout=1.5s "
	                                 "pin=[REDACTED] mode=[REDACTED]");
	ck_assert_ptr_null(strstr(buf_cstr(&out), "hunter2"));
	ck_assert_ptr_null(strstr(buf_cstr(&out), "1234"));
	settings_release(sample_table, SAMPLE_LEN, &s);
	/* Unset sensitive strings print empty; integers are always set. */
	buf_clear(&out);
	load_ok(NO_ARGS, ENV(NS), &s, &next);
	settings_dump(sample_table, SAMPLE_LEN, &s, &out);
	ck_assert_str_eq(buf_cstr(&out), "namespace=ns concurrency=4 dry-run=false poll-period=5s "
	                                 "maxmemory=1Gi log-format=json password= retries=0 "
	                                 "timeout=30s pin=[REDACTED] mode=");
	settings_release(sample_table, SAMPLE_LEN, &s);
	buf_release(&out);
}
END_TEST

START_TEST(dump_quotes)
{
	static const struct settings_desc table[] = {
		{ "s", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, 0, NULL },
	};
	static const struct {
		const char *value;
		const char *want;
	} cases[] = {
		{ NULL, "s=" },
		{ "", "s=" },
		{ "plain", "s=plain" },
		{ "a b", "s=\"a b\"" },
		{ "k=v", "s=\"k=v\"" },
		{ "say \"hi\"", "s=\"say \\\"hi\\\"\"" },
		{ "back\\slash", "s=\"back\\\\slash\"" },
		{ "line\nbreak", "s=\"line\\nbreak\"" },
		{ "bell\a", "s=\"bell\\x07\"" },
		{ "caf\xc3\xa9", "s=caf\xc3\xa9" },
	};
	struct buf out = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const char *v = cases[i].value;

		buf_clear(&out);
		settings_dump(table, 1, &v, &out);
		ck_assert_str_eq(buf_cstr(&out), cases[i].want);
	}
	buf_release(&out);
}
END_TEST

/* Dumped durations and sizes read back as the same value. */
static const struct {
	int64_t ms;
	const char *text;
} duration_dumps[] = {
	{ 0, "0s" },
	{ 1, "1ms" },
	{ 250, "250ms" },
	{ 1000, "1s" },
	{ 1500, "1.5s" },
	{ 1250, "1.25s" },
	{ 1001, "1.001s" },
	{ 90000, "1m30s" },
	{ 3600000, "1h" },
	{ 3600001, "1h1ms" },
	{ 2592000000, "30d" },
	{ 93784005, "1d2h3m4.005s" },
	{ 9223372036854, "106751d23h47m16.854s" },
};

START_TEST(duration_dump)
{
	static const struct settings_desc table[] = {
		{ "d", SETTINGS_DURATION, NULL, 0, 0, NULL, false, false, 0, NULL },
	};
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	int64_t back = -1;

	settings_dump(table, 1, &duration_dumps[_i].ms, &out);
	ck_assert_str_eq(buf_cstr(&out) + 2, duration_dumps[_i].text);
	ck_assert_int_eq(parse_duration_ms(duration_dumps[_i].text, &back, NULL), 0);
	ck_assert_int_eq(back, duration_dumps[_i].ms);
	buf_release(&out);
}
END_TEST

static const struct {
	uint64_t bytes;
	const char *text;
} bytes_dumps[] = {
	{ 0, "0" },
	{ 1, "1" },
	{ 1024, "1Ki" },
	{ 1536, "1536" },
	{ 1536 * 1024, "1536Ki" },
	{ 1ULL << 30, "1Gi" },
	{ 3ULL << 60, "3Ei" },
	{ UINT64_MAX, "18446744073709551615" },
	{ 1000000000, "1000000000" },
};

START_TEST(bytes_dump)
{
	static const struct settings_desc table[] = {
		{ "b", SETTINGS_BYTES, NULL, 0, 0, NULL, false, false, 0, NULL },
	};
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	uint64_t back = 1;

	settings_dump(table, 1, &bytes_dumps[_i].bytes, &out);
	ck_assert_str_eq(buf_cstr(&out) + 2, bytes_dumps[_i].text);
	ck_assert_int_eq(parse_quantity_bytes(bytes_dumps[_i].text, &back, NULL), 0);
	ck_assert_uint_eq(back, bytes_dumps[_i].bytes);
	buf_release(&out);
}
END_TEST

START_TEST(release_wipes_and_nulls)
{
	struct sample s;
	int next;

	load_ok(ARGS("--password=hunter2", "--mode=a"), ENV(NS), &s, &next);
	ck_assert_str_eq(s.password, "hunter2");
	ck_assert_str_eq(s.mode, "a");
	settings_release(sample_table, SAMPLE_LEN, &s);
	ck_assert_ptr_null(s.password);
	ck_assert_ptr_null(s.mode);
	ck_assert_ptr_null(s.namespace);
	ck_assert_ptr_null(s.log_format);
	/* Non-string fields are left alone. */
	ck_assert_int_eq(s.concurrency, 4);
}
END_TEST

static Suite *settings_suite(void)
{
	Suite *s = suite_create("settings");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, defaults);
	tcase_add_loop_test(tc, precedence, 0, ARRAY_LEN(precedence_cases));
	tcase_add_test(tc, environ_when_envp_null);
	tcase_add_test(tc, all_errors_at_once);
	tcase_add_loop_test(tc, error_table, 0, ARRAY_LEN(error_cases));
	tcase_add_test(tc, bad_default);
	tcase_add_test(tc, bool_forms);
	tcase_add_loop_test(tc, positionals, 0, ARRAY_LEN(positional_cases));
	tcase_add_test(tc, no_argv);
	tcase_add_loop_test(tc, help_flag, 0, ARRAY_LEN(help_cases));
	tcase_add_test(tc, help_golden);
	tcase_add_test(tc, help_redacts_sensitive_default);
	tcase_add_test(tc, dump_redacts);
	tcase_add_test(tc, dump_quotes);
	tcase_add_loop_test(tc, duration_dump, 0, ARRAY_LEN(duration_dumps));
	tcase_add_loop_test(tc, bytes_dump, 0, ARRAY_LEN(bytes_dumps));
	tcase_add_test(tc, release_wipes_and_nulls);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(settings_suite)

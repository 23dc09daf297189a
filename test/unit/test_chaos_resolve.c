/*
 * Unit tests for test/chaos/chaos_resolve without servers: spec parsing, the shell
 * resolver (output, exit status, deadline, a process group that outlives it), and the
 * built-in resolvers failing fast against a port where nothing listens.
 */
#include <errno.h>
#include <string.h>

#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_resolve.h"
#include "unit.h"

static const struct vk_conn_config node = {
	.connect_timeout_ms = 200,
	.command_timeout_ms = 200,
};

static const struct {
	const char *spec;
	bool ok;
} spec_cases[] = {
	{ "sentinel:m@127.0.0.1:26379", true },
	{ "sentinel:mymaster@127.0.0.1:1,127.0.0.1:2", true },
	{ "cluster:127.0.0.1:7000,127.0.0.1:7001", true },
	{ "role:[::1]:6379", true },
	{ "kubectl get endpointslice -o jsonpath=...", true },
	{ "sentinel:m@", false },
	{ "sentinel:@127.0.0.1:1", false },
	{ "sentinel:127.0.0.1:1", false },
	{ "cluster:", false },
	{ "cluster:,,", false },
	{ "role:localhost", false },
	{ "role:h:1,h:x", false },
	{ "", false },
};

START_TEST(spec_table)
{
	struct err e;
	struct chaos_resolver *r;

	err_clear(&e);
	r = chaos_resolver_new(spec_cases[_i].spec, "{w}:k", &node, 1000, &e);
	ck_assert_msg((r != NULL) == spec_cases[_i].ok, "\"%s\": %s", spec_cases[_i].spec, e.msg);
	if (!r)
		ck_assert_int_eq(e.code, -EINVAL);
	chaos_resolver_free(r);
	chaos_resolver_free(NULL);
}
END_TEST

static const struct {
	const char *cmd;
	int want;
	const char *host;
	int port;
} shell_cases[] = {
	{ "echo 10.241.0.7:6379", 0, "10.241.0.7", 6379 },
	{ "printf '  127.0.0.1:26379  \\nsecond:1\\n'", 0, "127.0.0.1", 26379 },
	{ "printf '[::1]:7000'", 0, "::1", 7000 }, /* no newline at all */
	{ "true", -EAGAIN, NULL, 0 },              /* nothing printed: no primary yet */
	{ "echo not-an-address", -EPROTO, NULL, 0 },
	{ "echo h:1; exit 3", -EIO, NULL, 0 },
	{ "sleep 5", -ETIMEDOUT, NULL, 0 },
	{ "echo h:1; sleep 5", -ETIMEDOUT, NULL, 0 },  /* must exit, not just print */
	{ "sleep 5 & echo h:1", -ETIMEDOUT, NULL, 0 }, /* a child holding stdout is killed too */
};

START_TEST(shell_table)
{
	struct err e;
	struct chaos_resolver *r = chaos_resolver_new(shell_cases[_i].cmd, "k", &node, 300, NULL);
	char host[64] = "unchanged";
	int port = -1, rc;
	int64_t t0 = chaos_mono_us();

	ck_assert_ptr_nonnull(r);
	err_clear(&e);
	rc = chaos_resolve(r, host, sizeof(host), &port, &e);
	ck_assert_msg(rc == shell_cases[_i].want, "%s: got %s (%s)", shell_cases[_i].cmd,
	              err_name(rc), e.msg);
	ck_assert_int_lt(chaos_mono_us() - t0, 2 * 1000 * 1000); /* the deadline holds */
	if (rc == 0) {
		ck_assert_str_eq(host, shell_cases[_i].host);
		ck_assert_int_eq(port, shell_cases[_i].port);
	} else {
		ck_assert_str_eq(host, "unchanged");
	}
	chaos_resolver_free(r);
}
END_TEST

START_TEST(run_command_output)
{
	char out[8];

	ck_assert_int_eq(chaos_run_command("echo 0123456789", 1000, out, sizeof(out), NULL), 0);
	ck_assert_str_eq(out, "0123456"); /* cut to the buffer */
	ck_assert_int_eq(chaos_run_command("exit 1", 1000, out, sizeof(out), NULL), -EIO);
}
END_TEST

/* Nothing listens on port 1: each built-in resolver fails fast with the node's error. */
static const char *const dead_specs[] = {
	"sentinel:m@127.0.0.1:1",
	"cluster:127.0.0.1:1",
	"role:127.0.0.1:1,127.0.0.1:1",
};

START_TEST(builtin_dead_node)
{
	struct err e;
	struct chaos_resolver *r = chaos_resolver_new(dead_specs[_i], "k", &node, 1000, NULL);
	char host[64];
	int port;
	int64_t t0 = chaos_mono_us();

	ck_assert_ptr_nonnull(r);
	err_clear(&e);
	ck_assert_int_lt(chaos_resolve(r, host, sizeof(host), &port, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.msg, "127.0.0.1:1"));
	ck_assert_int_lt(chaos_mono_us() - t0, 1000 * 1000);
	chaos_resolver_free(r);
}
END_TEST

static Suite *chaos_resolve_suite(void)
{
	Suite *s = suite_create("chaos_resolve");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 20);
	tcase_add_loop_test(tc, spec_table, 0, ARRAY_LEN(spec_cases));
	tcase_add_loop_test(tc, shell_table, 0, ARRAY_LEN(shell_cases));
	tcase_add_test(tc, run_command_output);
	tcase_add_loop_test(tc, builtin_dead_node, 0, ARRAY_LEN(dead_specs));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(chaos_resolve_suite)

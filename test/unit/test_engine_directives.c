/*
 * Unit tests for lib/engine/directives: the table's shape and lookups, value checks,
 * and config-file quoting (exact bytes). test_valkey_live.c checks the table against
 * the real servers and reads quoted values back through them.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "lib/engine/directives.h"
#include "unit.h"

#define R7015 VK_VERSION(7, 0, 15)
#define R724  VK_VERSION(7, 2, 4)
#define V724  VK_VERSION(7, 2, 4)
#define V801  VK_VERSION(8, 0, 1)

START_TEST(table_shape)
{
	size_t n = vk_directive_count();

	ck_assert_uint_gt(n, 200);
	ck_assert_ptr_null(vk_directive_at(n));
	for (size_t i = 0; i < n; i++) {
		const struct vk_directive *d = vk_directive_at(i);

		ck_assert_msg(d->redis_since || d->valkey_since, "%s: on no engine", d->name);
		ck_assert_msg(!d->redis_since || d->redis_since >= VK_REDIS_MIN_VERSION, "%s",
		              d->name);
		ck_assert_msg(!d->valkey_since || d->valkey_since >= VK_VALKEY_MIN_VERSION, "%s",
		              d->name);
		ck_assert_msg(strlen(d->name) <= VK_DIRECTIVE_NAME_MAX, "%s", d->name);
		ck_assert_int_eq(vk_directive_check_value(d->name, "", NULL), 0);
		if (i > 0)
			ck_assert_msg(strcasecmp(vk_directive_at(i - 1)->name, d->name) < 0,
			              "%s: not sorted or duplicated", d->name);
		/* A secret is always the operator's; a file-only line is never live. */
		if (d->flags & VK_DIRECTIVE_SECRET)
			ck_assert_msg(d->flags & VK_DIRECTIVE_OWNED, "%s", d->name);
		if (d->flags & VK_DIRECTIVE_FILE_ONLY)
			ck_assert_msg(!(d->flags & VK_DIRECTIVE_LIVE), "%s", d->name);
		if (!strncmp(d->name, "tls-", 4) || !strncmp(d->name, "cluster-", 8))
			ck_assert_msg(d->flags & VK_DIRECTIVE_OWNED, "%s", d->name);
	}
}
END_TEST

static const struct lookup_case {
	enum vk_engine engine;
	unsigned version;
	const char *name;
	bool known, live, owned, secret;
} lookups[] = {
	/* engine, version, name: known live owned secret */
	{ VK_ENGINE_REDIS, R7015, "maxmemory", 1, 1, 0, 0 },
	{ VK_ENGINE_VALKEY, V801, "maxmemory", 1, 1, 0, 0 },
	{ VK_ENGINE_VALKEY, V724, "maxmemory", 1, 1, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "MaxMemory-Policy", 1, 1, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "databases", 1, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "io-threads", 1, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "port", 1, 1, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "dir", 1, 0, 1, 0 }, /* protected */
	{ VK_ENGINE_REDIS, R7015, "requirepass", 1, 1, 1, 1 },
	{ VK_ENGINE_VALKEY, V801, "primaryauth", 1, 1, 1, 1 },
	{ VK_ENGINE_REDIS, R7015, "primaryauth", 0, 0, 1, 1 },
	{ VK_ENGINE_REDIS, R7015, "masteruser", 1, 1, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "tls-key-file-pass", 1, 1, 1, 1 },
	{ VK_ENGINE_REDIS, R7015, "slaveof", 1, 0, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "rename-command", 1, 0, 1, 0 },
	{ VK_ENGINE_VALKEY, V801, "include", 1, 0, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "cluster-enabled", 1, 0, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "cluster-node-timeout", 1, 1, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "replica-read-only", 1, 1, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "save", 1, 1, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "appendonly", 1, 1, 0, 0 },
	/* Version ranges. */
	{ VK_ENGINE_REDIS, VK_VERSION(6, 2, 14), "maxmemory", 0, 0, 0, 0 },
	{ VK_ENGINE_VALKEY, VK_VERSION(7, 0, 0), "maxmemory", 0, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "locale-collate", 0, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R724, "locale-collate", 1, 1, 0, 0 },
	{ VK_ENGINE_VALKEY, V724, "availability-zone", 0, 0, 0, 0 },
	{ VK_ENGINE_VALKEY, V801, "availability-zone", 1, 1, 0, 0 },
	{ VK_ENGINE_VALKEY, V801, "aof-disable-auto-gc", 0, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "aof-disable-auto-gc", 1, 1, 0, 0 },
	{ VK_ENGINE_VALKEY, V801, "unixsocketgroup", 1, 0, 1, 0 },
	/* Unknown names and engines. */
	{ VK_ENGINE_UNKNOWN, R7015, "maxmemory", 0, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "no-such-directive", 0, 0, 0, 0 },
	{ VK_ENGINE_REDIS, R7015, "tls-something-new", 0, 0, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "Cluster-Something-New", 0, 0, 1, 0 },
	{ VK_ENGINE_REDIS, R7015, "", 0, 0, 0, 0 },
};

START_TEST(lookup)
{
	const struct lookup_case *c = &lookups[_i];
	const struct vk_directive *d = vk_directive_find(c->engine, c->version, c->name);

	ck_assert_msg((d != NULL) == c->known, "%s: known %d", c->name, d != NULL);
	ck_assert_int_eq(vk_directive_is_live(c->engine, c->version, c->name), c->live);
	ck_assert_int_eq(vk_directive_needs_restart(c->engine, c->version, c->name), !c->live);
	ck_assert_int_eq(vk_directive_is_owned(c->name), c->owned);
	ck_assert_int_eq(vk_directive_is_secret(c->name), c->secret);
}
END_TEST

static const struct check_case {
	const char *name;
	const char *value;
	int want;
	const char *msg; /* substring of the message */
} checks[] = {
	{ "maxmemory", "100mb", 0, NULL },
	{ "save", "", 0, NULL },
	{ "notify-keyspace-events", "KEA \"quoted\" \\ and unicode \xc3\xa9", 0, NULL },
	{ "bgsave_cpulist", "0-3", 0, NULL },
	{ "", "x", -EINVAL, "empty name" },
	{ "max memory", "1", -EINVAL, "at offset 3" },
	{ "maxmemory\n", "1", -EINVAL, "at offset 9" },
	{ "a=b", "1", -EINVAL, "name has a character" },
	{ "requirepass", "pw\nrequirepass other", -EINVAL, "control character at offset 2" },
	{ "requirepass", "pw\r", -EINVAL, "requirepass: value has a control character" },
	{ "maxmemory", "1\t2", -EINVAL, "offset 1" },
	{ "maxmemory", "x\x7f", -EINVAL, "offset 1" },
	{ "maxmemory", "\x01", -EINVAL, "offset 0" },
	{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "1", -EINVAL,
	  "longer than 64" },
};

START_TEST(check_value)
{
	const struct check_case *c = &checks[_i];
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(vk_directive_check_value(c->name, c->value, &e), c->want);
	if (c->msg)
		ck_assert_msg(strstr(e.msg, c->msg), "'%s' lacks '%s'", e.msg, c->msg);
	/* The value never reaches the message. */
	if (c->want && strlen(c->value) > 2)
		ck_assert_ptr_null(strstr(e.msg, c->value));
}
END_TEST

START_TEST(check_value_long)
{
	char *v = xmalloc(VK_DIRECTIVE_VALUE_MAX + 2);
	struct err e;

	memset(v, 'x', VK_DIRECTIVE_VALUE_MAX + 1);
	v[VK_DIRECTIVE_VALUE_MAX + 1] = '\0';
	err_clear(&e);
	ck_assert_int_eq(vk_directive_check_value("maxmemory", v, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "longer than 4096"));
	v[VK_DIRECTIVE_VALUE_MAX] = '\0';
	ck_assert_int_eq(vk_directive_check_value("maxmemory", v, NULL), 0);
	free(v);
}
END_TEST

static const struct quote_case {
	const char *in;
	const char *out;
} quotes[] = {
	{ "", "\"\"" },
	{ "100mb", "\"100mb\"" },
	{ "3600 1 300 100", "\"3600 1 300 100\"" },
	{ "a\"b", "\"a\\\"b\"" },
	{ "a\\b", "\"a\\\\b\"" },
	{ "'single'", "\"'single'\"" },
	{ "line\nbreak\r\ttab", "\"line\\nbreak\\r\\ttab\"" },
	{ "\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\"" },
	{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
	{ "#not a comment", "\"#not a comment\"" },
};

START_TEST(quote)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	buf_append_str(&b, "x ");
	ck_assert_int_eq(vk_config_quote(quotes[_i].in, &b), 0);
	ck_assert_str_eq(buf_cstr(&b) + 2, quotes[_i].out);
	buf_release(&b);
}
END_TEST

START_TEST(quote_limit)
{
	struct buf b = BUF_INIT(8);

	ck_assert_int_eq(buf_append_str(&b, "ab"), 0);
	/* "ab" + "\"12\\\"45\"" would be 10 bytes: nothing is appended. */
	ck_assert_int_eq(vk_config_quote("12\"45", &b), -EMSGSIZE);
	ck_assert_str_eq(buf_cstr(&b), "ab");
	ck_assert_uint_eq(b.len, 2);
	ck_assert_int_eq(vk_config_quote("1234", &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "ab\"1234\"");
	buf_release(&b);
}
END_TEST

START_TEST(config_line)
{
	struct buf b = BUF_INIT(48);
	struct err e;

	ck_assert_int_eq(vk_config_line("save", "", &b, NULL), 0);
	ck_assert_int_eq(vk_config_line("maxmemory-policy", "allkeys-lru", &b, NULL), 0);
	ck_assert_str_eq(buf_cstr(&b), "save \"\"\nmaxmemory-policy \"allkeys-lru\"\n");
	err_clear(&e);
	ck_assert_int_eq(vk_config_line("requirepass", "a\nb", &b, &e), -EINVAL);
	err_clear(&e);
	ck_assert_int_eq(vk_config_line("notify-keyspace-events", "KEA", &b, &e), -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(e.msg, "buffer full"));
	ck_assert_str_eq(buf_cstr(&b), "save \"\"\nmaxmemory-policy \"allkeys-lru\"\n");
	buf_release(&b);
}
END_TEST

static Suite *engine_directives_suite(void)
{
	Suite *s = suite_create("engine_directives");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, table_shape);
	tcase_add_loop_test(tc, lookup, 0, ARRAY_LEN(lookups));
	tcase_add_loop_test(tc, check_value, 0, ARRAY_LEN(checks));
	tcase_add_test(tc, check_value_long);
	tcase_add_loop_test(tc, quote, 0, ARRAY_LEN(quotes));
	tcase_add_test(tc, quote_limit);
	tcase_add_test(tc, config_line);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(engine_directives_suite)

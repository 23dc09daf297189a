/*
 * Unit tests for instance/render and instance/acl: the rendered redis.conf for a table
 * of inputs against golden files (UPDATE_GOLDEN=1 rewrites them), the restart hash
 * (moves for static settings only), the ACL rule lists (deny list last for customers,
 * hashes never cleartext), the check of customer rules (case variants, selectors; the
 * same verdicts as the CRD's rules in api/), password sets, and every error path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instance/acl.h"
#include "instance/render.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "testutil.h"
#include "unit.h"

#define GOLDEN_DIR "test/data/instance/"

static struct inst_pwset pw(const char *a, const char *b)
{
	struct inst_pwset s = { 0 };
	char h[INST_PW_HASH_SIZE];

	inst_pw_hash(a, strlen(a), h);
	inst_pwset_add(&s, h);
	if (b) {
		inst_pw_hash(b, strlen(b), h);
		inst_pwset_add(&s, h);
	}
	return s;
}

#define S(x) ((char *)(x))
static char *rules_alice[] = { S("~cache:*"), S("+@read"), S("+@write") };
static struct inst_kv redis_kv[] = { { S("maxclients"), S("20000") },
	                             { S("notify-keyspace-events"), S("Ex") },
	                             { S("save"), S("900 1") } };
static struct inst_user_spec users[] = { { S("alice"), true, 3, rules_alice },
	                                 { S("bob"), false, 0, NULL } };

static void base(struct inst_render *r, struct inst_desired *d, struct inst_pwset p[4])
{
	memset(r, 0, sizeof(*r));
	memset(d, 0, sizeof(*d));
	p[0] = pw("default-pw", NULL);
	p[1] = pw("operator-pw", "operator-old");
	p[2] = pw("alice-pw", NULL);
	p[3] = (struct inst_pwset){ 0 };
	r->engine = VK_ENGINE_REDIS;
	r->version = VK_VERSION(7, 0, 15);
	r->port = 6379;
	r->bind = "0.0.0.0";
	r->unix_socket = "/run/redis-operator/redis.sock";
	r->data_dir = "/data";
	r->announce_ip = "10.0.0.7";
	r->desired = d;
	r->default_pw = &p[0];
	r->operator_pw = &p[1];
	r->user_pw = &p[2];
	r->masterauth = "operator-pw";
}

static char *render(const struct inst_render *r, char hash[INST_CONF_HASH_SIZE])
{
	struct inst_conf c = { 0 };
	struct buf b = BUF_INIT(INST_CONF_MAX);
	struct err e = { 0 };

	ck_assert_int_eq(inst_render_lines(r, &c, &e), 0);
	ck_assert_int_eq(inst_conf_text(&c, &b, &e), 0);
	inst_conf_hash(&c, hash);
	inst_conf_release(&c);
	return buf_detach(&b, NULL);
}

enum variant { V_PVC_PRIMARY, V_EMPTYDIR_REPLICA, V_USERS_TLS_VALKEY, V_COUNT };

static const char *const golden_names[V_COUNT] = { "pvc-primary.conf", "emptydir-replica.conf",
	                                           "users-tls-valkey.conf" };

static void variant(enum variant v, struct inst_render *r, struct inst_desired *d)
{
	if (v == V_EMPTYDIR_REPLICA) {
		r->ephemeral = true;
		r->replicaof_host = "10.0.0.5";
		r->replicaof_port = 6379;
		d->has_maxmemory = true;
		d->maxmemory = 256u << 20;
		d->maxmemory_policy = S("allkeys-lru");
		d->min_sync_replicas = 1;
	}
	if (v == V_USERS_TLS_VALKEY) {
		r->engine = VK_ENGINE_VALKEY;
		r->version = VK_VERSION(8, 0, 1);
		r->tls_cert = "/tls/tls.crt";
		r->tls_key = "/tls/tls.key";
		r->tls_ca = "/tls/ca.crt";
		d->nredis = 3;
		d->redis = redis_kv;
		d->nusers = 2;
		d->users = users;
	}
}

START_TEST(golden_configs)
{
	struct inst_render r;
	struct inst_desired d;
	struct inst_pwset p[4];
	char hash[INST_CONF_HASH_SIZE], *text;

	base(&r, &d, p);
	variant((enum variant)_i, &r, &d);
	text = render(&r, hash);
	tu_golden(GOLDEN_DIR, golden_names[_i], text);
	ck_assert_ptr_null(strstr(text, "default-pw")); /* only hashes */
	ck_assert_ptr_null(strstr(text, "alice-pw"));
	ck_assert_ptr_nonnull(strstr(text, "masterauth \"operator-pw\""));
	free(text);
}
END_TEST

/* spec.tlsClientAuth: required renders tls-auth-clients yes; else optional. */
START_TEST(tls_clients_required)
{
	struct inst_render r;
	struct inst_desired d;
	struct inst_pwset p[4];
	char hash[INST_CONF_HASH_SIZE], *text;

	base(&r, &d, p);
	variant(V_USERS_TLS_VALKEY, &r, &d);
	text = render(&r, hash);
	ck_assert_ptr_nonnull(strstr(text, "\ntls-auth-clients \"optional\"\n"));
	free(text);
	r.tls_clients_required = true;
	text = render(&r, hash);
	ck_assert_ptr_nonnull(strstr(text, "\ntls-auth-clients \"yes\"\n"));
	free(text);
}
END_TEST

/* A live change (maxmemory, users, replicaof) keeps the hash; a static one moves it. */
START_TEST(hash_tracks_static_only)
{
	struct inst_render r;
	struct inst_desired d;
	struct inst_pwset p[4];
	char h0[INST_CONF_HASH_SIZE], h1[INST_CONF_HASH_SIZE];
	struct inst_kv db = { S("databases"), S("32") };

	base(&r, &d, p);
	free(render(&r, h0));
	d.has_maxmemory = true;
	d.maxmemory = 1 << 30;
	r.replicaof_host = "10.0.0.9";
	r.replicaof_port = 6380;
	r.masterauth = "rotated";
	p[0] = pw("another", NULL);
	free(render(&r, h1));
	ck_assert_str_eq(h0, h1);
	d.nredis = 1;
	d.redis = &db;
	free(render(&r, h1));
	ck_assert_str_ne(h0, h1);
	r.unix_socket = "/elsewhere.sock";
	d.nredis = 0;
	free(render(&r, h1));
	ck_assert_str_ne(h0, h1);
}
END_TEST

START_TEST(render_errors)
{
	struct inst_render r;
	struct inst_desired d;
	struct inst_pwset p[4];
	struct inst_conf c = { 0 };
	struct inst_kv owned = { S("port"), S("1") };
	struct err e = { 0 };
	struct buf small = BUF_INIT(64);

	base(&r, &d, p);
	r.port = 0;
	ck_assert_int_eq(inst_render_lines(&r, &c, &e), -EINVAL);
	base(&r, &d, p);
	r.tls_cert = "/x";
	ck_assert_int_eq(inst_render_lines(&r, &c, NULL), -EINVAL);
	base(&r, &d, p);
	d.nredis = 1;
	d.redis = &owned;
	err_clear(&e);
	ck_assert_int_eq(inst_render_lines(&r, &c, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "redis.port"));
	d.nredis = 0;
	ck_assert_int_eq(inst_render_lines(&r, &c, NULL), 0);
	ck_assert_int_eq(inst_conf_text(&c, &small, &e), -EMSGSIZE);
	ck_assert_ptr_nonnull(inst_conf_find(&c, "masterauth"));
	ck_assert_ptr_null(inst_conf_find(&c, "no-such"));
	ck_assert(inst_conf_find(&c, "maxclients") == NULL);
	ck_assert(inst_conf_find(&c, "maxmemory-policy") == NULL);
	ck_assert(inst_conf_find(&c, "appendonly")->live);
	ck_assert(!inst_conf_find(&c, "unixsocket")->live);
	inst_conf_release(&c);
	inst_conf_release(NULL);
	buf_release(&small);
}
END_TEST

START_TEST(acl_rules_customer_deny_last)
{
	struct inst_strv s = { 0 };
	struct inst_pwset p = pw("x", "y");
	char *rules[] = { S("+@all"), S("+config") };
	size_t n;

	inst_acl_rules(INST_ACL_CUSTOMER, true, &p, rules, 2, &s);
	ck_assert_str_eq(s.v[0], "reset");
	ck_assert_str_eq(s.v[1], "on");
	ck_assert_int_eq(s.v[2][0], '#');
	ck_assert_int_eq(strlen(s.v[2]), 65);
	ck_assert_str_eq(s.v[4], "+@all");
	for (n = 0; inst_acl_deny[n]; n++)
		;
	ck_assert_uint_eq(s.n, 6 + n);
	for (size_t k = 0; k < n; k++) /* the whole deny list, after every rule of theirs */
		ck_assert_str_eq(s.v[6 + k], inst_acl_deny[k]);
	ck_assert_ptr_null(s.v[s.n]);
	inst_strv_release(&s);
	inst_acl_rules(INST_ACL_DEFAULT, true, &p, NULL, 0, &s);
	ck_assert_str_eq(s.v[s.n - n - 1], "+@all");
	for (size_t k = 0; k < n; k++)
		ck_assert_str_eq(s.v[s.n - n + k], inst_acl_deny[k]);
	inst_strv_release(&s);
	inst_acl_rules(INST_ACL_OPERATOR, true, NULL, NULL, 0, &s);
	ck_assert_uint_eq(s.n, 5);
	ck_assert_str_eq(s.v[4], "+@all");
	inst_strv_release(&s);
	inst_acl_rules(INST_ACL_CUSTOMER, false, NULL, NULL, 0, &s);
	ck_assert_str_eq(s.v[1], "off");
	inst_strv_release(&s);
	inst_strv_release(NULL);
}
END_TEST

/*
 * Rules with a word of the reason they are refused for; null: a customer may write them.
 * The same file is sent to the real API server as RedisCluster manifests by
 * test/api/run-crd-tests.sh, which wants the CRD's verdict to be this one too: the CRD and
 * the manager refuse the same rules.
 */
#define ACL_RULES_FILE "test/data/api/acl-rules.json"

static json_t *acl_rule_cases; /* [[rule, why-or-null], ...] */

static const char *acl_case_rule(size_t i)
{
	return json_string_value(json_array_get(json_array_get(acl_rule_cases, i), 0));
}

static const char *acl_case_why(size_t i)
{
	return json_string_value(json_array_get(json_array_get(acl_rule_cases, i), 1));
}

START_TEST(acl_rule_refusal)
{
	const char *rule = acl_case_rule((size_t)_i), *want = acl_case_why((size_t)_i);
	const char *why = inst_acl_rule_refusal(rule);

	ck_assert_ptr_nonnull(rule);
	if (!want)
		ck_assert_msg(!why, "%s: refused: %s", rule, why);
	else
		ck_assert_msg(why && strstr(why, want), "%s: %s", rule, why ? why : "allowed");
}
END_TEST

/* A refusal never quotes the rule: a refused rule may carry a password. */
START_TEST(acl_rule_refusal_hides_the_rule)
{
	ck_assert_ptr_null(strstr(inst_acl_rule_refusal(">hunter2"), "hunter2"));
	ck_assert_ptr_null(strstr(inst_acl_rule_refusal("#hunter2"), "hunter2"));
	ck_assert_ptr_null(strstr(inst_acl_rule_refusal("hunter2 on"), "hunter2"));
}
END_TEST

START_TEST(pwset_add_and_hash)
{
	struct inst_pwset s = { 0 };
	char h[INST_PW_HASH_SIZE], name[16];

	/* sha256("foobared") */
	inst_pw_hash("foobared", 8, h);
	ck_assert_str_eq(h, "1b58ee375b42e41f0e48ef2ff27d10a5b1f6924a9acdcdba7cae868e7adce6bf");
	ck_assert_int_eq(inst_pwset_add(&s, h), 0);
	ck_assert_int_eq(inst_pwset_add(&s, h), 0);
	ck_assert_uint_eq(s.n, 1);
	for (int i = 0; i < INST_PW_MAX - 1; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		inst_pw_hash(name, strlen(name), h);
		ck_assert_int_eq(inst_pwset_add(&s, h), 0);
	}
	inst_pw_hash("one-too-many", 12, h);
	ck_assert_int_eq(inst_pwset_add(&s, h), -ENOSPC);
	ck_assert(!inst_pwset_has(&s, h));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_render");
	TCase *t = tcase_create("render");

	tcase_add_loop_test(t, golden_configs, 0, V_COUNT);
	tcase_add_test(t, tls_clients_required);
	tcase_add_test(t, hash_tracks_static_only);
	tcase_add_test(t, render_errors);
	tcase_add_test(t, acl_rules_customer_deny_last);
	acl_rule_cases = json_load_file(ACL_RULES_FILE, 0, NULL);
	if (!json_is_array(acl_rule_cases) || json_array_size(acl_rule_cases) == 0) {
		fprintf(stderr, "cannot read %s\n", ACL_RULES_FILE);
		exit(EXIT_FAILURE);
	}
	tcase_add_loop_test(t, acl_rule_refusal, 0, (int)json_array_size(acl_rule_cases));
	tcase_add_test(t, acl_rule_refusal_hides_the_rule);
	tcase_add_test(t, pwset_add_and_hash);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

/*
 * test_controller_pki: the per-cluster TLS material of controller/pki.
 *
 *   - the two-CA layout, checked by OpenSSL (X509_verify_cert with the SSL purposes):
 *     pods' server certificate chains to the server CA; the controller's and the peer
 *     certificate chain to the client CA the pods trust; a pod's own server certificate
 *     does NOT chain to it (it cannot act as the operator); the instance Secret holds
 *     no CA key;
 *   - reading the controller's side from a Secret as the API returns it (base64 data),
 *     and a table of bad Secrets whose errors name the Secret and the key;
 *   - ctl_pki_pod_uses_tls (on the pod's annotation: the pod cache drops the spec),
 *     ctl_pki_wipe;
 *   - a real HTTPS round trip: a libmicrohttpd (GnuTLS) server with the pods' material,
 *     polled by k8s_multi_get_tls with per-request material, as the poller does: the
 *     cluster's own material answers, another cluster's is refused.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "controller/desired.h"
#include "controller/view.h"
#include "controller/pki.h"
#include "lib/httpd.h"
#include "lib/jsonx.h"
#include "lib/k8s/multi.h"
#include "lib/x509.h"
#include "testutil.h"
#include "unit.h"

#define DAY_MS (86400LL * 1000)
#define NOW_MS 1800000000000LL /* 2027-01-15: inside every certificate's validity */

/* --- helpers ------------------------------------------------------------------------------ */

static json_t *secret(const char *name)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:s}", "apiVersion", "v1", "kind", "Secret",
	                 "metadata", "name", name, "namespace", "ns", "type", "Opaque");
}

static const char *sd(json_t *s, const char *key)
{
	const char *v = json_string_value(json_object_get(json_object_get(s, "stringData"), key));

	ck_assert_msg(v != NULL, "stringData.%s missing", key);
	return v;
}

static void cn_of(const char *pem, char *out, size_t len)
{
	X509 *x = tu_x509_parse(pem);
	unsigned char *der = NULL;
	int n = i2d_X509(x, &der);

	ck_assert_int_eq(x509_der_common_name(der, (size_t)n, out, len, NULL), 0);
	OPENSSL_free(der);
	X509_free(x);
}

/* A cluster's two Secrets: op as built and as read, inst as built. */
struct material {
	json_t *op, *op_read, *inst;
};

static void material_make(struct material *m, const char *cluster)
{
	char name[64];
	struct err e = { 0 };

	snprintf(name, sizeof(name), "%s-operator-tls", cluster);
	m->op = secret(name);
	ck_assert_msg(ctl_pki_fill_operator(m->op, cluster, &e) == 0, "%s", e.msg);
	m->op_read = tu_secret_as_read(m->op);
	snprintf(name, sizeof(name), "%s-instance-tls", cluster);
	m->inst = secret(name);
	ck_assert_msg(ctl_pki_fill_instance(m->inst, m->op_read, cluster, &e) == 0, "%s", e.msg);
}

static void material_free(struct material *m)
{
	json_decref(m->op);
	json_decref(m->op_read);
	json_decref(m->inst);
}

/* --- the layout ----------------------------------------------------------------------------- */

START_TEST(two_cas)
{
	struct material m;
	char cn[X509_CN_MAX + 1];

	material_make(&m, "c");
	/* the controller trusts the server CA; the pods' server certificate chains to it */
	ck_assert_int_eq(tu_x509_verify(sd(m.op, CTL_PKI_SERVER_CA), sd(m.inst, CTL_PKI_INST_CERT),
	                                X509_PURPOSE_SSL_SERVER),
	                 X509_V_OK);
	/* the pods trust the client CA: the controller's certificate and the peer's pass */
	ck_assert_int_eq(tu_x509_verify(sd(m.inst, CTL_PKI_INST_CA), sd(m.op, CTL_PKI_CERT),
	                                X509_PURPOSE_SSL_CLIENT),
	                 X509_V_OK);
	ck_assert_int_eq(tu_x509_verify(sd(m.inst, CTL_PKI_INST_CA), sd(m.inst, CTL_PKI_INST_PEER),
	                                X509_PURPOSE_SSL_CLIENT),
	                 X509_V_OK);
	/* ... a pod's own server certificate does not, whatever the purpose */
	ck_assert_int_eq(
	        tu_x509_verify(sd(m.inst, CTL_PKI_INST_CA), sd(m.inst, CTL_PKI_INST_CERT), -1),
	        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
	/* a manager verifies the peer it promotes against the server CA */
	ck_assert_int_eq(tu_x509_verify(sd(m.inst, CTL_PKI_INST_PEER_CA),
	                                sd(m.inst, CTL_PKI_INST_CERT), X509_PURPOSE_SSL_SERVER),
	                 X509_V_OK);
	ck_assert_str_eq(sd(m.inst, CTL_PKI_INST_CA), sd(m.op, CTL_PKI_CLIENT_CA));
	ck_assert_str_eq(sd(m.inst, CTL_PKI_INST_PEER_CA), sd(m.op, CTL_PKI_SERVER_CA));
	cn_of(sd(m.op, CTL_PKI_CERT), cn, sizeof(cn));
	ck_assert_str_eq(cn, CTL_PKI_CONTROLLER_CN);
	cn_of(sd(m.inst, CTL_PKI_INST_PEER), cn, sizeof(cn));
	ck_assert_str_eq(cn, CTL_PKI_PEER_CN);
	cn_of(sd(m.inst, CTL_PKI_INST_CERT), cn, sizeof(cn));
	ck_assert_str_eq(cn, "c instance");
	material_free(&m);
}
END_TEST

/* The pods' Secret has exactly the keys they mount, and no CA key. */
START_TEST(instance_secret_holds_no_ca_key)
{
	static const char *const keys[CTL_PKI_INST_NKEYS] = CTL_PKI_INST_KEYS;
	struct material m;
	json_t *v;
	const char *k;

	material_make(&m, "c");
	ck_assert_uint_eq(json_object_size(json_object_get(m.inst, "stringData")),
	                  CTL_PKI_INST_NKEYS);
	for (size_t i = 0; i < CTL_PKI_INST_NKEYS; i++)
		(void)sd(m.inst, keys[i]);
	json_object_foreach (json_object_get(m.inst, "stringData"), k, v) {
		ck_assert_str_ne(json_string_value(v), sd(m.op, CTL_PKI_SERVER_CA_KEY));
		ck_assert_str_ne(json_string_value(v), sd(m.op, CTL_PKI_CLIENT_CA_KEY));
		ck_assert_str_ne(json_string_value(v), sd(m.op, CTL_PKI_KEY));
	}
	ck_assert_uint_eq(json_object_size(json_object_get(m.op, "stringData")), 6);
	material_free(&m);
}
END_TEST

/* Two clusters never share a CA. */
START_TEST(clusters_apart)
{
	struct material a, b;

	material_make(&a, "a");
	material_make(&b, "b");
	ck_assert_int_ne(
	        tu_x509_verify(sd(a.op, CTL_PKI_SERVER_CA), sd(b.inst, CTL_PKI_INST_CERT), -1),
	        X509_V_OK);
	ck_assert_int_ne(tu_x509_verify(sd(b.inst, CTL_PKI_INST_CA), sd(a.op, CTL_PKI_CERT), -1),
	                 X509_V_OK);
	material_free(&a);
	material_free(&b);
}
END_TEST

/* --- reading the controller's side ----------------------------------------------------------- */

START_TEST(client_read_ok)
{
	struct material m;
	struct ctl_pki_client c = { 0 };
	struct err e = { 0 };

	material_make(&m, "c");
	ck_assert_msg(ctl_pki_client_read(m.op_read, NOW_MS, &c, &e) == 0, "%s", e.msg);
	ck_assert_str_eq(c.ca_pem, sd(m.op, CTL_PKI_SERVER_CA));
	ck_assert_str_eq(c.cert_pem, sd(m.op, CTL_PKI_CERT));
	ck_assert_str_eq(c.key_pem, sd(m.op, CTL_PKI_KEY));
	/* issued now for CTL_PKI_LEAF_DAYS, within a day (the poller re-reads the material then) */
	ck_assert_int_gt(c.not_after_ms, (time(NULL) + (CTL_PKI_LEAF_DAYS - 1) * 86400LL) * 1000);
	ck_assert_int_lt(c.not_after_ms, (time(NULL) + (CTL_PKI_LEAF_DAYS + 1) * 86400LL) * 1000);
	ctl_pki_client_release(&c);
	ck_assert_ptr_null(c.key_pem);
	ctl_pki_client_release(NULL);
	material_free(&m);
}
END_TEST

enum bad_edit { DROP, SET, SWAP_KEY, LATE };

static const struct bad_read {
	enum bad_edit edit;
	const char *key, *value;
	const char *msg;
} bad_reads[] = {
	{ DROP, "tls.key", NULL, "Secret ns/c-operator-tls: key tls.key: missing" },
	{ DROP, "server-ca.crt", NULL, "Secret ns/c-operator-tls: key server-ca.crt: missing" },
	{ SET, "tls.crt", "@@@@", "Secret ns/c-operator-tls: key tls.crt: not base64 text" },
	{ SET, "tls.crt", "abc", "Secret ns/c-operator-tls: key tls.crt: not base64 text" },
	{ SET, "tls.key", "AAAA", "Secret ns/c-operator-tls: key tls.key: not base64 text" },
	{ SET, "server-ca.crt",
	  "aGVsbG8=", "Secret ns/c-operator-tls: key server-ca.crt: certificate: not PEM" },
	{ SET, "tls.crt",
	  "aGVsbG8=", "Secret ns/c-operator-tls: keys tls.crt, tls.key: certificate: not PEM" },
	{ SWAP_KEY, "tls.key", NULL,
	  "Secret ns/c-operator-tls: keys tls.crt, tls.key: key: does not match the certificate" },
	{ LATE, NULL, NULL, "Secret ns/c-operator-tls: key tls.crt: expired" },
};

START_TEST(client_read_bad)
{
	const struct bad_read *b = &bad_reads[_i];
	struct material m;
	struct ctl_pki_client c = { (char *)"untouched", NULL, NULL };
	struct err e = { 0 };
	json_t *data;
	int64_t now = NOW_MS;

	material_make(&m, "c");
	data = json_object_get(m.op_read, "data");
	if (b->edit == DROP)
		json_object_del(data, b->key);
	else if (b->edit == SET)
		json_object_set_new(data, b->key, json_string(b->value));
	else if (b->edit == SWAP_KEY) /* the client CA's key instead of the client's */
		json_object_set(data, b->key, json_object_get(data, CTL_PKI_CLIENT_CA_KEY));
	else
		now = NOW_MS + (int64_t)CTL_PKI_CA_DAYS * 2 * DAY_MS;
	ck_assert_int_eq(ctl_pki_client_read(m.op_read, now, &c, &e), -EINVAL);
	ck_assert_str_eq(e.msg, b->msg);
	ck_assert_str_eq(c.ca_pem, "untouched");
	ck_assert_ptr_null(strstr(e.msg, "BEGIN"));
	material_free(&m);
}
END_TEST

START_TEST(fill_instance_bad_operator)
{
	struct material m;
	json_t *inst = secret("c-instance-tls");
	struct err e = { 0 };

	material_make(&m, "c");
	json_object_del(json_object_get(m.op_read, "data"), CTL_PKI_CLIENT_CA_KEY);
	ck_assert_int_eq(ctl_pki_fill_instance(inst, m.op_read, "c", &e), -EINVAL);
	ck_assert_str_eq(e.msg, "Secret ns/c-operator-tls: key client-ca.key: missing");
	ck_assert_ptr_null(json_object_get(inst, "stringData"));
	json_decref(inst);
	material_free(&m);
}
END_TEST

START_TEST(pod_uses_tls)
{
	json_t *with = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", CTL_PKI_ANN,
	                         "c-instance-tls");
	json_t *without = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "other", "x");
	json_t *empty = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", CTL_PKI_ANN, "");

	ck_assert(ctl_pki_pod_uses_tls(with));
	ck_assert(!ctl_pki_pod_uses_tls(without));
	ck_assert(!ctl_pki_pod_uses_tls(empty));
	ck_assert(!ctl_pki_pod_uses_tls(NULL));
	json_decref(with);
	json_decref(without);
	json_decref(empty);
}
END_TEST

START_TEST(wipe)
{
	json_t *s = secret("x");
	const char *v;

	json_object_set_new(s, "stringData", json_pack("{s:s,s:s}", "a", "secret", "b", "key"));
	v = json_string_value(json_object_get(json_object_get(s, "stringData"), "a"));
	ctl_pki_wipe(s);
	ck_assert_int_eq(memcmp(v, "\0\0\0\0\0\0", 6), 0);
	ctl_pki_wipe(NULL);
	json_decref(s);
}
END_TEST

/* --- HTTPS round trip -------------------------------------------------------------------- */

static enum MHD_Result ok_handler(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)data;
	(void)size;
	(void)state;
	return httpd_reply_json(c, 200, json_pack("{s:s}", "role", "primary"));
}

START_TEST(https_round_trip)
{
	struct material a, b;
	struct ctl_pki_client ca = { 0 }, cb = { 0 };
	struct k8s_multi_tls ta, tb;
	const struct k8s_multi_tls *tls[2];
	struct k8s_multi_result res[2];
	struct httpd_opts o = { .address = "127.0.0.1", .conn_limit = 8, .conn_timeout_s = 5 };
	struct k8s_multi *m = k8s_multi_new(&(struct k8s_multi_opts){ .timeout_ms = 5000 });
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *info;
	char url[64];
	const char *urls[2] = { url, url };

	material_make(&a, "a");
	material_make(&b, "b");
	o.tls_cert = sd(a.inst, CTL_PKI_INST_CERT);
	o.tls_key = sd(a.inst, CTL_PKI_INST_KEY);
	o.tls_trust = sd(a.inst, CTL_PKI_INST_CA);
	d = httpd_start(&o, ok_handler, NULL);
	ck_assert_ptr_nonnull(d);
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/v1/status", info->port);
	ck_assert_int_eq(ctl_pki_client_read(a.op_read, NOW_MS, &ca, NULL), 0);
	ck_assert_int_eq(ctl_pki_client_read(b.op_read, NOW_MS, &cb, NULL), 0);
	ta = (struct k8s_multi_tls){ .ca_pem = ca.ca_pem,
		                     .cert_pem = ca.cert_pem,
		                     .key_pem = ca.key_pem,
		                     .skip_host_check = true };
	tb = (struct k8s_multi_tls){ .ca_pem = cb.ca_pem,
		                     .cert_pem = cb.cert_pem,
		                     .key_pem = cb.key_pem,
		                     .skip_host_check = true };
	tls[0] = &ta;
	tls[1] = &tb;
	for (int round = 0; round < 2; round++) { /* the second reuses connections */
		ck_assert_int_eq(k8s_multi_get_tls(m, urls, tls, 2, res, NULL), 0);
		ck_assert_msg(res[0].err == 0 && res[0].http == 200, "own material: %s",
		              res[0].msg);
		ck_assert_str_eq(res[0].body, "{\"role\":\"primary\"}");
		ck_assert_msg(res[1].err == -EACCES, "another cluster's CA: %d %s", res[1].err,
		              res[1].msg);
		k8s_multi_results_release(res, 2);
	}
	k8s_multi_free(m);
	httpd_stop(d);
	ctl_pki_client_release(&ca);
	ctl_pki_client_release(&cb);
	material_free(&a);
	material_free(&b);
}
END_TEST

/* --- renewal ------------------------------------------------------------------------------ */

static const struct due_case {
	int64_t now, nb, na; /* ms */
	bool due;
} due_cases[] = {
	{ 0, 0, 90 * DAY_MS, false },                                  /* just issued */
	{ 59 * DAY_MS, 0, 90 * DAY_MS, false },                        /* before 2/3 */
	{ 60 * DAY_MS - 1, 0, 90 * DAY_MS, false },                    /* 1 ms before 2/3 */
	{ 60 * DAY_MS, 0, 90 * DAY_MS, true },                         /* at 2/3 */
	{ 89 * DAY_MS, 0, 90 * DAY_MS, true },                         /* the last day */
	{ 90 * DAY_MS, 0, 90 * DAY_MS, true },                         /* expired */
	{ 400 * DAY_MS, 0, 90 * DAY_MS, true },                        /* long expired */
	{ -1, 0, 90 * DAY_MS, false },                                 /* not valid yet */
	{ 10 * DAY_MS, 5 * DAY_MS, 5 * DAY_MS, true },                 /* empty window */
	{ 10 * DAY_MS, 9 * DAY_MS, 5 * DAY_MS, true },                 /* reversed window */
	{ 1217 * DAY_MS, 0, 1826 * DAY_MS, false },                    /* a CA at 3.33 years - */
	{ 1218 * DAY_MS, 0, 1826 * DAY_MS, true },                     /* a CA at 3.33 years + */
	{ NOW_MS + 59 * DAY_MS, NOW_MS, NOW_MS + 90 * DAY_MS, false }, /* wall clock values */
	{ NOW_MS + 61 * DAY_MS, NOW_MS, NOW_MS + 90 * DAY_MS, true },
};

START_TEST(renew_due_table)
{
	const struct due_case *c = &due_cases[_i];

	ck_assert_msg(ctl_pki_renew_due(c->now, c->nb, c->na) == c->due,
	              "case %d: now %lld window %lld..%lld: want %s", _i, (long long)c->now,
	              (long long)c->nb, (long long)c->na, c->due ? "due" : "not due");
}
END_TEST

START_TEST(lifetimes)
{
	struct material m;
	int64_t now = (int64_t)time(NULL) * 1000, at = 0;

	material_make(&m, "c");
	ck_assert_int_eq(x509_not_after(sd(m.op, CTL_PKI_SERVER_CA), &at, NULL), 0);
	ck_assert_int_gt(at, now + (CTL_PKI_CA_DAYS - 1) * DAY_MS);
	ck_assert_int_lt(at, now + (CTL_PKI_CA_DAYS + 1) * DAY_MS);
	ck_assert_int_eq(x509_not_after(sd(m.inst, CTL_PKI_INST_PEER), &at, NULL), 0);
	ck_assert_int_gt(at, now + (CTL_PKI_LEAF_DAYS - 1) * DAY_MS);
	ck_assert_int_lt(at, now + (CTL_PKI_LEAF_DAYS + 1) * DAY_MS);
	material_free(&m);
}
END_TEST

START_TEST(operator_due)
{
	struct material m;
	int64_t now = (int64_t)time(NULL) * 1000;
	char why[CTL_PKI_WHY_MAX];

	material_make(&m, "c");
	ck_assert_int_eq(ctl_pki_operator_due(m.op_read, now, why, sizeof(why)),
	                 CTL_PKI_RENEW_NONE);
	ck_assert_str_eq(why, "");
	/* 61 days on: the client certificate (90 days) is due, the CAs (5 years) are not */
	ck_assert_int_eq(ctl_pki_operator_due(m.op_read, now + 61 * DAY_MS, why, sizeof(why)),
	                 CTL_PKI_RENEW_CLIENT);
	ck_assert_msg(strncmp(why, "key tls.crt: due for renewal (expires 20", 40) == 0, "%s", why);
	ck_assert_int_eq(ctl_pki_operator_due(m.op_read, now + 1300 * DAY_MS, why, sizeof(why)),
	                 CTL_PKI_RENEW_CAS);
	ck_assert_msg(strncmp(why, "key server-ca.crt: due for renewal (expires 20", 46) == 0, "%s",
	              why);
	ck_assert_int_eq(ctl_pki_operator_due(m.op_read, now + 1900 * DAY_MS, why, sizeof(why)),
	                 CTL_PKI_RENEW_CAS);
	ck_assert_msg(strstr(why, "(expired 20") != NULL, "%s", why);
	/* what does not parse is not judged (as the planner's fixtures: no data at all) */
	json_object_del(json_object_get(m.op_read, "data"), CTL_PKI_SERVER_CA);
	ck_assert_int_eq(ctl_pki_operator_due(m.op_read, now + 1300 * DAY_MS, why, sizeof(why)),
	                 CTL_PKI_RENEW_NONE);
	ck_assert_int_eq(ctl_pki_operator_due(m.op, now, why, sizeof(why)), CTL_PKI_RENEW_NONE);
	material_free(&m);
}
END_TEST

START_TEST(instance_due)
{
	struct material a, b;
	int64_t now = (int64_t)time(NULL) * 1000;
	char why[CTL_PKI_WHY_MAX], fp[CTL_PKI_CA_FP_LEN];
	json_t *inst, *bare = secret("c-instance-tls");

	material_make(&a, "c");
	material_make(&b, "c"); /* the operator Secret deleted and made again */
	inst = tu_secret_as_read(a.inst);
	ck_assert_int_eq(ctl_pki_ca_fingerprint(a.op_read, fp, NULL), 0);
	ck_assert_int_eq(strlen(fp), 129);
	ck_assert_str_eq(json_string_value(json_object_get(jsonx_get(inst, "metadata.annotations"),
	                                                   CTL_PKI_CA_ANN)),
	                 fp);
	ck_assert(!ctl_pki_instance_due(inst, a.op_read, now, why, sizeof(why)));
	ck_assert_str_eq(why, "");
	ck_assert(ctl_pki_instance_due(inst, b.op_read, now, why, sizeof(why)));
	ck_assert_str_eq(why,
	                 "annotation redis.io/operator-ca: other CAs than the operator Secret's");
	ck_assert(ctl_pki_instance_due(inst, a.op_read, now + 61 * DAY_MS, why, sizeof(why)));
	ck_assert_msg(strncmp(why, "key tls.crt: due for renewal", 28) == 0, "%s", why);
	json_object_del(jsonx_get(inst, "metadata.annotations"), CTL_PKI_CA_ANN);
	ck_assert(ctl_pki_instance_due(inst, a.op_read, now, why, sizeof(why)));
	ck_assert_str_eq(why, "annotation redis.io/operator-ca: missing"); /* made before it */
	/* nothing to judge: no certificates, or no CAs */
	ck_assert(!ctl_pki_instance_due(bare, a.op_read, now, why, sizeof(why)));
	ck_assert(!ctl_pki_instance_due(inst, bare, now, why, sizeof(why)));
	json_decref(inst);
	json_decref(bare);
	material_free(&a);
	material_free(&b);
}
END_TEST

/* The renewed operator Secret: kept or new CAs, a new client certificate from the client CA. */
START_TEST(renew_operator)
{
	struct material m;
	int64_t now = (int64_t)time(NULL) * 1000;
	char fp[CTL_PKI_CA_FP_LEN], fp2[CTL_PKI_CA_FP_LEN], why[CTL_PKI_WHY_MAX];
	json_t *patch = json_object(), *read, *inst;
	struct err e = { 0 };

	material_make(&m, "c");
	inst = tu_secret_as_read(m.inst);
	ck_assert_msg(ctl_pki_renew_operator(patch, m.op_read, "c", now + 61 * DAY_MS, &e) == 0,
	              "%s", e.msg);
	ck_assert_str_eq(sd(patch, CTL_PKI_SERVER_CA), sd(m.op, CTL_PKI_SERVER_CA));
	ck_assert_str_eq(sd(patch, CTL_PKI_CLIENT_CA_KEY), sd(m.op, CTL_PKI_CLIENT_CA_KEY));
	ck_assert_str_ne(sd(patch, CTL_PKI_CERT), sd(m.op, CTL_PKI_CERT));
	ck_assert_int_eq(tu_x509_verify(sd(m.inst, CTL_PKI_INST_CA), sd(patch, CTL_PKI_CERT),
	                                X509_PURPOSE_SSL_CLIENT),
	                 X509_V_OK);
	ck_assert_int_eq(x509_check_pair(sd(patch, CTL_PKI_CERT), sd(patch, CTL_PKI_KEY), NULL), 0);
	read = tu_secret_as_read(patch);
	json_object_set(read, "metadata", json_object_get(m.op_read, "metadata"));
	ck_assert(!ctl_pki_instance_due(inst, read, now, why, sizeof(why))); /* same CAs */
	json_decref(read);
	json_decref(patch);
	/* a CA due: both anew, and the instance Secret follows */
	patch = json_object();
	ck_assert_int_eq(ctl_pki_renew_operator(patch, m.op_read, "c", now + 1300 * DAY_MS, &e), 0);
	ck_assert_str_ne(sd(patch, CTL_PKI_SERVER_CA), sd(m.op, CTL_PKI_SERVER_CA));
	ck_assert_str_ne(sd(patch, CTL_PKI_CLIENT_CA), sd(m.op, CTL_PKI_CLIENT_CA));
	read = tu_secret_as_read(patch);
	ck_assert_int_eq(ctl_pki_ca_fingerprint(m.op_read, fp, NULL), 0);
	ck_assert_int_eq(ctl_pki_ca_fingerprint(read, fp2, NULL), 0);
	ck_assert_str_ne(fp, fp2);
	ck_assert(ctl_pki_instance_due(inst, read, now, why, sizeof(why)));
	json_decref(read);
	json_decref(patch);
	/* nothing to keep */
	patch = json_object();
	ck_assert_int_eq(ctl_pki_renew_operator(patch, NULL, "c", now, &e), 0);
	ck_assert_int_eq(tu_x509_verify(sd(patch, CTL_PKI_CLIENT_CA), sd(patch, CTL_PKI_CERT),
	                                X509_PURPOSE_SSL_CLIENT),
	                 X509_V_OK);
	json_decref(patch);
	json_decref(inst);
	material_free(&m);
}
END_TEST

START_TEST(fingerprint_names_the_key)
{
	struct material m;
	char fp[CTL_PKI_CA_FP_LEN] = "untouched";
	struct err e = { 0 };

	material_make(&m, "c");
	json_object_set_new(json_object_get(m.op_read, "data"), CTL_PKI_CLIENT_CA,
	                    json_string("bm90IGEgY2VydA==")); /* "not a cert" */
	ck_assert_int_eq(ctl_pki_ca_fingerprint(m.op_read, fp, &e), -EINVAL);
	ck_assert_str_eq(e.msg,
	                 "Secret ns/c-operator-tls: key client-ca.crt: certificate: not PEM");
	ck_assert_str_eq(fp, "untouched");
	material_free(&m);
}
END_TEST

static Suite *pki_suite(void)
{
	Suite *s = suite_create("controller_pki");
	TCase *t = tcase_create("all");

	tcase_set_timeout(t, 30);
	tcase_add_test(t, two_cas);
	tcase_add_test(t, instance_secret_holds_no_ca_key);
	tcase_add_test(t, clusters_apart);
	tcase_add_test(t, client_read_ok);
	tcase_add_loop_test(t, client_read_bad, 0, ARRAY_LEN(bad_reads));
	tcase_add_test(t, fill_instance_bad_operator);
	tcase_add_test(t, pod_uses_tls);
	tcase_add_test(t, wipe);
	tcase_add_test(t, https_round_trip);
	tcase_add_loop_test(t, renew_due_table, 0, ARRAY_LEN(due_cases));
	tcase_add_test(t, lifetimes);
	tcase_add_test(t, operator_due);
	tcase_add_test(t, instance_due);
	tcase_add_test(t, renew_operator);
	tcase_add_test(t, fingerprint_names_the_key);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(pki_suite)

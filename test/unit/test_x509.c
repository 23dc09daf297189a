/*
 * Unit tests for lib/x509. Chains are checked by OpenSSL itself (X509_verify_cert with a
 * store holding only the CA under test, and the SSL server/client purposes, which read
 * the extended key usage): a leaf verifies against its own CA and fails against
 * another one; a server leaf is no client and the reverse; a CA is a CA, a leaf is not.
 * Then the readers (key/certificate match, notAfter, the DER common name), a table of
 * bad arguments (each error names the argument and leaves the output untouched), and an
 * encrypted key that must be refused without prompting for a passphrase.
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

#include "lib/x509.h"
#include "testutil.h"
#include "unit.h"

#define DAY_MS (86400LL * 1000)

static struct x509_pair ca_a, ca_b, server_a, client_a, client_b;

static void make_all(void)
{
	struct err e = { 0 };

	ck_assert_int_eq(x509_make_ca("test server CA", 30, &ca_a, &e), 0);
	ck_assert_int_eq(x509_make_ca("test client CA", 30, &ca_b, &e), 0);
	ck_assert_int_eq(x509_issue(&ca_a, "instance", 30, X509_EKU_SERVER, &server_a, &e), 0);
	ck_assert_int_eq(x509_issue(&ca_a, "controller", 30, X509_EKU_CLIENT, &client_a, &e), 0);
	ck_assert_int_eq(x509_issue(&ca_b, "controller", 30, X509_EKU_CLIENT, &client_b, &e), 0);
}

static void free_all(void)
{
	x509_pair_release(&ca_a);
	x509_pair_release(&ca_b);
	x509_pair_release(&server_a);
	x509_pair_release(&client_a);
	x509_pair_release(&client_b);
}

/* --- chains ---------------------------------------------------------------------------- */

START_TEST(leaf_verifies_against_its_ca)
{
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, server_a.cert_pem, -1), X509_V_OK);
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, server_a.cert_pem, X509_PURPOSE_SSL_SERVER),
	                 X509_V_OK);
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, client_a.cert_pem, X509_PURPOSE_SSL_CLIENT),
	                 X509_V_OK);
	ck_assert_int_eq(tu_x509_verify(ca_b.cert_pem, client_b.cert_pem, X509_PURPOSE_SSL_CLIENT),
	                 X509_V_OK);
	/* a CA verifies against itself */
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, ca_a.cert_pem, -1), X509_V_OK);
}
END_TEST

START_TEST(wrong_ca_fails)
{
	ck_assert_int_eq(tu_x509_verify(ca_b.cert_pem, server_a.cert_pem, -1),
	                 X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, client_b.cert_pem, X509_PURPOSE_SSL_CLIENT),
	                 X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
	/* a leaf is no CA: it cannot vouch for another leaf */
	ck_assert_int_ne(tu_x509_verify(server_a.cert_pem, client_a.cert_pem, -1), X509_V_OK);
}
END_TEST

START_TEST(eku_present_and_enforced)
{
	X509 *s = tu_x509_parse(server_a.cert_pem), *c = tu_x509_parse(client_a.cert_pem);

	ck_assert(X509_get_extension_flags(s) & EXFLAG_XKUSAGE);
	ck_assert_uint_eq(X509_get_extended_key_usage(s), XKU_SSL_SERVER);
	ck_assert(X509_get_extension_flags(c) & EXFLAG_XKUSAGE);
	ck_assert_uint_eq(X509_get_extended_key_usage(c), XKU_SSL_CLIENT);
	X509_free(s);
	X509_free(c);
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, server_a.cert_pem, X509_PURPOSE_SSL_CLIENT),
	                 X509_V_ERR_INVALID_PURPOSE);
	ck_assert_int_eq(tu_x509_verify(ca_a.cert_pem, client_a.cert_pem, X509_PURPOSE_SSL_SERVER),
	                 X509_V_ERR_INVALID_PURPOSE);
}
END_TEST

START_TEST(ca_and_leaf_shape)
{
	X509 *ca = tu_x509_parse(ca_a.cert_pem), *leaf = tu_x509_parse(server_a.cert_pem), *other;
	EVP_PKEY *pub = X509_get0_pubkey(leaf);

	ck_assert_int_eq(X509_check_ca(ca), 1);
	ck_assert_int_eq(X509_check_ca(leaf), 0);
	ck_assert_int_eq(X509_check_issued(ca, leaf), X509_V_OK);
	ck_assert(EVP_PKEY_is_a(pub, "EC"));
	ck_assert_int_eq(EVP_PKEY_get_bits(pub), 256);
	ck_assert_int_eq(X509_get_signature_nid(leaf), NID_ecdsa_with_SHA256);
	ck_assert_ptr_nonnull(strstr(server_a.key_pem, "-----BEGIN PRIVATE KEY-----"));
	ck_assert_ptr_nonnull(strstr(server_a.cert_pem, "-----BEGIN CERTIFICATE-----"));
	ck_assert_ptr_null(strstr(server_a.cert_pem, "PRIVATE KEY"));
	/* two leaves never share a serial */
	other = tu_x509_parse(client_a.cert_pem);
	ck_assert_int_ne(
	        ASN1_INTEGER_cmp(X509_get0_serialNumber(leaf), X509_get0_serialNumber(other)), 0);
	X509_free(other);
	X509_free(ca);
	X509_free(leaf);
}
END_TEST

/* --- readers ------------------------------------------------------------------------------ */

START_TEST(check_pair_matches_keys)
{
	struct err e = { 0 };

	ck_assert_int_eq(x509_check_pair(server_a.cert_pem, server_a.key_pem, &e), 0);
	ck_assert_int_eq(x509_check_pair(ca_a.cert_pem, ca_a.key_pem, &e), 0);
	ck_assert_int_eq(x509_check_pair(server_a.cert_pem, client_a.key_pem, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "key: does not match the certificate");
	err_clear(&e);
	ck_assert_int_eq(x509_check_pair("not a certificate", server_a.key_pem, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "certificate: not PEM");
	err_clear(&e);
	ck_assert_int_eq(x509_check_pair(server_a.cert_pem, server_a.cert_pem, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "key: not PEM (or encrypted)");
	err_clear(&e);
	ck_assert_int_eq(x509_check_pair(NULL, NULL, &e), -EINVAL);
}
END_TEST

START_TEST(not_after_is_days_ahead)
{
	struct err e = { 0 };
	int64_t at = -1, now = (int64_t)time(NULL) * 1000;

	ck_assert_int_eq(x509_not_after(server_a.cert_pem, &at, &e), 0);
	ck_assert_int_ge(at, now + 30 * DAY_MS - 60000);
	ck_assert_int_le(at, now + 30 * DAY_MS + 60000);
	at = -1;
	ck_assert_int_eq(x509_not_after("-----BEGIN CERTIFICATE-----\nAAAA\n", &at, &e), -EINVAL);
	ck_assert_int_eq(at, -1);
	ck_assert_str_eq(e.msg, "certificate: not PEM");
}
END_TEST

START_TEST(not_before_is_backdated)
{
	int64_t at = -1, now = (int64_t)time(NULL) * 1000;

	ck_assert_int_eq(x509_not_before(server_a.cert_pem, &at, NULL), 0);
	ck_assert_int_ge(at, now - 300000 - 60000); /* 5 minutes back, for clock skew */
	ck_assert_int_le(at, now - 300000 + 60000);
	at = -1;
	ck_assert_int_eq(x509_not_before("junk", &at, NULL), -EINVAL);
	ck_assert_int_eq(at, -1);
}
END_TEST

/* The SHA-256 of the DER, as OpenSSL computes it on its own, in lower-case hex. */
START_TEST(fingerprint_is_sha256_of_der)
{
	X509 *x = tu_x509_parse(ca_a.cert_pem);
	unsigned char md[32];
	unsigned int n = 0;
	char want[65], got[X509_FINGERPRINT_LEN + 1] = "untouched", other[X509_FINGERPRINT_LEN + 1];
	struct err e = { 0 };

	ck_assert_int_eq(X509_digest(x, EVP_sha256(), md, &n), 1);
	for (unsigned int i = 0; i < n; i++)
		snprintf(want + 2 * i, 3, "%02x", md[i]);
	X509_free(x);
	ck_assert_int_eq(x509_fingerprint(ca_a.cert_pem, got, &e), 0);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(x509_fingerprint(ca_b.cert_pem, other, &e), 0);
	ck_assert_str_ne(got, other);
	ck_assert_int_eq(x509_fingerprint("junk", got, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "certificate: not PEM");
	ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(der_common_name)
{
	X509 *x = tu_x509_parse(client_a.cert_pem);
	unsigned char *der = NULL;
	int n = i2d_X509(x, &der);
	char cn[X509_CN_MAX + 1] = "untouched", tiny[4] = "abc";
	struct err e = { 0 };

	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(x509_der_common_name(der, (size_t)n, cn, sizeof(cn), &e), 0);
	ck_assert_str_eq(cn, "controller");
	ck_assert_int_eq(x509_der_common_name(der, (size_t)n, tiny, sizeof(tiny), &e), -EINVAL);
	ck_assert_str_eq(e.msg, "certificate: common name longer than 3 bytes");
	ck_assert_str_eq(tiny, "abc");
	err_clear(&e);
	ck_assert_int_eq(x509_der_common_name(der, (size_t)n / 2, cn, sizeof(cn), &e), -EINVAL);
	ck_assert_str_eq(e.msg, "certificate: not DER");
	ck_assert_str_eq(cn, "controller");
	ck_assert_int_eq(x509_der_common_name(NULL, 0, cn, sizeof(cn), NULL), -EINVAL);
	OPENSSL_free(der);
	X509_free(x);
}
END_TEST

/* --- bad arguments ------------------------------------------------------------------------- */

static const char cn65[] = "0123456789012345678901234567890123456789012345678901234567890123x";

static const struct bad_case {
	const char *cn;
	int days, eku;
	const char *msg;
} bad_cases[] = {
	{ "", 1, X509_EKU_SERVER, "cn: empty" },
	{ NULL, 1, X509_EKU_SERVER, "cn: empty" },
	{ cn65, 1, X509_EKU_SERVER, "cn: longer than 64 bytes" },
	{ "x", 0, X509_EKU_SERVER, "days: 0 not in 1..36500" },
	{ "x", -5, X509_EKU_CLIENT, "days: -5 not in 1..36500" },
	{ "x", 36501, X509_EKU_CLIENT, "days: 36501 not in 1..36500" },
	{ "x", 1, 7, "eku: 7 is not a known usage" },
};

START_TEST(bad_arguments)
{
	const struct bad_case *c = &bad_cases[_i];
	struct x509_pair out = { (char *)"untouched", (char *)"untouched" };
	struct err e = { 0 };

	ck_assert_int_eq(x509_issue(&ca_a, c->cn, c->days, (enum x509_eku)c->eku, &out, &e),
	                 -EINVAL);
	ck_assert_str_eq(e.msg, c->msg);
	ck_assert_str_eq(out.cert_pem, "untouched");
	if (c->eku == 7)
		return;
	err_clear(&e);
	ck_assert_int_eq(x509_make_ca(c->cn, c->days, &out, &e), -EINVAL);
	ck_assert_str_eq(e.msg, c->msg);
	ck_assert_str_eq(out.key_pem, "untouched");
}
END_TEST

START_TEST(bad_ca)
{
	struct x509_pair out = { 0 }, mixed = { ca_a.cert_pem, ca_b.key_pem },
	                 garbage = { (char *)"x", ca_a.key_pem }, nokey = { ca_a.cert_pem, NULL };
	struct err e = { 0 };

	ck_assert_int_eq(x509_issue(&mixed, "x", 1, X509_EKU_SERVER, &out, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "CA key: does not match the CA certificate");
	err_clear(&e);
	ck_assert_int_eq(x509_issue(&garbage, "x", 1, X509_EKU_SERVER, &out, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "CA certificate: not PEM");
	err_clear(&e);
	ck_assert_int_eq(x509_issue(&nokey, "x", 1, X509_EKU_SERVER, &out, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "CA key: not PEM");
	ck_assert_int_eq(x509_issue(NULL, "x", 1, X509_EKU_SERVER, &out, NULL), -EINVAL);
	ck_assert_ptr_null(out.cert_pem);
}
END_TEST

/* An encrypted key is refused at once: nothing may prompt on a terminal. */
START_TEST(encrypted_key_refused)
{
	BIO *in = BIO_new_mem_buf(server_a.key_pem, -1), *out = BIO_new(BIO_s_mem());
	EVP_PKEY *k = PEM_read_bio_PrivateKey(in, NULL, NULL, NULL);
	struct err e = { 0 };
	char *data = NULL, *pem;
	long n;

	ck_assert_ptr_nonnull(k);
	ck_assert_int_eq(PEM_write_bio_PrivateKey(out, k, EVP_aes_128_cbc(),
	                                          (unsigned char *)"secret", 6, NULL, NULL),
	                 1);
	n = BIO_get_mem_data(out, &data);
	pem = strndup(data, (size_t)n);
	ck_assert_ptr_nonnull(strstr(pem, "ENCRYPTED"));
	ck_assert_int_eq(x509_check_pair(server_a.cert_pem, pem, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "key: not PEM (or encrypted)");
	free(pem);
	EVP_PKEY_free(k);
	BIO_free(in);
	BIO_free(out);
}
END_TEST

START_TEST(release_is_null_safe)
{
	struct x509_pair p = { 0 };

	x509_pair_release(NULL);
	x509_pair_release(&p);
	p.cert_pem = xstrdup("c");
	p.key_pem = xstrdup("k");
	x509_pair_release(&p);
	ck_assert_ptr_null(p.cert_pem);
	ck_assert_ptr_null(p.key_pem);
}
END_TEST

static Suite *x509_suite(void)
{
	Suite *s = suite_create("x509");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, make_all, free_all);
	tcase_add_test(tc, leaf_verifies_against_its_ca);
	tcase_add_test(tc, wrong_ca_fails);
	tcase_add_test(tc, eku_present_and_enforced);
	tcase_add_test(tc, ca_and_leaf_shape);
	tcase_add_test(tc, check_pair_matches_keys);
	tcase_add_test(tc, not_after_is_days_ahead);
	tcase_add_test(tc, der_common_name);
	tcase_add_test(tc, not_before_is_backdated);
	tcase_add_test(tc, fingerprint_is_sha256_of_der);
	tcase_add_loop_test(tc, bad_arguments, 0, ARRAY_LEN(bad_cases));
	tcase_add_test(tc, bad_ca);
	tcase_add_test(tc, encrypted_key_refused);
	tcase_add_test(tc, release_is_null_safe);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(x509_suite)

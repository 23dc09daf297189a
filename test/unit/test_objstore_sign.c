/*
 * Unit tests for lib/objstore/sharedkey: the Shared Key string to sign (the published
 * canonicalisation examples of "Authorize with Shared Key") and its HMAC-SHA256
 * (RFC 4231 test case 2), and the header as sent.
 */
#include <errno.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/objstore/sharedkey.h"
#include "unit.h"

#define DATE "Sun, 11 Oct 2009 21:49:13 GMT"

/* The documented GET of container metadata against the secondary/emulator path style:
 * the account appears twice in the canonicalized resource. */
START_TEST(string_to_sign_documented_example)
{
	const struct objstore_param q[] = { { "restype", "container" },
		                            { "comp", "metadata" },
		                            { "timeout", "20" } };
	const struct objstore_param h[] = { { "x-ms-version", "2009-09-19" },
		                            { "x-ms-date", DATE } };
	struct objstore_sharedkey_req r = {
		"GET", "myaccount", "/myaccount/mycontainer", q, 3, h, 2
	};
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	ck_assert_int_eq(objstore_sharedkey_string(&r, &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "GET\n\n\n\n\n\n\n\n\n\n\n\n"
	                               "x-ms-date:" DATE "\nx-ms-version:2009-09-19\n"
	                               "/myaccount/myaccount/mycontainer\n"
	                               "comp:metadata\nrestype:container\ntimeout:20");
	buf_release(&b);
}
END_TEST

/* A Put Block: standard headers in their slots, Content-Length kept, x-ms sorted and
 * trimmed, query names lower-cased and sorted, values decoded. */
START_TEST(string_to_sign_put_block)
{
	const struct objstore_param q[] = { { "comp", "block" }, { "blockid", "b2Jq+/==" } };
	const struct objstore_param h[] = {
		{ "X-MS-Version", "2020-10-02" },
		{ "Content-Type", "application/xml" },
		{ "x-ms-date", DATE },
		{ "Content-MD5", "1B2M2Y8AsgTpgAmY7PhCfg==" },
		{ "Content-Length", "11" },
		{ "x-ms-meta-a", "  two   words  " },
		{ "User-Agent", "ignored" },
	};
	struct objstore_sharedkey_req r = { "PUT", "acct", "/c/dir/a%20b", q, 2, h, 7 };
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	ck_assert_int_eq(objstore_sharedkey_string(&r, &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "PUT\n\n\n11\n1B2M2Y8AsgTpgAmY7PhCfg==\napplication/xml\n"
	                               "\n\n\n\n\n\n"
	                               "x-ms-date:" DATE "\nx-ms-meta-a:two words\n"
	                               "x-ms-version:2020-10-02\n"
	                               "/acct/c/dir/a%20b\nblockid:b2Jq+/==\ncomp:block");
	buf_release(&b);
}
END_TEST

/* Versions from 2015-02-21 on: a zero Content-Length is an empty line. */
START_TEST(string_to_sign_zero_length)
{
	const struct objstore_param h[] = { { "Content-Length", "0" } };
	struct objstore_sharedkey_req r = { "DELETE", "a", "/c/k", NULL, 0, h, 1 };
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	ck_assert_int_eq(objstore_sharedkey_string(&r, &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "DELETE\n\n\n\n\n\n\n\n\n\n\n\n/a/c/k");
	buf_release(&b);
}
END_TEST

/* RFC 4231, test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?") =
 * 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843, here in base64. */
START_TEST(hmac_rfc4231_case2)
{
	static const char data[] = "what do ya want for nothing?";
	char sig[OBJSTORE_SHAREDKEY_SIG_LEN + 1];

	ck_assert_int_eq(
	        objstore_sharedkey_sign((const unsigned char *)"Jefe", 4, data, strlen(data), sig),
	        0);
	ck_assert_str_eq(sig, "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=");
}
END_TEST

/* The whole header for the documented request with the emulator's published key
 * (expected value computed independently with `openssl dgst -sha256 -mac HMAC`). */
START_TEST(header_with_emulator_key)
{
	static const unsigned char key_b64[] = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2"
	                                       "UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
	unsigned char key[64];
	const struct objstore_param q[] = { { "restype", "container" },
		                            { "comp", "metadata" },
		                            { "timeout", "20" } };
	const struct objstore_param h[] = { { "x-ms-date", DATE },
		                            { "x-ms-version", "2009-09-19" } };
	struct objstore_sharedkey_req r = {
		"GET", "myaccount", "/myaccount/mycontainer", q, 3, h, 2
	};
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	ck_assert_int_eq(EVP_DecodeBlock(key, key_b64, (int)strlen((const char *)key_b64)), 66);
	ck_assert_int_eq(objstore_sharedkey_header(&r, key, 64, &b), 0);
	ck_assert_str_eq(buf_cstr(&b), "Authorization: SharedKey "
	                               "myaccount:Su5rvibNeMxB7A4I87rOtEgCDtdICsL8v5H+yJs0W+M=");
	buf_release(&b);
}
END_TEST

START_TEST(too_many_ms_headers)
{
	struct objstore_param h[17];
	struct objstore_sharedkey_req r = { "GET", "a", "/c", NULL, 0, h, 17 };
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < ARRAY_LEN(h); i++)
		h[i] = (struct objstore_param){ "x-ms-meta-x", "v" };
	ck_assert_int_eq(objstore_sharedkey_string(&r, &b), -EINVAL);
	buf_release(&b);
}
END_TEST

static Suite *objstore_sign_suite(void)
{
	Suite *s = suite_create("objstore_sign");
	TCase *tc = tcase_create("sharedkey");

	tcase_add_test(tc, string_to_sign_documented_example);
	tcase_add_test(tc, string_to_sign_put_block);
	tcase_add_test(tc, string_to_sign_zero_length);
	tcase_add_test(tc, hmac_rfc4231_case2);
	tcase_add_test(tc, header_with_emulator_key);
	tcase_add_test(tc, too_many_ms_headers);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(objstore_sign_suite)

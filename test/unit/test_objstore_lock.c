/*
 * lib/objstore/lock: the parsers of S3 Object Lock documents and Azure immutability
 * headers, and the rule "locked = a legal hold or a retention not yet ended". The
 * requests themselves run against versitygw in test/integration/objstore.sh; Azurite
 * implements no immutability (docs/backup.md), so the Azure headers are tested here only,
 * with the values of Microsoft's Get Blob Properties reference.
 */
#include <errno.h>
#include <string.h>

#include "lib/objstore/internal.h"
#include "lib/objstore/lock.h"
#include "unit.h"

#define T0 1796774400000LL /* 2026-12-09T00:00:00Z */

START_TEST(bucket_config)
{
	static const char on[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
	                         "<ObjectLockConfiguration xmlns=\"http://s3.amazonaws.com/doc/"
	                         "2006-03-01/\"><ObjectLockEnabled>Enabled</ObjectLockEnabled>"
	                         "<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days>"
	                         "</DefaultRetention></Rule></ObjectLockConfiguration>";
	static const char off[] = "<ObjectLockConfiguration></ObjectLockConfiguration>";
	bool en = false;

	ck_assert_int_eq(objstore_lock_parse_bucket(on, strlen(on), &en), 0);
	ck_assert(en);
	ck_assert_int_eq(objstore_lock_parse_bucket(off, strlen(off), &en), 0);
	ck_assert(!en);
	ck_assert_int_eq(objstore_lock_parse_bucket("<ObjectLockEnabled>", 19, &en), -EPROTO);
}
END_TEST

START_TEST(retention_doc)
{
	static const char doc[] = "<Retention xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
	                          "<Mode>COMPLIANCE</Mode>"
	                          "<RetainUntilDate>2026-12-09T00:00:00.000Z</RetainUntilDate>"
	                          "</Retention>";
	/* versitygw 1.8's answer, measured: another root element */
	static const char vgw[] =
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ObjectLockRetention>"
	        "<Mode>GOVERNANCE</Mode><RetainUntilDate>2026-12-09T00:00:00Z"
	        "</RetainUntilDate></ObjectLockRetention>";
	static const char bad_date[] = "<Retention><Mode>GOVERNANCE</Mode>"
	                               "<RetainUntilDate>tomorrow</RetainUntilDate></Retention>";
	struct objstore_lock l = { 0 };
	char what[64];

	ck_assert_int_eq(objstore_lock_parse_retention(doc, strlen(doc), &l), 0);
	ck_assert_str_eq(l.mode, "COMPLIANCE");
	ck_assert_int_eq(l.retain_until_ms, T0);
	ck_assert(!l.legal_hold);
	ck_assert(objstore_lock_active(&l, T0 - 1));
	ck_assert(!objstore_lock_active(&l, T0)); /* ended: deletable again */
	objstore_lock_describe(&l, what);
	ck_assert_str_eq(what, "COMPLIANCE until 2026-12-09T00:00:00Z");
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(objstore_lock_parse_retention(vgw, strlen(vgw), &l), 0);
	ck_assert_str_eq(l.mode, "GOVERNANCE");
	ck_assert_int_eq(l.retain_until_ms, T0);
	ck_assert_int_eq(objstore_lock_parse_retention(bad_date, strlen(bad_date), &l), -EPROTO);
	ck_assert_int_eq(objstore_lock_parse_retention("<Retention/>", 12, &l), -EPROTO);
}
END_TEST

START_TEST(legal_hold_doc)
{
	static const char on[] = "<LegalHold><Status>ON</Status></LegalHold>";
	static const char off[] = "<LegalHold><Status>OFF</Status></LegalHold>";
	static const char odd[] = "<LegalHold><Status>MAYBE</Status></LegalHold>";
	struct objstore_lock l = { 0 };
	char what[64];

	ck_assert_int_eq(objstore_lock_parse_legal_hold(off, strlen(off), &l), 0);
	ck_assert(!l.legal_hold);
	ck_assert(!objstore_lock_active(&l, T0));
	objstore_lock_describe(&l, what);
	ck_assert_str_eq(what, "no lock");
	ck_assert_int_eq(objstore_lock_parse_legal_hold(on, strlen(on), &l), 0);
	ck_assert(l.legal_hold);
	ck_assert(objstore_lock_active(&l, INT64_MAX)); /* a hold has no end */
	objstore_lock_describe(&l, what);
	ck_assert_str_eq(what, "legal hold");
	ck_assert_int_eq(objstore_lock_parse_legal_hold(odd, strlen(odd), &l), -EPROTO);
}
END_TEST

START_TEST(azure_headers)
{
	struct objstore_lock l = { 0 };

	ck_assert_int_eq(
	        objstore_lock_parse_azure("Wed, 09 Dec 2026 00:00:00 GMT", "Unlocked", "false", &l),
	        0);
	ck_assert_int_eq(l.retain_until_ms, T0);
	ck_assert_str_eq(l.mode, "Unlocked");
	ck_assert(!l.legal_hold);
	ck_assert(objstore_lock_active(&l, T0 - 1000));
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(objstore_lock_parse_azure("", "", "true", &l), 0);
	ck_assert(l.legal_hold && l.retain_until_ms == 0);
	memset(&l, 0, sizeof(l));
	ck_assert_int_eq(objstore_lock_parse_azure(NULL, NULL, NULL, &l), 0); /* no headers */
	ck_assert(!objstore_lock_active(&l, T0));
	ck_assert_int_eq(objstore_lock_parse_azure("09/12/2026", "Locked", "", &l), -EPROTO);
}
END_TEST

START_TEST(dates)
{
	int64_t ms = 0;

	ck_assert_int_eq(objstore_lock_parse_date("Wed, 09 Dec 2026 00:00:01 GMT", &ms), 0);
	ck_assert_int_eq(ms, T0 + 1000);
	ck_assert_int_eq(objstore_lock_parse_date("2026-12-09T00:00:00Z", &ms), 0);
	ck_assert_int_eq(ms, T0);
	ck_assert_int_eq(objstore_lock_parse_date("Wed, 09 Dec 2026 00:00:01 GMT junk", &ms),
	                 -EINVAL);
	ck_assert_int_eq(objstore_lock_parse_date("", &ms), -EINVAL);
}
END_TEST

/* Azure refuses to delete a blob its container-level policy protects (a policy no blob
 * shows): retention takes -EPERM as "locked", so these Codes must map to it. */
START_TEST(immutable_codes)
{
	ck_assert_int_eq(objstore_code_errno("BlobImmutableDueToPolicy"), -EPERM);
	ck_assert_int_eq(objstore_code_errno("BlobImmutableDueToLegalHold"), -EPERM);
	ck_assert_int_eq(objstore_code_errno("AccessDenied"), -EACCES); /* not a lock */
}
END_TEST

static Suite *objstore_lock_suite(void)
{
	Suite *s = suite_create("objstore_lock");
	TCase *tc = tcase_create("lock");

	tcase_add_test(tc, bucket_config);
	tcase_add_test(tc, retention_doc);
	tcase_add_test(tc, legal_hold_doc);
	tcase_add_test(tc, azure_headers);
	tcase_add_test(tc, dates);
	tcase_add_test(tc, immutable_codes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(objstore_lock_suite)

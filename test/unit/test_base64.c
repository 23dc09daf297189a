/*
 * Unit tests for lib/base64: the RFC 4648 vectors both ways, every byte value, every
 * length round trip, the padding rules, and the invalid inputs each caller relies on
 * being refused (outputs untouched). Whitespace only with BASE64_SPACE.
 */
#include <errno.h>
#include <string.h>

#include "lib/base64.h"
#include "unit.h"

/* RFC 4648 section 10, then bytes a string cannot hold. */
static const struct {
	const char *plain;
	size_t len;
	const char *text;
} vectors[] = {
	{ "", 0, "" },
	{ "f", 1, "Zg==" },
	{ "fo", 2, "Zm8=" },
	{ "foo", 3, "Zm9v" },
	{ "foob", 4, "Zm9vYg==" },
	{ "fooba", 5, "Zm9vYmE=" },
	{ "foobar", 6, "Zm9vYmFy" },
	{ "\0\1\2", 3, "AAEC" },
	{ "\xff\xfe\xfd\xfc", 4, "//79/A==" },
	{ "\xfb\xef\xbe", 3, "++++" },
};

START_TEST(encode_vectors)
{
	char *t = base64_encode(vectors[_i].plain, vectors[_i].len);

	ck_assert_str_eq(t, vectors[_i].text);
	ck_assert_uint_eq(base64_encoded_len(vectors[_i].len), strlen(vectors[_i].text));
	free(t);
}
END_TEST

START_TEST(decode_vectors)
{
	char *out = NULL;
	size_t len = 99;

	ck_assert_int_eq(base64_decode(vectors[_i].text, strlen(vectors[_i].text), 0, &out, &len),
	                 0);
	ck_assert_uint_eq(len, vectors[_i].len);
	ck_assert(memcmp(out, vectors[_i].plain, len) == 0);
	ck_assert_int_eq(out[len], '\0');
	free(out);
}
END_TEST

/* Every byte value, at every offset in its group, and every length up to 3 groups. */
START_TEST(round_trip)
{
	unsigned char bytes[256 + 9];

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(bytes); n += n < 12 ? 1 : 85) {
		char *t = base64_encode(bytes, n), *back = NULL;
		size_t len = 0;

		ck_assert_uint_eq(strlen(t), base64_encoded_len(n));
		ck_assert_int_eq(base64_decode(t, strlen(t), 0, &back, &len), 0);
		ck_assert_uint_eq(len, n);
		ck_assert(memcmp(back, bytes, n) == 0);
		free(t);
		free(back);
	}
}
END_TEST

static const struct {
	const char *text;
	size_t len; /* 0: strlen(text) */
	unsigned flags;
	int rc;
	const char *plain; /* when rc is 0 */
} cases[] = {
	{ "YR==", 0, 0, 0, "a" }, /* left-over bits are ignored */
	{ "YWJ=", 0, 0, 0, "ab" },
	{ "YQ", 0, 0, -EINVAL, NULL },         /* padding missing */
	{ "YQ=", 0, 0, -EINVAL, NULL },        /* half the padding */
	{ "YQ===", 0, 0, -EINVAL, NULL },      /* too much */
	{ "Y===", 0, 0, -EINVAL, NULL },       /* '=' in the second place of a group */
	{ "====", 0, 0, -EINVAL, NULL },       /* padding alone */
	{ "=YWJ", 0, 0, -EINVAL, NULL },       /* padding first */
	{ "YQ=a", 0, 0, -EINVAL, NULL },       /* data between padding */
	{ "YW=j", 0, 0, -EINVAL, NULL },       /* data after padding, same group */
	{ "YQ==YQ==", 0, 0, -EINVAL, NULL },   /* data after the padded group */
	{ "YQ==\n", 0, 0, -EINVAL, NULL },     /* whitespace without BASE64_SPACE */
	{ "Y Q==", 0, 0, -EINVAL, NULL },      /* inside, likewise */
	{ "Zm9_", 0, 0, -EINVAL, NULL },       /* base64url alphabet */
	{ "Zm9-", 0, 0, -EINVAL, NULL },       /* likewise */
	{ "!!!!", 0, 0, -EINVAL, NULL },       /* not the alphabet */
	{ "Zm9v\0Zm9v", 9, 0, -EINVAL, NULL }, /* a NUL inside the text */
	{ "Zm9v\n Ym\tFy\r\n", 0, BASE64_SPACE, 0, "foobar" }, /* wrapped, as in kubeconfigs */
	{ " Zg = = ", 0, BASE64_SPACE, 0, "f" },
	{ "\n", 0, BASE64_SPACE, 0, "" },
	{ "Zm9v Yg", 0, BASE64_SPACE, -EINVAL, NULL }, /* still needs its padding */
	{ "Zg==\nZg==", 0, BASE64_SPACE, -EINVAL, NULL },
	{ "Zm9v\fYmFy", 0, BASE64_SPACE, -EINVAL, NULL }, /* only space, tab, CR, LF */
};

START_TEST(decode_cases)
{
	const char *text = cases[_i].text;
	size_t n = cases[_i].len ? cases[_i].len : strlen(text);
	char sentinel[] = "untouched", *out = sentinel;
	size_t len = 99;
	int rc = base64_decode(text, n, cases[_i].flags, &out, &len);

	ck_assert_msg(rc == cases[_i].rc, "case %d: rc %d", _i, rc);
	if (rc) {
		ck_assert_ptr_eq(out, sentinel);
		ck_assert_uint_eq(len, 99);
		return;
	}
	ck_assert_uint_eq(len, strlen(cases[_i].plain));
	ck_assert_str_eq(out, cases[_i].plain);
	free(out);
}
END_TEST

static Suite *base64_suite(void)
{
	Suite *s = suite_create("base64");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, encode_vectors, 0, ARRAY_LEN(vectors));
	tcase_add_loop_test(tc, decode_vectors, 0, ARRAY_LEN(vectors));
	tcase_add_test(tc, round_trip);
	tcase_add_loop_test(tc, decode_cases, 0, ARRAY_LEN(cases));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(base64_suite)

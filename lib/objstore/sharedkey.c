/*
 * objstore/sharedkey: the Shared Key string to sign and its HMAC (sharedkey.h).
 */
#include "sharedkey.h"

#include <ctype.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <openssl/hmac.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"
#include "lib/base64.h"

#define MS_HEADERS_MAX 16

static const char *const standard[] = {
	"Content-Encoding",
	"Content-Language",
	"Content-Length",
	"Content-MD5",
	"Content-Type",
	"Date",
	"If-Modified-Since",
	"If-Match",
	"If-None-Match",
	"If-Unmodified-Since",
	"Range",
};

static const char *header_value(const struct objstore_sharedkey_req *r, const char *name)
{
	for (size_t i = 0; i < r->n_headers; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value ? r->headers[i].value : "";
	return "";
}

/* Lower-case name, ':', the value trimmed with whitespace runs folded, '\n'. */
static int append_ms_header(struct buf *out, const struct objstore_param *h)
{
	const char *v = h->value ? h->value : "";
	bool space = false;
	int rc = 0;

	for (const char *p = h->name; *p && !rc; p++)
		rc = buf_append_char(out, (char)tolower((unsigned char)*p));
	rc = rc ? rc : buf_append_char(out, ':');
	while (*v == ' ' || *v == '\t')
		v++;
	for (; *v && !rc; v++) {
		if (*v == ' ' || *v == '\t') {
			space = true;
			continue;
		}
		if (space)
			rc = buf_append_char(out, ' ');
		space = false;
		rc = rc ? rc : buf_append_char(out, *v);
	}
	return rc ? rc : buf_append_char(out, '\n');
}

/* Sorts pointers to params by case-insensitive name (insertion sort: a handful). */
static void sort_params(const struct objstore_param **v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcasecmp(v[j - 1]->name, v[j]->name) > 0; j--) {
			const struct objstore_param *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static int append_ms_headers(const struct objstore_sharedkey_req *r, struct buf *out)
{
	const struct objstore_param *ms[MS_HEADERS_MAX];
	size_t n = 0;
	int rc = 0;

	for (size_t i = 0; i < r->n_headers; i++) {
		if (strncasecmp(r->headers[i].name, "x-ms-", 5) != 0)
			continue;
		if (n == MS_HEADERS_MAX)
			return -EINVAL;
		ms[n++] = &r->headers[i];
	}
	sort_params(ms, n);
	for (size_t i = 0; i < n && !rc; i++)
		rc = append_ms_header(out, ms[i]);
	return rc;
}

static int append_resource(const struct objstore_sharedkey_req *r, struct buf *out)
{
	const struct objstore_param *q[OBJSTORE_QUERY_MAX];
	int rc;

	if (r->n_query > OBJSTORE_QUERY_MAX)
		return -EINVAL;
	for (size_t i = 0; i < r->n_query; i++)
		q[i] = &r->query[i];
	sort_params(q, r->n_query);
	rc = buf_printf(out, "/%s%s", r->account, r->path);
	for (size_t i = 0; i < r->n_query && !rc; i++) {
		rc = buf_append_char(out, '\n');
		for (const char *p = q[i]->name; *p && !rc; p++)
			rc = buf_append_char(out, (char)tolower((unsigned char)*p));
		rc = rc ? rc : buf_printf(out, ":%s", q[i]->value ? q[i]->value : "");
	}
	return rc;
}

int objstore_sharedkey_string(const struct objstore_sharedkey_req *r, struct buf *out)
{
	int rc = buf_printf(out, "%s\n", r->method);

	for (size_t i = 0; i < sizeof(standard) / sizeof(standard[0]) && !rc; i++) {
		const char *v = header_value(r, standard[i]);

		if (strcmp(standard[i], "Content-Length") == 0 && strcmp(v, "0") == 0)
			v = "";
		rc = buf_printf(out, "%s\n", v);
	}
	rc = rc ? rc : append_ms_headers(r, out);
	return rc ? rc : append_resource(r, out);
}

int objstore_sharedkey_sign(const unsigned char *key, size_t key_len, const char *s, size_t n,
                            char sig[OBJSTORE_SHAREDKEY_SIG_LEN + 1])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	char *b64;

	if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)s, n, mac, &mac_len) ||
	    mac_len != 32)
		return -EIO;
	b64 = base64_encode(mac, mac_len);
	snprintf(sig, OBJSTORE_SHAREDKEY_SIG_LEN + 1, "%s", b64);
	free(b64);
	secure_zero(mac, sizeof(mac));
	return 0;
}

int objstore_sharedkey_header(const struct objstore_sharedkey_req *r, const unsigned char *key,
                              size_t key_len, struct buf *out)
{
	struct buf sts = BUF_INIT(BUF_NO_LIMIT);
	char sig[OBJSTORE_SHAREDKEY_SIG_LEN + 1];
	int rc = objstore_sharedkey_string(r, &sts);

	if (!rc)
		rc = objstore_sharedkey_sign(key, key_len, sts.data ? sts.data : "", sts.len, sig);
	if (!rc)
		rc = buf_printf(out, "Authorization: SharedKey %s:%s", r->account, sig);
	buf_release(&sts);
	return rc;
}

/*
 * objstore/sharedkey: Azure Storage "Shared Key" request signing (Blob service,
 * versions 2015-02-21 and later).
 *
 * The string to sign is the verb, eleven standard header values one per line
 * (Content-Encoding, Content-Language, Content-Length — empty rather than "0" —,
 * Content-MD5, Content-Type, Date, If-Modified-Since, If-Match, If-None-Match,
 * If-Unmodified-Since, Range), then the x-ms-* headers lower-cased, sorted, "name:value\n"
 * with the value's runs of whitespace folded to one space and its ends trimmed, then the
 * canonicalized resource "/" account path, followed by "\nname:value" for each query
 * parameter sorted by lower-cased name (values decoded). The signature is
 * base64(HMAC-SHA256(decoded account key, string to sign)). For the emulator's path-style
 * URLs the path already starts with the account, which then appears twice; that is what
 * the service expects.
 *
 *   GET /mycontainer?restype=container&comp=metadata, x-ms-date, x-ms-version
 *   → "GET\n\n\n\n\n\n\n\n\n\n\n\nx-ms-date:...\nx-ms-version:...\n/myaccount/mycontainer\n"
 *     "comp:metadata\nrestype:container"
 *
 * Pure functions; any thread. The key is borrowed and never copied.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_SHAREDKEY_H
#define REDIS_OPERATOR_OBJSTORE_SHAREDKEY_H

#include <stddef.h>

#include "lib/buf.h"
#include "lib/objstore/url.h"

#define OBJSTORE_SHAREDKEY_SIG_LEN 44 /* base64 of 32 bytes */

struct objstore_sharedkey_req {
	const char *method;
	const char *account;
	const char *path; /* the encoded URI path as sent, starting with '/' */
	const struct objstore_param *query;
	size_t n_query;
	/* Every header sent that is one of the standard eleven or an x-ms-* one (others are
	 * ignored); names in any case, each at most once. */
	const struct objstore_param *headers;
	size_t n_headers;
};

/* Appends the string to sign to out. 0, -EINVAL (too many query parameters or x-ms
 * headers) or -EMSGSIZE. */
int objstore_sharedkey_string(const struct objstore_sharedkey_req *r, struct buf *out);

/* base64(HMAC-SHA256(key, s[0..n))) into sig (OBJSTORE_SHAREDKEY_SIG_LEN + 1 bytes). */
int objstore_sharedkey_sign(const unsigned char *key, size_t key_len, const char *s, size_t n,
                            char sig[OBJSTORE_SHAREDKEY_SIG_LEN + 1]);

/* "Authorization: SharedKey account:signature" for r, appended to out (a buffer the
 * caller wipes: it is a credential for the request). */
int objstore_sharedkey_header(const struct objstore_sharedkey_req *r, const unsigned char *key,
                              size_t key_len, struct buf *out);

#endif

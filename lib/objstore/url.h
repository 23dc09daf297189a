/*
 * objstore/url: the URL pieces every object-storage request is built from.
 *
 *   objstore_url_endpoint("http://10.0.0.7:10000/devstoreaccount1/", &ep, &e)
 *       → ep.scheme "http", ep.host "10.0.0.7:10000", ep.path "/devstoreaccount1"
 *   objstore_url_encode(&b, "backups/a b.rdb", 15, true)   → "backups/a%20b.rdb"
 *   objstore_url_query(&b, {{"uploadId","x/y"},{"partNumber","3"}}, 2)
 *       → "?partNumber=3&uploadId=x%2Fy"
 *
 * Encoding is SigV4's (RFC 3986 unreserved characters kept, everything else %XX in upper
 * case), which Azure accepts as well. A query is always written sorted by name with every
 * parameter as name=value (an empty value gives "name="): that string is then both what
 * goes on the wire and SigV4's canonical query string, so a signer that takes the query
 * as it is (libcurl 7.88 does) signs the right thing.
 *
 * Keys are checked before use: 1 to OBJSTORE_KEY_MAX bytes, no leading '/', no empty,
 * "." or ".." segment (an HTTP stack may normalise those away), no control character.
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_URL_H
#define REDIS_OPERATOR_OBJSTORE_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"

#define OBJSTORE_KEY_MAX      1024 /* S3's and Azure's limit on a key / blob name */
#define OBJSTORE_ENDPOINT_MAX 512
#define OBJSTORE_QUERY_MAX    16 /* parameters in one query */

struct objstore_param {
	const char *name;  /* sent as is: callers use plain ASCII names */
	const char *value; /* decoded; NULL is the same as "" */
};

/* An endpoint URL split up; each field is a NUL-terminated copy inside the struct. */
struct objstore_endpoint {
	char scheme[8];                   /* "http" or "https" */
	char host[OBJSTORE_ENDPOINT_MAX]; /* host[:port], or [v6]:port */
	char path[OBJSTORE_ENDPOINT_MAX]; /* "" or "/seg[/seg...]", never a trailing '/' */
};

/* 0, or -EINVAL naming what is wrong (scheme, empty host, query, user info, length). */
int objstore_url_endpoint(const char *url, struct objstore_endpoint *ep, struct err *e);

/* Appends s[0..n) percent-encoded; '/' is kept when keep_slash. 0 or -EMSGSIZE. */
int objstore_url_encode(struct buf *b, const char *s, size_t n, bool keep_slash);

/* Appends "?a=1&b=2" sorted by name (nothing when n is 0). 0, -EINVAL (n too large) or
 * -EMSGSIZE. */
int objstore_url_query(struct buf *b, const struct objstore_param *p, size_t n);

/* 0, or -EINVAL with a message naming the key and the rule it breaks. */
int objstore_url_check_key(const char *key, struct err *e);

#endif

/*
 * objstore/url: endpoint parsing, percent-encoding, sorted queries, key checks (url.h).
 */
#include "url.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int copy_field(char *dst, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		return -EMSGSIZE;
	memcpy(dst, s, n);
	dst[n] = '\0';
	return 0;
}

/* An endpoint as a message may quote it: not when it could carry a credential. */
static const char *shown(const char *url)
{
	return strpbrk(url, "@?#") ? "(not shown: it has user info or a query)" : url;
}

int objstore_url_endpoint(const char *url, struct objstore_endpoint *ep, struct err *e)
{
	const char *rest, *slash;
	size_t n;

	memset(ep, 0, sizeof(*ep));
	if (!url || !url[0])
		return err_set(e, -EINVAL, "endpoint: empty");
	if (has_prefix(url, "https://"))
		rest = url + 8;
	else if (has_prefix(url, "http://"))
		rest = url + 7;
	else
		return err_set(e, -EINVAL, "endpoint %.100s: must start with http:// or https://",
		               shown(url));
	snprintf(ep->scheme, sizeof(ep->scheme), "%.*s", (int)(rest - 3 - url), url);
	if (strpbrk(url, "?#@ \t\r\n"))
		return err_set(e, -EINVAL,
		               "endpoint %.100s: no query, fragment, user info or space allowed",
		               shown(url));
	slash = strchr(rest, '/');
	n = slash ? (size_t)(slash - rest) : strlen(rest);
	if (n == 0)
		return err_set(e, -EINVAL, "endpoint %.100s: no host", url);
	if (copy_field(ep->host, sizeof(ep->host), rest, n))
		return err_set(e, -EINVAL, "endpoint: host longer than %d bytes",
		               OBJSTORE_ENDPOINT_MAX - 1);
	if (!slash)
		return 0;
	n = strlen(slash);
	while (n > 0 && slash[n - 1] == '/')
		n--;
	if (copy_field(ep->path, sizeof(ep->path), slash, n))
		return err_set(e, -EINVAL, "endpoint: path longer than %d bytes",
		               OBJSTORE_ENDPOINT_MAX - 1);
	return 0;
}

static bool is_unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.' || c == '~';
}

int objstore_url_encode(struct buf *b, const char *s, size_t n, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t before = b->len;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[3] = { '%', hex[c >> 4], hex[c & 15] };
		int rc = (is_unreserved(c) || (keep_slash && c == '/'))
		                 ? buf_append_char(b, (char)c)
		                 : buf_append(b, esc, sizeof(esc));

		if (rc) {
			b->len = before; /* all or nothing */
			if (b->data)
				b->data[before] = '\0';
			return rc;
		}
	}
	return 0;
}

int objstore_url_query(struct buf *b, const struct objstore_param *p, size_t n)
{
	const struct objstore_param *sorted[OBJSTORE_QUERY_MAX];
	int rc = 0;

	if (n > OBJSTORE_QUERY_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		sorted[i] = &p[i];
	for (size_t i = 1; i < n; i++) /* insertion sort: a handful of names */
		for (size_t j = i; j > 0 && strcmp(sorted[j - 1]->name, sorted[j]->name) > 0; j--) {
			const struct objstore_param *t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (size_t i = 0; i < n && !rc; i++) {
		const char *v = sorted[i]->value ? sorted[i]->value : "";

		rc = buf_append_char(b, i == 0 ? '?' : '&');
		if (!rc)
			rc = objstore_url_encode(b, sorted[i]->name, strlen(sorted[i]->name),
			                         false);
		if (!rc)
			rc = buf_append_char(b, '=');
		if (!rc)
			rc = objstore_url_encode(b, v, strlen(v), false);
	}
	return rc;
}

static bool bad_segment(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.');
}

int objstore_url_check_key(const char *key, struct err *e)
{
	size_t n = key ? strlen(key) : 0;
	const char *seg;

	if (n == 0)
		return err_set(e, -EINVAL, "key: empty");
	if (n > OBJSTORE_KEY_MAX)
		return err_set(e, -EINVAL, "key %.60s...: longer than %d bytes", key,
		               OBJSTORE_KEY_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
			return err_set(e, -EINVAL, "key: control character at byte %zu", i);
	for (seg = key;; seg++) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);

		if (bad_segment(seg, len))
			return err_set(e, -EINVAL,
			               "key %.200s: empty, \".\" or \"..\" path segment", key);
		if (!end)
			return 0;
		seg = end;
	}
}

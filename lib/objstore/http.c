/*
 * objstore/http: one request of an object-storage client on libcurl (internal.h).
 *
 * Every request gets a connect timeout, a low-speed limit and (but a streamed download)
 * a total timeout; redirects are not followed; only http and https are allowed. A 2xx
 * body goes to the request's sink (with its SHA-256 taken on the way) or into resp,
 * capped at OBJSTORE_PAGE_MAX; any other body is the server's error document, kept up to
 * OBJSTORE_ERR_BODY_MAX bytes (the rest is dropped, not an error) and read for its Code
 * and Message. Header lists are wiped before they are freed: one of them carries the
 * request's credential.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"
#include "lib/objstore/xml.h"

#define MESSAGE_MAX 240 /* bytes of the server's Message quoted */

void objstore_err_clear(struct objstore_err *oe)
{
	if (!oe)
		return;
	err_clear(&oe->err);
	oe->http_status = 0;
	oe->code[0] = '\0';
	oe->retryable = false;
}

void objstore_hex(const unsigned char *d, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[d[i] >> 4];
		out[2 * i + 1] = hex[d[i] & 15];
	}
	out[2 * n] = '\0';
}

void objstore_req_init(struct objstore_req *rq, const char *op, const char *what,
                       const char *method)
{
	memset(rq, 0, sizeof(*rq));
	rq->op = op;
	rq->what = what;
	rq->method = method;
	buf_init(&rq->url, OBJSTORE_URL_MAX);
	buf_init(&rq->path, OBJSTORE_URL_MAX);
	buf_init(&rq->resp, OBJSTORE_PAGE_MAX);
	buf_init(&rq->auth, BUF_NO_LIMIT);
	rq->content_length = -1;
}

static void headers_free(struct curl_slist *l)
{
	for (struct curl_slist *p = l; p; p = p->next)
		secure_zero(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

void objstore_req_release(struct objstore_req *rq)
{
	if (!rq)
		return;
	buf_release_secret(&rq->url); /* a SAS token rides in the query */
	buf_release(&rq->path);
	buf_release(&rq->resp);
	buf_release_secret(&rq->auth);
	headers_free(rq->headers);
	rq->headers = NULL;
}

void objstore_req_header(struct objstore_req *rq, const char *name, const char *value)
{
	if (rq->n_hdr == OBJSTORE_HEADERS_MAX)
		abort();
	rq->hdr[rq->n_hdr++] = (struct objstore_param){ name, value };
}

void objstore_req_param(struct objstore_req *rq, const char *name, const char *value)
{
	if (rq->n_query == OBJSTORE_QUERY_MAX)
		abort();
	rq->query[rq->n_query++] = (struct objstore_param){ name, value };
}

/* ---- the server's error codes --------------------------------------------------- */

static const struct {
	const char *code;
	int err;
} code_table[] = {
	{ "NoSuchKey", -ENOENT },
	{ "NoSuchBucket", -ENOENT },
	{ "NoSuchUpload", -ENOENT },
	{ "BlobNotFound", -ENOENT },
	{ "ContainerNotFound", -ENOENT },
	{ "ResourceNotFound", -ENOENT },
	{ "AccessDenied", -EACCES },
	{ "InvalidAccessKeyId", -EACCES },
	{ "SignatureDoesNotMatch", -EACCES },
	{ "AuthenticationFailed", -EACCES },
	{ "AuthorizationFailure", -EACCES },
	{ "ExpiredToken", -EACCES },
	{ "InvalidToken", -EACCES },
	{ "RequestTimeTooSkewed", -EACCES },
	{ "BadDigest", -EBADMSG },
	{ "InvalidDigest", -EBADMSG },
	{ "Md5Mismatch", -EBADMSG },
	{ "XAmzContentSHA256Mismatch", -EBADMSG },
	{ "EntityTooSmall", -EINVAL },
	{ "EntityTooLarge", -EFBIG },
	{ "InvalidPart", -EINVAL },
	{ "InvalidPartOrder", -EINVAL },
	{ "SlowDown", -EAGAIN },
	{ "ServerBusy", -EAGAIN },
	{ "ServiceUnavailable", -EAGAIN },
	{ "OperationTimedOut", -ETIMEDOUT },
	{ "RequestTimeout", -ETIMEDOUT },
	{ "InternalError", -EIO },
};

int objstore_code_errno(const char *code)
{
	for (size_t i = 0; code && i < sizeof(code_table) / sizeof(code_table[0]); i++)
		if (strcmp(code, code_table[i].code) == 0)
			return code_table[i].err;
	return 0;
}

static bool status_is_retryable(long status)
{
	return status >= 500 || status == 429 || status == 408;
}

/* Code and Message of the error body, or the x-ms-error-code header. */
static void read_error_body(struct objstore_req *rq, char *code, size_t code_cap, char *msg,
                            size_t msg_cap)
{
	struct objstore_xml_span doc = { rq->resp.data, rq->resp.len }, error;
	size_t pos = 0;

	code[0] = msg[0] = '\0';
	if (objstore_xml_next(doc, &pos, "Error", &error) == 0) {
		if (objstore_xml_child(error, "Code", code, code_cap))
			code[0] = '\0';
		if (objstore_xml_child(error, "Message", msg, msg_cap))
			msg[0] = '\0';
	}
	if (!code[0] && rq->ms_error[0])
		snprintf(code, code_cap, "%s", rq->ms_error);
	for (char *p = msg; *p; p++) /* one line */
		if (*p == '\r' || *p == '\n')
			*p = ' ';
}

int objstore_req_fail(struct objstore *os, struct objstore_req *rq, struct objstore_err *oe,
                      int code, const char *why)
{
	if (oe && !oe->err.code) {
		oe->http_status = rq->status;
		oe->retryable = err_is_transient(code);
	}
	return err_set(oe ? &oe->err : NULL, code, "%s %s %s: %s", os->ops->name, rq->op, rq->what,
	               why);
}

static int http_error(struct objstore *os, struct objstore_req *rq, struct objstore_err *oe)
{
	char code[64], msg[MESSAGE_MAX + 1];
	int rc;

	read_error_body(rq, code, sizeof(code), msg, sizeof(msg));
	rc = objstore_code_errno(code);
	if (!rc)
		rc = err_from_http(rq->status, NULL);
	if (rc == 0) /* a 1xx or 3xx answer: not followed */
		rc = -EPROTO;
	if (oe && !oe->err.code) {
		oe->http_status = rq->status;
		snprintf(oe->code, sizeof(oe->code), "%s", code);
		oe->retryable = status_is_retryable(rq->status) || rc == -EAGAIN;
	}
	return err_set(oe ? &oe->err : NULL, rc, "%s %s %s: %ld %s%s%s", os->ops->name, rq->op,
	               rq->what, rq->status, code[0] ? code : "(no error code)", msg[0] ? ": " : "",
	               msg);
}

/* ---- transport ------------------------------------------------------------------- */

static const struct {
	CURLcode cc;
	int code;
} curl_errors[] = {
	{ CURLE_COULDNT_CONNECT, -ECONNREFUSED },
	{ CURLE_COULDNT_RESOLVE_HOST, -EHOSTUNREACH },
	{ CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ CURLE_SEND_ERROR, -ECONNRESET },
	{ CURLE_RECV_ERROR, -ECONNRESET },
	{ CURLE_GOT_NOTHING, -ECONNRESET },
	{ CURLE_PARTIAL_FILE, -ECONNRESET },
	{ CURLE_SSL_CONNECT_ERROR, -ECONNRESET },
	{ CURLE_PEER_FAILED_VERIFICATION, -EACCES },
	{ CURLE_SSL_CACERT_BADFILE, -EINVAL },
	{ CURLE_URL_MALFORMAT, -EINVAL },
	{ CURLE_UNSUPPORTED_PROTOCOL, -EINVAL },
	{ CURLE_OUT_OF_MEMORY, -ENOMEM },
};

static int transport_error(struct objstore *os, struct objstore_req *rq, CURLcode cc,
                           struct objstore_err *oe)
{
	char why[CURL_ERROR_SIZE + 64];
	int code = -EIO;

	if (cc == CURLE_WRITE_ERROR && rq->sink_rc)
		return objstore_req_fail(os, rq, oe, rq->sink_rc, "the write callback failed");
	if (cc == CURLE_WRITE_ERROR && rq->resp_overflow)
		return objstore_req_fail(os, rq, oe, -EMSGSIZE, "answer larger than the cap");
	for (size_t i = 0; i < sizeof(curl_errors) / sizeof(curl_errors[0]); i++)
		if (curl_errors[i].cc == cc)
			code = curl_errors[i].code;
	snprintf(why, sizeof(why), "%s%s%s", curl_easy_strerror(cc), rq->errbuf[0] ? ": " : "",
	         rq->errbuf);
	return objstore_req_fail(os, rq, oe, code, why);
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct objstore_req *rq = ctx;
	size_t n = size * nmemb;
	bool ok;

	if (!rq->status)
		curl_easy_getinfo(rq->curl, CURLINFO_RESPONSE_CODE, &rq->status);
	ok = rq->status >= 200 && rq->status < 300;
	if (ok && rq->sink) {
		rq->sink_rc = rq->sink(rq->sink_ctx, p, n);
		if (rq->sink_rc)
			return 0;
		EVP_DigestUpdate(rq->sink_sha, p, n);
		rq->sink_bytes += n;
		return n;
	}
	if (!ok) { /* keep the head of an error document, drop the rest */
		size_t room = rq->resp.len < OBJSTORE_ERR_BODY_MAX
		                      ? OBJSTORE_ERR_BODY_MAX - rq->resp.len
		                      : 0;

		buf_append(&rq->resp, p, n < room ? n : room);
		return n;
	}
	if (buf_append(&rq->resp, p, n)) {
		rq->resp_overflow = true;
		return 0;
	}
	return n;
}

/* Copies the value of header "name: value\r\n" at p into out when the name matches. */
static bool header_value(const char *p, size_t n, const char *name, char *out, size_t cap)
{
	size_t k = strlen(name), v;

	if (n <= k || strncasecmp(p, name, k) != 0 || p[k] != ':')
		return false;
	for (v = k + 1; v < n && (p[v] == ' ' || p[v] == '\t'); v++)
		;
	while (n > v && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' '))
		n--;
	snprintf(out, cap, "%.*s", (int)(n - v), p + v);
	return true;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct objstore_req *rq = ctx;
	size_t n = size * nmemb;
	char len[32];

	if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) { /* a new answer (after a 100) */
		rq->etag[0] = rq->ms_error[0] = '\0';
		rq->content_length = -1;
		return n;
	}
	header_value(p, n, "etag", rq->etag, sizeof(rq->etag));
	header_value(p, n, "x-ms-error-code", rq->ms_error, sizeof(rq->ms_error));
	if (header_value(p, n, "content-length", len, sizeof(len))) {
		char *end;
		long long v = strtoll(len, &end, 10);

		rq->content_length = (*end || v < 0) ? -1 : v;
	}
	return n;
}

static void set_transfer(struct objstore *os, struct objstore_req *rq, CURL *h)
{
	curl_easy_setopt(h, CURLOPT_URL, buf_cstr(&rq->url));
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, os->user_agent);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, rq->errbuf);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, os->connect_ms);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, (long)OBJSTORE_LOW_SPEED_BYTES);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, os->low_speed_s);
	if (!rq->no_total_timeout)
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, os->timeout_ms);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	if (os->ca_file)
		curl_easy_setopt(h, CURLOPT_CAINFO, os->ca_file);
	if (strcmp(rq->method, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (strcmp(rq->method, "GET") == 0)
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	else
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->has_body) { /* the part buffer itself, not a copy */
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
	}
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, rq);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, rq);
}

static int build_headers(struct objstore_req *rq)
{
	struct buf line = BUF_INIT(BUF_NO_LIMIT);
	int rc = 0;

	for (size_t i = 0; i < rq->n_hdr && !rc; i++) {
		const char *v = rq->hdr[i].value ? rq->hdr[i].value : "";
		struct curl_slist *l;

		if (strpbrk(v, "\r\n")) { /* never a header injection */
			rc = -EINVAL;
			break;
		}
		buf_clear(&line);
		buf_printf(&line, "%s: %s", rq->hdr[i].name, v);
		l = curl_slist_append(rq->headers, buf_cstr(&line));
		if (!l)
			abort(); /* only out of memory gets here */
		rq->headers = l;
	}
	/* No 100-continue round trip; no default form content type on a POST. */
	rq->headers = curl_slist_append(rq->headers, "Expect:");
	buf_release_secret(&line);
	return rc;
}

int objstore_http_do(struct objstore *os, struct objstore_req *rq, struct objstore_err *oe)
{
	CURL *h = os->curl;
	CURLcode cc;
	int rc;

	curl_easy_reset(h);
	rq->curl = h;
	rq->status = 0;
	rq->errbuf[0] = '\0';
	buf_clear(&rq->resp);
	rc = os->ops->sign(os, rq, h, oe);
	if (rc)
		return rc;
	if (build_headers(rq))
		return objstore_req_fail(os, rq, oe, -EINVAL, "a header value has a line break");
	set_transfer(os, rq, h);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rq->status);
	if (cc != CURLE_OK)
		return transport_error(os, rq, cc, oe);
	if (rq->status < 200 || rq->status >= 300)
		return http_error(os, rq, oe);
	return 0;
}

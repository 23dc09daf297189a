/*
 * objstore/http: one request of an object-storage client on libcurl (internal.h).
 *
 * Every request gets a connect timeout, a low-speed limit and (but a streamed download)
 * a total timeout; redirects are not followed; only http and https are allowed. A 2xx
 * body goes to the request's sink (with its SHA-256 taken on the way) or into resp,
 * capped at OBJSTORE_PAGE_MAX; any other body is the server's error document, kept up to
 * OBJSTORE_ERR_BODY_MAX bytes (the rest is dropped, not an error) and read for its Code
 * and Message. A body from a file range is read by libcurl's read callback (pread, no
 * buffer of ours), rewound by its seek callback when libcurl resends it. Header lists are wiped before they are freed: one of them carries the
 * request's credential.
 */
#include "internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/httpc.h"
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

void objstore_req_release(struct objstore_req *rq)
{
	if (!rq)
		return;
	buf_release_secret(&rq->url); /* a SAS token rides in the query */
	buf_release(&rq->path);
	buf_release(&rq->resp);
	buf_release_secret(&rq->auth);
	httpc_headers_free(rq->headers);
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

void objstore_req_body(struct objstore_req *rq, const struct objstore_body *b)
{
	rq->has_body = true;
	rq->file = b->file;
	rq->body = b->file ? NULL : b->data;
	rq->body_len = b->file ? (size_t)b->file->len : b->len;
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
	{ "BlobImmutableDueToPolicy", -EPERM }, /* Azure: an immutability policy or hold */
	{ "BlobImmutableDueToLegalHold", -EPERM },
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
		rc = httpc_status_errno(rq->status, NULL, &httpc_errmap_objstore);
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

static int transport_error(struct objstore *os, struct objstore_req *rq, CURLcode cc,
                           struct objstore_err *oe)
{
	char why[CURL_ERROR_SIZE + 64];

	if (cc == CURLE_WRITE_ERROR && rq->sink_rc)
		return objstore_req_fail(os, rq, oe, rq->sink_rc, "the write callback failed");
	if (cc == CURLE_ABORTED_BY_CALLBACK && rq->file && rq->file->rc)
		return objstore_req_fail(os, rq, oe, rq->file->rc,
		                         rq->file->rc == -ECANCELED ? "cancelled while sending"
		                                                    : "reading the file failed");
	if (cc == CURLE_WRITE_ERROR && rq->resp_overflow)
		return objstore_req_fail(os, rq, oe, -EMSGSIZE, "answer larger than the cap");
	snprintf(why, sizeof(why), "%s%s%s", curl_easy_strerror(cc), rq->errbuf[0] ? ": " : "",
	         rq->errbuf);
	return objstore_req_fail(os, rq, oe, httpc_curl_errno(cc, &httpc_errmap_objstore), why);
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
		for (size_t i = 0; i < OBJSTORE_WANT_MAX; i++)
			rq->got[i][0] = '\0';
		rq->content_length = -1;
		return n;
	}
	header_value(p, n, "etag", rq->etag, sizeof(rq->etag));
	header_value(p, n, "x-ms-error-code", rq->ms_error, sizeof(rq->ms_error));
	for (size_t i = 0; i < OBJSTORE_WANT_MAX && rq->want[i]; i++)
		header_value(p, n, rq->want[i], rq->got[i], sizeof(rq->got[i]));
	if (header_value(p, n, "content-length", len, sizeof(len))) {
		char *end;
		long long v = strtoll(len, &end, 10);

		rq->content_length = (*end || v < 0) ? -1 : v;
	}
	return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct objstore_file_range *f = ctx;
	size_t want = size * nmemb;
	ssize_t n;

	if (f->cancel && atomic_load(f->cancel)) {
		f->rc = -ECANCELED;
		return CURL_READFUNC_ABORT;
	}
	if (want > f->len - f->pos)
		want = (size_t)(f->len - f->pos);
	if (want == 0)
		return 0;
	do
		n = pread(f->fd, p, want, (off_t)(f->off + f->pos));
	while (n < 0 && errno == EINTR);
	if (n <= 0) { /* an error, or the file shorter than when it was hashed */
		f->rc = n < 0 ? -errno : -EIO;
		return CURL_READFUNC_ABORT;
	}
	f->pos += (uint64_t)n;
	return (size_t)n;
}

static int on_seek(void *ctx, curl_off_t offset, int origin)
{
	struct objstore_file_range *f = ctx;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > f->len)
		return CURL_SEEKFUNC_CANTSEEK;
	f->pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

/* The body of rq read from its file range: an upload of body_len bytes. */
static void set_file_body(struct objstore_req *rq, CURL *h)
{
	rq->file->pos = 0;
	rq->file->rc = 0;
	curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(h, CURLOPT_READDATA, rq->file);
	curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
	curl_easy_setopt(h, CURLOPT_SEEKDATA, rq->file);
	curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->file->len);
}

static void set_transfer(struct objstore *os, struct objstore_req *rq, CURL *h)
{
	/* a ca_file has always been trusted beside curl's default CA directory */
	struct httpc_tls tls = { .ca_file = os->ca_file, .system_ca_dir = true };
	struct httpc_req hr = { .method = rq->method,
		                .url = buf_cstr(&rq->url),
		                .user_agent = os->user_agent,
		                .headers = rq->headers,
		                .body = rq->body,
		                .body_len = rq->body_len,
		                .has_body = rq->has_body && !rq->file,
		                .timeout_ms = rq->no_total_timeout ? 0 : os->timeout_ms,
		                .connect_timeout_ms = os->connect_ms,
		                .low_speed_bytes = OBJSTORE_LOW_SPEED_BYTES,
		                .low_speed_time_s = os->low_speed_s,
		                .tcp_keepalive = true,
		                .tls = os->ca_file ? &tls : NULL,
		                .errbuf = rq->errbuf,
		                .write_fn = on_body,
		                .write_ctx = rq,
		                .header_fn = on_header,
		                .header_ctx = rq };

	(void)httpc_setup(h, &hr);
	if (rq->file)
		set_file_body(rq, h);
}

static int build_headers(struct objstore_req *rq)
{
	struct buf line = BUF_INIT(BUF_NO_LIMIT);
	int rc = 0;

	for (size_t i = 0; i < rq->n_hdr && !rc; i++) {
		const char *v = rq->hdr[i].value ? rq->hdr[i].value : "";

		if (strpbrk(v, "\r\n")) { /* never a header injection */
			rc = -EINVAL;
			break;
		}
		buf_clear(&line);
		buf_printf(&line, "%s: %s", rq->hdr[i].name, v);
		rq->headers = httpc_headers_add(rq->headers, buf_cstr(&line));
	}
	/* No 100-continue round trip; no default form content type on a POST. */
	rq->headers = httpc_headers_add(rq->headers, "Expect:");
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
	cc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rq->status);
	if (cc != CURLE_OK)
		return transport_error(os, rq, cc, oe);
	if (rq->status < 200 || rq->status >= 300)
		return http_error(os, rq, oe);
	return 0;
}

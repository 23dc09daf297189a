/*
 * httpc: one HTTP transfer's options on libcurl, its body sink, and the errno tables
 * (see httpc.h). No state of its own but curl's one-time global initialisation.
 */
#include "httpc.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errno tables ----------------------------------------------------------------- */

/* The shared CURLcode table; absent codes are -EIO. */
static const struct httpc_code curl_table[] = {
	{ CURLE_COULDNT_CONNECT, -ECONNREFUSED },
	{ CURLE_COULDNT_RESOLVE_HOST, -EHOSTUNREACH },
	{ CURLE_COULDNT_RESOLVE_PROXY, -EHOSTUNREACH },
	{ CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ CURLE_SEND_ERROR, -ECONNRESET },
	{ CURLE_RECV_ERROR, -ECONNRESET },
	{ CURLE_GOT_NOTHING, -ECONNRESET },
	{ CURLE_SSL_CONNECT_ERROR, -ECONNRESET },
	{ CURLE_PARTIAL_FILE, -EIO },
	{ CURLE_FILESIZE_EXCEEDED, -EMSGSIZE },
	{ CURLE_PEER_FAILED_VERIFICATION, -EACCES },
	{ CURLE_SSL_CACERT_BADFILE, -EINVAL },
	{ CURLE_SSL_CERTPROBLEM, -EINVAL },
	{ CURLE_URL_MALFORMAT, -EINVAL },
	{ CURLE_UNSUPPORTED_PROTOCOL, -EINVAL },
	{ CURLE_ABORTED_BY_CALLBACK, -ECANCELED },
	{ CURLE_OUT_OF_MEMORY, -ENOMEM },
	{ CURLE_WEIRD_SERVER_REPLY, -EPROTO },
};

const struct httpc_errmap httpc_errmap_shared = { 0 };

static const struct httpc_code multi_curl[] = {
	{ CURLE_COULDNT_RESOLVE_PROXY, -EIO },
	{ CURLE_WEIRD_SERVER_REPLY, -EIO },
	{ CURLE_OUT_OF_MEMORY, -EIO },
};
const struct httpc_errmap httpc_errmap_multi = { .curl = multi_curl,
	                                         .n_curl = ARRAY_LEN(multi_curl) };

static const struct httpc_code objstore_curl[] = {
	{ CURLE_PARTIAL_FILE, -ECONNRESET },
	{ CURLE_COULDNT_RESOLVE_PROXY, -EIO },
	{ CURLE_WEIRD_SERVER_REPLY, -EIO },
};
const struct httpc_errmap httpc_errmap_objstore = { .curl = objstore_curl,
	                                            .n_curl = ARRAY_LEN(objstore_curl) };

static const struct httpc_code instclient_curl[] = {
	{ CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
	{ CURLE_COULDNT_CONNECT, -ECONNREFUSED },
};
static const struct httpc_code instclient_status[] = {
	{ 400, -EINVAL },
	{ 409, -EBUSY },
	{ 503, -EAGAIN },
	{ 504, -ETIMEDOUT },
};
const struct httpc_errmap httpc_errmap_instclient = {
	.curl = instclient_curl,
	.n_curl = ARRAY_LEN(instclient_curl),
	.status = instclient_status,
	.n_status = ARRAY_LEN(instclient_status),
	.listed_only = true,
	.only_200 = true,
};

const struct httpc_errmap httpc_errmap_peer = { .listed_only = true, .only_200 = true };

static bool lookup(const struct httpc_code *t, size_t n, long from, int *code)
{
	for (size_t i = 0; t && i < n; i++)
		if (t[i].from == from) {
			*code = t[i].code;
			return true;
		}
	return false;
}

int httpc_curl_errno(CURLcode cc, const struct httpc_errmap *m)
{
	int code = -EIO;

	if (cc == CURLE_OK)
		return 0;
	m = m ? m : &httpc_errmap_shared;
	if (lookup(m->curl, m->n_curl, (long)cc, &code) || m->listed_only)
		return code;
	lookup(curl_table, ARRAY_LEN(curl_table), (long)cc, &code);
	return code;
}

int httpc_status_errno(long status, const char *reason, const struct httpc_errmap *m)
{
	int code = -EIO;

	m = m ? m : &httpc_errmap_shared;
	if (m->only_200 ? status == 200 : (status >= 200 && status < 300))
		return 0;
	if (lookup(m->status, m->n_status, status, &code) || m->listed_only)
		return code;
	return err_from_http(status, reason);
}

/* ---- options ------------------------------------------------------------------------ */

static CURLcode set_pem_or_file(CURL *h, CURLoption blob_opt, const char *pem, CURLoption file_opt,
                                const char *file)
{
	struct curl_blob b = { .data = (void *)(uintptr_t)pem,
		               .len = pem ? strlen(pem) : 0,
		               .flags = CURL_BLOB_NOCOPY };

	if (pem)
		return curl_easy_setopt(h, blob_opt, &b);
	if (file)
		return curl_easy_setopt(h, file_opt, file);
	return CURLE_OK;
}

static CURLcode set_tls(CURL *h, const struct httpc_tls *t)
{
	CURLcode cc;

	if (t->ca_pem || t->ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, NULL); /* no default bundle beside it */
		if (!t->system_ca_dir)
			curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	cc = set_pem_or_file(h, CURLOPT_CAINFO_BLOB, t->ca_pem, CURLOPT_CAINFO, t->ca_file);
	if (!cc)
		cc = set_pem_or_file(h, CURLOPT_SSLCERT_BLOB, t->cert_pem, CURLOPT_SSLCERT,
		                     t->cert_file);
	if (!cc)
		cc = set_pem_or_file(h, CURLOPT_SSLKEY_BLOB, t->key_pem, CURLOPT_SSLKEY,
		                     t->key_file);
	curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	if (t->insecure)
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
	if (t->insecure || t->skip_host_check)
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	return cc;
}

static void set_method(CURL *h, const struct httpc_req *rq)
{
	const char *m = rq->method ? rq->method : "GET";

	if (strcmp(m, "HEAD") == 0)
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	else if (strcmp(m, "GET") == 0)
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	else if (strcmp(m, "POST") != 0 || !rq->has_body)
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, m);
	if (rq->has_body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
	}
}

static void set_timeouts(CURL *h, const struct httpc_req *rq)
{
	long connect_ms = rq->connect_timeout_ms;

	if (rq->timeout_ms > 0) {
		curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, rq->timeout_ms);
		if (connect_ms > rq->timeout_ms)
			connect_ms = rq->timeout_ms;
	}
	if (connect_ms > 0)
		curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	if (rq->low_speed_time_s > 0) {
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, rq->low_speed_bytes);
		curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, rq->low_speed_time_s);
	}
	if (rq->tcp_keepalive)
		curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	if (rq->tcp_keepalive && rq->keepidle_s > 0)
		curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, rq->keepidle_s);
	if (rq->tcp_keepalive && rq->keepintvl_s > 0)
		curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, rq->keepintvl_s);
	if (rq->no_dns_cache)
		curl_easy_setopt(h, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
}

static void set_sinks(CURL *h, const struct httpc_req *rq)
{
	if (rq->write_fn) {
		curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, rq->write_fn);
		curl_easy_setopt(h, CURLOPT_WRITEDATA, rq->write_ctx);
	}
	if (rq->max_filesize)
		curl_easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)rq->max_filesize);
	if (rq->header_fn) {
		curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, rq->header_fn);
		curl_easy_setopt(h, CURLOPT_HEADERDATA, rq->header_ctx);
	}
	if (rq->progress_fn) {
		curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, rq->progress_fn);
		curl_easy_setopt(h, CURLOPT_XFERINFODATA, rq->progress_ctx);
		curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	}
	if (rq->private_ptr)
		curl_easy_setopt(h, CURLOPT_PRIVATE, rq->private_ptr);
}

CURLcode httpc_setup(CURL *h, const struct httpc_req *rq)
{
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, rq->protocols ? rq->protocols : "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	if (rq->user_agent)
		curl_easy_setopt(h, CURLOPT_USERAGENT, rq->user_agent);
	if (rq->errbuf) {
		rq->errbuf[0] = '\0';
		curl_easy_setopt(h, CURLOPT_ERRORBUFFER, rq->errbuf);
	}
	if (rq->headers)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
	set_method(h, rq);
	set_timeouts(h, rq);
	set_sinks(h, rq);
	return rq->tls ? set_tls(h, rq->tls) : CURLE_OK;
}

/* ---- bodies and headers --------------------------------------------------------------- */

size_t httpc_body_write(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct httpc_body *b = ctx;
	size_t n = size * nmemb, room = b->buf.limit - b->buf.len;

	if (n <= room)
		return buf_append(&b->buf, ptr, n) == 0 ? n : 0;
	buf_append(&b->buf, ptr, room); /* keep what fits */
	b->overflow = true;
	return 0; /* stops the transfer */
}

struct curl_slist *httpc_headers_add(struct curl_slist *l, const char *line)
{
	struct curl_slist *n = curl_slist_append(l, line);

	if (!n)
		abort(); /* only out of memory gets here */
	return n;
}

void httpc_headers_free(struct curl_slist *l)
{
	for (struct curl_slist *p = l; p; p = p->next)
		secure_zero(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

/* ---- one blocking transfer ------------------------------------------------------------- */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

void httpc_global_init(void)
{
	pthread_once(&global_once, global_init);
}

int httpc_perform(const struct httpc_req *rq, struct httpc_body *body, long *status,
                  const struct httpc_errmap *m, struct err *e)
{
	struct httpc_req r = *rq;
	CURL *h;
	CURLcode cc;
	int rc;

	httpc_global_init();
	h = curl_easy_init();
	if (!h)
		abort(); /* only out of memory gets here */
	r.write_fn = httpc_body_write;
	r.write_ctx = body;
	*status = 0;
	cc = httpc_setup(h, &r);
	if (cc == CURLE_OK)
		cc = curl_easy_perform(h);
	if (cc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
		rc = httpc_status_errno(*status, NULL, m);
	} else {
		rc = err_set(e, httpc_curl_errno(cc, m), "%s: %s", rq->url, curl_easy_strerror(cc));
	}
	curl_easy_cleanup(h);
	return rc;
}

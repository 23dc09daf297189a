/*
 * objstore/internal: what objstore.c, http.c, s3.c and azure.c share and nobody else
 * uses: the handle, one HTTP request, and the table of a provider's operations.
 *
 * A provider builds a struct objstore_req (method, URL, path, query, headers, body or
 * sink), and objstore_http_do() signs it through the provider's sign hook, sends it on
 * the handle's easy handle, and turns a failure into an objstore_err. Header values in
 * req.hdr are borrowed: they must outlive the request.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_INTERNAL_H
#define REDIS_OPERATOR_OBJSTORE_INTERNAL_H

#include <curl/curl.h>
#include <openssl/evp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/objstore/objstore.h"
#include "lib/objstore/url.h"

#define OBJSTORE_URL_MAX       8192
#define OBJSTORE_HEADERS_MAX   12
#define OBJSTORE_UPLOAD_ID_MAX 1024
#define OBJSTORE_WANT_MAX      3 /* answer headers a request may capture */

struct objstore;

/* The state of one multipart upload / block list between begin and complete. */
struct objstore_upload {
	const char *key;
	char upload_id[OBJSTORE_UPLOAD_ID_MAX]; /* S3 only */
	struct buf manifest; /* S3: the <Part> elements; Azure: the <Latest> elements */
	unsigned parts;
};

/* A body read from a range of a file while it is sent (objstore_put_file): its digests
 * are taken by a first pass over the range, before the request is signed. */
struct objstore_file_range {
	int fd;
	uint64_t off, len;
	uint64_t pos; /* bytes of the range handed to libcurl */
	const atomic_bool *cancel;
	int rc; /* why the read callback stopped the transfer */
	char sha256[OBJSTORE_SHA256_HEX];
	char md5[25]; /* base64 */
};

/* One request body: len bytes at data, or the file range when file is set. */
struct objstore_body {
	const void *data;
	size_t len;
	struct objstore_file_range *file;
};

struct objstore_req {
	const char *op;   /* "PutObject", for messages */
	const char *what; /* the key or prefix, for messages */
	const char *method;
	struct buf url;  /* scheme://host/path?query */
	struct buf path; /* the encoded path alone (Shared Key signs it) */
	struct objstore_param query[OBJSTORE_QUERY_MAX];
	size_t n_query;
	struct objstore_param hdr[OBJSTORE_HEADERS_MAX];
	size_t n_hdr;
	const void *body; /* sent as is when has_body (may be 0 bytes) */
	size_t body_len;
	bool has_body;
	struct objstore_file_range *file; /* the body is this range instead (body_len bytes) */
	bool no_total_timeout;  /* a streamed download: only the low-speed limit applies */
	objstore_write_fn sink; /* NULL: a 2xx body is captured in resp */
	void *sink_ctx;
	EVP_MD_CTX *sink_sha;
	uint64_t sink_bytes;
	int sink_rc;
	/* the answer */
	CURL *curl;
	long status;
	struct buf resp;
	bool resp_overflow;
	char etag[128];
	char ms_error[64]; /* Azure's x-ms-error-code header */
	/* Other headers the caller wants: names set before the request, values after it
	 * ("" when absent). */
	const char *want[OBJSTORE_WANT_MAX];
	char got[OBJSTORE_WANT_MAX][64];
	int64_t content_length;
	char errbuf[CURL_ERROR_SIZE];
	struct curl_slist *headers;
	/* what the sign hook computes, kept here because headers borrow their values */
	char payload_sha[OBJSTORE_SHA256_HEX];
	char date[40];
	char content_len[24];
	struct buf auth; /* a credential: wiped */
};

/* objstore_put_stream with spool_dir (file.c): an unlinked file there, or -errno. */
int objstore_spool_open(const struct objstore *os, struct err *e);
/* Up to part_size bytes of the stream written at offset 0 of the spool fd through
 * chunk (OBJSTORE_FILE_CHUNK bytes), hashed into whole; *r the range to send, with its
 * digest; *got its length (< part_size at the stream's end). */
int objstore_spool_fill(const struct objstore *os, int fd, objstore_read_fn read, void *ctx,
                        unsigned char *chunk, EVP_MD_CTX *whole, struct objstore_file_range *r,
                        size_t *got, struct err *e);

struct objstore_ops {
	const char *name;
	/* Adds the provider's headers and authentication to rq (and options to h). */
	int (*sign)(struct objstore *os, struct objstore_req *rq, CURL *h, struct objstore_err *oe);
	int (*put_single)(struct objstore *os, const char *key, const struct objstore_body *b,
	                  struct objstore_err *oe);
	int (*begin)(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe);
	int (*part)(struct objstore *os, struct objstore_upload *u, const struct objstore_body *b,
	            struct objstore_err *oe);
	int (*complete)(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe);
	/* Best effort: 0, or why the abort failed in oe (the upload stays invisible). */
	int (*abort)(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe);
	/* rq's URL (and path) for key, with rq's query: what GET and HEAD of an object need;
	 * get_op and head_op name those two requests in errors. */
	int (*url)(struct objstore *os, struct objstore_req *rq, const char *key,
	           struct objstore_err *oe);
	const char *get_op, *head_op;
	int (*del)(struct objstore *os, const char *key, struct objstore_err *oe);
	int (*list)(struct objstore *os, const char *prefix, objstore_list_fn fn, void *ctx,
	            struct objstore_err *oe);
};

extern const struct objstore_ops objstore_s3_ops;
extern const struct objstore_ops objstore_azure_ops;

struct objstore {
	enum objstore_provider provider;
	const struct objstore_ops *ops;
	char *bucket;
	struct objstore_endpoint ep;
	bool path_style;
	char *region;
	char *sigv4; /* "aws:amz:<region>:s3" */
	char *access_key, *secret_key, *session_token;
	char *account;
	unsigned char *key;
	size_t key_len;
	char *sas;
	size_t part_size;
	char list_page[12];
	long timeout_ms, connect_ms, low_speed_s;
	char *ca_file;
	char *user_agent;
	char *spool_dir; /* put_stream's part in a file there; NULL: in memory */
	/* lock.c: the bucket's Object Lock (S3) or the container's legal hold (Azure), read
	 * once: 0 not yet, 1 on, -1 off */
	int bucket_lock;
	CURL *curl;
};

void objstore_req_init(struct objstore_req *rq, const char *op, const char *what,
                       const char *method);
void objstore_req_release(struct objstore_req *rq);
/* Appends a header (value borrowed); aborts past OBJSTORE_HEADERS_MAX (a programming
 * error, the providers add a fixed few). */
void objstore_req_header(struct objstore_req *rq, const char *name, const char *value);
void objstore_req_param(struct objstore_req *rq, const char *name, const char *value);
/* Makes b rq's body (has_body set; a file range is read while sending). */
void objstore_req_body(struct objstore_req *rq, const struct objstore_body *b);
/* Sends rq. 0 only for a 2xx answer; else the objstore_err of the failure. */
int objstore_http_do(struct objstore *os, struct objstore_req *rq, struct objstore_err *oe);
/* Records a failure of rq that is not the server's (a bad answer): -EPROTO etc. */
int objstore_req_fail(struct objstore *os, struct objstore_req *rq, struct objstore_err *oe,
                      int code, const char *why);

/* 0 when key is a usable object key, else -EINVAL with a message naming op. */
int objstore_check_key(struct objstore *os, const char *op, const char *key,
                       struct objstore_err *oe);
/* Aborts the begun upload u after the failure in oe; when the abort fails too, oe's
 * message says so ("; abort: <why>"): the incomplete upload is then left to the bucket's
 * lifecycle rule, invisible as an object either way. */
void objstore_abort_upload(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe);
/* The server's error Code → errno, 0 when the code is not known. */
int objstore_code_errno(const char *code);
/* Lower-case hex of a SHA-256 digest; out holds OBJSTORE_SHA256_HEX bytes. */
void objstore_hex(const unsigned char *d, size_t n, char *out);
/* The end of an upload: finishes and frees sha (the whole stream's SHA-256), then, when
 * the upload succeeded (ok) and res is not NULL, fills res. */
void objstore_put_done(EVP_MD_CTX *sha, bool ok, uint64_t size, unsigned parts,
                       struct objstore_put_result *res);

#endif

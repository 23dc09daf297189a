/*
 * objstore: the handle, configuration, and the provider-independent parts of the
 * transfers (objstore.h): the streamed upload over one reused part buffer, the upload of
 * a file part by part from the file itself (file.c), the streamed download with its
 * digest, and the part arithmetic. Provider requests are in s3.c and
 * azure.c, the HTTP exchange in http.c.
 *
 * Ownership: the handle owns copies of every configuration string; the credentials
 * among them are wiped when it is freed. The part buffer lives for one upload only.
 */
#include "objstore.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/httpc.h"
#include "lib/objstore/connstr.h"
#include "lib/objstore/internal.h"

#define USER_AGENT_DEFAULT "redis-operator-objstore"
#define BLOCK_ID_FMT       "objstore-%06u" /* 15 bytes: 20 base64 characters, no padding */

/* ---- part arithmetic ------------------------------------------------------------- */

uint64_t objstore_parts_for(uint64_t size, size_t part_size)
{
	if (part_size == 0)
		part_size = OBJSTORE_PART_SIZE_DEFAULT;
	return size == 0 ? 1 : (size - 1) / part_size + 1;
}

uint64_t objstore_max_object(size_t part_size)
{
	if (part_size == 0)
		part_size = OBJSTORE_PART_SIZE_DEFAULT;
	return (uint64_t)part_size * OBJSTORE_PARTS_MAX;
}

int objstore_check_part_size(size_t part_size, struct err *e)
{
	if (part_size != 0 &&
	    (part_size < OBJSTORE_PART_SIZE_MIN || part_size > OBJSTORE_PART_SIZE_MAX))
		return err_set(e, -EINVAL, "objstore: part size %zu outside [%u, %u]", part_size,
		               OBJSTORE_PART_SIZE_MIN, OBJSTORE_PART_SIZE_MAX);
	return 0;
}

void objstore_block_id(unsigned n, char out[25])
{
	char raw[32];
	int len = snprintf(raw, sizeof(raw), BLOCK_ID_FMT, n % 1000000u);
	char *id = base64_encode(raw, (size_t)len);

	snprintf(out, 25, "%s", id);
	free(id);
}

/* ---- the handle ------------------------------------------------------------------ */

static char *dup_or_null(const char *s)
{
	return s && s[0] ? xstrdup(s) : NULL;
}

__attribute__((format(printf, 2, 3))) static int cfg_fail(struct objstore_err *oe, const char *fmt,
                                                          ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(oe ? &oe->err : NULL, -EINVAL, "%s", msg);
}

static int setup_s3(struct objstore *os, const struct objstore_config *cfg, struct objstore_err *oe)
{
	char def[OBJSTORE_ENDPOINT_MAX];
	int rc;

	os->ops = &objstore_s3_ops;
	os->region = xstrdup(cfg->region && cfg->region[0] ? cfg->region : "us-east-1");
	if (strpbrk(os->region, ":/ "))
		return cfg_fail(oe, "objstore: s3 region %s: no ':', '/' or space allowed",
		                os->region);
	if (!cfg->access_key_id || !cfg->access_key_id[0] || !cfg->secret_access_key ||
	    !cfg->secret_access_key[0])
		return cfg_fail(oe, "objstore: s3 needs %s",
		                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
	snprintf(def, sizeof(def), "https://s3.%s.amazonaws.com", os->region);
	rc = objstore_url_endpoint(cfg->endpoint && cfg->endpoint[0] ? cfg->endpoint : def, &os->ep,
	                           oe ? &oe->err : NULL);
	if (rc)
		return rc;
	if (!cfg->path_style && strchr(os->bucket, '.') && strcmp(os->ep.scheme, "https") == 0)
		return cfg_fail(oe, "objstore: s3 bucket %s has a '.': use path style over https",
		                os->bucket);
	os->sigv4 = xasprintf("aws:amz:%s:s3", os->region);
	os->access_key = xstrdup(cfg->access_key_id);
	os->secret_key = xstrdup(cfg->secret_access_key);
	os->session_token = dup_or_null(cfg->session_token);
	os->path_style = cfg->path_style;
	return 0;
}

/* The Azure credentials from a connection string or the separate fields. */
static int azure_creds(const struct objstore_config *cfg, struct objstore_connstr *cs,
                       struct objstore_err *oe)
{
	struct err *e = oe ? &oe->err : NULL;

	if (cfg->connection_string && cfg->connection_string[0])
		return objstore_connstr_parse(cfg->connection_string, cs, e);
	memset(cs, 0, sizeof(*cs));
	if (cfg->account_key && cfg->account_key[0] &&
	    objstore_key_decode(cfg->account_key, OBJSTORE_AZURE_KEY_MAX, &cs->key, &cs->key_len))
		return cfg_fail(oe, "objstore: %s is not base64", "AZURE_STORAGE_KEY");
	cs->account = dup_or_null(cfg->account);
	if (cfg->sas_token && cfg->sas_token[0])
		cs->sas = xstrdup(cfg->sas_token + (cfg->sas_token[0] == '?'));
	if (!cs->key && !cs->sas)
		return cfg_fail(oe, "objstore: azure needs %s",
		                "a connection string, an account key or a SAS token");
	if (cs->key && !cs->account)
		return cfg_fail(oe, "objstore: azure needs %s with a key", "AZURE_STORAGE_ACCOUNT");
	if (!cs->account && !(cfg->endpoint && cfg->endpoint[0]))
		return cfg_fail(oe, "objstore: azure needs %s", "an account or an endpoint");
	if (cs->account)
		cs->blob_endpoint = xasprintf("https://%s.blob.core.windows.net", cs->account);
	return 0;
}

static int setup_azure(struct objstore *os, const struct objstore_config *cfg,
                       struct objstore_err *oe)
{
	struct objstore_connstr cs;
	int rc;

	os->ops = &objstore_azure_ops;
	rc = azure_creds(cfg, &cs, oe);
	if (!rc)
		rc = objstore_url_endpoint(cfg->endpoint && cfg->endpoint[0] ? cfg->endpoint
		                                                             : cs.blob_endpoint,
		                           &os->ep, oe ? &oe->err : NULL);
	if (!rc && cs.key && !cs.account)
		rc = cfg_fail(oe, "objstore: azure needs %s with a key", "the account name");
	if (!rc) {
		os->account = cs.account;
		os->key = cs.key;
		os->key_len = cs.key_len;
		os->sas = cs.sas;
		cs.account = cs.sas = NULL;
		cs.key = NULL;
	}
	objstore_connstr_release(&cs);
	return rc;
}

static int check_bucket(const char *b, struct objstore_err *oe)
{
	if (!b || !b[0])
		return cfg_fail(oe, "objstore: %s is empty", "bucket/container");
	if (strlen(b) > 63 || strpbrk(b, "/?#%& \t\r\n"))
		return cfg_fail(oe,
		                "objstore: bucket/container %.63s: at most 63 characters, no "
		                "'/', '?', '#', '%%', '&' or space",
		                b);
	return 0;
}

struct objstore *objstore_new(const struct objstore_config *cfg, struct objstore_err *oe)
{
	struct objstore *os;
	int rc;

	objstore_err_clear(oe);
	rc = check_bucket(cfg->bucket, oe);
	if (!rc)
		rc = objstore_check_part_size(cfg->part_size, oe ? &oe->err : NULL);
	if (rc)
		return NULL;
	httpc_global_init();
	os = xcalloc(1, sizeof(*os));
	os->provider = cfg->provider;
	os->bucket = xstrdup(cfg->bucket);
	os->part_size = cfg->part_size ? cfg->part_size : OBJSTORE_PART_SIZE_DEFAULT;
	os->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : OBJSTORE_TIMEOUT_MS_DEFAULT;
	os->connect_ms =
	        cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : OBJSTORE_CONNECT_MS_DEFAULT;
	os->low_speed_s =
	        cfg->low_speed_time_s > 0 ? cfg->low_speed_time_s : OBJSTORE_LOW_SPEED_S_DEFAULT;
	snprintf(os->list_page, sizeof(os->list_page), "%u",
	         cfg->list_page && cfg->list_page < 1000 ? cfg->list_page : 1000);
	os->ca_file = dup_or_null(cfg->ca_file);
	os->spool_dir = dup_or_null(cfg->spool_dir);
	os->user_agent = xstrdup(cfg->user_agent ? cfg->user_agent : USER_AGENT_DEFAULT);
	if (cfg->provider == OBJSTORE_S3)
		rc = setup_s3(os, cfg, oe);
	else if (cfg->provider == OBJSTORE_AZURE)
		rc = setup_azure(os, cfg, oe);
	else
		rc = cfg_fail(oe, "objstore: %s", "unknown provider");
	if (!rc && !(os->curl = curl_easy_init()))
		abort(); /* only out of memory gets here */
	if (rc) {
		objstore_free(os);
		return NULL;
	}
	return os;
}

void objstore_free(struct objstore *os)
{
	if (!os)
		return;
	if (os->curl)
		curl_easy_cleanup(os->curl);
	free(os->bucket);
	free(os->region);
	free(os->sigv4);
	free_secret(os->access_key);
	free_secret(os->secret_key);
	free_secret(os->session_token);
	free(os->account);
	if (os->key)
		secure_zero(os->key, os->key_len);
	free(os->key);
	free_secret(os->sas);
	free(os->ca_file);
	free(os->spool_dir);
	free(os->user_agent);
	free(os);
}

const char *objstore_provider_name(const struct objstore *os)
{
	return os->ops->name;
}

/* ---- uploads ----------------------------------------------------------------------- */

int objstore_check_key(struct objstore *os, const char *op, const char *key,
                       struct objstore_err *oe)
{
	struct err e;

	err_clear(&e);
	if (!objstore_url_check_key(key, &e))
		return 0;
	return err_set(oe ? &oe->err : NULL, e.code, "%s %s: %s", os->ops->name, op, e.msg);
}

/* Fills buf with up to cap bytes of the stream; *got is what it read (< cap at EOF). */
static int fill(objstore_read_fn read, void *ctx, unsigned char *buf, size_t cap, size_t *got,
                EVP_MD_CTX *sha, struct err *e)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = read(ctx, buf + n, cap - n, e);

		*got = n; /* what was read, also on failure */
		if (r < 0)
			return (int)r;
		if (r == 0)
			break;
		if ((size_t)r > cap - n)
			return err_set(e, -EINVAL, "the read callback returned more than asked");
		EVP_DigestUpdate(sha, buf + n, (size_t)r);
		n += (size_t)r;
	}
	*got = n;
	return 0;
}

struct upload {
	struct objstore *os;
	struct objstore_upload u;
	unsigned char *buf;               /* the part, or with a spool the chunk it goes through */
	int spool;                        /* the spool file; -1: the part is in buf */
	struct objstore_file_range range; /* the spooled part */
	EVP_MD_CTX *sha;
	uint64_t size;
	bool begun;
};

/* The next part, up to part_size bytes, into the buffer or the spool. */
static int next_part(struct upload *up, objstore_read_fn read, void *ctx, size_t *got,
                     struct err *e)
{
	if (up->spool >= 0)
		return objstore_spool_fill(up->os, up->spool, read, ctx, up->buf, up->sha,
		                           &up->range, got, e);
	return fill(read, ctx, up->buf, up->os->part_size, got, up->sha, e);
}

static struct objstore_body part_body(struct upload *up, size_t got)
{
	if (up->spool >= 0)
		return (struct objstore_body){ NULL, 0, &up->range };
	return (struct objstore_body){ up->buf, got, NULL };
}

static int read_failed(struct upload *up, int rc, struct err *why, struct objstore_err *oe)
{
	return err_set(oe ? &oe->err : NULL, rc,
	               "%s upload %s: reading the stream failed after "
	               "%" PRIu64 " bytes: %s",
	               up->os->ops->name, up->u.key, up->size,
	               why->msg[0] ? why->msg : err_name(rc));
}

/* Parts after the first: the part buffer holds part 1 (full) on entry. */
static int upload_parts(struct upload *up, size_t got, objstore_read_fn read, void *ctx,
                        struct objstore_err *oe)
{
	struct objstore *os = up->os;
	struct err why;
	int rc;

	rc = os->ops->begin(os, &up->u, oe);
	up->begun = rc == 0;
	while (rc == 0 && got > 0) {
		struct objstore_body b = part_body(up, got);

		rc = os->ops->part(os, &up->u, &b, oe);
		if (rc)
			break;
		err_clear(&why);
		rc = next_part(up, read, ctx, &got, &why);
		up->size += got;
		if (rc)
			return read_failed(up, rc, &why, oe);
		if (got > 0 && up->u.parts == OBJSTORE_PARTS_MAX)
			return err_set(oe ? &oe->err : NULL, -EFBIG,
			               "%s upload %s: longer than %u parts of %zu bytes",
			               os->ops->name, up->u.key, OBJSTORE_PARTS_MAX, os->part_size);
	}
	if (!rc)
		rc = os->ops->complete(os, &up->u, oe);
	return rc;
}

int objstore_put_stream(struct objstore *os, const char *key, objstore_read_fn read, void *ctx,
                        struct objstore_put_result *res, struct objstore_err *oe)
{
	struct upload up = { .os = os, .spool = -1 };
	struct err why;
	size_t got = 0;
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "upload", key, oe)) != 0)
		return rc;
	up.u.key = key;
	buf_init(&up.u.manifest, OBJSTORE_PAGE_MAX);
	if (os->spool_dir && (up.spool = objstore_spool_open(os, oe ? &oe->err : NULL)) < 0)
		return up.spool;
	up.buf = xmalloc(up.spool >= 0 ? OBJSTORE_FILE_CHUNK : os->part_size);
	up.sha = EVP_MD_CTX_new();
	if (!up.sha || !EVP_DigestInit_ex(up.sha, EVP_sha256(), NULL))
		abort();
	err_clear(&why);
	rc = next_part(&up, read, ctx, &got, &why);
	up.size = got;
	if (rc)
		rc = read_failed(&up, rc, &why, oe);
	if (!rc && got < os->part_size) {
		struct objstore_body b = part_body(&up, got);

		rc = os->ops->put_single(os, key, &b, oe);
		up.u.parts = 1;
	} else if (!rc) {
		rc = upload_parts(&up, got, read, ctx, oe);
	}
	if (rc && up.begun)
		objstore_abort_upload(os, &up.u, oe);
	objstore_put_done(up.sha, !rc, up.size, up.u.parts, res);
	free(up.buf);
	if (up.spool >= 0)
		close(up.spool);
	buf_release(&up.u.manifest);
	return rc;
}

void objstore_put_done(EVP_MD_CTX *sha, bool ok, uint64_t size, unsigned parts,
                       struct objstore_put_result *res)
{
	unsigned char digest[32];

	EVP_DigestFinal_ex(sha, digest, NULL);
	EVP_MD_CTX_free(sha);
	if (!ok || !res)
		return;
	res->size = size;
	res->parts = parts;
	objstore_hex(digest, sizeof(digest), res->sha256);
}

void objstore_abort_upload(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	struct objstore_err ae;
	size_t n;

	objstore_err_clear(&ae);
	if (os->ops->abort(os, u, &ae) == 0 || !oe)
		return;
	n = strlen(oe->err.msg);
	snprintf(oe->err.msg + n, sizeof(oe->err.msg) - n, "; abort: %s", ae.err.msg);
}

int objstore_put_small(struct objstore *os, const char *key, const void *data, size_t len,
                       struct objstore_err *oe)
{
	struct objstore_body b = { data, len, NULL };
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "put", key, oe)) != 0)
		return rc;
	if (len > OBJSTORE_SMALL_MAX)
		return err_set(oe ? &oe->err : NULL, -EMSGSIZE,
		               "%s put %s: %zu bytes, more than %u", os->ops->name, key, len,
		               OBJSTORE_SMALL_MAX);
	return os->ops->put_single(os, key, &b, oe);
}

/* ---- the rest ---------------------------------------------------------------------- */

int objstore_get_stream(struct objstore *os, const char *key, objstore_write_fn write, void *ctx,
                        struct objstore_get_result *res, struct objstore_err *oe)
{
	struct objstore_req rq;
	unsigned char digest[32];
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "get", key, oe)) != 0)
		return rc;
	objstore_req_init(&rq, "get", key, "GET");
	rq.sink = write;
	rq.sink_ctx = ctx;
	rq.no_total_timeout = true;
	rq.sink_sha = EVP_MD_CTX_new();
	if (!rq.sink_sha || !EVP_DigestInit_ex(rq.sink_sha, EVP_sha256(), NULL))
		abort();
	rq.op = os->ops->get_op;
	rc = os->ops->url(os, &rq, key, oe) ? -EINVAL : objstore_http_do(os, &rq, oe);
	EVP_DigestFinal_ex(rq.sink_sha, digest, NULL);
	if (!rc && rq.content_length >= 0 && (uint64_t)rq.content_length != rq.sink_bytes)
		rc = objstore_req_fail(os, &rq, oe, -EPROTO,
		                       "body shorter than its Content-Length");
	if (!rc && res) {
		res->size = rq.sink_bytes;
		objstore_hex(digest, sizeof(digest), res->sha256);
	}
	EVP_MD_CTX_free(rq.sink_sha);
	objstore_req_release(&rq);
	return rc;
}

int objstore_head(struct objstore *os, const char *key, struct objstore_info *info,
                  struct objstore_err *oe)
{
	struct objstore_req rq;
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "head", key, oe)) != 0)
		return rc;
	objstore_req_init(&rq, os->ops->head_op, key, "HEAD");
	rc = os->ops->url(os, &rq, key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	if (!rc && rq.content_length < 0)
		rc = objstore_req_fail(os, &rq, oe, -EPROTO, "no Content-Length in the answer");
	if (!rc && info) {
		info->size = (uint64_t)rq.content_length;
		snprintf(info->etag, sizeof(info->etag), "%s", rq.etag);
	}
	objstore_req_release(&rq);
	return rc;
}

int objstore_delete(struct objstore *os, const char *key, struct objstore_err *oe)
{
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "delete", key, oe)) != 0)
		return rc;
	return os->ops->del(os, key, oe);
}

int objstore_list(struct objstore *os, const char *prefix, objstore_list_fn fn, void *ctx,
                  struct objstore_err *oe)
{
	objstore_err_clear(oe);
	if (!prefix)
		prefix = "";
	if (strlen(prefix) > OBJSTORE_KEY_MAX)
		return err_set(oe ? &oe->err : NULL, -EINVAL,
		               "%s list: prefix longer than %d bytes", os->ops->name,
		               OBJSTORE_KEY_MAX);
	return os->ops->list(os, prefix, fn, ctx, oe);
}

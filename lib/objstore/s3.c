/*
 * objstore/s3: the S3 operations (objstore.h) on the request core of http.c.
 *
 * Signing is libcurl's CURLOPT_AWS_SIGV4 ("aws:amz:<region>:s3") with the access key and
 * secret as user name and password. libcurl 7.88 signs the path and the query exactly as
 * given, so URLs are built canonical: the key encoded once by SigV4's rules and the query
 * sorted with every parameter as name=value (url.h). Every request carries
 * x-amz-content-sha256 with the real SHA-256 of its body (a body in memory: a part, a
 * manifest, an XML document, or nothing; or a file range, hashed by a first pass before
 * it is sent), so the server checks each part's bytes, and libcurl takes that value as
 * the payload hash rather than hash the body itself.
 * The empty body's hash is e3b0c442...b855.
 */
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/objstore/xml.h"

static void sha256_hex(const void *p, size_t n, char out[OBJSTORE_SHA256_HEX])
{
	unsigned char d[32];

	EVP_Digest(p ? p : "", n, d, NULL, EVP_sha256(), NULL);
	objstore_hex(d, sizeof(d), out);
}

static int s3_sign(struct objstore *os, struct objstore_req *rq, CURL *h, struct objstore_err *oe)
{
	(void)oe;
	if (rq->file)
		memcpy(rq->payload_sha, rq->file->sha256, sizeof(rq->payload_sha));
	else
		sha256_hex(rq->body, rq->has_body ? rq->body_len : 0, rq->payload_sha);
	objstore_req_header(rq, "x-amz-content-sha256", rq->payload_sha);
	if (os->session_token)
		objstore_req_header(rq, "x-amz-security-token", os->session_token);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, os->sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, os->access_key);
	curl_easy_setopt(h, CURLOPT_PASSWORD, os->secret_key);
	return 0;
}

/* URL of key (NULL: the bucket) with rq's query: path or virtual-hosted style. */
static int s3_url(struct objstore *os, struct objstore_req *rq, const char *key,
                  struct objstore_err *oe)
{
	struct buf *u = &rq->url;
	int rc;

	if (os->path_style)
		rc = buf_printf(u, "%s://%s%s/%s", os->ep.scheme, os->ep.host, os->ep.path,
		                os->bucket);
	else
		rc = buf_printf(u, "%s://%s.%s%s", os->ep.scheme, os->bucket, os->ep.host,
		                os->ep.path);
	if (!rc && (key || !os->path_style))
		rc = buf_append_char(u, '/');
	if (!rc && key)
		rc = objstore_url_encode(u, key, strlen(key), true);
	if (!rc)
		rc = objstore_url_query(u, rq->query, rq->n_query);
	return rc ? objstore_req_fail(os, rq, oe, -EINVAL, "URL too long") : 0;
}

static int s3_put_single(struct objstore *os, const char *key, const struct objstore_body *b,
                         struct objstore_err *oe)
{
	struct objstore_req rq;
	int rc;

	objstore_req_init(&rq, "PutObject", key, "PUT");
	objstore_req_body(&rq, b);
	objstore_req_header(&rq, "Content-Type", "application/octet-stream");
	rc = s3_url(os, &rq, key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	objstore_req_release(&rq);
	return rc;
}

static int s3_begin(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	struct objstore_req rq;
	struct objstore_xml_span doc;
	int rc;

	objstore_req_init(&rq, "CreateMultipartUpload", u->key, "POST");
	rq.has_body = true; /* an empty one */
	objstore_req_param(&rq, "uploads", "");
	objstore_req_header(&rq, "Content-Type", "application/octet-stream");
	rc = s3_url(os, &rq, u->key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	doc = (struct objstore_xml_span){ rq.resp.data, rq.resp.len };
	if (!rc && (objstore_xml_child(doc, "UploadId", u->upload_id, sizeof(u->upload_id)) ||
	            !u->upload_id[0]))
		rc = objstore_req_fail(os, &rq, oe, -EPROTO, "no UploadId in the answer");
	objstore_req_release(&rq);
	return rc;
}

static int s3_part(struct objstore *os, struct objstore_upload *u, const struct objstore_body *b,
                   struct objstore_err *oe)
{
	struct objstore_req rq;
	char num[16];
	int rc;

	snprintf(num, sizeof(num), "%u", u->parts + 1);
	objstore_req_init(&rq, "UploadPart", u->key, "PUT");
	objstore_req_body(&rq, b);
	objstore_req_param(&rq, "partNumber", num);
	objstore_req_param(&rq, "uploadId", u->upload_id);
	objstore_req_header(&rq, "Content-Type", "application/octet-stream");
	rc = s3_url(os, &rq, u->key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	if (!rc && (!rq.etag[0] || strpbrk(rq.etag, "<>&")))
		rc = objstore_req_fail(os, &rq, oe, -EPROTO, "no usable ETag in the answer");
	if (!rc &&
	    buf_printf(&u->manifest, "<Part><PartNumber>%s</PartNumber><ETag>%s</ETag></Part>", num,
	               rq.etag))
		rc = objstore_req_fail(os, &rq, oe, -EMSGSIZE, "part list too long");
	if (!rc)
		u->parts++;
	objstore_req_release(&rq);
	return rc;
}

static int s3_complete(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	struct buf body = BUF_INIT(BUF_NO_LIMIT);
	struct objstore_req rq;
	struct objstore_xml_span doc, error;
	size_t pos = 0;
	int rc;

	buf_printf(&body, "<CompleteMultipartUpload>%s</CompleteMultipartUpload>",
	           buf_cstr(&u->manifest));
	objstore_req_init(&rq, "CompleteMultipartUpload", u->key, "POST");
	rq.body = body.data;
	rq.body_len = body.len;
	rq.has_body = true;
	objstore_req_param(&rq, "uploadId", u->upload_id);
	objstore_req_header(&rq, "Content-Type", "application/xml");
	rc = s3_url(os, &rq, u->key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	/* S3 may answer 200 and then an <Error> once it has sent its headers. */
	doc = (struct objstore_xml_span){ rq.resp.data, rq.resp.len };
	if (!rc && objstore_xml_next(doc, &pos, "Error", &error) == 0) {
		rq.status = 500;
		rc = objstore_req_fail(os, &rq, oe, -EIO, "200 followed by an Error document");
	}
	objstore_req_release(&rq);
	buf_release(&body);
	return rc;
}

/* Best effort: a failure here leaves an upload that a bucket lifecycle rule, or the
 * next backup's objstore_list_uploads, removes; the object never appears either way. */
static int s3_abort(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	if (!u->upload_id[0])
		return 0;
	return objstore_abort_multipart(os, u->key, u->upload_id, oe);
}

static int s3_del(struct objstore *os, const char *key, struct objstore_err *oe)
{
	struct objstore_req rq;
	int rc;

	objstore_req_init(&rq, "DeleteObject", key, "DELETE");
	rc = s3_url(os, &rq, key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	objstore_req_release(&rq);
	return rc;
}

/* Each <Contents> of a page to fn. */
static int s3_list_entries(struct objstore *os, struct objstore_req *rq, objstore_list_fn fn,
                           void *ctx, struct objstore_err *oe)
{
	struct objstore_xml_span doc = { rq->resp.data, rq->resp.len }, item;
	char key[OBJSTORE_KEY_MAX + 1], size[32], etag[128], mod[64];
	size_t pos = 0;
	int rc;

	while ((rc = objstore_xml_next(doc, &pos, "Contents", &item)) == 0) {
		struct objstore_entry e = { key, 0, etag, mod };
		char *end;

		if (objstore_xml_child(item, "Key", key, sizeof(key)) ||
		    objstore_xml_child(item, "Size", size, sizeof(size)))
			return objstore_req_fail(os, rq, oe, -EPROTO,
			                         "a Contents without Key or Size");
		e.size = strtoull(size, &end, 10);
		if (*end || !size[0])
			return objstore_req_fail(os, rq, oe, -EPROTO,
			                         "a Size that is not a number");
		if (objstore_xml_child(item, "ETag", etag, sizeof(etag)))
			etag[0] = '\0';
		if (objstore_xml_child(item, "LastModified", mod, sizeof(mod)))
			mod[0] = '\0';
		if ((rc = fn(ctx, &e)) != 0)
			return rc;
	}
	return rc == -ENOENT ? 0 : objstore_req_fail(os, rq, oe, rc, "malformed list XML");
}

/* The next page's token into token ("" for the last page). */
static int s3_list_next(struct objstore *os, struct objstore_req *rq, char *token, size_t cap,
                        struct objstore_err *oe)
{
	struct objstore_xml_span doc = { rq->resp.data, rq->resp.len };
	char truncated[8];

	token[0] = '\0';
	if (objstore_xml_child(doc, "IsTruncated", truncated, sizeof(truncated)) ||
	    strcmp(truncated, "true") != 0)
		return 0;
	if (objstore_xml_child(doc, "NextContinuationToken", token, cap) || !token[0])
		return objstore_req_fail(os, rq, oe, -EPROTO,
		                         "IsTruncated without a NextContinuationToken");
	return 0;
}

static int s3_list(struct objstore *os, const char *prefix, objstore_list_fn fn, void *ctx,
                   struct objstore_err *oe)
{
	char token[OBJSTORE_UPLOAD_ID_MAX] = "";
	int rc = 0;

	for (unsigned page = 0; rc == 0; page++) {
		struct objstore_req rq;

		if (page == OBJSTORE_LIST_PAGES_MAX)
			return err_set(oe ? &oe->err : NULL, -EMSGSIZE,
			               "s3 ListObjectsV2 %s: more than %u pages", prefix,
			               OBJSTORE_LIST_PAGES_MAX);
		objstore_req_init(&rq, "ListObjectsV2", prefix[0] ? prefix : "(all keys)", "GET");
		objstore_req_param(&rq, "list-type", "2");
		objstore_req_param(&rq, "max-keys", os->list_page);
		objstore_req_param(&rq, "prefix", prefix);
		if (token[0])
			objstore_req_param(&rq, "continuation-token", token);
		rc = s3_url(os, &rq, NULL, oe);
		if (!rc)
			rc = objstore_http_do(os, &rq, oe);
		if (!rc)
			rc = s3_list_entries(os, &rq, fn, ctx, oe);
		if (!rc)
			rc = s3_list_next(os, &rq, token, sizeof(token), oe);
		objstore_req_release(&rq);
		if (!rc && !token[0])
			break;
	}
	return rc;
}

const struct objstore_ops objstore_s3_ops = {
	.name = "s3",
	.sign = s3_sign,
	.put_single = s3_put_single,
	.begin = s3_begin,
	.part = s3_part,
	.complete = s3_complete,
	.abort = s3_abort,
	.url = s3_url,
	.get_op = "GetObject",
	.head_op = "HeadObject",
	.del = s3_del,
	.list = s3_list,
};

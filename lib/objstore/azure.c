/*
 * objstore/azure: the Azure Blob operations (objstore.h) on the request core of http.c.
 *
 * URLs are <endpoint>/<container>/<blob>, which covers both the service's
 * https://<account>.blob.core.windows.net and the emulator's http://host:port/<account>.
 * With an account key every request is signed with Shared Key (sharedkey.h) over the
 * headers actually sent; with a SAS token the token is appended to the query instead.
 * A stream longer than one part becomes blocks (Put Block, ids from objstore_block_id)
 * committed by one Put Block List: blocks that are never committed are never visible.
 * Each body carries Content-MD5, which the service checks.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/objstore/sharedkey.h"
#include "lib/objstore/xml.h"

#define AZURE_VERSION "2020-10-02"
#define MARKER_MAX    1024

static void http_date(char *out, size_t cap)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(out, cap, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

static int az_sign(struct objstore *os, struct objstore_req *rq, CURL *h, struct objstore_err *oe)
{
	struct objstore_sharedkey_req sk;

	(void)h;
	http_date(rq->date, sizeof(rq->date));
	objstore_req_header(rq, "x-ms-date", rq->date);
	objstore_req_header(rq, "x-ms-version", AZURE_VERSION);
	if (!os->key)
		return 0; /* SAS: the token is in the URL */
	snprintf(rq->content_len, sizeof(rq->content_len), "%zu", rq->has_body ? rq->body_len : 0);
	sk = (struct objstore_sharedkey_req){
		.method = rq->method,
		.account = os->account,
		.path = buf_cstr(&rq->path),
		.query = rq->query,
		.n_query = rq->n_query,
		.headers = rq->hdr,
		.n_headers = rq->n_hdr,
	};
	/* Content-Length is what libcurl sends for a body; it is signed, not added. */
	if (rq->has_body) {
		struct objstore_param all[OBJSTORE_HEADERS_MAX + 1];

		memcpy(all, rq->hdr, rq->n_hdr * sizeof(all[0]));
		all[rq->n_hdr] = (struct objstore_param){ "Content-Length", rq->content_len };
		sk.headers = all;
		sk.n_headers = rq->n_hdr + 1;
		if (objstore_sharedkey_header(&sk, os->key, os->key_len, &rq->auth))
			return objstore_req_fail(os, rq, oe, -EINVAL, "cannot sign the request");
	} else if (objstore_sharedkey_header(&sk, os->key, os->key_len, &rq->auth)) {
		return objstore_req_fail(os, rq, oe, -EINVAL, "cannot sign the request");
	}
	/* rq->auth is "Authorization: SharedKey ..."; the header value starts after ": ". */
	objstore_req_header(rq, "Authorization", buf_cstr(&rq->auth) + strlen("Authorization: "));
	return 0;
}

/* rq->path and rq->url for blob key (NULL: the container), with the query and any SAS. */
static int az_url(struct objstore *os, struct objstore_req *rq, const char *key,
                  struct objstore_err *oe)
{
	int rc = buf_printf(&rq->path, "%s/%s", os->ep.path, os->bucket);

	if (!rc && key)
		rc = buf_append_char(&rq->path, '/');
	if (!rc && key)
		rc = objstore_url_encode(&rq->path, key, strlen(key), true);
	if (!rc)
		rc = buf_printf(&rq->url, "%s://%s%s", os->ep.scheme, os->ep.host,
		                buf_cstr(&rq->path));
	if (!rc)
		rc = objstore_url_query(&rq->url, rq->query, rq->n_query);
	if (!rc && os->sas)
		rc = buf_printf(&rq->url, "%c%s", rq->n_query ? '&' : '?', os->sas);
	return rc ? objstore_req_fail(os, rq, oe, -EINVAL, "URL too long") : 0;
}

static void md5_base64(const void *p, size_t n, char out[25])
{
	unsigned char d[16];

	char *b64;

	EVP_Digest(p ? p : "", n, d, NULL, EVP_md5(), NULL);
	b64 = base64_encode(d, sizeof(d));
	snprintf(out, 25, "%s", b64);
	free(b64);
}

/* A PUT of body to key with the given query parameter pairs; 201 expected. */
static int az_put(struct objstore *os, const char *op, const char *key,
                  const struct objstore_body *b, const struct objstore_param *q, size_t nq,
                  bool blob, struct objstore_err *oe)
{
	struct objstore_req rq;
	char md5[25];
	int rc;

	objstore_req_init(&rq, op, key, "PUT");
	objstore_req_body(&rq, b);
	for (size_t i = 0; i < nq; i++)
		objstore_req_param(&rq, q[i].name, q[i].value);
	if (b->file)
		memcpy(md5, b->file->md5, sizeof(md5));
	else
		md5_base64(b->data, b->len, md5);
	objstore_req_header(&rq, "Content-MD5", md5);
	objstore_req_header(&rq, "Content-Type",
	                    blob ? "application/octet-stream" : "application/xml");
	if (blob)
		objstore_req_header(&rq, "x-ms-blob-type", "BlockBlob");
	else
		objstore_req_header(&rq, "x-ms-blob-content-type", "application/octet-stream");
	rc = az_url(os, &rq, key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	objstore_req_release(&rq);
	return rc;
}

static int az_put_single(struct objstore *os, const char *key, const struct objstore_body *b,
                         struct objstore_err *oe)
{
	return az_put(os, "PutBlob", key, b, NULL, 0, true, oe);
}

static int az_begin(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	(void)os, (void)u, (void)oe;
	return 0; /* blocks need no upload id */
}

static int az_part(struct objstore *os, struct objstore_upload *u, const struct objstore_body *b,
                   struct objstore_err *oe)
{
	char id[25];
	const struct objstore_param q[] = { { "comp", "block" }, { "blockid", id } };
	struct objstore_req dummy;
	int rc;

	objstore_block_id(u->parts + 1, id);
	rc = az_put(os, "PutBlock", u->key, b, q, 2, false, oe);
	if (!rc && buf_printf(&u->manifest, "<Latest>%s</Latest>", id)) {
		objstore_req_init(&dummy, "PutBlock", u->key, "PUT");
		rc = objstore_req_fail(os, &dummy, oe, -EMSGSIZE, "block list too long");
		objstore_req_release(&dummy);
	}
	if (!rc)
		u->parts++;
	return rc;
}

static int az_complete(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	struct buf body = BUF_INIT(BUF_NO_LIMIT);
	const struct objstore_param q[] = { { "comp", "blocklist" } };
	struct objstore_body b;
	int rc;

	buf_printf(&body, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>%s</BlockList>",
	           buf_cstr(&u->manifest));
	b = (struct objstore_body){ body.data, body.len, NULL };
	rc = az_put(os, "PutBlockList", u->key, &b, q, 1, false, oe);
	buf_release(&body);
	return rc;
}

static int az_abort(struct objstore *os, struct objstore_upload *u, struct objstore_err *oe)
{
	(void)os, (void)u, (void)oe; /* the service garbage-collects uncommitted blocks */
	return 0;
}

static int az_del(struct objstore *os, const char *key, struct objstore_err *oe)
{
	struct objstore_req rq;
	struct objstore_err mine;
	int rc;

	objstore_err_clear(&mine);
	objstore_req_init(&rq, "DeleteBlob", key, "DELETE");
	rc = az_url(os, &rq, key, &mine);
	if (!rc)
		rc = objstore_http_do(os, &rq, &mine);
	objstore_req_release(&rq);
	if (rc == -ENOENT && strcmp(mine.code, "BlobNotFound") == 0)
		return 0; /* already gone: delete is idempotent */
	if (rc && oe && !oe->err.code)
		*oe = mine;
	return rc;
}

static int az_list_entries(struct objstore *os, struct objstore_req *rq, objstore_list_fn fn,
                           void *ctx, struct objstore_err *oe)
{
	struct objstore_xml_span doc = { rq->resp.data, rq->resp.len }, item, props;
	char key[OBJSTORE_KEY_MAX + 1], size[32], etag[128], mod[64];
	size_t pos = 0, ppos;
	int rc;

	while ((rc = objstore_xml_next(doc, &pos, "Blob", &item)) == 0) {
		struct objstore_entry e = { key, 0, etag, mod };
		char *end;

		ppos = 0;
		if (objstore_xml_child(item, "Name", key, sizeof(key)) ||
		    objstore_xml_next(item, &ppos, "Properties", &props) ||
		    objstore_xml_child(props, "Content-Length", size, sizeof(size)))
			return objstore_req_fail(os, rq, oe, -EPROTO,
			                         "a Blob without Name or Content-Length");
		e.size = strtoull(size, &end, 10);
		if (*end || !size[0])
			return objstore_req_fail(os, rq, oe, -EPROTO,
			                         "a Content-Length that is not a number");
		if (objstore_xml_child(props, "Etag", etag, sizeof(etag)))
			etag[0] = '\0';
		if (objstore_xml_child(props, "Last-Modified", mod, sizeof(mod)))
			mod[0] = '\0';
		if ((rc = fn(ctx, &e)) != 0)
			return rc;
	}
	return rc == -ENOENT ? 0 : objstore_req_fail(os, rq, oe, rc, "malformed list XML");
}

static int az_list(struct objstore *os, const char *prefix, objstore_list_fn fn, void *ctx,
                   struct objstore_err *oe)
{
	char marker[MARKER_MAX] = "";
	int rc = 0;

	for (unsigned page = 0; rc == 0; page++) {
		struct objstore_req rq;
		struct objstore_xml_span doc;
		int m;

		if (page == OBJSTORE_LIST_PAGES_MAX)
			return err_set(oe ? &oe->err : NULL, -EMSGSIZE,
			               "azure ListBlobs %s: more than %u pages", prefix,
			               OBJSTORE_LIST_PAGES_MAX);
		objstore_req_init(&rq, "ListBlobs", prefix[0] ? prefix : "(all keys)", "GET");
		objstore_req_param(&rq, "restype", "container");
		objstore_req_param(&rq, "comp", "list");
		objstore_req_param(&rq, "maxresults", os->list_page);
		if (prefix[0])
			objstore_req_param(&rq, "prefix", prefix);
		if (marker[0])
			objstore_req_param(&rq, "marker", marker);
		rc = az_url(os, &rq, NULL, oe);
		if (!rc)
			rc = objstore_http_do(os, &rq, oe);
		if (!rc)
			rc = az_list_entries(os, &rq, fn, ctx, oe);
		doc = (struct objstore_xml_span){ rq.resp.data, rq.resp.len };
		m = rc ? 0 : objstore_xml_child(doc, "NextMarker", marker, sizeof(marker));
		if (m == -ENOENT)
			marker[0] = '\0';
		else if (m)
			rc = objstore_req_fail(os, &rq, oe, -EPROTO, "malformed NextMarker");
		objstore_req_release(&rq);
		if (!rc && !marker[0])
			break;
	}
	return rc;
}

const struct objstore_ops objstore_azure_ops = {
	.name = "azure",
	.sign = az_sign,
	.put_single = az_put_single,
	.begin = az_begin,
	.part = az_part,
	.complete = az_complete,
	.abort = az_abort,
	.url = az_url,
	.get_op = "GetBlob",
	.head_op = "GetBlobProperties",
	.del = az_del,
	.list = az_list,
};

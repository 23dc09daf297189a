/*
 * objstore/uploads: the incomplete S3 multipart uploads of objstore.h
 * (objstore_list_uploads: ListMultipartUploads, page after page with key-marker and
 * upload-id-marker) and their abort (AbortMultipartUpload). An upload whose abort failed,
 * or whose process was killed, is invisible as an object but keeps its parts; these let
 * a caller that knows which uploads are its own and dead find and abort them. Azure has
 * nothing of the kind (uncommitted blocks are never listed; the service drops them).
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/objstore/xml.h"

/* Each <Upload> of a page to fn. */
static int upload_entries(struct objstore *os, struct objstore_req *rq, objstore_upload_fn fn,
                          void *ctx, struct objstore_err *oe)
{
	struct objstore_xml_span doc = { rq->resp.data, rq->resp.len }, item;
	char key[OBJSTORE_KEY_MAX + 1], id[OBJSTORE_UPLOAD_ID_MAX], when[64];
	size_t pos = 0;
	int rc;

	while ((rc = objstore_xml_next(doc, &pos, "Upload", &item)) == 0) {
		struct objstore_upload_entry u = { key, id, when };

		if (objstore_xml_child(item, "Key", key, sizeof(key)) ||
		    objstore_xml_child(item, "UploadId", id, sizeof(id)) || !id[0])
			return objstore_req_fail(os, rq, oe, -EPROTO,
			                         "an Upload without Key or UploadId");
		if (objstore_xml_child(item, "Initiated", when, sizeof(when)))
			when[0] = '\0';
		if ((rc = fn(ctx, &u)) != 0)
			return rc;
	}
	return rc == -ENOENT ? 0 : objstore_req_fail(os, rq, oe, rc, "malformed list XML");
}

/* The next page's markers ("" for the last page). */
static int upload_next(struct objstore *os, struct objstore_req *rq, char *key, size_t kcap,
                       char *id, size_t icap, struct objstore_err *oe)
{
	struct objstore_xml_span doc = { rq->resp.data, rq->resp.len };
	char truncated[8];

	key[0] = id[0] = '\0';
	if (objstore_xml_child(doc, "IsTruncated", truncated, sizeof(truncated)) ||
	    strcmp(truncated, "true") != 0)
		return 0;
	if (objstore_xml_child(doc, "NextKeyMarker", key, kcap) || !key[0])
		return objstore_req_fail(os, rq, oe, -EPROTO, "IsTruncated without NextKeyMarker");
	if (objstore_xml_child(doc, "NextUploadIdMarker", id, icap))
		id[0] = '\0';
	return 0;
}

static int s3_uploads_page(struct objstore *os, const char *prefix, char *key, size_t kcap,
                           char *id, size_t icap, objstore_upload_fn fn, void *ctx,
                           struct objstore_err *oe)
{
	struct objstore_req rq;
	char k[OBJSTORE_KEY_MAX + 1], i[OBJSTORE_UPLOAD_ID_MAX];
	int rc;

	snprintf(k, sizeof(k), "%s", key);
	snprintf(i, sizeof(i), "%s", id);
	objstore_req_init(&rq, "ListMultipartUploads", prefix[0] ? prefix : "(all keys)", "GET");
	objstore_req_param(&rq, "uploads", "");
	objstore_req_param(&rq, "max-uploads", os->list_page);
	objstore_req_param(&rq, "prefix", prefix);
	if (k[0])
		objstore_req_param(&rq, "key-marker", k);
	if (i[0])
		objstore_req_param(&rq, "upload-id-marker", i);
	rc = os->ops->url(os, &rq, NULL, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	if (!rc)
		rc = upload_entries(os, &rq, fn, ctx, oe);
	if (!rc)
		rc = upload_next(os, &rq, key, kcap, id, icap, oe);
	objstore_req_release(&rq);
	return rc;
}

int objstore_list_uploads(struct objstore *os, const char *prefix, objstore_upload_fn fn, void *ctx,
                          struct objstore_err *oe)
{
	char key[OBJSTORE_KEY_MAX + 1] = "", id[OBJSTORE_UPLOAD_ID_MAX] = "";
	int rc = 0;

	objstore_err_clear(oe);
	if (!prefix)
		prefix = "";
	if (strlen(prefix) > OBJSTORE_KEY_MAX)
		return err_set(oe ? &oe->err : NULL, -EINVAL,
		               "%s list uploads: prefix longer than %d bytes", os->ops->name,
		               OBJSTORE_KEY_MAX);
	if (os->provider != OBJSTORE_S3)
		return 0;
	for (unsigned page = 0; rc == 0; page++) {
		if (page == OBJSTORE_LIST_PAGES_MAX)
			return err_set(oe ? &oe->err : NULL, -EMSGSIZE,
			               "s3 ListMultipartUploads %s: more than %u pages", prefix,
			               OBJSTORE_LIST_PAGES_MAX);
		rc = s3_uploads_page(os, prefix, key, sizeof(key), id, sizeof(id), fn, ctx, oe);
		if (!rc && !key[0])
			break;
	}
	return rc;
}

int objstore_abort_multipart(struct objstore *os, const char *key, const char *upload_id,
                             struct objstore_err *oe)
{
	struct objstore_req rq;
	struct objstore_err mine;
	int rc;

	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "abort", key, oe)) != 0)
		return rc;
	if (os->provider != OBJSTORE_S3)
		return 0;
	objstore_err_clear(&mine);
	objstore_req_init(&rq, "AbortMultipartUpload", key, "DELETE");
	objstore_req_param(&rq, "uploadId", upload_id);
	rc = os->ops->url(os, &rq, key, &mine);
	if (!rc)
		rc = objstore_http_do(os, &rq, &mine);
	objstore_req_release(&rq);
	if (rc == -ENOENT && strcmp(mine.code, "NoSuchUpload") == 0)
		return 0; /* already gone */
	if (rc && oe)
		*oe = mine;
	return rc;
}

/*
 * lock_it: objstore-it's checks of Object Lock / immutability (objstore_lock_get) and of
 * incomplete multipart uploads (objstore_list_uploads, objstore_abort_multipart) against
 * the real servers.
 *
 * S3 (versitygw): a bucket "<S3_BUCKET>-lock" created with
 * x-amz-bucket-object-lock-enabled: true (versitygw's posix backend keeps the lock in
 * xattrs; no setting needed), objects given a legal hold and a GOVERNANCE retention with
 * PutObjectLegalHold / PutObjectRetention, then read back; the ordinary bucket (no lock
 * configuration) reads as unlocked. Azure (Azurite): Set Blob Legal Hold is tried; Azurite
 * 3.35 has no immutability (501 APINotImplemented: its handlers are stubs), so the check
 * wants exactly that answer (any other error is a failure: a bad request of ours) and the
 * blob reading unlocked; a server that accepts the hold must show it.
 * The setup requests are built on the library's own request core (internal.h), which
 * signs them like any other.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/base64.h"
#include "lib/objstore/internal.h"
#include "lib/objstore/lock.h"
#include "lib/rfc3339.h"
#include "test/integration/objstore/objstore_it.h"

/* One request of the setup: method on key (NULL: the bucket) with query param "name" or
 * "name=value" (may be NULL), one header (may be NULL), body (may be NULL). 0 or the
 * objstore error. */
static int raw(struct objstore *os, const char *method, const char *key, const char *param,
               const char *hname, const char *hval, const char *body, struct objstore_err *oe)
{
	struct objstore_req rq;
	struct objstore_body b = { body, body ? strlen(body) : 0, NULL };
	const char *eq = param ? strchr(param, '=') : NULL;
	char pname[32], md5[32];
	int rc;

	objstore_err_clear(oe);
	objstore_req_init(&rq, "setup", key ? key : "(bucket)", method);
	if (param) {
		snprintf(pname, sizeof(pname), "%.*s", (int)(eq ? eq - param : 31), param);
		objstore_req_param(&rq, pname, eq ? eq + 1 : "");
	}
	if (hname)
		objstore_req_header(&rq, hname, hval);
	if (body && !azure) { /* PutObjectLegalHold / PutObjectRetention require it */
		unsigned char d[16];
		char *b64;

		EVP_Digest(body, strlen(body), d, NULL, EVP_md5(), NULL);
		b64 = base64_encode(d, sizeof(d));
		snprintf(md5, sizeof(md5), "%s", b64);
		free(b64);
		objstore_req_header(&rq, "Content-MD5", md5);
	}
	if (body || strcmp(method, "PUT") == 0) {
		objstore_req_body(&rq, &b);
		/* else libcurl's form type, which Shared Key would not have signed */
		objstore_req_header(&rq, "Content-Type", "application/xml");
	}
	rc = os->ops->url(os, &rq, key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	objstore_req_release(&rq);
	return rc;
}

static void s3_locks(struct objstore *os)
{
	struct objstore_config cfg = base;
	struct objstore *lk;
	struct objstore_lock l[4];
	struct objstore_err oe;
	char bucket[80], free_k[256], held[256], kept[256], gone[256], until[RFC3339_MAX];
	char body[256], what[2][64];
	int64_t until_ms = ((int64_t)time(NULL) + 86400) * 1000;
	int rc[4], del;

	snprintf(bucket, sizeof(bucket), "%s-lock", base.bucket);
	cfg.bucket = bucket;
	lk = open_store(&cfg);
	rc[0] = raw(lk, "PUT", NULL, NULL, "x-amz-bucket-object-lock-enabled", "true", NULL, &oe);
	if (rc[0] && strcmp(oe.code, "BucketAlreadyOwnedByYou") != 0) {
		result(false, "object lock: bucket created with lock enabled", "%s", oe.err.msg);
		objstore_free(lk);
		return;
	}
	key_of(free_k, sizeof(free_k), "lock/free");
	key_of(held, sizeof(held), "lock/held");
	key_of(kept, sizeof(kept), "lock/retained");
	key_of(gone, sizeof(gone), "lock/absent");
	rfc3339_format(until_ms, RFC3339_SECONDS, until);
	snprintf(body, sizeof(body),
	         "<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>%s</RetainUntilDate>"
	         "</Retention>",
	         until);
	if (objstore_put_small(lk, free_k, "f", 1, &oe) ||
	    objstore_put_small(lk, held, "h", 1, &oe) ||
	    objstore_put_small(lk, kept, "k", 1, &oe) ||
	    raw(lk, "PUT", held, "legal-hold", NULL, NULL,
	        "<LegalHold><Status>ON</Status></LegalHold>", &oe) ||
	    raw(lk, "PUT", kept, "retention", NULL, NULL, body, &oe)) {
		result(false, "object lock: objects locked", "%s", oe.err.msg);
		objstore_free(lk);
		return;
	}
	rc[0] = objstore_lock_get(lk, free_k, &l[0], &oe);
	rc[1] = objstore_lock_get(lk, held, &l[1], &oe);
	rc[2] = objstore_lock_get(lk, kept, &l[2], &oe);
	rc[3] = objstore_lock_get(lk, gone, &l[3], &oe);
	objstore_lock_describe(&l[1], what[0]);
	objstore_lock_describe(&l[2], what[1]);
	result(rc[0] == 0 && !objstore_lock_active(&l[0], until_ms - 60000) && rc[1] == 0 &&
	               l[1].legal_hold && rc[2] == 0 && strcmp(l[2].mode, "GOVERNANCE") == 0 &&
	               l[2].retain_until_ms == until_ms &&
	               objstore_lock_active(&l[2], until_ms - 60000) &&
	               !objstore_lock_active(&l[2], until_ms) && rc[3] == -ENOENT,
	       "object lock: legal hold and retention read back, a free object unlocked",
	       "held: %s; retained: %s; rc %d %d %d %d", what[0], what[1], rc[0], rc[1], rc[2],
	       rc[3]);
	/* The store enforces it too (no versioning here: refused, not a delete marker). */
	del = objstore_delete(lk, held, &oe);
	result(del < 0 && objstore_head(lk, held, NULL, NULL) == 0,
	       "object lock: the store refuses to delete a held object", "%s", oe.err.msg);
	raw(lk, "PUT", held, "legal-hold", NULL, NULL,
	    "<LegalHold><Status>OFF</Status></LegalHold>", &oe);
	rc[1] = objstore_lock_get(lk, held, &l[1], &oe);
	result(rc[1] == 0 && !objstore_lock_active(&l[1], 0) && objstore_delete(lk, held, &oe) == 0,
	       "object lock: hold released, deletable", "%s", rc[1] ? oe.err.msg : "released");
	raw(lk, "DELETE", kept, NULL, "x-amz-bypass-governance-retention", "true", NULL, &oe);
	objstore_delete(lk, free_k, NULL);
	objstore_free(lk);
	/* the ordinary bucket has no lock configuration: nothing more is asked */
	key_of(free_k, sizeof(free_k), "lock/plain");
	rc[0] = objstore_put_small(os, free_k, "p", 1, &oe);
	rc[0] = rc[0] ? rc[0] : objstore_lock_get(os, free_k, &l[0], &oe);
	result(rc[0] == 0 && !objstore_lock_active(&l[0], 0),
	       "object lock: a bucket without lock configuration reads unlocked", "%s",
	       rc[0] ? oe.err.msg : "no lock");
	objstore_delete(os, free_k, NULL);
}

static void azure_locks(struct objstore *os)
{
	struct objstore_lock l;
	struct objstore_err oe, hold;
	char key[256], what[64];
	int set, rc;

	key_of(key, sizeof(key), "lock/blob");
	if ((rc = objstore_put_small(os, key, "b", 1, &oe)) != 0) {
		result(false, "immutability: blob written", "%s", oe.err.msg);
		return;
	}
	set = raw(os, "PUT", key, "comp=legalhold", "x-ms-legal-hold", "true", NULL, &hold);
	rc = objstore_lock_get(os, key, &l, &oe);
	objstore_lock_describe(&l, what);
	if (set == 0)
		result(rc == 0 && l.legal_hold, "immutability: a legal hold reads back", "%s",
		       rc ? oe.err.msg : what);
	else
		result(hold.http_status == 501 && rc == 0 && !objstore_lock_active(&l, 0),
		       "immutability: the server implements none (501), the blob reads unlocked",
		       "Set Blob Legal Hold: %s; read: %s", hold.err.msg, rc ? oe.err.msg : what);
	objstore_delete(os, key, NULL);
}

void check_locks(struct objstore *os)
{
	if (azure)
		azure_locks(os);
	else
		s3_locks(os);
}

/* ---- incomplete multipart uploads ------------------------------------------------------ */

struct uploads {
	char key[256], id[OBJSTORE_UPLOAD_ID_MAX];
	unsigned n;
};

static int on_upload(void *ctx, const struct objstore_upload_entry *u)
{
	struct uploads *up = ctx;

	up->n++;
	snprintf(up->key, sizeof(up->key), "%s", u->key);
	snprintf(up->id, sizeof(up->id), "%s", u->upload_id);
	return 0;
}

/* An upload begun and never completed (a process killed mid-upload) is listed under its
 * prefix, aborted by id, and then listed no more; aborting it again is not an error. */
void check_incomplete_uploads(struct objstore *os)
{
	struct objstore_upload u = { 0 };
	struct uploads before = { 0 }, after = { 0 };
	struct objstore_err oe;
	char key[256], sub[256];
	int rc, again;

	key_of(key, sizeof(key), "mpu/left/dump.rdb");
	key_of(sub, sizeof(sub), "mpu/");
	u.key = key;
	buf_init(&u.manifest, 4096);
	if (azure) {
		rc = objstore_list_uploads(os, sub, on_upload, &before, &oe);
		result(rc == 0 && before.n == 0, "incomplete uploads: none on Azure", "%s",
		       rc ? oe.err.msg : "none listed");
		buf_release(&u.manifest);
		return;
	}
	rc = os->ops->begin(os, &u, &oe);
	rc = rc ? rc : objstore_list_uploads(os, sub, on_upload, &before, &oe);
	rc = rc ? rc : objstore_abort_multipart(os, before.key, before.id, &oe);
	rc = rc ? rc : objstore_list_uploads(os, sub, on_upload, &after, &oe);
	again = objstore_abort_multipart(os, key, u.upload_id, NULL);
	result(rc == 0 && before.n == 1 && strcmp(before.key, key) == 0 &&
	               strcmp(before.id, u.upload_id) == 0 && after.n == 0 && again == 0,
	       "incomplete uploads: listed under the prefix, aborted, gone", "%s",
	       rc ? oe.err.msg : "listed 1, then 0");
	buf_release(&u.manifest);
}

/*
 * objstore/lock: the Object Lock (S3) and immutability (Azure) state of lock.h, both
 * providers: the requests (on the handle's URL builder, ops->url) and their parsers.
 * The bucket's or container's own state is asked once per handle (os->bucket_lock).
 */
#include "lock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "lib/objstore/internal.h"
#include "lib/objstore/xml.h"
#include "lib/rfc3339.h"

/* The S3 Code of "no retention / no legal hold on this object" (404 AWS, 400 versitygw). */
#define S3_NO_LOCK "NoSuchObjectLockConfiguration"
/* S3's Code of "the bucket has no Object Lock configuration" (GET ?object-lock). */
#define S3_NO_BUCKET_LOCK "ObjectLockConfigurationNotFoundError"

bool objstore_lock_active(const struct objstore_lock *l, int64_t now_ms)
{
	return l->legal_hold || l->retain_until_ms > now_ms;
}

void objstore_lock_describe(const struct objstore_lock *l, char out[64])
{
	char until[RFC3339_MAX];

	if (l->retain_until_ms > 0)
		rfc3339_format(l->retain_until_ms, RFC3339_SECONDS, until);
	if (l->legal_hold)
		snprintf(out, 64, "legal hold");
	else if (l->retain_until_ms > 0)
		snprintf(out, 64, "%s until %s", l->mode[0] ? l->mode : "retention", until);
	else
		snprintf(out, 64, "no lock");
}

int objstore_lock_parse_date(const char *s, int64_t *ms)
{
	struct tm tm = { 0 };
	const char *end;

	if (rfc3339_parse(s, ms) == 0)
		return 0;
	end = strptime(s, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!end || *end)
		return -EINVAL;
	*ms = (int64_t)timegm(&tm) * 1000;
	return 0;
}

int objstore_lock_parse_bucket(const char *xml, size_t len, bool *enabled)
{
	struct objstore_xml_span doc = { xml, len };
	char v[32];
	int rc = objstore_xml_child(doc, "ObjectLockEnabled", v, sizeof(v));

	if (rc && rc != -ENOENT)
		return -EPROTO;
	*enabled = rc == 0 && strcmp(v, "Enabled") == 0;
	return 0;
}

/* The root is <Retention> on AWS, <ObjectLockRetention> on versitygw 1.8: the two
 * children are read wherever they are. */
int objstore_lock_parse_retention(const char *xml, size_t len, struct objstore_lock *l)
{
	struct objstore_xml_span doc = { xml, len };
	char until[64];

	if (objstore_xml_child(doc, "Mode", l->mode, sizeof(l->mode)) ||
	    objstore_xml_child(doc, "RetainUntilDate", until, sizeof(until)) ||
	    objstore_lock_parse_date(until, &l->retain_until_ms))
		return -EPROTO;
	return 0;
}

int objstore_lock_parse_legal_hold(const char *xml, size_t len, struct objstore_lock *l)
{
	struct objstore_xml_span doc = { xml, len }, hold;
	size_t pos = 0;
	char st[8];

	if (objstore_xml_next(doc, &pos, "LegalHold", &hold) ||
	    objstore_xml_child(hold, "Status", st, sizeof(st)) ||
	    (strcmp(st, "ON") != 0 && strcmp(st, "OFF") != 0))
		return -EPROTO;
	l->legal_hold |= strcmp(st, "ON") == 0;
	return 0;
}

int objstore_lock_parse_azure(const char *until, const char *mode, const char *hold,
                              struct objstore_lock *l)
{
	if (until && until[0] && objstore_lock_parse_date(until, &l->retain_until_ms))
		return -EPROTO;
	if (mode && mode[0])
		snprintf(l->mode, sizeof(l->mode), "%s", mode);
	l->legal_hold |= hold && strcasecmp(hold, "true") == 0;
	return 0;
}

/* ---- requests ---------------------------------------------------------------------- */

/* GET (or HEAD) of key (NULL: the bucket/container) with one query parameter; *none set
 * when the server's Code is none_code (then 0). The answer stays in rq for the caller. */
static int lock_req(struct objstore *os, struct objstore_req *rq, const char *op, const char *key,
                    const char *param, const char *method, const char *none_code, bool *none,
                    struct objstore_err *oe)
{
	struct objstore_err mine;
	int rc;

	objstore_err_clear(&mine);
	objstore_req_init(rq, op, key ? key : os->bucket, method);
	if (param)
		objstore_req_param(rq, param, "");
	rc = os->ops->url(os, rq, key, &mine);
	if (!rc)
		rc = objstore_http_do(os, rq, &mine);
	*none = rc && none_code && strcmp(mine.code, none_code) == 0;
	if (*none)
		return 0;
	if (rc && oe && !oe->err.code)
		*oe = mine;
	return rc;
}

/* S3: whether the bucket has Object Lock enabled (os->bucket_lock). */
static int s3_bucket_lock(struct objstore *os, struct objstore_err *oe)
{
	struct objstore_req rq;
	bool none = false, on = false;
	int rc = lock_req(os, &rq, "GetObjectLockConfiguration", NULL, "object-lock", "GET",
	                  S3_NO_BUCKET_LOCK, &none, oe);

	if (!rc && !none && objstore_lock_parse_bucket(rq.resp.data, rq.resp.len, &on))
		rc = objstore_req_fail(os, &rq, oe, -EPROTO, "malformed ObjectLockConfiguration");
	if (!rc)
		os->bucket_lock = on ? 1 : -1;
	objstore_req_release(&rq);
	return rc;
}

static int s3_lock(struct objstore *os, const char *key, struct objstore_lock *l,
                   struct objstore_err *oe)
{
	struct objstore_req rq;
	bool none = false;
	int rc = os->bucket_lock ? 0 : s3_bucket_lock(os, oe);

	if (rc || os->bucket_lock < 0)
		return rc;
	rc = lock_req(os, &rq, "GetObjectRetention", key, "retention", "GET", S3_NO_LOCK, &none,
	              oe);
	if (!rc && !none && objstore_lock_parse_retention(rq.resp.data, rq.resp.len, l))
		rc = objstore_req_fail(os, &rq, oe, -EPROTO, "malformed Retention");
	objstore_req_release(&rq);
	if (rc)
		return rc;
	rc = lock_req(os, &rq, "GetObjectLegalHold", key, "legal-hold", "GET", S3_NO_LOCK, &none,
	              oe);
	if (!rc && !none && objstore_lock_parse_legal_hold(rq.resp.data, rq.resp.len, l))
		rc = objstore_req_fail(os, &rq, oe, -EPROTO, "malformed LegalHold");
	objstore_req_release(&rq);
	return rc;
}

/* Azure: the container's legal hold (Get Container Properties), into os->bucket_lock. */
static int az_container_lock(struct objstore *os, struct objstore_err *oe)
{
	struct objstore_req rq;
	int rc;

	objstore_req_init(&rq, "GetContainerProperties", os->bucket, "HEAD");
	objstore_req_param(&rq, "restype", "container");
	rq.want[0] = "x-ms-has-legal-hold";
	rc = os->ops->url(os, &rq, NULL, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	if (!rc)
		os->bucket_lock = strcasecmp(rq.got[0], "true") == 0 ? 1 : -1;
	objstore_req_release(&rq);
	return rc;
}

static int az_lock(struct objstore *os, const char *key, struct objstore_lock *l,
                   struct objstore_err *oe)
{
	struct objstore_req rq;
	int rc = os->bucket_lock ? 0 : az_container_lock(os, oe);

	if (rc)
		return rc;
	l->legal_hold = os->bucket_lock > 0;
	objstore_req_init(&rq, "GetBlobProperties", key, "HEAD");
	rq.want[0] = "x-ms-immutability-policy-until-date";
	rq.want[1] = "x-ms-immutability-policy-mode";
	rq.want[2] = "x-ms-legal-hold";
	rc = os->ops->url(os, &rq, key, oe);
	if (!rc)
		rc = objstore_http_do(os, &rq, oe);
	if (!rc && objstore_lock_parse_azure(rq.got[0], rq.got[1], rq.got[2], l))
		rc = objstore_req_fail(os, &rq, oe, -EPROTO,
		                       "malformed x-ms-immutability-policy-until-date");
	objstore_req_release(&rq);
	return rc;
}

int objstore_lock_get(struct objstore *os, const char *key, struct objstore_lock *l,
                      struct objstore_err *oe)
{
	int rc;

	memset(l, 0, sizeof(*l));
	objstore_err_clear(oe);
	if ((rc = objstore_check_key(os, "lock", key, oe)) != 0)
		return rc;
	rc = os->provider == OBJSTORE_S3 ? s3_lock(os, key, l, oe) : az_lock(os, key, l, oe);
	if (rc)
		memset(l, 0, sizeof(*l));
	return rc;
}

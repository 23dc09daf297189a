/*
 * objstore/lock: whether an object may be deleted, as the store's own write-once rules
 * say: S3 Object Lock (a retention GOVERNANCE|COMPLIANCE until a date, a legal hold) and
 * Azure immutability (a blob's immutability policy Unlocked|Locked until a date, a legal
 * hold on the blob or on the whole container).
 *
 *   struct objstore_lock l;
 *   if (objstore_lock_get(os, key, &l, &oe) < 0)
 *           ... the state is unknown: do not delete (oe says why) ...
 *   else if (objstore_lock_active(&l, now_ms))
 *           ... locked: keep it ...
 *
 * How it is read (objstore_lock_get):
 *   - S3: the bucket's configuration first, once per handle (GetObjectLockConfiguration,
 *     GET ?object-lock: ObjectLockConfigurationNotFoundError or no ObjectLockEnabled
 *     means no object of the bucket can be locked, and nothing more is asked); then per
 *     object GetObjectRetention (GET ?retention) and GetObjectLegalHold (GET
 *     ?legal-hold), NoSuchObjectLockConfiguration meaning "none" (404 on AWS, 400 on
 *     versitygw: the Code decides, not the status). Explicit requests rather than
 *     HeadObject's x-amz-object-lock-* headers: S3 leaves those headers out, silently,
 *     for a caller without s3:GetObjectRetention / s3:GetObjectLegalHold, which would
 *     read as "not locked"; these requests answer 403 instead, an error.
 *   - Azure: the container's legal hold once per handle (Get Container Properties,
 *     x-ms-has-legal-hold), then the blob's Get Blob Properties headers
 *     x-ms-immutability-policy-until-date (RFC 1123), x-ms-immutability-policy-mode and
 *     x-ms-legal-hold. A container-level time-based policy is not visible per blob; the
 *     service refuses (409 BlobImmutableDueToPolicy) to delete a blob it still protects.
 *
 * The parsers are exported for the unit tests (test_objstore_parse.c); they are pure.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_LOCK_H
#define REDIS_OPERATOR_OBJSTORE_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/objstore/objstore.h"

struct objstore_lock {
	bool legal_hold; /* S3 LegalHold ON, Azure x-ms-legal-hold true (blob or container) */
	int64_t retain_until_ms; /* the retention's or policy's end, ms since the epoch; 0: none */
	char mode[16];           /* GOVERNANCE, COMPLIANCE (S3); unlocked, locked (Azure); "" */
};

/* Whether l forbids deleting the object at now_ms: a legal hold, or a retention whose
 * end is after now (whatever its mode: a GOVERNANCE lock is never bypassed here). */
bool objstore_lock_active(const struct objstore_lock *l, int64_t now_ms);

/* "legal hold", "COMPLIANCE until 2026-12-09T00:00:00Z"... for messages; out: 64 bytes. */
void objstore_lock_describe(const struct objstore_lock *l, char out[64]);

/* key's lock state into *l (zeroed: none). -ENOENT when the object is absent; any other
 * error means the state is unknown (oe says why: 403 without the permissions above). */
int objstore_lock_get(struct objstore *os, const char *key, struct objstore_lock *l,
                      struct objstore_err *oe);

/* S3's <ObjectLockConfiguration>: *enabled when ObjectLockEnabled is Enabled. 0 or -EPROTO. */
int objstore_lock_parse_bucket(const char *xml, size_t len, bool *enabled);
/* S3's <Retention><Mode>…</Mode><RetainUntilDate>…</RetainUntilDate> (versitygw's root:
 * <ObjectLockRetention>): into l. 0 or -EPROTO. */
int objstore_lock_parse_retention(const char *xml, size_t len, struct objstore_lock *l);
/* S3's <LegalHold><Status>ON|OFF</Status>: into l. 0 or -EPROTO. */
int objstore_lock_parse_legal_hold(const char *xml, size_t len, struct objstore_lock *l);
/* Azure's three header values (NULL or "": absent) into l. 0 or -EPROTO (a bad date). */
int objstore_lock_parse_azure(const char *until, const char *mode, const char *hold,
                              struct objstore_lock *l);
/* An RFC 1123 date ("Wed, 09 Dec 2026 00:00:00 GMT") or an RFC 3339 one into *ms. 0 or
 * -EINVAL. */
int objstore_lock_parse_date(const char *s, int64_t *ms);

#endif

/*
 * err: the project's error convention.
 *
 * A function that can fail returns int: 0, or a negative errno. When the caller wants
 * detail, it passes a `struct err *` as the last argument (NULL is always allowed) and
 * gets the code plus a human message naming the field or peer and the reason.
 *
 * err_from_http() is the one table that turns an HTTP status and a Kubernetes Status
 * `reason` into an errno, so every caller agrees on what "409" means:
 *   AlreadyExists → -EEXIST, Conflict (stale resourceVersion) → -EBUSY,
 *   410 Gone/Expired → -ESTALE (relist), 429 → -EAGAIN, 5xx → -EIO.
 */
#ifndef REDIS_OPERATOR_ERR_H
#define REDIS_OPERATOR_ERR_H

#include <stdbool.h>

#define ERR_MSG_MAX 512

struct err {
	int code;              /* negative errno, 0 when unset */
	char msg[ERR_MSG_MAX]; /* NUL-terminated, truncated if longer */
};

/* Clears e (NULL-safe). */
void err_clear(struct err *e);
/*
 * Records code and a formatted message in e (NULL-safe) and returns code, so a caller
 * can write `return err_set(e, -EINVAL, "spec.instances: must be >= 1");`.
 * The first error recorded wins unless e was cleared: the root cause is kept.
 */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "ENOENT" for -ENOENT; "E?" for an unknown code. */
const char *err_name(int code);

/*
 * Maps an HTTP status and an optional Kubernetes Status reason to a negative errno.
 * A known reason wins over the status code. 2xx maps to 0.
 */
int err_from_http(long status, const char *reason);
/* Errors worth retrying on an idempotent request (-EAGAIN, -EIO, -ETIMEDOUT, transport). */
bool err_is_transient(int code);

#endif

/*
 * err: error codes and the HTTP/Kubernetes → errno table (see err.h).
 */
#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

int err_set(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e || e->code)
		return code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

#define NAME(x)                                                                                    \
	{                                                                                          \
		-(x), #x                                                                           \
	}
static const struct {
	int code;
	const char *name;
} err_names[] = {
	NAME(EINVAL),       NAME(ENOENT),     NAME(EEXIST),    NAME(EBUSY),     NAME(ESTALE),
	NAME(EAGAIN),       NAME(EIO),        NAME(ETIMEDOUT), NAME(EPROTO),    NAME(EACCES),
	NAME(EPERM),        NAME(EMSGSIZE),   NAME(ERANGE),    NAME(EBADMSG),   NAME(EOPNOTSUPP),
	NAME(ECONNREFUSED), NAME(ECONNRESET), NAME(ENOTCONN),  NAME(ECANCELED), NAME(EHOSTUNREACH),
	NAME(ENOSPC),       NAME(ENOMEM),     NAME(EROFS),     NAME(EMFILE),    NAME(ENOTDIR),
};
#undef NAME

const char *err_name(int code)
{
	for (size_t i = 0; i < sizeof(err_names) / sizeof(err_names[0]); i++)
		if (err_names[i].code == code)
			return err_names[i].name;
	return "E?";
}

/* Kubernetes metav1.StatusReason values. */
static const struct {
	const char *reason;
	int code;
} reason_table[] = {
	{ "AlreadyExists", -EEXIST },
	{ "Conflict", -EBUSY },
	{ "NotFound", -ENOENT },
	{ "Gone", -ESTALE },
	{ "Expired", -ESTALE },
	{ "Invalid", -EINVAL },
	{ "BadRequest", -EBADMSG },
	{ "Unauthorized", -EACCES },
	{ "Forbidden", -EPERM },
	{ "MethodNotAllowed", -EOPNOTSUPP },
	{ "NotAcceptable", -EOPNOTSUPP },
	{ "UnsupportedMediaType", -EOPNOTSUPP },
	{ "RequestEntityTooLarge", -EMSGSIZE },
	{ "TooManyRequests", -EAGAIN },
	{ "Timeout", -ETIMEDOUT },
	{ "ServerTimeout", -ETIMEDOUT },
	{ "ServiceUnavailable", -EAGAIN },
	{ "InternalError", -EIO },
};

static const struct {
	long status;
	int code;
} status_table[] = {
	{ 400, -EBADMSG },    { 401, -EACCES },     { 403, -EPERM },      { 404, -ENOENT },
	{ 405, -EOPNOTSUPP }, { 406, -EOPNOTSUPP }, { 408, -ETIMEDOUT },  { 409, -EBUSY },
	{ 410, -ESTALE },     { 413, -EMSGSIZE },   { 415, -EOPNOTSUPP }, { 422, -EINVAL },
	{ 429, -EAGAIN },     { 503, -EAGAIN },     { 504, -ETIMEDOUT },
};

int err_from_http(long status, const char *reason)
{
	size_t i;

	if (status >= 200 && status < 300)
		return 0;
	for (i = 0; reason && i < sizeof(reason_table) / sizeof(reason_table[0]); i++)
		if (strcmp(reason, reason_table[i].reason) == 0)
			return reason_table[i].code;
	for (i = 0; i < sizeof(status_table) / sizeof(status_table[0]); i++)
		if (status_table[i].status == status)
			return status_table[i].code;
	if (status >= 500 && status < 600)
		return -EIO;
	if (status >= 400 && status < 500)
		return -EINVAL;
	return -EPROTO;
}

bool err_is_transient(int code)
{
	switch (code) {
	case -EAGAIN:
	case -EIO:
	case -ETIMEDOUT:
	case -ECONNREFUSED:
	case -ECONNRESET:
	case -ENOTCONN:
	case -EHOSTUNREACH: return true;
	default: return false;
	}
}

/*
 * log: structured single-line logging with redaction (see log.h).
 *
 * The settings are the one piece of global mutable state STYLE.md allows; they are
 * written at start-up (log_configure) before threads exist and only read afterwards.
 * Each line is built in a local buffer and written with one fwrite under the stream
 * lock, so lines from different threads never interleave. What is a secret is not
 * decided here but in lib/redact, for every field of every line at every level.
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "redact.h"
#include "rfc3339.h"

#define LOG_LINE_MAX       8192
#define LOG_DEBUG_LIST_MAX 256

static struct {
	enum log_level level;
	enum log_format format;
	char debug[LOG_DEBUG_LIST_MAX];
	FILE *out;
} log_cfg = { LOG_LEVEL_INFO, LOG_FORMAT_JSON, "", NULL };

static const char *const level_names[] = { "debug", "info", "warn", "error" };

void log_configure(enum log_level level, enum log_format format, const char *debug_components,
                   FILE *out)
{
	log_cfg.level = level;
	log_cfg.format = format;
	snprintf(log_cfg.debug, sizeof(log_cfg.debug), "%s",
	         debug_components ? debug_components : "");
	log_cfg.out = out;
}

int log_parse_level(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

int log_parse_format(const char *s, enum log_format *out)
{
	if (strcmp(s, "json") == 0)
		*out = LOG_FORMAT_JSON;
	else if (strcmp(s, "logfmt") == 0)
		*out = LOG_FORMAT_LOGFMT;
	else
		return -EINVAL;
	return 0;
}

/* Is comp one of the comma-separated names in list? */
static bool list_has(const char *list, const char *comp)
{
	size_t n = strlen(comp);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && strncmp(p, comp, n) == 0)
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

bool log_enabled(enum log_level level, const char *component)
{
	if (level >= log_cfg.level)
		return true;
	return level == LOG_LEVEL_DEBUG && component && list_has(log_cfg.debug, component);
}

/* JSON string body escaping (quotes added by the caller). */
static void put_json_escaped(struct buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_printf(b, "\\%c", c);
		else if (c == '\n')
			buf_append_str(b, "\\n");
		else if (c < 0x20)
			buf_printf(b, "\\u%04x", c);
		else
			buf_append_char(b, (char)c);
	}
}

static void put_logfmt_value(struct buf *b, const char *s)
{
	if (*s && strcspn(s, " =\"\\\n\t") == strlen(s)) {
		buf_append_str(b, s);
		return;
	}
	buf_append_char(b, '"');
	put_json_escaped(b, s);
	buf_append_char(b, '"');
}

static void put_field(struct buf *b, const char *key, const char *value)
{
	if (log_cfg.format == LOG_FORMAT_JSON) {
		buf_append_str(b, b->len > 1 ? ",\"" : "\"");
		put_json_escaped(b, key);
		buf_append_str(b, "\":\"");
		put_json_escaped(b, value);
		buf_append_char(b, '"');
		return;
	}
	if (b->len)
		buf_append_char(b, ' ');
	buf_append_str(b, key);
	buf_append_char(b, '=');
	put_logfmt_value(b, value);
}

static void put_timestamp(struct buf *b)
{
	struct timespec ts;
	char s[RFC3339_MAX];

	clock_gettime(CLOCK_REALTIME, &ts);
	rfc3339_format((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, RFC3339_MILLIS, s);
	put_field(b, "ts", s);
}

/* Every value goes through lib/redact: a secret key or value, or the secrets inside a
 * JSON value (a Secret's data, a password field), never reach the line. */
static void put_redacted(struct buf *b, const char *key, const char *value)
{
	char *owned;

	put_field(b, key, redact_text(key, value ? value : "", &owned));
	free(owned);
}

void log_emit(enum log_level level, const char *component, const char *msg, ...)
{
	struct buf b = BUF_INIT(LOG_LINE_MAX);
	FILE *out = log_cfg.out ? log_cfg.out : stderr;
	const char *key;
	va_list ap;

	if (!log_enabled(level, component))
		return;
	if (log_cfg.format == LOG_FORMAT_JSON)
		buf_append_char(&b, '{');
	put_timestamp(&b);
	put_field(&b, "level", level_names[level]);
	if (component)
		put_field(&b, "component", component);
	put_redacted(&b, "msg", msg);
	va_start(ap, msg);
	while ((key = va_arg(ap, const char *)))
		put_redacted(&b, key, va_arg(ap, const char *));
	va_end(ap);
	if (log_cfg.format == LOG_FORMAT_JSON)
		buf_append_char(&b, '}');
	/* A line cut by LOG_LINE_MAX still ends cleanly with a newline. */
	b.limit = BUF_NO_LIMIT;
	buf_append_char(&b, '\n');
	flockfile(out);
	fwrite(b.data, 1, b.len, out);
	fflush(out);
	funlockfile(out);
	buf_release(&b);
}

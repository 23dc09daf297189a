/*
 * log: one event per line, as JSON or logfmt.
 *
 *   log_info("controller", "reconciled", "ns", ns, "name", name, NULL);
 *
 * Fields are key/value string pairs ending in NULL. Every value, and the message, goes
 * through redact_text (lib/redact.h) at every level: a value whose key names a secret
 * (password, token, secret, authorization, cookie, privateKey, …) or that looks like one
 * ("Bearer …", a PEM private key, a URL with a password) is printed as "[REDACTED]", and a
 * value that is JSON text is printed with its secrets redacted (a Secret's data and
 * stringData, password fields): secrets never reach a log line even by mistake.
 * Debug lines print when the level is debug, or when their component is listed in
 * the debug list ("k8s,watch"). Thread-safe; each line is written with one call.
 */
#ifndef REDIS_OPERATOR_LOG_H
#define REDIS_OPERATOR_LOG_H

#include <stdbool.h>
#include <stdio.h>

enum log_level { LOG_LEVEL_DEBUG, LOG_LEVEL_INFO, LOG_LEVEL_WARN, LOG_LEVEL_ERROR };
enum log_format { LOG_FORMAT_JSON, LOG_FORMAT_LOGFMT };

/* Defaults: info, JSON, no debug components, stderr. out == NULL keeps stderr. */
void log_configure(enum log_level level, enum log_format format, const char *debug_components,
                   FILE *out);
/* Parses "debug|info|warn|error" and "json|logfmt"; 0 or -EINVAL. */
int log_parse_level(const char *s, enum log_level *out);
int log_parse_format(const char *s, enum log_format *out);

bool log_enabled(enum log_level level, const char *component);

void log_emit(enum log_level level, const char *component, const char *msg, ...);

#define log_debug(comp, ...) log_emit(LOG_LEVEL_DEBUG, comp, __VA_ARGS__)
#define log_info(comp, ...)  log_emit(LOG_LEVEL_INFO, comp, __VA_ARGS__)
#define log_warn(comp, ...)  log_emit(LOG_LEVEL_WARN, comp, __VA_ARGS__)
#define log_error(comp, ...) log_emit(LOG_LEVEL_ERROR, comp, __VA_ARGS__)

#endif

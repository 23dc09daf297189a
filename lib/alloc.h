/*
 * alloc: allocation wrappers that never return NULL.
 *
 * Out of memory is not an error this program can recover from, so every allocation
 * goes through these wrappers, which log one line and abort(). Callers therefore never
 * check for NULL, and every size a peer controls must be capped *before* it reaches
 * here (see the named limits in each parser).
 *
 * alloc_install_jansson() routes jansson's allocations through the same wrappers.
 * Thread-safe.
 */
#ifndef REDIS_OPERATOR_ALLOC_H
#define REDIS_OPERATOR_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
/* Overflow of nmemb * size aborts like OOM. */
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
/* Copies at most n bytes of s and always NUL-terminates. */
char *xstrndup(const char *s, size_t n);
/* printf into a fresh string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Zeroes len bytes in a way the compiler cannot remove (for secrets). NULL-safe. */
void secure_zero(void *p, size_t len);
/* Wipes a NUL-terminated secret, then frees it. NULL-safe. */
void free_secret(char *s);

/* Makes jansson allocate through xmalloc/free. Call once at start-up, before any json_*. */
void alloc_install_jansson(void);

#endif

/*
 * alloc: abort-on-OOM allocation wrappers (see alloc.h).
 */
#include "alloc.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t size)
{
	/* No allocation here: stderr is unbuffered and fprintf of a number needs none. */
	fprintf(stderr, "{\"level\":\"fatal\",\"msg\":\"out of memory\",\"bytes\":%zu}\n", size);
	abort();
}

void *xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p)
		oom(size);
	return p;
}

void *xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		oom(SIZE_MAX);
	return xrealloc(ptr, nmemb * size);
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	int len;
	char *p;

	if (!fmt)
		abort(); /* keeps -Wformat-truncation from assuming a NULL format under sanitizers */
	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		abort(); /* only a bad format string gets here */
	p = xmalloc((size_t)len + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)len + 1, fmt, ap);
	va_end(ap);
	return p;
}

void secure_zero(void *p, size_t len)
{
	volatile unsigned char *v = p;

	while (v && len--)
		*v++ = 0;
}

void free_secret(char *s)
{
	if (!s)
		return;
	secure_zero(s, strlen(s));
	free(s);
}

static void *jansson_malloc(size_t size)
{
	return xmalloc(size);
}

void alloc_install_jansson(void)
{
	json_set_alloc_funcs(jansson_malloc, free);
}

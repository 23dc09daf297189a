/*
 * base64: standard base64 with padding (see base64.h). Six bits per character into a
 * 24-bit accumulator, three bytes out per group of four; no state between calls.
 */
#include "base64.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/alloc.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

char *base64_encode(const void *data, size_t n)
{
	const unsigned char *in = data;
	char *out = xmalloc(base64_encoded_len(n) + 1), *o = out;

	for (size_t i = 0; i < n; i += 3) {
		size_t left = n - i;
		uint32_t acc = (uint32_t)in[i] << 16;

		if (left > 1)
			acc |= (uint32_t)in[i + 1] << 8;
		if (left > 2)
			acc |= in[i + 2];
		*o++ = alphabet[acc >> 18 & 63];
		*o++ = alphabet[acc >> 12 & 63];
		*o++ = left > 1 ? alphabet[acc >> 6 & 63] : '=';
		*o++ = left > 2 ? alphabet[acc & 63] : '=';
	}
	*o = '\0';
	return out;
}

/* The value of c in the alphabet, or -1. */
static int value_of(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	return c == '/' ? 63 : -1;
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The 6-bit value of c at place q (0..3) of a group, with *pad the '=' seen so far in
 * it: 0 for padding, which only the last two places may hold, and after which only
 * padding may follow. -1: not base64 there.
 */
static int next_value(unsigned char c, size_t q, size_t *pad)
{
	if (c == '=' && q >= 2) {
		(*pad)++;
		return 0;
	}
	return *pad ? -1 : value_of(c);
}

int base64_decode(const char *in, size_t len, unsigned flags, char **out, size_t *out_len)
{
	size_t cap = len / 4 * 3 + 4, n = 0, q = 0, pad = 0;
	char *p = xmalloc(cap);
	uint32_t acc = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if ((flags & BASE64_SPACE) && is_space(c))
			continue;
		v = pad && q == 0 ? -1 : next_value(c, q, &pad); /* nothing after a padded group */
		if (v < 0)
			goto bad;
		acc = acc << 6 | (uint32_t)v;
		if (++q < 4)
			continue;
		for (size_t k = 0; k < 3 - pad; k++)
			p[n++] = (char)(acc >> (16 - 8 * k));
		q = 0;
		acc = 0;
	}
	if (q != 0)
		goto bad;
	p[n] = '\0';
	*out = p;
	*out_len = n;
	return 0;
bad:
	secure_zero(p, cap); /* may hold part of a key */
	free(p);
	return -EINVAL;
}

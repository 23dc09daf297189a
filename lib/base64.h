/*
 * base64: the standard alphabet of RFC 4648 section 4 (A-Z a-z 0-9 + /, '=' padding),
 * the encoding of a Secret's data, a ConfigMap's binaryData and a kubeconfig's *-data
 * fields. One encoder and one decoder for the whole tree.
 *
 * Decoding is strict, as the API server's own encoder never writes anything else:
 *   - padding is required: the text (whitespace skipped, with BASE64_SPACE) is a whole
 *     number of 4-character groups;
 *   - '=' only in the last one or two places of the last group, and nothing after it;
 *   - no other character: base64url's '-' and '_' are refused, and so is a NUL.
 * The bits a short last group leaves over are ignored ("YR==" decodes to "a", as in Go's
 * StdEncoding). Empty text decodes to zero bytes; a caller for which empty means absent
 * or invalid says so itself.
 *
 * Outputs are heap strings the caller frees; decoded bytes may be a key or a password, so
 * the decoder wipes its scratch buffer when it refuses the input, and callers wipe what
 * they were given (secure_zero, free_secret). Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_BASE64_H
#define REDIS_OPERATOR_BASE64_H

#include <stddef.h>

/* base64_decode flag: skip ' ', '\t', '\r' and '\n' anywhere (kubeconfig files wrap). */
#define BASE64_SPACE 1u

/* Length of the encoding of n bytes, padding included, NUL not included. */
size_t base64_encoded_len(size_t n);

/* The padded encoding of data[0..n), NUL-terminated (xmalloc: never NULL). */
char *base64_encode(const void *data, size_t n);

/*
 * Decodes in[0..len) (flags: 0 or BASE64_SPACE). 0 with *out (xmalloc, NUL-terminated
 * after *out_len bytes, which may themselves hold NULs); -EINVAL for text that is not
 * base64 as described above, *out and *out_len untouched.
 *   "YQ==" -> "a" (1)    "YWI=" -> "ab" (2)    "YWJj" -> "abc" (3)    "" -> "" (0)
 *   "YQ", "YQ=", "Y===", "YQ=a", "YQ==YQ==", "Y_==": -EINVAL
 */
int base64_decode(const char *in, size_t len, unsigned flags, char **out, size_t *out_len);

#endif

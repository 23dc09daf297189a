/*
 * acl: user rule lists and password hashes (see acl.h). The hash is OpenSSL's
 * SHA-256; everything else is string assembly.
 */
#include "acl.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

const char *const inst_acl_deny[] = {
	"-client|kill", "-client|pause", "-client|unpause", "-client|no-evict", "-acl",
	"-config",      "-shutdown",     "-debug",          "-replicaof",       "-slaveof",
	"-failover",    "-module",       "-sync",           "-psync",           NULL,
};

void inst_strv_push(struct inst_strv *s, const char *str)
{
	if (s->n + 1 >= s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = xreallocarray(s->v, s->cap, sizeof(*s->v));
	}
	s->v[s->n++] = xstrdup(str);
	s->v[s->n] = NULL;
}

void inst_strv_pushf(struct inst_strv *s, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	inst_strv_push(s, tmp);
}

void inst_strv_release(struct inst_strv *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

void inst_pw_hash(const char *pw, size_t len, char out[INST_PW_HASH_SIZE])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	EVP_Digest(pw, len, md, &mdlen, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[64] = '\0';
}

bool inst_pwset_has(const struct inst_pwset *s, const char *hash)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->hash[i], hash) == 0)
			return true;
	return false;
}

int inst_pwset_add(struct inst_pwset *s, const char *hash)
{
	if (inst_pwset_has(s, hash))
		return 0;
	if (s->n >= INST_PW_MAX)
		return -ENOSPC;
	snprintf(s->hash[s->n++], INST_PW_HASH_SIZE, "%s", hash);
	return 0;
}

void inst_acl_rules(enum inst_acl_kind kind, bool enabled, const struct inst_pwset *pw,
                    char *const *rules, size_t nrules, struct inst_strv *out)
{
	inst_strv_push(out, "reset");
	inst_strv_push(out, enabled ? "on" : "off");
	for (size_t i = 0; pw && i < pw->n; i++)
		inst_strv_pushf(out, "#%s", pw->hash[i]);
	if (kind != INST_ACL_CUSTOMER) {
		inst_strv_push(out, "~*");
		inst_strv_push(out, "&*");
		inst_strv_push(out, "+@all");
	}
	for (size_t i = 0; i < nrules; i++)
		inst_strv_push(out, rules[i]);
	if (kind == INST_ACL_OPERATOR)
		return;
	for (size_t i = 0; inst_acl_deny[i]; i++)
		inst_strv_push(out, inst_acl_deny[i]);
}

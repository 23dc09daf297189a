/*
 * acl: user rule lists, the check of customer rules, and password hashes (see acl.h).
 * The hash is OpenSSL's SHA-256; everything else is string assembly and comparison.
 */
#include "acl.h"

#include <assert.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

const char *const inst_acl_deny[] = {
	"-client|kill", "-client|pause", "-client|unpause", "-client|no-evict", "-acl",
	"-config",      "-shutdown",     "-debug",          "-replicaof",       "-slaveof",
	"-failover",    "-module",       "-sync",           "-psync",           NULL,
};

/*
 * The refused rules (see acl.h), matched ignoring case as Redis matches its keywords:
 * a whole keyword, or a first character. Redis 7.0 and Valkey 8.0 read no other rule as
 * a password, an identity or a state change.
 */
static const struct {
	const char *token;
	bool prefix; /* token is the first character */
	const char *why;
} refused[] = {
	{ ">", true, "adds a password; passwords come from passwordSecrets" },
	{ "#", true, "adds a password hash; passwords come from passwordSecrets" },
	{ "<", true, "removes a password; passwords come from passwordSecrets" },
	{ "!", true, "removes a password hash; passwords come from passwordSecrets" },
	{ "nopass", false, "lets any password in; passwords come from passwordSecrets" },
	{ "resetpass", false, "removes the passwords; passwords come from passwordSecrets" },
	{ "reset", false, "resets the user, passwords included; the operator resets it itself" },
	{ "on", false, "sets the on/off state; use enabled" },
	{ "off", false, "sets the on/off state; use enabled" },
	{ "(", true,
	  "a selector (or the start of one): selectors are refused, the operator's "
	  "denials (ACL, CONFIG, CLIENT KILL...) would not apply inside them" },
};

static bool one_printable_token(const char *rule)
{
	for (const char *p = rule; *p; p++)
		if (*p <= ' ' || *p > '~')
			return false;
	return true;
}

const char *inst_acl_rule_refusal(const char *rule)
{
	if (!rule[0])
		return "empty";
	if (!one_printable_token(rule))
		return "one rule per element: no spaces, control characters or non-ASCII bytes";
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		bool hit = refused[i].prefix ? rule[0] == refused[i].token[0]
		                             : strcasecmp(rule, refused[i].token) == 0;

		if (hit)
			return refused[i].why;
	}
	return NULL;
}

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

/* A cleartext password ">pw" / "<pw" goes out as its hash "#h" / "!h": never in clear
 * in redis.conf or on the wire. */
static void file_rules(char *const *rules, size_t nrules, struct inst_strv *out)
{
	char h[INST_PW_HASH_SIZE];

	for (size_t i = 0; i < nrules; i++) {
		if (rules[i][0] != '>' && rules[i][0] != '<') {
			inst_strv_push(out, rules[i]);
			continue;
		}
		inst_pw_hash(rules[i] + 1, strlen(rules[i] + 1), h);
		inst_strv_pushf(out, "%c%s", rules[i][0] == '>' ? '#' : '!', h);
	}
	for (size_t i = 0; inst_acl_deny[i]; i++)
		inst_strv_push(out, inst_acl_deny[i]);
}

void inst_acl_rules(enum inst_acl_kind kind, bool enabled, const struct inst_pwset *pw,
                    char *const *rules, size_t nrules, struct inst_strv *out)
{
	inst_strv_push(out, "reset");
	if (kind == INST_ACL_FILE) {
		file_rules(rules, nrules, out);
		return;
	}
	inst_strv_push(out, enabled ? "on" : "off");
	for (size_t i = 0; pw && i < pw->n; i++)
		inst_strv_pushf(out, "#%s", pw->hash[i]);
	if (kind != INST_ACL_CUSTOMER) {
		inst_strv_push(out, "~*");
		inst_strv_push(out, "&*");
		inst_strv_push(out, "+@all");
	}
	for (size_t i = 0; i < nrules; i++) {
		assert(kind != INST_ACL_CUSTOMER || !inst_acl_rule_refusal(rules[i]));
		inst_strv_push(out, rules[i]);
	}
	if (kind == INST_ACL_OPERATOR)
		return;
	for (size_t i = 0; inst_acl_deny[i]; i++)
		inst_strv_push(out, inst_acl_deny[i]);
}

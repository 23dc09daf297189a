/*
 * acl: the ACL users the instance manager renders and applies.
 *
 * Four kinds of user: the customer's `default` user (password from the auth Secret),
 * the operator's own `redis-operator` user (full rights; health, metrics, control and
 * replication authenticate as it), the users of spec.users and those of the ACL file
 * of spec.aclConfigSecret (api/acl_file.h). Customer users (default and file users
 * included) always end with inst_acl_deny: rules appended after theirs, so
 * no rule of theirs can re-grant CLIENT KILL, ACL, CONFIG, SHUTDOWN, REPLICAOF … and
 * therefore no customer can revoke, reconfigure or disconnect the operator's user.
 *
 * Passwords never appear in a rule: a user's passwords are a set of SHA-256 hashes
 * ("#<hex>"), which both the config file (`user` directive) and ACL SETUSER accept.
 * A rotation adds the new hash and keeps the old until told to drop it, so clients
 * that authenticated earlier, and replicas reconnecting, are never locked out.
 *
 * What a customer may write is checked before anything is rendered or applied
 * (inst_acl_rule_refusal): Redis matches rule keywords in any case, so the refused
 * keywords are refused in any case too, and a selector "(…)" is refused outright:
 * inst_acl_deny binds the root permissions only, and a command any selector allows is
 * allowed, so a selector such as "(+@all)" would run ACL and CONFIG past the deny list.
 *
 * Every rule list starts with "reset", so applying it is declarative: what the list
 * says is all the user has. ACL SETUSER applies a list atomically (redis >= 7.0), and
 * a reset does not disconnect clients already authenticated as the user.
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_ACL_H
#define REDIS_OPERATOR_INSTANCE_ACL_H

#include <stdbool.h>
#include <stddef.h>

#define INST_OPERATOR_USER "redis-operator"
#define INST_PW_MAX        8    /* passwords valid at once per user */
#define INST_PW_LEN_MAX    4096 /* longest password read from a Secret file */
#define INST_PW_HASH_SIZE  65   /* 64 hex digits + NUL */

/* A growable list of owned strings. */
struct inst_strv {
	size_t n, cap;
	char **v;
};

void inst_strv_push(struct inst_strv *s, const char *str);
void inst_strv_pushf(struct inst_strv *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
void inst_strv_release(struct inst_strv *s);

struct inst_pwset {
	size_t n;
	char hash[INST_PW_MAX][INST_PW_HASH_SIZE];
};

/* SHA-256 of the password bytes, lower-case hex, as ACL "#<hash>" wants. */
void inst_pw_hash(const char *pw, size_t len, char out[INST_PW_HASH_SIZE]);
bool inst_pwset_has(const struct inst_pwset *s, const char *hash);
/* Adds hash unless present: 0, or -ENOSPC when INST_PW_MAX are held. */
int inst_pwset_add(struct inst_pwset *s, const char *hash);

enum inst_acl_kind {
	INST_ACL_DEFAULT,  /* the customer's default user */
	INST_ACL_OPERATOR, /* redis-operator */
	INST_ACL_CUSTOMER, /* spec.users[] */
	INST_ACL_FILE,     /* spec.aclConfigSecret's file (api/acl_file.h) */
};

/* The commands no customer user may run, appended after their own rules. */
extern const char *const inst_acl_deny[];

/*
 * Why a customer may not write rule (one element of spec.users[].rules, one ACL SETUSER
 * argument), or NULL when it may. Refused: the empty token; whitespace, control
 * characters and non-ASCII bytes (one element is one rule: "+get (+@all)" would hide a
 * second rule from these checks); passwords (">", "<", "#", "!"); "nopass", "resetpass",
 * "reset", "on" and "off" in any case (identity and state come from passwordSecrets
 * and enabled); a selector or the start of one ("(" first: ACL SETUSER also joins
 * "(+@all" "~*)" into one selector). The reason never quotes the rule (a refused rule
 * may hold a password). Everything else (key, channel and command rules, categories,
 * allcommands, resetkeys, clearselectors …) may be written: inst_acl_deny comes after.
 */
const char *inst_acl_rule_refusal(const char *rule);

/*
 * Appends the rules for one user to out: "reset", "on"/"off", "#hash" per password,
 * then the kind's grants (default: ~* &* +@all; operator: the same; customer: rules),
 * then inst_acl_deny for customer kinds. rules may be NULL when nrules is 0. A customer
 * kind's rules must have passed inst_acl_rule_refusal (asserted). INST_ACL_FILE: "reset",
 * the file line's rules as written (they passed api_acl_file_parse: passwords and on/off
 * are theirs, so enabled and pw are ignored) but a cleartext ">pw" or "<pw" as its hash
 * "#<sha256>" or "!<sha256>", then inst_acl_deny: what ACL LOAD makes of the line for a
 * new user, less the denied commands.
 */
void inst_acl_rules(enum inst_acl_kind kind, bool enabled, const struct inst_pwset *pw,
                    char *const *rules, size_t nrules, struct inst_strv *out);

#endif

/*
 * acl_file: the ACL file of spec.aclConfigSecret (the Secret's key `acl`), parsed and
 * checked. Both roles use it: the instance manager applies the users it defines, the
 * controller reports a refused file on the cluster. Pure; any thread.
 *
 * The format is Redis's ACL file: one user per line, `user <name> <rule> <rule> ...`,
 * tokens separated by spaces or tabs. Blank lines and lines whose first non-blank
 * character is '#' are skipped (Redis's own ACL LOAD refuses them; a comment is allowed
 * here). A line means what ACL LOAD would make of it for a new user: the manager applies
 * "reset", the line's rules, then inst_acl_deny (instance/acl.h) with ACL SETUSER.
 *
 * Refused, naming the line (1-based) and the reason, never quoting a rule (a rule may be
 * a password): a line that does not start with `user` (any case) and a name; a control
 * character or a non-ASCII byte; a selector "(...)" (a command a selector allows is
 * allowed past the deny list, see instance/acl.h); a password hash ("#" or "!") that is
 * not 64 hex digits; the operator's own users `default` and `redis-operator` (in any
 * case: they belong to the operator); a user spec.users defines (spec.users wins, so the
 * file cannot redefine one); a user defined twice. Passwords (">", "#"), nopass and the
 * on/off state are the file's to set, in any case, as in Redis.
 *
 * All or nothing: one refused line refuses the file, like ACL LOAD (see
 * api_acl_file_parse).
 */
#ifndef REDIS_OPERATOR_API_ACL_FILE_H
#define REDIS_OPERATOR_API_ACL_FILE_H

#include <stddef.h>

#include "lib/err.h"

#define API_ACL_FILE_KEY       "acl" /* the Secret's key */
#define API_ACL_FILE_MAX       65536 /* longest file accepted, bytes */
#define API_ACL_FILE_USERS_MAX 256   /* users one file may define */

struct api_acl_file_user {
	char *name;
	unsigned line; /* 1-based */
	char **rules;  /* owned; may hold passwords: wipe on release */
	size_t nrules;
};

struct api_acl_file {
	struct api_acl_file_user *users;
	size_t n;
};

/*
 * Parses text (len bytes, need not be NUL-terminated) into out. taken: the names
 * spec.users defines (ntaken of them; NULL when 0). 0, or -EINVAL with e saying
 * "line N: why" (-E2BIG for a file over the limits) and out left empty: one refused
 * line refuses the whole file, so a file is never half applied and what a user has is
 * always what one version of the file says.
 */
int api_acl_file_parse(const char *text, size_t len, const char *const *taken, size_t ntaken,
                       struct api_acl_file *out, struct err *e);
/* The user named name, or NULL. */
const struct api_acl_file_user *api_acl_file_user(const struct api_acl_file *f, const char *name);
/* Frees and wipes everything f holds; f is left empty. NULL is allowed. */
void api_acl_file_release(struct api_acl_file *f);

#endif

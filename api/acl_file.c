/*
 * acl_file: the ACL file of spec.aclConfigSecret parsed and checked (see acl_file.h).
 * A line is split into tokens in place of a copy; each token is checked by the table of
 * refusals below, then the line's user by the name checks. Nothing here prints a token
 * other than a user's name.
 */
#include "api/acl_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

#define TOKENS_MAX 1024 /* tokens on one line */

/* The names the operator owns (acl.h of instance/: the default user, its own user). */
static const char *const reserved[] = { "default", "redis-operator" };

static bool printable(const char *t)
{
	for (const unsigned char *p = (const unsigned char *)t; *p; p++)
		if (*p < ' ' || *p > '~')
			return false;
	return true;
}

static bool hash_ok(const char *t)
{
	size_t n = strlen(t + 1);

	if (n != 64)
		return false;
	for (size_t i = 1; i <= n; i++)
		if (!isxdigit((unsigned char)t[i]))
			return false;
	return true;
}

/* Why one rule token is refused, or NULL. Keywords are not refused: a line defines a
 * whole user (passwords and on/off included), and inst_acl_deny follows every rule. */
static const char *rule_refusal(const char *t)
{
	if (!printable(t))
		return "a rule holds a control character or a non-ASCII byte";
	if (t[0] == '(' || t[strlen(t) - 1] == ')')
		return "a selector \"(...)\": selectors are refused, the operator's denials (ACL, "
		       "CONFIG, CLIENT KILL...) would not apply inside them";
	if ((t[0] == '#' || t[0] == '!') && !hash_ok(t))
		return "a password hash (# or !) must be 64 hex digits";
	return NULL;
}

static bool in_list(const char *name, const char *const *list, size_t n, bool any_case)
{
	for (size_t i = 0; i < n; i++)
		if (any_case ? strcasecmp(name, list[i]) == 0 : strcmp(name, list[i]) == 0)
			return true;
	return false;
}

static int name_check(const struct api_acl_file *f, const char *name, unsigned line,
                      const char *const *taken, size_t ntaken, struct err *e)
{
	const struct api_acl_file_user *dup = api_acl_file_user(f, name);

	if (!printable(name) || strchr("><#!(", name[0]))
		return err_set(e, -EINVAL,
		               "line %u: the user name is missing, starts like a "
		               "rule or holds a control character or a non-ASCII byte",
		               line);
	if (in_list(name, reserved, sizeof(reserved) / sizeof(reserved[0]), true))
		return err_set(e, -EINVAL,
		               "line %u: user %s belongs to the operator and cannot be "
		               "defined here",
		               line, name);
	if (in_list(name, taken, ntaken, false))
		return err_set(e, -EINVAL, "line %u: user %s is defined by spec.users, which wins",
		               line, name);
	if (dup)
		return err_set(e, -EINVAL, "line %u: user %s is already defined on line %u", line,
		               name, dup->line);
	return 0;
}

/* Splits line (modified) into tokens at spaces and tabs; the count, or -1 over max. */
static int split(char *line, char **tok, int max)
{
	char *save = NULL;
	int n = 0;

	for (char *p = strtok_r(line, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return -1;
		tok[n++] = p;
	}
	return n;
}

static int add_user(struct api_acl_file *f, char **tok, int n, unsigned line)
{
	struct api_acl_file_user *u;

	if (f->n == API_ACL_FILE_USERS_MAX)
		return -E2BIG;
	f->users = xreallocarray(f->users, f->n + 1, sizeof(*f->users));
	u = &f->users[f->n++];
	u->name = xstrdup(tok[1]);
	u->line = line;
	u->nrules = (size_t)(n - 2);
	u->rules = xcalloc(u->nrules + 1, sizeof(*u->rules));
	for (size_t i = 0; i < u->nrules; i++)
		u->rules[i] = xstrdup(tok[i + 2]);
	return 0;
}

static int parse_line(struct api_acl_file *f, char *line, unsigned no, const char *const *taken,
                      size_t ntaken, struct err *e)
{
	char *tok[TOKENS_MAX];
	const char *why;
	int n = split(line, tok, TOKENS_MAX), rc;

	if (n == 0 || tok[0][0] == '#')
		return 0;
	if (n < 0)
		return err_set(e, -E2BIG, "line %u: more than %d words", no, TOKENS_MAX);
	if (strcasecmp(tok[0], "user") != 0 || n < 2)
		return err_set(e, -EINVAL, "line %u: must be \"user <name> <rules>...\"", no);
	if ((rc = name_check(f, tok[1], no, taken, ntaken, e)) != 0)
		return rc;
	for (int i = 2; i < n; i++)
		if ((why = rule_refusal(tok[i])))
			return err_set(e, -EINVAL, "line %u (user %s), rule %d: %s", no, tok[1],
			               i - 1, why);
	if (add_user(f, tok, n, no))
		return err_set(e, -E2BIG, "line %u: more than %d users", no,
		               API_ACL_FILE_USERS_MAX);
	return 0;
}

int api_acl_file_parse(const char *text, size_t len, const char *const *taken, size_t ntaken,
                       struct api_acl_file *out, struct err *e)
{
	struct api_acl_file f = { 0 };
	char *copy, *line, *next;
	unsigned no = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (len > API_ACL_FILE_MAX)
		return err_set(e, -E2BIG, "longer than %d bytes", API_ACL_FILE_MAX);
	if (memchr(text, '\0', len))
		return err_set(e, -EINVAL, "holds a NUL byte: not a text file");
	copy = xstrndup(text, len);
	for (line = copy; !rc && line; line = next) {
		size_t l;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		l = strlen(line);
		if (l && line[l - 1] == '\r')
			line[l - 1] = '\0';
		rc = parse_line(&f, line, ++no, taken, ntaken, e);
	}
	secure_zero(copy, len);
	free(copy);
	if (rc)
		api_acl_file_release(&f);
	else
		*out = f;
	return rc;
}

const struct api_acl_file_user *api_acl_file_user(const struct api_acl_file *f, const char *name)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (strcmp(f->users[i].name, name) == 0)
			return &f->users[i];
	return NULL;
}

void api_acl_file_release(struct api_acl_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		for (size_t k = 0; k < f->users[i].nrules; k++)
			free_secret(f->users[i].rules[k]);
		free(f->users[i].rules);
		free(f->users[i].name);
	}
	free(f->users);
	memset(f, 0, sizeof(*f));
}

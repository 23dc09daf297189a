/*
 * acl_apply: the users of spec.aclConfigSecret's ACL file on the running server (see
 * internal.h, inst_acl_file_apply). Supervisor thread (the mutation connection).
 *
 * All or nothing, like ACL LOAD: the file is parsed against spec.users
 * (api/acl_file.h), then every line is tried on the server as a scratch user that is
 * off and has no password, so a rule the server refuses (an unknown command, a bad
 * pattern) refuses the file before any user changed. A refused file is logged with the
 * line and the reason (never a rule: it may be a password) and what was applied last
 * stays; the controller reports the same refusal on the cluster (controller/acl.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/log.h"

#define SCRATCH_USER "redis-operator-acl-check"

static void wipe(struct inst_strv *r)
{
	for (size_t i = 0; i < r->n; i++)
		secure_zero(r->v[i], strlen(r->v[i]));
	inst_strv_release(r);
}

/* ACL SETUSER name with the file line's rules; scratch: also off, no password. */
static int set_file_user(struct inst *in, const char *name, const struct api_acl_file_user *u,
                         bool scratch, struct err *e)
{
	struct inst_strv r = { 0 };
	int rc;

	inst_acl_rules(INST_ACL_FILE, false, NULL, u->rules, u->nrules, &r);
	if (scratch) {
		inst_strv_push(&r, "resetpass");
		inst_strv_push(&r, "off");
	}
	rc = vk_acl_setuser(in->server_conn, name, (const char *const *)r.v, r.n, e);
	wipe(&r);
	return rc;
}

/* Every line of f tried as the scratch user: 0, or -EINVAL with the first refused line. */
static int server_check(struct inst *in, const struct api_acl_file *f, struct err *e)
{
	int rc = 0;

	for (size_t i = 0; !rc && i < f->n; i++) {
		struct err se = { 0 };

		if (set_file_user(in, SCRATCH_USER, &f->users[i], true, &se) < 0)
			rc = err_set(e, -EINVAL, "line %u (user %s): the server refused a rule",
			             f->users[i].line, f->users[i].name);
	}
	(void)vk_command(in->server_conn, NULL, NULL, "ACL", "DELUSER", SCRATCH_USER);
	return rc;
}

/* The file in in->creds, checked: 0 with *out, or <0 with e (out empty). */
static int checked_file(struct inst *in, const struct inst_desired *d, struct api_acl_file *out,
                        struct err *e)
{
	const char **names = xcalloc(d->nusers + 1, sizeof(*names));
	int rc = 0;

	for (size_t i = 0; i < d->nusers; i++)
		names[i] = d->users[i].name;
	if (in->creds.acl_text)
		rc = api_acl_file_parse(in->creds.acl_text, in->creds.acl_len, names, d->nusers,
		                        out, e);
	else
		*out = (struct api_acl_file){ 0 };
	free(names);
	if (!rc && (rc = server_check(in, out, e)) != 0)
		api_acl_file_release(out);
	return rc;
}

int inst_acl_file_apply(struct inst *in, struct inst_desired *d, struct err *e)
{
	struct api_acl_file fresh;
	struct err fe = { 0 };
	int rc = 0;

	if (checked_file(in, d, &fresh, &fe) == 0) {
		api_acl_file_release(&d->acl);
		d->acl = fresh;
	} else {
		log_warn("ops",
		         "ACL file (spec.aclConfigSecret) refused: nothing of it applied, "
		         "the users applied before stay",
		         "pod", in->set.pod_name, "error", fe.msg, (char *)NULL);
	}
	for (size_t i = 0; !rc && i < d->acl.n; i++)
		if (!inst_desired_spec_user(d, d->acl.users[i].name))
			rc = set_file_user(in, d->acl.users[i].name, &d->acl.users[i], false, e);
	in->creds.acl_applied = rc == 0;
	return rc;
}

bool inst_acl_file_wants(const struct inst_desired *d, const char *name)
{
	return api_acl_file_user(&d->acl, name) && !inst_desired_spec_user(d, name);
}

/*
 * acl_config: spec.aclConfigSecret read, checked and reported (see acl_config.h). The
 * Secret is read from the API at each reconcile, like a user's auth Secret: the user's
 * Secrets are not in the controller's caches (informers.c watches its own children).
 */
#include "controller/acl_config.h"

#include <errno.h>
#include <string.h>

#include "api/acl_file.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/jsonx.h"

/* The verdict on the file text (len bytes), against spec.users. */
static char *verdict(const struct api_redis_cluster *rc, const char *sec, const char *text,
                     size_t len, bool *ok)
{
	const char **names = xcalloc(rc->spec.n_users + 1, sizeof(*names));
	struct api_acl_file f;
	struct err e = { 0 };
	char *msg;

	for (size_t i = 0; i < rc->spec.n_users; i++)
		names[i] = rc->spec.users[i].name;
	*ok = api_acl_file_parse(text, len, names, rc->spec.n_users, &f, &e) == 0;
	free(names);
	if (!*ok)
		return xasprintf("Secret %s (spec.aclConfigSecret), key %s: %s; nothing of it is "
		                 "applied, the users it defined before stay",
		                 sec, API_ACL_FILE_KEY, e.msg);
	msg = xasprintf("Secret %s (spec.aclConfigSecret): %zu user(s) accepted; each data "
	                "pod's manager sets them once its server also accepts every line",
	                sec, f.n);
	api_acl_file_release(&f);
	return msg;
}

char *ctl_acl_config_check(struct k8s_client *kube, const struct api_redis_cluster *rc, bool *ok)
{
	const char *name = rc->spec.acl_config_secret.name, *b64;
	json_t *sec = NULL;
	char *text = NULL, *msg;
	size_t len = 0;
	int rc_get;

	*ok = false;
	if (!name)
		return NULL;
	rc_get = k8s_get(kube, &k8s_res_secrets, rc->meta.namespace, name, &sec, NULL);
	if (rc_get == -ENOENT)
		return xasprintf("Secret %s (spec.aclConfigSecret) does not exist: none of its "
		                 "users is defined",
		                 name);
	if (rc_get)
		return NULL;
	b64 = jsonx_get_string(sec, "data." API_ACL_FILE_KEY);
	if (!b64)
		msg = xasprintf("Secret %s (spec.aclConfigSecret) has no key %s: none of its "
		                "users is defined",
		                name, API_ACL_FILE_KEY);
	else if (base64_decode(b64, strlen(b64), 0, &text, &len) < 0)
		msg = xasprintf("Secret %s (spec.aclConfigSecret), key %s: not base64", name,
		                API_ACL_FILE_KEY);
	else
		msg = verdict(rc, name, text, len, ok);
	if (text) {
		secure_zero(text, len);
		free(text);
	}
	json_decref(sec);
	return msg;
}

void ctl_acl_config_event(const struct ctl_view *v, struct ctl_plan *p)
{
	json_t *old =
	        jsonx_find(jsonx_get(v->obj, "status.conditions"), "type", CTL_COND_ACL_CONFIG);
	const char *was = jsonx_get_string(old, "message");

	if (v->rc->spec.acl_config_secret.name)
		ctl_plan_requeue(p, CTL_ACL_CONFIG_RECHECK_MS);
	if (!v->acl_config || v->acl_config_ok || (was && strcmp(was, v->acl_config) == 0))
		return;
	ctl_plan_event(p, true, CTL_REASON_ACL_REFUSED, "%s", v->acl_config);
}

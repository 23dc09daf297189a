/*
 * instance_v1_request: the bodies of POST /v1/<op> (see instance_v1.h). Each operation
 * lists the fields it accepts, its decoder and its encoder; anything else in a body is
 * an "unknown field" error, so a typo in a caller fails loudly instead of being ignored.
 * Errors keep lib/jsonx's errno (-EINVAL, -ENOENT, -ERANGE): the manager answers 400
 * with the message, whatever the errno.
 */
#include "api/instance_v1.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/jsonx.h"
#include "lib/k8s/path.h"
#include "lib/parse.h"

static const char *const f_fence[] = { "reason", NULL };
static const char *const f_none[] = { NULL };
static const char *const f_promote[] = { "force", NULL };
static const char *const f_replicate[] = { "host", "port", NULL };
static const char *const f_switchover[] = { "host", "port", "pod", "httpPort", "timeout", NULL };
static const char *const f_config[] = { "redis",           "maxMemory", "maxMemoryPolicy",
	                                "minSyncReplicas", "users",     API_INST_DROP_OLD_PASSWORDS,
	                                API_INST_RELOAD,   NULL };
static const char *const f_user[] = { "name", "enabled", "rules", "passwordSecrets", NULL };

static int d_fence(json_t *j, struct api_inst_request *r, struct err *e);
static int d_none(json_t *j, struct api_inst_request *r, struct err *e);
static int d_promote(json_t *j, struct api_inst_request *r, struct err *e);
static int d_replicate(json_t *j, struct api_inst_request *r, struct err *e);
static int d_switchover(json_t *j, struct api_inst_request *r, struct err *e);
static int d_config(json_t *j, struct api_inst_request *r, struct err *e);
static void e_fence(json_t *j, const struct api_inst_request *r);
static void e_none(json_t *j, const struct api_inst_request *r);
static void e_promote(json_t *j, const struct api_inst_request *r);
static void e_replicate(json_t *j, const struct api_inst_request *r);
static void e_switchover(json_t *j, const struct api_inst_request *r);
static void e_config(json_t *j, const struct api_inst_request *r);

static const struct {
	const char *name;
	const char *const *fields;
	int (*decode)(json_t *j, struct api_inst_request *r, struct err *e);
	void (*encode)(json_t *j, const struct api_inst_request *r);
} ops[API_INST_OP_COUNT] = {
	[API_INST_FENCE] = { "fence", f_fence, d_fence, e_fence },
	[API_INST_UNFENCE] = { "unfence", f_none, d_none, e_none },
	[API_INST_PROMOTE] = { "promote", f_promote, d_promote, e_promote },
	[API_INST_REPLICATE] = { "replicate", f_replicate, d_replicate, e_replicate },
	[API_INST_SWITCHOVER] = { "switchover", f_switchover, d_switchover, e_switchover },
	[API_INST_CONFIG] = { "config", f_config, d_config, e_config },
	[API_INST_RESTART] = { "restart", f_none, d_none, e_none },
	[API_INST_SENTINEL_FAILOVER] = { API_INST_SENTINEL_OP_FAILOVER, f_none, d_none, e_none },
	[API_INST_SENTINEL_RESET] = { API_INST_SENTINEL_OP_RESET, f_none, d_none, e_none },
};

const char *api_inst_op_name(enum api_inst_op op)
{
	return (unsigned)op < API_INST_OP_COUNT ? ops[op].name : NULL;
}

int api_inst_op_from_path(const char *path)
{
	if (strncmp(path, "/v1/", 4) != 0)
		return -1;
	for (int i = 0; i < API_INST_OP_COUNT; i++)
		if (strcmp(path + 4, ops[i].name) == 0)
			return i;
	return -1;
}

/* --- decoding ----------------------------------------------------------------------- */

/* A host name or address: printable, no spaces, no '/', at most API_INST_HOST_MAX. */
static bool host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > API_INST_HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (h[i] <= ' ' || h[i] > '~' || strchr("/\\@?#", h[i]))
			return false;
	return true;
}

static int get_host(json_t *j, bool required, const char **out, struct err *e)
{
	const char *s = NULL;
	int rc = required ? jsonx_string_req(j, "host", &s, e)
	                  : jsonx_string(j, "host", NULL, &s, e);

	if (rc || !s)
		return rc;
	if (!host_ok(s))
		return err_set(e, -EINVAL, "host: not a host name or address");
	*out = s;
	return 0;
}

static int d_none(json_t *j, struct api_inst_request *r, struct err *e)
{
	(void)j;
	(void)r;
	(void)e;
	return 0;
}

static int d_fence(json_t *j, struct api_inst_request *r, struct err *e)
{
	const char *s;
	int rc = jsonx_string(j, "reason", "requested", &s, e);

	if (rc)
		return rc;
	if (strlen(s) > API_INST_REASON_MAX)
		return err_set(e, -EINVAL, "reason: longer than %d bytes", API_INST_REASON_MAX);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < ' ')
			return err_set(e, -EINVAL, "reason: control characters are not allowed");
	r->reason = s;
	return 0;
}

static int d_promote(json_t *j, struct api_inst_request *r, struct err *e)
{
	return jsonx_bool(j, "force", false, &r->force, e);
}

static int d_replicate(json_t *j, struct api_inst_request *r, struct err *e)
{
	int rc = get_host(j, true, &r->host, e);

	return rc ? rc : jsonx_int_req(j, "port", 1, 65535, &r->port, e);
}

static int d_switchover(json_t *j, struct api_inst_request *r, struct err *e)
{
	const char *t = NULL;
	int rc;

	if ((rc = get_host(j, false, &r->host, e)) < 0 ||
	    (rc = jsonx_int(j, "port", 1, 65535, 0, &r->port, e)) < 0 ||
	    (rc = jsonx_string(j, "pod", NULL, &r->pod, e)) < 0 ||
	    (rc = jsonx_int(j, "httpPort", 1, 65535, API_PORT_HTTP, &r->http_port, e)) < 0 ||
	    (rc = jsonx_string(j, "timeout", NULL, &t, e)) < 0)
		return rc;
	if (!!r->pod == !!r->host)
		return err_set(e, -EINVAL, "pod, host: give exactly one of pod or host+port");
	if (r->host && !r->port)
		return err_set(e, -ENOENT, "port: required with host");
	if (r->pod && (strlen(r->pod) > API_INST_HOST_MAX || !k8s_name_is_valid(r->pod)))
		return err_set(e, -EINVAL, "pod: not a valid pod name");
	if (t && (parse_duration_ms(t, &r->timeout_ms, NULL) < 0 || r->timeout_ms < 1 ||
	          r->timeout_ms > API_INST_TIMEOUT_MAX_MS))
		return err_set(e, -EINVAL, "timeout: a duration between 1ms and 5m, such as 10s");
	return 0;
}

/* Messages relative to the user ("rules[1]: expected string, got integer"). */
static int rules_decode(json_t *u, struct api_user *out, struct err *e)
{
	json_t *a = NULL, *x;
	size_t i;
	int rc = jsonx_array(u, "rules", &a, e);

	if (rc || !json_array_size(a))
		return rc;
	out->rules = xcalloc(json_array_size(a), sizeof(*out->rules));
	json_array_foreach (a, i, x) {
		if (!json_is_string(x))
			return err_set(e, -EINVAL, "rules[%zu]: expected string, got %s", i,
			               jsonx_type_name(x));
		out->rules[out->n_rules++] = json_string_value(x);
	}
	return 0;
}

static int user_decode(json_t *u, const char *path, struct api_user *out, struct err *e)
{
	struct err ie = { 0 };
	int rc;

	if (!json_is_object(u))
		return err_set(e, -EINVAL, "%s: expected object, got %s", path, jsonx_type_name(u));
	if ((rc = jsonx_only_fields(u, "", f_user, &ie)) < 0 ||
	    (rc = jsonx_string_req(u, "name", &out->name, &ie)) < 0 ||
	    (rc = jsonx_bool(u, "enabled", true, &out->enabled, &ie)) < 0 ||
	    (rc = rules_decode(u, out, &ie)) < 0)
		return err_set(e, rc, "%s.%s", path, ie.msg);
	return 0;
}

static int users_decode(json_t *arr, struct api_inst_config *c, struct err *e)
{
	char path[48];
	size_t i;
	json_t *u;
	int rc;

	if (!json_array_size(arr))
		return 0;
	c->users = xcalloc(json_array_size(arr), sizeof(*c->users));
	json_array_foreach (arr, i, u) {
		snprintf(path, sizeof(path), "users[%zu]", i);
		rc = user_decode(u, path, &c->users[c->n_users++], e);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int memory_decode(json_t *j, struct api_inst_config *c, struct err *e)
{
	const char *mm = NULL, *pol = NULL;
	struct err ie = { 0 };
	int rc = jsonx_string(j, "maxMemory", NULL, &mm, e);

	if (!rc)
		rc = jsonx_string(j, "maxMemoryPolicy", NULL, &pol, e);
	if (rc)
		return rc;
	c->max_memory_policy = api_maxmemory_policy_from_name(pol);
	if (pol && !c->max_memory_policy)
		return err_set(e, -EINVAL, "maxMemoryPolicy: unknown policy");
	if (mm && parse_quantity_bytes(mm, &c->max_memory, &ie) < 0)
		return err_set(e, -EINVAL, "maxMemory: %s", ie.msg);
	c->has_max_memory = mm != NULL;
	return 0;
}

static int d_config(json_t *j, struct api_inst_request *r, struct err *e)
{
	struct api_inst_config *c = &r->config;
	json_t *users = NULL, *v;
	const char *k;
	int rc;

	if ((rc = jsonx_bool(j, API_INST_DROP_OLD_PASSWORDS, false, &c->drop_old_passwords, e)) <
	            0 ||
	    (rc = jsonx_bool(j, API_INST_RELOAD, false, &c->reload, e)) < 0 ||
	    (rc = jsonx_object(j, "redis", &c->redis, e)) < 0 ||
	    (rc = jsonx_array(j, "users", &users, e)) < 0 ||
	    (rc = jsonx_int(j, "minSyncReplicas", 0, API_INST_MIN_SYNC_MAX, 0,
	                    &c->min_sync_replicas, e)) < 0 ||
	    (rc = memory_decode(j, c, e)) < 0)
		return rc;
	json_object_foreach (c->redis, k, v) {
		if (!json_is_string(v))
			return err_set(e, -EINVAL, "redis.%s: expected string, got %s", k,
			               jsonx_type_name(v));
	}
	return users_decode(users, c, e);
}

int api_inst_request_decode(enum api_inst_op op, const char *body, size_t len,
                            struct api_inst_request *out, struct err *e)
{
	struct api_inst_request r = { .op = op };
	int rc;

	if ((unsigned)op >= API_INST_OP_COUNT)
		return err_set(e, -EINVAL, "unknown operation");
	if (len > API_INST_BODY_MAX)
		return err_set(e, -EMSGSIZE, "body: larger than %d bytes", API_INST_BODY_MAX);
	if (len == 0)
		r.json = json_object();
	else if ((rc = jsonx_loadb(body, len, API_INST_BODY_MAX, &r.json, e)) < 0)
		return rc;
	if (!json_is_object(r.json))
		rc = err_set(e, -EINVAL, "body: expected a JSON object, got %s",
		             jsonx_type_name(r.json));
	else
		rc = jsonx_only_fields(r.json, "", ops[op].fields, e);
	if (!rc)
		rc = ops[op].decode(r.json, &r, e);
	if (rc) {
		api_inst_request_release(&r);
		return rc;
	}
	*out = r;
	return 0;
}

void api_inst_request_release(struct api_inst_request *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->config.n_users; i++)
		free(r->config.users[i].rules);
	free(r->config.users);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

/* --- encoding ----------------------------------------------------------------------- */

static void e_none(json_t *j, const struct api_inst_request *r)
{
	(void)j;
	(void)r;
}

static void e_fence(json_t *j, const struct api_inst_request *r)
{
	if (r->reason)
		json_object_set_new(j, "reason", json_string(r->reason));
}

static void e_promote(json_t *j, const struct api_inst_request *r)
{
	json_object_set_new(j, "force", json_boolean(r->force));
}

static void e_replicate(json_t *j, const struct api_inst_request *r)
{
	json_object_set_new(j, "host", json_string(r->host ? r->host : ""));
	json_object_set_new(j, "port", json_integer(r->port));
}

static void e_switchover(json_t *j, const struct api_inst_request *r)
{
	char t[32];

	if (r->host)
		e_replicate(j, r);
	if (r->pod)
		json_object_set_new(j, "pod", json_string(r->pod));
	if (r->http_port)
		json_object_set_new(j, "httpPort", json_integer(r->http_port));
	if (r->timeout_ms) {
		snprintf(t, sizeof(t), "%lldms", (long long)r->timeout_ms);
		json_object_set_new(j, "timeout", json_string(t));
	}
}

static json_t *users_encode(const struct api_user *users, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		const struct api_user *u = &users[i];
		json_t *rules = json_array();

		for (size_t k = 0; k < u->n_rules; k++)
			json_array_append_new(rules, json_string(u->rules[k]));
		json_array_append_new(a, json_pack("{s:s,s:b,s:o}", "name", u->name, "enabled",
		                                   u->enabled, "rules", rules));
	}
	return a;
}

static void e_config(json_t *j, const struct api_inst_request *r)
{
	const struct api_inst_config *c = &r->config;
	const char *pol = api_maxmemory_policy_name(c->max_memory_policy);
	char num[32];

	json_object_set_new(j, "minSyncReplicas", json_integer(c->min_sync_replicas));
	json_object_set_new(j, "users", users_encode(c->users, c->n_users));
	json_object_set_new(j, "redis", c->redis ? json_deep_copy(c->redis) : json_object());
	if (c->has_max_memory) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)c->max_memory);
		json_object_set_new(j, "maxMemory", json_string(num));
	}
	if (pol)
		json_object_set_new(j, "maxMemoryPolicy", json_string(pol));
	if (c->drop_old_passwords)
		json_object_set_new(j, API_INST_DROP_OLD_PASSWORDS, json_true());
	if (c->reload)
		json_object_set_new(j, API_INST_RELOAD, json_true());
}

json_t *api_inst_request_encode(const struct api_inst_request *r)
{
	json_t *j = json_object();

	if ((unsigned)r->op < API_INST_OP_COUNT)
		ops[r->op].encode(j, r);
	return j;
}

/*
 * request: per-operation field tables and decoders (see request.h). Each operation
 * lists the fields it accepts; anything else is an "unknown field" error, so a typo
 * in the controller fails loudly instead of being ignored.
 */
#include "request.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/jsonx.h"
#include "lib/k8s/path.h"
#include "lib/parse.h"

static const char *const f_fence[] = { "reason", NULL };
static const char *const f_none[] = { NULL };
static const char *const f_promote[] = { "force", NULL };
static const char *const f_replicate[] = { "host", "port", NULL };
static const char *const f_switchover[] = { "host", "port", "pod", "httpPort", "timeout", NULL };
static const char *const f_config[] = {
	"redis", "maxMemory", "maxMemoryPolicy", "minSyncReplicas", "users", "dropOldPasswords",
	NULL
};

static int p_fence(json_t *j, struct inst_request *r, struct err *e);
static int p_none(json_t *j, struct inst_request *r, struct err *e);
static int p_promote(json_t *j, struct inst_request *r, struct err *e);
static int p_replicate(json_t *j, struct inst_request *r, struct err *e);
static int p_switchover(json_t *j, struct inst_request *r, struct err *e);
static int p_config(json_t *j, struct inst_request *r, struct err *e);

static const struct {
	const char *name;
	const char *const *fields;
	int (*parse)(json_t *j, struct inst_request *r, struct err *e);
} ops[INST_OP_COUNT] = {
	[INST_OP_FENCE] = { "fence", f_fence, p_fence },
	[INST_OP_UNFENCE] = { "unfence", f_none, p_none },
	[INST_OP_PROMOTE] = { "promote", f_promote, p_promote },
	[INST_OP_REPLICATE] = { "replicate", f_replicate, p_replicate },
	[INST_OP_SWITCHOVER] = { "switchover", f_switchover, p_switchover },
	[INST_OP_CONFIG] = { "config", f_config, p_config },
	[INST_OP_RESTART] = { "restart", f_none, p_none },
};

const char *inst_op_name(enum inst_op op)
{
	return (unsigned)op < INST_OP_COUNT ? ops[op].name : NULL;
}

int inst_op_from_path(const char *path)
{
	if (strncmp(path, "/v1/", 4) != 0)
		return -1;
	for (int i = 0; i < INST_OP_COUNT; i++)
		if (strcmp(path + 4, ops[i].name) == 0)
			return i;
	return -1;
}

/* A host name or address: printable, no spaces, no '/', at most INST_HOST_MAX. */
static bool host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > INST_HOST_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (h[i] <= ' ' || h[i] > '~' || strchr("/\\@?#", h[i]))
			return false;
	return true;
}

static int get_host(json_t *j, const char *field, bool required, char *out, struct err *e)
{
	const char *s = NULL;
	int rc = required ? jsonx_string_req(j, field, &s, e) : jsonx_string(j, field, NULL, &s, e);

	if (rc || !s)
		return rc;
	if (!host_ok(s))
		return err_set(e, -EINVAL, "%s: not a host name or address", field);
	snprintf(out, INST_HOST_MAX + 1, "%s", s);
	return 0;
}

static int p_none(json_t *j, struct inst_request *r, struct err *e)
{
	(void)j;
	(void)r;
	(void)e;
	return 0;
}

static int p_fence(json_t *j, struct inst_request *r, struct err *e)
{
	const char *s;
	int rc = jsonx_string(j, "reason", "requested", &s, e);

	if (rc)
		return rc;
	if (strlen(s) > INST_REASON_MAX)
		return err_set(e, -EINVAL, "reason: longer than %d bytes", INST_REASON_MAX);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < ' ')
			return err_set(e, -EINVAL, "reason: control characters are not allowed");
	snprintf(r->reason, sizeof(r->reason), "%s", s);
	return 0;
}

static int p_promote(json_t *j, struct inst_request *r, struct err *e)
{
	return jsonx_bool(j, "force", false, &r->force, e);
}

static int p_replicate(json_t *j, struct inst_request *r, struct err *e)
{
	int64_t port;
	int rc = get_host(j, "host", true, r->host, e);

	if (!rc)
		rc = jsonx_int_req(j, "port", 1, 65535, &port, e);
	if (!rc)
		r->port = (int)port;
	return rc;
}

static int p_switchover(json_t *j, struct inst_request *r, struct err *e)
{
	int64_t port = 0, hport = 0;
	const char *pod = NULL, *t = NULL;
	int rc;

	if ((rc = get_host(j, "host", false, r->host, e)) < 0 ||
	    (rc = jsonx_int(j, "port", 1, 65535, 0, &port, e)) < 0 ||
	    (rc = jsonx_string(j, "pod", NULL, &pod, e)) < 0 ||
	    (rc = jsonx_int(j, "httpPort", 1, 65535, INST_HTTP_PORT_DEFAULT, &hport, e)) < 0 ||
	    (rc = jsonx_string(j, "timeout", NULL, &t, e)) < 0)
		return rc;
	if (!!pod == !!r->host[0])
		return err_set(e, -EINVAL, "pod, host: give exactly one of pod or host+port");
	if (r->host[0] && !port)
		return err_set(e, -ENOENT, "port: required with host");
	if (pod && !k8s_name_is_valid(pod))
		return err_set(e, -EINVAL, "pod: not a valid pod name");
	if (t && (parse_duration_ms(t, &r->timeout_ms, NULL) < 0 || r->timeout_ms < 1 ||
	          r->timeout_ms > 300000))
		return err_set(e, -EINVAL, "timeout: a duration between 1ms and 5m, such as 10s");
	if (pod)
		snprintf(r->pod, sizeof(r->pod), "%s", pod);
	r->port = (int)port;
	r->http_port = (int)hport;
	return 0;
}

static int p_config(json_t *j, struct inst_request *r, struct err *e)
{
	int rc = jsonx_bool(j, "dropOldPasswords", false, &r->drop_old_passwords, e);

	if (rc)
		return rc;
	rc = inst_desired_decode(j, false, "", 0, &r->config, e);
	r->has_config = rc == 0;
	return rc;
}

static int check_fields(json_t *j, const char *const *fields, struct err *e)
{
	const char *k;
	json_t *v;

	json_object_foreach (j, k, v) {
		size_t i;

		for (i = 0; fields[i] && strcmp(fields[i], k) != 0; i++)
			;
		if (!fields[i])
			return err_set(e, -EINVAL, "%s: unknown field", k);
	}
	return 0;
}

int inst_request_parse(enum inst_op op, const char *body, size_t len, struct inst_request *out,
                       struct err *e)
{
	struct inst_request r = { .op = op };
	json_t *j = NULL;
	int rc;

	if ((unsigned)op >= INST_OP_COUNT)
		return err_set(e, -EINVAL, "unknown operation");
	if (len > INST_HTTP_BODY_MAX)
		return err_set(e, -EMSGSIZE, "body: larger than %d bytes", INST_HTTP_BODY_MAX);
	if (len == 0)
		j = json_object();
	else if ((rc = jsonx_loadb(body, len, INST_HTTP_BODY_MAX, &j, e)) < 0)
		return rc;
	if (!json_is_object(j)) {
		rc = err_set(e, -EINVAL, "body: expected a JSON object, got %s",
		             jsonx_type_name(j));
		goto out;
	}
	rc = check_fields(j, ops[op].fields, e);
	if (!rc)
		rc = ops[op].parse(j, &r, e);
	if (!rc)
		*out = r;
	else
		inst_request_release(&r);
out:
	json_decref(j);
	return rc;
}

void inst_request_release(struct inst_request *r)
{
	if (!r)
		return;
	if (r->has_config)
		inst_desired_release(&r->config);
	r->has_config = false;
}

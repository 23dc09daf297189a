/*
 * request: a /v1/<op> body → struct inst_request (see request.h). The shape is decoded
 * by the contract (api/instance_v1.h); a /v1/config body then goes through the same
 * checks as the RedisCluster's live part (inst_desired_from_config, instance/spec.h).
 */
#include "request.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *inst_op_name(enum inst_op op)
{
	return api_inst_op_name((enum api_inst_op)op);
}

int inst_op_from_path(const char *path)
{
	return api_inst_op_from_path(path);
}

/* Everything but config: copied into fixed-size fields (the decoder bounded them). */
static void copy_fields(const struct api_inst_request *a, struct inst_request *r)
{
	snprintf(r->reason, sizeof(r->reason), "%s", a->reason ? a->reason : "");
	r->force = a->force;
	snprintf(r->host, sizeof(r->host), "%s", a->host ? a->host : "");
	r->port = (int)a->port;
	snprintf(r->pod, sizeof(r->pod), "%s", a->pod ? a->pod : "");
	r->http_port = (int)a->http_port;
	r->timeout_ms = a->timeout_ms;
}

int inst_request_parse(enum inst_op op, const char *body, size_t len, struct inst_request *out,
                       struct err *e)
{
	struct inst_request r = { .op = op };
	struct api_inst_request a;
	int rc = api_inst_request_decode((enum api_inst_op)op, body, len, &a, e);

	if (rc)
		return rc;
	copy_fields(&a, &r);
	if (op == INST_OP_CONFIG) {
		rc = inst_desired_from_config(&a.config, &r.config, e);
		r.has_config = rc == 0;
		r.drop_old_passwords = a.config.drop_old_passwords;
		r.reload = a.config.reload;
	}
	api_inst_request_release(&a);
	if (!rc)
		*out = r;
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

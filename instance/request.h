/*
 * request: the bodies of the instance manager's mutating HTTP endpoints, parsed and
 * validated before anything acts on them. Pure functions over (ptr, len): unit-tested
 * on a table of good and bad bodies and fuzzed (test/fuzz/fuzz_instance_request.c).
 *
 * The bodies and their field names are the contract's (api/instance_v1.h, which decodes
 * their shape); this module adds what the manager refuses on its own authority (the
 * /v1/config checks of instance/spec.h: directives, users, ACL rules) and copies the
 * result into fixed-size fields. An empty body is {}. Bodies larger than
 * INST_HTTP_BODY_MAX, malformed JSON, a top level that is not an object, unknown fields
 * and wrong types are refused; the message names the field ("port: 70000 is out of
 * range [1, 65535]"). The output is written only on success. Any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_REQUEST_H
#define REDIS_OPERATOR_INSTANCE_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "instance/spec.h"
#include "lib/err.h"

#define INST_HTTP_BODY_MAX     API_INST_BODY_MAX /* request bodies are capped at this */
#define INST_HOST_MAX          API_INST_HOST_MAX
#define INST_REASON_MAX        API_INST_REASON_MAX
#define INST_HTTP_PORT_DEFAULT API_PORT_HTTP

enum inst_op {
	INST_OP_FENCE = API_INST_FENCE,
	INST_OP_UNFENCE = API_INST_UNFENCE,
	INST_OP_PROMOTE = API_INST_PROMOTE,
	INST_OP_REPLICATE = API_INST_REPLICATE,
	INST_OP_SWITCHOVER = API_INST_SWITCHOVER,
	INST_OP_CONFIG = API_INST_CONFIG,
	INST_OP_RESTART = API_INST_RESTART,
	INST_OP_SENTINEL_FAILOVER = API_INST_SENTINEL_FAILOVER, /* --role sentinel only */
	INST_OP_SENTINEL_RESET = API_INST_SENTINEL_RESET,
	INST_OP_COUNT = API_INST_OP_COUNT,
};

struct inst_request {
	enum inst_op op;
	char reason[INST_REASON_MAX + 1]; /* fence */
	bool force;                       /* promote */
	char host[INST_HOST_MAX + 1];     /* replicate, switchover */
	int port;
	char pod[INST_HOST_MAX + 1]; /* switchover by pod name */
	int http_port;               /* switchover: the target's manager port */
	int64_t timeout_ms;          /* switchover; 0: the cluster's switchoverTimeout */
	bool has_config;             /* config: */
	struct inst_desired config;
	bool drop_old_passwords;
	bool reload; /* config: inst_reload_files first */
};

/* "fence", "unfence", …; NULL for an unknown op. */
const char *inst_op_name(enum inst_op op);
/* The op for a path "/v1/<name>", or -1. */
int inst_op_from_path(const char *path);

int inst_request_parse(enum inst_op op, const char *body, size_t len, struct inst_request *out,
                       struct err *e);
void inst_request_release(struct inst_request *r);

#endif

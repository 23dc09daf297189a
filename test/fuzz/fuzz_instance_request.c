/*
 * libFuzzer harness for instance/request: inst_request_parse over arbitrary bytes, for
 * every operation, must never crash, leak or read out of bounds; a success must leave
 * a consistent request, a failure a message.
 *
 *   make BUILD=build/x fuzz FUZZERS=instance_request FUZZ_SECONDS=60   (test/fuzz/fuzz.mk)
 * Seeds: test/data/instance_request (one per operation).
 * The first byte picks the operation; the rest is the body.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "instance/request.h"
#include "lib/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int installed;
	struct inst_request r;
	struct err e;
	enum inst_op op;

	if (!installed) {
		alloc_install_jansson();
		installed = 1;
	}
	if (size < 1)
		return 0;
	op = (enum inst_op)(data[0] % (INST_OP_COUNT + 1));
	err_clear(&e);
	memset(&r, 0xa5, sizeof(r));
	if (inst_request_parse(op, (const char *)data + 1, size - 1, &r, &e) == 0) {
		assert(r.op == op && e.code == 0);
		assert(strlen(r.host) <= INST_HOST_MAX && strlen(r.reason) <= INST_REASON_MAX);
		assert(op != INST_OP_REPLICATE || (r.port >= 1 && r.port <= 65535 && r.host[0]));
		assert(op != INST_OP_SWITCHOVER || (!r.pod[0] != !r.host[0]));
		assert(op != INST_OP_CONFIG || r.has_config);
		for (size_t i = 0; r.has_config && i < r.config.nusers; i++)
			assert(r.config.users[i].name && r.config.users[i].name[0]);
		inst_request_release(&r);
	} else {
		assert(e.code < 0 && e.msg[0] != '\0');
	}
	return 0;
}

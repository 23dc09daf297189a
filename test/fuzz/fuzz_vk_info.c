/*
 * libFuzzer harness for lib/valkey/info: vk_info_parse and vk_info_get over arbitrary
 * bytes must never crash, read out of bounds or break the struct's invariants.
 *
 *   make BUILD=build/x fuzz FUZZERS=vk_info FUZZ_SECONDS=30   (test/fuzz/fuzz.mk)
 * Seeds: the INFO golden files of test/data/valkey.
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/valkey/info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct vk_info info;
	struct err e;
	char out[32];

	err_clear(&e);
	if (vk_info_parse(text, size, &info, &e) == 0) {
		assert(e.code == 0);
		assert(info.nreplicas <= VK_INFO_MAX_REPLICAS &&
		       info.nreplicas <= info.nreplicas_seen);
		assert(info.ndbs <= VK_INFO_MAX_DBS && info.ndbs <= info.ndbs_seen);
		assert(strlen(info.master_host) < sizeof(info.master_host));
		assert(strlen(info.run_id) < sizeof(info.run_id));
		assert(info.engine == VK_ENGINE_UNKNOWN || info.version != 0 ||
		       strcmp(info.engine_version, "0.0.0") == 0);
	} else {
		assert(e.code < 0 && e.msg[0] != '\0');
	}
	/* A field name taken from the input itself, so hits are likely. */
	if (size > 1) {
		size_t n = data[0] % 24;
		char field[25];

		if (n > size - 1)
			n = size - 1;
		memcpy(field, data + 1, n);
		field[n] = '\0';
		(void)vk_info_get(text, size, field, out, sizeof(out));
	}
	(void)vk_info_get(text, size, "role", out, sizeof(out));
	return 0;
}

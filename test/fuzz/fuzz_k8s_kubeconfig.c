/*
 * libFuzzer harness for lib/k8s/config's kubeconfig loader: k8s_config_from_kubeconfig
 * over arbitrary bytes must never crash, leak or read out of bounds; on success the
 * config has a server URL, and on failure a negative errno with a message. Relative file
 * references resolve under a directory that does not exist, so the harness reads no
 * files except absolute paths the input names (run it with stdin from /dev/null).
 *
 *   make BUILD=build/x fuzz FUZZERS=k8s_kubeconfig   (test/fuzz/fuzz.mk; test/fuzz/run.sh)
 *   build/x/fuzz/fuzz_k8s_kubeconfig -max_total_time=20 corpus/ test/data/k8s_config
 */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/k8s/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct k8s_config_opts o = { .kubeconfig = "/nonexistent-fuzz-dir/kubeconfig" };
	struct k8s_config *cfg = NULL;
	static int once;
	struct err e;
	int rc;

	if (!once) {
		alloc_install_jansson();
		once = 1;
	}
	err_clear(&e);
	rc = k8s_config_from_kubeconfig((const char *)data, size, &o, &cfg, &e);
	if (rc == 0) {
		assert(cfg && cfg->server && cfg->server[0]);
		k8s_config_free(cfg);
	} else {
		assert(rc < 0 && e.code == rc && e.msg[0] && !cfg);
	}
	o.allow_insecure = true; /* the other branch of insecure-skip-tls-verify */
	cfg = NULL;
	if (k8s_config_from_kubeconfig((const char *)data, size, &o, &cfg, NULL) == 0)
		k8s_config_free(cfg);
	return 0;
}

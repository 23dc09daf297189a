/* fault: test fault points armed from the environment (see fault.h). */
#include "instance/fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/parse.h"

static const char *const names[INST_FAULT_COUNT] = {
	[INST_FAULT_SWITCHOVER_DEMOTION] = "switchover-demotion-refused",
};

static atomic_int armed[INST_FAULT_COUNT];

static int arm_one(const char *entry, size_t len, struct err *e)
{
	const char *colon = memchr(entry, ':', len);
	char count[16];
	int64_t n;

	for (int f = 0; colon && f < INST_FAULT_COUNT; f++) {
		size_t nlen = (size_t)(colon - entry), clen = len - nlen - 1;

		if (strlen(names[f]) != nlen || strncmp(names[f], entry, nlen) != 0)
			continue;
		if (clen == 0 || clen >= sizeof(count))
			break;
		memcpy(count, colon + 1, clen);
		count[clen] = '\0';
		if (parse_int64(count, 1, 1000000, &n, NULL) < 0)
			break;
		atomic_store(&armed[f], (int)n);
		log_warn("fault", "test fault point armed", "fault", names[f], "count", count,
		         (char *)NULL);
		return 0;
	}
	return err_set(e, -EINVAL,
	               "%s: '%.*s' is not name:count (names: switchover-demotion-refused; count "
	               "1..1000000)",
	               INST_FAULTS_ENV, (int)len, entry);
}

int inst_faults_arm(const char *spec, struct err *e)
{
	while (spec && *spec) {
		size_t len = strcspn(spec, ",");
		int rc = arm_one(spec, len, e);

		if (rc)
			return rc;
		spec += len + (spec[len] == ',');
	}
	return 0;
}

bool inst_fault_hit(enum inst_fault f)
{
	int v = atomic_load(&armed[f]);

	while (v > 0 && !atomic_compare_exchange_weak(&armed[f], &v, v - 1))
		;
	return v > 0;
}

/*
 * fault: named fault points that tests arm to make the manager meet failures the real
 * servers cannot be made to produce on cue (a REPLICAOF refused exactly during a
 * switchover). Armed only by the environment variable
 *
 *   REDIS_OPERATOR_FAULTS="switchover-demotion-refused:2"   (name:count, comma-separated)
 *
 * read once at start: the next `count` hits of that point fail. The controller never sets
 * it in the pods it creates; an unknown name or a bad count is a start-up error (exit 2),
 * never ignored. Thread-safe (atomic counters).
 */
#ifndef REDIS_OPERATOR_INSTANCE_FAULT_H
#define REDIS_OPERATOR_INSTANCE_FAULT_H

#include <stdbool.h>

#include "lib/err.h"

#define INST_FAULTS_ENV "REDIS_OPERATOR_FAULTS"

enum inst_fault {
	/* "switchover-demotion-refused": every REPLICAOF of one switchover's demotion fails
	 * (one hit per switchover; the controller's later /v1/replicate is not affected) */
	INST_FAULT_SWITCHOVER_DEMOTION,
	INST_FAULT_COUNT,
};

/* Parses spec (NULL or "": nothing armed). 0, or -EINVAL naming the bad entry. */
int inst_faults_arm(const char *spec, struct err *e);
/* True when fault f is armed; consumes one hit. */
bool inst_fault_hit(enum inst_fault f);

#endif

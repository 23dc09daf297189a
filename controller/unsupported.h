/*
 * unsupported: the one table of every RedisCluster spec field and what the operator does
 * with it, and the report of the fields a cluster sets that nothing acts on (issue 23: no
 * field is accepted and silently ignored).
 *
 * A row names a field by its path under spec as the CRD spells it ("storage.size",
 * "users[].rules") and covers that field and everything below it. It is either
 * CTL_FIELD_ACTED, naming the test that shows the operator act on it as "<file>: <test>"
 * (a Check test, a shell check function or a named case of that file), or
 * CTL_FIELD_UNSUPPORTED, with the reason. A row may single out one value of its field
 * (mode = cluster) when only that value is unsupported (or only that value is shown by
 * another test). An unsupported row counts for a cluster when its predicate says the
 * field is in effect (replicaMode.enabled true...) or, without one, when the field is in
 * the stored spec.
 *
 * test_controller_unsupported walks every property of the CRD's spec and fails on one no
 * row covers that is no parent of a row (a new CRD field without a decision fails `make
 * unit`), on a row the CRD lacks, and on an acted-on row whose test does not exist.
 *
 * A cluster that sets unsupported fields gets the condition CTL_COND_UNSUPPORTED (True,
 * the message naming each field path and why; absent otherwise) and a Warning Event of the
 * same reason whenever that message changes. Nothing else changes: the controller manages
 * what it can. mode: cluster also ends the plan (phase Unsupported, plan.c step_mode),
 * since nothing would manage such a cluster safely.
 *
 * Constant table, pure functions: any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_UNSUPPORTED_H
#define REDIS_OPERATOR_CONTROLLER_UNSUPPORTED_H

#include <stdbool.h>
#include <stddef.h>

#include "api/rediscluster.h"
#include "controller/actions.h"
#include "controller/view.h"

#define CTL_COND_UNSUPPORTED   "UnsupportedFields"
#define CTL_REASON_UNSUPPORTED "UnsupportedFields"
/* The condition's message (the CRD allows 32768); a longer list is cut at a field. */
#define CTL_UNSUPPORTED_MSG_MAX 4096

enum ctl_field_verdict {
	CTL_FIELD_ACTED = 1,
	CTL_FIELD_UNSUPPORTED,
};

struct ctl_field {
	const char *path;  /* under spec: "storage.size", "users[].rules" */
	const char *value; /* NULL: the field; else the one value the row is about */
	enum ctl_field_verdict verdict;
	const char *text; /* acted: "<test file>: <test name>"; unsupported: why */
	/* unsupported: whether rc puts the field (value) in effect; NULL: present in spec */
	bool (*in_effect)(const struct api_redis_cluster *rc);
};

extern const struct ctl_field ctl_fields[];
extern const size_t ctl_n_fields;

/*
 * The unsupported fields rc puts in effect, as "spec.PATH[: VALUE]: WHY; ..." in the
 * table's order, into out (size bytes, always terminated; a field that does not fit is
 * left out whole). Returns how many fields are in effect (also those left out); 0 leaves
 * out "".
 */
size_t ctl_unsupported_message(const struct api_redis_cluster *rc, char *out, size_t size);

/*
 * Adds a Warning Event CTL_REASON_UNSUPPORTED naming the fields when the cluster puts
 * unsupported fields in effect and its status does not show the condition with the same
 * message yet (so once per change, not per reconcile).
 */
void ctl_unsupported_event(const struct ctl_view *v, struct ctl_plan *p);

#endif

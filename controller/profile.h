/*
 * profile: the workload profile, the controller's tunables derived from how much it
 * manages (pure).
 *
 * A new leader counts the RedisClusters and the pods its caches hold, picks the first
 * row of the table that both counts fit, and runs with that row's reconcile workers and
 * Kubernetes API rate, unless a tunable was given (--workers, --kube-api-qps,
 * --kube-api-burst, or their REDIS_OPERATOR_* variables, left at 0: "from the profile").
 * It logs the choice: what was counted, what was chosen, and which values were given
 * instead. While leading it counts again every minute, and a fleet that outgrew its row
 * gets the larger row's rate and extra workers at once; a profile never shrinks (a
 * smaller fleet keeps them until the next leader). The rate is a ceiling either way:
 * the API server's 429s lower it (lib/k8s/rate.h).
 *
 *   | profile | clusters | pods    | workers | qps | burst |
 *   | small   | ≤ 50     | ≤ 200   | 4       | 50  | 100   |
 *   | medium  | ≤ 300    | ≤ 1,200 | 8       | 100 | 200   |
 *   | large   | more     | more    | 16      | 200 | 400   |
 *
 * Why these: a cluster's reconcile is short (caches, then a few writes); what bounds a
 * fleet's creation and its recovery after a restart is the write budget and the
 * workers that spend it. The small row keeps the old fixed defaults (4 workers, 50
 * qps); a thousand clusters at 50 qps took 808 s to become Ready (docs/benchmarks.md).
 */
#ifndef REDIS_OPERATOR_CONTROLLER_PROFILE_H
#define REDIS_OPERATOR_CONTROLLER_PROFILE_H

#include <stddef.h>
#include <stdint.h>

struct ctl_profile {
	const char *name;
	size_t max_clusters, max_pods; /* this row while both fit; SIZE_MAX: any */
	int workers;
	int qps, burst;
};

/* What a leader runs with: each value the setting's when given (> 0), else the row's. */
struct ctl_tunables {
	const struct ctl_profile *profile;
	int workers;
	double qps;
	int burst;
	unsigned given; /* CTL_TUNABLE_* bits: the values a setting gave */
};

#define CTL_TUNABLE_WORKERS 1u
#define CTL_TUNABLE_QPS     2u
#define CTL_TUNABLE_BURST   4u

const struct ctl_profile *ctl_profile_pick(size_t clusters, size_t pods);

/* Settings of 0 take the profile's value. */
void ctl_profile_tunables(const struct ctl_profile *p, int64_t workers, int64_t qps, int64_t burst,
                          struct ctl_tunables *out);

#endif

/*
 * profile: the table of workload profiles and the choice (see profile.h).
 */
#include "controller/profile.h"

#include <stdint.h>

static const struct ctl_profile profiles[] = {
	{ "small", 50, 200, 4, 50, 100 },
	{ "medium", 300, 1200, 8, 100, 200 },
	{ "large", SIZE_MAX, SIZE_MAX, 16, 200, 400 },
};

const struct ctl_profile *ctl_profile_pick(size_t clusters, size_t pods)
{
	size_t i = 0;

	while (i + 1 < sizeof(profiles) / sizeof(profiles[0]) &&
	       (clusters > profiles[i].max_clusters || pods > profiles[i].max_pods))
		i++;
	return &profiles[i];
}

void ctl_profile_tunables(const struct ctl_profile *p, int64_t workers, int64_t qps, int64_t burst,
                          struct ctl_tunables *out)
{
	*out = (struct ctl_tunables){ .profile = p };
	out->workers = workers > 0 ? (int)workers : p->workers;
	out->qps = qps > 0 ? (double)qps : p->qps;
	out->burst = burst > 0 ? (int)burst : p->burst;
	out->given = (workers > 0 ? CTL_TUNABLE_WORKERS : 0) | (qps > 0 ? CTL_TUNABLE_QPS : 0) |
	             (burst > 0 ? CTL_TUNABLE_BURST : 0);
}

/*
 * failover_state: status.failover to the view and back (see failover_state.h).
 */
#include "failover_state.h"

#include <stdio.h>

#include "lib/jsonx.h"
#include "lib/rfc3339.h"

static void copy(char *out, size_t len, const char *s)
{
	snprintf(out, len, "%s", s ? s : "");
}

int ctl_failover_read(json_t *cluster, struct ctl_failover *out)
{
	struct api_failover_status s;
	struct ctl_failover f = { 0 };
	int rc = api_failover_status_decode(jsonx_get(cluster, "status.failover"),
	                                    "status.failover", &s, NULL);

	if (rc == 0 && s.set && s.phase) {
		f.active = true;
		copy(f.phase, sizeof(f.phase), api_failover_phase_name(s.phase));
		copy(f.from, sizeof(f.from), s.from);
		copy(f.to, sizeof(f.to), s.to);
		copy(f.reason, sizeof(f.reason), s.reason);
		copy(f.started_at, sizeof(f.started_at), s.started_at);
		if (rfc3339_parse(f.started_at, &f.started_wall_ms) < 0)
			f.started_wall_ms = 0;
	}
	*out = f;
	return rc;
}

void ctl_failover_status(const struct ctl_failover *fo, const char *phase, const char *to,
                         const char *catch_up, struct api_failover_status *out)
{
	*out = (struct api_failover_status){ .set = true,
		                             .phase = api_failover_phase_from_name(phase),
		                             .from = fo->from,
		                             .to = to,
		                             .reason = fo->reason,
		                             .catch_up = catch_up,
		                             .started_at = fo->started_at };
}

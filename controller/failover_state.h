/*
 * failover_state: status.failover, the persisted state of a failover, switchover or
 * in-place restart in progress (its type, encoder and decoder: struct
 * api_failover_status, api/rediscluster.h). ctl_failover_read puts it into the view
 * (struct ctl_failover, view.h) on every reconcile; ctl_failover_status turns the view's
 * copy and the next phase back into the contract's struct for the status the plan
 * writes. The state machine that reads and writes it is controller/failover.h.
 *
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_FAILOVER_STATE_H
#define REDIS_OPERATOR_CONTROLLER_FAILOVER_STATE_H

#include <jansson.h>

#include "api/rediscluster.h"
#include "controller/view.h"

/* status.failover.phase's names (api/rediscluster.h). */
#define CTL_FO_FENCING    API_FAILOVER_FENCING
#define CTL_FO_PROMOTING  API_FAILOVER_PROMOTING
#define CTL_FO_SWITCHOVER API_FAILOVER_SWITCHOVER
#define CTL_FO_RESTART    API_FAILOVER_PRIMARY_RESTART

/* Reads status.failover of a RedisCluster object (api_failover_status_decode): 0, with
 * out->active false when it is absent; -EINVAL when it does not decode (out->active
 * false too: the RedisCluster decoder refuses such an object first). */
int ctl_failover_read(json_t *cluster, struct ctl_failover *out);
/* fo in phase (a CTL_FO_* name), with to and catch_up (either may be NULL), as the
 * contract's struct for api_failover_status_encode; out borrows fo's strings. */
void ctl_failover_status(const struct ctl_failover *fo, const char *phase, const char *to,
                         const char *catch_up, struct api_failover_status *out);

#endif

/*
 * status: `kubectl redis status`, in two halves. status.c fetches (the RedisCluster, its
 * pods, the primary Lease, each pod's /v1/status through the API server's pod proxy, the
 * cluster's RedisBackups); status_view.c is pure: it assembles what was fetched into one
 * JSON view (what -o json and -o yaml print) and renders the view as tables. Any thread
 * for the pure functions.
 */
#ifndef REDIS_OPERATOR_PLUGIN_STATUS_H
#define REDIS_OPERATOR_PLUGIN_STATUS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

/* One pod's /v1/status as fetched: the body, or why there is none. */
struct plugin_inst_fetch {
	const char *pod;  /* borrowed from the pod list */
	const char *body; /* NULL: not fetched (error says why) */
	size_t len;
	const char *error;
	const char *role_label; /* the pod's redis.io/role label, or NULL */
	int pod_ready;          /* the pod's Ready condition: 1, 0, or -1 unknown */
};

/*
 * The view: the cluster (name, namespace, phase, phaseReason, currentPrimary,
 * targetPrimary, instances, readyInstances, conditions, lastFailover, failover,
 * leaseHolder), "instancesStatus" (one per entry of inst, in its order: pod, role, ready,
 * state, lagBytes, lagSeconds, link, fenced, leaseHolder, engine, version, and "source":
 * "instance" when its /v1/status decoded, else "cluster status" from the RedisCluster's
 * status.instancesStatus (else the pod's role label and Ready condition) with "error"
 * saying why) and "backups" (the RedisBackups of
 * backups whose spec.clusterName is the cluster's, oldest first). Borrows its inputs;
 * returns a new reference.
 */
json_t *plugin_status_view(json_t *cluster, const char *lease_holder,
                           const struct plugin_inst_fetch *inst, size_t n_inst, json_t *backups);
/* The view as text: the cluster's lines, then the instances' and backups' tables. */
void plugin_status_render(json_t *view, bool colour, struct buf *out);

#endif

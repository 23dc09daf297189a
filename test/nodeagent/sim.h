/*
 * sim: the instance managers of the light node's pods, simulated by one listener (the
 * node agent's --light mode, light.c). For benchmarks of the controller with thousands
 * of instances on a small machine: no redis-server, no instance manager, no process per
 * pod, but the same HTTP API on every pod IP, answering as healthy instances would.
 *
 * One socket listens on 0.0.0.0:NA_SIM_PORT; light.c adds an AnyIP route (`ip route add
 * local CIDR dev lo`), so a connection to any pod IP of the range lands there, and
 * getsockname() on the accepted socket tells which pod was asked. A connection to an
 * address that is no known pod (or outside the range) is closed. A pod that mounts its
 * cluster's <cluster>-instance-tls Secret is served over HTTPS with that Secret's server
 * certificate (chosen per handshake by the address), asking for a client certificate as
 * the instance manager does, but verifying none (a simulator trusts its one caller);
 * plain HTTP is answered too (counted: a real manager would refuse it), and is all a pod
 * without that Secret speaks.
 *
 * What each instance answers (instance/http.c, instance/status.c, instance/ops.c):
 *   GET /healthz, GET /readyz, GET /v1/status (the same JSON fields), and
 *   POST /v1/{fence,unfence,promote,replicate,switchover,config,restart} with the real
 *   answers' shapes. Roles: the pod that was status.currentPrimary when it "booted" (or
 *   was promoted since) is primary once it holds the Lease <cluster>-primary; every other
 *   pod is a replica of the primary it was told about, linked, at the primary's offset
 *   and replication id (one id per cluster, derived from its uid; a promotion starts a
 *   new one). Offsets do not move: nothing is written.
 *
 * Leases: a primary takes and renews <cluster>-primary with lib/k8s/lease on the sim's
 * lease thread, every renewPeriod of its cluster's spec.failover (the instance manager's
 * defaults otherwise); a renewal that fails past the renew deadline fences it, as the
 * real one fences itself. Fencing, demotion and removal release the Lease. Promotion,
 * unfencing a primary and switchover take it at once on the HTTP thread (409 when
 * someone else holds it), as the instance manager does.
 *
 * Threads: na_sim_add/remove/ready/generation from any thread (the main thread in
 * practice); the daemon's thread serves HTTP; the lease thread drives Leases. Every
 * instance is guarded by the sim's mutex; every Lease API call runs under the lease
 * mutex (lock order: lease mutex, then the mutex), and instances are freed only under
 * the lease mutex, so a pointer held across a Lease call stays valid.
 */
#ifndef REDIS_OPERATOR_NODEAGENT_SIM_H
#define REDIS_OPERATOR_NODEAGENT_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/err.h"

struct k8s_client;
struct na_sim;

#define NA_SIM_PORT       8000 /* the instance manager's HTTP port (the controller's) */
#define NA_SIM_REDIS_PORT 6379
#define NA_SIM_REPLID_LEN 40
#define NA_SIM_BODY_MAX   (64 * 1024) /* request bodies, as INST_HTTP_BODY_MAX */
#define NA_SIM_NAME_MAX   253
#define NA_SIM_NS_MAX     63

struct na_sim_opts {
	struct k8s_client *client; /* for the Leases; borrowed, must outlive the sim */
	uint32_t net, size;        /* the addresses served: net .. net+size-1, host order */
	int port;                  /* 0: NA_SIM_PORT */
	unsigned conn_limit;       /* connections at once */
};

/* What an instance manager knows when it boots (strings are copied). */
struct na_sim_boot {
	const char *ns, *pod, *uid, *cluster, *ip;
	const char *current_primary; /* the cluster's status.currentPrimary; NULL: none yet */
	const char *cluster_uid;     /* seeds the cluster's first replication id */
	int64_t lease_duration_ms, renew_deadline_ms, renew_period_ms;
	const char *tls_cert, *tls_key; /* PEM of the server pair: HTTPS; NULL: plain HTTP */
	const char *tls_ca;             /* the client CA (ca.crt) */
};

/* NULL when o is unusable (no client, empty range). Nothing listens yet. */
struct na_sim *na_sim_new(const struct na_sim_opts *o);
/* Starts the listener and the lease thread: 0, or -EADDRINUSE / -errno with e set. */
int na_sim_start(struct na_sim *s, struct err *e);
/* Stops both threads and frees every instance without releasing Leases (an agent that
 * stops leaves its pods in the API, as a crashed node would). NULL-safe. */
void na_sim_free(struct na_sim *s);

/* Adds (or replaces) the instance at b->ip, booting as described above. 0, or -EINVAL
 * with e set when its TLS material does not import (nothing is added then). */
int na_sim_add(struct na_sim *s, const struct na_sim_boot *b, struct err *e);
/* Removes the instance at ip; a Lease it holds is released (a clean stop). */
void na_sim_remove(struct na_sim *s, const char *ip);
/* What GET /readyz answers for ip (false for an unknown ip). */
bool na_sim_ready(struct na_sim *s, const char *ip);
/* Changes with every event that may change an instance's readiness. */
uint64_t na_sim_generation(struct na_sim *s);

/* Counters for the agent's log line. */
struct na_sim_stats {
	uint64_t requests, rejected, lease_calls, lease_failures;
	uint64_t plain_to_tls; /* plain HTTP connections to pods that have TLS material */
	size_t instances, leases_held;
};
void na_sim_stats(struct na_sim *s, struct na_sim_stats *out);

/* --- pure, for tests ----------------------------------------------------------------- */

/* One instance as GET /v1/status shows it; master_* describe the primary it follows. */
struct na_sim_view {
	const char *pod, *state, *role, *reason, *fence_reason;
	bool ready, fenced, lease_held;
	const char *repl_id, *repl_id2;
	long long offset, primary_offset; /* primary_offset: replicas; -1 unknown */
	const char *link;                 /* "none" (primary), "up", "down" */
	const char *master_host;          /* replicas: "" when unknown */
	int64_t uptime_s;
	unsigned lease_failures;
	unsigned connected_replicas;
};

/* The /v1/status body (compact, sorted keys, the instance manager's fields) into out. */
int na_sim_status_json(const struct na_sim_view *v, struct buf *out);
/* A 40-hex replication id from seed and n (the same inputs, the same id). */
void na_sim_repl_id(const char *seed, unsigned n, char out[NA_SIM_REPLID_LEN + 1]);

#endif

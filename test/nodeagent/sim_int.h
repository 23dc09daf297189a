/*
 * sim_int: what the simulator's three files share (not for the rest of the agent):
 *   sim.c      the instances (table, views, status JSON), their Leases, life cycle
 *   simops.c   the instance manager's API: the GET answers and the POST operations
 *   simhttp.c  the transport: one accepting socket for every pod address, handing each
 *              connection to a plain or a TLS libmicrohttpd daemon by the pod it is for;
 *              the TLS daemon picks the pod's cluster's server certificate per handshake
 * Locking (sim.h): fields of an instance are written with both mutexes held (or before
 * it is in the table) and read with either; Lease calls and frees need the lease mutex.
 */
#ifndef REDIS_OPERATOR_NODEAGENT_SIM_INT_H
#define REDIS_OPERATOR_NODEAGENT_SIM_INT_H

#include <jansson.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/strmap.h"
#include "sim.h"

#define SIM_KEY_MAX    (NA_SIM_NS_MAX + 1 + NA_SIM_NAME_MAX)
#define SIM_REASON_MAX 256

struct k8s_lease;
struct sim_cred; /* simhttp.c: one cluster's server certificate, imported for GnuTLS */

struct sim_inst {
	char ns[NA_SIM_NS_MAX + 1], pod[NA_SIM_NAME_MAX + 1], key[SIM_KEY_MAX + 1];
	char uid[64], ip[16], lease_name[NA_SIM_NAME_MAX + 1];
	bool want_primary; /* booted as currentPrimary, or promoted since */
	bool acquired;     /* held the Lease since it became primary: serving as primary */
	bool lease_held, fenced;
	char fence_reason[SIM_REASON_MAX];
	char master[SIM_KEY_MAX + 1]; /* replicas: "ns/pod" of the primary followed */
	char master_host[64];         /* ... or the address given when no pod has it */
	char repl_id[NA_SIM_REPLID_LEN + 1], repl_id2[NA_SIM_REPLID_LEN + 1];
	unsigned promotions, lease_failures;
	long long offset;
	int64_t started_ms; /* wall */
	int64_t lease_duration_ms, renew_deadline_ms, renew_period_ms;
	int64_t next_step;           /* mono: the next acquire or renew */
	const struct sim_cred *cred; /* HTTPS with this certificate; NULL: plain HTTP */
	struct k8s_lease *lease;     /* under the lease mutex only */
	struct sim_inst *next_gone;
};

/* simhttp.c's acceptor: connections waiting for their first byte. */
struct acceptor {
	int ep;         /* epoll set: the listening socket and the waiting connections */
	int64_t *since; /* by fd: mono ms of its accept, 0 when not waiting */
	size_t cap;     /* fds the table covers (RLIMIT_NOFILE) */
};

struct na_sim {
	struct na_sim_opts o;
	pthread_mutex_t mu, lease_mu;
	pthread_cond_t cv; /* wakes the lease thread (with mu) */
	struct strmap by_ip, by_key;
	struct sim_inst *gone;
	bool stop, thread_running;
	pthread_t thread;
	/* simhttp.c */
	int listen_fd;
	struct acceptor acc;
	bool acceptor_running;
	atomic_bool acceptor_stop;
	pthread_t acceptor;
	struct MHD_Daemon *plain, *tls; /* tls: started with the first HTTPS pod (under mu) */
	struct sim_cred *creds;         /* every certificate imported, kept until the end */
	atomic_ullong generation, requests, rejected, plain_to_tls, lease_calls, lease_failures;
};

/* --- sim.c (callers hold mu unless said otherwise) ------------------------------------- */

void sim_bump(struct na_sim *s);
struct sim_inst *sim_inst_at(struct na_sim *s, const char *ip);
struct sim_inst *sim_inst_by_key(struct na_sim *s, const char *key);
struct sim_inst *sim_master_of(struct na_sim *s, const struct sim_inst *i);
bool sim_serving_primary(const struct sim_inst *i);
/* The view of i; its strings borrow from the table (valid while mu is held). */
void sim_view(struct na_sim *s, struct sim_inst *i, struct na_sim_view *v);
void sim_copy(char *dst, size_t len, const char *src);
/* Lease mutex held, mu not: one acquire-or-renew (0, -EBUSY held by another, -errno),
 * and giving the Lease up. Both record the outcome in i under mu. */
int sim_lease_step(struct na_sim *s, struct sim_inst *i, struct err *e);
void sim_lease_drop(struct na_sim *s, struct sim_inst *i);

/* --- simops.c ---------------------------------------------------------------------------- */

/* A request's state between libmicrohttpd's calls: the pod asked and the body so far. */
struct sim_req {
	struct buf body;
	bool too_big;
	char ip[16];
};

/* Answers one complete request for the pod at r->ip (no lock held). MHD_NO closes the
 * connection (the pod is gone). */
enum MHD_Result sim_route(struct na_sim *s, struct MHD_Connection *c, const char *url,
                          const char *method, struct sim_req *r);

/* --- simhttp.c --------------------------------------------------------------------------- */

/* Binds 0.0.0.0:port and starts the plain daemon and the acceptor. */
int sim_http_start(struct na_sim *s, struct err *e);
/* Stops the acceptor and both daemons (no lock held). */
void sim_http_stop(struct na_sim *s);
/* mu held: the credentials for cluster_key from PEM text (the same text gives the same
 * credentials), and the TLS daemon started if it was not (ca_pem: the client CA it asks
 * client certificates for). NULL with e set when the material does not import. */
const struct sim_cred *sim_cred_get(struct na_sim *s, const char *cluster_key, const char *cert_pem,
                                    const char *key_pem, const char *ca_pem, struct err *e);
/* Frees every credential (after sim_http_stop). */
void sim_creds_free(struct na_sim *s);

#endif

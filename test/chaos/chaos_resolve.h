/*
 * chaos_resolve: where does the writer send its writes right now?
 *
 * chaos-writer asks its resolver for "host:port" before every (re)connection, the way a
 * real client follows a failover. A spec is one of:
 *
 *   sentinel:NAME@H:P[,H:P…]  SENTINEL get-master-addr-by-name NAME, first sentinel that
 *                             answers (no AUTH: sentinels of the peers have no password);
 *   cluster:H:P[,H:P…]        CLUSTER KEYSLOT <key> then CLUSTER SLOTS on the first node
 *                             that answers: the master serving the writer's key;
 *   role:H:P[,H:P…]           ROLE on each node: the first that says "master";
 *   anything else             a shell command (sh -c) whose first output line is
 *                             "host:port", e.g. kubectl reading the <name>-leader
 *                             EndpointSlice; killed when it outlives the deadline.
 *
 * Built-in resolvers start at the next node on each call, so a dead first node does not
 * stall every attempt. Node connections use the node config's credentials and timeouts.
 * Returns 0 and the address; -EAGAIN when no node knows, -ETIMEDOUT, -EPROTO for
 * unreadable output, -EIO for a command that failed. One owner (thread) per resolver.
 */
#ifndef REDIS_OPERATOR_CHAOS_RESOLVE_H
#define REDIS_OPERATOR_CHAOS_RESOLVE_H

#include <stddef.h>

#include "lib/err.h"
#include "lib/valkey/conn.h"

#define CHAOS_RESOLVE_OUT_MAX 1024 /* bytes of a command's output read */

struct chaos_resolver;

/*
 * spec as above; key is the key whose slot a cluster resolver routes; node gives the
 * credentials and timeouts for built-in resolvers (host/port ignored; copied);
 * deadline_ms bounds one chaos_resolve call. NULL and -EINVAL for a malformed spec.
 */
struct chaos_resolver *chaos_resolver_new(const char *spec, const char *key,
                                          const struct vk_conn_config *node, int deadline_ms,
                                          struct err *e);
void chaos_resolver_free(struct chaos_resolver *r);

int chaos_resolve(struct chaos_resolver *r, char *host, size_t hostlen, int *port, struct err *e);

/*
 * Runs `sh -c cmd` and returns its first output line (without the newline) in out.
 * -ETIMEDOUT (the process group is killed) after deadline_ms; -EIO when it exits non-zero.
 */
int chaos_run_command(const char *cmd, int deadline_ms, char *out, size_t outlen, struct err *e);

#endif

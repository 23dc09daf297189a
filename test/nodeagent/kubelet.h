/*
 * kubelet: the one part of the kubelet's HTTPS API the API server calls for
 * `kubectl logs` (the pods/log subresource):
 *
 *   GET /containerLogs/{namespace}/{pod}/{container}?tailLines=N&limitBytes=N&previous=true
 *
 * The listener (kubelet.c) serves it on the Nodes' InternalIP (--host-ip) and
 * --kubelet-port (0: a free port the kernel picks, so that several agents run at once);
 * every Node of the agent advertises the bound port as
 * status.daemonEndpoints.kubeletEndpoint.Port. HTTPS with a certificate the agent makes
 * at start (a throwaway CA and a serving leaf, as the real kubelet self-signs one when it
 * is given no --tls-cert-file): the API server checks it only when it runs with
 * --kubelet-certificate-authority, which test/env does not pass.
 *
 * Authentication and authorization as the kubelet's (kubernetes.io, "Kubelet
 * authentication/authorization"): with --kubelet-client-ca-file, a client certificate
 * that chains to it is the user of its CN and the groups of its O fields plus
 * system:authenticated; without a certificate the request is system:anonymous (group
 * system:unauthenticated) when --kubelet-anonymous-auth, else 401 "Unauthorized". Then
 * --kubelet-authorization-mode Webhook asks the API server with a SubjectAccessReview
 * (verb get, resource nodes, subresource proxy: the kubelet's attributes for every path
 * but /stats, /metrics, /logs, /spec and the KEP-2862 ones; name: the pod's Node) and
 * answers 403 "Forbidden (user=U, verb=get, resource=nodes, subresource=proxy)" when it
 * is denied; AlwaysAllow lets every authenticated request through. No decision is cached.
 *
 * The logs are <pod dir>/logs/<container>.log (and .previous.log), found through the
 * pod.json of each sandbox, so the handler reads the file system only, never the main
 * thread's state. follow=true streams the file as it grows (checked every 200 ms), until
 * the container restarts (its log is renamed .previous.log), the sandbox goes, the API
 * server hangs up or the agent stops; limitBytes still caps it. A log has no time per
 * line, so timestamps=true, sinceSeconds, sinceTime and stream=Stdout|Stderr are refused
 * with 400 and the reason, as is a malformed number or boolean; an unknown parameter is
 * ignored, as the kubelet's decoder does.
 *
 * Threads: libmicrohttpd runs a thread per connection (a follow blocks in its reader);
 * each handler only reads the file system and asks the API server (SubjectAccessReview).
 */
#ifndef REDIS_OPERATOR_NODEAGENT_KUBELET_H
#define REDIS_OPERATOR_NODEAGENT_KUBELET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct agent;
struct err;

/* What a containerLogs request asks for. */
struct na_log_opts {
	bool previous;
	bool follow;         /* the log as it grows (not with previous) */
	int64_t tail_lines;  /* -1: every line */
	int64_t limit_bytes; /* -1: no limit */
};

/*
 * The options from the query: get(ctx, name) returns a parameter's value or NULL. 0, or
 * -EINVAL with the reason in msg (len bytes), e.g. "follow=true: the node agent does not
 * stream logs". Pure.
 */
int na_log_opts_parse(const char *(*get)(void *ctx, const char *name), void *ctx,
                      struct na_log_opts *o, char *msg, size_t len);

/*
 * Where the last lines of a file of size bytes start (fd read with pread, backwards): 0
 * when it has at most lines lines, size for lines == 0. A last line without its newline
 * counts as a line. -errno on a read error.
 */
off_t na_log_tail_offset(int fd, off_t size, int64_t lines);

/* Starts the listener on --host-ip:--kubelet-port; ag->kubelet_port is the bound port. */
int na_kubelet_start(struct agent *ag, struct err *e);
/* Stops it. Safe when it never started. */
void na_kubelet_stop(struct agent *ag);

#endif

/*
 * status: the instance manager's snapshot of itself and its server, and the pure
 * functions that turn it into the /v1/status JSON, the /readyz verdict and the
 * Prometheus text of /metrics (metrics.c).
 *
 * The supervisor and the poller write their parts of a struct inst_snapshot under the
 * context's mutex; HTTP handlers copy it under the same mutex and render the copy
 * outside it, so a slow client never holds the lock. Everything here is pure over a
 * snapshot and a time: any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_STATUS_H
#define REDIS_OPERATOR_INSTANCE_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#include "instance/backup.h"
#include "instance/http_tls.h"
#include "instance/render.h"
#include "instance/request.h"
#include "lib/buf.h"
#include "lib/valkey/info.h"

/* What the manager has made of its server. */
enum inst_state {
	INST_STATE_BOOTING,  /* deciding the role (waiting for the API server, the lease…) */
	INST_STATE_STARTING, /* server spawned, not answering yet */
	INST_STATE_PRIMARY,
	INST_STATE_REPLICA,
	INST_STATE_PARKED,   /* read-only replica of nothing, waiting for instructions */
	INST_STATE_CRASHED,  /* the server exited; a restart is scheduled */
	INST_STATE_STOPPING, /* shutting down */
};

struct inst_snapshot {
	char pod[INST_HOST_MAX + 1];
	enum inst_state state;
	char reason[256]; /* why this state: the boot decision, the crash… */
	bool fenced;
	char fence_reason[INST_REASON_MAX + 1];
	bool lease_held;
	bool primary_crashed; /* the server died as primary: it is never restarted writable */
	long long server_pid; /* 0 when not running */
	unsigned long long server_restarts;
	unsigned long long lease_renew_failures;
	int64_t started_wall_ms;        /* the manager's start */
	int64_t server_started_wall_ms; /* the current server's start, 0 when down */
	char config_hash[INST_CONF_HASH_SIZE];
	char engine[16];
	char engine_version[32];
	char master_host[INST_HOST_MAX + 1]; /* the primary the manager pointed it at */
	int master_port;
	/* written by http.c: what the API serves; REFUSED: mutations are refused, see why */
	enum inst_http_serve http_serve;
	char http_tls_error[INST_HTTP_TLS_REASON_MAX];
	/* written by the poller */
	bool info_ok;
	int64_t info_wall_ms;
	char info_error[256];
	struct vk_info info;
	long long primary_offset; /* replicas: the primary's master_repl_offset; -1 unknown */
	/* written by backup.c and restore.c */
	struct inst_backup_view backup;
	struct inst_restore_view restore;
};

const char *inst_state_name(enum inst_state s);

/*
 * Ready: the server answers (fresh INFO no older than max_age_ms), is not loading, and
 * for the primary state is not fenced; for the replica state, also linked to its
 * primary and not in a full sync. *why gets a static reason when not ready.
 */
bool inst_status_ready(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                       const char **why);

/* The /v1/status body (one JSON object). httpTls is inst_http_serve_name(http_serve),
 * httpTlsError the reason mutations are refused (null unless REFUSED). */
int inst_status_json(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                     struct buf *out);

/* Prometheus text exposition (version 0.0.4) of the snapshot; redis_exporter names. */
int inst_metrics_render(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                        struct buf *out);

#endif

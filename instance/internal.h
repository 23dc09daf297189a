/*
 * internal: the instance manager's context and the internal API between its files.
 * Not a public header: only the instance manager's own .c files include it.
 *
 * Threads and what they own (STYLE.md "Concurrency"):
 *  - main = the supervisor (supervisor.c, ops.c): signals (signalfd), reaping every
 *    child (it is PID 1), starting/stopping/restarting the server, the boot decision,
 *    executing every mutation posted by HTTP handlers (queue + eventfd), secret
 *    polling. It owns `server_conn`, the hiredict connection used for mutations, and every
 *    field below marked [sup].
 *  - poller (poller.c): polls INFO over its own connection and writes the snapshot.
 *  - lease driver + lease watchdog (lease.c): renew the primary Lease every
 *    renewPeriod, count failures, and at the renew deadline fence the server at once
 *    over the fence connection (serialised by the lease's transition lock).
 *  - libmicrohttpd's threads (http.c): read the snapshot, post mutations, suspend the
 *    connection until the supervisor resumes it.
 *  - the HTTP helper (http.c): resumes ?fresh=1 requests after a poll, re-reads the
 *    API's TLS files while HTTPS is off and restarts the API daemon when they are there.
 * Fields marked [mu] are guarded by `mu`; [const] are set before any thread starts.
 */
#ifndef REDIS_OPERATOR_INSTANCE_INTERNAL_H
#define REDIS_OPERATOR_INSTANCE_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "instance/acl.h"
#include "instance/request.h"
#include "instance/sentinel_vote.h"
#include "instance/settings.h"
#include "instance/spec.h"
#include "instance/status.h"
#include "lib/backoff.h"
#include "lib/err.h"
#include "lib/k8s/client.h"
#include "lib/k8s/lease.h"
#include "lib/valkey/conn.h"

#define INST_PARK_HOST         "127.0.0.1" /* a parked replica "follows" this: nothing listens */
#define INST_PARK_PORT         1
#define INST_FENCE_PAUSE_MS    (24LL * 3600 * 1000) /* CLIENT PAUSE WRITE of a fence */
#define INST_FENCE_REASSERT_MS (600 * 1000)         /* re-issued this often while fenced */
#define INST_FENCE_BUDGET_MS   1000 /* /v1/fence: confirmed within this, or the server halted */
#define INST_CONF_FILE         "redis.conf"
#define INST_MARKER_FILE       "redis-operator.fenced"
#define INST_SOCKET_FILE       "redis.sock"
#define INST_CMD_TIMEOUT_MS    2000 /* our own Redis commands */
#define INST_CONNECT_MS        500

struct MHD_Connection;
struct inst_http;
struct inst_sentinel_api;
struct inst_sentinels;
struct inst_backup;
struct inst_restore;

/* A mutation posted by an HTTP handler and executed by the supervisor. */
struct inst_cmd {
	struct inst_request req;
	struct MHD_Connection *conn; /* resumed when done */
	unsigned status;             /* HTTP status of the answer */
	char *body;                  /* JSON answer (owned) */
	bool done;
	struct inst_cmd *next;
};

struct inst_user_pw {
	char *name;
	struct inst_pwset cur; /* the passwords in the Secret files now */
	struct inst_pwset all; /* cur plus old ones not dropped yet */
};

/* Passwords from the secret volumes (secrets.c). */
struct inst_creds {
	char *operator_pw; /* cleartext: masterauth and our own AUTH */
	struct inst_pwset default_cur, default_all;
	struct inst_pwset operator_cur, operator_all;
	size_t nusers;
	struct inst_user_pw *users;
	/* <acl-dir>/acl as read (NULL: no file); holds passwords: free_secret */
	char *acl_text;
	size_t acl_len;
	/* acl_text went through inst_acl_file_apply (applied or refused); until then
	 * inst_creds_refresh says "changed" at every call, so the file reaches a server
	 * started after it was read (the first boot renders none of it) */
	bool acl_applied;
	uint64_t stamp; /* of the files they were read from */
};

struct inst {
	struct inst_settings set;                                             /* [const] */
	char conf_path[PATH_MAX], sock_path[PATH_MAX], marker_path[PATH_MAX]; /* [const] */
	char lease_name[256];                                                 /* [const] */

	/* Kubernetes [const after boot]: the client is thread-safe */
	struct k8s_config *kcfg;
	struct k8s_client *kube, *lease_kube;
	struct k8s_lease *lease;

	/* desired state [sup] */
	struct inst_spec spec;
	struct inst_desired desired;
	struct inst_creds creds;
	atomic_bool http_tls; /* the API serves HTTPS with client certificates (http.c sets it) */

	/* the server [sup] */
	char server_bin[PATH_MAX];
	enum vk_engine engine;
	unsigned version;
	pid_t server_pid;
	bool stop_expected;
	struct backoff restart_backoff;
	int64_t restart_at; /* mono ms; 0: none pending */
	int64_t fence_reassert_at;
	enum inst_state want; /* PRIMARY, REPLICA (of want_host) or PARKED */
	char want_host[INST_HOST_MAX + 1];
	int want_port;
	bool follow_primary; /* parked for lack of an address: keep resolving */
	int64_t follow_at;
	int64_t secrets_at;
	int64_t lease_observe_at; /* not primary: next read of the primary Lease */
	bool server_tls;          /* the config last written enables TLS */
	uint64_t tls_stamp;       /* inst_tls_stamp() when the server last loaded its TLS files */
	struct vk_conn *server_conn; /* the supervisor's connection to the server: every mutation */
	int sigfd, evfd;
	int exit_code;

	/* shared [mu] */
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct inst_snapshot snap;
	struct inst_cmd *q_head, **q_tail;
	char *shared_pw;             /* the operator password for other threads' connections */
	unsigned creds_gen;          /* bumped when shared_pw changes */
	unsigned long long poll_seq; /* polls completed */
	bool poll_now;
	bool polling;  /* a poll is in progress */
	bool stopping; /* no new commands are accepted */

	/* lease threads (lease.c) */
	atomic_bool lease_lost;   /* set by on_change(false); the supervisor reacts */
	atomic_bool lease_active; /* renewals expected (we are primary) */
	atomic_ullong lease_failures;
	pthread_t lease_driver, lease_watchdog;
	bool lease_running;       /* [sup] */
	pthread_mutex_t lease_mu; /* with lease_cv: wakes the lease threads */
	pthread_cond_t lease_cv;
	bool lease_stop;
	struct vk_conn *fence_conn; /* reserved for the self-fence: connected while primary */
	pthread_mutex_t fence_mu;   /* fence_conn: the watchdog's keep-alive vs on_change */
	int64_t fence_budget_ms;    /* [const after lease init] half the fence margin */

	/* other threads */
	pthread_t poller;
	bool poller_running;
	atomic_bool poller_stop;
	struct inst_http *http;       /* http.c: the daemons and their helper thread */
	struct inst_backup *backup;   /* backup.c: POST /v1/backup and its thread */
	struct inst_restore *restore; /* restore.c: the start-up restore and its thread */
	struct inst_sentinels *sen;   /* sentinel_follow.c: spec.mode sentinel [sup] */
	const struct inst_sentinel_api *sentinel_api; /* --role sentinel [const after start] */
	/* sentinel_follow.c: booted standalone, may move to sentinel mode [sup] */
	struct inst_sentinels *sen_move;
};

/* --role sentinel: what http.c's API daemon serves from sentinel_run.c instead of the
 * data role's snapshot (GET /v1/status, /readyz). Its ops (INST_OP_SENTINEL_*) are
 * authorized and posted like the data role's mutations (inst_post), and run by the
 * sentinel loop. Both callbacks run on the daemon's thread and must not block. */
struct inst_sentinel_api {
	void *ctx;
	char *(*status)(void *ctx); /* the JSON body (malloc'd) */
	bool (*ready)(void *ctx);
};

/* A sentinel pod's address (kube.c). */
struct inst_sentinel_addr {
	char host[INST_HOST_MAX + 1];
	int port;
};

/* --- secrets.c --------------------------------------------------------------------- */
int inst_creds_load(const struct inst_settings *s, struct inst_creds *out, struct err *e);
/* A cheap fingerprint of the secret files (paths, inodes, sizes, mtimes, ..data). */
uint64_t inst_creds_stamp(const struct inst_settings *s);
/* The same for the server's TLS directory (tls.crt, tls.key, ca.crt). */
uint64_t inst_tls_stamp(const struct inst_settings *s);
/* cur takes fresh's passwords; the "all" sets keep cur's old ones. fresh is consumed. */
void inst_creds_merge(struct inst_creds *cur, struct inst_creds *fresh);
/* Re-read the files if their stamp moved since cur was loaded and merge them into cur:
 * 1 when cur took new passwords (or holds an ACL file not applied yet), 0 when nothing
 * changed, <0 when they changed but cannot
 * be read (cur keeps its passwords; the next change of the files retries). */
int inst_creds_refresh(const struct inst_settings *s, struct inst_creds *cur, struct err *e);
/* supervisor.c: the Secret files (passwords, ACL file) re-read and the TLS files reloaded
 * into the server now, whatever their stamps (POST /v1/config with reload). */
void inst_reload_files(struct inst *in);
void inst_creds_drop_old(struct inst_creds *c);
/* The password set of a spec user (every valid one), or NULL when it has no files. */
const struct inst_pwset *inst_creds_user(const struct inst_creds *c, const char *name);
void inst_creds_release(struct inst_creds *c);

/* --- acl_apply.c ------------------------------------------------------------------- */
/* spec.aclConfigSecret's users: the file in in->creds, checked against d's spec.users and
 * tried line by line on the server, replaces d->acl when all of it is accepted (refused:
 * logged, d->acl stays); then d->acl's users are set (ACL SETUSER), those spec.users
 * defines excepted. <0 only when the server fails a user. Supervisor thread. */
int inst_acl_file_apply(struct inst *in, struct inst_desired *d, struct err *e);
/* True when name is one of d->acl's users and spec.users does not define it. */
bool inst_acl_file_wants(const struct inst_desired *d, const char *name);

/* --- server.c ---------------------------------------------------------------------- */
int inst_server_find(const char *override, enum vk_engine want, char *out, size_t len,
                     struct err *e);
/* Parses `redis-server --version` output. 0 or -EINVAL. */
int inst_server_parse_version(const char *text, enum vk_engine *engine, unsigned *version,
                              char *vtext, size_t vlen);
int inst_server_probe(const char *bin, enum vk_engine *engine, unsigned *version, char *vtext,
                      size_t vlen, struct err *e);
int inst_server_spawn(const char *bin, const char *conf, pid_t *pid, struct err *e);
bool inst_data_present(const char *dir);
int inst_file_write_atomic(const char *path, const char *data, size_t len, struct err *e);
int inst_marker_write(const char *path, const char *reason, struct err *e);
bool inst_marker_read(const char *path, char *reason, size_t len);
int inst_marker_remove(const char *path);

/* --- kube.c ------------------------------------------------------------------------ */
/* -EHOSTUNREACH-like errors mean unreachable; -ENOENT the object is gone. */
int inst_kube_cluster(struct inst *in, struct inst_spec *out, struct err *e);
/* The pod's IP, server port and manager port (named container ports "redis"/"http"
 * when declared, else the defaults). */
int inst_kube_pod_addr(struct inst *in, const char *pod, char *host, size_t hlen, int *port,
                       int *http_port, struct err *e);
int inst_kube_other_pods(struct inst *in, bool *out, struct err *e);
/* The sentinel pods of the cluster (labels redis.io/cluster and redis.io/role=sentinel,
 * an IP, not being deleted): their IP and container port "sentinel" (default 26379).
 * At most max; *n the number written. */
int inst_kube_sentinels(struct inst *in, struct inst_sentinel_addr *out, size_t max, size_t *n,
                        struct err *e);

/* --- lease.c ----------------------------------------------------------------------- */
int inst_lease_init(struct inst *in, struct err *e);
/* One acquire/renew step now: 0 held, -EBUSY someone else, other errno: API error. */
int inst_lease_acquire(struct inst *in, struct err *e);
/* Not primary: reads the Lease so that a later acquire judges its expiry from the last
 * renewal seen (lib/k8s/lease.h). Every renewPeriod, from the supervisor's timers. */
void inst_lease_observe_step(struct inst *in);
/* Starts renewing (driver + watchdog threads); idempotent. */
int inst_lease_start(struct inst *in, struct err *e);
/* Stops renewing; release gives the Lease up (the fast path for the controller). */
void inst_lease_stop(struct inst *in, bool release);
bool inst_lease_held(struct inst *in);
void inst_lease_free(struct inst *in);

/* --- fence.c ----------------------------------------------------------------------- */
/* CLIENT PAUSE <24 h> WRITE, then the customers' connections dropped: 0 once the pause
 * is confirmed (+OK), else the error. One attempt. */
int inst_fence_server(struct vk_conn *c, struct err *e);
/* Fences over c, retried within budget_ms; a fence not confirmed by then halts the
 * server (SIGSTOP, then SIGKILL). Writes the marker; sets the snapshot's `fenced` only
 * when no write can be accepted any more. 0, or the error when even the halt failed.
 * Any thread (fence.c). */
int inst_fence_now(struct inst *in, struct vk_conn *c, const char *reason, int64_t budget_ms,
                   struct err *e);

/* --- ops.c ------------------------------------------------------------------------- */
/* Executes one posted mutation; fills cmd->status and cmd->body. */
void inst_ops_execute(struct inst *in, struct inst_cmd *cmd);
/* Removes the fence marker and the snapshot's fenced / primaryCrashed. */
void inst_clear_fenced(struct inst *in);
/* The manager's wanted role (and master, for a replica) and the snapshot's state. */
void inst_become(struct inst *in, enum inst_state st, const char *host, int port, const char *why);
/* Applies the desired live config and users to the running server (CONFIG SET, ACL
 * SETUSER, CONFIG REWRITE); fills restart (may be NULL) with what needs a restart. */
int inst_apply_live(struct inst *in, const struct inst_desired *old, struct inst_strv *restart,
                    struct err *e);

/* --- supervisor.c ------------------------------------------------------------------ */
/* Blocks the signals the supervisor reads (before any thread starts), opens its fds. */
int inst_supervisor_setup(struct inst *in);
int inst_run(struct inst *in);
/* The snapshot's fenced flag (any thread). */
bool inst_is_fenced(struct inst *in);
/* Queues a command for the supervisor: false when shutting down (answer 503 then). */
bool inst_post(struct inst *in, struct inst_cmd *cmd);
/* The next queued command, or NULL (clears the eventfd's count first; a failed read is
 * logged under component). The role's loop runs it, then inst_http_complete. */
struct inst_cmd *inst_take(struct inst *in, const char *component);
/* Answers every queued command with 503 (shutdown; after `stopping` is set). */
void inst_drain_commands(struct inst *in);
/* Renders and writes the config for the wanted role; updates the config hash. */
int inst_write_config(struct inst *in, struct err *e);
int inst_start_server(struct inst *in, struct err *e);
/* Stops the server: SHUTDOWN, then SIGTERM, then SIGKILL within budget_ms. Returns
 * 0, or 1 when it had to be killed. Reaps it. */
int inst_stop_server(struct inst *in, int64_t budget_ms, bool nosave);
/* Waits until our server answers PING (bounded). */
int inst_wait_server(struct inst *in, int64_t budget_ms, struct err *e);
void inst_set_state(struct inst *in, enum inst_state st, const char *reason);
/* Hands the current operator password to the other threads' connections. */
void inst_share_password(struct inst *in);
/* The server's TLS files (--tls-dir: tls.crt, tls.key, ca.crt) and, in client, the same
 * as a client's TLS config (its pointers into f). True when all three exist: the servers
 * (and sentinels) are then TLS-only. Any thread. */
struct inst_tls_files {
	char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX];
	struct vk_tls_config client;
};
bool inst_tls_files(const struct inst *in, struct inst_tls_files *f);
/* A fresh connection as the operator user: unix socket (host NULL) or TCP to a peer,
 * with TLS when the server's TLS files are present (any thread). */
struct vk_conn *inst_conn_new(struct inst *in, const char *host, int port, int timeout_ms);

/* --- sentinel_follow.c: spec.mode sentinel (docs/sentinel.md) ---------------------- */
/* Sets up in->sen when the cluster is in sentinel mode (after the first spec read). */
void inst_sentinel_follow_init(struct inst *in);
/* Boot: asks the sentinel pods; 0 when there is none (the boot table decides as in the
 * other modes), else their number, with t filled. */
size_t inst_sentinel_boot_tally(struct inst *in, struct inst_sentinel_tally *t);
/* Boot decided HOLD: the server is not started until the sentinels name another. */
void inst_sentinel_hold(struct inst *in, const char *why);
/* The server crashed as primary (after primary_crashed): true when sentinel mode holds
 * it down instead of the parked restart. */
bool inst_sentinel_crashed(struct inst *in);
bool inst_sentinel_holding(const struct inst *in);
/* The Lease was lost: in sentinel mode that fence lifts itself once a majority of the
 * sentinels names this server again. */
void inst_sentinel_lease_lost(struct inst *in);
/* Every tick: ask the sentinels (at its own interval) and follow them; a manager that
 * booted standalone re-reads spec.mode and starts following them once the cluster moved
 * to sentinel mode and a majority names a master (sentinel_move.h). */
void inst_sentinel_step(struct inst *in);
void inst_sentinel_follow_free(struct inst *in);
/* POST /v1/switchover in this mode (docs/sentinel.md "Planned switchover"): writes
 * paused, every replica at the primary's offset, then SENTINEL FAILOVER; the pause ends
 * when the server is demoted (or at failoverTimeout + 5 s). Fills cmd's answer. */
void inst_sentinel_switchover(struct inst *in, struct inst_cmd *cmd);

/* --- poller.c ---------------------------------------------------------------------- */
int inst_poller_start(struct inst *in, struct err *e);
void inst_poller_stop(struct inst *in);
/* Asks for a poll now and waits (bounded) until one completed. */
void inst_poller_refresh(struct inst *in, int64_t timeout_ms);

/* --- http.c ------------------------------------------------------------------------ */
int inst_http_start(struct inst *in, struct err *e);
void inst_http_stop(struct inst *in);
/* Finishes a command: called by the supervisor; resumes the suspended connection. */
void inst_http_complete(struct inst *in, struct inst_cmd *cmd);

#endif

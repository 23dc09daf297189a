/*
 * conn: one blocking connection to redis-server or valkey-server, over hiredict (the
 * maintained fork of hiredis 1.x, with its TLS module hiredict_ssl).
 *
 *   struct vk_conn_config cfg = { .unix_path = "/data/redis.sock",
 *                                 .connect_timeout_ms = 500, .command_timeout_ms = 2000,
 *                                 .user = "redis-operator", .password = pw };
 *   struct vk_conn *c = vk_conn_new(&cfg);
 *   struct vk_info info;
 *   rc = vk_info(c, "replication", &info, &e);
 *   ...
 *   vk_conn_free(c);
 *
 * - vk_conn_new() does no I/O: the first command connects (Unix socket, or host:port
 *   for tests and replication peers), sets the command timeout, does the TLS handshake
 *   when cfg->tls is set (TCP only) and sends AUTH when a password is configured. After an I/O error or timeout the connection is dropped,
 *   and the next command reconnects, so callers just retry.
 * - Every command has a deadline: the connect timeout, then the command timeout for
 *   each reply (WAIT extends it by its own timeout). Nothing blocks forever.
 * - Arguments are passed as an argument vector, never through a format string, so a
 *   value cannot inject a second argument or command.
 * - Errors: a server error reply maps to an errno by its first word (vk_error_code):
 *   NOPERM → -EPERM, WRONGPASS/NOAUTH → -EACCES, LOADING/BUSY → -EBUSY,
 *   READONLY → -EROFS, anything else → -EIO; e gets the server's message, except for
 *   commands that carry a secret (AUTH, ACL SETUSER, CONFIG SET of a secret
 *   directive, vk_command_argv_secret), whose message is withheld because servers echo
 *   arguments in errors. Transport errors: -ETIMEDOUT for a timeout, -EIO otherwise,
 *   -EPROTO for a reply hiredict cannot parse; a TLS handshake that fails (a chain that
 *   does not verify, a client certificate refused) is -EIO with OpenSSL's reason, and
 *   TLS files that cannot be loaded are -EIO naming them.
 * - The password is copied and wiped on free; it is never put in an error message.
 *   (hiredict's own output buffer is freed without wiping: a limit of the library.)
 * - TLS: the server's certificate chain must verify against tls->ca_file; its name is
 *   not checked (hiredict does not, and neither does Redis's own tls-replication): peers
 *   are addressed by pod IP, which the certificates of a Service rarely name. The files
 *   are read at each (re)connect, so renewed ones take effect on the next connection.
 *
 * - hiredict writes with write(2) (OpenSSL too): the process must ignore SIGPIPE (the instance
 *   manager's supervisor does), or a server that died between two commands kills it.
 *
 * Threads: a vk_conn belongs to one thread at a time (hiredict contexts are not
 * thread-safe); each thread that talks to the server opens its own. Replies are plain
 * memory and may be handed to another thread.
 */
#ifndef REDIS_OPERATOR_VALKEY_CONN_H
#define REDIS_OPERATOR_VALKEY_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/valkey/info.h"

#define VK_COMMAND_MAX_ARGS 64                 /* for vk_command's NULL-terminated list */
#define VK_REPLY_MAX_LEN    (16 * 1024 * 1024) /* vk_reply_decode input */

/* TLS for a host:port connection. Files, not contents: read at each connect. */
struct vk_tls_config {
	const char *ca_file;     /* required: the CA the server's chain must verify against */
	const char *cert_file;   /* client certificate (tls-auth-clients); NULL: none */
	const char *key_file;    /* with cert_file, both or neither */
	const char *server_name; /* SNI; NULL: none (an IP address is never sent as SNI) */
};

struct vk_conn_config {
	const char *unix_path; /* the server's Unix socket; NULL to use host:port */
	const char *host;
	int port;
	int connect_timeout_ms;          /* > 0 */
	int command_timeout_ms;          /* > 0 */
	const char *user;                /* NULL: AUTH as the default user */
	const char *password;            /* NULL: no AUTH */
	const struct vk_tls_config *tls; /* NULL: plain TCP; ignored with unix_path; copied */
};

struct vk_conn;

/* Copies cfg (and the password). No I/O. Timeouts must be positive. */
struct vk_conn *vk_conn_new(const struct vk_conn_config *cfg);
/* Closes and frees, wiping the password. NULL-safe. */
void vk_conn_free(struct vk_conn *c);
/* New credentials for the next connection (password rotation); NULLs as in the config.
 * The current connection keeps its session: vk_conn_close() to re-authenticate now. */
void vk_conn_set_auth(struct vk_conn *c, const char *user, const char *password);
/* Connects now unless connected: 0, or the error a command would return. */
int vk_conn_connect(struct vk_conn *c, struct err *e);
/* Drops the connection; the next command reconnects. */
void vk_conn_close(struct vk_conn *c);
bool vk_conn_is_connected(const struct vk_conn *c);
/* The connection was configured with TLS (host:port and cfg->tls). */
bool vk_conn_is_tls(const struct vk_conn *c);
/* "unix:/path" or "host:port", for messages. Borrowed. */
const char *vk_conn_addr(const struct vk_conn *c);

/* --- replies ------------------------------------------------------------------- */

enum vk_reply_type {
	VK_REPLY_STRING,
	VK_REPLY_ARRAY,
	VK_REPLY_INTEGER,
	VK_REPLY_NIL,
	VK_REPLY_STATUS,
	VK_REPLY_ERROR,
};

/* A reply tree. Elements are borrowed from their root; free only the root. */
struct vk_reply;

enum vk_reply_type vk_reply_type(const struct vk_reply *r);
/* The bytes of a STRING, STATUS or ERROR reply (NUL-terminated too); else NULL. */
const char *vk_reply_str(const struct vk_reply *r, size_t *len);
/* An INTEGER reply's value; 0 for other types. */
long long vk_reply_int(const struct vk_reply *r);
/* The number of elements of an ARRAY; 0 for other types. */
size_t vk_reply_len(const struct vk_reply *r);
/* Element i of an ARRAY, or NULL when out of range or not an array. */
const struct vk_reply *vk_reply_elem(const struct vk_reply *r, size_t i);
/* NULL-safe. */
void vk_reply_free(struct vk_reply *r);
/*
 * Decodes one complete RESP2 reply from bytes (tests and fuzzing use it to build
 * replies without a server). 0; -EPROTO when malformed, incomplete or followed by
 * extra bytes; -EMSGSIZE past VK_REPLY_MAX_LEN.
 */
int vk_reply_decode(const char *resp, size_t len, struct vk_reply **out, struct err *e);

/* The errno for a server error message ("NOPERM this user has no permissions…"). */
int vk_error_code(const char *msg, size_t len);

/* --- commands ------------------------------------------------------------------ */

/*
 * Sends one command and reads its reply. 0 and *out (yours to free; out may be NULL
 * to discard it), or a negative errno (see the header comment) with *out untouched.
 * lens may be NULL when every argument is a NUL-terminated string.
 */
int vk_command_argv(struct vk_conn *c, int argc, const char *const *argv, const size_t *lens,
                    struct vk_reply **out, struct err *e);
/* The same for a command that carries a secret: the server's error text is withheld. */
int vk_command_argv_secret(struct vk_conn *c, int argc, const char *const *argv, const size_t *lens,
                           struct vk_reply **out, struct err *e);
/*
 * Convenience: NUL-terminated string arguments (1 to VK_COMMAND_MAX_ARGS - 1); the
 * macro ends the list itself, so no caller can forget the terminator.
 *   vk_command(c, &r, &e, "CONFIG", "GET", name);
 */
#define vk_command(c, out, e, ...) vk_command_list((c), (out), (e), __VA_ARGS__, (const char *)0)
/* The function behind vk_command: string arguments ended by a null pointer. */
int vk_command_list(struct vk_conn *c, struct vk_reply **out, struct err *e, ...)
        __attribute__((sentinel));

/* --- helpers (all return 0 or a negative errno, as vk_command) ----------------- */

struct vk_kv {
	const char *name;
	const char *value;
};

int vk_ping(struct vk_conn *c, struct err *e);
/* INFO [section] (NULL: the default sections), parsed. */
int vk_info(struct vk_conn *c, const char *section, struct vk_info *out, struct err *e);
/* CONFIG SET n1 v1 n2 v2 …: applied atomically (7.0+), all or none. n >= 1. */
int vk_config_set(struct vk_conn *c, const struct vk_kv *kv, size_t n, struct err *e);
/* Appends the value of one directive to out. -ENOENT when the server does not know it;
 * -EINVAL for a glob pattern; -EMSGSIZE when out's limit is reached (out unchanged). */
int vk_config_get(struct vk_conn *c, const char *name, struct buf *out, struct err *e);
int vk_config_rewrite(struct vk_conn *c, struct err *e);
/* REPLICAOF host port (port 1..65535) / REPLICAOF NO ONE. */
int vk_replicaof(struct vk_conn *c, const char *host, int port, struct err *e);
int vk_replicaof_no_one(struct vk_conn *c, struct err *e);
/* CLIENT PAUSE ms WRITE (ms > 0): writes of other clients wait; reads go on. */
int vk_client_pause_write(struct vk_conn *c, long long ms, struct err *e);
int vk_client_unpause(struct vk_conn *c, struct err *e);
/* ACL SETUSER user rule…; the rules may hold passwords, so errors are withheld. */
int vk_acl_setuser(struct vk_conn *c, const char *user, const char *const *rules, size_t n,
                   struct err *e);
/* WAIT nreplicas timeout_ms (timeout_ms > 0): *acked = replicas that acknowledged. */
int vk_wait(struct vk_conn *c, long long nreplicas, long long timeout_ms, long long *acked,
            struct err *e);

/* ROLE, parsed. */
struct vk_role_replica {
	char ip[VK_INFO_HOST_SIZE];
	long long port;
	long long offset;
};

struct vk_role_info {
	enum vk_role role;
	long long offset; /* primary: its offset; replica: its offset (-1 before the first sync) */
	/* replica */
	char master_host[VK_INFO_HOST_SIZE];
	long long master_port;
	char state[VK_INFO_STR_SIZE]; /* connect, connecting, sync, connected, handshake… */
	/* primary */
	size_t nreplicas; /* entries filled, at most VK_INFO_MAX_REPLICAS */
	struct vk_role_replica replicas[VK_INFO_MAX_REPLICAS];
};

int vk_role(struct vk_conn *c, struct vk_role_info *out, struct err *e);
/* The pure part of vk_role: -EPROTO for a reply that is not a ROLE reply. */
int vk_role_parse(const struct vk_reply *r, struct vk_role_info *out, struct err *e);

#endif

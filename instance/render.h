/*
 * render: the redis.conf the instance manager writes before every server start.
 *
 *   struct inst_conf conf = { 0 };
 *   if (inst_render_lines(&in, &conf, &e) == 0 && inst_conf_text(&conf, &text, &e) == 0)
 *           write text to <data-dir>/redis.conf (mode 0600), start the server with it;
 *   inst_conf_hash(&conf, hash);   the restart hash of the static settings
 *   inst_conf_release(&conf);
 *
 * Two tiers: a line is `live` when CONFIG SET accepts its directive on this engine and
 * version (lib/engine/directives); changing it needs no restart. The restart hash
 * covers only the other lines, minus what the manager changes at runtime itself
 * (users, masterauth, replicaof), so the hash moves exactly when a restart is needed.
 *
 * Order: operator-owned lines (ports, socket, dir, logging, replication auth, TLS),
 * then defaults the user may override (persistence per storage type, repl timing,
 * memory, min-replicas), then spec.redis in name order, then the ACL users, then
 * replicaof. A default is dropped when spec.redis sets the same directive, so every
 * directive appears once (redis would otherwise append `save` points).
 * Persistence: pvc → appendonly yes, aof-use-rdb-preamble yes, save 3600 1 300 100
 * 60 10000; emptyDir → appendonly no, save "".
 *
 * Secrets: masterauth is the only cleartext credential in the file (the server needs
 * it to authenticate to its primary), so the file must be written 0600; user
 * passwords appear only as SHA-256 hashes. Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_INSTANCE_RENDER_H
#define REDIS_OPERATOR_INSTANCE_RENDER_H

#include <stdbool.h>
#include <stddef.h>

#include "instance/acl.h"
#include "instance/spec.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/engine/engine.h"

#define INST_CONF_MAX         (256 * 1024) /* rendered file size limit */
#define INST_CONF_HASH_SIZE   17           /* 16 hex digits + NUL */
#define INST_SAVE_RULES_PVC   "3600 1 300 100 60 10000"
#define INST_MIN_REPLICAS_LAG "10"

struct inst_render {
	enum vk_engine engine;
	unsigned version;
	int port;                /* TCP port of the server (tls-port when TLS is on) */
	const char *bind;        /* space-separated addresses */
	const char *unix_socket; /* path */
	const char *data_dir;
	const char *announce_ip; /* replica-announce-ip; NULL: none */
	bool ephemeral;          /* emptyDir storage */
	const struct inst_desired *desired;
	const struct inst_pwset *default_pw;
	const struct inst_pwset *operator_pw;
	const struct inst_pwset *user_pw; /* desired->nusers entries, parallel to users */
	const char *masterauth;           /* the operator user's current password */
	const char *replicaof_host;       /* NULL: start as a primary */
	int replicaof_port;
	const char *tls_cert, *tls_key, *tls_ca; /* all set, or all NULL */
	bool tls_clients_required;               /* tls-auth-clients yes, else optional */
};

struct inst_conf_line {
	char *name;
	struct inst_strv args;
	bool live;    /* CONFIG SET-able here */
	bool managed; /* users, masterauth, replicaof: changed by the manager at runtime */
};

struct inst_conf {
	size_t n, cap;
	struct inst_conf_line *l;
};

int inst_render_lines(const struct inst_render *r, struct inst_conf *out, struct err *e);
/* The file text: a header comment, then one line per entry with every argument quoted. */
int inst_conf_text(const struct inst_conf *c, struct buf *out, struct err *e);
/* Hash of the lines that need a restart (neither live nor managed). */
void inst_conf_hash(const struct inst_conf *c, char out[INST_CONF_HASH_SIZE]);
/* The line for name, or NULL. */
const struct inst_conf_line *inst_conf_find(const struct inst_conf *c, const char *name);
void inst_conf_release(struct inst_conf *c);

#endif

/*
 * directives: the configuration directives the operator knows, per engine and
 * version, and how to write a value into a config file.
 *
 * One row per directive (aliases such as slaveof/replicaof are rows of their own):
 *   - live:   CONFIG SET accepts it at runtime, so a change is applied with no restart;
 *             everything else (immutable, protected, config-file-only) needs a restart;
 *   - owned:  the operator renders it (ports, sockets, paths, TLS, auth, replication,
 *             cluster wiring, logging target, security switches) and refuses it in the
 *             user's spec.redis map;
 *   - secret: its value is a credential (never logged; CONFIG SET errors withheld).
 * The live flags were measured on redis-server 7.0.15 and valkey-server 8.0.1, and
 * test/unit/test_valkey_live.c re-checks every row against both servers: CONFIG SET
 * of the current value must succeed for a live row and fail for the others, and every
 * name CONFIG GET * lists must have a row. A directive the table does not list for an
 * (engine, version) is treated as needing a restart, the safe answer.
 *
 * Supported: redis >= 7.0 (multi-parameter CONFIG SET), valkey >= 7.2.
 * Names are matched case-insensitively, as the servers do. The table is constant:
 * any thread.
 */
#ifndef REDIS_OPERATOR_ENGINE_DIRECTIVES_H
#define REDIS_OPERATOR_ENGINE_DIRECTIVES_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/engine/engine.h"

#define VK_REDIS_MIN_VERSION   VK_VERSION(7, 0, 0)
#define VK_VALKEY_MIN_VERSION  VK_VERSION(7, 2, 0)
#define VK_DIRECTIVE_NAME_MAX  64   /* longest known name is 40 */
#define VK_DIRECTIVE_VALUE_MAX 4096 /* longest value accepted from users */

enum vk_directive_flag {
	VK_DIRECTIVE_LIVE = 1 << 0,      /* CONFIG SET accepts it at runtime */
	VK_DIRECTIVE_OWNED = 1 << 1,     /* set by the operator; refused in user config */
	VK_DIRECTIVE_SECRET = 1 << 2,    /* a credential */
	VK_DIRECTIVE_FILE_ONLY = 1 << 3, /* config file only: unknown to CONFIG GET/SET */
};

struct vk_directive {
	const char *name;
	unsigned redis_since;  /* first redis version that has it (VK_VERSION); 0: none */
	unsigned valkey_since; /* first valkey version that has it; 0: none */
	unsigned flags;        /* enum vk_directive_flag */
};

/* The row for name on this engine and version, or NULL when unknown there. */
const struct vk_directive *vk_directive_find(enum vk_engine engine, unsigned version,
                                             const char *name);
/* Known there and settable with CONFIG SET. */
bool vk_directive_is_live(enum vk_engine engine, unsigned version, const char *name);
/* A change needs a restart: known but not live, or not known there at all. */
bool vk_directive_needs_restart(enum vk_engine engine, unsigned version, const char *name);
/* Owned by the operator on any engine; so is any tls-* or cluster-* name, known or not. */
bool vk_directive_is_owned(const char *name);
/* The value is a credential (requirepass, masterauth, tls-key-file-pass…). */
bool vk_directive_is_secret(const char *name);

/*
 * Syntax checks for a user-supplied directive: -EINVAL for an empty name, a name
 * longer than VK_DIRECTIVE_NAME_MAX or with characters other than [A-Za-z0-9_-], a
 * value longer than VK_DIRECTIVE_VALUE_MAX or holding a control character (a newline
 * would start a new directive in the file). The message names the directive and never
 * quotes the value. Ownership and version are the caller's questions.
 */
int vk_directive_check_value(const char *name, const char *value, struct err *e);

/*
 * Appends value to out as one config-file argument: always double-quoted, with
 * backslash and double quote escaped and control characters as \n, \r, \t or \xHH,
 * so the server's parser reads back exactly value ("" stays an empty argument, as in
 * `save ""`; a multi-argument directive such as save or client-output-buffer-limit is
 * split by the server itself). 0, or -EMSGSIZE (out unchanged) at out's limit.
 */
int vk_config_quote(const char *value, struct buf *out);
/* Appends "name <quoted value>\n" after vk_directive_check_value; 0, -EINVAL, -EMSGSIZE. */
int vk_config_line(const char *name, const char *value, struct buf *out, struct err *e);

/* The whole table, for tests and documentation. */
size_t vk_directive_count(void);
const struct vk_directive *vk_directive_at(size_t i);

#endif

/*
 * backup: the instance manager's side of backups and restore (docs/backup.md).
 *
 * Objects, for a destination path P, the cluster C and the backup name N:
 *   P/C/N/dump.rdb        the RDB, streamed (S3 multipart / Azure blocks)
 *   P/C/N/manifest.json   written last: its presence means the backup is complete
 * (P empty: C/N/…; slashes are not doubled). The manifest names the dump relative to
 * itself ("file": "dump.rdb"), with its size and SHA-256, the engine and version, the
 * server's replid and offset when the snapshot was taken, the cluster, the name, the
 * method and the time.
 *
 * This header has the pure parts (keys, the manifest, the state file, the fixed-size
 * views kept in the snapshot; unit-tested by test_instance_backup) and the two
 * executors, which are implemented in backup.c (POST /v1/backup, its own thread) and
 * restore.c (the start-up restore, its own thread). The executors take struct inst
 * (inst.h); every function says which threads may call it.
 */
#ifndef REDIS_OPERATOR_INSTANCE_BACKUP_H
#define REDIS_OPERATOR_INSTANCE_BACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/instance_v1.h"
#include "lib/err.h"

#define INST_BACKUP_STATE_FILE   "redis-operator.backup.json" /* in the data dir */
#define INST_BACKUP_DUMP         "dump.rdb"
#define INST_BACKUP_MANIFEST     "manifest.json"
#define INST_BACKUP_MANIFEST_MAX (64 * 1024)
#define INST_BACKUP_FORMAT       1 /* manifest "format" */
#define INST_BACKUP_KEY_MAX      1024
#define INST_BACKUP_ATTEMPTS     4 /* uploads per backup (retryable errors only) */
#define INST_RESTORE_TMP         ".redis-operator.restore.tmp" /* in the data dir */

/* The last backup, as kept in the snapshot and the state file (fixed size: copied
 * under the context's mutex). Empty strings are null on the wire. */
struct inst_backup_view {
	bool set;
	char name[API_INST_BACKUP_NAME_MAX + 1];
	char method[8];
	char phase[16];
	char started_at[32], stopped_at[32];
	char key[INST_BACKUP_KEY_MAX], manifest_key[INST_BACKUP_KEY_MAX];
	int64_t size; /* -1 unknown */
	char sha256[65];
	char repl_id[48];
	int64_t offset; /* -1 unknown */
	char engine[16], engine_version[32];
	char error[API_INST_BACKUP_ERROR_MAX];
	bool retryable;
	int64_t attempts;
};

struct inst_restore_view {
	bool set;
	char name[API_INST_BACKUP_NAME_MAX + 1];
	char manifest_key[INST_BACKUP_KEY_MAX];
	char phase[16];
	char started_at[32], stopped_at[32];
	int64_t size;
	char sha256[65];
	char error[API_INST_BACKUP_ERROR_MAX];
	bool retryable;
	int64_t attempts;
};

struct inst_manifest {
	int64_t format;
	char cluster[64];
	char name[API_INST_BACKUP_NAME_MAX + 1];
	char method[8];
	char file[64]; /* the dump, relative to the manifest's "directory" */
	int64_t size;
	char sha256[65];
	char engine[16], engine_version[32];
	char repl_id[48];
	int64_t offset;
	char created_at[32];
};

/* --- pure (any thread) --- */

/* The two keys of a backup; -ENAMETOOLONG when they do not fit INST_BACKUP_KEY_MAX. */
int inst_backup_keys(const char *path, const char *cluster, const char *name,
                     char dump[INST_BACKUP_KEY_MAX], char manifest[INST_BACKUP_KEY_MAX],
                     struct err *e);
/* The key of file next to manifest_key ("a/b/manifest.json", "dump.rdb" → "a/b/dump.rdb"). */
int inst_backup_sibling(const char *manifest_key, const char *file, char out[INST_BACKUP_KEY_MAX],
                        struct err *e);

/* Compact JSON, sorted keys (free() it). */
char *inst_manifest_encode(const struct inst_manifest *m);
/* Refuses a manifest without file, size, sha256 (64 hex digits) or of a newer format;
 * -EPROTO with the field named. */
int inst_manifest_decode(const char *body, size_t len, struct inst_manifest *out, struct err *e);

/* The view as the contract's struct (pointers borrow from v). */
void inst_backup_view_api(const struct inst_backup_view *v, struct api_inst_backup_state *out);
void inst_restore_view_api(const struct inst_restore_view *v, struct api_inst_restore_state *out);
/* The state file: the contract's encoding of the view (free() it). */
char *inst_backup_state_encode(const struct inst_backup_view *v);
/* Decodes a state file; a backup still "running" in it was cut short by a restart of the
 * manager, and is returned failed and retryable. */
int inst_backup_state_decode(const char *body, size_t len, struct inst_backup_view *out,
                             struct err *e);

/* --- executors (backup.c, restore.c) --- */

struct inst;

/* Reads the state file (main thread, before the HTTP API starts). */
void inst_backup_init(struct inst *in);
/*
 * POST /v1/backup (libmicrohttpd's threads): decodes the body, then 202 and the state of
 * a backup started in its own thread, 200 and the state of the same name, 409 while
 * another runs, 400/413 for a bad body. *answer is a JSON text (free() it).
 */
unsigned inst_backup_post(struct inst *in, const char *body, size_t len, char **answer);
/* Cancels a running backup (its upload is aborted) and joins the thread (main thread,
 * at shutdown). */
void inst_backup_stop(struct inst *in);

/*
 * The start-up restore (main thread, from the boot step): 1 when the data is in place
 * (or nothing is to be restored), 0 while it runs or waits to retry (the reason is in the
 * snapshot: status.restore, the state's reason). Starts the restore thread when needed.
 */
int inst_restore_step(struct inst *in);
/* True when --restore-source is set. */
bool inst_restore_wanted(const struct inst *in);
/* A restore was started and has not completed: boot waits without a timeout (main). */
bool inst_restore_pending(struct inst *in);
void inst_restore_stop(struct inst *in);

#endif

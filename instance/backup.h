/*
 * backup: the instance manager's side of backups and restore (docs/backup.md).
 *
 * Objects, for a destination path P, the cluster C and the backup name N:
 *   P/C/N/dump.rdb        method rdb: the RDB, streamed (S3 multipart / Azure blocks)
 *   P/C/N/appendonlydir.tar.gz
 *                         method aof: appendonlydir (its manifest, base and increments)
 *                         as tar.gz, streamed the same way (lib/targz)
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
 * (internal.h); every function says which threads may call it.
 */
#ifndef REDIS_OPERATOR_INSTANCE_BACKUP_H
#define REDIS_OPERATOR_INSTANCE_BACKUP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/backup_store.h"
#include "api/instance_v1.h"
#include "lib/err.h"

#define INST_BACKUP_STATE_FILE   "redis-operator.backup.json" /* in the data dir */
#define INST_BACKUP_DUMP         "dump.rdb"
#define INST_BACKUP_MANIFEST     "manifest.json"
#define INST_BACKUP_MANIFEST_MAX (64 * 1024)
#define INST_BACKUP_FORMAT       1 /* manifest "format" */
#define INST_BACKUP_KEY_MAX      API_BACKUP_KEY_MAX
#define INST_BACKUP_ATTEMPTS     4 /* uploads per backup (retryable errors only) */
#define INST_RESTORE_TMP         ".redis-operator.restore.tmp" /* in the data dir */
#define INST_BACKUP_AOF_ARCHIVE  "appendonlydir.tar.gz"
#define INST_BACKUP_AOF_DIR      "appendonlydir"  /* appenddirname (never set by the spec) */
#define INST_BACKUP_AOF_NAME     "appendonly.aof" /* appendfilename (idem) */
#define INST_AOF_FILES_MAX       256 /* files of an AOF manifest (one base, increments) */
#define INST_AOF_NAME_MAX        128

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

/* One file of an AOF manifest. */
struct inst_aof_file {
	char name[INST_AOF_NAME_MAX]; /* a plain file name in appendonlydir */
	int64_t seq;
	char type; /* 'b' base, 'i' increment */
};

/* The files a consistent AOF needs: files[0] the base, then the increments in order. */
struct inst_aof_set {
	size_t nfiles;
	struct inst_aof_file files[INST_AOF_FILES_MAX];
};

/* --- pure (any thread) --- */

/* The two keys of a backup; -ENAMETOOLONG when they do not fit INST_BACKUP_KEY_MAX. */
int inst_backup_keys(const char *path, const char *cluster, const char *name,
                     char dump[INST_BACKUP_KEY_MAX], char manifest[INST_BACKUP_KEY_MAX],
                     struct err *e);
/*
 * Incomplete multipart uploads (backup_leftover.c). An upload whose abort failed (the
 * store unreachable) or whose manager was killed stays incomplete in an S3 bucket; each
 * completed backup then aborts those of its cluster's backups: the keys
 * "<path>/<cluster>/<ns>/<dir>/<dump.rdb | appendonlydir.tar.gz>" of the destination,
 * <dir> one segment (inst_backup_leftover_key). The controller runs one backup of a
 * cluster at a time, so none of them is still being written.
 */
/* The cluster's prefix of a backup's data key: the key less "<dir>/<file>" ("" when the
 * key has fewer than two '/'). */
void inst_backup_cluster_prefix(const char *key, char out[INST_BACKUP_KEY_MAX]);
/* Whether key is a backup's data object right under cluster_prefix (the shape above). */
bool inst_backup_leftover_key(const char *cluster_prefix, const char *key);

/* The key of file next to manifest_key ("a/b/manifest.json", "dump.rdb" → "a/b/dump.rdb"). */
int inst_backup_sibling(const char *manifest_key, const char *file, char out[INST_BACKUP_KEY_MAX],
                        struct err *e);

/* Compact JSON, sorted keys (free() it). */
char *inst_manifest_encode(const struct inst_manifest *m);
/* Refuses a manifest without file, size, sha256 (64 hex digits), of a method other
 * than rdb or aof (absent: rdb) or of a newer format; -EPROTO with the field named. */
int inst_manifest_decode(const char *body, size_t len, struct inst_manifest *out, struct err *e);

/* A Redis 7 / Valkey 8 AOF manifest (backup_aof.c): history files ('h') are left
 * out, one base is required; -EPROTO naming the line and the field otherwise (out is
 * scratch then). */
int inst_aof_manifest_parse(const char *text, size_t len, struct inst_aof_set *out, struct err *e);
/* The manifest of exactly the files of s, in the server's syntax (free() it). */
char *inst_aof_manifest_text(const struct inst_aof_set *s, size_t *len);

/* The view as the contract's struct (pointers borrow from v). */
void inst_backup_view_api(const struct inst_backup_view *v, struct api_inst_backup_state *out);
void inst_restore_view_api(const struct inst_restore_view *v, struct api_inst_restore_state *out);
/* The state file: the contract's encoding of the view (free() it). */
char *inst_backup_state_encode(const struct inst_backup_view *v);
/* Decodes a state file; a backup still "running" in it was cut short by a restart of the
 * manager, and is returned failed and retryable. */
int inst_backup_state_decode(const char *body, size_t len, struct inst_backup_view *out,
                             struct err *e);

/* --- executors (backup.c, backup_aofsnap.c, restore.c, restore_aof.c) --- */

struct objstore;
struct objstore_err;
struct objstore_get_result;

/* Shared by both executors (backup_common.c), any thread. The storage handle of a
 * destination with its credentials (the caller's; NULL and oe filled on a bad one). */
struct objstore *inst_backup_store_open(const struct api_destination *d,
                                        const struct api_inst_credentials *k,
                                        struct objstore_err *oe);
/* The same with objstore_put_stream's part spooled in spool_dir (the data dir: the
 * manager's memory stays one 64 KiB chunk whatever the part size). */
struct objstore *inst_backup_store_open_spooled(const struct api_destination *d,
                                                const struct api_inst_credentials *k,
                                                const char *spool_dir, struct objstore_err *oe);
/* Now, as the views' RFC 3339 text (seconds). */
void inst_backup_now(char out[32]);
/* Aborts the incomplete multipart uploads of the cluster of backup key key (above),
 * logging each; best effort (a store that cannot list them is logged). How many were
 * aborted. */
unsigned inst_backup_abort_leftovers(struct objstore *os, const char *key, const char *name);
/* Sets *cancel and joins the thread when joinable (main thread, at shutdown). */
void inst_backup_thread_stop(atomic_bool *cancel, pthread_t thread, bool joinable);

struct inst;
struct vk_conn;
struct targz_writer;
struct inst_aof_snap;

/*
 * Method aof (backup thread): BGREWRITEAOF and its end awaited, then the AOF manifest's
 * files opened and their lengths taken at one instant (backup_aofsnap.c says why that
 * is consistent), and a tar.gz writer over them. -ENOTSUP naming spec.method when the
 * server runs with appendonly no; -EIO when the rewrite failed (retryable); -ECANCELED
 * once *cancel is set. *out is the caller's (inst_aof_snap_free).
 */
int inst_aof_snapshot(struct vk_conn *c, const atomic_bool *cancel, struct inst_aof_snap **out,
                      struct err *e);
/* The archive's writer (lent; targz_writer_rewind it before each upload). */
struct targz_writer *inst_aof_snap_writer(struct inst_aof_snap *s);
void inst_aof_snap_free(struct inst_aof_snap *s);

/*
 * Method aof (restore thread, restore_aof.c): streams the archive at key into a
 * temporary directory of data_dir through lib/targz, checks its size and SHA-256
 * against m and its AOF manifest against its files, then renames it to
 * <data_dir>/appendonlydir (fsync'ed). An entry that is not appendonlydir or a plain
 * file in it is refused (-EPROTO, the entry named); oe->retryable for a full or failing
 * disk and what storage may answer later. Nothing is left behind on failure.
 */
int inst_restore_aof(const char *data_dir, struct objstore *os, const char *key,
                     const struct inst_manifest *m, const atomic_bool *cancel,
                     struct objstore_get_result *got, struct objstore_err *oe);

/*
 * Method rdb from the replication stream (backup_repl.c, the backup thread): the server's
 * Unix socket, the operator user, "REPLCONF rdb-only 1" (never counted as a replica),
 * PSYNC ? -1; the RDB is spooled into the data dir by a reader thread while the caller
 * uploads the spool with objstore_put_growing(…, inst_repl_snap_avail, snap, …).
 * Returns once the payload started (replid and offset known, those of +FULLRESYNC).
 * -ENOTSUP when the server refused a step (an old server, a replica without its primary,
 * an ACL): the caller falls back to BGSAVE; other errors are the connection's.
 */
struct inst_repl_conf {
	const char *sock_path;
	const char *user, *password; /* password NULL: no AUTH */
	const char *spool_dir;       /* the data dir */
	bool diskless;               /* REPLCONF capa eof (inst_repl_diskless) */
	int io_timeout_ms;           /* no byte (not even a keepalive) that long fails */
	int64_t start_timeout_ms;    /* PSYNC to the payload's header */
};
/* Diskless pays the server's repl-diskless-sync-delay (the user's, left alone) to
 * overlap the dump with the upload; below delay × this many bytes of used_memory the
 * overlap saves less than the delay (a dump runs at about 32 MiB/s here) and the
 * disk-based transfer, which starts at once, is asked. */
#define INST_REPL_BYTES_PER_DELAY_S (32LL << 20)
bool inst_repl_diskless(bool diskless_sync, long long delay_s, long long used_memory);
/* Pure parsers of the handshake's two answers (any thread): -EPROTO naming the line. */
int inst_repl_parse_fullresync(const char *line, char repl_id[48], int64_t *offset, struct err *e);
int inst_repl_parse_bulk(const char *line, bool *eof_mode, char mark[40], uint64_t *len,
                         struct err *e);
struct inst_repl_snap;
int inst_repl_snapshot(const struct inst_repl_conf *cf, const atomic_bool *cancel,
                       struct inst_repl_snap **out, struct err *e);
/* An objstore_avail_fn over the spool (ctx: the snap); the sent bytes are punched out
 * of the spool (FALLOC_FL_PUNCH_HOLE). */
int inst_repl_snap_avail(void *ctx, uint64_t sent, uint64_t want, uint64_t *have, bool *final,
                         struct err *e);
/* The stream broke / part of the spool was dropped: a retry needs a new snapshot. */
bool inst_repl_snap_failed(struct inst_repl_snap *s);
bool inst_repl_snap_consumed(const struct inst_repl_snap *s);
/* Waits for the reader's end: true when the server dropped the connection itself after
 * the payload, as it does an rdb-only replica. */
bool inst_repl_snap_dropped(struct inst_repl_snap *s);
int inst_repl_snap_fd(const struct inst_repl_snap *s);
const char *inst_repl_snap_replid(const struct inst_repl_snap *s);
int64_t inst_repl_snap_offset(const struct inst_repl_snap *s);
/* Stops the reader (the connection shut), closes the spool. NULL-safe. */
void inst_repl_snap_free(struct inst_repl_snap *s);

/*
 * BGSAVE (backup_save.c, the backup thread) once no child runs: a BGSAVE, an AOF rewrite
 * or any other child ("Another child process is active") is waited for, polling INFO,
 * and ours asked again, for wait_ms at most (-EBUSY then, naming what still runs); then
 * its end, for INST_BACKUP_SAVE_MS at most; rdb_last_bgsave_status:err is -EIO.
 */
#define INST_BACKUP_SAVE_MS       (6LL * 3600 * 1000)
#define INST_BACKUP_CHILD_WAIT_MS (3600LL * 1000)
int inst_bgsave(struct vk_conn *c, const atomic_bool *cancel, int64_t wait_ms, struct err *e);

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

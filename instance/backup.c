/*
 * backup: POST /v1/backup and its executor (backup.h, docs/backup.md).
 *
 * One backup at a time per manager. A handler decodes the body and, under the context's
 * mutex, either answers with the state of the backup of that name (idempotent: a
 * repeated POST never uploads twice), refuses with 409 while another is running, or
 * hands the request to a new backup thread. The thread: INFO replication (replid and
 * offset), then method rdb from the server's replication stream (backup_repl.c: PSYNC
 * as an rdb-only replica; the RDB spooled into the data dir as it arrives and uploaded
 * behind it with objstore_put_growing, so the dump and the upload overlap; replid and
 * offset those of +FULLRESYNC). A server that refuses it gets a BGSAVE (backup_save.c:
 * another child waited for, bounded) and the dump is uploaded with objstore_put_file
 * (the open descriptor keeps that snapshot even if a later save replaces the file).
 * Into <path>/<cluster>/<name>/dump.rdb, then manifest.json last. Retryable storage
 * errors are retried whole (objstore aborted the failed multipart upload) after a
 * back-off, INST_BACKUP_ATTEMPTS times at most; a broken replication stream takes a new
 * snapshot for the next attempt. Memory: one OBJSTORE_FILE_CHUNK (64 KiB) for the
 * upload and one for the stream reader, no part buffer. Method aof takes its
 * snapshot in backup_aofsnap.c (BGREWRITEAOF, the AOF files held open) and streams the
 * tar.gz of them with objstore_put_stream into <path>/<cluster>/<name>/appendonlydir.tar.gz.
 *
 * The state (struct inst_backup_view) lives in the snapshot [in->mu] and in the state
 * file of the data dir, written at each phase; a state file still "running" at start-up
 * is reported failed and retryable (backup_manifest.c). A multipart upload cut short by
 * a kill, or whose abort failed, is invisible (never completed); each completed backup
 * then aborts such leftovers of the cluster (backup_leftover.c; S3 only: Azure drops
 * uncommitted blocks after 7 days).
 *
 * Credentials: the request's, copied into the objstore handle, wiped with the request
 * when the thread ends; never logged nor written to the state file.
 */
#include "instance/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/backoff.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/file.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/objstore/objstore.h"
#include "lib/parse.h"
#include "lib/targz.h"
#include "lib/valkey/info.h"

#define SAVE_POLL_MS  100
#define BACKUP_CMD_MS 10000
#define RETRY_BASE_MS 500
#define RETRY_CAP_MS  30000
#define REPL_IO_MS    60000 /* the server sends a keepalive every second */

struct inst_backup {
	pthread_t thread;
	bool joinable; /* [in->mu] a thread was started and not joined yet */
	bool running;  /* [in->mu] */
	atomic_bool cancel;
	struct api_inst_backup_request req; /* the thread's while running */
	char state_path[PATH_MAX];
};

struct job {
	struct inst *in;
	struct inst_backup *b;
	struct inst_backup_view v;
	int fd;                      /* method rdb by BGSAVE: the dump */
	struct inst_repl_snap *repl; /* method rdb from the replication stream */
	bool streamed;               /* that way (repl NULL between two snapshots) */
	struct inst_repl_conf rc;
	char *pw;                  /* the operator password for rc (wiped) */
	struct inst_aof_snap *aof; /* method aof */
};

/* Copies the view into the snapshot and the state file. */
static void publish(struct job *j)
{
	struct err e = { 0 };
	char *text = inst_backup_state_encode(&j->v);

	pthread_mutex_lock(&j->in->mu);
	j->in->snap.backup = j->v;
	pthread_mutex_unlock(&j->in->mu);
	if (inst_file_write_atomic(j->b->state_path, text, strlen(text), &e) < 0)
		log_warn("backup", "cannot write the state file", "error", e.msg, (char *)NULL);
	free(text);
}

static void fail(struct job *j, const char *msg, bool retryable)
{
	snprintf(j->v.error, sizeof(j->v.error), "%s", msg);
	j->v.retryable = retryable;
	snprintf(j->v.phase, sizeof(j->v.phase), "%s", API_INST_BACKUP_FAILED);
	inst_backup_now(j->v.stopped_at);
	log_error("backup", "backup failed", "name", j->v.name, "error", msg, "retryable",
	          retryable ? "true" : "false", (char *)NULL);
}

/* --- the snapshot --- */

static bool cancelled(struct inst_backup *b)
{
	return atomic_load(&b->cancel);
}

static int replication_point(struct job *j, struct vk_conn *c, struct err *e)
{
	struct vk_info info;
	int rc = vk_info(c, "replication", &info, e);

	if (rc)
		return rc;
	snprintf(j->v.repl_id, sizeof(j->v.repl_id), "%s", info.master_replid);
	j->v.offset = info.master_repl_offset >= 0 ? info.master_repl_offset : -1;
	return 0;
}

/* The server's own settings pick diskless or disk-based (inst_repl_diskless). */
static int repl_conf(struct job *j, struct vk_conn *c, struct err *e)
{
	struct buf sync = BUF_INIT(16), delay = BUF_INIT(32);
	struct vk_info mem;
	int64_t delay_s = 0;
	int rc = vk_config_get(c, "repl-diskless-sync", &sync, e);

	if (!rc)
		rc = vk_config_get(c, "repl-diskless-sync-delay", &delay, e);
	if (!rc)
		rc = vk_info(c, "memory", &mem, e);
	if (!rc && parse_int64(buf_cstr(&delay), 0, INT64_MAX, &delay_s, NULL) < 0)
		delay_s = INT32_MAX; /* unreadable: no diskless wait of unknown length */
	if (!rc) {
		pthread_mutex_lock(&j->in->mu);
		j->pw = j->in->shared_pw ? xstrdup(j->in->shared_pw) : NULL;
		pthread_mutex_unlock(&j->in->mu);
		j->rc = (struct inst_repl_conf){
			.sock_path = j->in->sock_path,
			.user = INST_OPERATOR_USER,
			.password = j->pw,
			.spool_dir = j->in->set.data_dir,
			.diskless = inst_repl_diskless(strcmp(buf_cstr(&sync), "yes") == 0, delay_s,
			                               mem.used_memory),
			.io_timeout_ms = REPL_IO_MS,
			.start_timeout_ms = INST_BACKUP_CHILD_WAIT_MS,
		};
	}
	buf_release(&sync);
	buf_release(&delay);
	return rc;
}

/* The replication stream: 1 when the server refused it (BGSAVE then), 0, or an error. */
static int repl_start(struct job *j, struct err *e)
{
	int rc = inst_repl_snapshot(&j->rc, &j->b->cancel, &j->repl, e);

	if (rc == -ENOTSUP) {
		log_warn("backup", "the replication stream was refused; BGSAVE instead", "name",
		         j->v.name, "error", e->msg, (char *)NULL);
		err_clear(e);
		return 1;
	}
	if (rc)
		return rc;
	snprintf(j->v.repl_id, sizeof(j->v.repl_id), "%s", inst_repl_snap_replid(j->repl));
	j->v.offset = inst_repl_snap_offset(j->repl);
	log_info("backup", "streaming the RDB from the server", "name", j->v.name, "mode",
	         j->rc.diskless ? "diskless" : "disk-based", (char *)NULL);
	return 0;
}

static int open_dump(struct job *j, struct vk_conn *c, struct err *e)
{
	struct buf dir = BUF_INIT(PATH_MAX), file = BUF_INIT(256);
	char path[PATH_MAX];
	int rc = vk_config_get(c, "dir", &dir, e);

	if (!rc)
		rc = vk_config_get(c, "dbfilename", &file, e);
	if (!rc) {
		snprintf(path, sizeof(path), "%s/%s", buf_cstr(&dir), buf_cstr(&file));
		j->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (j->fd < 0)
			rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
	}
	buf_release(&dir);
	buf_release(&file);
	return rc;
}

/* Replid/offset, then: rdb, BGSAVE and the dump opened; aof, the AOF files held open
 * (backup_aofsnap.c). */
static int snapshot(struct job *j, struct err *e)
{
	struct vk_conn *c = inst_conn_new(j->in, NULL, 0, BACKUP_CMD_MS);
	int rc = vk_conn_connect(c, e);

	if (!rc)
		rc = replication_point(j, c, e);
	if (!rc && j->b->req.method == API_METHOD_AOF) {
		rc = inst_aof_snapshot(c, &j->b->cancel, &j->aof, e);
	} else if (!rc && (rc = repl_conf(j, c, e)) == 0 && (rc = repl_start(j, e)) == 1) {
		rc = inst_bgsave(c, &j->b->cancel, INST_BACKUP_CHILD_WAIT_MS, e);
		if (!rc)
			rc = open_dump(j, c, e);
	} else if (!rc) {
		j->streamed = true;
	}
	vk_conn_free(c);
	return rc;
}

/* --- the upload --- */

static int put_manifest(struct job *j, struct objstore *os, struct objstore_err *oe)
{
	struct inst_manifest m = { .format = INST_BACKUP_FORMAT,
		                   .size = j->v.size,
		                   .offset = j->v.offset };
	char *text;
	int rc;

	snprintf(m.cluster, sizeof(m.cluster), "%s", j->in->set.cluster_name);
	snprintf(m.name, sizeof(m.name), "%s", j->v.name);
	snprintf(m.method, sizeof(m.method), "%s", j->v.method);
	snprintf(m.file, sizeof(m.file), "%s", j->aof ? INST_BACKUP_AOF_ARCHIVE : INST_BACKUP_DUMP);
	snprintf(m.sha256, sizeof(m.sha256), "%s", j->v.sha256);
	snprintf(m.engine, sizeof(m.engine), "%s", j->v.engine);
	snprintf(m.engine_version, sizeof(m.engine_version), "%s", j->v.engine_version);
	snprintf(m.repl_id, sizeof(m.repl_id), "%s", j->v.repl_id);
	inst_backup_now(m.created_at);
	text = inst_manifest_encode(&m);
	rc = objstore_put_small(os, j->v.manifest_key, text, strlen(text), oe);
	free(text);
	return rc;
}

/* One attempt of method aof: the archive from its first byte, then the manifest. */
static int upload_aof(struct job *j, struct objstore *os, struct objstore_err *oe)
{
	struct targz_writer *w = inst_aof_snap_writer(j->aof);
	struct objstore_put_result res;
	int rc;

	targz_writer_rewind(w);
	if ((rc = objstore_put_stream(os, j->v.key, targz_writer_read, w, &res, oe)) < 0)
		return rc;
	j->v.size = (int64_t)res.size;
	snprintf(j->v.sha256, sizeof(j->v.sha256), "%s", res.sha256);
	return put_manifest(j, os, oe);
}

/* One attempt from the replication stream: the spool from its start, or a new snapshot
 * when the stream broke or an attempt already dropped uploaded bytes; then the
 * manifest. */
static int upload_repl(struct job *j, struct objstore *os, struct objstore_err *oe)
{
	struct objstore_put_result res;
	struct err e = { 0 };
	int rc;

	if (j->repl && (inst_repl_snap_failed(j->repl) || inst_repl_snap_consumed(j->repl))) {
		inst_repl_snap_free(j->repl);
		j->repl = NULL;
	}
	if (!j->repl && (rc = repl_start(j, &e)) != 0) { /* a new snapshot */
		objstore_err_clear(oe);
		oe->retryable = rc != -ECANCELED;
		return err_set(&oe->err, rc < 0 ? rc : -EIO, "the replication stream: %s",
		               e.msg[0] ? e.msg : "refused on a retry");
	}
	rc = objstore_put_growing(os, j->v.key, inst_repl_snap_fd(j->repl), inst_repl_snap_avail,
	                          j->repl, &j->b->cancel, &res, oe);
	if (rc < 0 && inst_repl_snap_failed(j->repl))
		oe->retryable = !cancelled(j->b); /* a new snapshot may work */
	if (rc < 0)
		return rc;
	j->v.size = (int64_t)res.size;
	snprintf(j->v.sha256, sizeof(j->v.sha256), "%s", res.sha256);
	return put_manifest(j, os, oe);
}

/* One attempt: the dump from its start, then the manifest. */
static int upload_once(struct job *j, struct objstore *os, struct objstore_err *oe)
{
	struct objstore_put_result res;
	struct stat st;
	int rc;

	if (j->aof)
		return upload_aof(j, os, oe);
	if (j->streamed)
		return upload_repl(j, os, oe);
	if (lseek(j->fd, 0, SEEK_SET) < 0 || fstat(j->fd, &st) < 0) {
		objstore_err_clear(oe);
		return err_set(&oe->err, -errno, "the dump: %s", strerror(errno));
	}
	if ((rc = objstore_put_file(os, j->v.key, j->fd, &j->b->cancel, &res, oe)) < 0)
		return rc;
	if (res.size != (uint64_t)st.st_size) {
		oe->retryable = true;
		return err_set(&oe->err, -EIO,
		               "the dump changed while uploading (%llu of %lld bytes)",
		               (unsigned long long)res.size, (long long)st.st_size);
	}
	j->v.size = (int64_t)res.size;
	snprintf(j->v.sha256, sizeof(j->v.sha256), "%s", res.sha256);
	return put_manifest(j, os, oe);
}

/* Sleeps ms unless cancelled: false when cancelled. */
static bool pause_ms(struct inst_backup *b, int64_t ms)
{
	for (int64_t t = 0; t < ms; t += SAVE_POLL_MS) {
		if (cancelled(b))
			return false;
		usleep(SAVE_POLL_MS * 1000);
	}
	return !cancelled(b);
}

static int upload(struct job *j, struct objstore *os, struct objstore_err *oe)
{
	struct backoff bo;
	int rc = 0;

	backoff_init(&bo, RETRY_BASE_MS, RETRY_CAP_MS, 2.0, 0.2, (uint64_t)clock_mono_ms());
	for (int n = 1; n <= INST_BACKUP_ATTEMPTS; n++) {
		objstore_err_clear(oe);
		j->v.attempts = n;
		publish(j);
		if ((rc = upload_once(j, os, oe)) == 0 || !oe->retryable)
			return rc;
		log_warn("backup", "upload failed; retrying", "name", j->v.name, "error",
		         oe->err.msg, (char *)NULL);
		if (n < INST_BACKUP_ATTEMPTS && !pause_ms(j->b, backoff_next(&bo)))
			break;
	}
	return rc;
}

static void run(struct job *j)
{
	struct objstore_err oe;
	struct objstore *os;
	struct err e = { 0 };

	if (!(os = inst_backup_store_open_spooled(&j->b->req.destination, &j->b->req.credentials,
	                                          j->in->set.data_dir, &oe)))
		return fail(j, oe.err.msg, false);
	if (snapshot(j, &e) < 0) {
		fail(j, e.msg, e.code != -ECANCELED && e.code != -ENOENT && e.code != -ENOTSUP);
	} else if (upload(j, os, &oe) < 0) {
		fail(j, oe.err.msg, oe.retryable || oe.err.code == -ECANCELED);
	} else {
		/* the store just took ours: now, not before each attempt, where an unreachable
		 * store would cost every attempt a second connect timeout */
		(void)inst_backup_abort_leftovers(os, j->v.key, j->v.name);
		snprintf(j->v.phase, sizeof(j->v.phase), "%s", API_INST_BACKUP_COMPLETED);
		inst_backup_now(j->v.stopped_at);
		log_info("backup", "backup completed", "name", j->v.name, "key", j->v.key, "sha256",
		         j->v.sha256, (char *)NULL);
	}
	objstore_free(os);
}

static void *backup_main(void *arg)
{
	struct job *j = arg;
	struct inst_backup *b = j->b;

	j->fd = -1;
	run(j);
	if (j->fd >= 0)
		close(j->fd);
	inst_aof_snap_free(j->aof);
	inst_repl_snap_free(j->repl);
	free_secret(j->pw);
	publish(j);
	pthread_mutex_lock(&j->in->mu);
	api_inst_backup_request_release(&b->req);
	b->running = false;
	pthread_mutex_unlock(&j->in->mu);
	free(j);
	return NULL;
}

/* --- the handler --- */

static char *state_text(const struct inst_backup_view *v)
{
	return inst_backup_state_encode(v);
}

static char *error_text(const char *msg)
{
	struct api_inst_error err = { .error = msg };
	json_t *j;
	char *s;

	j = api_inst_error_encode(&err);
	s = jsonx_dumps_compact(j);
	json_decref(j);
	return s;
}

/* The first view of a new backup [in->mu held]. */
static int view_init(struct inst *in, const struct api_inst_backup_request *r,
                     struct inst_backup_view *v, struct err *e)
{
	const char *path =
	        r->destination.s3.set ? r->destination.s3.path : r->destination.azure.path;

	*v = (struct inst_backup_view){ .set = true, .size = -1, .offset = -1 };
	if (inst_backup_keys(path, in->set.cluster_name, r->name, v->key, v->manifest_key, e) < 0 ||
	    (r->method == API_METHOD_AOF &&
	     inst_backup_sibling(v->manifest_key, INST_BACKUP_AOF_ARCHIVE, v->key, e) < 0))
		return -ENAMETOOLONG;
	snprintf(v->name, sizeof(v->name), "%s", r->name);
	snprintf(v->method, sizeof(v->method), "%s", r->method == API_METHOD_AOF ? "aof" : "rdb");
	snprintf(v->phase, sizeof(v->phase), "%s", API_INST_BACKUP_RUNNING);
	snprintf(v->engine, sizeof(v->engine), "%s", in->snap.engine);
	snprintf(v->engine_version, sizeof(v->engine_version), "%s", in->snap.engine_version);
	inst_backup_now(v->started_at);
	return 0;
}

/* [in->mu held] 202 and the thread started, or 500. */
static unsigned start(struct inst *in, struct api_inst_backup_request *r, char **answer)
{
	struct inst_backup *b = in->backup;
	struct job *j = xcalloc(1, sizeof(*j));
	struct err e = { 0 };

	if (view_init(in, r, &j->v, &e) < 0) {
		free(j);
		*answer = error_text(e.msg);
		return 400;
	}
	if (b->joinable)
		pthread_join(b->thread, NULL);
	b->joinable = false;
	j->in = in;
	j->b = b;
	b->req = *r;
	memset(r, 0, sizeof(*r));
	b->running = true;
	in->snap.backup = j->v;
	if (pthread_create(&b->thread, NULL, backup_main, j) != 0) {
		b->running = false;
		api_inst_backup_request_release(&b->req);
		free(j);
		*answer = error_text("cannot start the backup thread");
		return 500;
	}
	b->joinable = true;
	*answer = state_text(&in->snap.backup);
	log_info("backup", "backup started", "name", in->snap.backup.name, "key",
	         in->snap.backup.key, (char *)NULL);
	return 202;
}

unsigned inst_backup_post(struct inst *in, const char *body, size_t len, char **answer)
{
	struct api_inst_backup_request r;
	const struct inst_backup_view *cur = &in->snap.backup;
	struct err e = { 0 };
	unsigned status;
	int rc = api_inst_backup_request_decode(body, len, &r, &e);

	if (rc) {
		*answer = error_text(e.msg);
		return rc == -EMSGSIZE ? 413 : 400;
	}
	pthread_mutex_lock(&in->mu);
	if (in->stopping) {
		*answer = error_text("shutting down");
		status = 503;
	} else if (cur->set && strcmp(cur->name, r.name) == 0 &&
	           strcmp(cur->phase, API_INST_BACKUP_FAILED) != 0) {
		*answer = state_text(cur); /* running or completed: the same backup */
		status = 200;
	} else if (in->backup->running) {
		char msg[API_INST_BACKUP_NAME_MAX + 64];

		snprintf(msg, sizeof(msg), "backup %s is running", cur->name);
		*answer = error_text(msg);
		status = 409;
	} else {
		status = start(in, &r, answer);
	}
	pthread_mutex_unlock(&in->mu);
	api_inst_backup_request_release(&r);
	return status;
}

void inst_backup_init(struct inst *in)
{
	struct inst_backup *b = xcalloc(1, sizeof(*b));
	struct inst_backup_view v;
	struct err e = { 0 };
	char *text = NULL;
	size_t len = 0;

	snprintf(b->state_path, sizeof(b->state_path), "%s/%s", in->set.data_dir,
	         INST_BACKUP_STATE_FILE);
	in->backup = b;
	if (file_read_all(b->state_path, INST_BACKUP_MANIFEST_MAX, &text, &len, &e) < 0)
		return;
	if (inst_backup_state_decode(text, len, &v, &e) < 0) {
		log_warn("backup", "ignoring an unreadable state file", "path", b->state_path,
		         "error", e.msg, (char *)NULL);
	} else {
		char *fixed = inst_backup_state_encode(&v);

		in->snap.backup = v; /* before any thread starts */
		(void)inst_file_write_atomic(b->state_path, fixed, strlen(fixed), &e);
		free(fixed);
	}
	free(text);
}

void inst_backup_stop(struct inst *in)
{
	struct inst_backup *b = in->backup;

	if (!b)
		return;
	inst_backup_thread_stop(&b->cancel, b->thread, b->joinable);
	free(b);
	in->backup = NULL;
}

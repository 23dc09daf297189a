/*
 * restore: the start-up restore of spec.bootstrap.backupName (backup.h, docs/backup.md).
 *
 * The controller passes where the backup is (--restore-source: the RedisBackup's
 * destination and status.manifestKey, as JSON) and mounts the storage credentials as a
 * Secret volume (--restore-credentials-dir, one file per key). The boot step asks
 * inst_restore_step before the role decision, only for the current primary with an
 * empty data dir and no other pod of the cluster (a brand-new cluster: anything else
 * would put old data in place of newer data). A restore thread then downloads the
 * manifest, streams the dump into a temporary file of the data dir (fsync), checks its
 * size and SHA-256 against the manifest and renames it to dump.rdb (fsync of the dir):
 * the server only ever sees a complete, verified file. A method aof backup goes through
 * restore_aof.c instead (the archive extracted into appendonlydir), and is refused when
 * the cluster runs with appendonly no (its server would start empty). Until then the server is not
 * started, the state stays "booting" (not ready) and status.restore says why; a failure
 * (missing or corrupt object, storage down, disk full) is retried after a back-off
 * (the object may be fixed or the disk freed), never answered with an empty primary.
 *
 * Threads: inst_restore_step and _stop on the main thread; the restore thread writes
 * the snapshot's restore view and its own fields under in->mu.
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

#include "api/backup_store.h"
#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/backoff.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/objstore/objstore.h"

#define RETRY_BASE_MS 1000
#define RETRY_CAP_MS  (5 * 60 * 1000)
#define CRED_FILE_MAX 8192

struct inst_restore {
	struct api_inst_restore_source src;
	bool src_ok;
	pthread_t thread;
	bool joinable;     /* [sup] */
	bool running;      /* [in->mu] */
	bool done;         /* [in->mu] the data is in place */
	int64_t next_at;   /* [in->mu] mono ms of the next attempt */
	struct backoff bo; /* the restore thread's while running */
	atomic_bool cancel;
};

#define N_CRED API_INST_CREDENTIAL_KEYS

struct job {
	struct inst *in;
	struct inst_restore *r;
	struct inst_restore_view v;
	char *cred[N_CRED]; /* wiped and freed at the end */
	struct buf manifest;
	int fd;
	int write_rc; /* the dump's write error (objstore only says "the write callback") */
	bool aof_off; /* the cluster runs with appendonly no: an aof backup cannot load */
};

bool inst_restore_wanted(const struct inst *in)
{
	return in->set.restore_source && *in->set.restore_source;
}

static void creds_load(struct job *j)
{
	char path[PATH_MAX];
	size_t len;

	for (size_t i = 0; i < N_CRED; i++) {
		snprintf(path, sizeof(path), "%s/%s", j->in->set.restore_credentials_dir,
		         api_inst_credential_key(i));
		if (file_read_all_secret(path, CRED_FILE_MAX, &j->cred[i], &len, NULL) < 0)
			j->cred[i] = NULL;
	}
}

static void creds_free(struct job *j)
{
	for (size_t i = 0; i < N_CRED; i++) {
		if (j->cred[i])
			explicit_bzero(j->cred[i], strlen(j->cred[i]));
		free(j->cred[i]);
		j->cred[i] = NULL;
	}
}

static const char *env_of(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

/* The credential files as the contract's struct (pointers borrow from j->cred). With no
 * credential files and the pod's cloud workload identity in the environment, the
 * attempt fails saying that this is not supported (api_backup_web_identity), rather
 * than the store's generic "needs AWS_ACCESS_KEY_ID ...". */
static struct objstore *store_open(struct job *j, struct objstore_err *oe)
{
	struct api_inst_credentials k = { 0 };
	char msg[API_BACKUP_WEB_IDENTITY_MSG_MAX];

	for (size_t i = 0; i < N_CRED; i++)
		api_inst_credentials_set(&k, i, j->cred[i]);
	if (api_backup_web_identity(&j->r->src.destination, &k, env_of, NULL, msg)) {
		err_set(&oe->err, -EINVAL, "%s", msg);
		oe->retryable = false;
		return NULL;
	}
	return inst_backup_store_open(&j->r->src.destination, &k, oe);
}

static int to_buf(void *ctx, const void *data, size_t n)
{
	struct job *j = ctx;

	return buf_append(&j->manifest, data, n) < 0 ? -EMSGSIZE : 0;
}

static int to_file(void *ctx, const void *data, size_t n)
{
	struct job *j = ctx;
	const char *p = data;

	if (atomic_load(&j->r->cancel))
		return j->write_rc = -ECANCELED;
	while (n) {
		ssize_t w = write(j->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return j->write_rc = -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int get_manifest(struct job *j, struct objstore *os, struct inst_manifest *m,
                        struct objstore_err *oe)
{
	int rc;

	buf_init(&j->manifest, INST_BACKUP_MANIFEST_MAX);
	rc = objstore_get_stream(os, j->r->src.manifest_key, to_buf, j, NULL, oe);
	if (rc == -EMSGSIZE)
		err_set(&oe->err, rc, "manifest %s: larger than %d bytes", j->r->src.manifest_key,
		        INST_BACKUP_MANIFEST_MAX);
	if (!rc)
		rc = inst_manifest_decode(j->manifest.data, j->manifest.len, m, &oe->err);
	buf_release(&j->manifest);
	return rc;
}

static int write_err(struct objstore_err *oe, int rc, const char *path)
{
	oe->retryable = rc == -ENOSPC || rc == -EIO;
	return err_set(&oe->err, rc, "%s: %s%s", path, strerror(-rc),
	               rc == -ENOSPC ? " (ENOSPC: the data volume is full)" : "");
}

/* Streams the dump into tmp, fsync'ed, and checks it against the manifest. */
static int get_dump(struct job *j, struct objstore *os, const struct inst_manifest *m,
                    const char *tmp, struct objstore_err *oe)
{
	struct objstore_get_result got;
	char key[INST_BACKUP_KEY_MAX];
	int rc = inst_backup_sibling(j->r->src.manifest_key, m->file, key, &oe->err);

	if (rc)
		return rc;
	(void)unlink(tmp);
	j->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (j->fd < 0)
		return write_err(oe, -errno, tmp);
	j->write_rc = 0;
	rc = objstore_get_stream(os, key, to_file, j, &got, oe);
	if (rc < 0 && j->write_rc) { /* the write callback's own error */
		objstore_err_clear(oe);
		return write_err(oe, j->write_rc, tmp);
	}
	if (!rc && fsync(j->fd) < 0)
		return write_err(oe, -errno, tmp);
	if (rc)
		return rc;
	j->v.size = (int64_t)got.size;
	snprintf(j->v.sha256, sizeof(j->v.sha256), "%s", got.sha256);
	if ((int64_t)got.size != m->size || strcmp(got.sha256, m->sha256) != 0) {
		objstore_err_clear(oe);
		return err_set(&oe->err, -EBADMSG,
		               "%s is corrupt: %llu bytes with sha256 %s, the manifest says %lld "
		               "bytes with sha256 %s",
		               key, (unsigned long long)got.size, got.sha256, (long long)m->size,
		               m->sha256);
	}
	return 0;
}

static void sync_dir(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
}

/* With appendonly yes (pvc) the server reads only its AOF directory and would start
 * empty beside a dump.rdb, so the dump is also linked in as the base of a one-file AOF
 * (appendonlydir/appendonly.aof.1.base.rdb and its manifest: the defaults of
 * appenddirname and appendfilename, which the spec cannot change). Built under a
 * temporary name, then renamed. */
static int aof_dir(struct job *j, const char *tmp, struct objstore_err *oe)
{
	static const char man[] = "file appendonly.aof.1.base.rdb seq 1 type b\n";
	char d[PATH_MAX], p[PATH_MAX + 64], dst[PATH_MAX];
	struct err e = { 0 };

	snprintf(d, sizeof(d), "%s/%s.aof", j->in->set.data_dir, INST_RESTORE_TMP);
	snprintf(dst, sizeof(dst), "%s/appendonlydir", j->in->set.data_dir);
	snprintf(p, sizeof(p), "%s/appendonly.aof.1.base.rdb", d);
	if (mkdir(d, 0700) < 0 && errno != EEXIST)
		return write_err(oe, -errno, d);
	(void)unlink(p);
	if (link(tmp, p) < 0)
		return write_err(oe, -errno, p);
	snprintf(p, sizeof(p), "%s/appendonly.aof.manifest", d);
	if (inst_file_write_atomic(p, man, sizeof(man) - 1, &e) < 0)
		return write_err(oe, e.code, p);
	sync_dir(d);
	if (rename(d, dst) < 0)
		return write_err(oe, -errno, dst);
	return 0;
}

/* The AOF directory, then dump.rdb (renamed last), then the directory synced. */
static int put_in_place(struct job *j, const char *tmp, struct objstore_err *oe)
{
	char dst[PATH_MAX];
	int rc = aof_dir(j, tmp, oe);

	if (rc)
		return rc;
	snprintf(dst, sizeof(dst), "%s/%s", j->in->set.data_dir, INST_BACKUP_DUMP);
	if (rename(tmp, dst) < 0)
		return write_err(oe, -errno, dst);
	sync_dir(j->in->set.data_dir);
	return 0;
}

/* Method aof: restore_aof.c extracts and checks the archive into appendonlydir. */
static int get_aof(struct job *j, struct objstore *os, const struct inst_manifest *m,
                   struct objstore_err *oe)
{
	struct objstore_get_result got;
	char key[INST_BACKUP_KEY_MAX];
	int rc;

	if (j->aof_off)
		return err_set(&oe->err, -ENOTSUP,
		               "backup %s is method aof and this cluster runs with appendonly no "
		               "(spec.redis): its server would start without reading the AOF; set "
		               "appendonly yes or restore an rdb backup",
		               j->v.name);
	rc = inst_backup_sibling(j->r->src.manifest_key, m->file, key, &oe->err);
	if (!rc)
		rc = inst_restore_aof(j->in->set.data_dir, os, key, m, &j->r->cancel, &got, oe);
	if (rc)
		return rc;
	j->v.size = (int64_t)got.size;
	snprintf(j->v.sha256, sizeof(j->v.sha256), "%s", got.sha256);
	return 0;
}

static int attempt(struct job *j, struct objstore_err *oe)
{
	struct inst_manifest m;
	struct objstore *os;
	char tmp[PATH_MAX];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s/%s", j->in->set.data_dir, INST_RESTORE_TMP);
	creds_load(j);
	os = store_open(j, oe);
	creds_free(j);
	if (!os)
		return oe->err.code;
	rc = get_manifest(j, os, &m, oe);
	if (!rc && strcmp(m.method, "aof") == 0) {
		rc = get_aof(j, os, &m, oe);
		objstore_free(os);
		return rc;
	}
	if (!rc)
		rc = get_dump(j, os, &m, tmp, oe);
	if (j->fd >= 0)
		close(j->fd);
	j->fd = -1;
	if (!rc)
		rc = put_in_place(j, tmp, oe);
	if (rc)
		(void)unlink(tmp);
	objstore_free(os);
	return rc;
}

static void *restore_main(void *arg)
{
	struct job *j = arg;
	struct objstore_err oe;
	int64_t delay = 0;
	int rc;

	objstore_err_clear(&oe);
	j->fd = -1;
	rc = attempt(j, &oe);
	inst_backup_now(j->v.stopped_at);
	if (rc) {
		snprintf(j->v.phase, sizeof(j->v.phase), "%s", API_INST_RESTORE_FAILED);
		snprintf(j->v.error, sizeof(j->v.error), "%s", oe.err.msg);
		j->v.retryable = oe.retryable;
		delay = backoff_next(&j->r->bo);
		log_error("restore", "restore failed; the server is not started", "name", j->v.name,
		          "error", oe.err.msg, (char *)NULL);
	} else {
		snprintf(j->v.phase, sizeof(j->v.phase), "%s", API_INST_RESTORE_COMPLETED);
		j->v.error[0] = '\0';
		log_info("restore", "restore completed", "name", j->v.name, "sha256", j->v.sha256,
		         (char *)NULL);
	}
	pthread_mutex_lock(&j->in->mu);
	j->in->snap.restore = j->v;
	j->r->done = rc == 0;
	j->r->next_at = clock_mono_ms() + delay;
	j->r->running = false;
	pthread_mutex_unlock(&j->in->mu);
	free(j);
	return NULL;
}

static struct inst_restore *restore_get(struct inst *in)
{
	struct inst_restore *r = in->restore;
	const char *s = in->set.restore_source;
	struct err e = { 0 };

	if (r)
		return r;
	r = in->restore = xcalloc(1, sizeof(*r));
	backoff_init(&r->bo, RETRY_BASE_MS, RETRY_CAP_MS, 2.0, 0.2, (uint64_t)clock_mono_ms());
	r->src_ok = api_inst_restore_source_decode(s, strlen(s), &r->src, &e) == 0;
	pthread_mutex_lock(&in->mu);
	in->snap.restore = (struct inst_restore_view){ .set = true, .size = -1 };
	snprintf(in->snap.restore.phase, sizeof(in->snap.restore.phase), "%s",
	         r->src_ok ? API_INST_RESTORE_RESTORING : API_INST_RESTORE_FAILED);
	if (!r->src_ok)
		snprintf(in->snap.restore.error, sizeof(in->snap.restore.error),
		         "--restore-source: %.480s", e.msg);
	else
		snprintf(in->snap.restore.name, sizeof(in->snap.restore.name), "%s", r->src.name);
	pthread_mutex_unlock(&in->mu);
	if (!r->src_ok)
		log_error("restore", "malformed restore source", "error", e.msg, (char *)NULL);
	return r;
}

/* The server will run with appendonly no (render.c's rule): emptyDir, or spec.redis. */
static bool appendonly_off(struct inst *in)
{
	const char *v = inst_desired_redis(&in->spec.desired, "appendonly");

	return v ? strcmp(v, "no") == 0 : in->spec.ephemeral;
}

/* [in->mu held] */
static void start(struct inst *in, struct inst_restore *r)
{
	struct job *j = xcalloc(1, sizeof(*j));

	j->in = in;
	j->r = r;
	j->aof_off = appendonly_off(in);
	j->v = in->snap.restore;
	snprintf(j->v.name, sizeof(j->v.name), "%s", r->src.name);
	snprintf(j->v.manifest_key, sizeof(j->v.manifest_key), "%s", r->src.manifest_key);
	snprintf(j->v.phase, sizeof(j->v.phase), "%s", API_INST_RESTORE_RESTORING);
	inst_backup_now(j->v.started_at);
	j->v.stopped_at[0] = '\0';
	j->v.attempts++;
	in->snap.restore = j->v;
	r->running = true;
	if (pthread_create(&r->thread, NULL, restore_main, j) != 0) {
		r->running = false;
		r->next_at = clock_mono_ms() + RETRY_BASE_MS;
		free(j);
		return;
	}
	r->joinable = true;
	log_info("restore", "restoring a backup before the first start", "name", r->src.name,
	         "manifest", r->src.manifest_key, (char *)NULL);
}

int inst_restore_step(struct inst *in)
{
	struct inst_restore *r;
	int done = 0;

	if (!inst_restore_wanted(in))
		return 1;
	r = restore_get(in);
	if (!r->src_ok)
		return 0;
	pthread_mutex_lock(&in->mu);
	if (!r->running && r->joinable) {
		pthread_join(r->thread, NULL); /* finished: it cleared running last */
		r->joinable = false;
	}
	if (r->done)
		done = 1;
	else if (!r->running && clock_mono_ms() >= r->next_at)
		start(in, r);
	pthread_mutex_unlock(&in->mu);
	return done;
}

bool inst_restore_pending(struct inst *in)
{
	bool pending;

	if (!in->restore)
		return false;
	pthread_mutex_lock(&in->mu);
	pending = !in->restore->done;
	pthread_mutex_unlock(&in->mu);
	return pending;
}

void inst_restore_stop(struct inst *in)
{
	struct inst_restore *r = in->restore;

	if (!r)
		return;
	inst_backup_thread_stop(&r->cancel, r->thread, r->joinable);
	api_inst_restore_source_release(&r->src);
	free(r);
	in->restore = NULL;
}

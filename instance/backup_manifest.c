/*
 * backup_manifest: the pure parts of backups (backup.h): object keys, the manifest, the
 * state file and the views of the snapshot. No I/O; any thread.
 */
#include "instance/backup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonx.h"

static int key_of(const char *const parts[], size_t nparts, char out[INST_BACKUP_KEY_MAX],
                  struct err *e)
{
	if (api_backup_key_join(parts, nparts, out) < 0)
		return err_set(e, -ENAMETOOLONG, "object key longer than %d bytes",
		               INST_BACKUP_KEY_MAX - 1);
	return 0;
}

int inst_backup_keys(const char *path, const char *cluster, const char *name,
                     char dump[INST_BACKUP_KEY_MAX], char manifest[INST_BACKUP_KEY_MAX],
                     struct err *e)
{
	const char *d[] = { path ? path : "", cluster, name, INST_BACKUP_DUMP };
	const char *m[] = { path ? path : "", cluster, name, INST_BACKUP_MANIFEST };
	char kd[INST_BACKUP_KEY_MAX], km[INST_BACKUP_KEY_MAX];
	int rc = key_of(d, 4, kd, e);

	if (!rc)
		rc = key_of(m, 4, km, e);
	if (rc)
		return rc;
	memcpy(dump, kd, sizeof(kd));
	memcpy(manifest, km, sizeof(km));
	return 0;
}

int inst_backup_sibling(const char *manifest_key, const char *file, char out[INST_BACKUP_KEY_MAX],
                        struct err *e)
{
	char dir[INST_BACKUP_KEY_MAX] = { 0 };
	const char *slash = strrchr(manifest_key, '/');
	size_t n = slash ? (size_t)(slash - manifest_key) : 0;
	const char *parts[2] = { dir, file };

	if (n >= sizeof(dir) || strchr(file, '/') || !*file || strcmp(file, "..") == 0)
		return err_set(e, -EINVAL, "manifest: file %s is not a plain name", file);
	memcpy(dir, manifest_key, n);
	dir[n] = '\0';
	return key_of(parts, 2, out, e);
}

/* --- the manifest --- */

char *inst_manifest_encode(const struct inst_manifest *m)
{
	json_t *j = json_pack("{s:I,s:s,s:s,s:s,s:s,s:I,s:s,s:s,s:s,s:s,s:I,s:s}", "format",
	                      (json_int_t)m->format, "cluster", m->cluster, "name", m->name,
	                      "method", m->method, "file", m->file, "size", (json_int_t)m->size,
	                      "sha256", m->sha256, "engine", m->engine, "engineVersion",
	                      m->engine_version, "replId", m->repl_id, "offset",
	                      (json_int_t)m->offset, "createdAt", m->created_at);
	char *s = jsonx_dumps_compact(j);

	json_decref(j);
	return s;
}

static int copy_str(json_t *j, const char *path, bool req, char *out, size_t cap, struct err *e)
{
	const char *s = NULL;
	int rc = req ? jsonx_string_req(j, path, &s, e) : jsonx_string(j, path, "", &s, e);

	if (rc)
		return rc;
	if (strlen(s) >= cap)
		return err_set(e, -EINVAL, "%s: longer than %zu bytes", path, cap - 1);
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static bool is_hex64(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");

	return n == 64 && s[n] == '\0';
}

static int manifest_fields(json_t *j, struct inst_manifest *m, struct err *e)
{
	int rc;

	if ((rc = jsonx_int_req(j, "format", 1, INT64_MAX, &m->format, e)) < 0 ||
	    (rc = copy_str(j, "cluster", false, m->cluster, sizeof(m->cluster), e)) < 0 ||
	    (rc = copy_str(j, "name", false, m->name, sizeof(m->name), e)) < 0 ||
	    (rc = copy_str(j, "method", false, m->method, sizeof(m->method), e)) < 0 ||
	    (rc = copy_str(j, "file", true, m->file, sizeof(m->file), e)) < 0 ||
	    (rc = jsonx_int_req(j, "size", 0, INT64_MAX, &m->size, e)) < 0 ||
	    (rc = copy_str(j, "sha256", true, m->sha256, sizeof(m->sha256), e)) < 0 ||
	    (rc = copy_str(j, "engine", false, m->engine, sizeof(m->engine), e)) < 0 ||
	    (rc = copy_str(j, "engineVersion", false, m->engine_version, sizeof(m->engine_version),
	                   e)) < 0 ||
	    (rc = copy_str(j, "replId", false, m->repl_id, sizeof(m->repl_id), e)) < 0 ||
	    (rc = jsonx_int(j, "offset", -1, INT64_MAX, -1, &m->offset, e)) < 0 ||
	    (rc = copy_str(j, "createdAt", false, m->created_at, sizeof(m->created_at), e)) < 0)
		return rc;
	if (m->format > INST_BACKUP_FORMAT)
		return err_set(e, -EINVAL, "format: %lld is newer than this manager's %d",
		               (long long)m->format, INST_BACKUP_FORMAT);
	if (!is_hex64(m->sha256))
		return err_set(e, -EINVAL, "sha256: expected 64 lower-case hex digits");
	if (!m->method[0]) /* the first managers wrote rdb manifests without it */
		memcpy(m->method, "rdb", 4);
	if (strcmp(m->method, "rdb") != 0 && strcmp(m->method, "aof") != 0)
		return err_set(e, -EINVAL, "method: %s is neither rdb nor aof", m->method);
	return 0;
}

int inst_manifest_decode(const char *body, size_t len, struct inst_manifest *out, struct err *e)
{
	struct inst_manifest m = { 0 };
	struct err ie = { 0 };
	json_t *j = NULL;
	int rc = jsonx_loadb(body, len, INST_BACKUP_MANIFEST_MAX, &j, &ie);

	if (!rc && !json_is_object(j))
		rc = err_set(&ie, -EINVAL, "expected a JSON object");
	if (!rc)
		rc = manifest_fields(j, &m, &ie);
	json_decref(j);
	if (rc)
		return err_set(e, -EPROTO, "manifest: %s", ie.msg);
	*out = m;
	return 0;
}

/* --- views and the state file --- */

static const char *nz(const char *s)
{
	return *s ? s : NULL;
}

void inst_backup_view_api(const struct inst_backup_view *v, struct api_inst_backup_state *out)
{
	*out = (struct api_inst_backup_state){
		.name = v->name,
		.method = v->method,
		.phase = v->phase,
		.started_at = nz(v->started_at),
		.stopped_at = nz(v->stopped_at),
		.key = nz(v->key),
		.manifest_key = nz(v->manifest_key),
		.size = v->size,
		.sha256 = nz(v->sha256),
		.repl_id = nz(v->repl_id),
		.offset = v->offset,
		.engine = nz(v->engine),
		.engine_version = nz(v->engine_version),
		.error = nz(v->error),
		.retryable = v->retryable,
		.attempts = v->attempts,
	};
}

void inst_restore_view_api(const struct inst_restore_view *v, struct api_inst_restore_state *out)
{
	*out = (struct api_inst_restore_state){
		.name = v->name,
		.manifest_key = nz(v->manifest_key),
		.phase = v->phase,
		.started_at = nz(v->started_at),
		.stopped_at = nz(v->stopped_at),
		.size = v->size,
		.sha256 = nz(v->sha256),
		.error = nz(v->error),
		.retryable = v->retryable,
		.attempts = v->attempts,
	};
}

char *inst_backup_state_encode(const struct inst_backup_view *v)
{
	struct api_inst_backup_state a;
	json_t *j;
	char *s;

	inst_backup_view_api(v, &a);
	j = api_inst_backup_state_encode(&a);
	s = jsonx_dumps_compact(j);
	json_decref(j);
	return s;
}

#define CPY(dst, src) snprintf((dst), sizeof(dst), "%s", (src) ? (src) : "")

int inst_backup_state_decode(const char *body, size_t len, struct inst_backup_view *out,
                             struct err *e)
{
	struct api_inst_backup_state a;
	struct inst_backup_view v = { .set = true };
	int rc = api_inst_backup_state_decode(body, len, &a, e);

	if (rc)
		return rc;
	CPY(v.name, a.name);
	CPY(v.method, a.method);
	CPY(v.phase, a.phase);
	CPY(v.started_at, a.started_at);
	CPY(v.stopped_at, a.stopped_at);
	CPY(v.key, a.key);
	CPY(v.manifest_key, a.manifest_key);
	v.size = a.size;
	CPY(v.sha256, a.sha256);
	CPY(v.repl_id, a.repl_id);
	v.offset = a.offset;
	CPY(v.engine, a.engine);
	CPY(v.engine_version, a.engine_version);
	CPY(v.error, a.error);
	v.retryable = a.retryable;
	v.attempts = a.attempts;
	api_inst_backup_state_release(&a);
	if (strcmp(v.phase, API_INST_BACKUP_RUNNING) == 0) {
		snprintf(v.phase, sizeof(v.phase), "%s", API_INST_BACKUP_FAILED);
		snprintf(v.error, sizeof(v.error), "%s",
		         "the instance manager restarted during the backup; nothing was "
		         "published (no manifest)");
		v.retryable = true;
	}
	*out = v;
	return 0;
}

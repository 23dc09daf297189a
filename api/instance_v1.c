/*
 * instance_v1: GET /v1/status and the answers of the mutations (see instance_v1.h); the
 * requests are in instance_v1_request.c.
 *
 * Each object is a table of fields (JSON name, kind, offset in its struct) that both the
 * encoder and the decoder walk, so a field name is written once. The decoder reads
 * through lib/jsonx with the field's full path, so its errors name it; a malformed
 * status or answer is -EPROTO whatever jsonx said. A decoded struct keeps the parsed
 * body (`json`), which its strings borrow from.
 */
#include "api/instance_v1.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/jsonx.h"
#include "lib/k8s/path.h"

/* --- field tables ---------------------------------------------------------------------- */

enum kind {
	K_STR,  /* const char *, never null on the wire ("" for NULL) */
	K_NSTR, /* const char *, null for NULL or "" */
	K_INT,  /* int64_t */
	K_NINT, /* int64_t, null for a negative value (API_INST_NULL) */
	K_BOOL, /* bool */
	K_REAL, /* double */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off;
	bool req; /* decoding: absent (or null) is an error */
};

#define F(n, k, T, m)                                                                              \
	{                                                                                          \
		(n), (k), offsetof(T, m), false                                                    \
	}
#define FR(n, k, T, m)                                                                             \
	{                                                                                          \
		(n), (k), offsetof(T, m), true                                                     \
	}

static void put(json_t *o, const struct field *f, const void *base)
{
	const char *p = (const char *)base + f->off;
	const char *s;
	int64_t n;
	double d;
	bool b;

	switch (f->kind) {
	case K_STR:
	case K_NSTR:
		memcpy(&s, p, sizeof(s));
		if (f->kind == K_STR || (s && *s))
			json_object_set_new(o, f->name, json_string(s ? s : ""));
		else
			json_object_set_new(o, f->name, json_null());
		break;
	case K_INT:
	case K_NINT:
		memcpy(&n, p, sizeof(n));
		json_object_set_new(o, f->name,
		                    f->kind == K_NINT && n < 0 ? json_null() : json_integer(n));
		break;
	case K_BOOL:
		memcpy(&b, p, sizeof(b));
		json_object_set_new(o, f->name, json_boolean(b));
		break;
	case K_REAL:
		memcpy(&d, p, sizeof(d));
		json_object_set_new(o, f->name, json_real(d));
		break;
	}
}

static void put_all(json_t *o, const struct field *fs, size_t n, const void *base)
{
	for (size_t i = 0; i < n; i++)
		put(o, &fs[i], base);
}

static int get_real(json_t *root, const char *path, double *out, struct err *e)
{
	json_t *v = jsonx_get(root, path);

	if (!v || json_is_null(v)) {
		*out = 0;
		return 0;
	}
	if (!json_is_number(v))
		return err_set(e, -EINVAL, "%s: expected number, got %s", path, jsonx_type_name(v));
	*out = json_number_value(v);
	return 0;
}

static int get(json_t *root, const char *prefix, const struct field *f, void *base, struct err *e)
{
	char path[128];
	char *p = (char *)base + f->off;
	const char *s = NULL;
	int64_t n = 0;
	double d = 0;
	bool b = false;
	int rc;

	snprintf(path, sizeof(path), "%s%s", prefix, f->name);
	switch (f->kind) {
	case K_STR:
	case K_NSTR:
		rc = f->req ? jsonx_string_req(root, path, &s, e)
		            : jsonx_string(root, path, NULL, &s, e);
		if (!rc)
			memcpy(p, &s, sizeof(s));
		return rc;
	case K_INT:
	case K_NINT:
		rc = f->req ? jsonx_int_req(root, path, INT64_MIN, INT64_MAX, &n, e)
		            : jsonx_int(root, path, INT64_MIN, INT64_MAX,
		                        f->kind == K_NINT ? API_INST_NULL : 0, &n, e);
		if (!rc)
			memcpy(p, &n, sizeof(n));
		return rc;
	case K_BOOL:
		rc = f->req ? jsonx_bool_req(root, path, &b, e)
		            : jsonx_bool(root, path, false, &b, e);
		if (!rc)
			memcpy(p, &b, sizeof(b));
		return rc;
	case K_REAL:
		rc = get_real(root, path, &d, e);
		if (!rc)
			memcpy(p, &d, sizeof(d));
		return rc;
	}
	return -EINVAL;
}

static int get_all(json_t *root, const char *prefix, const struct field *fs, size_t n, void *base,
                   struct err *e)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = get(root, prefix, &fs[i], base, e);
	return rc;
}

#define N(fs) (sizeof(fs) / sizeof((fs)[0]))

/* Parses an answer or a status: an object at the top; every error but the size -EPROTO. */
static int load(const char *body, size_t len, size_t max, json_t **out, struct err *e)
{
	json_t *j = NULL;
	int rc = jsonx_loadb(body, len, max, &j, e);

	if (rc)
		return rc == -EMSGSIZE ? rc : -EPROTO;
	if (!json_is_object(j)) {
		rc = err_set(e, -EPROTO, "body: expected a JSON object, got %s",
		             jsonx_type_name(j));
		json_decref(j);
		return rc;
	}
	*out = j;
	return 0;
}

static void status_backup_encode(json_t *o, const struct api_inst_status *s);
static int status_backup_decode(json_t *j, struct api_inst_status *s, struct err *e);

/* --- GET /v1/status ---------------------------------------------------------------------- */

#define ST struct api_inst_status
static const struct field status_fields[] = {
	F("pod", K_STR, ST, pod),
	FR("state", K_STR, ST, state),
	FR("role", K_STR, ST, role),
	F("reason", K_STR, ST, reason),
	FR("ready", K_BOOL, ST, ready),
	F("notReadyReason", K_NSTR, ST, not_ready_reason),
	FR("fenced", K_BOOL, ST, fenced),
	F("fenceReason", K_NSTR, ST, fence_reason),
	F("leaseHeld", K_BOOL, ST, lease_held),
	F("primaryCrashed", K_BOOL, ST, primary_crashed),
	F("engine", K_NSTR, ST, engine),
	F("version", K_NSTR, ST, version),
	F("sessionId", K_NSTR, ST, session_id),
	F("configHash", K_NSTR, ST, config_hash),
	F("uptimeSeconds", K_INT, ST, uptime_seconds),
	F("leaseRenewFailures", K_INT, ST, lease_renew_failures),
	F("httpTls", K_STR, ST, http_tls),
	F("httpTlsError", K_NSTR, ST, http_tls_error),
};

#define SV struct api_inst_server
static const struct field server_fields[] = {
	F("pid", K_NINT, SV, pid),
	F("up", K_BOOL, SV, up),
	F("restarts", K_INT, SV, restarts),
	F("role", K_STR, SV, role),
	F("loading", K_BOOL, SV, loading),
	F("syncInProgress", K_BOOL, SV, sync_in_progress),
	F("uptimeSeconds", K_NINT, SV, uptime_seconds),
	F("error", K_NSTR, SV, error),
};

#define RP struct api_inst_replication
static const struct field replication_fields[] = {
	F("replId", K_NSTR, RP, repl_id),
	F("replId2", K_NSTR, RP, repl_id2),
	F("offset", K_NINT, RP, offset),
	F("masterReplOffset", K_NINT, RP, master_repl_offset),
	F("secondOffset", K_NINT, RP, second_offset),
	F("link", K_STR, RP, link),
	F("masterHost", K_NSTR, RP, master_host),
	F("masterPort", K_NINT, RP, master_port),
	F("lagBytes", K_NINT, RP, lag_bytes),
	F("lagSeconds", K_NINT, RP, lag_seconds),
	F("connectedReplicas", K_NINT, RP, connected_replicas),
};

#define RE struct api_inst_replica
static const struct field replica_fields[] = {
	F("ip", K_STR, RE, ip),
	F("port", K_INT, RE, port),
	F("state", K_STR, RE, state),
	F("offset", K_INT, RE, offset),
	F("lagBytes", K_INT, RE, lag_bytes),
	F("lagSeconds", K_INT, RE, lag_seconds),
};

static json_t *replication_encode(const struct api_inst_replication *r)
{
	json_t *o = json_object(), *a = json_array();

	put_all(o, replication_fields, N(replication_fields), r);
	for (size_t i = 0; i < r->n_replicas; i++) {
		json_t *x = json_object();

		put_all(x, replica_fields, N(replica_fields), &r->replicas[i]);
		json_array_append_new(a, x);
	}
	json_object_set_new(o, "replicas", a);
	return o;
}

json_t *api_inst_status_encode(const struct api_inst_status *s)
{
	json_t *o = json_object(), *sv = json_object();

	put_all(o, status_fields, N(status_fields), s);
	put_all(sv, server_fields, N(server_fields), &s->server);
	json_object_set_new(o, "server", sv);
	json_object_set_new(o, "replication",
	                    s->has_replication ? replication_encode(&s->replication) : json_null());
	status_backup_encode(o, s);
	return o;
}

static int replicas_decode(json_t *j, struct api_inst_replication *r, struct err *e)
{
	json_t *a = NULL, *x;
	char prefix[64];
	size_t i;
	int rc = jsonx_array(j, "replication.replicas", &a, e);

	if (rc || !json_array_size(a))
		return rc;
	r->replicas = xcalloc(json_array_size(a), sizeof(*r->replicas));
	json_array_foreach (a, i, x) {
		snprintf(prefix, sizeof(prefix), "replication.replicas[%zu].", i);
		if (!json_is_object(x))
			return err_set(e, -EINVAL,
			               "replication.replicas[%zu]: expected object, got %s", i,
			               jsonx_type_name(x));
		rc = get_all(j, prefix, replica_fields, N(replica_fields), &r->replicas[i], e);
		if (rc)
			return rc;
		r->n_replicas++;
	}
	return 0;
}

static int status_fields_decode(json_t *j, struct api_inst_status *s, struct err *e)
{
	json_t *o = NULL;
	int rc = get_all(j, "", status_fields, N(status_fields), s, e);

	if (!rc)
		rc = jsonx_object_req(j, "server", &o, e);
	if (!rc)
		rc = get_all(j, "server.", server_fields, N(server_fields), &s->server, e);
	if (!rc)
		rc = jsonx_object(j, "replication", &o, e);
	if (rc || !o)
		return rc;
	s->has_replication = true;
	rc = get_all(j, "replication.", replication_fields, N(replication_fields), &s->replication,
	             e);
	return rc ? rc : replicas_decode(j, &s->replication, e);
}

int api_inst_status_decode(const char *body, size_t len, struct api_inst_status *out, struct err *e)
{
	struct api_inst_status s = { 0 };
	int rc = load(body, len, API_INST_STATUS_BODY_MAX, &s.json, e);

	if (rc)
		return rc;
	rc = status_fields_decode(s.json, &s, e);
	if (!rc)
		rc = status_backup_decode(s.json, &s, e);
	if (rc) {
		api_inst_status_release(&s);
		return -EPROTO;
	}
	*out = s;
	return 0;
}

void api_inst_status_release(struct api_inst_status *s)
{
	if (!s)
		return;
	free(s->replication.replicas);
	json_decref(s->json);
	memset(s, 0, sizeof(*s));
}

/* --- answers ----------------------------------------------------------------------------- */

#define RS struct api_inst_result
static const struct field result_fields[] = {
	FR("result", K_STR, RS, result),
	F("fenced", K_BOOL, RS, fenced),
	F("leaseHeld", K_BOOL, RS, lease_held),
};
static const struct field offsets_fields[] = {
	F("role", K_STR, RS, role),
	F("replId", K_STR, RS, repl_id),
	F("offset", K_INT, RS, offset),
	F("replId2", K_STR, RS, repl_id2),
};

json_t *api_inst_result_encode(const struct api_inst_result *r)
{
	json_t *o = json_object();

	if (r->has_offsets)
		put_all(o, offsets_fields, N(offsets_fields), r);
	put_all(o, result_fields, N(result_fields), r);
	return o;
}

int api_inst_result_decode(const char *body, size_t len, struct api_inst_result *out, struct err *e)
{
	struct api_inst_result r = { 0 };
	int rc = load(body, len, API_INST_BODY_MAX, &r.json, e);

	if (rc)
		return rc;
	rc = get_all(r.json, "", result_fields, N(result_fields), &r, e);
	r.has_offsets = json_object_get(r.json, "offset") != NULL;
	if (!rc && r.has_offsets)
		rc = get_all(r.json, "", offsets_fields, N(offsets_fields), &r, e);
	if (rc) {
		api_inst_result_release(&r);
		return -EPROTO;
	}
	*out = r;
	return 0;
}

void api_inst_result_release(struct api_inst_result *r)
{
	if (!r)
		return;
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

#define SW struct api_inst_switchover_result
static const struct field switchover_fields[] = {
	FR("result", K_STR, SW, result),
	F("target", K_STR, SW, target),
	F("targetPort", K_INT, SW, target_port),
	F("offset", K_INT, SW, offset),
	F("demoted", K_BOOL, SW, demoted),
	/* where the pause went: catch-up, lease release, the target's promote */
	F("catchUpMs", K_REAL, SW, catch_up_ms),
	F("leaseReleaseMs", K_REAL, SW, lease_release_ms),
	F("promoteMs", K_REAL, SW, promote_ms),
	F("writePauseMs", K_REAL, SW, write_pause_ms),
	F("oldPrimaryPausedMs", K_REAL, SW, old_primary_paused_ms),
};

json_t *api_inst_switchover_result_encode(const struct api_inst_switchover_result *r)
{
	json_t *o = json_object();

	put_all(o, switchover_fields, N(switchover_fields), r);
	if (r->demote_error)
		json_object_set_new(o, "demoteError", json_string(r->demote_error));
	return o;
}

int api_inst_switchover_result_decode(const char *body, size_t len,
                                      struct api_inst_switchover_result *out, struct err *e)
{
	struct api_inst_switchover_result r = { 0 };
	int rc = load(body, len, API_INST_BODY_MAX, &r.json, e);

	if (rc)
		return rc;
	rc = get_all(r.json, "", switchover_fields, N(switchover_fields), &r, e);
	if (!rc)
		rc = jsonx_string(r.json, "demoteError", NULL, &r.demote_error, e);
	if (rc) {
		api_inst_switchover_result_release(&r);
		return -EPROTO;
	}
	*out = r;
	return 0;
}

void api_inst_switchover_result_release(struct api_inst_switchover_result *r)
{
	if (!r)
		return;
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

json_t *api_inst_config_result_encode(const struct api_inst_config_result *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->n_restart_required; i++)
		json_array_append_new(a, json_string(r->restart_required[i]));
	return json_pack("{s:s,s:o}", "result", r->result ? r->result : "", "restartRequired", a);
}

static int strings_decode(json_t *root, const char *path, const char ***out, size_t *n,
                          struct err *e)
{
	json_t *a = NULL, *x;
	size_t i;
	int rc = jsonx_array(root, path, &a, e);

	if (rc || !json_array_size(a))
		return rc;
	*out = xcalloc(json_array_size(a), sizeof(**out));
	json_array_foreach (a, i, x) {
		if (!json_is_string(x))
			return err_set(e, -EINVAL, "%s[%zu]: expected string, got %s", path, i,
			               jsonx_type_name(x));
		(*out)[(*n)++] = json_string_value(x);
	}
	return 0;
}

int api_inst_config_result_decode(const char *body, size_t len, struct api_inst_config_result *out,
                                  struct err *e)
{
	struct api_inst_config_result r = { 0 };
	int rc = load(body, len, API_INST_BODY_MAX, &r.json, e);

	if (rc)
		return rc;
	rc = jsonx_string_req(r.json, "result", &r.result, e);
	if (!rc)
		rc = strings_decode(r.json, "restartRequired", &r.restart_required,
		                    &r.n_restart_required, e);
	if (rc) {
		api_inst_config_result_release(&r);
		return -EPROTO;
	}
	*out = r;
	return 0;
}

void api_inst_config_result_release(struct api_inst_config_result *r)
{
	if (!r)
		return;
	free(r->restart_required);
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

json_t *api_inst_error_encode(const struct api_inst_error *r)
{
	return json_pack("{s:s}", "error", r->error ? r->error : "");
}

int api_inst_error_decode(const char *body, size_t len, struct api_inst_error *out, struct err *e)
{
	struct api_inst_error r = { 0 };
	int rc = load(body, len, API_INST_BODY_MAX, &r.json, e);

	if (rc)
		return rc;
	rc = jsonx_string_req(r.json, "error", &r.error, e);
	if (rc) {
		api_inst_error_release(&r);
		return -EPROTO;
	}
	*out = r;
	return 0;
}

void api_inst_error_release(struct api_inst_error *r)
{
	if (!r)
		return;
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

/* --- backups and restore ------------------------------------------------------------------ */

#define BK struct api_inst_backup_state
static const struct field backup_fields[] = {
	FR("name", K_STR, BK, name),
	F("method", K_STR, BK, method),
	FR("phase", K_STR, BK, phase),
	F("startedAt", K_NSTR, BK, started_at),
	F("stoppedAt", K_NSTR, BK, stopped_at),
	F("key", K_NSTR, BK, key),
	F("manifestKey", K_NSTR, BK, manifest_key),
	F("size", K_NINT, BK, size),
	F("sha256", K_NSTR, BK, sha256),
	F("replId", K_NSTR, BK, repl_id),
	F("offset", K_NINT, BK, offset),
	F("engine", K_NSTR, BK, engine),
	F("engineVersion", K_NSTR, BK, engine_version),
	F("error", K_NSTR, BK, error),
	F("retryable", K_BOOL, BK, retryable),
	F("attempts", K_INT, BK, attempts),
};

#define RT struct api_inst_restore_state
static const struct field restore_fields[] = {
	FR("name", K_STR, RT, name),
	F("manifestKey", K_NSTR, RT, manifest_key),
	FR("phase", K_STR, RT, phase),
	F("startedAt", K_NSTR, RT, started_at),
	F("stoppedAt", K_NSTR, RT, stopped_at),
	F("size", K_NINT, RT, size),
	F("sha256", K_NSTR, RT, sha256),
	F("error", K_NSTR, RT, error),
	F("retryable", K_BOOL, RT, retryable),
	F("attempts", K_INT, RT, attempts),
};

/* The status's optional "backup" and "restore" objects: left out when not set (so older
 * goldens and managers read the same); null or absent decode as not set. */
static void status_backup_encode(json_t *o, const struct api_inst_status *s)
{
	json_t *x;

	if (s->has_backup) {
		x = json_object();
		put_all(x, backup_fields, N(backup_fields), &s->backup);
		json_object_set_new(o, "backup", x);
	}
	if (s->has_restore) {
		x = json_object();
		put_all(x, restore_fields, N(restore_fields), &s->restore);
		json_object_set_new(o, "restore", x);
	}
}

static int status_backup_decode(json_t *j, struct api_inst_status *s, struct err *e)
{
	json_t *o = NULL;
	int rc = jsonx_object(j, "backup", &o, e);

	if (!rc && o) {
		s->has_backup = true;
		rc = get_all(j, "backup.", backup_fields, N(backup_fields), &s->backup, e);
	}
	o = NULL;
	if (!rc)
		rc = jsonx_object(j, "restore", &o, e);
	if (!rc && o) {
		s->has_restore = true;
		rc = get_all(j, "restore.", restore_fields, N(restore_fields), &s->restore, e);
	}
	return rc;
}

json_t *api_inst_backup_state_encode(const struct api_inst_backup_state *b)
{
	json_t *o = json_object();

	put_all(o, backup_fields, N(backup_fields), b);
	return o;
}

int api_inst_backup_state_decode(const char *body, size_t len, struct api_inst_backup_state *out,
                                 struct err *e)
{
	struct api_inst_backup_state b = { 0 };
	int rc = load(body, len, API_INST_BODY_MAX, &b.json, e);

	if (rc)
		return rc;
	rc = get_all(b.json, "", backup_fields, N(backup_fields), &b, e);
	if (rc) {
		api_inst_backup_state_release(&b);
		return -EPROTO;
	}
	*out = b;
	return 0;
}

void api_inst_backup_state_release(struct api_inst_backup_state *b)
{
	if (!b)
		return;
	json_decref(b->json);
	memset(b, 0, sizeof(*b));
}

/* --- the /v1/backup body and the restore source --- */

struct cred_key {
	const char *name;
	size_t off;
};

#define CK(n, m)                                                                                   \
	{                                                                                          \
		(n), offsetof(struct api_inst_credentials, m)                                      \
	}
static const struct cred_key cred_keys[] = {
	CK("AWS_ACCESS_KEY_ID", aws_access_key_id),
	CK("AWS_SECRET_ACCESS_KEY", aws_secret_access_key),
	CK("AWS_SESSION_TOKEN", aws_session_token),
	CK("AZURE_STORAGE_CONNECTION_STRING", azure_connection_string),
	CK("AZURE_STORAGE_ACCOUNT", azure_account),
	CK("AZURE_STORAGE_KEY", azure_key),
	CK("AZURE_STORAGE_SAS_TOKEN", azure_sas_token),
};

_Static_assert(N(cred_keys) == API_INST_CREDENTIAL_KEYS, "API_INST_CREDENTIAL_KEYS");

const char *api_inst_credential_key(size_t i)
{
	return i < N(cred_keys) ? cred_keys[i].name : NULL;
}

void api_inst_credentials_set(struct api_inst_credentials *c, size_t i, const char *v)
{
	if (i < N(cred_keys))
		*(const char **)(void *)((char *)c + cred_keys[i].off) = v;
}

/* Printable, no control characters, at most max bytes. */
static int text_ok(const char *path, const char *s, size_t max, struct err *e)
{
	if (strlen(s) > max)
		return err_set(e, -EINVAL, "%s: longer than %zu bytes", path, max);
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			return err_set(e, -EINVAL, "%s: control characters are not allowed", path);
	return 0;
}

/* "<namespace>/<name>", "<name>" or a uid: DNS-1123 segments, at most one '/'. */
static int backup_name_ok(const char *path, const char *s, struct err *e)
{
	char seg[API_INST_BACKUP_NAME_MAX + 1];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);

	if (strlen(s) > API_INST_BACKUP_NAME_MAX || n == 0 || (slash && strchr(slash + 1, '/')))
		return err_set(e, -EINVAL, "%s: expected <namespace>/<name> or a name", path);
	memcpy(seg, s, n);
	seg[n] = '\0';
	if (!k8s_name_is_valid(seg) || (slash && !k8s_name_is_valid(slash + 1)))
		return err_set(e, -EINVAL, "%s: expected <namespace>/<name> or a name", path);
	return 0;
}

static const char *const f_s3[] = {
	"bucket", "path", "endpoint", "region", "forcePathStyle", NULL
};
static const char *const f_azure[] = { "container", "path", "accountName", "endpoint", NULL };
static const char *const f_dest[] = { "s3", "azure", NULL };

static int s3_decode(json_t *o, struct api_s3 *s, struct err *e)
{
	struct err ie = { 0 };
	int rc;

	if ((rc = jsonx_only_fields(o, "", f_s3, &ie)) < 0 ||
	    (rc = jsonx_string_req(o, "bucket", &s->bucket, &ie)) < 0 ||
	    (rc = jsonx_string(o, "path", "", &s->path, &ie)) < 0 ||
	    (rc = jsonx_string(o, "endpoint", NULL, &s->endpoint, &ie)) < 0 ||
	    (rc = jsonx_string(o, "region", "us-east-1", &s->region, &ie)) < 0 ||
	    (rc = jsonx_bool(o, "forcePathStyle", false, &s->force_path_style, &ie)) < 0)
		return err_set(e, rc, "destination.s3.%s", ie.msg);
	s->set = true;
	return 0;
}

static int azure_decode(json_t *o, struct api_azure *a, struct err *e)
{
	struct err ie = { 0 };
	int rc;

	if ((rc = jsonx_only_fields(o, "", f_azure, &ie)) < 0 ||
	    (rc = jsonx_string_req(o, "container", &a->container, &ie)) < 0 ||
	    (rc = jsonx_string(o, "path", "", &a->path, &ie)) < 0 ||
	    (rc = jsonx_string(o, "accountName", NULL, &a->account_name, &ie)) < 0 ||
	    (rc = jsonx_string(o, "endpoint", NULL, &a->endpoint, &ie)) < 0)
		return err_set(e, rc, "destination.azure.%s", ie.msg);
	a->set = true;
	return 0;
}

static int destination_decode(json_t *j, struct api_destination *d, struct err *e)
{
	json_t *o = NULL, *s3 = NULL, *az = NULL;
	const char *path;
	int rc;

	if ((rc = jsonx_object_req(j, "destination", &o, e)) < 0 ||
	    (rc = jsonx_only_fields(o, "destination.", f_dest, e)) < 0 ||
	    (rc = jsonx_object(o, "s3", &s3, e)) < 0 || (rc = jsonx_object(o, "azure", &az, e)) < 0)
		return rc;
	if (!s3 == !az)
		return err_set(e, -EINVAL, "destination: give exactly one of s3 and azure");
	rc = s3 ? s3_decode(s3, &d->s3, e) : azure_decode(az, &d->azure, e);
	if (rc)
		return rc;
	path = s3 ? d->s3.path : d->azure.path;
	d->set = true;
	return text_ok("destination.path", path, API_INST_BACKUP_PATH_MAX, e);
}

static json_t *destination_encode(const struct api_destination *d)
{
	json_t *o = json_object(), *x = json_object();

	if (d->s3.set) {
		json_object_set_new(x, "bucket", json_string(d->s3.bucket ? d->s3.bucket : ""));
		json_object_set_new(x, "path", json_string(d->s3.path ? d->s3.path : ""));
		if (d->s3.endpoint)
			json_object_set_new(x, "endpoint", json_string(d->s3.endpoint));
		if (d->s3.region)
			json_object_set_new(x, "region", json_string(d->s3.region));
		json_object_set_new(x, "forcePathStyle", json_boolean(d->s3.force_path_style));
		json_object_set_new(o, "s3", x);
		return o;
	}
	json_object_set_new(x, "container",
	                    json_string(d->azure.container ? d->azure.container : ""));
	json_object_set_new(x, "path", json_string(d->azure.path ? d->azure.path : ""));
	if (d->azure.account_name)
		json_object_set_new(x, "accountName", json_string(d->azure.account_name));
	if (d->azure.endpoint)
		json_object_set_new(x, "endpoint", json_string(d->azure.endpoint));
	json_object_set_new(o, "azure", x);
	return o;
}

/* Never names a value: only the key. */
static int credentials_decode(json_t *j, struct api_inst_credentials *c, struct err *e)
{
	json_t *o = NULL, *v;
	const char *k;
	int rc = jsonx_object(j, "credentials", &o, e);

	if (rc)
		return rc;
	json_object_foreach (o, k, v) {
		size_t i;

		for (i = 0; i < N(cred_keys) && strcmp(cred_keys[i].name, k) != 0; i++)
			;
		if (i == N(cred_keys))
			return err_set(e, -EINVAL, "credentials.%s: unknown key", k);
		if (!json_is_string(v) || json_string_length(v) > API_INST_BACKUP_CRED_MAX)
			return err_set(e, -EINVAL,
			               "credentials.%s: expected a string of at most %d bytes", k,
			               API_INST_BACKUP_CRED_MAX);
		api_inst_credentials_set(c, i, json_string_value(v));
	}
	return 0;
}

static json_t *credentials_encode(const struct api_inst_credentials *c)
{
	json_t *o = json_object();

	for (size_t i = 0; i < N(cred_keys); i++) {
		const char *v =
		        *(const char *const *)(const void *)((const char *)c + cred_keys[i].off);

		if (v)
			json_object_set_new(o, cred_keys[i].name, json_string(v));
	}
	return o;
}

static const char *const f_backup[] = { "name", "method", "destination", "credentials", NULL };

static int backup_request_fields(json_t *j, struct api_inst_backup_request *r, struct err *e)
{
	const char *m = NULL;
	int rc;

	if ((rc = jsonx_only_fields(j, "", f_backup, e)) < 0 ||
	    (rc = jsonx_string_req(j, "name", &r->name, e)) < 0 ||
	    (rc = backup_name_ok("name", r->name, e)) < 0 ||
	    (rc = jsonx_string(j, "method", "rdb", &m, e)) < 0)
		return rc;
	if (strcmp(m, "rdb") == 0)
		r->method = API_METHOD_RDB;
	else if (strcmp(m, "aof") == 0)
		r->method = API_METHOD_AOF;
	else
		return err_set(e, -EINVAL, "method: expected rdb or aof");
	if ((rc = destination_decode(j, &r->destination, e)) < 0)
		return rc;
	return credentials_decode(j, &r->credentials, e);
}

/* A request object at the top (len 0 is not a request: name is required). */
static int load_request(const char *body, size_t len, json_t **out, struct err *e)
{
	json_t *j = NULL;
	int rc;

	if (len > API_INST_BODY_MAX)
		return err_set(e, -EMSGSIZE, "body: larger than %d bytes", API_INST_BODY_MAX);
	if ((rc = jsonx_loadb(body, len, API_INST_BODY_MAX, &j, e)) < 0)
		return rc;
	if (!json_is_object(j)) {
		rc = err_set(e, -EINVAL, "body: expected a JSON object, got %s",
		             jsonx_type_name(j));
		json_decref(j);
		return rc;
	}
	*out = j;
	return 0;
}

int api_inst_backup_request_decode(const char *body, size_t len,
                                   struct api_inst_backup_request *out, struct err *e)
{
	struct api_inst_backup_request r = { 0 };
	int rc = load_request(body, len, &r.json, e);

	if (rc)
		return rc;
	rc = backup_request_fields(r.json, &r, e);
	if (rc) {
		api_inst_backup_request_release(&r);
		return rc;
	}
	*out = r;
	return 0;
}

json_t *api_inst_backup_request_encode(const struct api_inst_backup_request *r)
{
	return json_pack("{s:s,s:s,s:o,s:o}", "name", r->name ? r->name : "", "method",
	                 r->method == API_METHOD_AOF ? "aof" : "rdb", "destination",
	                 destination_encode(&r->destination), "credentials",
	                 credentials_encode(&r->credentials));
}

/* Wipes every string of the body (the credentials are among them) before freeing. */
static void wipe_json(json_t *j)
{
	const char *k;
	json_t *v;

	json_object_foreach (j, k, v) {
		if (json_is_object(v))
			wipe_json(v);
		else if (json_is_string(v))
			explicit_bzero((char *)json_string_value(v), json_string_length(v));
	}
}

void api_inst_backup_request_release(struct api_inst_backup_request *r)
{
	if (!r)
		return;
	if (r->json)
		wipe_json(json_object_get(r->json, "credentials"));
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

static const char *const f_source[] = { "name", "destination", "manifestKey", NULL };

int api_inst_restore_source_decode(const char *body, size_t len,
                                   struct api_inst_restore_source *out, struct err *e)
{
	struct api_inst_restore_source r = { 0 };
	int rc = load_request(body, len, &r.json, e);

	if (rc)
		return rc;
	if ((rc = jsonx_only_fields(r.json, "", f_source, e)) < 0 ||
	    (rc = jsonx_string_req(r.json, "name", &r.name, e)) < 0 ||
	    (rc = backup_name_ok("name", r.name, e)) < 0 ||
	    (rc = jsonx_string_req(r.json, "manifestKey", &r.manifest_key, e)) < 0 ||
	    (rc = text_ok("manifestKey", r.manifest_key, API_INST_BACKUP_PATH_MAX, e)) < 0 ||
	    (rc = destination_decode(r.json, &r.destination, e)) < 0) {
		api_inst_restore_source_release(&r);
		return rc;
	}
	*out = r;
	return 0;
}

json_t *api_inst_restore_source_encode(const struct api_inst_restore_source *r)
{
	return json_pack("{s:s,s:s,s:o}", "name", r->name ? r->name : "", "manifestKey",
	                 r->manifest_key ? r->manifest_key : "", "destination",
	                 destination_encode(&r->destination));
}

void api_inst_restore_source_release(struct api_inst_restore_source *r)
{
	if (!r)
		return;
	json_decref(r->json);
	memset(r, 0, sizeof(*r));
}

/* --- the sentinel role's status ----------------------------------------------------------- */

#define SS struct api_inst_sentinel_status
static const struct field sentinel_status_fields[] = {
	F("pod", K_STR, SS, pod),
	FR("state", K_STR, SS, state),
	FR("role", K_STR, SS, role),
	F("reason", K_STR, SS, reason),
	FR("ready", K_BOOL, SS, ready),
	F("notReadyReason", K_NSTR, SS, not_ready_reason),
	F("engine", K_NSTR, SS, engine),
	F("version", K_NSTR, SS, version),
	F("uptimeSeconds", K_INT, SS, uptime_seconds),
};

#define SVW struct api_inst_sentinel_view
static const struct field sentinel_view_fields[] = {
	FR("masterName", K_STR, SVW, master_name),
	F("masterHost", K_NSTR, SVW, master_host),
	F("masterPort", K_NINT, SVW, master_port),
	FR("masterStatus", K_STR, SVW, master_status),
	F("failoverInProgress", K_BOOL, SVW, failover_in_progress),
	F("failoverState", K_NSTR, SVW, failover_state),
	F("configEpoch", K_NINT, SVW, config_epoch),
	F("quorum", K_NINT, SVW, quorum),
	F("quorumOk", K_BOOL, SVW, quorum_ok),
	F("quorumReason", K_NSTR, SVW, quorum_reason),
	F("sentinels", K_NINT, SVW, sentinels),
	F("replicas", K_NINT, SVW, replicas),
};

json_t *api_inst_sentinel_status_encode(const struct api_inst_sentinel_status *s)
{
	json_t *o = json_object(), *sv = json_object(), *v = NULL;

	put_all(o, sentinel_status_fields, N(sentinel_status_fields), s);
	put_all(sv, server_fields, N(server_fields), &s->server);
	json_object_set_new(o, "server", sv);
	if (s->has_sentinel) {
		v = json_object();
		put_all(v, sentinel_view_fields, N(sentinel_view_fields), &s->sentinel);
	}
	json_object_set_new(o, "sentinel", v ? v : json_null());
	return o;
}

static int sentinel_status_fields_decode(json_t *j, struct api_inst_sentinel_status *s,
                                         struct err *e)
{
	json_t *o = NULL;
	int rc = get_all(j, "", sentinel_status_fields, N(sentinel_status_fields), s, e);

	if (!rc)
		rc = jsonx_object_req(j, "server", &o, e);
	if (!rc)
		rc = get_all(j, "server.", server_fields, N(server_fields), &s->server, e);
	if (!rc)
		rc = jsonx_object(j, "sentinel", &o, e);
	s->has_sentinel = !rc && o;
	if (s->has_sentinel)
		rc = get_all(j, "sentinel.", sentinel_view_fields, N(sentinel_view_fields),
		             &s->sentinel, e);
	return rc;
}

int api_inst_sentinel_status_decode(const char *body, size_t len,
                                    struct api_inst_sentinel_status *out, struct err *e)
{
	struct api_inst_sentinel_status s = { 0 };
	int rc = load(body, len, API_INST_STATUS_BODY_MAX, &s.json, e);

	if (rc)
		return rc;
	rc = sentinel_status_fields_decode(s.json, &s, e);
	if (rc) {
		api_inst_sentinel_status_release(&s);
		return -EPROTO;
	}
	*out = s;
	return 0;
}

void api_inst_sentinel_status_release(struct api_inst_sentinel_status *s)
{
	if (!s)
		return;
	json_decref(s->json);
	memset(s, 0, sizeof(*s));
}

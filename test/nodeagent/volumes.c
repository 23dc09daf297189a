/*
 * volumes: a pod's volumes as host directories.
 *
 *   emptyDir               <pod dir>/volumes/<name> (sizeLimit recorded in pod.json, not
 *                          enforced; medium Memory is a plain directory too)
 *   hostPath               the path itself (DirectoryOrCreate makes it)
 *   persistentVolumeClaim  the bound PV's hostPath/local path (pvc.c provisions
 *                          <state>/pvs/<ns>/<claim uid>)
 *   secret, configMap, projected, downwardAPI
 *                          "content" volumes: <pod dir>/volumes/<name>, written by
 *                          na_volume_write with the kubelet's atomic layout and mounted
 *                          read-only.
 *
 * Content is computed purely (na_volume_files: the Pod, the lookups and a token callback
 * in, sorted files out) and rewritten only when it changed. Refresh: the agent keeps
 * cluster-wide Secret and ConfigMap informers; any change in a namespace makes the main
 * thread call na_volumes_refresh for the pods of that namespace, and token rotation (at
 * 80% of a token's life) does too. A source that vanished keeps the old content.
 *
 * Tokens: TokenRequest (POST .../serviceaccounts/SA/token) bound to the Pod, audience
 * the source's or the API server's default, expirationSeconds the source's (3600 when
 * unset, at least 600), cached per (audience, expiration) in the pod.
 *
 * Main thread only (the writers touch the pod's directories; the lookups read informers).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/path.h"
#include "lib/log.h"

#define DEFAULT_MODE 0644
#define PATH_MAX_LEN 4096
#define SEGMENT_MAX  255

/* --- file sets ------------------------------------------------------------------------------ */

void na_files_release(struct na_files *f)
{
	for (size_t i = 0; f && i < f->n; i++) {
		free(f->v[i].path);
		secure_zero(f->v[i].data, f->v[i].len);
		free(f->v[i].data);
	}
	if (f) {
		free(f->v);
		memset(f, 0, sizeof(*f));
	}
}

bool na_files_equal(const struct na_files *a, const struct na_files *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct na_file *x = &a->v[i], *y = &b->v[i];

		if (strcmp(x->path, y->path) != 0 || x->mode != y->mode || x->len != y->len ||
		    memcmp(x->data, y->data, x->len) != 0)
			return false;
	}
	return true;
}

/* The kubelet's validatePath: relative, no ".." element, not starting with "..". */
static bool file_path_is_valid(const char *p)
{
	size_t n = strlen(p), seg = 0;

	if (!n || n > PATH_MAX_LEN || p[0] == '/' || strncmp(p, "..", 2) == 0)
		return false;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != '/') {
			if (++seg > SEGMENT_MAX)
				return false;
			continue;
		}
		if (seg == 0 || (seg == 2 && strncmp(p + i - 2, "..", 2) == 0))
			return false;
		seg = 0;
	}
	return true;
}

static int files_cmp(const void *a, const void *b)
{
	return strcmp(((const struct na_file *)a)->path, ((const struct na_file *)b)->path);
}

/* Adds (or replaces) path; takes data. */
static int files_add(struct na_files *f, const char *path, char *data, size_t len, int mode,
                     struct err *e)
{
	struct na_file *slot = NULL;

	if (!file_path_is_valid(path)) {
		free_secret(data);
		return err_set(e, -EINVAL, "volume item path %.200s: must be relative, without ..",
		               path);
	}
	for (size_t i = 0; i < f->n && !slot; i++)
		if (strcmp(f->v[i].path, path) == 0)
			slot = &f->v[i];
	if (slot) {
		secure_zero(slot->data, slot->len);
		free(slot->data);
	} else {
		f->v = xreallocarray(f->v, f->n + 1, sizeof(*f->v));
		slot = &f->v[f->n++];
		slot->path = xstrdup(path);
	}
	slot->data = data;
	slot->len = len;
	slot->mode = mode;
	return 0;
}

/* --- content volumes (pure) -------------------------------------------------------------------- */

struct vsrc {
	json_t *pod;
	const struct na_pod_ctx *ctx;
	const char *ns;
	struct na_files *files;
};

static int item_mode(json_t *item, int def, int *out, struct err *e)
{
	int64_t m;

	if (jsonx_int(item, "mode", 0, 0777, def, &m, e))
		return -EINVAL;
	*out = (int)m;
	return 0;
}

/* All keys of obj, or its items: files of a Secret or ConfigMap. */
static int object_files(const struct vsrc *s, json_t *obj, bool is_secret, json_t *items,
                        bool optional, int def, struct err *e)
{
	static const char *const maps[] = { "data", "binaryData" };
	const char *key = NULL, *path = NULL;
	json_t *it;
	size_t i, len;
	char *val;
	int mode, rc;

	json_array_foreach (items, i, it) {
		if (jsonx_string_req(it, "key", &key, e) ||
		    jsonx_string_req(it, "path", &path, e) || item_mode(it, def, &mode, e))
			return -EINVAL;
		rc = na_source_value(obj, is_secret, key, &val, &len);
		if (rc == -ENOENT && optional)
			continue;
		if (rc)
			return err_set(e, rc, "%s key %.100s: %s",
			               is_secret ? "secret" : "configmap", key,
			               rc == -ENOENT ? "not found" : "bad base64");
		if ((rc = files_add(s->files, path, val, len, mode, e)))
			return rc;
	}
	for (size_t m = 0; !items && m < (is_secret ? 1u : 2u); m++) {
		json_object_foreach (json_object_get(obj, maps[m]), key, it) {
			if (na_source_value(obj, is_secret, key, &val, &len))
				return err_set(e, -EINVAL, "key %.100s: bad base64", key);
			if ((rc = files_add(s->files, key, val, len, def, e)))
				return rc;
		}
	}
	return 0;
}

/* A secret or configMap volume, or such a projected source. */
static int source_files(const struct vsrc *s, json_t *src, bool is_secret, const char *name_key,
                        int def, struct err *e)
{
	const struct k8s_resource *res = is_secret ? &k8s_res_secrets : &k8s_res_configmaps;
	const char *name = NULL;
	bool optional = false;
	json_t *obj;
	int rc;

	if (jsonx_string_req(src, name_key, &name, e) ||
	    jsonx_bool(src, "optional", false, &optional, e))
		return -EINVAL;
	obj = s->ctx->lookup->get(s->ctx->lookup->ctx, res, s->ns, name);
	if (!obj)
		return optional ? 0
		                : err_set(e, -ENOENT, "%s \"%.200s\" not found",
		                          is_secret ? "secret" : "configmap", name);
	rc = object_files(s, obj, is_secret, json_object_get(src, "items"), optional, def, e);
	json_decref(obj);
	return rc;
}

static int downward_files(const struct vsrc *s, json_t *items, int def, struct err *e)
{
	const char *path = NULL, *fp = NULL;
	json_t *it, *ref;
	size_t i;
	char *val = NULL;
	int mode, rc;

	json_array_foreach (items, i, it) {
		val = NULL;
		if (jsonx_string_req(it, "path", &path, e) || item_mode(it, def, &mode, e))
			return -EINVAL;
		if ((ref = json_object_get(it, "fieldRef"))) {
			if (jsonx_string_req(ref, "fieldPath", &fp, e))
				return -EINVAL;
			rc = na_field_ref(s->pod, fp, s->ctx, true, &val, e);
		} else if ((ref = json_object_get(it, "resourceFieldRef"))) {
			rc = na_resource_ref(s->pod, ref, NULL, s->ctx, &val, e);
		} else {
			rc = err_set(e, -EINVAL, "downwardAPI item %.100s: no fieldRef", path);
		}
		if (rc || !val || (rc = files_add(s->files, path, val, strlen(val), mode, e)))
			return rc ? rc : -EINVAL;
	}
	return 0;
}

static int token_file(const struct vsrc *s, json_t *src, int def, struct err *e)
{
	const char *aud = NULL, *path = NULL;
	int64_t exp;
	char *tok = NULL;
	int rc;

	if (jsonx_string(src, "audience", NULL, &aud, e) ||
	    jsonx_string_req(src, "path", &path, e) ||
	    jsonx_int(src, "expirationSeconds", 0, INT64_MAX / 1000, NA_TOKEN_EXP_S, &exp, e))
		return -EINVAL;
	if (exp < NA_TOKEN_EXP_MIN)
		exp = NA_TOKEN_EXP_MIN;
	if ((rc = s->ctx->lookup->token(s->ctx->lookup->ctx, aud && aud[0] ? aud : NULL, exp, &tok,
	                                e)))
		return rc;
	return files_add(s->files, path, tok, strlen(tok), def, e);
}

static int projected_files(const struct vsrc *s, json_t *vol, int def, struct err *e)
{
	json_t *it, *src;
	size_t i;
	int rc = 0;

	json_array_foreach (json_object_get(vol, "sources"), i, it) {
		if ((src = json_object_get(it, "secret")))
			rc = source_files(s, src, true, "name", def, e);
		else if ((src = json_object_get(it, "configMap")))
			rc = source_files(s, src, false, "name", def, e);
		else if ((src = json_object_get(it, "downwardAPI")))
			rc = downward_files(s, json_object_get(src, "items"), def, e);
		else if ((src = json_object_get(it, "serviceAccountToken")))
			rc = token_file(s, src, def, e);
		else
			rc = err_set(e, -EINVAL, "projected source %zu: unsupported kind", i);
		if (rc)
			return rc;
	}
	return 0;
}

static int secret_vol(const struct vsrc *s, json_t *v, int def, struct err *e)
{
	return source_files(s, v, true, "secretName", def, e);
}

static int configmap_vol(const struct vsrc *s, json_t *v, int def, struct err *e)
{
	return source_files(s, v, false, "name", def, e);
}

static int downward_vol(const struct vsrc *s, json_t *v, int def, struct err *e)
{
	return downward_files(s, json_object_get(v, "items"), def, e);
}

static const struct {
	const char *kind;
	int (*files)(const struct vsrc *s, json_t *v, int def, struct err *e);
} content_table[] = {
	{ "secret", secret_vol },
	{ "configMap", configmap_vol },
	{ "projected", projected_files },
	{ "downwardAPI", downward_vol },
};

bool na_volume_is_content(json_t *vol)
{
	for (size_t i = 0; vol && i < sizeof(content_table) / sizeof(content_table[0]); i++)
		if (json_object_get(vol, content_table[i].kind))
			return true;
	return false;
}

static int content_files(const struct vsrc *s, json_t *vol, struct err *e)
{
	json_t *v;
	int64_t def;

	for (size_t k = 0; k < sizeof(content_table) / sizeof(content_table[0]); k++) {
		if (!(v = json_object_get(vol, content_table[k].kind)))
			continue;
		if (jsonx_int(v, "defaultMode", 0, 0777, DEFAULT_MODE, &def, e))
			return -EINVAL;
		return content_table[k].files(s, v, (int)def, e);
	}
	return err_set(e, -EINVAL, "not a content volume");
}

int na_volume_files(json_t *vol, json_t *pod, const struct na_pod_ctx *ctx, struct na_files *out,
                    struct err *e)
{
	struct na_files files = { NULL, 0 };
	struct vsrc s = { pod, ctx, json_string_value(jsonx_get(pod, "metadata.namespace")),
		          &files };
	int rc = content_files(&s, vol, e);

	if (rc) {
		na_files_release(&files);
		return rc;
	}
	if (files.n)
		qsort(files.v, files.n, sizeof(*files.v), files_cmp);
	*out = files;
	return 0;
}

/* --- the atomic writer ---------------------------------------------------------------------------- */

int na_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int na_rmtree(const char *path)
{
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int write_one(const char *base, const struct na_file *f, struct err *e)
{
	char *path = xasprintf("%s/%s", base, f->path), *slash = strrchr(path, '/');
	ssize_t w = 0;
	int fd, rc = 0;

	*slash = '\0';
	rc = na_mkdir_p(path, 0755);
	*slash = '/';
	fd = rc ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	for (size_t off = 0; fd >= 0 && off < f->len; off += (size_t)w)
		if ((w = write(fd, f->data + off, f->len - off)) <= 0)
			break;
	if (fd < 0 || w < 0 || fchmod(fd, (mode_t)f->mode) < 0)
		rc = err_set(e, -errno ? -errno : -EIO, "%s: %s", path, strerror(errno));
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
	free(path);
	return rc;
}

/* Makes dir/..<timestamp>.<n> and returns its name. */
static char *make_ts_dir(const char *dir, struct err *e)
{
	struct timespec ts;
	struct tm tm;
	char stamp[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "..%Y_%m_%d_%H_%M_%S", &tm);
	for (int i = 0; i < 1000; i++) {
		char *name = xasprintf("%s.%09ld%d", stamp, ts.tv_nsec, i);
		char *path = xasprintf("%s/%s", dir, name);
		int rc = mkdir(path, 0755);

		free(path);
		if (rc == 0)
			return name;
		free(name);
		if (errno != EEXIST)
			break;
	}
	err_set(e, -errno, "%s: cannot make a timestamped directory: %s", dir, strerror(errno));
	return NULL;
}

/* The first component of p into out. */
static void top_name(const char *p, char *out, size_t len)
{
	snprintf(out, len, "%.*s", (int)strcspn(p, "/"), p);
}

static bool top_in_files(const struct na_files *f, const char *name)
{
	char top[SEGMENT_MAX + 1];

	for (size_t i = 0; i < f->n; i++) {
		top_name(f->v[i].path, top, sizeof(top));
		if (strcmp(top, name) == 0)
			return true;
	}
	return false;
}

/* dir/<top> -> ..data/<top> for every top-level name; stale user-visible names removed. */
static int sync_links(const char *dir, const struct na_files *f, struct err *e)
{
	char top[SEGMENT_MAX + 1], *path, *target;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	for (size_t i = 0; i < f->n && !rc; i++) {
		top_name(f->v[i].path, top, sizeof(top));
		path = xasprintf("%s/%s", dir, top);
		target = xasprintf("..data/%s", top);
		if (symlink(target, path) < 0 && errno != EEXIST)
			rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
		free(path);
		free(target);
	}
	if (rc || !(d = opendir(dir)))
		return rc;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "..", 2) == 0 || strcmp(de->d_name, ".") == 0 ||
		    top_in_files(f, de->d_name))
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		unlink(path);
		free(path);
	}
	closedir(d);
	return 0;
}

/* ..data_tmp -> ts, renamed over ..data; the old target (if any) in *old. */
static int swap_data(const char *dir, const char *ts, char **old, struct err *e)
{
	char *data = xasprintf("%s/..data", dir), *tmp = xasprintf("%s/..data_tmp", dir);
	char target[PATH_MAX];
	ssize_t n = readlink(data, target, sizeof(target) - 1);
	int rc = 0;

	*old = n > 0 ? xstrndup(target, (size_t)n) : NULL;
	unlink(tmp);
	if (symlink(ts, tmp) < 0 || rename(tmp, data) < 0)
		rc = err_set(e, -errno, "%s: %s", data, strerror(errno));
	free(data);
	free(tmp);
	return rc;
}

int na_volume_write(const char *dir, const struct na_files *files, long fs_group, struct err *e)
{
	char *ts = NULL, *tsdir = NULL, *old = NULL;
	int rc;

	if ((rc = na_mkdir_p(dir, 0755)))
		return err_set(e, rc, "%s: %s", dir, strerror(-rc));
	if (!(ts = make_ts_dir(dir, e)))
		return -EIO;
	tsdir = xasprintf("%s/%s", dir, ts);
	for (size_t i = 0; i < files->n && !rc; i++)
		rc = write_one(tsdir, &files->v[i], e);
	if (!rc && !(rc = swap_data(dir, ts, &old, e)))
		rc = sync_links(dir, files, e);
	if (rc) {
		na_rmtree(tsdir);
	} else if (old && strcmp(old, ts) != 0 && strncmp(old, "..", 2) == 0 && !strchr(old, '/')) {
		char *oldpath = xasprintf("%s/%s", dir, old);

		na_rmtree(oldpath);
		free(oldpath);
	}
	if (!rc && fs_group >= 0)
		rc = rt_fs_group_apply(dir, fs_group, e);
	free(old);
	free(tsdir);
	free(ts);
	return rc;
}

/* --- lookups for the agent ----------------------------------------------------------------------- */

static struct k8s_informer *informer_for(struct agent *ag, const struct k8s_resource *res)
{
	if (res == &k8s_res_secrets)
		return ag->secrets;
	if (res == &k8s_res_configmaps)
		return ag->configmaps;
	if (res == &k8s_res_pvcs)
		return ag->pvcs;
	return NULL;
}

static json_t *lookup_get(void *vctx, const struct k8s_resource *res, const char *ns,
                          const char *name)
{
	struct na_lookup_ctx *lc = vctx;
	struct k8s_informer *inf = informer_for(lc->ag, res);
	json_t *obj = NULL;
	struct err e;

	if (inf)
		return k8s_informer_get(inf, ns, name);
	err_clear(&e);
	if (k8s_get(lc->ag->client, res, ns, name, &obj, &e) < 0 && e.code != -ENOENT)
		log_warn(NA_COMPONENT, "lookup failed", "kind", res->kind, "name", name, "error",
		         e.msg, NULL);
	return obj;
}

static struct na_token *token_slot(struct na_pod *p, const char *aud, int64_t exp)
{
	struct na_token *t;

	for (size_t i = 0; i < p->n_tokens; i++) {
		t = &p->tokens[i];
		if (t->exp_s == exp &&
		    (aud ? t->audience && strcmp(aud, t->audience) == 0 : !t->audience))
			return t;
	}
	p->tokens = xreallocarray(p->tokens, p->n_tokens + 1, sizeof(*p->tokens));
	t = &p->tokens[p->n_tokens++];
	memset(t, 0, sizeof(*t));
	t->audience = aud ? xstrdup(aud) : NULL;
	t->exp_s = exp;
	return t;
}

static json_t *token_request_body(const struct na_pod *p, const char *aud, int64_t exp)
{
	json_t *body = json_pack("{s:s, s:s, s:{s:I, s:{s:s, s:s, s:s, s:s}}}", "apiVersion",
	                         "authentication.k8s.io/v1", "kind", "TokenRequest", "spec",
	                         "expirationSeconds", (json_int_t)exp, "boundObjectRef", "kind",
	                         "Pod", "apiVersion", "v1", "name", p->name, "uid", p->uid);

	if (aud)
		json_object_set_new(json_object_get(body, "spec"), "audiences",
		                    json_pack("[s]", aud));
	return body;
}

/* POST .../serviceaccounts/SA/token: the token and the lifetime the server granted. */
static int token_request(struct agent *ag, struct na_pod *p, const char *aud, int64_t exp,
                         char **tok, int64_t *life_s, struct err *e)
{
	const char *sa = json_string_value(jsonx_get(p->api, "spec.serviceAccountName"));
	struct k8s_resource res = { "", "v1", NULL, "TokenRequest", true };
	json_t *body, *out = NULL;
	const char *t;
	int rc;

	sa = sa && sa[0] ? sa : "default";
	if (!k8s_name_is_valid(sa))
		return err_set(e, -EINVAL, "serviceAccountName %.64s: invalid", sa);
	res.plural = xasprintf("serviceaccounts/%s/token", sa);
	body = token_request_body(p, aud, exp);
	rc = k8s_create(ag->client, &res, p->ns, body, NULL, &out, e);
	t = json_string_value(jsonx_get(out, "status.token"));
	if (!rc && !t)
		rc = err_set(e, -EPROTO, "TokenRequest for %s/%s: no status.token", p->ns, sa);
	if (!rc) {
		*tok = xstrdup(t);
		*life_s = json_integer_value(jsonx_get(out, "spec.expirationSeconds"));
		*life_s = *life_s > 0 ? *life_s : exp;
	}
	json_decref(body);
	json_decref(out);
	free((char *)res.plural);
	return rc;
}

static int lookup_token(void *vctx, const char *aud, int64_t exp, char **out, struct err *e)
{
	struct na_lookup_ctx *lc = vctx;
	struct na_token *t = token_slot(lc->p, aud, exp);
	int64_t now = clock_mono_ms(), life = 0;
	char *tok = NULL;
	int rc;

	if (t->token && now < t->refresh_at) {
		*out = xstrdup(t->token);
		return 0;
	}
	if ((rc = token_request(lc->ag, lc->p, aud, exp, &tok, &life, e))) {
		if (!t->token)
			return rc;
		t->refresh_at = now + 10000; /* the old token is still valid: retry soon */
		*out = xstrdup(t->token);
		return 0;
	}
	free_secret(t->token);
	t->token = tok;
	t->refresh_at = now + life * 800; /* 80% of its life, in ms */
	*out = xstrdup(tok);
	return 0;
}

void na_pod_ctx_init(struct agent *ag, struct na_pod *p, struct na_lookup_ctx *lc,
                     struct na_lookup *lk, struct na_pod_ctx *ctx)
{
	lc->ag = ag;
	lc->p = p;
	lk->get = lookup_get;
	lk->token = lookup_token;
	lk->ctx = lc;
	memset(ctx, 0, sizeof(*ctx));
	ctx->node_name = p->node->name;
	ctx->host_ip = ag->set.host_ip;
	ctx->pod_ip = p->rt ? rt_pod_ip(p->rt) : NULL;
	ctx->service_host = ag->service_host;
	ctx->service_port = ag->service_port;
	ctx->node_cpu_milli = ag->node_cpu_milli;
	ctx->node_memory = ag->node_memory;
	ctx->node_storage = ag->node_storage;
	ctx->lookup = lk;
}

/* --- per-pod volumes ---------------------------------------------------------------------------- */

struct vprep {
	struct agent *ag;
	struct na_pod *p;
	const struct na_pod_ctx *ctx;
	json_t *vol;      /* the spec.volumes entry */
	const char *name; /* its name */
	char *host_path;  /* out */
};

static int empty_dir_prep(struct vprep *v, json_t *src, struct err *e)
{
	int rc;

	(void)src;
	v->host_path = xasprintf("%s/volumes/%s", v->p->dir, v->name);
	if ((rc = na_mkdir_p(v->host_path, 0777)) || chmod(v->host_path, 0777) < 0)
		return err_set(e, rc ? rc : -errno, "emptyDir %s: %s", v->name,
		               strerror(rc ? -rc : errno));
	return 0;
}

static int host_path_prep(struct vprep *v, json_t *src, struct err *e)
{
	const char *path = NULL, *type = NULL;
	struct stat st;
	int fd;

	if (jsonx_string_req(src, "path", &path, e) || jsonx_string(src, "type", "", &type, e) ||
	    path[0] != '/')
		return err_set(e, -EINVAL, "hostPath %s: an absolute path is required", v->name);
	if (strcmp(type, "DirectoryOrCreate") == 0)
		na_mkdir_p(path, 0755);
	if (strcmp(type, "FileOrCreate") == 0 &&
	    (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
		close(fd);
	if (stat(path, &st) < 0)
		return err_set(e, -ENOENT, "hostPath %s: %s does not exist", v->name, path);
	v->host_path = xstrdup(path);
	return 0;
}

static bool str_is(json_t *j, const char *s)
{
	return json_is_string(j) && strcmp(json_string_value(j), s) == 0;
}

static int pvc_prep(struct vprep *v, json_t *src, struct err *e)
{
	const struct na_lookup *lk = v->ctx->lookup;
	const char *claim = json_string_value(json_object_get(src, "claimName")), *vn, *path;
	json_t *pvc = claim ? lk->get(lk->ctx, &k8s_res_pvcs, v->p->ns, claim) : NULL, *pv = NULL;
	int rc = 0;

	vn = json_string_value(jsonx_get(pvc, "spec.volumeName"));
	if (!pvc)
		rc = err_set(e, -ENOENT, "persistentvolumeclaim \"%.200s\" not found",
		             claim ? claim : "");
	else if (!vn || !vn[0] || !str_is(jsonx_get(pvc, "status.phase"), "Bound"))
		rc = err_set(e, -EAGAIN, "persistentvolumeclaim \"%.200s\" is not bound", claim);
	else if (!(pv = lk->get(lk->ctx, &na_res_pvs, NULL, vn)))
		rc = err_set(e, -ENOENT, "persistentvolume \"%.200s\" not found", vn);
	path = json_string_value(jsonx_get(pv, "spec.hostPath.path"));
	path = path ? path : json_string_value(jsonx_get(pv, "spec.local.path"));
	if (!rc && (!path || path[0] != '/'))
		rc = err_set(e, -EINVAL, "persistentvolume %.200s: not a hostPath or local volume",
		             vn);
	if (!rc && (rc = na_mkdir_p(path, 0777)))
		err_set(e, rc, "persistentvolume %.200s: %s: %s", vn, path, strerror(-rc));
	if (!rc)
		v->host_path = xstrdup(path);
	json_decref(pvc);
	json_decref(pv);
	return rc;
}

static int content_prep(struct vprep *v, json_t *src, struct err *e)
{
	struct na_files files = { NULL, 0 };
	struct na_vol *nv;
	char *dir;
	int rc;

	(void)src;
	if ((rc = na_volume_files(v->vol, v->p->api, v->ctx, &files, e)))
		return rc;
	dir = xasprintf("%s/volumes/%s", v->p->dir, v->name);
	if ((rc = na_volume_write(dir, &files, v->p->fs_group, e))) {
		na_files_release(&files);
		free(dir);
		return rc;
	}
	v->p->vols = xreallocarray(v->p->vols, v->p->n_vols + 1, sizeof(*v->p->vols));
	nv = &v->p->vols[v->p->n_vols++];
	nv->name = xstrdup(v->name);
	nv->dir = dir;
	nv->src = json_incref(v->vol);
	nv->last = files;
	v->host_path = xstrdup(dir);
	return 0;
}

static const struct {
	const char *key;
	int (*prep)(struct vprep *v, json_t *src, struct err *e);
} vol_table[] = {
	{ "emptyDir", empty_dir_prep },        { "hostPath", host_path_prep },
	{ "persistentVolumeClaim", pvc_prep }, { "secret", content_prep },
	{ "configMap", content_prep },         { "projected", content_prep },
	{ "downwardAPI", content_prep },
};

static int volume_prep(struct vprep *v, struct err *e)
{
	json_t *src;

	for (size_t k = 0; k < sizeof(vol_table) / sizeof(vol_table[0]); k++)
		if ((src = json_object_get(v->vol, vol_table[k].key)))
			return vol_table[k].prep(v, src, e);
	return err_set(e, -EINVAL, "volume %.63s: type not supported by the node agent", v->name);
}

static void vols_clear(struct na_pod *p)
{
	for (size_t i = 0; i < p->n_vols; i++) {
		free(p->vols[i].name);
		free(p->vols[i].dir);
		json_decref(p->vols[i].src);
		na_files_release(&p->vols[i].last);
	}
	free(p->vols);
	p->vols = NULL;
	p->n_vols = 0;
}

static void rt_volumes_free(struct rt_volume *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].host_path);
	}
	free(v);
}

int na_volumes_prepare(struct agent *ag, struct na_pod *p, struct rt_volume **out, size_t *n,
                       struct err *e)
{
	json_t *vols = jsonx_get(p->api, "spec.volumes"), *vol;
	struct rt_volume *rv = xcalloc(json_array_size(vols) + 1, sizeof(*rv));
	struct na_lookup_ctx lc;
	struct na_lookup lk;
	struct na_pod_ctx ctx;
	size_t i;
	int rc = 0;

	vols_clear(p);
	na_pod_ctx_init(ag, p, &lc, &lk, &ctx);
	json_array_foreach (vols, i, vol) {
		struct vprep v = {
			ag, p, &ctx, vol, json_string_value(json_object_get(vol, "name")), NULL
		};

		if (!v.name || (rc = volume_prep(&v, e))) {
			rc = rc ? rc : err_set(e, -EINVAL, "spec.volumes[%zu]: no name", i);
			rt_volumes_free(rv, i);
			vols_clear(p);
			return rc;
		}
		rv[i].name = xstrdup(v.name);
		rv[i].kind = RT_VOL_DIR;
		rv[i].host_path = v.host_path;
	}
	*out = rv;
	*n = json_array_size(vols);
	return 0;
}

void na_volumes_refresh(struct agent *ag, struct na_pod *p)
{
	struct na_lookup_ctx lc;
	struct na_lookup lk;
	struct na_pod_ctx ctx;
	struct err e;

	na_pod_ctx_init(ag, p, &lc, &lk, &ctx);
	for (size_t i = 0; i < p->n_vols; i++) {
		struct na_vol *v = &p->vols[i];
		struct na_files files = { NULL, 0 };

		err_clear(&e);
		if (na_volume_files(v->src, p->api, &ctx, &files, &e) < 0) {
			log_debug(NA_COMPONENT, "volume refresh skipped", "pod", p->key, "volume",
			          v->name, "error", e.msg, NULL);
			continue;
		}
		if (na_files_equal(&files, &v->last) ||
		    na_volume_write(v->dir, &files, p->fs_group, &e)) {
			if (e.code)
				log_warn(NA_COMPONENT, "volume write failed", "pod", p->key,
				         "volume", v->name, "error", e.msg, NULL);
			na_files_release(&files);
			continue;
		}
		log_info(NA_COMPONENT, "volume updated", "pod", p->key, "volume", v->name, NULL);
		na_files_release(&v->last);
		v->last = files;
	}
}

int64_t na_volumes_next_due(const struct na_pod *p)
{
	int64_t due = INT64_MAX;

	for (size_t i = 0; p->n_vols && i < p->n_tokens; i++)
		if (p->tokens[i].token && p->tokens[i].refresh_at < due)
			due = p->tokens[i].refresh_at;
	return due;
}

void na_volumes_release(struct na_pod *p)
{
	vols_clear(p);
	for (size_t i = 0; i < p->n_tokens; i++) {
		free(p->tokens[i].audience);
		free_secret(p->tokens[i].token);
	}
	free(p->tokens);
	p->tokens = NULL;
	p->n_tokens = 0;
}

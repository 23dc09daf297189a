/*
 * ociimage: OCI image layouts as node agent images (see ociimage.h).
 *
 * The unpacking itself is umoci's (whiteouts, opaque directories, hard links, modes and
 * owners as the layers say); this file reads the three JSON documents that say what to
 * unpack and how to run it, and keeps the result in a cache keyed by manifest digest.
 * Every string it puts in the entry is a fresh copy the entry then owns.
 */
#include "ociimage.h"

#include <errno.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "imagemap.h"
#include "lib/alloc.h"
#include "lib/err.h"
#include "lib/file.h"
#include "lib/jsonx.h"
#include "runtime_int.h"

#define MEDIA_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MEDIA_CONFIG   "application/vnd.oci.image.config.v1+json"
#define ANN_REF_NAME   "org.opencontainers.image.ref.name"
#define DIGEST_HEX     64

struct load {
	const struct ociimg_opts *o;
	char ref[1024];           /* normalized */
	char *layout;             /* scratch: the extracted tar */
	char *ref_name;           /* the manifest's ref.name in index.json, for umoci */
	char hex[DIGEST_HEX + 1]; /* manifest digest */
	json_t *config;           /* the image config */
	char *image_dir;          /* <cache>/<hex> */
};

static int64_t timeout_of(const struct ociimg_opts *o)
{
	return o->timeout_ms > 0 ? o->timeout_ms : OCIIMG_TIMEOUT_MS;
}

/* "sha256:<64 lowercase hex>" → hex. */
static bool digest_hex(const char *digest, char hex[DIGEST_HEX + 1])
{
	if (!digest || strncmp(digest, "sha256:", 7) || strlen(digest + 7) != DIGEST_HEX ||
	    strspn(digest + 7, "0123456789abcdef") != DIGEST_HEX)
		return false;
	memcpy(hex, digest + 7, DIGEST_HEX + 1);
	return true;
}

static void sha256_hex(const char *data, size_t len, char out[DIGEST_HEX + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	for (unsigned int i = 0; i < n && i < DIGEST_HEX / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	out[DIGEST_HEX] = '\0';
}

/* Reads and parses <layout>/<name>; with want_hex, checks that its sha256 is that. */
static int read_json(const struct load *l, const char *name, const char *want_hex, json_t **out,
                     struct err *e)
{
	char *path = xasprintf("%s/%s", l->layout, name), *text = NULL, got[DIGEST_HEX + 1];
	size_t len = 0;
	int rc = file_read_all(path, OCIIMG_MAX_JSON, &text, &len, e);

	if (!rc && want_hex) {
		sha256_hex(text, len, got);
		if (strcmp(got, want_hex))
			rc = err_set(e, -EPROTO, "%s: sha256 %s, not the digest that names it",
			             name, got);
	}
	if (!rc && (rc = jsonx_loadb(text, len, OCIIMG_MAX_JSON, out, e)) == 0 &&
	    !json_is_object(*out)) {
		json_decref(*out);
		rc = err_set(e, -EPROTO, "%s: not a JSON object", name);
	}
	if (rc && !e->msg[0])
		err_set(e, rc, "%s: %s", path, strerror(-rc));
	free(text);
	free(path);
	return rc;
}

/* The part of the normalized reference after the last ':' past the last '/', or NULL
 * for a digest reference. */
static const char *ref_tag(const char *ref)
{
	const char *slash = strrchr(ref, '/'), *colon;

	if (strchr(ref, '@'))
		return NULL;
	colon = strrchr(slash ? slash : ref, ':');
	return colon ? colon + 1 : NULL;
}

/* obj's string member key, or "" (absent, not a string, obj not an object). */
static const char *str_of(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

static bool manifest_matches(const struct load *l, json_t *m)
{
	const char *name = str_of(json_object_get(m, "annotations"), ANN_REF_NAME);
	const char *at = strchr(l->ref, '@'), *tag = ref_tag(l->ref);

	if (at)
		return !strcmp(str_of(m, "digest"), at + 1);
	return *name && tag && !strcmp(name, tag);
}

/* Picks the manifest in index.json: l->hex and l->ref_name. */
static int pick_manifest(struct load *l, struct err *e)
{
	json_t *index = NULL, *ms, *m, *pick = NULL;
	const char *name;
	size_t i;
	int rc = read_json(l, "index.json", NULL, &index, e);

	if (rc)
		return rc;
	ms = json_object_get(index, "manifests");
	json_array_foreach (ms, i, m) {
		if (manifest_matches(l, m))
			pick = m;
	}
	if (!pick && json_array_size(ms) == 1)
		pick = json_array_get(ms, 0);
	name = str_of(json_object_get(pick, "annotations"), ANN_REF_NAME);
	if (!pick)
		rc = err_set(e, -ENOENT, "index.json: no manifest for %s (%zu manifests)", l->ref,
		             json_array_size(ms));
	else if (strcmp(str_of(pick, "mediaType"), MEDIA_MANIFEST))
		rc = err_set(e, -EPROTO, "index.json: the manifest for %s is not %s", l->ref,
		             MEDIA_MANIFEST);
	else if (!digest_hex(json_string_value(json_object_get(pick, "digest")), l->hex))
		rc = err_set(e, -EPROTO, "index.json: the manifest for %s has no sha256 digest",
		             l->ref);
	else if (!*name || strpbrk(name, ":/"))
		rc = err_set(e, -EPROTO, "index.json: the manifest for %s has no usable %s", l->ref,
		             ANN_REF_NAME);
	else
		l->ref_name = xstrdup(name);
	json_decref(index);
	return rc;
}

/* The manifest, then the config it names (l->config). */
static int read_config(struct load *l, struct err *e)
{
	json_t *man = NULL, *cfg;
	char *name = xasprintf("blobs/sha256/%s", l->hex), hex[DIGEST_HEX + 1];
	int rc = read_json(l, name, l->hex, &man, e);

	free(name);
	if (rc)
		return rc;
	cfg = json_object_get(man, "config");
	if (strcmp(str_of(cfg, "mediaType"), MEDIA_CONFIG) ||
	    !digest_hex(json_string_value(json_object_get(cfg, "digest")), hex)) {
		rc = err_set(e, -EPROTO, "manifest %s: no %s with a sha256 digest", l->hex,
		             MEDIA_CONFIG);
	} else {
		name = xasprintf("blobs/sha256/%s", hex);
		rc = read_json(l, name, hex, &l->config, e);
		free(name);
	}
	json_decref(man);
	return rc;
}

/* <cache>/<hex>/rootfs, unpacked unless there already. */
static int unpack(struct load *l, struct err *e)
{
	char *tmp = xasprintf("%s.tmp", l->image_dir), *rootfs = xasprintf("%s/rootfs", tmp);
	char *image = xasprintf("%s:%s", l->layout, l->ref_name);
	const char *argv[] = { l->o->umoci, "raw", "unpack", "--image", image, rootfs, NULL };
	struct stat st;
	int rc = 0;

	if (stat(l->image_dir, &st) == 0 && S_ISDIR(st.st_mode))
		goto out;
	rt_rmtree(tmp);
	if ((rc = rt_mkdir_p(tmp, 0755))) {
		err_set(e, rc, "%s: %s", tmp, strerror(-rc));
		goto out;
	}
	rc = rt_run_timeout(argv, timeout_of(l->o), e);
	if (!rc && rename(tmp, l->image_dir) < 0)
		rc = err_set(e, -errno, "%s: %s", l->image_dir, strerror(errno));
	if (rc)
		rt_rmtree(tmp);
out:
	free(image);
	free(rootfs);
	free(tmp);
	return rc;
}

/* --- the entry ----------------------------------------------------------------------- */

/* A JSON array of strings → a NULL-terminated copy; absent or empty → NULL. */
static int strv_from_json(json_t *a, const char *what, char ***out, struct err *e)
{
	size_t n = json_array_size(a), i;
	json_t *v;
	char **s;

	*out = NULL;
	if (a && !json_is_array(a) && !json_is_null(a))
		return err_set(e, -EPROTO, "config.%s: not an array", what);
	if (n > IMAGEMAP_MAX_WORDS)
		return err_set(e, -EPROTO, "config.%s: more than %d entries", what,
		               IMAGEMAP_MAX_WORDS);
	if (!n)
		return 0;
	s = xcalloc(n + 1, sizeof(*s));
	json_array_foreach (a, i, v) {
		if (!json_is_string(v)) {
			for (size_t j = 0; j < i; j++)
				free(s[j]);
			free(s);
			return err_set(e, -EPROTO, "config.%s[%zu]: not a string", what, i);
		}
		s[i] = xstrdup(json_string_value(v));
	}
	*out = s;
	return 0;
}

/* Field `field` (0-based, ':'-separated) of the line of <rootfs>/etc/<file> whose first
 * field is name, as a number: -1 when there is none. */
static long id_lookup(const char *rootfs, const char *file, const char *name, int field)
{
	char *path = xasprintf("%s/etc/%s", rootfs, file), line[1024];
	FILE *f = fopen(path, "re");
	size_t nlen = strlen(name);
	long id = -1;

	free(path);
	while (f && id < 0 && fgets(line, sizeof(line), f)) {
		const char *p = line;

		if (strncmp(line, name, nlen) || line[nlen] != ':')
			continue;
		for (int i = 0; p && i < field; i++)
			p = (p = strchr(p, ':')) ? p + 1 : NULL;
		if (p && p[0] >= '0' && p[0] <= '9')
			id = strtol(p, NULL, 10);
	}
	if (f)
		fclose(f);
	return id;
}

/* A number, or a name looked up in the image; -1 when neither. */
static long id_parse(const char *rootfs, const char *file, const char *s)
{
	char *end;
	long v;

	if (!*s)
		return -1;
	v = strtol(s, &end, 10);
	if (!*end && v >= 0 && v <= INT32_MAX)
		return v;
	return id_lookup(rootfs, file, s, 2);
}

/* User "uid", "uid:gid" or names; no group: the user's primary group, else 0. */
static int parse_user(struct imagemap_entry *en, const char *user, struct err *e)
{
	char u[256];
	const char *colon = strchr(user, ':');
	size_t ulen = colon ? (size_t)(colon - user) : strlen(user);

	if (!*user)
		return 0;
	if (ulen >= sizeof(u))
		return err_set(e, -EPROTO, "config.User %.40s...: too long", user);
	memcpy(u, user, ulen);
	u[ulen] = '\0';
	en->uid = id_parse(en->rootfs, "passwd", u);
	if (en->uid < 0)
		return err_set(e, -EPROTO, "config.User %s: no such user in the image", u);
	if (colon)
		en->gid = id_parse(en->rootfs, "group", colon + 1);
	else
		en->gid = strspn(u, "0123456789") == ulen ? -1
		                                          : id_lookup(en->rootfs, "passwd", u, 3);
	if (colon && en->gid < 0)
		return err_set(e, -EPROTO, "config.User %s: no such group in the image", user);
	if (en->gid < 0)
		en->gid = 0;
	return 0;
}

static int fill_entry(const struct load *l, struct imagemap_entry *en, struct err *e)
{
	json_t *c = json_object_get(l->config, "config");
	const char *wd = json_string_value(json_object_get(c, "WorkingDir"));
	const char *user = json_string_value(json_object_get(c, "User"));
	int rc;

	memset(en, 0, sizeof(*en));
	en->uid = en->gid = -1;
	en->pattern = xstrdup(l->ref);
	en->rootfs = xasprintf("%s/rootfs", l->image_dir);
	if (wd && *wd && wd[0] != '/')
		return err_set(e, -EPROTO, "config.WorkingDir %s: not absolute", wd);
	en->workdir = wd && *wd ? xstrdup(wd) : NULL;
	if ((rc = strv_from_json(json_object_get(c, "Entrypoint"), "Entrypoint", &en->entrypoint,
	                         e)) ||
	    (rc = strv_from_json(json_object_get(c, "Cmd"), "Cmd", &en->cmd, e)) ||
	    (rc = strv_from_json(json_object_get(c, "Env"), "Env", &en->env, e)))
		return rc;
	for (char **p = en->env; p && *p; p++)
		if (!strchr(*p, '=') || **p == '=')
			return err_set(e, -EPROTO, "config.Env %s: want NAME=VALUE", *p);
	return parse_user(en, user ? user : "", e);
}

/* --- loading ----------------------------------------------------------------------------- */

static int extract(struct load *l, const char *path, struct err *e)
{
	char *tmpl = xasprintf("%s/load.XXXXXX", l->o->cache_dir);
	const char *argv[] = { l->o->tar, "-xf", path, "-C", NULL, "--no-same-owner", NULL };
	int rc = rt_mkdir_p(l->o->cache_dir, 0755);

	if (access(path, R_OK) < 0) {
		free(tmpl);
		return err_set(e, -errno, "%s: %s", path, strerror(errno));
	}
	if (rc) {
		free(tmpl);
		return err_set(e, rc, "%s: %s", l->o->cache_dir, strerror(-rc));
	}
	if (!mkdtemp(tmpl)) {
		rc = err_set(e, -errno, "%s: %s", tmpl, strerror(errno));
		free(tmpl);
		return rc;
	}
	l->layout = tmpl;
	argv[4] = l->layout;
	return rt_run_timeout(argv, timeout_of(l->o), e);
}

int ociimg_load(struct imagemap *m, const char *ref, const char *path, const struct ociimg_opts *o,
                struct err *e)
{
	struct load l = { .o = o };
	struct imagemap_entry en = { 0 };
	int rc;

	if (!imagemap_normalize(ref, l.ref, sizeof(l.ref)) || !*ref)
		return err_set(e, -EINVAL, "image %s: not a reference", ref);
	if (o->cache_dir[0] != '/' || strpbrk(o->cache_dir, ",:"))
		return err_set(e, -EINVAL,
		               "%s: the image cache must be absolute, without ',' or ':'",
		               o->cache_dir);
	rc = extract(&l, path, e);
	if (!rc)
		rc = pick_manifest(&l, e);
	if (!rc)
		rc = read_config(&l, e);
	if (!rc) {
		l.image_dir = xasprintf("%s/%s", o->cache_dir, l.hex);
		rc = unpack(&l, e);
	}
	if (!rc && (rc = fill_entry(&l, &en, e)) == 0)
		imagemap_add(m, &en);
	imagemap_entry_release(&en);
	if (l.layout)
		rt_rmtree(l.layout);
	free(l.layout);
	free(l.ref_name);
	free(l.image_dir);
	json_decref(l.config);
	return rc;
}

int ociimg_load_list(struct imagemap *m, const char *list, const struct ociimg_opts *o,
                     struct err *e)
{
	char *copy = xstrdup(list), *save = NULL, *item;
	int rc = 0;

	for (item = strtok_r(copy, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');

		if (!eq || eq == item || !eq[1]) {
			rc = err_set(e, -EINVAL, "oci image %s: want REF=PATH", item);
			break;
		}
		*eq = '\0';
		if ((rc = ociimg_load(m, item, eq + 1, o, e)))
			break;
	}
	free(copy);
	return rc;
}

/*
 * secrets: passwords from the Secret volumes (see internal.h).
 *
 * Layout: <auth-dir>/password (default user), <operator-auth-dir>/password (internal
 * user), <users-dir>/<user>/<file> (each regular file one password of that user; the
 * files may be symlinks into ..data as the kubelet's projected volumes make them).
 * Names starting with '.' are the kubelet's bookkeeping and are skipped. One trailing
 * newline (\n or \r\n) is dropped from a password file. Files are capped at
 * INST_PW_LEN_MAX bytes; an empty password file is refused.
 *
 * <acl-dir>/acl: the ACL file of spec.aclConfigSecret, kept as read (parsed where it is
 * applied, ops.c: what it may define depends on spec.users); absent: none.
 *
 * Change detection: inst_creds_stamp() hashes the stat() of every file and the target
 * of each ..data symlink, so a kubelet update (new ..data, new inodes) and a test that
 * rewrites a file both change it; the supervisor re-reads only then.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/acl_file.h"
#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/file.h"

#define USER_DIRS_MAX 64

static int read_password(const char *path, char **out, struct err *e)
{
	char buf[INST_PW_LEN_MAX + 2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return err_set(e, -errno, "%s: cannot open: %s", path, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return err_set(e, -EIO, "%s: cannot read", path);
	if ((size_t)n > INST_PW_LEN_MAX)
		return err_set(e, -EMSGSIZE, "%s: longer than %d bytes", path, INST_PW_LEN_MAX);
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	if (n == 0)
		return err_set(e, -EINVAL, "%s: empty password", path);
	*out = xstrndup(buf, (size_t)n);
	secure_zero(buf, sizeof(buf));
	return 0;
}

static int hash_file(const char *path, struct inst_pwset *set, char **keep, struct err *e)
{
	char *pw = NULL, h[INST_PW_HASH_SIZE];
	int rc = read_password(path, &pw, e);

	if (rc || !pw)
		return rc ? rc : -EIO;
	inst_pw_hash(pw, strlen(pw), h);
	rc = inst_pwset_add(set, h);
	if (keep)
		*keep = pw;
	else
		free_secret(pw);
	return rc ? err_set(e, rc, "%s: too many passwords", path) : 0;
}

static int load_user(const char *dir, const char *name, struct inst_user_pw *u, struct err *e)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(dp = opendir(path)))
		return err_set(e, -errno, "%s: cannot read", path);
	u->name = xstrdup(name);
	while (!rc && (d = readdir(dp))) {
		char f[PATH_MAX];
		struct stat st;

		if (d->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s/%s", dir, name, d->d_name);
		if (stat(f, &st) == 0 && S_ISREG(st.st_mode))
			rc = hash_file(f, &u->cur, NULL, e);
	}
	closedir(dp);
	u->all = u->cur;
	return rc;
}

static int load_users(const char *dir, struct inst_creds *c, struct err *e)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int rc = 0;

	if (!dp)
		return errno == ENOENT ? 0 : err_set(e, -errno, "%s: cannot read", dir);
	c->users = xcalloc(USER_DIRS_MAX, sizeof(*c->users));
	while (!rc && (d = readdir(dp))) {
		char p[PATH_MAX];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", dir, d->d_name);
		if (d->d_name[0] == '.' || stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (c->nusers == USER_DIRS_MAX)
			rc = err_set(e, -E2BIG, "%s: more than %d users", dir, USER_DIRS_MAX);
		else
			rc = load_user(dir, d->d_name, &c->users[c->nusers++], e);
	}
	closedir(dp);
	return rc;
}

/* <acl-dir>/acl into c (none when the file or --acl-dir is absent). */
static int load_acl(const struct inst_settings *s, struct inst_creds *c, struct err *e)
{
	char path[PATH_MAX];
	struct stat st;

	if (!s->acl_dir)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", s->acl_dir, API_ACL_FILE_KEY);
	if (stat(path, &st) != 0 && errno == ENOENT)
		return 0;
	return file_read_all_secret(path, API_ACL_FILE_MAX + 1, &c->acl_text, &c->acl_len, e);
}

int inst_creds_load(const struct inst_settings *s, struct inst_creds *out, struct err *e)
{
	struct inst_creds c = { 0 };
	char path[PATH_MAX];
	int rc;

	c.stamp = inst_creds_stamp(s);
	snprintf(path, sizeof(path), "%s/password", s->auth_dir);
	rc = hash_file(path, &c.default_cur, NULL, e);
	snprintf(path, sizeof(path), "%s/password", s->operator_auth_dir);
	if (!rc)
		rc = hash_file(path, &c.operator_cur, &c.operator_pw, e);
	if (!rc)
		rc = load_users(s->users_dir, &c, e);
	if (!rc)
		rc = load_acl(s, &c, e);
	if (rc) {
		inst_creds_release(&c);
		return rc;
	}
	c.default_all = c.default_cur;
	c.operator_all = c.operator_cur;
	*out = c;
	return 0;
}

/* FNV-1a over bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static uint64_t stamp_path(uint64_t h, const char *path, int depth)
{
	struct stat st;
	char link[PATH_MAX];
	ssize_t n;
	DIR *dp;
	struct dirent *d;

	h = fnv(h, path, strlen(path));
	if ((n = readlink(path, link, sizeof(link))) > 0)
		h = fnv(h, link, (size_t)n);
	if (stat(path, &st) != 0)
		return fnv(h, "-", 1);
	h = fnv(h, &st.st_ino, sizeof(st.st_ino));
	h = fnv(h, &st.st_size, sizeof(st.st_size));
	h = fnv(h, &st.st_mtim, sizeof(st.st_mtim));
	if (!S_ISDIR(st.st_mode) || depth > 2 || !(dp = opendir(path)))
		return h;
	while ((d = readdir(dp))) {
		char p[PATH_MAX];

		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0 ||
		    (d->d_name[0] == '.' && strcmp(d->d_name, "..data") != 0))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, d->d_name);
		h ^= stamp_path(14695981039346656037ULL, p, depth + 1); /* order-free */
	}
	closedir(dp);
	return h;
}

uint64_t inst_creds_stamp(const struct inst_settings *s)
{
	uint64_t h = 14695981039346656037ULL;

	h = stamp_path(h, s->auth_dir, 0);
	h = stamp_path(h, s->operator_auth_dir, 0);
	if (s->acl_dir)
		h = stamp_path(h, s->acl_dir, 0);
	return stamp_path(h, s->users_dir, 0);
}

uint64_t inst_tls_stamp(const struct inst_settings *s)
{
	return stamp_path(14695981039346656037ULL, s->tls_dir, 0);
}

static void union_into(struct inst_pwset *all, const struct inst_pwset *old,
                       const struct inst_pwset *cur)
{
	struct inst_pwset u = *cur;

	for (size_t i = 0; i < old->n; i++)
		(void)inst_pwset_add(&u, old->hash[i]); /* full: the oldest are dropped */
	*all = u;
}

void inst_creds_merge(struct inst_creds *cur, struct inst_creds *fresh)
{
	union_into(&fresh->default_all, &cur->default_all, &fresh->default_cur);
	union_into(&fresh->operator_all, &cur->operator_all, &fresh->operator_cur);
	for (size_t i = 0; i < fresh->nusers; i++) {
		const struct inst_pwset *old = inst_creds_user(cur, fresh->users[i].name);

		if (old)
			union_into(&fresh->users[i].all, old, &fresh->users[i].cur);
	}
	inst_creds_release(cur);
	*cur = *fresh;
	memset(fresh, 0, sizeof(*fresh));
}

int inst_creds_refresh(const struct inst_settings *s, struct inst_creds *cur, struct err *e)
{
	uint64_t stamp = inst_creds_stamp(s);
	struct inst_creds fresh = { 0 };
	int rc;

	if (stamp == cur->stamp)
		return cur->acl_text && !cur->acl_applied ? 1 : 0;
	if ((rc = inst_creds_load(s, &fresh, e)) != 0) {
		/* The stamp taken before reading: a file caught half-written (truncated, not
		 * yet filled) changes again once complete, and that change must retry. */
		cur->stamp = stamp;
		return rc;
	}
	inst_creds_merge(cur, &fresh);
	return 1;
}

void inst_creds_drop_old(struct inst_creds *c)
{
	c->default_all = c->default_cur;
	c->operator_all = c->operator_cur;
	for (size_t i = 0; i < c->nusers; i++)
		c->users[i].all = c->users[i].cur;
}

const struct inst_pwset *inst_creds_user(const struct inst_creds *c, const char *name)
{
	for (size_t i = 0; i < c->nusers; i++)
		if (strcmp(c->users[i].name, name) == 0)
			return &c->users[i].all;
	return NULL;
}

void inst_creds_release(struct inst_creds *c)
{
	if (!c)
		return;
	free_secret(c->operator_pw);
	if (c->acl_text)
		secure_zero(c->acl_text, c->acl_len);
	free(c->acl_text);
	for (size_t i = 0; i < c->nusers; i++)
		free(c->users[i].name);
	free(c->users);
	memset(c, 0, sizeof(*c));
}

/*
 * mounts: a container's filesystem. The agent turns the image's binds and the
 * container's volume mounts into a plan (rt_root_plan_build: names resolved, sources
 * checked, subPath directories made); the cloned child carries it out in its private
 * mount namespace (rt_root_enter_child):
 *
 *   1. every mount private, so nothing propagates back to the host;
 *   2. a tmpfs on <pod dir>/rootfs/<container> holding an overlay's upper and work dirs,
 *      the overlay (lower: the host's root filesystem, or for an OCI image its unpacked
 *      rootfs, ociimage.h, shared read-only by every container of that image) mounted
 *      at merged/;
 *   3. pivot_root into merged/, the old root kept at /.oldroot for the binds;
 *   4. fresh /proc (the new PID namespace), /sys (read-only), a /dev tmpfs with the
 *      usual nodes bound from the host, /dev/pts, /dev/shm, and tmpfs /tmp and /run —
 *      empty and read-only under readOnlyRootFilesystem, as an image's would be;
 *   5. image binds (for an OCI image: the host's /etc/resolv.conf, as a kubelet
 *      provides it; /etc/hosts is a volume of the API half), then volume mounts, each at
 *      its path (mount points are made in the overlay, paths resolve inside the new
 *      root, so symlinks like /var/run cannot lead out of it), read-only ones remounted
 *      so;
 *   6. /.oldroot detached, then "/" remounted read-only if asked.
 * Everything lives in the container's mount namespace and vanishes with its last
 * process: the host keeps only the empty <pod dir>/rootfs/<container> directory.
 *
 * Also here: rm -rf and fsGroup ownership, walking with *at() calls that never follow
 * symlinks nor cross into other mounts.
 */
#include "runtime_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "imagemap.h"
#include "lib/alloc.h"
#include "lib/err.h"

#define WALK_MAX_DEPTH 64

/* --- helpers usable in the child ------------------------------------------------------- */

int rt_mkdir_p(const char *path, mode_t mode)
{
	char p[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, len + 1);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Creates an empty file at path (and its parents) to bind a file over. */
static int touch_p(const char *path)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, rc;

	if (!slash || (size_t)(slash - path) >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	if (parent[0] && (rc = rt_mkdir_p(parent, 0755)))
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int child_err(int rc, char *msg, size_t len, const char *what, const char *path)
{
	snprintf(msg, len, "%s %s", what, path);
	return rc < 0 ? rc : -EIO;
}

/* --- the child's side -------------------------------------------------------------------- */

struct fixed_mount {
	const char *type, *dst;
	unsigned long flags;
	const char *data;
	bool ro_with_root; /* read-only (and empty) under readOnlyRootFilesystem */
};

static const struct fixed_mount fixed_mounts[] = {
	{ "proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, false },
	{ "sysfs", "/sys", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, false },
	{ "tmpfs", "/dev", MS_NOSUID | MS_STRICTATIME, "mode=755", false },
	{ "devpts", "/dev/pts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620",
	  false },
	{ "tmpfs", "/dev/shm", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=1777", false },
	{ "tmpfs", "/tmp", MS_NOSUID | MS_NODEV, "mode=1777", true },
	{ "tmpfs", "/run", MS_NOSUID | MS_NODEV, "mode=755", true },
};

static const char *const dev_nodes[] = { "/dev/null",   "/dev/zero",    "/dev/full",
	                                 "/dev/random", "/dev/urandom", "/dev/tty" };

static const struct {
	const char *target, *link;
} dev_links[] = {
	{ "/proc/self/fd", "/dev/fd" },       { "/proc/self/fd/0", "/dev/stdin" },
	{ "/proc/self/fd/1", "/dev/stdout" }, { "/proc/self/fd/2", "/dev/stderr" },
	{ "pts/ptmx", "/dev/ptmx" },
};

/* Binds RT_OLDROOT<src> on dst, read-only if asked. */
static int bind_child(const char *src, const char *dst, bool is_file, bool ro, char *msg,
                      size_t len)
{
	char from[PATH_MAX];
	int rc;

	if (snprintf(from, sizeof(from), "%s%s", RT_OLDROOT, src) >= (int)sizeof(from))
		return child_err(-ENAMETOOLONG, msg, len, "bind source", src);
	rc = is_file ? touch_p(dst) : rt_mkdir_p(dst, 0755);
	if (rc)
		return child_err(rc, msg, len, "create mount point", dst);
	if (mount(from, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return child_err(-errno, msg, len, "bind-mount", dst);
	if (ro && mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		return child_err(-errno, msg, len, "remount read-only", dst);
	return 0;
}

#define N_FIXED (sizeof(fixed_mounts) / sizeof(*fixed_mounts))

/* Writable for now: volume mount points may still be created below /run or /tmp. The
 * device of each mount is kept, so seal_child can tell whether a volume now covers it. */
static int fixed_mounts_child(dev_t devs[N_FIXED], char *msg, size_t len)
{
	for (size_t i = 0; i < N_FIXED; i++) {
		const struct fixed_mount *f = &fixed_mounts[i];
		struct stat st;
		int rc = rt_mkdir_p(f->dst, 0755);

		if (rc)
			return child_err(rc, msg, len, "create mount point", f->dst);
		if (mount(f->type, f->dst, f->type, f->flags, f->data) < 0)
			return child_err(-errno, msg, len, "mount", f->dst);
		devs[i] = stat(f->dst, &st) == 0 ? st.st_dev : 0;
	}
	return 0;
}

/*
 * readOnlyRootFilesystem, applied last, as a runtime does: "/" and the tmpfs mounts that
 * stand for the image's /tmp and /run become read-only; the volumes mounted on or below
 * them stay as they are. A bind remount changes only that mount point (a plain remount
 * would change the tmpfs itself and fails with EBUSY); a tmpfs that a volume now covers
 * (its path shows another device) is left alone.
 */
static int seal_child(const dev_t devs[N_FIXED], char *msg, size_t len)
{
	for (size_t i = 0; i < N_FIXED; i++) {
		const struct fixed_mount *f = &fixed_mounts[i];
		struct stat st;

		if (!f->ro_with_root || stat(f->dst, &st) < 0 || st.st_dev != devs[i])
			continue;
		if (mount(NULL, f->dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | f->flags, NULL) <
		    0)
			return child_err(-errno, msg, len, "remount read-only", f->dst);
	}
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		return child_err(-errno, msg, len, "remount read-only", "/");
	return 0;
}

static int dev_child(char *msg, size_t len)
{
	int rc;

	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(*dev_nodes); i++)
		if ((rc = bind_child(dev_nodes[i], dev_nodes[i], true, false, msg, len)))
			return rc;
	for (size_t i = 0; i < sizeof(dev_links) / sizeof(*dev_links); i++)
		if (symlink(dev_links[i].target, dev_links[i].link) < 0 && errno != EEXIST)
			return child_err(-errno, msg, len, "symlink", dev_links[i].link);
	return 0;
}

static int pivot_child(const struct rt_root_plan *p, char *msg, size_t len)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return child_err(-errno, msg, len, "make private", "/");
	if (mount("tmpfs", p->rootfs, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0)
		return child_err(-errno, msg, len, "mount tmpfs on", p->rootfs);
	if (mkdir(p->upper, 0755) < 0 || mkdir(p->work, 0755) < 0 || mkdir(p->merged, 0755) < 0)
		return child_err(-errno, msg, len, "create overlay dirs in", p->rootfs);
	if (mount("overlay", p->merged, "overlay", 0, p->overlay_opts) < 0)
		return child_err(-errno, msg, len, "mount overlay on", p->merged);
	if (chdir(p->merged) < 0 || mkdir("." RT_OLDROOT, 0700) < 0)
		return child_err(-errno, msg, len, "prepare", RT_OLDROOT);
	if (syscall(SYS_pivot_root, ".", "." RT_OLDROOT) < 0)
		return child_err(-errno, msg, len, "pivot_root into", p->merged);
	if (chdir("/") < 0)
		return child_err(-errno, msg, len, "chdir", "/");
	return 0;
}

int rt_root_enter_child(const struct rt_root_plan *p, char *msg, size_t len)
{
	dev_t devs[N_FIXED];
	int rc;

	if ((rc = pivot_child(p, msg, len)) || (rc = fixed_mounts_child(devs, msg, len)) ||
	    (rc = dev_child(msg, len)))
		return rc;
	for (size_t i = 0; i < p->n_binds; i++) {
		const struct rt_bind *b = &p->binds[i];

		if ((rc = bind_child(b->src, b->dst, b->is_file, b->read_only, msg, len)))
			return rc;
	}
	if (umount2(RT_OLDROOT, MNT_DETACH) < 0 || rmdir(RT_OLDROOT) < 0)
		return child_err(-errno, msg, len, "detach", RT_OLDROOT);
	return p->read_only_root ? seal_child(devs, msg, len) : 0;
}

/* --- the plan, in the agent ---------------------------------------------------------------- */

bool rt_sub_path_is_valid(const char *s)
{
	if (!s || !*s || *s == '/')
		return false;
	while (*s) {
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n + (s[n] == '/');
	}
	return true;
}

static void plan_add(struct rt_root_plan *p, char *src, const char *dst, bool ro, bool is_file)
{
	p->binds = xreallocarray(p->binds, p->n_binds + 1, sizeof(*p->binds));
	p->binds[p->n_binds].src = src;
	p->binds[p->n_binds].dst = xstrdup(dst);
	p->binds[p->n_binds].read_only = ro;
	p->binds[p->n_binds].is_file = is_file;
	p->n_binds++;
}

static size_t path_depth(const char *path)
{
	size_t n = 0;

	for (const char *s = path; *s; s++)
		n += s[0] == '/' && s[1] && s[1] != '/';
	return n;
}

/* Parents before children (stable), as container runtimes order mounts, so a volume on
 * /run never hides one mounted on /run/secrets/... before it. */
static void plan_sort(struct rt_root_plan *p)
{
	for (size_t i = 1; i < p->n_binds; i++) {
		struct rt_bind b = p->binds[i];
		size_t j = i;

		for (; j > 0 && path_depth(p->binds[j - 1].dst) > path_depth(b.dst); j--)
			p->binds[j] = p->binds[j - 1];
		p->binds[j] = b;
	}
}

/* A file a kubelet puts into every container that an image's root lacks (/etc/hosts
 * comes from the API half as a volume); a volume of the pod at that path wins. */
#define KUBELET_RESOLV_CONF "/etc/resolv.conf"

static bool ctr_mounts_at(const struct rt_ctr *c, const char *path)
{
	for (size_t i = 0; i < c->spec->n_mounts; i++)
		if (!strcmp(c->spec->mounts[i].mount_path, path))
			return true;
	return false;
}

static int plan_image_binds(struct rt_root_plan *p, const struct rt_ctr *c, struct err *e)
{
	struct stat st;

	if (c->image && c->image->rootfs && !ctr_mounts_at(c, KUBELET_RESOLV_CONF) &&
	    stat(KUBELET_RESOLV_CONF, &st) == 0 && S_ISREG(st.st_mode))
		plan_add(p, xstrdup(KUBELET_RESOLV_CONF), KUBELET_RESOLV_CONF, true, true);

	for (size_t i = 0; c->image && i < c->image->n_binds; i++) {
		const struct imagemap_bind *b = &c->image->binds[i];

		if (stat(b->host_path, &st) < 0)
			return err_set(e, -errno, "image %s: bind source %s: %s", c->spec->image,
			               b->host_path, strerror(errno));
		plan_add(p, xstrdup(b->host_path), b->path, b->read_only, !S_ISDIR(st.st_mode));
	}
	return 0;
}

static const struct rt_volume *find_volume(const struct rt_pod *pod, const char *name)
{
	for (size_t i = 0; i < pod->spec.n_volumes; i++)
		if (!strcmp(pod->spec.volumes[i].name, name))
			return &pod->spec.volumes[i];
	return NULL;
}

static int plan_volume(struct rt_root_plan *p, const struct rt_pod *pod, const struct rt_mount *m,
                       struct err *e)
{
	const struct rt_volume *v = find_volume(pod, m->volume);
	struct stat st;
	char *src;
	int rc;

	if (!v)
		return err_set(e, -EINVAL, "volumeMount %s: no volume of that name", m->volume);
	if (!m->sub_path) {
		src = xstrdup(v->host_path);
	} else {
		src = xasprintf("%s/%s", v->host_path, m->sub_path);
		if (stat(src, &st) < 0 && (rc = rt_mkdir_p(src, 0755))) {
			err_set(e, rc, "subPath %s of volume %s: %s", m->sub_path, m->volume,
			        strerror(-rc));
			free(src);
			return rc;
		}
	}
	if (stat(src, &st) < 0) {
		rc = err_set(e, -errno, "volume %s: %s: %s", m->volume, src, strerror(errno));
		free(src);
		return rc;
	}
	plan_add(p, src, m->mount_path, m->read_only, !S_ISDIR(st.st_mode));
	return 0;
}

int rt_root_plan_build(struct rt_root_plan *p, const struct rt_pod *pod, const struct rt_ctr *c,
                       struct err *e)
{
	const char *lower = c->image && c->image->rootfs ? c->image->rootfs : "/";
	int rc;

	memset(p, 0, sizeof(*p));
	p->rootfs = xasprintf("%s/rootfs/%s", pod->sb.dir, c->spec->name);
	p->upper = xasprintf("%s/upper", p->rootfs);
	p->work = xasprintf("%s/work", p->rootfs);
	p->merged = xasprintf("%s/merged", p->rootfs);
	p->overlay_opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, p->upper, p->work);
	p->read_only_root = c->spec->read_only_root;
	if (strpbrk(p->rootfs, ",:") || strpbrk(lower, ",:"))
		return err_set(e, -EINVAL, "%s or %s: ',' or ':' cannot go into overlay options",
		               p->rootfs, lower);
	if ((rc = rt_mkdir_p(p->rootfs, 0700)))
		return err_set(e, rc, "%s: %s", p->rootfs, strerror(-rc));
	if ((rc = plan_image_binds(p, c, e)))
		return rc;
	for (size_t i = 0; i < c->spec->n_mounts; i++)
		if ((rc = plan_volume(p, pod, &c->spec->mounts[i], e)))
			return rc;
	plan_sort(p);
	return 0;
}

void rt_root_plan_release(struct rt_root_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_binds; i++) {
		free(p->binds[i].src);
		free(p->binds[i].dst);
	}
	free(p->binds);
	free(p->rootfs);
	free(p->upper);
	free(p->work);
	free(p->merged);
	free(p->overlay_opts);
	memset(p, 0, sizeof(*p));
}

/* --- tree walks ------------------------------------------------------------------------------ */

struct walk {
	dev_t dev; /* the filesystem we stay on */
	int (*fn)(int dfd, const char *name, const struct stat *st, const struct walk *w);
	long gid;
};

static int walk_dir(int dfd, const char *name, const struct walk *w, int depth);

/* Post-order: children first, then fn on the entry itself. Keeps the first error. */
static int walk_entry(int dfd, const char *name, const struct walk *w, int depth)
{
	struct stat st;
	int rc = 0, rc2;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		if (st.st_dev != w->dev)
			return -EXDEV;
		if (depth >= WALK_MAX_DEPTH)
			return -ELOOP;
		rc = walk_dir(dfd, name, w, depth + 1);
	}
	rc2 = w->fn(dfd, name, &st, w);
	return rc ? rc : rc2;
}

static int walk_dir(int dfd, const char *name, const struct walk *w, int depth)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int rc = 0, rc2;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc2 = walk_entry(dirfd(d), de->d_name, w, depth);
		if (!rc)
			rc = rc2;
	}
	closedir(d);
	return rc;
}

static int walk_tree(const char *path, struct walk *w)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return -errno;
	w->dev = st.st_dev;
	return walk_entry(AT_FDCWD, path, w, 0);
}

static int remove_fn(int dfd, const char *name, const struct stat *st, const struct walk *w)
{
	(void)w;
	if (unlinkat(dfd, name, S_ISDIR(st->st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

int rt_rmtree(const char *path)
{
	struct walk w = { 0, remove_fn, -1 };
	int rc = walk_tree(path, &w);

	return rc == -ENOENT ? 0 : rc;
}

static int fs_group_fn(int dfd, const char *name, const struct stat *st, const struct walk *w)
{
	mode_t add = S_ISDIR(st->st_mode) ? (S_IRGRP | S_IWGRP | S_IXGRP | S_ISGID)
	                                  : (S_IRGRP | S_IWGRP);

	if (fchownat(dfd, name, (uid_t)-1, (gid_t)w->gid, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st->st_mode))
		return 0;
	if (fchmodat(dfd, name, (st->st_mode & 07777) | add, 0) < 0)
		return -errno;
	return 0;
}

int rt_fs_group_apply(const char *dir, long gid, struct err *e)
{
	struct walk w = { 0, fs_group_fn, gid };
	int rc;

	if (gid < 0)
		return 0;
	rc = walk_tree(dir, &w);
	if (rc)
		return err_set(e, rc, "fsGroup %ld on %s: %s", gid, dir, strerror(-rc));
	return 0;
}

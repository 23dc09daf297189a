/*
 * copybin: `redis-operator copy-binary DIR`, run by the data pods' init container.
 *
 * Copies /proc/self/exe to DIR/redis-operator and every shared library this process
 * has loaded (dl_iterate_phdr: the transitive closure of DT_NEEDED, as resolved by the
 * loader) to DIR/lib/<name>, except glibc's own libraries, which must come from the
 * image (they are tied to its ld.so). The binary is linked with an RPATH of
 * $ORIGIN/lib (DT_RPATH, not DT_RUNPATH: RPATH also applies to the libraries'
 * own dependencies), so DIR/redis-operator runs unchanged in any glibc-based image.
 * Files are written to a temporary name and renamed, mode 0755.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance/instance.h"
#include "lib/alloc.h"

#define COPY_MAX_LIBS 128

/* glibc's libraries: never copied. */
static const char *const glibc[] = { "libc.so",      "libm.so",    "libpthread.so",
	                             "libdl.so",     "librt.so",   "ld-linux",
	                             "libresolv.so", "libutil.so", "libanl.so",
	                             "libnss_",      "libmvec.so", "ld64.so",
	                             "linux-vdso",   "linux-gate", NULL };

struct libs {
	size_t n;
	char *path[COPY_MAX_LIBS];
};

static bool is_glibc(const char *base)
{
	for (size_t i = 0; glibc[i]; i++)
		if (strncmp(base, glibc[i], strlen(glibc[i])) == 0)
			return true;
	return false;
}

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct libs *l = arg;
	const char *name = info->dlpi_name, *base;

	(void)size;
	if (!name || name[0] != '/')
		return 0; /* the executable itself ("") and the vDSO */
	base = strrchr(name, '/') + 1;
	if (!is_glibc(base) && l->n < COPY_MAX_LIBS)
		l->path[l->n++] = xstrdup(name);
	return 0;
}

static int copy_file(const char *src, const char *dst)
{
	char tmp[PATH_MAX], buf[65536];
	int in, out, rc = 0;
	ssize_t n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while (!rc && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 || write(out, buf, (size_t)n) != n)
			rc = -EIO;
	}
	if (!rc && (fchmod(out, 0755) < 0 || fsync(out) < 0))
		rc = -errno;
	close(in);
	close(out);
	if (!rc && rename(tmp, dst) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

static int copy_libs(const char *dir, struct libs *l)
{
	char dst[PATH_MAX];
	int rc = 0;

	for (size_t i = 0; i < l->n && !rc; i++) {
		snprintf(dst, sizeof(dst), "%s/lib/%s", dir, strrchr(l->path[i], '/') + 1);
		rc = copy_file(l->path[i], dst);
		if (rc)
			fprintf(stderr, "copy-binary: %s: %s\n", l->path[i], strerror(-rc));
	}
	return rc;
}

int copy_binary_main(int argc, char **argv)
{
	struct libs l = { 0 };
	char dst[PATH_MAX], lib[PATH_MAX];
	int rc;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: redis-operator copy-binary DIR\n");
		return 2;
	}
	snprintf(lib, sizeof(lib), "%s/lib", argv[1]);
	if ((mkdir(argv[1], 0755) < 0 && errno != EEXIST) ||
	    (mkdir(lib, 0755) < 0 && errno != EEXIST)) {
		fprintf(stderr, "copy-binary: %s: %s\n", lib, strerror(errno));
		return 1;
	}
	snprintf(dst, sizeof(dst), "%s/redis-operator", argv[1]);
	rc = copy_file("/proc/self/exe", dst);
	if (rc)
		fprintf(stderr, "copy-binary: %s: %s\n", dst, strerror(-rc));
	dl_iterate_phdr(collect, &l);
	if (!rc)
		rc = copy_libs(argv[1], &l);
	if (!rc)
		printf("copy-binary: copied the binary and %zu libraries into %s\n", l.n, argv[1]);
	for (size_t i = 0; i < l.n; i++)
		free(l.path[i]);
	return rc ? 1 : 0;
}

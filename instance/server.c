/*
 * server: finding, probing and spawning redis-server/valkey-server, and the files the
 * manager keeps on the data volume (the rendered config, the fence marker).
 *
 * The child is forked by the supervisor (the main thread, which lives as long as the
 * process, so PR_SET_PDEATHSIG fires only when the manager itself dies: useful when it
 * is not PID 1, as in tests). Between fork and exec only async-signal-safe calls: the
 * signal mask and dispositions are reset, the umask set to 077, descriptors above 2
 * closed, then execv. The umask keeps every file the server writes private (0600):
 * redis.conf after CONFIG REWRITE (a temporary file renamed over it, its mode derived
 * from the umask), RDB and AOF files. The config path is the only argument: auth never
 * appears on a command line.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "instance/internal.h"
#include "lib/alloc.h"

#define VERSION_OUT_MAX 1024

static bool executable(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static bool search_path(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");
	char *dup, *save = NULL;
	bool found = false;

	dup = xstrdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = strtok_r(dup, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/%s", d, name);
		found = executable(out);
	}
	free(dup);
	return found;
}

int inst_server_find(const char *override, enum vk_engine want, char *out, size_t len,
                     struct err *e)
{
	static const char *const order[][2] = {
		[VK_ENGINE_UNKNOWN] = { "valkey-server", "redis-server" },
		[VK_ENGINE_REDIS] = { "redis-server", NULL },
		[VK_ENGINE_VALKEY] = { "valkey-server", NULL },
	};

	if (override) {
		if (!executable(override))
			return err_set(e, -ENOENT, "--server-binary %s: not an executable",
			               override);
		snprintf(out, len, "%s", override);
		return 0;
	}
	for (int i = 0; i < 2 && order[want][i]; i++)
		if (search_path(order[want][i], out, len))
			return 0;
	return err_set(e, -ENOENT, "no %s in PATH", order[want][0]);
}

/* "Redis server v=7.0.15 sha=…" / "Valkey server v=8.0.1 sha=…" */
int inst_server_parse_version(const char *text, enum vk_engine *engine, unsigned *version,
                              char *vtext, size_t vlen)
{
	const char *v = strstr(text, " v=");
	size_t n;

	if (!v)
		return -EINVAL;
	v += 3;
	n = strcspn(v, " \n");
	if (vk_version_parse(v, n, version) < 0 || n >= vlen)
		return -EINVAL;
	*engine = strncmp(text, "Valkey ", 7) == 0  ? VK_ENGINE_VALKEY
	          : strncmp(text, "Redis ", 6) == 0 ? VK_ENGINE_REDIS
	                                            : VK_ENGINE_UNKNOWN;
	if (*engine == VK_ENGINE_UNKNOWN)
		return -EINVAL;
	memcpy(vtext, v, n);
	vtext[n] = '\0';
	return 0;
}

static void child_exec(const char *bin, const char *arg, int out_fd)
{
	sigset_t all;
	char *argv[3] = { (char *)bin, (char *)arg, NULL };

	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	umask(077);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (out_fd >= 0 && dup2(out_fd, STDOUT_FILENO) < 0)
		_exit(127);
	close_range(3, ~0U, 0);
	execv(bin, argv);
	_exit(127);
}

int inst_server_probe(const char *bin, enum vk_engine *engine, unsigned *version, char *vtext,
                      size_t vlen, struct err *e)
{
	char out[VERSION_OUT_MAX];
	int p[2], status;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(e, -errno, "pipe: %s", strerror(errno));
	pid = fork();
	if (pid == 0)
		child_exec(bin, "--version", p[1]);
	close(p[1]);
	while (pid > 0 && n < sizeof(out) - 1 && (r = read(p[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)r;
	close(p[0]);
	out[n] = '\0';
	if (pid < 0)
		return err_set(e, -errno, "fork: %s", strerror(errno));
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (inst_server_parse_version(out, engine, version, vtext, vlen) < 0)
		return err_set(e, -EINVAL, "%s --version: unrecognised output", bin);
	return 0;
}

int inst_server_spawn(const char *bin, const char *conf, pid_t *pid, struct err *e)
{
	pid_t p = fork();

	if (p < 0)
		return err_set(e, -errno, "fork: %s", strerror(errno));
	if (p == 0)
		child_exec(bin, conf, -1);
	*pid = p;
	return 0;
}

static bool nonempty_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

bool inst_data_present(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;

	snprintf(p, sizeof(p), "%s/dump.rdb", dir);
	if (nonempty_file(p))
		return true;
	snprintf(p, sizeof(p), "%s/appendonly.aof", dir);
	if (nonempty_file(p))
		return true;
	snprintf(p, sizeof(p), "%s/appendonlydir", dir);
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int inst_file_write_atomic(const char *path, const char *data, size_t len, struct err *e)
{
	char tmp[PATH_MAX];
	int fd, rc = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(e, -errno, "%s: %s", tmp, strerror(errno));
	for (size_t off = 0; off < len && !rc;) {
		ssize_t n = write(fd, data + off, len - off);

		if (n < 0 && errno != EINTR)
			rc = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	close(fd);
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		return err_set(e, rc, "%s: %s", path, strerror(-rc));
	}
	return 0;
}

int inst_marker_write(const char *path, const char *reason, struct err *e)
{
	char text[INST_REASON_MAX + 64];
	int n = snprintf(text, sizeof(text), "%s\n", reason);

	return inst_file_write_atomic(path, text, (size_t)n < sizeof(text) ? (size_t)n : 0, e);
}

bool inst_marker_read(const char *path, char *reason, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, reason, len - 1);
	close(fd);
	if (n < 0)
		n = 0;
	reason[n] = '\0';
	reason[strcspn(reason, "\n")] = '\0';
	return true;
}

int inst_marker_remove(const char *path)
{
	return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

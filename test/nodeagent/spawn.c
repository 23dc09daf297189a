/*
 * spawn: the runtime's processes. A container's PID 1 comes from a raw clone() with new
 * PID, mount, UTS and IPC namespaces, so it is our direct child; probes and preStop hooks
 * run in a container's namespaces through a helper child; `ip` and `curl` are started
 * with posix_spawnp.
 *
 * Between clone/fork and exec a child runs only system calls on stack buffers: the agent
 * may have other threads holding locks (malloc's, OpenSSL's) that a child would never
 * see released. For the same reason credentials are changed with the raw system calls
 * (glibc's setuid() would try to signal threads that exist only in the parent). A child
 * that fails before exec reports errno and a message through a close-on-exec pipe; the
 * parent reads EOF when exec succeeded.
 *
 * Every child asks for SIGKILL when the agent's thread that made it dies
 * (PR_SET_PDEATHSIG): a crashed agent leaves no pod behind.
 */
#include "runtime_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/err.h"

#define DEFAULT_PATH   "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define RUN_OUTPUT_MAX 2048 /* bytes of a command's output kept for the error message */

extern char **environ;

struct child_report {
	int err; /* negative errno */
	char msg[RT_MSG_MAX];
};

/* --- in the child ------------------------------------------------------------------------ */

static void reset_signals_child(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int s = 1; s < NSIG; s++)
		sigaction(s, &sa, NULL); /* SIGKILL, SIGSTOP and libc's own fail: fine */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static _Noreturn void fail_child(int fd, int err, const char *what, const char *detail)
{
	struct child_report r;

	r.err = err < 0 ? err : -err;
	snprintf(r.msg, sizeof(r.msg), "%s%s%s: %s", what, detail ? " " : "", detail ? detail : "",
	         strerror(-r.err));
	if (write(fd, &r, sizeof(r)) < 0) {
		/* nothing left to tell anyone */
	}
	_exit(127);
}

static int cred_apply_child(const struct rt_cred *c)
{
	long uid = c->uid < 0 ? 0 : c->uid, gid = c->gid < 0 ? 0 : c->gid;

	if (syscall(SYS_setgroups, c->n_groups, c->groups) < 0)
		return -errno;
	if (syscall(SYS_setresgid, gid, gid, gid) < 0)
		return -errno;
	if (syscall(SYS_setresuid, uid, uid, uid) < 0)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

static const char *env_path(char *const *envp)
{
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, "PATH=", 5))
			return *envp + 5;
	return DEFAULT_PATH;
}

/* execvpe with the PATH of envp (not ours) and no allocation. Returns -errno. */
static int exec_path_child(char *const *argv, char *const *envp)
{
	char path[4096];
	const char *dirs = env_path(envp);
	int err = -ENOENT;

	if (strchr(argv[0], '/')) {
		execve(argv[0], argv, envp);
		return -errno;
	}
	while (*dirs) {
		size_t n = strcspn(dirs, ":");
		int len = snprintf(path, sizeof(path), "%.*s%s%s", (int)n, dirs, n ? "/" : "",
		                   argv[0]);

		dirs += n + (dirs[n] == ':');
		if (len < 0 || (size_t)len >= sizeof(path))
			continue;
		execve(path, argv, envp);
		if (errno == EACCES)
			err = -EACCES;
		else if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
	}
	return err;
}

/* A copy of fd numbered 3 or more, so dup2 onto 0..2 cannot clobber it. */
static int above_stdio_child(int fd)
{
	return fd >= 0 && fd < 3 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd;
}

static int stdio_child(int out_fd)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	out_fd = above_stdio_child(out_fd);
	if (null < 0)
		return -errno;
	if (dup2(null, 0) < 0 || dup2(out_fd >= 0 ? out_fd : null, 1) < 0 ||
	    dup2(out_fd >= 0 ? out_fd : null, 2) < 0)
		return -errno;
	return 0;
}

static int join_cgroup_child(int fd)
{
	if (fd >= 0 && write(fd, "0", 1) != 1)
		return -errno;
	return 0;
}

static _Noreturn void container_child(const struct rt_launch *l, int rfd)
{
	char msg[RT_MSG_MAX];
	int rc;

	rfd = above_stdio_child(rfd);
	reset_signals_child();
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	setsid();
	if ((rc = join_cgroup_child(l->cgroup_fd)))
		fail_child(rfd, rc, "join the pod's cgroup", NULL);
	if (setns(l->netns_fd, CLONE_NEWNET) < 0)
		fail_child(rfd, errno, "enter the pod's network namespace", NULL);
	if (sethostname(l->hostname, strlen(l->hostname)) < 0)
		fail_child(rfd, errno, "sethostname", l->hostname);
	if ((rc = rt_root_enter_child(l->root, msg, sizeof(msg))))
		fail_child(rfd, rc, msg, NULL);
	if ((rc = stdio_child(l->log_fd)))
		fail_child(rfd, rc, "set up stdio", NULL);
	if ((rc = rt_mkdir_p(l->workdir, 0755)))
		fail_child(rfd, rc, "create working directory", l->workdir);
	if ((rc = cred_apply_child(&l->cred)))
		fail_child(rfd, rc, "set user and groups", NULL);
	if (chdir(l->workdir) < 0)
		fail_child(rfd, errno, "chdir to", l->workdir);
	syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
	rc = exec_path_child(l->argv, l->envp);
	fail_child(rfd, rc, "exec", l->argv[0]);
}

/* --- in the agent ------------------------------------------------------------------------ */

static pid_t raw_clone(unsigned long flags)
{
	/* x86_64 and arm64 order: flags, stack, parent_tid, child_tid, tls. */
	return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

void rt_kill_and_reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* 0: EOF (the child exec'd); 1: *r holds its report; -ETIMEDOUT. */
static int read_report(int fd, int64_t timeout_ms, struct child_report *r)
{
	int64_t deadline = clock_mono_ms() + timeout_ms;
	struct pollfd pfd = { fd, POLLIN, 0 };
	size_t got = 0;

	while (got < sizeof(*r)) {
		int64_t left = deadline - clock_mono_ms();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fd, (char *)r + got, sizeof(*r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got ? 1 : 0;
		got += (size_t)n;
	}
	r->msg[sizeof(r->msg) - 1] = '\0';
	return 1;
}

int rt_spawn_container(const struct rt_launch *l, pid_t *out, struct err *e)
{
	struct child_report r = { -EIO, "setup ended early" };
	int p[2], rc;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(e, -errno, "pipe: %s", strerror(errno));
	pid = raw_clone(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC);
	if (pid == 0) {
		close(p[0]);
		container_child(l, p[1]);
	}
	rc = pid < 0 ? -errno : 0;
	close(p[1]);
	if (rc) {
		close(p[0]);
		return err_set(e, rc, "clone: %s", strerror(-rc));
	}
	rc = read_report(p[0], l->timeout_ms, &r);
	close(p[0]);
	if (rc == 0) {
		*out = pid;
		return 0;
	}
	rt_kill_and_reap(pid);
	if (rc == -ETIMEDOUT)
		return err_set(e, rc, "container setup took longer than %lld ms",
		               (long long)l->timeout_ms);
	return err_set(e, r.err, "%s", r.msg);
}

static _Noreturn void exec_in_child(const struct rt_exec_in *x, const int *fds, size_t n_fds)
{
	pid_t g;
	int st;

	reset_signals_child();
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (join_cgroup_child(x->cgroup_fd))
		_exit(126);
	for (size_t i = 0; i < n_fds; i++)
		if (setns(fds[i], 0) < 0)
			_exit(126);
	g = fork(); /* the PID namespace applies to children only */
	if (g == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (stdio_child(-1) || cred_apply_child(&x->cred) ||
		    chdir(x->workdir ? x->workdir : "/") < 0)
			_exit(126);
		syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */);
		exec_path_child(x->argv, x->envp);
		_exit(127);
	}
	if (g < 0)
		_exit(126);
	while (waitpid(g, &st, 0) < 0)
		if (errno != EINTR)
			_exit(126);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

/* Joining the mount namespace last: the others are opened through our /proc. */
static const char *const exec_in_ns[] = { "ipc", "uts", "net", "pid", "mnt" };
#define N_EXEC_IN_NS (sizeof(exec_in_ns) / sizeof(*exec_in_ns))

int rt_spawn_exec_in(const struct rt_exec_in *x, pid_t *out, struct err *e)
{
	int fds[N_EXEC_IN_NS];
	size_t n = 0;
	pid_t pid;
	int rc = 0;

	for (; n < N_EXEC_IN_NS; n++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)x->target, exec_in_ns[n]);
		fds[n] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[n] < 0) {
			rc = err_set(e, -ESRCH, "%s: %s", path, strerror(errno));
			break;
		}
	}
	if (!rc) {
		pid = fork();
		if (pid == 0)
			exec_in_child(x, fds, n);
		if (pid < 0)
			rc = err_set(e, -errno, "fork: %s", strerror(errno));
		else
			*out = pid;
	}
	while (n > 0)
		close(fds[--n]);
	return rc;
}

static _Noreturn void tcp_check_child(const struct sockaddr_in *sa, int64_t timeout_ms)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int s, err = 0;

	reset_signals_child();
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		_exit(2);
	if (connect(s, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		_exit(0);
	if (errno != EINPROGRESS)
		_exit(1);
	pfd.fd = s;
	pfd.events = POLLOUT;
	if (poll(&pfd, 1, (int)timeout_ms) != 1)
		_exit(1);
	if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err)
		_exit(1);
	_exit(0);
}

int rt_spawn_tcp_check(const char *ip, int port, int64_t timeout_ms, pid_t *out, struct err *e)
{
	struct sockaddr_in sa;
	pid_t pid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (port < 1 || port > 65535 || inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		return err_set(e, -EINVAL, "bad probe address %s:%d", ip, port);
	pid = fork();
	if (pid == 0)
		tcp_check_child(&sa, timeout_ms);
	if (pid < 0)
		return err_set(e, -errno, "fork: %s", strerror(errno));
	*out = pid;
	return 0;
}

/* posix_spawn attributes: own session, no blocked signals, default dispositions. */
static void spawn_attr_init(posix_spawnattr_t *a)
{
	sigset_t all, none;

	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_init(a);
	posix_spawnattr_setflags(a, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
	                                    POSIX_SPAWN_SETSID);
	posix_spawnattr_setsigmask(a, &none);
	posix_spawnattr_setsigdefault(a, &all);
}

/* Starts argv with stdin on /dev/null and stdout/stderr on out_fd (-1: /dev/null). */
static int spawn_with_output(const char *const argv[], int out_fd, pid_t *pid, struct err *e)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (out_fd >= 0) {
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
		posix_spawn_file_actions_adddup2(&fa, out_fd, 2);
	} else {
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_adddup2(&fa, 1, 2);
	}
	spawn_attr_init(&attr);
	rc = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return err_set(e, -rc, "%s: %s", argv[0], strerror(rc));
	return 0;
}

int rt_spawn_cmd(const char *const argv[], pid_t *pid, struct err *e)
{
	return spawn_with_output(argv, -1, pid, e);
}

/* Reads fd until EOF or the deadline, keeping the first RUN_OUTPUT_MAX bytes. */
static int drain_output(int fd, int64_t deadline, struct buf *out)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	char chunk[512];

	for (;;) {
		int64_t left = deadline - clock_mono_ms();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		if (out->len < RUN_OUTPUT_MAX)
			buf_append(out, chunk, (size_t)n);
	}
}

static void cmd_line(const char *const argv[], struct buf *b)
{
	for (size_t i = 0; argv[i]; i++)
		buf_printf(b, "%s%s", i ? " " : "", argv[i]);
}

int rt_run(const char *const argv[], struct err *e)
{
	return rt_run_timeout(argv, RT_CMD_TIMEOUT, e);
}

int rt_run_timeout(const char *const argv[], int64_t timeout_ms, struct err *e)
{
	struct buf out = BUF_INIT(RUN_OUTPUT_MAX * 2), line = BUF_INIT(4096);
	int p[2], rc, st = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return err_set(e, -errno, "pipe: %s", strerror(errno));
	rc = spawn_with_output(argv, p[1], &pid, e);
	close(p[1]);
	if (rc) {
		close(p[0]);
		return rc;
	}
	rc = drain_output(p[0], clock_mono_ms() + timeout_ms, &out);
	close(p[0]);
	if (rc)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!rc && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		rc = -EIO;
	if (rc) {
		cmd_line(argv, &line);
		while (out.len && out.data[out.len - 1] == '\n')
			out.data[--out.len] = '\0';
		if (rc == -ETIMEDOUT)
			err_set(e, rc, "%s: no exit within %lld ms", buf_cstr(&line),
			        (long long)timeout_ms);
		else
			err_set(e, rc, "%s: exit %d: %s", buf_cstr(&line),
			        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
			        buf_cstr(&out));
	}
	buf_release(&out);
	buf_release(&line);
	return rc;
}

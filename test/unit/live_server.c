/*
 * live_server: real redis-server and valkey-server processes for the live unit tests
 * (test/unit/test_valkey_live.c, test_valkey_tls.c), prefix live_ (live_server.h).
 *
 * Each server runs in a fresh directory under a base directory that the runner process
 * creates and removes (live_base_setup/teardown as an unchecked fixture). Servers are
 * started with PR_SET_PDEATHSIG, so a failing or timed-out test (fork mode: the test
 * process exits without its teardown) still takes its servers down with it.
 */
#include "live_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/valkey/conn.h"
#include "testutil.h"
#include "unit.h"

#define START_TIMEOUT_MS 10000
#define MAX_SERVER_ARGS  40

static char base_dir[64]; /* this process's; set by live_base_setup */
static int server_seq;

void live_base_setup(void)
{
	tu_tmpdir(base_dir, sizeof(base_dir), "vk-live");
}

void live_base_teardown(void)
{
	tu_rmtree(base_dir);
}

static bool in_path(const char *bin)
{
	const char *path = getenv("PATH");
	char dir[4096], file[4200];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)n, p);
		snprintf(file, sizeof(file), "%s/%s", dir[0] ? dir : ".", bin);
		if (access(file, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

bool live_skip_missing(const char *bin)
{
	if (in_path(bin))
		return false;
	printf("SKIP: %s is not installed; its live tests did not run\n", bin);
	return true;
}

/* A TCP port that was free a moment ago. */
int live_free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

void live_server_paths(struct live_server *s, int port)
{
	memset(s, 0, sizeof(*s));
	s->port = port;
	snprintf(s->dir, sizeof(s->dir), "%s/s%d-%d", base_dir, (int)getpid(), server_seq++);
	snprintf(s->sock, sizeof(s->sock), "%s/s.sock", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/log", s->dir);
	ck_assert_int_eq(mkdir(s->dir, 0700), 0);
}

static void exec_server(const struct live_server *s, char **argv, pid_t parent)
{
	int fd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	execvp(argv[0], argv);
	_exit(127);
}

static void log_tail(const struct live_server *s, char *out, size_t n)
{
	FILE *f = fopen(s->log, "r");
	size_t got = 0;
	long size;

	out[0] = '\0';
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > (long)n - 1 ? size - ((long)n - 1) : 0, SEEK_SET);
	got = fread(out, 1, n - 1, f);
	out[got] = '\0';
	fclose(f);
}

/* Up means answering PING (or LOADING). Fails the test if the process exits. */
static void wait_up(const struct live_server *s)
{
	struct vk_conn_config cfg = { .unix_path = s->sock,
		                      .connect_timeout_ms = 200,
		                      .command_timeout_ms = 500 };
	struct vk_conn *c = vk_conn_new(&cfg);
	int64_t deadline = clock_mono_ms() + START_TIMEOUT_MS;
	char tail[2048];
	int rc, status;

	for (;;) {
		rc = vk_ping(c, NULL);
		if (rc == 0 || rc == -EBUSY || rc == -EACCES)
			break;
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			log_tail(s, tail, sizeof(tail));
			ck_abort_msg("server in %s exited: %s", s->dir, tail);
		}
		ck_assert_msg(clock_mono_ms() < deadline, "server in %s not up", s->dir);
		usleep(20 * 1000);
	}
	vk_conn_free(c);
}

/*
 * Starts bin. With conf, the command line is just the config file and extra; else the
 * standard test flags (Unix socket, TCP port if any, no persistence) then extra.
 */
void live_server_start(struct live_server *s, const char *bin, const char *conf,
                       const char *const *extra)
{
	char *argv[MAX_SERVER_ARGS];
	char port[16];
	int n = 0;
	pid_t parent = getpid();

	snprintf(port, sizeof(port), "%d", s->port);
	argv[n++] = (char *)bin;
	if (conf) {
		argv[n++] = (char *)conf;
	} else {
		const char *std[] = {
			"--port",           port,  "--bind", "127.0.0.1", "--unixsocket", s->sock,
			"--unixsocketperm", "700", "--save", "",          "--appendonly", "no",
			"--daemonize",      "no",  "--dir",  s->dir
		};

		for (size_t i = 0; i < ARRAY_LEN(std); i++)
			argv[n++] = (char *)std[i];
	}
	for (; extra && *extra; extra++) {
		ck_assert_int_lt(n, MAX_SERVER_ARGS - 1);
		argv[n++] = (char *)*extra;
	}
	argv[n] = NULL;
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0)
		exec_server(s, argv, parent);
	wait_up(s);
}

void live_server_stop(struct live_server *s)
{
	if (s->pid <= 0)
		return;
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
}

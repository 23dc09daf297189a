/*
 * chaos_resolve: built-in (sentinel, cluster, role) and shell resolvers (see the header).
 *
 * Each built-in call opens a short-lived connection per node it asks and closes it: the
 * resolver runs only on reconnection, so simplicity beats a connection cache. The shell
 * resolver forks `sh -c` in its own process group, reads its output with poll() against
 * the deadline, and kills the whole group when time runs out.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/parse.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"
#include "test/chaos/chaos_resolve.h"

struct resolver_kind;

struct chaos_resolver {
	const struct resolver_kind *kind; /* NULL: a shell command */
	char *cmd;                        /* shell */
	char *name;                       /* sentinel: the master's name */
	char *key;                        /* cluster: the key to route */
	char **nodes;
	size_t nnodes, next;
	char *user, *password;
	int connect_ms, command_ms, deadline_ms;
};

struct node_addr {
	char host[CHAOS_ADDR_SIZE];
	int port;
};

typedef int (*ask_fn)(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                      struct node_addr *out, struct err *e);

static int ask_sentinel(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                        struct node_addr *out, struct err *e);
static int ask_cluster(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                       struct node_addr *out, struct err *e);
static int ask_role(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                    struct node_addr *out, struct err *e);

static const struct resolver_kind {
	const char *prefix;
	ask_fn ask;
	bool auth;  /* send the node credentials */
	bool named; /* NAME@nodes */
} kinds[] = {
	{ "sentinel:", ask_sentinel, false, true },
	{ "cluster:", ask_cluster, true, false },
	{ "role:", ask_role, true, false },
};

static int parse_nodes(struct chaos_resolver *r, const char *list, struct err *e)
{
	struct node_addr a;

	r->nodes = chaos_split_list(list, &r->nnodes);
	if (r->nnodes == 0)
		return err_set(e, -EINVAL, "resolver: no nodes");
	for (size_t i = 0; i < r->nnodes; i++)
		if (chaos_parse_addr(r->nodes[i], a.host, sizeof(a.host), &a.port) < 0)
			return err_set(e, -EINVAL, "resolver: \"%.64s\" is not host:port",
			               r->nodes[i]);
	return 0;
}

static int parse_spec(struct chaos_resolver *r, const char *spec, struct err *e)
{
	const char *at;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].prefix);

		if (strncmp(spec, kinds[i].prefix, n) != 0)
			continue;
		r->kind = &kinds[i];
		spec += n;
		if (!r->kind->named)
			return parse_nodes(r, spec, e);
		at = strchr(spec, '@');
		if (!at || at == spec)
			return err_set(e, -EINVAL, "resolver: want sentinel:NAME@host:port,...");
		r->name = xstrndup(spec, (size_t)(at - spec));
		return parse_nodes(r, at + 1, e);
	}
	if (!*spec)
		return err_set(e, -EINVAL, "resolver: empty command");
	r->kind = NULL;
	r->cmd = xstrdup(spec);
	return 0;
}

struct chaos_resolver *chaos_resolver_new(const char *spec, const char *key,
                                          const struct vk_conn_config *node, int deadline_ms,
                                          struct err *e)
{
	struct chaos_resolver *r = xcalloc(1, sizeof(*r));

	if (parse_spec(r, spec, e) < 0) {
		chaos_resolver_free(r);
		return NULL;
	}
	r->key = xstrdup(key);
	r->user = node->user ? xstrdup(node->user) : NULL;
	r->password = node->password ? xstrdup(node->password) : NULL;
	r->connect_ms = node->connect_timeout_ms;
	r->command_ms = node->command_timeout_ms;
	r->deadline_ms = deadline_ms;
	return r;
}

void chaos_resolver_free(struct chaos_resolver *r)
{
	if (!r)
		return;
	free(r->cmd);
	free(r->name);
	free(r->key);
	chaos_list_free(r->nodes);
	free(r->user);
	free_secret(r->password);
	free(r);
}

static int reply_addr(const struct vk_reply *host, const struct vk_reply *port,
                      const struct node_addr *self, struct node_addr *out)
{
	const char *h = vk_reply_str(host, NULL), *ps = vk_reply_str(port, NULL);
	int64_t p = vk_reply_int(port);

	if (ps && parse_int64(ps, 1, 65535, &p, NULL) < 0)
		return -EPROTO;
	if (!h || p < 1 || p > 65535)
		return -EPROTO;
	snprintf(out->host, sizeof(out->host), "%s", *h ? h : self->host);
	out->port = (int)p;
	return 0;
}

static int ask_sentinel(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                        struct node_addr *out, struct err *e)
{
	struct vk_reply *rep = NULL;
	int rc = vk_command(c, &rep, e, "SENTINEL", "get-master-addr-by-name", r->name);

	if (rc)
		return rc;
	if (vk_reply_type(rep) != VK_REPLY_ARRAY || vk_reply_len(rep) != 2)
		rc = err_set(e, -EAGAIN, "%s: sentinel knows no master %s", self->host, r->name);
	else if (reply_addr(vk_reply_elem(rep, 0), vk_reply_elem(rep, 1), self, out) < 0)
		rc = err_set(e, -EPROTO, "%s: unreadable master address", self->host);
	vk_reply_free(rep);
	return rc;
}

/* The master of the CLUSTER SLOTS range holding slot. */
static int slots_master(const struct vk_reply *rep, long long slot, const struct node_addr *self,
                        struct node_addr *out)
{
	for (size_t i = 0; i < vk_reply_len(rep); i++) {
		const struct vk_reply *range = vk_reply_elem(rep, i);
		const struct vk_reply *m = vk_reply_elem(range, 2);

		if (vk_reply_len(range) < 3 || vk_reply_int(vk_reply_elem(range, 0)) > slot ||
		    vk_reply_int(vk_reply_elem(range, 1)) < slot)
			continue;
		return reply_addr(vk_reply_elem(m, 0), vk_reply_elem(m, 1), self, out) < 0 ? -EPROTO
		                                                                           : 0;
	}
	return -EAGAIN;
}

static int ask_cluster(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                       struct node_addr *out, struct err *e)
{
	struct vk_reply *rep = NULL;
	long long slot;
	int rc = vk_command(c, &rep, e, "CLUSTER", "KEYSLOT", r->key);

	if (rc)
		return rc;
	slot = vk_reply_int(rep);
	vk_reply_free(rep);
	rep = NULL;
	rc = vk_command(c, &rep, e, "CLUSTER", "SLOTS");
	if (rc)
		return rc;
	rc = slots_master(rep, slot, self, out);
	vk_reply_free(rep);
	if (rc)
		return err_set(e, rc, "%s: no master serves slot %lld", self->host, slot);
	return 0;
}

static int ask_role(struct chaos_resolver *r, struct vk_conn *c, const struct node_addr *self,
                    struct node_addr *out, struct err *e)
{
	struct vk_role_info role;
	int rc = vk_role(c, &role, e);

	(void)r;
	if (rc)
		return rc;
	if (role.role != VK_ROLE_PRIMARY)
		return err_set(e, -EAGAIN, "%s:%d: not a master", self->host, self->port);
	*out = *self;
	return 0;
}

static int ask_node(struct chaos_resolver *r, size_t i, struct node_addr *out, struct err *e)
{
	struct node_addr self;
	struct vk_conn_config cfg = { 0 };
	struct vk_conn *c;
	int rc;

	chaos_parse_addr(r->nodes[i], self.host, sizeof(self.host), &self.port);
	cfg.host = self.host;
	cfg.port = self.port;
	cfg.connect_timeout_ms = r->connect_ms;
	cfg.command_timeout_ms = r->command_ms;
	cfg.user = r->kind->auth ? r->user : NULL;
	cfg.password = r->kind->auth ? r->password : NULL;
	c = vk_conn_new(&cfg);
	rc = r->kind->ask(r, c, &self, out, e);
	vk_conn_free(c);
	return rc;
}

static int resolve_builtin(struct chaos_resolver *r, struct node_addr *out, struct err *e)
{
	int64_t deadline = chaos_mono_us() + (int64_t)r->deadline_ms * 1000;
	size_t start = r->next;
	int rc = -EAGAIN;

	r->next = (r->next + 1) % r->nnodes;
	for (size_t i = 0; i < r->nnodes; i++) {
		struct err ne;

		if (chaos_mono_us() > deadline)
			return err_set(e, -ETIMEDOUT, "resolver: deadline passed");
		err_clear(&ne);
		rc = ask_node(r, (start + i) % r->nnodes, out, &ne);
		if (rc == 0)
			return 0;
		err_set(e, rc, "%s", ne.msg);
	}
	return rc;
}

int chaos_resolve(struct chaos_resolver *r, char *host, size_t hostlen, int *port, struct err *e)
{
	struct node_addr a;
	char line[CHAOS_RESOLVE_OUT_MAX] = "";
	int rc;

	if (r->kind) {
		rc = resolve_builtin(r, &a, e);
		if (rc)
			return rc;
		if (strlen(a.host) >= hostlen)
			return err_set(e, -EPROTO, "resolver: host name too long");
		snprintf(host, hostlen, "%s", a.host);
		*port = a.port;
		return 0;
	}
	rc = chaos_run_command(r->cmd, r->deadline_ms, line, sizeof(line), e);
	if (rc)
		return rc;
	if (!*line)
		return err_set(e, -EAGAIN, "resolver: empty output");
	if (chaos_parse_addr(line, host, hostlen, port) < 0)
		return err_set(e, -EPROTO, "resolver: output \"%.64s\" is not host:port", line);
	return 0;
}

/* Reads until EOF or the deadline; keeps the first line. */
static int read_first_line(int fd, int64_t deadline, char *out, size_t outlen)
{
	size_t len = 0;
	bool line_done = false;
	char chunk[512];

	out[0] = '\0';
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = (deadline - chaos_mono_us()) / 1000;
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) <= 0)
			continue; /* EINTR or the deadline, checked above */
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		for (ssize_t i = 0; i < n && !line_done; i++) {
			if (chunk[i] == '\n' || len + 1 >= outlen)
				line_done = true;
			else
				out[len++] = chunk[i];
		}
		out[len] = '\0';
	}
}

static int reap(pid_t pid, int64_t deadline, int *status)
{
	while (waitpid(pid, status, WNOHANG) == 0) {
		if (chaos_mono_us() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, status, 0);
			return -ETIMEDOUT;
		}
		usleep(2000);
	}
	return 0;
}

int chaos_run_command(const char *cmd, int deadline_ms, char *out, size_t outlen, struct err *e)
{
	int64_t deadline = chaos_mono_us() + (int64_t)deadline_ms * 1000;
	int fds[2], status = 0, rc;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return err_set(e, chaos_errno(), "resolver: pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		rc = chaos_errno();
		close(fds[0]);
		close(fds[1]);
		return err_set(e, rc, "resolver: fork: %s", strerror(-rc));
	}
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		dup2(fds[1], STDOUT_FILENO);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	close(fds[1]);
	rc = read_first_line(fds[0], deadline, out, outlen);
	close(fds[0]);
	if (rc == 0)
		rc = reap(pid, deadline, &status);
	else
		reap(pid, 0, &status);
	if (rc)
		return err_set(e, rc, "resolver: command timed out after %d ms", deadline_ms);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return err_set(e, -EIO, "resolver: command failed (status %d)", status);
	return 0;
}

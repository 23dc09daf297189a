/*
 * ctl: faults on demand, and container logs.
 *
 * The agent listens on <state>/ctl.sock (SOCK_STREAM, mode 0600). A client sends one JSON
 * object on one line and reads one line back:
 *
 *   {"op":"kill","pod":"ns/web-0","container":"redis"}      {"ok":true}
 *   {"op":"net-loss","pod":"ns/web-0","percent":30}         {"ok":false,"error":"..."}
 *
 * Ops (the CLI `nodeagent ctl OP ARGS...` takes the same arguments in this order):
 *   kill NS/POD CONTAINER   SIGKILL the container's running instance (a restart follows)
 *   freeze NS/POD, thaw NS/POD             cgroup freezer
 *   net-cut NS/POD, net-restore NS/POD     the pod's host veth down / up
 *   net-loss NS/POD PCT, net-delay NS/POD MS
 *   node-lose NODE, node-restore NODE      stop / resume the node's heartbeats, freeze /
 *                                          thaw its pods
 *   pods                                   what runs here: [{pod, uid, node, ip, phase}]
 * The agent serves one connection at a time on its main thread, with 1 s socket timeouts,
 * so a fault happens between two steps of the pods, never in the middle of one.
 *
 * `nodeagent logs [--previous] NS/POD [CONTAINER]` needs no agent: it finds the pod's
 * directory through the pod.json the agent writes into every sandbox and prints
 * logs/<container>.log (or .previous.log).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/settings.h"

#define CTL_LINE_MAX   (64 * 1024)
#define CTL_TIMEOUT_MS 1000
#define CTL_SOCK       "ctl.sock"

/* --- the operations ------------------------------------------------------------------------- */

struct ctl_arg {
	const char *name;
	bool is_int;
	int64_t min, max;
};

static const struct ctl_arg arg_pod = { "pod", false, 0, 0 };
static const struct ctl_arg arg_ctr = { "container", false, 0, 0 };
static const struct ctl_arg arg_node = { "node", false, 0, 0 };
static const struct ctl_arg arg_pct = { "percent", true, 0, 100 };
static const struct ctl_arg arg_ms = { "ms", true, 0, 600000 };

struct ctl_op {
	const char *name;
	const struct ctl_arg *args[2];
	int (*run)(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
	           struct err *e);
	int param; /* for shared handlers: frozen, cut, lost */
};

static struct rt_pod *req_pod(struct agent *ag, json_t *req, struct err *e)
{
	const char *key = json_string_value(json_object_get(req, "pod"));
	struct na_pod *p = key ? na_pod_find(ag, key) : NULL;

	if (!p || !p->rt) {
		err_set(e, -ENOENT, "pod %.200s is not running on this agent", key ? key : "");
		return NULL;
	}
	return p->rt;
}

static int req_int(json_t *req, const char *name)
{
	return (int)json_integer_value(json_object_get(req, name));
}

static int op_kill(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                   struct err *e)
{
	struct rt_pod *pod = req_pod(ag, req, e);

	(void)op;
	(void)reply;
	return pod ? rt_fault_kill_container(
	                     pod, json_string_value(json_object_get(req, "container")), e)
	           : -ENOENT;
}

static int op_freeze(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                     struct err *e)
{
	struct rt_pod *pod = req_pod(ag, req, e);

	(void)reply;
	return pod ? rt_fault_freeze(pod, op->param, e) : -ENOENT;
}

static int op_net_cut(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                      struct err *e)
{
	struct rt_pod *pod = req_pod(ag, req, e);

	(void)reply;
	return pod ? rt_fault_net_cut(pod, op->param, e) : -ENOENT;
}

static int op_net_loss(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                       struct err *e)
{
	struct rt_pod *pod = req_pod(ag, req, e);

	(void)op;
	(void)reply;
	return pod ? rt_fault_net_loss(pod, req_int(req, "percent"), e) : -ENOENT;
}

static int op_net_delay(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                        struct err *e)
{
	struct rt_pod *pod = req_pod(ag, req, e);

	(void)op;
	(void)reply;
	return pod ? rt_fault_net_delay(pod, req_int(req, "ms"), e) : -ENOENT;
}

static int op_node(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                   struct err *e)
{
	const char *name = json_string_value(json_object_get(req, "node"));
	struct na_node *n = name ? na_node_find(ag, name) : NULL;

	(void)reply;
	if (!n)
		return err_set(e, -ENOENT, "node %.200s is not served by this agent",
		               name ? name : "");
	return na_node_set_lost(ag, n, op->param, e);
}

static int op_pods(struct agent *ag, const struct ctl_op *op, json_t *req, json_t *reply,
                   struct err *e)
{
	json_t *arr = json_array();
	struct strmap_entry *en;

	(void)op;
	(void)req;
	(void)e;
	for (size_t it = 0; (en = strmap_next(&ag->pods, &it));) {
		struct na_pod *p = en->value;
		struct rt_pod_status st;

		if (p->rt)
			rt_pod_snapshot(p->rt, &st);
		json_array_append_new(arr, json_pack("{s:s, s:s, s:s, s:s, s:s}", "pod", p->key,
		                                     "uid", p->uid, "node", p->node->name, "ip",
		                                     p->rt ? rt_pod_ip(p->rt) : "", "phase",
		                                     p->rt ? rt_phase_name(st.phase) : "Pending"));
		if (p->rt)
			rt_pod_status_release(&st);
	}
	json_object_set_new(reply, "pods", arr);
	return 0;
}

static const struct ctl_op ctl_ops[] = {
	{ "kill", { &arg_pod, &arg_ctr }, op_kill, 0 },
	{ "freeze", { &arg_pod, NULL }, op_freeze, 1 },
	{ "thaw", { &arg_pod, NULL }, op_freeze, 0 },
	{ "net-cut", { &arg_pod, NULL }, op_net_cut, 1 },
	{ "net-restore", { &arg_pod, NULL }, op_net_cut, 0 },
	{ "net-loss", { &arg_pod, &arg_pct }, op_net_loss, 0 },
	{ "net-delay", { &arg_pod, &arg_ms }, op_net_delay, 0 },
	{ "node-lose", { &arg_node, NULL }, op_node, 1 },
	{ "node-restore", { &arg_node, NULL }, op_node, 0 },
	{ "pods", { NULL, NULL }, op_pods, 0 },
};
#define N_OPS (sizeof(ctl_ops) / sizeof(ctl_ops[0]))

static const struct ctl_op *op_named(const char *name)
{
	for (size_t i = 0; name && i < N_OPS; i++)
		if (strcmp(ctl_ops[i].name, name) == 0)
			return &ctl_ops[i];
	return NULL;
}

/* Checks req's arguments against op's: -EINVAL naming the first bad one. */
static int args_check(const struct ctl_op *op, json_t *req, struct err *e)
{
	for (int i = 0; i < 2 && op->args[i]; i++) {
		const struct ctl_arg *a = op->args[i];
		json_t *v = json_object_get(req, a->name);

		if (a->is_int ? !json_is_integer(v) || json_integer_value(v) < a->min ||
		                        json_integer_value(v) > a->max
		              : !json_is_string(v) || !json_string_length(v))
			return err_set(e, -EINVAL, "%s %s: missing or out of range", op->name,
			               a->name);
	}
	return 0;
}

static void usage_line(struct buf *b)
{
	buf_append_str(b, "usage: nodeagent ctl [--state-dir DIR] OP ARGS; ops:");
	for (size_t i = 0; i < N_OPS; i++) {
		buf_printf(b, " | %s", ctl_ops[i].name);
		for (int k = 0; k < 2 && ctl_ops[i].args[k]; k++)
			buf_printf(b, " %s", ctl_ops[i].args[k]->name);
	}
}

int na_ctl_request(int argc, char **argv, json_t **out, struct err *e)
{
	const struct ctl_op *op = argc > 0 ? op_named(argv[0]) : NULL;
	struct buf u = BUF_INIT(1024);
	json_t *req;
	int n = 0, rc;

	while (op && n < 2 && op->args[n])
		n++;
	if (!op || argc != n + 1) {
		usage_line(&u);
		rc = err_set(e, -EINVAL, "%s", buf_cstr(&u));
		buf_release(&u);
		return rc;
	}
	req = json_pack("{s:s}", "op", op->name);
	for (int i = 0; i < n; i++) {
		int64_t v;

		if (!op->args[i]->is_int)
			json_object_set_new(req, op->args[i]->name, json_string(argv[i + 1]));
		else if (parse_int64(argv[i + 1], op->args[i]->min, op->args[i]->max, &v, NULL) ==
		         0)
			json_object_set_new(req, op->args[i]->name, json_integer(v));
	}
	if ((rc = args_check(op, req, e))) {
		json_decref(req);
		return rc;
	}
	*out = req;
	return 0;
}

/* --- the server -------------------------------------------------------------------------------- */

static char *sock_path(const char *state_dir)
{
	return xasprintf("%s/%s", state_dir, CTL_SOCK);
}

int na_ctl_listen(struct agent *ag, struct err *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char *path = sock_path(ag->state_dir);
	int fd = -1, rc = 0;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		rc = err_set(e, -ENAMETOOLONG, "%s: too long for a Unix socket", path);
		goto out;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 8) < 0) {
		rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
out:
	ag->ctl_fd = fd;
	free(path);
	return rc;
}

void na_ctl_close(struct agent *ag)
{
	char *path = sock_path(ag->state_dir);

	if (ag->ctl_fd >= 0) {
		close(ag->ctl_fd);
		unlink(path);
	}
	ag->ctl_fd = -1;
	free(path);
}

static void set_timeouts(int fd)
{
	struct timeval tv = { CTL_TIMEOUT_MS / 1000, (CTL_TIMEOUT_MS % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Reads up to the first newline (or EOF): the line without it, NULL on error/overflow. */
static char *read_line(int fd)
{
	struct buf b = BUF_INIT(CTL_LINE_MAX);
	char chunk[4096];
	ssize_t n;

	while (!strchr(buf_cstr(&b), '\n') && (n = read(fd, chunk, sizeof(chunk))) > 0)
		if (buf_append(&b, chunk, (size_t)n) < 0) {
			buf_release(&b);
			return NULL;
		}
	if (!b.len) {
		buf_release(&b);
		return NULL;
	}
	b.data[strcspn(b.data, "\n")] = '\0';
	return buf_detach(&b, NULL);
}

static json_t *handle(struct agent *ag, const char *line)
{
	json_t *req = NULL, *reply = json_object();
	const struct ctl_op *op = NULL;
	struct err e;
	int rc;

	err_clear(&e);
	rc = jsonx_loadb(line, strlen(line), CTL_LINE_MAX, &req, &e);
	if (!rc)
		op = op_named(json_string_value(json_object_get(req, "op")));
	if (!rc && !op) {
		err_set(&e, -EINVAL, "unknown op");
		rc = -EINVAL;
	}
	if (op && !rc && !(rc = args_check(op, req, &e)))
		rc = op->run(ag, op, req, reply, &e);
	json_object_set_new(reply, "ok", json_boolean(rc == 0));
	if (rc)
		json_object_set_new(reply, "error", json_string(e.msg[0] ? e.msg : strerror(-rc)));
	log_info(NA_COMPONENT, "ctl", "op", op ? op->name : "?", "result", rc ? e.msg : "ok", NULL);
	json_decref(req);
	return reply;
}

void na_ctl_serve(struct agent *ag)
{
	int fd;

	while (ag->ctl_fd >= 0 && (fd = accept4(ag->ctl_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		char *line, *text;
		json_t *reply;

		set_timeouts(fd);
		if ((line = read_line(fd))) {
			reply = handle(ag, line);
			text = json_dumps(reply, JSON_COMPACT);
			if (write(fd, text, strlen(text)) < 0 || write(fd, "\n", 1) < 0)
				log_warn(NA_COMPONENT, "ctl reply not sent", NULL);
			free(text);
			json_decref(reply);
			free(line);
		}
		close(fd);
	}
}

/* --- the command-line clients ----------------------------------------------------------------- */

#define CLI_TIMEOUT_S 30 /* a node-lose freezes every pod of the node, each up to 5 s */

struct cli_settings {
	char *state_dir;
	bool previous;
};

static const struct settings_desc cli_table[] = {
	{ "state-dir", SETTINGS_STRING, NA_DEFAULT_STATE_DIR, 0, 0, NULL, false, false,
	  offsetof(struct cli_settings, state_dir), "The agent's state directory." },
	{ "previous", SETTINGS_BOOL, "false", 0, 0, NULL, false, false,
	  offsetof(struct cli_settings, previous),
	  "logs: the log of the container's previous instance." },
};
#define N_CLI (sizeof(cli_table) / sizeof(cli_table[0]))

/* Parses flags; *next the first positional. 0, or the exit code to return. */
static int cli_load(int argc, char **argv, struct cli_settings *s, int *next)
{
	struct buf errs = BUF_INIT(4096);
	int rc = settings_load(cli_table, N_CLI, "NODEAGENT_", NULL, argc, argv, next, s, &errs);

	if (rc == SETTINGS_HELP)
		settings_help(cli_table, N_CLI, "NODEAGENT_", stdout);
	else if (rc < 0)
		fprintf(stderr, "%s", buf_cstr(&errs));
	buf_release(&errs);
	return rc == SETTINGS_HELP ? 1 : rc < 0 ? 2 : 0;
}

static int ctl_connect(const char *state_dir, struct err *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { CLI_TIMEOUT_S, 0 };
	char *path = sock_path(state_dir);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err_set(e, -errno, "%s: %s (is the agent running?)", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(path);
	return fd;
}

int na_ctl_main(int argc, char **argv)
{
	struct cli_settings s = { NULL, false };
	json_t *req = NULL, *reply = NULL;
	char *text = NULL, *line = NULL;
	struct err e;
	int next = 0, fd = -1, rc;

	err_clear(&e);
	if ((rc = cli_load(argc, argv, &s, &next)))
		return rc == 1 ? 0 : rc;
	if (na_ctl_request(argc - next, argv + next, &req, &e) < 0) {
		fprintf(stderr, "%s\n", e.msg);
		settings_release(cli_table, N_CLI, &s);
		return 2;
	}
	text = json_dumps(req, JSON_COMPACT);
	rc = 1;
	if ((fd = ctl_connect(s.state_dir, &e)) < 0 || write(fd, text, strlen(text)) < 0 ||
	    write(fd, "\n", 1) < 0 || !(line = read_line(fd)))
		fprintf(stderr, "nodeagent ctl: %s\n",
		        e.msg[0] ? e.msg : "no answer from the agent");
	else if (jsonx_loadb(line, strlen(line), CTL_LINE_MAX, &reply, &e) == 0)
		rc = json_is_true(json_object_get(reply, "ok")) ? 0 : 1;
	if (line)
		printf("%s\n", line);
	if (fd >= 0)
		close(fd);
	free(line);
	free(text);
	json_decref(req);
	json_decref(reply);
	settings_release(cli_table, N_CLI, &s);
	return rc;
}

char *na_find_pod_dir(const char *state_dir, const char *key, json_t **meta_out)
{
	char *pods = xasprintf("%s/pods", state_dir), *best = NULL;
	DIR *d = opendir(pods);
	struct dirent *de;
	time_t best_t = 0;

	while (d && (de = readdir(d))) {
		char *dir = xasprintf("%s/%s", pods, de->d_name),
		     *meta = xasprintf("%s/pod.json", dir);
		json_t *m = de->d_name[0] == '.' ? NULL : json_load_file(meta, 0, NULL);
		char *k = m ? xasprintf("%s/%s", json_string_value(json_object_get(m, "namespace")),
		                        json_string_value(json_object_get(m, "name")))
		            : NULL;
		struct stat st;

		if (k && strcmp(k, key) == 0 && stat(meta, &st) == 0 &&
		    (!best || st.st_mtime >= best_t)) {
			free(best);
			best = xstrdup(dir);
			best_t = st.st_mtime;
			if (meta_out) {
				json_decref(*meta_out);
				*meta_out = json_incref(m);
			}
		}
		free(k);
		json_decref(m);
		free(meta);
		free(dir);
	}
	if (d)
		closedir(d);
	free(pods);
	return best;
}

/* The only container of the pod (logs/<name>.log), or NULL with the names in e. */
static char *only_container(const char *dir, struct err *e)
{
	char *logs = xasprintf("%s/logs", dir), *found = NULL;
	struct buf names = BUF_INIT(4096);
	DIR *d = opendir(logs);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".log") != 0 ||
		    (len > 13 && strcmp(de->d_name + len - 13, ".previous.log") == 0))
			continue;
		buf_printf(&names, " %.*s", (int)(len - 4), de->d_name);
		if (!n++)
			found = xstrndup(de->d_name, len - 4);
	}
	if (d)
		closedir(d);
	if (n != 1) {
		err_set(e, -EINVAL, "name a container:%s",
		        n ? buf_cstr(&names) : " (none has logged)");
		free(found);
		found = NULL;
	}
	buf_release(&names);
	free(logs);
	return found;
}

static int cat_file(const char *path)
{
	char chunk[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		if (fwrite(chunk, 1, (size_t)n, stdout) != (size_t)n)
			break;
	close(fd);
	return n < 0 ? -EIO : 0;
}

int na_logs_main(int argc, char **argv)
{
	struct cli_settings s = { NULL, false };
	char *dir = NULL, *ctr = NULL, *path = NULL;
	struct err e;
	int next = 0, rc;

	err_clear(&e);
	if ((rc = cli_load(argc, argv, &s, &next)))
		return rc == 1 ? 0 : rc;
	if (argc - next < 1 || argc - next > 2) {
		fprintf(stderr, "usage: nodeagent logs [--state-dir DIR] [--previous] NS/POD "
		                "[CONTAINER]\n");
		settings_release(cli_table, N_CLI, &s);
		return 2;
	}
	rc = 1;
	if (!(dir = na_find_pod_dir(s.state_dir, argv[next], NULL)))
		fprintf(stderr, "nodeagent logs: no pod %s under %s\n", argv[next], s.state_dir);
	else if (!(ctr = argc - next == 2 ? xstrdup(argv[next + 1]) : only_container(dir, &e)))
		fprintf(stderr, "nodeagent logs: %s\n", e.msg);
	else {
		path = xasprintf("%s/logs/%s%s", dir, ctr, s.previous ? ".previous.log" : ".log");
		if ((rc = cat_file(path)) < 0)
			fprintf(stderr, "nodeagent logs: %s: %s\n", path, strerror(-rc));
	}
	rc = rc ? 1 : 0;
	free(path);
	free(ctr);
	free(dir);
	settings_release(cli_table, N_CLI, &s);
	return rc;
}

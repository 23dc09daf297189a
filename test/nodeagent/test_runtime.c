/*
 * Tests for the node agent's runtime half. Two parts:
 *   - pure tables: the image map parser, image name normalization, $(VAR) expansion,
 *     subPath checks, spec validation, argv rules;
 *   - real pods on this machine (root): network namespaces on ro-br0 (created for the run
 *     if missing, removed only if we created it), PID/mount namespaces, cgroup freezer,
 *     probes, graceful kill, faults. Addresses come from a /24 in 10.240.128-227.x picked
 *     by pid, apart from the agent's own range and, most likely, from a concurrent run.
 * Every test process removes its pods and its state directory in the teardown, or, when
 * an assertion ends it early, through a janitor child that outlives it.
 * Printed figures: "figure: ..." lines.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/err.h"
#include "lib/log.h"
#include "test/nodeagent/imagemap.h"
#include "test/nodeagent/ociimage.h"
#include "test/nodeagent/runtime.h"
#include "test/nodeagent/runtime_int.h"
#include "test/unit/unit.h"

#define BRIDGE      "ro-br0"
#define HOST_IP     "10.240.0.1"
#define IMAGES_CONF "test/nodeagent/images.conf"
#define MAX_PODS    8
#define ARGV_END    ((const char *)NULL) /* a typed NULL ends argv_new() */

/* ======================================================================================
 * Pure tables
 * ====================================================================================== */

static const struct imagemap_var test_vars[] = { { "OPERATOR_BIN", "/opt/op/redis-operator" },
	                                         { "X", "x" } };

static const struct {
	const char *text;
	int rc;
	const char *msg; /* substring of e.msg, or NULL */
	size_t len;      /* 0: strlen(text) */
} map_cases[] = {
	{ "redis:* entrypoint=redis-server\n", 0, NULL },
	{ "# comment\n\n  \t\nredis:* entrypoint=a,b cmd=c env=A=1 env=B= workdir=/w\n", 0, NULL },
	{ "op:* bind=${OPERATOR_BIN}:/usr/local/bin/op\n", 0, NULL },
	{ "op:* bind=rel/bin:/x:rw\n", 0, NULL },
	{ "x:* cmd=${X}${X}\n", 0, NULL },
	{ "", -EINVAL, "no rules" },
	{ "# only a comment\n", -EINVAL, "no rules" },
	{ "redis:*\n", -EINVAL, "t:1: rule has no settings" },
	{ "a:* entrypoint=x\nb:* nokey=1\n", -EINVAL, "t:2: unknown key" },
	{ "a:* entrypoint\n", -EINVAL, "setting wants key=value" },
	{ "a:* =x\n", -EINVAL, "setting wants key=value" },
	{ "a:* entrypoint=\n", -EINVAL, "empty value" },
	{ "a:* entrypoint=a,,b\n", -EINVAL, "empty word" },
	{ "a:* entrypoint=a,\n", -EINVAL, "empty word" },
	{ "a:* entrypoint=a entrypoint=b\n", -EINVAL, "repeated key" },
	{ "a:* workdir=/a workdir=/b\n", -EINVAL, "repeated key" },
	{ "a:* workdir=rel\n", -EINVAL, "workdir must be an absolute path" },
	{ "a:* bind=/x\n", -EINVAL, "bind wants HOST:CONTAINER" },
	{ "a:* bind=:/x\n", -EINVAL, "bind wants HOST:CONTAINER" },
	{ "a:* bind=/x:rel\n", -EINVAL, "absolute path" },
	{ "a:* bind=/x:/y:wx\n", -EINVAL, "bind mode must be rw or ro" },
	{ "a:* env=NOEQ\n", -EINVAL, "env wants NAME=VALUE" },
	{ "a:* env==v\n", -EINVAL, "env wants NAME=VALUE" },
	{ "a:* cmd=${NOPE}\n", -EINVAL, "unknown variable" },
	{ "a:* cmd=${X\n", -EINVAL, "unterminated ${" },
	{ "a:* cmd=x\0y\n", -EINVAL, "NUL byte", sizeof("a:* cmd=x\0y\n") - 1 },
};

START_TEST(imagemap_parse_table)
{
	struct imagemap *m = NULL;
	struct err e;
	size_t len = strlen(map_cases[_i].text);
	int rc;

	if (map_cases[_i].len)
		len = map_cases[_i].len;
	err_clear(&e);
	rc = imagemap_parse(map_cases[_i].text, len, "t", "/base", test_vars, ARRAY_LEN(test_vars),
	                    &m, &e);
	ck_assert_msg(rc == map_cases[_i].rc, "case %d: rc %d want %d (%s)", _i, rc,
	              map_cases[_i].rc, e.msg);
	if (map_cases[_i].msg)
		ck_assert_msg(strstr(e.msg, map_cases[_i].msg), "case %d: msg \"%s\" lacks \"%s\"",
		              _i, e.msg, map_cases[_i].msg);
	if (rc == 0)
		ck_assert_ptr_nonnull(m);
	imagemap_free(m);
}
END_TEST

START_TEST(imagemap_parse_details)
{
	static const char text[] = "op:* bind=${OPERATOR_BIN}:/usr/local/bin/op bind=rel/d:/d:rw "
	                           "entrypoint=/usr/local/bin/op,run cmd=a env=A=1=2 workdir=/w\n";
	struct imagemap *m = NULL;
	const struct imagemap_entry *en;
	struct err e;
	char big[IMAGEMAP_MAX_BYTES + 2];

	err_clear(&e);
	ck_assert_int_eq(imagemap_parse(text, strlen(text), "t", "/base", test_vars, 2, &m, &e), 0);
	en = imagemap_find(m, "op:1");
	ck_assert_ptr_nonnull(en);
	ck_assert_str_eq(en->binds[0].host_path, "/opt/op/redis-operator");
	ck_assert_str_eq(en->binds[0].path, "/usr/local/bin/op");
	ck_assert(en->binds[0].read_only);
	ck_assert_str_eq(en->binds[1].host_path, "/base/rel/d");
	ck_assert(!en->binds[1].read_only);
	ck_assert_str_eq(en->entrypoint[1], "run");
	ck_assert_ptr_null(en->entrypoint[2]);
	ck_assert_str_eq(en->env[0], "A=1=2");
	ck_assert_str_eq(en->workdir, "/w");
	ck_assert_int_eq(en->line, 1);
	imagemap_free(m);
	memset(big, '#', sizeof(big));
	err_clear(&e);
	ck_assert_int_eq(imagemap_parse(big, sizeof(big), "t", NULL, NULL, 0, &m, &e), -EFBIG);
	err_clear(&e);
	ck_assert_int_eq(imagemap_load("/nonexistent/images.conf", NULL, NULL, 0, &m, &e), -ENOENT);
	memset(big, 'a', IMAGEMAP_MAX_LINE + 1);
	err_clear(&e);
	ck_assert_int_eq(imagemap_parse(big, IMAGEMAP_MAX_LINE + 1, "t", NULL, NULL, 0, &m, &e),
	                 -EINVAL);
	ck_assert_msg(strstr(e.msg, "line too long"), "%s", e.msg);
}
END_TEST

static const struct {
	const char *in, *want;
} norm_cases[] = {
	{ "redis", "redis:latest" },
	{ "redis:7.2", "redis:7.2" },
	{ "docker.io/library/redis:7", "redis:7" },
	{ "docker.io/valkey/valkey:8", "valkey/valkey:8" },
	{ "docker.io/valkey/valkey", "valkey/valkey:latest" },
	{ "localhost:5000/op", "localhost:5000/op:latest" },
	{ "localhost:5000/op:dev", "localhost:5000/op:dev" },
	{ "redis@sha256:abc", "redis@sha256:abc" },
	{ "ghcr.io/x/redis-operator:dev", "ghcr.io/x/redis-operator:dev" },
};

START_TEST(imagemap_normalize_table)
{
	char out[128];

	ck_assert(imagemap_normalize(norm_cases[_i].in, out, sizeof(out)));
	ck_assert_str_eq(out, norm_cases[_i].want);
	ck_assert(!imagemap_normalize(norm_cases[_i].in, out, 4));
}
END_TEST

static const struct {
	const char *image, *entry0; /* NULL: not found */
} find_cases[] = {
	{ "redis:7", "redis-server" },
	{ "redis", "redis-server" },
	{ "docker.io/library/redis:7.2.4", "redis-server" },
	{ "redis/redis-stack-server:7", "redis-server" },
	{ "valkey/valkey:8.0", "valkey-server" },
	{ "docker.io/valkey/valkey:8.0", "valkey-server" },
	{ "redis-operator:dev", "/usr/local/bin/redis-operator" },
	{ "ghcr.io/example/redis-operator:0.1.0", "/usr/local/bin/redis-operator" },
	{ "busybox:1.36", NULL },
	{ "nosuch:1", NULL },
	{ "redisx:1", NULL },
};

/* The shipped images.conf: the rules the agent will run with. */
START_TEST(imagemap_default_file)
{
	static const struct imagemap_var vars[] = { { "OPERATOR_BIN", "/op" } };
	const struct imagemap_entry *en;
	struct imagemap *m = NULL;
	struct err e;

	err_clear(&e);
	ck_assert_msg(imagemap_load(IMAGES_CONF, NULL, vars, 1, &m, &e) == 0, "%s", e.msg);
	en = imagemap_find(m, find_cases[_i].image);
	if (!strncmp(find_cases[_i].image, "busybox", 7)) {
		ck_assert_ptr_nonnull(en);
		ck_assert_str_eq(en->cmd[0], "sh");
	} else if (!find_cases[_i].entry0) {
		ck_assert_ptr_null(en);
	} else {
		ck_assert_msg(en && en->entrypoint, "%s: no entrypoint", find_cases[_i].image);
		ck_assert_str_eq(en->entrypoint[0], find_cases[_i].entry0);
	}
	if (en && en->n_binds)
		ck_assert_str_eq(en->binds[0].host_path, "/op");
	imagemap_free(m);
}
END_TEST

static const struct {
	const char *in, *want;
} expand_cases[] = {
	{ "plain", "plain" },
	{ "$(A)", "1" },
	{ "x$(A)y$(B)z", "x1yvalz" },
	{ "$(MISSING)", "$(MISSING)" },
	{ "$$(A)", "$(A)" },
	{ "$$", "$" },
	{ "a$", "a$" },
	{ "$x", "$x" },
	{ "$(A", "$(A" },
	{ "$()", "$()" },
	{ "$(AB)", "ab" },
	{ "", "" },
};

START_TEST(expand_table)
{
	char a[] = "A=1", b[] = "B=val", ab[] = "AB=ab";
	char *const env[] = { a, b, ab, NULL };
	char *got = rt_expand(expand_cases[_i].in, env);

	ck_assert_str_eq(got, expand_cases[_i].want);
	free(got);
}
END_TEST

static const struct {
	const char *p;
	bool ok;
} subpath_cases[] = {
	{ "a", true },       { "a/b", true },    { "a/b/", true },  { ".hidden", true },
	{ "a..b", true },    { "", false },      { "/a", false },   { "..", false },
	{ "a/../b", false }, { "a/./b", false }, { "a//b", false }, { ".", false },
	{ "a/..", false },
};

START_TEST(subpath_table)
{
	ck_assert_msg(rt_sub_path_is_valid(subpath_cases[_i].p) == subpath_cases[_i].ok, "\"%s\"",
	              subpath_cases[_i].p);
}
END_TEST

/* --- spec helpers (also for the pod tests) -------------------------------------------- */

static char **argv_new(const char *first, ...)
{
	va_list ap;
	char **v = NULL;
	size_t n = 0;

	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *)) {
		v = xreallocarray(v, n + 2, sizeof(*v));
		v[n++] = xstrdup(s);
	}
	va_end(ap);
	if (!v)
		v = xcalloc(1, sizeof(*v));
	v[n] = NULL;
	return v;
}

static void ctr_set(struct rt_container *c, const char *name, const char *image, const char *script)
{
	c->name = xstrdup(name);
	c->image = xstrdup(image);
	if (script)
		c->command = argv_new("sh", "-c", script, ARGV_END);
	c->run_as_user = c->run_as_group = -1;
}

/* A pod with n containers named c0, c1, ... running busybox:1 "sleep 30". */
static void spec_init(struct rt_pod_spec *s, const char *tag, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->uid = xasprintf("h7t-%d-%s", (int)getpid(), tag);
	s->ns = xstrdup("default");
	s->name = xstrdup(tag);
	s->n_containers = n;
	s->containers = xcalloc(n, sizeof(*s->containers));
	for (size_t i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "c%zu", i);
		ctr_set(&s->containers[i], name, "busybox:1", "sleep 30");
	}
	s->fs_group = -1;
	s->grace_period_s = 1;
	s->restart_policy = RT_RESTART_ALWAYS;
}

static void add_volume(struct rt_pod_spec *s, const char *name, const char *host_path)
{
	s->volumes = xreallocarray(s->volumes, s->n_volumes + 1, sizeof(*s->volumes));
	s->volumes[s->n_volumes].name = xstrdup(name);
	s->volumes[s->n_volumes].kind = RT_VOL_DIR;
	s->volumes[s->n_volumes].host_path = xstrdup(host_path);
	s->n_volumes++;
}

static void add_mount(struct rt_container *c, const char *vol, const char *path, bool ro,
                      const char *sub)
{
	c->mounts = xreallocarray(c->mounts, c->n_mounts + 1, sizeof(*c->mounts));
	c->mounts[c->n_mounts].volume = xstrdup(vol);
	c->mounts[c->n_mounts].mount_path = xstrdup(path);
	c->mounts[c->n_mounts].read_only = ro;
	c->mounts[c->n_mounts].sub_path = sub ? xstrdup(sub) : NULL;
	c->n_mounts++;
}

static void replace(char **field, const char *value)
{
	free(*field);
	*field = value ? xstrdup(value) : NULL;
}

/* Each case breaks one thing in a good spec. */
static void bad_uid(struct rt_pod_spec *s)
{
	replace(&s->uid, "../x");
}
static void bad_uid_empty(struct rt_pod_spec *s)
{
	replace(&s->uid, "");
}
static void bad_name(struct rt_pod_spec *s)
{
	replace(&s->name, NULL);
}
static void bad_no_ctr(struct rt_pod_spec *s)
{
	s->n_containers = 0;
}
static void bad_ctr_name(struct rt_pod_spec *s)
{
	replace(&s->containers[0].name, "Main_1");
}
static void bad_dup_name(struct rt_pod_spec *s)
{
	replace(&s->containers[1].name, "c0");
}
static void bad_image(struct rt_pod_spec *s)
{
	replace(&s->containers[0].image, "");
}
static void bad_workdir(struct rt_pod_spec *s)
{
	replace(&s->containers[0].working_dir, "w");
}
static void bad_policy(struct rt_pod_spec *s)
{
	s->restart_policy = (enum rt_restart_policy)7;
}
static void bad_grace(struct rt_pod_spec *s)
{
	s->grace_period_s = -1;
}
static void bad_vol_path(struct rt_pod_spec *s)
{
	replace(&s->volumes[0].host_path, "rel");
}
static void bad_vol_dup(struct rt_pod_spec *s)
{
	add_volume(s, "v", "/tmp");
}
static void bad_mount_vol(struct rt_pod_spec *s)
{
	replace(&s->containers[0].mounts[0].volume, "nope");
}
static void bad_mount_path(struct rt_pod_spec *s)
{
	replace(&s->containers[0].mounts[0].mount_path, "d");
}
static void bad_subpath(struct rt_pod_spec *s)
{
	replace(&s->containers[0].mounts[0].sub_path, "../x");
}
static void bad_env(struct rt_pod_spec *s)
{
	s->containers[0].env = xcalloc(1, sizeof(struct rt_env));
	s->containers[0].n_env = 1;
	s->containers[0].env[0].name = xstrdup("A=B");
}
static void bad_probe_port(struct rt_pod_spec *s)
{
	s->containers[0].readiness.kind = RT_PROBE_TCP;
	s->containers[0].readiness.port = 70000;
}
static void bad_probe_exec(struct rt_pod_spec *s)
{
	s->containers[1].liveness.kind = RT_PROBE_EXEC;
}
static void good(struct rt_pod_spec *s)
{
	(void)s;
}

static const struct {
	void (*breaker)(struct rt_pod_spec *);
	const char *msg; /* prefix of e.msg; NULL: valid */
} validate_cases[] = {
	{ good, NULL },
	{ bad_uid, "metadata.uid" },
	{ bad_uid_empty, "metadata.uid" },
	{ bad_name, "metadata: name" },
	{ bad_no_ctr, "spec.containers: at least one" },
	{ bad_ctr_name, "spec.containers[0].name: must be a DNS label" },
	{ bad_dup_name, "spec.containers[0].name: c0 is used twice" },
	{ bad_image, "spec.containers[0].image" },
	{ bad_workdir, "spec.containers[0].workingDir" },
	{ bad_policy, "spec: bad restartPolicy" },
	{ bad_grace, "spec: bad restartPolicy or grace" },
	{ bad_vol_path, "spec.volumes[0]: wants an absolute" },
	{ bad_vol_dup, "spec.volumes[1].name: empty or used twice" },
	{ bad_mount_vol, "spec.containers[0].volumeMounts[0].name: no volume nope" },
	{ bad_mount_path, "spec.containers[0].volumeMounts[0].mountPath" },
	{ bad_subpath, "spec.containers[0].volumeMounts[0].subPath" },
	{ bad_env, "spec.containers[0].env[0].name" },
	{ bad_probe_port, "spec.containers[0].readinessProbe.port: 70000" },
	{ bad_probe_exec, "spec.containers[1].livenessProbe.exec.command" },
};

START_TEST(validate_table)
{
	struct rt_pod_spec s;
	struct err e;
	int rc;

	spec_init(&s, "v", 2);
	add_volume(&s, "v", "/tmp");
	add_mount(&s.containers[0], "v", "/data", false, "sub");
	validate_cases[_i].breaker(&s);
	err_clear(&e);
	rc = rt_spec_validate(&s, &e);
	if (!validate_cases[_i].msg) {
		ck_assert_msg(rc == 0, "%s", e.msg);
	} else {
		ck_assert_int_eq(rc, -EINVAL);
		ck_assert_msg(
		        !strncmp(e.msg, validate_cases[_i].msg, strlen(validate_cases[_i].msg)),
		        "msg \"%s\" want \"%s...\"", e.msg, validate_cases[_i].msg);
	}
	if (bad_no_ctr == validate_cases[_i].breaker)
		s.n_containers = 2;
	rt_pod_spec_release(&s);
}
END_TEST

static const struct {
	const char *command, *args, *entry, *cmd; /* words separated by ' ', NULL = unset */
	const char *want;                         /* joined by ' '; NULL = -EINVAL */
} argv_cases[] = {
	{ NULL, NULL, "ep", "c1 c2", "ep c1 c2" },
	{ "x y", NULL, "ep", "c1", "x y" },
	{ NULL, "a1 a2", "ep", "c1", "ep a1 a2" },
	{ "x", "a1", "ep", "c1", "x a1" },
	{ "x $(V)", "$(V) $$(V)", "ep", "c1", "x v v $(V)" },
	{ NULL, NULL, NULL, "c1", "c1" },
	{ NULL, "a1", NULL, "c1", "a1" },
	{ NULL, NULL, NULL, NULL, NULL },
	{ NULL, NULL, "ep", NULL, "ep" },
};

static char **words(const char *s)
{
	char **v = NULL, *copy, *save = NULL;
	size_t n = 0;

	if (!s)
		return NULL;
	copy = xstrdup(s);
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		v = xreallocarray(v, n + 2, sizeof(*v));
		v[n++] = xstrdup(w);
		v[n] = NULL;
	}
	free(copy);
	return v;
}

static char *joined(char **v)
{
	size_t len = 1;
	char *out;

	for (char **p = v; *p; p++)
		len += strlen(*p) + 1;
	out = xcalloc(len, 1);
	for (char **p = v; *p; p++) {
		if (p != v)
			strncat(out, " ", len - strlen(out) - 1);
		strncat(out, *p, len - strlen(out) - 1);
	}
	return out;
}

START_TEST(argv_table)
{
	struct rt_container spec;
	struct imagemap_entry img;
	struct rt_ctr c;
	char v[] = "V=v";
	char *const env[] = { v, NULL };
	char **argv = NULL;
	struct err e;
	int rc;

	memset(&spec, 0, sizeof(spec));
	memset(&img, 0, sizeof(img));
	memset(&c, 0, sizeof(c));
	spec.image = xstrdup("img:1");
	spec.command = words(argv_cases[_i].command);
	spec.args = words(argv_cases[_i].args);
	img.entrypoint = words(argv_cases[_i].entry);
	img.cmd = words(argv_cases[_i].cmd);
	c.spec = &spec;
	c.image = &img;
	err_clear(&e);
	rc = rt_build_argv(&c, env, &argv, &e);
	if (!argv_cases[_i].want) {
		ck_assert_int_eq(rc, -EINVAL);
		ck_assert_msg(strstr(e.msg, "no command specified"), "%s", e.msg);
	} else {
		char *j;

		ck_assert_int_eq(rc, 0);
		j = joined(argv);
		ck_assert_str_eq(j, argv_cases[_i].want);
		free(j);
	}
	rt_strv_free(argv);
	rt_strv_free(img.entrypoint);
	rt_strv_free(img.cmd);
	rt_strv_free(spec.command);
	rt_strv_free(spec.args);
	free(spec.image);
}
END_TEST

/* ======================================================================================
 * Real pods
 * ====================================================================================== */

static struct {
	char state[64];
	char cidr[32], prefix[32]; /* "10.240.N.0/24", "10.240.N." */
	struct rt_config cfg;
	struct imagemap *images;
	struct rt_pod *pods[MAX_PODS];
	bool ready;
} T;

static bool made_bridge; /* in the runner process: the unchecked fixture made ro-br0 */

/*
 * Check ends a failing test with _exit(), past any teardown: a janitor child waits for
 * the test process to go (EOF on a pipe) and removes what its pods left.
 */
static struct {
	int fd;
	pid_t pid;
} janitor = { -1, 0 };

static void janitor_sweep(void)
{
	char *pods = xasprintf("%s/pods", T.state);
	DIR *d = opendir(pods);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			rt_pod_remove_stale(&T.cfg, de->d_name);
	if (d)
		closedir(d);
	free(pods);
	rt_rmtree(T.state);
}

static void janitor_start(void)
{
	int p[2];
	char c;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	janitor.pid = fork();
	ck_assert_int_ge(janitor.pid, 0);
	if (janitor.pid == 0) {
		setsid(); /* out of the process group Check kills after the test */
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		janitor_sweep();
		_exit(0);
	}
	close(p[0]);
	janitor.fd = p[1];
}

static void janitor_stop(void)
{
	if (janitor.fd < 0)
		return;
	close(janitor.fd);
	while (waitpid(janitor.pid, NULL, 0) < 0 && errno == EINTR)
		;
	janitor.fd = -1;
}

static int sh(const char *const argv[])
{
	struct err e;
	int rc;

	err_clear(&e);
	rc = rt_run(argv, &e);
	if (rc)
		fprintf(stderr, "%s\n", e.msg);
	return rc;
}

static void bridge_setup(void)
{
	const char *add[] = { "ip", "link", "add", BRIDGE, "type", "bridge", NULL };
	const char *addr[] = { "ip", "addr", "add", HOST_IP "/16", "dev", BRIDGE, NULL };
	const char *up[] = { "ip", "link", "set", BRIDGE, "up", NULL };
	char path[64];

	snprintf(path, sizeof(path), "/sys/class/net/%s", BRIDGE);
	if (access(path, F_OK) == 0)
		return;
	made_bridge = sh(add) == 0;
	sh(addr);
	sh(up);
}

static void bridge_teardown(void)
{
	const char *del[] = { "ip", "link", "del", BRIDGE, NULL };

	if (made_bridge)
		sh(del);
	made_bridge = false;
}

static void pods_cleanup(void)
{
	for (size_t i = 0; i < MAX_PODS; i++) {
		rt_pod_destroy(T.pods[i]);
		T.pods[i] = NULL;
	}
	if (T.state[0])
		rt_rmtree(T.state);
	janitor_stop();
	T.state[0] = '\0';
	imagemap_free(T.images);
	T.images = NULL;
}

static void pods_setup(void)
{
	static const struct imagemap_var vars[] = { { "OPERATOR_BIN", "build/redis-operator" } };
	struct err e;

	memset(&T, 0, sizeof(T));
	log_configure(LOG_LEVEL_WARN, LOG_FORMAT_LOGFMT, NULL, NULL);
	snprintf(T.state, sizeof(T.state), "/tmp/h7rt.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(T.state));
	err_clear(&e);
	ck_assert_msg(imagemap_load(IMAGES_CONF, NULL, vars, 1, &T.images, &e) == 0, "%s", e.msg);
	rt_config_init(&T.cfg);
	T.cfg.state_dir = T.state;
	snprintf(T.prefix, sizeof(T.prefix), "10.240.%d.", 128 + (int)(getpid() % 100));
	snprintf(T.cidr, sizeof(T.cidr), "10.240.%d.0/24", 128 + (int)(getpid() % 100));
	T.cfg.pod_cidr = T.cidr;
	T.cfg.images = T.images;
	T.cfg.backoff_base_ms = 200;
	T.cfg.backoff_max_ms = 2000;
	janitor_start();
}

static struct rt_pod *pod_create(struct rt_pod_spec *s)
{
	struct rt_pod *pod = NULL;
	struct err e;
	size_t i;

	for (i = 0; i < MAX_PODS && T.pods[i]; i++)
		;
	ck_assert(i < MAX_PODS);
	err_clear(&e);
	ck_assert_msg(rt_pod_create(s, &T.cfg, &pod, &e) == 0, "create: %s", e.msg);
	T.pods[i] = pod;
	rt_pod_spec_release(s);
	return pod;
}

static void pod_destroy(struct rt_pod *pod)
{
	for (size_t i = 0; i < MAX_PODS; i++)
		if (T.pods[i] == pod)
			T.pods[i] = NULL;
	rt_pod_destroy(pod);
}

static void reap_all(void)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		for (size_t i = 0; i < MAX_PODS; i++)
			if (T.pods[i] && rt_pod_on_exit(T.pods[i], pid, st))
				break;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	if (ms > 0)
		nanosleep(&ts, NULL);
}

/* Reaps and steps every pod until pred holds or timeout_ms passes. */
static bool run_until(struct rt_pod *pod, bool (*pred)(struct rt_pod *, const void *),
                      const void *arg, int64_t timeout_ms)
{
	int64_t end = clock_mono_ms() + timeout_ms;

	for (;;) {
		int64_t now, due = INT64_MAX;

		reap_all();
		now = clock_mono_ms();
		for (size_t i = 0; i < MAX_PODS; i++) {
			if (!T.pods[i])
				continue;
			rt_pod_step(T.pods[i], now);
			if (rt_pod_next_due(T.pods[i]) < due)
				due = rt_pod_next_due(T.pods[i]);
		}
		if (pred && pred(pod, arg))
			return true;
		if (now >= end)
			return false;
		sleep_ms(due - now < 5 ? 5 : (due - now > 20 ? 20 : due - now));
	}
}

static void pump(int64_t ms)
{
	run_until(NULL, NULL, NULL, ms);
}

static const struct rt_ctr_status *status_ctr(const struct rt_pod_status *st, const char *name)
{
	for (size_t i = 0; i < st->n_init; i++)
		if (!strcmp(st->init[i].name, name))
			return &st->init[i];
	for (size_t i = 0; i < st->n_containers; i++)
		if (!strcmp(st->containers[i].name, name))
			return &st->containers[i];
	return NULL;
}

struct want {
	const char *ctr;
	enum rt_state state;
	const char *reason; /* NULL: any */
	int min_restarts;
	int ready; /* -1: any */
};

static bool pred_want(struct rt_pod *pod, const void *arg)
{
	const struct want *w = arg;
	const struct rt_ctr_status *c;
	struct rt_pod_status st;
	bool ok;

	rt_pod_snapshot(pod, &st);
	c = status_ctr(&st, w->ctr);
	ok = c && c->state.kind == w->state && c->restart_count >= w->min_restarts &&
	     (w->ready < 0 || c->ready == (w->ready > 0)) &&
	     (!w->reason || (c->state.reason && !strcmp(c->state.reason, w->reason)));
	rt_pod_status_release(&st);
	return ok;
}

static bool wait_state(struct rt_pod *pod, const char *ctr, enum rt_state state, int64_t ms)
{
	struct want w = { ctr, state, NULL, 0, -1 };

	return run_until(pod, pred_want, &w, ms);
}

static char *slurp(const char *path)
{
	char buf[8192];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

/* State and log of every container, for failure messages. Static buffer. */
static const char *pod_report(struct rt_pod *pod)
{
	static char out[4096];
	struct rt_pod_status st;
	size_t n = 0;

	rt_pod_snapshot(pod, &st);
	n += (size_t)snprintf(out + n, sizeof(out) - n, "phase %s;", rt_phase_name(st.phase));
	for (size_t i = 0; i < st.n_containers && n < sizeof(out); i++) {
		const struct rt_ctr_status *c = &st.containers[i];
		char *log = slurp(c->log_path);

		n += (size_t)snprintf(
		        out + n, sizeof(out) - n,
		        " [%s: state %d %s %s exit %d restarts %d ready %d log: %.600s]", c->name,
		        c->state.kind, c->state.reason ? c->state.reason : "",
		        c->state.message ? c->state.message : "", c->state.exit_code,
		        c->restart_count, c->ready, log ? log : "(none)");
		free(log);
	}
	rt_pod_status_release(&st);
	return out;
}

struct file_want {
	const char *path, *text;
};

static bool pred_file(struct rt_pod *pod, const void *arg)
{
	const struct file_want *f = arg;
	char *s = slurp(f->path);
	bool ok = s && strstr(s, f->text);

	(void)pod;
	free(s);
	return ok;
}

static bool wait_file(const char *path, const char *text, int64_t ms)
{
	struct file_want f = { path, text };

	return run_until(NULL, pred_file, &f, ms);
}

static char *vol_dir(const char *name)
{
	char *p = xasprintf("%s/vol-%s", T.state, name);

	ck_assert_int_eq(rt_mkdir_p(p, 0755), 0);
	return p;
}

static char *vol_file(const char *vol, const char *name)
{
	return xasprintf("%s/%s", vol, name);
}

static long file_long(const char *path)
{
	char *s = slurp(path);
	long v = s ? strtol(s, NULL, 10) : -1;

	free(s);
	return v;
}

/* Connect with a deadline: the fd, or -errno. */
static int tcp_connect(const char *ip, int port, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), err = 0;
	struct pollfd pfd = { s, POLLOUT, 0 };
	socklen_t len = sizeof(err);

	inet_pton(AF_INET, ip, &sa.sin_addr);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return s;
	if (errno != EINPROGRESS) {
		err = errno;
		close(s);
		return -err;
	}
	if (poll(&pfd, 1, timeout_ms) != 1) {
		close(s);
		return -ETIMEDOUT;
	}
	getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		close(s);
		return -err;
	}
	return s;
}

static bool redis_ping(const char *ip, int port, int timeout_ms)
{
	int s = tcp_connect(ip, port, timeout_ms);
	struct pollfd pfd = { s, POLLIN, 0 };
	char buf[16] = "";
	bool ok = false;

	if (s < 0)
		return false;
	if (write(s, "PING\r\n", 6) == 6 && poll(&pfd, 1, timeout_ms) == 1)
		ok = read(s, buf, sizeof(buf) - 1) >= 5 && !strncmp(buf, "+PONG", 5);
	close(s);
	return ok;
}

struct ping_want {
	const char *ip;
	int port;
};

static bool pred_ping(struct rt_pod *pod, const void *arg)
{
	const struct ping_want *p = arg;

	(void)pod;
	return redis_ping(p->ip, p->port, 200);
}

/* A listening socket on HOST_IP; *port gets the port. */
static int listen_host(int *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, HOST_IP, &sa.sin_addr);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(s, 64), 0);
	getsockname(s, (struct sockaddr *)&sa, &len);
	*port = ntohs(sa.sin_port);
	return s;
}

/* Accepts every pending connection; returns how many, reading each one's first bytes. */
static int accept_all(int ls, char *first, size_t len)
{
	int n = 0, c;

	while ((c = accept4(ls, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		struct pollfd pfd = { c, POLLIN, 0 };

		if (first && len && poll(&pfd, 1, 500) == 1) {
			ssize_t r = read(c, first, len - 1);

			first[r > 0 ? r : 0] = '\0';
		}
		close(c);
		n++;
	}
	return n;
}

static bool pred_accept(struct rt_pod *pod, const void *arg)
{
	const int *ls = arg;
	struct pollfd pfd = { *ls, POLLIN, 0 };

	(void)pod;
	return poll(&pfd, 1, 0) == 1;
}

/* ---------------------------------------------------------------------------------------- */

START_TEST(pid1_and_timing)
{
	struct rt_pod_spec s;
	struct rt_pod *pod;
	struct rt_pod_status st;
	int64_t t0, t1, t2;
	char *log;

	spec_init(&s, "pid1", 1);
	/* Kubernetes turns "$$" into "$" in command and args: "$$$$" reaches sh as "$$" */
	replace(&s.containers[0].command[2], "echo $$$$; echo host=$(hostname); sleep 30");
	t0 = clock_mono_ms();
	pod = pod_create(&s);
	t1 = clock_mono_ms();
	ck_assert(wait_state(pod, "c0", RT_STATE_RUNNING, 5000));
	t2 = clock_mono_ms();
	rt_pod_snapshot(pod, &st);
	ck_assert_str_eq(rt_phase_name(st.phase), "Running");
	ck_assert(st.containers[0].ready && st.containers[0].started && st.containers_ready);
	ck_assert_int_gt(st.containers[0].state.started_at_ms, 0);
	ck_assert(wait_file(st.containers[0].log_path, "host=pid1", 3000));
	log = slurp(st.containers[0].log_path);
	ck_assert_str_eq(log, "1\nhost=pid1\n");
	free(log);
	ck_assert_str_eq(st.pod_ip, rt_pod_ip(pod));
	printf("figure: pod create %lld ms (sandbox), create -> container running %lld ms\n",
	       (long long)(t1 - t0), (long long)(t2 - t0));
	rt_pod_status_release(&st);
}
END_TEST

START_TEST(redis_answers_from_host)
{
	struct rt_pod_spec s;
	struct rt_pod *pod;
	struct ping_want p;
	int64_t t0;

	spec_init(&s, "redis", 1);
	rt_strv_free(s.containers[0].command);
	s.containers[0].command = NULL;
	replace(&s.containers[0].image, "redis:7");
	s.containers[0].args = argv_new("--port", "6379", "--save", "", "--bind", "0.0.0.0",
	                                "--protected-mode", "no", ARGV_END);
	t0 = clock_mono_ms();
	pod = pod_create(&s);
	p.ip = rt_pod_ip(pod);
	p.port = 6379;
	ck_assert_msg(run_until(pod, pred_ping, &p, 5000), "no PONG from %s: %s", p.ip,
	              pod_report(pod));
	printf("figure: pod create -> redis PONG from host %lld ms (pod IP %s)\n",
	       (long long)(clock_mono_ms() - t0), p.ip);
}
END_TEST

START_TEST(pod_reaches_host)
{
	struct rt_pod_spec s;
	char script[256], got[64] = "", *vol = vol_dir("data"), *readyz = vol_file(vol, "readyz");
	int port, ls = listen_host(&port), api = tcp_connect(HOST_IP, 6443, 200);

	spec_init(&s, "tohost", 2);
	snprintf(script, sizeof(script), "bash -c 'echo hello-from-pod >/dev/tcp/%s/%d'; sleep 30",
	         HOST_IP, port);
	replace(&s.containers[0].command[2], script);
	/* the local API server, when env-up runs it, answers pods at HOST_IP:6443 */
	add_volume(&s, "data", vol);
	add_mount(&s.containers[1], "data", "/data", false, NULL);
	replace(&s.containers[1].command[2],
	        "curl -sk --max-time 3 https://" HOST_IP ":6443/readyz > /data/readyz; sleep 30");
	pod_create(&s);
	ck_assert_msg(run_until(NULL, pred_accept, &ls, 5000), "no connection from the pod");
	ck_assert_int_eq(accept_all(ls, got, sizeof(got)), 1);
	ck_assert_str_eq(got, "hello-from-pod\n");
	close(ls);
	if (api >= 0) {
		close(api);
		ck_assert_msg(wait_file(readyz, "ok", 5000), "API server /readyz not reached");
		printf("figure: pod reached the API server at %s:6443 (/readyz ok)\n", HOST_IP);
	}
	free(readyz);
	free(vol);
}
END_TEST

START_TEST(volumes)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *ro = vol_dir("ro"), *f, *text;
	struct rt_pod *pod;

	spec_init(&s, "vols", 1);
	add_volume(&s, "data", vol);
	add_volume(&s, "ro", ro);
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	add_mount(&s.containers[0], "data", "/var/run/secrets/sub", false, "a/b");
	add_mount(&s.containers[0], "ro", "/ro", true, NULL);
	replace(&s.containers[0].command[2],
	        "echo written > /data/f; echo deep > /var/run/secrets/sub/g; "
	        "echo x > /ro/h 2>/dev/null; echo ro=$? > /data/rc; sleep 30");
	pod = pod_create(&s);
	f = vol_file(vol, "rc");
	ck_assert(wait_file(f, "ro=", 5000));
	free(f);
	f = vol_file(vol, "f");
	text = slurp(f);
	ck_assert_str_eq(text, "written\n");
	free(text);
	free(f);
	f = vol_file(vol, "a/b/g");
	text = slurp(f);
	ck_assert_msg(text && !strcmp(text, "deep\n"), "subPath write missing");
	free(text);
	free(f);
	f = vol_file(vol, "rc");
	text = slurp(f);
	ck_assert_str_ne(text, "ro=0\n");
	free(text);
	free(f);
	f = vol_file(ro, "h");
	ck_assert_int_ne(access(f, F_OK), 0);
	ck_assert_int_ne(access("/run/secrets/sub", F_OK), 0); /* nothing leaked to the host */
	free(f);
	(void)pod;
	free(vol);
	free(ro);
}
END_TEST

START_TEST(read_only_root)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *runvol = vol_dir("run"), *f, *text;

	spec_init(&s, "rofs", 1);
	add_volume(&s, "data", vol);
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	/* A volume below /run (service-account tokens live there) must still mount, and so
	 * must a writable volume on /run itself with a read-only one below it. */
	add_volume(&s, "run", runvol);
	add_mount(&s.containers[0], "data", "/var/run/secrets/test", true, NULL);
	add_mount(&s.containers[0], "run", "/run", false, NULL);
	add_mount(&s.containers[0], "data", "/run/below", true, NULL);
	s.containers[0].read_only_root = true;
	replace(&s.containers[0].command[2],
	        "touch /x 2>>/data/err; echo root=$? >> /data/out; "
	        "touch /tmp/y 2>>/data/err; echo tmp=$? >> /data/out; "
	        "echo ok > /data/ok; echo vol=$? >> /data/out; "
	        "test -f /var/run/secrets/test/ok; echo run=$? >> /data/out; "
	        "touch /run/w && test -f /run/below/ok; echo runvol=$? >> /data/out; sleep 30");
	pod_create(&s);
	f = vol_file(vol, "out");
	ck_assert(wait_file(f, "runvol=", 5000));
	text = slurp(f);
	ck_assert_str_eq(text, "root=1\ntmp=1\nvol=0\nrun=0\nrunvol=0\n");
	free(text);
	free(f);
	f = vol_file(vol, "err");
	text = slurp(f);
	ck_assert_msg(text && strstr(text, "Read-only file system"), "err: %s", text);
	free(text);
	free(f);
	free(vol);
	free(runvol);
}
END_TEST

START_TEST(run_as_user_and_fs_group)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *f, *text;
	struct stat sb;

	spec_init(&s, "user", 1);
	add_volume(&s, "data", vol);
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	s.fs_group = 2000;
	s.containers[0].run_as_user = 1000;
	s.containers[0].run_as_group = 1000;
	replace(&s.containers[0].command[2],
	        "echo $(id -u) $(id -g) $(id -G) > /data/id; grep NoNewPrivs /proc/self/status "
	        ">> /data/id; grep CapEff /proc/self/status >> /data/id; sleep 30");
	pod_create(&s);
	f = vol_file(vol, "id");
	ck_assert(wait_file(f, "CapEff", 5000));
	text = slurp(f);
	ck_assert_msg(!strncmp(text, "1000 1000 1000 2000\n", 20), "id: %s", text);
	ck_assert_msg(strstr(text, "NoNewPrivs:\t1"), "%s", text);
	ck_assert_msg(strstr(text, "CapEff:\t0000000000000000"), "%s", text);
	free(text);
	ck_assert_int_eq(stat(f, &sb), 0);
	ck_assert_int_eq((int)sb.st_uid, 1000); /* the container wrote it, as uid 1000 */
	ck_assert_int_eq(stat(vol, &sb), 0);
	ck_assert_int_eq((int)sb.st_gid, 2000);
	ck_assert(sb.st_mode & S_ISGID);
	ck_assert((sb.st_mode & 070) == 070);
	free(f);
	free(vol);
}
END_TEST

START_TEST(init_containers_first)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *f, *text;
	struct rt_pod_status st;
	struct rt_pod *pod;

	spec_init(&s, "init", 1);
	add_volume(&s, "data", vol);
	s.n_init = 2;
	s.init = xcalloc(2, sizeof(*s.init));
	ctr_set(&s.init[0], "init-a", "busybox:1", "sleep 0.3; echo a >> /data/order");
	ctr_set(&s.init[1], "init-b", "busybox:1", "echo b >> /data/order");
	add_mount(&s.init[0], "data", "/data", false, NULL);
	add_mount(&s.init[1], "data", "/data", false, NULL);
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	replace(&s.containers[0].command[2], "echo main >> /data/order; sleep 30");
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "init-a", RT_STATE_RUNNING, 3000));
	rt_pod_snapshot(pod, &st);
	ck_assert_str_eq(rt_phase_name(st.phase), "Pending");
	ck_assert(!st.initialized);
	ck_assert_int_eq(st.containers[0].state.kind, RT_STATE_WAITING);
	ck_assert_str_eq(st.containers[0].state.reason, "PodInitializing");
	ck_assert_int_eq(st.init[1].state.kind, RT_STATE_WAITING);
	rt_pod_status_release(&st);
	f = vol_file(vol, "order");
	ck_assert(wait_file(f, "main", 5000));
	text = slurp(f);
	ck_assert_str_eq(text, "a\nb\nmain\n");
	free(text);
	rt_pod_snapshot(pod, &st);
	ck_assert(st.initialized);
	ck_assert_int_eq(st.init[0].state.kind, RT_STATE_TERMINATED);
	ck_assert_str_eq(st.init[0].state.reason, "Completed");
	ck_assert_int_eq(st.init[0].state.exit_code, 0);
	ck_assert_int_ge(st.init[0].state.finished_at_ms - st.init[0].state.started_at_ms, 250);
	ck_assert_str_eq(rt_phase_name(st.phase), "Running");
	rt_pod_status_release(&st);
	free(f);
	free(vol);
}
END_TEST

START_TEST(init_failure_never)
{
	struct rt_pod_spec s;
	struct rt_pod_status st;
	struct rt_pod *pod;

	spec_init(&s, "initfail", 1);
	s.restart_policy = RT_RESTART_NEVER;
	s.n_init = 1;
	s.init = xcalloc(1, sizeof(*s.init));
	ctr_set(&s.init[0], "init", "busybox:1", "exit 3");
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "init", RT_STATE_TERMINATED, 3000));
	pump(100);
	rt_pod_snapshot(pod, &st);
	ck_assert_str_eq(rt_phase_name(st.phase), "Failed");
	ck_assert_int_eq(st.init[0].state.exit_code, 3);
	ck_assert_str_eq(st.init[0].state.reason, "Error");
	ck_assert_int_eq(st.containers[0].state.kind, RT_STATE_WAITING);
	ck_assert_int_eq(st.containers[0].pid, 0);
	rt_pod_status_release(&st);
}
END_TEST

START_TEST(unknown_image)
{
	struct rt_pod_spec s;
	struct rt_pod_status st;
	struct rt_pod *pod;

	spec_init(&s, "noimage", 1);
	replace(&s.containers[0].image, "example.com/nosuch/image:1");
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "c0", RT_STATE_WAITING, 1000));
	pump(100);
	rt_pod_snapshot(pod, &st);
	ck_assert_str_eq(st.containers[0].state.reason, "ErrImagePull");
	ck_assert_msg(strstr(st.containers[0].state.message, "\"example.com/nosuch/image:1\" is "
	                                                     "not in the image map"),
	              "%s", st.containers[0].state.message);
	ck_assert_int_eq(st.containers[0].pid, 0);
	ck_assert_int_eq(st.containers[0].restart_count, 0);
	ck_assert_str_eq(rt_phase_name(st.phase), "Pending");
	ck_assert_int_eq(access(st.containers[0].log_path, F_OK), -1); /* never started */
	rt_pod_status_release(&st);
}
END_TEST

START_TEST(start_error_and_never)
{
	struct rt_pod_spec s;
	struct rt_pod_status st;
	struct rt_pod *pod;

	spec_init(&s, "starterr", 1);
	s.restart_policy = RT_RESTART_NEVER;
	rt_strv_free(s.containers[0].command);
	s.containers[0].command = argv_new("/no/such/binary", ARGV_END);
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "c0", RT_STATE_TERMINATED, 3000));
	pump(50);
	rt_pod_snapshot(pod, &st);
	ck_assert_str_eq(st.containers[0].state.reason, "StartError");
	ck_assert_int_eq(st.containers[0].state.exit_code, 128);
	ck_assert_msg(strstr(st.containers[0].state.message, "exec /no/such/binary"), "%s",
	              st.containers[0].state.message);
	ck_assert_str_eq(rt_phase_name(st.phase), "Failed");
	ck_assert_int_eq(st.containers[0].restart_count, 0);
	rt_pod_status_release(&st);
}
END_TEST

START_TEST(liveness_restarts)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *die = vol_file(vol, "die"), *text;
	struct want running1 = { "c0", RT_STATE_RUNNING, NULL, 1, -1 };
	struct want crashloop = { "c0", RT_STATE_WAITING, "CrashLoopBackOff", 1, -1 };
	struct want ready2 = { "c0", RT_STATE_RUNNING, NULL, 2, 1 };
	struct want ready0 = { "c0", RT_STATE_RUNNING, NULL, 0, 1 };
	struct rt_probe *live, *ready;
	struct rt_pod_status st;
	struct rt_pod *pod;
	int64_t t0;

	spec_init(&s, "liveness", 1);
	add_volume(&s, "data", vol);
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	s.grace_period_s = 0;
	replace(&s.containers[0].command[2], "echo started; exec sleep 30");
	live = &s.containers[0].liveness;
	live->kind = RT_PROBE_EXEC;
	live->exec_argv = argv_new("sh", "-c", "test ! -e /data/die", ARGV_END);
	live->period_s = 1;
	live->failure_threshold = 1;
	ready = &s.containers[0].readiness;
	ready->kind = RT_PROBE_EXEC;
	ready->exec_argv = argv_new("true", ARGV_END);
	ready->period_s = 1;
	pod = pod_create(&s);
	ck_assert_msg(run_until(pod, pred_want, &ready0, 4000), "exec readiness never passed");
	ck_assert_int_eq(close(open(die, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
	t0 = clock_mono_ms();
	ck_assert(run_until(pod, pred_want, &running1, 4000));
	printf("figure: liveness failure seen -> restarted %lld ms (period 1 s)\n",
	       (long long)(clock_mono_ms() - t0));
	rt_pod_snapshot(pod, &st);
	ck_assert_int_eq(st.containers[0].restart_count, 1);
	ck_assert_int_eq(st.containers[0].last_state.kind, RT_STATE_TERMINATED);
	ck_assert_int_eq(st.containers[0].last_state.exit_code, 137);
	ck_assert_int_eq(st.containers[0].last_state.signal, 9);
	ck_assert_str_eq(st.containers[0].last_state.reason, "Error");
	text = slurp(st.containers[0].previous_log_path);
	ck_assert_msg(text && !strcmp(text, "started\n"), "previous log: %s", text);
	free(text);
	rt_pod_status_release(&st);
	ck_assert_msg(run_until(pod, pred_want, &crashloop, 4000), "no CrashLoopBackOff");
	rt_pod_snapshot(pod, &st);
	ck_assert_msg(strstr(st.containers[0].state.message, "back-off 200ms restarting failed"),
	              "%s", st.containers[0].state.message);
	rt_pod_status_release(&st);
	unlink(die);
	ck_assert(run_until(pod, pred_want, &ready2, 5000));
	free(die);
	free(vol);
}
END_TEST

/* The startup probe holds readiness back; a probe past its timeout is a failure. */
START_TEST(startup_gates_and_timeouts)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *started = vol_file(vol, "started");
	struct want up = { "c0", RT_STATE_RUNNING, NULL, 0, 1 };
	struct rt_pod_status st;
	struct rt_pod *pod;
	struct rt_probe *p;

	spec_init(&s, "startup", 1);
	add_volume(&s, "data", vol);
	add_mount(&s.containers[0], "data", "/data", true, NULL);
	p = &s.containers[0].startup;
	p->kind = RT_PROBE_EXEC; /* times out (1 s) until the file is there */
	p->exec_argv = argv_new("sh", "-c", "test -e /data/started || sleep 5", ARGV_END);
	p->period_s = 1;
	p->failure_threshold = 30;
	p = &s.containers[0].readiness;
	p->kind = RT_PROBE_EXEC;
	p->exec_argv = argv_new("true", ARGV_END);
	p->period_s = 1;
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "c0", RT_STATE_RUNNING, 3000));
	pump(2500); /* two startup probes time out */
	rt_pod_snapshot(pod, &st);
	ck_assert(!st.containers[0].started);
	ck_assert(!st.containers[0].ready); /* readiness has not run */
	ck_assert_int_eq(st.containers[0].restart_count, 0);
	rt_pod_status_release(&st);
	ck_assert_int_eq(close(open(started, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
	ck_assert_msg(run_until(pod, pred_want, &up, 4000), "%s", pod_report(pod));
	rt_pod_snapshot(pod, &st);
	ck_assert(st.containers[0].started);
	rt_pod_status_release(&st);
	free(started);
	free(vol);
}
END_TEST

START_TEST(readiness_http_tcp_https)
{
	static const char http[] =
	        "$s=IO::Socket::INET->new(LocalPort=>8080,Listen=>8,ReuseAddr=>1) or die $!;"
	        "while($c=$s->accept){"
	        "while(<$c>){last if /^\\r?$/}" /* read the whole request: no RST on close */
	        "$x = -e '/data/fail' ? '500 Oops' : '200 OK';"
	        "print $c \"HTTP/1.0 $x\\r\\nContent-Length: 0\\r\\n\\r\\n\"; close $c}";
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *fail = vol_file(vol, "fail"), *go = vol_file(vol, "go");
	struct want web_ready = { "web", RT_STATE_RUNNING, NULL, 0, 1 };
	struct want web_unready = { "web", RT_STATE_RUNNING, NULL, 0, 0 };
	struct want tcp_ready = { "tcp", RT_STATE_RUNNING, NULL, 0, 1 };
	struct want tls_ready = { "tls", RT_STATE_RUNNING, NULL, 0, 1 };
	struct rt_pod_status st;
	struct rt_pod *pod;
	struct rt_probe *p;

	ck_assert_int_eq(close(open(fail, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
	spec_init(&s, "ready", 3);
	add_volume(&s, "data", vol);
	replace(&s.containers[0].name, "web");
	replace(&s.containers[0].image, "debian:12");
	rt_strv_free(s.containers[0].command);
	s.containers[0].command = argv_new("perl", "-MIO::Socket::INET", "-e", http, ARGV_END);
	add_mount(&s.containers[0], "data", "/data", true, NULL);
	p = &s.containers[0].readiness;
	*p = (struct rt_probe){ .kind = RT_PROBE_HTTP,
		                .path = xstrdup("/healthz"),
		                .port = 8080,
		                .period_s = 1,
		                .failure_threshold = 1 };
	replace(&s.containers[1].name, "tcp");
	add_mount(&s.containers[1], "data", "/data", true, NULL);
	replace(&s.containers[1].command[2],
	        "while [ ! -e /data/go ]; do sleep 0.05; done; "
	        "exec redis-server --port 6380 --save '' --bind 0.0.0.0");
	p = &s.containers[1].readiness;
	*p = (struct rt_probe){ .kind = RT_PROBE_TCP, .port = 6380, .period_s = 1 };
	replace(&s.containers[2].name, "tls");
	replace(&s.containers[2].command[2],
	        "cd /tmp && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
	        "-nodes -keyout k -out c -subj /CN=t -days 1 2>/dev/null && "
	        "exec openssl s_server -quiet -accept 8443 -www -cert c -key k");
	p = &s.containers[2].readiness;
	*p = (struct rt_probe){ .kind = RT_PROBE_HTTP, .https = true, .port = 8443, .period_s = 1 };
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "web", RT_STATE_RUNNING, 3000));
	pump(1500);
	rt_pod_snapshot(pod, &st);
	ck_assert(!status_ctr(&st, "web")->ready); /* 500 */
	ck_assert(!status_ctr(&st, "tcp")->ready); /* nothing listens */
	ck_assert(!st.containers_ready);
	rt_pod_status_release(&st);
	unlink(fail);
	ck_assert_msg(run_until(pod, pred_want, &web_ready, 3000), "httpGet never ready: %s",
	              pod_report(pod));
	ck_assert_int_eq(close(open(go, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
	ck_assert_msg(run_until(pod, pred_want, &tcp_ready, 3000), "tcpSocket never ready");
	ck_assert_msg(run_until(pod, pred_want, &tls_ready, 4000), "https httpGet never ready");
	rt_pod_snapshot(pod, &st);
	ck_assert(st.containers_ready);
	rt_pod_status_release(&st);
	ck_assert_int_eq(close(open(fail, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
	ck_assert_msg(run_until(pod, pred_want, &web_unready, 3000), "httpGet never unready");
	free(fail);
	free(go);
	free(vol);
}
END_TEST

START_TEST(kill_with_grace)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *f, *text;
	struct rt_pod_status st;
	struct rt_pod *pod;
	int64_t t0, t_polite = -1, t_stubborn = -1;

	spec_init(&s, "grace", 2);
	add_volume(&s, "data", vol);
	replace(&s.containers[0].name, "polite");
	replace(&s.containers[0].command[2],
	        "trap 'echo term >> /data/log; exit 0' TERM; while :; do sleep 0.05; done");
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	s.containers[0].pre_stop_exec = argv_new("sh", "-c", "echo prestop >> /data/log", ARGV_END);
	replace(&s.containers[1].name, "stubborn");
	replace(&s.containers[1].command[2], "trap '' TERM; sleep 30");
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "polite", RT_STATE_RUNNING, 3000));
	ck_assert(wait_state(pod, "stubborn", RT_STATE_RUNNING, 3000));
	pump(100); /* let the shells install their traps */
	t0 = clock_mono_ms();
	rt_pod_kill(pod, 1000);
	while (clock_mono_ms() - t0 < 4000 && !rt_pod_is_stopped(pod)) {
		pump(10);
		rt_pod_snapshot(pod, &st);
		if (t_polite < 0 && st.containers[0].state.kind == RT_STATE_TERMINATED)
			t_polite = clock_mono_ms() - t0;
		if (t_stubborn < 0 && st.containers[1].state.kind == RT_STATE_TERMINATED)
			t_stubborn = clock_mono_ms() - t0;
		rt_pod_status_release(&st);
	}
	ck_assert(rt_pod_is_stopped(pod));
	printf("figure: kill grace 1000 ms: SIGTERM-trapping container gone in %lld ms, "
	       "SIGTERM-ignoring one SIGKILLed at %lld ms\n",
	       (long long)t_polite, (long long)t_stubborn);
	ck_assert_int_ge(t_polite, 0);
	ck_assert_int_lt(t_polite, 700);
	ck_assert_int_ge(t_stubborn, 950);
	ck_assert_int_lt(t_stubborn, 1600);
	rt_pod_snapshot(pod, &st);
	ck_assert_int_eq(st.containers[0].state.exit_code, 0);
	ck_assert_str_eq(st.containers[0].state.reason, "Completed");
	ck_assert_int_eq(st.containers[1].state.exit_code, 137);
	ck_assert_str_eq(rt_phase_name(st.phase), "Failed");
	rt_pod_status_release(&st);
	pump(300);
	rt_pod_snapshot(pod, &st); /* no restart after a kill */
	ck_assert_int_eq(st.containers[0].restart_count, 0);
	ck_assert_int_eq(st.containers[0].state.kind, RT_STATE_TERMINATED);
	rt_pod_status_release(&st);
	f = vol_file(vol, "log");
	text = slurp(f);
	ck_assert_str_eq(text, "prestop\nterm\n");
	free(text);
	free(f);
	free(vol);
}
END_TEST

START_TEST(freeze_thaw_and_kill_fault)
{
	struct rt_pod_spec s;
	char *vol = vol_dir("data"), *count = vol_file(vol, "count");
	struct want restarted = { "c0", RT_STATE_RUNNING, NULL, 1, -1 };
	struct rt_pod *pod;
	struct err e;
	long v1, v2, v3;
	int64_t t0;

	spec_init(&s, "freeze", 1);
	add_volume(&s, "data", vol);
	add_mount(&s.containers[0], "data", "/data", false, NULL);
	replace(&s.containers[0].command[2],
	        "i=0; while :; do i=$((i+1)); echo $i > /data/c.tmp; mv /data/c.tmp /data/count; "
	        "sleep 0.02; done");
	pod = pod_create(&s);
	ck_assert(wait_file(count, "5", 5000));
	err_clear(&e);
	t0 = clock_mono_ms();
	ck_assert_msg(rt_fault_freeze(pod, true, &e) == 0, "%s", e.msg);
	printf("figure: freeze took %lld ms\n", (long long)(clock_mono_ms() - t0));
	ck_assert(rt_fault_is_frozen(pod));
	v1 = file_long(count);
	pump(300);
	v2 = file_long(count);
	ck_assert_int_eq(v1, v2);
	ck_assert_msg(rt_fault_freeze(pod, false, &e) == 0, "%s", e.msg);
	ck_assert(!rt_fault_is_frozen(pod));
	pump(300);
	v3 = file_long(count);
	ck_assert_int_gt(v3, v2);
	ck_assert_int_eq(rt_fault_kill_container(pod, "c0", &e), 0);
	ck_assert(run_until(pod, pred_want, &restarted, 3000));
	ck_assert_int_eq(rt_fault_kill_container(pod, "nope", NULL), -ENOENT);
	/* a frozen pod still dies: SIGKILL at the deadline thaws it */
	ck_assert_int_eq(rt_fault_freeze(pod, true, NULL), 0);
	t0 = clock_mono_ms();
	rt_pod_kill(pod, 200);
	while (!rt_pod_is_stopped(pod) && clock_mono_ms() - t0 < 3000)
		pump(10);
	ck_assert(rt_pod_is_stopped(pod));
	ck_assert_int_ge(clock_mono_ms() - t0, 190);
	free(count);
	free(vol);
}
END_TEST

START_TEST(network_cut_and_loss)
{
	struct rt_pod_spec s;
	char script[512];
	int port, ls = listen_host(&port), rc;
	struct ping_want p;
	struct rt_pod *pod;
	struct err e;
	int64_t t0;

	spec_init(&s, "netcut", 2);
	snprintf(script, sizeof(script),
	         "while :; do timeout 0.3 bash -c 'exec 3<>/dev/tcp/%s/%d' 2>/dev/null; "
	         "sleep 0.05; done",
	         HOST_IP, port);
	replace(&s.containers[0].command[2], script);
	replace(&s.containers[1].image, "redis:7");
	rt_strv_free(s.containers[1].command);
	s.containers[1].command = NULL;
	s.containers[1].args = argv_new("--port", "6379", "--save", "", "--bind", "0.0.0.0",
	                                "--protected-mode", "no", ARGV_END);
	pod = pod_create(&s);
	p.ip = rt_pod_ip(pod);
	p.port = 6379;
	ck_assert_msg(run_until(pod, pred_ping, &p, 5000), "%s", pod_report(pod));
	ck_assert(run_until(pod, pred_accept, &ls, 3000)); /* pod -> host works */
	err_clear(&e);
	ck_assert_msg(rt_fault_net_cut(pod, true, &e) == 0, "%s", e.msg);
	pump(400); /* attempts already under way finish or time out */
	accept_all(ls, NULL, 0);
	ck_assert(!redis_ping(p.ip, p.port, 500)); /* host -> pod cut */
	pump(700);
	ck_assert_int_eq(accept_all(ls, NULL, 0), 0); /* pod -> host cut */
	ck_assert_msg(rt_fault_net_cut(pod, false, &e) == 0, "%s", e.msg);
	t0 = clock_mono_ms();
	ck_assert_msg(run_until(pod, pred_ping, &p, 5000), "no PONG after restore");
	ck_assert(run_until(pod, pred_accept, &ls, 3000));
	printf("figure: network restore -> PONG %lld ms\n", (long long)(clock_mono_ms() - t0));
	/* 100 % loss blocks both ways too; 0 % lifts it */
	ck_assert_msg(rt_fault_net_loss(pod, 100, &e) == 0, "%s", e.msg);
	pump(400);
	accept_all(ls, NULL, 0);
	ck_assert(!redis_ping(p.ip, p.port, 500));
	pump(700);
	ck_assert_int_eq(accept_all(ls, NULL, 0), 0);
	ck_assert_msg(rt_fault_net_loss(pod, 0, &e) == 0, "%s", e.msg);
	ck_assert(run_until(pod, pred_ping, &p, 5000));
	ck_assert_int_eq(rt_fault_net_loss(pod, 101, NULL), -EINVAL);
	err_clear(&e);
	rc = rt_fault_net_delay(pod, 50, &e);
	printf("figure: tc netem delay: %s\n", rc == 0 ? "supported" : e.msg);
	ck_assert_msg(rc == 0 || rc == -EOPNOTSUPP, "%s", e.msg);
	ck_assert_int_eq(rt_fault_net_delay(pod, 0, NULL), 0);
	close(ls);
}
END_TEST

START_TEST(destroy_removes_everything)
{
	struct rt_pod_spec s;
	char netns[64], veth[64], cgroup[256], dir[256], *ipam, *text, uid[64];
	struct rt_pod *pod, *again = NULL;
	struct err e;

	spec_init(&s, "destroy", 1);
	snprintf(uid, sizeof(uid), "%s", s.uid);
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "c0", RT_STATE_RUNNING, 3000));
	snprintf(netns, sizeof(netns), "/run/netns/%s", rt_pod_netns(pod));
	snprintf(veth, sizeof(veth), "/sys/class/net/%s", rt_pod_host_veth(pod));
	snprintf(cgroup, sizeof(cgroup), "%s", rt_pod_cgroup(pod));
	text = rt_pod_dir(&T.cfg, uid);
	snprintf(dir, sizeof(dir), "%s", text);
	free(text);
	ipam = xasprintf("%s/ipam", T.state);
	ck_assert_int_eq(access(netns, F_OK), 0);
	ck_assert_int_eq(access(veth, F_OK), 0);
	ck_assert_int_eq(access(cgroup, F_OK), 0);
	ck_assert_int_eq(access(dir, F_OK), 0);
	ck_assert(wait_file(ipam, uid, 10));
	spec_init(&s, "destroy", 1); /* same uid while the first runs */
	err_clear(&e);
	ck_assert_int_eq(rt_pod_create(&s, &T.cfg, &again, &e), -EEXIST);
	ck_assert_msg(strstr(e.msg, "sandbox in use"), "%s", e.msg);
	rt_pod_spec_release(&s);
	ck_assert_int_eq(access(netns, F_OK), 0); /* the first pod is untouched */
	pod_destroy(pod);
	ck_assert_int_ne(access(netns, F_OK), 0);
	ck_assert_int_ne(access(veth, F_OK), 0);
	ck_assert_int_ne(access(cgroup, F_OK), 0);
	ck_assert_int_ne(access(dir, F_OK), 0);
	text = slurp(ipam);
	ck_assert_msg(text && !strstr(text, uid), "ipam still holds the pod: %s", text);
	free(text);
	free(ipam);
}
END_TEST

/* An image rule binds a host file into read-only /usr and sets entrypoint, env, workdir. */
START_TEST(image_binds_env_workdir)
{
	struct rt_pod_spec s;
	struct imagemap *map = NULL;
	struct rt_pod_status st;
	struct rt_pod *pod;
	char *tool = xasprintf("%s/tool.sh", T.state), *rules, *log;
	struct err e;
	FILE *f = fopen(tool, "w");

	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\necho tool $TOOL_ENV $B $HOSTNAME $(pwd) \"$@\"\n", f);
	fclose(f);
	chmod(tool, 0755);
	rules = xasprintf("tool:* bind=%s:/usr/local/bin/tool entrypoint=/usr/local/bin/tool "
	                  "env=TOOL_ENV=yes workdir=/work\n"
	                  "gone:* bind=%s/missing:/usr/local/bin/x entrypoint=x\n",
	                  tool, T.state);
	err_clear(&e);
	ck_assert_msg(imagemap_parse(rules, strlen(rules), "rules", NULL, NULL, 0, &map, &e) == 0,
	              "%s", e.msg);
	T.cfg.images = map;
	spec_init(&s, "image", 2);
	s.restart_policy = RT_RESTART_NEVER;
	replace(&s.containers[0].image, "tool:1");
	rt_strv_free(s.containers[0].command);
	s.containers[0].command = NULL;
	s.containers[0].args = argv_new("$(A)", "arg2", ARGV_END);
	s.containers[0].n_env = 2;
	s.containers[0].env = xcalloc(2, sizeof(struct rt_env));
	s.containers[0].env[0] = (struct rt_env){ xstrdup("A"), xstrdup("one") };
	s.containers[0].env[1] = (struct rt_env){ xstrdup("B"), xstrdup("$(A)-two") };
	replace(&s.containers[1].image, "gone:1");
	pod = pod_create(&s);
	ck_assert_msg(wait_state(pod, "c0", RT_STATE_TERMINATED, 3000), "%s", pod_report(pod));
	ck_assert(wait_state(pod, "c1", RT_STATE_TERMINATED, 3000));
	rt_pod_snapshot(pod, &st);
	ck_assert_int_eq(st.containers[0].state.exit_code, 0);
	log = slurp(st.containers[0].log_path);
	ck_assert_str_eq(log, "tool yes one-two image /work one arg2\n");
	free(log);
	ck_assert_str_eq(st.containers[1].state.reason, "StartError");
	ck_assert_msg(strstr(st.containers[1].state.message, "bind source") &&
	                      strstr(st.containers[1].state.message, "/missing"),
	              "%s", st.containers[1].state.message);
	ck_assert_str_eq(rt_phase_name(st.phase), "Failed");
	rt_pod_status_release(&st);
	pod_destroy(pod); /* before its image map goes */
	T.cfg.images = T.images;
	imagemap_free(map);
	free(rules);
	free(tool);
}
END_TEST

/* ---------------------------------------------------------------------------------------- */

/* What the image's root shows a container: layers in order, the whiteout and the opaque
 * directory honoured, none of the host's files, the image's user, workdir and env, a
 * read-only root, the host's /etc/resolv.conf. */
#define OCI_SCRIPT                                                                                 \
	"{ test -e /data/keep && echo keep; test -e /data/gone || echo gone-hidden; "              \
	"test -e /opq/old || echo old-hidden; test -e /opq/new && echo new; "                      \
	"test -e /etc/debian_version || echo no-host-files; echo pwd=$(pwd) env=$FIXTURE; "        \
	"while read k v rest; do [ \"$k\" = Uid: ] && echo uid=$v; [ \"$k\" = Gid: ] && echo "     \
	"gid=$v; "                                                                                 \
	"done </proc/self/status; { echo x >/f; } 2>/dev/null || echo ro-root; "                   \
	"test -s /etc/resolv.conf && echo resolv; } >/out/result"
#define OCI_WANT                                                                                   \
	"keep\ngone-hidden\nold-hidden\nnew\nno-host-files\npwd=/data env=oci\nuid=4321\n"         \
	"gid=4322\nro-root\nresolv\n"

/* Builds the fixture layout (oci-fixture.sh: umoci, built on first use) and loads it. */
static void oci_fixture_load(char **tar, struct ociimg_opts *o, char **umoci, char **cache)
{
	char *dir = xasprintf("%s/oci", T.state);
	const char *argv[] = { "bash", "test/nodeagent/oci-fixture.sh", dir, NULL };
	struct err e;

	err_clear(&e);
	ck_assert_msg(rt_run_timeout(argv, 170000, &e) == 0, "fixture: %s", e.msg);
	*tar = xasprintf("%s/image.tar", dir);
	*umoci = xasprintf("%s/umoci", dir);
	*cache = xasprintf("%s/images", T.state);
	*o = (struct ociimg_opts){ .umoci = *umoci, .tar = "tar", .cache_dir = *cache };
	free(dir);
}

static void oci_entry_checks(const char *tar, const struct ociimg_opts *o)
{
	const struct imagemap_entry *en, *again;
	struct err e;
	char *root;

	err_clear(&e);
	ck_assert_msg(ociimg_load(T.images, "localhost/fixture:t1", tar, o, &e) == 0, "%s", e.msg);
	en = imagemap_find(T.images, "localhost/fixture:t1");
	ck_assert_ptr_nonnull(en);
	ck_assert(en->exact && en->rootfs && en->uid == 4321 && en->gid == 4322);
	ck_assert_str_eq(en->workdir, "/data");
	ck_assert_str_eq(en->entrypoint[0], "/bin/sh");
	ck_assert_str_eq(en->cmd[1], "echo default cmd $FIXTURE");
	ck_assert_str_eq(en->env[0], "FIXTURE=oci");
	root = xstrdup(en->rootfs);
	/* Another name for the same layout (its only manifest): the same unpacked root. An
	 * exact reference wins over the map's busybox:* rule. */
	ck_assert_msg(ociimg_load(T.images, "busybox:oci", tar, o, &e) == 0, "%s", e.msg);
	again = imagemap_find(T.images, "docker.io/library/busybox:oci");
	ck_assert(again && again->rootfs && !strcmp(again->rootfs, root));
	ck_assert_ptr_null(imagemap_find(T.images, "busybox:1")->rootfs);
	err_clear(&e);
	ck_assert_int_eq(ociimg_load(T.images, "x:1", "/nonexistent.tar", o, &e), -ENOENT);
	err_clear(&e);
	ck_assert_int_eq(ociimg_load_list(T.images, "noequals", o, &e), -EINVAL);
	free(root);
}

START_TEST(oci_image_root)
{
	struct ociimg_opts o;
	struct rt_pod_spec s;
	struct rt_pod_status st;
	struct rt_pod *pod;
	char *tar, *umoci, *cache, *out = vol_dir("out"), *f, *text;

	oci_fixture_load(&tar, &o, &umoci, &cache);
	oci_entry_checks(tar, &o);
	chmod(out, 0777);
	spec_init(&s, "oci", 2);
	s.restart_policy = RT_RESTART_NEVER;
	add_volume(&s, "out", out);
	replace(&s.containers[0].image, "localhost/fixture:t1");
	rt_strv_free(s.containers[0].command);
	s.containers[0].command = NULL;
	s.containers[0].args = argv_new("-c", OCI_SCRIPT, ARGV_END);
	s.containers[0].read_only_root = true;
	add_mount(&s.containers[0], "out", "/out", false, NULL);
	replace(&s.containers[1].image, "localhost/fixture:t1");
	rt_strv_free(s.containers[1].command);
	s.containers[1].command = NULL; /* the image's Entrypoint and Cmd */
	pod = pod_create(&s);
	ck_assert_msg(wait_state(pod, "c0", RT_STATE_TERMINATED, 5000), "%s", pod_report(pod));
	ck_assert_msg(wait_state(pod, "c1", RT_STATE_TERMINATED, 5000), "%s", pod_report(pod));
	rt_pod_snapshot(pod, &st);
	ck_assert_msg(st.containers[0].state.exit_code == 0, "%s", pod_report(pod));
	f = vol_file(out, "result");
	text = slurp(f);
	ck_assert_msg(text && !strcmp(text, OCI_WANT), "result: %s; %s", text, pod_report(pod));
	free(text);
	text = slurp(st.containers[1].log_path);
	ck_assert_str_eq(text, "default cmd oci\n");
	rt_pod_status_release(&st);
	free(text);
	free(f);
	free(out);
	free(tar);
	free(umoci);
	free(cache);
}
END_TEST

/* What a crashed agent leaves behind is found by uid alone. */
START_TEST(remove_stale)
{
	struct rt_pod_spec s;
	char netns[64], veth[64], cgroup[256], *dir, uid[64];
	struct rt_pod *pod;

	spec_init(&s, "stale", 1);
	s.restart_policy = RT_RESTART_NEVER;
	snprintf(uid, sizeof(uid), "%s", s.uid);
	pod = pod_create(&s);
	ck_assert(wait_state(pod, "c0", RT_STATE_RUNNING, 3000));
	snprintf(netns, sizeof(netns), "/run/netns/%s", rt_pod_netns(pod));
	snprintf(veth, sizeof(veth), "/sys/class/net/%s", rt_pod_host_veth(pod));
	snprintf(cgroup, sizeof(cgroup), "%s", rt_pod_cgroup(pod));
	dir = rt_pod_dir(&T.cfg, uid);
	rt_pod_remove_stale(&T.cfg, uid); /* kills the container too */
	ck_assert_int_ne(access(netns, F_OK), 0);
	ck_assert_int_ne(access(veth, F_OK), 0);
	ck_assert_int_ne(access(cgroup, F_OK), 0);
	ck_assert_int_ne(access(dir, F_OK), 0);
	ck_assert(wait_state(pod, "c0", RT_STATE_TERMINATED, 3000));
	pod_destroy(pod); /* a second removal is quiet */
	free(dir);
}
END_TEST

START_TEST(ipam_round_robin)
{
	struct rt_pod_spec s1, s2;
	struct rt_pod *a, *b;
	char ip_a[16];

	spec_init(&s1, "ipa", 1);
	spec_init(&s2, "ipb", 1);
	a = pod_create(&s1);
	snprintf(ip_a, sizeof(ip_a), "%s", rt_pod_ip(a));
	ck_assert_msg(!strncmp(ip_a, T.prefix, strlen(T.prefix)), "%s not in %s", ip_a, T.cidr);
	pod_destroy(a);
	b = pod_create(&s2);
	ck_assert_str_ne(rt_pod_ip(b), ip_a); /* a released address is not reused at once */
	ck_assert_int_eq(rt_ipam_release(&T.cfg, "nobody", NULL), 0);
}
END_TEST

static Suite *runtime_suite(void)
{
	Suite *s = suite_create("nodeagent-runtime");
	TCase *pure = tcase_create("pure"), *pods = tcase_create("pods"),
	      *oci = tcase_create("oci");

	tcase_add_loop_test(pure, imagemap_parse_table, 0, ARRAY_LEN(map_cases));
	tcase_add_test(pure, imagemap_parse_details);
	tcase_add_loop_test(pure, imagemap_normalize_table, 0, ARRAY_LEN(norm_cases));
	tcase_add_loop_test(pure, imagemap_default_file, 0, ARRAY_LEN(find_cases));
	tcase_add_loop_test(pure, expand_table, 0, ARRAY_LEN(expand_cases));
	tcase_add_loop_test(pure, subpath_table, 0, ARRAY_LEN(subpath_cases));
	tcase_add_loop_test(pure, validate_table, 0, ARRAY_LEN(validate_cases));
	tcase_add_loop_test(pure, argv_table, 0, ARRAY_LEN(argv_cases));
	suite_add_tcase(s, pure);

	tcase_add_unchecked_fixture(pods, bridge_setup, bridge_teardown);
	tcase_add_checked_fixture(pods, pods_setup, pods_cleanup);
	tcase_set_timeout(pods, 30);
	tcase_add_test(pods, pid1_and_timing);
	tcase_add_test(pods, redis_answers_from_host);
	tcase_add_test(pods, pod_reaches_host);
	tcase_add_test(pods, volumes);
	tcase_add_test(pods, read_only_root);
	tcase_add_test(pods, run_as_user_and_fs_group);
	tcase_add_test(pods, init_containers_first);
	tcase_add_test(pods, init_failure_never);
	tcase_add_test(pods, unknown_image);
	tcase_add_test(pods, start_error_and_never);
	tcase_add_test(pods, liveness_restarts);
	tcase_add_test(pods, startup_gates_and_timeouts);
	tcase_add_test(pods, readiness_http_tcp_https);
	tcase_add_test(pods, kill_with_grace);
	tcase_add_test(pods, freeze_thaw_and_kill_fault);
	tcase_add_test(pods, network_cut_and_loss);
	tcase_add_test(pods, destroy_removes_everything);
	tcase_add_test(pods, image_binds_env_workdir);
	tcase_add_test(pods, remove_stale);
	tcase_add_test(pods, ipam_round_robin);
	suite_add_tcase(s, pods);

	/* Slow on first use: the fixture needs umoci, which image/tool.sh builds with Go. */
	tcase_add_unchecked_fixture(oci, bridge_setup, bridge_teardown);
	tcase_add_checked_fixture(oci, pods_setup, pods_cleanup);
	tcase_set_timeout(oci, 240);
	tcase_add_test(oci, oci_image_root);
	suite_add_tcase(s, oci);
	return s;
}

UNIT_MAIN(runtime_suite)

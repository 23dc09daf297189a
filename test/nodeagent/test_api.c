/*
 * Tests for the node agent's API half, the pure parts: Pod translation (containers, env,
 * probes, mounts), status JSON, downward-API fields, volume contents and the atomic
 * writer, ctl requests, /etc/hosts, the Node, Lease and PV objects, and the light mode's
 * simulated /v1/status (sim.h). No root, no API server: lookups are answered from
 * test/data/nodeagent/objects.json, tokens by a fake.
 * Golden files live in test/data/nodeagent/golden/; UPDATE_GOLDEN=1 rewrites them (review
 * the diff before committing).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/path.h"
#include "test/nodeagent/agent.h"
#include "test/nodeagent/kubelet.h"
#include "test/nodeagent/sim.h"
#include "test/unit/unit.h"

#define DATA   "test/data/nodeagent/"
#define GOLDEN DATA "golden/"

/* --- fixtures ---------------------------------------------------------------------------------- */

static json_t *objects;

static json_t *fake_get(void *ctx, const struct k8s_resource *res, const char *ns, const char *name)
{
	char key[512];

	(void)ctx;
	snprintf(key, sizeof(key), "%s/%s", ns ? ns : "", name);
	return json_incref(json_object_get(json_object_get(objects, res->plural), key));
}

static int fake_token(void *ctx, const char *aud, int64_t exp, char **out, struct err *e)
{
	(void)ctx;
	if (aud && !strcmp(aud, "fail"))
		return err_set(e, -EIO, "token request failed");
	*out = xasprintf("tok-%s-%lld", aud ? aud : "default", (long long)exp);
	return 0;
}

static const struct na_lookup lookup = { fake_get, fake_token, NULL };

static void ctx_init(struct na_pod_ctx *c, const char *pod_ip)
{
	memset(c, 0, sizeof(*c));
	c->node_name = "ro-node-1";
	c->host_ip = "10.240.0.1";
	c->pod_ip = pod_ip;
	c->service_host = "10.240.0.1";
	c->service_port = "6443";
	c->node_cpu_milli = 2000;
	c->node_memory = 8ULL << 30;
	c->node_storage = 100ULL << 30;
	c->lookup = &lookup;
}

static json_t *load(const char *path)
{
	json_error_t je;
	json_t *j = json_load_file(path, 0, &je);

	ck_assert_msg(j, "%s: %s", path, je.text);
	return j;
}

static void setup(void)
{
	objects = load(DATA "objects.json");
}

static void teardown(void)
{
	json_decref(objects);
	objects = NULL;
}

/* Compares got with the golden file (or rewrites it with UPDATE_GOLDEN=1). */
static void golden(const char *name, const char *got)
{
	char path[256], *want = NULL;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), GOLDEN "%s", name);
	if (getenv("UPDATE_GOLDEN")) {
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	f = fopen(path, "r");
	ck_assert_msg(f, "%s missing (UPDATE_GOLDEN=1 makes it)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	want = xcalloc((size_t)n + 1, 1);
	ck_assert_int_eq(fread(want, 1, (size_t)n, f), n);
	fclose(f);
	ck_assert_msg(!strcmp(want, got), "%s differs; got:\n%s", path, got);
	free(want);
}

/* --- spec dump: a readable text form of a struct rt_pod_spec ------------------------------------ */

static void dump_str(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		if ((unsigned char)*s < 0x20)
			buf_printf(b, "\\x%02x", (unsigned char)*s);
		else
			buf_append_char(b, *s);
	}
}

static void dump_strv(struct buf *b, const char *what, char **v)
{
	if (!v)
		return;
	buf_printf(b, "  %s:", what);
	for (; *v; v++) {
		buf_append_str(b, " [");
		dump_str(b, *v);
		buf_append_char(b, ']');
	}
	buf_append_char(b, '\n');
}

static void dump_probe(struct buf *b, const char *what, const struct rt_probe *p)
{
	static const char *const kinds[] = { "none", "http", "tcp", "exec" };

	if (p->kind == RT_PROBE_NONE)
		return;
	buf_printf(b,
	           "  %s: %s path=%s port=%d https=%d delay=%d period=%d timeout=%d ok=%d "
	           "fail=%d\n",
	           what, kinds[p->kind], p->path ? p->path : "-", p->port, p->https,
	           p->initial_delay_s, p->period_s, p->timeout_s, p->success_threshold,
	           p->failure_threshold);
	if (p->exec_argv)
		dump_strv(b, "  exec", p->exec_argv);
}

static void dump_container(struct buf *b, const char *what, size_t i, const struct rt_container *c)
{
	buf_printf(b, "%s[%zu] %s image=%s workdir=%s user=%ld group=%ld roroot=%d\n", what, i,
	           c->name, c->image, c->working_dir ? c->working_dir : "-", c->run_as_user,
	           c->run_as_group, c->read_only_root);
	dump_strv(b, "command", c->command);
	dump_strv(b, "args", c->args);
	for (size_t k = 0; k < c->n_env; k++) {
		buf_printf(b, "  env %s=", c->env[k].name);
		dump_str(b, c->env[k].value);
		buf_append_char(b, '\n');
	}
	for (size_t k = 0; k < c->n_mounts; k++)
		buf_printf(b, "  mount %s -> %s ro=%d sub=%s\n", c->mounts[k].volume,
		           c->mounts[k].mount_path, c->mounts[k].read_only,
		           c->mounts[k].sub_path ? c->mounts[k].sub_path : "-");
	dump_probe(b, "startup", &c->startup);
	dump_probe(b, "liveness", &c->liveness);
	dump_probe(b, "readiness", &c->readiness);
	dump_strv(b, "preStop", c->pre_stop_exec);
}

static char *spec_dump(const struct rt_pod_spec *s)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	buf_printf(&b, "uid=%s ns=%s name=%s restart=%d grace=%d fsGroup=%ld volumes=%zu\n", s->uid,
	           s->ns, s->name, s->restart_policy, s->grace_period_s, s->fs_group, s->n_volumes);
	for (size_t i = 0; i < s->n_init; i++)
		dump_container(&b, "init", i, &s->init[i]);
	for (size_t i = 0; i < s->n_containers; i++)
		dump_container(&b, "container", i, &s->containers[i]);
	return buf_detach(&b, NULL);
}

/* --- translation: golden cases ------------------------------------------------------------------ */

static const struct {
	const char *pod, *golden, *pod_ip;
} spec_goldens[] = {
	{ DATA "pods/full.json", "spec-full.txt", NULL },
	{ DATA "pods/full.json", "spec-full-ip.txt", "10.240.1.7" },
	{ DATA "pods/minimal.json", "spec-minimal.txt", NULL },
};

START_TEST(spec_golden)
{
	json_t *pod = load(spec_goldens[_i].pod);
	struct rt_pod_spec s;
	struct na_pod_ctx ctx;
	struct err e;
	char *text;

	ctx_init(&ctx, spec_goldens[_i].pod_ip);
	err_clear(&e);
	ck_assert_msg(na_pod_spec_build(pod, &ctx, &s, &e) == 0, "%s", e.msg);
	text = spec_dump(&s);
	golden(spec_goldens[_i].golden, text);
	free(text);
	rt_pod_spec_release(&s);
	json_decref(pod);
}
END_TEST

START_TEST(spec_fill_pod_ip)
{
	json_t *pod = load(DATA "pods/full.json");
	struct rt_pod_spec s;
	struct na_pod_ctx ctx;
	bool found = false;

	ctx_init(&ctx, NULL);
	ck_assert_int_eq(na_pod_spec_build(pod, &ctx, &s, NULL), 0);
	ck_assert(na_spec_fill_pod_ip(&s, "10.240.1.9"));
	for (size_t k = 0; k < s.containers[0].n_env; k++) {
		ck_assert(strcmp(s.containers[0].env[k].value, NA_POD_IP_MARK) != 0);
		found = found || !strcmp(s.containers[0].env[k].value, "10.240.1.9");
	}
	ck_assert(found);
	ck_assert(!na_spec_fill_pod_ip(&s, "10.240.1.10")); /* nothing left to fill */
	rt_pod_spec_release(&s);
	json_decref(pod);
}
END_TEST

/* --- translation: errors ------------------------------------------------------------------------ */

#define META "\"metadata\":{\"name\":\"p\",\"namespace\":\"ns1\",\"uid\":\"u1\"}"
#define C1   "\"name\":\"c\",\"image\":\"busybox:1\""

static const struct {
	const char *json;
	int rc;
	const char *msg;
} spec_errors[] = {
	{ "{" META ",\"spec\":{\"containers\":[]}}", -EINVAL, "at least one is required" },
	{ "{" META ",\"spec\":{}}", -EINVAL, "at least one is required" },
	{ "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{" C1 "}]}}", -EINVAL, "uid" },
	{ "{" META ",\"spec\":{\"restartPolicy\":\"Sometimes\",\"containers\":[{" C1 "}]}}",
	  -EINVAL, "restartPolicy" },
	{ "{" META ",\"spec\":{\"containers\":[{\"name\":\"c\"}]}}", -EINVAL,
	  "spec.containers[0]: image: required" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"command\":[1]}]}}", -EINVAL,
	  "expected string" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"secretKeyRef\":{\"name\":\"nope\",\"key\":\"k\"}}}]}]}}",
	  -ENOENT, "secret \"nope\" not found" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"secretKeyRef\":{\"name\":\"creds\",\"key\":\"k\"}}}]}]}}",
	  -ENOENT, "couldn't find key k in Secret ns1/creds" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"secretKeyRef\":{\"name\":\"creds\",\"key\":\"bad\"}}}]}]}}",
	  -EINVAL, "not valid base64" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"configMapKeyRef\":{\"name\":\"nocm\",\"key\":\"k\"}}}]}]}}",
	  -ENOENT, "configmap \"nocm\" not found" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"envFrom\":[{\"secretRef\":"
	  "{\"name\":\"nope\"}}]}]}}",
	  -ENOENT, "secret \"nope\" not found" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"envFrom\":[{\"prefix\":\"X\"}]}]}}",
	  -EINVAL, "envFrom[0]: neither configMapRef nor secretRef" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"fieldRef\":{\"fieldPath\":\"spec.nope\"}}}]}]}}",
	  -EINVAL, "unsupported field path" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"fieldRef\":{\"fieldPath\":\"metadata.labels\"}}}]}]}}",
	  -EINVAL, "unsupported field path" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1
	  ",\"env\":[{\"name\":\"X\",\"valueFrom\":{}}]}]}}",
	  -EINVAL, "no supported source" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"resourceFieldRef\":{\"resource\":\"limits.gpu\"}}}]}]}}",
	  -EINVAL, "unsupported resource" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"resourceFieldRef\":{\"resource\":\"limits.cpu\",\"divisor\":\"0\"}}}]}]}}",
	  -EINVAL, "divisor" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"name\":\"X\",\"valueFrom\":"
	  "{\"resourceFieldRef\":{\"containerName\":\"zz\",\"resource\":\"limits.cpu\"}}}]}]}}",
	  -EINVAL, "no container zz" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"env\":[{\"value\":\"v\"}]}]}}", -EINVAL,
	  "spec.containers[0]: env[0]: name: required" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"readinessProbe\":{\"httpGet\":"
	  "{\"port\":\"web\"}}}]}}",
	  -EINVAL, "no container port of that name" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"livenessProbe\":{\"tcpSocket\":"
	  "{\"port\":70000}}}]}}",
	  -EINVAL, "not 1..65535" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"livenessProbe\":{\"periodSeconds\":1}}]}}",
	  -EINVAL, "no exec, httpGet, tcpSocket or grpc handler" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"livenessProbe\":{\"exec\":{\"command\":"
	  "[\"x\"]},\"periodSeconds\":-1}}]}}",
	  -EINVAL, "livenessProbe: periodSeconds: -1 is out of range" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1
	  ",\"lifecycle\":{\"preStop\":{\"sleep\":{}}}}]}}",
	  -EINVAL, "lifecycle.preStop: sleep.seconds: required" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"volumeMounts\":[{\"name\":\"v\","
	  "\"mountPath\":\"/v\",\"subPathExpr\":\"$(X)\"}]}]}}",
	  -EINVAL, "subPathExpr" },
	{ "{" META ",\"spec\":{\"containers\":[{" C1 ",\"volumeMounts\":[{\"name\":\"v\"}]}]}}",
	  -EINVAL, "volumeMounts[0]: mountPath: required" },
	{ "{" META ",\"spec\":{\"securityContext\":{\"runAsUser\":-5},\"containers\":[{" C1 "}]}}",
	  -EINVAL, "out of range" },
};

START_TEST(spec_error_table)
{
	json_t *pod = NULL;
	struct rt_pod_spec s;
	struct na_pod_ctx ctx;
	struct err e;
	int rc;

	err_clear(&e);
	ck_assert_int_eq(
	        jsonx_loadb(spec_errors[_i].json, strlen(spec_errors[_i].json), 1 << 20, &pod, &e),
	        0);
	ctx_init(&ctx, NULL);
	memset(&s, 0x5a, sizeof(s)); /* untouched on failure */
	rc = na_pod_spec_build(pod, &ctx, &s, &e);
	ck_assert_msg(rc == spec_errors[_i].rc, "case %d: rc %d (%s) want %d", _i, rc, e.msg,
	              spec_errors[_i].rc);
	ck_assert_msg(strstr(e.msg, spec_errors[_i].msg), "case %d: \"%s\" lacks \"%s\"", _i, e.msg,
	              spec_errors[_i].msg);
	ck_assert_int_eq(s.n_containers, 0x5a5a5a5a5a5a5a5aULL);
	json_decref(pod);
}
END_TEST

/* --- field and resource references ------------------------------------------------------------- */

static const struct {
	const char *path;
	bool for_volume;
	int rc;
	const char *want;
} field_cases[] = {
	{ "metadata.name", false, 0, "web-0" },
	{ "metadata.namespace", false, 0, "ns1" },
	{ "metadata.uid", false, 0, "0b1c2d3e-0000-4000-8000-000000000001" },
	{ "metadata.labels['tier']", false, 0, "front" },
	{ "metadata.labels[\"app\"]", false, 0, "web" },
	{ "metadata.labels['absent']", false, 0, "" },
	{ "metadata.annotations['note']", false, 0, "hi \"there\"" },
	{ "metadata.labels", true, 0, "app=\"web\"\ntier=\"front\"\n" },
	{ "metadata.annotations", true, 0, "note=\"hi \\\"there\\\"\"\n" },
	{ "metadata.labels", false, -EINVAL, NULL },
	{ "metadata.labels['x", false, -EINVAL, NULL },
	{ "metadata.labels[x]", false, -EINVAL, NULL },
	{ "spec.nodeName", false, 0, "ro-node-1" },
	{ "spec.serviceAccountName", false, 0, "builder" },
	{ "status.hostIP", false, 0, "10.240.0.1" },
	{ "status.hostIPs", false, 0, "10.240.0.1" },
	{ "status.podIP", false, 0, "10.240.1.5" },
	{ "status.podIPs", false, 0, "10.240.1.5" },
	{ "status.phase", false, -EINVAL, NULL },
	{ "", false, -EINVAL, NULL },
};

START_TEST(field_ref_table)
{
	json_t *pod = load(DATA "pods/full.json");
	struct na_pod_ctx ctx;
	struct err e;
	char *out = NULL;
	int rc;

	ctx_init(&ctx, "10.240.1.5");
	err_clear(&e);
	rc = na_field_ref(pod, field_cases[_i].path, &ctx, field_cases[_i].for_volume, &out, &e);
	ck_assert_msg(rc == field_cases[_i].rc, "%s: rc %d", field_cases[_i].path, rc);
	if (!rc)
		ck_assert_str_eq(out, field_cases[_i].want);
	free(out);
	json_decref(pod);
}
END_TEST

static const struct {
	const char *ref, *def_ctr;
	int rc;
	const char *want;
} resource_cases[] = {
	{ "{\"resource\":\"limits.cpu\"}", "app", 0, "2" }, /* 1500m, divisor 1: up */
	{ "{\"resource\":\"limits.cpu\",\"divisor\":\"1m\"}", "app", 0, "1500" },
	{ "{\"resource\":\"requests.cpu\",\"divisor\":\"100m\"}", "app", 0, "3" },
	{ "{\"resource\":\"limits.memory\",\"divisor\":\"1Mi\"}", "app", 0, "100" },
	{ "{\"resource\":\"requests.memory\"}", "app", 0, "0" },
	{ "{\"resource\":\"limits.memory\",\"divisor\":\"1Gi\"}", "side", 0, "8" }, /* the node's */
	{ "{\"resource\":\"limits.cpu\"}", "side", 0, "2" },
	{ "{\"resource\":\"limits.ephemeral-storage\",\"divisor\":\"1Gi\"}", "side", 0, "100" },
	{ "{\"containerName\":\"init\",\"resource\":\"limits.cpu\",\"divisor\":\"1m\"}", NULL, 0,
	  "2000" },
	{ "{\"resource\":\"limits.cpu\"}", NULL, -EINVAL, NULL }, /* volumes need a name */
	{ "{\"resource\":\"limits.cpu\",\"divisor\":\"-1\"}", "app", -EINVAL, NULL },
	{ "{\"resource\":\"limits.memory\",\"divisor\":\"0\"}", "app", -EINVAL, NULL },
	{ "{\"resource\":\"limits.memory\",\"divisor\":\"x\"}", "app", -EINVAL, NULL },
	{ "{\"resource\":\"limits.pods\"}", "app", -EINVAL, NULL },
	{ "{}", "app", -EINVAL, NULL },
};

START_TEST(resource_ref_table)
{
	json_t *pod = load(DATA "pods/full.json"),
	       *ref = json_loads(resource_cases[_i].ref, 0, NULL);
	struct na_pod_ctx ctx;
	char *out = NULL;
	int rc;

	ctx_init(&ctx, NULL);
	rc = na_resource_ref(pod, ref, resource_cases[_i].def_ctr, &ctx, &out, NULL);
	ck_assert_msg(rc == resource_cases[_i].rc, "%s: rc %d", resource_cases[_i].ref, rc);
	if (!rc)
		ck_assert_str_eq(out, resource_cases[_i].want);
	free(out);
	json_decref(ref);
	json_decref(pod);
}
END_TEST

/* --- status ---------------------------------------------------------------------------------- */

#define T0 1795977777000LL /* 2026-11-29T..., any fixed wall time */

static void state_set(struct rt_ctr_state *s, enum rt_state kind, const char *reason, int code,
                      int sig, int64_t started, int64_t finished)
{
	s->kind = kind;
	s->reason = reason ? xstrdup(reason) : NULL;
	s->exit_code = code;
	s->signal = sig;
	s->started_at_ms = started;
	s->finished_at_ms = finished;
}

static void ctr_set(struct rt_ctr_status *c, const char *name, const char *image, bool ready,
                    int restarts, pid_t pid)
{
	c->name = xstrdup(name);
	c->image = xstrdup(image);
	c->ready = c->started = ready;
	c->restart_count = restarts;
	c->pid = pid;
}

/* The pod of full.json in the middle of its life: init done, app running and ready, side
 * waiting in back-off after being killed. */
static void status_running(struct rt_pod_status *st, bool side_ready)
{
	memset(st, 0, sizeof(*st));
	st->phase = RT_PHASE_RUNNING;
	snprintf(st->pod_ip, sizeof(st->pod_ip), "10.240.1.7");
	st->initialized = true;
	st->n_init = 1;
	st->n_containers = 2;
	st->init = xcalloc(2, sizeof(*st->init));
	st->containers = xcalloc(3, sizeof(*st->containers));
	ctr_set(&st->init[0], "init", "busybox:1", true, 0, 0);
	state_set(&st->init[0].state, RT_STATE_TERMINATED, "Completed", 0, 0, T0, T0 + 100);
	ctr_set(&st->containers[0], "app", "redis:7", true, 0, 42);
	state_set(&st->containers[0].state, RT_STATE_RUNNING, NULL, 0, 0, T0 + 200, 0);
	ctr_set(&st->containers[1], "side", "busybox:1", true, 3, 0);
	st->containers[1].ready = side_ready;
	state_set(&st->containers[1].state, RT_STATE_WAITING, "CrashLoopBackOff", 0, 0, 0, 0);
	state_set(&st->containers[1].last_state, RT_STATE_TERMINATED, "Error", 137, 9, T0 + 200,
	          T0 + 900);
}

static char *status_text(json_t *pod, const struct rt_pod_status *rt, const char *reason,
                         const char *msg, struct na_cond *conds, struct na_ctr_ids *ids,
                         size_t n_ids, int64_t now)
{
	struct na_status_in in = { pod, rt, "10.240.0.1", reason, msg, T0, now };
	json_t *st = na_status_build(&in, conds, ids, n_ids);
	char *text = jsonx_dumps_compact(st), *line = xasprintf("%s\n", text);

	json_decref(st);
	free(text);
	return line;
}

START_TEST(status_waiting_golden)
{
	json_t *pod = load(DATA "pods/full.json");
	struct na_cond conds[NA_CONDS] = { 0 };
	char *text = status_text(pod, NULL, "CreateContainerConfigError",
	                         "secret \"creds\" not found", conds, NULL, 0, T0 + 50);

	golden("status-waiting.json", text);
	free(text);
	text = status_text(pod, NULL, NULL, NULL, conds, NULL, 0, T0 + 60);
	ck_assert(strstr(text, "\"reason\":\"PodInitializing\"")); /* init containers wait so */
	ck_assert(strstr(text, "\"reason\":\"ContainerCreating\""));
	free(text);
	json_decref(pod);
}
END_TEST

START_TEST(status_running_golden)
{
	json_t *pod = load(DATA "pods/full.json");
	struct na_cond conds[NA_CONDS] = { 0 };
	struct na_ctr_ids ids[3] = { 0 };
	struct rt_pod_status st;
	char *text;

	status_running(&st, true); /* the runtime says ready: the status must not */
	text = status_text(pod, &st, NULL, NULL, conds, ids, 3, T0 + 1000);
	golden("status-running.json", text);
	ck_assert_int_eq(ids[1].cur, 42);
	free(text);
	rt_pod_status_release(&st);
	json_decref(pod);
}
END_TEST

START_TEST(status_transitions)
{
	json_t *pod = load(DATA "pods/full.json");
	struct na_cond conds[NA_CONDS] = { 0 };
	struct na_ctr_ids ids[3] = { 0 };
	struct rt_pod_status st;
	int64_t since;
	char *text;

	status_running(&st, false);
	free(status_text(pod, &st, NULL, NULL, conds, ids, 3, T0 + 1000));
	since = conds[NA_COND_READY].since_ms;
	ck_assert(!conds[NA_COND_READY].value);
	free(status_text(pod, &st, NULL, NULL, conds, ids, 3, T0 + 5000));
	ck_assert_int_eq(conds[NA_COND_READY].since_ms, since); /* no change, same time */
	/* side runs again as pid 43 and is ready: Ready flips, containerIDs move on */
	free(st.containers[1].state.reason);
	st.containers[1].state.reason = NULL;
	state_set(&st.containers[1].state, RT_STATE_RUNNING, NULL, 0, 0, T0 + 6000, 0);
	st.containers[1].pid = 43;
	st.containers[1].ready = true;
	ids[2].cur = 41; /* the killed instance */
	text = status_text(pod, &st, NULL, NULL, conds, ids, 3, T0 + 7000);
	ck_assert(conds[NA_COND_READY].value);
	ck_assert_int_eq(conds[NA_COND_READY].since_ms, T0 + 7000);
	ck_assert_int_eq(ids[2].prev, 41);
	ck_assert_msg(strstr(text, "\"containerID\":\"nodeagent://41\",\"exitCode\":137"), "%s",
	              text);
	free(text);
	st.phase = RT_PHASE_SUCCEEDED;
	text = status_text(pod, &st, NULL, NULL, conds, ids, 3, T0 + 8000);
	ck_assert(!conds[NA_COND_READY].value);
	ck_assert(strstr(text, "\"reason\":\"PodCompleted\""));
	free(text);
	rt_pod_status_release(&st);
	json_decref(pod);
}
END_TEST

/* --- volume contents ----------------------------------------------------------------------------- */

static const struct {
	const char *vol;
	int rc;
	const char *want; /* "path mode len data;" per file, or the error substring */
} volume_cases[] = {
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"creds\",\"items\":[{\"key\":\"pass\","
	  "\"path\":\"a/p\",\"mode\":256}]}}",
	  0, "a/p 400 7 s$3cret;" },
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"envsec\",\"defaultMode\":384}}", 0,
	  "1bad 600 1 3;A 600 1 1;B-C 600 1 2;D 600 7 $(HOME);" },
	{ "{\"name\":\"v\",\"configMap\":{\"name\":\"cfg\"}}", 0,
	  "bin 644 3 \\x00\\x01\\x02;conf.d 644 4 x=1\\x0a;mode 644 4 fast;" },
	{ "{\"name\":\"v\",\"configMap\":{\"name\":\"nocm\",\"optional\":true}}", 0, "" },
	{ "{\"name\":\"v\",\"configMap\":{\"name\":\"cfg\",\"optional\":true,\"items\":"
	  "[{\"key\":\"nokey\",\"path\":\"x\"}]}}",
	  0, "" },
	{ "{\"name\":\"v\",\"downwardAPI\":{\"items\":[{\"path\":\"labels\",\"fieldRef\":"
	  "{\"fieldPath\":\"metadata.labels\"}},{\"path\":\"mem\",\"resourceFieldRef\":"
	  "{\"containerName\":\"app\",\"resource\":\"limits.memory\",\"divisor\":\"1Mi\"}}]}}",
	  0, "labels 644 23 app=\"web\"\\x0atier=\"front\"\\x0a;mem 644 3 100;" },
	{ "{\"name\":\"v\",\"projected\":{\"defaultMode\":420,\"sources\":["
	  "{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},"
	  "{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\","
	  "\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\","
	  "\"fieldRef\":{\"fieldPath\":\"metadata.namespace\"}}]}}]}}",
	  0,
	  "ca.crt 644 59 -----BEGIN CERTIFICATE-----\\x0aMIIB\\x0a-----END CERTIFICATE-----"
	  "\\x0a;namespace 644 3 ns1;token 644 16 tok-default-3607;" },
	{ "{\"name\":\"v\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"audience\":"
	  "\"vault\",\"expirationSeconds\":60,\"path\":\"t\"}},{\"secret\":{\"name\":\"creds\","
	  "\"items\":[{\"key\":\"user\",\"path\":\"t\"}]}}]}}",
	  0, "t 644 5 admin;" }, /* a later source wins a path; expiration at least 600 */
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"nope\"}}", -ENOENT,
	  "secret \"nope\" not found" },
	{ "{\"name\":\"v\",\"configMap\":{\"name\":\"cfg\",\"items\":[{\"key\":\"nokey\","
	  "\"path\":\"x\"}]}}",
	  -ENOENT, "configmap key nokey: not found" },
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"creds\"}}", -EINVAL, "bad base64" },
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"creds\",\"items\":[{\"key\":\"user\","
	  "\"path\":\"../x\"}]}}",
	  -EINVAL, "must be relative" },
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"creds\",\"items\":[{\"key\":\"user\","
	  "\"path\":\"a/../../x\"}]}}",
	  -EINVAL, "must be relative" },
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"creds\",\"items\":[{\"key\":\"user\","
	  "\"path\":\"/abs\"}]}}",
	  -EINVAL, "must be relative" },
	{ "{\"name\":\"v\",\"secret\":{\"secretName\":\"creds\",\"items\":[{\"key\":\"user\","
	  "\"path\":\"x\",\"mode\":4096}]}}",
	  -EINVAL, "out of range" },
	{ "{\"name\":\"v\",\"projected\":{\"sources\":[{\"serviceAccountToken\":{\"audience\":"
	  "\"fail\",\"path\":\"t\"}}]}}",
	  -EIO, "token request failed" },
	{ "{\"name\":\"v\",\"projected\":{\"sources\":[{\"clusterTrustBundle\":{}}]}}", -EINVAL,
	  "unsupported kind" },
	{ "{\"name\":\"v\",\"downwardAPI\":{\"items\":[{\"path\":\"x\"}]}}", -EINVAL,
	  "no fieldRef" },
	{ "{\"name\":\"v\",\"emptyDir\":{}}", -EINVAL, "not a content volume" },
};

static char *files_text(const struct na_files *f)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < f->n; i++) {
		buf_printf(&b, "%s %o %zu ", f->v[i].path, f->v[i].mode, f->v[i].len);
		for (size_t k = 0; k < f->v[i].len; k++) {
			unsigned char c = (unsigned char)f->v[i].data[k];

			if (c < 0x20)
				buf_printf(&b, "\\x%02x", c);
			else
				buf_append_char(&b, (char)c);
		}
		buf_append_char(&b, ';');
	}
	return buf_detach(&b, NULL);
}

START_TEST(volume_files_table)
{
	json_t *pod = load(DATA "pods/full.json"), *vol = json_loads(volume_cases[_i].vol, 0, NULL);
	struct na_files f = { NULL, 0 };
	struct na_pod_ctx ctx;
	struct err e;
	char *text;
	int rc;

	ck_assert_ptr_nonnull(vol);
	ctx_init(&ctx, NULL);
	err_clear(&e);
	rc = na_volume_files(vol, pod, &ctx, &f, &e);
	ck_assert_msg(rc == volume_cases[_i].rc, "case %d: rc %d (%s)", _i, rc, e.msg);
	if (rc) {
		ck_assert_msg(strstr(e.msg, volume_cases[_i].want), "case %d: %s", _i, e.msg);
	} else {
		text = files_text(&f);
		ck_assert_str_eq(text, volume_cases[_i].want);
		free(text);
	}
	ck_assert(na_volume_is_content(vol) == (_i != ARRAY_LEN(volume_cases) - 1));
	na_files_release(&f);
	json_decref(vol);
	json_decref(pod);
}
END_TEST

/* --- the atomic writer --------------------------------------------------------------------------- */

static void files_add_test(struct na_files *f, const char *path, const char *data, int mode)
{
	f->v = xreallocarray(f->v, f->n + 1, sizeof(*f->v));
	f->v[f->n].path = xstrdup(path);
	f->v[f->n].data = xstrdup(data);
	f->v[f->n].len = strlen(data);
	f->v[f->n].mode = mode;
	f->n++;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[256] = "";
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	return xstrndup(buf, n);
}

static void assert_file(const char *dir, const char *path, const char *want, int mode)
{
	char *p = xasprintf("%s/%s", dir, path), *got = read_all(p);
	struct stat st;

	ck_assert_msg(got && !strcmp(got, want), "%s: \"%s\" want \"%s\"", p, got ? got : "(none)",
	              want);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, mode);
	free(got);
	free(p);
}

static bool exists(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	struct stat st;
	bool ok = lstat(p, &st) == 0;

	free(p);
	return ok;
}

static char *data_target(const char *dir)
{
	char *p = xasprintf("%s/..data", dir), buf[256];
	ssize_t n = readlink(p, buf, sizeof(buf) - 1);

	free(p);
	return n > 0 ? xstrndup(buf, (size_t)n) : NULL;
}

START_TEST(volume_writer)
{
	char tmpl[] = "/tmp/na-vol-XXXXXX", *dir, *old, *cur, *oldpath;
	struct na_files a = { NULL, 0 }, b = { NULL, 0 };
	struct err e;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	dir = xasprintf("%s/vol", tmpl);
	files_add_test(&a, "a/b", "nested", 0600);
	files_add_test(&a, "key", "one", 0644);
	files_add_test(&a, "gone", "x", 0644);
	err_clear(&e);
	ck_assert_msg(na_volume_write(dir, &a, -1, &e) == 0, "%s", e.msg);
	assert_file(dir, "key", "one", 0644);
	assert_file(dir, "a/b", "nested", 0600);
	assert_file(dir, "gone", "x", 0644);
	old = data_target(dir);
	ck_assert(old && !strncmp(old, "..", 2));
	files_add_test(&b, "a/b", "nested", 0600);
	files_add_test(&b, "key", "two", 0640);
	ck_assert(!na_files_equal(&a, &b));
	ck_assert_msg(na_volume_write(dir, &b, -1, &e) == 0, "%s", e.msg);
	assert_file(dir, "key", "two", 0640);
	ck_assert(!exists(dir, "gone"));
	cur = data_target(dir);
	ck_assert(cur && strcmp(cur, old));
	oldpath = xasprintf("%s/%s", dir, old);
	ck_assert_msg(access(oldpath, F_OK) < 0, "%s still there", oldpath);
	ck_assert(!exists(dir, "..data_tmp"));
	ck_assert(na_files_equal(&b, &b));
	ck_assert_int_eq(na_rmtree(tmpl), 0);
	ck_assert(access(tmpl, F_OK) < 0);
	ck_assert_int_eq(na_rmtree(tmpl), 0); /* a missing tree is no error */
	free(oldpath);
	free(old);
	free(cur);
	free(dir);
	na_files_release(&a);
	na_files_release(&b);
}
END_TEST

START_TEST(volume_writer_errors)
{
	struct na_files a = { NULL, 0 };
	struct err e;

	files_add_test(&a, "k", "v", 0644);
	err_clear(&e);
	ck_assert_int_lt(na_volume_write("/proc/na-no/such", &a, -1, &e), 0);
	ck_assert(e.msg[0]);
	na_files_release(&a);
}
END_TEST

/* --- ctl requests ------------------------------------------------------------------------------- */

static const struct {
	const char *argv[4];
	int argc, rc;
	const char *want; /* compact JSON, or a substring of the error */
} ctl_cases[] = {
	{ { "kill", "ns/p", "c" }, 3, 0, "{\"container\":\"c\",\"op\":\"kill\",\"pod\":\"ns/p\"}" },
	{ { "freeze", "ns/p" }, 2, 0, "{\"op\":\"freeze\",\"pod\":\"ns/p\"}" },
	{ { "net-loss", "ns/p", "30" },
	  3,
	  0,
	  "{\"op\":\"net-loss\",\"percent\":30,\"pod\":\"ns/p\"}" },
	{ { "net-delay", "ns/p", "250" },
	  3,
	  0,
	  "{\"ms\":250,\"op\":\"net-delay\",\"pod\":\"ns/p\"}" },
	{ { "node-lose", "ro-node-1" }, 2, 0, "{\"node\":\"ro-node-1\",\"op\":\"node-lose\"}" },
	{ { "pods" }, 1, 0, "{\"op\":\"pods\"}" },
	{ { "net-loss", "ns/p", "101" }, 3, -EINVAL, "percent: missing or out of range" },
	{ { "net-loss", "ns/p", "x" }, 3, -EINVAL, "percent" },
	{ { "kill", "ns/p" }, 2, -EINVAL, "usage: nodeagent ctl" },
	{ { "thaw", "ns/p", "extra" }, 3, -EINVAL, "usage" },
	{ { "explode" }, 1, -EINVAL, "node-restore node" },
	{ { "kill", "", "c" }, 3, -EINVAL, "kill pod" },
	{ { NULL }, 0, -EINVAL, "usage" },
};

START_TEST(ctl_request_table)
{
	json_t *req = NULL;
	struct err e;
	char *text;
	int rc;

	err_clear(&e);
	rc = na_ctl_request(ctl_cases[_i].argc, (char **)ctl_cases[_i].argv, &req, &e);
	ck_assert_msg(rc == ctl_cases[_i].rc, "case %d: rc %d (%s)", _i, rc, e.msg);
	if (rc) {
		ck_assert_msg(strstr(e.msg, ctl_cases[_i].want), "case %d: %s", _i, e.msg);
		return;
	}
	text = jsonx_dumps_compact(req);
	ck_assert_str_eq(text, ctl_cases[_i].want);
	free(text);
	json_decref(req);
}
END_TEST

/* --- objects: hosts, Node, Lease, PV ------------------------------------------------------------ */

START_TEST(hosts_golden)
{
	json_t *pod = load(DATA "pods/full.json");
	char *text;

	json_object_set_new(
	        json_object_get(pod, "spec"), "hostAliases",
	        json_pack("[{s:s, s:[s, s]}]", "ip", "10.0.0.9", "hostnames", "db", "db.local"));
	text = na_hosts_file(pod, "10.240.1.7");
	golden("hosts-aliases.txt", text);
	free(text);
	json_object_set_new(json_object_get(pod, "spec"), "hostname", json_string("h"));
	json_object_set_new(json_object_get(pod, "spec"), "subdomain", json_string("sub"));
	text = na_hosts_file(pod, "10.240.1.7");
	ck_assert(strstr(text, "\n10.240.1.7\th.sub.ns1.svc.cluster.local\th\n"));
	free(text);
	json_decref(pod);
}
END_TEST

static void golden_json(const char *name, json_t *j)
{
	char *text = jsonx_dumps_compact(j), *line = xasprintf("%s\n", text);

	golden(name, line);
	free(line);
	free(text);
}

/* --- kubelet.c: the containerLogs options and the tail offset --------------------------- */

static const char *query_of(void *ctx, const char *name)
{
	const char *const *kv = ctx;

	for (; kv[0]; kv += 2)
		if (strcmp(kv[0], name) == 0)
			return kv[1];
	return NULL;
}

static const struct {
	const char *q[8];
	int rc;
	bool previous;
	int64_t tail, limit;
	const char *msg; /* what the refusal says (a substring) */
} log_opts_cases[] = {
	{ { NULL }, 0, false, -1, -1, NULL },
	{ { "tailLines", "3", "limitBytes", "10", "previous", "true", NULL },
	  0,
	  true,
	  3,
	  10,
	  NULL },
	{ { "tailLines", "0", "follow", "false", "timestamps", "false", NULL },
	  0,
	  false,
	  0,
	  -1,
	  NULL },
	{ { "stream", "All", "unknown", "x", NULL }, 0, false, -1, -1, NULL },
	{ { "follow", "true", "tailLines", "1", NULL }, 0, false, 1, -1, NULL },
	{ { "timestamps", "true", NULL },
	  -EINVAL,
	  false,
	  0,
	  0,
	  "timestamps=true: the node agent keeps no time" },
	{ { "sinceSeconds", "10", NULL }, -EINVAL, false, 0, 0, "sinceSeconds=10:" },
	{ { "sinceTime", "2026-12-07T00:00:00Z", NULL }, -EINVAL, false, 0, 0, "sinceTime=" },
	{ { "stream", "Stdout", NULL },
	  -EINVAL,
	  false,
	  0,
	  0,
	  "stream=Stdout: stdout and stderr share" },
	{ { "tailLines", "-1", NULL }, -EINVAL, false, 0, 0, "tailLines:" },
	{ { "tailLines", "x", NULL }, -EINVAL, false, 0, 0, "tailLines:" },
	{ { "limitBytes", "0", NULL }, -EINVAL, false, 0, 0, "limitBytes:" },
	{ { "previous", "maybe", NULL }, -EINVAL, false, 0, 0, "previous:" },
	{ { "follow", "nope", NULL }, -EINVAL, false, 0, 0, "follow: " },
};

START_TEST(kubelet_log_opts_table)
{
	struct na_log_opts o = {
		.previous = true, .follow = true, .tail_lines = 99, .limit_bytes = 99
	};
	const char *follow = query_of((void *)log_opts_cases[_i].q, "follow");
	char msg[256] = "";
	int rc = na_log_opts_parse(query_of, (void *)log_opts_cases[_i].q, &o, msg, sizeof(msg));

	ck_assert_int_eq(rc, log_opts_cases[_i].rc);
	if (rc == 0) {
		ck_assert(o.previous == log_opts_cases[_i].previous);
		ck_assert(o.follow == (follow && strcmp(follow, "true") == 0));
		ck_assert_int_eq(o.tail_lines, log_opts_cases[_i].tail);
		ck_assert_int_eq(o.limit_bytes, log_opts_cases[_i].limit);
	} else {
		ck_assert_msg(strstr(msg, log_opts_cases[_i].msg), "%s", msg);
	}
}
END_TEST

/* The offset of the last n lines of text, through a file. */
static off_t tail_of(const char *text, int64_t n)
{
	char path[] = "/tmp/na-tail-XXXXXX";
	int fd = mkstemp(path);
	off_t off;

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	off = na_log_tail_offset(fd, (off_t)strlen(text), n);
	close(fd);
	return off;
}

START_TEST(kubelet_tail_offset)
{
	struct buf big = BUF_INIT(1 << 20);

	ck_assert_int_eq(tail_of("a\nb\nc\n", 1), 4);
	ck_assert_int_eq(tail_of("a\nb\nc\n", 2), 2);
	ck_assert_int_eq(tail_of("a\nb\nc\n", 3), 0);
	ck_assert_int_eq(tail_of("a\nb\nc\n", 10), 0);
	ck_assert_int_eq(tail_of("a\nb\nc\n", 0), 6);
	ck_assert_int_eq(tail_of("a\nb\nc", 1), 4); /* a last line without its newline */
	ck_assert_int_eq(tail_of("a\n\n\n", 2), 2); /* empty lines count */
	ck_assert_int_eq(tail_of("", 5), 0);
	/* across the 64 KiB chunks: 20000 lines of 9 bytes, the last 15000 */
	for (int i = 0; i < 20000; i++)
		buf_printf(&big, "line%04d\n", i % 10000);
	ck_assert_int_eq(tail_of(buf_cstr(&big), 15000), 5000 * 9);
	buf_release(&big);
}
END_TEST

START_TEST(node_status_kubelet_endpoint)
{
	struct agent ag;
	char name[] = "ro-node-1", ip[] = "10.240.0.1";
	struct na_node n = { .name = name };
	json_t *st;

	memset(&ag, 0, sizeof(ag));
	ag.set.host_ip = ip;
	ag.kubelet_port = 41234;
	st = na_node_status(&ag, &n, T0);
	ck_assert_int_eq(
	        json_integer_value(jsonx_get(st, "status.daemonEndpoints.kubeletEndpoint.Port")),
	        41234);
	ck_assert_str_eq(json_string_value(jsonx_get(st, "status.addresses[0].type")),
	                 "InternalIP");
	ck_assert_str_eq(json_string_value(jsonx_get(st, "status.addresses[0].address")),
	                 "10.240.0.1");
	/* no Hostname address the API server would try first: a delete directive */
	ck_assert_str_eq(json_string_value(jsonx_get(st, "status.addresses[1].$patch")), "delete");
	json_decref(st);
}
END_TEST

START_TEST(node_objects_golden)
{
	json_t *n = na_node_object("ro-node-1", "nodeagent-it/private=7:NoSchedule");
	json_t *plain = na_node_object("ro-node-2", NULL);
	json_t *bare = na_node_object("ro-node-3", "key:NoExecute");
	json_t *lease = na_lease_object("ro-node-1", "uid-1", 40, T0);

	json_object_del(json_object_get(jsonx_get(n, "metadata"), "labels"), "kubernetes.io/arch");
	golden_json("node-taint.json", n);
	ck_assert_ptr_null(jsonx_get(plain, "spec.taints"));
	ck_assert_str_eq(json_string_value(jsonx_get(bare, "spec.taints[0].key")), "key");
	ck_assert_ptr_null(jsonx_get(bare, "spec.taints[0].value"));
	ck_assert_str_eq(json_string_value(jsonx_get(bare, "spec.taints[0].effect")), "NoExecute");
	golden_json("lease.json", lease);
	json_decref(n);
	json_decref(plain);
	json_decref(bare);
	json_decref(lease);
}
END_TEST

START_TEST(pv_object_golden)
{
	json_t *pvc = json_pack("{s:{s:s, s:s, s:s}, s:{s:[s], s:{s:{s:s}}, s:s}}", "metadata",
	                        "name", "data", "namespace", "ns1", "uid", "u-9", "spec",
	                        "accessModes", "ReadWriteOnce", "resources", "requests", "storage",
	                        "1Gi", "volumeMode", "Filesystem");
	json_t *pv = na_pv_object(pvc, "/state/pvs/ns1/u-9", "ro-node-2", "ro-node");
	json_t *sc = na_storage_class_object();

	golden_json("pv.json", pv);
	ck_assert(na_pv_is_ours(pv, "/state", "ro-node"));
	json_decref(pv);
	json_object_del(json_object_get(pvc, "spec"), "accessModes");
	pv = na_pv_object(pvc, "/d", "n", "a");
	ck_assert_str_eq(json_string_value(jsonx_get(pv, "spec.accessModes[0]")), "ReadWriteOnce");
	json_decref(pv);
	json_decref(pvc);
	ck_assert_str_eq(json_string_value(jsonx_get(sc, "volumeBindingMode")),
	                 "WaitForFirstConsumer");
	ck_assert(json_is_true(jsonx_get(sc, "allowVolumeExpansion")));
	json_decref(sc);
}
END_TEST

/* The agent's id: the node prefix as a label value. */
START_TEST(agent_id_table)
{
	static const char *const cases[][2] = {
		{ "ro-node-", "ro-node" },
		{ "cit274665-node-", "cit274665-node" },
		{ "na-it-42-", "na-it-42" },
		{ "-x.y-", "x.y" },
		{ "---", "nodeagent" },
		{ "", "nodeagent" },
		{ "a.b_c-", "a.b_c" },
		{ "0123456789012345678901234567890123456789012345678901234567890123456789",
		  "012345678901234567890123456789012345678901234567890123456789012" },
		{ "012345678901234567890123456789012345678901234567890123456789-.-x",
		  "012345678901234567890123456789012345678901234567890123456789" },
	};
	char id[NA_AGENT_ID_SIZE];

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		na_agent_id(cases[i][0], id);
		ck_assert_msg(strcmp(id, cases[i][1]) == 0, "%s: got %s, want %s", cases[i][0], id,
		              cases[i][1]);
	}
	na_agent_id(NULL, id);
	ck_assert_str_eq(id, "nodeagent");
}
END_TEST

/* Which PVCs a provisioner acts on: the selected Node's (WaitForFirstConsumer). */
START_TEST(pvc_selected_node_table)
{
	static const struct {
		const char *json, *want;
	} cases[] = {
		{ "{}", NULL }, /* no consumer scheduled yet */
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/"
		  "selected-node\":\"n1\"}}}",
		  "n1" },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}},"
		  "\"spec\":{\"storageClassName\":\"nodeagent-local\"}}",
		  "n1" },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}},"
		  "\"spec\":{\"storageClassName\":\"other\"}}",
		  NULL },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"}},"
		  "\"spec\":{\"volumeName\":\"pvc-1\"}}",
		  NULL }, /* bound */
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\"},"
		  "\"deletionTimestamp\":\"2026-11-29T18:30:20Z\"}}",
		  NULL },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\","
		  "\"volume.kubernetes.io/storage-provisioner\":\"redis-operator.test/"
		  "nodeagent\"}}}",
		  "n1" },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\","
		  "\"volume.kubernetes.io/storage-provisioner\":\"csi.example\"}}}",
		  NULL },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"n1\","
		  "\"volume.beta.kubernetes.io/storage-provisioner\":\"csi.example\"}}}",
		  NULL },
		{ "{\"metadata\":{\"annotations\":{\"volume.kubernetes.io/selected-node\":\"\"}}}",
		  NULL },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		json_t *pvc = json_loads(cases[i].json, 0, NULL);
		const char *got;

		ck_assert_ptr_nonnull(pvc);
		got = na_pvc_selected_node(pvc);
		ck_assert_msg(cases[i].want ? got && strcmp(got, cases[i].want) == 0 : !got,
		              "case %zu: got %s", i, got ? got : "(null)");
		json_decref(pvc);
	}
}
END_TEST

/* Clean-up only ever touches what this agent made. */
START_TEST(pv_ownership_table)
{
	static const struct {
		const char *labels, *path;
		bool ours;
	} cases[] = {
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\","
		  "\"nodeagent.redis-operator.test/agent\":\"me\"}",
		  "/s/pvs/ns/u", true },
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\"}", "/s/pvs/ns/u",
		  true }, /* an older agent's, in our state */
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\","
		  "\"nodeagent.redis-operator.test/agent\":\"other\"}",
		  "/s/pvs/ns/u", false },
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\","
		  "\"nodeagent.redis-operator.test/agent\":\"me\"}",
		  "/other/pvs/ns/u", false },
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\"}", "/s2/pvs/ns/u",
		  false },
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\"}", "/s/pvs/../../etc",
		  false },
		{ "{\"nodeagent.redis-operator.test/provisioned\":\"true\"}", NULL, false },
		{ "{\"nodeagent.redis-operator.test/agent\":\"me\"}", "/s/pvs/ns/u", false },
		{ "{}", "/s/pvs/ns/u", false },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		json_t *pv = json_pack("{s:{s:o}, s:{}}", "metadata", "labels",
		                       json_loads(cases[i].labels, 0, NULL), "spec");

		if (cases[i].path)
			json_object_set_new(json_object_get(pv, "spec"), "hostPath",
			                    json_pack("{s:s}", "path", cases[i].path));
		ck_assert_msg(na_pv_is_ours(pv, "/s", "me") == cases[i].ours, "case %zu", i);
		json_decref(pv);
	}
}
END_TEST

/* --- light mode: the simulated /v1/status ------------------------------------------------------- */

#define RID_A "0123456789abcdef0123456789abcdef01234567"

static const struct {
	struct na_sim_view v;
	const char *link, *master; /* master NULL: masterHost null */
	long long lag;             /* -1: lagBytes null */
} sim_cases[] = {
	{ { "c-1", "primary", "primary", "", NULL, true, false, true, RID_A, "", 1024, -1, "none",
	    "", 5, 0, 2 },
	  "none",
	  NULL,
	  -1 },
	{ { "c-2", "replica", "replica", "", NULL, true, false, false, RID_A, "", 1024, 1024, "up",
	    "10.240.32.1", 5, 0, 0 },
	  "up",
	  "10.240.32.1",
	  0 },
	{ { "c-3", "replica", "replica", "replication link down", NULL, false, false, false, RID_A,
	    "", 1024, -1, "down", "", 5, 0, 0 },
	  "down",
	  NULL,
	  -1 },
	{ { "c-1", "primary", "primary", "fenced", "by request", false, true, false, RID_A, "",
	    1024, -1, "none", "", 5, 1, 0 },
	  "none",
	  NULL,
	  -1 },
};

/* The body carries what controller/model.c's parser requires, with the view's values. */
START_TEST(sim_status_table)
{
	const struct na_sim_view *v = &sim_cases[_i].v;
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	json_t *j = NULL;

	ck_assert_int_eq(na_sim_status_json(v, &out), 0);
	ck_assert_int_eq(jsonx_loadb(out.data, out.len, 1 << 20, &j, NULL), 0);
	ck_assert_str_eq(json_string_value(json_object_get(j, "state")), v->state);
	ck_assert_str_eq(json_string_value(json_object_get(j, "role")), v->role);
	ck_assert(json_is_true(json_object_get(j, "ready")) == v->ready);
	ck_assert(json_is_true(json_object_get(j, "fenced")) == v->fenced);
	ck_assert(json_is_true(json_object_get(j, "leaseHeld")) == v->lease_held);
	ck_assert(json_is_true(json_object_get(j, "simulated")));
	ck_assert(json_is_true(jsonx_get(j, "server.up")));
	ck_assert_str_eq(json_string_value(jsonx_get(j, "server.role")), v->role);
	ck_assert_str_eq(json_string_value(jsonx_get(j, "replication.link")), sim_cases[_i].link);
	ck_assert_str_eq(json_string_value(jsonx_get(j, "replication.replId")), RID_A);
	ck_assert_int_eq(json_integer_value(jsonx_get(j, "replication.offset")), 1024);
	if (sim_cases[_i].master)
		ck_assert_str_eq(json_string_value(jsonx_get(j, "replication.masterHost")),
		                 sim_cases[_i].master);
	else
		ck_assert(json_is_null(jsonx_get(j, "replication.masterHost")));
	if (sim_cases[_i].lag >= 0)
		ck_assert_int_eq(json_integer_value(jsonx_get(j, "replication.lagBytes")),
		                 sim_cases[_i].lag);
	else
		ck_assert(json_is_null(jsonx_get(j, "replication.lagBytes")));
	ck_assert(v->fenced ? json_is_string(json_object_get(j, "fenceReason"))
	                    : json_is_null(json_object_get(j, "fenceReason")));
	json_decref(j);
	buf_release(&out);
}
END_TEST

START_TEST(sim_repl_id)
{
	char a[NA_SIM_REPLID_LEN + 1], b[NA_SIM_REPLID_LEN + 1], c[NA_SIM_REPLID_LEN + 1];

	na_sim_repl_id("uid-1", 0, a);
	na_sim_repl_id("uid-1", 0, b);
	na_sim_repl_id("uid-1", 1, c);
	ck_assert_uint_eq(strlen(a), NA_SIM_REPLID_LEN);
	ck_assert_uint_eq(strspn(a, "0123456789abcdef"), NA_SIM_REPLID_LEN);
	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	na_sim_repl_id(NULL, 0, c);
	ck_assert_uint_eq(strlen(c), NA_SIM_REPLID_LEN);
}
END_TEST

static Suite *api_suite(void)
{
	Suite *s = suite_create("nodeagent-api");
	TCase *tc = tcase_create("pure");

	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, spec_golden, 0, ARRAY_LEN(spec_goldens));
	tcase_add_test(tc, spec_fill_pod_ip);
	tcase_add_loop_test(tc, spec_error_table, 0, ARRAY_LEN(spec_errors));
	tcase_add_loop_test(tc, field_ref_table, 0, ARRAY_LEN(field_cases));
	tcase_add_loop_test(tc, resource_ref_table, 0, ARRAY_LEN(resource_cases));
	tcase_add_test(tc, status_waiting_golden);
	tcase_add_test(tc, status_running_golden);
	tcase_add_test(tc, status_transitions);
	tcase_add_loop_test(tc, volume_files_table, 0, ARRAY_LEN(volume_cases));
	tcase_add_test(tc, volume_writer);
	tcase_add_test(tc, volume_writer_errors);
	tcase_add_loop_test(tc, ctl_request_table, 0, ARRAY_LEN(ctl_cases));
	tcase_add_test(tc, hosts_golden);
	tcase_add_test(tc, node_objects_golden);
	tcase_add_test(tc, node_status_kubelet_endpoint);
	tcase_add_loop_test(tc, kubelet_log_opts_table, 0, ARRAY_LEN(log_opts_cases));
	tcase_add_test(tc, kubelet_tail_offset);
	tcase_add_test(tc, pv_object_golden);
	tcase_add_test(tc, agent_id_table);
	tcase_add_test(tc, pvc_selected_node_table);
	tcase_add_test(tc, pv_ownership_table);
	tcase_add_loop_test(tc, sim_status_table, 0, ARRAY_LEN(sim_cases));
	tcase_add_test(tc, sim_repl_id);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(api_suite)

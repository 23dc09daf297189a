/*
 * report: `kubectl redis report NAME [-o FILE]`, one archive for a support ticket.
 *
 * A gzip'ed tar (lib/targz: the tree has no zip writer) named by -o, else
 * NAME-report-YYYYMMDDHHMMSS.tar.gz, written 0600, holding under NAME-report/:
 *   redisclusters/NAME.json, redisbackups/, redisscheduledbackups/ (the cluster's);
 *   <kind>/<object>.json for each child labelled redis.io/cluster=NAME (kinds[] below),
 *   the Secrets the spec names, the primary Lease; events.json (the namespace's Events
 *   about the cluster or an object named NAME-*); status/<pod>.json (each pod's
 *   /v1/status through the pod proxy); logs/<pod>/<container>.log (the last
 *   LOG_TAIL_LINES lines, at most LOG_LIMIT_BYTES); errors.txt (what could not be had).
 * Every object, body and log passes plugin/scrub's two layers first. Files are built in
 * memory (bounded by the limits above and the client's body cap), then archived.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/ports.h"
#include "api/resources.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/rfc3339.h"
#include "lib/targz.h"
#include "plugin/plugin.h"
#include "plugin/scrub.h"

#define LOG_TAIL_LINES  10000
#define LOG_LIMIT_BYTES (8u << 20)
#define FILE_MAX        (32u << 20)
#define LABEL_CLUSTER   "redis.io/cluster"

/* The children the controller labels with redis.io/cluster (DESIGN.md §3). */
static const struct child {
	const struct k8s_resource *res;
	const char *dir, *kind;
} kinds[] = {
	{ &k8s_res_pods, "pods", "Pod" },
	{ &k8s_res_pvcs, "persistentvolumeclaims", "PersistentVolumeClaim" },
	{ &k8s_res_services, "services", "Service" },
	{ &k8s_res_endpointslices, "endpointslices", "EndpointSlice" },
	{ &k8s_res_configmaps, "configmaps", "ConfigMap" },
	{ &k8s_res_secrets, "secrets", "Secret" },
	{ &k8s_res_serviceaccounts, "serviceaccounts", "ServiceAccount" },
	{ &k8s_res_roles, "roles", "Role" },
	{ &k8s_res_rolebindings, "rolebindings", "RoleBinding" },
	{ &k8s_res_pdbs, "poddisruptionbudgets", "PodDisruptionBudget" },
	{ &k8s_res_networkpolicies, "networkpolicies", "NetworkPolicy" },
};

/* The spec's references to Secrets the user may have made (unlabelled). */
static const char *const secret_refs[] = {
	"spec.authSecret.name",
	"spec.tlsSecret.name",
	"spec.caSecret.name",
	"spec.aclConfigSecret.name",
	"spec.backupCredentialsSecret.name",
};

struct rfile {
	char *name;
	struct buf data;
};

struct report {
	struct plugin_ctx *ctx;
	const char *name;
	char root[300];
	struct rfile *files;
	size_t n;
	struct buf errors;
	struct plugin_secrets secrets;
	json_t *objects; /* path → scrubbed object, written as files at the end */
};

/* A new file root/DIR[/A[B]] (A: a pod, B: a suffix) and its empty contents. */
static struct buf *add_file(struct report *r, const char *dir, const char *a, const char *b)
{
	struct rfile *f;

	r->files = xreallocarray(r->files, r->n + 1, sizeof(*r->files));
	f = &r->files[r->n++];
	f->name = xasprintf("%s/%s%s%s%s", r->root, dir, a ? "/" : "", a ? a : "", b ? b : "");
	buf_init(&f->data, FILE_MAX);
	return &f->data;
}

static void note(struct report *r, const char *what, const struct err *e)
{
	buf_printf(&r->errors, "%s: %s\n", what, e->msg[0] ? e->msg : "failed");
}

/* Keeps obj (scrubbed) for DIR/NAME.json; a Secret's values join the scrub list. */
static void keep(struct report *r, const char *dir, const char *kind, json_t *obj)
{
	char path[600];
	const char *name = jsonx_get_string(obj, "metadata.name");

	if (!name)
		return;
	if (strcmp(kind, "Secret") == 0)
		plugin_secrets_add_secret(&r->secrets, obj);
	snprintf(path, sizeof(path), "%s/%s.json", dir, name);
	json_object_set_new(r->objects, path, plugin_scrub_object(obj, kind));
}

static void collect_children(struct report *r)
{
	char sel[300];
	struct k8s_list_opts lo = { .label_selector = sel };
	struct err e = { 0 };
	json_t *items, *it;
	size_t i;

	snprintf(sel, sizeof(sel), "%s=%s", LABEL_CLUSTER, r->name);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		err_clear(&e);
		if (k8s_list(r->ctx->client, kinds[k].res, r->ctx->ns, &lo, &items, NULL, &e)) {
			note(r, kinds[k].dir, &e);
			continue;
		}
		json_array_foreach (items, i, it) {
			keep(r, kinds[k].dir, kinds[k].kind, it);
		}
		json_decref(items);
	}
}

/* The Secrets the spec names, and the primary Lease (neither need carry the label). */
static void collect_named(struct report *r, json_t *cluster)
{
	char lease[300];
	struct err e = { 0 };
	json_t *obj;

	for (size_t i = 0; i < sizeof(secret_refs) / sizeof(secret_refs[0]); i++) {
		const char *n = jsonx_get_string(cluster, secret_refs[i]);

		err_clear(&e);
		if (!n)
			continue;
		if (k8s_get(r->ctx->client, &k8s_res_secrets, r->ctx->ns, n, &obj, &e)) {
			note(r, secret_refs[i], &e);
			continue;
		}
		keep(r, "secrets", "Secret", obj);
		json_decref(obj);
	}
	snprintf(lease, sizeof(lease), "%s-primary", r->name);
	if (k8s_get(r->ctx->client, &k8s_res_leases, r->ctx->ns, lease, &obj, NULL) == 0) {
		keep(r, "leases", "Lease", obj);
		json_decref(obj);
	}
}

/* The RedisBackups and RedisScheduledBackups whose spec.clusterName is the cluster. */
static void collect_backups(struct report *r)
{
	static const struct child b[] = {
		{ &api_res_redisbackups, "redisbackups", "RedisBackup" },
		{ &api_res_redisscheduledbackups, "redisscheduledbackups", "RedisScheduledBackup" },
	};
	struct err e = { 0 };
	json_t *items, *it;
	size_t i;

	for (size_t k = 0; k < 2; k++) {
		err_clear(&e);
		if (k8s_list(r->ctx->client, b[k].res, r->ctx->ns, NULL, &items, NULL, &e)) {
			note(r, b[k].dir, &e);
			continue;
		}
		json_array_foreach (items, i, it) {
			const char *cn = jsonx_get_string(it, "spec.clusterName");
			if (cn && strcmp(cn, r->name) == 0)
				keep(r, b[k].dir, b[k].kind, it);
		}
		json_decref(items);
	}
}

/* Events about the cluster or an object named NAME-*. */
static void collect_events(struct report *r)
{
	struct err e = { 0 };
	json_t *items, *it, *out = json_array();
	size_t i, n = strlen(r->name);

	if (k8s_list(r->ctx->client, &k8s_res_events, r->ctx->ns, NULL, &items, NULL, &e)) {
		note(r, "events", &e);
		json_decref(out);
		return;
	}
	json_array_foreach (items, i, it) {
		const char *about = jsonx_get_string(it, "regarding.name");
		if (about && strncmp(about, r->name, n) == 0 && (!about[n] || about[n] == '-'))
			json_array_append_new(out, plugin_scrub_object(it, "Event"));
	}
	json_object_set_new(r->objects, "events.json", out);
	json_decref(items);
}

/* GET path into the file root/DIR/POD[SUFFIX]; on failure no file, a line in errors.txt. */
static void fetch_file(struct report *r, const char *path, const char *dir, const char *pod,
                       const char *suffix)
{
	struct buf body = BUF_INIT(FILE_MAX);
	struct err e = { 0 };
	char what[600];

	if (k8s_get_raw(r->ctx->client, path, &body, &e) == 0) {
		buf_append(add_file(r, dir, pod, suffix), body.data ? body.data : "", body.len);
	} else {
		snprintf(what, sizeof(what), "%s/%s%s", dir, pod, suffix);
		note(r, what, &e);
	}
	buf_release(&body);
}

static void collect_pod(struct report *r, json_t *pod)
{
	static const char *const lists[] = { "spec.initContainers", "spec.containers" };
	const char *p = jsonx_get_string(pod, "metadata.name");
	char path[800], file[300];
	json_t *c;
	size_t i;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/https:%s:%d/proxy/v1/status",
	         r->ctx->ns, p, API_PORT_HTTP);
	fetch_file(r, path, "status", p, ".json");
	for (size_t l = 0; l < 2; l++) {
		json_array_foreach (jsonx_get(pod, lists[l]), i, c) {
			const char *cn = jsonx_get_string(c, "name");

			if (!cn)
				continue;
			snprintf(path, sizeof(path),
			         "/api/v1/namespaces/%s/pods/%s/"
			         "log?container=%s&tailLines=%d&limitBytes=%u",
			         r->ctx->ns, p, cn, LOG_TAIL_LINES, LOG_LIMIT_BYTES);
			snprintf(file, sizeof(file), "/%s.log", cn);
			fetch_file(r, path, "logs", p, file);
		}
	}
}

static void collect_pods(struct report *r)
{
	json_t *it;
	const char *k;

	json_object_foreach (r->objects, k, it) {
		if (strncmp(k, "pods/", 5) == 0)
			collect_pod(r, it);
	}
}

/* The kept objects become files; then every file is scrubbed by value. */
static void finish_files(struct report *r)
{
	const char *k;
	json_t *o;
	char *t;

	json_object_foreach (r->objects, k, o) {
		t = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
		buf_printf(add_file(r, k, NULL, NULL), "%s\n", t ? t : "null");
		free(t);
	}
	if (r->errors.len)
		buf_append(add_file(r, "errors.txt", NULL, NULL), r->errors.data, r->errors.len);
	for (size_t i = 0; i < r->n; i++)
		plugin_scrub_text(&r->secrets, &r->files[i].data);
}

static ssize_t file_read(void *ctx, uint64_t off, void *out, size_t len, struct err *e)
{
	const struct buf *b = ctx;
	size_t n;

	(void)e;
	if (off >= b->len)
		return 0;
	n = b->len - off < len ? b->len - off : len;
	memcpy(out, b->data + off, n);
	return (ssize_t)n;
}

/* Directories for every parent of every file, once each, then the files. */
static int archive_add_all(struct report *r, struct targz_writer *w, struct err *e)
{
	json_t *dirs = json_object();
	int64_t now = clock_wall_ms() / 1000;
	int rc = 0;

	for (size_t i = 0; i < r->n && !rc; i++) {
		char d[TARGZ_NAME_MAX + 1];
		struct targz_entry f = { .name = r->files[i].name,
			                 .mode = 0644,
			                 .mtime = now,
			                 .size = r->files[i].data.len,
			                 .read = file_read,
			                 .ctx = &r->files[i].data };

		snprintf(d, sizeof(d), "%s", r->files[i].name);
		for (char *s = strchr(d, '/'); s && !rc; s = strchr(s + 1, '/')) {
			struct targz_entry de = {
				.name = d, .type = TARGZ_DIR, .mode = 0755, .mtime = now
			};

			*s = '\0';
			if (!json_object_get(dirs, d)) {
				json_object_set_new(dirs, d, json_true());
				rc = targz_writer_add(w, &de, e);
			}
			*s = '/';
		}
		if (!rc)
			rc = targz_writer_add(w, &f, e);
	}
	json_decref(dirs);
	return rc;
}

static int write_archive(struct report *r, const char *path, struct err *e)
{
	struct targz_writer *w = targz_writer_new(6);
	char chunk[65536];
	ssize_t n = 0;
	int fd = -1, rc = archive_add_all(r, w, e);

	if (!rc && (fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
	while (!rc && (n = targz_writer_read(w, chunk, sizeof(chunk), e)) > 0)
		if (write(fd, chunk, (size_t)n) != n)
			rc = err_set(e, -EIO, "%s: %s", path, strerror(errno));
	if (!rc && n < 0)
		rc = (int)n;
	if (fd >= 0 && close(fd) != 0 && !rc)
		rc = err_set(e, -EIO, "%s: %s", path, strerror(errno));
	targz_writer_free(w);
	return rc;
}

static void report_release(struct report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->files[i].name);
		buf_release(&r->files[i].data);
	}
	free(r->files);
	buf_release(&r->errors);
	plugin_secrets_release(&r->secrets);
	json_decref(r->objects);
}

int plugin_report(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e)
{
	struct report r = { .ctx = ctx, .name = a->pos[0], .objects = json_object() };
	char out[400], now[RFC3339_MAX], stamp[16];
	json_t *cluster = NULL;
	size_t j = 0;
	int rc;

	buf_init(&r.errors, 1u << 20);
	snprintf(r.root, sizeof(r.root), "%s-report", r.name);
	rc = k8s_get(ctx->client, &api_res_redisclusters, ctx->ns, r.name, &cluster, e);
	if (!rc) {
		keep(&r, "redisclusters", "RedisCluster", cluster);
		collect_children(&r);
		collect_named(&r, cluster);
		collect_backups(&r);
		collect_events(&r);
		collect_pods(&r);
		finish_files(&r);
		rfc3339_format(clock_wall_ms(), RFC3339_SECONDS, now);
		for (size_t i = 0; now[i] && j < sizeof(stamp) - 1; i++)
			if (now[i] >= '0' && now[i] <= '9')
				stamp[j++] = now[i];
		stamp[j] = '\0';
		snprintf(out, sizeof(out), "%s-report-%s.tar.gz", r.name, stamp);
		rc = write_archive(&r, a->opt[PLUGIN_F_OUTPUT] ? a->opt[PLUGIN_F_OUTPUT] : out, e);
	}
	if (!rc)
		printf("report of %s/%s: %zu files, %zu secret value(s) redacted, in %s\n", ctx->ns,
		       r.name, r.n, r.secrets.n,
		       a->opt[PLUGIN_F_OUTPUT] ? a->opt[PLUGIN_F_OUTPUT] : out);
	json_decref(cluster);
	report_release(&r);
	return rc;
}

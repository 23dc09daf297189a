/*
 * kubelet: the container-log endpoint of the kubelet API (kubelet.h says what it serves
 * and how it authenticates and authorizes).
 *
 * A request goes: route (GET, /containerLogs/NS/POD/CONTAINER) -> authenticate (the TLS
 * client certificate, or anonymous) -> find the pod's sandbox (pod.json) -> authorize
 * (SubjectAccessReview for the pod's Node) -> options -> the file, from the offset of
 * its last tailLines lines, at most limitBytes, handed to libmicrohttpd as a file
 * descriptor (nothing copied into memory). Errors are plain text, as the kubelet writes
 * them: the API server quotes the body to the kubectl user.
 */
#include "kubelet.h"

#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <jansson.h>
#include <microhttpd.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/file.h"
#include "lib/httpd.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/x509.h"

#define KL_PREFIX         "/containerLogs/"
#define KL_CERT_DAYS      3650
#define KL_CONNS          16
#define KL_TIMEOUT_S      30
#define KL_CHUNK          65536
#define KL_NAME_MAX       253
#define KL_GROUPS_MAX     16
#define KL_MSG_MAX        2048
#define KL_CA_FILE_MAX    (1u << 20)
#define KL_FOLLOW_POLL_US 200000

static const struct k8s_resource res_sar = { "authorization.k8s.io", "v1", "subjectaccessreviews",
	                                     "SubjectAccessReview", false };

/* --- options (pure) ----------------------------------------------------------------- */

/* Parameters the node agent cannot honour: refused when set to anything but off. */
static const struct {
	const char *name, *off, *why;
} refused[] = {
	{ "timestamps", "false", "the node agent keeps no time per log line" },
	{ "sinceSeconds", NULL, "the node agent keeps no time per log line" },
	{ "sinceTime", NULL, "the node agent keeps no time per log line" },
	{ "stream", "All", "stdout and stderr share one log file on the node agent" },
};

/* A non-negative number parameter: -1 when absent. */
static int opt_count(const char *name, const char *v, int64_t min, int64_t *out, char *msg,
                     size_t len)
{
	struct err e;

	*out = -1;
	if (!v)
		return 0;
	err_clear(&e);
	if (parse_int64(v, min, INT64_MAX, out, &e) == 0)
		return 0;
	snprintf(msg, len, "%s: %s", name, e.msg);
	return -EINVAL;
}

int na_log_opts_parse(const char *(*get)(void *ctx, const char *name), void *ctx,
                      struct na_log_opts *o, char *msg, size_t len)
{
	const char *prev = get(ctx, "previous"), *follow = get(ctx, "follow");
	struct err e;

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *v = get(ctx, refused[i].name);
		bool off = false;

		err_clear(&e);
		if (v && refused[i].off && strcmp(refused[i].off, "false") == 0)
			off = parse_bool(v, &off, &e) == 0 && !off;
		else if (v && refused[i].off)
			off = strcmp(v, refused[i].off) == 0;
		if (v && !off) {
			snprintf(msg, len, "%s=%s: %s", refused[i].name, v, refused[i].why);
			return -EINVAL;
		}
	}
	o->previous = o->follow = false;
	err_clear(&e);
	if (prev && parse_bool(prev, &o->previous, &e) < 0) {
		snprintf(msg, len, "previous: %s", e.msg);
		return -EINVAL;
	}
	if (follow && parse_bool(follow, &o->follow, &e) < 0) {
		snprintf(msg, len, "follow: %s", e.msg);
		return -EINVAL;
	}
	if (opt_count("tailLines", get(ctx, "tailLines"), 0, &o->tail_lines, msg, len) ||
	    opt_count("limitBytes", get(ctx, "limitBytes"), 1, &o->limit_bytes, msg, len))
		return -EINVAL;
	return 0;
}

off_t na_log_tail_offset(int fd, off_t size, int64_t lines)
{
	char chunk[KL_CHUNK];
	off_t end = size;
	int64_t seen = 0;
	char last;

	if (lines == 0)
		return size;
	/* A newline that ends the file closes the last line: it does not start one. */
	if (size > 0 && pread(fd, &last, 1, size - 1) == 1 && last == '\n')
		end = size - 1;
	while (end > 0) {
		size_t n = end > KL_CHUNK ? KL_CHUNK : (size_t)end;
		ssize_t got = pread(fd, chunk, n, end - (off_t)n);

		if (got != (ssize_t)n)
			return got < 0 ? -errno : -EIO;
		for (size_t i = n; i-- > 0;)
			if (chunk[i] == '\n' && ++seen == lines)
				return end - (off_t)n + (off_t)i + 1;
		end -= (off_t)n;
	}
	return 0;
}

/* --- the sandbox of a pod ------------------------------------------------------------- */

struct kl_pod {
	char *dir;    /* <state>/pods/<uid> */
	json_t *meta; /* its pod.json */
};

static void kl_pod_release(struct kl_pod *p)
{
	free(p->dir);
	json_decref(p->meta);
}

/* The newest sandbox of ns/name (ctl.c); false when none. */
static bool kl_pod_find(const struct agent *ag, const char *ns, const char *name,
                        struct kl_pod *out)
{
	char *key = xasprintf("%s/%s", ns, name);

	out->meta = NULL;
	out->dir = na_find_pod_dir(ag->state_dir, key, &out->meta);
	free(key);
	return out->dir != NULL;
}

/* The container is one of the pod's (pod.json "containers"; an older one lists none). */
static bool kl_pod_has(const struct kl_pod *p, const char *ctr)
{
	json_t *list = json_object_get(p->meta, "containers"), *v;
	size_t i;

	json_array_foreach (list, i, v)
		if (json_string_value(v) && strcmp(json_string_value(v), ctr) == 0)
			return true;
	return !json_is_array(list);
}

/* --- authentication and authorization --------------------------------------------------- */

struct kl_user {
	char name[KL_NAME_MAX + 1];
	char groups[KL_GROUPS_MAX][KL_NAME_MAX + 1];
	size_t n_groups;
};

static void user_add_group(struct kl_user *u, const char *g)
{
	if (u->n_groups < KL_GROUPS_MAX)
		snprintf(u->groups[u->n_groups++], sizeof(u->groups[0]), "%s", g);
}

/* CN and O fields of a DER certificate: 0, or -EINVAL. */
static int user_from_der(const gnutls_datum_t *der, struct kl_user *u)
{
	gnutls_x509_crt_t crt;
	size_t len = sizeof(u->name);
	int rc = -EINVAL;

	if (gnutls_x509_crt_init(&crt) < 0)
		return -ENOMEM;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) == 0 &&
	    gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, 0, u->name, &len) ==
	            0) {
		char g[KL_NAME_MAX + 1];

		for (unsigned i = 0; i < KL_GROUPS_MAX; i++) {
			size_t glen = sizeof(g);

			if (gnutls_x509_crt_get_dn_by_oid(crt, GNUTLS_OID_X520_ORGANIZATION_NAME, i,
			                                  0, g, &glen) < 0)
				break;
			user_add_group(u, g);
		}
		user_add_group(u, "system:authenticated");
		rc = 0;
	}
	gnutls_x509_crt_deinit(crt);
	return rc;
}

/* 0 with the user of c, else 401 and why. */
static unsigned authenticate(const struct agent *ag, struct MHD_Connection *c, struct kl_user *u,
                             char *msg, size_t len)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t s = ci ? (gnutls_session_t)ci->tls_session : NULL;
	const gnutls_datum_t *der = NULL;
	unsigned n = 0, status = 1;

	memset(u, 0, sizeof(*u));
	if (s && ag->set.kubelet_client_ca)
		der = gnutls_certificate_get_peers(s, &n);
	if (der && n > 0) {
		if (gnutls_certificate_verify_peers2(s, &status) == 0 && status == 0 &&
		    user_from_der(&der[0], u) == 0)
			return 0;
		snprintf(msg, len, "Unauthorized");
		return MHD_HTTP_UNAUTHORIZED;
	}
	if (!ag->set.kubelet_anonymous) {
		snprintf(msg, len, "Unauthorized");
		return MHD_HTTP_UNAUTHORIZED;
	}
	snprintf(u->name, sizeof(u->name), "system:anonymous");
	user_add_group(u, "system:unauthenticated");
	return 0;
}

static json_t *sar_object(const struct kl_user *u, const char *node)
{
	json_t *groups = json_array();

	for (size_t i = 0; i < u->n_groups; i++)
		json_array_append_new(groups, json_string(u->groups[i]));
	return json_pack("{s:s, s:s, s:{s:s, s:o, s:{s:s, s:s, s:s, s:s}}}", "apiVersion",
	                 "authorization.k8s.io/v1", "kind", "SubjectAccessReview", "spec", "user",
	                 u->name, "groups", groups, "resourceAttributes", "verb", "get", "resource",
	                 "nodes", "subresource", "proxy", "name", node);
}

/* 0 when u may read logs on node, else 403 (denied) or 500 (no answer), why in msg. */
static unsigned authorize(const struct agent *ag, const struct kl_user *u, const char *node,
                          char *msg, size_t len)
{
	json_t *sar, *out = NULL;
	struct err e;
	unsigned rc = 0;

	if (strcmp(ag->set.kubelet_authz, "AlwaysAllow") == 0)
		return 0;
	err_clear(&e);
	sar = sar_object(u, node);
	if (k8s_create(ag->client, &res_sar, NULL, sar, NULL, &out, &e) < 0) {
		snprintf(msg, len,
		         "Authorization error (user=%s, verb=get, resource=nodes, "
		         "subresource=proxy): %s",
		         u->name, e.msg);
		rc = MHD_HTTP_INTERNAL_SERVER_ERROR;
	} else if (!json_is_true(jsonx_get(out, "status.allowed"))) {
		snprintf(msg, len,
		         "Forbidden (user=%s, verb=get, resource=nodes, subresource=proxy)",
		         u->name);
		rc = MHD_HTTP_FORBIDDEN;
	}
	json_decref(sar);
	json_decref(out);
	return rc;
}

/* --- the request ------------------------------------------------------------------------- */

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return httpd_reply(c, status, "text/plain; charset=utf-8", xasprintf("%s\n", msg));
}

static const char *query_get(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

/* One path segment into out (KL_NAME_MAX bytes at most, not "." or ".."); *p moves past
 * it and its '/'. last: no '/' may follow. */
static bool segment(const char **p, char *out, bool last)
{
	size_t n = strcspn(*p, "/");

	if (n == 0 || n > KL_NAME_MAX || (last ? (*p)[n] != '\0' : (*p)[n] != '/'))
		return false;
	memcpy(out, *p, n);
	out[n] = '\0';
	*p += n + !last;
	return strcmp(out, ".") != 0 && strcmp(out, "..") != 0;
}

/* "NS/POD/CONTAINER" into three names; false for anything else. */
static bool split_path(const char *rest, char *ns, char *pod, char *ctr)
{
	return segment(&rest, ns, false) && segment(&rest, pod, false) && segment(&rest, ctr, true);
}

/* --- follow: the log as it grows ---------------------------------------------------- */

static atomic_bool kl_stopping;

struct kl_follow {
	int fd;
	off_t off;
	int64_t left; /* limitBytes still to send; -1: no limit */
	char *path;
	struct MHD_Connection *c;
};

/* The container's log is no longer this file (it restarted: the file was renamed to
 * .previous.log) or the sandbox is gone: the kubelet ends a follow when its container
 * ends. */
static bool follow_over(const struct kl_follow *f)
{
	struct stat now, mine;

	return stat(f->path, &now) < 0 || fstat(f->fd, &mine) < 0 || now.st_ino != mine.st_ino;
}

/* The API server hung up (its client went away). */
static bool client_gone(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p = { ci ? ci->connect_fd : -1, POLLRDHUP, 0 };

	return !ci || (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
}

/* Blocks (a thread per connection) until bytes, the end or a hang-up. */
static ssize_t follow_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct kl_follow *f = cls;

	(void)pos;
	for (;;) {
		size_t want = f->left >= 0 && (int64_t)max > f->left ? (size_t)f->left : max;
		ssize_t n = want ? pread(f->fd, buf, want, f->off) : 0;

		if (n > 0) {
			f->off += n;
			f->left -= f->left >= 0 ? n : 0;
			return n;
		}
		if (n < 0 || !want || follow_over(f))
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (atomic_load(&kl_stopping) || client_gone(f->c))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		usleep(KL_FOLLOW_POLL_US);
	}
}

static void follow_free(void *cls)
{
	struct kl_follow *f = cls;

	close(f->fd);
	free(f->path);
	free(f);
}

static struct MHD_Response *follow_response(int fd, off_t from, const struct na_log_opts *o,
                                            const char *path, struct MHD_Connection *c)
{
	struct kl_follow *f = xcalloc(1, sizeof(*f));

	*f = (struct kl_follow){ fd, from, o->limit_bytes, xstrdup(path), c };
	return MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, KL_CHUNK, follow_read, f,
	                                         follow_free);
}

/* The log of ctr as a response (status 200), or a status and msg. */
static unsigned open_log(const struct kl_pod *p, const char *pod, const char *ctr,
                         const struct na_log_opts *o, struct MHD_Connection *c,
                         struct MHD_Response **out, char *msg, size_t len)
{
	char *path = xasprintf("%s/logs/%s%s", p->dir, ctr, o->previous ? ".previous.log" : ".log");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	off_t from = 0, size = 0;

	if (fd < 0) {
		free(path);
		if (o->previous)
			snprintf(msg, len,
			         "previous terminated container \"%s\" in pod \"%s\" not found",
			         ctr, pod);
		else
			snprintf(msg, len,
			         "container \"%s\" in pod \"%s\" is waiting to start: "
			         "it has not run yet",
			         ctr, pod);
		return MHD_HTTP_BAD_REQUEST;
	}
	if (fstat(fd, &st) == 0)
		size = st.st_size;
	if (o->tail_lines >= 0)
		from = na_log_tail_offset(fd, size, o->tail_lines);
	if (from < 0) {
		snprintf(msg, len, "reading the log of \"%s\": %s", ctr, strerror((int)-from));
		close(fd);
		free(path);
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	if (o->follow && !o->previous) {
		*out = follow_response(fd, from, o, path, c);
		free(path);
		MHD_add_response_header(*out, "Content-Type", "text/plain");
		return MHD_HTTP_OK;
	}
	free(path);
	size -= from;
	if (o->limit_bytes >= 0 && o->limit_bytes < size)
		size = o->limit_bytes;
	*out = MHD_create_response_from_fd_at_offset64((uint64_t)size, fd, (uint64_t)from);
	if (!*out) {
		close(fd);
		snprintf(msg, len, "cannot serve the log of \"%s\"", ctr);
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
	MHD_add_response_header(*out, "Content-Type", "text/plain");
	return MHD_HTTP_OK;
}

/* Everything after the route: the status and msg of a refusal, or 200 with *out. */
static unsigned serve_logs(const struct agent *ag, struct MHD_Connection *c, const char *rest,
                           struct MHD_Response **out, char *msg, size_t len)
{
	char ns[KL_NAME_MAX + 1], pod[KL_NAME_MAX + 1], ctr[KL_NAME_MAX + 1];
	struct kl_pod p = { NULL, NULL };
	struct na_log_opts o;
	struct kl_user u;
	const char *node;
	unsigned rc;

	if (!split_path(rest, ns, pod, ctr)) {
		snprintf(msg, len, "want /containerLogs/{namespace}/{pod}/{container}");
		return MHD_HTTP_NOT_FOUND;
	}
	if ((rc = authenticate(ag, c, &u, msg, len)))
		return rc;
	kl_pod_find(ag, ns, pod, &p);
	node = p.meta ? json_string_value(json_object_get(p.meta, "node")) : NULL;
	if ((rc = authorize(ag, &u, node ? node : ag->nodes[0].name, msg, len)) == 0) {
		if (!p.dir) {
			snprintf(msg, len, "pod \"%s/%s\" not found on this node", ns, pod);
			rc = MHD_HTTP_NOT_FOUND;
		} else if (!kl_pod_has(&p, ctr)) {
			snprintf(msg, len, "container \"%s\" not found in pod \"%s/%s\"", ctr, ns,
			         pod);
			rc = MHD_HTTP_NOT_FOUND;
		} else if (na_log_opts_parse(query_get, c, &o, msg, len) < 0) {
			rc = MHD_HTTP_BAD_REQUEST;
		} else {
			rc = open_log(&p, pod, ctr, &o, c, out, msg, len);
		}
	}
	kl_pod_release(&p);
	return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
	struct agent *ag = cls;
	struct MHD_Response *r = NULL;
	char msg[KL_MSG_MAX];
	enum MHD_Result res;
	unsigned status;

	(void)version;
	(void)upload;
	if (!*con_cls) { /* the headers: come back for the (empty) body */
		*con_cls = c;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (strncmp(url, KL_PREFIX, strlen(KL_PREFIX)) != 0)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "404 page not found");
	if (strcmp(method, "GET") != 0)
		return httpd_reply_not_allowed(c, "GET");
	status = serve_logs(ag, c, url + strlen(KL_PREFIX), &r, msg, sizeof(msg));
	if (status != MHD_HTTP_OK) {
		log_info(NA_COMPONENT, "kubelet API request refused", "path", url, "reason", msg,
		         NULL);
		return reply_text(c, status, msg);
	}
	res = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return res;
}

/* --- start and stop --------------------------------------------------------------------- */

static int bound_port(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);

	return di ? di->port : 0;
}

int na_kubelet_start(struct agent *ag, struct err *e)
{
	struct x509_pair ca = { 0 }, leaf = { 0 };
	char *trust = NULL, port[8];
	size_t trust_len;
	struct httpd_opts o = { .address = ag->set.host_ip,
		                .port = (int)ag->set.kubelet_port,
		                .conn_limit = KL_CONNS,
		                .conn_timeout_s = KL_TIMEOUT_S,
		                .thread_per_connection = true };
	int rc;

	if (ag->set.kubelet_client_ca &&
	    (rc = file_read_all(ag->set.kubelet_client_ca, KL_CA_FILE_MAX, &trust, &trust_len, e)))
		return rc;
	if ((rc = x509_make_ca("nodeagent kubelet CA", KL_CERT_DAYS, &ca, e)) ||
	    (rc = x509_issue(&ca, "nodeagent kubelet", KL_CERT_DAYS, X509_EKU_SERVER, &leaf, e))) {
		free(trust);
		x509_pair_release(&ca);
		return rc;
	}
	o.tls_cert = leaf.cert_pem;
	o.tls_key = leaf.key_pem;
	o.tls_trust = trust;
	ag->kubelet = httpd_start(&o, handle, ag);
	x509_pair_release(&leaf);
	x509_pair_release(&ca);
	free(trust);
	if (!ag->kubelet)
		return err_set(e, -EADDRINUSE,
		               "kubelet API: cannot listen on %s:%lld (or bad "
		               "--kubelet-client-ca-file)",
		               ag->set.host_ip, (long long)ag->set.kubelet_port);
	ag->kubelet_port = bound_port(ag->kubelet);
	snprintf(port, sizeof(port), "%d", ag->kubelet_port);
	log_info(NA_COMPONENT, "kubelet API listening", "address", ag->set.host_ip, "port", port,
	         "authzMode", ag->set.kubelet_authz, NULL);
	return 0;
}

void na_kubelet_stop(struct agent *ag)
{
	atomic_store(&kl_stopping, true); /* followers give up their connections */
	httpd_stop(ag->kubelet);
	ag->kubelet = NULL;
}

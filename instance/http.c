/*
 * http: the instance manager's HTTP API and metrics endpoint on libmicrohttpd.
 *
 * Each daemon runs one internal polling thread. Handlers never talk to Redis: reads
 * copy the snapshot under the context mutex and render the copy; a mutation parses its
 * body (capped at INST_HTTP_BODY_MAX: 413 past it), suspends the connection and posts
 * a command to the supervisor, which resumes the connection when done; the handler,
 * called again, queues the answer. So a switchover in progress never blocks status.
 *
 * Routes (a table): GET /healthz, GET /readyz, GET /v1/status[?fresh=1], POST
 * /v1/{fence,unfence,promote,replicate,switchover,config,restart}; GET /metrics on the
 * metrics port. A known path with another method is 405 with Allow; anything else 404.
 * Every answer is JSON (metrics: Prometheus text).
 *
 * TLS: when --http-tls-dir holds tls.crt, tls.key and ca.crt, the API serves HTTPS
 * (GnuTLS inside libmicrohttpd) and asks for a client certificate; mutations require
 * one that verifies against ca.crt (else 401), probes and status stay open. The
 * verification calls GnuTLS, which is linked through libmicrohttpd: its two functions
 * are looked up with dlsym at start-up (no extra link flag needed). A verified
 * certificate whose common name is INST_PEER_CN is another manager handing over a
 * switchover: it may POST /v1/promote and nothing else (403). The controller's layout
 * (controller/pki.h) gives every pod that peer certificate, signed by the same client
 * CA as the controller's own, so a pod can promote a peer but never fence, reconfigure
 * or restart one; its server certificate is signed by another CA and is refused.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "instance/inst.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/x509.h"

#define HTTP_CONN_LIMIT   64
#define HTTP_CONN_TIMEOUT 30
#define HTTP_STACK        (256 * 1024)
#define PEM_MAX           (64 * 1024)
#define STATUS_BODY_MAX   (256 * 1024)
#define METRICS_BODY_MAX  (512 * 1024)
#define FRESH_WAIT_MS     1000
#define INST_PEER_CN      "redis-operator-peer" /* controller/pki.h CTL_PKI_PEER_CN */

struct hreq {
	struct buf body;
	bool too_big;
	struct inst_cmd *cmd;
};

/* GnuTLS, resolved at start-up when TLS is on. */
struct tls_datum { /* gnutls_datum_t */
	unsigned char *data;
	unsigned int size;
};
static int (*tls_verify_peers2)(void *session, unsigned int *status);
static const struct tls_datum *(*tls_get_peers)(void *session, unsigned int *list_size);

static void snapshot(struct inst *in, struct inst_snapshot *s)
{
	pthread_mutex_lock(&in->mu);
	*s = in->snap;
	pthread_mutex_unlock(&in->mu);
}

static int64_t max_age(struct inst *in)
{
	return in->set.poll_interval_ms * 3 + 1000;
}

/* --- read-only routes ---------------------------------------------------------------- */

static enum MHD_Result h_healthz(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	(void)in;
	(void)r;
	return httpd_reply_json(c, 200, json_pack("{s:s}", "status", "ok"));
}

static enum MHD_Result h_readyz(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	struct inst_snapshot *s = xmalloc(sizeof(*s));
	const char *why;
	bool ready;

	(void)r;
	snapshot(in, s);
	ready = inst_status_ready(s, clock_wall_ms(), max_age(in), &why);
	free(s);
	return httpd_reply_json(c, ready ? 200 : 503,
	                        json_pack("{s:b,s:s}", "ready", ready, "reason", ready ? "" : why));
}

static enum MHD_Result h_status(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	struct inst_snapshot *s = xmalloc(sizeof(*s));
	struct buf out = BUF_INIT(STATUS_BODY_MAX);
	const char *fresh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fresh");

	(void)r;
	if (fresh && strcmp(fresh, "1") == 0)
		inst_poller_refresh(in, FRESH_WAIT_MS);
	snapshot(in, s);
	inst_status_json(s, clock_wall_ms(), max_age(in), &out);
	free(s);
	return httpd_reply(c, 200, "application/json", buf_detach(&out, NULL));
}

static enum MHD_Result h_metrics(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	struct inst_snapshot *s = xmalloc(sizeof(*s));
	struct buf out = BUF_INIT(METRICS_BODY_MAX);

	(void)r;
	snapshot(in, s);
	inst_metrics_render(s, clock_wall_ms(), max_age(in), &out);
	free(s);
	return httpd_reply(c, 200, "text/plain; version=0.0.4", buf_detach(&out, NULL));
}

/* --- mutations ----------------------------------------------------------------------- */

static bool client_cert_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	unsigned int status = 1, n = 0;

	if (!ci || !ci->tls_session || !tls_verify_peers2 || !tls_get_peers)
		return false;
	if (!tls_get_peers(ci->tls_session, &n) || n == 0)
		return false;
	return tls_verify_peers2(ci->tls_session, &status) == 0 && status == 0;
}

/* The verified client certificate is a peer manager's (CN INST_PEER_CN). */
static bool is_peer(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
	        MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	const struct tls_datum *der;
	unsigned int n = 0;
	char cn[X509_CN_MAX + 1];

	if (!ci || !ci->tls_session || !(der = tls_get_peers(ci->tls_session, &n)) || n == 0)
		return false;
	return x509_der_common_name(der[0].data, der[0].size, cn, sizeof(cn), NULL) == 0 &&
	       strcmp(cn, INST_PEER_CN) == 0;
}

static enum MHD_Result h_mutation(struct inst *in, struct MHD_Connection *c, struct hreq *r, int op)
{
	struct err e = { 0 };
	struct inst_cmd *cmd;

	if (in->http_tls && !client_cert_ok(c))
		return httpd_reply_error(c, 401,
		                         "a client certificate signed by the operator's CA is "
		                         "required");
	if (in->http_tls && op != INST_OP_PROMOTE && is_peer(c))
		return httpd_reply_error(c, 403, "a peer's certificate may only POST /v1/promote");
	if (r->too_big)
		return httpd_reply_error(c, 413, "body: larger than the limit of 65536 bytes");
	cmd = xcalloc(1, sizeof(*cmd));
	if (inst_request_parse((enum inst_op)op, r->body.data, r->body.len, &cmd->req, &e) < 0) {
		free(cmd);
		return httpd_reply_error(c, e.code == -EMSGSIZE ? 413 : 400, e.msg);
	}
	cmd->conn = c;
	r->cmd = cmd;
	MHD_suspend_connection(c);
	if (!inst_post(in, cmd)) {
		MHD_resume_connection(c);
		cmd->status = 503;
		cmd->body = xstrdup("{\"error\":\"shutting down\"}");
		cmd->done = true;
	}
	return MHD_YES;
}

void inst_http_complete(struct inst *in, struct inst_cmd *cmd)
{
	pthread_mutex_lock(&in->mu);
	cmd->done = true;
	pthread_mutex_unlock(&in->mu);
	MHD_resume_connection(cmd->conn);
}

/* --- routing ------------------------------------------------------------------------- */

struct route {
	const char *path;
	const char *method;
	enum MHD_Result (*fn)(struct inst *in, struct MHD_Connection *c, struct hreq *r);
};

static const struct route api_routes[] = {
	{ "/healthz", "GET", h_healthz },
	{ "/readyz", "GET", h_readyz },
	{ "/v1/status", "GET", h_status },
	{ NULL, NULL, NULL },
};

static const struct route metrics_routes[] = {
	{ "/metrics", "GET", h_metrics },
	{ "/healthz", "GET", h_healthz },
	{ NULL, NULL, NULL },
};

static enum MHD_Result route(struct inst *in, const struct route *routes, bool api,
                             struct MHD_Connection *c, const char *url, const char *method,
                             struct hreq *r)
{
	int op = api ? inst_op_from_path(url) : -1;

	for (const struct route *rt = routes; rt->path; rt++) {
		if (strcmp(rt->path, url) != 0)
			continue;
		if (strcmp(method, rt->method) != 0 && strcmp(method, "HEAD") != 0)
			return httpd_reply_not_allowed(c, rt->method);
		return rt->fn(in, c, r);
	}
	if (op >= 0 && strcmp(method, "POST") != 0)
		return httpd_reply_not_allowed(c, "POST");
	if (op >= 0)
		return h_mutation(in, c, r, op);
	return httpd_reply_error(c, 404, "no such endpoint");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls, bool api)
{
	struct inst *in = cls;
	struct hreq *r = *con_cls;

	(void)version;
	if (!r) {
		r = xcalloc(1, sizeof(*r));
		buf_init(&r->body, INST_HTTP_BODY_MAX);
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_size) {
		if (buf_append(&r->body, upload, *upload_size) < 0)
			r->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->cmd && r->cmd->done) {
		char *body = r->cmd->body ? r->cmd->body : xstrdup("{}");

		r->cmd->body = NULL;
		return httpd_reply(c, r->cmd->status, "application/json", body);
	}
	if (r->cmd)
		return MHD_YES; /* spurious call while suspended */
	return route(in, api ? api_routes : metrics_routes, api, c, url, method, r);
}

static enum MHD_Result handle_api(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	return handle(cls, c, url, method, version, upload, upload_size, con_cls, true);
}

static enum MHD_Result handle_metrics(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version, const char *upload,
                                      size_t *upload_size, void **con_cls)
{
	return handle(cls, c, url, method, version, upload, upload_size, con_cls, false);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	struct hreq *r = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!r)
		return;
	if (r->cmd) {
		inst_request_release(&r->cmd->req);
		free(r->cmd->body);
		free(r->cmd);
	}
	buf_release(&r->body);
	free(r);
	*con_cls = NULL;
}

/* --- start/stop ---------------------------------------------------------------------- */

static char *read_pem(const char *dir, const char *name)
{
	char path[PATH_MAX], *buf;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	buf = xmalloc(PEM_MAX + 1);
	n = read(fd, buf, PEM_MAX);
	close(fd);
	if (n <= 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static struct MHD_Daemon *start(struct inst *in, int port, MHD_AccessHandlerCallback fn, bool tls,
                                char *const pem[3])
{
	struct httpd_opts o = { .address = in->set.http_address,
		                .port = port,
		                .conn_limit = HTTP_CONN_LIMIT,
		                .conn_timeout_s = HTTP_CONN_TIMEOUT,
		                .thread_stack = HTTP_STACK,
		                .suspend_resume = true,
		                .completed = completed };

	if (tls) {
		o.tls_cert = pem[0];
		o.tls_key = pem[1];
		o.tls_trust = pem[2];
	}
	return httpd_start(&o, fn, in);
}

static void load_tls(struct inst *in, char *pem[3])
{
	pem[0] = read_pem(in->set.http_tls_dir, "tls.crt");
	pem[1] = read_pem(in->set.http_tls_dir, "tls.key");
	pem[2] = read_pem(in->set.http_tls_dir, "ca.crt");
	in->http_tls = pem[0] && pem[1] && pem[2];
	if (!in->http_tls)
		return;
	*(void **)&tls_verify_peers2 = dlsym(RTLD_DEFAULT, "gnutls_certificate_verify_peers2");
	*(void **)&tls_get_peers = dlsym(RTLD_DEFAULT, "gnutls_certificate_get_peers");
}

int inst_http_start(struct inst *in, struct err *e)
{
	char *pem[3];
	int rc = 0;

	load_tls(in, pem);
	in->http = start(in, (int)in->set.http_port, handle_api, in->http_tls, pem);
	in->metrics = start(in, (int)in->set.metrics_port, handle_metrics, false, pem);
	if (!in->http || !in->metrics)
		rc = err_set(e, -EADDRINUSE, "cannot listen on %s:%lld/%lld", in->set.http_address,
		             (long long)in->set.http_port, (long long)in->set.metrics_port);
	for (int i = 0; i < 3; i++) {
		if (pem[i])
			secure_zero(pem[i], strlen(pem[i]));
		free(pem[i]);
	}
	if (!rc && in->http_tls && (!tls_verify_peers2 || !tls_get_peers))
		log_warn("http",
		         "GnuTLS verification functions not found: mutations will be "
		         "refused over HTTPS",
		         (char *)NULL);
	return rc;
}

void inst_http_stop(struct inst *in)
{
	httpd_stop(in->http);
	httpd_stop(in->metrics);
	in->http = in->metrics = NULL;
}

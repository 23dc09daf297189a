/*
 * http: the instance manager's HTTP API and metrics endpoint on libmicrohttpd.
 *
 * Each daemon runs one internal polling thread, which nothing a handler does may block:
 * reads copy the snapshot under the context mutex and render the copy; a mutation parses
 * its body (capped at INST_HTTP_BODY_MAX: 413 past it), suspends the connection and posts
 * a command to the supervisor, which resumes the connection when done; the handler,
 * called again, queues the answer. A ?fresh=1 status suspends its connection too, and the
 * helper thread resumes it once the next poll is in (or FRESH_WAIT_MS passed; one poll
 * answers every request waiting). So neither a switchover nor a slow server delays
 * /healthz or another /v1/status. Connections: at most HTTP_CONN_LIMIT per daemon and
 * HTTP_PER_IP_LIMIT from one client address (idle sockets from one address cannot take
 * every slot: the controller, a peer and the kubelet each need one or two), closed after
 * HTTP_CONN_TIMEOUT seconds idle (a suspended connection does not time out).
 *
 * Routes (a table): GET /healthz, GET /readyz, GET /v1/status[?fresh=1], POST
 * /v1/{fence,unfence,promote,replicate,switchover,config,restart}; GET /metrics and
 * /healthz on the metrics port. A known path with another method is 405 with Allow;
 * anything else 404. Every answer is JSON (metrics: Prometheus text). With --role
 * sentinel (in->sentinel_api set) the same API daemon, TLS and authorization serve
 * GET /healthz, /readyz, /v1/status from sentinel_run.c and POST
 * /v1/sentinel/{failover,reset} (posted to its loop), no metrics port; each role's
 * mutations are 404 on the other.
 *
 * TLS (instance/http_tls.h judges --http-tls and the files of --http-tls-dir): with
 * tls.crt, tls.key and ca.crt the API serves HTTPS (GnuTLS inside libmicrohttpd) and asks
 * for a client certificate; mutations require one that verifies against ca.crt (else
 * 401), probes and status stay open. The verification calls GnuTLS, which is linked
 * through libmicrohttpd: its two functions are looked up with dlsym. A verified
 * certificate whose common name is INST_PEER_CN is another manager handing over a
 * switchover: it may POST /v1/promote and nothing else (403). The controller's layout
 * (controller/pki.h) gives every pod that peer certificate, signed by the same client CA
 * as the controller's own, so a pod can promote a peer but never fence, reconfigure or
 * restart one; its server certificate is signed by another CA and is refused.
 * When a file is missing (REFUSED) the API is plain HTTP and read-only: every mutation is
 * 503 with the reason, which /healthz (still 200: a liveness probe must not restart a
 * primary for it) and /v1/status show too, logged once at error. While HTTPS is off the
 * helper re-reads the files every --secret-poll-interval; once they are complete it stops
 * the plain daemon and starts the HTTPS one (when no mutation is suspended: in REFUSED
 * none can be), so the process never restarts for it. HTTPS material is read once.
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

#include "instance/http_tls.h"
#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/x509.h"

#define HTTP_CONN_LIMIT   64
#define HTTP_PER_IP_LIMIT 8
#define HTTP_CONN_TIMEOUT 5 /* seconds */
#define HTTP_STACK        (256 * 1024)
#define PEM_MAX           (64 * 1024)
#define STATUS_BODY_MAX   (256 * 1024)
#define METRICS_BODY_MAX  (512 * 1024)
#define FRESH_WAIT_MS     1000
#define INST_PEER_CN      "redis-operator-peer" /* controller/pki.h CTL_PKI_PEER_CN */

enum fresh { FRESH_NONE, FRESH_WAITING, FRESH_DONE };

struct hreq {
	struct buf body;
	bool too_big;
	bool counted; /* a mutation counted in h->mutations until it completes */
	struct inst_cmd *cmd;
	enum fresh fresh;            /* [h->mu] a ?fresh=1 status */
	struct MHD_Connection *conn; /* while FRESH_WAITING */
	struct hreq *next;           /* in h->fresh */
};

/* The daemons and the helper thread. [mu]: guarded by mu; the rest belongs to the
 * helper, and to inst_http_start/stop before it starts and after it ended. */
struct inst_http {
	struct inst *in;
	struct MHD_Daemon *api, *metrics;
	enum inst_http_tls_mode mode;
	enum inst_http_serve serve;            /* what api serves */
	uint64_t stamp;                        /* of the TLS files when last judged */
	char logged[INST_HTTP_TLS_REASON_MAX]; /* the refusal last logged */
	pthread_t helper;
	bool helper_running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop;          /* [mu] stopping: nothing new is suspended */
	bool swapping;      /* [mu] api is being replaced: nothing new is suspended */
	unsigned mutations; /* [mu] mutations suspended, or answered and not completed yet */
	struct hreq *fresh; /* [mu] ?fresh=1 requests waiting for the next poll */
};

/* GnuTLS, resolved at start-up. */
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

/* Mutations are refused (TLS material incomplete): true, and why. */
static bool refused(struct inst *in, char *why, size_t len)
{
	bool r;

	pthread_mutex_lock(&in->mu);
	r = in->snap.http_serve == INST_HTTP_SERVE_REFUSED;
	snprintf(why, len, "%s", r ? in->snap.http_tls_error : "");
	pthread_mutex_unlock(&in->mu);
	return r;
}

/* --- read-only routes ---------------------------------------------------------------- */

static enum MHD_Result h_healthz(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	char why[INST_HTTP_TLS_REASON_MAX];

	(void)r;
	if (!refused(in, why, sizeof(why)))
		return httpd_reply_json(c, 200, json_pack("{s:s}", "status", "ok"));
	/* still 200: the manager is alive, and a liveness probe restarting a primary would
	 * not bring the files back */
	return httpd_reply_json(c, 200, json_pack("{s:s,s:s}", "status", "degraded", "error", why));
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

static enum MHD_Result reply_status(struct inst *in, struct MHD_Connection *c)
{
	struct inst_snapshot *s = xmalloc(sizeof(*s));
	struct buf out = BUF_INIT(STATUS_BODY_MAX);

	snapshot(in, s);
	inst_status_json(s, clock_wall_ms(), max_age(in), &out);
	free(s);
	return httpd_reply(c, 200, "application/json", buf_detach(&out, NULL));
}

/* Suspends c until the helper has waited for the next poll. When nothing may be
 * suspended any more (stopping, the daemon being replaced) c is resumed at once: the
 * handler, called again, answers with the snapshot as it is. */
static enum MHD_Result fresh_wait(struct inst_http *h, struct MHD_Connection *c, struct hreq *r)
{
	bool queued;

	MHD_suspend_connection(c);
	pthread_mutex_lock(&h->mu);
	queued = !h->stop && !h->swapping;
	r->fresh = queued ? FRESH_WAITING : FRESH_DONE;
	if (queued) {
		r->conn = c;
		r->next = h->fresh;
		h->fresh = r;
		pthread_cond_signal(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	if (!queued)
		MHD_resume_connection(c);
	return MHD_YES;
}

static enum MHD_Result h_status(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	const char *fresh = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "fresh");

	if (fresh && strcmp(fresh, "1") == 0)
		return fresh_wait(in->http, c, r);
	return reply_status(in, c);
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

/* 0 when the caller of c may run op; else the HTTP status, why in msg. */
static unsigned authorize(struct inst *in, struct MHD_Connection *c, int op, char *msg, size_t len)
{
	bool tls = atomic_load(&in->http_tls);

	if (refused(in, msg, len))
		return 503;
	if (tls && !client_cert_ok(c)) {
		snprintf(msg, len, "a client certificate signed by the operator's CA is required");
		return 401;
	}
	if (tls && op != INST_OP_PROMOTE && is_peer(c)) {
		snprintf(msg, len, "a peer's certificate may only POST /v1/promote");
		return 403;
	}
	return 0;
}

/* Counts a mutation about to be suspended: false while the daemon is being replaced. */
static bool count_mutation(struct inst_http *h, struct hreq *r)
{
	pthread_mutex_lock(&h->mu);
	r->counted = !h->swapping;
	h->mutations += r->counted;
	pthread_mutex_unlock(&h->mu);
	return r->counted;
}

static enum MHD_Result h_mutation(struct inst *in, struct MHD_Connection *c, struct hreq *r, int op)
{
	char msg[INST_HTTP_TLS_REASON_MAX];
	struct err e = { 0 };
	struct inst_cmd *cmd;
	unsigned status = authorize(in, c, op, msg, sizeof(msg));

	if (status)
		return httpd_reply_error(c, status, msg);
	if (r->too_big)
		return httpd_reply_error(c, 413, "body: larger than the limit of 65536 bytes");
	cmd = xcalloc(1, sizeof(*cmd));
	if (inst_request_parse((enum inst_op)op, r->body.data, r->body.len, &cmd->req, &e) < 0) {
		free(cmd);
		return httpd_reply_error(c, e.code == -EMSGSIZE ? 413 : 400, e.msg);
	}
	if (!count_mutation(in->http, r)) {
		inst_request_release(&cmd->req);
		free(cmd);
		return httpd_reply_error(c, 503, "the API is switching to HTTPS; try again");
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

/* POST /v1/backup: answered at once (backup.c starts its own thread), never suspended. */
static enum MHD_Result h_backup(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	char msg[INST_HTTP_TLS_REASON_MAX];
	char *answer = NULL;
	unsigned status = authorize(in, c, -1, msg, sizeof(msg));

	if (status)
		return httpd_reply_error(c, status, msg);
	if (r->too_big)
		return httpd_reply_error(c, 413, "body: larger than the limit of 65536 bytes");
	status = inst_backup_post(in, r->body.data, r->body.len, &answer);
	return httpd_reply(c, status, "application/json", answer);
}

/* --- the sentinel role (in->sentinel_api) --------------------------------------------- */

static enum MHD_Result h_sen_status(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	(void)r;
	return httpd_reply(c, 200, "application/json",
	                   in->sentinel_api->status(in->sentinel_api->ctx));
}

static enum MHD_Result h_sen_readyz(struct inst *in, struct MHD_Connection *c, struct hreq *r)
{
	bool ready = in->sentinel_api->ready(in->sentinel_api->ctx);

	(void)r;
	return httpd_reply_json(c, ready ? 200 : 503, json_pack("{s:b}", "ready", ready));
}

/* A sentinel manager runs only the sentinel ops and config (dropOldPasswords:
 * sentinel_run.c), a data manager never the sentinel ops. */
static bool op_served(const struct inst *in, int op)
{
	bool sentinel_op = op == INST_OP_SENTINEL_FAILOVER || op == INST_OP_SENTINEL_RESET;

	if (op == INST_OP_CONFIG)
		return true;
	return op >= 0 && sentinel_op == (in->sentinel_api != NULL);
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
	{ API_INST_BACKUP_PATH, "POST", h_backup },
	{ NULL, NULL, NULL },
};

static const struct route sentinel_routes[] = {
	{ "/healthz", "GET", h_healthz },
	{ "/readyz", "GET", h_sen_readyz },
	{ "/v1/status", "GET", h_sen_status },
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

	if (!op_served(in, op))
		op = -1;

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

static enum fresh fresh_state(struct inst_http *h, const struct hreq *r)
{
	enum fresh f;

	pthread_mutex_lock(&h->mu);
	f = r->fresh;
	pthread_mutex_unlock(&h->mu);
	return f;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls, bool api)
{
	struct inst *in = cls;
	struct hreq *r = *con_cls;
	const struct route *routes;
	enum fresh f;

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
	if ((f = fresh_state(in->http, r)) != FRESH_NONE)
		return f == FRESH_DONE ? reply_status(in, c) : MHD_YES;
	if (r->cmd && r->cmd->done) {
		char *body = r->cmd->body ? r->cmd->body : xstrdup("{}");

		r->cmd->body = NULL;
		return httpd_reply(c, r->cmd->status, "application/json", body);
	}
	if (r->cmd)
		return MHD_YES; /* spurious call while suspended */
	routes = !api ? metrics_routes : in->sentinel_api ? sentinel_routes : api_routes;
	return route(in, routes, api, c, url, method, r);
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
	struct inst *in = cls;
	struct hreq *r = *con_cls;

	(void)c;
	(void)toe;
	if (!r)
		return;
	if (r->counted) {
		pthread_mutex_lock(&in->http->mu);
		in->http->mutations--;
		pthread_mutex_unlock(&in->http->mu);
	}
	if (r->cmd) {
		inst_request_release(&r->cmd->req);
		free(r->cmd->body);
		free(r->cmd);
	}
	buf_release(&r->body);
	free(r);
	*con_cls = NULL;
}

/* --- TLS files ----------------------------------------------------------------------- */

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

/* pem[i]: file i of inst_http_tls_files, NULL (present[i] false) when unreadable or empty. */
static void pems_load(const char *dir, char *pem[INST_HTTP_TLS_NFILES],
                      bool present[INST_HTTP_TLS_NFILES])
{
	for (size_t i = 0; i < INST_HTTP_TLS_NFILES; i++) {
		pem[i] = read_pem(dir, inst_http_tls_files[i]);
		present[i] = pem[i] != NULL;
	}
}

static void pems_free(char *pem[INST_HTTP_TLS_NFILES])
{
	for (size_t i = 0; i < INST_HTTP_TLS_NFILES; i++) {
		if (pem[i])
			secure_zero(pem[i], strlen(pem[i]));
		free(pem[i]);
		pem[i] = NULL;
	}
}

/* FNV-1a over each file's device, inode, size and mtime: moves when a file changes
 * (a Secret volume update replaces the files behind ..data). */
static uint64_t pems_stamp(const char *dir)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < INST_HTTP_TLS_NFILES; i++) {
		char path[PATH_MAX];
		struct stat st;
		uint64_t v[4] = { 0 };

		snprintf(path, sizeof(path), "%s/%s", dir, inst_http_tls_files[i]);
		if (stat(path, &st) == 0) {
			v[0] = (uint64_t)st.st_dev;
			v[1] = (uint64_t)st.st_ino;
			v[2] = (uint64_t)st.st_size;
			v[3] = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL +
			       (uint64_t)st.st_mtim.tv_nsec;
		}
		for (size_t k = 0; k < sizeof(v); k++)
			h = (h ^ ((const unsigned char *)v)[k]) * 1099511628211ULL;
	}
	return h;
}

/* --- start/stop ---------------------------------------------------------------------- */

/* pem NULL: plain HTTP. */
static struct MHD_Daemon *start(struct inst *in, int port, MHD_AccessHandlerCallback fn,
                                char *const pem[INST_HTTP_TLS_NFILES])
{
	struct httpd_opts o = { .address = in->set.http_address,
		                .port = port,
		                .conn_limit = HTTP_CONN_LIMIT,
		                .per_ip_limit = HTTP_PER_IP_LIMIT,
		                .conn_timeout_s = HTTP_CONN_TIMEOUT,
		                .thread_stack = HTTP_STACK,
		                .suspend_resume = true,
		                .completed = completed };

	if (pem) {
		o.tls_cert = pem[0];
		o.tls_key = pem[1];
		o.tls_trust = pem[2];
	}
	return httpd_start(&o, fn, in);
}

static struct MHD_Daemon *start_api(struct inst *in, char *const pem[INST_HTTP_TLS_NFILES])
{
	return start(in, (int)in->set.http_port, handle_api, pem);
}

/* Publishes what the API serves (the snapshot: /healthz, /v1/status, mutations; and
 * in->http_tls). A new reason to refuse mutations is logged once, at error; plain HTTP
 * after a refusal (the files gone again, `auto`) at info; HTTPS by swap_to_https. */
static void set_serve(struct inst_http *h, enum inst_http_serve serve, const char *reason)
{
	struct inst *in = h->in;
	bool refuse = serve == INST_HTTP_SERVE_REFUSED;

	h->serve = serve;
	atomic_store(&in->http_tls, serve == INST_HTTP_SERVE_HTTPS);
	pthread_mutex_lock(&in->mu);
	in->snap.http_serve = serve;
	snprintf(in->snap.http_tls_error, sizeof(in->snap.http_tls_error), "%s", reason);
	pthread_mutex_unlock(&in->mu);
	if (refuse && strcmp(reason, h->logged) != 0)
		log_error("http", "mutations refused", "error", reason, (char *)NULL);
	else if (serve == INST_HTTP_SERVE_PLAIN && h->logged[0])
		log_info("http", "no TLS material: mutations accepted over plain HTTP", "dir",
		         in->set.http_tls_dir, (char *)NULL);
	snprintf(h->logged, sizeof(h->logged), "%s", refuse ? reason : "");
}

/* Marks every request of the list answered, then resumes it (the handler, called
 * again, renders the snapshot; the request may be freed as soon as it is resumed). */
static void fresh_resume(struct inst_http *h, struct hreq *list)
{
	pthread_mutex_lock(&h->mu);
	for (struct hreq *r = list; r; r = r->next)
		r->fresh = FRESH_DONE;
	pthread_mutex_unlock(&h->mu);
	while (list) {
		struct hreq *next = list->next;

		MHD_resume_connection(list->conn);
		list = next;
	}
}

/* Replaces the plain API daemon with an HTTPS one. false: not now (a mutation is
 * suspended on the plain daemon); the next poll retries. Material libmicrohttpd refuses
 * leaves the plain daemon read-only until the files change. */
static bool swap_to_https(struct inst_http *h, char *const pem[INST_HTTP_TLS_NFILES])
{
	char why[INST_HTTP_TLS_REASON_MAX];
	struct hreq *waiting;

	pthread_mutex_lock(&h->mu);
	if (h->mutations) {
		pthread_mutex_unlock(&h->mu);
		return false;
	}
	h->swapping = true;
	waiting = h->fresh;
	h->fresh = NULL;
	pthread_mutex_unlock(&h->mu);
	fresh_resume(h, waiting);
	httpd_stop(h->api);
	/* before the first HTTPS request: mutations need a client certificate from then on */
	atomic_store(&h->in->http_tls, true);
	if ((h->api = start_api(h->in, pem))) {
		set_serve(h, INST_HTTP_SERVE_HTTPS, "");
		log_info("http", "TLS material complete: serving HTTPS", "dir",
		         h->in->set.http_tls_dir, (char *)NULL);
	} else {
		snprintf(why, sizeof(why),
		         "TLS material unusable: libmicrohttpd refused tls.crt, tls.key or ca.crt "
		         "in %s; mutations refused",
		         h->in->set.http_tls_dir);
		set_serve(h, INST_HTTP_SERVE_REFUSED, why);
		h->api = start_api(h->in, NULL);
	}
	pthread_mutex_lock(&h->mu);
	h->swapping = false;
	pthread_mutex_unlock(&h->mu);
	return true;
}

/* When the files' stamp moved, re-reads them and acts on the verdict (plain, refused, or
 * the switch to HTTPS). While HTTPS is on, complete new material restarts the HTTPS
 * daemon with it (a renewed certificate or client CA, controller/pki.h), in the same
 * process; incomplete material (a Secret volume mid-update) keeps the old one. */
static void tls_step(struct inst_http *h)
{
	const char *dir = h->in->set.http_tls_dir;
	char *pem[INST_HTTP_TLS_NFILES], reason[INST_HTTP_TLS_REASON_MAX];
	bool present[INST_HTTP_TLS_NFILES];
	uint64_t stamp = pems_stamp(dir);
	enum inst_http_serve want;

	if (!h->api && !(h->api = start_api(h->in, NULL)))
		log_error("http", "cannot listen on the API port again", (char *)NULL);
	if (stamp == h->stamp)
		return;
	pems_load(dir, pem, present);
	want = inst_http_tls_judge(h->mode, present, dir, reason, sizeof(reason));
	if (want != INST_HTTP_SERVE_HTTPS && h->serve == INST_HTTP_SERVE_HTTPS) {
		pems_free(pem);
		return;
	}
	if (want == INST_HTTP_SERVE_HTTPS && h->serve == INST_HTTP_SERVE_HTTPS)
		log_info("http", "TLS material changed: reloading", "dir", dir, (char *)NULL);
	if (want != INST_HTTP_SERVE_HTTPS)
		set_serve(h, want, reason);
	if (want != INST_HTTP_SERVE_HTTPS || swap_to_https(h, pem))
		h->stamp = stamp;
	pems_free(pem);
}

/* The helper: answers ?fresh=1 requests after a poll; looks at the TLS files every
 * --secret-poll-interval. */
static void *helper_main(void *arg)
{
	struct inst_http *h = arg;
	int64_t tls_at = clock_mono_ms() + h->in->set.secret_poll_ms;
	struct hreq *waiting;

	pthread_mutex_lock(&h->mu);
	while (!h->stop) {
		waiting = h->fresh;
		h->fresh = NULL;
		if (!waiting && clock_mono_ms() < tls_at) {
			clock_cond_wait_until(&h->cv, &h->mu, tls_at);
			continue;
		}
		pthread_mutex_unlock(&h->mu);
		if (waiting) {
			inst_poller_refresh(h->in, FRESH_WAIT_MS);
			fresh_resume(h, waiting);
		} else {
			tls_step(h);
			tls_at = clock_mono_ms() + h->in->set.secret_poll_ms;
		}
		pthread_mutex_lock(&h->mu);
	}
	waiting = h->fresh;
	h->fresh = NULL;
	pthread_mutex_unlock(&h->mu);
	fresh_resume(h, waiting);
	return NULL;
}

static void resolve_gnutls(void)
{
	*(void **)&tls_verify_peers2 = dlsym(RTLD_DEFAULT, "gnutls_certificate_verify_peers2");
	*(void **)&tls_get_peers = dlsym(RTLD_DEFAULT, "gnutls_certificate_get_peers");
}

int inst_http_start(struct inst *in, struct err *e)
{
	struct inst_http *h = xcalloc(1, sizeof(*h));
	char *pem[INST_HTTP_TLS_NFILES], reason[INST_HTTP_TLS_REASON_MAX];
	bool present[INST_HTTP_TLS_NFILES];
	int rc;

	h->in = in;
	pthread_mutex_init(&h->mu, NULL);
	clock_cond_init(&h->cv);
	in->http = h;
	(void)inst_http_tls_mode_parse(in->set.http_tls, &h->mode); /* the table checked it */
	resolve_gnutls();
	h->stamp = pems_stamp(in->set.http_tls_dir);
	pems_load(in->set.http_tls_dir, pem, present);
	set_serve(
	        h,
	        inst_http_tls_judge(h->mode, present, in->set.http_tls_dir, reason, sizeof(reason)),
	        reason);
	h->api = start_api(in, h->serve == INST_HTTP_SERVE_HTTPS ? pem : NULL);
	pems_free(pem);
	if (!in->sentinel_api) /* a sentinel manager has no metrics port */
		h->metrics = start(in, (int)in->set.metrics_port, handle_metrics, NULL);
	if (!h->api || (!h->metrics && !in->sentinel_api))
		return err_set(e, -EADDRINUSE, "cannot listen on %s:%lld/%lld%s",
		               in->set.http_address, (long long)in->set.http_port,
		               (long long)in->set.metrics_port,
		               h->serve == INST_HTTP_SERVE_HTTPS ? " (or bad TLS material)" : "");
	if ((rc = pthread_create(&h->helper, NULL, helper_main, h)) != 0)
		return err_set(e, -rc, "http: pthread_create failed");
	h->helper_running = true;
	if (h->serve == INST_HTTP_SERVE_HTTPS && (!tls_verify_peers2 || !tls_get_peers))
		log_warn("http",
		         "GnuTLS verification functions not found: mutations will be "
		         "refused over HTTPS",
		         (char *)NULL);
	return 0;
}

void inst_http_stop(struct inst *in)
{
	struct inst_http *h = in->http;

	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->stop = true;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
	if (h->helper_running)
		pthread_join(h->helper, NULL);
	httpd_stop(h->api);
	httpd_stop(h->metrics);
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h);
	in->http = NULL;
}

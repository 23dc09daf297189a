/*
 * http: the controller's health and metrics endpoints on libmicrohttpd (the
 * Deployment's contract, config/manager/manager.yaml):
 *   :8081 GET /healthz  200 while the process runs
 *         GET /readyz   200 once every cache listed (also on a non-leader), else 503
 *   :8080 GET /metrics  Prometheus text (metrics.c)
 * Handlers read atomics and the queue's metrics only. One internal thread per daemon.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/httpd.h"

#define HTTP_CONN_LIMIT   32
#define HTTP_CONN_TIMEOUT 10
#define METRICS_BODY_MAX  (8 * 1024 * 1024) /* ~3 KiB per cluster (metrics_cluster.c) */

static enum MHD_Result health(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
	struct ctl *c = cls;
	bool ready = atomic_load(&c->synced) && !atomic_load(&c->lost);

	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return httpd_reply(conn, 405, "application/json",
		                   xstrdup("{\"error\":\"GET only\"}"));
	if (strcmp(url, "/healthz") == 0)
		return httpd_reply(conn, 200, "application/json", xstrdup("{\"status\":\"ok\"}"));
	if (strcmp(url, "/readyz") == 0)
		return httpd_reply(conn, ready ? 200 : 503, "application/json",
		                   xasprintf("{\"ready\":%s,\"leader\":%s}",
		                             ready ? "true" : "false",
		                             atomic_load(&c->leading) ? "true" : "false"));
	return httpd_reply(conn, 404, "application/json",
	                   xstrdup("{\"error\":\"no such endpoint\"}"));
}

static enum MHD_Result metrics(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	struct buf out = BUF_INIT(METRICS_BODY_MAX);

	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(url, "/metrics") != 0)
		return httpd_reply(conn, 404, "text/plain", xstrdup("no such endpoint\n"));
	ctl_metrics_render(cls, &out);
	return httpd_reply(conn, 200, "text/plain; version=0.0.4", buf_detach(&out, NULL));
}

static struct MHD_Daemon *start(struct ctl *c, int64_t port, MHD_AccessHandlerCallback fn)
{
	struct httpd_opts o = { .address = c->set.bind_address,
		                .port = (int)port,
		                .conn_limit = HTTP_CONN_LIMIT,
		                .conn_timeout_s = HTTP_CONN_TIMEOUT };

	return httpd_start(&o, fn, c);
}

int ctl_http_start(struct ctl *c, struct err *e)
{
	c->http_health = start(c, c->set.health_port, health);
	c->http_metrics = start(c, c->set.metrics_port, metrics);
	if (!c->http_health || !c->http_metrics)
		return err_set(e, -EADDRINUSE, "cannot listen on %s:%lld and :%lld",
		               c->set.bind_address, (long long)c->set.health_port,
		               (long long)c->set.metrics_port);
	return 0;
}

void ctl_http_stop(struct ctl *c)
{
	httpd_stop(c->http_health);
	httpd_stop(c->http_metrics);
	c->http_health = c->http_metrics = NULL;
}

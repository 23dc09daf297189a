/*
 * httpd: the libmicrohttpd start-up and replies the project's HTTP endpoints share.
 *
 *   struct httpd_opts o = { .address = "0.0.0.0", .port = 8080, .conn_limit = 32,
 *                           .per_ip_limit = 4, .conn_timeout_s = 10 };
 *   struct MHD_Daemon *d = httpd_start(&o, handler, ctx);     NULL: cannot listen
 *   ... in handler: return httpd_reply_json(conn, 200, json_pack("{s:s}", "status", "ok"));
 *   httpd_stop(d);
 *
 * A daemon runs one internal polling thread (epoll) that calls the handler, so a
 * handler must not block: one that waits suspends its connection instead (or the daemon
 * runs a thread per connection: thread_per_connection). Routing,
 * request bodies and their caps stay with the caller. Past conn_limit a new connection
 * waits in the listen backlog; past per_ip_limit (from one client address) it is
 * accepted and closed at once, so one client cannot take every slot. Replies take ownership of what
 * they are given (the text, the JSON) whatever happens. Any thread.
 */
#ifndef REDIS_OPERATOR_HTTPD_H
#define REDIS_OPERATOR_HTTPD_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

struct httpd_opts {
	const char *address;     /* IPv4 address to listen on ("0.0.0.0": all) */
	int port;                /* 0: any free port (MHD_DAEMON_INFO_BIND_PORT tells) */
	unsigned conn_limit;     /* connections at once */
	unsigned per_ip_limit;   /* connections at once from one client address; 0: no limit */
	unsigned conn_timeout_s; /* an idle connection is closed after this (not a suspended one) */
	size_t thread_stack;     /* bytes; 0: libmicrohttpd's default */
	bool suspend_resume;     /* handlers may MHD_suspend_connection */
	/* a thread per connection instead of one polling thread: a handler or a content
	 * reader may block (a response that waits for data: the node agent's log follow) */
	bool thread_per_connection;
	/* Called with the handler's ctx when a request ends (to free its state); may be NULL. */
	MHD_RequestCompletedCallback completed;
	/* PEM text (copied at start); cert NULL: plain HTTP. trust set: client certificates
	 * are asked for (and verifiable by the handler), not required. */
	const char *tls_cert, *tls_key, *tls_trust;
};

/* Starts a daemon calling fn(ctx, ...) for every request. NULL when o->address is not an
 * IPv4 address or libmicrohttpd cannot start (the port is taken, bad TLS material). */
struct MHD_Daemon *httpd_start(const struct httpd_opts *o, MHD_AccessHandlerCallback fn, void *ctx);
/* Stops the daemon and waits for its thread. NULL-safe. */
void httpd_stop(struct MHD_Daemon *d);

/* Queues status with body text (malloc'd; freed by libmicrohttpd) as Content-Type type. */
enum MHD_Result httpd_reply(struct MHD_Connection *c, unsigned status, const char *type,
                            char *text);
/* Queues j (its reference is taken) as compact JSON with sorted keys. */
enum MHD_Result httpd_reply_json(struct MHD_Connection *c, unsigned status, json_t *j);
/* Queues {"error": msg}. */
enum MHD_Result httpd_reply_error(struct MHD_Connection *c, unsigned status, const char *msg);
/* Queues 405 {"error":"method not allowed"} with the header Allow: allow. */
enum MHD_Result httpd_reply_not_allowed(struct MHD_Connection *c, const char *allow);

#endif

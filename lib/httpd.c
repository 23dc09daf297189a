/*
 * httpd: libmicrohttpd daemons and replies (see httpd.h).
 *
 * httpd_start turns struct httpd_opts into an MHD_OPTION_ARRAY, so the options that are
 * off are simply not passed (libmicrohttpd's defaults stay). Every reply copies nothing:
 * the body is handed to libmicrohttpd with MHD_RESPMEM_MUST_FREE.
 */
#include "httpd.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "lib/alloc.h"

#define HTTPD_MAX_OPTS 11

static void opt_add(struct MHD_OptionItem *v, size_t *n, enum MHD_OPTION option, intptr_t value,
                    void *ptr)
{
	v[*n].option = option;
	v[*n].value = value;
	v[*n].ptr_value = ptr;
	(*n)++;
}

struct MHD_Daemon *httpd_start(const struct httpd_opts *o, MHD_AccessHandlerCallback fn, void *ctx)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD |
	                 (o->thread_per_connection ? MHD_USE_THREAD_PER_CONNECTION : MHD_USE_EPOLL);
	struct MHD_OptionItem v[HTTPD_MAX_OPTS];
	size_t n = 0;

	if (inet_pton(AF_INET, o->address, &sa.sin_addr) != 1)
		return NULL;
	opt_add(v, &n, MHD_OPTION_SOCK_ADDR, 0, &sa);
	opt_add(v, &n, MHD_OPTION_CONNECTION_LIMIT, o->conn_limit, NULL);
	opt_add(v, &n, MHD_OPTION_CONNECTION_TIMEOUT, o->conn_timeout_s, NULL);
	if (o->per_ip_limit)
		opt_add(v, &n, MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->per_ip_limit, NULL);
	if (o->thread_stack)
		opt_add(v, &n, MHD_OPTION_THREAD_STACK_SIZE, (intptr_t)o->thread_stack, NULL);
	if (o->completed)
		opt_add(v, &n, MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)o->completed, ctx);
	if (o->tls_cert) {
		flags |= MHD_USE_TLS;
		opt_add(v, &n, MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)o->tls_cert);
		opt_add(v, &n, MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)o->tls_key);
		if (o->tls_trust)
			opt_add(v, &n, MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)o->tls_trust);
	}
	opt_add(v, &n, MHD_OPTION_END, 0, NULL);
	if (o->suspend_resume)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	return MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, fn, ctx, MHD_OPTION_ARRAY, v,
	                        MHD_OPTION_END);
}

void httpd_stop(struct MHD_Daemon *d)
{
	if (d)
		MHD_stop_daemon(d);
}

/* Queues text (taken) as the body of status; an Allow header when allow is set. */
static enum MHD_Result httpd_queue(struct MHD_Connection *c, unsigned status, const char *type,
                                   char *text, const char *allow)
{
	struct MHD_Response *r =
	        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	MHD_add_response_header(r, "Content-Type", type);
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

enum MHD_Result httpd_reply(struct MHD_Connection *c, unsigned status, const char *type, char *text)
{
	return httpd_queue(c, status, type, text, NULL);
}

enum MHD_Result httpd_reply_json(struct MHD_Connection *c, unsigned status, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);

	json_decref(j);
	return httpd_reply(c, status, "application/json", text);
}

enum MHD_Result httpd_reply_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return httpd_reply_json(c, status, json_pack("{s:s}", "error", msg));
}

enum MHD_Result httpd_reply_not_allowed(struct MHD_Connection *c, const char *allow)
{
	return httpd_queue(c, 405, "application/json",
	                   xstrdup("{\"error\":\"method not allowed\"}"), allow);
}

/*
 * Unit tests for lib/httpd: a daemon on 127.0.0.1 (a free port) whose handler answers
 * each path with one of the reply helpers; libcurl checks the exact status, Content-Type,
 * Allow header and body on the wire. Also: the completed callback gets the handler's
 * ctx once per request, the options that make start-up fail (not an IPv4 address, a
 * port in use) return NULL, and httpd_stop takes NULL. Connection limits on raw
 * sockets: past per_ip_limit a client address gets its connection closed at once while
 * another loopback address (127.0.0.2) is served; an idle connection is closed after
 * conn_timeout_s. TLS is covered by test/integration/instance.sh (the instance
 * manager's HTTPS API).
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "unit.h"

struct ctx {
	atomic_int completed;
};

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)method;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(url, "/text") == 0)
		return httpd_reply(c, 200, "text/plain; version=0.0.4", xstrdup("a 1\n"));
	if (strcmp(url, "/json") == 0)
		return httpd_reply_json(c, 201, json_pack("{s:s,s:i}", "z", "x\"y", "a", 1));
	if (strcmp(url, "/error") == 0)
		return httpd_reply_error(c, 503, "not \"ready\"");
	if (strcmp(url, "/empty") == 0)
		return httpd_reply(c, 204, "application/json", xstrdup(""));
	return httpd_reply_not_allowed(c, "POST");
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	struct ctx *x = cls;

	(void)c;
	(void)con_cls;
	(void)toe;
	atomic_fetch_add(&x->completed, 1);
}

static size_t on_body(char *p, size_t size, size_t n, void *out)
{
	return buf_append(out, p, size * n) == 0 ? size * n : 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *out)
{
	if (n * size > 7 && strncasecmp(p, "Allow: ", 7) == 0)
		buf_append(out, p + 7, strcspn(p + 7, "\r\n"));
	return size * n;
}

struct answer {
	long status;
	char type[128];
	struct buf body, allow;
};

/* GET path from the loopback address src (NULL: any). */
static void get_from(const char *src, int port, const char *path, struct answer *a)
{
	CURL *h = curl_easy_init();
	char url[128], *type = NULL;

	memset(a, 0, sizeof(*a));
	buf_init(&a->body, 4096);
	buf_init(&a->allow, 256);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &a->allow);
	if (src)
		curl_easy_setopt(h, CURLOPT_INTERFACE, src);
	ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
	snprintf(a->type, sizeof(a->type), "%s", type ? type : "");
	curl_easy_cleanup(h);
}

static void get(int port, const char *path, struct answer *a)
{
	get_from(NULL, port, path, a);
}

static int port_of(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *i = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);

	ck_assert_ptr_nonnull(i);
	return i->port;
}

static const struct {
	const char *path;
	long status;
	const char *type, *body, *allow;
} replies[] = {
	{ "/text", 200, "text/plain; version=0.0.4", "a 1\n", "" },
	{ "/json", 201, "application/json", "{\"a\":1,\"z\":\"x\\\"y\"}", "" },
	{ "/error", 503, "application/json", "{\"error\":\"not \\\"ready\\\"\"}", "" },
	{ "/empty", 204, "application/json", "", "" },
	{ "/other", 405, "application/json", "{\"error\":\"method not allowed\"}", "POST" },
};

START_TEST(reply_on_the_wire)
{
	struct ctx x = { 0 };
	struct httpd_opts o = { .address = "127.0.0.1",
		                .conn_limit = 4,
		                .conn_timeout_s = 5,
		                .thread_stack = 256 * 1024,
		                .suspend_resume = true,
		                .completed = completed };
	struct MHD_Daemon *d = httpd_start(&o, handler, &x);
	struct answer a;

	ck_assert_ptr_nonnull(d);
	get(port_of(d), replies[_i].path, &a);
	httpd_stop(d);
	ck_assert_int_eq(a.status, replies[_i].status);
	ck_assert_str_eq(a.type, replies[_i].type);
	ck_assert_str_eq(buf_cstr(&a.body), replies[_i].body);
	ck_assert_str_eq(buf_cstr(&a.allow), replies[_i].allow);
	ck_assert_int_eq(atomic_load(&x.completed), 1);
	buf_release(&a.body);
	buf_release(&a.allow);
}
END_TEST

/* Without a completed callback nothing is called back; without the optional sizes the
 * daemon still serves. */
START_TEST(minimal_options)
{
	struct httpd_opts o = { .address = "0.0.0.0", .conn_limit = 1, .conn_timeout_s = 1 };
	struct MHD_Daemon *d = httpd_start(&o, handler, NULL);
	struct answer a;

	ck_assert_ptr_nonnull(d);
	get(port_of(d), "/text", &a);
	ck_assert_int_eq(a.status, 200);
	httpd_stop(d);
	buf_release(&a.body);
	buf_release(&a.allow);
}
END_TEST

static const char *const bad_addresses[] = { "", "localhost", "::1", "127.0.0.256", "1.2.3" };

START_TEST(bad_address)
{
	struct httpd_opts o = { .address = bad_addresses[_i],
		                .conn_limit = 1,
		                .conn_timeout_s = 1 };

	ck_assert_ptr_null(httpd_start(&o, handler, NULL));
}
END_TEST

START_TEST(port_in_use)
{
	struct httpd_opts o = { .address = "127.0.0.1", .conn_limit = 1, .conn_timeout_s = 1 };
	struct MHD_Daemon *d = httpd_start(&o, handler, NULL), *d2;

	ck_assert_ptr_nonnull(d);
	o.port = port_of(d);
	d2 = httpd_start(&o, handler, NULL);
	ck_assert_ptr_null(d2);
	httpd_stop(d);
	httpd_stop(NULL);
}
END_TEST

/* A TCP connection to 127.0.0.1:port from the loopback address src; nothing is sent. */
static int connect_from(const char *src, int port)
{
	struct sockaddr_in from = { .sin_family = AF_INET };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(inet_pton(AF_INET, src, &from.sin_addr), 1);
	ck_assert_int_eq(inet_pton(AF_INET, "127.0.0.1", &to.sin_addr), 1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&from, sizeof(from)), 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	return fd;
}

/* Milliseconds until the server closed fd (EOF or reset), or -1 if it is still open
 * after limit_ms. */
static long long closed_after(int fd, int limit_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	long long t0 = clock_mono_ms();
	char c;

	if (poll(&p, 1, limit_ms) <= 0)
		return -1;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0 ? clock_mono_ms() - t0 : -1;
}

/* Two idle connections from 127.0.0.1 fill its share; a third from there is closed at
 * once, and 127.0.0.2 is still answered. */
START_TEST(per_ip_limit)
{
	struct httpd_opts o = {
		.address = "127.0.0.1", .conn_limit = 16, .per_ip_limit = 2, .conn_timeout_s = 30
	};
	struct MHD_Daemon *d = httpd_start(&o, handler, NULL);
	int fd[3];
	struct answer a;

	ck_assert_ptr_nonnull(d);
	for (int i = 0; i < 3; i++)
		fd[i] = connect_from("127.0.0.1", port_of(d));
	ck_assert_int_ge(closed_after(fd[2], 2000), 0);
	ck_assert_int_eq(closed_after(fd[0], 200), -1);
	ck_assert_int_eq(closed_after(fd[1], 10), -1);
	get_from("127.0.0.2", port_of(d), "/text", &a);
	ck_assert_int_eq(a.status, 200);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	httpd_stop(d);
	buf_release(&a.body);
	buf_release(&a.allow);
}
END_TEST

/* An idle connection is closed after conn_timeout_s (1 s here), not before. */
START_TEST(idle_timeout)
{
	struct httpd_opts o = { .address = "127.0.0.1", .conn_limit = 4, .conn_timeout_s = 1 };
	struct MHD_Daemon *d = httpd_start(&o, handler, NULL);
	long long ms;
	int fd;

	ck_assert_ptr_nonnull(d);
	fd = connect_from("127.0.0.1", port_of(d));
	ms = closed_after(fd, (int)(4000 * unit_time_scale()));
	ck_assert_msg(ms >= 500, "closed after %lld ms", ms);
	close(fd);
	httpd_stop(d);
}
END_TEST

static Suite *httpd_suite(void)
{
	Suite *s = suite_create("httpd");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, reply_on_the_wire, 0, ARRAY_LEN(replies));
	tcase_add_test(tc, minimal_options);
	tcase_add_loop_test(tc, bad_address, 0, ARRAY_LEN(bad_addresses));
	tcase_add_test(tc, port_in_use);
	tcase_add_test(tc, per_ip_limit);
	tcase_add_test(tc, idle_timeout);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(httpd_suite)

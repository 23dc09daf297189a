/*
 * k8s_fake.h: a tiny HTTP/1.1 server for the lib/k8s unit tests (header-only, so the
 * Makefile's unit-helper wildcard does not link it into every test).
 *
 *   static void handle(void *ctx, int fd, const struct kf_req *r) {
 *           kf_reply(fd, 200, "{\"kind\":\"Pod\"}");
 *   }
 *   struct kf_server s;
 *   kf_start(&s, handle, ctx);          (127.0.0.1, a free port in s.port)
 *   ... talk to http://127.0.0.1:<s.port> ...
 *   kf_stop(&s);
 *
 * Every connection gets its own thread and carries one request (the reply says
 * Connection: close), so a slow answer never holds up a fast one. The handler writes
 * the whole reply to fd itself, with kf_reply or the kf_stream_* helpers (chunked
 * encoding, for watches); kf_sleep waits in small steps and gives up when the server
 * stops, so kf_stop never hangs on a handler. kf_send and kf_sleep_unless also serve
 * test_k8s_client.c's scripted server.
 */
#ifndef REDIS_OPERATOR_TEST_K8S_FAKE_H
#define REDIS_OPERATOR_TEST_K8S_FAKE_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"

#define KF_FN         static __attribute__((unused))
#define KF_REQ_MAX    (1u << 20)
#define KF_TARGET_MAX 4096

struct kf_req {
	char method[16];
	char target[KF_TARGET_MAX]; /* path and query */
	const char *headers;        /* the raw header block */
	const char *body;           /* NUL-terminated */
	size_t body_len;
};

struct kf_server;
typedef void (*kf_handler)(void *ctx, int fd, const struct kf_req *r);

struct kf_server {
	int fd, port;
	pthread_t thread;
	kf_handler fn;
	void *ctx;
	atomic_bool stop;
	atomic_int active;   /* connection threads running */
	atomic_int requests; /* requests handled */
};

struct kf_conn {
	struct kf_server *s;
	int fd;
};

KF_FN void kf_send(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

KF_FN void kf_msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Sleeps ms in 2 ms steps; false as soon as *stop is set (any fake server's flag). */
KF_FN bool kf_sleep_unless(atomic_bool *stop, int ms)
{
	struct timespec ts = { 0, 2 * 1000000 };

	for (int t = 0; t < ms; t += 2) {
		if (atomic_load(stop))
			return false;
		nanosleep(&ts, NULL);
	}
	return !atomic_load(stop);
}

KF_FN bool kf_sleep(struct kf_server *s, int ms)
{
	return kf_sleep_unless(&s->stop, ms);
}

KF_FN const char *kf_status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 404: return "Not Found";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 500: return "Internal Server Error";
	default: return "Status";
	}
}

KF_FN void kf_reply_n(int fd, int status, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
	                 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
	                 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	                 status, kf_status_text(status), len);

	kf_send(fd, head, (size_t)n);
	kf_send(fd, body, len);
}

KF_FN void kf_reply(int fd, int status, const char *body)
{
	kf_reply_n(fd, status, body, strlen(body));
}

/* A metav1.Status error answer. */
KF_FN void kf_reply_status(int fd, int status, const char *reason, const char *msg)
{
	char body[512];

	snprintf(body, sizeof(body),
	         "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	         "\"reason\":\"%s\",\"message\":\"%s\",\"code\":%d}",
	         reason, msg, status);
	kf_reply(fd, status, body);
}

KF_FN void kf_stream_begin(int fd)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	                           "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";

	kf_send(fd, head, sizeof(head) - 1);
}

KF_FN void kf_stream_chunk(int fd, const char *text)
{
	char size[32];
	int n = snprintf(size, sizeof(size), "%zx\r\n", strlen(text));

	kf_send(fd, size, (size_t)n);
	kf_send(fd, text, strlen(text));
	kf_send(fd, "\r\n", 2);
}

KF_FN void kf_stream_end(int fd)
{
	kf_send(fd, "0\r\n\r\n", 5);
}

/* "METHOD TARGET HTTP/1.1" into r. */
KF_FN bool kf_request_line(const char *line, struct kf_req *r)
{
	size_t m = strcspn(line, " "), t;

	if (m == 0 || m >= sizeof(r->method) || line[m] != ' ')
		return false;
	memcpy(r->method, line, m);
	r->method[m] = '\0';
	line += m + 1;
	t = strcspn(line, " \r");
	if (t == 0 || t >= sizeof(r->target))
		return false;
	memcpy(r->target, line, t);
	r->target[t] = '\0';
	return true;
}

/* Reads one request into r/b; false on a bad or incomplete one. */
KF_FN bool kf_read(struct kf_server *s, int fd, struct buf *b, struct kf_req *r)
{
	struct pollfd pfd = { fd, POLLIN, 0 };
	char chunk[4096], *end = NULL;
	long clen = 0;

	for (int waited = 0; waited < 3000 && !atomic_load(&s->stop);) {
		const char *cl;
		ssize_t n;

		end = strstr(buf_cstr(b), "\r\n\r\n");
		cl = strcasestr(buf_cstr(b), "\r\ncontent-length:");
		clen = (end && cl && cl < end) ? strtol(cl + 17, NULL, 10) : 0;
		if (end && b->len >= (size_t)(end + 4 - b->data) + (size_t)clen)
			break;
		end = NULL;
		if (poll(&pfd, 1, 20) <= 0) {
			waited += 20;
			continue;
		}
		n = recv(fd, chunk, sizeof(chunk), 0);
		if (n <= 0 || buf_append(b, chunk, (size_t)n) != 0)
			return false;
	}
	if (!end)
		return false;
	*end = '\0';
	r->headers = b->data;
	r->body = end + 4;
	r->body_len = (size_t)clen;
	return kf_request_line(b->data, r);
}

KF_FN void *kf_conn_main(void *arg)
{
	struct kf_conn *c = arg;
	struct buf b = BUF_INIT(KF_REQ_MAX);
	struct kf_req r;

	memset(&r, 0, sizeof(r));
	if (kf_read(c->s, c->fd, &b, &r)) {
		atomic_fetch_add(&c->s->requests, 1);
		c->s->fn(c->s->ctx, c->fd, &r);
	}
	shutdown(c->fd, SHUT_WR);
	close(c->fd);
	buf_release(&b);
	atomic_fetch_sub(&c->s->active, 1);
	free(c);
	return NULL;
}

KF_FN void *kf_accept_main(void *arg)
{
	struct kf_server *s = arg;
	struct pollfd pfd = { s->fd, POLLIN, 0 };

	while (!atomic_load(&s->stop)) {
		struct kf_conn *c;
		pthread_t t;
		int fd;

		if (poll(&pfd, 1, 20) <= 0)
			continue;
		fd = accept(s->fd, NULL, NULL);
		if (fd < 0)
			continue;
		c = xcalloc(1, sizeof(*c));
		c->s = s;
		c->fd = fd;
		atomic_fetch_add(&s->active, 1);
		if (pthread_create(&t, NULL, kf_conn_main, c) != 0) {
			atomic_fetch_sub(&s->active, 1);
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
	return NULL;
}

KF_FN int kf_start(struct kf_server *s, kf_handler fn, void *ctx)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int one = 1;

	memset(s, 0, sizeof(*s));
	s->fn = fn;
	s->ctx = ctx;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd < 0)
		return -errno;
	setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->fd, (struct sockaddr *)&a, sizeof(a)) || listen(s->fd, 64) ||
	    getsockname(s->fd, (struct sockaddr *)&a, &alen)) {
		close(s->fd);
		return -errno;
	}
	s->port = ntohs(a.sin_port);
	return -pthread_create(&s->thread, NULL, kf_accept_main, s);
}

KF_FN void kf_stop(struct kf_server *s)
{
	atomic_store(&s->stop, true);
	pthread_join(s->thread, NULL);
	close(s->fd);
	for (int i = 0; i < 2500 && atomic_load(&s->active) > 0; i++)
		kf_msleep(2);
}

/* The value of query parameter key in target ("" when absent), percent-decoding
 * nothing: tests compare the encoded form. */
KF_FN void kf_query(const char *target, const char *key, char *out, size_t len)
{
	const char *q = strchr(target, '?');
	size_t klen = strlen(key);

	out[0] = '\0';
	while (q && *q) {
		q++;
		if (strncmp(q, key, klen) == 0 && q[klen] == '=') {
			size_t n = strcspn(q + klen + 1, "&");

			snprintf(out, len, "%.*s", (int)n, q + klen + 1);
			return;
		}
		q = strchr(q, '&');
	}
}

#endif

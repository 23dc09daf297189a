/*
 * controller-it-writer: writes continuously through failovers and switchovers, then
 * checks that no write acknowledged with WAIT 1 was lost. A test tool of
 * test/integration/controller.sh.
 *
 *   controller-it-writer SECONDS PASSWORD STOPFILE IP [IP...]
 *   controller-it-writer SECONDS PASSWORD STOPFILE @IPFILE
 *
 * With @IPFILE the endpoints are the IPs in that file (blank-separated), read again each
 * time the writer has tried them all: for a rolling update, whose new pods have new IPs
 * (the test rewrites the file as they come).
 *
 * Each step sends SET w:<n> <n> and WAIT 1 250 to the endpoint that last accepted a
 * write, moving to the next one on any error (READONLY, a refused, closed or paused
 * connection: every command has a 300 ms timeout). A write is acknowledged when SET
 * answered OK and WAIT said at least one replica has it. It stops after SECONDS, or
 * earlier once STOPFILE exists, then finds the endpoint that accepts writes (retrying
 * for up to 30 s) and reads back every acknowledged key. Prints one line:
 *   acked=N unacked=U lost=M max_gap_ms=G [unreadable=R]
 * (R: keys whose GET got no answer after 3 reconnections: neither kept nor lost)
 * and exits 0 when M == 0 and N > 0, 1 otherwise.
 *
 * With WRITER_TLS_CA set (a CA file), every connection is TLS and the server's chain
 * must verify against it; WRITER_TLS_CERT and WRITER_TLS_KEY add a client certificate.
 */
#include <hiredict/hiredict.h>
#include <hiredict/hiredict_ssl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#define MAX_EPS  16
#define MAX_KEYS 2000000

struct ep {
	char host[64];
	redictContext *c;
};

static const char *password;
static redictSSLContext *tls; /* NULL: plain TCP */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void drop(struct ep *e)
{
	if (e->c)
		redictFree(e->c);
	e->c = NULL;
}

static redictContext *conn(struct ep *e)
{
	struct timeval tv = { 0, 300 * 1000 };
	redictReply *r;

	if (e->c)
		return e->c;
	e->c = redictConnectWithTimeout(e->host, 6379, tv);
	if (!e->c || e->c->err) {
		drop(e);
		return NULL;
	}
	redictSetTimeout(e->c, tv);
	if (tls && redictInitiateSSLWithContext(e->c, tls) != REDICT_OK) {
		drop(e);
		return NULL;
	}
	r = redictCommand(e->c, "AUTH %s", password);
	if (!r || r->type == REDICT_REPLY_ERROR) {
		if (r)
			freeReplyObject(r);
		drop(e);
		return NULL;
	}
	freeReplyObject(r);
	return e->c;
}

/* 1: acknowledged; 0: written but not confirmed by a replica; -1: failed. */
static int write_one(struct ep *e, long n)
{
	redictContext *c = conn(e);
	redictReply *r;
	int rc = -1;

	if (!c)
		return -1;
	r = redictCommand(c, "SET w:%ld %ld", n, n);
	if (r && r->type == REDICT_REPLY_STATUS && strcmp(r->str, "OK") == 0)
		rc = 0;
	if (r)
		freeReplyObject(r);
	if (rc == 0) {
		r = redictCommand(c, "WAIT 1 250");
		if (r && r->type == REDICT_REPLY_INTEGER && r->integer >= 1)
			rc = 1;
		if (r)
			freeReplyObject(r);
		if (!r)
			rc = 0;
	}
	if (!r)
		drop(e);
	return rc;
}

static bool writable(struct ep *e)
{
	redictContext *c = conn(e);
	redictReply *r;
	bool ok;

	if (!c)
		return false;
	r = redictCommand(c, "SET w:probe 1");
	ok = r && r->type == REDICT_REPLY_STATUS;
	if (r)
		freeReplyObject(r);
	else
		drop(e);
	return ok;
}

/* GET w:<n> answered, reconnecting up to 3 times after an I/O error or a timeout (a
 * reply that never came is not a lost write); NULL when it could not be read. */
static redictReply *get(struct ep *e, long n)
{
	for (int tries = 0; tries < 3; tries++) {
		redictContext *c = conn(e);
		redictReply *r = c ? redictCommand(c, "GET w:%ld", n) : NULL;

		if (r)
			return r;
		drop(e);
	}
	return NULL;
}

static long check(struct ep *e, const long *acked, long n, long *unreadable)
{
	long lost = 0;

	*unreadable = 0;
	for (long i = 0; i < n; i++) {
		redictReply *r = get(e, acked[i]);

		if (!r)
			(*unreadable)++;
		else if (r->type != REDICT_REPLY_STRING || strtol(r->str, NULL, 10) != acked[i])
			lost++;
		if (r)
			freeReplyObject(r);
	}
	return lost;
}

/* The endpoints from argv, or from the file named by "@FILE" when it lists any; the
 * connections of endpoints that stay are kept. */
static int load_eps(struct ep *eps, int neps, char **args, int nargs)
{
	char ips[MAX_EPS][64];
	int n = 0;

	if (args[0][0] == '@') {
		FILE *f = fopen(args[0] + 1, "r");

		while (f && n < MAX_EPS && fscanf(f, "%63s", ips[n]) == 1)
			n++;
		if (f)
			fclose(f);
		if (n == 0)
			return neps; /* not written yet, or being rewritten: keep the old list */
	} else {
		for (; n < nargs && n < MAX_EPS; n++)
			snprintf(ips[n], sizeof(ips[n]), "%s", args[n]);
	}
	for (int i = 0; i < MAX_EPS; i++) {
		if (i < n && strcmp(eps[i].host, ips[i]) == 0)
			continue;
		drop(&eps[i]);
		if (i < n)
			memcpy(eps[i].host, ips[i], sizeof(eps[i].host)); /* both 64, NUL-ended */
		else
			eps[i].host[0] = '\0';
	}
	return n;
}

static bool stop_requested(const char *file)
{
	struct stat st;

	return stat(file, &st) == 0;
}

int main(int argc, char **argv)
{
	struct ep eps[MAX_EPS] = { 0 };
	long *acked, nacked = 0, unacked = 0, n = 0, lost = -1, unreadable = 0;
	double end, last_ok, gap = 0;
	int neps, cur = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: %s SECONDS PASSWORD STOPFILE IP [IP...] | @IPFILE\n",
		        argv[0]);
		return 2;
	}
	password = argv[2];
	if (getenv("WRITER_TLS_CA")) {
		redictSSLContextError why = REDICT_SSL_CTX_NONE;

		redictInitOpenSSL();
		tls = redictCreateSSLContext(getenv("WRITER_TLS_CA"), NULL,
		                             getenv("WRITER_TLS_CERT"), getenv("WRITER_TLS_KEY"),
		                             NULL, &why);
		if (!tls) {
			fprintf(stderr, "TLS: %s\n", redictSSLContextGetError(why));
			return 2;
		}
	}
	neps = load_eps(eps, 0, argv + 4, argc - 4);
	if (neps == 0) {
		fprintf(stderr, "no endpoint\n");
		return 2;
	}
	acked = calloc(MAX_KEYS, sizeof(*acked));
	end = now_ms() + strtod(argv[1], NULL) * 1000;
	last_ok = now_ms();
	while (now_ms() < end && nacked < MAX_KEYS && !stop_requested(argv[3])) {
		int rc = write_one(&eps[cur], ++n);

		if (rc < 0) {
			if (++cur >= neps) {
				neps = load_eps(eps, neps, argv + 4, argc - 4);
				cur = 0;
			}
			continue;
		}
		if (now_ms() - last_ok > gap)
			gap = now_ms() - last_ok;
		last_ok = now_ms();
		if (rc == 1)
			acked[nacked++] = n;
		else
			unacked++;
	}
	for (double deadline = now_ms() + 30000; lost < 0 && now_ms() < deadline;) {
		neps = load_eps(eps, neps, argv + 4, argc - 4);
		for (int i = 0; i < neps && lost < 0; i++)
			if (writable(&eps[i]))
				lost = check(&eps[i], acked, nacked, &unreadable);
		if (lost < 0) {
			struct timespec ts = { 0, 200 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
	}
	printf("acked=%ld unacked=%ld lost=%ld max_gap_ms=%.0f", nacked, unacked, lost, gap);
	printf(unreadable ? " unreadable=%ld\n" : "\n", unreadable);
	for (int i = 0; i < neps; i++)
		drop(&eps[i]);
	free(acked);
	if (tls)
		redictFreeSSLContext(tls);
	return lost == 0 && unreadable == 0 && nacked > 0 ? 0 : 1;
}

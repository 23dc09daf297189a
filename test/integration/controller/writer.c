/*
 * controller-it-writer: writes continuously through failovers and switchovers, then
 * checks that no write acknowledged with WAIT 1 was lost. A test tool of
 * test/integration/controller.sh.
 *
 *   controller-it-writer SECONDS PASSWORD STOPFILE IP [IP...]
 *   controller-it-writer SECONDS PASSWORD STOPFILE @FILE
 *
 * With @FILE the endpoints are the IPs in FILE (whitespace-separated), read again each
 * time every endpoint failed in turn: pods replaced by a rolling update get new IPs, and
 * the test keeps the file current.
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
 */
#include <hiredis/hiredis.h>
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
	const char *host;
	redisContext *c;
};

static const char *password;
static char hostbuf[MAX_EPS][64];

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void drop(struct ep *e)
{
	if (e->c)
		redisFree(e->c);
	e->c = NULL;
}

static redisContext *conn(struct ep *e)
{
	struct timeval tv = { 0, 300 * 1000 };
	redisReply *r;

	if (e->c)
		return e->c;
	e->c = redisConnectWithTimeout(e->host, 6379, tv);
	if (!e->c || e->c->err) {
		drop(e);
		return NULL;
	}
	redisSetTimeout(e->c, tv);
	r = redisCommand(e->c, "AUTH %s", password);
	if (!r || r->type == REDIS_REPLY_ERROR) {
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
	redisContext *c = conn(e);
	redisReply *r;
	int rc = -1;

	if (!c)
		return -1;
	r = redisCommand(c, "SET w:%ld %ld", n, n);
	if (r && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0)
		rc = 0;
	if (r)
		freeReplyObject(r);
	if (rc == 0) {
		r = redisCommand(c, "WAIT 1 250");
		if (r && r->type == REDIS_REPLY_INTEGER && r->integer >= 1)
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
	redisContext *c = conn(e);
	redisReply *r;
	bool ok;

	if (!c)
		return false;
	r = redisCommand(c, "SET w:probe 1");
	ok = r && r->type == REDIS_REPLY_STATUS;
	if (r)
		freeReplyObject(r);
	else
		drop(e);
	return ok;
}

/* GET w:<n> answered, reconnecting up to 3 times after an I/O error or a timeout (a
 * reply that never came is not a lost write); NULL when it could not be read. */
static redisReply *get(struct ep *e, long n)
{
	for (int tries = 0; tries < 3; tries++) {
		redisContext *c = conn(e);
		redisReply *r = c ? redisCommand(c, "GET w:%ld", n) : NULL;

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
		redisReply *r = get(e, acked[i]);

		if (!r)
			(*unreadable)++;
		else if (r->type != REDIS_REPLY_STRING || strtol(r->str, NULL, 10) != acked[i])
			lost++;
		if (r)
			freeReplyObject(r);
	}
	return lost;
}

static bool stop_requested(const char *file)
{
	struct stat st;

	return stat(file, &st) == 0;
}

/* The endpoints from FILE (at most MAX_EPS); their connections are dropped. */
static int load_eps(const char *file, struct ep *eps, int neps)
{
	FILE *f = fopen(file, "r");
	int n = 0;

	for (int i = 0; i < neps; i++)
		drop(&eps[i]);
	if (!f)
		return neps;
	while (n < MAX_EPS && fscanf(f, "%63s", hostbuf[n]) == 1) {
		eps[n].host = hostbuf[n];
		n++;
	}
	fclose(f);
	return n ? n : neps;
}

int main(int argc, char **argv)
{
	struct ep eps[MAX_EPS] = { 0 };
	long *acked, nacked = 0, unacked = 0, n = 0, lost = -1, unreadable = 0;
	double end, last_ok, gap = 0;
	const char *file;
	int neps, cur = 0;

	if (argc < 5) {
		fprintf(stderr, "usage: %s SECONDS PASSWORD STOPFILE IP [IP...] | @FILE\n",
		        argv[0]);
		return 2;
	}
	password = argv[2];
	file = argv[4][0] == '@' ? argv[4] + 1 : NULL;
	neps = argc - 4 > MAX_EPS ? MAX_EPS : argc - 4;
	for (int i = 0; i < neps; i++)
		eps[i].host = argv[4 + i];
	if (file && (neps = load_eps(file, eps, 0)) == 0) {
		fprintf(stderr, "%s: no endpoint\n", file);
		return 2;
	}
	acked = calloc(MAX_KEYS, sizeof(*acked));
	end = now_ms() + strtod(argv[1], NULL) * 1000;
	last_ok = now_ms();
	while (now_ms() < end && nacked < MAX_KEYS && !stop_requested(argv[3])) {
		int rc = write_one(&eps[cur], ++n);

		if (rc < 0) {
			cur = (cur + 1) % neps;
			if (cur == 0 && file)
				neps = load_eps(file, eps, neps);
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
		for (int i = 0; i < neps && lost < 0; i++)
			if (writable(&eps[i]))
				lost = check(&eps[i], acked, nacked, &unreadable);
		if (lost < 0) {
			struct timespec ts = { 0, 200 * 1000 * 1000 };

			if (file)
				neps = load_eps(file, eps, neps);
			nanosleep(&ts, NULL);
		}
	}
	printf("acked=%ld unacked=%ld lost=%ld max_gap_ms=%.0f", nacked, unacked, lost, gap);
	printf(unreadable ? " unreadable=%ld\n" : "\n", unreadable);
	for (int i = 0; i < neps; i++)
		drop(&eps[i]);
	free(acked);
	return lost == 0 && unreadable == 0 && nacked > 0 ? 0 : 1;
}

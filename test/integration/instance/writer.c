/*
 * writer: a client that writes continuously during a switchover or failover and then
 * checks that no acknowledged write was lost. Test tool for test/integration/instance.sh.
 *
 *   writer SECONDS USER PASSWORD HOST:PORT [HOST:PORT…]
 *
 * Writes SET w:<n> <n> (n = 1, 2, …) to whichever endpoint accepts writes, moving to
 * the next endpoint on any error (READONLY, a closed or paused connection: each
 * command has a 300 ms timeout). A write counts as acknowledged only when the server
 * answered +OK. After SECONDS it finds the endpoint that accepts writes and reads back
 * every acknowledged key. Prints one line:
 *   acked=N lost=M max_gap_ms=G
 * and exits 0 when M == 0 and N > 0.
 */
#include <hiredict/hiredict.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define MAX_EPS 8

struct ep {
	char host[64];
	int port;
	redictContext *c;
};

static const char *user, *pass;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static redictContext *conn(struct ep *e)
{
	struct timeval tv = { 0, 300 * 1000 };
	redictReply *r;

	if (e->c)
		return e->c;
	e->c = redictConnectWithTimeout(e->host, e->port, tv);
	if (!e->c || e->c->err)
		goto fail;
	redictSetTimeout(e->c, tv);
	r = redictCommand(e->c, "AUTH %s %s", user, pass);
	if (!r || r->type == REDICT_REPLY_ERROR) {
		if (r)
			freeReplyObject(r);
		goto fail;
	}
	freeReplyObject(r);
	return e->c;
fail:
	if (e->c)
		redictFree(e->c);
	e->c = NULL;
	return NULL;
}

static int set_key(struct ep *e, long n)
{
	redictContext *c = conn(e);
	redictReply *r;
	int ok;

	if (!c)
		return 0;
	r = redictCommand(c, "SET w:%ld %ld", n, n);
	ok = r && r->type == REDICT_REPLY_STATUS && strcmp(r->str, "OK") == 0;
	if (r)
		freeReplyObject(r);
	if (!r) {
		redictFree(e->c);
		e->c = NULL;
	}
	return ok;
}

int main(int argc, char **argv)
{
	struct ep eps[MAX_EPS] = { 0 };
	int neps = 0, cur = 0;
	long n = 0, acked = 0, lost = 0, *ack;
	double end, last = 0, gap = 0;

	if (argc < 5)
		return 2;
	user = argv[2];
	pass = argv[3];
	for (int i = 4; i < argc && neps < MAX_EPS; i++, neps++) {
		char *colon = strrchr(argv[i], ':');

		snprintf(eps[neps].host, sizeof(eps[neps].host), "%.*s", (int)(colon - argv[i]),
		         argv[i]);
		eps[neps].port = (int)strtol(colon + 1, NULL, 10);
	}
	ack = calloc(10000000, sizeof(*ack));
	end = now_ms() + strtod(argv[1], NULL) * 1000;
	while (now_ms() < end && acked < 10000000) {
		n++;
		if (set_key(&eps[cur], n)) {
			double t = now_ms();

			if (last && t - last > gap)
				gap = t - last;
			last = t;
			ack[acked++] = n;
		} else {
			cur = (cur + 1) % neps;
		}
	}
	/* find the primary: the endpoint that accepts a write */
	for (int tries = 0; tries < 50 && !set_key(&eps[cur], 0); tries++)
		cur = (cur + 1) % neps;
	for (long i = 0; i < acked; i++) {
		redictReply *r =
		        conn(&eps[cur]) ? redictCommand(eps[cur].c, "GET w:%ld", ack[i]) : NULL;

		if (!r || r->type != REDICT_REPLY_STRING || strtol(r->str, NULL, 10) != ack[i])
			lost++;
		if (r)
			freeReplyObject(r);
	}
	printf("acked=%ld lost=%ld max_gap_ms=%.1f\n", acked, lost, gap);
	return lost == 0 && acked > 0 ? 0 : 1;
}

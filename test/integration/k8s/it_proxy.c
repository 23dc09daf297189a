/*
 * k8s-it: fault injection. A TCP proxy thread on 127.0.0.1 forwards bytes (TLS passes
 * through untouched) to the API server, and for each connection draws a fate from a
 * seeded generator: pass cleanly, drop at once, drop after a random time, truncate the
 * server's answer after a random number of bytes, or delay every chunk. Even a clean
 * connection lives at most a few seconds (then it is cut), so the client's reused
 * keep-alive connections and long watches keep meeting new fates. An informer
 * talks to the API server only through the proxy while ~200 random mutations are made
 * directly; it must end up with exactly the server's objects, every round.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "it.h"
#include "lib/alloc.h"
#include "lib/backoff.h"
#include "lib/clock.h"

enum fate { FATE_CLEAN, FATE_DROP_NOW, FATE_DROP_LATER, FATE_TRUNCATE, FATE_DELAY, FATE_N };

struct proxy {
	int lfd, port;
	struct sockaddr_in up;
	pthread_t thread;
	atomic_bool stop;
	atomic_int active;
	pthread_mutex_t mu;
	uint64_t rng;
	unsigned fates[FATE_N];
};

struct pconn {
	struct proxy *p;
	int cfd;
	enum fate fate;
	int64_t drop_at; /* FATE_DROP_LATER: monotonic ms */
	size_t budget;   /* FATE_TRUNCATE: server bytes still passed */
	int delay_ms;    /* FATE_DELAY: per chunk */
};

static uint64_t draw(struct proxy *p)
{
	uint64_t r;

	pthread_mutex_lock(&p->mu);
	r = backoff_rand64(&p->rng);
	pthread_mutex_unlock(&p->mu);
	return r;
}

/* 40 % clean, the rest spread over the four faults (15 % each). */
static void choose_fate(struct proxy *p, struct pconn *c)
{
	uint64_t r = draw(p);
	unsigned pick = (unsigned)(r % 100);

	c->fate = pick < 40 ? FATE_CLEAN : (enum fate)(1 + (pick - 40) / 15);
	c->drop_at =
	        clock_mono_ms() + (int64_t)((r >> 8) % (c->fate == FATE_DROP_LATER ? 1000 : 2000));
	c->budget = (size_t)((r >> 20) % 20000);
	c->delay_ms = (int)((r >> 36) % 150);
	pthread_mutex_lock(&p->mu);
	p->fates[c->fate]++;
	pthread_mutex_unlock(&p->mu);
}

static bool send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w <= 0)
			return false;
		b += w;
		n -= (size_t)w;
	}
	return true;
}

/* Moves one chunk from `from` to `to`, applying the fate. false: close the pair. */
static bool pump(struct pconn *c, int from, int to, bool from_server)
{
	char buf[16384];
	ssize_t n = recv(from, buf, sizeof(buf), 0);

	if (n <= 0)
		return false;
	if (c->fate == FATE_DELAY)
		it_sleep_ms(c->delay_ms);
	if (from_server && c->fate == FATE_TRUNCATE) {
		size_t pass = (size_t)n < c->budget ? (size_t)n : c->budget;

		c->budget -= pass;
		return send_all(to, buf, pass) && c->budget > 0;
	}
	return send_all(to, buf, (size_t)n);
}

static void *conn_main(void *arg)
{
	struct pconn *c = arg;
	int sfd = socket(AF_INET, SOCK_STREAM, 0);
	struct pollfd pf[2] = { { c->cfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };

	if (c->fate == FATE_DROP_NOW ||
	    connect(sfd, (struct sockaddr *)&c->p->up, sizeof(c->p->up)) != 0)
		goto out;
	while (!atomic_load(&c->p->stop)) {
		if (clock_mono_ms() >= c->drop_at)
			break;
		if (poll(pf, 2, 100) < 0)
			break;
		if ((pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pump(c, c->cfd, sfd, false))
			break;
		if ((pf[1].revents & (POLLIN | POLLHUP | POLLERR)) && !pump(c, sfd, c->cfd, true))
			break;
	}
out:
	close(sfd);
	close(c->cfd);
	atomic_fetch_sub(&c->p->active, 1);
	free(c);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct proxy *p = arg;
	struct pollfd pf = { p->lfd, POLLIN, 0 };

	while (!atomic_load(&p->stop)) {
		struct pconn *c;
		pthread_t th;
		int fd;

		if (poll(&pf, 1, 50) <= 0 || (fd = accept(p->lfd, NULL, NULL)) < 0)
			continue;
		c = xcalloc(1, sizeof(*c));
		c->p = p;
		c->cfd = fd;
		choose_fate(p, c);
		atomic_fetch_add(&p->active, 1);
		if (pthread_create(&th, NULL, conn_main, c)) {
			atomic_fetch_sub(&p->active, 1);
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(th);
	}
	return NULL;
}

/* server: "https://HOST:PORT" of the API server (an IPv4 address). */
static int proxy_start(struct proxy *p, const char *server, uint64_t seed)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	char host[64] = "";
	const char *h = strstr(server, "://");
	const char *colon;

	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
	p->rng = seed;
	h = h ? h + 3 : server;
	colon = strrchr(h, ':');
	if (!colon || (size_t)(colon - h) >= sizeof(host))
		return -1;
	memcpy(host, h, (size_t)(colon - h));
	p->up.sin_family = AF_INET;
	p->up.sin_port = htons((uint16_t)strtol(colon + 1, NULL, 10));
	if (inet_pton(AF_INET, host, &p->up.sin_addr) != 1)
		return -1;
	p->lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(p->lfd, (struct sockaddr *)&a, sizeof(a)) || listen(p->lfd, 64) ||
	    getsockname(p->lfd, (struct sockaddr *)&a, &alen))
		return -1;
	p->port = ntohs(a.sin_port);
	return pthread_create(&p->thread, NULL, accept_main, p) ? -1 : 0;
}

static void proxy_stop(struct proxy *p)
{
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	close(p->lfd);
	for (int i = 0; i < 200 && atomic_load(&p->active) > 0; i++)
		it_sleep_ms(10);
	pthread_mutex_destroy(&p->mu);
}

/* ---- the check ----------------------------------------------------------------------------- */

#define NAMES     20
#define MUTATIONS 200
#define ROUNDS    3

/* One random create/update/delete/unlabel on cm0..cm19 (directly, not via the proxy). */
static void mutate(struct it *t, uint64_t *rng, bool exists[NAMES])
{
	uint64_t r = backoff_rand64(rng);
	int i = (int)(r % NAMES), op = (int)((r >> 8) % 10);
	char name[16], value[32];
	json_t *cm;

	snprintf(name, sizeof(name), "cm%d", i);
	snprintf(value, sizeof(value), "%llu", (unsigned long long)(r >> 16));
	if (!exists[i]) {
		cm = it_configmap(name, true, value);
		exists[i] = k8s_create(t->client, &k8s_res_configmaps, t->ns, cm, NULL, NULL,
		                       NULL) == 0;
	} else if (op < 3) {
		exists[i] =
		        k8s_delete(t->client, &k8s_res_configmaps, t->ns, name, NULL, NULL) != 0;
		return;
	} else {
		/* op 3 drops the label (a DELETED event for the selector watch) */
		cm = op == 3 ? json_pack("{s:{s:{s:n}}, s:{s:s}}", "metadata", "labels",
		                         IT_LABEL_KEY, "data", "k", value)
		             : it_configmap(name, true, value);
		k8s_patch(t->client, &k8s_res_configmaps, t->ns, name, NULL, K8S_PATCH_MERGE, cm,
		          NULL, NULL, NULL);
	}
	json_decref(cm);
}

static int proxy_round(struct it *t, uint64_t seed, char *summary, size_t len)
{
	struct k8s_informer_opts o = { .res = &k8s_res_configmaps,
		                       .label_selector = IT_LABEL,
		                       .backoff_base_ms = 50,
		                       .backoff_cap_ms = 1000,
		                       .watch_timeout_s = 5 };
	struct k8s_client_opts co = { .timeout_ms = 10000, .connect_timeout_ms = 3000 };
	struct k8s_config *pcfg = NULL;
	struct k8s_config_opts lo = { .kubeconfig = t->kubeconfig };
	struct k8s_informer *inf = NULL;
	struct k8s_client *pc = NULL;
	struct k8s_informer_stats st;
	struct proxy p;
	bool exists[NAMES] = { false };
	uint64_t rng = seed;
	char why[256];
	int64_t took = 0;
	int rc = -1;

	if (proxy_start(&p, t->cfg->server, seed ^ 0x9e3779b97f4a7c15ull))
		return it_fail(t, "proxy start failed");
	k8s_config_load(&lo, &pcfg, NULL);
	free(pcfg->server);
	pcfg->server = xasprintf("https://127.0.0.1:%d", p.port);
	pc = k8s_client_new(pcfg, &co, NULL);
	o.ns = t->ns;
	inf = k8s_informer_new(pc, &o, NULL);
	k8s_informer_start(inf, NULL);
	for (int i = 0; i < MUTATIONS; i++) {
		mutate(t, &rng, exists);
		it_sleep_ms(50); /* spread over ~10 s: many watch connections live and die */
	}
	if (it_wait_converged(t, inf, &k8s_res_configmaps, IT_LABEL, 60000, &took, why,
	                      sizeof(why)) == 0)
		rc = 0;
	else
		it_fail(t, "seed %llu: no convergence in 60 s: %s", (unsigned long long)seed, why);
	k8s_informer_stats(inf, &st);
	if (!rc && p.fates[1] + p.fates[2] + p.fates[3] + p.fates[4] < 4)
		rc = it_fail(t, "seed %llu: only %u connections, too few faults to mean anything",
		             (unsigned long long)seed,
		             p.fates[0] + p.fates[1] + p.fates[2] + p.fates[3] + p.fates[4]);
	k8s_informer_free(inf);
	k8s_client_free(pc);
	proxy_stop(&p);
	snprintf(summary, len,
	         "seed %llu: %zu objects, converged +%lld ms; conns clean %u drop %u late-drop %u "
	         "truncate %u delay %u; %llu lists %llu watches %llu errors",
	         (unsigned long long)seed, st.objects, (long long)took, p.fates[0], p.fates[1],
	         p.fates[2], p.fates[3], p.fates[4], (unsigned long long)st.lists,
	         (unsigned long long)st.watches, (unsigned long long)st.errors);
	k8s_config_free(pcfg);
	return rc;
}

int check_fault_proxy(struct it *t)
{
	char summary[512];

	if (it_ns_create(t, "proxy"))
		return 0;
	for (uint64_t seed = 1; seed <= ROUNDS; seed++) {
		if (proxy_round(t, seed, summary, sizeof(summary)))
			return -1;
		printf("     k8s-client: fault-proxy round: %s\n", summary);
		/* next round starts from an empty namespace */
		for (int i = 0; i < NAMES; i++) {
			char name[16];

			snprintf(name, sizeof(name), "cm%d", i);
			k8s_delete(t->client, &k8s_res_configmaps, t->ns, name, NULL, NULL);
		}
	}
	it_note(t, "%d rounds of %d mutations through the faulty proxy, all converged", ROUNDS,
	        MUTATIONS);
	return 0;
}

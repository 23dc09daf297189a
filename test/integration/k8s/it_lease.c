/*
 * k8s-it: leader election between processes, and bearer-token rotation.
 *
 * Leader election: the check starts contenders as child processes (`k8s-it lease-child
 * NS NAME ID`, which run the lease thread helper and print "LEAD <mono ms>" when they
 * lead), SIGKILLs the leader and measures how long until another leads (slow path: the
 * lease must expire), then SIGTERMs the next leader, which releases on its way out, and
 * measures again (fast path). CLOCK_MONOTONIC is shared by every process on the machine,
 * so the children's timestamps compare with the parent's.
 *
 * Token refresh: two ServiceAccounts' tokens (kubectl create token, i.e. TokenRequest)
 * are written in turn to a file named by a kubeconfig's tokenFile; a SelfSubjectReview
 * says which identity the client used. The re-read interval (K8S_TOKEN_REREAD_MS) is
 * "injected" by moving the config's token_read_ms back by that much.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/jsonx.h"
#include "lib/k8s/lease.h"

#define DURATION_MS 4000
#define DEADLINE_MS 3000
#define RETRY_MS    500

/* ---- the child ------------------------------------------------------------------------ */

static volatile sig_atomic_t child_term;

static void on_term(int sig)
{
	(void)sig;
	child_term = 1;
}

static void child_on_change(void *ctx, bool leading)
{
	(void)ctx;
	printf("%s %lld\n", leading ? "LEAD" : "LOST", (long long)clock_mono_ms());
	fflush(stdout);
}

int it_lease_child(struct it *t, int argc, char **argv)
{
	struct k8s_lease_opts o = { .lease_duration_ms = DURATION_MS,
		                    .renew_deadline_ms = DEADLINE_MS,
		                    .retry_period_ms = RETRY_MS,
		                    .on_change = child_on_change };
	struct k8s_lease *l;

	if (argc < 3)
		return 2;
	o.ns = argv[0];
	o.name = argv[1];
	o.identity = argv[2];
	signal(SIGTERM, on_term);
	l = k8s_lease_new(t->client, &o, NULL);
	if (!l || k8s_lease_start(l, NULL))
		return 1;
	while (!child_term)
		it_sleep_ms(20);
	k8s_lease_stop(l, true);
	printf("RELEASED %lld\n", (long long)clock_mono_ms());
	fflush(stdout);
	k8s_lease_free(l);
	return 0;
}

/* ---- the parent ----------------------------------------------------------------------- */

struct contender {
	pid_t pid;
	int fd;          /* its stdout */
	char line[256];  /* partial line */
	int64_t lead_ms; /* 0 until it said LEAD */
};

static int spawn(struct it *t, struct contender *c, const char *id)
{
	int p[2];

	memset(c, 0, sizeof(*c));
	if (pipe(p))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl("/proc/self/exe", t->exe, "lease-child", t->ns, "leader", id, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	c->fd = p[0];
	return c->pid > 0 ? 0 : -1;
}

/* Reads what the contender printed so far; records its LEAD time. */
static void drain(struct contender *c)
{
	struct pollfd pf = { c->fd, POLLIN, 0 };
	char buf[256];

	while (c->fd >= 0 && poll(&pf, 1, 0) > 0) {
		ssize_t n = read(c->fd, buf, sizeof(buf));
		char *nl;

		if (n <= 0) {
			close(c->fd);
			c->fd = -1;
			return;
		}
		size_t have = strlen(c->line), room = sizeof(c->line) - have - 1;

		memcpy(c->line + have, buf, (size_t)n < room ? (size_t)n : room);
		c->line[have + ((size_t)n < room ? (size_t)n : room)] = '\0';
		while ((nl = strchr(c->line, '\n'))) {
			*nl = '\0';
			if (!strncmp(c->line, "LEAD ", 5))
				c->lead_ms = strtoll(c->line + 5, NULL, 10);
			memmove(c->line, nl + 1, strlen(nl + 1) + 1);
		}
	}
}

/* Waits up to timeout_ms until one of cs[0..n) leads; its index, or -1. */
static int wait_leader(struct contender *cs, int n, int64_t timeout_ms)
{
	int64_t end = clock_mono_ms() + timeout_ms;

	while (clock_mono_ms() < end) {
		for (int i = 0; i < n; i++) {
			drain(&cs[i]);
			if (cs[i].lead_ms && cs[i].pid > 0)
				return i;
		}
		it_sleep_ms(10);
	}
	return -1;
}

static void reap(struct contender *c, int sig)
{
	if (c->pid <= 0)
		return;
	kill(c->pid, sig);
	waitpid(c->pid, NULL, 0);
	c->pid = -1;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

int check_lease_handover(struct it *t)
{
	struct contender cs[3];
	int leader, next;
	int64_t killed, released, slow, fast;

	if (it_ns_create(t, "lease"))
		return 0;
	if (spawn(t, &cs[0], "a") || spawn(t, &cs[1], "b"))
		return it_fail(t, "fork failed");
	leader = wait_leader(cs, 2, 15000);
	if (leader < 0) {
		it_fail(t, "no leader within 15 s");
		goto out;
	}
	/* slow path: the leader dies without a word; the lease must expire */
	killed = clock_mono_ms();
	reap(&cs[leader], SIGKILL);
	next = wait_leader(cs, 2, DURATION_MS + 4 * RETRY_MS + 2000);
	if (next < 0) {
		it_fail(t, "no new leader after SIGKILL");
		goto out;
	}
	slow = cs[next].lead_ms - killed;
	/* fast path: a third contender waits; the leader releases on SIGTERM */
	if (spawn(t, &cs[2], "c"))
		goto out;
	it_sleep_ms(2 * RETRY_MS); /* c observes the held lease (and polls) */
	released = clock_mono_ms();
	reap(&cs[next], SIGTERM);
	leader = wait_leader(&cs[2], 1, DURATION_MS + 2000);
	if (leader < 0) {
		it_fail(t, "no leader after a clean release");
		goto out;
	}
	fast = cs[2].lead_ms - released;
	if (slow > DURATION_MS + RETRY_MS + 500)
		it_fail(t, "takeover after SIGKILL took %lld ms (duration %d + retry %d)",
		        (long long)slow, DURATION_MS, RETRY_MS);
	else if (fast > RETRY_MS + 500)
		it_fail(t, "takeover after release took %lld ms (retry period %d)", (long long)fast,
		        RETRY_MS);
	else
		it_note(t,
		        "duration %d ms, retry %d ms: after SIGKILL the next leads in %lld ms; "
		        "after a clean release in %lld ms",
		        DURATION_MS, RETRY_MS, (long long)slow, (long long)fast);
out:
	for (int i = 0; i < 3; i++)
		reap(&cs[i], SIGKILL);
	return 0;
}

/* ---- token refresh -------------------------------------------------------------------- */

static const struct k8s_resource res_ssr = { "authentication.k8s.io", "v1", "selfsubjectreviews",
	                                     "SelfSubjectReview", false };

static int whoami(struct k8s_client *c, char *user, size_t len, struct err *e)
{
	json_t *ssr = json_pack("{s:s, s:s}", "apiVersion", "authentication.k8s.io/v1", "kind",
	                        "SelfSubjectReview");
	json_t *out = NULL;
	int rc = k8s_create(c, &res_ssr, NULL, ssr, NULL, &out, e);

	snprintf(user, len, "%s",
	         rc ? "?" : json_string_value(jsonx_get(out, "status.userInfo.username")));
	json_decref(ssr);
	json_decref(out);
	return rc;
}

int it_write_file(const char *path, const char *text)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	return rename(tmp, path); /* atomic, as the kubelet swaps tokens */
}

int it_sa_token(struct it *t, const char *sa, char *out, size_t len)
{
	char buf[1024];

	if (it_kubectl(t, NULL, buf, sizeof(buf), "-n", t->ns, "create", "serviceaccount", sa,
	               NULL) ||
	    it_kubectl(t, NULL, out, len, "-n", t->ns, "create", "token", sa, "--duration", "10m",
	               NULL))
		return it_fail(t, "TokenRequest for %s: %s", sa, out);
	out[strcspn(out, "\r\n")] = '\0';
	return 0;
}

int it_token_config(struct it *t, const char *dir, const char *token, struct k8s_config **cfg)
{
	struct k8s_config_opts co = { 0 };
	char path[600], kc[600];
	char *text;
	struct err e;

	snprintf(path, sizeof(path), "%s/token", dir);
	snprintf(kc, sizeof(kc), "%s/kubeconfig", dir);
	text = xasprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n"
	                 "    server: %s\n    certificate-authority: %s\nusers:\n- name: u\n"
	                 "  user:\n    tokenFile: %s\ncontexts:\n- name: x\n  context: {cluster: c,"
	                 " user: u}\ncurrent-context: x\n",
	                 t->cfg->server, t->cfg->ca_file, path);
	if (it_write_file(path, token) || it_write_file(kc, text)) {
		free(text);
		return it_fail(t, "cannot write %s", dir);
	}
	free(text);
	co.kubeconfig = kc;
	err_clear(&e);
	if (k8s_config_load(&co, cfg, &e))
		return it_fail(t, "config: %s", e.msg);
	return 0;
}

int check_token_refresh(struct it *t)
{
	char tok1[4096], tok2[4096], dir[] = "/tmp/k8s-it-token-XXXXXX", path[600], kc[600];
	char u1[256], u2[256], u3[256];
	struct k8s_config *cfg = NULL;
	struct k8s_client *c = NULL;
	struct err e;

	if (it_ns_create(t, "token") || it_sa_token(t, "sa1", tok1, sizeof(tok1)) ||
	    it_sa_token(t, "sa2", tok2, sizeof(tok2)) || !mkdtemp(dir))
		return it_fail(t, "setup failed");
	snprintf(path, sizeof(path), "%s/token", dir);
	snprintf(kc, sizeof(kc), "%s/kubeconfig", dir);
	err_clear(&e);
	if (it_token_config(t, dir, tok1, &cfg))
		goto out;
	if (!(c = k8s_client_new(cfg, NULL, &e))) {
		it_fail(t, "client: %s", e.msg);
		goto out;
	}
	whoami(c, u1, sizeof(u1), &e);
	it_write_file(path, tok2);
	whoami(c, u2, sizeof(u2), &e);             /* within the interval: still the old token */
	cfg->token_read_ms -= K8S_TOKEN_REREAD_MS; /* the interval has passed */
	whoami(c, u3, sizeof(u3), &e);
	if (!strstr(u1, ":sa1") || !strstr(u2, ":sa1") || !strstr(u3, ":sa2"))
		it_fail(t, "identities %s, %s, %s; want sa1, sa1, sa2", u1, u2, u3);
	else
		it_note(t, "%s, then after the re-read interval %s", u1, u3);
out:
	k8s_client_free(c);
	k8s_config_free(cfg);
	unlink(path);
	unlink(kc);
	rmdir(dir);
	return 0;
}

/*
 * it_apf: the client's adaptive rate (lib/k8s/rate.h) against the API server's own
 * priority and fairness. A FlowSchema puts one ServiceAccount in a priority level of
 * the smallest share that rejects instead of queueing; a burst from that account gets
 * real 429 Too Many Requests answers with Retry-After, and the client must slow down,
 * retry, and grow back once the server stops rejecting.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it.h"
#include "lib/alloc.h"
#include "lib/clock.h"

#define APF_THREADS    16
#define APF_REQUESTS   40    /* GETs per thread and round */
#define APF_ROUNDS_MAX 8     /* rounds until the first 429 (the schema takes effect) */
#define APF_CEILING    400.0 /* the client's configured qps */
#define APF_QUIET_MS   3000  /* idle time after which the rate must have grown */

struct burst {
	struct k8s_client *c;
	const char *ns;
	atomic_int ok, failed;
	char last_error[ERR_MSG_MAX];
	pthread_mutex_t mu;
};

static void *burst_thread(void *arg)
{
	struct burst *b = arg;

	for (int i = 0; i < APF_REQUESTS; i++) {
		json_t *out = NULL;
		struct err e;

		err_clear(&e);
		if (k8s_get(b->c, &k8s_res_configmaps, b->ns, "apf", &out, &e) == 0) {
			atomic_fetch_add(&b->ok, 1);
		} else {
			atomic_fetch_add(&b->failed, 1);
			pthread_mutex_lock(&b->mu);
			snprintf(b->last_error, sizeof(b->last_error), "%s", e.msg);
			pthread_mutex_unlock(&b->mu);
		}
		json_decref(out);
	}
	return NULL;
}

static void burst_run(struct burst *b)
{
	pthread_t th[APF_THREADS];

	for (int i = 0; i < APF_THREADS; i++)
		pthread_create(&th[i], NULL, burst_thread, b);
	for (int i = 0; i < APF_THREADS; i++)
		pthread_join(th[i], NULL);
}

/* The priority level (shares 1, nothing lent, Reject) and the schema for sa in ns. */
static int apf_objects(struct it *t, const char *name, const char *sa)
{
	char *yaml = xasprintf(
	        "apiVersion: flowcontrol.apiserver.k8s.io/v1\n"
	        "kind: PriorityLevelConfiguration\n"
	        "metadata: {name: %s}\n"
	        "spec:\n  type: Limited\n  limited:\n    nominalConcurrencyShares: 1\n"
	        "    lendablePercent: 0\n    borrowingLimitPercent: 0\n"
	        "    limitResponse: {type: Reject}\n"
	        "---\n"
	        "apiVersion: flowcontrol.apiserver.k8s.io/v1\n"
	        "kind: FlowSchema\n"
	        "metadata: {name: %s}\n"
	        "spec:\n  matchingPrecedence: 100\n  priorityLevelConfiguration: {name: %s}\n"
	        "  rules:\n  - subjects:\n    - kind: ServiceAccount\n"
	        "      serviceAccount: {name: %s, namespace: %s}\n"
	        "    resourceRules:\n    - verbs: ['*']\n      apiGroups: ['*']\n"
	        "      resources: ['*']\n      namespaces: ['*']\n      clusterScope: true\n",
	        name, name, name, sa, t->ns);
	char out[2048];
	int rc = it_kubectl(t, yaml, out, sizeof(out), "apply", "-f", "-", NULL);

	free(yaml);
	return rc ? it_fail(t, "apply the FlowSchema and PriorityLevelConfiguration: %s", out) : 0;
}

static void apf_objects_delete(struct it *t, const char *name)
{
	char out[1024];

	it_kubectl(t, NULL, out, sizeof(out), "delete", "flowschema", name, "--ignore-not-found",
	           NULL);
	it_kubectl(t, NULL, out, sizeof(out), "delete", "prioritylevelconfiguration", name,
	           "--ignore-not-found", NULL);
}

/* A client for sa's token, with the rate ceiling under test. */
static struct k8s_client *sa_client(struct it *t, const char *dir, const char *token,
                                    struct k8s_config **cfg)
{
	struct k8s_client_opts o = { .qps = APF_CEILING, .burst = APF_THREADS * 2 };
	struct k8s_client *c;
	struct err e;

	if (it_token_config(t, dir, token, cfg))
		return NULL;
	err_clear(&e);
	if (!(c = k8s_client_new(*cfg, &o, &e)))
		it_fail(t, "client: %s", e.msg);
	return c;
}

/* The namespace, the account and its token, a ConfigMap it may read, the APF objects. */
static int apf_setup(struct it *t, const char *name, char *tok, size_t len)
{
	char out[1024], sa_ref[160];

	if (it_ns_create(t, "apf") || it_sa_token(t, "burst", tok, len))
		return -1;
	snprintf(sa_ref, sizeof(sa_ref), "--serviceaccount=%s:burst", t->ns);
	if (it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "create", "configmap", "apf",
	               "--from-literal=k=v", NULL) ||
	    it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "create", "role", "read",
	               "--verb=get", "--resource=configmaps", NULL) ||
	    it_kubectl(t, NULL, out, sizeof(out), "-n", t->ns, "create", "rolebinding", "read",
	               "--role=read", sa_ref, NULL))
		return it_fail(t, "setup: %s", out);
	return apf_objects(t, name, "burst");
}

int check_apf_429(struct it *t)
{
	char name[64], tok[4096], dir[] = "/tmp/k8s-it-apf-XXXXXX", out[1024];
	struct k8s_config *cfg = NULL;
	struct burst b = { .mu = PTHREAD_MUTEX_INITIALIZER };
	unsigned long long cuts = 0, sent[K8S_VERB_COUNT];
	double cut_qps = 0, grown_qps = 0;
	int rounds = 0;
	int64_t t0 = clock_mono_ms(), burst_ms = 0;

	snprintf(name, sizeof(name), "k8s-it-apf-%d", (int)getpid());
	if (!mkdtemp(dir) || apf_setup(t, name, tok, sizeof(tok)))
		goto out;
	if (!(b.c = sa_client(t, dir, tok, &cfg)))
		goto out;
	b.ns = t->ns;
	/* The schema takes effect within a moment: burst until the server rejects. */
	while (cuts == 0 && rounds++ < APF_ROUNDS_MAX) {
		burst_run(&b);
		k8s_client_rate(b.c, &cut_qps, &cuts);
	}
	burst_ms = clock_mono_ms() - t0;
	if (cuts == 0) {
		it_fail(t, "no 429 from the API server in %d rounds of %d GETs", rounds,
		        APF_THREADS * APF_REQUESTS);
		goto out;
	}
	if (cut_qps >= APF_CEILING) {
		it_fail(t, "after %llu cuts the rate is still %.1f qps", cuts, cut_qps);
		goto out;
	}
	/* Quiet: the rate grows back on the next request. */
	it_sleep_ms(APF_QUIET_MS);
	{
		json_t *cm = NULL;
		struct err e;

		err_clear(&e);
		if (k8s_get(b.c, &k8s_res_configmaps, t->ns, "apf", &cm, &e)) {
			it_fail(t, "GET after the quiet time: %s", e.msg);
			goto out;
		}
		json_decref(cm);
		k8s_client_rate(b.c, &grown_qps, &cuts);
	}
	k8s_client_requests(b.c, sent);
	if (grown_qps <= cut_qps)
		it_fail(t, "the rate did not grow back: %.1f qps after %d ms quiet (cut to %.1f)",
		        grown_qps, APF_QUIET_MS, cut_qps);
	else if (atomic_load(&b.ok) == 0)
		it_fail(t, "no GET succeeded; last error: %s", b.last_error);
	else
		it_note(t,
		        "%d rounds of %d GETs in %lld ms: %d ok, %d failed after retries (last: "
		        "%s), %llu attempts sent; %llu rate cuts, %.0f qps configured, %.1f after "
		        "the 429s, %.1f after %d ms quiet",
		        rounds, APF_THREADS * APF_REQUESTS, (long long)burst_ms, atomic_load(&b.ok),
		        atomic_load(&b.failed), b.failed ? b.last_error : "-", sent[K8S_VERB_GET],
		        cuts, APF_CEILING, cut_qps, grown_qps, APF_QUIET_MS);
out:
	k8s_client_free(b.c);
	k8s_config_free(cfg);
	apf_objects_delete(t, name);
	snprintf(out, sizeof(out), "rm -rf %s", dir);
	if (system(out) != 0)
		it_note(t, "could not remove %s", dir);
	return 0;
}

/*
 * it.h: the lib/k8s integration tests against the real local API server (test/env).
 *
 * One binary, k8s-it, runs every check (or those named on the command line) and prints
 * one line per check: "ok   k8s-client: NAME (detail)" or "FAIL k8s-client: NAME: why".
 * Each check works in its own namespace (k8s-it-<check>-<pid>) and deletes it at the
 * end. Waits are bounded polls, never fixed sleeps (except where a duration is what is
 * measured). Environment: KUBECONFIG (default build/env/kubeconfig), KUBECTL (default
 * the cached kubectl of test/env), ENV_DIR (default the kubeconfig's directory: pid
 * files and logs of the control plane), ETCD_URL (default http://127.0.0.1:23790).
 */
#ifndef REDIS_OPERATOR_TEST_IT_H
#define REDIS_OPERATOR_TEST_IT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/k8s/client.h"
#include "lib/k8s/config.h"
#include "lib/k8s/informer.h"

#define IT_DETAIL_MAX 1024
#define IT_LABEL_KEY  "app.kubernetes.io/managed-by"
#define IT_LABEL      IT_LABEL_KEY "=redis-operator"

struct it {
	const char *kubeconfig, *kubectl, *env_dir, *etcd_url, *exe;
	struct k8s_config *cfg;
	struct k8s_client *client;
	char ns[64];
	char detail[IT_DETAIL_MAX];
};

/* Records why the check failed (first call wins) and returns -1. */
int it_fail(struct it *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends to the detail printed after "ok". */
void it_note(struct it *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Runs argv (NULL-terminated) with stdin from `in` (may be NULL) and stdout+stderr into
 * out (may be NULL); returns the exit status, or -1 if it could not run. */
int it_run(char *const argv[], const char *in, char *out, size_t outlen);
/* kubectl --kubeconfig K args... (NULL-terminated). */
int it_kubectl(struct it *t, const char *in, char *out, size_t outlen, ...);

/* Creates t->ns = "k8s-it-<name>-<pid>"; 0 or -1. */
int it_ns_create(struct it *t, const char *name);
void it_ns_delete(struct it *t);

/* A ConfigMap with the managed-by label when labelled, and data {k: value}. */
json_t *it_configmap(const char *name, bool labelled, const char *value);
/* Store == server: the same keys with the same resourceVersions as a LIST now.
 * 0, or -1 with why filled. */
int it_store_matches(struct it *t, struct k8s_informer *inf, const struct k8s_resource *res,
                     const char *selector, char *why, size_t len);
/* Polls it_store_matches up to timeout_ms; 0 when it matched (elapsed in *took_ms). */
int it_wait_converged(struct it *t, struct k8s_informer *inf, const struct k8s_resource *res,
                      const char *selector, int64_t timeout_ms, int64_t *took_ms, char *why,
                      size_t len);

/* etcd's current revision, and a compaction at rev (HTTP/JSON gateway). */
int it_etcd_revision(struct it *t, int64_t *rev);
int it_etcd_compact(struct it *t, int64_t rev);
/* Restarts only kube-apiserver (same command line, new pid file) and waits for readyz.
 * 0 or -1 with t's detail set. */
int it_apiserver_restart(struct it *t);
/* GET url with the admin TLS material; status in *http, body in out. */
int it_admin_get(struct it *t, const char *url, long *http, char *out, size_t outlen);

void it_sleep_ms(int64_t ms);
/* Writes text to path through a rename (atomic, as the kubelet swaps tokens); 0 or -1. */
int it_write_file(const char *path, const char *text);
/* Creates ServiceAccount sa in t->ns and a 10-minute token for it (TokenRequest). */
int it_sa_token(struct it *t, const char *sa, char *out, size_t len);
/* DIR/token holding token and DIR/kubeconfig authenticating with it (tokenFile, so a
 * rewrite of DIR/token is a rotation), loaded into *cfg; 0 or -1 with t's detail set. */
int it_token_config(struct it *t, const char *dir, const char *token, struct k8s_config **cfg);

/* The checks. */
int check_crud(struct it *t);
int check_conflicts(struct it *t);
int check_ssa(struct it *t);
int check_pagination(struct it *t);
int check_status(struct it *t);
int check_multi_tls(struct it *t);
int check_events(struct it *t);
int check_watch_410(struct it *t);
int check_informer(struct it *t);
int check_lease_handover(struct it *t);
int check_token_refresh(struct it *t);
int check_fault_proxy(struct it *t);
int check_apiserver_restart(struct it *t);
int check_apf_429(struct it *t);

/* `k8s-it lease-child NS NAME ID`: a leader-election contender for check_lease_handover. */
int it_lease_child(struct it *t, int argc, char **argv);

#endif

/*
 * k8s/config: where the API server is and how to authenticate to it.
 *
 * Two sources: a kubeconfig file (--kubeconfig, then $KUBECONFIG, then ~/.kube/config),
 * or the in-cluster service account (KUBERNETES_SERVICE_HOST/PORT and the files under
 * /var/run/secrets/kubernetes.io/serviceaccount, whose directory can be overridden).
 * A bound service-account token rotates: in-cluster configs keep token_file and the
 * client re-reads it (k8s_config_token) at most every K8S_TOKEN_REREAD_MS.
 *
 * Strings are owned by the config and wiped (secrets) on k8s_config_free.
 * PEM material may come inline (*_pem) or as a file (*_file); inline wins.
 */
#ifndef REDIS_OPERATOR_K8S_CONFIG_H
#define REDIS_OPERATOR_K8S_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define K8S_SA_DIR          "/var/run/secrets/kubernetes.io/serviceaccount"
#define K8S_TOKEN_REREAD_MS 60000
#define K8S_KUBECONFIG_MAX  (1 << 20) /* a larger kubeconfig is refused */

struct k8s_config {
	char *server;    /* "https://10.0.0.1:6443", no trailing slash */
	char *ca_file;   /* CA bundle to verify the server, or NULL */
	char *ca_pem;    /* inline CA (decoded certificate-authority-data), or NULL */
	char *cert_file; /* client certificate, or NULL */
	char *cert_pem;
	char *key_file;   /* client key, or NULL */
	char *key_pem;    /* secret */
	char *token;      /* bearer token, or NULL; secret */
	char *token_file; /* re-read periodically when set */
	int64_t token_read_ms;
	char *namespace;           /* default namespace (context's or the service account's) */
	bool insecure_skip_verify; /* only when explicitly allowed by the caller */
};

struct k8s_config_opts {
	const char *kubeconfig; /* explicit path, or NULL to consult $KUBECONFIG, ~/.kube/config */
	const char *context;    /* NULL: current-context */
	const char *sa_dir;     /* NULL: K8S_SA_DIR */
	bool allow_insecure;    /* accept insecure-skip-tls-verify: true */
	bool prefer_in_cluster; /* try the service account before kubeconfig */
};

/* Loads from a kubeconfig or in-cluster per opts. 0, -ENOENT (nothing found), -EINVAL (bad file),
 * -EPERM (insecure-skip-tls-verify not allowed), -EOPNOTSUPP (exec, auth-provider, basic auth),
 * -EMSGSIZE (over K8S_KUBECONFIG_MAX), or the errno of a file that cannot be read. */
int k8s_config_load(const struct k8s_config_opts *opts, struct k8s_config **out, struct err *e);
/* Parses kubeconfig text (YAML). Relative file references resolve against the directory of
 * opts->kubeconfig when set, else the working directory. */
int k8s_config_from_kubeconfig(const char *text, size_t len, const struct k8s_config_opts *opts,
                               struct k8s_config **out, struct err *e);
int k8s_config_in_cluster(const char *sa_dir, struct k8s_config **out, struct err *e);
/* Current bearer token (re-read from token_file when older than K8S_TOKEN_REREAD_MS); NULL if none.
 * Borrowed; valid until the next call. Not thread-safe: the client serialises calls. */
const char *k8s_config_token(struct k8s_config *c, int64_t now_mono_ms);
void k8s_config_free(struct k8s_config *c);

#endif

/*
 * k8s/multi: many HTTP GETs in parallel (curl multi), for callers that poll many pods
 * at once, such as the controller reading every instance's GET /v1/status each second.
 *
 *   const char *urls[] = { "https://10.1.0.5:8443/v1/status", ... };
 *   struct k8s_multi_result res[n];
 *   struct k8s_multi *m = k8s_multi_new(&(struct k8s_multi_opts){ .timeout_ms = 800,
 *                                                               .tls = &tls });
 *   k8s_multi_get(m, urls, n, res, &e);       (every 1 s, on the same m: connections stay)
 *   for (i ...) if (res[i].err == 0 && res[i].http == 200) use(res[i].body);
 *   k8s_multi_results_release(res, n);
 *   k8s_multi_free(m);
 *
 * All requests start together and each has its own deadline (timeout_ms, connection
 * included), so one call takes about the slowest request, never the sum. Results come
 * back in the order of urls. A result's err is 0 when an HTTP answer arrived (whatever
 * its status: the caller judges `http`), or a negative errno: -ETIMEDOUT,
 * -ECONNREFUSED, -ECONNRESET, -EHOSTUNREACH, -EACCES (certificate not trusted),
 * -EMSGSIZE (body over body_max: the first body_max bytes are kept, truncated set),
 * -EINVAL (a NULL or malformed URL), -EIO (anything else). msg says what happened.
 *
 * TLS: a CA (file or inline PEM) to verify the server, and a client certificate and key
 * (file or inline PEM) for servers that ask for one. Inline PEM strings are borrowed
 * (not copied): they must outlive the k8s_multi. Plain http:// is accepted too.
 *
 * Threads: a k8s_multi belongs to one thread at a time; k8s_multi_get blocks that
 * thread until every request is done (at most timeout_ms plus a little).
 */
#ifndef REDIS_OPERATOR_K8S_MULTI_H
#define REDIS_OPERATOR_K8S_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define K8S_MULTI_TIMEOUT_MS_DEFAULT 1000
#define K8S_MULTI_BODY_MAX_DEFAULT   (256u << 10)
#define K8S_MULTI_URLS_MAX           4096 /* requests in one call */
#define K8S_MULTI_MSG_MAX            160

struct k8s_multi_tls {
	const char *ca_file, *ca_pem;     /* verify the server with this CA */
	const char *cert_file, *cert_pem; /* client certificate */
	const char *key_file, *key_pem;   /* its key (secret) */
	bool insecure_skip_verify;        /* tests only */
	/* The chain is verified but not the host name: for servers addressed by an IP that
	 * changes, under a CA that signs nothing else (a per-cluster private CA). */
	bool skip_host_check;
};

struct k8s_multi_opts {
	long timeout_ms;                 /* per request, connect included; 0: the default */
	long connect_timeout_ms;         /* 0: timeout_ms */
	size_t body_max;                 /* per response; 0: K8S_MULTI_BODY_MAX_DEFAULT */
	const struct k8s_multi_tls *tls; /* copied (the pointers inside are borrowed) */
	const char *bearer_token;        /* sent as Authorization: Bearer; copied; NULL: none */
	const char *user_agent;          /* copied; NULL: "redis-operator" */
};

struct k8s_multi_result {
	long http;  /* HTTP status, 0 when no answer */
	int err;    /* see the header comment */
	char *body; /* NUL-terminated (may hold NULs inside: use body_len); NULL if none */
	size_t body_len;
	bool truncated; /* the body passed body_max */
	int64_t elapsed_ms;
	char msg[K8S_MULTI_MSG_MAX];
};

struct k8s_multi;

struct k8s_multi *k8s_multi_new(const struct k8s_multi_opts *o);
void k8s_multi_free(struct k8s_multi *m);

/*
 * GETs every url at once; results[i] is written for every i (release them). 0, or
 * -EINVAL with e set when n passes K8S_MULTI_URLS_MAX (nothing is sent then).
 * Per-request failures are in the results, not in the return value.
 */
int k8s_multi_get(struct k8s_multi *m, const char *const *urls, size_t n,
                  struct k8s_multi_result *results, struct err *e);
/*
 * k8s_multi_get with TLS per request: tls[i] (tls NULL, or tls[i] NULL: the k8s_multi's
 * own) for urls[i], for callers that talk to servers of different CAs at once. A
 * request's own CA is the only one it trusts (no default bundle). The strings inside are
 * borrowed for the call. Connections are reused only between requests of equal TLS
 * settings (curl compares them).
 */
int k8s_multi_get_tls(struct k8s_multi *m, const char *const *urls,
                      const struct k8s_multi_tls *const *tls, size_t n,
                      struct k8s_multi_result *results, struct err *e);
/* One-shot: a k8s_multi for this call only. */
int k8s_multi_get_once(const char *const *urls, size_t n, const struct k8s_multi_opts *o,
                       struct k8s_multi_result *results, struct err *e);
/* Frees the bodies of n results. NULL-safe. */
void k8s_multi_results_release(struct k8s_multi_result *results, size_t n);

#endif

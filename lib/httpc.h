/*
 * httpc: the one HTTP client set-up on libcurl, for every caller in the tree: the
 * Kubernetes client (lib/k8s/client.c, watch.c), the parallel GETs (lib/k8s/multi.c,
 * the controller's poller), the controller's POSTs to instance managers
 * (controller/instclient.c), a manager's /v1/promote to its peer (instance/ops.c) and
 * the object-store client (lib/objstore/http.c).
 *
 *   struct httpc_body resp = HTTPC_BODY_INIT(64 << 10);
 *   struct httpc_req rq = { .method = "POST", .url = url, .body = text, .has_body = true,
 *                           .body_len = strlen(text), .timeout_ms = 5000,
 *                           .connect_timeout_ms = 2000, .tls = &tls };
 *   long http = 0;
 *   int rc = httpc_perform(&rq, &resp, &http, &httpc_errmap_instclient, &e);
 *
 * A caller that runs the transfer itself (a pooled or curl-multi handle) calls
 * httpc_setup on a handle it has reset, sends it, then maps the result with
 * httpc_curl_errno / httpc_status_errno.
 *
 * Errors. The shared tables: HTTP status (and Kubernetes reason) → errno is
 * err_from_http (lib/err.c, the only status table); CURLcode → errno is the table in
 * httpc.c (transport failures: -ECONNREFUSED, -EHOSTUNREACH, -ETIMEDOUT, -ECONNRESET,
 * -EACCES for an untrusted certificate, -EINVAL for bad options, -EIO for the rest).
 * A caller whose errors meant something else before the tables were shared keeps its
 * meaning through its own struct httpc_errmap, so no caller's behaviour changed:
 *
 *   - k8s client, watch: the shared tables as they are (httpc_errmap_shared).
 *   - k8s multi (poller): CURLE_RESOLVE_PROXY, CURLE_WEIRD_SERVER_REPLY and
 *     CURLE_OUT_OF_MEMORY are -EIO, not -EHOSTUNREACH, -EPROTO, -ENOMEM; statuses are
 *     not mapped (the caller judges `http`).
 *   - objstore: CURLE_PARTIAL_FILE is -ECONNRESET (not -EIO: a cut transfer is worth a
 *     retry), CURLE_RESOLVE_PROXY and CURLE_WEIRD_SERVER_REPLY are -EIO; a status goes
 *     through the server's error Code first, then the shared table.
 *   - instclient: only 200 is success; 400 → -EINVAL (shared: -EBADMSG), 409 → -EBUSY,
 *     503 → -EAGAIN, 504 → -ETIMEDOUT and every other status -EIO (shared: 404 →
 *     -ENOENT, 401 → -EACCES, 403 → -EPERM, other 4xx → -EINVAL); transport: only a
 *     timeout (-ETIMEDOUT) and a refused connection (-ECONNREFUSED), the rest -EIO.
 *   - instance peer promote: only 200 is success; every failure is -EIO.
 *
 * TLS (struct httpc_tls): a CA given is the only one trusted: curl's default bundle
 * and CA directory are off, except with system_ca_dir: the object store's ca_file also
 * trusts curl's default CA directory (/etc/ssl/certs on Debian), so that a store behind
 * a public CA keeps working when a private one is added. Inline PEM is passed without
 * a copy (CURL_BLOB_NOCOPY) and must outlive the transfer; file names are copied.
 *
 * Threads: no state; any thread, one handle per thread at a time. httpc_global_init
 * runs curl_global_init once per process, from whichever caller comes first.
 */
#ifndef REDIS_OPERATOR_HTTPC_H
#define REDIS_OPERATOR_HTTPC_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"

struct httpc_tls {
	const char *ca_file, *ca_pem;     /* verify the server with this CA (pem wins) */
	const char *cert_file, *cert_pem; /* client certificate (pem wins) */
	const char *key_file, *key_pem;   /* its key (secret; pem wins) */
	bool insecure;                    /* no verification at all: tests only */
	bool skip_host_check;             /* chain verified, host name not (servers by IP) */
	bool system_ca_dir;               /* keep curl's default CA directory beside the CA */
};

/* What one transfer sends and where its answer goes. Everything is borrowed. */
struct httpc_req {
	const char *method;     /* NULL or "GET"; "HEAD" (no body); "POST"; any other verb */
	const char *url;        /* copied by curl */
	const char *protocols;  /* CURLOPT_PROTOCOLS_STR; NULL: "http,https" */
	const char *user_agent; /* NULL: no User-Agent header */
	struct curl_slist *headers;
	const void *body; /* sent as is when has_body (NULL: 0 bytes); not copied */
	size_t body_len;
	bool has_body;
	long timeout_ms;         /* whole transfer; 0: none */
	long connect_timeout_ms; /* 0: curl's default; never longer than timeout_ms */
	long low_speed_bytes;    /* abort under this many bytes/s ... */
	long low_speed_time_s;   /* ... for this long; 0: off */
	bool tcp_keepalive;
	long keepidle_s, keepintvl_s; /* with tcp_keepalive; 0: curl's defaults */
	bool no_dns_cache;            /* CURLOPT_DNS_CACHE_TIMEOUT 0 (see k8s/multi.c) */
	size_t max_filesize;          /* a larger announced body fails at once; 0: none */
	const struct httpc_tls *tls;  /* NULL: curl's defaults */
	char *errbuf;                 /* CURL_ERROR_SIZE bytes for curl's detail, or NULL */
	/* Sinks; write_fn NULL: the body is dropped (httpc_perform: into its httpc_body). */
	curl_write_callback write_fn;
	void *write_ctx;
	curl_write_callback header_fn;
	void *header_ctx;
	curl_xferinfo_callback progress_fn; /* about once a second; non-zero aborts */
	void *progress_ctx;
	void *private_ptr; /* CURLOPT_PRIVATE */
};

/*
 * Sets every option of rq on h (which the caller has reset, or has just created).
 * Returns CURLE_OK, or the code of the first TLS option curl refused (the handle is
 * then unusable for TLS; a caller may report it as -EOPNOTSUPP).
 */
CURLcode httpc_setup(CURL *h, const struct httpc_req *rq);

/* A response body with a cap: what fits is kept, and past the cap the transfer stops. */
struct httpc_body {
	struct buf buf;
	bool overflow; /* the body passed buf.limit (the first limit bytes are kept) */
};
#define HTTPC_BODY_INIT(limit)                                                                     \
	{                                                                                          \
		BUF_INIT(limit), false                                                             \
	}
/* A CURLOPT_WRITEFUNCTION for a struct httpc_body (the WRITEDATA). */
size_t httpc_body_write(char *ptr, size_t size, size_t nmemb, void *body);

/* Header lists: an append that aborts when memory runs out; a free that wipes every
 * entry first (one may carry a credential). Both NULL-safe on the list. */
struct curl_slist *httpc_headers_add(struct curl_slist *l, const char *line);
void httpc_headers_free(struct curl_slist *l);

struct httpc_code {
	long from; /* a CURLcode or an HTTP status */
	int code;  /* negative errno */
};

/* How one caller reads failures (see the header comment for who uses which). */
struct httpc_errmap {
	const struct httpc_code *curl; /* consulted before the shared CURLcode table */
	size_t n_curl;
	const struct httpc_code *status; /* consulted before err_from_http */
	size_t n_status;
	bool listed_only; /* what the lists above lack is -EIO, not the shared tables' */
	bool only_200;    /* success is 200 alone, not any 2xx */
};

extern const struct httpc_errmap httpc_errmap_shared;
extern const struct httpc_errmap httpc_errmap_multi;
extern const struct httpc_errmap httpc_errmap_objstore;
extern const struct httpc_errmap httpc_errmap_instclient;
extern const struct httpc_errmap httpc_errmap_peer;

/* cc → negative errno (CURLE_OK → 0); m NULL: the shared table. Pure. */
int httpc_curl_errno(CURLcode cc, const struct httpc_errmap *m);
/* HTTP status (+ optional Kubernetes reason) → 0 or a negative errno; m NULL: shared. */
int httpc_status_errno(long status, const char *reason, const struct httpc_errmap *m);

/* curl_global_init, once per process. */
void httpc_global_init(void);

/*
 * One blocking transfer on a fresh easy handle: rq (its write_fn ignored) into body,
 * the status in *status (0 without an answer). 0 for a success status of m; else the
 * errno of m, with e->msg "<url>: <curl's reason>" for a transport failure (the caller
 * words an HTTP failure itself, from *status and body). A body past its cap is a
 * transport failure (CURLE_WRITE_ERROR).
 */
int httpc_perform(const struct httpc_req *rq, struct httpc_body *body, long *status,
                  const struct httpc_errmap *m, struct err *e);

#endif

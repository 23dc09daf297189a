/*
 * k8s/client: a small Kubernetes REST client on libcurl and jansson.
 *
 *   struct k8s_client *c = k8s_client_new(cfg, NULL, &e);     (cfg must outlive c)
 *   json_t *cm;
 *   if (k8s_get(c, &k8s_res_configmaps, "prod", "cache", &cm, &e) == -ENOENT) ...
 *   k8s_patch(c, &k8s_res_configmaps, "prod", "cache", NULL, K8S_PATCH_MERGE,
 *             patch, NULL, NULL, &e);
 *   k8s_client_free(c);
 *
 * Errors: a non-2xx answer becomes a negative errno through err_from_http() (the one
 * table: 404 → -ENOENT, 409 AlreadyExists → -EEXIST, 409 Conflict → -EBUSY, 410 → -ESTALE,
 * 422 → -EINVAL, 429 → -EAGAIN, 5xx → -EIO …) and e->msg keeps the API server's own
 * message ("redisclusters.redis.io \"x\" is invalid: spec.instances: ..."). Transport
 * failures map to -ECONNREFUSED, -ETIMEDOUT, -ECONNRESET, -EHOSTUNREACH, -EIO; a body
 * larger than the client's max_body is -EMSGSIZE; a 2xx body that is not JSON is -EPROTO.
 *
 * Deadlines: every request (one HTTP exchange including its retries) has a deadline of
 * timeout_ms; a list is one request per page. Retries: GET and LIST pages are retried
 * on transient errors (429 honouring Retry-After, 5xx, timeouts of an attempt that left
 * time, connection errors) with jittered exponential backoff, never past the deadline.
 * POST/PUT/PATCH/DELETE are retried only when the connection was refused (nothing was
 * sent). Watches are not retried here: the caller's watch loop re-watches or relists.
 *
 * Rate: opts.qps and burst are a ceiling. A 429 from the API server's priority and
 * fairness (any verb, watches included) halves the rate and empties the bucket; the
 * rate then grows back (k8s/rate.h).
 *
 * Transport: https:// with the config's CA (file or inline PEM), client certificate and
 * key (file or inline PEM) and bearer token (k8s_config_token, re-read by the config at
 * most every K8S_TOKEN_REREAD_MS). A server of the form http://host:port is accepted
 * for tests against a local fake server only: no TLS and no bearer token on the wire.
 * Redirects are not followed. The token never reaches a log line or an error message.
 *
 * Counters: every HTTP exchange the client sends (each attempt of a retried request, each
 * watch (re)connection) is counted by verb (get, list, watch, create, update, patch,
 * delete); k8s_client_requests reads them, for a controller's API-load metric.
 *
 * Threads: k8s_client_new/free from the owner thread, with no request in flight. All
 * request functions may be called from any number of threads at once: each call takes
 * an easy handle from a mutex-guarded pool (so connections are reused) and gives it back.
 *
 * Ownership: objects passed in are borrowed; *out objects are new references.
 */
#ifndef REDIS_OPERATOR_K8S_CLIENT_H
#define REDIS_OPERATOR_K8S_CLIENT_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/k8s/config.h"
#include "lib/k8s/path.h"

#define K8S_TIMEOUT_MS_DEFAULT         30000
#define K8S_CONNECT_TIMEOUT_MS_DEFAULT 5000
#define K8S_BODY_MAX_DEFAULT           (16u << 20) /* largest response body accepted */
#define K8S_RETRIES_DEFAULT            3           /* extra attempts for GET and LIST */
#define K8S_RETRY_AFTER_MAX_MS         10000       /* cap on a server's Retry-After */
#define K8S_USER_AGENT_DEFAULT         "redis-operator"
#define K8S_LIST_PAGE_DEFAULT          500         /* items per page when no limit is given */
#define K8S_LIST_PAGES_MAX             10000       /* a list that needs more pages is -EMSGSIZE */
#define K8S_STATUS_BODY_MAX            (64u << 10) /* error bodies kept for the message */
#define K8S_POOL_MAX                   8           /* idle easy handles kept per client */

struct k8s_client;

/* What a request does, as the API server's audit log names it. */
enum k8s_verb {
	K8S_VERB_GET,    /* GET of one object (the default of a call) */
	K8S_VERB_LIST,   /* GET of a collection */
	K8S_VERB_WATCH,  /* GET of a collection with watch=1 */
	K8S_VERB_CREATE, /* POST */
	K8S_VERB_UPDATE, /* PUT */
	K8S_VERB_PATCH,  /* PATCH */
	K8S_VERB_DELETE, /* DELETE */
	K8S_VERB_COUNT,
};

/* "get", "list", ...; "unknown" out of range. */
const char *k8s_verb_name(enum k8s_verb v);

/* Zero or NULL fields pick the defaults above. */
struct k8s_client_opts {
	int timeout_ms;         /* deadline of one request, retries included */
	int connect_timeout_ms; /* TCP + TLS handshake of one attempt */
	size_t max_body;        /* response body cap */
	const char *user_agent; /* copied */
	int retries;            /* extra attempts for GET/LIST; < 0 for none */
	double qps;             /* client-side rate limit (a ceiling: rate.h); 0 for none */
	int burst;              /* requests allowed at once before qps applies (>= 1) */
};

/*
 * cfg is borrowed: it must outlive the client and not be used by anyone else meanwhile
 * (re-reading the token writes to it; the client does that under its lock).
 * Returns NULL (e set, -EINVAL) when cfg has no usable server URL.
 */
struct k8s_client *k8s_client_new(struct k8s_config *cfg, const struct k8s_client_opts *o,
                                  struct err *e);
void k8s_client_free(struct k8s_client *c);
/* Requests sent so far by verb (see Counters above) into out. Any thread, lock-free. */
void k8s_client_requests(const struct k8s_client *c, unsigned long long out[K8S_VERB_COUNT]);

struct k8s_list_opts {
	const char *label_selector;
	const char *field_selector;
	long limit; /* page size; 0: K8S_LIST_PAGE_DEFAULT. All pages are always fetched. */
};

/* For create and replace. */
struct k8s_write_opts {
	bool dry_run;              /* dryRun=All */
	const char *field_manager; /* NULL: none */
};

struct k8s_delete_opts {
	const char *propagation_policy; /* "Orphan" | "Background" | "Foreground" */
	const char *precondition_uid;   /* delete only this incarnation */
	const char *precondition_rv;    /* delete only at this resourceVersion */
	bool set_grace_period;          /* false: the object's default grace period */
	long grace_period_seconds;      /* when set_grace_period; 0 deletes at once */
	bool dry_run;
};

enum k8s_patch_type {
	K8S_PATCH_MERGE,     /* application/merge-patch+json: an object */
	K8S_PATCH_JSON,      /* application/json-patch+json: an array of operations */
	K8S_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
	K8S_PATCH_APPLY, /* application/apply-patch+yaml: server-side apply; needs a field manager */
};

struct k8s_patch_opts {
	const char *field_manager; /* required for K8S_PATCH_APPLY */
	bool force;                /* K8S_PATCH_APPLY only: take over conflicting fields */
	bool dry_run;
};

/* GET one object. */
int k8s_get(struct k8s_client *c, const struct k8s_resource *res, const char *ns, const char *name,
            json_t **out, struct err *e);
/*
 * GET of a path no descriptor covers, with k8s_get's deadline and retries: a pod's log
 * ("/api/v1/namespaces/NS/pods/POD/log"), a pod's proxy subresource
 * (".../pods/https:POD:8000/proxy/v1/status"). path starts with '/' and is sent as given
 * (the caller validates its parts). The body is appended to *out as it came (not parsed;
 * a proxied error body is the pod's own); -EMSGSIZE past max_body or out's limit.
 */
int k8s_get_raw(struct k8s_client *c, const char *path, struct buf *out, struct err *e);
/*
 * LIST every page (following `continue`). *items_out: a new array of all items (items
 * carry no kind/apiVersion, as the API serves them); *resource_version_out: the list's
 * resourceVersion (free it), to start a watch from. Either output may be NULL.
 * -ESTALE when a continue token expired mid-way: relist.
 */
int k8s_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
             const struct k8s_list_opts *lo, json_t **items_out, char **resource_version_out,
             struct err *e);
/* POST obj into the collection; *out (may be NULL) receives the created object. */
int k8s_create(struct k8s_client *c, const struct k8s_resource *res, const char *ns, json_t *obj,
               const struct k8s_write_opts *wo, json_t **out, struct err *e);
/* PUT obj at name (subresource "status" or NULL); a stale metadata.resourceVersion is -EBUSY. */
int k8s_replace(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                const char *name, const char *subresource, json_t *obj,
                const struct k8s_write_opts *wo, json_t **out, struct err *e);
/* DELETE name; do may be NULL. A missing object is -ENOENT (callers often ignore it). */
int k8s_delete(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
               const char *name, const struct k8s_delete_opts *dopts, struct err *e);
/* PATCH name (or its subresource); the patch is an object, or an array for K8S_PATCH_JSON. */
int k8s_patch(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
              const char *name, const char *subresource, enum k8s_patch_type type, json_t *patch,
              const struct k8s_patch_opts *po, json_t **out, struct err *e);

/*
 * Turns an error answer into an errno and a message: body (len bytes, may be NULL) is
 * read as a metav1.Status when it is one ({"kind":"Status","reason":…,"message":…,
 * "code":…}); the reason and the HTTP status go through err_from_http(); e->msg is the
 * Status message, or "HTTP <status> <reason>" plus a printable excerpt of any other body.
 * Returns 0 for a 2xx status. Pure; exposed for tests.
 */
int k8s_status_to_err(long http, const char *body, size_t len, struct err *e);
/* The same for an already parsed Status object (watch ERROR events); http may be 0,
 * in which case the Status's own `code` is used. */
int k8s_status_object_to_err(long http, json_t *status, struct err *e);

/* ---- For lib/k8s only (watch, a future parallel "multi" helper) ---------------- */

/* One HTTP exchange: what to send and what came back. Not thread-safe; one owner. */
struct k8s_call {
	const char *method;       /* "GET", "POST", "PUT", "PATCH", "DELETE" */
	enum k8s_verb verb;       /* set by k8s_call_set_url; counted when the handle is prepared */
	struct buf url;           /* server + path + query, built by k8s_call_set_url */
	const char *content_type; /* for a body; NULL: application/json */
	char *body;               /* request body (owned) or NULL */
	size_t body_len;
	long timeout_ms;       /* this attempt's whole-transfer deadline; 0: none */
	long low_speed_time_s; /* abort when under 1 byte/s this long; 0: off */
	/* Response body sink; NULL stores it in `resp` (bounded by the client's max_body). */
	size_t (*write_fn)(char *ptr, size_t size, size_t nmemb, void *ctx);
	void *write_ctx;
	/* Called about once a second while the transfer runs; non-zero aborts (-ECANCELED). */
	int (*progress_fn)(void *ctx);
	void *progress_ctx;
	struct buf resp;     /* response body when write_fn is NULL */
	long retry_after_ms; /* from a Retry-After header, capped; -1: none */
	bool overflow;       /* the body passed its cap */
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE]; /* libcurl's detail for a transport error */
};

void k8s_call_init(struct k8s_call *call, const char *method, size_t resp_max);
void k8s_call_release(struct k8s_call *call);
/* url = server + path(res, ns, name, sub) + query (q may be NULL). */
int k8s_call_set_url(struct k8s_client *c, struct k8s_call *call, const struct k8s_resource *res,
                     const char *ns, const char *name, const char *sub, const struct k8s_query *q,
                     struct err *e);
/* Borrow an easy handle from the client's pool (or a new one) and give it back. */
CURL *k8s_client_handle_get(struct k8s_client *c);
void k8s_client_handle_put(struct k8s_client *c, CURL *h);
/* Resets h and sets everything for call: URL, method, body, TLS, auth, timeouts, sinks.
 * The call must stay alive (and unmoved) until the transfer is over. */
int k8s_client_prepare_handle(struct k8s_client *c, CURL *h, struct k8s_call *call, struct err *e);
/* Maps a finished transfer to 0 or an errno: transport failures, overflow, HTTP status
 * (via k8s_status_to_err on call->resp). */
int k8s_call_result(CURL *h, CURLcode cc, const struct k8s_call *call, struct err *e);
/* The client's max_body and whether its rate limit allows one more request now (waits
 * up to deadline_ms; -ETIMEDOUT if it cannot). */
size_t k8s_client_max_body(const struct k8s_client *c);
int k8s_client_throttle(struct k8s_client *c, int64_t deadline_ms, struct err *e);
/* After a transfer on h: a 429 answer slows the client down (rate.h). Any thread. */
void k8s_client_answered(struct k8s_client *c, CURL *h, const struct k8s_call *call);
/* A new ceiling (qps 0: no limit) and burst; the cuts counted so far are kept. */
void k8s_client_set_rate(struct k8s_client *c, double qps, int burst);
/* The rate in force (0: no client-side limit) and how many times the API server's 429s
 * cut it (one per congestion event, rate.h). Any thread. */
void k8s_client_rate(struct k8s_client *c, double *qps, unsigned long long *throttled);

#endif

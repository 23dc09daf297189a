/*
 * simops: the instance manager's API as the simulator answers it (instance/http.c's
 * routes, instance/ops.c's answers): GET /healthz, /readyz, /v1/status from the view of
 * the pod asked; POST /v1/{fence,unfence,promote,replicate,switchover,config,restart}.
 *
 * A mutation takes the lease mutex first (it may take or give up a Lease on the spot, as
 * the instance manager does: promotion and unfencing a primary take it, 409 when another
 * pod holds it; fencing, demotion and switchover give it up), then changes the instance
 * under the mutex. Bodies must be JSON objects; the fields read are checked and named
 * in the error (400). Unknown fields are ignored: the controller is the only caller.
 * Any thread (libmicrohttpd's).
 */
#include "sim_int.h"

#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/jsonx.h"
#include "lib/k8s/lease.h"

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* --- GET ------------------------------------------------------------------------------ */

static enum MHD_Result reply_view(struct na_sim *s, struct MHD_Connection *c, struct sim_req *r,
                                  int kind)
{
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	struct na_sim_view v;
	struct sim_inst *i;
	bool ready;

	pthread_mutex_lock(&s->mu);
	i = sim_inst_at(s, r->ip);
	if (i) {
		sim_view(s, i, &v);
		if (kind == 0)
			na_sim_status_json(&v, &out);
	}
	ready = i && v.ready;
	if (i && kind == 1)
		buf_printf(&out, "{\"ready\":%s,\"reason\":\"%s\"}", ready ? "true" : "false",
		           ready ? "" : v.reason);
	pthread_mutex_unlock(&s->mu);
	if (!i) {
		buf_release(&out);
		return MHD_NO; /* the pod left between the request and now: as if it were gone */
	}
	return httpd_reply(c, kind == 1 && !ready ? 503 : 200, "application/json",
	                   buf_detach(&out, NULL));
}

static enum MHD_Result h_healthz(struct na_sim *s, struct MHD_Connection *c, struct sim_req *r,
                                 json_t *body)
{
	(void)s;
	(void)r;
	(void)body;
	return httpd_reply_json(c, 200, json_pack("{s:s}", "status", "ok"));
}

static enum MHD_Result h_readyz(struct na_sim *s, struct MHD_Connection *c, struct sim_req *r,
                                json_t *body)
{
	(void)body;
	return reply_view(s, c, r, 1);
}

static enum MHD_Result h_status(struct na_sim *s, struct MHD_Connection *c, struct sim_req *r,
                                json_t *body)
{
	(void)body;
	return reply_view(s, c, r, 0);
}

/* --- HTTP: mutations (lease_mu held, the instance looked up under mu) ------------------------- */

/* The answer of a mutation that worked: offsets, role, fencing, lease (as ops.c's ok()). */
static enum MHD_Result ok(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                          const char *what)
{
	struct na_sim_view v;
	json_t *j;

	pthread_mutex_lock(&s->mu);
	sim_view(s, i, &v);
	j = json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:b}", "result", what, "role", v.role,
	              "replId", v.repl_id, "offset", (json_int_t)v.offset, "replId2", v.repl_id2,
	              "fenced", v.fenced, "leaseHeld", v.lease_held);
	pthread_mutex_unlock(&s->mu);
	return httpd_reply_json(c, 200, j);
}

static enum MHD_Result lease_refused(struct MHD_Connection *c, struct sim_inst *i, int rc,
                                     struct err *e)
{
	char holder[K8S_LEASE_IDENTITY_MAX + 1] = "", msg[300];

	if (i->lease)
		k8s_lease_holder(i->lease, holder, sizeof(holder));
	if (rc == -EBUSY)
		snprintf(msg, sizeof(msg), "the primary lease is held by %.128s", holder);
	else
		snprintf(msg, sizeof(msg), "the primary lease is unavailable: %.200s", e->msg);
	return httpd_reply_error(c, rc == -EBUSY ? 409 : 503, msg);
}

/* i becomes the serving primary (its Lease was just taken): a new replication history. */
static void become_primary(struct na_sim *s, struct sim_inst *i)
{
	struct sim_inst *m;

	pthread_mutex_lock(&s->mu);
	m = i->want_primary ? NULL : sim_master_of(s, i);
	if (!i->want_primary) {
		sim_copy(i->repl_id2, sizeof(i->repl_id2), m ? m->repl_id : i->repl_id);
		i->offset = m ? m->offset : i->offset;
		na_sim_repl_id(i->uid, ++i->promotions, i->repl_id);
	}
	i->want_primary = i->acquired = i->lease_held = true;
	i->fenced = false;
	i->master[0] = i->master_host[0] = '\0';
	i->next_step = clock_mono_ms() + i->renew_period_ms;
	sim_bump(s);
	pthread_mutex_unlock(&s->mu);
}

/* i follows the pod at host (or host itself when no pod has that address). */
static void become_replica(struct na_sim *s, struct sim_inst *i, const char *host)
{
	struct sim_inst *t;

	pthread_mutex_lock(&s->mu);
	t = sim_inst_at(s, host);
	i->want_primary = i->acquired = i->fenced = false;
	sim_copy(i->master, sizeof(i->master), t ? t->key : "");
	sim_copy(i->master_host, sizeof(i->master_host), t ? "" : host);
	sim_bump(s);
	pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result op_fence(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                json_t *body)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));

	pthread_mutex_lock(&s->mu);
	i->fenced = true;
	sim_copy(i->fence_reason, sizeof(i->fence_reason), reason ? reason : "fenced by request");
	sim_bump(s);
	pthread_mutex_unlock(&s->mu);
	sim_lease_drop(s, i); /* a fenced primary gives the lease up */
	return ok(s, c, i, "fenced");
}

static enum MHD_Result op_unfence(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                  json_t *body)
{
	struct err e = { 0 };
	int rc;

	(void)body;
	if (!i->fenced)
		return ok(s, c, i, "not fenced");
	pthread_mutex_lock(&s->mu);
	i->fenced = false;
	pthread_mutex_unlock(&s->mu);
	if (i->want_primary && (rc = sim_lease_step(s, i, &e)) < 0) {
		pthread_mutex_lock(&s->mu);
		i->fenced = true;
		pthread_mutex_unlock(&s->mu);
		return lease_refused(c, i, rc, &e);
	}
	sim_bump(s);
	return ok(s, c, i, "unfenced");
}

static enum MHD_Result op_promote(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                  json_t *body)
{
	struct err e = { 0 };
	int rc;

	(void)body;
	if (i->want_primary && i->lease_held && !i->fenced)
		return ok(s, c, i, "already primary");
	if ((rc = sim_lease_step(s, i, &e)) < 0)
		return lease_refused(c, i, rc, &e);
	become_primary(s, i);
	return ok(s, c, i, "promoted");
}

/* host (a string) and port (1..65535) of a body; NULL with msg set when bad. */
static const char *target_of(json_t *body, int *port, char *msg, size_t len)
{
	json_t *h = json_object_get(body, "host"), *p = json_object_get(body, "port");
	const char *host = json_string_value(h);

	if (!host || !*host || strlen(host) > NA_SIM_NAME_MAX) {
		snprintf(msg, len, "host: want a host name or address");
		return NULL;
	}
	if (p &&
	    (!json_is_integer(p) || json_integer_value(p) < 1 || json_integer_value(p) > 65535)) {
		snprintf(msg, len, "port: want an integer in [1, 65535]");
		return NULL;
	}
	*port = p ? (int)json_integer_value(p) : NA_SIM_REDIS_PORT;
	return host;
}

static enum MHD_Result op_replicate(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                    json_t *body)
{
	char msg[128];
	int port;
	const char *host = target_of(body, &port, msg, sizeof(msg));
	bool same;

	if (!host)
		return httpd_reply_error(c, 400, msg);
	if (strcmp(host, i->ip) == 0 && port == NA_SIM_REDIS_PORT)
		return httpd_reply_error(c, 400, "host, port: that is this instance");
	pthread_mutex_lock(&s->mu);
	same = !i->want_primary && !i->fenced &&
	       (strcmp(i->master_host, host) == 0 ||
	        (sim_inst_at(s, host) && strcmp(sim_inst_at(s, host)->key, i->master) == 0));
	pthread_mutex_unlock(&s->mu);
	if (same)
		return ok(s, c, i, "already replicating");
	become_replica(s, i, host);
	sim_lease_drop(s, i);
	return ok(s, c, i, "replicating");
}

/* The switchover's target: by "pod" (same namespace) or by "host". NULL: msg says why. */
static struct sim_inst *switch_target(struct na_sim *s, struct sim_inst *i, json_t *body, char *msg,
                                      size_t len)
{
	const char *pod = json_string_value(json_object_get(body, "pod"));
	char key[SIM_KEY_MAX + 1];
	struct sim_inst *t = NULL;
	const char *host = NULL;
	int port;

	if (!pod && !(host = target_of(body, &port, msg, len)))
		return NULL;
	snprintf(key, sizeof(key), "%s/%s", i->ns, pod ? pod : "");
	pthread_mutex_lock(&s->mu);
	t = pod ? sim_inst_by_key(s, key) : sim_inst_at(s, host);
	if (!t)
		snprintf(msg, len, "%s: no such instance", pod ? "pod" : "host");
	else if (t == i)
		snprintf(msg, len, "%s: that is this instance", pod ? "pod" : "host");
	else if (strcmp(t->master, i->key) != 0 || t->fenced)
		snprintf(msg, len, "the target is not a replica of this primary");
	pthread_mutex_unlock(&s->mu);
	return t && t != i && !strcmp(t->master, i->key) && !t->fenced ? t : NULL;
}

static enum MHD_Result switched(struct MHD_Connection *c, struct sim_inst *t, long long offset,
                                int64_t t0, int64_t t_released, int64_t t_promoted)
{
	json_t *j = json_pack("{s:s, s:s, s:i, s:I}", "result", "switched over", "target", t->ip,
	                      "targetPort", NA_SIM_REDIS_PORT, "offset", (json_int_t)offset);

	json_object_set_new(j, "catchUpMs", json_real(0));
	json_object_set_new(j, "leaseReleaseMs", json_real((double)(t_released - t0) / 1000.0));
	json_object_set_new(j, "promoteMs", json_real((double)(t_promoted - t_released) / 1000.0));
	json_object_set_new(j, "writePauseMs", json_real((double)(t_promoted - t0) / 1000.0));
	json_object_set_new(j, "oldPrimaryPausedMs", json_real((double)(t_promoted - t0) / 1000.0));
	return httpd_reply_json(c, 200, j);
}

static enum MHD_Result op_switchover(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                     json_t *body)
{
	struct err e = { 0 };
	struct sim_inst *t;
	int64_t t0 = mono_us(), t_released;
	char msg[160];

	if (!sim_serving_primary(i) || i->fenced)
		return httpd_reply_error(c, 409, "not a serving primary");
	if (!(t = switch_target(s, i, body, msg, sizeof(msg))))
		return httpd_reply_error(c, strstr(msg, "no such") ? 503 : 400, msg);
	sim_lease_drop(s, i);
	t_released = mono_us();
	if (sim_lease_step(s, t, &e) < 0) {
		pthread_mutex_lock(&s->mu);
		i->fenced = true;
		sim_copy(i->fence_reason, sizeof(i->fence_reason), "switchover failed half-way");
		pthread_mutex_unlock(&s->mu);
		return httpd_reply_error(c, 502,
		                         "switchover failed half-way; this instance stays fenced");
	}
	become_primary(s, t);
	become_replica(s, i, t->ip);
	return switched(c, t, t->offset, t0, t_released, mono_us());
}

static enum MHD_Result op_config(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                 json_t *body)
{
	(void)s;
	(void)i;
	(void)body;
	return httpd_reply_json(c, 200,
	                        json_pack("{s:s, s:[]}", "result", "applied", "restartRequired"));
}

static enum MHD_Result op_restart(struct na_sim *s, struct MHD_Connection *c, struct sim_inst *i,
                                  json_t *body)
{
	(void)body;
	if (i->want_primary && i->fenced)
		return httpd_reply_error(c, 409,
		                         "a fenced primary is not restarted: unfence it or make it "
		                         "a replica first");
	return ok(s, c, i, "restarted");
}

/* --- HTTP: routing ------------------------------------------------------------------------------ */

typedef enum MHD_Result (*sim_op_fn)(struct na_sim *, struct MHD_Connection *, struct sim_inst *,
                                     json_t *);

static const struct {
	const char *path;
	sim_op_fn fn;
} mutations[] = {
	{ "/v1/fence", op_fence },           { "/v1/unfence", op_unfence },
	{ "/v1/promote", op_promote },       { "/v1/replicate", op_replicate },
	{ "/v1/switchover", op_switchover }, { "/v1/config", op_config },
	{ "/v1/restart", op_restart },
};

static const struct {
	const char *path;
	enum MHD_Result (*fn)(struct na_sim *, struct MHD_Connection *, struct sim_req *, json_t *);
} reads[] = {
	{ "/healthz", h_healthz },
	{ "/readyz", h_readyz },
	{ "/v1/status", h_status },
};

static enum MHD_Result mutate(struct na_sim *s, struct MHD_Connection *c, struct sim_req *r,
                              sim_op_fn fn)
{
	struct err e = { 0 };
	json_t *body = NULL;
	struct sim_inst *i;
	enum MHD_Result rc;

	if (r->too_big)
		return httpd_reply_error(c, 413, "body: larger than the limit of 65536 bytes");
	if (r->body.len && jsonx_loadb(r->body.data, r->body.len, NA_SIM_BODY_MAX, &body, &e) < 0)
		return httpd_reply_error(c, 400, e.msg);
	if (body && !json_is_object(body)) {
		json_decref(body);
		return httpd_reply_error(c, 400, "body: want a JSON object");
	}
	pthread_mutex_lock(&s->lease_mu);
	pthread_mutex_lock(&s->mu);
	i = sim_inst_at(s, r->ip);
	pthread_mutex_unlock(&s->mu);
	rc = i ? fn(s, c, i, body ? body : json_object()) : MHD_NO;
	pthread_mutex_unlock(&s->lease_mu);
	json_decref(body);
	return rc;
}

enum MHD_Result sim_route(struct na_sim *s, struct MHD_Connection *c, const char *url,
                          const char *method, struct sim_req *r)
{
	bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;

	for (size_t k = 0; k < sizeof(reads) / sizeof(reads[0]); k++)
		if (strcmp(url, reads[k].path) == 0)
			return get ? reads[k].fn(s, c, r, NULL) : httpd_reply_not_allowed(c, "GET");
	for (size_t k = 0; k < sizeof(mutations) / sizeof(mutations[0]); k++)
		if (strcmp(url, mutations[k].path) == 0)
			return strcmp(method, "POST") == 0 ? mutate(s, c, r, mutations[k].fn)
			                                   : httpd_reply_not_allowed(c, "POST");
	return httpd_reply_error(c, 404, "no such endpoint");
}

/*
 * actions: a plan, what the planner (plan.h) makes of a view (view.h) for the applier
 * (apply.c): an ordered list of actions (create, patch or delete a child, patch the
 * cluster or its status, call an instance manager's POST /v1/<op>, an Event), when to
 * look again, and the phase and status to show. The /v1 request bodies come from the
 * contract's encoder (api_inst_request_encode, api/instance_v1.h). ctl_plan_dump gives
 * a plan as JSON for the golden files.
 *
 * Ownership: a plan owns its actions and their JSON (ctl_plan_release); the shortcuts
 * steal the objects they are given. Pure functions; any thread, one plan per thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_ACTIONS_H
#define REDIS_OPERATOR_CONTROLLER_ACTIONS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/view.h"
#include "lib/k8s/path.h"

enum ctl_act_kind {
	CTL_ACT_CREATE,   /* POST obj */
	CTL_ACT_PATCH,    /* merge patch obj onto name */
	CTL_ACT_DELETE,   /* DELETE name */
	CTL_ACT_STATUS,   /* merge patch obj onto the cluster's status subresource */
	CTL_ACT_CLUSTER,  /* merge patch obj onto the cluster itself (annotations) */
	CTL_ACT_INSTANCE, /* POST http://<pod ip>:8000/v1/<op> with obj as the body */
	CTL_ACT_EVENT,    /* an Event about the cluster */
};

/* What a successful action also records in the metrics. */
enum ctl_metric {
	CTL_METRIC_NONE,
	CTL_METRIC_FAILOVER,   /* value: duration in ms */
	CTL_METRIC_SWITCHOVER, /* the instance's answer carries writePauseMs */
};

/* What the applier generates into a Secret it creates (controller/pki.h). */
enum ctl_fill_tls {
	CTL_FILL_TLS_NONE,
	CTL_FILL_TLS_OPERATOR, /* <name>-operator-tls: new CAs, the controller's certificate */
	CTL_FILL_TLS_INSTANCE, /* <name>-instance-tls: signed by the operator Secret's CAs */
};

struct ctl_action {
	enum ctl_act_kind kind;
	const struct k8s_resource *res; /* CREATE PATCH DELETE */
	char *name;                     /* object or pod name */
	char *ip;                       /* INSTANCE: the pod's address */
	char *op;                       /* INSTANCE: fence, promote, replicate, ... */
	json_t *obj;                    /* body, patch or object (owned) */
	bool optional;                  /* a failure does not stop the plan */
	bool fill_password;             /* CREATE of a Secret: add a random `password` */
	enum ctl_fill_tls fill_tls;     /* CREATE or PATCH (renewal) of a Secret: TLS material */
	bool ignore_exists;             /* CREATE: AlreadyExists is success */
	int64_t busy_retry_ms; /* INSTANCE: a 409/503 answer means "not yet": retry after this,
	                        * without the failure backoff (a promote racing a Lease expiry) */
	/* Changes roles: polls taken before it succeeded no longer count for role decisions
	 * (see ctl_view.roles_epoch_mono). */
	bool new_epoch;
	enum ctl_metric metric;
	/* FAILOVER: the wall ms the failover started; the applier writes the duration it
	 * measures into lastFailover.durationMs and the histogram. */
	int64_t metric_value;
	/* EVENT */
	bool warning;
	char *reason, *note;
};

struct ctl_plan {
	struct ctl_action *acts;
	size_t n, cap;
	int64_t requeue_ms;  /* look again after this long; 0: only on changes */
	const char *phase;   /* the phase the status shows (static text) */
	const char *waiting; /* what the plan waits for, for logs (static text) */
	json_t *status;      /* the status the cluster should show (owned; may be NULL) */
};

void ctl_plan_init(struct ctl_plan *p);
void ctl_plan_release(struct ctl_plan *p);
/* Appends a zeroed action of kind and returns it (owned by the plan). */
struct ctl_action *ctl_plan_add(struct ctl_plan *p, enum ctl_act_kind kind);
/* Shortcuts; obj is stolen. */
void ctl_plan_create(struct ctl_plan *p, const struct k8s_resource *res, json_t *obj);
void ctl_plan_patch(struct ctl_plan *p, const struct k8s_resource *res, const char *name,
                    json_t *patch);
void ctl_plan_delete(struct ctl_plan *p, const struct k8s_resource *res, const char *name);
struct ctl_action *ctl_plan_status(struct ctl_plan *p, json_t *patch);
struct ctl_action *ctl_plan_instance(struct ctl_plan *p, const struct ctl_pod *pod, const char *op,
                                     json_t *body);
void ctl_plan_event(struct ctl_plan *p, bool warning, const char *reason, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* Bodies of POST /v1/<op>, by the contract's encoder (api/instance_v1.h); new
 * references for ctl_plan_instance. */
json_t *ctl_body_fence(const char *reason);
json_t *ctl_body_promote(bool force);
json_t *ctl_body_replicate(const char *host, int port);
json_t *ctl_body_switchover(const char *host, int port, int http_port);
/* Sets requeue_ms to ms when sooner (or unset). */
void ctl_plan_requeue(struct ctl_plan *p, int64_t ms);

/* The plan as JSON for golden files and logs (passwords never appear: generated ones are
 * filled by the applier). A new reference. */
json_t *ctl_plan_dump(const struct ctl_plan *p);

#endif

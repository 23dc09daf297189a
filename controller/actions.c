/*
 * actions: plans and their actions (see actions.h): building them, the /v1 request
 * bodies through the contract's encoder, and the dump for golden files.
 */
#include "actions.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/instance_v1.h"
#include "lib/alloc.h"
#include "lib/jsonx.h"

void ctl_plan_init(struct ctl_plan *p)
{
	memset(p, 0, sizeof(*p));
}

static void action_release(struct ctl_action *a)
{
	free(a->name);
	free(a->ip);
	free(a->op);
	free(a->reason);
	free(a->note);
	json_decref(a->obj);
}

void ctl_plan_release(struct ctl_plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		action_release(&p->acts[i]);
	free(p->acts);
	json_decref(p->status);
	memset(p, 0, sizeof(*p));
}

struct ctl_action *ctl_plan_add(struct ctl_plan *p, enum ctl_act_kind kind)
{
	struct ctl_action *a;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 8;
		p->acts = xreallocarray(p->acts, p->cap, sizeof(*p->acts));
	}
	a = &p->acts[p->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	return a;
}

void ctl_plan_create(struct ctl_plan *p, const struct k8s_resource *res, json_t *obj)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_CREATE);
	const char *name = jsonx_get_string(obj, "metadata.name");

	a->res = res;
	a->name = xstrdup(name ? name : "");
	a->obj = obj;
}

void ctl_plan_patch(struct ctl_plan *p, const struct k8s_resource *res, const char *name,
                    json_t *patch)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_PATCH);

	a->res = res;
	a->name = xstrdup(name);
	a->obj = patch;
}

void ctl_plan_delete(struct ctl_plan *p, const struct k8s_resource *res, const char *name)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_DELETE);

	a->res = res;
	a->name = xstrdup(name);
}

struct ctl_action *ctl_plan_status(struct ctl_plan *p, json_t *patch)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_STATUS);

	a->obj = patch;
	a->new_epoch = json_object_get(patch, "currentPrimary") != NULL;
	return a;
}

struct ctl_action *ctl_plan_instance(struct ctl_plan *p, const struct ctl_pod *pod, const char *op,
                                     json_t *body)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_INSTANCE);

	a->name = xstrdup(pod->name);
	a->ip = xstrdup(pod->ip ? pod->ip : "");
	a->op = xstrdup(op);
	a->obj = body ? body : json_object();
	a->new_epoch = strcmp(op, "config") != 0 && strcmp(op, "restart") != 0;
	return a;
}

json_t *ctl_body_fence(const char *reason)
{
	struct api_inst_request r = { .op = API_INST_FENCE, .reason = reason };

	return api_inst_request_encode(&r);
}

json_t *ctl_body_promote(bool force)
{
	struct api_inst_request r = { .op = API_INST_PROMOTE, .force = force };

	return api_inst_request_encode(&r);
}

json_t *ctl_body_replicate(const char *host, int port)
{
	struct api_inst_request r = { .op = API_INST_REPLICATE, .host = host, .port = port };

	return api_inst_request_encode(&r);
}

json_t *ctl_body_switchover(const char *host, int port, int http_port)
{
	struct api_inst_request r = {
		.op = API_INST_SWITCHOVER, .host = host, .port = port, .http_port = http_port
	};

	return api_inst_request_encode(&r);
}

void ctl_plan_event(struct ctl_plan *p, bool warning, const char *reason, const char *fmt, ...)
{
	struct ctl_action *a = ctl_plan_add(p, CTL_ACT_EVENT);
	char note[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(note, sizeof(note), fmt, ap);
	va_end(ap);
	a->warning = warning;
	a->reason = xstrdup(reason);
	a->note = xstrdup(note);
	a->optional = true;
}

void ctl_plan_requeue(struct ctl_plan *p, int64_t ms)
{
	if (ms <= 0)
		ms = 1;
	if (!p->requeue_ms || ms < p->requeue_ms)
		p->requeue_ms = ms;
}

static const char *const kind_names[] = {
	[CTL_ACT_CREATE] = "create", [CTL_ACT_PATCH] = "patch",     [CTL_ACT_DELETE] = "delete",
	[CTL_ACT_STATUS] = "status", [CTL_ACT_CLUSTER] = "cluster", [CTL_ACT_INSTANCE] = "instance",
	[CTL_ACT_EVENT] = "event",
};

static json_t *action_dump(const struct ctl_action *a)
{
	json_t *j = json_pack("{s:s}", "action", kind_names[a->kind]);

	if (a->res)
		json_object_set_new(j, "kind", json_string(a->res->kind));
	if (a->name)
		json_object_set_new(j, "name", json_string(a->name));
	if (a->op)
		json_object_set_new(j, "op", json_string(a->op));
	if (a->obj)
		json_object_set(j, "body", a->obj);
	if (a->optional)
		json_object_set_new(j, "optional", json_true());
	if (a->fill_password)
		json_object_set_new(j, "fillPassword", json_true());
	if (a->fill_tls)
		json_object_set_new(j, "fillTls",
		                    json_string(a->fill_tls == CTL_FILL_TLS_OPERATOR ? "operator"
		                                                                     : "instance"));
	if (a->reason)
		json_object_set_new(j, "reason", json_string(a->reason));
	if (a->note)
		json_object_set_new(j, "note", json_string(a->note));
	if (a->kind == CTL_ACT_EVENT)
		json_object_set_new(j, "type", json_string(a->warning ? "Warning" : "Normal"));
	if (a->metric)
		json_object_set_new(j, "metric", json_integer(a->metric));
	return j;
}

json_t *ctl_plan_dump(const struct ctl_plan *p)
{
	json_t *acts = json_array();

	for (size_t i = 0; i < p->n; i++)
		json_array_append_new(acts, action_dump(&p->acts[i]));
	return json_pack("{s:o,s:I,s:s?,s:s?}", "actions", acts, "requeueMs",
	                 (json_int_t)p->requeue_ms, "phase", p->phase, "waiting", p->waiting);
}

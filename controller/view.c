/*
 * view: the view's helpers (see view.h): the /v1/status parser into struct ctl_inst, the
 * predicates the planner asks of an instance, a pod by name, a pod's serial.
 */
#include "view.h"

#include <stdio.h>
#include <string.h>

#include "api/instance_v1.h"

/* --- /v1/status --------------------------------------------------------------------- */

static void copy(char *out, size_t len, const char *s)
{
	snprintf(out, len, "%s", s ? s : "");
}

/* A nullable integer of the status as the view keeps it: null is def. */
static long long nint(int64_t v, long long def)
{
	return v == API_INST_NULL ? def : (long long)v;
}

int ctl_inst_parse(const char *body, size_t len, struct ctl_inst *out, struct err *e)
{
	struct ctl_inst i = *out;
	struct api_inst_status s;
	const struct api_inst_replication *r = &s.replication;
	int rc = api_inst_status_decode(body, len, &s, e);

	if (rc)
		return rc;
	copy(i.state, sizeof(i.state), s.state);
	copy(i.role, sizeof(i.role), s.role);
	copy(i.reason, sizeof(i.reason), s.reason);
	copy(i.fence_reason, sizeof(i.fence_reason), s.fence_reason);
	copy(i.version, sizeof(i.version), s.version);
	copy(i.engine, sizeof(i.engine), s.engine);
	i.ready = s.ready;
	i.fenced = s.fenced;
	i.lease_held = s.lease_held;
	i.primary_crashed = s.primary_crashed;
	i.server_up = s.server.up;
	i.loading = s.server.loading;
	i.syncing = s.server.sync_in_progress;
	i.server_pid = nint(s.server.pid, 0);
	copy(i.repl_id, sizeof(i.repl_id), s.has_replication ? r->repl_id : NULL);
	copy(i.repl_id2, sizeof(i.repl_id2), s.has_replication ? r->repl_id2 : NULL);
	copy(i.link, sizeof(i.link), s.has_replication ? r->link : NULL);
	copy(i.master_host, sizeof(i.master_host), s.has_replication ? r->master_host : NULL);
	i.master_port = s.has_replication ? (int)nint(r->master_port, 0) : 0;
	i.offset = s.has_replication ? nint(r->offset, -1) : -1;
	i.lag_bytes = s.has_replication ? nint(r->lag_bytes, -1) : -1;
	i.lag_seconds = s.has_replication ? nint(r->lag_seconds, -1) : -1;
	copy(i.restore_phase, sizeof(i.restore_phase), s.has_restore ? s.restore.phase : NULL);
	copy(i.restore_error, sizeof(i.restore_error), s.has_restore ? s.restore.error : NULL);
	api_inst_status_release(&s);
	*out = i;
	return 0;
}

/* Sentinel's own view (api_inst_sentinel_view) as the view keeps it. */
static void sentinel_obs(const struct api_inst_sentinel_status *s, struct ctl_sentinel_obs *o)
{
	const struct api_inst_sentinel_view *sv = &s->sentinel;

	memset(o, 0, sizeof(*o));
	o->config_epoch = o->known_sentinels = o->known_replicas = -1;
	o->has_view = s->has_sentinel;
	if (!s->has_sentinel)
		return;
	copy(o->master_host, sizeof(o->master_host), sv->master_host);
	o->master_port = (int)nint(sv->master_port, 0);
	copy(o->master_status, sizeof(o->master_status), sv->master_status);
	o->failover_in_progress = sv->failover_in_progress;
	o->quorum_ok = sv->quorum_ok;
	copy(o->quorum_reason, sizeof(o->quorum_reason), sv->quorum_reason);
	o->config_epoch = nint(sv->config_epoch, -1);
	o->known_sentinels = nint(sv->sentinels, -1);
	o->known_replicas = nint(sv->replicas, -1);
}

int ctl_inst_parse_sentinel(const char *body, size_t len, struct ctl_inst *out, struct err *e)
{
	struct ctl_inst i = *out;
	struct api_inst_sentinel_status s;
	int rc = api_inst_sentinel_status_decode(body, len, &s, e);

	if (rc)
		return rc;
	copy(i.state, sizeof(i.state), s.state);
	copy(i.role, sizeof(i.role), s.role);
	copy(i.reason, sizeof(i.reason), s.ready ? s.reason : s.not_ready_reason);
	copy(i.version, sizeof(i.version), s.version);
	copy(i.engine, sizeof(i.engine), s.engine);
	i.ready = s.ready;
	i.server_up = s.server.up;
	i.server_pid = nint(s.server.pid, 0);
	i.offset = i.lag_bytes = i.lag_seconds = -1;
	sentinel_obs(&s, &i.sen);
	api_inst_sentinel_status_release(&s);
	*out = i;
	return 0;
}

bool ctl_inst_ok(const struct ctl_inst *i)
{
	return i->seen && i->failures == 0;
}

bool ctl_inst_current(const struct ctl_view *v, const struct ctl_inst *i)
{
	return ctl_inst_ok(i) && i->last_ok_mono > v->roles_epoch_mono;
}

bool ctl_inst_is_writable_primary(const struct ctl_inst *i)
{
	return ctl_inst_server_writable(i) && strcmp(i->state, API_INST_STATE_PRIMARY) == 0;
}

bool ctl_inst_server_writable(const struct ctl_inst *i)
{
	return ctl_inst_ok(i) && strcmp(i->role, API_INST_ROLE_PRIMARY) == 0 && !i->fenced;
}

/* --- view --------------------------------------------------------------------------- */

const struct ctl_pod *ctl_view_pod(const struct ctl_view *v, const char *name)
{
	for (size_t i = 0; name && i < v->npods; i++)
		if (strcmp(v->pods[i].name, name) == 0)
			return &v->pods[i];
	return NULL;
}

const struct ctl_pod *ctl_view_sentinel(const struct ctl_view *v, const char *name)
{
	for (size_t i = 0; name && i < v->nsentinels; i++)
		if (strcmp(v->sentinels[i].name, name) == 0)
			return &v->sentinels[i];
	return NULL;
}

int ctl_serial_of(const char *cluster, const char *name)
{
	size_t n = strlen(cluster);
	long v = 0;
	const char *p;

	if (strncmp(name, cluster, n) != 0 || name[n] != '-' || !name[n + 1])
		return -1;
	for (p = name + n + 1; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (name[n + 1] == '0')
		return -1; /* serials start at 1 and have no leading zeros */
	return (int)v;
}

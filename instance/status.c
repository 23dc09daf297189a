/*
 * status: /v1/status JSON and the readiness verdict from a snapshot (see status.h).
 * The snapshot is turned into the contract's struct api_inst_status (api/instance_v1.h,
 * whose encoder the controller's decoder mirrors) and dumped with sorted keys, so equal
 * snapshots give equal bytes.
 */
#include "status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "api/instance_v1.h"
#include "lib/alloc.h"

const char *inst_state_name(enum inst_state s)
{
	static const char *const names[] = {
		[INST_STATE_BOOTING] = API_INST_STATE_BOOTING,
		[INST_STATE_STARTING] = API_INST_STATE_STARTING,
		[INST_STATE_PRIMARY] = API_INST_STATE_PRIMARY,
		[INST_STATE_REPLICA] = API_INST_STATE_REPLICA,
		[INST_STATE_PARKED] = API_INST_STATE_PARKED,
		[INST_STATE_CRASHED] = API_INST_STATE_CRASHED,
		[INST_STATE_STOPPING] = API_INST_STATE_STOPPING,
	};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static bool info_fresh(const struct inst_snapshot *s, int64_t now, int64_t max_age)
{
	return s->info_ok && s->server_pid > 0 && now - s->info_wall_ms <= max_age;
}

bool inst_status_ready(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                       const char **why)
{
	const char *w = NULL;

	if (!info_fresh(s, now_wall_ms, max_age_ms))
		w = "server not answering";
	else if (s->info.loading)
		w = "server loading its data";
	else if (s->state == INST_STATE_PRIMARY && s->fenced)
		w = "fenced";
	else if (s->state == INST_STATE_PRIMARY && s->info.role != VK_ROLE_PRIMARY)
		w = "not primary yet";
	else if (s->state == INST_STATE_REPLICA && !s->info.master_link_up)
		w = "replication link down";
	else if (s->state == INST_STATE_REPLICA && s->info.master_sync_in_progress)
		w = "full sync in progress";
	else if (s->state != INST_STATE_PRIMARY && s->state != INST_STATE_REPLICA)
		w = inst_state_name(s->state);
	if (why)
		*why = w ? w : "";
	return w == NULL;
}

/* A nullable integer of the status: VK_INFO_UNSET and negative values are null. */
static int64_t nint(long long v)
{
	return v == VK_INFO_UNSET || v < 0 ? API_INST_NULL : (int64_t)v;
}

static const char *link_name(const struct vk_info *i)
{
	if (i->role != VK_ROLE_REPLICA)
		return API_INST_LINK_NONE;
	if (i->master_sync_in_progress)
		return API_INST_LINK_SYNCING;
	return i->master_link_up ? API_INST_LINK_UP : API_INST_LINK_DOWN;
}

/* The replicas array is allocated: free(r->replicas). */
static void replication_of(const struct inst_snapshot *s, struct api_inst_replication *r)
{
	const struct vk_info *i = &s->info;
	long long off = i->role == VK_ROLE_REPLICA ? i->slave_repl_offset : i->master_repl_offset;
	long long lag = -1;

	if (i->role == VK_ROLE_REPLICA && s->primary_offset >= 0 && off >= 0)
		lag = s->primary_offset > off ? s->primary_offset - off : 0;
	r->repl_id = i->master_replid;
	r->repl_id2 = i->master_replid2;
	r->offset = nint(off);
	r->master_repl_offset = nint(i->master_repl_offset);
	r->second_offset = nint(i->second_repl_offset);
	r->link = link_name(i);
	r->master_host = i->master_host;
	r->master_port = nint(i->master_port);
	r->lag_bytes = nint(lag);
	r->lag_seconds =
	        i->role == VK_ROLE_REPLICA ? nint(i->master_last_io_seconds_ago) : API_INST_NULL;
	r->connected_replicas = nint(i->connected_slaves);
	r->replicas = xcalloc(i->nreplicas + 1, sizeof(*r->replicas));
	for (size_t k = 0; k < i->nreplicas; k++) {
		const struct vk_info_replica *v = &i->replicas[k];
		long long l = i->master_repl_offset - v->offset;

		r->replicas[k] = (struct api_inst_replica){ v->ip,     v->port,       v->state,
			                                    v->offset, l > 0 ? l : 0, v->lag };
	}
	r->n_replicas = i->nreplicas;
}

static void server_of(const struct inst_snapshot *s, bool fresh, struct api_inst_server *v)
{
	v->pid = s->server_pid ? s->server_pid : API_INST_NULL;
	v->up = fresh;
	v->restarts = (int64_t)s->server_restarts;
	v->role = fresh ? vk_role_name(s->info.role) : API_INST_ROLE_UNKNOWN;
	v->loading = fresh && s->info.loading;
	v->sync_in_progress = fresh && s->info.master_sync_in_progress;
	v->uptime_seconds = fresh ? nint(s->info.uptime_in_seconds) : API_INST_NULL;
	v->error = fresh ? NULL : s->info_error;
}

int inst_status_json(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                     struct buf *out)
{
	const char *why;
	bool ready = inst_status_ready(s, now_wall_ms, max_age_ms, &why);
	bool fresh = info_fresh(s, now_wall_ms, max_age_ms);
	struct api_inst_status st = {
		.pod = s->pod,
		.state = inst_state_name(s->state),
		.role = fresh ? vk_role_name(s->info.role) : API_INST_ROLE_UNKNOWN,
		.reason = s->reason,
		.ready = ready,
		.not_ready_reason = why,
		.fenced = s->fenced,
		.fence_reason = s->fenced ? s->fence_reason : NULL,
		.lease_held = s->lease_held,
		.primary_crashed = s->primary_crashed,
		.engine = s->engine,
		.version = s->engine_version,
		.session_id = fresh ? s->info.run_id : NULL,
		.config_hash = s->config_hash,
		.uptime_seconds = (now_wall_ms - s->started_wall_ms) / 1000,
		.lease_renew_failures = (int64_t)s->lease_renew_failures,
		.http_tls = inst_http_serve_name(s->http_serve),
		.http_tls_error =
		        s->http_serve == INST_HTTP_SERVE_REFUSED ? s->http_tls_error : NULL,
		.has_replication = fresh,
	};
	json_t *j;
	char *text;
	int rc;

	server_of(s, fresh, &st.server);
	st.has_backup = s->backup.set;
	inst_backup_view_api(&s->backup, &st.backup);
	st.has_restore = s->restore.set;
	inst_restore_view_api(&s->restore, &st.restore);
	if (fresh)
		replication_of(s, &st.replication);
	j = api_inst_status_encode(&st);
	free(st.replication.replicas);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	rc = buf_append_str(out, text);
	free(text);
	return rc;
}

/*
 * status: /v1/status JSON and the readiness verdict from a snapshot (see status.h).
 * Built with jansson and dumped with sorted keys, so equal snapshots give equal bytes.
 */
#include "status.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"

const char *inst_state_name(enum inst_state s)
{
	static const char *const names[] = { "booting", "starting", "primary", "replica",
		                             "parked",  "crashed",  "stopping" };

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

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

static json_t *int_or_null(long long v)
{
	return v == VK_INFO_UNSET || v < 0 ? json_null() : json_integer(v);
}

static const char *link_name(const struct vk_info *i)
{
	if (i->role != VK_ROLE_REPLICA)
		return "none";
	if (i->master_sync_in_progress)
		return "syncing";
	return i->master_link_up ? "up" : "down";
}

static json_t *replicas_json(const struct vk_info *i)
{
	json_t *a = json_array();

	for (size_t k = 0; k < i->nreplicas; k++) {
		const struct vk_info_replica *r = &i->replicas[k];
		long long lag = i->master_repl_offset - r->offset;

		json_array_append_new(a, json_pack("{s:s,s:I,s:s,s:I,s:I,s:I}", "ip", r->ip, "port",
		                                   (json_int_t)r->port, "state", r->state, "offset",
		                                   (json_int_t)r->offset, "lagBytes",
		                                   (json_int_t)(lag > 0 ? lag : 0), "lagSeconds",
		                                   (json_int_t)r->lag));
	}
	return a;
}

static json_t *replication_json(const struct inst_snapshot *s)
{
	const struct vk_info *i = &s->info;
	long long off = i->role == VK_ROLE_REPLICA ? i->slave_repl_offset : i->master_repl_offset;
	long long lag = -1;
	json_t *r;

	if (i->role == VK_ROLE_REPLICA && s->primary_offset >= 0 && off >= 0)
		lag = s->primary_offset > off ? s->primary_offset - off : 0;
	r = json_object();
	json_object_set_new(r, "replId", str_or_null(i->master_replid));
	json_object_set_new(r, "replId2", str_or_null(i->master_replid2));
	json_object_set_new(r, "offset", int_or_null(off));
	json_object_set_new(r, "masterReplOffset", int_or_null(i->master_repl_offset));
	json_object_set_new(r, "secondOffset", int_or_null(i->second_repl_offset));
	json_object_set_new(r, "link", json_string(link_name(i)));
	json_object_set_new(r, "masterHost", str_or_null(i->master_host));
	json_object_set_new(r, "masterPort", int_or_null(i->master_port));
	json_object_set_new(r, "lagBytes", int_or_null(lag));
	json_object_set_new(r, "lagSeconds",
	                    i->role == VK_ROLE_REPLICA ? int_or_null(i->master_last_io_seconds_ago)
	                                               : json_null());
	json_object_set_new(r, "connectedReplicas", int_or_null(i->connected_slaves));
	json_object_set_new(r, "replicas", replicas_json(i));
	return r;
}

static json_t *server_json(const struct inst_snapshot *s, int64_t now, int64_t max_age)
{
	bool fresh = info_fresh(s, now, max_age);
	json_t *j = json_object();

	json_object_set_new(j, "pid", s->server_pid ? json_integer(s->server_pid) : json_null());
	json_object_set_new(j, "up", json_boolean(fresh));
	json_object_set_new(j, "restarts", json_integer((json_int_t)s->server_restarts));
	json_object_set_new(j, "role", json_string(fresh ? vk_role_name(s->info.role) : "unknown"));
	json_object_set_new(j, "loading", json_boolean(fresh && s->info.loading));
	json_object_set_new(j, "syncInProgress",
	                    json_boolean(fresh && s->info.master_sync_in_progress));
	json_object_set_new(j, "uptimeSeconds",
	                    fresh ? int_or_null(s->info.uptime_in_seconds) : json_null());
	json_object_set_new(j, "error", str_or_null(fresh ? NULL : s->info_error));
	return j;
}

int inst_status_json(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                     struct buf *out)
{
	const char *why;
	bool ready = inst_status_ready(s, now_wall_ms, max_age_ms, &why);
	bool fresh = info_fresh(s, now_wall_ms, max_age_ms);
	json_t *j = json_object();
	char *text;
	int rc;

	json_object_set_new(j, "pod", json_string(s->pod));
	json_object_set_new(j, "state", json_string(inst_state_name(s->state)));
	json_object_set_new(j, "role", json_string(fresh ? vk_role_name(s->info.role) : "unknown"));
	json_object_set_new(j, "reason", json_string(s->reason));
	json_object_set_new(j, "ready", json_boolean(ready));
	json_object_set_new(j, "notReadyReason", str_or_null(why));
	json_object_set_new(j, "fenced", json_boolean(s->fenced));
	json_object_set_new(j, "fenceReason", str_or_null(s->fenced ? s->fence_reason : NULL));
	json_object_set_new(j, "leaseHeld", json_boolean(s->lease_held));
	json_object_set_new(j, "primaryCrashed", json_boolean(s->primary_crashed));
	json_object_set_new(j, "engine", str_or_null(s->engine));
	json_object_set_new(j, "version", str_or_null(s->engine_version));
	json_object_set_new(j, "sessionId", str_or_null(fresh ? s->info.run_id : NULL));
	json_object_set_new(j, "configHash", str_or_null(s->config_hash));
	json_object_set_new(j, "uptimeSeconds",
	                    json_integer((now_wall_ms - s->started_wall_ms) / 1000));
	json_object_set_new(j, "leaseRenewFailures",
	                    json_integer((json_int_t)s->lease_renew_failures));
	json_object_set_new(j, "httpTls", json_string(inst_http_serve_name(s->http_serve)));
	json_object_set_new(
	        j, "httpTlsError",
	        str_or_null(s->http_serve == INST_HTTP_SERVE_REFUSED ? s->http_tls_error : NULL));
	json_object_set_new(j, "server", server_json(s, now_wall_ms, max_age_ms));
	json_object_set_new(j, "replication", fresh ? replication_json(s) : json_null());
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	rc = buf_append_str(out, text);
	free(text);
	return rc;
}

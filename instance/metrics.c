/*
 * metrics: Prometheus text for the /metrics endpoint on the metrics port (status.h).
 *
 * Names follow oliver006/redis_exporter, so existing dashboards and alerts work:
 * redis_up, redis_connected_clients, redis_memory_used_bytes,
 * redis_commands_processed_total, redis_connected_slaves, redis_master_repl_offset,
 * redis_connected_slave_offset_bytes / _lag_seconds per replica, redis_db_keys{db},
 * redis_master_link_up … The manager's own series are redis_operator_instance_*.
 * One table maps INFO fields to gauge/counter series; labelled series are written by
 * small functions. A stale or failed INFO renders redis_up 0 and no server series.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "instance/status.h"

struct series {
	const char *name;
	const char *type; /* "gauge" | "counter" */
	const char *help;
	size_t offset; /* of a long long in struct vk_info */
};

#define F(f) offsetof(struct vk_info, f)
static const struct series info_series[] = {
	{ "redis_uptime_in_seconds", "gauge", "Seconds since the server started.",
	  F(uptime_in_seconds) },
	{ "redis_connected_clients", "gauge", "Client connections.", F(connected_clients) },
	{ "redis_blocked_clients", "gauge", "Clients blocked in a blocking call.",
	  F(blocked_clients) },
	{ "redis_memory_used_bytes", "gauge", "used_memory.", F(used_memory) },
	{ "redis_memory_used_rss_bytes", "gauge", "used_memory_rss.", F(used_memory_rss) },
	{ "redis_memory_max_bytes", "gauge", "maxmemory (0: none).", F(maxmemory) },
	{ "redis_rdb_changes_since_last_save", "gauge", "Changes since the last RDB save.",
	  F(rdb_changes_since_last_save) },
	{ "redis_commands_processed_total", "counter", "Commands processed.",
	  F(total_commands_processed) },
	{ "redis_connections_received_total", "counter", "Connections accepted.",
	  F(total_connections_received) },
	{ "redis_keyspace_hits_total", "counter", "Successful key lookups.", F(keyspace_hits) },
	{ "redis_keyspace_misses_total", "counter", "Failed key lookups.", F(keyspace_misses) },
	{ "redis_evicted_keys_total", "counter", "Keys evicted by maxmemory.", F(evicted_keys) },
	{ "redis_expired_keys_total", "counter", "Keys expired.", F(expired_keys) },
	{ "redis_instantaneous_ops_per_sec", "gauge", "Commands per second.",
	  F(instantaneous_ops_per_sec) },
	{ "redis_connected_slaves", "gauge", "Replicas connected to this primary.",
	  F(connected_slaves) },
	{ "redis_master_repl_offset", "gauge", "Replication offset of this server.",
	  F(master_repl_offset) },
	{ "redis_second_repl_offset", "gauge", "Offset up to which replid2 is valid.",
	  F(second_repl_offset) },
};
#undef F

static int head(struct buf *o, const char *name, const char *type, const char *help)
{
	return buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int gauge(struct buf *o, const char *name, const char *help, long long v)
{
	int rc = head(o, name, "gauge", help);

	return rc ? rc : buf_printf(o, "%s %lld\n", name, v);
}

static int counter(struct buf *o, const char *name, const char *help, unsigned long long v)
{
	int rc = head(o, name, "counter", help);

	return rc ? rc : buf_printf(o, "%s %llu\n", name, v);
}

/* Label values here come from INFO (addresses, states, versions): escape \ " \n anyway. */
static int label(struct buf *o, const char *v)
{
	int rc = 0;

	for (; *v && !rc; v++) {
		if (*v == '\\' || *v == '"')
			rc = buf_printf(o, "\\%c", *v);
		else if (*v == '\n')
			rc = buf_append_str(o, "\\n");
		else
			rc = buf_append_char(o, *v);
	}
	return rc;
}

static int info_line(struct buf *o, const struct inst_snapshot *s)
{
	const struct vk_info *i = &s->info;
	int rc = head(o, "redis_instance_info", "gauge", "Server identity (value 1).");

	rc = rc ? rc : buf_append_str(o, "redis_instance_info{role=\"");
	rc = rc ? rc : label(o, vk_role_name(i->role));
	rc = rc ? rc : buf_append_str(o, "\",redis_version=\"");
	rc = rc ? rc : label(o, i->engine_version);
	rc = rc ? rc : buf_append_str(o, "\",engine=\"");
	rc = rc ? rc : label(o, vk_engine_name(i->engine));
	rc = rc ? rc : buf_append_str(o, "\",run_id=\"");
	rc = rc ? rc : label(o, i->run_id);
	return rc ? rc : buf_append_str(o, "\"} 1\n");
}

static int replica_lines(struct buf *o, const struct vk_info *i, bool lag)
{
	int rc = lag ? head(o, "redis_connected_slave_lag_seconds", "gauge",
	                    "Seconds since each replica's last acknowledgement.")
	             : head(o, "redis_connected_slave_offset_bytes", "gauge",
	                    "Offset acknowledged by each replica.");

	for (size_t k = 0; !rc && k < i->nreplicas; k++) {
		const struct vk_info_replica *r = &i->replicas[k];

		rc = buf_printf(o, "%s{slave_ip=\"",
		                lag ? "redis_connected_slave_lag_seconds"
		                    : "redis_connected_slave_offset_bytes");
		rc = rc ? rc : label(o, r->ip);
		rc = rc ? rc : buf_printf(o, "\",slave_port=\"%lld\",slave_state=\"", r->port);
		rc = rc ? rc : label(o, r->state);
		rc = rc ? rc : buf_printf(o, "\"} %lld\n", lag ? r->lag : r->offset);
	}
	return rc;
}

static int db_lines(struct buf *o, const struct vk_info *i, bool expiring)
{
	const char *name = expiring ? "redis_db_keys_expiring" : "redis_db_keys";
	int rc = head(o, name, "gauge",
	              expiring ? "Keys with a TTL per database." : "Keys per database.");

	for (size_t k = 0; !rc && k < i->ndbs; k++)
		rc = buf_printf(o, "%s{db=\"db%d\"} %lld\n", name, i->dbs[k].index,
		                expiring ? i->dbs[k].expires : i->dbs[k].keys);
	return rc;
}

static int replica_side(struct buf *o, const struct inst_snapshot *s)
{
	const struct vk_info *i = &s->info;
	long long lag = -1;
	int rc;

	if (i->role != VK_ROLE_REPLICA)
		return 0;
	if (s->primary_offset >= 0 && i->slave_repl_offset >= 0)
		lag = s->primary_offset > i->slave_repl_offset
		              ? s->primary_offset - i->slave_repl_offset
		              : 0;
	rc = gauge(o, "redis_master_link_up", "1 when the link to the primary is up.",
	           i->master_link_up);
	rc = rc ? rc
	        : gauge(o, "redis_master_sync_in_progress", "1 during a full sync.",
	                i->master_sync_in_progress);
	rc = rc ? rc
	        : gauge(o, "redis_master_last_io_seconds_ago",
	                "Seconds since the last byte from the primary.",
	                i->master_last_io_seconds_ago);
	rc = rc ? rc
	        : gauge(o, "redis_slave_repl_offset", "This replica's offset.",
	                i->slave_repl_offset);
	if (!rc && lag >= 0)
		rc = gauge(o, "redis_operator_instance_replication_lag_bytes",
		           "Bytes this replica is behind its primary.", lag);
	return rc;
}

static int server_lines(struct buf *o, const struct inst_snapshot *s)
{
	const struct vk_info *i = &s->info;
	int rc = info_line(o, s);

	for (size_t k = 0; !rc && k < sizeof(info_series) / sizeof(info_series[0]); k++) {
		long long v =
		        *(const long long *)(const void *)((const char *)i + info_series[k].offset);

		if (v == VK_INFO_UNSET)
			continue;
		rc = head(o, info_series[k].name, info_series[k].type, info_series[k].help);
		rc = rc ? rc : buf_printf(o, "%s %lld\n", info_series[k].name, v);
	}
	rc = rc ? rc : gauge(o, "redis_loading_dump_file", "1 while loading data.", i->loading);
	rc = rc ? rc
	        : gauge(o, "redis_rdb_bgsave_in_progress", "1 during BGSAVE.",
	                i->rdb_bgsave_in_progress);
	rc = rc ? rc : gauge(o, "redis_aof_enabled", "1 when appendonly is on.", i->aof_enabled);
	rc = rc ? rc : replica_lines(o, i, false);
	rc = rc ? rc : replica_lines(o, i, true);
	rc = rc ? rc : db_lines(o, i, false);
	rc = rc ? rc : db_lines(o, i, true);
	return rc ? rc : replica_side(o, s);
}

int inst_metrics_render(const struct inst_snapshot *s, int64_t now_wall_ms, int64_t max_age_ms,
                        struct buf *out)
{
	bool up = s->info_ok && s->server_pid > 0 && now_wall_ms - s->info_wall_ms <= max_age_ms;
	int rc = gauge(out, "redis_up", "1 when the server answered the last poll.", up);

	rc = rc ? rc
	        : gauge(out, "redis_operator_instance_fenced",
	                "1 when this instance is fenced (refuses writes).", s->fenced);
	rc = rc ? rc
	        : gauge(out, "redis_operator_instance_lease_held",
	                "1 while this instance holds the primary lease.", s->lease_held);
	rc = rc ? rc
	        : gauge(out, "redis_operator_instance_primary_crashed",
	                "1 after the server died as primary (not restarted writable).",
	                s->primary_crashed);
	rc = rc ? rc
	        : counter(out, "redis_operator_instance_lease_renew_failures_total",
	                  "Failed renewals of the primary lease.", s->lease_renew_failures);
	rc = rc ? rc
	        : counter(out, "redis_operator_instance_server_restarts_total",
	                  "Times the manager restarted the server.", s->server_restarts);
	if (!rc && up)
		rc = server_lines(out, s);
	return rc;
}

/*
 * info: a pure parser for the text of the INFO command.
 *
 * INFO is a list of "field:value" lines ended by CRLF, grouped under "# Section"
 * headers. vk_info_parse() picks out what failover, readiness and metrics need into
 * a fixed struct; vk_info_get() fetches any other single field by name.
 *
 *   struct vk_info info;
 *   if (vk_info_parse(text, len, &info, &e) == 0 && info.role == VK_ROLE_REPLICA)
 *           ... info.slave_repl_offset, info.master_link_up ...
 *
 * Rules:
 * - The input is (ptr, len), need not be NUL-terminated, and is at most
 *   VK_INFO_MAX_LEN bytes (-EMSGSIZE otherwise). Lines may end in CRLF or LF.
 * - Fields the parser does not know, lines without ':' and "# " headers are ignored,
 *   so a newer server with more fields still parses. Any subset of sections may be
 *   given (INFO replication parses fine); a field that was absent stays at its
 *   default: VK_INFO_UNSET for integers, false, "", VK_ROLE_UNKNOWN.
 * - A known field with a malformed value (not a decimal integer in range, a flag that
 *   is not 0/1, a string too long for its buffer or holding control characters, an
 *   unknown role) fails the whole parse with -EPROTO and a message naming the field:
 *   failover must not act on half-understood data.
 * - Per-replica lines ("slave0:ip=…,port=…,state=online,offset=…,lag=…") fill
 *   replicas[] in the order given, up to VK_INFO_MAX_REPLICAS; keyspace lines
 *   ("db0:keys=…,expires=…,avg_ttl=…") fill dbs[] up to VK_INFO_MAX_DBS. The *_seen
 *   counters and the key totals include the lines past the cap.
 * - The output is written only on success.
 * Pure functions over their arguments; any thread.
 */
#ifndef REDIS_OPERATOR_VALKEY_INFO_H
#define REDIS_OPERATOR_VALKEY_INFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "lib/engine/engine.h"

#define VK_INFO_MAX_LEN      (1024 * 1024) /* a full INFO is ~6 KiB; "everything" ~30 KiB */
#define VK_INFO_MAX_REPLICAS 32
#define VK_INFO_MAX_DBS      16
#define VK_INFO_ID_SIZE      41  /* run_id and replication ids: 40 hex characters */
#define VK_INFO_STR_SIZE     64  /* versions, policy names, replica states */
#define VK_INFO_HOST_SIZE    256 /* a host name or address, as the server prints it */
#define VK_INFO_UNSET        LLONG_MIN

enum vk_role {
	VK_ROLE_UNKNOWN = 0,
	VK_ROLE_PRIMARY,  /* "role:master" */
	VK_ROLE_REPLICA,  /* "role:slave" */
	VK_ROLE_SENTINEL, /* only from ROLE (sentinel's INFO has no role line) */
};

struct vk_info_replica {
	char ip[VK_INFO_HOST_SIZE];
	long long port;
	char state[VK_INFO_STR_SIZE]; /* wait_bgsave, send_bulk, online … */
	long long offset;             /* the replica's acknowledged offset */
	long long lag;                /* seconds since its last acknowledgement */
	char type[VK_INFO_STR_SIZE];  /* valkey 8: "replica" or "rdb-channel"; "" on redis */
};

struct vk_info_db {
	int index; /* N of "dbN" */
	long long keys;
	long long expires;
	long long avg_ttl;
};

struct vk_info {
	/* Server. engine and version come from valkey_version when present, else from
	 * redis_version (and server_name:valkey marks a valkey that lacks valkey_version). */
	enum vk_engine engine;
	unsigned version;                      /* VK_VERSION(), 0 when unknown */
	char engine_version[VK_INFO_STR_SIZE]; /* "8.0.1" */
	char redis_version[VK_INFO_STR_SIZE];  /* as reported: "7.2.4" on valkey 8 */
	char valkey_version[VK_INFO_STR_SIZE]; /* "" on redis */
	char server_name[VK_INFO_STR_SIZE];    /* "valkey" on valkey; "" on redis 7.0 */
	char run_id[VK_INFO_ID_SIZE];
	long long process_id;
	long long uptime_in_seconds;
	long long tcp_port;

	/* Clients */
	long long connected_clients;
	long long blocked_clients;

	/* Memory */
	long long used_memory;
	long long used_memory_rss;
	long long maxmemory;
	char maxmemory_policy[VK_INFO_STR_SIZE];

	/* Persistence */
	bool loading;
	bool rdb_bgsave_in_progress;
	bool rdb_last_bgsave_failed; /* rdb_last_bgsave_status:err */
	bool aof_enabled;
	bool aof_rewrite_in_progress;
	long long rdb_changes_since_last_save;

	/* Stats */
	long long total_commands_processed;
	long long total_connections_received;
	long long keyspace_hits;
	long long keyspace_misses;
	long long evicted_keys;
	long long expired_keys;
	long long instantaneous_ops_per_sec;

	/* Replication, both roles */
	enum vk_role role;
	long long connected_slaves;
	char master_replid[VK_INFO_ID_SIZE];
	char master_replid2[VK_INFO_ID_SIZE];
	long long master_repl_offset;
	long long second_repl_offset;
	bool repl_backlog_active;

	/* Replication, replica only */
	char master_host[VK_INFO_HOST_SIZE];
	long long master_port;
	bool master_link_up; /* master_link_status:up */
	long long master_last_io_seconds_ago;
	bool master_sync_in_progress;
	long long slave_repl_offset;
	bool replica_read_only; /* slave_read_only or replica_read_only */

	/* Replication, primary only: one entry per "slaveN:" line */
	size_t nreplicas;      /* entries filled in replicas[] */
	size_t nreplicas_seen; /* lines seen, may exceed VK_INFO_MAX_REPLICAS */
	struct vk_info_replica replicas[VK_INFO_MAX_REPLICAS];

	/* Keyspace */
	size_t ndbs;
	size_t ndbs_seen;
	long long total_keys;    /* summed over every dbN line */
	long long total_expires; /* idem */
	struct vk_info_db dbs[VK_INFO_MAX_DBS];
};

/* Sets every field to its "absent" default (see above). */
void vk_info_init(struct vk_info *info);

/*
 * Parses INFO text. 0 and *out filled; -EMSGSIZE when len > VK_INFO_MAX_LEN;
 * -EPROTO when a known field is malformed (e names the field and the line).
 */
int vk_info_parse(const char *text, size_t len, struct vk_info *out, struct err *e);

/*
 * Copies the value of the first line "field:value" into out (NUL-terminated).
 * 0; -ENOENT when absent; -ERANGE when out is too small (out is then untouched);
 * -EINVAL for an empty field name; -EMSGSIZE when len > VK_INFO_MAX_LEN.
 */
int vk_info_get(const char *text, size_t len, const char *field, char *out, size_t outlen);

/* "primary", "replica", "sentinel", "unknown". */
const char *vk_role_name(enum vk_role role);

#endif

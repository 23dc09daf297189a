/*
 * rediscluster_rules: the CEL rules of config/crd/bases/redis.io_redisclusters.yaml: each
 * rule's text and message verbatim, and a C function that evaluates it on the same
 * (defaulted) JSON the API server's CEL sees. Read each function next to its rule: has(x)
 * is "present"; durations, quantities, CIDRs and regexps go through api/cel so the edge
 * cases agree. The tables are attached to their schema nodes in rediscluster_schema.c;
 * test_api_crd checks every text against the CRD.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/cel.h"
#include "api/rediscluster.h"
#include "api/rediscluster_rules.h"
#include "lib/jsonx.h"

#define SECOND_NS 1000000000LL

/* --- what the rules read --------------------------------------------------------------------- */

static bool has(json_t *v, const char *key)
{
	return jsonx_get(v, key) != NULL;
}

static bool is(json_t *v, const char *key, const char *want)
{
	const char *s = json_string_value(jsonx_get(v, key));

	return s && strcmp(s, want) == 0;
}

static double num(json_t *v, const char *key)
{
	return json_number_value(jsonx_get(v, key));
}

static bool flag(json_t *v, const char *key)
{
	return json_is_true(jsonx_get(v, key));
}

/* s.matches(r'<duration pattern>') */
static bool duration_syntax(json_t *s)
{
	return api_cel_matches(API_PATTERN_DURATION, json_string_value(s)) == 1;
}

#define CONVERSION_ERROR "type conversion error from 'string' to 'google.protobuf.Duration'"
#define OVERFLOW_ERROR   "integer overflow"

/* CEL's duration(s): 0, or -1 with CEL's error (a value beyond int64 nanoseconds). */
static int duration(json_t *s, int64_t *ns, const char **why)
{
	if (json_is_string(s) && api_cel_duration_ns(json_string_value(s), ns) == 0)
		return 0;
	*why = CONVERSION_ERROR;
	return -1;
}

/* CEL's a + b on durations: 0, or -1 with CEL's overflow error. */
static int add(int64_t a, int64_t b, int64_t *sum, const char **why)
{
	if (!__builtin_add_overflow(a, b, sum))
		return 0;
	*why = OVERFLOW_ERROR;
	return -1;
}

/* quantity(s), when isQuantity(s). */
static bool quantity(const char *s, struct api_cel_quantity *q)
{
	return s && api_cel_quantity_parse(s, q) == 0;
}

/* string(x) of an int-or-string value. */
static const char *as_string(json_t *v, char *buf, size_t n)
{
	if (json_is_integer(v)) {
		snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	return json_string_value(v);
}

/* --- root and spec ------------------------------------------------------------------------------ */

static int rule_name(json_t *self, json_t *old, const char **why)
{
	const char *name = json_string_value(jsonx_get(self, "metadata.name"));

	(void)old;
	if (!name) {
		*why = "no such key: name";
		return -1;
	}
	return api_cel_runes(name) <= 50 && api_cel_matches(API_PATTERN_CLUSTER_NAME, name) == 1;
}

static bool rule_sentinel_instances(json_t *self, json_t *old)
{
	(void)old;
	return !is(self, "mode", "sentinel") ||
	       (has(self, "instances") && num(self, "instances") >= 3);
}

static bool rule_cluster_no_instances(json_t *self, json_t *old)
{
	(void)old;
	return !is(self, "mode", "cluster") || !has(self, "instances");
}

static bool rule_cluster_shards(json_t *self, json_t *old)
{
	(void)old;
	return !is(self, "mode", "cluster") || (has(self, "shards") && num(self, "shards") >= 3);
}

static bool rule_shards_only_cluster(json_t *self, json_t *old)
{
	(void)old;
	return is(self, "mode", "cluster") ||
	       (!has(self, "shards") && !has(self, "replicasPerShard"));
}

static bool rule_sentinel_section(json_t *self, json_t *old)
{
	(void)old;
	return is(self, "mode", "sentinel") || !has(self, "sentinel");
}

static bool rule_min_sync_replicas(json_t *self, json_t *old)
{
	double min = num(self, "minSyncReplicas");

	(void)old;
	if (!has(self, "minSyncReplicas") || min == 0)
		return true;
	if (is(self, "mode", "cluster"))
		return min <= (has(self, "replicasPerShard") ? num(self, "replicasPerShard") : 1);
	return min < (has(self, "instances") ? num(self, "instances") : 1);
}

static bool rule_replica_mode_cluster(json_t *self, json_t *old)
{
	(void)old;
	return !is(self, "mode", "cluster") || !has(self, "replicaMode") ||
	       !flag(self, "replicaMode.enabled");
}

static bool rule_bootstrap_emptydir(json_t *self, json_t *old)
{
	(void)old;
	return !has(self, "bootstrap") || !has(self, "storage") ||
	       !is(self, "storage.type", "emptyDir");
}

static bool rule_bootstrap_immutable(json_t *self, json_t *old)
{
	json_t *b = jsonx_get(self, "bootstrap"), *ob = jsonx_get(old, "bootstrap");

	return !b == !ob && (!b || json_equal(b, ob));
}

static bool rule_tls_ca(json_t *self, json_t *old)
{
	(void)old;
	return has(self, "tlsSecret") == has(self, "caSecret");
}

static bool rule_percent_needs_limit(json_t *self, json_t *old)
{
	(void)old;
	return !has(self, "memory") || !has(self, "memory.maxMemoryPercent") ||
	       (has(self, "resources") && has(self, "resources.limits") &&
	        has(self, "resources.limits.memory"));
}

static bool rule_max_memory_below_limit(json_t *self, json_t *old)
{
	json_t *limit = jsonx_get(self, "resources.limits.memory");
	struct api_cel_quantity max, lim;
	char text[32];

	(void)old;
	if (!has(self, "memory") || !has(self, "memory.maxMemory") || !limit ||
	    !quantity(json_string_value(jsonx_get(self, "memory.maxMemory")), &max) ||
	    !quantity(as_string(limit, text, sizeof(text)), &lim))
		return true;
	return api_cel_quantity_cmp(&max, &lim) < 0;
}

static bool rule_redis_maxmemory(json_t *self, json_t *old)
{
	(void)old;
	return !has(self, "redis") || !json_object_get(jsonx_get(self, "redis"), "maxmemory") ||
	       !has(self, "memory") ||
	       (!has(self, "memory.maxMemory") && !has(self, "memory.maxMemoryPercent"));
}

static bool rule_redis_policy(json_t *self, json_t *old)
{
	(void)old;
	return !has(self, "redis") ||
	       !json_object_get(jsonx_get(self, "redis"), "maxmemory-policy") ||
	       !has(self, "memory") || !has(self, "memory.maxMemoryPolicy");
}

static bool rule_sni_needs_tls(json_t *self, json_t *old)
{
	(void)old;
	return !has(self, "exposure") || !flag(self, "exposure.enabled") ||
	       !has(self, "exposure.hostSNI") || is(self, "exposure.hostSNI", "*") ||
	       has(self, "tlsSecret");
}

/* --- mode and storage ------------------------------------------------------------------------------ */

static bool rule_mode_change(json_t *self, json_t *old)
{
	return json_equal(self, old) || (json_is_string(old) && json_is_string(self) &&
	                                 strcmp(json_string_value(old), "standalone") == 0 &&
	                                 strcmp(json_string_value(self), "sentinel") == 0);
}

static void message_mode_change(json_t *self, json_t *old, struct buf *out)
{
	buf_printf(out,
	           "spec.mode cannot change from %s to %s: only standalone \u2192 sentinel is "
	           "supported in place; create a new RedisCluster (restore it from a backup) to "
	           "change mode",
	           json_string_value(old), json_string_value(self));
}

static bool rule_storage_grows(json_t *self, json_t *old)
{
	struct api_cel_quantity now, before;

	return !has(old, "size") || !has(self, "size") || !is(self, "type", "pvc") ||
	       !is(old, "type", "pvc") ||
	       !quantity(json_string_value(jsonx_get(self, "size")), &now) ||
	       !quantity(json_string_value(jsonx_get(old, "size")), &before) ||
	       api_cel_quantity_cmp(&now, &before) >= 0;
}

static void message_storage_grows(json_t *self, json_t *old, struct buf *out)
{
	const char *now = json_string_value(jsonx_get(self, "size"));
	const char *before = json_string_value(jsonx_get(old, "size"));

	buf_printf(out,
	           "spec.storage.size may only grow (a PVC cannot shrink): %s is smaller than %s; "
	           "keep %s or larger",
	           now, before, before);
}

static bool rule_unchanged(json_t *self, json_t *old)
{
	return json_equal(self, old);
}

static bool rule_size_positive(json_t *self, json_t *old)
{
	struct api_cel_quantity q, zero;

	(void)old;
	return quantity(json_string_value(self), &q) && quantity("0", &zero) &&
	       api_cel_quantity_cmp(&q, &zero) > 0;
}

static bool rule_memory_one_limit(json_t *self, json_t *old)
{
	(void)old;
	return !(has(self, "maxMemory") && has(self, "maxMemoryPercent"));
}

static bool rule_max_memory_min(json_t *self, json_t *old)
{
	struct api_cel_quantity q, mi;

	(void)old;
	return quantity(json_string_value(self), &q) && quantity("1Mi", &mi) &&
	       api_cel_quantity_cmp(&q, &mi) >= 0;
}

/* --- spec.redis ------------------------------------------------------------------------------- */

/* The deny lists of the spec.redis rules, in the rules' order (see api_redis_denylists). */
static const char *const denied_owned[] = {
	"port",
	"bind",
	"bind-source-addr",
	"unixsocket",
	"unixsocketperm",
	"unixsocketgroup",
	"dir",
	"dbfilename",
	"appendfilename",
	"appenddirname",
	"daemonize",
	"supervised",
	"pidfile",
	"logfile",
	"syslog-enabled",
	"syslog-ident",
	"syslog-facility",
	"include",
	"protected-mode",
	NULL,
};
static const char *const denied_auth[] = {
	"requirepass", "masterauth", "masteruser", "primaryauth",
	"primaryuser", "aclfile",    "user",       NULL,
};
static const char *const denied_replication[] = {
	"replicaof",
	"slaveof",
	"replica-announce-ip",
	"slave-announce-ip",
	"replica-announce-port",
	"slave-announce-port",
	"replica-read-only",
	"slave-read-only",
	NULL,
};
static const char *const denied_unsafe[] = {
	"rename-command",           "loadmodule", "enable-debug-command", "enable-module-command",
	"enable-protected-configs", NULL,
};

const struct api_redis_denylist api_redis_denylists[] = {
	{ denied_owned, NULL }, { denied_auth, NULL }, { denied_replication, NULL },
	{ NULL, "tls-" },       { NULL, "cluster-" },  { denied_unsafe, NULL },
	{ NULL, NULL },
};

static bool denied_by(const struct api_redis_denylist *d, const char *key)
{
	if (d->prefix)
		return strncmp(key, d->prefix, strlen(d->prefix)) == 0;
	for (size_t i = 0; d->names[i]; i++)
		if (strcmp(d->names[i], key) == 0)
			return true;
	return false;
}

bool api_redis_directive_denied(const char *name)
{
	for (const struct api_redis_denylist *d = api_redis_denylists; d->names || d->prefix; d++)
		if (denied_by(d, name))
			return true;
	return false;
}

/* self.all(k, !<denied by list i>) */
static bool none_denied(json_t *self, size_t list)
{
	const char *k;
	json_t *v;

	json_object_foreach (self, k, v) {
		if (denied_by(&api_redis_denylists[list], k))
			return false;
	}
	return true;
}

static bool rule_keys_lowercase(json_t *self, json_t *old)
{
	const char *k;
	json_t *v;

	(void)old;
	json_object_foreach (self, k, v) {
		if (api_cel_runes(k) > 64 || api_cel_matches("^[a-z][a-z0-9-]*$", k) != 1)
			return false;
	}
	return true;
}

#define DENY_RULE(fn, i)                                                                           \
	static bool fn(json_t *self, json_t *old)                                                  \
	{                                                                                          \
		(void)old;                                                                         \
		return none_denied(self, i);                                                       \
	}
DENY_RULE(rule_not_owned, 0)
DENY_RULE(rule_not_auth, 1)
DENY_RULE(rule_not_replication, 2)
DENY_RULE(rule_not_tls, 3)
DENY_RULE(rule_not_cluster, 4)
DENY_RULE(rule_not_unsafe, 5)

static bool rule_value_one_line(json_t *self, json_t *old)
{
	(void)old;
	return api_cel_matches("[[:cntrl:]]", json_string_value(self)) == 0;
}

/* --- users ---------------------------------------------------------------------------------------- */

static bool rule_user_name(json_t *self, json_t *old)
{
	const char *s = json_string_value(self);

	(void)old;
	return strcmp(s, "default") != 0 && strcmp(s, "redis-operator") != 0;
}

/* self.lowerAscii() in [...]: strcasecmp folds ASCII only (no setlocale anywhere). */
static bool rule_acl_token(json_t *self, json_t *old)
{
	static const char *const refused[] = { "nopass", "resetpass", "reset", "on", "off" };
	const char *s = json_string_value(self);

	(void)old;
	if (s[0] && strchr("><#!", s[0]))
		return false;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strcasecmp(s, refused[i]) == 0)
			return false;
	return true;
}

static bool rule_acl_selector(json_t *self, json_t *old)
{
	(void)old;
	return json_string_value(self)[0] != '(';
}

/* --- replica mode, failover, sentinel -------------------------------------------------------- */

static bool rule_replica_source(json_t *self, json_t *old)
{
	(void)old;
	return !flag(self, "enabled") || has(self, "source");
}

static bool rule_promote_replica(json_t *self, json_t *old)
{
	(void)old;
	return !flag(self, "promote") || flag(self, "enabled");
}

static bool rule_source_one(json_t *self, json_t *old)
{
	(void)old;
	return has(self, "clusterName") != has(self, "host");
}

static int rule_lease_duration(json_t *self, json_t *old, const char **why)
{
	json_t *ld = jsonx_get(self, "leaseDuration");
	int64_t ns;

	(void)old;
	if (!ld || !duration_syntax(ld))
		return 1;
	if (duration(ld, &ns, why))
		return -1;
	return ns >= 3 * SECOND_NS && ns <= 300 * SECOND_NS;
}

static int rule_renew_deadline(json_t *self, json_t *old, const char **why)
{
	json_t *ld = jsonx_get(self, "leaseDuration"), *rd = jsonx_get(self, "renewDeadline");
	int64_t l, r, sum;

	(void)old;
	if (!ld || !rd || !duration_syntax(ld) || !duration_syntax(rd))
		return 1;
	if (duration(rd, &r, why) || add(r, 2 * SECOND_NS, &sum, why) || duration(ld, &l, why))
		return -1;
	return sum <= l;
}

/* (duration(rp) >= 100ms && rp + rp <= duration(rd)): a false side wins over an error. */
static int rule_renew_period(json_t *self, json_t *old, const char **why)
{
	json_t *rd = jsonx_get(self, "renewDeadline"), *rp = jsonx_get(self, "renewPeriod");
	const char *lwhy = NULL, *rwhy = NULL;
	int64_t d = 0, p = 0, twice = 0;
	bool lerr, rerr;

	(void)old;
	if (!rd || !rp || !duration_syntax(rd) || !duration_syntax(rp))
		return 1;
	lerr = duration(rp, &p, &lwhy) < 0;
	if (!lerr && p < SECOND_NS / 10)
		return 0;
	rerr = duration(rp, &p, &rwhy) || add(p, p, &twice, &rwhy) || duration(rd, &d, &rwhy);
	if (!rerr && twice > d)
		return 0;
	if (lerr || rerr) {
		*why = lerr ? lwhy : rwhy;
		return -1;
	}
	return 1;
}

static bool rule_quorum(json_t *self, json_t *old)
{
	(void)old;
	return !has(self, "quorum") || !has(self, "count") ||
	       num(self, "quorum") <= num(self, "count");
}

static bool rule_count_odd(json_t *self, json_t *old)
{
	json_t *c = jsonx_get(self, "count");

	(void)old;
	return !c || (int64_t)json_number_value(c) % 2 == 1;
}

/* !self.matches(<duration pattern>) || duration(self) >= min */
static int at_least(json_t *self, int64_t min_ns, const char **why)
{
	int64_t ns;

	if (!duration_syntax(self))
		return 1;
	if (duration(self, &ns, why))
		return -1;
	return ns >= min_ns;
}

static int rule_down_after(json_t *self, json_t *old, const char **why)
{
	(void)old;
	return at_least(self, SECOND_NS, why);
}

static int rule_failed_after(json_t *self, json_t *old, const char **why)
{
	(void)old;
	return at_least(self, 60 * SECOND_NS, why);
}

/* --- pod template, network policy, exposure ---------------------------------------------------- */

static bool rule_pod_labels(json_t *self, json_t *old)
{
	const char *k;
	json_t *v;

	(void)old;
	json_object_foreach (self, k, v) {
		if (strncmp(k, "redis.io/", 9) == 0 ||
		    strcmp(k, "app.kubernetes.io/managed-by") == 0)
			return false;
	}
	return true;
}

static bool rule_pod_annotations(json_t *self, json_t *old)
{
	const char *k;
	json_t *v;

	(void)old;
	json_object_foreach (self, k, v) {
		if (strncmp(k, "redis.io/", 9) == 0)
			return false;
	}
	return true;
}

static bool rule_client_selects(json_t *self, json_t *old)
{
	(void)old;
	return has(self, "podSelector") || has(self, "namespaceSelector");
}

static bool rule_entry_points(json_t *self, json_t *old)
{
	(void)old;
	return !flag(self, "enabled") ||
	       (has(self, "entryPoints") && json_array_size(jsonx_get(self, "entryPoints")) > 0);
}

static bool rule_cidr(json_t *self, json_t *old)
{
	(void)old;
	return api_cel_is_cidr(json_string_value(self));
}

/* --- the rules, verbatim ------------------------------------------------------------------------- */

const struct api_rule api_rc_root_rules[] = {
	{ .rule = "size(self.metadata.name) <= 50 && "
	          "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
	  .message =
	          "metadata.name must be at most 50 characters of lowercase letters, digits and "
	          "'-', starting with a letter (pods, Services and Leases are named after it, e.g. "
	          "<name>-sentinel); choose a shorter name",
	  .eval = rule_name },
	{ NULL },
};

const struct api_rule api_rc_spec_rules[] = {
	{ .rule = "self.mode != 'sentinel' || (has(self.instances) && self.instances >= 3)",
	  .message = "spec.instances: sentinel mode needs at least 3 data instances; set "
	             "spec.instances to 3 or more",
	  .field_path = ".instances",
	  .holds = rule_sentinel_instances },
	{ .rule = "self.mode != 'cluster' || !has(self.instances)",
	  .message =
	          "spec.instances must not be set in cluster mode (the size is spec.shards \u00d7 "
	          "(1 + spec.replicasPerShard)); remove spec.instances",
	  .field_path = ".instances",
	  .reason = "FieldValueForbidden",
	  .holds = rule_cluster_no_instances },
	{ .rule = "self.mode != 'cluster' || (has(self.shards) && self.shards >= 3)",
	  .message =
	          "spec.shards: cluster mode needs at least 3 shards; set spec.shards to 3 or more",
	  .field_path = ".shards",
	  .holds = rule_cluster_shards },
	{ .rule = "self.mode == 'cluster' || (!has(self.shards) && !has(self.replicasPerShard))",
	  .message =
	          "spec.shards and spec.replicasPerShard apply only to mode: cluster; remove them "
	          "or set spec.mode: cluster",
	  .reason = "FieldValueForbidden",
	  .holds = rule_shards_only_cluster },
	{ .rule = "self.mode == 'sentinel' || !has(self.sentinel)",
	  .message = "spec.sentinel applies only to mode: sentinel; remove it or set spec.mode: "
	             "sentinel",
	  .field_path = ".sentinel",
	  .reason = "FieldValueForbidden",
	  .holds = rule_sentinel_section },
	{ .rule = "!has(self.minSyncReplicas) || self.minSyncReplicas == 0 || (self.mode == "
	          "'cluster' ? self.minSyncReplicas <= (has(self.replicasPerShard) ? "
	          "self.replicasPerShard : 1) : self.minSyncReplicas < (has(self.instances) ? "
	          "self.instances : 1))",
	  .message = "spec.minSyncReplicas must be lower than spec.instances (at most "
	             "spec.replicasPerShard in cluster mode): writes would wait for replicas that "
	             "do not exist; lower minSyncReplicas or add instances",
	  .field_path = ".minSyncReplicas",
	  .holds = rule_min_sync_replicas },
	{ .rule = "self.mode != 'cluster' || !has(self.replicaMode) || !self.replicaMode.enabled",
	  .message = "spec.replicaMode is not supported in cluster mode; remove spec.replicaMode",
	  .field_path = ".replicaMode",
	  .reason = "FieldValueForbidden",
	  .holds = rule_replica_mode_cluster },
	{ .rule = "!has(self.bootstrap) || !has(self.storage) || self.storage.type != 'emptyDir'",
	  .message = "spec.bootstrap cannot be used with spec.storage.type: emptyDir (the restored "
	             "data would be lost at the first restart); use storage.type: pvc or remove "
	             "spec.bootstrap",
	  .field_path = ".bootstrap",
	  .reason = "FieldValueForbidden",
	  .holds = rule_bootstrap_emptydir },
	{ .rule = "has(self.bootstrap) == has(oldSelf.bootstrap) && (!has(self.bootstrap) || "
	          "self.bootstrap == oldSelf.bootstrap)",
	  .message = "spec.bootstrap is immutable: it is used only when the cluster is first "
	             "created; create a new RedisCluster to restore another backup",
	  .field_path = ".bootstrap",
	  .holds = rule_bootstrap_immutable },
	{ .rule = "has(self.tlsSecret) == has(self.caSecret)",
	  .message =
	          "spec.tlsSecret and spec.caSecret must be set together; add the missing one or "
	          "remove both",
	  .holds = rule_tls_ca },
	{ .rule = "!has(self.memory) || !has(self.memory.maxMemoryPercent) || "
	          "(has(self.resources) && has(self.resources.limits) && 'memory' in "
	          "self.resources.limits)",
	  .message =
	          "spec.memory.maxMemoryPercent needs spec.resources.limits.memory (the "
	          "percentage is taken of it); set the memory limit or use spec.memory.maxMemory",
	  .field_path = ".memory.maxMemoryPercent",
	  .reason = "FieldValueRequired",
	  .holds = rule_percent_needs_limit },
	{ .rule = "!has(self.memory) || !has(self.memory.maxMemory) || !has(self.resources) || "
	          "!has(self.resources.limits) || !('memory' in self.resources.limits) || "
	          "!isQuantity(self.memory.maxMemory) || "
	          "!isQuantity(string(self.resources.limits['memory'])) || "
	          "quantity(self.memory.maxMemory).isLessThan(quantity(string("
	          "self.resources.limits['memory'])))",
	  .message =
	          "spec.memory.maxMemory must be below spec.resources.limits.memory (Redis needs "
	          "headroom for buffers and fork); lower maxMemory or raise the limit",
	  .field_path = ".memory.maxMemory",
	  .holds = rule_max_memory_below_limit },
	{ .rule = "!has(self.redis) || !('maxmemory' in self.redis) || !has(self.memory) || "
	          "(!has(self.memory.maxMemory) && !has(self.memory.maxMemoryPercent))",
	  .message = "spec.redis.maxmemory conflicts with spec.memory.maxMemory/maxMemoryPercent; "
	             "set the limit in spec.memory only",
	  .field_path = ".redis",
	  .holds = rule_redis_maxmemory },
	{ .rule = "!has(self.redis) || !('maxmemory-policy' in self.redis) || !has(self.memory) || "
	          "!has(self.memory.maxMemoryPolicy)",
	  .message = "spec.redis.maxmemory-policy conflicts with spec.memory.maxMemoryPolicy; set "
	             "the policy in spec.memory only",
	  .field_path = ".redis",
	  .holds = rule_redis_policy },
	{ .rule = "!has(self.exposure) || !self.exposure.enabled || !has(self.exposure.hostSNI) || "
	          "self.exposure.hostSNI == '*' || has(self.tlsSecret)",
	  .message = "spec.exposure.hostSNI other than '*' needs TLS (Traefik routes TCP by SNI); "
	             "set spec.tlsSecret and spec.caSecret, or use hostSNI: '*'",
	  .field_path = ".exposure.hostSNI",
	  .holds = rule_sni_needs_tls },
	{ NULL },
};

const struct api_rule api_rc_mode_rules[] = {
	{ .rule = "self == oldSelf || (oldSelf == 'standalone' && self == 'sentinel')",
	  .message = "spec.mode is immutable except standalone \u2192 sentinel; create a new "
	             "RedisCluster to change mode",
	  .message_expression =
	          "'spec.mode cannot change from ' + oldSelf + ' to ' + self + ': "
	          "only standalone \u2192 sentinel is supported in place; create a new "
	          "RedisCluster (restore it from a backup) to change mode'",
	  .holds = rule_mode_change,
	  .format = message_mode_change },
	{ NULL },
};

const struct api_rule api_rc_storage_rules[] = {
	{ .rule = "!has(oldSelf.size) || !has(self.size) || self.type != 'pvc' || oldSelf.type != "
	          "'pvc' || !isQuantity(self.size) || !isQuantity(oldSelf.size) || "
	          "quantity(self.size).compareTo(quantity(oldSelf.size)) >= 0",
	  .message = "spec.storage.size may only grow (a PVC cannot shrink); keep the old size or "
	             "larger",
	  .message_expression = "'spec.storage.size may only grow (a PVC cannot shrink): ' + "
	                        "self.size + ' is smaller than ' + oldSelf.size + '; keep ' + "
	                        "oldSelf.size + ' or larger'",
	  .field_path = ".size",
	  .holds = rule_storage_grows,
	  .format = message_storage_grows },
	{ NULL },
};

const struct api_rule api_rc_storage_type_rules[] = {
	{ .rule = "self == oldSelf",
	  .message = "spec.storage.type is immutable (it decides where the data lives); create a "
	             "new RedisCluster to change it",
	  .holds = rule_unchanged },
	{ NULL },
};

const struct api_rule api_rc_storage_size_rules[] = {
	{ .rule = "isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",
	  .message = "spec.storage.size must be a positive Kubernetes quantity such as 1Gi",
	  .holds = rule_size_positive },
	{ NULL },
};

const struct api_rule api_rc_memory_rules[] = {
	{ .rule = "!(has(self.maxMemory) && has(self.maxMemoryPercent))",
	  .message = "spec.memory.maxMemory and spec.memory.maxMemoryPercent are mutually "
	             "exclusive; set only one of them",
	  .holds = rule_memory_one_limit },
	{ NULL },
};

const struct api_rule api_rc_max_memory_rules[] = {
	{ .rule = "isQuantity(self) && quantity(self).compareTo(quantity('1Mi')) >= 0",
	  .message = "spec.memory.maxMemory must be a Kubernetes quantity of at least 1Mi, such as "
	             "256Mi or 2Gi",
	  .holds = rule_max_memory_min },
	{ NULL },
};

const struct api_rule api_rc_redis_rules[] = {
	{ .rule = "self.all(k, size(k) <= 64 && k.matches('^[a-z][a-z0-9-]*$'))",
	  .message = "spec.redis directive names are lowercase letters, digits and '-' (at most 64 "
	             "characters), as in maxmemory-policy; rename the key",
	  .holds = rule_keys_lowercase },
	{ .rule = "self.all(k, !(k in ['port', 'bind', 'bind-source-addr', 'unixsocket', "
	          "'unixsocketperm', 'unixsocketgroup', 'dir', 'dbfilename', 'appendfilename', "
	          "'appenddirname', "
	          "'daemonize', 'supervised', 'pidfile', 'logfile', 'syslog-enabled', "
	          "'syslog-ident', 'syslog-facility', 'include', 'protected-mode']))",
	  .message = "spec.redis may not set port, bind, bind-source-addr, unixsocket*, "
	             "dir, dbfilename, appendfilename, appenddirname, daemonize, "
	             "supervised, pidfile, logfile, syslog-*, include or protected-mode: the "
	             "operator owns them; remove the directive",
	  .holds = rule_not_owned },
	{ .rule = "self.all(k, !(k in ['requirepass', 'masterauth', 'masteruser', 'primaryauth', "
	          "'primaryuser', 'aclfile', 'user']))",
	  .message = "spec.redis may not set requirepass, masterauth, masteruser, primaryauth, "
	             "primaryuser, aclfile or user: use spec.authSecret and spec.users instead",
	  .holds = rule_not_auth },
	{ .rule = "self.all(k, !(k in ['replicaof', 'slaveof', 'replica-announce-ip', "
	          "'slave-announce-ip', 'replica-announce-port', 'slave-announce-port', "
	          "'replica-read-only', 'slave-read-only']))",
	  .message = "spec.redis may not set replicaof, slaveof, replica-read-only or "
	             "replica-announce-*: the operator manages replication; remove the directive",
	  .holds = rule_not_replication },
	{ .rule = "self.all(k, !k.startsWith('tls-'))",
	  .message = "spec.redis may not set tls-* directives: use spec.tlsSecret and "
	             "spec.caSecret instead",
	  .holds = rule_not_tls },
	{ .rule = "self.all(k, !k.startsWith('cluster-'))",
	  .message = "spec.redis may not set cluster-* directives: the operator manages Redis "
	             "Cluster (spec.mode: cluster, spec.shards); remove the directive",
	  .holds = rule_not_cluster },
	{ .rule = "self.all(k, !(k in ['rename-command', 'loadmodule', 'enable-debug-command', "
	          "'enable-module-command', 'enable-protected-configs']))",
	  .message = "spec.redis may not set rename-command, loadmodule or "
	             "enable-*-command/configs: they are unsafe under the operator; remove the "
	             "directive",
	  .holds = rule_not_unsafe },
	{ NULL },
};

const struct api_rule api_rc_redis_value_rules[] = {
	{ .rule = "!self.matches('[[:cntrl:]]')",
	  .message = "spec.redis values may not contain newlines or other control characters; put "
	             "the value on one line",
	  .holds = rule_value_one_line },
	{ NULL },
};

const struct api_rule api_rc_user_name_rules[] = {
	{ .rule = "!(self in ['default', 'redis-operator'])",
	  .message = "spec.users[].name may not be 'default' (set by spec.authSecret) or "
	             "'redis-operator' (the operator's own user); choose another name",
	  .holds = rule_user_name },
	{ NULL },
};

const struct api_rule api_rc_acl_token_rules[] = {
	{ .rule = "!(self.startsWith('>') || self.startsWith('<') || self.startsWith('#') || "
	          "self.startsWith('!') || "
	          "self.lowerAscii() in ['nopass', 'resetpass', 'reset', 'on', 'off'])",
	  .message = "spec.users[].rules may not set passwords or the on/off state (>, <, #, !, "
	             "nopass, resetpass, reset, on, off, in any case): use passwordSecrets and "
	             "enabled",
	  .holds = rule_acl_token },
	{ .rule = "!self.startsWith('(')",
	  .message = "spec.users[].rules may not hold ACL selectors (a rule starting with '('): "
	             "the operator's denials (ACL, CONFIG, CLIENT KILL, SHUTDOWN...) would not "
	             "apply inside a selector; write the rules without one",
	  .holds = rule_acl_selector },
	{ NULL },
};

const struct api_rule api_rc_replica_mode_rules[] = {
	{ .rule = "!self.enabled || has(self.source)",
	  .message = "spec.replicaMode.source is required when spec.replicaMode.enabled is true; "
	             "name the source to replicate from",
	  .field_path = ".source",
	  .reason = "FieldValueRequired",
	  .holds = rule_replica_source },
	{ .rule = "!self.promote || self.enabled",
	  .message = "spec.replicaMode.promote applies to a replica cluster: set "
	             "spec.replicaMode.enabled: true (or enabled: false to detach at once)",
	  .field_path = ".promote",
	  .holds = rule_promote_replica },
	{ NULL },
};

const struct api_rule api_rc_source_rules[] = {
	{ .rule = "has(self.clusterName) != has(self.host)",
	  .message = "spec.replicaMode.source needs exactly one of clusterName or host",
	  .holds = rule_source_one },
	{ NULL },
};

#define DURATION_RE "r'^(0|([0-9]+(\\.[0-9]+)?(ms|s|m|h))+)$'"

const struct api_rule api_rc_failover_rules[] = {
	{ .rule = "!has(self.leaseDuration) || !self.leaseDuration.matches(" DURATION_RE ") || "
	          "(duration(self.leaseDuration) >= duration('3s') && duration(self.leaseDuration) "
	          "<= duration('5m'))",
	  .message = "spec.failover.leaseDuration must be between 3s and 5m",
	  .field_path = ".leaseDuration",
	  .eval = rule_lease_duration },
	{ .rule = "!has(self.leaseDuration) || !has(self.renewDeadline) || "
	          "!self.leaseDuration.matches(" DURATION_RE ") || "
	          "!self.renewDeadline.matches(" DURATION_RE ") || "
	          "duration(self.renewDeadline) + duration('2s') <= duration(self.leaseDuration)",
	  .message = "spec.failover.renewDeadline must be at least 2s shorter than leaseDuration "
	             "(the primary must fence itself before its lease can be taken); lower "
	             "renewDeadline or raise leaseDuration",
	  .field_path = ".renewDeadline",
	  .eval = rule_renew_deadline },
	{ .rule = "!has(self.renewDeadline) || !has(self.renewPeriod) || "
	          "!self.renewDeadline.matches(" DURATION_RE ") || "
	          "!self.renewPeriod.matches(" DURATION_RE ") || "
	          "(duration(self.renewPeriod) >= duration('100ms') && duration(self.renewPeriod) "
	          "+ duration(self.renewPeriod) <= duration(self.renewDeadline))",
	  .message = "spec.failover.renewPeriod must be at least 100ms and at most half of "
	             "renewDeadline (a missed renewal must be retried before the primary fences "
	             "itself); lower renewPeriod",
	  .field_path = ".renewPeriod",
	  .eval = rule_renew_period },
	{ NULL },
};

const struct api_rule api_rc_sentinel_rules[] = {
	{ .rule = "!has(self.quorum) || !has(self.count) || self.quorum <= self.count",
	  .message =
	          "spec.sentinel.quorum must not exceed spec.sentinel.count; lower quorum or add "
	          "sentinels",
	  .field_path = ".quorum",
	  .holds = rule_quorum },
	{ .rule = "!has(self.count) || self.count % 2 == 1",
	  .message = "spec.sentinel.count must be odd (3, 5 or 7) so a majority of sentinels can "
	             "always be formed",
	  .field_path = ".count",
	  .holds = rule_count_odd },
	{ NULL },
};

const struct api_rule api_rc_down_after_rules[] = {
	{ .rule = "!self.matches(" DURATION_RE ") || duration(self) >= duration('1s')",
	  .message = "spec.sentinel.downAfter must be at least 1s",
	  .eval = rule_down_after },
	{ NULL },
};

const struct api_rule api_rc_pod_labels_rules[] = {
	{ .rule = "self.all(k, !k.startsWith('redis.io/') && k != 'app.kubernetes.io/managed-by')",
	  .message = "spec.podTemplate.metadata.labels may not use the redis.io/ prefix or "
	             "app.kubernetes.io/managed-by: the operator owns them; rename the label",
	  .holds = rule_pod_labels },
	{ NULL },
};

const struct api_rule api_rc_pod_annotations_rules[] = {
	{ .rule = "self.all(k, !k.startsWith('redis.io/'))",
	  .message = "spec.podTemplate.metadata.annotations may not use the redis.io/ prefix: the "
	             "operator owns it; rename the annotation",
	  .holds = rule_pod_annotations },
	{ NULL },
};

const struct api_rule api_rc_allowed_client_rules[] = {
	{ .rule = "has(self.podSelector) || has(self.namespaceSelector)",
	  .message = "spec.networkPolicy.allowedClients[] needs podSelector, namespaceSelector or "
	             "both",
	  .holds = rule_client_selects },
	{ NULL },
};

const struct api_rule api_rc_exposure_rules[] = {
	{ .rule = "!self.enabled || (has(self.entryPoints) && size(self.entryPoints) > 0)",
	  .message = "spec.exposure.entryPoints must name at least one Traefik entry point when "
	             "exposure is enabled",
	  .field_path = ".entryPoints",
	  .reason = "FieldValueRequired",
	  .holds = rule_entry_points },
	{ NULL },
};

const struct api_rule api_rc_cidr_rules[] = {
	{ .rule = "isCIDR(self)",
	  .message = "spec.exposure.ipAllowList entries must be CIDRs such as 203.0.113.0/24 or "
	             "2001:db8::/32",
	  .holds = rule_cidr },
	{ NULL },
};

const struct api_rule api_rc_failed_after_rules[] = {
	{ .rule = "!self.matches(" DURATION_RE ") || duration(self) >= duration('1m')",
	  .message = "spec.failedAfter must be at least 1m",
	  .eval = rule_failed_after },
	{ NULL },
};

/*
 * spec: RedisCluster JSON → struct inst_spec (see spec.h).
 *
 * Every field is read through lib/jsonx so errors carry the JSON path. Decoding builds
 * into a local struct and moves it to *out only when everything succeeded; on failure
 * the partial result is released, so callers never see half a spec.
 */
#include "spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "instance/acl.h"
#include "lib/alloc.h"
#include "lib/jsonx.h"
#include "lib/parse.h"
#include "lib/engine/directives.h"

static const char *const policies[] = { "noeviction",      "allkeys-lru",  "allkeys-lfu",
	                                "allkeys-random",  "volatile-lru", "volatile-lfu",
	                                "volatile-random", "volatile-ttl", NULL };

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static bool user_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > INST_USER_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum =
		        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (i == 0 || !strchr("._@-", c)))
			return false;
	}
	return strcmp(s, "default") != 0 && strcmp(s, "redis-operator") != 0;
}

static int cmp_kv(const void *a, const void *b)
{
	return strcmp(((const struct inst_kv *)a)->name, ((const struct inst_kv *)b)->name);
}

static int cmp_user(const void *a, const void *b)
{
	return strcmp(((const struct inst_user_spec *)a)->name,
	              ((const struct inst_user_spec *)b)->name);
}

static int decode_redis(json_t *map, const char *prefix, struct inst_desired *d, struct err *e)
{
	struct err ie = { 0 };
	const char *k;
	json_t *v;

	if (json_object_size(map) > INST_REDIS_MAX)
		return err_set(e, -EINVAL, "%sredis: at most %d directives", prefix,
		               INST_REDIS_MAX);
	d->redis = xcalloc(json_object_size(map) + 1, sizeof(*d->redis));
	json_object_foreach (map, k, v) {
		if (!json_is_string(v))
			return err_set(e, -EINVAL, "%sredis.%s: expected string, got %s", prefix, k,
			               jsonx_type_name(v));
		if (vk_directive_check_value(k, json_string_value(v), &ie) < 0)
			return err_set(e, ie.code, "%sredis: %s", prefix, ie.msg);
		if (vk_directive_is_owned(k) || strcmp(k, "user") == 0 || strcmp(k, "include") == 0)
			return err_set(e, -EINVAL, "%sredis.%s: set by the operator; remove it",
			               prefix, k);
		d->redis[d->nredis].name = xstrdup(k);
		d->redis[d->nredis++].value = xstrdup(json_string_value(v));
	}
	qsort(d->redis, d->nredis, sizeof(*d->redis), cmp_kv);
	return 0;
}

static int decode_rules(json_t *arr, const char *path, struct inst_user_spec *u, struct err *e)
{
	const char *s, *why;
	size_t i;
	json_t *r;

	if (json_array_size(arr) > INST_RULES_MAX)
		return err_set(e, -EINVAL, "%s: at most %d rules", path, INST_RULES_MAX);
	u->rules = xcalloc(json_array_size(arr) + 1, sizeof(*u->rules));
	json_array_foreach (arr, i, r) {
		if (!json_is_string(r))
			return err_set(e, -EINVAL, "%s[%zu]: expected string, got %s", path, i,
			               jsonx_type_name(r));
		s = json_string_value(r);
		if (strlen(s) > INST_RULE_LEN_MAX)
			return err_set(e, -EINVAL, "%s[%zu]: longer than %d bytes", path, i,
			               INST_RULE_LEN_MAX);
		if ((why = inst_acl_rule_refusal(s)))
			return err_set(e, -EINVAL, "%s[%zu]: not allowed: %s", path, i, why);
		u->rules[u->nrules++] = xstrdup(s);
	}
	return 0;
}

static const char *const user_fields[] = { "name", "enabled", "rules", "passwordSecrets", NULL };

static int decode_user(json_t *j, const char *path, struct inst_user_spec *u, struct err *e)
{
	struct err ie = { 0 };
	const char *name, *k;
	json_t *rules, *v;
	char rpath[96];
	int rc;

	if (!json_is_object(j))
		return err_set(e, -EINVAL, "%s: expected object, got %s", path, jsonx_type_name(j));
	json_object_foreach (j, k, v) {
		if (!in_list(k, user_fields))
			return err_set(e, -EINVAL, "%s.%s: unknown field", path, k);
	}
	if ((rc = jsonx_string_req(j, "name", &name, &ie)) < 0 ||
	    (rc = jsonx_bool(j, "enabled", true, &u->enabled, &ie)) < 0 ||
	    (rc = jsonx_array(j, "rules", &rules, &ie)) < 0)
		return err_set(e, rc, "%s.%s", path, ie.msg);
	if (!user_name_ok(name))
		return err_set(e, -EINVAL, "%s.name: invalid user name", path);
	u->name = xstrdup(name);
	snprintf(rpath, sizeof(rpath), "%s.rules", path);
	return decode_rules(rules, rpath, u, e);
}

static int decode_users(json_t *arr, const char *prefix, struct inst_desired *d, struct err *e)
{
	char path[64];
	size_t i;
	json_t *j;
	int rc;

	if (json_array_size(arr) > INST_USERS_MAX)
		return err_set(e, -EINVAL, "%susers: at most %d users", prefix, INST_USERS_MAX);
	d->users = xcalloc(json_array_size(arr) + 1, sizeof(*d->users));
	json_array_foreach (arr, i, j) {
		snprintf(path, sizeof(path), "%susers[%zu]", prefix, i);
		rc = decode_user(j, path, &d->users[d->nusers++], e);
		if (rc < 0)
			return rc;
	}
	qsort(d->users, d->nusers, sizeof(*d->users), cmp_user);
	for (i = 1; i < d->nusers; i++)
		if (strcmp(d->users[i - 1].name, d->users[i].name) == 0)
			return err_set(e, -EINVAL, "%susers: %s listed twice", prefix,
			               d->users[i].name);
	return 0;
}

static int decode_memory(json_t *obj, bool spec_layout, const char *prefix, uint64_t limit,
                         struct inst_desired *d, struct err *e)
{
	struct err ie = { 0 };
	const char *mm = NULL, *pol = NULL;
	int64_t pct = 0;
	int rc;

	rc = jsonx_string(obj, spec_layout ? "memory.maxMemory" : "maxMemory", NULL, &mm, &ie);
	if (!rc)
		rc = jsonx_string(obj, spec_layout ? "memory.maxMemoryPolicy" : "maxMemoryPolicy",
		                  NULL, &pol, &ie);
	if (!rc && spec_layout)
		rc = jsonx_int(obj, "memory.maxMemoryPercent", 1, 95, 0, &pct, &ie);
	if (rc)
		return err_set(e, rc, "%s%s", prefix, ie.msg);
	if (pol && !in_list(pol, policies))
		return err_set(e, -EINVAL, "%smaxMemoryPolicy: unknown policy", prefix);
	if (mm && parse_quantity_bytes(mm, &d->maxmemory, &ie) < 0)
		return err_set(e, -EINVAL, "%smaxMemory: %s", prefix, ie.msg);
	if (pct && !limit)
		return err_set(e, -EINVAL,
		               "%smemory.maxMemoryPercent: needs resources.limits.memory", prefix);
	if (pct)
		d->maxmemory = limit / 100 * (uint64_t)pct + limit % 100 * (uint64_t)pct / 100;
	d->has_maxmemory = mm || pct;
	d->maxmemory_policy = pol ? xstrdup(pol) : NULL;
	return 0;
}

int inst_desired_decode(json_t *obj, bool spec_layout, const char *prefix, uint64_t limit_bytes,
                        struct inst_desired *out, struct err *e)
{
	struct inst_desired d = { 0 };
	struct err ie = { 0 };
	json_t *redis = NULL, *users = NULL;
	int rc;

	rc = jsonx_object(obj, "redis", &redis, &ie);
	if (!rc)
		rc = jsonx_array(obj, "users", &users, &ie);
	if (!rc)
		rc = jsonx_int(obj, "minSyncReplicas", 0, 63, 0, &d.min_sync_replicas, &ie);
	if (rc) {
		err_set(e, rc, "%s%s", prefix, ie.msg);
		goto out;
	}
	rc = decode_memory(obj, spec_layout, prefix, limit_bytes, &d, e);
	if (!rc)
		rc = decode_redis(redis, prefix, &d, e);
	if (!rc)
		rc = decode_users(users, prefix, &d, e);
out:
	if (rc) {
		inst_desired_release(&d);
		return rc;
	}
	*out = d;
	return 0;
}

void inst_desired_release(struct inst_desired *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nredis; i++) {
		free(d->redis[i].name);
		free(d->redis[i].value);
	}
	for (size_t i = 0; i < d->nusers; i++) {
		for (size_t j = 0; j < d->users[i].nrules; j++)
			free(d->users[i].rules[j]);
		free(d->users[i].rules);
		free(d->users[i].name);
	}
	free(d->redis);
	free(d->users);
	free(d->maxmemory_policy);
	memset(d, 0, sizeof(*d));
}

void inst_desired_copy(struct inst_desired *dst, const struct inst_desired *src)
{
	*dst = *src;
	dst->maxmemory_policy = src->maxmemory_policy ? xstrdup(src->maxmemory_policy) : NULL;
	dst->redis = xcalloc(src->nredis + 1, sizeof(*dst->redis));
	for (size_t i = 0; i < src->nredis; i++) {
		dst->redis[i].name = xstrdup(src->redis[i].name);
		dst->redis[i].value = xstrdup(src->redis[i].value);
	}
	dst->users = xcalloc(src->nusers + 1, sizeof(*dst->users));
	for (size_t i = 0; i < src->nusers; i++) {
		struct inst_user_spec *u = &dst->users[i];

		*u = src->users[i];
		u->name = xstrdup(src->users[i].name);
		u->rules = xcalloc(u->nrules + 1, sizeof(*u->rules));
		for (size_t j = 0; j < u->nrules; j++)
			u->rules[j] = xstrdup(src->users[i].rules[j]);
	}
}

const char *inst_desired_redis(const struct inst_desired *d, const char *name)
{
	for (size_t i = 0; i < d->nredis; i++)
		if (strcmp(d->redis[i].name, name) == 0)
			return d->redis[i].value;
	return NULL;
}

/* --- the whole object ------------------------------------------------------------ */

static int duration(json_t *root, const char *path, int64_t def, int64_t *out, struct err *e)
{
	const char *s;
	int rc = jsonx_string(root, path, NULL, &s, e);

	if (rc)
		return rc;
	if (!s) {
		*out = def;
		return 0;
	}
	if (parse_duration_ms(s, out, NULL) < 0)
		return err_set(e, -EINVAL, "%s: not a duration", path);
	return 0;
}

static int decode_engine(json_t *root, struct inst_spec *s, struct err *e)
{
	const char *eng = NULL, *st = NULL;
	int rc = jsonx_string(root, "spec.engine", NULL, &eng, e);

	if (!rc)
		rc = jsonx_string(root, "status.engine", NULL, &st, e);
	if (rc)
		return rc;
	if (!eng)
		eng = st;
	s->engine = !eng                         ? VK_ENGINE_UNKNOWN
	            : strcmp(eng, "valkey") == 0 ? VK_ENGINE_VALKEY
	            : strcmp(eng, "redis") == 0  ? VK_ENGINE_REDIS
	                                         : VK_ENGINE_UNKNOWN;
	if (s->engine == VK_ENGINE_UNKNOWN && eng)
		return err_set(e, -EINVAL, "spec.engine: unknown engine");
	return 0;
}

static char *dup_nonempty(const char *v)
{
	return v && *v ? xstrdup(v) : NULL;
}

/* status.failover: what a running failover or switchover is doing (role.h uses it). */
static int decode_failover(json_t *root, struct inst_spec *s, struct err *e)
{
	const char *phase, *from, *to;
	int rc;

	if ((rc = jsonx_string(root, "status.failover.phase", NULL, &phase, e)) < 0 ||
	    (rc = jsonx_string(root, "status.failover.from", NULL, &from, e)) < 0 ||
	    (rc = jsonx_string(root, "status.failover.to", NULL, &to, e)) < 0)
		return rc;
	s->failover_phase = dup_nonempty(phase);
	s->failover_from = dup_nonempty(from);
	s->failover_to = dup_nonempty(to);
	return 0;
}

static int decode_scalars(json_t *root, struct inst_spec *s, struct err *e)
{
	const char *mode, *storage, *cur;
	int rc;

	if ((rc = jsonx_string(root, "spec.mode", "standalone", &mode, e)) < 0 ||
	    (rc = jsonx_int(root, "spec.instances", 1, 64, 1, &s->instances, e)) < 0 ||
	    (rc = jsonx_string(root, "spec.storage.type", "pvc", &storage, e)) < 0 ||
	    (rc = jsonx_string(root, "status.currentPrimary", NULL, &cur, e)) < 0 ||
	    (rc = decode_failover(root, s, e)) < 0 || (rc = decode_engine(root, s, e)) < 0)
		return rc;
	if (strcmp(storage, "pvc") != 0 && strcmp(storage, "emptyDir") != 0)
		return err_set(e, -EINVAL, "spec.storage.type: must be pvc or emptyDir");
	s->ephemeral = strcmp(storage, "emptyDir") == 0;
	s->mode = xstrdup(mode);
	s->current_primary = dup_nonempty(cur);
	return 0;
}

static int decode_timing(json_t *root, struct inst_spec *s, struct err *e)
{
	int rc;

	if ((rc = duration(root, "spec.failover.leaseDuration", INST_LEASE_DURATION_MS_DEFAULT,
	                   &s->lease_duration_ms, e)) < 0 ||
	    (rc = duration(root, "spec.failover.renewDeadline", INST_RENEW_DEADLINE_MS_DEFAULT,
	                   &s->renew_deadline_ms, e)) < 0 ||
	    (rc = duration(root, "spec.failover.renewPeriod", INST_RENEW_PERIOD_MS_DEFAULT,
	                   &s->renew_period_ms, e)) < 0 ||
	    (rc = duration(root, "spec.failover.switchoverTimeout", INST_SWITCHOVER_MS_DEFAULT,
	                   &s->switchover_timeout_ms, e)) < 0)
		return rc;
	if (s->renew_period_ms < 100 || s->renew_period_ms * 2 > s->renew_deadline_ms ||
	    s->renew_deadline_ms + 2000 > s->lease_duration_ms)
		return err_set(e, -EINVAL,
		               "spec.failover: need 100ms <= renewPeriod <= renewDeadline/2 and "
		               "renewDeadline + 2s <= leaseDuration");
	return 0;
}

static int memory_limit(json_t *root, uint64_t *out, struct err *e)
{
	json_t *j = jsonx_get(root, "spec.resources.limits.memory");
	char num[32];

	*out = 0;
	if (!j || json_is_null(j))
		return 0;
	if (json_is_integer(j)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(j));
		return parse_quantity_bytes(num, out, e);
	}
	if (!json_is_string(j))
		return err_set(e, -EINVAL, "spec.resources.limits.memory: expected quantity");
	return parse_quantity_bytes(json_string_value(j), out, e);
}

int inst_spec_decode(json_t *cluster, struct inst_spec *out, struct err *e)
{
	struct inst_spec s = { 0 };
	json_t *spec = jsonx_get(cluster, "spec");
	uint64_t limit;
	int rc;

	if (!json_is_object(cluster) || !json_is_object(spec))
		return err_set(e, -EINVAL, "spec: required object");
	rc = decode_scalars(cluster, &s, e);
	if (!rc)
		rc = decode_timing(cluster, &s, e);
	if (!rc)
		rc = memory_limit(cluster, &limit, e);
	if (!rc)
		rc = inst_desired_decode(spec, true, "spec.", limit, &s.desired, e);
	if (rc) {
		inst_spec_release(&s);
		return rc;
	}
	*out = s;
	return 0;
}

void inst_spec_release(struct inst_spec *s)
{
	if (!s)
		return;
	inst_desired_release(&s->desired);
	free(s->mode);
	free(s->current_primary);
	free(s->failover_phase);
	free(s->failover_from);
	free(s->failover_to);
	memset(s, 0, sizeof(*s));
}

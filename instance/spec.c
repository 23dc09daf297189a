/*
 * spec: a decoded RedisCluster (api/rediscluster.h) or a /v1/config body
 * (api/instance_v1.h) → struct inst_spec / struct inst_desired (see spec.h).
 *
 * Both live parts go through one builder (desired_build) with the field prefix of their
 * source, so a rule is checked the same way at boot and on /v1/config. Building goes into
 * a local struct moved to *out only when everything succeeded; on failure the partial
 * result is released, so callers never see half a spec.
 */
#include "spec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "instance/acl.h"
#include "lib/alloc.h"
#include "lib/engine/directives.h"
#include "lib/jsonx.h"
#include "lib/parse.h"

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

static int decode_rules(const struct api_user *src, const char *path, struct inst_user_spec *u,
                        struct err *e)
{
	const char *why;

	if (src->n_rules > INST_RULES_MAX)
		return err_set(e, -EINVAL, "%s: at most %d rules", path, INST_RULES_MAX);
	u->rules = xcalloc(src->n_rules + 1, sizeof(*u->rules));
	for (size_t i = 0; i < src->n_rules; i++) {
		if (strlen(src->rules[i]) > INST_RULE_LEN_MAX)
			return err_set(e, -EINVAL, "%s[%zu]: longer than %d bytes", path, i,
			               INST_RULE_LEN_MAX);
		if ((why = inst_acl_rule_refusal(src->rules[i])))
			return err_set(e, -EINVAL, "%s[%zu]: not allowed: %s", path, i, why);
		u->rules[u->nrules++] = xstrdup(src->rules[i]);
	}
	return 0;
}

static int decode_user(const struct api_user *src, const char *path, struct inst_user_spec *u,
                       struct err *e)
{
	char rpath[96];

	if (!src->name || !user_name_ok(src->name))
		return err_set(e, -EINVAL, "%s.name: invalid user name", path);
	u->name = xstrdup(src->name);
	u->enabled = src->enabled;
	snprintf(rpath, sizeof(rpath), "%s.rules", path);
	return decode_rules(src, rpath, u, e);
}

static int decode_users(const struct api_user *users, size_t n, const char *prefix,
                        struct inst_desired *d, struct err *e)
{
	char path[64];
	size_t i;
	int rc;

	if (n > INST_USERS_MAX)
		return err_set(e, -EINVAL, "%susers: at most %d users", prefix, INST_USERS_MAX);
	d->users = xcalloc(n + 1, sizeof(*d->users));
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%susers[%zu]", prefix, i);
		rc = decode_user(&users[i], path, &d->users[d->nusers++], e);
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

/* The live part from either source, before the checks. */
struct live {
	const char *prefix; /* of field names in messages: "spec." or "" */
	json_t *redis;      /* directive → value, or NULL */
	const struct api_user *users;
	size_t n_users;
	bool has_maxmemory;
	uint64_t maxmemory;
	enum api_maxmemory_policy policy;
	int64_t min_sync_replicas;
};

static int desired_build(const struct live *l, struct inst_desired *out, struct err *e)
{
	struct inst_desired d = { 0 };
	const char *pol = api_maxmemory_policy_name(l->policy);
	int rc;

	d.has_maxmemory = l->has_maxmemory;
	d.maxmemory = l->maxmemory;
	d.maxmemory_policy = pol ? xstrdup(pol) : NULL;
	d.min_sync_replicas = l->min_sync_replicas;
	rc = decode_redis(l->redis, l->prefix, &d, e);
	if (!rc)
		rc = decode_users(l->users, l->n_users, l->prefix, &d, e);
	if (rc) {
		inst_desired_release(&d);
		return rc;
	}
	*out = d;
	return 0;
}

int inst_desired_from_config(const struct api_inst_config *c, struct inst_desired *out,
                             struct err *e)
{
	struct live l = { "",
		          c->redis,
		          c->users,
		          c->n_users,
		          c->has_max_memory,
		          c->max_memory,
		          c->max_memory_policy,
		          c->min_sync_replicas };

	return desired_build(&l, out, e);
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
	api_acl_file_release(&d->acl);
	memset(d, 0, sizeof(*d));
}

bool inst_desired_spec_user(const struct inst_desired *d, const char *name)
{
	for (size_t i = 0; i < d->nusers; i++)
		if (strcmp(d->users[i].name, name) == 0)
			return true;
	return false;
}

void inst_desired_copy(struct inst_desired *dst, const struct inst_desired *src)
{
	*dst = *src;
	dst->acl = (struct api_acl_file){ 0 }; /* the manager's, never copied */
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

/* spec.memory: maxMemory, or maxMemoryPercent of resources.limits.memory (which wins). */
static int spec_memory(const struct api_redis_cluster_spec *sp, struct live *l, struct err *e)
{
	const struct api_memory *m = &sp->memory;
	const struct api_quantity *lim = &sp->resources.limits_memory;
	uint64_t limit = lim->valid ? lim->value : 0;
	struct err ie = { 0 };

	if (m->max_memory.text && !m->max_memory.valid) {
		parse_quantity_bytes(m->max_memory.text, &l->maxmemory, &ie);
		return err_set(e, -EINVAL, "spec.memory.maxMemory: %s", ie.msg);
	}
	l->maxmemory = m->max_memory.valid ? m->max_memory.value : 0;
	if (m->has_max_memory_percent && !limit)
		return err_set(e, -EINVAL,
		               "spec.memory.maxMemoryPercent: needs resources.limits.memory");
	if (m->has_max_memory_percent) {
		uint64_t pct = (uint64_t)m->max_memory_percent;

		l->maxmemory = limit / 100 * pct + limit % 100 * pct / 100;
	}
	l->has_maxmemory = m->max_memory.text || m->has_max_memory_percent;
	l->policy = m->max_memory_policy;
	return 0;
}

static int timing(const struct api_failover *f, struct inst_spec *s, struct err *e)
{
	const struct {
		const char *name;
		const struct api_duration *d;
		int64_t *out;
	} t[] = {
		{ "leaseDuration", &f->lease_duration, &s->lease_duration_ms },
		{ "renewDeadline", &f->renew_deadline, &s->renew_deadline_ms },
		{ "renewPeriod", &f->renew_period, &s->renew_period_ms },
		{ "switchoverTimeout", &f->switchover_timeout, &s->switchover_timeout_ms },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (t[i].d->ms < 0)
			return err_set(e, -EINVAL, "spec.failover.%s: not a duration", t[i].name);
		*t[i].out = t[i].d->ms;
	}
	if (s->renew_period_ms < 100 || s->renew_period_ms * 2 > s->renew_deadline_ms ||
	    s->renew_deadline_ms + 2000 > s->lease_duration_ms)
		return err_set(e, -EINVAL,
		               "spec.failover: need 100ms <= renewPeriod <= renewDeadline/2 and "
		               "renewDeadline + 2s <= leaseDuration");
	return 0;
}

static char *dup_nonempty(const char *v)
{
	return v && *v ? xstrdup(v) : NULL;
}

/* status: currentPrimary, and status.failover while one runs (role.h uses it). */
static void status_part(const struct api_redis_cluster_status *st, struct inst_spec *s)
{
	const struct api_failover_status *f = &st->failover;

	s->current_primary = dup_nonempty(st->current_primary);
	if (!f->set)
		return;
	s->failover_phase = dup_nonempty(api_failover_phase_name(f->phase));
	s->failover_from = dup_nonempty(f->from);
	s->failover_to = dup_nonempty(f->to);
}

int inst_spec_from_cluster(const struct api_redis_cluster *rc, struct inst_spec *out, struct err *e)
{
	const struct api_redis_cluster_spec *sp = &rc->spec;
	struct inst_spec s = { 0 };
	struct live l = { .prefix = "spec.",
		          .redis = sp->redis,
		          .users = sp->users,
		          .n_users = sp->n_users,
		          .min_sync_replicas = sp->min_sync_replicas };
	int rc2;

	s.mode = xstrdup(api_mode_name(sp->mode) ? api_mode_name(sp->mode) : "");
	s.instances = sp->instances;
	/* the engine the user named, else the one the controller detected: not the image's
	 * guess, which the server binary on PATH overrides (supervisor.c) */
	s.engine = sp->has_engine ? sp->engine : rc->status.engine;
	s.ephemeral = sp->storage.type == API_STORAGE_EMPTYDIR;
	s.tls_clients_required = sp->tls_client_auth == API_TLS_CLIENT_AUTH_REQUIRED;
	s.sentinel_count = sp->sentinel.count;
	s.sentinel_down_after_ms = sp->sentinel.down_after.ms > 0
	                                   ? sp->sentinel.down_after.ms
	                                   : INST_SENTINEL_DOWN_AFTER_DEFAULT_MS;
	s.sentinel_failover_timeout_ms = sp->sentinel.failover_timeout.ms > 0
	                                         ? sp->sentinel.failover_timeout.ms
	                                         : INST_SENTINEL_FAILOVER_TIMEOUT_DEFAULT_MS;
	status_part(&rc->status, &s);
	rc2 = timing(&sp->failover, &s, e);
	if (!rc2) /* spec.primaryIsolation.apiServerTimeout may shorten it (api/rediscluster.h) */
		s.renew_deadline_ms = api_redis_cluster_fence_deadline_ms(sp);
	if (!rc2)
		rc2 = spec_memory(sp, &l, e);
	if (!rc2)
		rc2 = desired_build(&l, &s.desired, e);
	if (rc2) {
		inst_spec_release(&s);
		return rc2;
	}
	*out = s;
	return 0;
}

int inst_spec_decode(json_t *cluster, struct inst_spec *out, struct err *e)
{
	struct api_redis_cluster rc;
	int r;

	if (!json_is_object(cluster) || !json_is_object(json_object_get(cluster, "spec")))
		return err_set(e, -EINVAL, "spec: required object");
	r = api_redis_cluster_decode(cluster, &rc, e);
	if (r)
		return r;
	r = inst_spec_from_cluster(&rc, out, e);
	api_redis_cluster_release(&rc);
	return r;
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

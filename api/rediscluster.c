/*
 * rediscluster: decoding, the decoder's own defaults and dumping of a RedisCluster (see
 * rediscluster.h). The decoder's table is in rediscluster_schema.c.
 *
 * The struct owns rc->json, a defaulted deep copy of the caller's object; everything else
 * borrows from it. Decoding fills a local struct and copies it out only on success.
 */
#include "rediscluster.h"

#include <errno.h>
#include <string.h>

#include "lib/jsonx.h"
#include "lib/parse.h"

static const char *const mode_names[] = {
	[API_MODE_STANDALONE] = "standalone",
	[API_MODE_SENTINEL] = "sentinel",
	[API_MODE_CLUSTER] = "cluster",
};

const char *api_mode_name(enum api_mode mode)
{
	if ((size_t)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return NULL;
	return mode_names[mode];
}

const char *const api_maxmemory_policies[] = {
	"noeviction",      "allkeys-lru",  "allkeys-lfu",
	"allkeys-random",  "volatile-lru", "volatile-lfu",
	"volatile-random", "volatile-ttl", NULL,
};

_Static_assert(sizeof(api_maxmemory_policies) / sizeof(api_maxmemory_policies[0]) ==
                       API_POLICY_VOLATILE_TTL + 1,
               "one name per enum api_maxmemory_policy value, then NULL");

const char *api_maxmemory_policy_name(enum api_maxmemory_policy p)
{
	return p >= API_POLICY_NOEVICTION && p <= API_POLICY_VOLATILE_TTL
	               ? api_maxmemory_policies[p - 1]
	               : NULL;
}

enum api_maxmemory_policy api_maxmemory_policy_from_name(const char *name)
{
	for (int i = 0; name && api_maxmemory_policies[i]; i++)
		if (strcmp(api_maxmemory_policies[i], name) == 0)
			return (enum api_maxmemory_policy)(i + 1);
	return 0;
}

int64_t api_redis_cluster_fence_deadline_ms(const struct api_redis_cluster_spec *sp)
{
	const struct api_primary_isolation *pi = &sp->primary_isolation;
	int64_t deadline = sp->failover.renew_deadline.ms, floor = 2 * sp->failover.renew_period.ms;
	int64_t timeout = pi->api_server_timeout.ms;

	if (deadline < 0 || !pi->set || !pi->enabled || timeout < 0 || timeout >= deadline)
		return deadline;
	return timeout > floor ? timeout : floor < deadline ? floor : deadline;
}

/* --- status.failover -------------------------------------------------------------------- */

_Static_assert(sizeof(enum api_failover_phase) == sizeof(int), "enums decode as int");

const char *api_failover_phase_name(enum api_failover_phase phase)
{
	return api_schema_enum_name(api_schema_prop(&api_failover_status_schema, "phase")->schema,
	                            (int)phase);
}

enum api_failover_phase api_failover_phase_from_name(const char *name)
{
	for (int i = API_PHASE_FENCING; name && i <= API_PHASE_PRIMARY_RESTART; i++)
		if (strcmp(api_failover_phase_name((enum api_failover_phase)i), name) == 0)
			return (enum api_failover_phase)i;
	return 0;
}

int api_failover_status_decode(json_t *obj, const char *path, struct api_failover_status *out,
                               struct err *e)
{
	struct api_failover_status f = { 0 };
	int rc;

	if (!obj || json_is_null(obj)) {
		*out = f;
		return 0;
	}
	if (!json_is_object(obj))
		return err_set(e, -EINVAL, "%s: expected object, got %s", path,
		               jsonx_type_name(obj));
	rc = api_schema_decode(&api_failover_status_schema, obj, path, &f, e);
	if (rc)
		return rc;
	f.set = true;
	*out = f;
	return 0;
}

json_t *api_failover_status_encode(const struct api_failover_status *f)
{
	const char *phase = api_failover_phase_name(f->phase);
	json_t *j;

	if (!f->set)
		return json_null();
	j = json_pack("{s:s,s:s,s:s,s:s}", "phase", phase ? phase : "", "from",
	              f->from ? f->from : "", "reason", f->reason ? f->reason : "", "startedAt",
	              f->started_at ? f->started_at : "");
	if (f->to && *f->to)
		json_object_set_new(j, "to", json_string(f->to));
	if (f->catch_up && *f->catch_up)
		json_object_set_new(j, "catchUp", json_string(f->catch_up));
	return j;
}

/* --- decoding --------------------------------------------------------------------------- */

/* The repository of an image reference: without registry host, tag and digest. */
static void image_repository(const char *image, const char **start, size_t *len)
{
	const char *end = strchr(image, '@'), *slash, *first;

	if (!end)
		end = image + strlen(image);
	slash = memrchr(image, '/', (size_t)(end - image));
	first = memchr(image, '/', (size_t)(end - image));
	for (const char *c = slash ? slash : image; c < end; c++)
		if (*c == ':') {
			end = c; /* the tag */
			break;
		}
	*start = image;
	/* "host.domain/...", "host:port/..." or "localhost/...": a registry, not a name */
	if (first && (memchr(image, '.', (size_t)(first - image)) ||
	              memchr(image, ':', (size_t)(first - image)) ||
	              (first - image == 9 && strncmp(image, "localhost", 9) == 0)))
		*start = first + 1;
	*len = *start < end ? (size_t)(end - *start) : 0;
}

enum vk_engine api_engine_from_image(const char *image)
{
	const char *repo;
	size_t len;

	if (!image)
		return VK_ENGINE_REDIS;
	image_repository(image, &repo, &len);
	return memmem(repo, len, "valkey", 6) ? VK_ENGINE_VALKEY : VK_ENGINE_REDIS;
}

/* A resource quantity (int-or-string) in bytes (scale 0) or millicores (scale 3). */
static struct api_quantity resource_quantity(json_t *list, const char *name, bool milli)
{
	json_t *v = json_object_get(list, name);
	struct api_quantity q = { json_string_value(v), 0, false };
	int64_t m;

	if (json_is_integer(v) && json_integer_value(v) >= 0) {
		q.value = (uint64_t)json_integer_value(v);
		q.valid = !milli || q.value <= UINT64_MAX / 1000;
		q.value *= milli && q.valid ? 1000 : 1;
	} else if (q.text && milli) {
		q.valid = parse_quantity_milli(q.text, &m, NULL) == 0;
		q.value = q.valid ? (uint64_t)m : 0;
	} else if (q.text) {
		q.valid = parse_quantity_bytes(q.text, &q.value, NULL) == 0;
	}
	return q;
}

/* The defaults that depend on other fields, and the decoded resources. */
static void finish(struct api_redis_cluster *rc)
{
	struct api_redis_cluster_spec *s = &rc->spec;
	struct api_resources *r = &s->resources;

	if (!s->has_instances && s->mode == API_MODE_STANDALONE)
		s->instances = 1;
	if (!s->has_replicas_per_shard)
		s->replicas_per_shard = 1;
	if (!s->has_max_sync_replicas)
		s->max_sync_replicas = s->min_sync_replicas;
	if (!s->has_engine)
		s->engine = api_engine_from_image(s->has_image_name ? s->image_name : NULL);
	if (!s->has_image_name)
		s->image_name = s->engine == VK_ENGINE_VALKEY ? API_VALKEY_DEFAULT_IMAGE
		                                              : API_REDIS_DEFAULT_IMAGE;
	r->json = jsonx_get(rc->json, "spec.resources");
	r->limits_memory = resource_quantity(r->limits, "memory", false);
	r->requests_memory = resource_quantity(r->requests, "memory", false);
	r->limits_cpu = resource_quantity(r->limits, "cpu", true);
	r->requests_cpu = resource_quantity(r->requests, "cpu", true);
}

int api_redis_cluster_decode(json_t *obj, struct api_redis_cluster *out, struct err *e)
{
	struct api_redis_cluster rc = { 0 };
	int r;

	if (!json_is_object(obj))
		return err_set(e, -EINVAL, "expected a RedisCluster object, got %s",
		               jsonx_type_name(obj));
	rc.json = json_deep_copy(obj);
	api_schema_default(&api_redis_cluster_schema, rc.json);
	r = api_meta_decode(rc.json, API_REDIS_CLUSTER_KIND, &rc.meta, e);
	if (r == 0)
		r = api_schema_decode(&api_redis_cluster_schema, rc.json, "", &rc, e);
	if (r) {
		json_decref(rc.json);
		return r;
	}
	finish(&rc);
	*out = rc;
	return 0;
}

void api_redis_cluster_release(struct api_redis_cluster *rc)
{
	if (!rc)
		return;
	api_schema_release(&api_redis_cluster_schema, rc);
	json_decref(rc->json);
	memset(rc, 0, sizeof(*rc));
}

static json_t *dump_quantity(const struct api_quantity *q)
{
	return json_pack("{s:s?,s:o}", "text", q->text, "value",
	                 q->valid ? json_integer((json_int_t)q->value) : json_null());
}

json_t *api_redis_cluster_dump(const struct api_redis_cluster *rc)
{
	const struct api_resources *r = &rc->spec.resources;
	json_t *d = api_schema_dump(&api_redis_cluster_schema, rc);

	json_object_set_new(d, "metadata", api_meta_dump(&rc->meta));
	json_object_set_new(json_object_get(d, "spec"), "resources (decoded)",
	                    json_pack("{s:o,s:o,s:o,s:o}", "limits.memory",
	                              dump_quantity(&r->limits_memory), "requests.memory",
	                              dump_quantity(&r->requests_memory), "limits.cpu",
	                              dump_quantity(&r->limits_cpu), "requests.cpu",
	                              dump_quantity(&r->requests_cpu)));
	return d;
}

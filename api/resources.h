/*
 * resources: the redis.io/v1 kinds as Kubernetes API resources, for lib/k8s's paths,
 * requests, watches and the RBAC table:
 *
 *   k8s_get(c, &api_res_redisclusters, "prod", "cache", &obj, &e);
 *   -> GET /apis/redis.io/v1/namespaces/prod/redisclusters/cache
 *
 * lib/k8s describes only Kubernetes' own kinds (pods, secrets, leases...); the
 * operator's CRDs are described here, beside their types, so lib/ knows no CRD.
 * Constants: any thread.
 */
#ifndef REDIS_OPERATOR_API_RESOURCES_H
#define REDIS_OPERATOR_API_RESOURCES_H

#include "lib/k8s/path.h"

extern const struct k8s_resource api_res_redisclusters;         /* RedisCluster */
extern const struct k8s_resource api_res_redisbackups;          /* RedisBackup */
extern const struct k8s_resource api_res_redisscheduledbackups; /* RedisScheduledBackup */

#endif

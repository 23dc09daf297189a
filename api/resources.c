/*
 * resources: the redis.io/v1 resource descriptors (see resources.h). The group and
 * version are meta.h's, the kinds the decoders' own names.
 */
#include "resources.h"

#include "api/rediscluster.h"
#include "api/redisbackup.h"

/* group, version, plural, kind, namespaced */
const struct k8s_resource api_res_redisclusters = { API_GROUP, API_VERSION, "redisclusters",
	                                            API_REDIS_CLUSTER_KIND, true };
const struct k8s_resource api_res_redisbackups = { API_GROUP, API_VERSION, "redisbackups",
	                                           API_REDIS_BACKUP_KIND, true };
const struct k8s_resource api_res_redisscheduledbackups = { API_GROUP, API_VERSION,
	                                                    "redisscheduledbackups",
	                                                    API_REDIS_SCHEDULED_BACKUP_KIND, true };

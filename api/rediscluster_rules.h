/*
 * rediscluster_rules: the RedisCluster CRD's x-kubernetes-validations, one table per
 * schema node (rediscluster_rules.c), for the schema table (rediscluster_schema.c). Internal
 * to api/: the rest of the program reaches the rules through api_redis_cluster_validate.
 * Each table ends with a NULL rule. Constant: any thread.
 */
#ifndef REDIS_OPERATOR_API_REDISCLUSTER_RULES_H
#define REDIS_OPERATOR_API_REDISCLUSTER_RULES_H

#include "api/schema.h"

extern const struct api_rule api_rc_root_rules[];
extern const struct api_rule api_rc_spec_rules[];
extern const struct api_rule api_rc_mode_rules[];
extern const struct api_rule api_rc_storage_rules[];
extern const struct api_rule api_rc_storage_type_rules[];
extern const struct api_rule api_rc_storage_size_rules[];
extern const struct api_rule api_rc_memory_rules[];
extern const struct api_rule api_rc_max_memory_rules[];
extern const struct api_rule api_rc_redis_rules[];
extern const struct api_rule api_rc_redis_value_rules[];
extern const struct api_rule api_rc_user_name_rules[];
extern const struct api_rule api_rc_acl_token_rules[];
extern const struct api_rule api_rc_replica_mode_rules[];
extern const struct api_rule api_rc_source_rules[];
extern const struct api_rule api_rc_failover_rules[];
extern const struct api_rule api_rc_sentinel_rules[];
extern const struct api_rule api_rc_down_after_rules[];
extern const struct api_rule api_rc_pod_labels_rules[];
extern const struct api_rule api_rc_pod_annotations_rules[];
extern const struct api_rule api_rc_allowed_client_rules[];
extern const struct api_rule api_rc_exposure_rules[];
extern const struct api_rule api_rc_cidr_rules[];
extern const struct api_rule api_rc_failed_after_rules[];

#endif

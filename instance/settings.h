/*
 * settings: the flags and environment variables of `redis-operator instance`, as one
 * lib/settings descriptor table (flags, REDIS_OPERATOR_* environment, --help, the
 * redacted start-up dump).
 *
 * The controller sets the identity from the downward API:
 *   REDIS_OPERATOR_POD_NAME       metadata.name        (required)
 *   REDIS_OPERATOR_POD_NAMESPACE  metadata.namespace   (required)
 *   REDIS_OPERATOR_POD_IP         status.podIP         (replica-announce-ip)
 *   REDIS_OPERATOR_CLUSTER_NAME   the RedisCluster's name (required)
 * and REDIS_OPERATOR_HTTP_TLS=required (the API never serves mutations over plain HTTP).
 * Everything else has a default that fits the pod layout the controller renders.
 * Loaded once at start-up on the main thread; read-only afterwards.
 */
#ifndef REDIS_OPERATOR_INSTANCE_SETTINGS_H
#define REDIS_OPERATOR_INSTANCE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/settings.h"

#define INST_ENV_PREFIX "REDIS_OPERATOR_"

struct inst_settings {
	char *pod_name, *pod_namespace, *pod_ip, *cluster_name;
	char *data_dir, *run_dir;
	char *auth_dir, *operator_auth_dir, *users_dir, *tls_dir, *http_tls_dir;
	char *acl_dir;  /* spec.aclConfigSecret: the file `acl` (api/acl_file.h) */
	char *http_tls; /* "auto" or "required" (instance/http_tls.h) */
	char *http_address, *bind;
	int64_t http_port, metrics_port, server_port;
	char *kubeconfig, *server_binary, *engine;
	int64_t shutdown_timeout_ms, boot_timeout_ms, poll_interval_ms, secret_poll_ms;
	int64_t restart_backoff_max_ms, api_timeout_ms;
	char *log_level, *log_format;
	char *restore_source, *restore_credentials_dir; /* instance/backup.h */
	char *role;            /* "data" or "sentinel" (instance/sentinel.h) */
	int64_t sentinel_port; /* --role sentinel: the sentinel's TCP port */
	char *sentinel_master; /* --role sentinel: the first master, "host:port" */
};

extern const struct settings_desc inst_settings_table[];
extern const size_t inst_settings_count;

#endif

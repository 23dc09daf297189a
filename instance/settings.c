/* settings: the descriptor table of `redis-operator instance` (see settings.h). */
#include "settings.h"

#include <stddef.h>

#include "api/instance_v1.h"
#include "api/ports.h"

static const char *const engines[] = { "redis", "valkey", NULL };
static const char *const levels[] = { "debug", "info", "warn", "error", NULL };
static const char *const formats[] = { "json", "logfmt", NULL };
static const char *const http_tls_modes[] = { "auto", "required", NULL }; /* http_tls.h */
static const char *const roles[] = { "data", "sentinel", NULL };

#define OFF(f) offsetof(struct inst_settings, f)
#define MIN_MS 100
#define DAY_MS (24LL * 3600 * 1000)
const struct settings_desc inst_settings_table[] = {
	{ "pod-name", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, OFF(pod_name),
	  "This pod's name (downward API metadata.name)." },
	{ "pod-namespace", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, OFF(pod_namespace),
	  "This pod's namespace (downward API metadata.namespace)." },
	{ "pod-ip", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(pod_ip),
	  "This pod's IP (status.podIP): announced to the primary as replica-announce-ip." },
	{ "cluster-name", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, OFF(cluster_name),
	  "Name of the RedisCluster this pod belongs to." },
	{ "data-dir", SETTINGS_STRING, "/data", 0, 0, NULL, false, false, OFF(data_dir),
	  "Data volume: the server's dir, the rendered redis.conf and the fence marker." },
	{ "run-dir", SETTINGS_STRING, "/run/redis-operator", 0, 0, NULL, false, false, OFF(run_dir),
	  "Directory of the server's Unix socket." },
	{ "auth-dir", SETTINGS_STRING, "/etc/redis-operator/auth", 0, 0, NULL, false, false,
	  OFF(auth_dir), "Secret volume with `password`: the default user's password." },
	{ "operator-auth-dir", SETTINGS_STRING, "/etc/redis-operator/operator-auth", 0, 0, NULL,
	  false, false, OFF(operator_auth_dir),
	  "Secret volume with `password`: the internal redis-operator user's password." },
	{ "users-dir", SETTINGS_STRING, "/etc/redis-operator/users", 0, 0, NULL, false, false,
	  OFF(users_dir), "Secret volume with <user>/<file> password files for spec.users." },
	{ "acl-dir", SETTINGS_STRING, "/etc/redis-operator/acl", 0, 0, NULL, false, false,
	  OFF(acl_dir), "Secret volume with `acl`: the ACL file of spec.aclConfigSecret." },
	{ "tls-dir", SETTINGS_STRING, "/etc/redis-operator/tls", 0, 0, NULL, false, false,
	  OFF(tls_dir), "tls.crt, tls.key, ca.crt for the server (TLS is on when present)." },
	{ "http-tls-dir", SETTINGS_STRING, "/etc/redis-operator/http-tls", 0, 0, NULL, false, false,
	  OFF(http_tls_dir),
	  "tls.crt, tls.key, ca.crt for the HTTP API: HTTPS, client certificates for mutations." },
	{ "http-tls", SETTINGS_ENUM, "auto", 0, 0, http_tls_modes, false, false, OFF(http_tls),
	  "auto: plain HTTP only when --http-tls-dir has none of its files; required: never. "
	  "A file missing: mutations refused (503), probes and status over plain HTTP." },
	{ "http-address", SETTINGS_STRING, "0.0.0.0", 0, 0, NULL, false, false, OFF(http_address),
	  "Address the HTTP API and metrics listen on." },
	{ "http-port", SETTINGS_INT, API_PORT_TEXT(API_PORT_HTTP), 1, 65535, NULL, false, false,
	  OFF(http_port), "Port of the HTTP status/control API." },
	{ "metrics-port", SETTINGS_INT, API_PORT_TEXT(API_PORT_METRICS), 1, 65535, NULL, false,
	  false, OFF(metrics_port), "Port of /metrics (Prometheus)." },
	{ "server-port", SETTINGS_INT, API_PORT_TEXT(API_PORT_SERVER), 1, 65535, NULL, false, false,
	  OFF(server_port), "TCP port of redis-server/valkey-server." },
	{ "bind", SETTINGS_STRING, "0.0.0.0", 0, 0, NULL, false, false, OFF(bind),
	  "Addresses the server binds (space-separated)." },
	{ "kubeconfig", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(kubeconfig),
	  "Kubeconfig file (tests); unset: the in-cluster service account." },
	{ "server-binary", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(server_binary),
	  "Server binary to run; unset: valkey-server or redis-server from PATH per engine." },
	{ "engine", SETTINGS_ENUM, NULL, 0, 0, engines, false, false, OFF(engine),
	  "Engine override; unset: spec.engine, status.engine, then what PATH has." },
	{ "shutdown-timeout", SETTINGS_DURATION, "25s", 1000, DAY_MS, NULL, false, false,
	  OFF(shutdown_timeout_ms), "Graceful shutdown budget (below the pod's grace period)." },
	{ "boot-timeout", SETTINGS_DURATION, "10m", 1000, DAY_MS, NULL, false, false,
	  OFF(boot_timeout_ms), "How long boot waits for the API server before exiting 3." },
	{ "poll-interval", SETTINGS_DURATION, "500ms", MIN_MS, 60000, NULL, false, false,
	  OFF(poll_interval_ms), "How often the server's INFO is polled for status/metrics." },
	{ "secret-poll-interval", SETTINGS_DURATION, "2s", MIN_MS, 600000, NULL, false, false,
	  OFF(secret_poll_ms), "How often the secret volumes are checked for changes." },
	{ "restart-backoff-max", SETTINGS_DURATION, "30s", MIN_MS, 600000, NULL, false, false,
	  OFF(restart_backoff_max_ms), "Longest wait before restarting a crashed server." },
	{ "api-timeout", SETTINGS_DURATION, "5s", MIN_MS, 60000, NULL, false, false,
	  OFF(api_timeout_ms), "Deadline of each Kubernetes API request (not the lease's)." },
	{ "log-level", SETTINGS_ENUM, "info", 0, 0, levels, false, false, OFF(log_level),
	  "Log level." },
	{ "log-format", SETTINGS_ENUM, "json", 0, 0, formats, false, false, OFF(log_format),
	  "Log line format." },
	{ "restore-source", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(restore_source),
	  "JSON {name, destination, manifestKey}: restore that backup into an empty data dir "
	  "before the first start (spec.bootstrap.backupName; docs/backup.md)." },
	{ "restore-credentials-dir", SETTINGS_STRING, "/etc/redis-operator/restore-credentials", 0,
	  0, NULL, false, false, OFF(restore_credentials_dir),
	  "Secret volume of the restore's storage credentials (AWS_ACCESS_KEY_ID, ... files)." },
	{ "role", SETTINGS_ENUM, "data", 0, 0, roles, false, false, OFF(role),
	  "data: supervise redis-server/valkey-server; sentinel: supervise redis-sentinel/"
	  "valkey-sentinel (docs/sentinel.md)." },
	{ "sentinel-port", SETTINGS_INT, API_PORT_TEXT(API_PORT_SENTINEL), 1, 65535, NULL, false,
	  false, OFF(sentinel_port), "--role sentinel: the sentinel's TCP port." },
	{ "sentinel-master", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(sentinel_master),
	  "--role sentinel: host:port of the master to monitor when sentinel.conf does not "
	  "exist yet; unset: status.currentPrimary's pod." },
};
#undef OFF

const size_t inst_settings_count = sizeof(inst_settings_table) / sizeof(inst_settings_table[0]);

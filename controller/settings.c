/*
 * settings: the descriptor table of `redis-operator controller` (lib/settings): flags,
 * REDIS_OPERATOR_* environment variables (the Deployment's contract: NAMESPACE,
 * POD_NAME, IMAGE, LEADER_ELECTION_LEASE; the others from the ConfigMap
 * redis-operator-config through envFrom, see config/manager/config.yaml), --help and the
 * redacted start-up dump. Precedence: default < environment < flag.
 * Nothing here is sensitive: credentials come from the kubeconfig or the service
 * account.
 */
#include <stddef.h>
#include <stdint.h>

#include "controller/internal.h"

static const char *const levels[] = { "debug", "info", "warn", "error", NULL };
static const char *const formats[] = { "json", "logfmt", NULL };

#define OFF(f) offsetof(struct ctl_settings, f)
#define HOUR   (3600LL * 1000)
const struct settings_desc ctl_settings_table[] = {
	{ "kubeconfig", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(kubeconfig),
	  "Kubeconfig file; unset: the in-cluster service account, then $KUBECONFIG." },
	{ "namespace", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(namespace),
	  "The operator's namespace (leader Lease, NetworkPolicy peer); unset: the service "
	  "account's, else \"default\"." },
	{ "pod-name", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(pod_name),
	  "Identity in leader election; unset: hostname and pid." },
	{ "image", SETTINGS_STRING, "redis-operator:dev", 0, 0, NULL, false, false, OFF(image),
	  "Image of the data pods' copy-binary init container (the operator's own)." },
	{ "leader-elect", SETTINGS_BOOL, "true", 0, 0, NULL, false, false, OFF(leader_elect),
	  "Run leader election; only the leader writes." },
	{ "leader-election-lease", SETTINGS_STRING, "redis-operator-leader", 0, 0, NULL, false,
	  false, OFF(lease_name), "Name of the leader Lease in --namespace." },
	{ "lease-duration", SETTINGS_DURATION, "15s", 2000, HOUR, NULL, false, false,
	  OFF(lease_duration_ms), "Leader Lease duration." },
	{ "renew-deadline", SETTINGS_DURATION, "10s", 1000, HOUR, NULL, false, false,
	  OFF(renew_deadline_ms), "Leader stops writing when it could not renew for this long." },
	{ "retry-period", SETTINGS_DURATION, "2s", 100, HOUR, NULL, false, false,
	  OFF(retry_period_ms), "How often the leader Lease is renewed or tried." },
	{ "watch-namespace", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(watch_namespace),
	  "Only reconcile clusters of this namespace; unset: all namespaces." },
	{ "cluster-selector", SETTINGS_STRING, NULL, 0, 0, NULL, false, false,
	  OFF(cluster_selector),
	  "Only reconcile RedisClusters matching this label selector; unset: all." },
	{ "workers", SETTINGS_INT, "0", 0, CTL_WORKERS_MAX, NULL, false, false, OFF(workers),
	  "Clusters reconciled in parallel; 0: the workload profile's (4, 8 or 16: "
	  "controller/profile.h)." },
	{ "poll-period", SETTINGS_DURATION, "1s", 100, 60000, NULL, false, false,
	  OFF(poll_period_ms), "How often every instance's GET /v1/status is polled." },
	{ "poll-timeout", SETTINGS_DURATION, "800ms", 50, 60000, NULL, false, false,
	  OFF(poll_timeout_ms), "Deadline of one status poll." },
	{ "poll-failures-down", SETTINGS_INT, "2", 2, 100, NULL, false, false,
	  OFF(poll_failures_down),
	  "Consecutive failed polls that count as unreachable (never one)." },
	{ "api-timeout", SETTINGS_DURATION, "10s", 500, 300000, NULL, false, false,
	  OFF(api_timeout_ms), "Deadline of each Kubernetes API request." },
	{ "kube-api-qps", SETTINGS_INT, "0", 0, 100000, NULL, false, false, OFF(api_qps),
	  "Kubernetes API requests per second (client-side limit of the caches, writes and "
	  "events; the leader Lease has its own client); 0: the workload profile's (50, 100 "
	  "or 200). A ceiling: the API server's 429 answers halve the rate, which then grows "
	  "back." },
	{ "kube-api-burst", SETTINGS_INT, "0", 0, 100000, NULL, false, false, OFF(api_burst),
	  "Kubernetes API requests allowed at once before --kube-api-qps applies; 0: the "
	  "workload profile's (100, 200 or 400)." },
	{ "instance-timeout", SETTINGS_DURATION, "5s", 100, 300000, NULL, false, false,
	  OFF(instance_timeout_ms), "Deadline of each request to an instance manager." },
	{ "resync-period", SETTINGS_DURATION, "30s", 1000, HOUR, NULL, false, false, OFF(resync_ms),
	  "Every cluster is reconciled at least this often." },
	{ "status-refresh", SETTINGS_DURATION, "10s", 1000, HOUR, NULL, false, false,
	  OFF(status_refresh_ms), "How often a changed lag is written (offsets alone: 10x)." },
	{ "backoff-base", SETTINGS_DURATION, "100ms", 1, 60000, NULL, false, false,
	  OFF(backoff_base_ms), "First retry delay of a failed reconcile." },
	{ "backoff-cap", SETTINGS_DURATION, "30s", 10, HOUR, NULL, false, false,
	  OFF(backoff_cap_ms), "Longest retry delay of a failed reconcile." },
	{ "promote-timeout", SETTINGS_DURATION, "30s", 1000, HOUR, NULL, false, false,
	  OFF(promote_timeout_ms), "A failover target unreachable this long is replaced." },
	{ "restart-timeout", SETTINGS_DURATION, "5m", 1000, 24 * HOUR, NULL, false, false,
	  OFF(restart_timeout_ms), "An in-place primary restart slower than this fails over." },
	{ "password-rotation-grace", SETTINGS_DURATION, "90s", 0, HOUR, NULL, false, false,
	  OFF(rotation_grace_ms),
	  "After the auth Secret changes, old passwords stay valid this long (Secret volumes "
	  "reach every pod meanwhile), then are dropped." },
	{ "max-lag", SETTINGS_BYTES, "1Mi", 0, INT64_MAX, NULL, false, false, OFF(max_lag_bytes),
	  "A replica at most this far behind counts as caught up (rolling updates)." },
	{ "bind-address", SETTINGS_STRING, "0.0.0.0", 0, 0, NULL, false, false, OFF(bind_address),
	  "Address of the health and metrics endpoints." },
	{ "health-port", SETTINGS_INT, "8081", 1, 65535, NULL, false, false, OFF(health_port),
	  "Port of /healthz and /readyz." },
	{ "metrics-port", SETTINGS_INT, "8080", 1, 65535, NULL, false, false, OFF(metrics_port),
	  "Port of /metrics." },
	{ "run-as-user", SETTINGS_INT, "999", 1, 2147483647, NULL, false, false, OFF(run_as_user),
	  "uid, gid and fsGroup of the data pods (999: the official images' redis user)." },
	{ "log-level", SETTINGS_ENUM, "info", 0, 0, levels, false, false, OFF(log_level),
	  "Log level." },
	{ "log-format", SETTINGS_ENUM, "json", 0, 0, formats, false, false, OFF(log_format),
	  "Log line format." },
	{ "log-debug", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, OFF(log_debug),
	  "Components logged at debug level (comma-separated)." },
};
#undef OFF

const size_t ctl_settings_count = sizeof(ctl_settings_table) / sizeof(ctl_settings_table[0]);

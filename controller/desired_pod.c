/*
 * desired_pod: the data pod, its PVC, and the two hashes that split configuration into
 * the restart tier and the live tier (see desired.h).
 *
 * The pod is the instance manager's contract; every path, env name and port here must
 * match instance/settings.c. The spec hash is computed over the user's inputs listed in
 * restart_inputs[], never over the pod as rendered: so an operator release that renders
 * pods differently restarts none (DESIGN.md §3), and the hash is the same for every pod
 * of the cluster.
 */
#include "desired.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/acl_file.h"
#include "api/instance_v1.h"
#include "controller/pki.h"
#include "lib/alloc.h"
#include "lib/jsonx.h"
#include "lib/parse.h"
#include "lib/engine/directives.h"

#define MOUNT_CONTROLLER "/controller"
#define MOUNT_DATA       "/data"
#define MOUNT_RUN        "/run" /* the socket dir /run/redis-operator is inside */
#define MOUNT_AUTH       "/etc/redis-operator/auth"
#define MOUNT_OPAUTH     "/etc/redis-operator/operator-auth"
#define MOUNT_USERS      "/etc/redis-operator/users"
#define MOUNT_ACL        "/etc/redis-operator/acl" /* instance --acl-dir default */
#define MOUNT_TLS        "/etc/redis-operator/tls"
#define MOUNT_HTTP_TLS   "/etc/redis-operator/http-tls" /* instance --http-tls-dir default */
#define MOUNT_RESTORE_CREDS                                                                        \
	"/etc/redis-operator/restore-credentials" /* instance --restore-credentials-dir default */
#define SECRET_MODE 0440                          /* root:fsGroup, group-readable */

void desired_hash_json(json_t *j, char *out)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	EVP_Digest(text, strlen(text), md, &n, EVP_sha256(), NULL);
	for (int i = 0; i < DESIRED_HASH_LEN / 2; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	free(text);
}

static void pod_name(const struct api_redis_cluster *rc, int serial, char *out, size_t len)
{
	snprintf(out, len, "%s-%d", rc->meta.name, serial);
}

/* --- PVC ---------------------------------------------------------------------------- */

json_t *desired_pvc(const struct api_redis_cluster *rc, int serial)
{
	char name[CTL_NAME_MAX + 1];
	json_t *spec, *o, *extra;

	pod_name(rc, serial, name, sizeof(name));
	spec = json_pack("{s:[s],s:s,s:{s:{s:s}}}", "accessModes", "ReadWriteOnce", "volumeMode",
	                 "Filesystem", "resources", "requests", "storage",
	                 rc->spec.storage.size.text ? rc->spec.storage.size.text : "1Gi");
	if (rc->spec.storage.storage_class_name)
		json_object_set_new(spec, "storageClassName",
		                    json_string(rc->spec.storage.storage_class_name));
	extra = json_pack("{s:s}", CTL_LABEL_POD, name);
	o = json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "PersistentVolumeClaim",
	              "metadata", desired_meta(rc, name, "data", extra), "spec", spec);
	json_decref(extra);
	return o;
}

/* --- volumes ------------------------------------------------------------------------ */

static json_t *secret_volume(const char *name, const char *secret)
{
	return json_pack("{s:s,s:{s:s,s:[{s:s,s:s}],s:i}}", "name", name, "secret", "secretName",
	                 secret, "items", "key", "password", "path", "password", "defaultMode",
	                 SECRET_MODE);
}

static json_t *users_volume(const struct api_redis_cluster *rc)
{
	json_t *sources = json_array();
	char path[CTL_NAME_MAX * 2];

	for (size_t i = 0; i < rc->spec.n_users; i++) {
		const struct api_user *u = &rc->spec.users[i];

		for (size_t k = 0; k < u->n_password_secrets; k++) {
			snprintf(path, sizeof(path), "%s/%s", u->name, u->password_secrets[k].name);
			json_array_append_new(sources,
			                      json_pack("{s:{s:s,s:[{s:s,s:s}]}}", "secret", "name",
			                                u->password_secrets[k].name, "items", "key",
			                                "password", "path", path));
		}
	}
	if (!json_array_size(sources)) {
		json_decref(sources);
		return NULL;
	}
	return json_pack("{s:s,s:{s:o,s:i}}", "name", "users", "projected", "sources", sources,
	                 "defaultMode", SECRET_MODE);
}

/* spec.aclConfigSecret's key acl (api/acl_file.h). Optional: a missing Secret or key is
 * reported by the controller (AclConfigRefused) and the pod still starts; the manager
 * adds the file's users once the kubelet shows it, and follows every change live. */
static json_t *acl_volume(const struct api_redis_cluster *rc)
{
	if (!rc->spec.acl_config_secret.name)
		return NULL;
	return json_pack("{s:s,s:{s:s,s:[{s:s,s:s}],s:i,s:b}}", "name", "acl", "secret",
	                 "secretName", rc->spec.acl_config_secret.name, "items", "key",
	                 API_ACL_FILE_KEY, "path", API_ACL_FILE_KEY, "defaultMode", SECRET_MODE,
	                 "optional", 1);
}

static json_t *tls_volume(const struct api_redis_cluster *rc)
{
	if (!rc->spec.tls_secret.name || !rc->spec.ca_secret.name)
		return NULL;
	return json_pack("{s:s,s:{s:[{s:{s:s,s:[{s:s,s:s},{s:s,s:s}]}},{s:{s:s,s:[{s:s,s:s}]}}],"
	                 "s:i}}",
	                 "name", "tls", "projected", "sources", "secret", "name",
	                 rc->spec.tls_secret.name, "items", "key", "tls.crt", "path", "tls.crt",
	                 "key", "tls.key", "path", "tls.key", "secret", "name",
	                 rc->spec.ca_secret.name, "items", "key", "ca.crt", "path", "ca.crt",
	                 "defaultMode", SECRET_MODE);
}

/* <cluster>-instance-tls (controller/pki.h): every key by name, so a pod whose Secret lacks
 * one does not start (the kubelet says which) instead of serving plain HTTP. */
static json_t *http_tls_volume(const struct api_redis_cluster *rc)
{
	static const char *const keys[CTL_PKI_INST_NKEYS] = CTL_PKI_INST_KEYS;
	char name[CTL_NAME_MAX + 1];
	json_t *items = json_array();

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_array_append_new(items,
		                      json_pack("{s:s,s:s}", "key", keys[i], "path", keys[i]));
	desired_name(rc, DESIRED_INSTANCE_TLS, name, sizeof(name));
	return json_pack("{s:s,s:{s:s,s:o,s:i}}", "name", DESIRED_HTTP_TLS_VOLUME, "secret",
	                 "secretName", name, "items", items, "defaultMode", SECRET_MODE);
}

static json_t *data_volume(const struct api_redis_cluster *rc, const char *pod)
{
	if (rc->spec.storage.type == API_STORAGE_EMPTYDIR) {
		json_t *ed = json_object();

		if (rc->spec.storage.size.text)
			json_object_set_new(ed, "sizeLimit",
			                    json_string(rc->spec.storage.size.text));
		return json_pack("{s:s,s:o}", "name", "data", "emptyDir", ed);
	}
	return json_pack("{s:s,s:{s:s}}", "name", "data", "persistentVolumeClaim", "claimName",
	                 pod);
}

static void volumes(const struct api_redis_cluster *rc, const char *pod, json_t **vols,
                    json_t **mounts)
{
	char name[CTL_NAME_MAX + 1];
	json_t *v;

	*vols = json_array();
	*mounts = json_array();
	json_array_append_new(*vols, data_volume(rc, pod));
	json_array_append_new(*mounts,
	                      json_pack("{s:s,s:s}", "name", "data", "mountPath", MOUNT_DATA));
	json_array_append_new(*vols, json_pack("{s:s,s:{}}", "name", "controller", "emptyDir"));
	json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", "controller", "mountPath",
	                                         MOUNT_CONTROLLER, "readOnly", 1));
	json_array_append_new(
	        *vols, json_pack("{s:s,s:{s:s}}", "name", "run", "emptyDir", "medium", "Memory"));
	json_array_append_new(*mounts,
	                      json_pack("{s:s,s:s}", "name", "run", "mountPath", MOUNT_RUN));
	json_array_append_new(*vols, json_pack("{s:s,s:{}}", "name", "tmp", "emptyDir"));
	json_array_append_new(*mounts, json_pack("{s:s,s:s}", "name", "tmp", "mountPath", "/tmp"));
	desired_auth_secret_name(rc, name, sizeof(name));
	json_array_append_new(*vols, secret_volume("auth", name));
	json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", "auth", "mountPath",
	                                         MOUNT_AUTH, "readOnly", 1));
	desired_name(rc, DESIRED_OPERATOR_SECRET, name, sizeof(name));
	json_array_append_new(*vols, secret_volume("operator-auth", name));
	json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", "operator-auth",
	                                         "mountPath", MOUNT_OPAUTH, "readOnly", 1));
	json_array_append_new(*vols, http_tls_volume(rc));
	json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", DESIRED_HTTP_TLS_VOLUME,
	                                         "mountPath", MOUNT_HTTP_TLS, "readOnly", 1));
	if ((v = users_volume(rc))) {
		json_array_append_new(*vols, v);
		json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", "users",
		                                         "mountPath", MOUNT_USERS, "readOnly", 1));
	}
	if ((v = acl_volume(rc))) {
		json_array_append_new(*vols, v);
		json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", "acl",
		                                         "mountPath", MOUNT_ACL, "readOnly", 1));
	}
	if ((v = tls_volume(rc))) {
		json_array_append_new(*vols, v);
		json_array_append_new(*mounts, json_pack("{s:s,s:s,s:b}", "name", "tls",
		                                         "mountPath", MOUNT_TLS, "readOnly", 1));
	}
}

/* --- containers --------------------------------------------------------------------- */

static json_t *container_security(void)
{
	return json_pack("{s:b,s:b,s:b,s:{s:[s]},s:{s:s}}", "allowPrivilegeEscalation", 0,
	                 "readOnlyRootFilesystem", 1, "runAsNonRoot", 1, "capabilities", "drop",
	                 "ALL", "seccompProfile", "type", "RuntimeDefault");
}

static json_t *field_env(const char *name, const char *path)
{
	return json_pack("{s:s,s:{s:{s:s,s:s}}}", "name", name, "valueFrom", "fieldRef",
	                 "apiVersion", "v1", "fieldPath", path);
}

/* HTTP_TLS required: a file missing from the http-tls volume makes the manager refuse
 * mutations instead of serving them over plain HTTP (instance/http_tls.h). */
static json_t *env(const struct api_redis_cluster *rc)
{
	return json_pack("[o,o,o,{s:s,s:s},{s:s,s:s}]",
	                 field_env("REDIS_OPERATOR_POD_NAME", "metadata.name"),
	                 field_env("REDIS_OPERATOR_POD_NAMESPACE", "metadata.namespace"),
	                 field_env("REDIS_OPERATOR_POD_IP", "status.podIP"), "name",
	                 "REDIS_OPERATOR_CLUSTER_NAME", "value", rc->meta.name, "name",
	                 "REDIS_OPERATOR_HTTP_TLS", "value", "required");
}

/* HTTPS: the manager serves only HTTPS once its http-tls volume is there. GETs need no
 * client certificate, and kubelets do not verify the server's certificate in probes. */
static json_t *probe(const char *path, int period, int timeout, int failures)
{
	return json_pack("{s:{s:s,s:i,s:s},s:i,s:i,s:i,s:i}", "httpGet", "path", path, "port",
	                 CTL_PORT_HTTP, "scheme", "HTTPS", "periodSeconds", period,
	                 "timeoutSeconds", timeout, "successThreshold", 1, "failureThreshold",
	                 failures);
}

static json_t *main_container(const struct api_redis_cluster *rc, json_t *mounts)
{
	json_t *c = json_pack(
	        "{s:s,s:s,s:s,s:[s,s],s:o,s:[{s:s,s:i,s:s},{s:s,s:i,s:s},{s:s,s:i,s:s}],s:o,s:o,"
	        "s:o,s:o,s:o}",
	        "name", "redis", "image", rc->spec.image_name, "imagePullPolicy", "IfNotPresent",
	        "command", MOUNT_CONTROLLER "/redis-operator", "instance", "env", env(rc), "ports",
	        "name", "redis", "containerPort", CTL_PORT_REDIS, "protocol", "TCP", "name", "http",
	        "containerPort", CTL_PORT_HTTP, "protocol", "TCP", "name", "metrics",
	        "containerPort", CTL_PORT_METRICS, "protocol", "TCP", "volumeMounts", mounts,
	        /* startup on /healthz: a parked replica is alive but not ready, and must not be
	         * restarted for that */
	        "startupProbe", probe("/healthz", 1, 2, 120), "readinessProbe",
	        probe("/readyz", 2, 2, 2), "livenessProbe", probe("/healthz", 10, 5, 6),
	        "securityContext", container_security());

	if (rc->spec.resources.json)
		json_object_set(c, "resources", rc->spec.resources.json);
	return c;
}

static json_t *init_container(const struct ctl_config *cfg)
{
	return json_pack(
	        "{s:s,s:s,s:s,s:[s,s,s],s:[{s:s,s:s},{s:s,s:s}],s:o}", "name", "copy-binary",
	        "image", cfg->operator_image ? cfg->operator_image : "redis-operator:dev",
	        "imagePullPolicy", "IfNotPresent", "command", "/usr/local/bin/redis-operator",
	        "copy-binary", MOUNT_CONTROLLER, "volumeMounts", "name", "controller", "mountPath",
	        MOUNT_CONTROLLER, "name", "run", "mountPath", MOUNT_RUN, "securityContext",
	        container_security());
}

/* The user's affinity, plus a preferred anti-affinity on hostnames unless they set one. */
static json_t *affinity(const struct api_redis_cluster *rc)
{
	json_t *a = rc->spec.affinity ? json_deep_copy(rc->spec.affinity) : json_object();

	if (!json_object_get(a, "podAntiAffinity"))
		json_object_set_new(a, "podAntiAffinity",
		                    json_pack("{s:[{s:i,s:{s:s,s:{s:{s:s}}}}]}",
		                              "preferredDuringSchedulingIgnoredDuringExecution",
		                              "weight", 100, "podAffinityTerm", "topologyKey",
		                              "kubernetes.io/hostname", "labelSelector",
		                              "matchLabels", CTL_LABEL_CLUSTER, rc->meta.name));
	return a;
}

static void set_if(json_t *obj, const char *key, json_t *v)
{
	if (v && !json_is_null(v))
		json_object_set(obj, key, v);
}

static json_t *pod_spec(const struct api_redis_cluster *rc, const struct ctl_config *cfg,
                        const char *pod)
{
	json_t *vols, *mounts, *spec;
	json_int_t uid = (json_int_t)cfg->run_as_user;

	volumes(rc, pod, &vols, &mounts);
	spec = json_pack("{s:s,s:b,s:b,s:s,s:i,s:{s:b,s:I,s:I,s:I,s:s,s:{s:s}},s:[o],s:[o],s:o,"
	                 "s:o}",
	                 "serviceAccountName", rc->meta.name, "automountServiceAccountToken", 1,
	                 "enableServiceLinks", 0, "restartPolicy", "Always",
	                 "terminationGracePeriodSeconds", DESIRED_GRACE_SECONDS, "securityContext",
	                 "runAsNonRoot", 1, "runAsUser", uid, "runAsGroup", uid, "fsGroup", uid,
	                 "fsGroupChangePolicy", "OnRootMismatch", "seccompProfile", "type",
	                 "RuntimeDefault", "initContainers", init_container(cfg), "containers",
	                 main_container(rc, mounts), "volumes", vols, "affinity", affinity(rc));
	set_if(spec, "nodeSelector", rc->spec.node_selector);
	set_if(spec, "tolerations", rc->spec.tolerations);
	set_if(spec, "topologySpreadConstraints", rc->spec.topology_spread_constraints);
	if (rc->spec.priority_class_name)
		json_object_set_new(spec, "priorityClassName",
		                    json_string(rc->spec.priority_class_name));
	return spec;
}

/* --- the restart tier ------------------------------------------------------------- */

/* The non-live spec.redis directives: a change needs a restart. Judged against the oldest
 * supported version of the engine, so the answer never depends on what runs. NULL when
 * there is none. */
static json_t *in_static_directives(const struct api_redis_cluster *rc, json_t *stored)
{
	enum vk_engine eng = rc->spec.engine ? rc->spec.engine : VK_ENGINE_REDIS;
	unsigned ver = eng == VK_ENGINE_VALKEY ? VK_VALKEY_MIN_VERSION : VK_REDIS_MIN_VERSION;
	json_t *out = json_object(), *v;
	const char *k;

	json_object_foreach (stored, k, v) {
		if (vk_directive_needs_restart(eng, ver, k))
			json_object_set(out, k, v);
	}
	if (!json_object_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* Decoded: the default image of the engine when imageName is unset. */
static json_t *in_image(const struct api_redis_cluster *rc, json_t *stored)
{
	(void)stored;
	return rc->spec.image_name ? json_string(rc->spec.image_name) : NULL;
}

/* Decoded: from the image when engine is unset (it picks the server binary). */
static json_t *in_engine(const struct api_redis_cluster *rc, json_t *stored)
{
	(void)stored;
	return json_string(vk_engine_name(rc->spec.engine ? rc->spec.engine : VK_ENGINE_REDIS));
}

/* The emptyDir's sizeLimit; a PVC grows in place (no restart). */
/* Only "required" is hashed: the default (optional) added to the CRD rolls no pod. */
static json_t *in_client_auth(const struct api_redis_cluster *rc, json_t *stored)
{
	return rc->spec.tls_client_auth == API_TLS_CLIENT_AUTH_REQUIRED ? json_incref(stored)
	                                                                : NULL;
}

static json_t *in_emptydir_size(const struct api_redis_cluster *rc, json_t *stored)
{
	return rc->spec.storage.type == API_STORAGE_EMPTYDIR ? json_incref(stored) : NULL;
}

/* "<user>/<secret>" per password Secret: the projected path, which the user's name is in. */
static json_t *in_user_secrets(const struct api_redis_cluster *rc, json_t *stored)
{
	json_t *out = json_array();
	char path[CTL_NAME_MAX * 2];

	(void)stored;
	for (size_t i = 0; i < rc->spec.n_users; i++) {
		const struct api_user *u = &rc->spec.users[i];

		for (size_t k = 0; k < u->n_password_secrets; k++) {
			snprintf(path, sizeof(path), "%s/%s", u->name, u->password_secrets[k].name);
			json_array_append_new(out, json_string(path));
		}
	}
	if (!json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* Sentinel mode hashes as standalone: a data manager follows the in-place move from
 * standalone to sentinel without a restart (docs/sentinel.md), the primary keeps its pod. */
static json_t *in_mode(const struct api_redis_cluster *rc, json_t *stored)
{
	return rc->spec.mode == API_MODE_SENTINEL ? json_string("standalone") : json_incref(stored);
}

/* Milliseconds, so that "10s" and "10000ms" are one value. */
static json_t *in_duration(const struct api_redis_cluster *rc, json_t *stored)
{
	int64_t ms;

	(void)rc;
	if (!json_is_string(stored))
		return NULL;
	if (parse_duration_ms(json_string_value(stored), &ms, NULL) < 0)
		return json_incref(stored);
	return json_integer((json_int_t)ms);
}

/*
 * The restart tier's inputs (DESIGN.md §3): the fields of the user's spec that shape the
 * pod or what the instance manager and the server read only when they start, by their
 * path under spec in the CRD. Each is hashed as the API server stored it (schema defaults
 * applied), or as its getter says (a new reference, or NULL: nothing hashed). Nothing of
 * how this operator renders a pod is an input: a new env var, probe or volume of a new
 * release reaches a running pod only when it restarts for another reason (controller/
 * README.md, "Configuration tiers"); a release that must restart pods bumps
 * DESIRED_POD_GENERATION. test_controller_desired walks every spec field of the CRD and
 * fails on one that is neither here nor in its list of live and not pod-related fields.
 *
 * An input added after generation 1 must hash nothing (get NULL) while the field is unset
 * or at its default, so that the clusters that do not use it keep their hash (and their
 * pods) across the upgrade that adds it.
 */
static const struct restart_input {
	const char *path;
	json_t *(*get)(const struct api_redis_cluster *rc, json_t *stored);
} restart_inputs[] = {
	{ "mode", in_mode },                                   /* read by the manager at start */
	{ "imageName", in_image },                             /* the container's image */
	{ "engine", in_engine },                               /* which server binary runs */
	{ "storage.type", NULL },                              /* the data volume, persistence */
	{ "storage.size", in_emptydir_size },                  /* emptyDir sizeLimit */
	{ "redis", in_static_directives },                     /* what CONFIG SET cannot change */
	{ "resources.limits", NULL },                          /* the container's resources */
	{ "resources.requests", NULL },                        /* the container's resources */
	{ "authSecret.name", NULL },                           /* a Secret volume */
	{ "users[].passwordSecrets[].name", in_user_secrets }, /* projected volume sources */
	{ "tlsSecret.name", NULL },                            /* projected volume source */
	{ "caSecret.name", NULL },                             /* projected volume source */
	{ "tlsClientAuth", in_client_auth },                   /* read at start (render.c) */
	{ "aclConfigSecret.name", NULL },                      /* a Secret volume; unset: none */
	{ "failover.leaseDuration", in_duration },     /* the managers' Lease: read at start, */
	{ "failover.renewDeadline", in_duration },     /* and holder and candidates must agree */
	{ "failover.renewPeriod", in_duration },       /* on them (the fence margin, §4) */
	{ "failover.switchoverTimeout", in_duration }, /* the manager's default: read at start */
	{ "nodeSelector", NULL },                      /* scheduling */
	{ "affinity", NULL },                          /* scheduling */
	{ "tolerations", NULL },                       /* scheduling */
	{ "topologySpreadConstraints", NULL },         /* scheduling */
	{ "priorityClassName", NULL },                 /* scheduling */
	{ "podTemplate.metadata.labels", NULL },       /* the pod's metadata */
	{ "podTemplate.metadata.annotations", NULL },  /* the pod's metadata */
	/* the manager's self-fence deadline, read at start (api_redis_cluster_fence_deadline_ms) */
	{ "primaryIsolation.enabled", NULL },
	{ "primaryIsolation.apiServerTimeout", in_duration },
};

const char *desired_restart_input(size_t i)
{
	return i < sizeof(restart_inputs) / sizeof(restart_inputs[0]) ? restart_inputs[i].path
	                                                              : NULL;
}

/* The inputs, path → value, as one object; plus what the operator's own settings put into
 * the pod on purpose (run_as_user: a documented restart) and the generation. */
static json_t *restart_tier(const struct api_redis_cluster *rc, const struct ctl_config *cfg)
{
	json_t *spec = json_object(), *stored, *v;
	char path[128];

	for (size_t i = 0; i < sizeof(restart_inputs) / sizeof(restart_inputs[0]); i++) {
		const struct restart_input *in = &restart_inputs[i];

		snprintf(path, sizeof(path), "spec.%s", in->path);
		stored = jsonx_get(rc->json, path);
		v = in->get ? in->get(rc, stored) : (stored ? json_incref(stored) : NULL);
		if (v && !json_is_null(v))
			json_object_set(spec, in->path, v);
		json_decref(v);
	}
	return json_pack("{s:i,s:I,s:o}", "generation", DESIRED_POD_GENERATION, "runAsUser",
	                 (json_int_t)cfg->run_as_user, "spec", spec);
}

void desired_spec_hash(const struct api_redis_cluster *rc, const struct ctl_config *cfg, char *out)
{
	json_t *in = restart_tier(rc, cfg);

	desired_hash_json(in, out);
	json_decref(in);
}

json_t *desired_pod(const struct api_redis_cluster *rc, const struct ctl_config *cfg, int serial,
                    const char *role)
{
	char name[CTL_NAME_MAX + 1], tls[CTL_NAME_MAX + 1], hash[DESIRED_HASH_LEN + 1];
	json_t *labels = json_object(), *meta, *ann;

	pod_name(rc, serial, name, sizeof(name));
	if (rc->spec.pod_template.labels)
		json_object_update(labels, rc->spec.pod_template.labels);
	json_object_set_new(labels, CTL_LABEL_POD, json_string(name));
	json_object_set_new(labels, CTL_LABEL_ROLE, json_string(role));
	meta = desired_meta(rc, name, "database", labels);
	json_decref(labels);
	ann = rc->spec.pod_template.annotations ? json_deep_copy(rc->spec.pod_template.annotations)
	                                        : json_object();
	desired_spec_hash(rc, cfg, hash);
	json_object_set_new(ann, CTL_ANN_SPEC_HASH, json_string(hash));
	/* the instance manager reads the live settings from the cluster when it boots */
	desired_live_hash(rc, hash);
	json_object_set_new(ann, CTL_ANN_LIVE_HASH, json_string(hash));
	desired_name(rc, DESIRED_INSTANCE_TLS, tls, sizeof(tls));
	json_object_set_new(ann, CTL_PKI_ANN, json_string(tls)); /* see http_tls_volume */
	json_object_set_new(meta, "annotations", ann);
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta,
	                 "spec", pod_spec(rc, cfg, name));
}

/* --- the bootstrap pod ----------------------------------------------------------------- */

static json_t *restore_source(const struct api_redis_cluster *rc, const struct api_redis_backup *b)
{
	char name[2 * CTL_NAME_MAX + 2];
	struct api_inst_restore_source src = { .name = name,
		                               .manifest_key = b->status.manifest_key,
		                               .destination = b->spec.destination };
	json_t *j = NULL;
	char *text;

	snprintf(name, sizeof(name), "%s/%s", rc->meta.namespace, b->meta.name);
	j = api_inst_restore_source_encode(&src);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	j = json_pack("{s:s,s:s}", "name", "REDIS_OPERATOR_RESTORE_SOURCE", "value", text);
	free(text);
	return j;
}

json_t *desired_bootstrap_pod(const struct api_redis_cluster *rc, const struct ctl_config *cfg,
                              int serial, const struct api_redis_backup *b, const char *secret)
{
	json_t *pod = desired_pod(rc, cfg, serial, CTL_ROLE_PRIMARY);
	json_t *c = json_array_get(jsonx_get(pod, "spec.containers"), 0);

	json_array_append_new(json_object_get(c, "env"), restore_source(rc, b));
	json_object_set_new(jsonx_get(pod, "metadata.annotations"), DESIRED_ANN_RESTORE_FROM,
	                    json_string(b->meta.name));
	if (!secret)
		return pod;
	json_array_append_new(jsonx_get(pod, "spec.volumes"),
	                      json_pack("{s:s,s:{s:s,s:i}}", "name", "restore-credentials",
	                                "secret", "secretName", secret, "defaultMode",
	                                SECRET_MODE));
	json_array_append_new(json_object_get(c, "volumeMounts"),
	                      json_pack("{s:s,s:s,s:b}", "name", "restore-credentials", "mountPath",
	                                MOUNT_RESTORE_CREDS, "readOnly", 1));
	return pod;
}

/* --- live tier ---------------------------------------------------------------------- */

/* The /v1/config body (api/instance_v1.h): memory in bytes, maxMemory winning over
 * maxMemoryPercent of the memory limit. */
json_t *desired_live_config(const struct api_redis_cluster *rc)
{
	const struct api_memory *m = &rc->spec.memory;
	uint64_t limit = rc->spec.resources.limits_memory.value;
	uint64_t pct = (uint64_t)m->max_memory_percent;
	struct api_inst_request r = { .op = API_INST_CONFIG };
	struct api_inst_config *c = &r.config;

	if (m->max_memory.valid && m->max_memory.value)
		c->max_memory = m->max_memory.value;
	else if (m->has_max_memory_percent && limit)
		c->max_memory = limit / 100 * pct + limit % 100 * pct / 100;
	c->has_max_memory = c->max_memory != 0;
	c->max_memory_policy = m->max_memory_policy;
	c->redis = rc->spec.redis;
	c->users = rc->spec.users;
	c->n_users = rc->spec.n_users;
	c->min_sync_replicas = rc->spec.min_sync_replicas;
	return api_inst_request_encode(&r);
}

void desired_live_hash(const struct api_redis_cluster *rc, char *out)
{
	json_t *body = desired_live_config(rc);

	desired_hash_json(body, out);
	json_decref(body);
}

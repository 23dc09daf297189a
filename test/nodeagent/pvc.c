/*
 * pvc: the provisioner of StorageClass nodeagent-local (provisioner
 * redis-operator.test/nodeagent, volumeBindingMode WaitForFirstConsumer,
 * allowVolumeExpansion, reclaim policy Delete, the default class), created at start when
 * absent.
 *
 * Several agents share one control plane (every test suite starts its own, with its own
 * --state-dir and --node-prefix), and a volume is a directory in one agent's state: only
 * the agent that runs the pod may make it, and no other agent may ever remove it. So
 * binding waits for the first consumer, the Kubernetes way for node-local volumes:
 * kube-scheduler picks the pod's Node, writes it on each of the pod's unbound PVCs
 * (annotation volume.kubernetes.io/selected-node) and waits in PreBind (bindTimeout,
 * 600 s) until the PV controller (kube-controller-manager) has bound them, and bound to a
 * PV whose nodeAffinity admits that Node. The PV controller meanwhile only records the
 * class's provisioner on the PVC (volume.kubernetes.io/storage-provisioner) and an
 * ExternalProvisioning event. The class's volumeBindingMode is immutable: a class found
 * with Immediate (made by an older agent) is deleted and made again. It is test
 * infrastructure: existing PVs and PVCs only name it, nothing else refers to it. Agents
 * starting at once are fine: the delete names the incarnation read (a newer one stays),
 * and AlreadyExists means another agent made it (read again).
 *
 * For every PVC of that class (or with no class at all) that has no volume yet, no other
 * provisioner named, and a selected Node that is one of this agent's, it makes the
 * directory <state>/pvs/<namespace>/<claim uid> and a PersistentVolume "pvc-<uid>"
 * (hostPath at that directory, capacity = the request, claimRef = the PVC, reclaim policy
 * Delete, nodeAffinity: kubernetes.io/hostname In [that Node], labelled NA_PV_LABEL and
 * NA_PV_AGENT_LABEL = the agent's id, its --node-prefix without the trailing '-'); the PV
 * controller then binds the two. The directory outlives the pods that mount it, and the
 * scheduler brings them back to its Node. A PVC no pod uses stays Pending, unprovisioned.
 *
 * What is ours: a PV with NA_PV_LABEL, our id (or none: an older agent's) and a hostPath
 * under our <state>/pvs/; the directories under <state>/pvs. When a PVC is gone, "pvgc"
 * deletes every PV of ours whose claim no longer exists, and every directory under
 * <state>/pvs that belongs to no PVC (also at start, for what happened while the agent
 * was down); never another agent's PV or directory.
 *
 * A resize (request above status.capacity) of a PVC bound to a PV of ours sets the PV's
 * capacity, then the PVC's status.capacity: a directory has no size to grow. The agent is
 * the class's external resizer: kube-controller-manager's expand controller finds no
 * expandable in-tree plugin for a hostPath PV (and it is not a CSI-migratable one), so it
 * only records a Normal Event ExternalExpanding ("waiting for an external controller to
 * expand this PVC") and leaves the PV and the PVC alone; no kubelet runs a filesystem
 * resize either.
 *
 * Main thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent.h"
#include "lib/alloc.h"
#include "lib/err.h"
#include "lib/jsonx.h"
#include "lib/k8s/client.h"
#include "lib/k8s/informer.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/strmap.h"

#define RETRY_MS           1000
#define CLASS_TRIES        5 /* get → delete/create rounds against agents starting at once */
#define WFFC               "WaitForFirstConsumer"
#define ANN_SELECTED_NODE  "volume.kubernetes.io/selected-node"
#define ANN_PROVISIONER    "volume.kubernetes.io/storage-provisioner"
#define ANN_PROVISIONER_B1 "volume.beta.kubernetes.io/storage-provisioner"
#define LABEL_VALUE_MAX    63

const struct k8s_resource na_res_pvs = { "", "v1", "persistentvolumes", "PersistentVolume", false };
const struct k8s_resource na_res_storageclasses = { "storage.k8s.io", "v1", "storageclasses",
	                                            "StorageClass", false };

static const char *jstr(json_t *root, const char *path)
{
	return json_string_value(jsonx_get(root, path));
}

static const char *annotation(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(jsonx_get(obj, "metadata.annotations"), key));
}

static const char *label(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(jsonx_get(obj, "metadata.labels"), key));
}

/* --- the agent's identity ------------------------------------------------------------------------ */

static bool is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void na_agent_id(const char *node_prefix, char out[NA_AGENT_ID_SIZE])
{
	size_t n = 0;

	for (const char *p = node_prefix ? node_prefix : ""; *p && n < LABEL_VALUE_MAX; p++)
		if (n || is_alnum(*p)) /* a label value starts and ends with [A-Za-z0-9] */
			out[n++] = is_alnum(*p) || *p == '.' || *p == '_' ? *p : '-';
	while (n && !is_alnum(out[n - 1]))
		n--;
	out[n] = '\0';
	if (!n)
		snprintf(out, NA_AGENT_ID_SIZE, "nodeagent");
}

static void agent_id(const struct agent *ag, char out[NA_AGENT_ID_SIZE])
{
	na_agent_id(ag->set.node_prefix, out);
}

bool na_pv_is_ours(json_t *pv, const char *state_dir, const char *agent_id)
{
	const char *who = label(pv, NA_PV_AGENT_LABEL), *mark = label(pv, NA_PV_LABEL),
	           *path = jstr(pv, "spec.hostPath.path");
	char *root = xasprintf("%s/pvs/", state_dir);
	bool ours = mark && strcmp(mark, "true") == 0 && (!who || strcmp(who, agent_id) == 0) &&
	            path && strncmp(path, root, strlen(root)) == 0 && !strstr(path, "/../");

	free(root);
	return ours;
}

/* --- the StorageClass ----------------------------------------------------------------------------- */

/* An existing class made without allowVolumeExpansion gets it (the field is mutable):
 * the API server refuses to grow a PVC of a class that does not allow it. */
static int allow_expansion(struct agent *ag, json_t *sc, struct err *e)
{
	json_t *patch;
	int rc;

	if (json_is_true(json_object_get(sc, "allowVolumeExpansion")))
		return 0;
	patch = json_pack("{s:b}", "allowVolumeExpansion", 1);
	rc = k8s_patch(ag->client, &na_res_storageclasses, NULL, NA_STORAGE_CLASS, NULL,
	               K8S_PATCH_MERGE, patch, NULL, NULL, e);
	json_decref(patch);
	if (rc == 0)
		log_info(NA_COMPONENT, "storage class allows expansion now", "name",
		         NA_STORAGE_CLASS, NULL);
	return rc;
}

json_t *na_storage_class_object(void)
{
	return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:s, s:s, s:b, s:s}", "apiVersion",
	                 "storage.k8s.io/v1", "kind", "StorageClass", "metadata", "name",
	                 NA_STORAGE_CLASS, "annotations",
	                 "storageclass.kubernetes.io/is-default-class", "true", "provisioner",
	                 NA_PROVISIONER, "volumeBindingMode", WFFC, "allowVolumeExpansion", 1,
	                 "reclaimPolicy", "Delete");
}

/* The class read has another binding mode (immutable): deletes that incarnation only. */
static int delete_class(struct agent *ag, json_t *sc, struct err *e)
{
	struct k8s_delete_opts d = { .precondition_uid = jstr(sc, "metadata.uid") };
	const char *mode = jstr(sc, "volumeBindingMode");
	int rc = k8s_delete(ag->client, &na_res_storageclasses, NULL, NA_STORAGE_CLASS, &d, e);

	if (rc == 0)
		log_info(NA_COMPONENT, "storage class deleted, to be made again with " WFFC, "name",
		         NA_STORAGE_CLASS, "was", mode ? mode : "Immediate", NULL);
	if (rc == -ENOENT || rc == -EBUSY) { /* another agent was first */
		err_clear(e);
		rc = 0;
	}
	return rc;
}

int na_storage_class_ensure(struct agent *ag, struct err *e)
{
	for (int i = 0; i < CLASS_TRIES; i++) {
		json_t *sc = NULL;
		int rc =
		        k8s_get(ag->client, &na_res_storageclasses, NULL, NA_STORAGE_CLASS, &sc, e);

		if (rc == 0) {
			const char *mode = jstr(sc, "volumeBindingMode");

			if (mode && strcmp(mode, WFFC) == 0)
				rc = allow_expansion(ag, sc, e);
			else if ((rc = delete_class(ag, sc, e)) == 0)
				rc = -ENOENT; /* gone: made again below */
			json_decref(sc);
		}
		if (rc != -ENOENT)
			return rc;
		err_clear(e);
		sc = na_storage_class_object();
		rc = k8s_create(ag->client, &na_res_storageclasses, NULL, sc, NULL, NULL, e);
		json_decref(sc);
		if (rc == 0) {
			log_info(NA_COMPONENT, "storage class created", "name", NA_STORAGE_CLASS,
			         "volumeBindingMode", WFFC, NULL);
			return 0;
		}
		if (rc != -EEXIST)
			return rc;
		err_clear(e); /* AlreadyExists: another agent made it; read it again */
	}
	return err_set(e, -EAGAIN, "storage class %s: still not %s after %d tries",
	               NA_STORAGE_CLASS, WFFC, CLASS_TRIES);
}

/* --- provisioning --------------------------------------------------------------------------------- */

static bool pvc_is_ours(json_t *pvc)
{
	json_t *cls = jsonx_get(pvc, "spec.storageClassName");

	return !cls ||
	       (json_is_string(cls) && strcmp(json_string_value(cls), NA_STORAGE_CLASS) == 0);
}

/* The PV controller names the class's provisioner on the PVC; another one named is not us. */
static bool provisioner_is_us(json_t *pvc)
{
	const char *p = annotation(pvc, ANN_PROVISIONER);

	p = p ? p : annotation(pvc, ANN_PROVISIONER_B1);
	return !p || strcmp(p, NA_PROVISIONER) == 0;
}

const char *na_pvc_selected_node(json_t *pvc)
{
	const char *vn = jstr(pvc, "spec.volumeName"), *node = annotation(pvc, ANN_SELECTED_NODE);

	if (!pvc_is_ours(pvc) || jsonx_get(pvc, "metadata.deletionTimestamp") || (vn && vn[0]) ||
	    !provisioner_is_us(pvc) || !node || !node[0])
		return NULL;
	return node;
}

json_t *na_pv_object(json_t *pvc, const char *dir, const char *node, const char *agent_id)
{
	const char *uid = jstr(pvc, "metadata.uid"),
	           *req = jstr(pvc, "spec.resources.requests.storage");
	json_t *modes = jsonx_get(pvc, "spec.accessModes");
	json_t *pv = json_pack(
	        "{s:s, s:s, s:{s:o, s:{s:s, s:s}, s:{s:s}}, s:{s:{s:s}, s:o, s:s, s:s, "
	        "s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, "
	        "s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}}",
	        "apiVersion", "v1", "kind", "PersistentVolume", "metadata", "name",
	        json_sprintf("pvc-%s", uid ? uid : ""), "labels", NA_PV_LABEL, "true",
	        NA_PV_AGENT_LABEL, agent_id, "annotations", "pv.kubernetes.io/provisioned-by",
	        NA_PROVISIONER, "spec", "capacity", "storage", req ? req : "1Gi", "accessModes",
	        json_array_size(modes) ? json_deep_copy(modes) : json_pack("[s]", "ReadWriteOnce"),
	        "persistentVolumeReclaimPolicy", "Delete", "storageClassName", NA_STORAGE_CLASS,
	        "hostPath", "path", dir, "type", "DirectoryOrCreate", "claimRef", "apiVersion",
	        "v1", "kind", "PersistentVolumeClaim", "namespace", jstr(pvc, "metadata.namespace"),
	        "name", jstr(pvc, "metadata.name"), "uid", uid ? uid : "", "nodeAffinity",
	        "required", "nodeSelectorTerms", "matchExpressions", "key",
	        "kubernetes.io/hostname", "operator", "In", "values", node);

	if (pv && jsonx_get(pvc, "spec.volumeMode"))
		json_object_set(json_object_get(pv, "spec"), "volumeMode",
		                jsonx_get(pvc, "spec.volumeMode"));
	return pv;
}

static char *pv_dir(struct agent *ag, const char *ns, const char *uid)
{
	return xasprintf("%s/pvs/%s/%s", ag->state_dir, ns, uid);
}

/* <state>/pvs/<ns>/<uid>, world-writable as a fresh volume is (any runAsUser may write). */
static int make_pv_dir(struct agent *ag, const char *ns, const char *dir)
{
	char *root = xasprintf("%s/pvs", ag->state_dir);
	char *nsdir = xasprintf("%s/%s", root, ns);
	int rc = 0;

	if ((mkdir(root, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(nsdir, 0755) < 0 && errno != EEXIST) ||
	    (mkdir(dir, 0777) < 0 && errno != EEXIST) || chmod(dir, 0777) < 0)
		rc = -errno;
	free(root);
	free(nsdir);
	return rc;
}

static void retry(struct agent *ag, json_t *pvc)
{
	char *key =
	        xasprintf("pvc:%s/%s", jstr(pvc, "metadata.namespace"), jstr(pvc, "metadata.name"));

	na_enqueue_after(ag, key, RETRY_MS);
	free(key);
}

static void provision(struct agent *ag, json_t *pvc, const char *node)
{
	const char *ns = jstr(pvc, "metadata.namespace"), *uid = jstr(pvc, "metadata.uid");
	char *dir = pv_dir(ag, ns, uid), id[NA_AGENT_ID_SIZE];
	json_t *pv = NULL;
	struct err e;
	int rc;

	err_clear(&e);
	agent_id(ag, id);
	if ((rc = make_pv_dir(ag, ns, dir)))
		err_set(&e, rc, "%s: %s", dir, strerror(-rc));
	if (!rc && !(pv = na_pv_object(pvc, dir, node, id)))
		rc = err_set(&e, -EINVAL, "PVC %s/%s: cannot build its PV", ns, uid);
	if (!rc)
		rc = k8s_create(ag->client, &na_res_pvs, NULL, pv, NULL, NULL, &e);
	if (rc && rc != -EEXIST) {
		log_warn(NA_COMPONENT, "provisioning failed", "ns", ns, "pvc",
		         jstr(pvc, "metadata.name"), "error", e.msg, NULL);
		retry(ag, pvc);
	} else if (!rc) {
		log_info(NA_COMPONENT, "volume provisioned", "ns", ns, "pvc",
		         jstr(pvc, "metadata.name"), "node", node, "dir", dir, NULL);
	}
	json_decref(pv);
	free(dir);
}

/* --- resize --------------------------------------------------------------------------------------- */

static bool bigger(const char *req, const char *cap)
{
	uint64_t r, c;

	return req && cap && parse_quantity_bytes(req, &r, NULL) == 0 &&
	       parse_quantity_bytes(cap, &c, NULL) == 0 && r > c;
}

/* Whether pv_name is a PV of ours: 1, 0 (another agent's: its to grow), or -errno. */
static int pv_of_ours(struct agent *ag, const char *pv_name, struct err *e)
{
	char id[NA_AGENT_ID_SIZE];
	json_t *pv = NULL;
	int rc = k8s_get(ag->client, &na_res_pvs, NULL, pv_name, &pv, e);

	agent_id(ag, id);
	if (rc == 0)
		rc = na_pv_is_ours(pv, ag->state_dir, id);
	json_decref(pv);
	return rc;
}

static void resize(struct agent *ag, json_t *pvc, const char *pv_name)
{
	const char *req = jstr(pvc, "spec.resources.requests.storage");
	json_t *pv_patch, *st_patch;
	struct err e;
	int rc;

	if (!bigger(req, jstr(pvc, "status.capacity.storage")))
		return;
	err_clear(&e);
	if ((rc = pv_of_ours(ag, pv_name, &e)) == 0)
		return;
	if (rc < 0) {
		log_warn(NA_COMPONENT, "volume resize failed", "pv", pv_name, "error", e.msg, NULL);
		retry(ag, pvc);
		return;
	}
	pv_patch = json_pack("{s:{s:{s:s}}}", "spec", "capacity", "storage", req);
	st_patch =
	        json_pack("{s:{s:{s:s}, s:n}}", "status", "capacity", "storage", req, "conditions");
	err_clear(&e);
	rc = k8s_patch(ag->client, &na_res_pvs, NULL, pv_name, NULL, K8S_PATCH_MERGE, pv_patch,
	               NULL, NULL, &e);
	if (!rc)
		rc = k8s_patch(ag->client, &k8s_res_pvcs, jstr(pvc, "metadata.namespace"),
		               jstr(pvc, "metadata.name"), "status", K8S_PATCH_MERGE, st_patch,
		               NULL, NULL, &e);
	if (rc) {
		log_warn(NA_COMPONENT, "volume resize failed", "pv", pv_name, "error", e.msg, NULL);
		retry(ag, pvc);
	} else {
		log_info(NA_COMPONENT, "volume resized", "pv", pv_name, "size", req, NULL);
	}
	json_decref(pv_patch);
	json_decref(st_patch);
}

/* --- sync and clean-up --------------------------------------------------------------------------- */

void na_pvc_sync(struct agent *ag, const char *ns_name)
{
	const char *slash = strchr(ns_name, '/'), *vn, *node;
	char ns[K8S_NAMESPACE_MAX + 1], *mine;
	json_t *pvc;

	if (!slash || (size_t)(slash - ns_name) > K8S_NAMESPACE_MAX)
		return;
	snprintf(ns, sizeof(ns), "%.*s", (int)(slash - ns_name), ns_name);
	pvc = k8s_informer_get(ag->pvcs, ns, slash + 1);
	if (!pvc) {
		na_enqueue(ag, "pvgc");
		return;
	}
	vn = jstr(pvc, "spec.volumeName");
	mine = xasprintf("pvc-%s", jstr(pvc, "metadata.uid"));
	if ((node = na_pvc_selected_node(pvc)) && na_node_find(ag, node))
		provision(ag, pvc, node); /* another agent's Node: that agent provisions it */
	else if (pvc_is_ours(pvc) && !jsonx_get(pvc, "metadata.deletionTimestamp") && vn &&
	         strcmp(vn, mine) == 0)
		resize(ag, pvc, vn);
	free(mine);
	json_decref(pvc);
}

/* uid -> "" for every PVC the informer holds. */
static void pvc_uids(struct agent *ag, struct strmap *uids)
{
	json_t *all = k8s_informer_list(ag->pvcs), *pvc;
	size_t i;

	json_array_foreach (all, i, pvc)
		if (jstr(pvc, "metadata.uid"))
			strmap_set(uids, jstr(pvc, "metadata.uid"), (void *)"");
	json_decref(all);
}

/* Removes dir when it is one of ours (under <state>/pvs/). */
static void remove_pv_dir(struct agent *ag, const char *dir)
{
	char *root = xasprintf("%s/pvs/", ag->state_dir);

	if (dir && strncmp(dir, root, strlen(root)) == 0 && !strstr(dir, "/../")) {
		na_rmtree(dir);
		log_info(NA_COMPONENT, "volume directory removed", "dir", dir, NULL);
	}
	free(root);
}

/* PVs of ours (na_pv_is_ours) whose claim is gone; every other agent's PV is left alone. */
static void gc_pvs(struct agent *ag, struct strmap *uids)
{
	struct k8s_list_opts lo = { .label_selector = NA_PV_LABEL "=true" };
	char id[NA_AGENT_ID_SIZE];
	json_t *pvs = NULL, *pv;
	struct err e;
	size_t i;

	err_clear(&e);
	agent_id(ag, id);
	if (k8s_list(ag->client, &na_res_pvs, NULL, &lo, &pvs, NULL, &e) < 0) {
		log_warn(NA_COMPONENT, "PV list failed", "error", e.msg, NULL);
		na_enqueue_after(ag, "pvgc", RETRY_MS);
		return;
	}
	json_array_foreach (pvs, i, pv) {
		const char *claim = jstr(pv, "spec.claimRef.uid"),
		           *name = jstr(pv, "metadata.name");

		if (!name || !na_pv_is_ours(pv, ag->state_dir, id) ||
		    (claim && strmap_contains(uids, claim)))
			continue;
		err_clear(&e);
		if (k8s_delete(ag->client, &na_res_pvs, NULL, name, NULL, &e) < 0 &&
		    e.code != -ENOENT)
			log_warn(NA_COMPONENT, "PV delete failed", "pv", name, "error", e.msg,
			         NULL);
		else
			log_info(NA_COMPONENT, "PV deleted (its claim is gone)", "pv", name, NULL);
		remove_pv_dir(ag, jstr(pv, "spec.hostPath.path"));
	}
	json_decref(pvs);
}

/* Directories <state>/pvs/<ns>/<uid> of no PVC. */
static void gc_dirs(struct agent *ag, struct strmap *uids)
{
	char *root = xasprintf("%s/pvs", ag->state_dir);
	DIR *d = opendir(root), *nd;
	struct dirent *de, *ue;

	while (d && (de = readdir(d))) {
		char *nsdir = xasprintf("%s/%s", root, de->d_name);

		nd = de->d_name[0] == '.' ? NULL : opendir(nsdir);
		while (nd && (ue = readdir(nd))) {
			char *dir = xasprintf("%s/%s", nsdir, ue->d_name);

			if (ue->d_name[0] != '.' && !strmap_contains(uids, ue->d_name))
				remove_pv_dir(ag, dir);
			free(dir);
		}
		if (nd)
			closedir(nd);
		free(nsdir);
	}
	if (d)
		closedir(d);
	free(root);
}

void na_pv_gc(struct agent *ag)
{
	struct strmap uids;

	if (!k8s_informer_has_synced(ag->pvcs)) {
		na_enqueue_after(ag, "pvgc", RETRY_MS);
		return;
	}
	strmap_init(&uids);
	pvc_uids(ag, &uids);
	gc_pvs(ag, &uids);
	gc_dirs(ag, &uids);
	strmap_release(&uids, NULL);
}

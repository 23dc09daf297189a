/*
 * owner: which of the objects labelled for a RedisCluster are its own.
 *
 * The caches select children by label (app.kubernetes.io/managed-by, redis.io/cluster),
 * and labels are anyone's to write: a pod a user made with the cluster's labels, or one
 * left behind by a deleted cluster of the same name (deleted with --cascade=orphan),
 * carries them too. Only an object whose metadata.ownerReferences hold one with
 * controller=true and this RedisCluster's uid is the cluster's. The view (view.h) holds
 * only those; the others are foreign: never fenced, promoted, repointed, labelled,
 * resized, deleted or counted as instances, only reported: foreign pods in
 * status.foreignPods, foreign PVCs in status.danglingPVCs, and a Warning event
 * (ForeignPod, ForeignPVC) the first time the status does not list one yet.
 *
 *   ctl_owner_split(pods_labelled, rc->meta.uid, &pods, &foreign_pod_names);
 *
 * Pure; any thread. Arguments are borrowed.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_OWNER_H
#define REDIS_OPERATOR_CONTROLLER_OWNER_H

#include <jansson.h>
#include <stdbool.h>

#include "controller/actions.h"

/* The most names status.foreignPods holds (the CRD's maxItems); more are not listed. */
#define CTL_FOREIGN_MAX 256

/* True when obj has an owner reference with controller=true and uid (false for a NULL
 * or empty uid: nothing is owned by an unknown cluster). */
bool ctl_owner_is(json_t *obj, const char *uid);

/*
 * Splits objs (an array of objects, as cached) into *owned, a new array of those uid owns
 * (the same references, in order), and *foreign, a new array of the names of the others
 * (strings, in order, at most CTL_FOREIGN_MAX). objs may be NULL.
 */
void ctl_owner_split(json_t *objs, const char *uid, json_t **owned, json_t **foreign);

/*
 * Appends to p a Warning event for each foreign pod (v->foreign_pods) that
 * status.foreignPods does not list yet, and for each foreign PVC (v->foreign_pvcs) that
 * status.danglingPVCs does not: once per object, since the status written by this
 * reconcile lists it. The reconciler adds them before the plan, so that no failed action
 * of the plan can skip them while the status still gets written.
 */
void ctl_owner_events(const struct ctl_view *v, struct ctl_plan *p);

#endif

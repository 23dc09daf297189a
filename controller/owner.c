/*
 * owner: the controller owner reference decides what is a cluster's (see owner.h).
 *
 * Labels select what the caches keep and which cluster an object's change queues; the
 * owner reference's uid decides whether the cluster may act on it. A uid, not a name: a
 * cluster deleted and created again under the same name has a new uid, and the old one's
 * orphans are not the new one's.
 */
#include "controller/owner.h"

#include <string.h>

#include "lib/jsonx.h"

bool ctl_owner_is(json_t *obj, const char *uid)
{
	json_t *refs = jsonx_get(obj, "metadata.ownerReferences"), *r;
	size_t i;

	if (!uid || !*uid)
		return false;
	json_array_foreach (refs, i, r) {
		const char *u = json_string_value(json_object_get(r, "uid"));

		if (json_is_true(json_object_get(r, "controller")) && u && strcmp(u, uid) == 0)
			return true;
	}
	return false;
}

void ctl_owner_split(json_t *objs, const char *uid, json_t **owned, json_t **foreign)
{
	json_t *o;
	size_t i;

	*owned = json_array();
	*foreign = json_array();
	json_array_foreach (objs, i, o) {
		const char *name = json_string_value(jsonx_get(o, "metadata.name"));

		if (ctl_owner_is(o, uid))
			json_array_append(*owned, o);
		else if (name && json_array_size(*foreign) < CTL_FOREIGN_MAX)
			json_array_append_new(*foreign, json_string(name));
	}
}

static bool listed(json_t *names, const char *name)
{
	json_t *n;
	size_t i;

	json_array_foreach (names, i, n) {
		if (json_is_string(n) && strcmp(json_string_value(n), name) == 0)
			return true;
	}
	return false;
}

static void announce(const struct ctl_view *v, struct ctl_plan *p, json_t *names,
                     const char *status_field, const char *reason, const char *what)
{
	json_t *shown = jsonx_get(v->obj, status_field), *n;
	size_t i;

	json_array_foreach (names, i, n) {
		const char *name = json_string_value(n);

		if (name && !listed(shown, name))
			ctl_plan_event(
			        p, true, reason,
			        "%s %s has the cluster's labels but is not its own (no "
			        "controller owner reference to this RedisCluster): left alone",
			        what, name);
	}
}

void ctl_owner_events(const struct ctl_view *v, struct ctl_plan *p)
{
	announce(v, p, v->foreign_pods, "status.foreignPods", "ForeignPod", "pod");
	announce(v, p, v->foreign_pvcs, "status.danglingPVCs", "ForeignPVC", "PVC");
}

/*
 * status_view: the pure half of `kubectl redis status` (status.h). The instance
 * manager's /v1/status is decoded by api/instance_v1 (its field names live there);
 * the RedisCluster and RedisBackups are read by their CRD paths. What the view holds is
 * what -o json prints, so the tables are rendered from the view alone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/instance_v1.h"
#include "lib/jsonx.h"
#include "plugin/status.h"
#include "plugin/table.h"

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

static json_t *copy_or_null(json_t *j)
{
	return j ? json_deep_copy(j) : json_null();
}

static json_t *int_or_null(int64_t v)
{
	return v == API_INST_NULL ? json_null() : json_integer(v);
}

/* An instance from its decoded /v1/status. */
static json_t *inst_from_status(const struct api_inst_status *s, bool lease)
{
	return json_pack(
	        "{s:s,s:o,s:b,s:o,s:o,s:o,s:o,s:b,s:b,s:o,s:o,s:s}", "pod", s->pod ? s->pod : "",
	        "role", str_or_null(s->role), "ready", s->ready, "state", str_or_null(s->state),
	        "lagBytes", int_or_null(s->has_replication ? s->replication.lag_bytes : -1),
	        "lagSeconds", int_or_null(s->has_replication ? s->replication.lag_seconds : -1),
	        "link", str_or_null(s->has_replication ? s->replication.link : NULL), "fenced",
	        s->fenced, "leaseHolder", lease || s->lease_held, "engine", str_or_null(s->engine),
	        "version", str_or_null(s->version), "source", "instance");
}

/* The RedisCluster's status.instancesStatus entry of pod (borrowed), or NULL. */
static json_t *cluster_entry(json_t *cluster, const char *pod)
{
	return jsonx_find(jsonx_get(cluster, "status.instancesStatus"), "name", pod);
}

/* The entry's field, else the pod's own value (a new reference). */
static json_t *entry_or(json_t *c, const char *key, json_t *pod_value)
{
	json_t *v = json_object_get(c, key);

	if (v) {
		json_decref(pod_value);
		return json_deep_copy(v);
	}
	return pod_value ? pod_value : json_null();
}

/* An instance from the cluster's status (or the pod), when its /v1/status could not be had. */
static json_t *inst_from_cluster(json_t *cluster, const struct plugin_inst_fetch *f, bool lease,
                                 const char *why)
{
	json_t *c = cluster_entry(cluster, f->pod);
	json_t *role = f->role_label ? json_string(f->role_label) : NULL;
	json_t *ready = f->pod_ready >= 0 ? json_boolean(f->pod_ready) : NULL;

	return json_pack("{s:s,s:o,s:o,s:n,s:o,s:o,s:o,s:o,s:b,s:n,s:n,s:s,s:s}", "pod", f->pod,
	                 "role", entry_or(c, "role", role), "ready", entry_or(c, "ready", ready),
	                 "state", "lagBytes", copy_or_null(json_object_get(c, "lagBytes")),
	                 "lagSeconds", copy_or_null(json_object_get(c, "lagSeconds")), "link",
	                 copy_or_null(json_object_get(c, "link")), "fenced",
	                 copy_or_null(json_object_get(c, "fenced")), "leaseHolder", lease, "engine",
	                 "version", "source", c ? "cluster status" : "pod", "error", why);
}

static json_t *instance(json_t *cluster, const struct plugin_inst_fetch *f, const char *holder)
{
	struct api_inst_status s;
	struct err e = { 0 };
	bool lease = holder && strcmp(holder, f->pod) == 0;
	json_t *j;

	if (!f->body)
		return inst_from_cluster(cluster, f, lease, f->error ? f->error : "not fetched");
	if (api_inst_status_decode(f->body, f->len, &s, &e))
		return inst_from_cluster(cluster, f, lease, e.msg);
	j = inst_from_status(&s, lease);
	json_object_set_new(j, "pod", json_string(f->pod));
	api_inst_status_release(&s);
	return j;
}

static json_t *backups_of(json_t *backups, const char *cluster)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach (backups, i, it) {
		const char *cn = jsonx_get_string(it, "spec.clusterName");
		if (!cn || strcmp(cn, cluster) != 0)
			continue;
		json_array_append_new(
		        out, json_pack("{s:s?,s:o,s:o,s:o,s:o,s:o,s:o}", "name",
		                       jsonx_get_string(it, "metadata.name"), "phase",
		                       copy_or_null(jsonx_get(it, "status.phase")), "instance",
		                       copy_or_null(jsonx_get(it, "status.instance")), "startedAt",
		                       copy_or_null(jsonx_get(it, "status.startedAt")), "stoppedAt",
		                       copy_or_null(jsonx_get(it, "status.stoppedAt")), "size",
		                       copy_or_null(jsonx_get(it, "status.size")), "created",
		                       copy_or_null(jsonx_get(it, "metadata.creationTimestamp"))));
	}
	return out;
}

static json_t *conditions(json_t *cluster)
{
	json_t *out = json_array(), *it;
	size_t i;

	json_array_foreach (jsonx_get(cluster, "status.conditions"), i, it) {
		json_array_append_new(
		        out, json_pack("{s:o,s:o,s:o,s:o}", "type",
		                       copy_or_null(json_object_get(it, "type")), "status",
		                       copy_or_null(json_object_get(it, "status")), "reason",
		                       copy_or_null(json_object_get(it, "reason")), "message",
		                       copy_or_null(json_object_get(it, "message"))));
	}
	return out;
}

json_t *plugin_status_view(json_t *cluster, const char *lease_holder,
                           const struct plugin_inst_fetch *inst, size_t n_inst, json_t *backups)
{
	static const char *const fields[] = { "phase",         "phaseReason", "currentPrimary",
		                              "targetPrimary", "instances",   "readyInstances",
		                              "lastFailover",  "failover" };
	const char *name = jsonx_get_string(cluster, "metadata.name");
	json_t *v = json_pack("{s:s?,s:s?}", "name", name, "namespace",
	                      jsonx_get_string(cluster, "metadata.namespace"));
	json_t *list = json_array();

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		json_object_set_new(
		        v, fields[i],
		        copy_or_null(jsonx_get(json_object_get(cluster, "status"), fields[i])));
	json_object_set_new(v, "leaseHolder", str_or_null(lease_holder));
	json_object_set_new(v, "conditions", conditions(cluster));
	for (size_t i = 0; i < n_inst; i++)
		json_array_append_new(list, instance(cluster, &inst[i], lease_holder));
	json_object_set_new(v, "instancesStatus", list);
	json_object_set_new(v, "backups", backups_of(backups, name ? name : ""));
	return v;
}

/* --- rendering ----------------------------------------------------------------------- */

/* A scalar as text ("-" for null or absent); the buffer is the caller's. */
static const char *text(json_t *j, char *tmp, size_t len)
{
	if (json_is_string(j))
		return json_string_value(j);
	if (json_is_integer(j))
		snprintf(tmp, len, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
	else if (json_is_boolean(j))
		snprintf(tmp, len, "%s", json_is_true(j) ? "yes" : "no");
	else
		snprintf(tmp, len, "-");
	return tmp;
}

static void render_cluster(json_t *v, struct buf *out)
{
	char a[64], b[64], c[64], tmp[256];
	json_t *lf = json_object_get(v, "lastFailover"), *fo = json_object_get(v, "failover"), *it;
	size_t i;

	buf_printf(out, "Cluster:        %s/%s\n", jsonx_get_string(v, "namespace"),
	           jsonx_get_string(v, "name"));
	buf_printf(out, "Phase:          %s", text(json_object_get(v, "phase"), a, sizeof(a)));
	if (jsonx_get_string(v, "phaseReason") && *jsonx_get_string(v, "phaseReason"))
		buf_printf(out, " (%s)", jsonx_get_string(v, "phaseReason"));
	buf_printf(out, "\nPrimary:        %s (target %s, lease held by %s)\n",
	           text(json_object_get(v, "currentPrimary"), a, sizeof(a)),
	           text(json_object_get(v, "targetPrimary"), b, sizeof(b)),
	           text(json_object_get(v, "leaseHolder"), c, sizeof(c)));
	buf_printf(out, "Instances:      %s ready of %s\nConditions:    ",
	           text(json_object_get(v, "readyInstances"), a, sizeof(a)),
	           text(json_object_get(v, "instances"), b, sizeof(b)));
	json_array_foreach (json_object_get(v, "conditions"), i, it) {
		buf_printf(out, " %s=%s", text(json_object_get(it, "type"), a, sizeof(a)),
		           text(json_object_get(it, "status"), b, sizeof(b)));
	}
	buf_printf(out, "\nLast failover:  ");
	if (json_is_object(lf))
		buf_printf(out, "%s, %s -> %s (%s)\n",
		           text(json_object_get(lf, "time"), a, sizeof(a)),
		           text(json_object_get(lf, "from"), b, sizeof(b)),
		           text(json_object_get(lf, "to"), c, sizeof(c)),
		           text(json_object_get(lf, "reason"), tmp, sizeof(tmp)));
	else
		buf_printf(out, "none\n");
	if (json_is_object(fo))
		buf_printf(out, "In progress:    %s, %s -> %s\n",
		           text(json_object_get(fo, "phase"), a, sizeof(a)),
		           text(json_object_get(fo, "from"), b, sizeof(b)),
		           text(json_object_get(fo, "to"), c, sizeof(c)));
}

static enum plugin_colour role_colour(json_t *inst)
{
	const char *r = jsonx_get_string(inst, "role");

	return r && strcmp(r, API_INST_ROLE_PRIMARY) == 0 ? PLUGIN_GREEN : PLUGIN_PLAIN;
}

static void render_instances(json_t *v, bool colour, struct buf *out)
{
	static const char *const hdr[] = { "POD",    "ROLE",  "READY", "STATE",  "LAG(B)", "LAG(S)",
		                           "FENCED", "LEASE", "LINK",  "SOURCE", NULL };
	static const char *const keys[] = { "pod",      "role",       "ready",  "state",
		                            "lagBytes", "lagSeconds", "fenced", "leaseHolder",
		                            "link",     "source" };
	char tmp[10][32];
	struct plugin_table t;
	json_t *it;
	size_t i;

	plugin_table_init(&t, hdr);
	json_array_foreach (json_object_get(v, "instancesStatus"), i, it) {
		const char *cells[10];
		enum plugin_colour col[10] = { 0 };

		for (size_t k = 0; k < 10; k++)
			cells[k] = text(json_object_get(it, keys[k]), tmp[k], sizeof(tmp[k]));
		col[1] = role_colour(it);
		col[2] = json_is_true(json_object_get(it, "ready")) ? PLUGIN_GREEN : PLUGIN_RED;
		col[6] = json_is_true(json_object_get(it, "fenced")) ? PLUGIN_RED : PLUGIN_PLAIN;
		col[9] = strcmp(cells[9], "instance") == 0 ? PLUGIN_PLAIN : PLUGIN_YELLOW;
		plugin_table_add(&t, cells, col);
	}
	buf_append_str(out, "\nInstances:\n");
	plugin_table_render(&t, colour, out);
	plugin_table_release(&t);
	json_array_foreach (json_object_get(v, "instancesStatus"), i, it) {
		if (jsonx_get_string(it, "error"))
			buf_printf(out, "  %s: shown from the %s: %s\n",
			           jsonx_get_string(it, "pod"), jsonx_get_string(it, "source"),
			           jsonx_get_string(it, "error"));
	}
}

static void render_backups(json_t *v, struct buf *out)
{
	static const char *const hdr[] = { "BACKUP",  "PHASE", "INSTANCE", "STARTED",
		                           "STOPPED", "SIZE",  NULL };
	static const char *const keys[] = { "name",      "phase",     "instance",
		                            "startedAt", "stoppedAt", "size" };
	json_t *list = json_object_get(v, "backups"), *it;
	char tmp[6][40];
	struct plugin_table t;
	size_t i;

	if (!json_array_size(list)) {
		buf_append_str(out, "\nBackups:        none\n");
		return;
	}
	plugin_table_init(&t, hdr);
	json_array_foreach (list, i, it) {
		const char *cells[6];

		for (size_t k = 0; k < 6; k++)
			cells[k] = text(json_object_get(it, keys[k]), tmp[k], sizeof(tmp[k]));
		plugin_table_add(&t, cells, NULL);
	}
	buf_append_str(out, "\nBackups:\n");
	plugin_table_render(&t, false, out);
	plugin_table_release(&t);
}

void plugin_status_render(json_t *view, bool colour, struct buf *out)
{
	render_cluster(view, out);
	render_instances(view, colour, out);
	render_backups(view, out);
}

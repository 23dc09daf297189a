/*
 * backup_decide: the pure part of the RedisBackup reconciler (backup.h): which instance,
 * which backup of a cluster goes first, the next status from the observed state, and the
 * status as JSON, and what a RedisBackup object's JSON says (phase, times). Nothing here
 * allocates but bk_status_json's result.
 */
#include "controller/backup.h"

#include <stdio.h>
#include <string.h>

#include "api/backup_store.h"
#include "lib/jsonx.h"
#include "lib/rfc3339.h"

#define COPY(dst, src) copy((dst), sizeof(dst), (src))

static void copy(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

/* --- the instance ----------------------------------------------------------------------- */

static bool usable(const struct bk_candidate *c)
{
	return c->ok && c->ready;
}

static bool caught_up(const struct bk_candidate *c, long long max_lag)
{
	return !c->primary && usable(c) && c->link && strcmp(c->link, API_INST_LINK_UP) == 0 &&
	       c->lag_bytes >= 0 && c->lag_bytes <= max_lag;
}

static bool better(const struct bk_candidate *a, const struct bk_candidate *b)
{
	if (a->lag_bytes != b->lag_bytes)
		return a->lag_bytes < b->lag_bytes;
	return strcmp(a->pod, b->pod) < 0;
}

static int the_primary(const struct bk_candidate *c, size_t n, const char **why)
{
	for (size_t i = 0; i < n; i++) {
		if (!c[i].primary)
			continue;
		if (usable(&c[i]))
			return (int)i;
		*why = "the primary is not ready";
		return -1;
	}
	*why = "the cluster has no primary yet";
	return -1;
}

int bk_choose(enum api_backup_target target, const struct bk_candidate *c, size_t n,
              long long max_lag, const char **why)
{
	int best = -1;

	if (target == API_TARGET_PREFER_REPLICA)
		for (size_t i = 0; i < n; i++)
			if (caught_up(&c[i], max_lag) && (best < 0 || better(&c[i], &c[best])))
				best = (int)i;
	return best >= 0 ? best : the_primary(c, n, why);
}

/* --- one at a time ------------------------------------------------------------------------ */

static bool earlier(const struct bk_entry *a, const struct bk_entry *b)
{
	if (a->created_ms != b->created_ms)
		return a->created_ms < b->created_ms;
	return strcmp(a->name, b->name) < 0;
}

int bk_first(const struct bk_entry *b, size_t n)
{
	int best = -1;

	for (size_t i = 0; i < n; i++)
		if (b[i].phase == API_BACKUP_RUNNING &&
		    (best < 0 || earlier(&b[i], &b[(size_t)best])))
			best = (int)i;
	if (best >= 0)
		return best;
	for (size_t i = 0; i < n; i++)
		if ((b[i].phase == 0 || b[i].phase == API_BACKUP_PENDING) &&
		    (best < 0 || earlier(&b[i], &b[(size_t)best])))
			best = (int)i;
	return best;
}

/* --- status -------------------------------------------------------------------------------- */

void bk_status_from_api(const struct api_redis_backup_status *s, struct bk_status *out)
{
	memset(out, 0, sizeof(*out));
	out->phase = s->phase;
	COPY(out->started_at, s->started_at);
	COPY(out->stopped_at, s->stopped_at);
	COPY(out->instance, s->instance);
	COPY(out->location, s->location);
	COPY(out->manifest_key, s->manifest_key);
	out->has_size = s->has_size;
	out->size = s->size;
	COPY(out->checksum, s->checksum);
	COPY(out->engine, s->engine);
	COPY(out->engine_version, s->engine_version);
	COPY(out->repl_id, s->repl_id);
	out->has_repl_offset = s->has_repl_offset;
	out->repl_offset = s->repl_offset;
	COPY(out->reason, s->reason);
	COPY(out->message, s->message);
	for (size_t i = 0; i < s->n_conditions; i++) {
		const struct api_condition *c = &s->conditions[i];

		if (!c->type || strcmp(c->type, BK_CONDITION) != 0)
			continue;
		out->cond = c->status;
		COPY(out->cond_reason, c->reason);
		COPY(out->cond_message, c->message);
		COPY(out->cond_time, c->last_transition_time);
	}
}

/* Through the JSON written: padding and the bytes after a string's NUL do not count. */
bool bk_status_equal(const struct bk_status *a, const struct bk_status *b)
{
	struct bk_status x = *a, y = *b;
	json_t *jx, *jy;
	bool eq;

	x.cond_time[0] = y.cond_time[0] = '\0';
	jx = bk_status_json(&x, 0);
	jy = bk_status_json(&y, 0);
	eq = json_equal(jx, jy);
	json_decref(jx);
	json_decref(jy);
	return eq;
}

static const char *const phase_names[] = {
	[API_BACKUP_PENDING] = "Pending",
	[API_BACKUP_RUNNING] = "Running",
	[API_BACKUP_COMPLETED] = "Completed",
	[API_BACKUP_FAILED] = "Failed",
};

const char *bk_phase_name(enum api_backup_phase p)
{
	return p >= API_BACKUP_PENDING && p <= API_BACKUP_FAILED ? phase_names[p] : NULL;
}

enum api_backup_phase bk_phase_parse(const char *name)
{
	for (int i = API_BACKUP_PENDING; name && i <= API_BACKUP_FAILED; i++)
		if (strcmp(name, phase_names[i]) == 0)
			return (enum api_backup_phase)i;
	return 0;
}

enum api_backup_phase bk_phase_of(json_t *obj)
{
	return bk_phase_parse(json_string_value(jsonx_get(obj, "status.phase")));
}

int64_t bk_time_of(json_t *obj, const char *path)
{
	const char *s = json_string_value(jsonx_get(obj, path));
	int64_t t;

	return s && rfc3339_parse(s, &t) == 0 ? t : 0;
}

static void set_str(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, v && *v ? json_string(v) : json_null());
}

static json_t *condition_json(const struct bk_status *s, int64_t generation)
{
	static const char *const st[] = { [API_CONDITION_TRUE] = "True",
		                          [API_CONDITION_FALSE] = "False",
		                          [API_CONDITION_UNKNOWN] = "Unknown" };

	if (!s->cond)
		return json_array();
	return json_pack("[{s:s,s:s,s:I,s:s,s:s,s:s}]", "type", BK_CONDITION, "status", st[s->cond],
	                 "observedGeneration", (json_int_t)generation, "lastTransitionTime",
	                 s->cond_time, "reason", s->cond_reason[0] ? s->cond_reason : "Unknown",
	                 "message", s->cond_message);
}

json_t *bk_status_json(const struct bk_status *s, int64_t generation)
{
	json_t *o = json_object();

	set_str(o, "phase", bk_phase_name(s->phase));
	set_str(o, "startedAt", s->started_at);
	set_str(o, "stoppedAt", s->stopped_at);
	set_str(o, "instance", s->instance);
	set_str(o, "location", s->location);
	set_str(o, "manifestKey", s->manifest_key);
	json_object_set_new(o, "size", s->has_size ? json_integer(s->size) : json_null());
	set_str(o, "checksum", s->checksum);
	set_str(o, "engine", s->engine);
	set_str(o, "engineVersion", s->engine_version);
	set_str(o, "replId", s->repl_id);
	json_object_set_new(o, "replOffset",
	                    s->has_repl_offset ? json_integer(s->repl_offset) : json_null());
	set_str(o, "reason", s->reason);
	set_str(o, "message", s->message);
	json_object_set_new(o, "conditions", condition_json(s, generation));
	return o;
}

void bk_status_condition(struct bk_status *s, enum api_condition_status cond, const char *reason,
                         const char *message, const char *now)
{
	if (s->cond != cond || !s->cond_time[0])
		COPY(s->cond_time, now);
	s->cond = cond;
	COPY(s->cond_reason, reason);
	COPY(s->cond_message, message);
}

/* --- steps --------------------------------------------------------------------------------- */

static void pending(const struct bk_input *in, struct bk_step *out, const char *reason,
                    const char *message)
{
	struct bk_status *s = &out->next;

	s->phase = API_BACKUP_PENDING;
	COPY(s->reason, reason);
	COPY(s->message, message);
	bk_status_condition(s, API_CONDITION_UNKNOWN, reason, message, in->now);
	out->requeue_ms = BK_WAIT_MS;
}

static void fail(const struct bk_input *in, struct bk_step *out, const char *reason,
                 const char *message)
{
	struct bk_status *s = &out->next;

	s->phase = API_BACKUP_FAILED;
	COPY(s->stopped_at, in->now);
	COPY(s->reason, reason);
	COPY(s->message, message);
	bk_status_condition(s, API_CONDITION_FALSE, reason, message, in->now);
	out->failed = true;
	out->event = "BackupFailed";
	out->warning = true;
	COPY(out->event_msg, message);
	out->requeue_ms = 0;
}

/* A failed or lost attempt: another one while attempts remain and it may help. */
static void fail_or_retry(const struct bk_input *in, struct bk_step *out, bool retryable,
                          const char *reason, const char *message)
{
	char msg[BK_MESSAGE_MAX];
	struct bk_status *s = &out->next;

	if (!retryable || in->attempt + 1 >= BK_ATTEMPTS_MAX) {
		fail(in, out, reason, message);
		return;
	}
	snprintf(msg, sizeof(msg), "attempt %lld of %d failed (%s): %s", (long long)in->attempt + 1,
	         BK_ATTEMPTS_MAX, reason, message);
	s->started_at[0] = s->instance[0] = '\0';
	pending(in, out, "Retrying", msg);
	out->retry = true;
	out->event = "BackupRetrying";
	out->warning = true;
	COPY(out->event_msg, msg);
	out->requeue_ms = 1000;
}

static void start(const struct bk_input *in, struct bk_step *out)
{
	struct bk_status *s = &out->next;
	char msg[BK_MESSAGE_MAX];

	s->phase = API_BACKUP_RUNNING;
	COPY(s->started_at, in->now);
	COPY(s->instance, in->chosen);
	s->reason[0] = s->message[0] = '\0';
	snprintf(msg, sizeof(msg), "backing up %s/%s from %s", in->cluster, in->name, in->chosen);
	bk_status_condition(s, API_CONDITION_UNKNOWN, "Running", msg, in->now);
	out->action = BK_START;
	out->event = "BackupStarted";
	COPY(out->event_msg, msg);
	out->requeue_ms = BK_FOLLOW_MS;
}

static void decide_pending(const struct bk_input *in, struct bk_step *out)
{
	char msg[BK_MESSAGE_MAX];

	if (!in->cluster_found) {
		snprintf(msg, sizeof(msg), "RedisCluster %s not found", in->cluster);
		pending(in, out, "ClusterNotFound", msg);
	} else if (in->secret && !in->secret_found) {
		snprintf(msg, sizeof(msg), "credentials secret %s not found", in->secret);
		if (in->now_ms - in->created_ms >= BK_SECRET_GRACE_MS)
			fail(in, out, "CredentialsNotFound", msg);
		else
			pending(in, out, "CredentialsNotFound", msg);
	} else if (in->web_identity) {
		fail(in, out, API_BACKUP_WEB_IDENTITY_REASON, in->web_identity);
	} else if (in->blocker) {
		snprintf(msg, sizeof(msg), "another backup is running: %s", in->blocker);
		pending(in, out, "Waiting", msg);
	} else if (!in->chosen) {
		snprintf(msg, sizeof(msg), "no instance to back up: %s",
		         in->why ? in->why : "none");
		pending(in, out, "NoInstance", msg);
	} else {
		start(in, out);
	}
}

static void completed(const struct bk_input *in, struct bk_step *out)
{
	const struct api_inst_backup_state *o = in->obs;
	struct bk_status *s = &out->next;
	char msg[BK_MESSAGE_MAX];

	s->phase = API_BACKUP_COMPLETED;
	COPY(s->stopped_at, o->stopped_at && *o->stopped_at ? o->stopped_at : in->now);
	COPY(s->location, in->location);
	COPY(s->manifest_key, o->manifest_key);
	s->has_size = o->size >= 0;
	s->size = o->size >= 0 ? o->size : 0;
	if (o->sha256 && *o->sha256)
		snprintf(s->checksum, sizeof(s->checksum), "sha256:%s", o->sha256);
	COPY(s->engine, o->engine);
	COPY(s->engine_version, o->engine_version);
	COPY(s->repl_id, o->repl_id);
	s->has_repl_offset = o->offset >= 0;
	s->repl_offset = o->offset >= 0 ? o->offset : 0;
	s->reason[0] = s->message[0] = '\0';
	snprintf(msg, sizeof(msg), "%lld bytes from %.200s to %.700s", (long long)s->size,
	         s->instance, s->location);
	bk_status_condition(s, API_CONDITION_TRUE, "Completed", msg, in->now);
	out->completed = true;
	out->event = "BackupCompleted";
	COPY(out->event_msg, msg);
}

static bool is_ours(const struct bk_input *in)
{
	return in->obs && in->obs->name && strcmp(in->obs->name, in->inst_name) == 0 &&
	       in->obs->phase;
}

static void follow(const struct bk_input *in, struct bk_step *out)
{
	const char *ph = in->obs->phase;

	if (strcmp(ph, API_INST_BACKUP_COMPLETED) == 0)
		completed(in, out);
	else if (strcmp(ph, API_INST_BACKUP_FAILED) == 0)
		fail_or_retry(in, out, in->obs->retryable, "UploadFailed",
		              in->obs->error ? in->obs->error : "the instance reports a failure");
	else
		out->requeue_ms = BK_FOLLOW_MS;
}

static int64_t started_ms(const struct bk_input *in)
{
	int64_t t;

	return rfc3339_parse(in->cur->started_at, &t) == 0 ? t : in->now_ms;
}

static void decide_running(const struct bk_input *in, struct bk_step *out)
{
	int64_t age = in->now_ms - started_ms(in);
	char msg[BK_MESSAGE_MAX];
	const char *pod = in->cur->instance;

	if (age > BK_DEADLINE_MS) {
		snprintf(msg, sizeof(msg), "still running on %s after %lld s", pod,
		         (long long)(BK_DEADLINE_MS / 1000));
		fail(in, out, "DeadlineExceeded", msg);
	} else if (in->inst == BK_INST_GONE) {
		snprintf(msg, sizeof(msg), "instance %s is gone", pod);
		fail_or_retry(in, out, true, "InstanceLost", msg);
	} else if (in->inst == BK_INST_UNREACHABLE) {
		snprintf(msg, sizeof(msg), "instance %s has not answered for %lld s", pod,
		         (long long)(in->silent_ms / 1000));
		if (in->silent_ms > BK_LOST_MS)
			fail_or_retry(in, out, true, "InstanceLost", msg);
		else
			out->requeue_ms = BK_FOLLOW_MS;
	} else if (is_ours(in)) {
		follow(in, out);
	} else if (age <= BK_LOST_MS) {
		out->action = BK_POST; /* not received yet (or the POST was lost): send again */
		out->requeue_ms = BK_FOLLOW_MS;
	} else {
		snprintf(msg, sizeof(msg), "instance %s reports no backup named %s", pod,
		         in->inst_name);
		fail_or_retry(in, out, true, "InstanceLost", msg);
	}
}

void bk_decide(const struct bk_input *in, struct bk_step *out)
{
	memset(out, 0, sizeof(*out));
	out->next = *in->cur;
	if (in->cur->phase == API_BACKUP_COMPLETED || in->cur->phase == API_BACKUP_FAILED)
		return;
	if (in->cur->phase == API_BACKUP_RUNNING)
		decide_running(in, out);
	else
		decide_pending(in, out);
}

/* --- names ------------------------------------------------------------------------------------ */

void bk_instance_name(const char *ns, const char *name, int64_t attempt,
                      char out[BK_INST_NAME_MAX + 1])
{
	char suffix[24] = "";
	int room;

	if (attempt > 0)
		snprintf(suffix, sizeof(suffix), ".r%lld", (long long)attempt);
	room = BK_INST_NAME_MAX - (int)strlen(ns) - 1 - (int)strlen(suffix);
	snprintf(out, BK_INST_NAME_MAX + 1, "%s/%.*s%s", ns, room > 0 ? room : 0, name, suffix);
}

void bk_location(const struct api_destination *d, const char *key, char out[BK_LOCATION_MAX])
{
	const char *ep;
	size_t n;

	if (d->s3.set) {
		snprintf(out, BK_LOCATION_MAX, "s3://%s/%s", d->s3.bucket, key);
		return;
	}
	ep = d->azure.endpoint;
	if (!ep) {
		snprintf(out, BK_LOCATION_MAX, "https://%s.blob.core.windows.net/%s/%s",
		         d->azure.account_name, d->azure.container, key);
		return;
	}
	n = strlen(ep);
	while (n > 0 && ep[n - 1] == '/')
		n--;
	snprintf(out, BK_LOCATION_MAX, "%.*s/%s/%s", (int)n, ep, d->azure.container, key);
}

/*
 * bootstrap: is the cluster bootstrapped from its backup, may its first primary be
 * created, and with what restore source (bootstrap.h). The rules in order: persisted
 * done; the first primary's own report; the backup as the reconciler read it.
 */
#include "controller/bootstrap.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/redisbackup.h"
#include "lib/jsonx.h"

static json_t *old_condition(json_t *cluster)
{
	return jsonx_find(jsonx_get(cluster, "status.conditions"), "type", CTL_COND_BOOTSTRAP);
}

bool ctl_bootstrap_done(json_t *cluster)
{
	const char *st = jsonx_get_string(old_condition(cluster), "status");

	return st && strcmp(st, "True") == 0;
}

__attribute__((format(printf, 4, 5))) static void say(struct ctl_bootstrap *b, bool ok,
                                                      const char *reason, const char *fmt, ...)
{
	va_list ap;

	b->ok = ok;
	b->reason = reason;
	va_start(ap, fmt);
	vsnprintf(b->message, sizeof(b->message), fmt, ap);
	va_end(ap);
}

/* Done already: the condition True (kept as it was), or a primary that ran before and
 * restores nothing (pp_restore: the first primary reports a restore). */
static bool judge_done(const struct ctl_view *v, bool pp_restore, struct ctl_bootstrap *b)
{
	json_t *old = old_condition(v->obj);
	const char *reason = jsonx_get_string(old, "reason"),
	           *msg = jsonx_get_string(old, "message");

	if (ctl_bootstrap_done(v->obj)) {
		b->done = b->ok = true;
		b->reason =
		        reason && strcmp(reason, "NotRestored") == 0 ? "NotRestored" : "Restored";
		snprintf(b->message, sizeof(b->message), "%s", msg ? msg : "");
		return true;
	}
	if (!old && v->lease.ever_acquired && !pp_restore) {
		b->done = true;
		say(b, true, "NotRestored",
		    "the cluster ran before its bootstrap was handled: RedisBackup %s not restored",
		    v->rc->spec.bootstrap.backup_name);
		return true;
	}
	return false;
}

/* The first primary's manager on its restore; true when that decided the condition. */
static bool judge_primary(const struct ctl_view *v, const struct ctl_pod *pp,
                          struct ctl_bootstrap *b)
{
	const char *name = v->rc->spec.bootstrap.backup_name;
	const struct ctl_inst *i = pp ? &pp->inst : NULL;

	if (!i || !ctl_inst_ok(i))
		return false;
	if (strcmp(i->restore_phase, API_INST_RESTORE_COMPLETED) == 0 ||
	    (!i->restore_phase[0] && ctl_inst_is_writable_primary(i))) {
		b->done = true;
		say(b, true, "Restored", "restored from RedisBackup %s into %s", name, pp->name);
		return true;
	}
	if (strcmp(i->restore_phase, API_INST_RESTORE_FAILED) == 0) {
		say(b, false, "RestoreFailed", "RedisBackup %s: %s (retrying)", name,
		    i->restore_error[0] ? i->restore_error : "failed");
		return true;
	}
	if (strcmp(i->restore_phase, API_INST_RESTORE_RESTORING) == 0) {
		say(b, false, "Restoring", "restoring RedisBackup %s into %s", name, pp->name);
		return true;
	}
	return false;
}

static const char *phase_name(enum api_backup_phase ph)
{
	static const char *const names[] = {
		[API_BACKUP_PENDING] = "Pending",
		[API_BACKUP_RUNNING] = "Running",
		[API_BACKUP_COMPLETED] = "Completed",
		[API_BACKUP_FAILED] = "Failed",
	};

	return ph > 0 && ph <= API_BACKUP_FAILED ? names[ph] : "without a phase yet";
}

/* The backup as read: usable (restore set), or the condition says why not. */
static void judge_backup(const struct ctl_view *v, struct ctl_bootstrap *b)
{
	const struct ctl_boot_source *src = &v->boot;
	const char *name = v->rc->spec.bootstrap.backup_name;
	const struct api_redis_backup *bk = src->backup;

	if (src->lookup == CTL_BOOT_NOT_FOUND || src->lookup == CTL_BOOT_UNREAD || !bk) {
		say(b, false, "BackupNotFound", "RedisBackup %s not found in namespace %s", name,
		    v->ns);
	} else if (src->lookup == CTL_BOOT_INVALID) {
		say(b, false, "BackupInvalid", "RedisBackup %s: %s", name, src->error);
	} else if (bk->status.phase != API_BACKUP_COMPLETED) {
		say(b, false, "BackupNotCompleted", "RedisBackup %s is %s, not Completed", name,
		    phase_name(bk->status.phase));
	} else if (!bk->status.manifest_key || !*bk->status.manifest_key ||
	           !bk->spec.destination.set) {
		say(b, false, "BackupInvalid", "RedisBackup %s: Completed without %s", name,
		    bk->spec.destination.set ? "status.manifestKey" : "spec.destination");
	} else if (src->secret_missing) {
		say(b, false, "CredentialsMissing",
		    "RedisBackup %s: credentials Secret %s not found", name, src->secret);
	} else {
		b->restore = bk;
		b->secret = src->secret;
		say(b, false, "Restoring", "restoring RedisBackup %s", name);
	}
}

/* Back-off from when the condition last changed: half the time waited, within bounds. */
static int64_t backoff(const struct ctl_view *v)
{
	const char *since = jsonx_get_string(old_condition(v->obj), "lastTransitionTime");
	int64_t t, ms = CTL_BOOT_REQUEUE_MIN_MS;

	if (since && rfc3339_parse(since, &t) == 0 && v->now_wall_ms > t)
		ms = (v->now_wall_ms - t) / 2;
	if (ms < CTL_BOOT_REQUEUE_MIN_MS)
		ms = CTL_BOOT_REQUEUE_MIN_MS;
	return ms > CTL_BOOT_REQUEUE_MAX_MS ? CTL_BOOT_REQUEUE_MAX_MS : ms;
}

void ctl_bootstrap_judge(const struct ctl_view *v, struct ctl_bootstrap *out)
{
	const char *cur = v->rc->status.current_primary;
	const struct ctl_pod *pp = cur && *cur ? ctl_view_pod(v, cur) : NULL;

	memset(out, 0, sizeof(*out));
	if (!v->rc->spec.bootstrap.set || !v->rc->spec.bootstrap.backup_name)
		return;
	out->wanted = true;
	/* a primary pod being deleted is replaced: its successor needs the source again */
	if (pp && pp->deleting)
		pp = NULL;
	if (judge_done(v, pp && ctl_inst_ok(&pp->inst) && pp->inst.restore_phase[0], out))
		return;
	if (judge_primary(v, pp, out))
		return;
	judge_backup(v, out);
	if (!pp && !out->restore) {
		out->blocked = true;
		out->requeue_ms = backoff(v);
	}
}

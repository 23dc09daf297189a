/*
 * backup_schedule: a RedisScheduledBackup's decisions (see backup_schedule.h). bs_decide
 * is a table of rules tried in order, each a predicate and what it decides; the history
 * and retention choices are single passes over the caller's arrays.
 */
#include "backup_schedule.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/rfc3339.h"

/* --- when to create a backup ---------------------------------------------------------------- */

struct bs_state {
	const struct bs_input *in;
	bool due;         /* a run fell in (anchor, now] */
	int64_t due_ms;   /* the latest such run */
	int64_t after_ms; /* the next fire time after due_ms, or after the anchor */
};

static bool is_suspended(const struct bs_state *s)
{
	return s->in->suspend;
}

static bool is_immediate(const struct bs_state *s)
{
	return s->in->immediate && s->in->last_schedule_ms == 0 && !s->in->running;
}

static bool is_busy(const struct bs_state *s)
{
	return s->due && s->in->running;
}

static bool is_late(const struct bs_state *s)
{
	return s->due && s->in->now_ms - s->due_ms > BS_LATE_MS;
}

static bool is_due(const struct bs_state *s)
{
	return s->due;
}

static bool always(const struct bs_state *s)
{
	(void)s;
	return true;
}

static const struct {
	bool (*when)(const struct bs_state *s);
	enum bs_action action;
	const char *reason;
} rules[] = {
	{ is_suspended, BS_SUSPENDED, "suspended: no backup is created" },
	{ is_immediate, BS_CREATE, "spec.immediate: the first backup is taken at once" },
	{ is_busy, BS_BUSY, "a run is due, but a backup of this schedule is still running" },
	{ is_late, BS_CATCH_UP, "runs were missed: one backup for the latest missed time" },
	{ is_due, BS_CREATE, "a run is due" },
	{ always, BS_WAIT, "nothing is due yet" },
};

int bs_decide(const struct bs_input *in, struct bs_decision *out, struct err *e)
{
	struct bs_state s = { .in = in };
	int64_t anchor = in->last_schedule_ms ? in->last_schedule_ms : in->created_ms, t;
	size_t i = 0;

	if (cron_latest(in->cron, in->tz, anchor / 1000, in->now_ms / 1000, &t) == 0) {
		s.due = true;
		s.due_ms = t * 1000;
	}
	if (cron_next(in->cron, in->tz, s.due ? t : anchor / 1000, &t) < 0)
		return err_set(e, -ENOENT, "the schedule never fires (no time in the next %d days)",
		               CRON_SEARCH_DAYS);
	s.after_ms = t * 1000;
	while (!rules[i].when(&s))
		i++;
	*out = (struct bs_decision){ .action = rules[i].action, .reason = rules[i].reason };
	switch (out->action) {
	case BS_SUSPENDED: break;
	case BS_CREATE: /* not due (immediate): nothing fell in (anchor, now], after_ms > now */
		out->schedule_ms = s.due ? s.due_ms : in->now_ms;
		out->next_ms = s.after_ms;
		break;
	case BS_CATCH_UP:
	case BS_BUSY:
		out->schedule_ms = s.due_ms;
		out->next_ms = s.after_ms;
		break;
	case BS_WAIT: out->next_ms = s.after_ms; break;
	}
	return 0;
}

void bs_backup_name(const char *sb_name, int64_t schedule_ms, char out[BS_NAME_MAX + 1])
{
	char ts[RFC3339_MAX], digits[16];
	size_t len = strlen(sb_name), n = 0;

	rfc3339_format(schedule_ms, RFC3339_SECONDS, ts);
	for (const char *p = ts; *p && n < 14; p++)
		if (*p >= '0' && *p <= '9')
			digits[n++] = *p;
	digits[n] = '\0';
	if (len > BS_NAME_MAX - BS_NAME_SUFFIX)
		len = BS_NAME_MAX - BS_NAME_SUFFIX;
	while (len > 0 && (sb_name[len - 1] == '-' || sb_name[len - 1] == '.'))
		len--;
	snprintf(out, BS_NAME_MAX + 1, "%.*s-%s", (int)len, sb_name, digits);
}

/* --- history ------------------------------------------------------------------------------ */

/* true when b[j] is newer than b[i]. */
static bool newer(const struct bs_backup *b, size_t j, size_t i)
{
	if (b[j].created_ms != b[i].created_ms)
		return b[j].created_ms > b[i].created_ms;
	return strcmp(b[j].name ? b[j].name : "", b[i].name ? b[i].name : "") > 0;
}

size_t bs_prune_history(const struct bs_backup *b, size_t n, int64_t keep_completed,
                        int64_t keep_failed, size_t *out)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t keep, rank = 0;

		if (b[i].phase == API_BACKUP_COMPLETED)
			keep = keep_completed;
		else if (b[i].phase == API_BACKUP_FAILED)
			keep = keep_failed;
		else
			continue;
		for (size_t j = 0; j < n; j++) /* how many of its phase are newer */
			rank += j != i && b[j].phase == b[i].phase && newer(b, j, i);
		if (rank >= keep)
			out[k++] = i;
	}
	return k;
}

/* --- retention ---------------------------------------------------------------------------- */

size_t bs_past_retention(const struct bs_artifact *a, size_t n, int64_t retention_ms,
                         int64_t now_ms, size_t *out)
{
	int64_t cutoff = now_ms - retention_ms, newest_ms = 0;
	size_t newest = n, k = 0;

	if (retention_ms <= 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (a[i].completed && a[i].time_ms > 0 &&
		    (newest == n || a[i].time_ms > newest_ms)) {
			newest = i;
			newest_ms = a[i].time_ms;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (i == newest || a[i].locked || a[i].time_ms <= 0 || a[i].time_ms >= cutoff)
			continue;
		if (!a[i].completed && (newest == n || a[i].time_ms >= newest_ms))
			continue; /* perhaps still uploading: only garbage behind a complete backup */
		out[k++] = i;
	}
	return k;
}

/* --- Object Lock before a delete ---------------------------------------------------------- */

enum bs_lock_verdict bs_lock_fold(enum bs_lock_verdict so_far, int rc, bool active)
{
	enum bs_lock_verdict v = rc == -ENOENT ? BS_DELETABLE
	                         : rc < 0      ? BS_LOCK_UNKNOWN
	                         : active      ? BS_LOCKED
	                                       : BS_DELETABLE;

	return v > so_far ? v : so_far;
}

const char *bs_retention_message(const struct bs_kept *k, size_t n, const char **status, char *msg,
                                 size_t cap)
{
	bool locked = false;
	size_t len, shown = 0;

	for (size_t i = 0; i < n; i++)
		locked |= k[i].why == BS_LOCKED;
	*status = n ? "True" : "False";
	if (n == 0) {
		snprintf(msg, cap, "no stored backup past the retention is locked");
		return BS_REASON_NOTHING_LOCKED;
	}
	len = (size_t)snprintf(msg, cap, "%zu stored backup%s past the retention kept:", n,
	                       n == 1 ? "" : "s");
	for (; shown < n && len < cap; shown++) {
		char one[BS_KEY_MAX + BS_DETAIL_MAX + 64];
		bool l = k[shown].why == BS_LOCKED;
		size_t m = (size_t)snprintf(one, sizeof(one), "%s %s (%s%s)", shown ? ";" : "",
		                            k[shown].dir,
		                            l ? "" : "lock state unknown: ", k[shown].detail);

		if (shown > 0 && m + 32 >= cap - len)
			break; /* room for "; and N more" */
		len += (size_t)snprintf(msg + len, cap - len, "%s", one);
	}
	if (shown < n && len < cap)
		snprintf(msg + len, cap - len, "; and %zu more", n - shown);
	return locked ? BS_REASON_LOCKED : BS_REASON_LOCK_UNKNOWN;
}

/* --- the schedule's objects in the store -------------------------------------------------- */

int bs_store_prefix(const char *path, const char *cluster, const char *ns, const char *sb_name,
                    char out[BS_KEY_MAX])
{
	char run[BS_NAME_MAX + 1];
	const char *parts[] = { path ? path : "", cluster, ns, run };

	bs_backup_name(sb_name, 0, run);
	run[strlen(run) - (BS_NAME_SUFFIX - 1)] = '\0'; /* "<sb_name cut>-" */
	return api_backup_key_join(parts, 4, out);      /* the instance's key layout */
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The length of "<14 digits>[.r<digits>]/" at rest, and its time; 0 when rest is not. */
static size_t run_dir(const char *rest, int64_t *time_ms)
{
	char t[32];
	size_t n = 0;

	while (n < 14 && rest[n] >= '0' && rest[n] <= '9')
		n++;
	if (n != 14)
		return 0;
	snprintf(t, sizeof(t), "%.4s-%.2s-%.2sT%.2s:%.2s:%.2sZ", rest, rest + 4, rest + 6, rest + 8,
	         rest + 10, rest + 12);
	if (rfc3339_parse(t, time_ms) < 0)
		return 0;
	if (rest[n] == '.' && rest[n + 1] == 'r' && rest[n + 2] >= '0' && rest[n + 2] <= '9') {
		n += 2;
		while (rest[n] >= '0' && rest[n] <= '9')
			n++;
	}
	return rest[n] == '/' && rest[n + 1] ? n + 1 : 0;
}

/* Whether keys[i]'s first len bytes are the directory d. */
static bool in_dir(const struct bs_stored *d, const char *key, size_t len)
{
	return strncmp(d->dir, key, len) == 0 && d->dir[len] == '\0';
}

/* A new directory for key (its first len bytes), run the prefix's last segment. */
static void new_dir(struct bs_stored *d, const char *key, size_t len, const char *run,
                    const char *digits, int64_t t, size_t i)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "%.*s", (int)len, key);
	snprintf(d->backup, sizeof(d->backup), "%s%.14s", run, digits);
	d->time_ms = t;
	d->first = i;
}

size_t bs_stored_group(const char *prefix, char **keys, size_t n, struct bs_stored *out, size_t max)
{
	size_t p = strlen(prefix), k = 0;
	const char *slash = strrchr(prefix, '/'), *run = slash ? slash + 1 : prefix;

	qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 0; i < n; i++) {
		int64_t t = 0;
		size_t len;

		if (strncmp(keys[i], prefix, p) != 0 || !(len = run_dir(keys[i] + p, &t)))
			continue;
		len += p;
		if (k == 0 || !in_dir(&out[k - 1], keys[i], len)) {
			if (k == max)
				break;
			new_dir(&out[k++], keys[i], len, run, keys[i] + p, t, i);
		}
		out[k - 1].count++;
		out[k - 1].completed |= strcmp(keys[i] + len, BS_MANIFEST) == 0;
	}
	return k;
}

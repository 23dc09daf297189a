/*
 * backup_save: BGSAVE for method rdb when the replication stream is refused (backup.h).
 *
 * The server runs one child at a time: a BGSAVE asked while another BGSAVE, an AOF
 * rewrite or a module's fork runs is refused ("Background save already in progress",
 * "Another child process is active (AOF?): can't BGSAVE right now"). So: wait until INFO
 * persistence shows neither a BGSAVE nor an AOF rewrite, ask, and when the answer is
 * still one of those refusals (a module fork INFO does not show here, or another caller
 * got there first) wait and ask again, all within wait_ms; past it the backup fails
 * (-EBUSY, retryable) saying what still runs. Ours is then awaited to its end
 * (INST_BACKUP_SAVE_MS) and rdb_last_bgsave_status checked.
 */
#include "instance/backup.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/valkey/conn.h"

#define SAVE_POLL_MS 100

static const char *const busy_answers[] = { "in progress", "child process", "rewriting" };

static bool busy_answer(const char *msg)
{
	for (size_t i = 0; i < sizeof(busy_answers) / sizeof(busy_answers[0]); i++)
		if (strstr(msg, busy_answers[i]))
			return true;
	return false;
}

static const char *child_name(const struct vk_info *info)
{
	if (info->rdb_bgsave_in_progress)
		return "a BGSAVE";
	if (info->aof_rewrite_in_progress)
		return "an AOF rewrite";
	return "a child process (a module's fork?)";
}

/* Until no BGSAVE nor AOF rewrite runs, or the deadline (what runs is named). */
static int wait_idle(struct vk_conn *c, const atomic_bool *cancel, int64_t deadline,
                     struct vk_info *info, struct err *e)
{
	int rc;

	for (;;) {
		if ((rc = vk_info(c, "persistence", info, e)) < 0)
			return rc;
		if (!info->rdb_bgsave_in_progress && !info->aof_rewrite_in_progress)
			return 0;
		if (cancel && atomic_load(cancel))
			return err_set(e, -ECANCELED, "cancelled: the manager is stopping");
		if (clock_mono_ms() > deadline)
			return -EBUSY;
		usleep(SAVE_POLL_MS * 1000);
	}
}

static int busy_error(const struct vk_info *info, int64_t wait_ms, struct err *e)
{
	err_clear(e); /* the server's last refusal: this says more */
	return err_set(e, -EBUSY, "BGSAVE not started: %s still runs after %lld s of waiting",
	               child_name(info), (long long)(wait_ms / 1000));
}

/* Ours started: 0; the server still busy at the deadline: -EBUSY. */
static int start(struct vk_conn *c, const atomic_bool *cancel, int64_t wait_ms, struct err *e)
{
	int64_t deadline = clock_mono_ms() + wait_ms;
	struct vk_info info = { 0 };
	int rc;

	for (;;) {
		struct vk_reply *r = NULL;

		if ((rc = wait_idle(c, cancel, deadline, &info, e)) == -EBUSY)
			return busy_error(&info, wait_ms, e);
		if (rc)
			return rc;
		err_clear(e);
		rc = vk_command(c, &r, e, "BGSAVE");
		vk_reply_free(r);
		if (rc == 0 || !busy_answer(e->msg))
			return rc;
		if (clock_mono_ms() > deadline)
			return busy_error(&info, wait_ms, e);
		if (cancel && atomic_load(cancel))
			return err_set(e, -ECANCELED, "cancelled: the manager is stopping");
		usleep(SAVE_POLL_MS * 1000);
	}
}

int inst_bgsave(struct vk_conn *c, const atomic_bool *cancel, int64_t wait_ms, struct err *e)
{
	struct vk_info info;
	int rc = start(c, cancel, wait_ms, e);

	if (rc)
		return rc;
	rc = wait_idle(c, cancel, clock_mono_ms() + INST_BACKUP_SAVE_MS, &info, e);
	if (rc == -EBUSY)
		return err_set(e, -ETIMEDOUT, "BGSAVE still running after %lld s",
		               INST_BACKUP_SAVE_MS / 1000);
	if (rc)
		return rc;
	if (info.rdb_last_bgsave_failed)
		return err_set(e, -EIO,
		               "BGSAVE failed: rdb_last_bgsave_status:err (see the server's "
		               "log; disk full?)");
	return 0;
}

/*
 * backup_common: what the backup and the restore executors share (backup.h): the
 * storage handle of a destination and its credentials (mapped by api/backup_store), the
 * time text of the views, and the stop of an executor's thread.
 */
#include "instance/backup.h"

#include <stdio.h>

#include "api/backup_store.h"
#include "lib/clock.h"
#include "lib/objstore/objstore.h"
#include "lib/rfc3339.h"

struct objstore *inst_backup_store_open(const struct api_destination *d,
                                        const struct api_inst_credentials *k,
                                        struct objstore_err *oe)
{
	return inst_backup_store_open_spooled(d, k, NULL, oe);
}

struct objstore *inst_backup_store_open_spooled(const struct api_destination *d,
                                                const struct api_inst_credentials *k,
                                                const char *spool_dir, struct objstore_err *oe)
{
	struct objstore_config cfg = { .user_agent = "redis-operator-instance" };

	api_backup_store_config(d, k, &cfg);
	cfg.spool_dir = spool_dir;
	return objstore_new(&cfg, oe);
}

void inst_backup_now(char out[32])
{
	char t[RFC3339_MAX];

	rfc3339_format(clock_wall_ms(), RFC3339_SECONDS, t);
	snprintf(out, 32, "%s", t);
}

void inst_backup_thread_stop(atomic_bool *cancel, pthread_t thread, bool joinable)
{
	atomic_store(cancel, true);
	if (joinable)
		pthread_join(thread, NULL);
}

/*
 * backup_leftover: the incomplete S3 multipart uploads of a cluster's earlier backups
 * (backup.h). objstore aborts a failed upload at once, but that abort fails when the
 * store is unreachable, and a killed manager aborts nothing: the upload then stays, its
 * parts stored (and billed) until the bucket's AbortIncompleteMultipartUpload rule, if
 * there is one. So each backup, once completed (its manifest written: the store is
 * reachable, and its own upload is over), lists the incomplete uploads under its
 * cluster's prefix (ListMultipartUploads) and aborts those of a backup's data object,
 * its own earlier attempts' included. Safe because the controller runs one backup of a
 * cluster at a time: while this one runs, every other is over (completed, failed, or its
 * pod gone). Not before each attempt: a store that does not answer would cost every
 * attempt a second connect timeout. Only the exact key shape of a backup is touched: a
 * deeper key (another destination path nested under this one) or any other object is
 * not.
 */
#include "instance/backup.h"

#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/objstore/objstore.h"

void inst_backup_cluster_prefix(const char *key, char out[INST_BACKUP_KEY_MAX])
{
	const char *last = strrchr(key, '/');
	size_t n = last ? (size_t)(last - key) : 0;

	while (n > 0 && key[n - 1] != '/')
		n--;
	snprintf(out, INST_BACKUP_KEY_MAX, "%.*s", (int)n, key);
}

bool inst_backup_leftover_key(const char *cluster_prefix, const char *key)
{
	size_t p = strlen(cluster_prefix);
	const char *dir = key + p, *slash;

	if (strncmp(key, cluster_prefix, p) != 0 || !(slash = strchr(dir, '/')) || slash == dir)
		return false;
	return strcmp(slash + 1, INST_BACKUP_DUMP) == 0 ||
	       strcmp(slash + 1, INST_BACKUP_AOF_ARCHIVE) == 0;
}

struct sweep {
	struct objstore *os;
	const char *prefix, *name;
	unsigned aborted;
};

static int abort_one(void *ctx, const struct objstore_upload_entry *u)
{
	struct sweep *s = ctx;
	struct objstore_err oe;

	if (!inst_backup_leftover_key(s->prefix, u->key))
		return 0;
	if (objstore_abort_multipart(s->os, u->key, u->upload_id, &oe) < 0) {
		log_warn("backup", "cannot abort an incomplete upload", "name", s->name, "key",
		         u->key, "error", oe.err.msg, (char *)NULL);
		return 0;
	}
	s->aborted++;
	log_info("backup", "aborted an incomplete upload of an earlier backup", "name", s->name,
	         "key", u->key, "initiated", u->initiated, (char *)NULL);
	return 0;
}

unsigned inst_backup_abort_leftovers(struct objstore *os, const char *key, const char *name)
{
	char prefix[INST_BACKUP_KEY_MAX];
	struct sweep s = { os, prefix, name, 0 };
	struct objstore_err oe;

	inst_backup_cluster_prefix(key, prefix);
	if (!prefix[0])
		return 0; /* never the whole bucket */
	if (objstore_list_uploads(os, prefix, abort_one, &s, &oe) < 0)
		log_warn("backup", "cannot list the incomplete uploads", "name", name, "prefix",
		         prefix, "error", oe.err.msg, (char *)NULL);
	return s.aborted;
}

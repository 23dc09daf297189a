/*
 * bootstrap: spec.bootstrap.backupName, judged from a view (pure; docs/backup.md,
 * "Bootstrap from a backup").
 *
 *   struct ctl_bootstrap b;
 *   ctl_bootstrap_judge(view, &b);
 *   if (b.blocked) ...create no pod, requeue after b.requeue_ms
 *   desired_bootstrap_pod(rc, cfg, serial, b.restore, b.secret) for the first primary
 *
 * The restore runs once, for the first primary of a brand-new cluster. What is persisted
 * is the condition CTL_COND_BOOTSTRAP in the cluster's status: once True (reason
 * Restored: the first primary's manager said status.restore completed, or it serves as a
 * writable primary, which it never does before its restore completed) the cluster is
 * bootstrapped for good: the backup is no longer read and no pod gets a restore source,
 * so a replacement pod never restores over newer data. A cluster with spec.bootstrap and
 * no such condition whose primary Lease was ever taken ran before this was handled:
 * bootstrapped too (reason NotRestored), nothing is restored.
 *
 * Before that, the first primary is created only from a RedisBackup of that name in the
 * cluster's namespace in phase Completed with a status.manifestKey, and with its
 * credentials Secret present (the destination's credentialsSecret, else the cluster's
 * spec.backupCredentialsSecret; none: workload identity). Otherwise no pod is created,
 * the condition says why (BackupNotFound, BackupInvalid, BackupNotCompleted,
 * CredentialsMissing) and the cluster is looked at again with a back-off. Once the pod
 * exists its manager's status.restore drives the condition (Restoring, RestoreFailed with
 * the manager's error: it retries by itself and never starts an empty server).
 *
 * Pure; any thread.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_BOOTSTRAP_H
#define REDIS_OPERATOR_CONTROLLER_BOOTSTRAP_H

#include <stdbool.h>
#include <stdint.h>

#include "controller/view.h"

#define CTL_COND_BOOTSTRAP      "BootstrapReady"
#define CTL_BOOT_REQUEUE_MIN_MS 1000
#define CTL_BOOT_REQUEUE_MAX_MS 10000
/* The condition's message, also status.phaseReason (the CRD's maxLength: 1024): room for
 * a backup name and the manager's whole restore error (API_INST_BACKUP_ERROR_MAX). */
#define CTL_BOOT_MSG_MAX 1024

struct ctl_bootstrap {
	bool wanted;  /* spec.bootstrap.backupName set: the condition is shown */
	bool done;    /* bootstrapped (persisted by the condition) */
	bool blocked; /* no pod may be created now */
	/* The first primary's restore source (borrowed from the view); NULL: none. */
	const struct api_redis_backup *restore;
	const char *secret; /* its credentials Secret; NULL: none */
	bool ok;            /* the condition's status */
	const char *reason; /* static text */
	char message[CTL_BOOT_MSG_MAX + 1];
	int64_t requeue_ms; /* 0: none */
};

/* True when the cluster's status shows CTL_COND_BOOTSTRAP True (the reconciler then
 * reads no backup). */
bool ctl_bootstrap_done(json_t *cluster);
void ctl_bootstrap_judge(const struct ctl_view *v, struct ctl_bootstrap *out);

#endif

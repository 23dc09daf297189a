/*
 * backup_store: a backup destination and its credentials as the object store's config.
 * One copy for both roles (the controller deletes a backup's objects, the instance
 * manager uploads and restores), so both agree on which credential selects which auth
 * mode: S3 by access key (and session token); Azure by connection string, account key
 * or SAS token, the account from AZURE_STORAGE_ACCOUNT or else destination.azure.
 * accountName. Pure; any thread.
 */
#ifndef REDIS_OPERATOR_API_BACKUP_STORE_H
#define REDIS_OPERATOR_API_BACKUP_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "api/instance_v1.h"
#include "lib/objstore/objstore.h"

/* An object key: the parts joined by '/', each part's own leading and trailing slashes
 * dropped, empty parts skipped ("a/", "/b", "" → "a/b"). The one layout of backup keys:
 * the instance writes under it, the controller's retention lists by it. -ENAMETOOLONG
 * when the key does not fit (out untouched then). */
#define API_BACKUP_KEY_MAX 1024 /* with the NUL */
int api_backup_key_join(const char *const parts[], size_t n, char out[API_BACKUP_KEY_MAX]);

/* Fills cfg's provider, endpoint, bucket and credentials (borrowing from d and k); the
 * caller's other members (user agent, timeouts) are left as they are. */
void api_backup_store_config(const struct api_destination *d, const struct api_inst_credentials *k,
                             struct objstore_config *cfg);

/*
 * Cloud workload identity, which this operator does not support yet: it needs a token
 * exchange with AWS STS (AssumeRoleWithWebIdentity) or Azure AD, which it does not make.
 * A pod shows it by the variables the platform's webhook injects: EKS IRSA
 * AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE; Azure Workload Identity
 * AZURE_FEDERATED_TOKEN_FILE (with AZURE_CLIENT_ID and AZURE_TENANT_ID). When k holds no
 * credential for d's provider and env(ctx, NAME) shows that provider's variables, writes
 * the status message into msg (API_BACKUP_WEB_IDENTITY_MSG_MAX) and returns true; else
 * false, msg untouched. env returns a variable's value, NULL when unset.
 */
#define API_BACKUP_WEB_IDENTITY_MSG_MAX 256
/* The variables api_backup_web_identity looks at, NULL-terminated (the controller keeps
 * just these of a cached pod's container env). */
extern const char *const api_backup_web_identity_vars[];
#define API_BACKUP_WEB_IDENTITY_REASON "WebIdentityUnsupported"
typedef const char *(*api_backup_env_fn)(void *ctx, const char *name);
bool api_backup_web_identity(const struct api_destination *d, const struct api_inst_credentials *k,
                             api_backup_env_fn env, void *ctx,
                             char msg[API_BACKUP_WEB_IDENTITY_MSG_MAX]);

#endif

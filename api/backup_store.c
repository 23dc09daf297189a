/* backup_store: see backup_store.h. */
#include "api/backup_store.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Appends "/part" (or "part" at the start) without part's end slashes; stops at max. */
static size_t key_add(char *out, size_t at, size_t max, const char *part)
{
	size_t n;

	while (*part == '/')
		part++;
	n = strlen(part);
	while (n && part[n - 1] == '/')
		n--;
	if (!n)
		return at;
	if (at && at < max)
		out[at++] = '/';
	for (size_t i = 0; i < n && at < max; i++)
		out[at++] = part[i];
	return at;
}

int api_backup_key_join(const char *const parts[], size_t n, char out[API_BACKUP_KEY_MAX])
{
	char k[API_BACKUP_KEY_MAX];
	size_t at = 0;

	for (size_t i = 0; i < n; i++)
		at = key_add(k, at, sizeof(k), parts[i]);
	if (at >= sizeof(k))
		return -ENAMETOOLONG;
	k[at] = '\0';
	memcpy(out, k, at + 1);
	return 0;
}

void api_backup_store_config(const struct api_destination *d, const struct api_inst_credentials *k,
                             struct objstore_config *cfg)
{
	if (d->s3.set) {
		cfg->provider = OBJSTORE_S3;
		cfg->endpoint = d->s3.endpoint;
		cfg->region = d->s3.region;
		cfg->bucket = d->s3.bucket;
		cfg->path_style = d->s3.force_path_style;
		cfg->access_key_id = k->aws_access_key_id;
		cfg->secret_access_key = k->aws_secret_access_key;
		cfg->session_token = k->aws_session_token;
		return;
	}
	cfg->provider = OBJSTORE_AZURE;
	cfg->endpoint = d->azure.endpoint;
	cfg->bucket = d->azure.container;
	cfg->connection_string = k->azure_connection_string;
	cfg->account = k->azure_account ? k->azure_account : d->azure.account_name;
	cfg->account_key = k->azure_key;
	cfg->sas_token = k->azure_sas_token;
}

static bool set(const char *v)
{
	return v && *v;
}

static bool has_credentials(const struct api_destination *d, const struct api_inst_credentials *k)
{
	if (d->s3.set)
		return set(k->aws_access_key_id) || set(k->aws_secret_access_key);
	return set(k->azure_connection_string) || set(k->azure_key) || set(k->azure_sas_token);
}

#define AWS_ROLE_ARN   "AWS_ROLE_ARN"
#define AWS_TOKEN_FILE "AWS_WEB_IDENTITY_TOKEN_FILE"
#define AZURE_TOKEN    "AZURE_FEDERATED_TOKEN_FILE"

const char *const api_backup_web_identity_vars[] = { AWS_ROLE_ARN, AWS_TOKEN_FILE, AZURE_TOKEN,
	                                             NULL };

bool api_backup_web_identity(const struct api_destination *d, const struct api_inst_credentials *k,
                             api_backup_env_fn env, void *ctx,
                             char msg[API_BACKUP_WEB_IDENTITY_MSG_MAX])
{
	const char *what;

	if (has_credentials(d, k))
		return false;
	if (d->s3.set && set(env(ctx, AWS_ROLE_ARN)) && set(env(ctx, AWS_TOKEN_FILE)))
		what = "AWS web-identity credentials (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE)";
	else if (!d->s3.set && set(env(ctx, AZURE_TOKEN)))
		what = "Azure workload-identity credentials (AZURE_FEDERATED_TOKEN_FILE)";
	else
		return false;
	snprintf(msg, API_BACKUP_WEB_IDENTITY_MSG_MAX,
	         "%s detected but not supported by this operator yet; give a credentials Secret "
	         "(spec.backupCredentialsSecret or the destination's credentialsSecret)",
	         what);
	return true;
}

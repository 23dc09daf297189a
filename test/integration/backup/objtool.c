/*
 * objtool: a tiny command-line client over lib/objstore for the instance's backup checks
 * (test/integration/instance/backup_checks.sh). The store comes from the environment of
 * build/env/s3.env or build/env/azure.env:
 *   objtool s3|azure list PREFIX     "<key> <size> <last-modified>" per object
 *   objtool s3|azure get KEY         the object on stdout
 *   objtool s3|azure put KEY         stdin into the object
 *   objtool s3|azure rm PREFIX       deletes every object under PREFIX
 *   objtool s3|azure uploads PREFIX  "<key> <upload id> <initiated>" per incomplete
 *                                    multipart upload (S3; none on Azure)
 * Exit 0, 1 on a storage error (message on stderr), 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/objstore/objstore.h"

static struct objstore *open_store(const char *provider)
{
	struct objstore_config c = { 0 };
	struct objstore_err oe;
	struct objstore *os;

	if (strcmp(provider, "azure") == 0) {
		c.provider = OBJSTORE_AZURE;
		c.endpoint = getenv("AZURE_BLOB_ENDPOINT");
		c.bucket = getenv("AZURE_CONTAINER");
		c.account = getenv("AZURE_STORAGE_ACCOUNT");
		c.account_key = getenv("AZURE_STORAGE_KEY");
	} else {
		c.provider = OBJSTORE_S3;
		c.endpoint = getenv("S3_ENDPOINT");
		c.region = getenv("S3_REGION");
		c.bucket = getenv("S3_BUCKET");
		c.path_style = true;
		c.access_key_id = getenv("AWS_ACCESS_KEY_ID");
		c.secret_access_key = getenv("AWS_SECRET_ACCESS_KEY");
	}
	os = objstore_new(&c, &oe);
	if (!os)
		fprintf(stderr, "objtool: %s\n", oe.err.msg);
	return os;
}

static int print_entry(void *ctx, const struct objstore_entry *e)
{
	(void)ctx;
	printf("%s %llu %s\n", e->key, (unsigned long long)e->size,
	       e->last_modified ? e->last_modified : "-");
	return 0;
}

static int delete_entry(void *ctx, const struct objstore_entry *e)
{
	return objstore_delete(ctx, e->key, NULL);
}

static int print_upload(void *ctx, const struct objstore_upload_entry *u)
{
	(void)ctx;
	printf("%s %s %s\n", u->key, u->upload_id, u->initiated[0] ? u->initiated : "-");
	return 0;
}

static int to_stdout(void *ctx, const void *buf, size_t n)
{
	(void)ctx;
	return fwrite(buf, 1, n, stdout) == n ? 0 : -5;
}

static ssize_t from_stdin(void *ctx, void *buf, size_t len, struct err *e)
{
	(void)ctx;
	(void)e;
	return read(0, buf, len);
}

int main(int argc, char **argv)
{
	struct objstore_put_result res;
	struct objstore_err oe;
	struct objstore *os;
	int rc = -1;

	if (argc != 4) {
		fprintf(stderr, "usage: objtool s3|azure list|get|put|rm|uploads ARG\n");
		return 2;
	}
	if (!(os = open_store(argv[1])))
		return 1;
	objstore_err_clear(&oe);
	if (strcmp(argv[2], "list") == 0)
		rc = objstore_list(os, argv[3], print_entry, NULL, &oe);
	else if (strcmp(argv[2], "get") == 0)
		rc = objstore_get_stream(os, argv[3], to_stdout, NULL, NULL, &oe);
	else if (strcmp(argv[2], "put") == 0)
		rc = objstore_put_stream(os, argv[3], from_stdin, NULL, &res, &oe);
	else if (strcmp(argv[2], "rm") == 0)
		rc = objstore_list(os, argv[3], delete_entry, os, &oe);
	else if (strcmp(argv[2], "uploads") == 0)
		rc = objstore_list_uploads(os, argv[3], print_upload, NULL, &oe);
	if (rc)
		fprintf(stderr, "objtool: %s\n", oe.err.msg[0] ? oe.err.msg : "failed");
	objstore_free(os);
	return rc ? 1 : 0;
}

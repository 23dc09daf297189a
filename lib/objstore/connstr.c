/*
 * objstore/connstr: the Azure connection-string parser of connstr.h.
 *
 * The parse fills a table of recognised fields (copies of the values), then derives
 * the result from it. Every copy of a value is wiped before it is freed.
 */
#include "connstr.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"
#include "lib/base64.h"

/* Azurite's published development account. */
#define DEV_ACCOUNT "devstoreaccount1"
#define DEV_KEY                                                                                    \
	"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define DEV_ENDPOINT "http://127.0.0.1:10000/" DEV_ACCOUNT

enum field { F_PROTO, F_ACCOUNT, F_KEY, F_BLOB, F_SAS, F_SUFFIX, F_DEV, F_COUNT };

static const char *const field_names[F_COUNT] = {
	[F_PROTO] = "DefaultEndpointsProtocol",
	[F_ACCOUNT] = "AccountName",
	[F_KEY] = "AccountKey",
	[F_BLOB] = "BlobEndpoint",
	[F_SAS] = "SharedAccessSignature",
	[F_SUFFIX] = "EndpointSuffix",
	[F_DEV] = "UseDevelopmentStorage",
};

int objstore_key_decode(const char *s, size_t max, unsigned char **out, size_t *out_len)
{
	char *raw;
	size_t n;

	if (!s || !s[0] || base64_decode(s, strlen(s), 0, &raw, &n))
		return -EINVAL;
	if (n == 0 || n > max) {
		secure_zero(raw, n);
		free(raw);
		return -EINVAL;
	}
	*out = (unsigned char *)raw;
	*out_len = n;
	return 0;
}

void objstore_connstr_release(struct objstore_connstr *c)
{
	if (!c)
		return;
	free_secret(c->account);
	if (c->key)
		secure_zero(c->key, c->key_len);
	free(c->key);
	free_secret(c->sas);
	free_secret(c->blob_endpoint);
	memset(c, 0, sizeof(*c));
}

static void fields_free(char *f[F_COUNT])
{
	for (int i = 0; i < F_COUNT; i++)
		free_secret(f[i]);
}

static int field_of(const char *name, size_t n)
{
	for (int i = 0; i < F_COUNT; i++)
		if (strlen(field_names[i]) == n && strncasecmp(name, field_names[i], n) == 0)
			return i;
	return -1;
}

/* Splits s into the fields; unknown names are skipped, duplicates refused. */
static int split(const char *s, char *f[F_COUNT], struct err *e)
{
	unsigned seg = 0;

	for (const char *p = s; *p;) {
		const char *end = strchr(p, ';'), *eq;
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int id;

		seg++;
		eq = memchr(p, '=', n);
		if (n > 0 && (!eq || eq == p))
			return err_set(e, -EINVAL,
			               "connection string: segment %u has no name=value", seg);
		if (n > 0 && (id = field_of(p, (size_t)(eq - p))) >= 0) {
			if (f[id])
				return err_set(e, -EINVAL, "connection string: %s given twice",
				               field_names[id]);
			f[id] = xstrndup(eq + 1, n - (size_t)(eq + 1 - p));
		}
		p += n + (end ? 1 : 0);
	}
	return 0;
}

/* "acct" from "https://acct.blob.core.windows.net[/...]", or NULL. */
static char *account_from_host(const char *endpoint)
{
	const char *h = strstr(endpoint, "://"), *dot;

	if (!h)
		return NULL;
	h += 3;
	dot = strchr(h, '.');
	if (!dot || dot == h || strncmp(dot, ".blob.", 6) != 0)
		return NULL;
	return xstrndup(h, (size_t)(dot - h));
}

static int check_fields(char *f[F_COUNT], struct err *e)
{
	if (f[F_PROTO] && strcmp(f[F_PROTO], "https") != 0 && strcmp(f[F_PROTO], "http") != 0)
		return err_set(e, -EINVAL,
		               "connection string: DefaultEndpointsProtocol must be http or https");
	if (f[F_BLOB] && strncmp(f[F_BLOB], "https://", 8) != 0 &&
	    strncmp(f[F_BLOB], "http://", 7) != 0)
		return err_set(
		        e, -EINVAL,
		        "connection string: BlobEndpoint must start with http:// or https://");
	if (f[F_ACCOUNT] && !f[F_ACCOUNT][0])
		return err_set(e, -EINVAL, "connection string: AccountName is empty");
	if (f[F_SUFFIX] && !f[F_SUFFIX][0])
		return err_set(e, -EINVAL, "connection string: EndpointSuffix is empty");
	if (!f[F_KEY] && !(f[F_SAS] && f[F_SAS][0]))
		return err_set(e, -EINVAL,
		               "connection string: needs AccountKey or SharedAccessSignature");
	if (f[F_KEY] && !f[F_ACCOUNT])
		return err_set(e, -EINVAL, "connection string: AccountKey needs AccountName");
	if (!f[F_BLOB] && !f[F_ACCOUNT])
		return err_set(e, -EINVAL, "connection string: needs BlobEndpoint or AccountName");
	return 0;
}

/* UseDevelopmentStorage=true stands for Azurite's account; nothing else may be given
 * with it but a DevelopmentStorageProxyUri, which is not supported. */
static int dev_storage(char *f[F_COUNT], struct err *e)
{
	if (strcasecmp(f[F_DEV], "true") != 0)
		return err_set(e, -EINVAL, "connection string: UseDevelopmentStorage must be true");
	for (int i = 0; i < F_COUNT; i++)
		if (i != F_DEV && f[i])
			return err_set(
			        e, -EINVAL,
			        "connection string: %s not allowed with UseDevelopmentStorage",
			        field_names[i]);
	f[F_ACCOUNT] = xstrdup(DEV_ACCOUNT);
	f[F_KEY] = xstrdup(DEV_KEY);
	f[F_BLOB] = xstrdup(DEV_ENDPOINT);
	return 0;
}

static int build(char *f[F_COUNT], struct objstore_connstr *out, struct err *e)
{
	if (f[F_KEY] &&
	    objstore_key_decode(f[F_KEY], OBJSTORE_AZURE_KEY_MAX, &out->key, &out->key_len))
		return err_set(e, -EINVAL, "connection string: AccountKey is not base64");
	if (f[F_BLOB]) {
		size_t n = strlen(f[F_BLOB]);

		while (n > 0 && f[F_BLOB][n - 1] == '/')
			n--;
		out->blob_endpoint = xstrndup(f[F_BLOB], n);
	} else {
		out->blob_endpoint =
		        xasprintf("%s://%s.blob.%s", f[F_PROTO] ? f[F_PROTO] : "https",
		                  f[F_ACCOUNT], f[F_SUFFIX] ? f[F_SUFFIX] : "core.windows.net");
	}
	out->account = f[F_ACCOUNT] ? xstrdup(f[F_ACCOUNT]) : account_from_host(out->blob_endpoint);
	if (f[F_SAS] && f[F_SAS][0])
		out->sas = xstrdup(f[F_SAS] + (f[F_SAS][0] == '?'));
	return 0;
}

int objstore_connstr_parse(const char *s, struct objstore_connstr *out, struct err *e)
{
	char *f[F_COUNT] = { NULL };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!s || !s[0])
		return err_set(e, -EINVAL, "connection string: empty");
	if (strlen(s) > OBJSTORE_CONNSTR_MAX)
		return err_set(e, -EINVAL, "connection string: longer than %d bytes",
		               OBJSTORE_CONNSTR_MAX);
	rc = split(s, f, e);
	if (!rc && f[F_DEV])
		rc = dev_storage(f, e);
	if (!rc)
		rc = check_fields(f, e);
	if (!rc)
		rc = build(f, out, e);
	fields_free(f);
	if (rc)
		objstore_connstr_release(out);
	return rc;
}

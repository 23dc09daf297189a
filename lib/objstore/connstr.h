/*
 * objstore/connstr: Azure Storage connection strings, as in the Secret key
 * AZURE_STORAGE_CONNECTION_STRING.
 *
 *   "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=base64==;EndpointSuffix=core.windows.net"
 *       → account "acct", key (decoded), blob endpoint "https://acct.blob.core.windows.net"
 *   "BlobEndpoint=http://10.0.0.7:10000/devstoreaccount1;AccountName=devstoreaccount1;AccountKey=..."
 *       → the endpoint as given (Azurite: path style, the account in the path)
 *   "BlobEndpoint=https://acct.blob.core.windows.net;SharedAccessSignature=sv=...&sig=..."
 *       → SAS only (the account name is taken from the endpoint's host when not given)
 *   "UseDevelopmentStorage=true" → Azurite's well-known account on 127.0.0.1:10000
 *
 * Segments are separated by ';' (empty ones are skipped) and split at their first '='
 * (values keep any later '=', as base64 keys and SAS tokens have). Names are matched
 * case-insensitively; QueueEndpoint, TableEndpoint, FileEndpoint and other unknown
 * names are ignored. An error names the segment or field and the rule, never a value
 * (the string holds secrets). The result must have a blob endpoint, and an AccountKey
 * (then an account name) or a SharedAccessSignature.
 * Pure; any thread. The struct holds secrets: objstore_connstr_release wipes them.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_CONNSTR_H
#define REDIS_OPERATOR_OBJSTORE_CONNSTR_H

#include <stddef.h>

#include "lib/err.h"

#define OBJSTORE_CONNSTR_MAX   4096 /* longest connection string accepted */
#define OBJSTORE_AZURE_KEY_MAX 128  /* decoded account key bytes (Azure's are 64) */

struct objstore_connstr {
	char *account;      /* NULL when only a SAS and an endpoint without it */
	unsigned char *key; /* decoded AccountKey, NULL when none */
	size_t key_len;
	char *sas;           /* without a leading '?', NULL when none */
	char *blob_endpoint; /* always set on success */
};

/* Parses s into *out (which it initialises). On failure *out is left empty. */
int objstore_connstr_parse(const char *s, struct objstore_connstr *out, struct err *e);
/* Wipes and frees the fields. NULL-safe. */
void objstore_connstr_release(struct objstore_connstr *c);

/* Decodes an account key (strict base64, lib/base64.h) into a new buffer; -EINVAL when s
 * is not base64 or decodes to nothing or to more than max bytes. The buffer is the
 * caller's (wipe it). */
int objstore_key_decode(const char *s, size_t max, unsigned char **out, size_t *out_len);

#endif

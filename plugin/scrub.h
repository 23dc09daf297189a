/*
 * scrub: what keeps secrets out of `kubectl redis report` (report.c), in two layers.
 *
 *  1. By structure: every object goes through lib/redact's redact_json, which marks
 *     every value of a Secret's data and stringData and its
 *     kubectl.kubernetes.io/last-applied-configuration annotation (the Secret as it was
 *     applied); a Secret also loses its managedFields.
 *  2. By value: the report also collects the values of the cluster's Secrets (as
 *     stored, base64, and decoded) and replaces every occurrence of any of them in every
 *     file of the archive (status bodies, logs, events, objects) with REDACT_MARK. Values
 *     shorter than PLUGIN_SCRUB_MIN bytes are left alone (they would blank common words);
 *     the Secret's own values are redacted whatever their length by layer 1.
 *
 * Pure; any thread. Values are wiped when the list is released.
 */
#ifndef REDIS_OPERATOR_PLUGIN_SCRUB_H
#define REDIS_OPERATOR_PLUGIN_SCRUB_H

#include <jansson.h>
#include <stddef.h>

#include "lib/buf.h"

#define PLUGIN_SCRUB_MIN 4

struct plugin_secrets {
	char **v;
	size_t n;
};

/* A copy of obj fit for the report (layer 1; kind says whether it is a Secret, since
 * listed items carry no kind). A new reference. */
json_t *plugin_scrub_object(json_t *obj, const char *kind);
/* Adds the values of a Secret's data (base64 text and decoded bytes) and stringData. */
void plugin_secrets_add_secret(struct plugin_secrets *s, json_t *secret);
void plugin_secrets_release(struct plugin_secrets *s);
/* Replaces every occurrence of every value of s in b with REDACT_MARK (layer 2). */
void plugin_scrub_text(const struct plugin_secrets *s, struct buf *b);

#endif

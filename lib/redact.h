/*
 * redact: what counts as a secret, decided in one place. lib/log runs every field of
 * every line through redact_text, at every level, so a caller that prints a Kubernetes
 * object or a request body cannot leak what it holds:
 *
 *   log_debug("plan", "planned", "plan", json_text, NULL);     Secret values: [REDACTED]
 *   json_t *safe = redact_json(secret);                         a copy fit to print
 *
 * A secret is
 *   - the value of a key that names one: it contains password, passwd, secret, token,
 *     authorization, cookie, privatekey, private_key, credential, apikey, api_key,
 *     masterauth or requirepass, in any case ("redisPassword", "MASTERAUTH"), unless the
 *     key names a reference to one: it ends in "name", "names" or "ref" ("secretName",
 *     "authSecretRef" hold names, which logs need);
 *   - a string that looks like one: an Authorization credential ("Bearer …", "Basic …"),
 *     PEM private key material ("-----BEGIN … PRIVATE KEY-----"), a URL whose userinfo
 *     carries a password ("redis://user:pw@host:6379");
 *   - every value under `data` or `stringData` of a Secret: an object of kind Secret and
 *     everything inside it (a plan action {"kind": "Secret", "body": {"stringData": …}}),
 *     and `stringData` anywhere (only Secrets have it).
 * A redacted value becomes the string REDACT_MARK; keys stay, so a reader still sees which
 * keys an object has. Inside an array under a secret key, every scalar is redacted.
 *
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_REDACT_H
#define REDIS_OPERATOR_REDACT_H

#include <jansson.h>
#include <stdbool.h>

#define REDACT_MARK "[REDACTED]"
/* Values of this many bytes or more are not parsed as JSON by redact_text: they are
 * replaced by REDACT_MARK unless they cannot be JSON (the first byte is not { or [). */
#define REDACT_JSON_MAX (4u << 20)

/* True when the key names a secret (see above). */
bool redact_key_is_sensitive(const char *key);
/* True when the string looks like a secret whatever its key (see above). */
bool redact_value_is_sensitive(const char *value);

/* A deep copy of j with every secret replaced by REDACT_MARK (a new reference; NULL for
 * NULL). j is not changed. */
json_t *redact_json(const json_t *j);
/* The same for j known to be a Secret whatever its "kind" says (the items of a list
 * carry none). */
json_t *redact_json_secret(const json_t *j);

/*
 * value as it may be printed under key (NULL: no key): REDACT_MARK when the key is a
 * secret; for JSON text (an object or array), the text with its secrets redacted, in a
 * new string stored in *owned (free() it), or value itself when it holds none; for other
 * text, REDACT_MARK when it looks like a secret, else value itself. *owned is NULL unless
 * a new string was made. The parsed copy of a redacted text is wiped before it is freed.
 */
const char *redact_text(const char *key, const char *value, char **owned);

#endif

/*
 * redact: the one definition of a secret for logs and dumps (see redact.h).
 *
 * redact_json builds its copy node by node, carrying down how secret the current value
 * is: not at all, by its key (a scalar, or the scalars of an array, under a key that names
 * a secret), or wholly (everything under a Secret's data or stringData, and its
 * last-applied-configuration annotation, which repeats them). Booleans and
 * null are never secrets ("fillPassword": true stays readable); numbers and strings are.
 * redact_text parses only values that can be JSON (first byte { or [): JSON text is
 * judged member by member (a Secret's name stays readable beside its redacted key), any
 * other text as a whole. It wipes its parsed copy: that copy held the secrets it hid.
 */
#include "redact.h"

#include <string.h>
#include <strings.h>

#include "lib/alloc.h"

enum redact_mode {
	REDACT_NONE, /* the value's own looks decide */
	REDACT_KEY,  /* under a secret key: scalars (also inside arrays) go */
	REDACT_ALL,  /* under a Secret's data or stringData: every scalar goes */
};

static const char *const sensitive_words[] = {
	"password", "passwd",     "secret",      "token",      "authorization",
	"cookie",   "privatekey", "private_key", "credential", "apikey",
	"api_key",  "masterauth", "requirepass",
};

/* A key ending so names a secret's name, not the secret ("secretName", "tokenRef"). */
static const char *const reference_suffixes[] = { "name", "names", "ref" };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static bool ends_with_nocase(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

bool redact_key_is_sensitive(const char *key)
{
	bool named = false;

	for (size_t i = 0; i < ARRAY_SIZE(sensitive_words) && !named; i++)
		named = strcasestr(key, sensitive_words[i]) != NULL;
	for (size_t i = 0; i < ARRAY_SIZE(reference_suffixes) && named; i++)
		named = !ends_with_nocase(key, reference_suffixes[i]);
	return named;
}

/* scheme://user:password@host…: a ':' in the userinfo, before the authority's last '@'. */
static bool url_has_password(const char *v)
{
	for (const char *p = strstr(v, "://"); p; p = strstr(p + 3, "://")) {
		const char *auth = p + 3;
		size_t len = strcspn(auth, "/?# \t\n\"'");
		const char *at = NULL;

		for (size_t i = 0; i < len; i++)
			if (auth[i] == '@')
				at = auth + i;
		if (at && memchr(auth, ':', (size_t)(at - auth)))
			return true;
	}
	return false;
}

bool redact_value_is_sensitive(const char *v)
{
	return strncasecmp(v, "Bearer ", 7) == 0 || strncasecmp(v, "Basic ", 6) == 0 ||
	       strstr(v, "PRIVATE KEY-----") != NULL || url_has_password(v);
}

/* --- the copy ------------------------------------------------------------------------- */

static json_t *copy(json_t *j, enum redact_mode mode, bool in_secret, bool *changed);

static json_t *mark(bool *changed)
{
	*changed = true;
	return json_string(REDACT_MARK);
}

static bool is_secret_object(json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));

	return kind && strcmp(kind, "Secret") == 0;
}

/* kubectl's copy of an object as applied: in a Secret, its data again. */
#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* How secret the value under key k of an object is. */
static enum redact_mode member_mode(const char *k, enum redact_mode mode, bool in_secret)
{
	if (mode == REDACT_ALL || strcmp(k, "stringData") == 0 ||
	    (in_secret && (strcmp(k, "data") == 0 || strcmp(k, LAST_APPLIED) == 0)))
		return REDACT_ALL;
	return redact_key_is_sensitive(k) ? REDACT_KEY : REDACT_NONE;
}

static json_t *copy_object(json_t *j, enum redact_mode mode, bool in_secret, bool *changed)
{
	json_t *out = json_object(), *v;
	const char *k;

	in_secret = in_secret || is_secret_object(j);
	json_object_foreach (j, k, v) {
		json_object_set_new(out, k,
		                    copy(v, member_mode(k, mode, in_secret), in_secret, changed));
	}
	return out;
}

static json_t *copy_array(json_t *j, enum redact_mode mode, bool in_secret, bool *changed)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach (j, i, v) {
		json_array_append_new(out, copy(v, mode, in_secret, changed));
	}
	return out;
}

/* An object's members under a secret key decide by their own keys; anything else under
 * one is a scalar of the secret. */
static json_t *copy(json_t *j, enum redact_mode mode, bool in_secret, bool *changed)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return copy_object(j, mode == REDACT_KEY ? REDACT_NONE : mode, in_secret, changed);
	case JSON_ARRAY: return copy_array(j, mode, in_secret, changed);
	case JSON_STRING:
		if (mode != REDACT_NONE || redact_value_is_sensitive(json_string_value(j)))
			return mark(changed);
		return json_copy(j);
	case JSON_INTEGER:
	case JSON_REAL: return mode != REDACT_NONE ? mark(changed) : json_copy(j);
	default: return json_copy(j); /* true, false, null */
	}
}

json_t *redact_json(const json_t *j)
{
	bool changed = false;

	return j ? copy((json_t *)j, REDACT_NONE, false, &changed) : NULL;
}

json_t *redact_json_secret(const json_t *j)
{
	bool changed = false;

	return j ? copy((json_t *)j, REDACT_NONE, true, &changed) : NULL;
}

/* --- text ----------------------------------------------------------------------------- */

/* Zeroes every string of a tree only this module holds. */
static void wipe(json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(j)) {
		secure_zero((void *)json_string_value(j), json_string_length(j));
		return;
	}
	json_object_foreach (j, k, v) {
		wipe(v);
	}
	json_array_foreach (j, i, v) {
		wipe(v);
	}
}

const char *redact_text(const char *key, const char *value, char **owned)
{
	size_t len = strlen(value);
	bool changed = false;
	json_t *j, *safe;

	*owned = NULL;
	if (key && redact_key_is_sensitive(key))
		return REDACT_MARK;
	if (value[0] != '{' && value[0] != '[')
		return redact_value_is_sensitive(value) ? REDACT_MARK : value;
	if (len >= REDACT_JSON_MAX)
		return REDACT_MARK;
	if (!(j = json_loadb(value, len, 0, NULL))) /* text that only starts like JSON */
		return redact_value_is_sensitive(value) ? REDACT_MARK : value;
	safe = copy(j, REDACT_NONE, false, &changed);
	if (changed)
		*owned = json_dumps(safe, JSON_COMPACT);
	json_decref(safe);
	wipe(j);
	json_decref(j);
	return *owned ? *owned : changed ? REDACT_MARK : value;
}

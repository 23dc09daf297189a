/*
 * scrub: the report's two layers of redaction (scrub.h). Values are matched as bytes:
 * a secret with a NUL byte is matched up to it, which only over-redacts.
 */
#include <string.h>

#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/redact.h"
#include "plugin/scrub.h"

json_t *plugin_scrub_object(json_t *obj, const char *kind)
{
	json_t *c;

	if (!kind || strcmp(kind, "Secret") != 0)
		return redact_json(obj);
	c = redact_json_secret(obj); /* data, stringData and the last-applied copy marked */
	json_object_del(json_object_get(c, "metadata"), "managedFields");
	return c;
}

static void add_one(struct plugin_secrets *s, const char *v, size_t n)
{
	s->v = xreallocarray(s->v, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = xstrndup(v, n);
}

/* The value, and its JSON-escaped text when that differs (how the objects hold it). */
static void add(struct plugin_secrets *s, const char *v, size_t n)
{
	json_t *j;
	char *t;

	if (n < PLUGIN_SCRUB_MIN)
		return;
	add_one(s, v, n);
	j = json_stringn(v, n);
	t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	if (t && strlen(t) >= 2 && (strlen(t) - 2 != n || memcmp(t + 1, v, n) != 0))
		add_one(s, t + 1, strlen(t) - 2);
	if (t)
		free_secret(t);
	json_decref(j);
}

void plugin_secrets_add_secret(struct plugin_secrets *s, json_t *secret)
{
	const char *k;
	json_t *v;
	char *dec;
	size_t n;

	json_object_foreach (json_object_get(secret, "data"), k, v) {
		const char *t = json_string_value(v);

		if (!t)
			continue;
		add(s, t, strlen(t));
		if (base64_decode(t, strlen(t), 0, &dec, &n) == 0) {
			add(s, dec, strnlen(dec, n));
			secure_zero(dec, n);
			free(dec);
		}
	}
	json_object_foreach (json_object_get(secret, "stringData"), k, v) {
		if (json_string_value(v))
			add(s, json_string_value(v), strlen(json_string_value(v)));
	}
}

void plugin_secrets_release(struct plugin_secrets *s)
{
	for (size_t i = 0; i < s->n; i++)
		free_secret(s->v[i]);
	free(s->v);
	*s = (struct plugin_secrets){ 0 };
}

/* One value: rebuilds b when it occurs (memmem over the bytes, NULs included). */
static void scrub_one(const char *v, struct buf *b)
{
	size_t n = strlen(v), at = 0;
	struct buf out = BUF_INIT(BUF_NO_LIMIT);
	const char *p;

	if (!b->len || !(p = memmem(b->data, b->len, v, n)))
		return;
	do {
		buf_append(&out, b->data + at, (size_t)(p - (b->data + at)));
		buf_append_str(&out, REDACT_MARK);
		at = (size_t)(p - b->data) + n;
	} while ((p = memmem(b->data + at, b->len - at, v, n)));
	buf_append(&out, b->data + at, b->len - at);
	buf_clear(b);
	buf_append(b, out.data, out.len);
	buf_release_secret(&out);
}

void plugin_scrub_text(const struct plugin_secrets *s, struct buf *b)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i]) >= PLUGIN_SCRUB_MIN)
			scrub_one(s->v[i], b);
}

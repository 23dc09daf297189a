/*
 * yaml: JSON to block-style YAML (yaml.h). A scalar that plain YAML would read as
 * something else is written as a JSON string, which is valid double-quoted YAML.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/alloc.h"
#include "plugin/yaml.h"

static bool needs_quotes(const char *s)
{
	static const char *const words[] = {
		"true", "false", "null", "yes", "no", "on", "off", "~"
	};
	size_t n = strlen(s);

	if (n == 0 || s[0] == ' ' || s[n - 1] == ' ' ||
	    strchr("-?:,[]{}#&*!|>'\"%@`0123456789.+", s[0]))
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(s, words[i]) == 0)
			return true;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f || (*p == ':' && (p[1] == ' ' || !p[1])) ||
		    (*p == '#' && p[-1] == ' '))
			return true;
	return false;
}

static void scalar(json_t *j, struct buf *out)
{
	char *t;

	if (json_is_string(j) && !needs_quotes(json_string_value(j))) {
		buf_append_str(out, json_string_value(j));
		return;
	}
	t = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
	buf_append_str(out, t ? t : "null");
	free(t);
}

static bool is_empty_container(json_t *j)
{
	return (json_is_object(j) && !json_object_size(j)) ||
	       (json_is_array(j) && !json_array_size(j));
}

static void node(json_t *j, int indent, struct buf *out);

/* What follows "key:" or "-": a scalar on the same line, a container on the next ones. */
static void value(json_t *v, int indent, struct buf *out)
{
	if (is_empty_container(v)) {
		buf_append_str(out, json_is_object(v) ? " {}\n" : " []\n");
	} else if (json_is_object(v) || json_is_array(v)) {
		buf_append_char(out, '\n');
		node(v, indent, out);
	} else {
		buf_append_char(out, ' ');
		scalar(v, out);
		buf_append_char(out, '\n');
	}
}

/* A key: plain, or quoted as a JSON string. */
static void key(const char *k, struct buf *out)
{
	json_t *s = json_string(k);

	scalar(s, out);
	json_decref(s);
	buf_append_char(out, ':');
}

/* A container at indent; list items of a mapping's value stay at the key's indent. */
static void node(json_t *j, int indent, struct buf *out)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_object(j)) {
		json_object_foreach (j, k, v) {
			buf_printf(out, "%*s", indent, "");
			key(k, out);
			value(v, json_is_array(v) ? indent : indent + 2, out);
		}
		return;
	}
	json_array_foreach (j, i, v) {
		buf_printf(out, "%*s-", indent, "");
		if (json_is_object(v) && json_object_size(v)) {
			/* the first key on the dash's line, the others under it */
			struct buf sub = BUF_INIT(BUF_NO_LIMIT);

			node(v, indent + 2, &sub);
			buf_printf(out, " %s", buf_cstr(&sub) + indent + 2);
			buf_release(&sub);
		} else {
			value(v, indent + 2, out);
		}
	}
}

void plugin_yaml_emit(json_t *j, struct buf *out)
{
	if (is_empty_container(j) || !(json_is_object(j) || json_is_array(j))) {
		value(j, 0, out);
		return;
	}
	node(j, 0, out);
}

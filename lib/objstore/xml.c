/*
 * objstore/xml: the scanner of xml.h. Every index is checked against the span's length
 * before it is read; nothing is allocated.
 */
#include "xml.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Index of the first occurrence of pat in d[from, len), or len. */
static size_t find(struct objstore_xml_span d, size_t from, const char *pat)
{
	size_t n = strlen(pat);

	for (size_t i = from; i + n <= d.len; i++)
		if (memcmp(d.p + i, pat, n) == 0)
			return i;
	return d.len;
}

static bool starts(struct objstore_xml_span d, size_t at, const char *pat)
{
	size_t n = strlen(pat);

	return at + n <= d.len && memcmp(d.p + at, pat, n) == 0;
}

/* Past the '>' that closes the tag opened at i, honouring quoted attribute values. */
static int tag_end(struct objstore_xml_span d, size_t i, size_t *end)
{
	char quote = 0;

	for (; i < d.len; i++) {
		char c = d.p[i];

		if (quote) {
			if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '>') {
			*end = i + 1;
			return 0;
		}
	}
	return -EPROTO;
}

/* Skips <!-- -->, <? ?>, <![CDATA[ ]]> and <!...> at i; 1 when one was skipped. */
static int skip_special(struct objstore_xml_span d, size_t *i)
{
	static const struct {
		const char *open, *close;
	} kinds[] = { { "<!--", "-->" }, { "<![CDATA[", "]]>" }, { "<?", "?>" }, { "<!", ">" } };

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t at;

		if (!starts(d, *i, kinds[k].open))
			continue;
		at = find(d, *i + strlen(kinds[k].open), kinds[k].close);
		if (at == d.len)
			return -EPROTO;
		*i = at + strlen(kinds[k].close);
		return 1;
	}
	return 0;
}

/* Whether the tag at d.p[i] ('<' or "</") is called name exactly. */
static bool name_at(struct objstore_xml_span d, size_t i, const char *name)
{
	size_t n = strlen(name);

	if (i + n > d.len || memcmp(d.p + i, name, n) != 0)
		return false;
	return i + n < d.len && (d.p[i + n] == '>' || d.p[i + n] == '/' || is_space(d.p[i + n]));
}

/* The end tag </name> at or after from: its start in *at, the index past it in *past. */
static int end_tag(struct objstore_xml_span d, size_t from, const char *name, size_t *at,
                   size_t *past)
{
	for (size_t i = find(d, from, "</"); i < d.len; i = find(d, i + 2, "</")) {
		size_t j = i + 2 + strlen(name);

		if (!name_at(d, i + 2, name))
			continue;
		while (j < d.len && is_space(d.p[j]))
			j++;
		if (j >= d.len || d.p[j] != '>')
			return -EPROTO;
		*at = i;
		*past = j + 1;
		return 0;
	}
	return -EPROTO;
}

int objstore_xml_next(struct objstore_xml_span doc, size_t *pos, const char *name,
                      struct objstore_xml_span *inner)
{
	size_t i = *pos, end, at, past;
	int rc;

	while ((i = find(doc, i, "<")) < doc.len) {
		if ((rc = skip_special(doc, &i)) != 0) {
			if (rc < 0)
				return rc;
			continue;
		}
		if (tag_end(doc, i, &end))
			return -EPROTO;
		if (doc.p[i + 1] == '/' || !name_at(doc, i + 1, name)) {
			i = end;
			continue;
		}
		if (doc.p[end - 2] == '/') { /* <name/> */
			*inner = (struct objstore_xml_span){ doc.p + end, 0 };
			*pos = end;
			return 0;
		}
		if (end_tag(doc, end, name, &at, &past))
			return -EPROTO;
		*inner = (struct objstore_xml_span){ doc.p + end, at - end };
		*pos = past;
		return 0;
	}
	return -ENOENT;
}

/* Writes code point cp as UTF-8; 0 or -EPROTO for what XML text may not hold. */
static int put_utf8(uint32_t cp, char *buf, size_t *n)
{
	if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return -EPROTO;
	if (cp < 0x80) {
		buf[0] = (char)cp;
		*n = 1;
	} else if (cp < 0x800) {
		buf[0] = (char)(0xc0 | (cp >> 6));
		buf[1] = (char)(0x80 | (cp & 0x3f));
		*n = 2;
	} else if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | (cp >> 12));
		buf[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		*n = 3;
	} else {
		buf[0] = (char)(0xf0 | (cp >> 18));
		buf[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		buf[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[3] = (char)(0x80 | (cp & 0x3f));
		*n = 4;
	}
	return 0;
}

static int char_ref(const char *s, size_t n, char *buf, size_t *out_n)
{
	uint32_t cp = 0;
	bool hex = n > 1 && (s[1] == 'x' || s[1] == 'X');
	size_t i = hex ? 2 : 1;

	if (i >= n || n - i > 6)
		return -EPROTO;
	for (; i < n; i++) {
		char c = s[i];
		int v = (c >= '0' && c <= '9')          ? c - '0'
		        : hex && (c >= 'a' && c <= 'f') ? c - 'a' + 10
		        : hex && (c >= 'A' && c <= 'F') ? c - 'A' + 10
		                                        : -1;

		if (v < 0)
			return -EPROTO;
		cp = cp * (hex ? 16u : 10u) + (uint32_t)v;
	}
	return put_utf8(cp, buf, out_n);
}

/* The entity s[0..n) (without '&' and ';') into buf. */
static int entity(const char *s, size_t n, char *buf, size_t *out_n)
{
	static const struct {
		const char *name;
		char c;
	} named[] = {
		{ "amp", '&' }, { "lt", '<' }, { "gt", '>' }, { "quot", '"' }, { "apos", '\'' }
	};

	if (n > 0 && s[0] == '#')
		return char_ref(s, n, buf, out_n);
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i].name) == n && memcmp(s, named[i].name, n) == 0) {
			buf[0] = named[i].c;
			*out_n = 1;
			return 0;
		}
	return -EPROTO;
}

int objstore_xml_text(struct objstore_xml_span s, char *out, size_t cap)
{
	size_t o = 0;

	if (cap == 0)
		return -EMSGSIZE;
	out[0] = '\0';
	for (size_t i = 0; i < s.len;) {
		char buf[4];
		size_t n = 1, semi;

		buf[0] = s.p[i];
		if (s.p[i] == '<')
			return -EPROTO;
		if (s.p[i] == '&') {
			for (semi = i + 1; semi < s.len && semi - i <= 10 && s.p[semi] != ';';
			     semi++)
				;
			if (semi >= s.len || s.p[semi] != ';' ||
			    entity(s.p + i + 1, semi - i - 1, buf, &n))
				return -EPROTO;
			i = semi + 1;
		} else {
			i++;
		}
		if (o + n >= cap)
			return -EMSGSIZE;
		memcpy(out + o, buf, n);
		o += n;
		out[o] = '\0';
	}
	return 0;
}

int objstore_xml_child(struct objstore_xml_span s, const char *name, char *out, size_t cap)
{
	struct objstore_xml_span inner;
	size_t pos = 0;
	int rc = objstore_xml_next(s, &pos, name, &inner);

	return rc ? rc : objstore_xml_text(inner, out, cap);
}

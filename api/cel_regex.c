/*
 * cel_regex: Go regexp patterns (the RE2 subset of cel.h) as POSIX EREs for regcomp(3).
 * A pattern is translated token by token; bracket classes go through a 256-bit set so
 * every member can be written where POSIX wants it. Anything outside the subset is
 * -ENOTSUP: a pattern is never silently read another way.
 */
#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <regex.h>
#include <stdint.h>
#include <string.h>

#include "api/cel.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static size_t digit_run(const char *s)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

struct charset {
	uint8_t bits[32];
};

static void set_add(struct charset *cs, unsigned c)
{
	c &= 0xff;
	cs->bits[c / 8] |= (uint8_t)(1u << (c % 8));
}

static bool set_has(const struct charset *cs, unsigned c)
{
	return cs->bits[c / 8] & (1u << (c % 8));
}

static void set_range(struct charset *cs, unsigned lo, unsigned hi)
{
	for (unsigned c = lo; c <= hi; c++)
		set_add(cs, c);
}

static const struct {
	const char *name;
	int (*is)(int);
} posix_classes[] = {
	{ "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank }, { "cntrl", iscntrl },
	{ "digit", isdigit }, { "graph", isgraph }, { "lower", islower }, { "print", isprint },
	{ "punct", ispunct }, { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
};

/* "[:name:]" at *p inside a class (RE2's ASCII classes). */
static int set_posix_class(const char **p, struct charset *cs)
{
	const char *end = strstr(*p + 2, ":]");
	size_t n;

	if (!end)
		return -ENOTSUP;
	n = (size_t)(end - (*p + 2));
	for (size_t i = 0; i < ARRAY_SIZE(posix_classes); i++) {
		if (strlen(posix_classes[i].name) == n &&
		    !memcmp(*p + 2, posix_classes[i].name, n)) {
			for (int c = 0; c < 128; c++)
				if (posix_classes[i].is(c))
					set_add(cs, (unsigned)c);
			*p = end + 2;
			return 0;
		}
	}
	return -ENOTSUP;
}

/* An escape that names a set (\s \S \d \D \w \W): 1 and cs filled, or 0 when it is not one. */
static int set_named_escape(char c, struct charset *cs, bool *negate)
{
	memset(cs, 0, sizeof(*cs));
	*negate = c == 'S' || c == 'D' || c == 'W';
	switch (tolower((unsigned char)c)) {
	case 's':
		set_add(cs, '\t'), set_add(cs, '\n'), set_add(cs, '\f'), set_add(cs, '\r');
		set_add(cs, ' ');
		return 1;
	case 'd': set_range(cs, '0', '9'); return 1;
	case 'w':
		set_range(cs, '0', '9'), set_range(cs, 'A', 'Z'), set_range(cs, 'a', 'z');
		set_add(cs, '_');
		return 1;
	default: return 0;
	}
}

/* One literal byte after a backslash at *p (pointing past the backslash): -1 if none. */
static int escaped_byte(const char **p)
{
	const char *s = *p;
	int hi, lo;

	if (*s == 'x') {
		hi = hex_value(s[1]);
		lo = hi < 0 ? -1 : hex_value(s[2]);
		if (lo < 0)
			return -1;
		*p = s + 3;
		return hi * 16 + lo;
	}
	if (*s && strchr(".*+?()[]{}|\\/-^$", *s)) {
		*p = s + 1;
		return (unsigned char)*s;
	}
	return -1;
}

/* One member of a class at *p: a byte (for ranges), or a whole set merged into cs. */
static int class_member(const char **p, struct charset *cs, int *byte)
{
	struct charset named;
	bool negate;

	*byte = -1;
	if ((*p)[0] == '[' && (*p)[1] == ':')
		return set_posix_class(p, cs);
	if (**p != '\\') {
		if ((unsigned char)**p >= 0x80)
			return -ENOTSUP; /* a rune, not a byte: keep classes ASCII */
		*byte = (unsigned char)*(*p)++;
		return 0;
	}
	(*p)++;
	if (set_named_escape(**p, &named, &negate)) {
		for (unsigned c = 0; c < 256; c++)
			if (set_has(&named, c) != negate)
				set_add(cs, c);
		(*p)++;
		return 0;
	}
	*byte = escaped_byte(p);
	return *byte < 0 ? -ENOTSUP : 0;
}

/* "[...]" at *p into cs; *negate for "[^...]". */
static int parse_class(const char **p, struct charset *cs, bool *negate)
{
	int lo, hi, rc;

	memset(cs, 0, sizeof(*cs));
	(*p)++;
	*negate = **p == '^';
	*p += *negate;
	if (**p == ']')
		return -ENOTSUP;
	while (**p != ']') {
		if (!**p)
			return -ENOTSUP;
		rc = class_member(p, cs, &lo);
		if (rc)
			return rc;
		if (lo < 0 || (*p)[0] != '-' || (*p)[1] == ']') {
			if (lo >= 0)
				set_add(cs, (unsigned)lo);
			continue;
		}
		(*p)++;
		rc = class_member(p, cs, &hi);
		if (rc || hi < lo)
			return rc ? rc : -ENOTSUP;
		set_range(cs, (unsigned)lo, (unsigned)hi);
	}
	(*p)++;
	return 0;
}

/*
 * Writes cs as a POSIX bracket expression. NUL is left out: C strings never hold one.
 * Placement rules: ']' first, '-' last, '^' never first, and '[' only where it cannot
 * start "[:" (after every ordinary member, before '^' and '-').
 */
static int emit_set(struct charset cs, bool negate, struct buf *out)
{
	bool rb = set_has(&cs, ']'), lb = set_has(&cs, '['), caret = set_has(&cs, '^');
	bool dash = set_has(&cs, '-'), ordinary = false;

	for (unsigned c = 1; c < 256; c++)
		ordinary |= set_has(&cs, c) && !strchr("]-^[", (int)c);
	if (!(rb || lb || caret || dash || ordinary))
		return -ENOTSUP; /* an empty class */
	if (!negate && caret && !(rb || lb || ordinary)) {
		buf_append_str(out, dash ? "[-^]" : "\\^"); /* "[^]" would negate */
		return 0;
	}
	buf_append_str(out, negate ? "[^" : "[");
	if (rb)
		buf_append_char(out, ']');
	for (unsigned c = 1; c < 256; c++)
		if (set_has(&cs, c) && !strchr("]-^[", (int)c))
			buf_append_char(out, (char)c);
	if (lb)
		buf_append_char(out, '[');
	if (caret)
		buf_append_char(out, '^');
	if (dash)
		buf_append_char(out, '-');
	buf_append_char(out, ']');
	return 0;
}

/* "{m}", "{m,}" or "{m,n}" at *p, copied. */
static int copy_repeat(const char **p, struct buf *out)
{
	const char *s = *p + 1;
	size_t n = digit_run(s);

	if (!n)
		return -ENOTSUP;
	s += n;
	if (*s == ',')
		s += 1 + digit_run(s + 1);
	if (*s != '}')
		return -ENOTSUP;
	buf_append(out, *p, (size_t)(s + 1 - *p));
	*p = s + 1;
	return 0;
}

/* A literal byte outside classes: letters become [xX] inside (?i:...). */
static int emit_literal(unsigned c, bool icase, struct buf *out)
{
	struct charset cs = { { 0 } };

	if (icase && isalpha((int)c)) {
		set_add(&cs, (unsigned)tolower((int)c));
		set_add(&cs, (unsigned)toupper((int)c));
		return emit_set(cs, false, out);
	}
	if (c == '^') {
		buf_append_str(out, "\\^");
		return 0;
	}
	if (c == 0)
		return -ENOTSUP;
	if (strchr(".*+?()[]{}|\\$", (int)c)) {
		set_add(&cs, c);
		return emit_set(cs, false, out);
	}
	buf_append_char(out, (char)c);
	return 0;
}

/* A backslash escape outside classes at *p. */
static int translate_escape(const char **p, bool icase, struct buf *out)
{
	struct charset cs;
	bool negate;
	int c;

	(*p)++;
	if (set_named_escape(**p, &cs, &negate)) {
		(*p)++;
		return emit_set(cs, negate, out);
	}
	c = escaped_byte(p);
	return c < 0 ? -ENOTSUP : emit_literal((unsigned)c, icase, out);
}

struct re_state {
	int depth, icase_depth; /* icase_depth: the group depth of (?i:, or -1 */
	bool after_repeat;      /* the previous token was a quantifier */
};

/* One token of the pattern at *p. */
static int translate_token(const char **p, struct re_state *st, struct buf *out)
{
	char c = **p;
	bool icase = st->icase_depth >= 0;
	struct charset cs;
	bool negate, repeat = strchr("*+?", c) != NULL;
	int rc = 0;

	if (c == '?' && st->after_repeat) { /* non-greedy: same verdicts */
		(*p)++;
		return 0;
	}
	if (c == '\\')
		rc = translate_escape(p, icase, out);
	else if (c == '[' && icase)
		rc = -ENOTSUP;
	else if (c == '[')
		rc = parse_class(p, &cs, &negate) ? -ENOTSUP : emit_set(cs, negate, out);
	else if (c == '{')
		rc = copy_repeat(p, out), repeat = true;
	else if (c == '(' && (*p)[1] == '?') {
		if (strncmp(*p, "(?i:", 4) != 0 || icase)
			return -ENOTSUP;
		st->icase_depth = ++st->depth;
		buf_append_char(out, '(');
		*p += 4;
	} else if (c == '(' || c == ')') {
		if (c == ')' && st->depth == st->icase_depth)
			st->icase_depth = -1;
		st->depth += c == '(' ? 1 : -1;
		buf_append_char(out, *(*p)++);
	} else if (strchr(".^$|*+?", c)) {
		buf_append_char(out, *(*p)++);
	} else {
		rc = emit_literal((unsigned char)*(*p)++, icase, out);
	}
	st->after_repeat = repeat;
	return rc;
}

int api_cel_regex_to_posix(const char *pattern, struct buf *out)
{
	struct re_state st = { 0, -1, false };
	const char *p = pattern;
	size_t start = out->len;
	int rc = 0;

	while (*p && rc == 0)
		rc = translate_token(&p, &st, out);
	if (rc == 0 && st.depth != 0)
		rc = -ENOTSUP;
	if (rc) {
		out->len = start;
		if (out->data)
			out->data[start] = '\0';
	}
	return rc;
}

int api_cel_matches(const char *pattern, const char *s)
{
	struct buf ere = BUF_INIT(BUF_NO_LIMIT);
	locale_t c_locale, saved;
	regex_t re;
	int rc = api_cel_regex_to_posix(pattern, &ere);

	if (rc)
		goto out;
	/* byte ranges and classes as in the C locale, whatever the process set */
	c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	saved = c_locale ? uselocale(c_locale) : (locale_t)0;
	rc = regcomp(&re, buf_cstr(&ere), REG_EXTENDED | REG_NOSUB) ? -ENOTSUP : 0;
	if (rc == 0) {
		rc = regexec(&re, s, 0, NULL, 0) == 0;
		regfree(&re);
	}
	if (c_locale) {
		uselocale(saved);
		freelocale(c_locale);
	}
out:
	buf_release(&ere);
	return rc;
}

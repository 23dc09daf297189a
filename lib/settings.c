/*
 * settings: table-driven flags, environment, help and dump (see settings.h).
 *
 * One row of settings_types per enum settings_type holds what is type-specific: the
 * name shown in help, how to parse and store a text, how to print a stored value.
 * settings_load parses only the winning text of each entry, appends every problem to
 * the caller's buffer, and on failure releases what it stored, so the caller's struct
 * owns nothing. Strings are xstrdup'ed; sensitive ones are wiped on release, and a
 * parser's message about a sensitive value (which quotes it) is wiped unread.
 */
#include "settings.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "buf.h"
#include "err.h"
#include "parse.h"

#define FIELD(values, d) ((char *)(values) + (d)->offset)
#define HELP_INDENT      "      "

struct settings_type_info {
	const char *name; /* in help and in redacted errors */
	int (*set)(const struct settings_desc *d, const char *text, void *field, struct err *e);
	void (*show)(const void *field, struct buf *out);
};

static bool is_bounded(const struct settings_desc *d)
{
	return d->min || d->max;
}

static bool is_string(const struct settings_desc *d)
{
	return d->type == SETTINGS_STRING || d->type == SETTINGS_ENUM;
}

/* --- printing values ------------------------------------------------------------- */

static const struct {
	const char *unit;
	uint64_t ms;
} duration_parts[] = {
	{ "d", 86400000 },
	{ "h", 3600000 },
	{ "m", 60000 },
};

/* Go-like and re-parseable: "0s", "250ms", "1.5s", "1m30s", "1d2h", "1h1ms". */
static void format_duration(struct buf *out, uint64_t ms)
{
	uint64_t frac;

	if (ms == 0) {
		buf_append_str(out, "0s");
		return;
	}
	for (size_t i = 0; i < sizeof(duration_parts) / sizeof(duration_parts[0]); i++) {
		if (ms >= duration_parts[i].ms) {
			buf_printf(out, "%" PRIu64 "%s", ms / duration_parts[i].ms,
			           duration_parts[i].unit);
			ms %= duration_parts[i].ms;
		}
	}
	frac = ms % 1000;
	if (ms == 0)
		return;
	if (ms < 1000)
		buf_printf(out, "%" PRIu64 "ms", ms);
	else if (frac == 0)
		buf_printf(out, "%" PRIu64 "s", ms / 1000);
	else if (frac % 100 == 0)
		buf_printf(out, "%" PRIu64 ".%" PRIu64 "s", ms / 1000, frac / 100);
	else if (frac % 10 == 0)
		buf_printf(out, "%" PRIu64 ".%02" PRIu64 "s", ms / 1000, frac / 10);
	else
		buf_printf(out, "%" PRIu64 ".%03" PRIu64 "s", ms / 1000, frac);
}

/* "1Gi" when exact, else the plain number: both parse back to the same value. */
static void format_bytes(struct buf *out, uint64_t v)
{
	static const char *const suffixes[] = { "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
	int i;

	for (i = 6; i > 0; i--)
		if (v && v % (1ULL << (10 * i)) == 0)
			break;
	buf_printf(out, "%" PRIu64 "%s", v >> (10 * i), i ? suffixes[i - 1] : "");
}

static void show_string(const void *field, struct buf *out)
{
	const char *s = *(char *const *)field;

	buf_append_str(out, s ? s : "");
}

static void show_int(const void *field, struct buf *out)
{
	buf_printf(out, "%" PRId64, *(const int64_t *)field);
}

static void show_bool(const void *field, struct buf *out)
{
	buf_append_str(out, *(const bool *)field ? "true" : "false");
}

static void show_duration(const void *field, struct buf *out)
{
	int64_t ms = *(const int64_t *)field;

	if (ms < 0)
		buf_printf(out, "%" PRId64 "ms", ms);
	else
		format_duration(out, (uint64_t)ms);
}

static void show_bytes(const void *field, struct buf *out)
{
	format_bytes(out, *(const uint64_t *)field);
}

/* A bound of d as its type prints values. */
static void show_bound(const struct settings_desc *d, int64_t v, struct buf *out)
{
	if (d->type == SETTINGS_DURATION)
		show_duration(&v, out);
	else if (d->type == SETTINGS_BYTES && v >= 0)
		format_bytes(out, (uint64_t)v);
	else
		show_int(&v, out);
}

/* "json, logfmt" or "json|logfmt". */
static void show_choices(const struct settings_desc *d, const char *sep, struct buf *out)
{
	for (size_t i = 0; d->choices && d->choices[i]; i++)
		buf_printf(out, "%s%s", i ? sep : "", d->choices[i]);
}

/* "1..64", "at least 1s", or nothing when unbounded. */
static void show_bounds(const struct settings_desc *d, struct buf *out)
{
	if (!is_bounded(d))
		return;
	if (d->max == INT64_MAX) {
		buf_append_str(out, "at least ");
		show_bound(d, d->min, out);
		return;
	}
	buf_append_str(out, "range ");
	show_bound(d, d->min, out);
	buf_append_str(out, "..");
	show_bound(d, d->max, out);
}

/* --- parsing and storing --------------------------------------------------------- */

/* -ERANGE with "<v> is below the minimum <min>" when v is outside d's bounds. */
static int check_range(const struct settings_desc *d, uint64_t v, struct err *e)
{
	uint64_t lo = d->min > 0 ? (uint64_t)d->min : 0, hi = d->max > 0 ? (uint64_t)d->max : 0;
	struct buf got = BUF_INIT(BUF_NO_LIMIT), bound = BUF_INIT(BUF_NO_LIMIT);
	int rc;

	if (!is_bounded(d) || (v >= lo && v <= hi))
		return 0;
	if (d->type == SETTINGS_DURATION)
		format_duration(&got, v);
	else
		format_bytes(&got, v);
	show_bound(d, v < lo ? d->min : d->max, &bound);
	rc = err_set(e, -ERANGE, "%s is %s %s", buf_cstr(&got),
	             v < lo ? "below the minimum" : "above the maximum", buf_cstr(&bound));
	buf_release(&got);
	buf_release(&bound);
	return rc;
}

static int set_string(const struct settings_desc *d, const char *text, void *field, struct err *e)
{
	(void)d;
	(void)e;
	*(char **)field = xstrdup(text);
	return 0;
}

static int set_int(const struct settings_desc *d, const char *text, void *field, struct err *e)
{
	int64_t v;
	int rc = parse_int64(text, is_bounded(d) ? d->min : INT64_MIN,
	                     is_bounded(d) ? d->max : INT64_MAX, &v, e);

	if (rc == 0)
		*(int64_t *)field = v;
	return rc;
}

static int set_bool(const struct settings_desc *d, const char *text, void *field, struct err *e)
{
	bool v;
	int rc = parse_bool(text, &v, e);

	(void)d;
	if (rc == 0)
		*(bool *)field = v;
	return rc;
}

static int set_duration(const struct settings_desc *d, const char *text, void *field, struct err *e)
{
	int64_t ms;
	int rc = parse_duration_ms(text, &ms, e);

	if (rc == 0)
		rc = check_range(d, (uint64_t)ms, e);
	if (rc == 0)
		*(int64_t *)field = ms;
	return rc;
}

static int set_bytes(const struct settings_desc *d, const char *text, void *field, struct err *e)
{
	uint64_t v;
	int rc = parse_quantity_bytes(text, &v, e);

	if (rc == 0)
		rc = check_range(d, v, e);
	if (rc == 0)
		*(uint64_t *)field = v;
	return rc;
}

static int set_enum(const struct settings_desc *d, const char *text, void *field, struct err *e)
{
	struct buf choices = BUF_INIT(BUF_NO_LIMIT);
	char q[PARSE_QUOTE_MAX];
	int rc;

	for (size_t i = 0; d->choices && d->choices[i]; i++) {
		if (strcmp(text, d->choices[i]) == 0) {
			*(char **)field = xstrdup(text);
			return 0;
		}
	}
	show_choices(d, ", ", &choices);
	rc = err_set(e, -EINVAL, "%s is not one of %s", parse_quote(text, q, sizeof(q)),
	             buf_cstr(&choices));
	buf_release(&choices);
	return rc;
}

/* Indexed by enum settings_type. */
static const struct settings_type_info settings_types[] = {
	[SETTINGS_STRING] = { "STRING", set_string, show_string },
	[SETTINGS_INT] = { "INT", set_int, show_int },
	[SETTINGS_BOOL] = { "BOOL", set_bool, show_bool },
	[SETTINGS_DURATION] = { "DURATION", set_duration, show_duration },
	[SETTINGS_BYTES] = { "BYTES", set_bytes, show_bytes },
	[SETTINGS_ENUM] = { "ENUM", set_enum, show_string },
};

/* --- loading --------------------------------------------------------------------- */

struct settings_loader {
	const struct settings_desc *table;
	size_t n;
	const char *env_prefix;
	char **envp;
	struct buf *errors;
	size_t nerrors;
};

static void load_error(struct settings_loader *l, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

static void load_error(struct settings_loader *l, const char *fmt, ...)
{
	va_list ap;

	l->nerrors++;
	if (!l->errors)
		return;
	va_start(ap, fmt);
	buf_vprintf(l->errors, fmt, ap);
	va_end(ap);
	buf_append_char(l->errors, '\n');
}

static bool name_is_valid(const char *name)
{
	if (!name || !*name)
		return false;
	for (; *name; name++)
		if (!((*name >= 'a' && *name <= 'z') || (*name >= '0' && *name <= '9') ||
		      *name == '-'))
			return false;
	return true;
}

/* "<prefix>POLL_PERIOD" for "poll-period"; free() it. */
static char *env_name(const char *prefix, const char *name)
{
	char *s = xasprintf("%s%s", prefix ? prefix : "", name);

	for (char *p = s + strlen(s) - strlen(name); *p; p++)
		*p = *p == '-' ? '_' : (*p >= 'a' && *p <= 'z') ? (char)(*p - 'a' + 'A') : *p;
	return s;
}

static const char *env_lookup(char **envp, const char *name)
{
	size_t len = strlen(name);

	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, len) == 0 && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

static const struct settings_desc *find_desc(const struct settings_loader *l, const char *name,
                                             size_t len)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->table[i].name) == len && memcmp(l->table[i].name, name, len) == 0)
			return &l->table[i];
	return NULL;
}

/*
 * Records one flag ("--name=v", "--name v", bare "--bool") in flags[]; returns how many
 * arguments after arg it consumed (0 or 1). Never echoes the value of an unknown flag:
 * "--pasword=hunter2" must not print hunter2.
 */
static int scan_flag(struct settings_loader *l, const char *arg, const char *next,
                     const char **flags)
{
	const char *name = arg + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct settings_desc *d = arg[1] == '-' ? find_desc(l, name, len) : NULL;

	if (!d) {
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		load_error(l, "%.*s%s: unknown flag", len > 64 ? 64 : (int)len, arg,
		           len > 64 ? "..." : "");
		return 0;
	}
	if (eq) {
		flags[d - l->table] = eq + 1;
		return 0;
	}
	if (d->type == SETTINGS_BOOL) {
		flags[d - l->table] = "true";
		return 0;
	}
	if (!next || strncmp(next, "--", 2) == 0) {
		load_error(l, "--%s: missing value", d->name);
		return 0;
	}
	flags[d - l->table] = next;
	return 1;
}

/* Fills flags[] from argv; SETTINGS_HELP, or 0 with *next_arg set. */
static int scan_flags(struct settings_loader *l, int argc, char **argv, const char **flags,
                      int *next_arg)
{
	int i;

	for (i = argc > 0 ? 1 : 0; i < argc; i++) {
		const char *arg = argv[i];

		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-' || arg[1] == '\0')
			break;
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
			return SETTINGS_HELP;
		i += scan_flag(l, arg, i + 1 < argc ? argv[i + 1] : NULL, flags);
	}
	*next_arg = i;
	return 0;
}

static void report_invalid(struct settings_loader *l, const struct settings_desc *d,
                           const char *source, struct err *e)
{
	struct buf expect = BUF_INIT(BUF_NO_LIMIT);

	if (!d->sensitive) {
		load_error(l, "%s: %s", source, e->msg);
		return;
	}
	secure_zero(e, sizeof(*e));
	buf_append_str(&expect, settings_types[d->type].name);
	if (d->type == SETTINGS_ENUM) {
		buf_append_str(&expect, ": ");
		show_choices(d, ", ", &expect);
	} else if (is_bounded(d)) {
		buf_append_str(&expect, ", ");
		show_bounds(d, &expect);
	}
	load_error(l, "%s: invalid value [REDACTED] (expected %s)", source, buf_cstr(&expect));
	buf_release(&expect);
}

/* Parses the winning text of d (flag, else non-empty environment, else default). */
static void load_entry(struct settings_loader *l, const struct settings_desc *d, const char *flag,
                       void *out)
{
	char *env = env_name(l->env_prefix, d->name), *source;
	const char *env_value = env_lookup(l->envp, env), *text;
	struct err e;

	if (flag) {
		text = flag;
		source = xasprintf("--%s", d->name);
	} else if (env_value && *env_value) {
		text = env_value;
		source = xstrdup(env);
	} else {
		text = d->def;
		source = xasprintf("%s default", d->name);
	}
	err_clear(&e);
	if ((!text || !*text) && d->required)
		load_error(l, "--%s: required (set --%s or %s)", d->name, d->name, env);
	else if (text && settings_types[d->type].set(d, text, FIELD(out, d), &e))
		report_invalid(l, d, source, &e);
	free(source);
	free(env);
}

static void field_clear(const struct settings_desc *d, void *field)
{
	switch (d->type) {
	case SETTINGS_STRING:
	case SETTINGS_ENUM: *(char **)field = NULL; break;
	case SETTINGS_INT:
	case SETTINGS_DURATION: *(int64_t *)field = 0; break;
	case SETTINGS_BOOL: *(bool *)field = false; break;
	case SETTINGS_BYTES: *(uint64_t *)field = 0; break;
	}
}

int settings_load(const struct settings_desc *table, size_t n, const char *env_prefix, char **envp,
                  int argc, char **argv, int *next_arg, void *out, struct buf *errors)
{
	struct settings_loader l = { table, n, env_prefix, envp ? envp : environ, errors, 0 };
	const char **flags = xcalloc(n ? n : 1, sizeof(*flags));
	int rc, next = 0;

	for (size_t i = 0; i < n; i++) {
		assert(name_is_valid(table[i].name));
		assert((unsigned)table[i].type <
		       sizeof(settings_types) / sizeof(settings_types[0]));
		assert(table[i].type != SETTINGS_ENUM || table[i].choices);
		field_clear(&table[i], FIELD(out, &table[i]));
	}
	rc = scan_flags(&l, argc, argv, flags, &next);
	if (rc == SETTINGS_HELP)
		goto out;
	for (size_t i = 0; i < n; i++)
		load_entry(&l, &table[i], flags[i], out);
	if (l.nerrors) {
		settings_release(table, n, out);
		rc = -EINVAL;
		goto out;
	}
	if (next_arg)
		*next_arg = next;
out:
	free(flags);
	return rc;
}

void settings_release(const struct settings_desc *table, size_t n, void *values)
{
	if (!values)
		return;
	for (size_t i = 0; i < n; i++) {
		char **field = (char **)FIELD(values, &table[i]);

		if (!is_string(&table[i]))
			continue;
		if (table[i].sensitive)
			free_secret(*field);
		else
			free(*field);
		*field = NULL;
	}
}

/* --- help and dump --------------------------------------------------------------- */

static void help_flag(const struct settings_desc *d, struct buf *out)
{
	buf_printf(out, "--%s", d->name);
	if (d->type == SETTINGS_BOOL) {
		buf_append_str(out, "[=BOOL]");
		return;
	}
	buf_append_char(out, '=');
	if (d->type == SETTINGS_ENUM)
		show_choices(d, "|", out);
	else
		buf_append_str(out, settings_types[d->type].name);
}

/* "default 4, range 1..64", "required", ... */
static void help_notes(const struct settings_desc *d, struct buf *out)
{
	if (d->def)
		buf_printf(out, "default %s", d->sensitive ? "[REDACTED]" : d->def);
	if (d->required)
		buf_printf(out, "%srequired", out->len ? ", " : "");
	if (is_bounded(d) && d->type != SETTINGS_ENUM) {
		if (out->len)
			buf_append_str(out, ", ");
		show_bounds(d, out);
	}
}

static int help_width(const struct settings_desc *table, size_t n, const char *env_prefix, bool env)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	size_t w = env ? 0 : strlen("-h, --help");

	for (size_t i = 0; i < n; i++) {
		buf_clear(&b);
		if (env) {
			char *name = env_name(env_prefix, table[i].name);

			buf_append_str(&b, name);
			free(name);
		} else {
			help_flag(&table[i], &b);
		}
		w = b.len > w ? b.len : w;
	}
	buf_release(&b);
	return (int)w;
}

void settings_help(const struct settings_desc *table, size_t n, const char *env_prefix, FILE *out)
{
	int wflag = help_width(table, n, env_prefix, false);
	int wenv = help_width(table, n, env_prefix, true);
	struct buf flag = BUF_INIT(BUF_NO_LIMIT), notes = BUF_INIT(BUF_NO_LIMIT);

	fputs("Options (flags override environment variables, which override defaults):\n", out);
	for (size_t i = 0; i < n; i++) {
		char *env = env_name(env_prefix, table[i].name);

		buf_clear(&flag);
		buf_clear(&notes);
		help_flag(&table[i], &flag);
		help_notes(&table[i], &notes);
		if (notes.len)
			fprintf(out, "  %-*s  %-*s  %s\n", wflag, buf_cstr(&flag), wenv, env,
			        buf_cstr(&notes));
		else
			fprintf(out, "  %-*s  %s\n", wflag, buf_cstr(&flag), env);
		if (table[i].help)
			fprintf(out, HELP_INDENT "%s\n", table[i].help);
		free(env);
	}
	fprintf(out, "  %-*s  show this help and exit\n", wflag, "-h, --help");
	buf_release(&flag);
	buf_release(&notes);
}

static bool logfmt_needs_quotes(const char *s)
{
	for (; *s; s++)
		if (*s == ' ' || *s == '"' || *s == '=' || *s == '\\' || (unsigned char)*s < 0x20 ||
		    *s == 0x7f)
			return true;
	return false;
}

static void append_logfmt_value(struct buf *out, const char *s)
{
	if (!logfmt_needs_quotes(s)) {
		buf_append_str(out, s);
		return;
	}
	buf_append_char(out, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			buf_printf(out, "\\%c", c);
		else if (c == '\n')
			buf_append_str(out, "\\n");
		else if (c < 0x20 || c == 0x7f)
			buf_printf(out, "\\x%02x", c);
		else
			buf_append_char(out, (char)c);
	}
	buf_append_char(out, '"');
}

void settings_dump(const struct settings_desc *table, size_t n, const void *values, struct buf *out)
{
	struct buf v = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < n; i++) {
		const struct settings_desc *d = &table[i];
		const void *field = (const char *)values + d->offset;

		buf_printf(out, "%s%s=", i ? " " : "", d->name);
		if (d->sensitive) {
			if (!is_string(d) || *(char *const *)field)
				buf_append_str(out, "[REDACTED]");
			continue;
		}
		buf_clear(&v);
		settings_types[d->type].show(field, &v);
		append_logfmt_value(out, buf_cstr(&v));
	}
	buf_release(&v);
}

/*
 * imagemap: the image → host binaries map (see imagemap.h).
 * The parser works on one bounded line at a time, in a stack buffer; every string it
 * keeps is a fresh copy owned by the map. A map is built completely or not at all.
 */
#include "imagemap.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/file.h"

struct imagemap_ctx {
	const char *source;
	int line;
	const char *base_dir;
	const struct imagemap_var *vars;
	size_t n_vars;
	struct err *e;
};

static int map_err(const struct imagemap_ctx *c, const char *what, const char *detail)
{
	return err_set(c->e, -EINVAL, "%s:%d: %s%s%s", c->source, c->line, what, detail ? ": " : "",
	               detail ? detail : "");
}

/* Appends s to the NULL-terminated vector *v holding *n strings. */
static int strv_push(const struct imagemap_ctx *c, char ***v, size_t *n, char *s)
{
	if (*n >= IMAGEMAP_MAX_WORDS) {
		free(s);
		return map_err(c, "too many values", NULL);
	}
	*v = xreallocarray(*v, *n + 2, sizeof(**v));
	(*v)[(*n)++] = s;
	(*v)[*n] = NULL;
	return 0;
}

static void strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

static const char *var_lookup(const struct imagemap_ctx *c, const char *name, size_t len)
{
	for (size_t i = 0; i < c->n_vars; i++)
		if (strlen(c->vars[i].name) == len && !strncmp(c->vars[i].name, name, len))
			return c->vars[i].value;
	return NULL;
}

/* ${NAME} → the variable's value, into a fresh string in *out. */
static int expand_vars(const struct imagemap_ctx *c, const char *s, char **out)
{
	struct buf b = BUF_INIT(IMAGEMAP_MAX_LINE * 4);
	int rc = 0;

	while (*s && !rc) {
		const char *end, *val;

		if (s[0] != '$' || s[1] != '{') {
			rc = buf_append_char(&b, *s++);
			continue;
		}
		end = strchr(s, '}');
		if (!end) {
			rc = map_err(c, "unterminated ${", s);
			break;
		}
		val = var_lookup(c, s + 2, (size_t)(end - s - 2));
		if (!val) {
			rc = map_err(c, "unknown variable", s);
			break;
		}
		rc = buf_append_str(&b, val);
		s = end + 1;
	}
	if (rc == -EMSGSIZE)
		rc = map_err(c, "value too long after expansion", NULL);
	if (rc) {
		buf_release(&b);
		return rc;
	}
	*out = buf_detach(&b, NULL);
	return 0;
}

static int parse_argv(const struct imagemap_ctx *c, const char *key, const char *val, char ***dst)
{
	char **v = NULL;
	size_t n = 0;
	int rc = 0;

	if (*dst)
		return map_err(c, "repeated key", key);
	for (const char *p = val; !rc;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (!len) {
			rc = map_err(c, "empty word in", key);
			break;
		}
		rc = strv_push(c, &v, &n, xstrndup(p, len));
		if (!comma)
			break;
		p = comma + 1;
	}
	if (rc) {
		strv_free(v);
		return rc;
	}
	*dst = v;
	return 0;
}

static char *absolute_path(const struct imagemap_ctx *c, const char *p)
{
	char cwd[PATH_MAX];
	const char *base = c->base_dir;

	if (p[0] == '/')
		return xstrdup(p);
	if (!base)
		base = getcwd(cwd, sizeof(cwd)) ? cwd : "/";
	return xasprintf("%s/%s", base, p);
}

/* HOST:CONTAINER[:rw|:ro] */
static int parse_bind(const struct imagemap_ctx *c, const char *val, struct imagemap_entry *en)
{
	const char *colon = strchr(val, ':'), *mode;
	struct imagemap_bind b = { NULL, NULL, true };
	size_t plen;

	if (!colon || colon == val)
		return map_err(c, "bind wants HOST:CONTAINER[:rw]", val);
	mode = strchr(colon + 1, ':');
	plen = mode ? (size_t)(mode - colon - 1) : strlen(colon + 1);
	if (plen == 0 || colon[1] != '/')
		return map_err(c, "bind target must be an absolute path", val);
	if (mode && strcmp(mode, ":rw") && strcmp(mode, ":ro"))
		return map_err(c, "bind mode must be rw or ro", val);
	if (en->n_binds >= IMAGEMAP_MAX_WORDS)
		return map_err(c, "too many binds", NULL);
	b.read_only = !mode || !strcmp(mode, ":ro");
	b.path = xstrndup(colon + 1, plen);
	{
		char *host = xstrndup(val, (size_t)(colon - val));

		b.host_path = absolute_path(c, host);
		free(host);
	}
	en->binds = xreallocarray(en->binds, en->n_binds + 1, sizeof(*en->binds));
	en->binds[en->n_binds++] = b;
	return 0;
}

static int parse_env(const struct imagemap_ctx *c, const char *val, struct imagemap_entry *en)
{
	size_t n = 0;

	if (val[0] == '=' || !strchr(val, '='))
		return map_err(c, "env wants NAME=VALUE", val);
	while (en->env && en->env[n])
		n++;
	return strv_push(c, &en->env, &n, xstrdup(val));
}

static int parse_workdir(const struct imagemap_ctx *c, const char *val, struct imagemap_entry *en)
{
	if (en->workdir)
		return map_err(c, "repeated key", "workdir");
	if (val[0] != '/')
		return map_err(c, "workdir must be an absolute path", val);
	en->workdir = xstrdup(val);
	return 0;
}

/* One key=value setting, value already expanded. */
static int parse_setting(const struct imagemap_ctx *c, const char *key, const char *val,
                         struct imagemap_entry *en)
{
	if (!strcmp(key, "entrypoint"))
		return parse_argv(c, key, val, &en->entrypoint);
	if (!strcmp(key, "cmd"))
		return parse_argv(c, key, val, &en->cmd);
	if (!strcmp(key, "bind"))
		return parse_bind(c, val, en);
	if (!strcmp(key, "env"))
		return parse_env(c, val, en);
	if (!strcmp(key, "workdir"))
		return parse_workdir(c, val, en);
	return map_err(c, "unknown key", key);
}

void imagemap_entry_release(struct imagemap_entry *en)
{
	if (!en)
		return;
	free(en->pattern);
	strv_free(en->entrypoint);
	strv_free(en->cmd);
	strv_free(en->env);
	for (size_t i = 0; i < en->n_binds; i++) {
		free(en->binds[i].host_path);
		free(en->binds[i].path);
	}
	free(en->binds);
	free(en->workdir);
	free(en->rootfs);
	memset(en, 0, sizeof(*en));
}

static int parse_token(const struct imagemap_ctx *c, char *tok, struct imagemap_entry *en)
{
	char *eq = strchr(tok, '='), *val = NULL;
	int rc;

	if (!eq || eq == tok)
		return map_err(c, "setting wants key=value", tok);
	*eq = '\0';
	rc = expand_vars(c, eq + 1, &val);
	if (!rc && !val[0])
		rc = map_err(c, "empty value for", tok);
	if (!rc)
		rc = parse_setting(c, tok, val, en);
	free(val);
	return rc;
}

/* Parses one non-comment line (NUL-terminated, writable) into en. */
static int parse_line(const struct imagemap_ctx *c, char *line, struct imagemap_entry *en)
{
	char *save = NULL, *tok;
	int rc = 0;

	memset(en, 0, sizeof(*en));
	en->line = c->line;
	en->uid = en->gid = -1;
	tok = strtok_r(line, " \t\r", &save);
	en->pattern = xstrdup(tok);
	while (!rc && (tok = strtok_r(NULL, " \t\r", &save)))
		rc = parse_token(c, tok, en);
	if (!rc && !en->entrypoint && !en->cmd && !en->n_binds && !en->env && !en->workdir)
		rc = map_err(c, "rule has no settings", en->pattern);
	if (rc)
		imagemap_entry_release(en);
	return rc;
}

static bool line_is_blank(const char *s)
{
	s += strspn(s, " \t\r");
	return !*s || *s == '#';
}

static int parse_lines(struct imagemap_ctx *c, const char *text, size_t len, struct imagemap *m)
{
	char line[IMAGEMAP_MAX_LINE + 1];
	size_t pos = 0;
	int rc = 0;

	while (pos < len && !rc) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text - pos) : len - pos;

		c->line++;
		if (n > IMAGEMAP_MAX_LINE)
			return map_err(c, "line too long", NULL);
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (strlen(line) != n)
			return map_err(c, "NUL byte in line", NULL);
		if (line_is_blank(line))
			continue;
		if (m->n >= IMAGEMAP_MAX_ENTRIES)
			return map_err(c, "too many rules", NULL);
		m->entries = xreallocarray(m->entries, m->n + 1, sizeof(*m->entries));
		rc = parse_line(c, line, &m->entries[m->n]);
		if (!rc)
			m->n++;
	}
	return rc;
}

int imagemap_parse(const char *text, size_t len, const char *source, const char *base_dir,
                   const struct imagemap_var *vars, size_t n_vars, struct imagemap **out,
                   struct err *e)
{
	struct imagemap_ctx c = { source ? source : "imagemap", 0, base_dir, vars, n_vars, e };
	struct imagemap *m = xcalloc(1, sizeof(*m));
	int rc;

	m->source = xstrdup(c.source);
	if (len > IMAGEMAP_MAX_BYTES)
		rc = err_set(e, -EFBIG, "%s: larger than %d bytes", c.source, IMAGEMAP_MAX_BYTES);
	else
		rc = parse_lines(&c, text, len, m);
	if (!rc && m->n == 0)
		rc = err_set(e, -EINVAL, "%s: no rules", c.source);
	if (rc) {
		imagemap_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int imagemap_load(const char *path, const char *base_dir, const struct imagemap_var *vars,
                  size_t n_vars, struct imagemap **out, struct err *e)
{
	struct err fe = { 0 };
	char *text = NULL;
	size_t len = 0;
	int rc = file_read_all(path, IMAGEMAP_MAX_BYTES, &text, &len, &fe);

	if (rc) /* the same message; too large is -EFBIG here, as imagemap_parse says */
		return err_set(e, rc == -EMSGSIZE ? -EFBIG : rc, "%s", fe.msg);
	rc = imagemap_parse(text, len, path, base_dir, vars, n_vars, out, e);
	free(text);
	return rc;
}

void imagemap_free(struct imagemap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		imagemap_entry_release(&m->entries[i]);
	free(m->entries);
	free(m->source);
	free(m);
}

static const char *const registry_prefixes[] = { "docker.io/library/", "docker.io/" };

bool imagemap_normalize(const char *image, char *out, size_t outlen)
{
	const char *slash, *colon;
	int n;

	for (size_t i = 0; i < sizeof(registry_prefixes) / sizeof(*registry_prefixes); i++) {
		size_t plen = strlen(registry_prefixes[i]);

		if (!strncmp(image, registry_prefixes[i], plen)) {
			image += plen;
			break;
		}
	}
	slash = strrchr(image, '/');
	colon = strrchr(slash ? slash : image, ':');
	if (colon || strchr(image, '@'))
		n = snprintf(out, outlen, "%s", image);
	else
		n = snprintf(out, outlen, "%s:latest", image);
	return n >= 0 && (size_t)n < outlen;
}

void imagemap_add(struct imagemap *m, struct imagemap_entry *en)
{
	en->exact = true;
	for (size_t i = 0; i < m->n; i++) {
		if (m->entries[i].exact && !strcmp(m->entries[i].pattern, en->pattern)) {
			imagemap_entry_release(&m->entries[i]);
			m->entries[i] = *en;
			memset(en, 0, sizeof(*en));
			return;
		}
	}
	m->entries = xreallocarray(m->entries, m->n + 1, sizeof(*m->entries));
	m->entries[m->n++] = *en;
	memset(en, 0, sizeof(*en));
}

const struct imagemap_entry *imagemap_find(const struct imagemap *m, const char *image)
{
	char ref[1024];

	if (!m || !image || !imagemap_normalize(image, ref, sizeof(ref)))
		return NULL;
	for (size_t i = 0; i < m->n; i++)
		if (m->entries[i].exact && !strcmp(m->entries[i].pattern, ref))
			return &m->entries[i];
	for (size_t i = 0; i < m->n; i++)
		if (!m->entries[i].exact && fnmatch(m->entries[i].pattern, ref, 0) == 0)
			return &m->entries[i];
	return NULL;
}

char *imagemap_patterns(const struct imagemap *m)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; m && i < m->n; i++)
		buf_printf(&b, "%s%s", i ? ", " : "", m->entries[i].pattern);
	return buf_detach(&b, NULL);
}

/*
 * backup_aof: the pure parts of method aof (backup.h): the multi-part AOF manifest of
 * Redis 7 / Valkey 8 (appendonlydir/<appendfilename>.manifest), parsed into the files a
 * backup archives and a restore expects. No I/O; any thread.
 *
 * A manifest line is "file <name> seq <n> type <b|h|i>" (the server may write the keys
 * in any order); "b" is the base (an RDB or an AOF), "i" the increments in the order
 * they apply, "h" history files the server is about to delete, which are left out. A
 * name the server would have quoted (spaces, quotes, control characters) and any name
 * that is not a plain file name are refused: the operator never sets appendfilename.
 */
#include "instance/backup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/parse.h"

#define LINE_MAX_LEN 512

static bool plain_name(const char *s)
{
	if (!*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == '"' || *s == '\'' || *s == '\\' ||
		    (unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* The next space-separated token of *p (NUL-terminated in place), or NULL. */
static char *token(char **p)
{
	char *t;

	while (**p == ' ')
		(*p)++;
	if (!**p)
		return NULL;
	t = *p;
	while (**p && **p != ' ')
		(*p)++;
	if (**p)
		*(*p)++ = '\0';
	return t;
}

/* One line's key/value pairs into f. */
static int line_fields(char *line, struct inst_aof_file *f, int lineno, struct err *e)
{
	char *p = line, *k, *v;
	bool have_type = false;

	*f = (struct inst_aof_file){ .seq = -1 };
	while ((k = token(&p))) {
		if (!(v = token(&p)))
			return err_set(e, -EPROTO, "line %d: key %s without a value", lineno, k);
		if (strcmp(k, "file") == 0) {
			if (!plain_name(v) || strlen(v) >= sizeof(f->name))
				return err_set(e, -EPROTO,
				               "line %d: file %.64s is not a plain name", lineno,
				               v);
			memcpy(f->name, v, strlen(v) + 1);
		} else if (strcmp(k, "seq") == 0) {
			if (parse_int64(v, 1, INT64_MAX, &f->seq, NULL) < 0)
				return err_set(e, -EPROTO, "line %d: seq %.32s", lineno, v);
		} else if (strcmp(k, "type") == 0) {
			if (strlen(v) != 1 || !strchr("bhi", v[0]))
				return err_set(e, -EPROTO, "line %d: type %.8s (b, h or i)", lineno,
				               v);
			f->type = v[0];
			have_type = true;
		} /* other keys: a newer server's; ignored, as the server itself does */
	}
	if (!f->name[0] || f->seq < 0 || !have_type)
		return err_set(e, -EPROTO, "line %d: file, seq and type are required", lineno);
	return 0;
}

/* Adds f (b first, then the i's in order; h dropped). */
static int set_add(struct inst_aof_set *s, const struct inst_aof_file *f, int lineno, struct err *e)
{
	if (f->type == 'h')
		return 0;
	if (f->type == 'b' && s->nfiles && s->files[0].type == 'b')
		return err_set(e, -EPROTO, "line %d: a second base file", lineno);
	if (s->nfiles == INST_AOF_FILES_MAX)
		return err_set(e, -EPROTO, "more than %d files", INST_AOF_FILES_MAX);
	if (f->type == 'b') {
		memmove(&s->files[1], &s->files[0], s->nfiles * sizeof(s->files[0]));
		s->files[0] = *f;
	} else {
		s->files[s->nfiles] = *f;
	}
	s->nfiles++;
	return 0;
}

int inst_aof_manifest_parse(const char *text, size_t len, struct inst_aof_set *out, struct err *e)
{
	struct inst_aof_set *s = out;
	struct inst_aof_file f;
	struct err ie = { 0 };
	char line[LINE_MAX_LEN];
	int lineno = 0, rc;

	s->nfiles = 0;
	for (size_t at = 0; at < len;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) : len - at;

		lineno++;
		if (!nl)
			return err_set(e, -EPROTO, "aof manifest: line %d does not end", lineno);
		if (n && text[at + n - 1] == '\r')
			n--;
		if (n >= sizeof(line))
			return err_set(e, -EPROTO, "aof manifest: line %d is too long", lineno);
		memcpy(line, text + at, n);
		line[n] = '\0';
		at += (size_t)(nl - (text + at)) + 1;
		if (!n || line[0] == '#')
			continue;
		if ((rc = line_fields(line, &f, lineno, &ie)) < 0 ||
		    (rc = set_add(s, &f, lineno, &ie)) < 0)
			return err_set(e, rc, "aof manifest: %s", ie.msg);
	}
	if (!s->nfiles || s->files[0].type != 'b')
		return err_set(e, -EPROTO, "aof manifest: no base file");
	return 0;
}

char *inst_aof_manifest_text(const struct inst_aof_set *s, size_t *len)
{
	struct buf b = BUF_INIT(INST_AOF_FILES_MAX * (LINE_MAX_LEN + 64));

	for (size_t i = 0; i < s->nfiles; i++)
		(void)buf_printf(&b, "file %s seq %lld type %c\n", s->files[i].name,
		                 (long long)s->files[i].seq, s->files[i].type);
	return buf_detach(&b, len);
}

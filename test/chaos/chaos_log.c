/*
 * chaos_log: parser of chaos-writer's JSON-lines log (see chaos_log.h).
 *
 * Strings are interned: each distinct key and each tenure lives once in the log, and
 * the strmaps hold index + 1 as their value (so that NULL means absent). Records are
 * appended in file order and sorted by t0 once a whole text has been read.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"

static const char *const result_names[CHAOS_NRESULTS] = {
	[CHAOS_ACKED] = "acked",
	[CHAOS_UNACKED] = "unacked",
	[CHAOS_REJECTED] = "rejected",
	[CHAOS_UNKNOWN] = "unknown",
};

const char *chaos_result_name(enum chaos_result r)
{
	return (unsigned)r < CHAOS_NRESULTS ? result_names[r] : "?";
}

int chaos_result_parse(const char *name, enum chaos_result *out)
{
	for (unsigned i = 0; i < CHAOS_NRESULTS; i++) {
		if (strcmp(name, result_names[i]) == 0) {
			*out = (enum chaos_result)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool chaos_result_is_accepted(enum chaos_result r)
{
	return r == CHAOS_ACKED || r == CHAOS_UNACKED;
}

void chaos_log_init(struct chaos_log *log)
{
	memset(log, 0, sizeof(*log));
	strmap_init(&log->key_index);
	strmap_init(&log->server_index);
}

void chaos_log_release(struct chaos_log *log)
{
	if (!log)
		return;
	for (size_t i = 0; i < log->nkeys; i++)
		free(log->keys[i]);
	free(log->keys);
	free(log->recs);
	free(log->servers);
	strmap_release(&log->key_index, NULL);
	strmap_release(&log->server_index, NULL);
	memset(log, 0, sizeof(*log));
}

size_t chaos_log_key(struct chaos_log *log, const char *key)
{
	uintptr_t v = (uintptr_t)strmap_get(&log->key_index, key);

	if (v)
		return (size_t)v - 1;
	if (log->nkeys == log->keys_cap) {
		log->keys_cap = log->keys_cap ? 2 * log->keys_cap : 64;
		log->keys = xreallocarray(log->keys, log->keys_cap, sizeof(*log->keys));
	}
	log->keys[log->nkeys] = xstrdup(key);
	strmap_set(&log->key_index, key, (void *)(uintptr_t)(log->nkeys + 1));
	return log->nkeys++;
}

size_t chaos_log_server(struct chaos_log *log, const char *addr, const char *run_id,
                        const char *replid)
{
	char name[CHAOS_ADDR_SIZE + 2 * CHAOS_ID_SIZE + 2];
	struct chaos_server *s;
	uintptr_t v;

	snprintf(name, sizeof(name), "%s %s %s", addr, run_id, replid);
	v = (uintptr_t)strmap_get(&log->server_index, name);
	if (v)
		return (size_t)v - 1;
	if (log->nservers == log->servers_cap) {
		log->servers_cap = log->servers_cap ? 2 * log->servers_cap : 8;
		log->servers = xreallocarray(log->servers, log->servers_cap, sizeof(*log->servers));
	}
	s = &log->servers[log->nservers];
	snprintf(s->addr, sizeof(s->addr), "%s", addr);
	snprintf(s->run_id, sizeof(s->run_id), "%s", run_id);
	snprintf(s->replid, sizeof(s->replid), "%s", replid);
	strmap_set(&log->server_index, name, (void *)(uintptr_t)(log->nservers + 1));
	return log->nservers++;
}

/* A string field of at most size - 1 bytes ("" allowed), required. */
static int get_str(json_t *o, const char *name, size_t size, const char **out, struct err *e)
{
	int rc = jsonx_string_req(o, name, out, e);

	if (rc)
		return rc;
	if (strlen(*out) >= size)
		return err_set(e, -EPROTO, "%s: longer than %zu bytes", name, size - 1);
	return 0;
}

static int get_times(json_t *o, struct chaos_rec *r, struct err *e)
{
	static const struct {
		const char *name;
		size_t off;
	} f[] = {
		{ "t0", offsetof(struct chaos_rec, t0) },
		{ "t1", offsetof(struct chaos_rec, t1) },
		{ "w0", offsetof(struct chaos_rec, w0) },
		{ "w1", offsetof(struct chaos_rec, w1) },
	};
	int64_t v;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (jsonx_int_req(o, f[i].name, 0, INT64_MAX, &v, e) < 0)
			return -EPROTO;
		memcpy((char *)r + f[i].off, &v, sizeof(v));
	}
	if (r->t1 < r->t0 || r->w1 < r->w0)
		return err_set(e, -EPROTO, "t1/w1: earlier than t0/w0");
	return 0;
}

static int get_kind(json_t *o, struct chaos_rec *r, struct err *e)
{
	const char *op, *res;

	if (jsonx_string_req(o, "op", &op, e) < 0 || jsonx_string_req(o, "result", &res, e) < 0)
		return -EPROTO;
	if (strcmp(op, "set") == 0)
		r->op = CHAOS_OP_SET;
	else if (strcmp(op, "incr") == 0)
		r->op = CHAOS_OP_INCR;
	else
		return err_set(e, -EPROTO, "op: unknown operation \"%.32s\"", op);
	if (chaos_result_parse(res, &r->result) < 0)
		return err_set(e, -EPROTO, "result: unknown result \"%.32s\"", res);
	return 0;
}

static int parse_op(struct chaos_log *log, json_t *o, struct err *e)
{
	struct chaos_rec r = { 0 };
	const char *key, *addr, *run_id, *replid;
	int64_t v;

	if (get_kind(o, &r, e) < 0 || get_times(o, &r, e) < 0)
		return -EPROTO;
	if (jsonx_int_req(o, "seq", 0, INT64_MAX, &v, e) < 0)
		return -EPROTO;
	r.seq = v;
	if (jsonx_int_req(o, "value", INT64_MIN, INT64_MAX, &v, e) < 0)
		return -EPROTO;
	r.value = v;
	if (jsonx_int(o, "acks", -1, INT64_MAX, -1, &v, e) < 0)
		return -EPROTO;
	r.acks = v;
	if (get_str(o, "key", CHAOS_KEY_SIZE, &key, e) < 0 ||
	    get_str(o, "server", CHAOS_ADDR_SIZE, &addr, e) < 0 ||
	    get_str(o, "run_id", CHAOS_ID_SIZE, &run_id, e) < 0 ||
	    get_str(o, "replid", CHAOS_ID_SIZE, &replid, e) < 0)
		return -EPROTO;
	if (!*key)
		return err_set(e, -EPROTO, "key: empty");
	if (chaos_result_is_accepted(r.result) && !*run_id)
		return err_set(e, -EPROTO, "run_id: empty for an accepted write");
	if (log->nrecs >= CHAOS_MAX_RECS)
		return err_set(e, -EMSGSIZE, "more than %u records", CHAOS_MAX_RECS);
	r.key = chaos_log_key(log, key);
	r.server = chaos_log_server(log, addr, run_id, replid);
	if (log->nrecs == log->recs_cap) {
		log->recs_cap = log->recs_cap ? 2 * log->recs_cap : 1024;
		log->recs = xreallocarray(log->recs, log->recs_cap, sizeof(*log->recs));
	}
	log->recs[log->nrecs++] = r;
	return 0;
}

static int parse_line(struct chaos_log *log, const char *line, size_t len, struct err *e)
{
	json_t *o = NULL;
	const char *type;
	int rc;

	rc = jsonx_loadb(line, len, CHAOS_LINE_MAX, &o, e);
	if (rc)
		return rc == -EMSGSIZE ? rc : -EPROTO;
	if (!json_is_object(o)) {
		rc = err_set(e, -EPROTO, "not a JSON object");
		goto out;
	}
	rc = jsonx_string_req(o, "type", &type, e);
	if (rc) {
		rc = -EPROTO;
		goto out;
	}
	if (strcmp(type, "op") == 0)
		rc = parse_op(log, o, e);
	else if (strcmp(type, "start") == 0)
		log->headers++;
out:
	json_decref(o);
	return rc;
}

static int cmp_t0(const void *a, const void *b)
{
	const struct chaos_rec *x = a, *y = b;

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->t1 < y->t1 ? -1 : x->t1 > y->t1;
}

int chaos_log_parse(struct chaos_log *log, const char *text, size_t len, struct err *e)
{
	size_t pos = 0, lineno = 0;
	int rc = 0;

	while (pos < len && rc == 0) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		struct err le;

		lineno++;
		err_clear(&le);
		if (n > 0 && (rc = parse_line(log, text + pos, n, &le)) != 0) {
			if (!nl && rc == -EPROTO) {
				log->torn++; /* a writer killed mid-line */
				rc = 0;
			} else {
				err_set(e, rc, "line %zu: %s", lineno, le.msg);
			}
		}
		pos += n + 1;
	}
	if (log->nrecs > 1)
		qsort(log->recs, log->nrecs, sizeof(*log->recs), cmp_t0);
	return rc;
}

int chaos_log_load(struct chaos_log *log, const char *path, struct err *e)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	char chunk[65536];
	size_t n;
	FILE *f;
	int rc = 0;

	f = fopen(path, "rb");
	if (!f)
		return err_set(e, chaos_errno(), "%s: %s", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	if (ferror(f))
		rc = err_set(e, -EIO, "%s: read error", path);
	fclose(f);
	if (rc == 0 && chaos_log_parse(log, b.data ? b.data : "", b.len, e) < 0)
		rc = e ? e->code : -EPROTO;
	buf_release(&b);
	return rc;
}

static const char *trim(const char *s, size_t *len)
{
	size_t n;

	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	n = strlen(s);
	while (n > 0 &&
	       (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		n--;
	*len = n;
	return s;
}

/* Digits only, at least one, value <= max. */
static int digits(const char *s, size_t n, int64_t max, int64_t *out)
{
	int64_t v = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		if (v > (max - (s[i] - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int chaos_parse_addr(const char *s, char *host, size_t hostlen, int *port)
{
	size_t n, hn;
	const char *colon, *h;
	int64_t p;

	s = trim(s, &n);
	colon = n ? memrchr(s, ':', n) : NULL;
	if (!colon || digits(colon + 1, n - (size_t)(colon + 1 - s), 65535, &p) < 0 || p == 0)
		return -EINVAL;
	h = s;
	hn = (size_t)(colon - s);
	if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
		h++;
		hn -= 2;
	}
	if (hn == 0 || hn >= hostlen || memchr(h, ' ', hn))
		return -EINVAL;
	memcpy(host, h, hn);
	host[hn] = '\0';
	*port = (int)p;
	return 0;
}

int chaos_parse_wall(const char *s, int64_t *out_us)
{
	const char *dot;
	int64_t sec, frac = 0;
	size_t n, fn;
	int rc;

	s = trim(s, &n);
	dot = memchr(s, '.', n);
	if (!dot) {
		rc = digits(s, n, INT64_MAX / 1000, &sec);
		if (rc == 0)
			*out_us = sec * 1000;
		return rc;
	}
	rc = digits(s, (size_t)(dot - s), INT64_MAX / 1000000 - 1, &sec);
	if (rc)
		return rc;
	fn = n - (size_t)(dot + 1 - s);
	if (fn == 0 || fn > 9)
		return -EINVAL;
	rc = digits(dot + 1, fn, INT64_MAX, &frac);
	if (rc)
		return rc;
	for (; fn < 6; fn++)
		frac *= 10;
	for (; fn > 6; fn--)
		frac /= 10;
	*out_us = sec * 1000000 + frac;
	return 0;
}

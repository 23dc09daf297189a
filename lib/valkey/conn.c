/*
 * conn: a hiredict connection with deadlines, AUTH, TLS, errno mapping and lazy
 * reconnect (see conn.h).
 *
 * Invariant: c->ctx is NULL or a connected, authenticated context with the command
 * timeout set (and, for TLS, the handshake done). Any transport error frees it
 * (conn_fail), so the next command starts from a fresh connection. The TLS context is
 * built from the files at each connect, so a renewed certificate or CA is used from the
 * next connection on; it lives as long as the connection. A struct vk_reply is a
 * hiredict redictReply in disguise: the accessors cast back, and nothing outside this
 * file sees hiredict.
 */
#include "conn.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <hiredict/hiredict.h>
#include <hiredict/hiredict_ssl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "lib/alloc.h"
#include "lib/parse.h"
#include "lib/engine/directives.h"

struct vk_conn {
	redictContext *ctx;
	redictSSLContext *ssl; /* with ctx, for TLS */
	char *unix_path;
	char *host;
	int port;
	int connect_timeout_ms;
	int command_timeout_ms;
	char *user;
	char *password;
	bool tls;
	char *tls_ca, *tls_cert, *tls_key, *tls_server_name;
	char addr[VK_INFO_HOST_SIZE + 16];
};

static const redictReply *rep(const struct vk_reply *r)
{
	return (const redictReply *)(const void *)r;
}

static struct timeval tv_ms(long long ms)
{
	return (struct timeval){ .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void tls_copy(struct vk_conn *c, const struct vk_tls_config *t)
{
	assert(t->ca_file && !t->cert_file == !t->key_file);
	c->tls = true;
	c->tls_ca = xstrdup(t->ca_file);
	c->tls_cert = dup_or_null(t->cert_file);
	c->tls_key = dup_or_null(t->key_file);
	c->tls_server_name = dup_or_null(t->server_name);
}

/* --- lifecycle ---------------------------------------------------------------- */

struct vk_conn *vk_conn_new(const struct vk_conn_config *cfg)
{
	struct vk_conn *c = xcalloc(1, sizeof(*c));

	/* Nothing may block without a deadline. */
	assert(cfg->connect_timeout_ms > 0 && cfg->command_timeout_ms > 0);
	c->unix_path = cfg->unix_path ? xstrdup(cfg->unix_path) : NULL;
	c->host = cfg->host ? xstrdup(cfg->host) : NULL;
	c->port = cfg->port;
	c->connect_timeout_ms = cfg->connect_timeout_ms;
	c->command_timeout_ms = cfg->command_timeout_ms;
	if (cfg->tls && !cfg->unix_path)
		tls_copy(c, cfg->tls);
	vk_conn_set_auth(c, cfg->user, cfg->password);
	if (c->unix_path)
		snprintf(c->addr, sizeof(c->addr), "unix:%s", c->unix_path);
	else
		snprintf(c->addr, sizeof(c->addr), "%s:%d", c->host ? c->host : "", c->port);
	return c;
}

void vk_conn_free(struct vk_conn *c)
{
	if (!c)
		return;
	vk_conn_close(c);
	free(c->unix_path);
	free(c->host);
	free(c->tls_ca);
	free(c->tls_cert);
	free(c->tls_key);
	free(c->tls_server_name);
	free(c->user);
	free_secret(c->password);
	free(c);
}

void vk_conn_set_auth(struct vk_conn *c, const char *user, const char *password)
{
	free(c->user);
	free_secret(c->password);
	c->user = user ? xstrdup(user) : NULL;
	c->password = password ? xstrdup(password) : NULL;
}

void vk_conn_close(struct vk_conn *c)
{
	if (c->ctx)
		redictFree(c->ctx);
	c->ctx = NULL;
	if (c->ssl)
		redictFreeSSLContext(c->ssl);
	c->ssl = NULL;
}

bool vk_conn_is_tls(const struct vk_conn *c)
{
	return c->tls;
}

bool vk_conn_is_connected(const struct vk_conn *c)
{
	return c->ctx != NULL;
}

const char *vk_conn_addr(const struct vk_conn *c)
{
	return c->addr;
}

/* --- errors ------------------------------------------------------------------- */

static const struct {
	const char *word;
	int code;
} error_words[] = {
	{ "NOPERM", -EPERM },  { "WRONGPASS", -EACCES }, { "NOAUTH", -EACCES },
	{ "LOADING", -EBUSY }, { "BUSY", -EBUSY },       { "READONLY", -EROFS },
};

int vk_error_code(const char *msg, size_t len)
{
	const char *sp = memchr(msg, ' ', len);
	size_t n = sp ? (size_t)(sp - msg) : len;

	for (size_t i = 0; i < sizeof(error_words) / sizeof(error_words[0]); i++)
		if (strlen(error_words[i].word) == n && memcmp(msg, error_words[i].word, n) == 0)
			return error_words[i].code;
	return -EIO;
}

static bool is_timeout(int saved_errno, const char *errstr)
{
	return saved_errno == EAGAIN || saved_errno == EWOULDBLOCK || saved_errno == ETIMEDOUT ||
	       strstr(errstr, "timed out") || strstr(errstr, "temporarily unavailable");
}

/* A transport error on c->ctx: maps it, records it, and drops the connection. */
static int conn_fail(struct vk_conn *c, int saved_errno, struct err *e)
{
	const char *errstr = c->ctx->errstr[0] ? c->ctx->errstr : "connection error";
	int code = -EIO;

	if (c->ctx->err == REDICT_ERR_PROTOCOL)
		code = -EPROTO;
	else if (c->ctx->err == REDICT_ERR_TIMEOUT ||
	         (c->ctx->err == REDICT_ERR_IO && is_timeout(saved_errno, errstr)))
		code = -ETIMEDOUT;
	err_set(e, code, "%s: %s", c->addr,
	        c->ctx->err == REDICT_ERR_EOF ? "connection closed by the server" : errstr);
	vk_conn_close(c);
	return code;
}

/* An error reply: its errno, and its text unless the command carried a secret. */
static int server_error(const struct vk_conn *c, const redictReply *r, const char *cmd,
                        size_t cmdlen, bool secret, struct err *e)
{
	int code = vk_error_code(r->str, r->len);
	const char *sp = memchr(r->str, ' ', r->len);
	int word = (int)(sp ? (size_t)(sp - r->str) : r->len);
	int n = (int)(cmdlen > 32 ? 32 : cmdlen);

	if (secret)
		return err_set(e, code,
		               "%s: %.*s: %.*s (details withheld: the command carries a secret)",
		               c->addr, n, cmd, word, r->str);
	return err_set(e, code, "%s: %.*s: %.*s", c->addr, n, cmd, (int)r->len, r->str);
}

/* --- commands ----------------------------------------------------------------- */

/* Runs one command on a connected context. */
static int exec_argv(struct vk_conn *c, int argc, const char *const *argv, const size_t *lens,
                     bool secret, struct vk_reply **out, struct err *e)
{
	redictReply *r;
	int rc;

	errno = 0;
	r = redictCommandArgv(c->ctx, argc, (const char **)argv, lens);
	if (!r)
		return conn_fail(c, errno, e);
	if (r->type == REDICT_REPLY_ERROR) {
		rc = server_error(c, r, argv[0], lens ? lens[0] : strlen(argv[0]), secret, e);
		freeReplyObject(r);
		return rc;
	}
	if (out)
		*out = (struct vk_reply *)(void *)r;
	else
		freeReplyObject(r);
	return 0;
}

static int authenticate(struct vk_conn *c, struct err *e)
{
	const char *argv[3] = { "AUTH", c->user, c->password };

	if (c->user)
		return exec_argv(c, 3, argv, NULL, true, NULL, e);
	argv[1] = c->password;
	return exec_argv(c, 2, argv, NULL, true, NULL, e);
}

static pthread_once_t openssl_once = PTHREAD_ONCE_INIT;

static void openssl_init(void)
{
	redictInitOpenSSL();
}

/* The TLS handshake on a connected context: the server's chain must verify against the
 * CA file; the client certificate is offered when configured. The handshake runs under
 * the command timeout already set on the socket. */
static int tls_start(struct vk_conn *c, struct err *e)
{
	redictSSLOptions o = { .cacert_filename = c->tls_ca,
		               .cert_filename = c->tls_cert,
		               .private_key_filename = c->tls_key,
		               .server_name = c->tls_server_name,
		               .verify_mode = REDICT_SSL_VERIFY_PEER };
	redictSSLContextError why = REDICT_SSL_CTX_NONE;

	pthread_once(&openssl_once, openssl_init);
	c->ssl = redictCreateSSLContextWithOptions(&o, &why);
	if (!c->ssl) {
		err_set(e, -EIO, "%s: TLS files (ca %s, cert %s): %s", c->addr, c->tls_ca,
		        c->tls_cert ? c->tls_cert : "none", redictSSLContextGetError(why));
		vk_conn_close(c);
		return -EIO;
	}
	if (redictInitiateSSLWithContext(c->ctx, c->ssl) != REDICT_OK)
		return conn_fail(c, errno, e);
	return 0;
}

static redictContext *dial(const struct vk_conn *c)
{
	struct timeval connect_tv = tv_ms(c->connect_timeout_ms);
	struct timeval command_tv = tv_ms(c->command_timeout_ms);
	redictOptions o = { .connect_timeout = &connect_tv, .command_timeout = &command_tv };

	if (c->unix_path)
		REDICT_OPTIONS_SET_UNIX(&o, c->unix_path);
	else
		REDICT_OPTIONS_SET_TCP(&o, c->host ? c->host : "", c->port);
	return redictConnectWithOptions(&o);
}

int vk_conn_connect(struct vk_conn *c, struct err *e)
{
	int rc;

	if (c->ctx)
		return 0;
	errno = 0;
	c->ctx = dial(c);
	if (!c->ctx)
		return err_set(e, -ENOMEM, "%s: cannot allocate a connection", c->addr);
	if (c->ctx->err)
		return conn_fail(c, errno, e);
	if (c->tls && (rc = tls_start(c, e)) != 0)
		return rc;
	if (c->password && (rc = authenticate(c, e)) != 0) {
		vk_conn_close(c);
		return rc;
	}
	return 0;
}

static int run(struct vk_conn *c, int argc, const char *const *argv, const size_t *lens,
               bool secret, struct vk_reply **out, struct err *e)
{
	int rc;

	if (argc < 1)
		return err_set(e, -EINVAL, "%s: empty command", c->addr);
	rc = vk_conn_connect(c, e);
	if (rc)
		return rc;
	return exec_argv(c, argc, argv, lens, secret, out, e);
}

int vk_command_argv(struct vk_conn *c, int argc, const char *const *argv, const size_t *lens,
                    struct vk_reply **out, struct err *e)
{
	return run(c, argc, argv, lens, false, out, e);
}

int vk_command_argv_secret(struct vk_conn *c, int argc, const char *const *argv, const size_t *lens,
                           struct vk_reply **out, struct err *e)
{
	return run(c, argc, argv, lens, true, out, e);
}

int vk_command_list(struct vk_conn *c, struct vk_reply **out, struct err *e, ...)
{
	const char *argv[VK_COMMAND_MAX_ARGS];
	const char *a;
	int argc = 0;
	va_list ap;

	va_start(ap, e);
	while ((a = va_arg(ap, const char *)) != NULL) {
		assert(argc < VK_COMMAND_MAX_ARGS);
		argv[argc++] = a;
	}
	va_end(ap);
	return run(c, argc, argv, NULL, false, out, e);
}

/* --- replies ------------------------------------------------------------------ */

static const struct {
	int hiredict;
	enum vk_reply_type type;
} reply_types[] = {
	{ REDICT_REPLY_STRING, VK_REPLY_STRING },   { REDICT_REPLY_ARRAY, VK_REPLY_ARRAY },
	{ REDICT_REPLY_INTEGER, VK_REPLY_INTEGER }, { REDICT_REPLY_NIL, VK_REPLY_NIL },
	{ REDICT_REPLY_STATUS, VK_REPLY_STATUS },   { REDICT_REPLY_ERROR, VK_REPLY_ERROR },
};

enum vk_reply_type vk_reply_type(const struct vk_reply *r)
{
	for (size_t i = 0; i < sizeof(reply_types) / sizeof(reply_types[0]); i++)
		if (reply_types[i].hiredict == rep(r)->type)
			return reply_types[i].type;
	return VK_REPLY_NIL; /* RESP2 has no other types */
}

const char *vk_reply_str(const struct vk_reply *r, size_t *len)
{
	const redictReply *x = rep(r);

	if (x->type != REDICT_REPLY_STRING && x->type != REDICT_REPLY_STATUS &&
	    x->type != REDICT_REPLY_ERROR)
		return NULL;
	if (len)
		*len = x->len;
	return x->str;
}

long long vk_reply_int(const struct vk_reply *r)
{
	return rep(r)->type == REDICT_REPLY_INTEGER ? rep(r)->integer : 0;
}

size_t vk_reply_len(const struct vk_reply *r)
{
	return rep(r)->type == REDICT_REPLY_ARRAY ? rep(r)->elements : 0;
}

const struct vk_reply *vk_reply_elem(const struct vk_reply *r, size_t i)
{
	if (i >= vk_reply_len(r))
		return NULL;
	return (const struct vk_reply *)(const void *)rep(r)->element[i];
}

void vk_reply_free(struct vk_reply *r)
{
	if (r)
		freeReplyObject(r);
}

int vk_reply_decode(const char *resp, size_t len, struct vk_reply **out, struct err *e)
{
	redictReader *rd;
	void *reply = NULL;
	int rc = 0;

	if (len > VK_REPLY_MAX_LEN)
		return err_set(e, -EMSGSIZE, "reply: %zu bytes, more than the limit", len);
	rd = redictReaderCreate();
	if (!rd)
		return err_set(e, -ENOMEM, "reply: cannot allocate a reader");
	if (redictReaderFeed(rd, resp, len) != REDICT_OK ||
	    redictReaderGetReply(rd, &reply) != REDICT_OK)
		rc = err_set(e, -EPROTO, "reply: %s", rd->errstr[0] ? rd->errstr : "malformed");
	else if (!reply)
		rc = err_set(e, -EPROTO, "reply: incomplete");
	else if (rd->pos != rd->len)
		rc = err_set(e, -EPROTO, "reply: %zu bytes after the reply", rd->len - rd->pos);
	if (rc)
		freeReplyObject(reply);
	else
		*out = reply;
	redictReaderFree(rd);
	return rc;
}

/* --- helpers ------------------------------------------------------------------ */

/* Runs a command whose reply must be the status +OK. */
static int expect_ok(struct vk_conn *c, int argc, const char *const *argv, bool secret,
                     struct err *e)
{
	struct vk_reply *r = NULL;
	int rc = run(c, argc, argv, NULL, secret, &r, e);

	if (rc)
		return rc;
	/* "+OK" or "+OK <detail>": REPLICAOF of the primary already followed answers
	 * "+OK Already connected to specified master", which is success too. */
	if (rep(r)->type != REDICT_REPLY_STATUS || strncmp(rep(r)->str, "OK", 2) != 0 ||
	    (rep(r)->str[2] != '\0' && rep(r)->str[2] != ' '))
		rc = err_set(e, -EPROTO, "%s: %s: expected +OK", c->addr, argv[0]);
	vk_reply_free(r);
	return rc;
}

int vk_ping(struct vk_conn *c, struct err *e)
{
	struct vk_reply *r = NULL;
	int rc = vk_command(c, &r, e, "PING");

	if (rc)
		return rc;
	if (rep(r)->type != REDICT_REPLY_STATUS || strcmp(rep(r)->str, "PONG") != 0)
		rc = err_set(e, -EPROTO, "%s: PING: expected +PONG", c->addr);
	vk_reply_free(r);
	return rc;
}

int vk_info(struct vk_conn *c, const char *section, struct vk_info *out, struct err *e)
{
	const char *argv[2] = { "INFO", section };
	struct vk_reply *r = NULL;
	int rc = run(c, section ? 2 : 1, argv, NULL, false, &r, e);

	if (rc)
		return rc;
	if (rep(r)->type != REDICT_REPLY_STRING)
		rc = err_set(e, -EPROTO, "%s: INFO: expected a bulk string", c->addr);
	else
		rc = vk_info_parse(rep(r)->str, rep(r)->len, out, e);
	vk_reply_free(r);
	return rc;
}

int vk_config_set(struct vk_conn *c, const struct vk_kv *kv, size_t n, struct err *e)
{
	const char **argv;
	bool secret = false;
	int rc;

	if (n == 0 || n > VK_COMMAND_MAX_ARGS)
		return err_set(e, -EINVAL, "CONFIG SET: %zu parameters (1..%d)", n,
		               VK_COMMAND_MAX_ARGS);
	argv = xcalloc(2 + 2 * n, sizeof(*argv));
	argv[0] = "CONFIG";
	argv[1] = "SET";
	for (size_t i = 0; i < n; i++) {
		argv[2 + 2 * i] = kv[i].name;
		argv[3 + 2 * i] = kv[i].value;
		secret = secret || vk_directive_is_secret(kv[i].name);
	}
	rc = expect_ok(c, (int)(2 + 2 * n), argv, secret, e);
	free(argv);
	return rc;
}

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int vk_config_get(struct vk_conn *c, const char *name, struct buf *out, struct err *e)
{
	struct vk_reply *r = NULL;
	const redictReply *x;
	int rc;

	if (!name[0] || has_glob(name))
		return err_set(e, -EINVAL, "CONFIG GET: '%s' is not a directive name", name);
	rc = vk_command(c, &r, e, "CONFIG", "GET", name);
	if (rc)
		return rc;
	x = rep(r);
	if (x->type != REDICT_REPLY_ARRAY || (x->elements != 0 && x->elements != 2))
		rc = err_set(e, -EPROTO, "%s: CONFIG GET %s: expected a name/value pair", c->addr,
		             name);
	else if (x->elements == 0)
		rc = err_set(e, -ENOENT, "%s: CONFIG GET %s: unknown directive", c->addr, name);
	else if (x->element[1]->type != REDICT_REPLY_STRING)
		rc = err_set(e, -EPROTO, "%s: CONFIG GET %s: value is not a string", c->addr, name);
	else if ((rc = buf_append(out, x->element[1]->str, x->element[1]->len)) != 0)
		err_set(e, rc, "CONFIG GET %s: value longer than the buffer's limit", name);
	vk_reply_free(r);
	return rc;
}

int vk_config_rewrite(struct vk_conn *c, struct err *e)
{
	static const char *const argv[] = { "CONFIG", "REWRITE" };

	return expect_ok(c, 2, argv, false, e);
}

int vk_replicaof(struct vk_conn *c, const char *host, int port, struct err *e)
{
	char p[8];
	const char *argv[3] = { "REPLICAOF", host, p };

	if (!host[0] || port < 1 || port > 65535)
		return err_set(e, -EINVAL, "REPLICAOF: bad address '%s' port %d", host, port);
	snprintf(p, sizeof(p), "%d", port);
	return expect_ok(c, 3, argv, false, e);
}

int vk_replicaof_no_one(struct vk_conn *c, struct err *e)
{
	static const char *const argv[] = { "REPLICAOF", "NO", "ONE" };

	return expect_ok(c, 3, argv, false, e);
}

int vk_client_pause_write(struct vk_conn *c, long long ms, struct err *e)
{
	char t[24];
	const char *argv[4] = { "CLIENT", "PAUSE", t, "WRITE" };

	if (ms <= 0)
		return err_set(e, -EINVAL, "CLIENT PAUSE: %lld ms must be positive", ms);
	snprintf(t, sizeof(t), "%lld", ms);
	return expect_ok(c, 4, argv, false, e);
}

int vk_client_unpause(struct vk_conn *c, struct err *e)
{
	static const char *const argv[] = { "CLIENT", "UNPAUSE" };

	return expect_ok(c, 2, argv, false, e);
}

int vk_acl_setuser(struct vk_conn *c, const char *user, const char *const *rules, size_t n,
                   struct err *e)
{
	const char **argv;
	int rc;

	if (!user[0] || n > VK_COMMAND_MAX_ARGS)
		return err_set(e, -EINVAL, "ACL SETUSER: empty user name or %zu rules", n);
	argv = xcalloc(3 + n, sizeof(*argv));
	argv[0] = "ACL";
	argv[1] = "SETUSER";
	argv[2] = user;
	for (size_t i = 0; i < n; i++)
		argv[3 + i] = rules[i];
	rc = expect_ok(c, (int)(3 + n), argv, true, e);
	free(argv);
	return rc;
}

/* WAIT blocks up to its own timeout: the socket deadline grows by as much. */
int vk_wait(struct vk_conn *c, long long nreplicas, long long timeout_ms, long long *acked,
            struct err *e)
{
	char n[24], t[24];
	const char *argv[3] = { "WAIT", n, t };
	struct vk_reply *r = NULL;
	int rc;

	if (nreplicas < 0 || timeout_ms <= 0 || timeout_ms > 24LL * 3600 * 1000)
		return err_set(e, -EINVAL, "WAIT %lld %lld: bad arguments", nreplicas, timeout_ms);
	snprintf(n, sizeof(n), "%lld", nreplicas);
	snprintf(t, sizeof(t), "%lld", timeout_ms);
	rc = vk_conn_connect(c, e);
	if (rc)
		return rc;
	if (redictSetTimeout(c->ctx, tv_ms(timeout_ms + c->command_timeout_ms)) != REDICT_OK)
		return conn_fail(c, errno, e);
	rc = exec_argv(c, 3, argv, NULL, false, &r, e);
	if (c->ctx && redictSetTimeout(c->ctx, tv_ms(c->command_timeout_ms)) != REDICT_OK) {
		int rc2 = conn_fail(c, errno, e);

		rc = rc ? rc : rc2;
	}
	if (!rc && rep(r)->type != REDICT_REPLY_INTEGER)
		rc = err_set(e, -EPROTO, "%s: WAIT: expected an integer", c->addr);
	if (!rc)
		*acked = rep(r)->integer;
	vk_reply_free(r);
	return rc;
}

/* --- ROLE --------------------------------------------------------------------- */

static const redictReply *elem_of(const redictReply *x, size_t i, int type)
{
	if (x->type != REDICT_REPLY_ARRAY || i >= x->elements || x->element[i]->type != type)
		return NULL;
	return x->element[i];
}

/* A string element copied into dst; false when absent, too long or holding a NUL. */
static bool copy_str(const redictReply *s, char *dst, size_t size)
{
	if (!s || s->len >= size || memchr(s->str, '\0', s->len))
		return false;
	memcpy(dst, s->str, s->len + 1);
	return true;
}

/* A string element holding a decimal integer. */
static bool str_ll(const redictReply *s, long long *out)
{
	int64_t v;

	if (!s || parse_int64(s->str, INT64_MIN, INT64_MAX, &v, NULL))
		return false;
	*out = v;
	return true;
}

/* ["master", offset, [[ip, "port", "offset"], …]] */
static bool role_primary(const redictReply *x, struct vk_role_info *o)
{
	const redictReply *off = elem_of(x, 1, REDICT_REPLY_INTEGER);
	const redictReply *list = elem_of(x, 2, REDICT_REPLY_ARRAY);

	if (x->elements != 3 || !off || !list)
		return false;
	o->offset = off->integer;
	for (size_t i = 0; i < list->elements; i++) {
		const redictReply *r = list->element[i];
		struct vk_role_replica tmp;

		if (r->type != REDICT_REPLY_ARRAY || r->elements < 3 ||
		    !copy_str(elem_of(r, 0, REDICT_REPLY_STRING), tmp.ip, sizeof(tmp.ip)) ||
		    !str_ll(elem_of(r, 1, REDICT_REPLY_STRING), &tmp.port) ||
		    !str_ll(elem_of(r, 2, REDICT_REPLY_STRING), &tmp.offset))
			return false;
		if (o->nreplicas < VK_INFO_MAX_REPLICAS)
			o->replicas[o->nreplicas++] = tmp;
	}
	return true;
}

/* ["slave", host, port, state, offset] */
static bool role_replica(const redictReply *x, struct vk_role_info *o)
{
	const redictReply *port = elem_of(x, 2, REDICT_REPLY_INTEGER);
	const redictReply *off = elem_of(x, 4, REDICT_REPLY_INTEGER);

	if (x->elements != 5 || !port || !off ||
	    !copy_str(elem_of(x, 1, REDICT_REPLY_STRING), o->master_host, sizeof(o->master_host)) ||
	    !copy_str(elem_of(x, 3, REDICT_REPLY_STRING), o->state, sizeof(o->state)))
		return false;
	o->master_port = port->integer;
	o->offset = off->integer;
	return true;
}

int vk_role_parse(const struct vk_reply *r, struct vk_role_info *out, struct err *e)
{
	const redictReply *x = rep(r), *name = elem_of(x, 0, REDICT_REPLY_STRING);
	struct vk_role_info *o = xcalloc(1, sizeof(*o));
	bool ok = false;

	o->offset = o->master_port = -1;
	if (name && strcmp(name->str, "master") == 0) {
		o->role = VK_ROLE_PRIMARY;
		ok = role_primary(x, o);
	} else if (name && strcmp(name->str, "slave") == 0) {
		o->role = VK_ROLE_REPLICA;
		ok = role_replica(x, o);
	} else if (name && strcmp(name->str, "sentinel") == 0) {
		o->role = VK_ROLE_SENTINEL;
		ok = true;
	}
	if (ok)
		*out = *o;
	free(o);
	return ok ? 0 : err_set(e, -EPROTO, "ROLE: unexpected reply shape");
}

int vk_role(struct vk_conn *c, struct vk_role_info *out, struct err *e)
{
	struct vk_reply *r = NULL;
	int rc = vk_command(c, &r, e, "ROLE");

	if (rc)
		return rc;
	rc = vk_role_parse(r, out, e);
	vk_reply_free(r);
	return rc;
}

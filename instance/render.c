/*
 * render: desired state → config lines → file text (see render.h). Lines are built in a
 * fixed order into a list, so the text and the hash are deterministic and golden-tested.
 */
#include "render.h"

#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "lib/engine/directives.h"

static struct inst_conf_line *add(struct inst_conf *c, const struct inst_render *r,
                                  const char *name)
{
	struct inst_conf_line *l;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->l = xreallocarray(c->l, c->cap, sizeof(*c->l));
	}
	l = &c->l[c->n++];
	memset(l, 0, sizeof(*l));
	l->name = xstrdup(name);
	l->live = vk_directive_is_live(r->engine, r->version, name);
	return l;
}

static struct inst_conf_line *add1(struct inst_conf *c, const struct inst_render *r,
                                   const char *name, const char *value)
{
	struct inst_conf_line *l = add(c, r, name);

	inst_strv_push(&l->args, value);
	return l;
}

static void addn(struct inst_conf *c, const struct inst_render *r, const char *name,
                 const char *words)
{
	struct inst_conf_line *l = add(c, r, name);
	char *dup = xstrdup(words), *save = NULL;

	for (char *w = strtok_r(dup, " ", &save); w; w = strtok_r(NULL, " ", &save))
		inst_strv_push(&l->args, w);
	free(dup);
}

static void owned_lines(const struct inst_render *r, struct inst_conf *c)
{
	char port[16];

	snprintf(port, sizeof(port), "%d", r->port);
	add1(c, r, "port", r->tls_cert ? "0" : port);
	if (r->tls_cert) {
		add1(c, r, "tls-port", port);
		add1(c, r, "tls-cert-file", r->tls_cert);
		add1(c, r, "tls-key-file", r->tls_key);
		add1(c, r, "tls-ca-cert-file", r->tls_ca);
		add1(c, r, "tls-replication", "yes");
		add1(c, r, "tls-auth-clients", r->tls_clients_required ? "yes" : "optional");
	}
	addn(c, r, "bind", r->bind);
	add1(c, r, "protected-mode", "no");
	add1(c, r, "unixsocket", r->unix_socket);
	add1(c, r, "unixsocketperm", "700");
	add1(c, r, "dir", r->data_dir);
	add1(c, r, "dbfilename", "dump.rdb");
	add1(c, r, "daemonize", "no");
	add1(c, r, "supervised", "no");
	add1(c, r, "logfile", "");
	if (r->announce_ip) {
		add1(c, r, "replica-announce-ip", r->announce_ip);
		add1(c, r, "replica-announce-port", port);
	}
	add1(c, r, "masteruser", INST_OPERATOR_USER);
	add1(c, r, "masterauth", r->masterauth ? r->masterauth : "")->managed = true;
}

/* A default the user did not override. */
static void def(struct inst_conf *c, const struct inst_render *r, const char *name,
                const char *value)
{
	if (!inst_desired_redis(r->desired, name))
		add1(c, r, name, value);
}

static void default_lines(const struct inst_render *r, struct inst_conf *c)
{
	const struct inst_desired *d = r->desired;
	char num[32];

	def(c, r, "appendonly", r->ephemeral ? "no" : "yes");
	if (!r->ephemeral)
		def(c, r, "aof-use-rdb-preamble", "yes");
	def(c, r, "save", r->ephemeral ? "" : INST_SAVE_RULES_PVC);
	def(c, r, "repl-diskless-sync", "yes");
	def(c, r, "repl-diskless-sync-delay", "0");
	def(c, r, "replica-read-only", "yes");
	if (d->has_maxmemory) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)d->maxmemory);
		def(c, r, "maxmemory", num);
	}
	if (d->maxmemory_policy)
		def(c, r, "maxmemory-policy", d->maxmemory_policy);
	snprintf(num, sizeof(num), "%lld", (long long)d->min_sync_replicas);
	def(c, r, "min-replicas-to-write", num);
	def(c, r, "min-replicas-max-lag", INST_MIN_REPLICAS_LAG);
}

static void user_line(struct inst_conf *c, const struct inst_render *r, const char *name,
                      enum inst_acl_kind kind, bool enabled, const struct inst_pwset *pw,
                      char *const *rules, size_t nrules)
{
	struct inst_conf_line *l = add(c, r, "user");

	l->managed = true;
	inst_strv_push(&l->args, name);
	inst_acl_rules(kind, enabled, pw, rules, nrules, &l->args);
}

static void users_lines(const struct inst_render *r, struct inst_conf *c)
{
	const struct inst_desired *d = r->desired;

	user_line(c, r, "default", INST_ACL_DEFAULT, true, r->default_pw, NULL, 0);
	user_line(c, r, INST_OPERATOR_USER, INST_ACL_OPERATOR, true, r->operator_pw, NULL, 0);
	for (size_t i = 0; i < d->nusers; i++)
		user_line(c, r, d->users[i].name, INST_ACL_CUSTOMER, d->users[i].enabled,
		          r->user_pw ? &r->user_pw[i] : NULL, d->users[i].rules,
		          d->users[i].nrules);
	for (size_t i = 0; i < d->acl.n; i++) /* spec.aclConfigSecret's, applied last */
		if (!inst_desired_spec_user(d, d->acl.users[i].name))
			user_line(c, r, d->acl.users[i].name, INST_ACL_FILE, false, NULL,
			          d->acl.users[i].rules, d->acl.users[i].nrules);
}

int inst_render_lines(const struct inst_render *r, struct inst_conf *out, struct err *e)
{
	const struct inst_desired *d = r->desired;
	struct inst_conf c = { 0 };
	char port[16];

	if (r->port < 1 || r->port > 65535 || !r->bind || !r->unix_socket || !r->data_dir)
		return err_set(e, -EINVAL, "render: port, bind, unix socket and dir are required");
	if (!!r->tls_cert != !!r->tls_key || !!r->tls_cert != !!r->tls_ca)
		return err_set(e, -EINVAL, "render: TLS needs a certificate, a key and a CA");
	owned_lines(r, &c);
	default_lines(r, &c);
	for (size_t i = 0; i < d->nredis; i++) {
		if (vk_directive_is_owned(d->redis[i].name)) {
			inst_conf_release(&c);
			return err_set(e, -EINVAL, "redis.%s: set by the operator",
			               d->redis[i].name);
		}
		add1(&c, r, d->redis[i].name, d->redis[i].value);
	}
	users_lines(r, &c);
	if (r->replicaof_host) {
		struct inst_conf_line *l = add(&c, r, "replicaof");

		snprintf(port, sizeof(port), "%d", r->replicaof_port);
		l->managed = true;
		inst_strv_push(&l->args, r->replicaof_host);
		inst_strv_push(&l->args, port);
	}
	*out = c;
	return 0;
}

int inst_conf_text(const struct inst_conf *c, struct buf *out, struct err *e)
{
	int rc = buf_append_str(out, "# Rendered by the redis-operator instance manager before "
	                             "each start.\n# Live changes are persisted here by CONFIG "
	                             "REWRITE.\n");

	for (size_t i = 0; !rc && i < c->n; i++) {
		rc = buf_append_str(out, c->l[i].name);
		for (size_t j = 0; !rc && j < c->l[i].args.n; j++) {
			rc = buf_append_char(out, ' ');
			if (!rc)
				rc = vk_config_quote(c->l[i].args.v[j], out);
		}
		if (!rc)
			rc = buf_append_char(out, '\n');
	}
	if (rc)
		return err_set(e, rc, "render: the config passes %zu bytes", out->limit);
	return 0;
}

void inst_conf_hash(const struct inst_conf *c, char out[INST_CONF_HASH_SIZE])
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char h[EVP_MAX_MD_SIZE];
	unsigned int hl = 0;

	EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	for (size_t i = 0; i < c->n; i++) {
		if (c->l[i].live || c->l[i].managed)
			continue;
		EVP_DigestUpdate(md, c->l[i].name, strlen(c->l[i].name) + 1);
		for (size_t j = 0; j < c->l[i].args.n; j++)
			EVP_DigestUpdate(md, c->l[i].args.v[j], strlen(c->l[i].args.v[j]) + 1);
		EVP_DigestUpdate(md, "\n", 1);
	}
	EVP_DigestFinal_ex(md, h, &hl);
	EVP_MD_CTX_free(md);
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
}

const struct inst_conf_line *inst_conf_find(const struct inst_conf *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->l[i].name, name) == 0)
			return &c->l[i];
	return NULL;
}

void inst_conf_release(struct inst_conf *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->l[i].name);
		inst_strv_release(&c->l[i].args);
	}
	free(c->l);
	memset(c, 0, sizeof(*c));
}

/*
 * Live TLS tests for lib/valkey (vk_tls_config) against real redis-server and
 * valkey-server processes with only a TLS port (port 0, as render.c writes it when the
 * TLS files are present), each test looped over both engines. Certificates are made
 * with the openssl command in the test's own directory: a CA, a leaf signed by it (the
 * server's certificate, also offered as the client certificate, as the instance
 * manager does), and another CA with its own leaf.
 *
 * - tls_connect: PING, INFO and AUTH over TLS with the CA and the client certificate.
 * - tls_refusals: plain TCP to the TLS port gets no answer; a server chain of another
 *   CA is refused (-EIO); with tls-auth-clients yes a client without a certificate, or
 *   with one of another CA, is refused, and accepted once it is optional; an unreadable
 *   CA file is -EIO naming it.
 * - tls_reread: the files are read at each connect: a CA file replaced by another CA's
 *   refuses the next connection, and the right one accepts it again.
 * - tls_replication: two servers with tls-replication yes; the replica follows the
 *   primary over TLS (REPLICAOF through lib/valkey), WAIT 1 over a TLS connection
 *   acknowledges a write, and ROLE over TLS on both reports the link (the calls the
 *   manager's hand-over and switchover make to peers).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/valkey/conn.h"
#include "live_server.h"
#include "testutil.h"
#include "unit.h"

#define POLL_TIMEOUT_MS 15000

static const char *const engines[] = { "redis-server", "valkey-server" };

struct pki {
	char dir[160];
	char ca[200], crt[200], key[200]; /* CA and its leaf */
	char other_ca[200], other_crt[200], other_key[200];
};

static void sh(const char *cmd)
{
	ck_assert_msg(system(cmd) == 0, "failed: %s", cmd);
}

/* A self-signed CA NAME.crt/.key in dir, and a leaf LEAF.crt/.key signed by it. */
static void make_ca_and_leaf(const char *dir, const char *name, const char *leaf)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
	         "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
	         "-subj /CN=%s -days 2 -keyout %s.key -out %s.crt 2>/dev/null && "
	         "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=%s "
	         "-keyout %s.key -out %s.csr 2>/dev/null && "
	         "openssl x509 -req -in %s.csr -CA %s.crt -CAkey %s.key -CAcreateserial -days 2 "
	         "-out %s.crt 2>/dev/null",
	         dir, name, name, name, leaf, leaf, leaf, leaf, name, name, leaf);
	sh(cmd);
}

static void pki_make(struct pki *p, const struct live_server *s)
{
	snprintf(p->dir, sizeof(p->dir), "%s", s->dir);
	make_ca_and_leaf(p->dir, "ca", "leaf");
	make_ca_and_leaf(p->dir, "other-ca", "other-leaf");
	snprintf(p->ca, sizeof(p->ca), "%s/ca.crt", p->dir);
	snprintf(p->crt, sizeof(p->crt), "%s/leaf.crt", p->dir);
	snprintf(p->key, sizeof(p->key), "%s/leaf.key", p->dir);
	snprintf(p->other_ca, sizeof(p->other_ca), "%s/other-ca.crt", p->dir);
	snprintf(p->other_crt, sizeof(p->other_crt), "%s/other-leaf.crt", p->dir);
	snprintf(p->other_key, sizeof(p->other_key), "%s/other-leaf.key", p->dir);
}

struct tls_server {
	struct live_server s;
	struct pki pki;
	int tls_port;
	char port[16];
};

/* A server with only a TLS port, its certificate signed by pki's CA, client
 * certificates required. The PKI is made in the first server's directory (pki NULL)
 * or shared. */
static void tls_start(struct tls_server *t, const char *bin, const struct pki *pki)
{
	live_server_paths(&t->s, 0);
	if (pki)
		t->pki = *pki;
	else
		pki_make(&t->pki, &t->s);
	t->tls_port = live_free_port();
	snprintf(t->port, sizeof(t->port), "%d", t->tls_port);
	const char *extra[] = { "--tls-port",
		                t->port,
		                "--tls-cert-file",
		                t->pki.crt,
		                "--tls-key-file",
		                t->pki.key,
		                "--tls-ca-cert-file",
		                t->pki.ca,
		                "--tls-auth-clients",
		                "yes",
		                "--tls-replication",
		                "yes",
		                NULL };

	live_server_start(&t->s, bin, NULL, extra);
}

static struct vk_conn *tls_conn(const struct tls_server *t, const char *ca, const char *crt,
                                const char *key)
{
	struct vk_tls_config tls = { .ca_file = ca, .cert_file = crt, .key_file = key };
	struct vk_conn_config cfg = { .host = "127.0.0.1",
		                      .port = t->tls_port,
		                      .connect_timeout_ms = 1000,
		                      .command_timeout_ms = 3000,
		                      .tls = &tls };

	return vk_conn_new(&cfg);
}

static struct vk_conn *unix_conn(const struct tls_server *t)
{
	struct vk_conn_config cfg = { .unix_path = t->s.sock,
		                      .connect_timeout_ms = 1000,
		                      .command_timeout_ms = 3000 };

	return vk_conn_new(&cfg);
}

static void must(int rc, const struct err *e, const char *what)
{
	ck_assert_msg(rc == 0, "%s: %s (%s)", what, e->msg, err_name(rc));
}

START_TEST(tls_connect)
{
	struct tls_server t;
	struct vk_conn *c, *admin;
	struct vk_kv pw = { "requirepass", "s3cret" };
	struct vk_tls_config tls;
	struct vk_conn_config cfg;
	struct vk_info info;
	struct err e;

	if (live_skip_missing(engines[_i]))
		return;
	tls_start(&t, engines[_i], NULL);
	c = tls_conn(&t, t.pki.ca, t.pki.crt, t.pki.key);
	ck_assert(vk_conn_is_tls(c));
	err_clear(&e);
	must(vk_ping(c, &e), &e, "PING over TLS");
	must(vk_info(c, "server", &info, &e), &e, "INFO over TLS");
	ck_assert_uint_gt(info.version, 0);
	vk_conn_free(c);

	/* AUTH runs after the handshake. */
	admin = unix_conn(&t);
	must(vk_config_set(admin, &pw, 1, &e), &e, "CONFIG SET requirepass");
	tls = (struct vk_tls_config){ .ca_file = t.pki.ca,
		                      .cert_file = t.pki.crt,
		                      .key_file = t.pki.key };
	cfg = (struct vk_conn_config){ .host = "127.0.0.1",
		                       .port = t.tls_port,
		                       .connect_timeout_ms = 1000,
		                       .command_timeout_ms = 3000,
		                       .password = "s3cret",
		                       .tls = &tls };
	c = vk_conn_new(&cfg);
	must(vk_ping(c, &e), &e, "PING over TLS after AUTH");
	vk_conn_free(c);
	/* TLS settings are ignored for a Unix socket. */
	cfg = (struct vk_conn_config){ .unix_path = t.s.sock,
		                       .connect_timeout_ms = 1000,
		                       .command_timeout_ms = 3000,
		                       .password = "s3cret",
		                       .tls = &tls };
	c = vk_conn_new(&cfg);
	ck_assert(!vk_conn_is_tls(c));
	must(vk_ping(c, &e), &e, "PING on the Unix socket");
	vk_conn_free(c);
	vk_conn_free(admin);
	live_server_stop(&t.s);
}
END_TEST

/* One connection attempt: its errno, and its message in msg. */
static int try_ping(struct vk_conn *c, char *msg, size_t n)
{
	struct err e;
	int rc;

	err_clear(&e);
	rc = vk_ping(c, &e);
	snprintf(msg, n, "%s", rc ? e.msg : "");
	vk_conn_free(c);
	return rc;
}

START_TEST(tls_refusals)
{
	struct vk_conn_config plain = { .host = "127.0.0.1",
		                        .connect_timeout_ms = 1000,
		                        .command_timeout_ms = 1000 };
	struct vk_kv optional = { "tls-auth-clients", "optional" };
	struct tls_server t;
	struct vk_conn *admin;
	char msg[512];
	struct err e;

	if (live_skip_missing(engines[_i]))
		return;
	tls_start(&t, engines[_i], NULL);
	plain.port = t.tls_port;
	ck_assert_int_ne(try_ping(vk_conn_new(&plain), msg, sizeof(msg)), 0);
	/* The server's chain does not verify against another CA. */
	ck_assert_int_eq(
	        try_ping(tls_conn(&t, t.pki.other_ca, t.pki.crt, t.pki.key), msg, sizeof(msg)),
	        -EIO);
	/* tls-auth-clients yes: no certificate, or one of another CA, is refused. */
	ck_assert_int_ne(try_ping(tls_conn(&t, t.pki.ca, NULL, NULL), msg, sizeof(msg)), 0);
	ck_assert_int_ne(try_ping(tls_conn(&t, t.pki.ca, t.pki.other_crt, t.pki.other_key), msg,
	                          sizeof(msg)),
	                 0);
	/* Unreadable files: -EIO naming them, before any I/O on the socket. */
	ck_assert_int_eq(
	        try_ping(tls_conn(&t, "/nonexistent/ca.crt", NULL, NULL), msg, sizeof(msg)), -EIO);
	ck_assert_msg(strstr(msg, "/nonexistent/ca.crt") != NULL, "message: %s", msg);
	/* optional: a client without a certificate is let in. */
	admin = unix_conn(&t);
	err_clear(&e);
	must(vk_config_set(admin, &optional, 1, &e), &e, "CONFIG SET tls-auth-clients");
	ck_assert_int_eq(try_ping(tls_conn(&t, t.pki.ca, NULL, NULL), msg, sizeof(msg)), 0);
	vk_conn_free(admin);
	live_server_stop(&t.s);
}
END_TEST

START_TEST(tls_reread)
{
	struct tls_server t;
	struct vk_conn *c;
	char ca[240], cmd[600];
	struct err e;

	if (live_skip_missing(engines[_i]))
		return;
	tls_start(&t, engines[_i], NULL);
	snprintf(ca, sizeof(ca), "%s/client-ca.crt", t.pki.dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", t.pki.ca, ca);
	sh(cmd);
	c = tls_conn(&t, ca, t.pki.crt, t.pki.key);
	err_clear(&e);
	must(vk_ping(c, &e), &e, "PING with the right CA");
	snprintf(cmd, sizeof(cmd), "cp %s %s", t.pki.other_ca, ca);
	sh(cmd);
	must(vk_ping(c, &e), &e, "PING on the open connection"); /* not re-read while open */
	vk_conn_close(c);
	ck_assert_int_eq(vk_ping(c, &e), -EIO);
	snprintf(cmd, sizeof(cmd), "cp %s %s", t.pki.ca, ca);
	sh(cmd);
	must(vk_ping(c, &e), &e, "PING with the right CA again");
	vk_conn_free(c);
	live_server_stop(&t.s);
}
END_TEST

static void poll_role(struct vk_conn *c, bool (*pred)(const struct vk_role_info *),
                      struct vk_role_info *out)
{
	int64_t deadline = clock_mono_ms() + POLL_TIMEOUT_MS;
	struct err e;

	for (;;) {
		err_clear(&e);
		must(vk_role(c, out, &e), &e, "ROLE over TLS");
		if (pred(out))
			return;
		ck_assert_msg(clock_mono_ms() < deadline, "ROLE: condition not reached");
		usleep(20 * 1000);
	}
}

static bool replica_connected(const struct vk_role_info *r)
{
	return r->role == VK_ROLE_REPLICA && strcmp(r->state, "connected") == 0;
}

START_TEST(tls_replication)
{
	struct tls_server p, r;
	struct vk_conn *pc, *rc, *radmin;
	struct vk_role_info role;
	long long acked = -1;
	struct err e;

	if (live_skip_missing(engines[_i]))
		return;
	tls_start(&p, engines[_i], NULL);
	tls_start(&r, engines[_i], &p.pki);
	pc = tls_conn(&p, p.pki.ca, p.pki.crt, p.pki.key);
	rc = tls_conn(&r, r.pki.ca, r.pki.crt, r.pki.key);
	radmin = unix_conn(&r);
	err_clear(&e);
	must(vk_replicaof(radmin, "127.0.0.1", p.tls_port, &e), &e, "REPLICAOF the TLS port");
	poll_role(rc, replica_connected, &role);
	ck_assert_int_eq(role.master_port, p.tls_port);
	must(vk_command(pc, NULL, &e, "SET", "acked", "1"), &e, "SET over TLS");
	must(vk_wait(pc, 1, 5000, &acked, &e), &e, "WAIT over TLS");
	ck_assert_int_eq(acked, 1);
	must(vk_role(pc, &role, &e), &e, "ROLE of the primary over TLS");
	ck_assert_int_eq(role.role, VK_ROLE_PRIMARY);
	ck_assert_uint_eq(role.nreplicas, 1);
	ck_assert_int_gt(role.replicas[0].offset, 0);
	vk_conn_free(pc);
	vk_conn_free(rc);
	vk_conn_free(radmin);
	live_server_stop(&r.s);
	live_server_stop(&p.s);
}
END_TEST

static Suite *valkey_tls_suite(void)
{
	Suite *s = suite_create("valkey_tls");
	TCase *tc = tcase_create("tls");

	tcase_add_unchecked_fixture(tc, live_base_setup, live_base_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, tls_connect, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, tls_refusals, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, tls_reread, 0, ARRAY_LEN(engines));
	tcase_add_loop_test(tc, tls_replication, 0, ARRAY_LEN(engines));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(valkey_tls_suite)

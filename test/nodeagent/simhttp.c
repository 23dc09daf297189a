/*
 * simhttp: the simulator's transport (sim.h, sim_int.h).
 *
 * One socket bound to 0.0.0.0:port (every pod address reaches it through light.c's
 * AnyIP route); an acceptor thread takes each connection and waits (epoll, one shot) for
 * its first byte, then hands it with MHD_add_connection to one of two libmicrohttpd
 * daemons without listening sockets of their own: the TLS one when that byte starts a
 * TLS handshake and the pod (found by the address the connection was made to,
 * getsockname) mounts its cluster's instance TLS Secret, else the plain one. So the
 * simulator answers whichever the controller speaks; a real manager with TLS material
 * serves HTTPS only, and plain requests to such pods are counted (plain_to_tls) for the
 * log. A connection for no known pod, a TLS one to a pod without a certificate, or one
 * silent for SIM_SNIFF_MS is closed.
 *
 * TLS: one GnuTLS daemon serves every cluster. Its certificate callback runs during each
 * handshake, finds the pod from the socket's local address and presents its cluster's
 * server certificate (imported once per cluster and certificate, kept until the end, so
 * GnuTLS may hold on to them). GnuTLS's retrieve callback has no user pointer, hence the
 * one static pointer below: an agent has one simulator. The daemon is started with the
 * first HTTPS pod, with that pod's client CA as the trust list, so that a client
 * certificate is asked for (the controller then sends one, as it does to a real manager);
 * none is verified.
 *
 * Threads: the acceptor; each daemon's own polling thread (the handler and the TLS
 * callback run there). They only read the table under the mutex.
 */
#include "sim_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"

#define SIM_BACKLOG        4096
#define SIM_CONN_TIMEOUT_S 30
#define SIM_ACCEPT_POLL_MS 200
#define SIM_CERTS_MAX      8     /* certificates in one chain */
#define SIM_SNIFF_MS       10000 /* a connection that sends nothing this long is closed */
#define SIM_EVENTS         256
#define SIM_FDS_MAX        (1 << 20)
#define TLS_HANDSHAKE      0x16 /* the first byte of a TLS ClientHello record */

struct sim_cred {
	char key[SIM_KEY_MAX + 1]; /* ns/cluster */
	char *cert_pem;
	gnutls_pcert_st pcert[SIM_CERTS_MAX];
	unsigned n;
	gnutls_privkey_t pkey;
	struct sim_cred *next;
};

/* The simulator the TLS callback serves (see the header comment). */
static _Atomic(struct na_sim *) tls_owner;

/* The pod address of socket fd, if it is in the simulator's range. */
static bool fd_local_ip(const struct na_sim *s, int fd, char out[16])
{
	struct sockaddr_in sa = { 0 };
	socklen_t len = sizeof(sa);

	if (fd < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    sa.sin_family != AF_INET || ntohl(sa.sin_addr.s_addr) - s->o.net >= s->o.size)
		return false;
	return inet_ntop(AF_INET, &sa.sin_addr, out, 16) != NULL;
}

/* --- requests ------------------------------------------------------------------------------- */

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
	struct na_sim *s = cls;
	struct sim_req *r = *con_cls;
	const union MHD_ConnectionInfo *ci;
	char ip[16];

	(void)version;
	if (!r) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !fd_local_ip(s, ci->connect_fd, ip))
			return MHD_NO;
		r = xcalloc(1, sizeof(*r));
		buf_init(&r->body, NA_SIM_BODY_MAX);
		sim_copy(r->ip, sizeof(r->ip), ip);
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_size) {
		if (buf_append(&r->body, upload, *upload_size) < 0)
			r->too_big = true;
		*upload_size = 0;
		return MHD_YES;
	}
	atomic_fetch_add(&s->requests, 1);
	return sim_route(s, c, url, method, r);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	struct sim_req *r = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (!r)
		return;
	buf_release(&r->body);
	free(r);
	*con_cls = NULL;
}

/* --- TLS -------------------------------------------------------------------------------------- */

static int cert_cb(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                   const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
                   unsigned int *pcert_len, gnutls_privkey_t *pkey)
{
	struct na_sim *s = atomic_load(&tls_owner);
	const struct sim_cred *cr = NULL;
	struct sim_inst *i;
	char ip[16];

	(void)req_ca_dn;
	(void)nreqs;
	(void)algos;
	(void)nalgos;
	if (!s || !fd_local_ip(s, gnutls_transport_get_int(session), ip))
		return -1;
	pthread_mutex_lock(&s->mu);
	i = sim_inst_at(s, ip);
	cr = i ? i->cred : NULL;
	pthread_mutex_unlock(&s->mu);
	if (!cr)
		return -1;
	*pcert = (gnutls_pcert_st *)cr->pcert; /* kept until the simulator ends */
	*pcert_len = cr->n;
	*pkey = cr->pkey;
	return 0;
}

static void cred_free(struct sim_cred *c)
{
	for (unsigned k = 0; k < c->n; k++)
		gnutls_pcert_deinit(&c->pcert[k]);
	if (c->pkey)
		gnutls_privkey_deinit(c->pkey);
	free(c->cert_pem);
	free(c);
}

static struct sim_cred *cred_import(const char *key, const char *cert, const char *pem_key,
                                    struct err *e)
{
	struct sim_cred *c = xcalloc(1, sizeof(*c));
	gnutls_datum_t d = { (unsigned char *)(uintptr_t)cert, (unsigned)strlen(cert) };
	int rc;

	sim_copy(c->key, sizeof(c->key), key);
	c->cert_pem = xstrdup(cert);
	c->n = SIM_CERTS_MAX;
	rc = gnutls_pcert_list_import_x509_raw(c->pcert, &c->n, &d, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0) {
		c->n = 0;
		err_set(e, -EINVAL, "%s: tls.crt: %s", key, gnutls_strerror(rc));
		goto fail;
	}
	d = (gnutls_datum_t){ (unsigned char *)(uintptr_t)pem_key, (unsigned)strlen(pem_key) };
	if ((rc = gnutls_privkey_init(&c->pkey)) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(c->pkey, &d, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		err_set(e, -EINVAL, "%s: tls.key: %s", key, gnutls_strerror(rc));
		goto fail;
	}
	return c;
fail:
	cred_free(c);
	return NULL;
}

static struct MHD_Daemon *daemon_start(struct na_sim *s, const char *trust_pem)
{
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
	                 MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC;

	if (!trust_pem)
		return MHD_start_daemon(flags, 0, NULL, NULL, handle, s,
		                        MHD_OPTION_CONNECTION_LIMIT, s->o.conn_limit,
		                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SIM_CONN_TIMEOUT_S,
		                        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_END);
	return MHD_start_daemon(
	        flags | MHD_USE_TLS, 0, NULL, NULL, handle, s, MHD_OPTION_CONNECTION_LIMIT,
	        s->o.conn_limit, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SIM_CONN_TIMEOUT_S,
	        MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_HTTPS_CERT_CALLBACK, cert_cb,
	        MHD_OPTION_HTTPS_MEM_TRUST, trust_pem, MHD_OPTION_END);
}

const struct sim_cred *sim_cred_get(struct na_sim *s, const char *cluster_key, const char *cert_pem,
                                    const char *key_pem, const char *ca_pem, struct err *e)
{
	struct sim_cred *c;

	for (c = s->creds; c; c = c->next)
		if (strcmp(c->key, cluster_key) == 0 && strcmp(c->cert_pem, cert_pem) == 0)
			return c;
	if (!key_pem || !ca_pem) {
		err_set(e, -EINVAL, "%s: TLS material without %s", cluster_key,
		        key_pem ? "ca.crt" : "tls.key");
		return NULL;
	}
	if (!(c = cred_import(cluster_key, cert_pem, key_pem, e)))
		return NULL;
	if (!s->tls) {
		atomic_store(&tls_owner, s);
		if (!(s->tls = daemon_start(s, ca_pem))) {
			err_set(e, -EINVAL, "%s: the TLS daemon does not start (ca.crt?)",
			        cluster_key);
			cred_free(c);
			return NULL;
		}
	}
	c->next = s->creds;
	s->creds = c;
	return c;
}

void sim_creds_free(struct na_sim *s)
{
	while (s->creds) {
		struct sim_cred *next = s->creds->next;

		cred_free(s->creds);
		s->creds = next;
	}
}

/* --- accepting ------------------------------------------------------------------------------ */

/* The daemon for fd, whose first byte is first; NULL: close it. */
static struct MHD_Daemon *daemon_for(struct na_sim *s, int fd, unsigned char first)
{
	struct MHD_Daemon *d = NULL;
	bool tls = first == TLS_HANDSHAKE;
	struct sim_inst *i;
	char ip[16];

	if (!fd_local_ip(s, fd, ip))
		return NULL;
	pthread_mutex_lock(&s->mu);
	i = sim_inst_at(s, ip);
	if (i && tls && i->cred)
		d = s->tls;
	else if (i && !tls)
		d = s->plain;
	if (i && !tls && i->cred)
		atomic_fetch_add(&s->plain_to_tls, 1);
	pthread_mutex_unlock(&s->mu);
	return d;
}

/* fd sent its first bytes: to a daemon, or closed. */
static void hand_over(struct na_sim *s, struct acceptor *a, int fd)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);
	struct MHD_Daemon *d = NULL;
	unsigned char first;
	ssize_t n = recv(fd, &first, 1, MSG_PEEK);

	if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.fd = fd };

		epoll_ctl(a->ep, EPOLL_CTL_MOD, fd, &ev); /* not yet after all */
		return;
	}
	epoll_ctl(a->ep, EPOLL_CTL_DEL, fd, NULL);
	a->since[fd] = 0;
	if (n == 1 && getpeername(fd, (struct sockaddr *)&peer, &len) == 0)
		d = daemon_for(s, fd, first);
	if (!d) {
		atomic_fetch_add(&s->rejected, 1);
		close(fd);
		return;
	}
	if (MHD_add_connection(d, fd, (struct sockaddr *)&peer, len) != MHD_YES) /* fd closed */
		atomic_fetch_add(&s->rejected, 1);
}

/* New connections wait (EPOLLONESHOT) for their first byte. */
static void accept_all(struct na_sim *s, struct acceptor *a)
{
	int64_t now = clock_mono_ms();
	int fd;

	while ((fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.fd = fd };

		if ((size_t)fd >= a->cap || epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			atomic_fetch_add(&s->rejected, 1);
			close(fd);
			continue;
		}
		a->since[fd] = now;
	}
}

/* Closes connections that sent nothing for SIM_SNIFF_MS. */
static void expire(struct na_sim *s, struct acceptor *a, int64_t now)
{
	for (size_t fd = 0; fd < a->cap; fd++) {
		if (!a->since[fd] || now - a->since[fd] < SIM_SNIFF_MS)
			continue;
		epoll_ctl(a->ep, EPOLL_CTL_DEL, (int)fd, NULL);
		a->since[fd] = 0;
		close((int)fd);
		atomic_fetch_add(&s->rejected, 1);
	}
}

static void *acceptor_main(void *arg)
{
	struct na_sim *s = arg;
	struct acceptor *a = &s->acc;
	struct epoll_event ev[SIM_EVENTS];
	int64_t next_expiry = clock_mono_ms() + SIM_SNIFF_MS;

	while (!atomic_load(&s->acceptor_stop)) {
		int n = epoll_wait(a->ep, ev, SIM_EVENTS, SIM_ACCEPT_POLL_MS);

		for (int k = 0; k < n; k++) {
			if (ev[k].data.fd == s->listen_fd)
				accept_all(s, a);
			else
				hand_over(s, a, ev[k].data.fd);
		}
		if (clock_mono_ms() >= next_expiry) {
			expire(s, a, clock_mono_ms());
			next_expiry = clock_mono_ms() + SIM_SNIFF_MS / 4;
		}
	}
	return NULL;
}

static int listen_on(struct na_sim *s, struct err *e)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		                  .sin_port = htons((uint16_t)s->o.port),
		                  .sin_addr = { htonl(INADDR_ANY) } };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return err_set(e, -errno, "simulator: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, SIM_BACKLOG) < 0) {
		int rc = -errno;

		close(fd);
		return err_set(e, rc, "simulator: cannot listen on 0.0.0.0:%d: %s", s->o.port,
		               strerror(-rc));
	}
	s->listen_fd = fd;
	return 0;
}

static int acceptor_init(struct na_sim *s, struct acceptor *a, struct err *e)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = s->listen_fd };
	struct rlimit r;

	a->cap = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < SIM_FDS_MAX ? r.rlim_cur
	                                                                       : SIM_FDS_MAX;
	a->since = xcalloc(a->cap, sizeof(*a->since));
	if ((a->ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(a->ep, EPOLL_CTL_ADD, s->listen_fd, &ev) < 0)
		return err_set(e, -errno, "simulator: epoll: %s", strerror(errno));
	return 0;
}

/* Closes the connections still waiting for their first byte. */
static void acceptor_release(struct acceptor *a)
{
	for (size_t fd = 0; a->since && fd < a->cap; fd++)
		if (a->since[fd])
			close((int)fd);
	free(a->since);
	a->since = NULL;
	if (a->ep >= 0)
		close(a->ep);
	a->ep = -1;
}

int sim_http_start(struct na_sim *s, struct err *e)
{
	int rc;

	if ((rc = listen_on(s, e)))
		return rc;
	if (!(s->plain = daemon_start(s, NULL)))
		return err_set(e, -EIO, "simulator: the HTTP daemon does not start");
	if ((rc = acceptor_init(s, &s->acc, e)))
		return rc;
	atomic_store(&s->acceptor_stop, false);
	if ((rc = pthread_create(&s->acceptor, NULL, acceptor_main, s)))
		return err_set(e, -rc, "simulator: acceptor thread: %s", strerror(rc));
	s->acceptor_running = true;
	return 0;
}

void sim_http_stop(struct na_sim *s)
{
	struct na_sim *me = s; /* the callback's pointer is cleared only if it is ours */

	atomic_store(&s->acceptor_stop, true);
	if (s->acceptor_running)
		pthread_join(s->acceptor, NULL);
	s->acceptor_running = false;
	acceptor_release(&s->acc);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	s->listen_fd = -1;
	if (s->plain)
		MHD_stop_daemon(s->plain);
	if (s->tls)
		MHD_stop_daemon(s->tls);
	s->plain = s->tls = NULL;
	atomic_compare_exchange_strong(&tls_owner, &me, NULL);
}

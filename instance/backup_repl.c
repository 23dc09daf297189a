/*
 * backup_repl: method rdb from the server's replication stream (backup.h). The backup
 * thread connects to the server's Unix socket as a replica would and asks for a full
 * synchronisation; the RDB the server sends is written, as it arrives, into a spool file
 * of the data dir by a reader thread of its own, and objstore_put_growing uploads the
 * spool part by part behind it. The dump and the upload overlap: a backup takes about
 * the longer of the two, not their sum.
 *
 * The exchange (Redis 7.0 and Valkey 8.0, checked on both):
 *   AUTH <operator user> <password>        +OK
 *   REPLCONF rdb-only 1                    +OK   (refused: the caller falls back to BGSAVE)
 *   REPLCONF capa eof                      +OK   (only when the dump is diskless, below)
 *   PSYNC ? -1                             "\n"… +FULLRESYNC <replid> <offset> "\n"…
 *                                          $EOF:<40-byte mark> <RDB> <mark>   (diskless)
 *                                          $<length> <RDB>                    (disk-based)
 * The server sends a newline every second while it prepares (its diskless delay, another
 * child still running, a disk-based BGSAVE), so a silent socket for io_timeout_ms is a
 * dead one; the whole wait for the payload's header is bounded by start_timeout_ms. The
 * replid and offset are those of the snapshot itself.
 *
 * "rdb-only" is what keeps the fake replica from ever counting as a replica: the server
 * drops such a client itself once the RDB is sent ("RDB transfer completed, rdb only
 * replica … should be disconnected asap"), and before that it is not online, so it never
 * counts for min-replicas-to-write nor for WAIT. Without it, a replica that stays
 * connected after a disk-based or diskless transfer counted for both
 * (min_slaves_good_slaves:1, SET accepted under min-replicas-to-write 1, WAIT 1 answered
 * 1, on both engines): hence no fallback to a plain PSYNC. After the payload the reader
 * waits (REPL_DROP_MS, while the upload goes on) for the server's close, which proves
 * rdb-only was honoured (inst_repl_snap_dropped), then shuts the connection anyway.
 *
 * The spool is created and unlinked at once (nothing is left behind by a kill); what the
 * upload has sent is punched out of it as the upload goes (its disk use is the reader's
 * lead over the upload), so a retried upload takes a new snapshot.
 */
#include "instance/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/parse.h"

#define REPL_MARK_LEN  40 /* the diskless payload's end mark */
#define REPL_ID_LEN    40
#define REPL_LINE_MAX  512
#define REPL_CHUNK     (64u << 10)
#define REPL_SPOOL     ".redis-operator.backup.spool"
#define REPL_WAIT_STEP 100  /* ms between two looks at cancel */
#define REPL_DROP_MS   2000 /* for the server to drop us after the payload */

struct inst_repl_snap {
	int sock, fd;
	const atomic_bool *cancel;
	int io_timeout_ms;
	char repl_id[48];
	int64_t offset;
	bool eof_mode; /* $EOF:<mark>, else $<len> */
	char mark[REPL_MARK_LEN];
	uint64_t len; /* $<len> mode */
	/* the handshake's buffer: bytes read past the header are the payload's first */
	char line[2 * REPL_LINE_MAX];
	size_t got, used;
	pthread_t thread;
	bool started, joined;
	bool dropped; /* the server closed the connection after the payload (rdb-only) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t punched; /* the uploader's: bytes dropped from the spool */
	uint64_t written; /* [mu] payload bytes the uploader may take */
	bool done;        /* [mu] the payload ended (written is final) or failed */
	int rc;           /* [mu] the failure */
	char why[sizeof(((struct err *)0)->msg)]; /* [mu] */
};

bool inst_repl_diskless(bool diskless_sync, long long delay_s, long long used_memory)
{
	if (!diskless_sync)
		return false;
	return delay_s <= 0 || used_memory >= delay_s * INST_REPL_BYTES_PER_DELAY_S;
}

static int sock_open(const char *path, int timeout_ms, struct err *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
	int s;

	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(e, -ENAMETOOLONG, "%s: socket path too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return err_set(e, -errno, "socket: %s", strerror(errno));
	(void)setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = err_set(e, -errno, "%s: %s", path, strerror(errno));

		close(s);
		return rc;
	}
	return s;
}

/* One command as a RESP array (the buffer, which may hold the password, is wiped). */
static int send_cmd(struct inst_repl_snap *s, int argc, const char *const *argv, struct err *e)
{
	char out[1024];
	size_t n = (size_t)snprintf(out, sizeof(out), "*%d\r\n", argc);
	int rc = 0;

	for (int i = 0; i < argc && n < sizeof(out); i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "$%zu\r\n%s\r\n", strlen(argv[i]),
		                      argv[i]);
	if (n >= sizeof(out))
		rc = err_set(e, -EMSGSIZE, "%s: command too long", argv[0]);
	for (size_t off = 0; !rc && off < n;) {
		ssize_t w = send(s->sock, out + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = err_set(e, -errno, "sending %s: %s", argv[0], strerror(errno));
		else
			off += (size_t)w;
	}
	secure_zero(out, sizeof(out));
	return rc;
}

static int sock_read(struct inst_repl_snap *s, void *buf, size_t cap, struct err *e)
{
	ssize_t n;

	do
		n = recv(s->sock, buf, cap, 0);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		return (int)n;
	if (n == 0)
		return err_set(e, -ECONNRESET, "the server closed the replication connection");
	if (errno == EAGAIN || errno == EWOULDBLOCK)
		return err_set(e, -ETIMEDOUT, "no byte from the server for %d ms",
		               s->io_timeout_ms);
	return err_set(e, -errno, "reading the replication stream: %s", strerror(errno));
}

/* The next line of the handshake, without its \r\n; a lone "\n" (the server's keepalive)
 * is the empty line. */
static int read_line(struct inst_repl_snap *s, char out[REPL_LINE_MAX], struct err *e)
{
	int n;

	for (;;) {
		char *nl = memchr(s->line + s->used, '\n', s->got - s->used);

		if (nl) {
			size_t len = (size_t)(nl - (s->line + s->used));

			if (len && nl[-1] == '\r')
				len--;
			if (len >= REPL_LINE_MAX)
				break;
			memcpy(out, s->line + s->used, len);
			out[len] = '\0';
			s->used = (size_t)(nl - s->line) + 1;
			return 0;
		}
		if (s->got - s->used >= REPL_LINE_MAX)
			break;
		memmove(s->line, s->line + s->used, s->got - s->used);
		s->got -= s->used;
		s->used = 0;
		if ((n = sock_read(s, s->line + s->got, REPL_LINE_MAX, e)) < 0)
			return n;
		s->got += (size_t)n;
	}
	return err_set(e, -EPROTO, "a handshake line longer than %d bytes", REPL_LINE_MAX);
}

/* The next line that is not a keepalive, before the deadline. */
static int next_line(struct inst_repl_snap *s, int64_t deadline, char out[REPL_LINE_MAX],
                     struct err *e)
{
	int rc;

	out[0] = '\0';
	do {
		if (s->cancel && atomic_load(s->cancel))
			return err_set(e, -ECANCELED, "cancelled: the manager is stopping");
		if (clock_mono_ms() > deadline)
			return err_set(e, -ETIMEDOUT,
			               "the server did not start the RDB transfer in time (another "
			               "child process still running?)");
		rc = read_line(s, out, e);
	} while (!rc && !out[0]);
	return rc;
}

/* One command and its +OK; a server error is -ENOTSUP (the caller falls back). */
static int expect_ok(struct inst_repl_snap *s, int argc, const char *const *argv, bool secret,
                     struct err *e)
{
	char l[REPL_LINE_MAX] = "";
	int rc = send_cmd(s, argc, argv, e);

	if (!rc)
		rc = read_line(s, l, e);
	if (rc || strcmp(l, "+OK") == 0)
		return rc;
	if (secret)
		return err_set(e, l[0] == '-' ? -EACCES : -EPROTO, "%s: refused", argv[0]);
	return err_set(e, -ENOTSUP, "%s %s: %.200s", argv[0], argv[1], l);
}

int inst_repl_parse_fullresync(const char *line, char repl_id[48], int64_t *offset, struct err *e)
{
	static const char pfx[] = "+FULLRESYNC ";
	const char *id = line + sizeof(pfx) - 1, *sp = NULL;
	int64_t off = -1;

	if (strncmp(line, pfx, sizeof(pfx) - 1) == 0)
		sp = strchr(id, ' ');
	if (!sp || sp - id != REPL_ID_LEN || parse_int64(sp + 1, 0, INT64_MAX, &off, NULL) < 0)
		return err_set(e, -EPROTO,
		               "PSYNC answered %.80s, not +FULLRESYNC <replid> <offset>", line);
	memcpy(repl_id, id, REPL_ID_LEN);
	repl_id[REPL_ID_LEN] = '\0';
	*offset = off;
	return 0;
}

int inst_repl_parse_bulk(const char *line, bool *eof_mode, char mark[40], uint64_t *len,
                         struct err *e)
{
	uint64_t n;

	if (strncmp(line, "$EOF:", 5) == 0 && strlen(line) == 5 + REPL_MARK_LEN) {
		*eof_mode = true;
		memcpy(mark, line + 5, REPL_MARK_LEN);
		return 0;
	}
	if (line[0] == '$' && parse_uint64(line + 1, 0, UINT64_MAX, &n, NULL) == 0) {
		*eof_mode = false;
		*len = n;
		return 0;
	}
	return err_set(e, -EPROTO,
	               "the RDB transfer began with %.80s, not $EOF:<mark> or $<length>", line);
}

/* AUTH, REPLCONF, PSYNC, +FULLRESYNC and the payload's header. */
static int handshake(struct inst_repl_snap *s, const struct inst_repl_conf *cf, struct err *e)
{
	const char *auth[] = { "AUTH", cf->user, cf->password };
	const char *rdb_only[] = { "REPLCONF", "rdb-only", "1" };
	const char *capa[] = { "REPLCONF", "capa", "eof" };
	const char *psync[] = { "PSYNC", "?", "-1" };
	int64_t deadline = clock_mono_ms() + cf->start_timeout_ms;
	char l[REPL_LINE_MAX] = "";
	int rc = 0;

	if (cf->password)
		rc = expect_ok(s, 3, auth, true, e);
	if (!rc)
		rc = expect_ok(s, 3, rdb_only, false, e);
	if (!rc && cf->diskless)
		rc = expect_ok(s, 3, capa, false, e);
	if (!rc)
		rc = send_cmd(s, 3, psync, e);
	if (!rc)
		rc = next_line(s, deadline, l, e);
	if (!rc && l[0] == '-')
		return err_set(e, -ENOTSUP, "PSYNC: %.200s", l + 1);
	if (!rc)
		rc = inst_repl_parse_fullresync(l, s->repl_id, &s->offset, e);
	if (!rc)
		rc = next_line(s, deadline, l, e);
	if (!rc)
		rc = inst_repl_parse_bulk(l, &s->eof_mode, s->mark, &s->len, e);
	return rc;
}

/* --- the reader thread --- */

static void publish(struct inst_repl_snap *s, uint64_t written, bool done, int rc, const char *why)
{
	pthread_mutex_lock(&s->mu);
	s->written = written;
	s->done = done;
	s->rc = rc;
	if (why)
		snprintf(s->why, sizeof(s->why), "%s", why);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static int spool_write(struct inst_repl_snap *s, const void *p, size_t n, struct err *e)
{
	for (size_t off = 0; off < n;) {
		ssize_t w = write(s->fd, (const char *)p + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return err_set(e, -errno, "the spool %s: %s%s", REPL_SPOOL, strerror(errno),
			               errno == ENOSPC ? " (the data volume is full)" : "");
		off += (size_t)w;
	}
	return 0;
}

/* The last 40 bytes read, after n more bytes at p. */
static void tail_update(char tail[REPL_MARK_LEN], const char *p, size_t n)
{
	if (n >= REPL_MARK_LEN) {
		memcpy(tail, p + n - REPL_MARK_LEN, REPL_MARK_LEN);
	} else {
		memmove(tail, tail + n, REPL_MARK_LEN - n);
		memcpy(tail + REPL_MARK_LEN - n, p, n);
	}
}

/* Bytes the uploader may take: in EOF mode the last 40 may be the mark. */
static uint64_t usable(const struct inst_repl_snap *s, uint64_t total)
{
	if (!s->eof_mode)
		return total;
	return total > REPL_MARK_LEN ? total - REPL_MARK_LEN : 0;
}

static bool payload_ended(const struct inst_repl_snap *s, const char *tail, uint64_t total)
{
	if (!s->eof_mode)
		return total == s->len;
	return total >= REPL_MARK_LEN && memcmp(tail, s->mark, REPL_MARK_LEN) == 0;
}

static int pump(struct inst_repl_snap *s, char *chunk, struct err *e)
{
	char tail[REPL_MARK_LEN] = { 0 };
	uint64_t total = 0;
	size_t n = s->got - s->used;

	memcpy(chunk, s->line + s->used, n);
	for (;;) {
		int got;

		if (!s->eof_mode && total + n > s->len)
			n = (size_t)(s->len - total); /* nothing follows a $<len> payload */
		if (n && (got = spool_write(s, chunk, n, e)) < 0)
			return got;
		tail_update(tail, chunk, n);
		total += n;
		if (payload_ended(s, tail, total))
			break;
		publish(s, usable(s, total), false, 0, NULL);
		if (s->cancel && atomic_load(s->cancel))
			return err_set(e, -ECANCELED, "cancelled: the manager is stopping");
		if ((got = sock_read(s, chunk, REPL_CHUNK, e)) < 0)
			return got;
		n = (size_t)got;
	}
	publish(s, usable(s, total), true, 0, NULL);
	return 0;
}

/* After the payload an rdb-only replica is dropped by the server: EOF, no byte more. */
static bool wait_dropped(struct inst_repl_snap *s, char *chunk)
{
	struct timeval tv = { .tv_sec = REPL_DROP_MS / 1000, .tv_usec = 0 };
	ssize_t n;

	(void)setsockopt(s->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do
		n = recv(s->sock, chunk, REPL_CHUNK, 0);
	while (n < 0 && errno == EINTR);
	return n == 0;
}

static void *reader_main(void *arg)
{
	struct inst_repl_snap *s = arg;
	char *chunk = xmalloc(REPL_CHUNK);
	struct err e = { 0 };
	int rc = pump(s, chunk, &e);

	if (!rc)
		s->dropped = wait_dropped(s, chunk); /* the uploader goes on meanwhile */
	shutdown(s->sock, SHUT_RDWR);
	if (rc) {
		uint64_t w;

		pthread_mutex_lock(&s->mu);
		w = s->written;
		pthread_mutex_unlock(&s->mu);
		publish(s, w, true, e.code ? e.code : -EIO, e.msg);
	}
	free(chunk);
	return NULL;
}

/* Uploaded bytes leave the spool (and the page cache) at once: its disk use is the
 * reader's lead over the upload, not the dump. A file system without hole punching
 * keeps them; the spool is dropped whole at the end either way. */
static void punch(struct inst_repl_snap *s, uint64_t sent)
{
	if (sent <= s->punched)
		return;
	if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->punched,
	              (off_t)(sent - s->punched)) == 0)
		s->punched = sent;
}

int inst_repl_snap_avail(void *ctx, uint64_t sent, uint64_t want, uint64_t *have, bool *final,
                         struct err *e)
{
	struct inst_repl_snap *s = ctx;
	int rc = 0;

	punch(s, sent);

	pthread_mutex_lock(&s->mu);
	while (!s->done && s->written < want && !(s->cancel && atomic_load(s->cancel)))
		clock_cond_wait_until(&s->cv, &s->mu, clock_mono_ms() + REPL_WAIT_STEP);
	if (s->done && s->rc)
		rc = err_set(e, s->rc, "the replication stream after %" PRIu64 " bytes: %s",
		             s->written, s->why);
	else if (!s->done && s->written < want)
		rc = err_set(e, -ECANCELED, "cancelled: the manager is stopping");
	*have = s->written;
	*final = s->done;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

bool inst_repl_snap_failed(struct inst_repl_snap *s)
{
	bool failed;

	pthread_mutex_lock(&s->mu);
	failed = s->done && s->rc;
	pthread_mutex_unlock(&s->mu);
	return failed;
}

bool inst_repl_snap_consumed(const struct inst_repl_snap *s)
{
	return s->punched > 0;
}

static int spool_open(const char *dir, struct err *e)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, REPL_SPOOL);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(e, -errno, "%s: %s", path, strerror(errno));
	(void)unlink(path);
	return fd;
}

int inst_repl_snapshot(const struct inst_repl_conf *cf, const atomic_bool *cancel,
                       struct inst_repl_snap **out, struct err *e)
{
	struct inst_repl_snap *s = xcalloc(1, sizeof(*s));
	int rc;

	s->sock = s->fd = -1;
	s->cancel = cancel;
	s->io_timeout_ms = cf->io_timeout_ms;
	pthread_mutex_init(&s->mu, NULL);
	clock_cond_init(&s->cv);
	rc = s->sock = sock_open(cf->sock_path, cf->io_timeout_ms, e);
	if (rc >= 0)
		rc = s->fd = spool_open(cf->spool_dir, e);
	if (rc >= 0)
		rc = handshake(s, cf, e);
	if (!rc && pthread_create(&s->thread, NULL, reader_main, s) != 0)
		rc = err_set(e, -EAGAIN, "cannot start the replication reader thread");
	s->started = rc == 0;
	if (rc) {
		inst_repl_snap_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static void join(struct inst_repl_snap *s)
{
	if (s->started && !s->joined)
		pthread_join(s->thread, NULL);
	s->joined = true;
}

bool inst_repl_snap_dropped(struct inst_repl_snap *s)
{
	join(s);
	return s->dropped;
}

int inst_repl_snap_fd(const struct inst_repl_snap *s)
{
	return s->fd;
}

const char *inst_repl_snap_replid(const struct inst_repl_snap *s)
{
	return s->repl_id;
}

int64_t inst_repl_snap_offset(const struct inst_repl_snap *s)
{
	return s->offset;
}

void inst_repl_snap_free(struct inst_repl_snap *s)
{
	if (!s)
		return;
	if (s->sock >= 0)
		shutdown(s->sock, SHUT_RDWR); /* a reader blocked in recv returns */
	join(s);
	if (s->sock >= 0)
		close(s->sock);
	if (s->fd >= 0)
		close(s->fd);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

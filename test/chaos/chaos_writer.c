/*
 * chaos_writer: `chaos-writer run`, the client that writes through failovers.
 *
 * Loop: (re)connect to the address the resolver gives, check with INFO that the server
 * is a primary and note its run_id and replid (its tenure), then write -- SET
 * <prefix>:<run>:<seq> <seq>, and every --incr-every-th operation INCR <prefix>:<run>:ctr
 * instead -- each followed by WAIT <replicas> <wait-timeout>, and log one "op" line per
 * write (chaos_log.h). Any error reply or transport failure drops the connection and
 * sleeps a short exponential backoff before resolving again; an acknowledgement resets
 * the backoff. It stops at --duration or on SIGTERM/SIGINT, then reads its own log back
 * and prints "ops=N acked=N unacked=N rejected=N unknown=N rto_ms=N max_gap_ms=N"
 * (rto against --fault-file when given).
 *
 * The log is flushed after every line, so a verifier may read it while the writer runs;
 * a killed writer leaves at most one torn line, which the parser tolerates.
 * Single-threaded; the signal handler only sets a flag.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/backoff.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/settings.h"
#include "lib/valkey/conn.h"
#include "test/chaos/chaos_cmd.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"
#include "test/chaos/chaos_resolve.h"
#include "test/chaos/chaos_verify.h"

struct writer_settings {
	char *resolve;
	char *log;
	char *password_file;
	char *user;
	char *run;
	char *prefix;
	char *fault_file;
	int64_t duration_ms;
	int64_t rate;
	int64_t replicas;
	int64_t wait_ms;
	int64_t connect_ms;
	int64_t command_ms;
	int64_t resolve_ms;
	int64_t backoff_min_ms;
	int64_t backoff_max_ms;
	int64_t incr_every;
};

#define WS(f) offsetof(struct writer_settings, f)
static const struct settings_desc writer_table[] = {
	{ "resolve", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, WS(resolve),
	  "Where to write: sentinel:NAME@H:P,..., cluster:H:P,..., role:H:P,... or a shell command "
	  "printing host:port." },
	{ "log", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, WS(log),
	  "Operation log to write (JSON lines)." },
	{ "auth-password-file", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, WS(password_file),
	  "File holding the password for AUTH (none: no AUTH)." },
	{ "user", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, WS(user),
	  "ACL user for AUTH (default user when unset)." },
	{ "run", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, WS(run),
	  "Run name in the keys (default: pid-wallms)." },
	{ "prefix", SETTINGS_STRING, "w", 0, 0, NULL, false, false, WS(prefix),
	  "Key prefix; '{w}' keeps every key in one cluster slot." },
	{ "fault-file", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, WS(fault_file),
	  "File of fault wall times (or its mtime), for the closing RTO line." },
	{ "duration", SETTINGS_DURATION, "0", 0, INT64_MAX, NULL, false, false, WS(duration_ms),
	  "Stop after this long (0: at SIGTERM)." },
	{ "rate", SETTINGS_INT, "0", 0, 1000000, NULL, false, false, WS(rate),
	  "Operations per second at most (0: as fast as acknowledgements come)." },
	{ "replicas", SETTINGS_INT, "1", 1, 64, NULL, false, false, WS(replicas),
	  "WAIT for this many replicas before a write counts as acknowledged." },
	{ "wait-timeout", SETTINGS_DURATION, "500ms", 1, 60000, NULL, false, false, WS(wait_ms),
	  "WAIT's timeout." },
	{ "connect-timeout", SETTINGS_DURATION, "200ms", 1, 60000, NULL, false, false,
	  WS(connect_ms), "TCP connect timeout." },
	{ "command-timeout", SETTINGS_DURATION, "500ms", 1, 60000, NULL, false, false,
	  WS(command_ms), "Reply timeout of every command." },
	{ "resolve-timeout", SETTINGS_DURATION, "3s", 1, 600000, NULL, false, false, WS(resolve_ms),
	  "Deadline of one resolution." },
	{ "backoff-min", SETTINGS_DURATION, "10ms", 0, 60000, NULL, false, false,
	  WS(backoff_min_ms), "First reconnection delay." },
	{ "backoff-max", SETTINGS_DURATION, "200ms", 0, 60000, NULL, false, false,
	  WS(backoff_max_ms), "Largest reconnection delay." },
	{ "incr-every", SETTINGS_INT, "2", 0, 1000000, NULL, false, false, WS(incr_every),
	  "Every Nth operation is an INCR of the run's counter (0: never)." },
};
#define WRITER_NSETTINGS (sizeof(writer_table) / sizeof(writer_table[0]))

struct writer {
	struct writer_settings s;
	char *password;
	struct chaos_resolver *res;
	struct vk_conn *conn; /* NULL when not connected to a primary */
	char addr[CHAOS_ADDR_SIZE];
	char run_id[CHAOS_ID_SIZE];
	char replid[CHAOS_ID_SIZE];
	FILE *log;
	struct backoff bo;
	long long seq;
	char counter[CHAOS_KEY_SIZE];
	int64_t next_due;
};

static volatile sig_atomic_t writer_stop;

static void on_stop(int sig)
{
	(void)sig;
	writer_stop = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void sleep_us(int64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL); /* a signal cuts it short: the loop checks writer_stop */
}

static void log_line(struct writer *w, json_t *o)
{
	char *s;

	if (!o) /* json_pack refused a string that is not UTF-8 (a strange --prefix) */
		return;
	s = json_dumps(o, JSON_COMPACT);

	fputs(s, w->log);
	fputc('\n', w->log);
	fflush(w->log);
	free(s);
	json_decref(o);
}

static void drop(struct writer *w)
{
	vk_conn_free(w->conn);
	w->conn = NULL;
	w->addr[0] = w->run_id[0] = w->replid[0] = '\0';
}

/* Connects w->conn to cfg's server and checks it is a primary; notes its tenure. */
static int open_primary(struct writer *w, const struct vk_conn_config *cfg, struct err *e)
{
	struct vk_info info;
	int rc;

	w->conn = vk_conn_new(cfg);
	rc = vk_info(w->conn, NULL, &info, e);
	if (rc == 0 && info.role != VK_ROLE_PRIMARY)
		rc = err_set(e, -EAGAIN, "%s:%d: not a primary", cfg->host, cfg->port);
	if (rc) {
		drop(w);
		return rc;
	}
	snprintf(w->addr, sizeof(w->addr), "%s:%d", cfg->host, cfg->port);
	snprintf(w->run_id, sizeof(w->run_id), "%s", info.run_id);
	snprintf(w->replid, sizeof(w->replid), "%s", info.master_replid);
	return 0;
}

static int writer_connect(struct writer *w, struct err *e)
{
	char host[CHAOS_ADDR_SIZE];
	struct vk_conn_config cfg = { 0 };
	int port, rc;

	rc = chaos_resolve(w->res, host, sizeof(host), &port, e);
	if (rc)
		return rc;
	cfg.host = host;
	cfg.port = port;
	cfg.connect_timeout_ms = (int)w->s.connect_ms;
	cfg.command_timeout_ms = (int)w->s.command_ms;
	cfg.user = w->s.user;
	cfg.password = w->password;
	rc = open_primary(w, &cfg, e);
	if (rc)
		return rc;
	log_line(w, json_pack("{s:s s:I s:I s:s s:s s:s}", "type", "conn", "t",
	                      (json_int_t)chaos_mono_us(), "w", (json_int_t)chaos_wall_us(),
	                      "server", w->addr, "run_id", w->run_id, "replid", w->replid));
	log_info("chaos-writer", "connected", "server", w->addr, "run_id", w->run_id, (char *)NULL);
	return 0;
}

/* Sends the write; fills result/value/acks. */
static void do_write(struct writer *w, struct chaos_rec *r, const char *key)
{
	struct vk_reply *rep = NULL;
	char val[32];
	int rc;

	snprintf(val, sizeof(val), "%lld", r->seq);
	if (r->op == CHAOS_OP_SET)
		rc = vk_command(w->conn, &rep, NULL, "SET", key, val);
	else
		rc = vk_command(w->conn, &rep, NULL, "INCR", key);
	r->acks = -1;
	r->value = r->op == CHAOS_OP_SET ? r->seq : 0;
	if (rc) {
		r->result = vk_conn_is_connected(w->conn) ? CHAOS_REJECTED : CHAOS_UNKNOWN;
		return;
	}
	if (r->op == CHAOS_OP_INCR)
		r->value = vk_reply_int(rep);
	vk_reply_free(rep);
	rc = vk_wait(w->conn, w->s.replicas, w->s.wait_ms, &r->acks, NULL);
	if (rc)
		r->acks = -1;
	r->result = rc == 0 && r->acks >= w->s.replicas ? CHAOS_ACKED : CHAOS_UNACKED;
}

static enum chaos_result writer_op(struct writer *w)
{
	struct chaos_rec r = { 0 };
	char key[CHAOS_KEY_SIZE];

	r.seq = ++w->seq;
	r.op = w->s.incr_every > 0 && r.seq % w->s.incr_every == 0 ? CHAOS_OP_INCR : CHAOS_OP_SET;
	if (r.op == CHAOS_OP_SET)
		snprintf(key, sizeof(key), "%s:%s:%lld", w->s.prefix, w->s.run, r.seq);
	else
		snprintf(key, sizeof(key), "%s", w->counter);
	r.t0 = chaos_mono_us();
	r.w0 = chaos_wall_us();
	do_write(w, &r, key);
	r.t1 = chaos_mono_us();
	r.w1 = chaos_wall_us();
	log_line(w, json_pack("{s:s s:I s:s s:s s:I s:I s:I s:I s:I s:s s:s s:s s:s s:I}", "type",
	                      "op", "seq", (json_int_t)r.seq, "op",
	                      r.op == CHAOS_OP_SET ? "set" : "incr", "key", key, "value",
	                      (json_int_t)r.value, "t0", (json_int_t)r.t0, "t1", (json_int_t)r.t1,
	                      "w0", (json_int_t)r.w0, "w1", (json_int_t)r.w1, "server", w->addr,
	                      "run_id", w->run_id, "replid", w->replid, "result",
	                      chaos_result_name(r.result), "acks", (json_int_t)r.acks));
	return r.result;
}

static void pace(struct writer *w)
{
	int64_t now = chaos_mono_us();

	if (w->s.rate <= 0)
		return;
	if (w->next_due == 0 || now - w->next_due > 1000000)
		w->next_due = now; /* far behind: do not burst to catch up */
	sleep_us(w->next_due - now);
	w->next_due += 1000000 / w->s.rate;
}

static void writer_loop(struct writer *w)
{
	int64_t end = w->s.duration_ms ? chaos_mono_us() + w->s.duration_ms * 1000 : INT64_MAX;
	enum chaos_result res;
	struct err e;

	while (!writer_stop && chaos_mono_us() < end) {
		err_clear(&e);
		if (!w->conn && writer_connect(w, &e) < 0) {
			log_debug("chaos-writer", "no primary", "error", e.msg, (char *)NULL);
			sleep_us(backoff_next(&w->bo) * 1000);
			continue;
		}
		pace(w);
		res = writer_op(w);
		if (res == CHAOS_ACKED)
			backoff_reset(&w->bo);
		if (res == CHAOS_REJECTED || res == CHAOS_UNKNOWN ||
		    !vk_conn_is_connected(w->conn)) {
			log_info("chaos-writer", "lost the primary", "server", w->addr, "result",
			         chaos_result_name(res), (char *)NULL);
			drop(w);
			sleep_us(backoff_next(&w->bo) * 1000);
		}
	}
}

/* Reads the log back and prints the closing line. */
static int writer_summary(const struct writer *w)
{
	struct chaos_log log;
	struct chaos_report r;
	int64_t *faults = NULL;
	size_t nfaults = 0;
	struct err e;
	int rc;

	err_clear(&e);
	chaos_log_init(&log);
	chaos_report_init(&r);
	rc = chaos_log_load(&log, w->s.log, &e);
	if (rc == 0 && w->s.fault_file && chaos_read_faults(w->s.fault_file, &faults, &nfaults, &e))
		fprintf(stderr, "chaos-writer: %s (no RTO)\n", e.msg);
	if (rc == 0) {
		chaos_count(&log, &r);
		chaos_faults(&log, faults, nfaults, &r);
		printf("ops=%zu acked=%zu unacked=%zu rejected=%zu unknown=%zu rto_ms=%lld "
		       "max_gap_ms=%lld\n",
		       r.ops, r.by_result[CHAOS_ACKED], r.by_result[CHAOS_UNACKED],
		       r.by_result[CHAOS_REJECTED], r.by_result[CHAOS_UNKNOWN],
		       (long long)(chaos_worst_rto(&r) < 0 ? -1
		                                           : (chaos_worst_rto(&r) + 500) / 1000),
		       (long long)(r.max_gap_us < 0 ? -1 : (r.max_gap_us + 500) / 1000));
	} else {
		fprintf(stderr, "chaos-writer: %s\n", e.msg);
	}
	free(faults);
	chaos_report_release(&r);
	chaos_log_release(&log);
	return rc ? 2 : 0;
}

static int writer_setup(struct writer *w, struct err *e)
{
	struct vk_conn_config node = { 0 };
	char run[64];

	if (!w->s.run) {
		snprintf(run, sizeof(run), "%d-%lld", (int)getpid(),
		         (long long)(chaos_wall_us() / 1000));
		w->s.run = xstrdup(run);
	}
	if (w->s.password_file && chaos_read_secret(w->s.password_file, &w->password, e) < 0)
		return -EINVAL;
	snprintf(w->counter, sizeof(w->counter), "%s:%s:ctr", w->s.prefix, w->s.run);
	node.connect_timeout_ms = (int)w->s.connect_ms;
	node.command_timeout_ms = (int)w->s.command_ms;
	node.user = w->s.user;
	node.password = w->password;
	w->res = chaos_resolver_new(w->s.resolve, w->counter, &node, (int)w->s.resolve_ms, e);
	if (!w->res)
		return -EINVAL;
	w->log = fopen(w->s.log, "w");
	if (!w->log)
		return err_set(e, chaos_errno(), "%s: %s", w->s.log, strerror(errno));
	backoff_init(&w->bo, w->s.backoff_min_ms, w->s.backoff_max_ms, 2.0, 0.1,
	             (uint64_t)chaos_wall_us());
	return 0;
}

static void writer_release(struct writer *w)
{
	drop(w);
	chaos_resolver_free(w->res);
	if (w->log)
		fclose(w->log);
	free_secret(w->password);
	settings_release(writer_table, WRITER_NSETTINGS, &w->s);
}

int chaos_writer_main(int argc, char **argv)
{
	struct writer w;
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	struct err e;
	int rc;

	memset(&w, 0, sizeof(w));
	err_clear(&e);
	rc = settings_load(writer_table, WRITER_NSETTINGS, "CHAOS_WRITER_", NULL, argc, argv, NULL,
	                   &w.s, &errs);
	if (rc == SETTINGS_HELP) {
		settings_help(writer_table, WRITER_NSETTINGS, "CHAOS_WRITER_", stdout);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "%s", buf_cstr(&errs));
		buf_release(&errs);
		return 2;
	}
	buf_release(&errs);
	if (writer_setup(&w, &e) < 0) {
		fprintf(stderr, "chaos-writer: %s\n", e.msg);
		writer_release(&w);
		return 2;
	}
	install_signals();
	log_line(&w,
	         json_pack("{s:s s:s s:s s:s s:I s:I}", "type", "start", "run", w.s.run, "prefix",
	                   w.s.prefix, "counter", w.counter, "mono_us", (json_int_t)chaos_mono_us(),
	                   "wall_us", (json_int_t)chaos_wall_us()));
	writer_loop(&w);
	log_line(&w,
	         json_pack("{s:s s:I s:I s:I}", "type", "end", "seq", (json_int_t)w.seq, "mono_us",
	                   (json_int_t)chaos_mono_us(), "wall_us", (json_int_t)chaos_wall_us()));
	fclose(w.log);
	w.log = NULL;
	rc = writer_summary(&w);
	writer_release(&w);
	return rc;
}

/*
 * chaos_log: the operation log of chaos-writer, one JSON object per line.
 *
 *   {"type":"start","run":"r1","prefix":"w","counter":"w:r1:ctr","mono_us":..,"wall_us":..}
 *   {"type":"op","seq":7,"op":"set","key":"w:r1:7","value":7,"t0":..,"t1":..,"w0":..,"w1":..,
 *    "server":"127.0.0.1:6379","run_id":"<40 hex>","replid":"<40 hex>","result":"acked","acks":1}
 *   {"type":"conn",...}  {"type":"end",...}      (informational; the parser skips them)
 *
 * One "op" line per write, written after its WAIT returned: t0/t1 are CLOCK_MONOTONIC
 * microseconds before the write was sent and after its WAIT answered (or failed); w0/w1
 * the same instants on the wall clock. server/run_id/replid name the server that took the
 * write, as read (INFO) when the connection was opened; "" when no connection was up.
 * result:
 *   acked     the write answered OK (or an integer for INCR) and WAIT said >= 1 replica;
 *   unacked   the write was applied (OK) but WAIT said 0 or failed;
 *   rejected  the server answered an error (READONLY, MOVED, …): not applied;
 *   unknown   the connection failed or timed out: applied or not, nobody knows.
 * value: what SET wrote (the seq) or what INCR answered (0 when it did not answer).
 *
 * chaos_log_parse() reads a whole file's text: "op" lines become records, every key and
 * every (server, run_id, replid) triple -- a server's *tenure* as primary of one history --
 * is interned, so a record holds two indices instead of strings. A malformed line is
 * -EPROTO naming its line number, except a last line without its newline, which a killed
 * writer may leave behind: it is counted in `torn` and ignored. Several logs (several
 * writers) may be parsed into one chaos_log; records are then sorted by t0.
 *
 * Limits: lines of at most CHAOS_LINE_MAX bytes, CHAOS_MAX_RECS records, fields of the
 * sizes below (-EMSGSIZE / -EPROTO past them). Pure functions; one owner per chaos_log.
 */
#ifndef REDIS_OPERATOR_CHAOS_LOG_H
#define REDIS_OPERATOR_CHAOS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/strmap.h"

#define CHAOS_LINE_MAX  4096
#define CHAOS_MAX_RECS  (20u * 1000 * 1000)
#define CHAOS_ADDR_SIZE 280 /* "host:port" */
#define CHAOS_ID_SIZE   41  /* run_id, replid: 40 hex characters */
#define CHAOS_KEY_SIZE  512

enum chaos_op { CHAOS_OP_SET, CHAOS_OP_INCR };

enum chaos_result {
	CHAOS_ACKED,
	CHAOS_UNACKED,
	CHAOS_REJECTED,
	CHAOS_UNKNOWN,
	CHAOS_NRESULTS,
};

struct chaos_rec {
	long long seq;
	enum chaos_op op;
	enum chaos_result result;
	int64_t t0, t1; /* monotonic µs: write sent, WAIT answered */
	int64_t w0, w1; /* wall µs at the same instants */
	long long acks; /* WAIT's answer, -1 when it did not run */
	long long value;
	size_t key;    /* index into chaos_log.keys */
	size_t server; /* index into chaos_log.servers */
};

/* A server's tenure: one process (run_id) as primary of one history (replid). */
struct chaos_server {
	char addr[CHAOS_ADDR_SIZE];
	char run_id[CHAOS_ID_SIZE];
	char replid[CHAOS_ID_SIZE];
};

struct chaos_log {
	struct chaos_rec *recs;
	size_t nrecs, recs_cap;
	char **keys; /* distinct keys in order of first use; owned */
	size_t nkeys, keys_cap;
	struct chaos_server *servers;
	size_t nservers, servers_cap;
	struct strmap key_index;    /* key → index + 1 */
	struct strmap server_index; /* "addr run_id replid" → index + 1 */
	size_t torn;                /* cut last lines ignored */
	size_t headers;             /* "start" lines seen */
};

void chaos_log_init(struct chaos_log *log);
/* Frees everything; the log may be reused after chaos_log_init. NULL-safe. */
void chaos_log_release(struct chaos_log *log);

/*
 * Parses a log file's text (len bytes, no NUL needed) and appends its records; sorts the
 * records by t0 afterwards. 0; -EPROTO for a malformed line (e: "line N: why"), -EMSGSIZE
 * for a line longer than CHAOS_LINE_MAX or more than CHAOS_MAX_RECS records. On error
 * the records of this text that came before the bad line stay appended.
 */
int chaos_log_parse(struct chaos_log *log, const char *text, size_t len, struct err *e);
/* Reads and parses the file at path (-errno when it cannot be read). */
int chaos_log_load(struct chaos_log *log, const char *path, struct err *e);

/* Interns a key / a tenure and returns its index (used by the parser and by tests). */
size_t chaos_log_key(struct chaos_log *log, const char *key);
size_t chaos_log_server(struct chaos_log *log, const char *addr, const char *run_id,
                        const char *replid);

const char *chaos_result_name(enum chaos_result r);
/* 0 and *out, or -EINVAL for a name that is not a result. */
int chaos_result_parse(const char *name, enum chaos_result *out);
/* acked or unacked: the server applied the write. */
bool chaos_result_is_accepted(enum chaos_result r);

/*
 * Splits "host:port" (the last ':' separates; "[v6]:port" loses its brackets) into host
 * (hostlen bytes, NUL included) and port 1..65535. Surrounding whitespace is trimmed, so
 * a resolver's output line can be passed as is. 0; -EINVAL when malformed or too long.
 */
int chaos_parse_addr(const char *s, char *host, size_t hostlen, int *port);

/*
 * Parses one fault time: "1712345678.123456" (seconds with a fraction, as bash's
 * $EPOCHREALTIME or `date +%s.%N` print) or "1712345678123" (whole milliseconds) into
 * wall-clock microseconds. Surrounding whitespace is trimmed. 0; -EINVAL; -ERANGE.
 */
int chaos_parse_wall(const char *s, int64_t *out_us);

#endif

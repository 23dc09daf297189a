/*
 * chaos_check: `chaos-writer verify`, the verdict after a chaos run.
 *
 * Reads the writers' logs, computes the pure verdicts (chaos_verify.h: split brain,
 * writes after a fence, RTO and write pause per fault, max gap), then asks the servers what
 * they hold: each replica is first given until --catchup-timeout to reach the primary's
 * replication offset (read once, at the start), then every key of the log is read back
 * with MGET on that server and tallied. The primary's tally is the headline:
 *
 *   acked=N lost=N unacked_present=N split_brain_instants=N rto_ms=N max_gap_ms=N
 *     replica_lost=N not_caught_up=N after_fence=N
 *
 * (one line), plus a JSON report (--report) and per-fault lines (--faults-out:
 * "index wall_ms rto_ms gap_ms first_ack_ms accept_ms", -1 for none). Exit 0 when nothing was lost anywhere,
 * no split-brain instant, no write after a fence, every replica caught up and at least
 * one write was acknowledged; 1 otherwise; 2 for usage or I/O errors.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/parse.h"
#include "lib/settings.h"
#include "lib/valkey/conn.h"
#include "test/chaos/chaos_cmd.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"
#include "test/chaos/chaos_verify.h"

#define MGET_BATCH 256

struct verify_settings {
	char *logs;
	char *primary;
	char *replicas;
	char *password_file;
	char *user;
	char *fault_file;
	char *fence;
	char *report;
	char *faults_out;
	int64_t tolerance_ms;
	int64_t catchup_ms;
	int64_t timeout_ms;
};

#define VS(f) offsetof(struct verify_settings, f)
static const struct settings_desc verify_table[] = {
	{ "logs", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, VS(logs),
	  "Writer logs, comma-separated." },
	{ "primary", SETTINGS_STRING, NULL, 0, 0, NULL, false, true, VS(primary),
	  "The final primary, host:port." },
	{ "replicas", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(replicas),
	  "The final replicas, host:port,..." },
	{ "auth-password-file", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(password_file),
	  "File holding the password for AUTH." },
	{ "user", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(user), "ACL user for AUTH." },
	{ "fault-file", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(fault_file),
	  "Fault wall times, one a line (or the file's mtime)." },
	{ "fence", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(fence),
	  "Fence times: WHO@WALLTIME,... (WHO: host:port or run_id)." },
	{ "report", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(report),
	  "Write the JSON report here." },
	{ "faults-out", SETTINGS_STRING, NULL, 0, 0, NULL, false, false, VS(faults_out),
	  "One line per fault: index wall_ms rto_ms gap_ms first_ack_ms accept_ms." },
	{ "tolerance", SETTINGS_DURATION, "0", 0, 60000, NULL, false, false, VS(tolerance_ms),
	  "Clock tolerance for split-brain and fence checks (0 on one machine)." },
	{ "catchup-timeout", SETTINGS_DURATION, "10s", 0, 600000, NULL, false, false,
	  VS(catchup_ms), "How long a replica may take to reach the primary's offset." },
	{ "timeout", SETTINGS_DURATION, "2s", 1, 60000, NULL, false, false, VS(timeout_ms),
	  "Connect and command timeout." },
};
#define VERIFY_NSETTINGS (sizeof(verify_table) / sizeof(verify_table[0]))

struct replica_result {
	char *addr;
	bool caught_up;
	size_t lost;
};

struct verify {
	struct verify_settings s;
	char *password;
	struct chaos_log log;
	struct chaos_report rep;
	char **replicas;
	size_t nreplicas;
	struct replica_result *rr;
	long long target_offset;
};

static struct vk_conn *open_node(const struct verify *v, const char *addr, char *host,
                                 size_t hostlen, struct err *e)
{
	struct vk_conn_config cfg = { 0 };
	int port;

	if (chaos_parse_addr(addr, host, hostlen, &port) < 0) {
		err_set(e, -EINVAL, "\"%.64s\" is not host:port", addr);
		return NULL;
	}
	cfg.host = host;
	cfg.port = port;
	cfg.connect_timeout_ms = (int)v->s.timeout_ms;
	cfg.command_timeout_ms = (int)v->s.timeout_ms;
	cfg.user = v->s.user;
	cfg.password = v->password;
	return vk_conn_new(&cfg);
}

static long long observed_value(const struct vk_reply *r)
{
	int64_t v;

	if (vk_reply_type(r) == VK_REPLY_NIL)
		return CHAOS_ABSENT;
	if (vk_reply_type(r) != VK_REPLY_STRING ||
	    parse_int64(vk_reply_str(r, NULL), INT64_MIN + 2, INT64_MAX, &v, NULL) < 0)
		return CHAOS_GARBAGE;
	return v;
}

/* observed[i] = the value of log key i on c. */
static int fetch(struct vk_conn *c, const struct chaos_log *log, long long *observed, struct err *e)
{
	const char *argv[MGET_BATCH + 1];

	argv[0] = "MGET";
	for (size_t at = 0; at < log->nkeys; at += MGET_BATCH) {
		size_t n = log->nkeys - at < MGET_BATCH ? log->nkeys - at : MGET_BATCH;
		struct vk_reply *rep = NULL;
		int rc;

		for (size_t i = 0; i < n; i++)
			argv[i + 1] = log->keys[at + i];
		rc = vk_command_argv(c, (int)n + 1, argv, NULL, &rep, e);
		if (rc)
			return rc;
		if (vk_reply_len(rep) != n) {
			vk_reply_free(rep);
			return err_set(e, -EPROTO, "MGET: %zu values for %zu keys",
			               vk_reply_len(rep), n);
		}
		for (size_t i = 0; i < n; i++)
			observed[at + i] = observed_value(vk_reply_elem(rep, i));
		vk_reply_free(rep);
	}
	return 0;
}

/* Tallies the log against the server at addr into r. */
static int check_server(const struct verify *v, const char *addr, struct chaos_report *r,
                        struct err *e)
{
	char host[CHAOS_ADDR_SIZE];
	long long *observed = xcalloc(v->log.nkeys ? v->log.nkeys : 1, sizeof(*observed));
	struct vk_conn *c = open_node(v, addr, host, sizeof(host), e);
	int rc = -EINVAL;

	/* A cluster replica serves reads only after READONLY; elsewhere it is an error. */
	if (c && vk_command(c, NULL, NULL, "READONLY") != 0 && !vk_conn_is_connected(c))
		rc = vk_conn_connect(c, e);
	else if (c)
		rc = 0;
	if (rc == 0)
		rc = fetch(c, &v->log, observed, e);
	if (rc == 0)
		chaos_tally(&v->log, observed, r);
	vk_conn_free(c);
	free(observed);
	return rc;
}

static int primary_offset(struct verify *v, struct err *e)
{
	char host[CHAOS_ADDR_SIZE];
	struct vk_info info;
	struct vk_conn *c = open_node(v, v->s.primary, host, sizeof(host), e);
	int rc = c ? vk_info(c, "replication", &info, e) : -EINVAL;

	if (rc == 0 && info.role != VK_ROLE_PRIMARY)
		rc = err_set(e, -EINVAL, "%s: not a primary", v->s.primary);
	if (rc == 0)
		v->target_offset = info.master_repl_offset;
	vk_conn_free(c);
	return rc;
}

/* Polls the replica until it has the primary's offset, or the deadline. */
static bool catch_up(const struct verify *v, const char *addr)
{
	int64_t end = chaos_mono_us() + v->s.catchup_ms * 1000;
	char host[CHAOS_ADDR_SIZE];
	struct vk_conn *c = open_node(v, addr, host, sizeof(host), NULL);
	bool ok = false;

	while (c && !ok) {
		struct vk_info info;

		ok = vk_info(c, "replication", &info, NULL) == 0 && info.master_link_up &&
		     info.slave_repl_offset >= v->target_offset;
		if (ok || chaos_mono_us() > end)
			break;
		usleep(50 * 1000);
	}
	vk_conn_free(c);
	return ok;
}

static int check_replicas(struct verify *v, struct err *e)
{
	v->rr = xcalloc(v->nreplicas ? v->nreplicas : 1, sizeof(*v->rr));
	for (size_t i = 0; i < v->nreplicas; i++) {
		struct chaos_report r;
		int rc;

		chaos_report_init(&r);
		v->rr[i].addr = v->replicas[i];
		v->rr[i].caught_up = catch_up(v, v->replicas[i]);
		rc = check_server(v, v->replicas[i], &r, e);
		v->rr[i].lost = r.lost;
		chaos_report_release(&r);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_fences(const char *s, struct chaos_fence **out, size_t *n, struct err *e)
{
	size_t cnt;
	char **items = chaos_split_list(s, &cnt);
	struct chaos_fence *f = xcalloc(cnt ? cnt : 1, sizeof(*f));
	int rc = 0;

	for (size_t i = 0; i < cnt && rc == 0; i++) {
		char *at = strrchr(items[i], '@');

		if (!at || at == items[i] || (size_t)(at - items[i]) >= sizeof(f[i].who) ||
		    chaos_parse_wall(at + 1, &f[i].wall_us) < 0)
			rc = err_set(e, -EINVAL, "--fence: \"%.64s\" is not WHO@WALLTIME",
			             items[i]);
		else
			snprintf(f[i].who, sizeof(f[i].who), "%.*s", (int)(at - items[i]),
			         items[i]);
	}
	chaos_list_free(items);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	*n = cnt;
	return 0;
}

static int analyze(struct verify *v, struct err *e)
{
	struct chaos_fence *fences = NULL;
	int64_t *faults = NULL;
	size_t nfences = 0, nfaults = 0;
	int64_t tol = v->s.tolerance_ms * 1000;
	int rc = 0;

	if (v->s.fault_file)
		rc = chaos_read_faults(v->s.fault_file, &faults, &nfaults, e);
	if (rc == 0 && v->s.fence)
		rc = parse_fences(v->s.fence, &fences, &nfences, e);
	if (rc == 0)
		rc = chaos_faults(&v->log, faults, nfaults, &v->rep);
	if (rc == 0) {
		chaos_count(&v->log, &v->rep);
		chaos_split_brain(&v->log, tol, &v->rep);
		chaos_fenced(&v->log, fences, nfences, tol, &v->rep);
	}
	free(faults);
	free(fences);
	return rc;
}

static int load_logs(struct verify *v, struct err *e)
{
	size_t n;
	char **paths = chaos_split_list(v->s.logs, &n);
	int rc = n ? 0 : err_set(e, -EINVAL, "--logs: no file");

	for (size_t i = 0; i < n && rc == 0; i++)
		rc = chaos_log_load(&v->log, paths[i], e);
	chaos_list_free(paths);
	return rc;
}

static size_t replica_lost(const struct verify *v, size_t *not_caught_up)
{
	size_t lost = 0;

	*not_caught_up = 0;
	for (size_t i = 0; i < v->nreplicas; i++) {
		lost += v->rr[i].lost;
		*not_caught_up += !v->rr[i].caught_up;
	}
	return lost;
}

static bool verdict_ok(const struct verify *v)
{
	size_t ncu, rl = replica_lost(v, &ncu);

	return v->rep.lost == 0 && rl == 0 && ncu == 0 && v->rep.split_brain_instants == 0 &&
	       v->rep.after_fence == 0 && v->rep.by_result[CHAOS_ACKED] > 0;
}

static int write_report(const struct verify *v, struct err *e)
{
	json_t *o = chaos_report_json(&v->log, &v->rep), *reps = json_array();
	int rc = 0;

	for (size_t i = 0; i < v->nreplicas; i++)
		json_array_append_new(reps, json_pack("{s:s s:b s:I}", "addr", v->rr[i].addr,
		                                      "caught_up", v->rr[i].caught_up, "lost",
		                                      (json_int_t)v->rr[i].lost));
	json_object_set_new(o, "primary", json_string(v->s.primary));
	json_object_set_new(o, "replicas", reps);
	json_object_set_new(o, "tolerance_ms", json_integer(v->s.tolerance_ms));
	json_object_set_new(o, "verdict", json_string(verdict_ok(v) ? "pass" : "fail"));
	if (json_dump_file(o, v->s.report, JSON_INDENT(2) | JSON_SORT_KEYS) < 0)
		rc = err_set(e, -EIO, "%s: cannot write the report", v->s.report);
	json_decref(o);
	return rc;
}

static double ms_or_none(int64_t us)
{
	return us < 0 ? -1.0 : (double)us / 1000.0;
}

static int write_faults(const struct verify *v, struct err *e)
{
	FILE *f = fopen(v->s.faults_out, "w");

	if (!f)
		return err_set(e, chaos_errno(), "%s: %s", v->s.faults_out, strerror(errno));
	for (size_t i = 0; i < v->rep.nfaults; i++) {
		const struct chaos_fault_result *x = &v->rep.faults[i];

		fprintf(f, "%zu %.3f %.3f %.3f %.3f %.3f\n", i, (double)x->wall_us / 1000.0,
		        ms_or_none(x->rto_us), ms_or_none(x->gap_us), ms_or_none(x->first_ack_us),
		        ms_or_none(x->accept_us));
	}
	return fclose(f) == 0 ? 0 : err_set(e, -EIO, "%s: write error", v->s.faults_out);
}

static void print_line(const struct verify *v)
{
	struct buf line = BUF_INIT(BUF_NO_LIMIT);
	size_t ncu, rl = replica_lost(v, &ncu);

	chaos_report_line(&v->rep, &line);
	printf("%s replica_lost=%zu not_caught_up=%zu after_fence=%zu\n", buf_cstr(&line), rl, ncu,
	       v->rep.after_fence);
	fflush(stdout);
	buf_release(&line);
}

static int verify_run(struct verify *v, struct err *e)
{
	int rc;

	if (v->s.password_file && (rc = chaos_read_secret(v->s.password_file, &v->password, e)))
		return rc;
	v->replicas = chaos_split_list(v->s.replicas, &v->nreplicas);
	if ((rc = load_logs(v, e)) || (rc = analyze(v, e)) || (rc = primary_offset(v, e)) ||
	    (rc = check_replicas(v, e)) || (rc = check_server(v, v->s.primary, &v->rep, e)))
		return rc;
	print_line(v);
	if (v->s.report && (rc = write_report(v, e)))
		return rc;
	if (v->s.faults_out && (rc = write_faults(v, e)))
		return rc;
	return 0;
}

int chaos_verify_main(int argc, char **argv)
{
	struct verify v;
	struct buf errs = BUF_INIT(BUF_NO_LIMIT);
	struct err e;
	int rc, status = 2;

	memset(&v, 0, sizeof(v));
	err_clear(&e);
	chaos_log_init(&v.log);
	chaos_report_init(&v.rep);
	rc = settings_load(verify_table, VERIFY_NSETTINGS, "CHAOS_VERIFY_", NULL, argc, argv, NULL,
	                   &v.s, &errs);
	if (rc == SETTINGS_HELP) {
		settings_help(verify_table, VERIFY_NSETTINGS, "CHAOS_VERIFY_", stdout);
		status = 0;
	} else if (rc < 0) {
		fprintf(stderr, "%s", buf_cstr(&errs));
	} else if (verify_run(&v, &e) < 0) {
		fprintf(stderr, "chaos-writer verify: %s\n", e.msg);
	} else {
		status = verdict_ok(&v) ? 0 : 1;
	}
	buf_release(&errs);
	free(v.rr);
	chaos_list_free(v.replicas);
	chaos_report_release(&v.rep);
	chaos_log_release(&v.log);
	free_secret(v.password);
	settings_release(verify_table, VERIFY_NSETTINGS, &v.s);
	return status;
}

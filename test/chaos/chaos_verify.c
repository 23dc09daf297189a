/*
 * chaos_verify: verdicts over a chaos_log (see chaos_verify.h for the definitions).
 *
 * Everything here is a pass over the records, sorted by t0 by the parser; nothing
 * talks to a server. chaos_tally takes what a server holds as an array parallel to the
 * log's keys, so the live verifier and the golden tests feed the same code.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "test/chaos/chaos_verify.h"

void chaos_report_init(struct chaos_report *r)
{
	memset(r, 0, sizeof(*r));
	r->max_gap_us = -1;
}

void chaos_report_release(struct chaos_report *r)
{
	if (!r)
		return;
	free(r->faults);
	r->faults = NULL;
	r->nfaults = 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t max_gap(const struct chaos_log *log, size_t nacked)
{
	int64_t *t, gap = -1;
	size_t n = 0;

	if (nacked < 2)
		return -1;
	t = xreallocarray(NULL, nacked, sizeof(*t));
	for (size_t i = 0; i < log->nrecs; i++)
		if (log->recs[i].result == CHAOS_ACKED)
			t[n++] = log->recs[i].t1;
	qsort(t, n, sizeof(*t), cmp_i64);
	for (size_t i = 1; i < n; i++)
		if (t[i] - t[i - 1] > gap)
			gap = t[i] - t[i - 1];
	free(t);
	return gap;
}

void chaos_count(const struct chaos_log *log, struct chaos_report *r)
{
	memset(r->by_result, 0, sizeof(r->by_result));
	r->acked_set = r->acked_incr = 0;
	r->ops = log->nrecs;
	for (size_t i = 0; i < log->nrecs; i++) {
		const struct chaos_rec *x = &log->recs[i];

		r->by_result[x->result]++;
		if (x->result == CHAOS_ACKED && x->op == CHAOS_OP_SET)
			r->acked_set++;
		else if (x->result == CHAOS_ACKED)
			r->acked_incr++;
	}
	r->max_gap_us = max_gap(log, r->by_result[CHAOS_ACKED]);
}

/* first_ack and accept: the literal "first write sent after the fault". */
static void fault_first(const struct chaos_log *log, int64_t fault, struct chaos_fault_result *f)
{
	int64_t ack = -1, accept = -1;

	for (size_t i = 0; i < log->nrecs; i++) {
		const struct chaos_rec *x = &log->recs[i];

		if (x->w0 < fault || !chaos_result_is_accepted(x->result))
			continue;
		if (accept < 0 || x->w1 < accept)
			accept = x->w1;
		if (x->result == CHAOS_ACKED && (ack < 0 || x->w1 < ack))
			ack = x->w1;
	}
	f->wall_us = fault;
	f->first_ack_us = ack >= 0 ? ack - fault : -1;
	f->accept_us = accept >= 0 ? accept - fault : -1;
}

/* Sorted copy of the acknowledgements' w1, or of the fault times. */
static int64_t *sorted_acks(const struct chaos_log *log, size_t *n)
{
	int64_t *t = xreallocarray(NULL, log->nrecs ? log->nrecs : 1, sizeof(*t));

	*n = 0;
	for (size_t i = 0; i < log->nrecs; i++)
		if (log->recs[i].result == CHAOS_ACKED)
			t[(*n)++] = log->recs[i].w1;
	qsort(t, *n, sizeof(*t), cmp_i64);
	return t;
}

/* The first index in sorted v[0..n) whose value is >= x (or > x when strict). */
static size_t bound(const int64_t *v, size_t n, int64_t x, bool strict)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x || (strict && v[mid] == x))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* gap and rto over the fault's window [fault, end) of the sorted acknowledgements. */
static void fault_window(const int64_t *acks, size_t na, int64_t fault, int64_t end,
                         struct chaos_fault_result *f)
{
	size_t k = bound(acks, na, fault, false);
	int64_t gap = -1, gap_end = -1;

	for (; k < na && acks[k] < end; k++) {
		int64_t g = acks[k] - (k > 0 ? acks[k - 1] : fault);

		if (g > gap) {
			gap = g;
			gap_end = acks[k];
		}
	}
	f->gap_us = gap;
	f->rto_us = gap_end >= 0 ? gap_end - fault : -1;
}

static void fault_gaps(const struct chaos_log *log, const int64_t *faults, size_t nf,
                       struct chaos_report *r)
{
	size_t na;
	int64_t *acks = sorted_acks(log, &na);
	int64_t *sf = xreallocarray(NULL, nf ? nf : 1, sizeof(*sf));

	memcpy(sf, faults, nf * sizeof(*sf));
	qsort(sf, nf, sizeof(*sf), cmp_i64);
	for (size_t i = 0; i < nf; i++) {
		size_t next = bound(sf, nf, faults[i], true);

		fault_window(acks, na, faults[i], next < nf ? sf[next] : INT64_MAX, &r->faults[i]);
	}
	free(sf);
	free(acks);
}

int chaos_faults(const struct chaos_log *log, const int64_t *fault_wall_us, size_t n,
                 struct chaos_report *r)
{
	if (n > CHAOS_MAX_FAULTS)
		return -E2BIG;
	free(r->faults);
	r->faults = n ? xcalloc(n, sizeof(*r->faults)) : NULL;
	r->nfaults = n;
	for (size_t i = 0; i < n; i++)
		fault_first(log, fault_wall_us[i], &r->faults[i]);
	if (n > 0)
		fault_gaps(log, fault_wall_us, n, r);
	return 0;
}

int64_t chaos_worst_rto(const struct chaos_report *r)
{
	int64_t worst = -1;

	for (size_t i = 0; i < r->nfaults; i++) {
		if (r->faults[i].rto_us < 0)
			return -1;
		if (r->faults[i].rto_us > worst)
			worst = r->faults[i].rto_us;
	}
	return worst;
}

/* Per tenure: the span over which it certainly accepted writes. */
struct tenure_span {
	int64_t lo, hi; /* first t1, last t0 */
	size_t accepted;
};

static struct tenure_span *spans(const struct chaos_log *log)
{
	struct tenure_span *s = xcalloc(log->nservers ? log->nservers : 1, sizeof(*s));

	for (size_t i = 0; i < log->nrecs; i++) {
		const struct chaos_rec *x = &log->recs[i];
		struct tenure_span *t = &s[x->server];

		if (!chaos_result_is_accepted(x->result))
			continue;
		if (t->accepted == 0 || x->t1 < t->lo)
			t->lo = x->t1;
		if (t->accepted == 0 || x->t0 > t->hi)
			t->hi = x->t0;
		t->accepted++;
	}
	return s;
}

/* Marks the pairs (tenure, x's tenure) whose span holds x; true if any does. */
static bool inside_other(const struct chaos_rec *x, const struct tenure_span *s, size_t ns,
                         int64_t tol, unsigned char *pair)
{
	bool hit = false;

	for (size_t k = 0; k < ns; k++) {
		if (k == x->server || s[k].accepted == 0)
			continue;
		if (x->t0 > s[k].lo + tol && x->t1 < s[k].hi - tol) {
			pair[k * ns + x->server] = 1;
			hit = true;
		}
	}
	return hit;
}

void chaos_split_brain(const struct chaos_log *log, int64_t tolerance_us, struct chaos_report *r)
{
	size_t ns = log->nservers;
	struct tenure_span *s = spans(log);
	unsigned char *pair = xcalloc(ns > 0 ? ns * ns : 1, 1);

	r->split_brain_instants = r->split_brain_pairs = 0;
	for (size_t i = 0; i < log->nrecs; i++) {
		const struct chaos_rec *x = &log->recs[i];

		if (chaos_result_is_accepted(x->result) &&
		    inside_other(x, s, ns, tolerance_us, pair))
			r->split_brain_instants++;
	}
	for (size_t i = 0; i < ns * ns; i++)
		r->split_brain_pairs += pair[i];
	free(pair);
	free(s);
}

void chaos_fenced(const struct chaos_log *log, const struct chaos_fence *f, size_t n,
                  int64_t tolerance_us, struct chaos_report *r)
{
	r->after_fence = 0;
	for (size_t i = 0; i < log->nrecs; i++) {
		const struct chaos_rec *x = &log->recs[i];
		const struct chaos_server *s = &log->servers[x->server];

		if (!chaos_result_is_accepted(x->result))
			continue;
		for (size_t k = 0; k < n; k++) {
			bool match =
			        strcmp(f[k].who, s->addr) == 0 || strcmp(f[k].who, s->run_id) == 0;

			if (match && x->w0 > f[k].wall_us + tolerance_us) {
				r->after_fence++;
				break;
			}
		}
	}
}

/* Per counter key: acknowledged INCRs and the highest acknowledged answer. */
struct incr_acc {
	long long acked;
	long long max_value;
	bool used;
};

static void tally_set(const struct chaos_rec *x, long long obs, struct chaos_report *r)
{
	if (x->result != CHAOS_ACKED) {
		if (obs != CHAOS_ABSENT)
			r->unacked_present++;
		return;
	}
	if (obs == x->value)
		return;
	r->lost_set++;
	if (r->nlost_examples < CHAOS_LOST_EXAMPLES)
		r->lost_examples[r->nlost_examples++] = x->key;
}

static void tally_counters(const struct chaos_log *log, const struct incr_acc *acc,
                           const long long *observed, struct chaos_report *r)
{
	for (size_t k = 0; k < log->nkeys; k++) {
		long long fin = observed[k] < 0 ? 0 : observed[k], deficit = 0;

		if (!acc[k].used)
			continue;
		if (acc[k].acked - fin > deficit)
			deficit = acc[k].acked - fin;
		if (acc[k].max_value - fin > deficit)
			deficit = acc[k].max_value - fin;
		r->lost_incr += (size_t)deficit;
		if (deficit > 0 && r->nlost_examples < CHAOS_LOST_EXAMPLES)
			r->lost_examples[r->nlost_examples++] = k;
	}
}

void chaos_tally(const struct chaos_log *log, const long long *observed, struct chaos_report *r)
{
	struct incr_acc *acc = xcalloc(log->nkeys ? log->nkeys : 1, sizeof(*acc));

	r->lost = r->lost_set = r->lost_incr = r->unacked_present = r->nlost_examples = 0;
	for (size_t i = 0; i < log->nrecs; i++) {
		const struct chaos_rec *x = &log->recs[i];
		struct incr_acc *a = &acc[x->key];

		if (x->op == CHAOS_OP_SET) {
			tally_set(x, observed[x->key], r);
			continue;
		}
		a->used = true;
		if (x->result == CHAOS_ACKED) {
			a->acked++;
			if (x->value > a->max_value)
				a->max_value = x->value;
		}
	}
	tally_counters(log, acc, observed, r);
	r->lost = r->lost_set + r->lost_incr;
	free(acc);
}

static long long us_to_ms(int64_t us)
{
	return us < 0 ? -1 : (long long)((us + 500) / 1000);
}

void chaos_report_line(const struct chaos_report *r, struct buf *out)
{
	buf_printf(out,
	           "acked=%zu lost=%zu unacked_present=%zu split_brain_instants=%zu rto_ms=%lld "
	           "max_gap_ms=%lld",
	           r->by_result[CHAOS_ACKED], r->lost, r->unacked_present, r->split_brain_instants,
	           us_to_ms(chaos_worst_rto(r)), us_to_ms(r->max_gap_us));
}

/* Milliseconds with microsecond precision, or -1. */
static json_t *ms_real(int64_t us)
{
	return us < 0 ? json_integer(-1) : json_real((double)us / 1000.0);
}

static json_t *faults_json(const struct chaos_report *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->nfaults; i++) {
		const struct chaos_fault_result *f = &r->faults[i];

		json_array_append_new(a, json_pack("{s:o s:o s:o s:o s:o}", "wall_ms",
		                                   ms_real(f->wall_us), "rto_ms",
		                                   ms_real(f->rto_us), "gap_ms", ms_real(f->gap_us),
		                                   "first_ack_ms", ms_real(f->first_ack_us),
		                                   "accept_ms", ms_real(f->accept_us)));
	}
	return a;
}

static json_t *servers_json(const struct chaos_log *log)
{
	json_t *a = json_array();
	size_t *acc = xcalloc(log->nservers ? log->nservers : 1, sizeof(*acc));

	for (size_t i = 0; i < log->nrecs; i++)
		if (chaos_result_is_accepted(log->recs[i].result))
			acc[log->recs[i].server]++;
	for (size_t i = 0; i < log->nservers; i++) {
		const struct chaos_server *s = &log->servers[i];

		if (!*s->run_id)
			continue;
		json_array_append_new(a, json_pack("{s:s s:s s:s s:I}", "addr", s->addr, "run_id",
		                                   s->run_id, "replid", s->replid, "accepted",
		                                   (json_int_t)acc[i]));
	}
	free(acc);
	return a;
}

json_t *chaos_report_json(const struct chaos_log *log, const struct chaos_report *r)
{
	json_t *lost = json_array();

	for (size_t i = 0; i < r->nlost_examples; i++)
		json_array_append_new(lost, json_string(log->keys[r->lost_examples[i]]));
	return json_pack(
	        "{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:o s:I s:I s:I s:I s:o s:o s:o s:o s:I}",
	        "ops", (json_int_t)r->ops, "acked", (json_int_t)r->by_result[CHAOS_ACKED],
	        "unacked", (json_int_t)r->by_result[CHAOS_UNACKED], "rejected",
	        (json_int_t)r->by_result[CHAOS_REJECTED], "unknown",
	        (json_int_t)r->by_result[CHAOS_UNKNOWN], "lost", (json_int_t)r->lost, "lost_set",
	        (json_int_t)r->lost_set, "lost_incr", (json_int_t)r->lost_incr, "unacked_present",
	        (json_int_t)r->unacked_present, "lost_examples", lost, "split_brain_instants",
	        (json_int_t)r->split_brain_instants, "split_brain_pairs",
	        (json_int_t)r->split_brain_pairs, "after_fence", (json_int_t)r->after_fence,
	        "acked_incr", (json_int_t)r->acked_incr, "rto_ms", ms_real(chaos_worst_rto(r)),
	        "max_gap_ms", ms_real(r->max_gap_us), "faults", faults_json(r), "servers",
	        servers_json(log), "torn_lines", (json_int_t)log->torn);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double chaos_percentile(double *v, size_t n, double q)
{
	double rank;
	size_t k;

	if (n == 0)
		return -1;
	qsort(v, n, sizeof(*v), cmp_double);
	rank = ceil(q / 100.0 * (double)n);
	k = rank < 1 ? 0 : (size_t)rank - 1;
	return v[k < n ? k : n - 1];
}

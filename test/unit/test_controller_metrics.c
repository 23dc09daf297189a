/*
 * test_controller_metrics: the per-cluster series (controller/metrics_cluster.h) on a
 * hand-made struct ctl (no informers): availability and observed seconds across poll
 * rounds (gaps too long count nowhere), fence events as rises of the fenced count, the
 * sentinels and their quorum, the counters apply.c and reconcile.c bump, time to Ready from a status patch, and the
 * rendered text (families in order, no series for a cluster not in the cache).
 */
#include <string.h>

#include "controller/metrics_cluster.h"
#include "lib/buf.h"
#include "lib/strmap.h"
#include "unit.h"

START_TEST(account_counts_rounds_and_skips_gaps)
{
	struct ctl_cluster_stats s = { 0 };

	ctl_cm_account(&s, true, 0, 1000, 3000); /* first round: a baseline only */
	ck_assert(s.observed_s == 0 && s.available_s == 0);
	ctl_cm_account(&s, true, 0, 2000, 3000);
	ctl_cm_account(&s, false, 1, 3500, 3000); /* no writable primary: observed only */
	ck_assert(s.observed_s == 2.5);
	ck_assert(s.available_s == 1.0);
	ck_assert_int_eq(s.n[CTL_CM_FENCE_EVENTS], 1);
	ctl_cm_account(&s, true, 1, 10000, 3000); /* 6.5 s gap: counts nowhere */
	ck_assert(s.observed_s == 2.5);
	ck_assert(s.available_s == 1.0);
	ctl_cm_account(&s, true, 3, 11000, 3000);
	ck_assert(s.available_s == 2.0);
	ck_assert_int_eq(s.n[CTL_CM_FENCE_EVENTS], 3); /* 1 → 3: two more */
	ctl_cm_account(&s, true, 0, 12000, 3000);      /* unfenced: not an event */
	ck_assert_int_eq(s.n[CTL_CM_FENCE_EVENTS], 3);
	ck_assert(s.writable && s.fenced == 0);
}
END_TEST

static void ctl_setup(struct ctl *c)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	strmap_init(&c->insts);
	strmap_init(&c->cl_stats);
	c->set.poll_period_ms = 1000;
}

static void ctl_teardown(struct ctl *c)
{
	strmap_release(&c->insts, free);
	strmap_release(&c->cl_stats, free);
	pthread_mutex_destroy(&c->mu);
}

static void inst(struct ctl *c, const char *key, const char *role, bool fenced, int failures)
{
	struct ctl_inst *i = calloc(1, sizeof(*i));

	i->seen = true;
	i->failures = failures;
	i->fenced = fenced;
	i->server_up = true;
	snprintf(i->role, sizeof(i->role), "%s", role);
	free(strmap_set(&c->insts, key, i));
}

static const struct ctl_cluster_stats *stats(struct ctl *c, const char *key)
{
	return strmap_get(&c->cl_stats, key);
}

START_TEST(rounds_from_the_poll_results)
{
	struct ctl c;

	ctl_setup(&c);
	inst(&c, "ns/a-0", "primary", false, 0);
	inst(&c, "ns/a-1", "replica", false, 0);
	for (int r = 0; r < 3; r++) {
		ctl_cm_observe(&c, "ns/a", "ns/a-0");
		ctl_cm_observe(&c, "ns/a", "ns/a-1");
		ctl_cm_round_end(&c, 1000 * (r + 1));
	}
	ck_assert(stats(&c, "ns/a")->available_s == 2.0);
	/* the primary fenced: no writable primary, one fence event */
	inst(&c, "ns/a-0", "primary", true, 0);
	ctl_cm_observe(&c, "ns/a", "ns/a-0");
	ctl_cm_observe(&c, "ns/a", "ns/a-1");
	ctl_cm_round_end(&c, 4000);
	ck_assert(stats(&c, "ns/a")->available_s == 2.0);
	ck_assert(stats(&c, "ns/a")->observed_s == 3.0);
	ck_assert_int_eq(stats(&c, "ns/a")->n[CTL_CM_FENCE_EVENTS], 1);
	ck_assert_int_eq(stats(&c, "ns/a")->fenced, 1);
	/* a primary whose poll failed is not known writable */
	inst(&c, "ns/a-0", "primary", false, 1);
	ctl_cm_observe(&c, "ns/a", "ns/a-0");
	ctl_cm_round_end(&c, 5000);
	ck_assert(!stats(&c, "ns/a")->writable);
	ck_assert_int_eq(stats(&c, "ns/a")->fenced, 0);
	/* sentinels: counted apart, with their quorum; never a writable primary */
	inst(&c, "ns/a-s0", "sentinel", false, 0);
	inst(&c, "ns/a-s1", "sentinel", false, 0);
	((struct ctl_inst *)strmap_get(&c.insts, "ns/a-s0"))->sen.has_view = true;
	((struct ctl_inst *)strmap_get(&c.insts, "ns/a-s0"))->sen.quorum_ok = true;
	ctl_cm_observe(&c, "ns/a", "ns/a-s0");
	ctl_cm_observe(&c, "ns/a", "ns/a-s1");
	ctl_cm_round_end(&c, 6000);
	ck_assert_int_eq(stats(&c, "ns/a")->sentinels, 2);
	ck_assert_int_eq(stats(&c, "ns/a")->quorum, 1);
	ck_assert(!stats(&c, "ns/a")->writable);
	ctl_teardown(&c);
}
END_TEST

START_TEST(counters_and_time_to_ready)
{
	struct ctl c;
	json_t *patch = json_pack("{s:[f,f]}", "timeToReadySeconds", 40.0, 12.5);
	const struct ctl_cluster_stats *s;

	ctl_setup(&c);
	ctl_cm_bump(&c, "ns", "a", CTL_CM_FAILOVERS);
	ctl_cm_bump(&c, "ns", "a", CTL_CM_SWITCHOVERS);
	ctl_cm_bump(&c, "ns", "a", CTL_CM_SWITCHOVERS);
	ctl_cm_reconciled(&c, "ns/a", 0.25, false);
	ctl_cm_reconciled(&c, "ns/a", 0.5, true);
	ctl_cm_reconciled(&c, "backup:ns/b", 1, true); /* not a cluster's */
	ctl_cm_status_written(&c, "ns", "a", patch);
	ctl_cm_status_written(&c, "ns", "a", json_object_get(patch, "nothing"));
	s = stats(&c, "ns/a");
	ck_assert_int_eq(s->n[CTL_CM_FAILOVERS], 1);
	ck_assert_int_eq(s->n[CTL_CM_SWITCHOVERS], 2);
	ck_assert_int_eq(s->n[CTL_CM_RECONCILES], 2);
	ck_assert_int_eq(s->n[CTL_CM_RECONCILE_ERRORS], 1);
	ck_assert(s->reconcile_s == 0.75);
	ck_assert_int_eq(strmap_len(&c.cl_stats), 1);
	ck_assert_int_eq(s->ready_n, 1); /* the last value, 12.5 s: the 15 s bucket */
	ck_assert(s->ready_sum == 12.5);
	ck_assert_int_eq(s->ready_count[2], 1);
	/* the same transition rebuilt from a stale cache (same entries before the last): not
	 * counted again; a new one appended to it: counted */
	json_decref(patch);
	patch = json_pack("{s:[f,f]}", "timeToReadySeconds", 40.0, 13.0);
	ctl_cm_status_written(&c, "ns", "a", patch);
	ck_assert_int_eq(s->ready_n, 1);
	json_array_append_new(json_object_get(patch, "timeToReadySeconds"), json_real(1.0));
	ctl_cm_status_written(&c, "ns", "a", patch);
	ck_assert_int_eq(s->ready_n, 2);
	pthread_mutex_lock(&c.mu);
	ctl_cm_forget_locked(&c, "ns/a");
	pthread_mutex_unlock(&c.mu);
	ck_assert_ptr_null(stats(&c, "ns/a"));
	json_decref(patch);
	ctl_teardown(&c);
}
END_TEST

START_TEST(render_without_cache_has_families_only)
{
	struct ctl c;
	struct buf b = BUF_INIT(1 << 20);

	ctl_setup(&c);
	ctl_cm_bump(&c, "ns", "a", CTL_CM_FAILOVERS);
	ck_assert_int_eq(ctl_metrics_cluster_render(&c, &b), 0);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "# TYPE redis_operator_cluster_failovers_total "
	                                           "counter\n"));
	ck_assert_ptr_nonnull(strstr(buf_cstr(&b), "# TYPE redis_operator_cluster_time_to_ready_"
	                                           "seconds histogram\n"));
	ck_assert_ptr_null(strstr(buf_cstr(&b), "cluster=\"a\""));
	buf_release(&b);
	ctl_teardown(&c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_metrics");
	TCase *t = tcase_create("all");

	tcase_add_test(t, account_counts_rounds_and_skips_gaps);
	tcase_add_test(t, rounds_from_the_poll_results);
	tcase_add_test(t, counters_and_time_to_ready);
	tcase_add_test(t, render_without_cache_has_families_only);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)

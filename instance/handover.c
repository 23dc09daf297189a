/*
 * handover: the primary's side of a graceful stop (see handover.h for the contract and
 * docs/failover.md, "Pod deleted: the hand-over", for the whole sequence).
 *
 * Runs on the supervisor thread from its shutdown, once: nothing else uses server_conn
 * meanwhile. Every wait is bounded by the caller's budget; the pause it sets is the
 * fence's (INST_FENCE_PAUSE_MS), never lifted here, because the server stops next and
 * must not take a write after the Lease is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "instance/handover.h"
#include "instance/internal.h"
#include "lib/clock.h"
#include "lib/log.h"

#define HANDOVER_ROLE_MS 500 /* one ROLE round trip to a replica */
#define HANDOVER_NAP_NS  (1000 * 1000)

struct peer {
	struct vk_conn *conn;
	bool caught;
};

/* Online replicas of info (not valkey 8's rdb-channel links), one connection each. */
static int open_peers(struct inst *in, const struct vk_info *info, struct peer *peers)
{
	int n = 0;

	for (size_t i = 0; i < info->nreplicas; i++) {
		const struct vk_info_replica *r = &info->replicas[i];

		if (strcmp(r->state, "online") != 0 || strcmp(r->type, "rdb-channel") == 0)
			continue;
		peers[n].conn = inst_conn_new(in, r->ip, (int)r->port, HANDOVER_ROLE_MS);
		peers[n].caught = false;
		n++;
	}
	return n;
}

/* One ROLE round on the replicas not caught up yet: how many have reached offset. */
static int poll_peers(struct peer *peers, int n, long long offset)
{
	struct vk_role_info r;
	int caught = 0;

	for (int i = 0; i < n; i++) {
		if (!peers[i].caught && vk_role(peers[i].conn, &r, NULL) == 0 &&
		    r.role == VK_ROLE_REPLICA && r.offset >= offset)
			peers[i].caught = true;
		caught += peers[i].caught;
	}
	return caught;
}

bool inst_handover_drain(struct inst *in, int64_t budget_ms, struct inst_handover *h)
{
	int64_t deadline = clock_mono_ms() + budget_ms;
	struct timespec nap = { 0, HANDOVER_NAP_NS };
	struct peer peers[VK_INFO_MAX_REPLICAS];
	struct vk_info info;
	int n;

	h->why = "writes could not be paused";
	if (vk_client_pause_write(in->server_conn, INST_FENCE_PAUSE_MS, NULL) < 0)
		return false;
	h->paused_ms = clock_wall_ms();
	h->why = "INFO replication failed";
	if (vk_info(in->server_conn, "replication", &info, NULL) < 0)
		return false;
	h->offset = info.master_repl_offset;
	h->replicas = n = open_peers(in, &info, peers);
	h->why = "no online replica";
	while (n > 0) {
		h->caught = poll_peers(peers, n, h->offset);
		if (h->caught == n || clock_mono_ms() >= deadline)
			break;
		nanosleep(&nap, NULL);
	}
	for (int i = 0; i < n; i++)
		vk_conn_free(peers[i].conn);
	if (n > 0 && h->caught < n)
		h->why = "a replica did not reach the offset in time";
	if (n == 0 || h->caught < n)
		return false;
	h->caught_ms = clock_wall_ms();
	h->why = NULL;
	return true;
}

static void since(char *out, size_t len, int64_t t0, int64_t t)
{
	if (t)
		snprintf(out, len, "%lld", (long long)(t - t0));
	else
		snprintf(out, len, "-");
}

void inst_handover_log(const struct inst *in, const struct inst_handover *h)
{
	char at[24], paused[24], caught[24], released[24], offset[24], reps[32];

	snprintf(at, sizeof(at), "%lld", (long long)h->sigterm_ms);
	since(paused, sizeof(paused), h->sigterm_ms, h->paused_ms);
	since(caught, sizeof(caught), h->sigterm_ms, h->caught_ms);
	since(released, sizeof(released), h->sigterm_ms, h->released_ms);
	snprintf(offset, sizeof(offset), "%lld", h->offset);
	snprintf(reps, sizeof(reps), "%d/%d", h->caught, h->replicas);
	log_info("handover", h->why ? "no hand-over: stopping as before" : "handed over", "pod",
	         in->set.pod_name, "sigtermWallMs", at, "pausedMs", paused, "caughtUpMs", caught,
	         "leaseReleasedMs", released, "offset", offset, "replicasCaughtUp", reps, "why",
	         h->why ? h->why : "", (char *)NULL);
}

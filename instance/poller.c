/*
 * poller: the status thread. Every --poll-interval (or at once when asked) it reads
 * INFO over its own Unix-socket connection and, on a replica, the primary's
 * master_repl_offset over TCP (for lag in bytes), then publishes both in the
 * snapshot under the context mutex. inst_poller_refresh() lets a caller (a fresh
 * /v1/status, an operation) wait for a poll that started after its call.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instance/internal.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/log.h"

#define PEER_TIMEOUT_MS 300

struct poller {
	struct vk_conn *local, *peer;
	char peer_host[INST_HOST_MAX + 1];
	long long peer_port;
	unsigned gen;
	struct vk_info *info, *pinfo;
};

/* Re-authenticates the connections after a password rotation. */
static void refresh_auth(struct inst *in, struct poller *p)
{
	pthread_mutex_lock(&in->mu);
	if (p->gen != in->creds_gen) {
		p->gen = in->creds_gen;
		vk_conn_set_auth(p->local, INST_OPERATOR_USER, in->shared_pw);
		if (p->peer)
			vk_conn_set_auth(p->peer, INST_OPERATOR_USER, in->shared_pw);
	}
	pthread_mutex_unlock(&in->mu);
}

static long long primary_offset(struct inst *in, struct poller *p, const struct vk_info *i)
{
	if (i->role != VK_ROLE_REPLICA || !i->master_host[0] || i->master_port <= 0)
		return -1;
	if (!p->peer || strcmp(p->peer_host, i->master_host) != 0 ||
	    p->peer_port != i->master_port) {
		vk_conn_free(p->peer);
		snprintf(p->peer_host, sizeof(p->peer_host), "%.253s", i->master_host);
		p->peer_port = i->master_port;
		p->peer = inst_conn_new(in, p->peer_host, (int)p->peer_port, PEER_TIMEOUT_MS);
	}
	if (vk_info(p->peer, "replication", p->pinfo, NULL) < 0)
		return -1;
	return p->pinfo->master_repl_offset;
}

static void poll_once(struct inst *in, struct poller *p)
{
	struct err e = { 0 };
	int rc;
	long long poff = -1;

	refresh_auth(in, p);
	pthread_mutex_lock(&in->mu);
	in->polling = true;
	pthread_mutex_unlock(&in->mu);
	rc = vk_info(p->local, NULL, p->info, &e);
	if (!rc)
		poff = primary_offset(in, p, p->info);
	pthread_mutex_lock(&in->mu);
	in->snap.info_ok = rc == 0;
	if (!rc) {
		in->snap.info = *p->info;
		in->snap.info_wall_ms = clock_wall_ms();
		in->snap.primary_offset = poff;
		in->snap.info_error[0] = '\0';
	} else {
		snprintf(in->snap.info_error, sizeof(in->snap.info_error), "%.200s", e.msg);
	}
	in->poll_seq++;
	in->polling = false;
	pthread_cond_broadcast(&in->cond);
	pthread_mutex_unlock(&in->mu);
}

static void wait_next(struct inst *in)
{
	int64_t wall = clock_wall_ms() + in->set.poll_interval_ms;
	struct timespec ts = { .tv_sec = wall / 1000, .tv_nsec = (wall % 1000) * 1000000 };

	pthread_mutex_lock(&in->mu);
	while (!in->poll_now && !atomic_load(&in->poller_stop) &&
	       pthread_cond_timedwait(&in->cond, &in->mu, &ts) != ETIMEDOUT)
		;
	in->poll_now = false;
	pthread_mutex_unlock(&in->mu);
}

static void *poller_main(void *arg)
{
	struct inst *in = arg;
	struct poller p = { 0 };

	p.local = inst_conn_new(in, NULL, 0, INST_CMD_TIMEOUT_MS);
	p.info = xmalloc(sizeof(*p.info));
	p.pinfo = xmalloc(sizeof(*p.pinfo));
	p.gen = (unsigned)-1;
	while (!atomic_load(&in->poller_stop)) {
		poll_once(in, &p);
		wait_next(in);
	}
	vk_conn_free(p.local);
	vk_conn_free(p.peer);
	free(p.info);
	free(p.pinfo);
	return NULL;
}

int inst_poller_start(struct inst *in, struct err *e)
{
	int rc = pthread_create(&in->poller, NULL, poller_main, in);

	if (rc)
		return err_set(e, -rc, "poller: pthread_create failed");
	in->poller_running = true;
	return 0;
}

void inst_poller_stop(struct inst *in)
{
	if (!in->poller_running)
		return;
	atomic_store(&in->poller_stop, true);
	pthread_mutex_lock(&in->mu);
	pthread_cond_broadcast(&in->cond);
	pthread_mutex_unlock(&in->mu);
	pthread_join(in->poller, NULL);
	in->poller_running = false;
}

void inst_poller_refresh(struct inst *in, int64_t timeout_ms)
{
	int64_t wall = clock_wall_ms() + timeout_ms;
	struct timespec ts = { .tv_sec = wall / 1000, .tv_nsec = (wall % 1000) * 1000000 };
	unsigned long long want;

	pthread_mutex_lock(&in->mu);
	/* a poll in progress may have started before us: wait for the one after it */
	want = in->poll_seq + (in->polling ? 2 : 1);
	in->poll_now = true;
	pthread_cond_broadcast(&in->cond);
	while (timeout_ms > 0 && in->poll_seq < want &&
	       pthread_cond_timedwait(&in->cond, &in->mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&in->mu);
}

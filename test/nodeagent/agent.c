/*
 * agent: what every file of the API half shares at run time: handing work to the main
 * thread. A key goes into the work queue (which deduplicates it and keeps the earliest
 * due time) and the eventfd wakes the main loop's poll(), which then drains the queue.
 * Any thread.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "lib/log.h"
#include "lib/wq.h"

static void wake(struct agent *ag)
{
	uint64_t one = 1;

	if (ag->efd >= 0 && write(ag->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn(NA_COMPONENT, "eventfd write failed", "error", strerror(errno), NULL);
}

void na_enqueue(struct agent *ag, const char *key)
{
	wq_add(ag->wq, key);
	wake(ag);
}

void na_enqueue_after(struct agent *ag, const char *key, int64_t delay_ms)
{
	wq_add_after(ag->wq, key, delay_ms);
	wake(ag);
}

/*
 * faults: what the chaos suite does to a pod through the agent's control socket.
 *
 *   kill      SIGKILL to a container's PID 1; the restart policy takes it from there.
 *   freeze    the pod's freezer cgroup to FROZEN: every process (containers, exec probes,
 *             preStop hooks) stops where it is, as on a hung node; THAWED resumes them.
 *   net cut   the host end of the pod's veth goes down: no packet passes either way
 *             (the pod's eth0 loses its carrier), connections hang as in a partition;
 *             up again restores the path with the same address and MAC.
 *   loss      iptables "statistic" DROP rules in the pod's own netns, on INPUT and
 *             OUTPUT (lo excepted): both directions lose that share of packets.
 *   delay     tc netem on the pod's eth0. Kernels without netem say so: -EOPNOTSUPP.
 * Nothing here touches the host's firewall; all of it dies with the pod's netns.
 */
#include "runtime_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "lib/err.h"

#define IPTABLES_BIN "iptables"
#define TC_BIN       "tc"

static struct rt_ctr *find_running(struct rt_pod *pod, const char *name)
{
	for (size_t i = 0; i < pod->spec.n_init; i++)
		if (!strcmp(pod->init[i].spec->name, name) && pod->init[i].pid)
			return &pod->init[i];
	for (size_t i = 0; i < pod->spec.n_containers; i++)
		if (!strcmp(pod->ctrs[i].spec->name, name) && pod->ctrs[i].pid)
			return &pod->ctrs[i];
	return NULL;
}

int rt_fault_kill_container(struct rt_pod *pod, const char *name, struct err *e)
{
	struct rt_ctr *c = find_running(pod, name);

	if (!c)
		return err_set(e, -ENOENT, "pod %s: no running container %s", pod->spec.name, name);
	if (kill(c->pid, SIGKILL) < 0)
		return err_set(e, -errno, "kill %d: %s", (int)c->pid, strerror(errno));
	return 0;
}

int rt_fault_freeze(struct rt_pod *pod, bool frozen, struct err *e)
{
	return rt_cgroup_freeze(pod->sb.cgroup, frozen, e);
}

bool rt_fault_is_frozen(const struct rt_pod *pod)
{
	return rt_cgroup_is_frozen(pod->sb.cgroup);
}

int rt_fault_net_cut(struct rt_pod *pod, bool cut, struct err *e)
{
	const char *argv[] = { pod->cfg->ip_bin,    "link", "set", pod->sb.host_veth,
		               cut ? "down" : "up", NULL };

	return rt_run(argv, e);
}

/* Runs iptables inside the pod's netns with the given arguments (at most 12). */
static int pod_iptables(struct rt_pod *pod, const char *const *args, struct err *e)
{
	const char *argv[20] = { pod->cfg->ip_bin, "netns",      "exec",
		                 pod->sb.netns,    IPTABLES_BIN, "-w" };
	size_t n = 6;

	for (; *args && n < sizeof(argv) / sizeof(*argv) - 1; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	return rt_run(argv, e);
}

int rt_fault_net_loss(struct rt_pod *pod, int percent, struct err *e)
{
	static const char *const flush[] = { "-F", NULL };
	char prob[16];
	const char *in[] = { "-A", "INPUT",     "!",      "-i",     "lo",
		             "-m", "statistic", "--mode", "random", "--probability",
		             prob, "-j",        "DROP",   NULL };
	const char *out[] = { "-A", "OUTPUT",    "!",      "-o",     "lo",
		              "-m", "statistic", "--mode", "random", "--probability",
		              prob, "-j",        "DROP",   NULL };
	int rc;

	if (percent < 0 || percent > 100)
		return err_set(e, -EINVAL, "loss %d%%: want 0..100", percent);
	snprintf(prob, sizeof(prob), "%.2f", percent / 100.0);
	if ((rc = pod_iptables(pod, flush, e)))
		return rc;
	pod->sb.loss_percent = 0;
	if (percent == 0)
		return 0;
	if ((rc = pod_iptables(pod, in, e)) || (rc = pod_iptables(pod, out, e)))
		return rc;
	pod->sb.loss_percent = percent;
	return 0;
}

int rt_fault_net_delay(struct rt_pod *pod, int delay_ms, struct err *e)
{
	char delay[32];
	const char *add[] = { TC_BIN, "-n",   pod->sb.netns, "qdisc", "replace", "dev",
		              "eth0", "root", "netem",       "delay", delay,     NULL };
	const char *del[] = { TC_BIN, "-n",   pod->sb.netns, "qdisc", "del",
		              "dev",  "eth0", "root",        NULL };
	struct err local;
	int rc;

	if (delay_ms < 0)
		return err_set(e, -EINVAL, "delay %d ms: negative", delay_ms);
	if (delay_ms == 0) {
		if (pod->sb.delay_ms && (rc = rt_run(del, e)))
			return rc;
		pod->sb.delay_ms = 0;
		return 0;
	}
	snprintf(delay, sizeof(delay), "%dms", delay_ms);
	err_clear(&local);
	rc = rt_run(add, &local);
	if (rc && strstr(local.msg, "kind is unknown"))
		return err_set(e, -EOPNOTSUPP, "tc netem is not available in this kernel: %s",
		               local.msg);
	if (rc)
		return err_set(e, rc, "%s", local.msg);
	pod->sb.delay_ms = delay_ms;
	return 0;
}

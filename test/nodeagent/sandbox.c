/*
 * sandbox: what a pod has before any container runs: its directory, its address, its
 * network namespace with a veth pair on the bridge, and its freezer cgroup.
 *
 * The network is set up with two `ip -batch` runs (host side, then inside the netns):
 *   netns add ro-<id>; link add rov<id> type veth peer name eth0 netns ro-<id>;
 *   link set rov<id> master <bridge> up; neigh flush to <ip> dev <bridge>
 *   addr add <ip>/<prefix> dev eth0; link set eth0 up; link set lo up;
 *   route add default via <gateway>
 * Deleting the host end of the veth deletes both ends; `ip netns del` drops the name.
 *
 * Addresses come from cfg->pod_cidr through a small allocator whose state is the file
 * <state_dir>/ipam ("last <ip>" then one "<ip> <uid>" line per pod), guarded by flock on
 * <state_dir>/ipam.lock so agents sharing a state dir agree. It hands addresses out
 * round-robin, so a deleted pod's address is not reused at once (stale ARP entries and
 * endpoints), and it survives agent restarts. The network and broadcast addresses and
 * the gateway are never handed out.
 */
#include "runtime_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/strmap.h"

#define IPAM_MAX_BYTES  (1024 * 1024)
#define IPAM_MIN_PREFIX 16 /* the most addresses a pod CIDR may hold: 2^16 */
#define FREEZE_WAIT_MS  5000

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

void rt_sandbox_names(struct rt_sandbox *sb, const struct rt_config *cfg, const char *uid)
{
	uint64_t h = strmap_hash(uid) & ((1ULL << (4 * RT_ID_LEN)) - 1);

	memset(sb, 0, sizeof(*sb));
	snprintf(sb->id, sizeof(sb->id), "%0*llx", RT_ID_LEN, (unsigned long long)h);
	snprintf(sb->netns, sizeof(sb->netns), "ro-%s", sb->id);
	snprintf(sb->host_veth, sizeof(sb->host_veth), "rov%s", sb->id);
	sb->dir = rt_pod_dir(cfg, uid);
	sb->cgroup = xasprintf("%s/%s", cfg->cgroup_root, uid);
}

/* --- address allocator ------------------------------------------------------------------- */

struct cidr {
	uint32_t base; /* host order */
	uint32_t size; /* addresses in the range */
};

static int cidr_parse(const char *s, struct cidr *out, struct err *e)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	struct in_addr in;
	int64_t len;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		return err_set(e, -EINVAL, "pod CIDR %s: want a.b.c.d/len", s);
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET, addr, &in) != 1 ||
	    parse_int64(slash + 1, IPAM_MIN_PREFIX, 30, &len, NULL) < 0)
		return err_set(e, -EINVAL, "pod CIDR %s: want a.b.c.d/len, len %d..30", s,
		               IPAM_MIN_PREFIX);
	out->size = 1U << (32 - len);
	out->base = ntohl(in.s_addr) & ~(out->size - 1);
	return 0;
}

static void ip_format(uint32_t ip, char out[16])
{
	struct in_addr in = { htonl(ip) };

	inet_ntop(AF_INET, &in, out, 16);
}

/* Offset of ip in c, or -1 when outside. */
static long cidr_offset(const struct cidr *c, const char *ip)
{
	struct in_addr in;
	uint32_t h;

	if (inet_pton(AF_INET, ip, &in) != 1)
		return -1;
	h = ntohl(in.s_addr);
	return h - c->base < c->size ? (long)(h - c->base) : -1;
}

struct ipam {
	struct cidr cidr;
	long gateway;   /* offset, -1 when outside */
	long last;      /* offset of the last address handed out, -1 none */
	uint8_t *used;  /* one byte per offset */
	struct buf out; /* the file's new text */
	int lock_fd;
};

static int ipam_open(struct ipam *im, const struct rt_config *cfg, struct err *e)
{
	char *path = xasprintf("%s/ipam.lock", cfg->state_dir);
	int rc;

	memset(im, 0, sizeof(*im));
	buf_init(&im->out, IPAM_MAX_BYTES);
	im->last = -1;
	if ((rc = cidr_parse(cfg->pod_cidr, &im->cidr, e)))
		goto out;
	im->gateway = cidr_offset(&im->cidr, cfg->gateway);
	im->used = xcalloc(im->cidr.size, 1);
	im->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (im->lock_fd < 0 || flock(im->lock_fd, LOCK_EX) < 0)
		rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
out:
	free(path);
	return rc;
}

static void ipam_close(struct ipam *im)
{
	if (im->lock_fd > 0)
		close(im->lock_fd); /* drops the flock */
	free(im->used);
	buf_release(&im->out);
}

/*
 * Reads the state file: marks used addresses, keeps every line but uid's in im->out,
 * and returns uid's address offset (or -1).
 */
static long ipam_read(struct ipam *im, const struct rt_config *cfg, const char *uid)
{
	char *path = xasprintf("%s/ipam", cfg->state_dir), line[512];
	FILE *f = fopen(path, "re");
	long mine = -1;

	free(path);
	while (f && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');
		long off;

		line[strcspn(line, "\n")] = '\0';
		if (!sp)
			continue;
		*sp = '\0';
		off = cidr_offset(&im->cidr, !strcmp(line, "last") ? sp + 1 : line);
		if (!strcmp(line, "last")) {
			im->last = off;
			continue;
		}
		if (off >= 0 && !strcmp(sp + 1, uid)) {
			mine = off;
			continue;
		}
		if (off >= 0)
			im->used[off] = 1;
		buf_printf(&im->out, "%s %s\n", line, sp + 1);
	}
	if (f)
		fclose(f);
	return mine;
}

/* Replaces the state file (write a temporary, rename over). */
static int ipam_write(struct ipam *im, const struct rt_config *cfg, struct err *e)
{
	char *path = xasprintf("%s/ipam", cfg->state_dir);
	char *tmp = xasprintf("%s.tmp", path);
	char last[16] = "none";
	FILE *f = fopen(tmp, "we");
	int rc = 0;

	if (im->last >= 0)
		ip_format(im->cidr.base + (uint32_t)im->last, last);
	if (!f) {
		rc = err_set(e, -errno, "%s: %s", tmp, strerror(errno));
	} else {
		if (fprintf(f, "last %s\n%s", last, buf_cstr(&im->out)) < 0)
			rc = err_set(e, -EIO, "%s: write failed", tmp);
		if (fclose(f) != 0 && !rc)
			rc = err_set(e, -errno, "%s: %s", tmp, strerror(errno));
	}
	if (!rc && rename(tmp, path) < 0)
		rc = err_set(e, -errno, "%s: %s", path, strerror(errno));
	free(tmp);
	free(path);
	return rc;
}

/* The next free offset after im->last, round-robin; -1 when full. */
static long ipam_pick(const struct ipam *im)
{
	for (uint32_t i = 1; i <= im->cidr.size; i++) {
		long off = (long)(((uint32_t)(im->last + 1) + i - 1) % im->cidr.size);

		if (off == 0 || off == (long)im->cidr.size - 1 || off == im->gateway ||
		    im->used[off])
			continue;
		return off;
	}
	return -1;
}

static int ipam_alloc(const struct rt_config *cfg, const char *uid, char ip[16], struct err *e)
{
	struct ipam im;
	long off;
	int rc = ipam_open(&im, cfg, e);

	if (rc)
		goto out;
	off = ipam_read(&im, cfg, uid);
	if (off < 0)
		off = ipam_pick(&im);
	if (off < 0) {
		rc = err_set(e, -ENOSPC, "pod CIDR %s: no free address", cfg->pod_cidr);
		goto out;
	}
	im.last = off;
	ip_format(im.cidr.base + (uint32_t)off, ip);
	buf_printf(&im.out, "%s %s\n", ip, uid);
	rc = ipam_write(&im, cfg, e);
out:
	ipam_close(&im);
	return rc;
}

int rt_ipam_release(const struct rt_config *cfg, const char *uid, struct err *e)
{
	struct ipam im;
	int rc = ipam_open(&im, cfg, e);

	if (!rc && ipam_read(&im, cfg, uid) >= 0)
		rc = ipam_write(&im, cfg, e);
	ipam_close(&im);
	return rc;
}

/* --- network ---------------------------------------------------------------------------------- */

/* Runs `ip [-n netns] -batch <file>` over the given lines. */
static int ip_batch(const struct rt_config *cfg, const struct rt_sandbox *sb, const char *netns,
                    const char *text, struct err *e)
{
	char *path = xasprintf("%s/ip.batch", sb->dir);
	const char *host[] = { cfg->ip_bin, "-batch", path, NULL };
	const char *in_ns[] = { cfg->ip_bin, "-n", netns, "-batch", path, NULL };
	FILE *f = fopen(path, "we");
	int rc = 0;

	if (!f || fputs(text, f) < 0)
		rc = err_set(e, -EIO, "%s: %s", path, strerror(errno));
	if (f && fclose(f) < 0 && !rc)
		rc = err_set(e, -EIO, "%s: %s", path, strerror(errno));
	if (!rc)
		rc = rt_run(netns ? in_ns : host, e);
	unlink(path);
	free(path);
	return rc;
}

static bool netns_exists(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return access(path, F_OK) == 0;
}

static bool link_exists(const char *name)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/class/net/%s", name);
	return access(path, F_OK) == 0;
}

/* Removes a veth and netns of ours left by an agent that died before destroying them. */
static void net_remove(const struct rt_config *cfg, const struct rt_sandbox *sb)
{
	const char *del_link[] = { cfg->ip_bin, "link", "del", sb->host_veth, NULL };
	const char *del_ns[] = { cfg->ip_bin, "netns", "del", sb->netns, NULL };
	struct err e;

	err_clear(&e);
	if (link_exists(sb->host_veth))
		rt_run(del_link, NULL);
	if (netns_exists(sb->netns) && rt_run(del_ns, &e) < 0)
		log_warn("nodeagent", "netns delete failed", "netns", sb->netns, "error", e.msg,
		         NULL);
}

static int net_create(struct rt_sandbox *sb, const struct rt_config *cfg, struct err *e)
{
	struct buf b = BUF_INIT(4096);
	int rc;

	if (netns_exists(sb->netns) || link_exists(sb->host_veth))
		net_remove(cfg, sb);
	buf_printf(&b, "netns add %s\nlink add %s type veth peer name eth0 netns %s\n", sb->netns,
	           sb->host_veth, sb->netns);
	buf_printf(&b, "link set %s master %s up\nneigh flush to %s dev %s\n", sb->host_veth,
	           cfg->bridge, sb->ip, cfg->bridge);
	rc = ip_batch(cfg, sb, NULL, buf_cstr(&b), e);
	sb->has_netns = sb->has_veth = netns_exists(sb->netns);
	if (!rc) {
		buf_clear(&b);
		buf_printf(&b, "addr add %s/%d dev eth0\nlink set eth0 up\nlink set lo up\n",
		           sb->ip, cfg->link_prefix);
		buf_printf(&b, "route add default via %s\n", cfg->gateway);
		rc = ip_batch(cfg, sb, sb->netns, buf_cstr(&b), e);
	}
	buf_release(&b);
	return rc;
}

/* --- cgroup ----------------------------------------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : (n < 0 ? -errno : -EIO);
}

static int read_small(const char *path, char *out, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	out[n] = '\0';
	return 0;
}

bool rt_cgroup_is_frozen(const char *cgroup)
{
	char path[4096], state[32];

	snprintf(path, sizeof(path), "%s/freezer.state", cgroup);
	return read_small(path, state, sizeof(state)) == 0 && !strncmp(state, "FROZEN", 6);
}

int rt_cgroup_freeze(const char *cgroup, bool frozen, struct err *e)
{
	const char *want = frozen ? "FROZEN" : "THAWED";
	char path[4096], state[32] = "";
	int rc;

	snprintf(path, sizeof(path), "%s/freezer.state", cgroup);
	if ((rc = write_file(path, want)))
		return err_set(e, rc, "%s: %s", path, strerror(-rc));
	for (int waited = 0; waited < FREEZE_WAIT_MS; waited++) {
		if (read_small(path, state, sizeof(state)) == 0 && !strncmp(state, want, 6))
			return 0;
		sleep_ms(1);
		if (frozen && waited % 100 == 99)
			write_file(path, want); /* v1 freezer: a retry moves stragglers along */
	}
	return err_set(e, -ETIMEDOUT, "%s: still %.*s after %d ms", path, (int)strcspn(state, "\n"),
	               state, FREEZE_WAIT_MS);
}

int rt_cgroup_kill_all(const char *cgroup)
{
	char path[4096], line[32];
	FILE *f;
	int n = 0;

	if (rt_cgroup_is_frozen(cgroup))
		rt_cgroup_freeze(cgroup, false, NULL);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		int64_t pid;

		line[strcspn(line, "\n")] = '\0';
		if (parse_int64(line, 1, INT32_MAX, &pid, NULL) == 0 &&
		    kill((pid_t)pid, SIGKILL) == 0)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

/* Does the cgroup exist and hold a process? */
static bool cgroup_busy(const char *cgroup)
{
	char path[4096], line[32];
	FILE *f;
	bool busy;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
	f = fopen(path, "re");
	if (!f)
		return false;
	busy = fgets(line, sizeof(line), f) != NULL;
	fclose(f);
	return busy;
}

static int cgroup_create(struct rt_sandbox *sb, const struct rt_config *cfg, struct err *e)
{
	int rc = rt_mkdir_p(cfg->cgroup_root, 0755);

	if (!rc && mkdir(sb->cgroup, 0755) < 0 && errno != EEXIST)
		rc = -errno;
	if (rc)
		return err_set(e, rc, "cgroup %s: %s", sb->cgroup, strerror(-rc));
	sb->has_cgroup = true;
	return 0;
}

/* Kills what is left in the cgroup and removes it, waiting a little for the dying. */
static void cgroup_remove(const struct rt_sandbox *sb)
{
	for (int i = 0; i < 2000; i++) {
		if (rmdir(sb->cgroup) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		rt_cgroup_kill_all(sb->cgroup);
		sleep_ms(1);
	}
	log_warn("nodeagent", "cgroup remove failed", "cgroup", sb->cgroup, "error",
	         strerror(errno), NULL);
}

/* --- the sandbox ------------------------------------------------------------------------------ */

int rt_sandbox_create(struct rt_sandbox *sb, const struct rt_config *cfg, const char *uid,
                      struct err *e)
{
	char *logs;
	int rc;

	rt_sandbox_names(sb, cfg, uid);
	if (cgroup_busy(sb->cgroup))
		return err_set(e, -EEXIST, "pod %s: sandbox in use (processes in %s)", uid,
		               sb->cgroup);
	logs = xasprintf("%s/logs", sb->dir);
	rc = rt_mkdir_p(logs, 0755);
	free(logs);
	if (rc)
		return err_set(e, rc, "%s: %s", sb->dir, strerror(-rc));
	sb->has_dir = true;
	if ((rc = ipam_alloc(cfg, uid, sb->ip, e)))
		return rc;
	sb->has_ip = true;
	if ((rc = net_create(sb, cfg, e)))
		return rc;
	return cgroup_create(sb, cfg, e);
}

void rt_sandbox_destroy(struct rt_sandbox *sb, const struct rt_config *cfg, const char *uid)
{
	struct err e;
	int rc;

	err_clear(&e);
	if (sb->has_cgroup)
		cgroup_remove(sb);
	if (sb->has_veth || sb->has_netns)
		net_remove(cfg, sb);
	if (sb->has_ip && rt_ipam_release(cfg, uid, &e) < 0)
		log_warn("nodeagent", "address release failed", "uid", uid, "error", e.msg, NULL);
	if (sb->has_dir && (rc = rt_rmtree(sb->dir)) < 0)
		log_warn("nodeagent", "pod directory removal failed", "dir", sb->dir, "error",
		         strerror(-rc), NULL);
	free(sb->dir);
	free(sb->cgroup);
	memset(sb, 0, sizeof(*sb));
}

void rt_pod_remove_stale(const struct rt_config *cfg, const char *uid)
{
	struct rt_sandbox sb;

	rt_sandbox_names(&sb, cfg, uid);
	sb.has_dir = sb.has_ip = sb.has_netns = sb.has_veth = sb.has_cgroup = true;
	rt_sandbox_destroy(&sb, cfg, uid);
}

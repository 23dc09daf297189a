/*
 * k8s_cache_bench: what an informer cache costs, and how fast the watch parser is.
 *
 * Memory: 10,000 generated objects (Pod-like, about what the API server sends for a
 * data pod with managedFields and a last-applied annotation; and RedisCluster-sized,
 * spec plus a three-instance status) are parsed and stored; RSS is read from
 * /proc/self/statm before and after (after malloc_trim, so freed parse buffers do not
 * count). Three variants, each in a fresh child process:
 *   raw       the parsed objects kept as they are (what an untrimmed cache costs);
 *   standard  an informer store: managedFields and last-applied dropped;
 *   minimal   standard plus a caller trim that keeps only what a controller reads.
 * Throughput: a watch stream of N events fed to the parser in 16 KiB chunks.
 *
 *   make BUILD=build/x bench-k8s       (prints the figures)
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/k8s/informer.h"
#include "lib/k8s/watch.h"
#include "lib/log.h"
#include "lib/strmap.h"

#define OBJECTS 10000
#define EVENTS  50000
#define CHUNK   16384

enum kind { KIND_POD, KIND_RC };
enum variant { VARIANT_RAW, VARIANT_STANDARD, VARIANT_MINIMAL };

static const char *const variant_names[] = { "raw", "standard trim", "minimal trim" };

/* ---- generated objects ------------------------------------------------------------------ */

static void gen_meta(struct buf *b, const char *kind, int i)
{
	buf_printf(b,
	           "\"metadata\":{\"name\":\"cache-%d\",\"namespace\":\"prod\",\"uid\":"
	           "\"6f1c2d3e-%04d-4abc-9def-0123456789ab\",\"resourceVersion\":\"%d\","
	           "\"generation\":3,\"creationTimestamp\":\"2026-11-29T17:41:23Z\","
	           "\"labels\":{\"app.kubernetes.io/managed-by\":\"redis-operator\","
	           "\"app.kubernetes.io/name\":\"redis\",\"redis.io/cluster\":\"cache\","
	           "\"redis.io/instance\":\"cache-%d\",\"redis.io/role\":\"replica\"},"
	           "\"annotations\":{\"redis.io/restart-hash\":\"9f2c4e1a7b3d\","
	           "\"kubectl.kubernetes.io/last-applied-configuration\":\"",
	           i, i % 10000, 100000 + i, i);
	for (int k = 0; k < 24; k++)
		buf_printf(b,
		           "{\\\"apiVersion\\\":\\\"v1\\\",\\\"kind\\\":\\\"%s\\\",\\\"x%d\\\":1}",
		           kind, k);
	buf_printf(b, "\"},\"ownerReferences\":[{\"apiVersion\":\"redis.io/v1\",\"kind\":"
	              "\"RedisCluster\",\"name\":\"cache\",\"uid\":\"0a1b2c3d-0000-4abc-9def-"
	              "0123456789ab\",\"controller\":true,\"blockOwnerDeletion\":true}],"
	              "\"managedFields\":[");
	for (int k = 0; k < 3; k++)
		buf_printf(
		        b,
		        "%s{\"manager\":\"redis-operator\",\"operation\":\"Apply\",\"apiVersion\":"
		        "\"v1\",\"time\":\"2026-11-29T17:41:23Z\",\"fieldsType\":\"FieldsV1\","
		        "\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\"f:app\":{},\"f:role\":{}},"
		        "\"f:annotations\":{\"f:hash\":{}}},\"f:spec\":{\"f:containers\":{"
		        "\"k:{\\\"name\\\":\\\"redis\\\"}\":{\".\":{},\"f:image\":{},\"f:env\":{},"
		        "\"f:ports\":{},\"f:resources\":{},\"f:volumeMounts\":{}}}}}}",
		        k ? "," : "");
	buf_printf(b, "]}");
}

static void gen_container(struct buf *b, const char *name)
{
	buf_printf(b,
	           "{\"name\":\"%s\",\"image\":\"valkey/valkey:8.0.1\",\"command\":[\"/controller/"
	           "redis-operator\",\"instance\"],\"env\":[",
	           name);
	for (int k = 0; k < 6; k++)
		buf_printf(b,
		           "%s{\"name\":\"ENV_%d\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":"
		           "\"metadata.name\"}}}",
		           k ? "," : "", k);
	buf_printf(b,
	           "],\"ports\":[{\"containerPort\":6379,\"name\":\"redis\",\"protocol\":\"TCP\"},"
	           "{\"containerPort\":8443,\"name\":\"api\",\"protocol\":\"TCP\"}],"
	           "\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"requests\":"
	           "{\"cpu\":\"500m\",\"memory\":\"1Gi\"}},\"volumeMounts\":[{\"name\":\"data\","
	           "\"mountPath\":\"/data\"},{\"name\":\"controller\",\"mountPath\":"
	           "\"/controller\"},{\"name\":\"kube-api-access\",\"mountPath\":\"/var/run/"
	           "secrets/kubernetes.io/serviceaccount\",\"readOnly\":true}],"
	           "\"readinessProbe\":{\"httpGet\":{\"path\":\"/readyz\",\"port\":8443,"
	           "\"scheme\":\"HTTPS\"},\"periodSeconds\":2},\"terminationMessagePath\":"
	           "\"/dev/termination-log\",\"imagePullPolicy\":\"IfNotPresent\"}");
}

static void gen_pod(struct buf *b, int i)
{
	buf_printf(b, "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",");
	gen_meta(b, "Pod", i);
	buf_printf(b, ",\"spec\":{\"containers\":[");
	gen_container(b, "redis");
	buf_printf(b, "],\"initContainers\":[");
	gen_container(b, "copy-binary");
	buf_printf(b,
	           "],\"nodeName\":\"node-%d\",\"serviceAccountName\":\"cache\",\"volumes\":["
	           "{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"cache-%d\"}},"
	           "{\"name\":\"controller\",\"emptyDir\":{}}]},\"status\":{\"phase\":"
	           "\"Running\",\"podIP\":\"10.240.1.%d\",\"podIPs\":[{\"ip\":\"10.240.1.%d\"}],"
	           "\"conditions\":[",
	           i % 7, i, i % 250, i % 250);
	for (int k = 0; k < 4; k++)
		buf_printf(b,
		           "%s{\"type\":\"Ready%d\",\"status\":\"True\",\"lastTransitionTime\":"
		           "\"2026-11-29T17:41:30Z\"}",
		           k ? "," : "", k);
	buf_printf(b,
	           "],\"containerStatuses\":[{\"name\":\"redis\",\"ready\":true,\"restartCount\":"
	           "0,\"image\":\"valkey/valkey:8.0.1\",\"imageID\":\"sha256:0123456789abcdef\","
	           "\"containerID\":\"containerd://abcdef0123456789\",\"started\":true,\"state\":"
	           "{\"running\":{\"startedAt\":\"2026-11-29T17:41:25Z\"}}}]}}");
}

static void gen_rc(struct buf *b, int i)
{
	buf_printf(b, "{\"kind\":\"RedisCluster\",\"apiVersion\":\"redis.io/v1\",");
	gen_meta(b, "RedisCluster", i);
	buf_printf(b,
	           ",\"spec\":{\"mode\":\"sentinel\",\"instances\":3,\"image\":"
	           "\"valkey/valkey:8.0.1\",\"storage\":{\"type\":\"pvc\",\"size\":\"10Gi\"},"
	           "\"memory\":{\"maxMemory\":\"768Mi\",\"policy\":\"allkeys-lru\"},"
	           "\"resources\":{\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}},"
	           "\"users\":[{\"name\":\"app\",\"passwordSecrets\":[\"app-pw\"],\"rules\":"
	           "\"~* +@all\"}],\"sentinel\":{\"instances\":3},\"tls\":{\"enabled\":true},"
	           "\"minSyncReplicas\":1,\"failedAfter\":\"10m\"},\"status\":{\"phase\":"
	           "\"Ready\",\"currentPrimary\":\"cache-%d-1\",\"targetPrimary\":\"cache-%d-1\","
	           "\"observedGeneration\":3,\"instances\":[",
	           i, i);
	for (int k = 0; k < 3; k++)
		buf_printf(b,
		           "%s{\"name\":\"cache-%d-%d\",\"role\":\"%s\",\"offset\":123456789,"
		           "\"lagBytes\":0,\"lagSeconds\":0,\"link\":\"up\",\"lastSeen\":"
		           "\"2026-11-29T17:41:30Z\",\"ready\":true}",
		           k ? "," : "", i, k, k ? "replica" : "primary");
	buf_printf(b, "],\"conditions\":[");
	for (int k = 0; k < 5; k++)
		buf_printf(
		        b,
		        "%s{\"type\":\"C%d\",\"status\":\"True\",\"reason\":\"AsExpected\","
		        "\"message\":\"all good\",\"lastTransitionTime\":\"2026-11-29T17:41:30Z\","
		        "\"observedGeneration\":3}",
		        k ? "," : "", k);
	buf_printf(b, "]}}");
}

static void gen(struct buf *b, enum kind kind, int i)
{
	buf_clear(b);
	if (kind == KIND_POD)
		gen_pod(b, i);
	else
		gen_rc(b, i);
}

/* ---- memory ------------------------------------------------------------------------------ */

static long rss_bytes(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &resident) != 2) /* NOLINT: /proc format */
			resident = 0;
		fclose(f);
	}
	return resident * sysconf(_SC_PAGESIZE);
}

/* A controller reads little of a Pod: labels, phase, IP, readiness, the restart hash. */
static void trim_minimal(void *ctx, json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *status = json_object_get(obj, "status");

	(void)ctx;
	if (json_object_get(obj, "kind") &&
	    !strcmp(json_string_value(json_object_get(obj, "kind")), "Pod")) {
		json_object_del(obj, "spec");
		json_object_del(status, "conditions");
		json_object_del(status, "containerStatuses");
	} else {
		json_object_del(status, "conditions");
	}
	json_object_del(meta, "ownerReferences");
	json_object_del(meta, "creationTimestamp");
}

static json_t *parse(const struct buf *b)
{
	json_error_t je;
	json_t *j = json_loadb(b->data, b->len, 0, &je);

	if (!j) {
		fprintf(stderr, "bench: generated JSON is invalid: %s\n", je.text);
		exit(1);
	}
	return j;
}

static void json_decref_void(void *p)
{
	json_decref(p);
}

/* Runs in a child: fills a store and prints bytes per object. */
static void measure(enum kind kind, enum variant v)
{
	struct k8s_informer_opts o = { .res = &k8s_res_pods,
		                       .trim = v == VARIANT_MINIMAL ? trim_minimal : NULL };
	struct k8s_informer *inf = k8s_informer_new(NULL, &o, NULL);
	struct strmap raw = STRMAP_INIT;
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	size_t text = 0;
	char key[32];
	long before, after;

	gen(&b, kind, 0);
	malloc_trim(0);
	before = rss_bytes();
	for (int i = 0; i < OBJECTS; i++) {
		json_t *obj;

		gen(&b, kind, i);
		text += b.len;
		obj = parse(&b);
		if (v == VARIANT_RAW) {
			snprintf(key, sizeof(key), "prod/cache-%d", i);
			strmap_set(&raw, key, obj);
			continue;
		}
		k8s_informer_apply(inf, K8S_EVENT_ADDED, obj, NULL);
		json_decref(obj);
	}
	buf_release(&b);
	malloc_trim(0);
	after = rss_bytes();
	printf("  %-13s %-13s %6zu B of JSON -> %6ld B RSS per object (%zu objects, +%.1f MiB)\n",
	       kind == KIND_POD ? "Pod" : "RedisCluster", variant_names[v], text / OBJECTS,
	       (after - before) / OBJECTS, (size_t)OBJECTS,
	       (double)(after - before) / (1024.0 * 1024.0));
	fflush(stdout);
	strmap_release(&raw, json_decref_void);
	k8s_informer_free(inf);
}

static void measure_in_child(enum kind kind, enum variant v)
{
	pid_t pid;

	fflush(stdout); /* or the child prints our buffer again */
	pid = fork();
	if (pid == 0) {
		measure(kind, v);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
}

/* ---- watch parser throughput ------------------------------------------------------------- */

static int count_event(void *ctx, enum k8s_event_type type, json_t *obj, const char *rv)
{
	(void)type, (void)obj, (void)rv;
	(*(long *)ctx)++;
	return 0;
}

static void throughput(enum kind kind)
{
	struct buf stream = BUF_INIT(BUF_NO_LIMIT), obj = BUF_INIT(BUF_NO_LIMIT);
	struct k8s_watch_parser p;
	long events = 0;
	int64_t t0, ms;

	for (int i = 0; i < EVENTS; i++) {
		gen(&obj, kind, i);
		buf_printf(&stream, "{\"type\":\"MODIFIED\",\"object\":%s}\n", buf_cstr(&obj));
	}
	k8s_watch_parser_init(&p, 0, NULL);
	t0 = clock_mono_ms();
	for (size_t off = 0; off < stream.len; off += CHUNK) {
		size_t n = stream.len - off < CHUNK ? stream.len - off : CHUNK;

		k8s_watch_feed(&p, stream.data + off, n, count_event, &events, NULL);
	}
	ms = clock_mono_ms() - t0;
	printf("  %-13s %ld events of %zu B in %lld ms: %.0f events/s, %.1f MB/s\n",
	       kind == KIND_POD ? "Pod" : "RedisCluster", events, stream.len / EVENTS,
	       (long long)ms, (double)events * 1000.0 / (double)(ms ? ms : 1),
	       (double)stream.len / 1000.0 / (double)(ms ? ms : 1));
	k8s_watch_parser_release(&p);
	buf_release(&stream);
	buf_release(&obj);
}

int main(void)
{
	alloc_install_jansson();
	log_configure(LOG_LEVEL_ERROR, LOG_FORMAT_LOGFMT, NULL, NULL);
	printf("informer store, %d objects (RSS from /proc/self/statm):\n", OBJECTS);
	for (int k = KIND_POD; k <= KIND_RC; k++)
		for (int v = VARIANT_RAW; v <= VARIANT_MINIMAL; v++)
			measure_in_child((enum kind)k, (enum variant)v);
	printf("watch parser (k8s_watch_feed, %d KiB chunks, one thread):\n", CHUNK / 1024);
	throughput(KIND_POD);
	throughput(KIND_RC);
	return 0;
}

/*
 * objstore-it: lib/objstore against a real server, one line per check ("ok   objstore-s3:
 * name" or "FAIL objstore-s3: name: why").
 *
 *   objstore-it s3|azure [check...]
 *
 * The server and credentials come from the environment (test/integration/objstore.sh
 * reads build/env/s3.env and build/env/azure.env): S3_ENDPOINT, S3_REGION, S3_BUCKET,
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY; AZURE_BLOB_ENDPOINT, AZURE_STORAGE_ACCOUNT,
 * AZURE_STORAGE_KEY, AZURE_CONTAINER. A missing variable is a failure, not a skip.
 * Every object is written under a prefix of its own (objstore-it/<pid>-<time>/), which is
 * emptied at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/objstore/objstore.h"
#include "test/integration/objstore/objstore_it.h"

#define MIB       (1u << 20)
#define BIG_SIZE  (40ull * MIB)
#define RSS_SLACK (6ull * MIB) /* heap and libcurl besides the part buffer */
#define FILE_SIZE (40ull * MIB + 12345)
#define FILE_RSS  (2ull * MIB) /* objstore_put_file: a 64 KiB chunk, no part buffer */

const char *suite;
bool azure;
char prefix[128];
struct objstore_config base;
static int failures, passes;

void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s %s: %s", ok ? "ok  " : "FAIL", suite, name);
	if (fmt) {
		printf(ok ? " (" : ": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		if (ok)
			printf(")");
	}
	printf("\n");
	fflush(stdout);
	ok ? passes++ : failures++;
}

static const char *need(const char *name)
{
	const char *v = getenv(name);

	if (!v || !v[0]) {
		printf("FAIL %s: environment: %s is not set (is build/env/%s.env there?)\n", suite,
		       name, azure ? "azure" : "s3");
		exit(1);
	}
	return v;
}

static void config_from_env(void)
{
	memset(&base, 0, sizeof(base));
	if (azure) {
		base.provider = OBJSTORE_AZURE;
		base.endpoint = need("AZURE_BLOB_ENDPOINT");
		base.account = need("AZURE_STORAGE_ACCOUNT");
		base.account_key = need("AZURE_STORAGE_KEY");
		base.bucket = need("AZURE_CONTAINER");
	} else {
		base.provider = OBJSTORE_S3;
		base.endpoint = need("S3_ENDPOINT");
		base.region = getenv("S3_REGION");
		base.bucket = need("S3_BUCKET");
		base.access_key_id = need("AWS_ACCESS_KEY_ID");
		base.secret_access_key = need("AWS_SECRET_ACCESS_KEY");
		base.path_style = true;
	}
	base.timeout_ms = 60000;
	base.connect_timeout_ms = 5000;
}

struct objstore *open_store(const struct objstore_config *cfg)
{
	struct objstore_err oe;
	struct objstore *os = objstore_new(cfg, &oe);

	if (!os) {
		printf("FAIL %s: objstore_new: %s\n", suite, oe.err.msg);
		exit(1);
	}
	return os;
}

void key_of(char *out, size_t cap, const char *name)
{
	snprintf(out, cap, "%s%s", prefix, name);
}

/* ---- a deterministic stream, with its own digest and an optional failure ---------- */

struct gen {
	uint64_t total, sent, fail_at; /* fail_at 0: never */
	uint64_t state;
	EVP_MD_CTX *sha;
};

static void gen_init(struct gen *g, uint64_t total, uint64_t fail_at)
{
	memset(g, 0, sizeof(*g));
	g->total = total;
	g->fail_at = fail_at;
	g->state = 0x9e3779b97f4a7c15ull;
	g->sha = EVP_MD_CTX_new();
	EVP_DigestInit_ex(g->sha, EVP_sha256(), NULL);
}

static void gen_hex(struct gen *g, char out[OBJSTORE_SHA256_HEX])
{
	unsigned char d[32];

	EVP_DigestFinal_ex(g->sha, d, NULL);
	EVP_MD_CTX_free(g->sha);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* Reads in odd sizes, so that parts are assembled from several reads. */
static ssize_t gen_read(void *ctx, void *buf, size_t len, struct err *e)
{
	struct gen *g = ctx;
	unsigned char *p = buf;
	size_t n = len < 100003 ? len : 100003;

	if (g->fail_at && g->sent >= g->fail_at)
		return err_set(e, -ECONNRESET,
		               "generator: the source went away after %" PRIu64 " bytes", g->sent);
	if (n > g->total - g->sent)
		n = (size_t)(g->total - g->sent);
	for (size_t i = 0; i < n; i++) {
		g->state = g->state * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (unsigned char)(g->state >> 56);
	}
	EVP_DigestUpdate(g->sha, p, n);
	g->sent += n;
	return (ssize_t)n;
}

struct sink {
	uint64_t n;
	EVP_MD_CTX *sha;
	struct buf *copy; /* small objects only */
};

static int sink_write(void *ctx, const void *buf, size_t n)
{
	struct sink *s = ctx;

	s->n += n;
	return s->copy ? buf_append(s->copy, buf, n) : 0;
}

static long long vm_hwm_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			v = strtoll(line + 6, NULL, 10);
	fclose(f);
	return v;
}

/* ---- checks ------------------------------------------------------------------------ */

/* A file of size bytes of the generator's stream, unlinked (the fd keeps it). */
static int gen_file(uint64_t size, char sha[OBJSTORE_SHA256_HEX])
{
	char path[] = "/tmp/objstore-it-XXXXXX";
	static unsigned char chunk[64 << 10];
	int fd = mkstemp(path);
	struct gen g;

	if (fd < 0)
		return -1;
	unlink(path);
	gen_init(&g, size, 0);
	for (ssize_t n; (n = gen_read(&g, chunk, sizeof(chunk), NULL)) > 0;)
		if (write(fd, chunk, (size_t)n) != n) {
			close(fd);
			fd = -1;
			break;
		}
	gen_hex(&g, sha);
	return fd;
}

/* First of all the checks, so that no earlier part buffer hides its peak RSS. */
static void check_put_file(struct objstore *os)
{
	struct objstore_put_result res = { 0 };
	struct objstore_get_result get = { 0 };
	struct objstore_err oe;
	struct sink s = { 0 };
	char key[256], want[OBJSTORE_SHA256_HEX];
	int fd = gen_file(FILE_SIZE, want);
	long long before = vm_hwm_kib(), after;
	int rc;

	key_of(key, sizeof(key), "file.rdb");
	rc = fd < 0 ? -EIO : objstore_put_file(os, key, fd, NULL, &res, &oe);
	after = vm_hwm_kib();
	result(rc == 0 && res.size == FILE_SIZE && strcmp(res.sha256, want) == 0 && res.parts == 6,
	       "upload a 40 MiB file from the file", "%s; %u parts, sha256 %.12s…",
	       rc ? oe.err.msg : "sent", res.parts, res.sha256);
	result(rc == 0 && after - before <= (long long)FILE_RSS / 1024,
	       "peak RSS of a file upload without a part buffer",
	       "VmHWM %lld KiB before, %lld KiB after: +%lld KiB (bound %llu KiB)", before, after,
	       after - before, FILE_RSS / 1024);
	rc = rc ? rc : objstore_get_stream(os, key, sink_write, &s, &get, &oe);
	result(rc == 0 && get.size == FILE_SIZE && strcmp(get.sha256, want) == 0,
	       "file upload read back, SHA-256 matches the file's", "%s",
	       rc ? oe.err.msg : get.sha256);
	objstore_delete(os, key, NULL);
	if (fd >= 0)
		close(fd);
}

static void check_file_edges(struct objstore *os)
{
	static const uint64_t sizes[] = { 0, 1, 8 * MIB, 8 * MIB + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct objstore_put_result put = { 0 };
		struct objstore_get_result get = { 0 };
		struct objstore_err oe;
		struct sink s = { 0 };
		char key[256], name[64], want[OBJSTORE_SHA256_HEX];
		int fd = gen_file(sizes[i], want), rc;

		snprintf(name, sizeof(name), "file-edge/%" PRIu64, sizes[i]);
		key_of(key, sizeof(key), name);
		rc = fd < 0 ? -EIO : objstore_put_file(os, key, fd, NULL, &put, &oe);
		if (!rc)
			rc = objstore_get_stream(os, key, sink_write, &s, &get, &oe);
		snprintf(name, sizeof(name), "file round trip of %" PRIu64 " bytes", sizes[i]);
		result(rc == 0 && get.size == sizes[i] && strcmp(get.sha256, want) == 0 &&
		               strcmp(put.sha256, want) == 0,
		       name, "%s; %u part(s)", rc ? oe.err.msg : "read back", rc ? 0 : put.parts);
		objstore_delete(os, key, NULL);
		if (fd >= 0)
			close(fd);
	}
}

/* A cancelled file upload and a descriptor that is not a file leave nothing. */
static void check_file_refusals(struct objstore *os)
{
	atomic_bool cancel = true;
	struct objstore_err oe;
	char key[256], want[OBJSTORE_SHA256_HEX];
	int fd = gen_file(20 * MIB, want), pipefd[2] = { -1, -1 }, rc, head;

	key_of(key, sizeof(key), "file-cancelled.rdb");
	rc = fd < 0 ? -EIO : objstore_put_file(os, key, fd, &cancel, NULL, &oe);
	head = objstore_head(os, key, NULL, NULL);
	result(rc == -ECANCELED && head == -ENOENT, "cancelled file upload: ECANCELED, no object",
	       "%s", oe.err.msg);
	if (pipe(pipefd) == 0)
		rc = objstore_put_file(os, key, pipefd[0], NULL, NULL, &oe);
	head = objstore_head(os, key, NULL, NULL);
	result(rc == -EINVAL && head == -ENOENT && strstr(oe.err.msg, "regular file"),
	       "a pipe is refused by put_file", "%s", oe.err.msg);
	close(pipefd[0]);
	close(pipefd[1]);
	if (fd >= 0)
		close(fd);
}

/* put_stream with spool_dir: the part in a file, not in memory. */
static void check_stream_spooled(void)
{
	struct objstore_config cfg = base;
	struct objstore_put_result res = { 0 };
	struct objstore_get_result get = { 0 };
	struct objstore_err oe;
	struct objstore *os;
	struct sink s = { 0 };
	struct gen g;
	char key[256], want[OBJSTORE_SHA256_HEX];
	long long before, after;
	int rc;

	cfg.spool_dir = "/tmp";
	os = open_store(&cfg);
	key_of(key, sizeof(key), "spooled.rdb");
	gen_init(&g, BIG_SIZE + 777, 0);
	before = vm_hwm_kib();
	rc = objstore_put_stream(os, key, gen_read, &g, &res, &oe);
	after = vm_hwm_kib();
	gen_hex(&g, want);
	result(rc == 0 && res.size == BIG_SIZE + 777 && strcmp(res.sha256, want) == 0 &&
	               res.parts == 6,
	       "upload 40 MiB streamed through a spool file", "%s; %u parts, sha256 %.12s…",
	       rc ? oe.err.msg : "sent", res.parts, res.sha256);
	result(rc == 0 && after - before <= (long long)FILE_RSS / 1024,
	       "peak RSS of a spooled stream upload without a part buffer",
	       "VmHWM %lld KiB before, %lld KiB after: +%lld KiB (bound %llu KiB)", before, after,
	       after - before, FILE_RSS / 1024);
	rc = rc ? rc : objstore_get_stream(os, key, sink_write, &s, &get, &oe);
	result(rc == 0 && get.size == BIG_SIZE + 777 && strcmp(get.sha256, want) == 0,
	       "spooled upload read back, SHA-256 matches the stream's", "%s",
	       rc ? oe.err.msg : get.sha256);
	objstore_delete(os, key, NULL);
	objstore_free(os);
}

/* A file written by a thread while put_growing uploads it. */
struct grower {
	int fd;
	uint64_t size, fail_at; /* fail_at: the writer fails there (0: never) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t written;
	bool done, failed;
	unsigned waits_open; /* avail answers given while the writer was not done */
	uint64_t sent;       /* the last "sent" avail was given */
	bool sent_wrong;     /* not a part boundary, or going backwards */
};

static void *grower_main(void *arg)
{
	struct grower *gr = arg;
	static unsigned char chunk[256 << 10];
	struct gen g;

	gen_init(&g, gr->size, 0);
	for (ssize_t n; (n = gen_read(&g, chunk, sizeof(chunk), NULL)) > 0;) {
		bool fail = gr->fail_at && gr->written + (uint64_t)n > gr->fail_at;

		if (!fail && write(gr->fd, chunk, (size_t)n) != n)
			fail = true;
		pthread_mutex_lock(&gr->mu);
		if (!fail)
			gr->written += (uint64_t)n;
		gr->failed = fail;
		gr->done = fail;
		pthread_cond_broadcast(&gr->cv);
		pthread_mutex_unlock(&gr->mu);
		if (fail)
			break;
		usleep(2000); /* a writer slower than the page cache */
	}
	{
		char hex[OBJSTORE_SHA256_HEX];

		gen_hex(&g, hex);
	}
	pthread_mutex_lock(&gr->mu);
	gr->done = true;
	pthread_cond_broadcast(&gr->cv);
	pthread_mutex_unlock(&gr->mu);
	return NULL;
}

static int grower_avail(void *ctx, uint64_t sent, uint64_t want, uint64_t *have, bool *final,
                        struct err *e)
{
	struct grower *gr = ctx;
	int rc = 0;

	if (sent < gr->sent || sent % OBJSTORE_PART_SIZE_DEFAULT || sent >= want)
		gr->sent_wrong = true;
	gr->sent = sent;

	pthread_mutex_lock(&gr->mu);
	while (!gr->done && gr->written < want)
		pthread_cond_wait(&gr->cv, &gr->mu);
	*have = gr->written;
	*final = gr->done;
	gr->waits_open += !gr->done;
	if (gr->failed)
		rc = err_set(e, -EPIPE, "the writer failed at %" PRIu64 " bytes", gr->written);
	pthread_mutex_unlock(&gr->mu);
	return rc;
}

static int grow_upload(struct objstore *os, const char *key, struct grower *gr,
                       struct objstore_put_result *res, struct objstore_err *oe)
{
	char path[] = "/tmp/objstore-it-grow-XXXXXX";
	pthread_t t;
	int rc;

	gr->fd = mkstemp(path);
	if (gr->fd < 0)
		return -EIO;
	unlink(path);
	pthread_mutex_init(&gr->mu, NULL);
	pthread_cond_init(&gr->cv, NULL);
	pthread_create(&t, NULL, grower_main, gr);
	rc = objstore_put_growing(os, key, gr->fd, grower_avail, gr, NULL, res, oe);
	pthread_join(t, NULL);
	close(gr->fd);
	return rc;
}

/* put_growing follows a writer: parts sent while it writes, the whole file's digest. */
static void check_put_growing(struct objstore *os)
{
	static const uint64_t sizes[] = { 20 * MIB + 5, 8 * MIB, 0 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct grower gr = { .size = sizes[i] };
		struct objstore_put_result res = { 0 };
		struct objstore_get_result get = { 0 };
		struct objstore_err oe;
		struct sink s = { 0 };
		struct gen g;
		char key[256], name[96], want[OBJSTORE_SHA256_HEX], tmp[64 << 10];
		unsigned parts = (unsigned)objstore_parts_for(sizes[i], OBJSTORE_PART_SIZE_DEFAULT);
		int rc;

		gen_init(&g, sizes[i], 0);
		while (gen_read(&g, tmp, sizeof(tmp), NULL) > 0)
			;
		gen_hex(&g, want);
		snprintf(name, sizeof(name), "growing/%" PRIu64, sizes[i]);
		key_of(key, sizeof(key), name);
		rc = grow_upload(os, key, &gr, &res, &oe);
		if (!rc)
			rc = objstore_get_stream(os, key, sink_write, &s, &get, &oe);
		snprintf(name, sizeof(name),
		         "growing file of %" PRIu64 " bytes uploaded behind its writer", sizes[i]);
		result(rc == 0 && res.size == sizes[i] && strcmp(res.sha256, want) == 0 &&
		               strcmp(get.sha256, want) == 0 && res.parts == parts &&
		               (sizes[i] <= OBJSTORE_PART_SIZE_DEFAULT || gr.waits_open > 0) &&
		               !gr.sent_wrong &&
		               gr.sent == (uint64_t)(parts - 1) * OBJSTORE_PART_SIZE_DEFAULT,
		       name, "%s; %u part(s), %u while the writer ran, last sent mark %" PRIu64,
		       rc ? oe.err.msg : "read back", res.parts, gr.waits_open, gr.sent);
		objstore_delete(os, key, NULL);
	}
	{
		struct grower gr = { .size = 30 * MIB, .fail_at = 18 * MIB };
		struct objstore_err oe;
		char key[256];
		int rc, head;

		key_of(key, sizeof(key), "growing/failed");
		rc = grow_upload(os, key, &gr, NULL, &oe);
		head = objstore_head(os, key, NULL, NULL);
		result(rc == -EPIPE && head == -ENOENT && strstr(oe.err.msg, "writer failed"),
		       "growing file whose writer fails: upload aborted, no object", "%d %s", rc,
		       oe.err.msg);
	}
}

static char big_sha[OBJSTORE_SHA256_HEX];

static void check_upload_40mib(struct objstore *os)
{
	struct objstore_put_result res;
	struct objstore_err oe;
	struct gen g;
	char key[256], want[OBJSTORE_SHA256_HEX];
	long long before = vm_hwm_kib(), after;
	int rc;

	key_of(key, sizeof(key), "big.rdb");
	gen_init(&g, BIG_SIZE, 0);
	rc = objstore_put_stream(os, key, gen_read, &g, &res, &oe);
	gen_hex(&g, want);
	after = vm_hwm_kib();
	if (rc) {
		result(false, "upload 40 MiB streamed", "%s", oe.err.msg);
		return;
	}
	snprintf(big_sha, sizeof(big_sha), "%s", res.sha256);
	result(res.size == BIG_SIZE && strcmp(res.sha256, want) == 0 && res.parts == 5,
	       "upload 40 MiB streamed", "%" PRIu64 " bytes, %u parts, sha256 %.12s…", res.size,
	       res.parts, res.sha256);
	result(after - before <= (long long)(OBJSTORE_PART_SIZE_DEFAULT + RSS_SLACK) / 1024,
	       "peak RSS bounded during the upload",
	       "VmHWM %lld KiB before, %lld KiB after: +%lld KiB for a %u KiB part", before, after,
	       after - before, OBJSTORE_PART_SIZE_DEFAULT / 1024);
}

static void check_head_and_download(struct objstore *os)
{
	struct objstore_info info;
	struct objstore_get_result res;
	struct objstore_err oe;
	struct sink s = { 0 };
	char key[256];
	long long before = vm_hwm_kib(), after;
	int rc;

	key_of(key, sizeof(key), "big.rdb");
	rc = objstore_head(os, key, &info, &oe);
	result(rc == 0 && info.size == BIG_SIZE, "head gives the size", "%s",
	       rc ? oe.err.msg : info.etag);
	rc = objstore_get_stream(os, key, sink_write, &s, &res, &oe);
	after = vm_hwm_kib();
	result(rc == 0 && res.size == BIG_SIZE && s.n == BIG_SIZE &&
	               strcmp(res.sha256, big_sha) == 0,
	       "download streamed, SHA-256 matches the upload's", "%s",
	       rc ? oe.err.msg : res.sha256);
	result(after - before <= (long long)RSS_SLACK / 1024,
	       "peak RSS bounded during the download", "VmHWM +%lld KiB", after - before);
}

struct listing {
	unsigned n;
	bool saw_big;
	uint64_t big_size;
};

static int on_entry(void *ctx, const struct objstore_entry *e)
{
	struct listing *l = ctx;

	l->n++;
	if (strstr(e->key, "big.rdb")) {
		l->saw_big = true;
		l->big_size = e->size;
	}
	return 0;
}

static void check_list(struct objstore *os)
{
	struct objstore_config cfg = base;
	struct objstore *paged;
	struct listing l = { 0 };
	struct objstore_err oe;
	char key[256];
	int rc = 0;

	for (int i = 0; i < 5 && !rc; i++) {
		char name[32];

		snprintf(name, sizeof(name), "small/%02d.json", i);
		key_of(key, sizeof(key), name);
		rc = objstore_put_small(os, key, "{\"ok\":true}", 11, &oe);
	}
	if (rc) {
		result(false, "list pages through continuation", "put_small: %s", oe.err.msg);
		return;
	}
	cfg.list_page = 2; /* 6 objects: 3 pages, 2 continuations */
	paged = open_store(&cfg);
	rc = objstore_list(paged, prefix, on_entry, &l, &oe);
	objstore_free(paged);
	result(rc == 0 && l.n == 6 && l.saw_big && l.big_size == BIG_SIZE,
	       "list pages through continuation", "%s; %u objects in pages of 2",
	       rc ? oe.err.msg : "listed", l.n);
}

static void check_small_roundtrip(struct objstore *os)
{
	struct buf copy = BUF_INIT(1024);
	struct sink s = { .copy = &copy };
	struct objstore_err oe;
	char key[256];
	int rc;

	key_of(key, sizeof(key), "small/00.json");
	rc = objstore_get_stream(os, key, sink_write, &s, NULL, &oe);
	result(rc == 0 && strcmp(buf_cstr(&copy), "{\"ok\":true}") == 0, "put_small reads back",
	       "%s", rc ? oe.err.msg : buf_cstr(&copy));
	buf_release(&copy);
}

static void check_missing_key(struct objstore *os)
{
	struct objstore_err oe;
	struct sink s = { 0 };
	char key[256];
	int rc;

	key_of(key, sizeof(key), "no/such.rdb");
	rc = objstore_get_stream(os, key, sink_write, &s, NULL, &oe);
	result(rc == -ENOENT && !oe.retryable && s.n == 0 &&
	               strcmp(oe.code, azure ? "BlobNotFound" : "NoSuchKey") == 0,
	       "missing key is ENOENT with the server's code", "%s", oe.err.msg);
}

static void check_delete(struct objstore *os)
{
	struct objstore_err oe;
	struct objstore_info info;
	char key[256];
	int rc, again, head;

	key_of(key, sizeof(key), "big.rdb");
	rc = objstore_delete(os, key, &oe);
	head = objstore_head(os, key, &info, NULL);
	again = objstore_delete(os, key, NULL);
	result(rc == 0 && head == -ENOENT && again == 0,
	       "delete, then head is ENOENT, delete again", "%s", rc ? oe.err.msg : "idempotent");
}

/* An upload whose source fails leaves nothing: neither a new object nor a change to the
 * one already there. after: bytes the stream gives before it fails. */
static void check_failed_upload(struct objstore *os, uint64_t after, const char *name)
{
	struct buf copy = BUF_INIT(1024);
	struct sink s = { .copy = &copy };
	struct objstore_put_result res;
	struct objstore_err oe;
	struct listing l = { 0 };
	struct gen g;
	char key[256], fresh[256], sub[300], hex[OBJSTORE_SHA256_HEX], why[ERR_MSG_MAX];
	int rc, head;

	key_of(key, sizeof(key), "failing/old.rdb");
	key_of(fresh, sizeof(fresh), "failing/new.rdb");
	rc = objstore_put_small(os, key, "old", 3, &oe);
	gen_init(&g, BIG_SIZE, after);
	rc = rc ? rc : objstore_put_stream(os, key, gen_read, &g, &res, &oe);
	gen_hex(&g, hex);
	if (rc != -ECONNRESET || !strstr(oe.err.msg, "went away")) {
		result(false, name, "put_stream gave %d: %s", rc, oe.err.msg);
		return;
	}
	snprintf(why, sizeof(why), "%s", oe.err.msg);
	gen_init(&g, BIG_SIZE, after);
	(void)objstore_put_stream(os, fresh, gen_read, &g, &res, NULL);
	gen_hex(&g, hex);
	rc = objstore_get_stream(os, key, sink_write, &s, NULL, &oe);
	head = objstore_head(os, fresh, NULL, NULL);
	snprintf(sub, sizeof(sub), "%sfailing/", prefix);
	objstore_list(os, sub, on_entry, &l, NULL);
	result(rc == 0 && strcmp(buf_cstr(&copy), "old") == 0 && head == -ENOENT && l.n == 1, name,
	       "error \"%s\"; old object intact, no new one, %u listed", why, l.n);
	objstore_delete(os, key, NULL);
	buf_release(&copy);
}

static void check_wrong_credentials(void)
{
	struct objstore_config cfg = base;
	struct objstore *os;
	struct objstore_err oe;
	char key[256];
	int rc;
	static const char *const s3_codes[] = { "SignatureDoesNotMatch", "InvalidAccessKeyId",
		                                "AccessDenied" };
	bool code_ok = false;

	if (azure)
		cfg.account_key = "d3JvbmcgYnV0IHZhbGlkIGJhc2U2NCBrZXkgb2YgNDAgYnl0ZXMhIQ==";
	else
		cfg.secret_access_key = "wrong-secret";
	os = open_store(&cfg);
	key_of(key, sizeof(key), "denied.rdb");
	rc = objstore_put_small(os, key, "x", 1, &oe);
	objstore_free(os);
	if (azure)
		code_ok = strcmp(oe.code, "AuthenticationFailed") == 0 || /* Azure */
		          strcmp(oe.code, "AuthorizationFailure") == 0;   /* Azurite */
	for (size_t i = 0; !azure && i < 3; i++)
		code_ok = code_ok || strcmp(oe.code, s3_codes[i]) == 0;
	result(rc == -EACCES && !oe.retryable && code_ok && strstr(oe.err.msg, oe.code) &&
	               oe.http_status == 403,
	       "wrong credentials: permanent, names the Code", "%s", oe.err.msg);
	result(!strstr(oe.err.msg, "wrong-secret") &&
	               !strstr(oe.err.msg,
	                       base.secret_access_key ? base.secret_access_key : "d3Jvbmc"),
	       "the message holds no secret", NULL);
}

static void check_missing_bucket(void)
{
	struct objstore_config cfg = base;
	struct objstore *os;
	struct objstore_err oe;
	struct listing l = { 0 };
	char key[256];
	int rc, lrc;
	const char *want = azure ? "ContainerNotFound" : "NoSuchBucket";

	cfg.bucket = "objstore-it-no-such-bucket";
	os = open_store(&cfg);
	key_of(key, sizeof(key), "x.rdb");
	rc = objstore_put_small(os, key, "x", 1, &oe);
	result(rc == -ENOENT && !oe.retryable && strcmp(oe.code, want) == 0,
	       "missing bucket: ENOENT, the server's code", "%s", oe.err.msg);
	lrc = objstore_list(os, "", on_entry, &l, &oe);
	result(lrc == -ENOENT && strcmp(oe.code, want) == 0, "missing bucket: list too", "%s",
	       oe.err.msg);
	objstore_free(os);
}

static void check_unreachable(void)
{
	struct objstore_config cfg = base;
	struct objstore *os;
	struct objstore_err oe;
	struct gen g;
	char key[256], hex[OBJSTORE_SHA256_HEX];
	int rc;

	cfg.endpoint = azure ? "http://127.0.0.1:1/devstoreaccount1" : "http://127.0.0.1:1";
	os = open_store(&cfg);
	key_of(key, sizeof(key), "x.rdb");
	gen_init(&g, 1000, 0);
	rc = objstore_put_stream(os, key, gen_read, &g, NULL, &oe);
	gen_hex(&g, hex);
	objstore_free(os);
	result(rc == -ECONNREFUSED && oe.retryable && oe.http_status == 0,
	       "unreachable endpoint: retryable", "%s", oe.err.msg);
}

static void check_edge_sizes(struct objstore *os)
{
	static const uint64_t sizes[] = { 0, 1, 3 * MIB, 8 * MIB, 8 * MIB + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct objstore_put_result put;
		struct objstore_get_result get = { 0 };
		struct objstore_err oe;
		struct sink s = { 0 };
		struct gen g;
		char key[256], name[64], want[OBJSTORE_SHA256_HEX];
		int rc;

		snprintf(name, sizeof(name), "edge/%" PRIu64, sizes[i]);
		key_of(key, sizeof(key), name);
		gen_init(&g, sizes[i], 0);
		rc = objstore_put_stream(os, key, gen_read, &g, &put, &oe);
		gen_hex(&g, want);
		if (!rc)
			rc = objstore_get_stream(os, key, sink_write, &s, &get, &oe);
		snprintf(name, sizeof(name), "round trip of %" PRIu64 " bytes", sizes[i]);
		result(rc == 0 && get.size == sizes[i] && strcmp(get.sha256, want) == 0 &&
		               strcmp(put.sha256, want) == 0,
		       name, "%s; %u part(s)", rc ? oe.err.msg : "read back", rc ? 0 : put.parts);
		objstore_delete(os, key, NULL);
	}
}

static int delete_entry(void *ctx, const struct objstore_entry *e)
{
	objstore_delete(ctx, e->key, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	struct objstore *os;

	if (argc < 2 || (strcmp(argv[1], "s3") != 0 && strcmp(argv[1], "azure") != 0)) {
		fprintf(stderr, "usage: objstore-it s3|azure\n");
		return 2;
	}
	azure = strcmp(argv[1], "azure") == 0;
	suite = azure ? "objstore-azure" : "objstore-s3";
	config_from_env();
	snprintf(prefix, sizeof(prefix), "objstore-it/%ld-%ld/", (long)getpid(), (long)time(NULL));
	os = open_store(&base);
	check_put_file(os);
	check_file_edges(os);
	check_file_refusals(os);
	check_stream_spooled();
	check_put_growing(os);
	check_upload_40mib(os);
	check_head_and_download(os);
	check_list(os);
	check_small_roundtrip(os);
	check_missing_key(os);
	check_delete(os);
	check_edge_sizes(os);
	check_failed_upload(os, MIB, "source fails inside part 1: nothing written");
	check_failed_upload(os, 20 * MIB,
	                    "source fails in part 3: upload aborted, nothing written");
	check_wrong_credentials();
	check_missing_bucket();
	check_unreachable();
	check_locks(os);
	check_incomplete_uploads(os);
	objstore_list(os, prefix, delete_entry, os, NULL);
	objstore_free(os);
	printf("%s: %d passed, %d failed\n", suite, passes, failures);
	return failures ? 1 : 0;
}

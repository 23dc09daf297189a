/*
 * test_targz: lib/targz against GNU tar both ways (tar -tzf / -xzf of what the writer
 * writes; the reader on what tar -czf writes), and the reader on malformed archives:
 * each refused with -EPROTO and a message naming the entry and the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/buf.h"
#include "lib/targz.h"
#include "test/unit/unit.h"

/* --- helpers --- */

struct mem {
	const unsigned char *p;
	size_t n;
	uint64_t short_by; /* pretend the file ends this much sooner */
};

static ssize_t mem_read(void *ctx, uint64_t off, void *buf, size_t len, struct err *e)
{
	struct mem *m = ctx;
	size_t end = m->n - m->short_by;

	(void)e;
	if (off >= end)
		return 0;
	if (len > end - off)
		len = end - off;
	memcpy(buf, m->p + off, len);
	return (ssize_t)len;
}

/* The whole compressed archive, read in pieces of `chunk` bytes. */
static int drain(struct targz_writer *w, size_t chunk, struct buf *out, struct err *e)
{
	unsigned char tmp[7000];
	ssize_t n;

	ck_assert_uint_le(chunk, sizeof(tmp));
	while ((n = targz_writer_read(w, tmp, chunk, e)) > 0)
		ck_assert_int_eq(buf_append(out, tmp, (size_t)n), 0);
	return (int)n;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	fclose(f);
}

static char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	struct buf b = BUF_INIT(64u << 20);
	char tmp[8192];
	size_t k;

	ck_assert_ptr_nonnull(f);
	while ((k = fread(tmp, 1, sizeof(tmp), f)) > 0)
		ck_assert_int_eq(buf_append(&b, tmp, k), 0);
	fclose(f);
	return buf_detach(&b, n);
}

static char *run(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	struct buf b = BUF_INIT(1u << 20);
	char tmp[4096];
	size_t k;

	ck_assert_ptr_nonnull(p);
	while ((k = fread(tmp, 1, sizeof(tmp), p)) > 0)
		ck_assert_int_eq(buf_append(&b, tmp, k), 0);
	ck_assert_int_eq(pclose(p), 0);
	return buf_detach(&b, NULL);
}

static char *tmpdir(void)
{
	char tmpl[] = "/tmp/test_targz.XXXXXX";
	char *d = mkdtemp(tmpl);

	ck_assert_ptr_nonnull(d);
	return xstrdup(d);
}

static unsigned char *pattern(size_t n, unsigned seed)
{
	unsigned char *p = xmalloc(n ? n : 1);

	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (unsigned char)(seed >> 16);
	}
	return p;
}

/* What a reader saw: "name type size sha-ish;" for each entry, and the bytes of the
 * last file. */
struct seen {
	struct buf list;
	struct buf data;
	uLong crc;
	int fail_on_data; /* a callback error to return */
};

static int on_begin(void *ctx, const struct targz_header *h, struct err *e)
{
	struct seen *s = ctx;

	(void)e;
	s->crc = crc32(0, Z_NULL, 0);
	buf_clear(&s->data);
	return buf_printf(&s->list, "%s %c %llu ", h->name, h->type == TARGZ_DIR ? 'd' : 'f',
	                  (unsigned long long)h->size);
}

static int on_data(void *ctx, const void *p, size_t n, struct err *e)
{
	struct seen *s = ctx;

	if (s->fail_on_data)
		return err_set(e, s->fail_on_data, "the disk is full (test)");
	s->crc = crc32(s->crc, p, (uInt)n);
	return buf_append(&s->data, p, n);
}

static int on_end(void *ctx, const struct targz_header *h, struct err *e)
{
	struct seen *s = ctx;

	(void)h;
	(void)e;
	return buf_printf(&s->list, "%08lx;", (unsigned long)s->crc);
}

static const struct targz_reader_ops seen_ops = { on_begin, on_data, on_end };

/* Reads an archive in pieces of chunk bytes; the first error's code. */
static int read_all(const void *p, size_t n, size_t chunk, struct seen *s, struct err *e)
{
	struct targz_reader *r = targz_reader_new(&seen_ops, s);
	int rc = 0;

	for (size_t off = 0; off < n && !rc; off += chunk)
		rc = targz_reader_feed(r, (const char *)p + off, n - off < chunk ? n - off : chunk,
		                       e);
	if (!rc)
		rc = targz_reader_finish(r, e);
	targz_reader_free(r);
	return rc;
}

static void seen_init(struct seen *s)
{
	memset(s, 0, sizeof(*s));
	buf_init(&s->list, 1u << 20);
	buf_init(&s->data, 64u << 20);
}

static void seen_release(struct seen *s)
{
	buf_release(&s->list);
	buf_release(&s->data);
}

/* --- the writer, checked by GNU tar --- */

#define LONG_DIR                                                                                   \
	"appendonlydir/a-directory-name-long-enough-to-need-ustar-prefix-field-because-it-is-"     \
	"more-than-one-hundred-bytes"

START_TEST(writer_read_by_gnu_tar)
{
	size_t big_n = 3u << 20; /* several stage buffers */
	unsigned char *big = pattern(big_n, 1), *small = pattern(511, 2);
	struct mem mb = { big, big_n, 0 }, ms = { small, 511, 0 }, me = { small, 0, 0 };
	const struct targz_entry ents[] = {
		{ .name = "appendonlydir", .type = TARGZ_DIR, .mode = 0700, .mtime = 1700000000 },
		{ .name = "appendonlydir/appendonly.aof.1.base.rdb",
		  .mode = 0600,
		  .mtime = 1700000000,
		  .size = big_n,
		  .read = mem_read,
		  .ctx = &mb },
		{ .name = "appendonlydir/appendonly.aof.1.incr.aof",
		  .mode = 0600,
		  .size = 511,
		  .read = mem_read,
		  .ctx = &ms },
		{ .name = "appendonlydir/empty",
		  .mode = 0644,
		  .size = 0,
		  .read = mem_read,
		  .ctx = &me },
		{ .name = LONG_DIR, .type = TARGZ_DIR, .mode = 0755 },
		{ .name = LONG_DIR "/f", .mode = 0600, .size = 511, .read = mem_read, .ctx = &ms },
	};
	struct targz_writer *w = targz_writer_new(1);
	struct buf out = BUF_INIT(64u << 20), again = BUF_INIT(64u << 20);
	char *dir = tmpdir(), path[512], cmd[1024], *list, *got;
	struct err e = { 0 };
	size_t n;

	for (size_t i = 0; i < ARRAY_LEN(ents); i++)
		ck_assert_int_eq(targz_writer_add(w, &ents[i], &e), 0);
	ck_assert_int_eq(drain(w, 4096, &out, &e), 0);
	ck_assert_uint_eq(targz_writer_tar_size(w), 6 * 512 + big_n + 512 + 512 + 1024);
	ck_assert_uint_lt(out.len, targz_writer_tar_size(w)); /* compressed, not stored */
	targz_writer_rewind(w); /* a retried upload sends the same bytes */
	ck_assert_int_eq(drain(w, 7000, &again, &e), 0);
	ck_assert_uint_eq(again.len, out.len);
	ck_assert_int_eq(memcmp(again.data, out.data, out.len), 0);

	snprintf(path, sizeof(path), "%s/a.tar.gz", dir);
	write_file(path, out.data, out.len);
	snprintf(cmd, sizeof(cmd), "tar -tzf %s", path);
	list = run(cmd);
	ck_assert_str_eq(list, "appendonlydir/\n"
	                       "appendonlydir/appendonly.aof.1.base.rdb\n"
	                       "appendonlydir/appendonly.aof.1.incr.aof\n"
	                       "appendonlydir/empty\n" LONG_DIR "/\n" LONG_DIR "/f\n");
	snprintf(cmd, sizeof(cmd), "cd %s && tar -xzf a.tar.gz && stat -c %%a appendonlydir", dir);
	free(run(cmd)); /* tar exits 0: checksums, padding, end blocks */
	snprintf(path, sizeof(path), "%s/appendonlydir/appendonly.aof.1.base.rdb", dir);
	got = read_file(path, &n);
	ck_assert_uint_eq(n, big_n);
	ck_assert_int_eq(memcmp(got, big, n), 0);
	free(got);
	snprintf(path, sizeof(path), "%s/" LONG_DIR "/f", dir);
	got = read_file(path, &n);
	ck_assert_uint_eq(n, 511);
	ck_assert_int_eq(memcmp(got, small, n), 0);
	free(got);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(run(cmd));
	free(list);
	free(dir);
	free(big);
	free(small);
	buf_release(&out);
	buf_release(&again);
	targz_writer_free(w);
}
END_TEST

START_TEST(writer_file_ends_early)
{
	unsigned char *p = pattern(100000, 3);
	struct mem m = { p, 100000, 10 };
	struct targz_entry ent = {
		.name = "d/f", .mode = 0600, .size = 100000, .read = mem_read, .ctx = &m
	};
	struct targz_writer *w = targz_writer_new(6);
	struct buf out = BUF_INIT(1u << 20);
	struct err e = { 0 };

	ck_assert_int_eq(targz_writer_add(w, &ent, &e), 0);
	ck_assert_int_eq(drain(w, 4096, &out, &e), -EIO);
	ck_assert_str_eq(e.msg, "d/f: ended at 99990 of 100000 bytes (changed while archived?)");
	buf_release(&out);
	free(p);
	targz_writer_free(w);
}
END_TEST

static const struct {
	const char *name;
	enum targz_type type;
	uint64_t size;
	int rc;
	const char *msg;
} add_cases[] = {
	{ "", TARGZ_DIR, 0, -EINVAL, "an empty name" },
	{ "/etc/passwd", TARGZ_FILE, 1, -EINVAL, "/etc/passwd: an absolute path" },
	{ "a/../b", TARGZ_FILE, 1, -EINVAL, "a/../b: a \"..\" path component" },
	{ "a//b", TARGZ_FILE, 1, -EINVAL, "a//b: an empty path component" },
	{ "a/", TARGZ_DIR, 0, -EINVAL, "a/: an empty path component" },
	{ "a/\nb", TARGZ_FILE, 1, -EINVAL, "a/\nb: a control character in the name" },
	{ "big", TARGZ_FILE, TARGZ_SIZE_MAX + 1, -EFBIG, "big: larger than ustar's 8 GiB - 1" },
	{ "x/"
	  "0123456789012345678901234567890123456789012345678901234567890123456789"
	  "0123456789012345678901234567890",
	  TARGZ_FILE, 1, -ENAMETOOLONG, NULL },
};

START_TEST(writer_add_refuses)
{
	struct targz_writer *w = targz_writer_new(1);
	struct mem m = { (const unsigned char *)"x", 1, 0 };
	struct targz_entry ent = { .name = add_cases[_i].name,
		                   .type = add_cases[_i].type,
		                   .size = add_cases[_i].size,
		                   .read = mem_read,
		                   .ctx = &m };
	struct err e = { 0 };

	ck_assert_int_eq(targz_writer_add(w, &ent, &e), add_cases[_i].rc);
	if (add_cases[_i].msg)
		ck_assert_str_eq(e.msg, add_cases[_i].msg);
	targz_writer_free(w);
}
END_TEST

/* --- the reader on GNU tar's output --- */

START_TEST(reader_reads_gnu_tar)
{
	char *dir = tmpdir(), path[512], cmd[1024], *gz;
	unsigned char *big = pattern(2u << 20, 4);
	struct seen s;
	struct err e = { 0 };
	size_t n;
	char want[512];

	snprintf(path, sizeof(path), "%s/appendonlydir", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/appendonlydir/appendonly.aof.2.base.rdb", dir);
	write_file(path, big, 2u << 20);
	snprintf(path, sizeof(path), "%s/appendonlydir/appendonly.aof.manifest", dir);
	write_file(path, "file appendonly.aof.2.base.rdb seq 2 type b\n", 44);
	snprintf(cmd, sizeof(cmd),
	         "cd %s && tar -czf a.tar.gz appendonlydir/appendonly.aof.2.base.rdb "
	         "appendonlydir/appendonly.aof.manifest && tar -czf d.tar.gz appendonlydir",
	         dir);
	free(run(cmd));
	snprintf(path, sizeof(path), "%s/a.tar.gz", dir);
	gz = read_file(path, &n);
	for (size_t chunk = 1; chunk <= 1u << 20; chunk *= 97) { /* any split of the stream */
		seen_init(&s);
		ck_assert_int_eq(read_all(gz, n, chunk, &s, &e), 0);
		snprintf(want, sizeof(want),
		         "appendonlydir/appendonly.aof.2.base.rdb f 2097152 %08lx;"
		         "appendonlydir/appendonly.aof.manifest f 44 %08lx;",
		         crc32(0, big, 2u << 20),
		         crc32(0, (const Bytef *)"file appendonly.aof.2.base.rdb seq 2 type b\n",
		               44));
		ck_assert_str_eq(buf_cstr(&s.list), want);
		seen_release(&s);
	}
	free(gz);
	snprintf(path, sizeof(path), "%s/d.tar.gz", dir); /* with the directory entry */
	gz = read_file(path, &n);
	seen_init(&s);
	ck_assert_int_eq(read_all(gz, n, 65536, &s, &e), 0);
	ck_assert_ptr_nonnull(strstr(buf_cstr(&s.list), "appendonlydir d 0 "));
	seen_release(&s);
	free(gz);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	free(run(cmd));
	free(dir);
	free(big);
}
END_TEST

/* --- the reader on malformed archives --- */

static void fix_sum(unsigned char h[512])
{
	unsigned sum = 0;

	memset(h + 148, ' ', 8);
	for (int i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
}

/* A ustar header (POSIX magic) for name, type flag and size, checksum right. */
static void mkhdr(unsigned char h[512], const char *name, char type, unsigned long long size)
{
	memset(h, 0, 512);
	memcpy(h, name, strlen(name));
	snprintf((char *)h + 100, 8, "%07o", 0600);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo", size);
	snprintf((char *)h + 136, 12, "%011o", 0);
	h[156] = (unsigned char)type;
	memcpy(h + 257,
	       "ustar\0"
	       "00",
	       8);
	fix_sum(h);
}

static void gzip_buf(const void *p, size_t n, struct buf *out)
{
	z_stream z = { 0 };
	unsigned char tmp[16384];
	int rc;

	ck_assert_int_eq(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	do {
		z.next_out = tmp;
		z.avail_out = sizeof(tmp);
		rc = deflate(&z, Z_FINISH);
		ck_assert_int_eq(buf_append(out, tmp, sizeof(tmp) - z.avail_out), 0);
	} while (rc == Z_OK);
	ck_assert_int_eq(rc, Z_STREAM_END);
	deflateEnd(&z);
}

enum mutation {
	M_NONE,
	M_SUM,
	M_MAGIC,
	M_SIZE_TEXT,
	M_NO_END,
	M_GZ_CUT,
	M_GZ_TAIL,
	M_TAIL_DATA,
	M_GZ_CORRUPT
};

static const struct {
	const char *why;
	const char *name;
	char type;
	unsigned long long size;
	enum mutation m;
	const char *msg; /* the reader's message */
} bad[] = {
	{ "symlink", "appendonlydir/x", '2', 0, M_NONE,
	  "appendonlydir/x: a symbolic link (only regular files and directories)" },
	{ "hard link", "appendonlydir/x", '1', 0, M_NONE,
	  "appendonlydir/x: a hard link (only regular files and directories)" },
	{ "device", "appendonlydir/x", '3', 0, M_NONE,
	  "appendonlydir/x: a character device (only regular files and directories)" },
	{ "GNU long name", "././@LongLink", 'L', 10, M_NONE,
	  "././@LongLink: a GNU long name (only regular files and directories)" },
	{ "pax header", "PaxHeaders/x", 'x', 10, M_NONE,
	  "PaxHeaders/x: a pax header (only regular files and directories)" },
	{ "dot-dot", "appendonlydir/../../etc/cron.d/x", '0', 10, M_NONE,
	  "appendonlydir/../../etc/cron.d/x: a \"..\" path component" },
	{ "absolute", "/etc/passwd", '0', 10, M_NONE, "/etc/passwd: an absolute path" },
	{ "dot", "./appendonlydir", '5', 0, M_NONE, "./appendonlydir: a \".\" path component" },
	{ "dir with data", "appendonlydir", '5', 10, M_NONE,
	  "appendonlydir: a directory with 10 bytes of data" },
	{ "checksum", "appendonlydir/a", '0', 10, M_SUM,
	  "appendonlydir/a: header checksum mismatch" },
	{ "magic", "appendonlydir/a", '0', 10, M_MAGIC,
	  "appendonlydir/a: not a ustar header (magic)" },
	{ "size not octal", "appendonlydir/a", '0', 10, M_SIZE_TEXT,
	  "appendonlydir/a: malformed mode, size or mtime" },
	{ "no end blocks", "appendonlydir/a", '0', 10, M_NO_END,
	  "truncated: no end-of-archive blocks" },
	{ "cut gzip", "appendonlydir/a", '0', 100000, M_GZ_CUT,
	  "truncated: the gzip stream did not end" },
	{ "bytes after gzip", "appendonlydir/a", '0', 10, M_GZ_TAIL,
	  "3 bytes after the end of the gzip stream" },
	{ "data after end", "appendonlydir/a", '0', 10, M_TAIL_DATA,
	  "data after the end-of-archive blocks" },
	{ "corrupt gzip", "appendonlydir/a", '0', 10, M_GZ_CORRUPT, NULL },
};

/* header + data (size bytes of 'a') + padding + end blocks, then the mutation */
static void bad_archive(size_t i, struct buf *gz)
{
	struct buf tar = BUF_INIT(1u << 20);
	unsigned char h[512], zero[1024] = { 0 };
	size_t data = bad[i].type == '0' || bad[i].m == M_NONE ? (size_t)bad[i].size : 0;

	mkhdr(h, bad[i].name, bad[i].type, bad[i].size);
	if (bad[i].m == M_SUM)
		h[265] ^= 1; /* in uname: only the checksum can tell */
	if (bad[i].m == M_MAGIC)
		memcpy(h + 257, "tar\0\0\0", 6);
	if (bad[i].m == M_SIZE_TEXT)
		memcpy(h + 124, "0000000001x", 11);
	if (bad[i].m == M_MAGIC || bad[i].m == M_SIZE_TEXT)
		fix_sum(h);
	ck_assert_int_eq(buf_append(&tar, h, 512), 0);
	for (size_t k = 0; k < data; k++)
		ck_assert_int_eq(buf_append(&tar, "a", 1), 0);
	ck_assert_int_eq(buf_append(&tar, zero, (512 - data % 512) % 512), 0);
	if (bad[i].m != M_NO_END)
		ck_assert_int_eq(buf_append(&tar, zero, 1024), 0);
	if (bad[i].m == M_TAIL_DATA)
		ck_assert_int_eq(buf_append(&tar, "junk", 4), 0);
	gzip_buf(tar.data, tar.len, gz);
	if (bad[i].m == M_GZ_CUT)
		gz->len /= 2;
	if (bad[i].m == M_GZ_TAIL)
		ck_assert_int_eq(buf_append(gz, "xyz", 3), 0);
	if (bad[i].m == M_GZ_CORRUPT)
		gz->data[gz->len / 2] ^= 0x55, gz->data[gz->len / 2 + 1] ^= 0x55;
	buf_release(&tar);
}

START_TEST(reader_refuses_malformed)
{
	struct buf gz = BUF_INIT(1u << 20);
	struct seen s;
	struct err e = { 0 };

	bad_archive((size_t)_i, &gz);
	seen_init(&s);
	ck_assert_int_eq(read_all(gz.data, gz.len, 1000, &s, &e), -EPROTO);
	if (bad[_i].msg)
		ck_assert_str_eq(e.msg, bad[_i].msg);
	else
		ck_assert_msg(strncmp(e.msg, "gzip: ", 6) == 0 || strstr(e.msg, "checksum"),
		              "%s: %s", bad[_i].why, e.msg);
	seen_release(&s);
	buf_release(&gz);
}
END_TEST

START_TEST(reader_callback_error_stops)
{
	unsigned char *p = pattern(200000, 5);
	struct mem m = { p, 200000, 0 };
	struct targz_entry ent = {
		.name = "f", .mode = 0600, .size = 200000, .read = mem_read, .ctx = &m
	};
	struct targz_writer *w = targz_writer_new(1);
	struct buf out = BUF_INIT(1u << 20);
	struct seen s;
	struct err e = { 0 };

	ck_assert_int_eq(targz_writer_add(w, &ent, &e), 0);
	ck_assert_int_eq(drain(w, 4096, &out, &e), 0);
	seen_init(&s);
	s.fail_on_data = -ENOSPC;
	ck_assert_int_eq(read_all(out.data, out.len, 4096, &s, &e), -ENOSPC);
	ck_assert_str_eq(e.msg, "the disk is full (test)");
	seen_release(&s);
	seen_init(&s); /* and the same archive reads whole */
	ck_assert_int_eq(read_all(out.data, out.len, 4096, &s, &e), 0);
	ck_assert_uint_eq(s.data.len, 200000);
	ck_assert_int_eq(memcmp(s.data.data, p, 200000), 0);
	seen_release(&s);
	buf_release(&out);
	free(p);
	targz_writer_free(w);
}
END_TEST

static Suite *targz_suite(void)
{
	Suite *s = suite_create("targz");
	TCase *tc = tcase_create("targz");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, writer_read_by_gnu_tar);
	tcase_add_test(tc, writer_file_ends_early);
	tcase_add_loop_test(tc, writer_add_refuses, 0, ARRAY_LEN(add_cases));
	tcase_add_test(tc, reader_reads_gnu_tar);
	tcase_add_loop_test(tc, reader_refuses_malformed, 0, ARRAY_LEN(bad));
	tcase_add_test(tc, reader_callback_error_stops);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(targz_suite)

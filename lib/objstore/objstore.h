/*
 * objstore: a small client for S3-compatible object storage and Azure Blob storage,
 * made to stream Redis RDB backups out and back in with bounded memory.
 *
 *   struct objstore_config cfg = {
 *           .provider = OBJSTORE_S3, .endpoint = "http://10.0.0.5:7070", .region = "us-east-1",
 *           .bucket = "backups", .path_style = true,
 *           .access_key_id = id, .secret_access_key = secret,
 *   };
 *   struct objstore_err oe;
 *   struct objstore *os = objstore_new(&cfg, &oe);
 *   struct objstore_put_result res;
 *   if (objstore_put_stream(os, "prod/cache/2024.rdb", read_rdb, fd, &res, &oe) == 0)
 *           record(res.size, res.sha256);
 *   else if (oe.retryable) ... else ...            (oe.err.msg says what and why)
 *   objstore_free(os);
 *
 * Uploads. objstore_put_stream reads the stream into one part buffer of part_size bytes,
 * reused for every part (the upload's memory is one part plus a list of part ids), or,
 * with spool_dir, into one part-sized file there (its memory one 64 KiB chunk). A
 * stream shorter than one part is sent in a single request (S3 PutObject, Azure Put
 * Blob); a longer one as S3 multipart (CreateMultipartUpload, UploadPart…,
 * CompleteMultipartUpload) or Azure blocks (Put Block…, Put Block List). The object
 * appears under the key only when the last request succeeds: on any failure a
 * multipart upload is aborted (AbortMultipartUpload), and Azure's uncommitted blocks are
 * never visible (the service drops them), so a failed upload never leaves a partial
 * object, and an object already under the key stays as it was. The SHA-256 of the whole
 * stream is computed on the way and returned with its size; each part is also checked by
 * the server (S3: the signed x-amz-content-sha256 of the part; Azure: Content-MD5).
 * At most OBJSTORE_PARTS_MAX parts: the largest object is part_size * 10000 (80 GB with
 * the default part size); a longer stream fails with -EFBIG and is aborted.
 * objstore_put_file uploads a file the same way with no part buffer: each part is read
 * twice from the file, once to hash it (the signed SHA-256 or Content-MD5 must precede
 * the body) and once by libcurl while it is sent, through a OBJSTORE_FILE_CHUNK buffer;
 * its memory does not depend on the part size or the file's size.
 *
 * Errors: every function returns 0 or a negative errno, and fills the optional
 * struct objstore_err: a message naming the provider, the operation, the key, the HTTP
 * status and the server's own Code and Message, e.g.
 *   "s3 PutObject backups/x: 403 SignatureDoesNotMatch: The request signature we ..."
 * with `retryable` set for what may work when tried again (5xx, 429, 408, timeouts,
 * refused or reset connections, unreachable hosts) and clear for the permanent
 * (other 4xx, bad arguments). Codes: 404 and NoSuchKey/NoSuchBucket/BlobNotFound/
 * ContainerNotFound → -ENOENT; 401/403 and the signature and credential codes → -EACCES;
 * 503/429/SlowDown/ServerBusy → -EAGAIN; other 5xx → -EIO; timeouts → -ETIMEDOUT;
 * refused → -ECONNREFUSED; a read callback's error is returned as it is.
 *
 * Deadlines: every request has a connect timeout and a low-speed limit (less than
 * OBJSTORE_LOW_SPEED_BYTES per second for low_speed_time_s aborts it); every request but
 * a streamed download also has a total timeout (timeout_ms). Bodies read into memory (error
 * bodies, list pages, the multipart answers) are capped (OBJSTORE_ERR_BODY_MAX,
 * OBJSTORE_PAGE_MAX). Nothing is retried here: the caller decides (a part upload is
 * the expensive thing to redo, which is why uploads are usually retried whole after a
 * backoff, the aborted attempt having left nothing behind).
 *
 * Credentials: S3 uses SigV4 (libcurl's CURLOPT_AWS_SIGV4, "aws:amz:<region>:s3"),
 * with x-amz-security-token when a session token is given. Azure uses Shared Key
 * (account + key, from the fields or a connection string) or a SAS token appended to
 * every URL. Secrets are copied, wiped on free, and never appear in a message.
 *
 * Threads: a handle is used by one thread at a time (it owns one libcurl easy handle,
 * so connections are reused); use one handle per thread for parallel transfers.
 * objstore_new may be called from any thread.
 */
#ifndef REDIS_OPERATOR_OBJSTORE_H
#define REDIS_OPERATOR_OBJSTORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

#define OBJSTORE_PART_SIZE_DEFAULT   (8u << 20)
#define OBJSTORE_PART_SIZE_MIN       (5u << 20) /* S3's smallest part but the last */
#define OBJSTORE_PART_SIZE_MAX       (512u << 20)
#define OBJSTORE_PARTS_MAX           10000u /* S3's limit (Azure's is 50,000) */
#define OBJSTORE_TIMEOUT_MS_DEFAULT  300000 /* one request, a whole part included */
#define OBJSTORE_CONNECT_MS_DEFAULT  10000
#define OBJSTORE_LOW_SPEED_S_DEFAULT 30
#define OBJSTORE_LOW_SPEED_BYTES     1024
#define OBJSTORE_ERR_BODY_MAX        (16u << 10) /* error body kept for the message */
#define OBJSTORE_PAGE_MAX            (8u << 20)  /* a list page or a multipart answer */
#define OBJSTORE_SMALL_MAX           (64u << 20) /* objstore_put_small's largest body */
#define OBJSTORE_LIST_PAGES_MAX      100000u
#define OBJSTORE_SHA256_HEX          65          /* 64 hex digits and the NUL */
#define OBJSTORE_FILE_CHUNK          (64u << 10) /* objstore_put_file's read buffer */

enum objstore_provider {
	OBJSTORE_S3,
	OBJSTORE_AZURE,
};

/* Strings are copied by objstore_new; NULL or 0 picks the default. */
struct objstore_config {
	enum objstore_provider provider;
	/* S3: "https://s3.eu-west-1.amazonaws.com", "http://10.0.0.5:7070"; NULL: AWS's
	 * endpoint of the region. Azure: the blob endpoint, "https://acct.blob.core.windows.net"
	 * or Azurite's "http://10.0.0.5:10000/devstoreaccount1" (the account in the path);
	 * NULL: the connection string's, else https://<account>.blob.core.windows.net. */
	const char *endpoint;
	const char *region; /* S3 only; NULL: "us-east-1" */
	const char *bucket; /* S3 bucket or Azure container; required */
	bool path_style;    /* S3: endpoint/bucket/key rather than bucket.endpoint/key */
	/* S3 credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN). */
	const char *access_key_id;
	const char *secret_access_key;
	const char *session_token; /* optional */
	/* Azure, one of: AZURE_STORAGE_CONNECTION_STRING; AZURE_STORAGE_ACCOUNT with
	 * AZURE_STORAGE_KEY (base64); a SAS token (AZURE_STORAGE_SAS_TOKEN, with the account
	 * or an endpoint). A connection string wins over the other fields. */
	const char *connection_string;
	const char *account;
	const char *account_key;
	const char *sas_token;
	size_t part_size; /* OBJSTORE_PART_SIZE_MIN..MAX; 0: the default */
	int timeout_ms;   /* total per request (not a streamed download) */
	int connect_timeout_ms;
	int low_speed_time_s; /* seconds below OBJSTORE_LOW_SPEED_BYTES/s that abort */
	unsigned list_page;   /* keys asked per list page; 0: 1000 (the servers' most) */
	const char *ca_file;  /* PEM bundle for https; NULL: the system's */
	const char *user_agent;
	/* objstore_put_stream keeps its part in an unlinked file of this directory (sent
	 * from there, like objstore_put_file's ranges) instead of a part_size buffer: its
	 * memory is then one OBJSTORE_FILE_CHUNK, its disk one part. NULL: memory. */
	const char *spool_dir;
};

struct objstore_err {
	struct err err;   /* code (negative errno) and message */
	long http_status; /* 0 when the server gave no answer */
	char code[64];    /* the server's error Code ("NoSuchBucket"), "" when none */
	bool retryable;
};

void objstore_err_clear(struct objstore_err *oe);

struct objstore;

/* NULL on a bad configuration (oe says which field); the handle is the caller's. */
struct objstore *objstore_new(const struct objstore_config *cfg, struct objstore_err *oe);
/* NULL-safe; wipes the credentials. */
void objstore_free(struct objstore *os);
/* "s3" or "azure". */
const char *objstore_provider_name(const struct objstore *os);

/*
 * Reads up to len bytes of the stream into buf: returns the number read (> 0), 0 at the
 * end of the stream, or a negative errno, which fails the upload (e may say why; it is
 * the upload's error). Called only between requests, never during one.
 */
typedef ssize_t (*objstore_read_fn)(void *ctx, void *buf, size_t len, struct err *e);
/* Takes the next n bytes of a download: 0 to go on, a negative errno to stop. */
typedef int (*objstore_write_fn)(void *ctx, const void *buf, size_t n);

struct objstore_put_result {
	uint64_t size;
	char sha256[OBJSTORE_SHA256_HEX]; /* lower-case hex of the whole stream */
	unsigned parts;                   /* 1 for a single request */
};

int objstore_put_stream(struct objstore *os, const char *key, objstore_read_fn read, void *ctx,
                        struct objstore_put_result *res, struct objstore_err *oe);
/*
 * The file open at fd, from offset 0 to its size when the call starts (fstat), read with
 * pread (fd's offset is left alone). Same parts, atomicity and result as
 * objstore_put_stream. The file must not change during the upload: a part changed
 * between its two reads fails on the server's check (-EBADMSG), a file grown shorter
 * fails with -EIO. cancel (NULL: never) is polled before every read: once true, the
 * upload fails with -ECANCELED and is aborted.
 */
int objstore_put_file(struct objstore *os, const char *key, int fd, const atomic_bool *cancel,
                      struct objstore_put_result *res, struct objstore_err *oe);
/*
 * Blocks until the file holds at least want bytes or will not grow any more: *have is
 * its length then (at least want unless *final), *final true once the writer is done.
 * The bytes before sent are uploaded for good (their parts acknowledged): the caller may
 * drop them (punch them out of a spool); they are never read again. 0, or a negative
 * errno that fails the upload (e may say why).
 */
typedef int (*objstore_avail_fn)(void *ctx, uint64_t sent, uint64_t want, uint64_t *have,
                                 bool *final, struct err *e);
/*
 * objstore_put_file over a file another thread is still appending to (a spool): each
 * part is sent as soon as avail says the file holds it, so the upload follows the
 * writer; the object is the file's first *have bytes once avail says final. Bytes
 * already written must not change. Same parts, atomicity, cancel and result as
 * objstore_put_file; its memory, one OBJSTORE_FILE_CHUNK.
 */
int objstore_put_growing(struct objstore *os, const char *key, int fd, objstore_avail_fn avail,
                         void *ctx, const atomic_bool *cancel, struct objstore_put_result *res,
                         struct objstore_err *oe);
/* One request with data in memory (manifests): at most OBJSTORE_SMALL_MAX bytes. */
int objstore_put_small(struct objstore *os, const char *key, const void *data, size_t len,
                       struct objstore_err *oe);

struct objstore_get_result {
	uint64_t size;                    /* bytes handed to the write callback */
	char sha256[OBJSTORE_SHA256_HEX]; /* of those bytes */
};

/* Streams the object to write as it arrives (nothing is buffered). A write callback's
 * error stops the transfer and is returned. A missing key is -ENOENT. */
int objstore_get_stream(struct objstore *os, const char *key, objstore_write_fn write, void *ctx,
                        struct objstore_get_result *res, struct objstore_err *oe);

struct objstore_info {
	uint64_t size;
	char etag[128]; /* as the server sent it, quotes included */
};

/* The object's size and ETag; -ENOENT when there is none. */
int objstore_head(struct objstore *os, const char *key, struct objstore_info *info,
                  struct objstore_err *oe);
/* Removes the object; a key that does not exist is not an error. */
int objstore_delete(struct objstore *os, const char *key, struct objstore_err *oe);

struct objstore_entry {
	const char *key; /* borrowed, valid during the callback */
	uint64_t size;
	const char *etag;
	const char *last_modified; /* as the server wrote it */
};
/* Called for each object; a non-zero return stops the listing and is returned. */
typedef int (*objstore_list_fn)(void *ctx, const struct objstore_entry *entry);

/* Every object whose key starts with prefix ("" for all), in the server's (lexical)
 * order, page after page. */
int objstore_list(struct objstore *os, const char *prefix, objstore_list_fn fn, void *ctx,
                  struct objstore_err *oe);

/* A multipart upload begun and neither completed nor aborted (S3 ListMultipartUploads). */
struct objstore_upload_entry {
	const char *key;       /* borrowed, valid during the callback */
	const char *upload_id; /* borrowed */
	const char *initiated; /* as the server wrote it (RFC 3339), "" when absent */
};
typedef int (*objstore_upload_fn)(void *ctx, const struct objstore_upload_entry *u);

/*
 * Every incomplete multipart upload whose key starts with prefix, page after page (S3;
 * on Azure none: uncommitted blocks are never listed and the service drops them). Such
 * an upload is left by a failed abort or a process killed mid-upload; its parts are
 * stored (and billed) until it is aborted or the bucket's lifecycle rule removes it.
 */
int objstore_list_uploads(struct objstore *os, const char *prefix, objstore_upload_fn fn, void *ctx,
                          struct objstore_err *oe);
/* Aborts the multipart upload upload_id of key (S3 AbortMultipartUpload; an upload that is
 * already gone, NoSuchUpload, is not an error; Azure: nothing to do). */
int objstore_abort_multipart(struct objstore *os, const char *key, const char *upload_id,
                             struct objstore_err *oe);

/* Part-size arithmetic, exported for tests and for callers that size their parts. */
/* Parts a stream of size bytes takes (a single request counts as 1; 0 bytes is 1). */
uint64_t objstore_parts_for(uint64_t size, size_t part_size);
/* The largest stream objstore_put_stream takes with this part size. */
uint64_t objstore_max_object(size_t part_size);
/* 0 when part_size is usable (0 means the default), else -EINVAL with a message. */
int objstore_check_part_size(size_t part_size, struct err *e);
/* Azure block id of part n (1-based): base64 of a fixed-width string, so all the ids
 * of a blob have the same length as the service requires. out: at least 25 bytes. */
void objstore_block_id(unsigned n, char out[25]);

#endif

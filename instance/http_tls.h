/*
 * http_tls: what the instance API serves, judged from the --http-tls mode and which of
 * its three TLS files (--http-tls-dir) could be read. Pure; any thread.
 *
 *   every file                  → HTTPS: client certificates for mutations (http.c)
 *   no file, mode `auto`        → plain HTTP, mutations open (a hand-made pod without TLS)
 *   anything else               → REFUSED: plain HTTP read-only (probes, status);
 *                                 every mutation is 503 with the reason
 *
 * So a file that is missing never turns the API into plain, unauthenticated HTTP for
 * mutations: with `auto` only a directory with none of the files does, with `required`
 * (what the controller sets in its pods) nothing does. The reason reads
 *   "TLS material incomplete: tls.key, ca.crt missing in /etc/x; mutations refused"
 * (the files in the order of inst_http_tls_files).
 */
#ifndef REDIS_OPERATOR_INSTANCE_HTTP_TLS_H
#define REDIS_OPERATOR_INSTANCE_HTTP_TLS_H

#include <stdbool.h>
#include <stddef.h>

#define INST_HTTP_TLS_NFILES     3
#define INST_HTTP_TLS_REASON_MAX 512 /* bytes with the NUL; a longer reason is cut */

/* "tls.crt", "tls.key", "ca.crt": the files of --http-tls-dir, in this order everywhere. */
extern const char *const inst_http_tls_files[INST_HTTP_TLS_NFILES];

enum inst_http_tls_mode {
	INST_HTTP_TLS_AUTO,     /* plain HTTP only when the directory has none of the files */
	INST_HTTP_TLS_REQUIRED, /* never plain HTTP for mutations */
};

enum inst_http_serve {
	INST_HTTP_SERVE_HTTPS,
	INST_HTTP_SERVE_PLAIN,
	INST_HTTP_SERVE_REFUSED,
};

/* "auto" or "required" (NULL: auto). 0, or -EINVAL leaving *out alone. */
int inst_http_tls_mode_parse(const char *text, enum inst_http_tls_mode *out);
/* "https", "plain", "refused" (the /v1/status field httpTls). */
const char *inst_http_serve_name(enum inst_http_serve s);
/*
 * The verdict for present[i] (file i of inst_http_tls_files was read). reason (len
 * bytes, len > 0) gets the sentence above for REFUSED and "" otherwise; dir only
 * appears in it.
 */
enum inst_http_serve inst_http_tls_judge(enum inst_http_tls_mode mode,
                                         const bool present[INST_HTTP_TLS_NFILES], const char *dir,
                                         char *reason, size_t len);

#endif

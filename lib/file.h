/*
 * file: whole-file reads under a size cap.
 *
 * Every file this program reads whole (kubeconfigs, tokens, manifests, maps) has a named
 * limit: a file longer than max_len bytes fails with -EMSGSIZE after at most max_len + 1
 * bytes were read, so a wrong path (a device, a huge log) costs bounded memory.
 *
 *   char *text;
 *   size_t len;
 *   if (file_read_all(path, FOO_FILE_MAX, &text, &len, e) < 0)
 *           return e->code;
 *   ...
 *   free(text);
 *
 * file_read_all_secret is for files that hold credentials: every copy it lets go of
 * (the old buffer when it grows, the bytes read before a failure) is wiped first. The
 * caller wipes the result (secure_zero(text, len) then free(), or free_secret()).
 *
 * Errors: -errno of open/read with "PATH: <strerror>" (-ENOENT, -EACCES, -EISDIR ...),
 * -EMSGSIZE with "PATH: larger than MAX bytes". Messages quote no file content.
 * Any thread.
 */
#ifndef REDIS_OPERATOR_FILE_H
#define REDIS_OPERATOR_FILE_H

#include <stddef.h>

#include "lib/err.h"

/*
 * Reads all of path (at most max_len bytes, max_len < SIZE_MAX) into *out, a new
 * NUL-terminated buffer (free() it), and its length into *len (NULL: not wanted). The
 * file may hold NUL bytes: *len counts them. Outputs are written only on success.
 */
int file_read_all(const char *path, size_t max_len, char **out, size_t *len, struct err *e);
/* file_read_all for secrets: nothing it read is left unwiped in freed memory. */
int file_read_all_secret(const char *path, size_t max_len, char **out, size_t *len, struct err *e);

#endif

/*
 * chaos_io: the small file and list readers chaos-writer's subcommands share.
 *
 * - Fault files: the chaos scenario writes the wall time of each fault it injects, one
 *   per line (see chaos_parse_wall for the forms). A file with no text at all stands
 *   for one fault at its modification time (`touch fault` is enough).
 * - Secrets: a password file's content minus one trailing newline; wiped on free.
 * - Lists: "a,b,c" flag values; empty items are skipped.
 *
 * Sizes are capped (CHAOS_IO_FILE_MAX); outputs are written only on success. Any thread.
 */
#ifndef REDIS_OPERATOR_CHAOS_IO_H
#define REDIS_OPERATOR_CHAOS_IO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define CHAOS_IO_FILE_MAX (8u * 1024 * 1024)

/*
 * Parses fault-file text: one wall time per non-blank line. 0 and a new array (free())
 * in *out with *n entries (n may be 0); -EINVAL naming the line for a bad one.
 */
int chaos_parse_faults(const char *text, size_t len, int64_t **out, size_t *n, struct err *e);
/* Reads a fault file (see above): -errno when it cannot be read. */
int chaos_read_faults(const char *path, int64_t **out, size_t *n, struct err *e);

/* Reads a secret file; *out is yours (free_secret()). -EINVAL when it is empty. */
int chaos_read_secret(const char *path, char **out, struct err *e);

/* Splits s at commas into a new NULL-terminated array of new strings (chaos_list_free). */
char **chaos_split_list(const char *s, size_t *n);
void chaos_list_free(char **list);

/* Reads a whole file (at most CHAOS_IO_FILE_MAX bytes) into a new NUL-terminated buffer. */
int chaos_read_file(const char *path, char **out, size_t *len, struct err *e);

/* -errno after a failed call, never 0 (-EIO when errno was not set). */
int chaos_errno(void);

/* Monotonic and wall clocks in microseconds. */
int64_t chaos_mono_us(void);
int64_t chaos_wall_us(void);

#endif

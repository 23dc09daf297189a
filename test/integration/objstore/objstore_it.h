/*
 * objstore_it: what the checks of the objstore-it driver share (objstore_it.c: the
 * transfers; lock_it.c: Object Lock / immutability and incomplete multipart uploads).
 */
#ifndef REDIS_OPERATOR_TEST_OBJSTORE_IT_H
#define REDIS_OPERATOR_TEST_OBJSTORE_IT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/objstore/objstore.h"

extern const char *suite;           /* "objstore-s3" or "objstore-azure" */
extern bool azure;                  /* the provider under test */
extern char prefix[128];            /* this run's own key prefix, emptied at the end */
extern struct objstore_config base; /* the server's configuration, from the environment */

/* One line "ok   <suite>: name (…)" or "FAIL <suite>: name: …", counted. */
void result(bool ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* objstore_new, or the driver exits with a FAIL line. */
struct objstore *open_store(const struct objstore_config *cfg);
/* prefix + name into out. */
void key_of(char *out, size_t cap, const char *name);

/* lock_it.c */
void check_locks(struct objstore *os);
void check_incomplete_uploads(struct objstore *os);

#endif

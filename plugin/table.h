/*
 * table: columns of text aligned for a terminal, as `kubectl get` prints them (two
 * spaces between columns, no borders), with an optional ANSI colour per cell that never
 * counts toward a column's width. Pure; a table is used by one thread.
 *
 *   struct plugin_table t;
 *   plugin_table_init(&t, (const char *[]){ "POD", "ROLE", NULL });
 *   plugin_table_add(&t, (const char *[]){ "demo-1", "primary" }, NULL);
 *   plugin_table_render(&t, colour, &out);
 *   plugin_table_release(&t);
 */
#ifndef REDIS_OPERATOR_PLUGIN_TABLE_H
#define REDIS_OPERATOR_PLUGIN_TABLE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"

#define PLUGIN_TABLE_COLS 12

enum plugin_colour {
	PLUGIN_PLAIN,
	PLUGIN_GREEN,  /* good: primary, ready */
	PLUGIN_YELLOW, /* attention: lagging, progressing */
	PLUGIN_RED,    /* bad: not ready, fenced, failed */
};

struct plugin_table {
	size_t ncols, nrows;
	char **cells;            /* nrows * ncols copies, header row first */
	enum plugin_colour *col; /* one per cell */
};

/* headers: NULL-terminated, at most PLUGIN_TABLE_COLS. */
void plugin_table_init(struct plugin_table *t, const char *const *headers);
/* Appends a row of ncols cells (NULL prints "-"); colours may be NULL (all plain). */
void plugin_table_add(struct plugin_table *t, const char *const *cells,
                      const enum plugin_colour *colours);
/* Appends the table to out; colours only when colour is true. */
void plugin_table_render(const struct plugin_table *t, bool colour, struct buf *out);
void plugin_table_release(struct plugin_table *t);

#endif

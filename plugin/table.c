/*
 * table: aligned columns for the terminal (table.h). Cells are copied; the widths are
 * counted in bytes of the plain text (the names and values printed are ASCII), and the
 * last column is not padded, so no line ends in spaces.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "plugin/table.h"

static const char *const ansi[] = {
	[PLUGIN_PLAIN] = "",
	[PLUGIN_GREEN] = "\033[32m",
	[PLUGIN_YELLOW] = "\033[33m",
	[PLUGIN_RED] = "\033[31m",
};

void plugin_table_init(struct plugin_table *t, const char *const *headers)
{
	size_t n = 0;

	while (n < PLUGIN_TABLE_COLS && headers[n])
		n++;
	*t = (struct plugin_table){ .ncols = n };
	plugin_table_add(t, headers, NULL);
}

void plugin_table_add(struct plugin_table *t, const char *const *cells,
                      const enum plugin_colour *colours)
{
	size_t base = t->nrows * t->ncols;

	t->cells = xreallocarray(t->cells, base + t->ncols, sizeof(*t->cells));
	t->col = xreallocarray(t->col, base + t->ncols, sizeof(*t->col));
	for (size_t i = 0; i < t->ncols; i++) {
		t->cells[base + i] = xstrdup(cells[i] && *cells[i] ? cells[i] : "-");
		t->col[base + i] = colours ? colours[i] : PLUGIN_PLAIN;
	}
	t->nrows++;
}

void plugin_table_render(const struct plugin_table *t, bool colour, struct buf *out)
{
	size_t w[PLUGIN_TABLE_COLS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++)
			if (strlen(t->cells[r * t->ncols + c]) > w[c])
				w[c] = strlen(t->cells[r * t->ncols + c]);
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];
			enum plugin_colour k = colour ? t->col[r * t->ncols + c] : PLUGIN_PLAIN;
			bool last = c + 1 == t->ncols;

			buf_printf(out, "%s%s%s", ansi[k], s, k != PLUGIN_PLAIN ? "\033[0m" : "");
			if (!last)
				buf_printf(out, "%*s", (int)(w[c] - strlen(s) + 2), "");
		}
		buf_append_char(out, '\n');
	}
}

void plugin_table_release(struct plugin_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->col);
	*t = (struct plugin_table){ 0 };
}

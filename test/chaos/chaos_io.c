/*
 * chaos_io: fault files, secret files, comma lists and µs clocks (see chaos_io.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/alloc.h"
#include "lib/file.h"
#include "test/chaos/chaos_io.h"
#include "test/chaos/chaos_log.h"

int chaos_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

int64_t chaos_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t chaos_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int chaos_read_file(const char *path, char **out, size_t *len, struct err *e)
{
	/* the secret reader: password files come through here too */
	return file_read_all_secret(path, CHAOS_IO_FILE_MAX, out, len, e);
}

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return false;
	return true;
}

int chaos_parse_faults(const char *text, size_t len, int64_t **out, size_t *n, struct err *e)
{
	int64_t *v = NULL;
	size_t cnt = 0, cap = 0, pos = 0, lineno = 0;
	char line[64];

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ln = nl ? (size_t)(nl - (text + pos)) : len - pos;

		lineno++;
		if (!is_blank(text + pos, ln)) {
			if (cnt == cap) {
				cap = cap ? 2 * cap : 16;
				v = xreallocarray(v, cap, sizeof(*v));
			}
			snprintf(line, sizeof(line), "%.*s", (int)ln, text + pos);
			if (ln >= sizeof(line) || chaos_parse_wall(line, &v[cnt]) < 0) {
				free(v);
				return err_set(e, -EINVAL, "fault line %zu: not a wall time",
				               lineno);
			}
			cnt++;
		}
		pos += ln + 1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int chaos_read_faults(const char *path, int64_t **out, size_t *n, struct err *e)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0;
	int rc = chaos_read_file(path, &text, &len, e);

	if (rc)
		return rc;
	if (is_blank(text, len)) {
		free(text);
		if (stat(path, &st) < 0)
			return err_set(e, chaos_errno(), "%s: %s", path, strerror(errno));
		*out = xmalloc(sizeof(**out));
		**out = (int64_t)st.st_mtim.tv_sec * 1000000 + st.st_mtim.tv_nsec / 1000;
		*n = 1;
		return 0;
	}
	rc = chaos_parse_faults(text, len, out, n, e);
	free(text);
	return rc;
}

int chaos_read_secret(const char *path, char **out, struct err *e)
{
	char *text = NULL;
	size_t len = 0;
	int rc = chaos_read_file(path, &text, &len, e);

	if (rc)
		return rc;
	if (len > 0 && text[len - 1] == '\n')
		text[--len] = '\0';
	if (len > 0 && text[len - 1] == '\r')
		text[--len] = '\0';
	if (len == 0) {
		free_secret(text);
		return err_set(e, -EINVAL, "%s: empty", path);
	}
	*out = text;
	return 0;
}

char **chaos_split_list(const char *s, size_t *n)
{
	char **list = xcalloc(1, sizeof(*list));
	size_t cnt = 0;

	while (s && *s) {
		const char *c = strchr(s, ',');
		size_t len = c ? (size_t)(c - s) : strlen(s);

		if (len > 0) {
			list = xreallocarray(list, cnt + 2, sizeof(*list));
			list[cnt++] = xstrndup(s, len);
			list[cnt] = NULL;
		}
		s += len + (c ? 1 : 0);
	}
	if (n)
		*n = cnt;
	return list;
}

void chaos_list_free(char **list)
{
	if (!list)
		return;
	for (size_t i = 0; list[i]; i++)
		free(list[i]);
	free(list);
}

/*
 * engine: engine names and version numbers (see engine.h). No state.
 */
#include "engine.h"

#include <errno.h>

const char *vk_engine_name(enum vk_engine engine)
{
	static const char *const names[] = {
		[VK_ENGINE_UNKNOWN] = "unknown",
		[VK_ENGINE_REDIS] = "redis",
		[VK_ENGINE_VALKEY] = "valkey",
	};

	if ((unsigned)engine >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[engine];
}

/* One part of a version: 1..3 digits. Advances *i past them. */
static int version_part(const char *s, size_t len, size_t *i, unsigned *out)
{
	unsigned v = 0;
	size_t start = *i;

	while (*i < len && s[*i] >= '0' && s[*i] <= '9' && *i - start < 3)
		v = v * 10 + (unsigned)(s[(*i)++] - '0');
	if (*i == start)
		return -EINVAL;
	*out = v;
	return 0;
}

int vk_version_parse(const char *s, size_t len, unsigned *out)
{
	unsigned part[3];
	size_t i = 0;

	for (int n = 0; n < 3; n++) {
		if (n > 0 && (i >= len || s[i++] != '.'))
			return -EINVAL;
		if (version_part(s, len, &i, &part[n]))
			return -EINVAL;
	}
	if (i != len)
		return -EINVAL;
	*out = VK_VERSION(part[0], part[1], part[2]);
	return 0;
}

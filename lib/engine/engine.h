/*
 * engine: which server we talk to (redis-server or valkey-server) and its version.
 *
 * Valkey reports `redis_version:7.2.4` for compatibility and its own version in
 * `valkey_version`, so code that depends on the server's behaviour asks for the
 * (engine, version) pair, never for redis_version alone. A version is packed into
 * one comparable number: VK_VERSION(7, 0, 15) < VK_VERSION(7, 2, 0).
 * Pure functions; any thread.
 */
#ifndef REDIS_OPERATOR_ENGINE_ENGINE_H
#define REDIS_OPERATOR_ENGINE_ENGINE_H

#include <stddef.h>

enum vk_engine {
	VK_ENGINE_UNKNOWN = 0,
	VK_ENGINE_REDIS,
	VK_ENGINE_VALKEY,
};

/* Each part must be < 1000 (checked by vk_version_parse). */
#define VK_VERSION(major, minor, patch)                                                            \
	((unsigned)(major)*1000000u + (unsigned)(minor)*1000u + (unsigned)(patch))
#define VK_VERSION_MAJOR(v) ((v) / 1000000u)
#define VK_VERSION_MINOR(v) ((v) / 1000u % 1000u)
#define VK_VERSION_PATCH(v) ((v) % 1000u)

/* "redis", "valkey", or "unknown". */
const char *vk_engine_name(enum vk_engine engine);

/*
 * Parses "MAJOR.MINOR.PATCH" (exactly three decimal parts, each 0..999, nothing
 * else) from s[0..len). 0 and *out set, or -EINVAL.
 */
int vk_version_parse(const char *s, size_t len, unsigned *out);

#endif

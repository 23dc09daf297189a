/*
 * fence: the pure edit of the redis.io/fencedInstances list behind `kubectl redis fence`
 * and `unfence` (fence.c). Any thread.
 */
#ifndef REDIS_OPERATOR_PLUGIN_FENCE_H
#define REDIS_OPERATOR_PLUGIN_FENCE_H

#include <stdbool.h>

#include "lib/err.h"
#include "plugin/plugin.h"

/*
 * The annotation's new value after fencing (fence) or unfencing pod in current (its
 * value, or NULL when absent). pod "all" fences every pod (["*"]) or unfences every
 * one (the annotation removed). *out: the new compact JSON list (free it), or NULL when
 * the annotation must be removed. -EPROTO when current is not a JSON list, -EINVAL when
 * one pod is unfenced while ["*"] fences every pod (the list cannot say "all but one").
 */
int plugin_fence_edit(const char *current, const char *pod, bool fence, char **out, struct err *e);

#endif

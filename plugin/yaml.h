/*
 * yaml: JSON as YAML for `-o yaml`, in the block style kubectl prints: two spaces of
 * indentation, "- " for list items, every string double-quoted when plain YAML would
 * read it otherwise (empty, a number, true/false/null, leading or trailing spaces,
 * ": ", " #", a leading indicator character, any control character). Keys in the
 * object's order. Loading the output with lib/yamlx gives the same JSON back
 * (test_plugin_yaml). Pure; any thread.
 */
#ifndef REDIS_OPERATOR_PLUGIN_YAML_H
#define REDIS_OPERATOR_PLUGIN_YAML_H

#include <jansson.h>

#include "lib/buf.h"

void plugin_yaml_emit(json_t *j, struct buf *out);

#endif

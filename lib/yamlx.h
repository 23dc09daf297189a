/*
 * yamlx: YAML (one or more documents) to jansson, for manifests and kubeconfigs.
 *
 *   json_t *docs;
 *   if (yamlx_load(text, len, &docs, e) < 0)
 *           return e->code;    e->msg: "line 12, column 3: mapping values are not allowed here"
 *   json_array_foreach(docs, i, doc) ...
 *
 * Typing follows the YAML 1.2 core schema, as manifests are read by Kubernetes:
 *   plain true/True/TRUE/false/... → boolean; null, Null, NULL, ~ and empty → null;
 *   [-+]?[0-9]+, 0o17, 0x1F → integer; 1.5, .5, 1e3, -2.5E-3 → real; all else string.
 *   Quoted and block (| >) scalars are always strings. Tags !!str !!int !!float !!bool
 *   !!null !!binary !!timestamp (the last two kept as strings), !!map, !!seq and the
 *   non-specific "!" are honoured; any other tag is an error.
 *   Unlike YAML 1.1 (and sigs.k8s.io/yaml) yes/no/on/off stay strings, and 0123 is 123.
 *   An integer outside int64 is -ERANGE, and so are .inf and .nan: JSON has neither.
 * Mapping keys: any scalar, kept as its text (`1: a` gives {"1":"a"}); a mapping,
 * sequence or alias as a key is an error. Duplicate keys are an error. The YAML 1.1
 * merge key "<<" (a mapping or a sequence of mappings) is supported: explicit keys win,
 * then earlier sources. Aliases are deep copies of the anchored node; an alias to a node
 * still open (a cycle) or to an unknown anchor is an error. Anchors live per document.
 * Documents that are empty or null (a lone "---") are skipped. NUL characters in
 * scalars are refused (keys and strings are C strings downstream).
 *
 * Limits: nesting deeper than YAMLX_MAX_DEPTH, or more than YAMLX_MAX_NODES nodes in one
 * call (every scalar, key and collection; an alias counts as the size of what it copies,
 * which stops "billion laughs"), is -EMSGSIZE. yamlx_load does not cap len: its caller
 * does; yamlx_load_file takes the cap.
 *
 * Errors: -EPROTO with "line L, column C: <problem>" (1-based; libyaml's context is
 * appended in parentheses), -EMSGSIZE, -ERANGE; yamlx_load_file prefixes "<path>: " and
 * adds the errno of open/read (-ENOENT, -EACCES ...). Messages quote no values.
 * Pure functions over (data, len): any thread.
 */
#ifndef REDIS_OPERATOR_YAMLX_H
#define REDIS_OPERATOR_YAMLX_H

#include <jansson.h>
#include <stddef.h>

#include "lib/err.h"

/* Containers nested deeper than this are refused. CRD schemas that embed a pod template
 * nest about 40 deep, so the limit leaves room while bounding every recursion downstream. */
#define YAMLX_MAX_DEPTH 100
/* Nodes per call, aliases counted by expansion: about 20 MiB of jansson values at most. */
#define YAMLX_MAX_NODES (1 << 18)

/* Parses len bytes of YAML into *docs_out, a new JSON array with one element per
 * non-empty document (possibly none). */
int yamlx_load(const char *data, size_t len, json_t **docs_out, struct err *e);
/* Reads path (at most max_len bytes, else -EMSGSIZE) and parses it like yamlx_load.
 * The file's bytes are wiped before they are freed: a kubeconfig holds secrets. */
int yamlx_load_file(const char *path, size_t max_len, json_t **docs_out, struct err *e);

#endif

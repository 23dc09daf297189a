/*
 * cache_bytes: what the controller's cache holds of one kind, in heap bytes.
 *
 *   cache_bytes PLURAL FILE     FILE: a List as `kubectl get PLURAL -o json` prints it
 *
 * Each item is copied into a fresh jansson tree three times, as it came (raw), after the
 * standard trim (managedFields, last-applied) and after the controller's own trim of the
 * kind (ctl_informer_trim, what the informer stores); the heap is counted through
 * json_set_alloc_funcs: malloc_usable_size of every block plus 8 bytes of glibc chunk
 * header each. Prints one JSON line: kind, objects, compact JSON bytes, and the heap
 * bytes and blocks of each variant. test/bench/footprint.sh runs it on the live caches'
 * kinds (BENCH_FOOTPRINT_BREAKDOWN=1).
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"

#define CHUNK_HEADER 8

static size_t heap_bytes, heap_blocks;

static void *counting_malloc(size_t n)
{
	void *p = malloc(n);

	if (p) {
		heap_bytes += malloc_usable_size(p) + CHUNK_HEADER;
		heap_blocks++;
	}
	return p;
}

static void counting_free(void *p)
{
	if (p) {
		heap_bytes -= malloc_usable_size(p) + CHUNK_HEADER;
		heap_blocks--;
	}
	free(p);
}

struct variant {
	size_t bytes, blocks;
};

/* Adds the heap of a fresh copy of obj to v; the copy is returned (caller decrefs). */
static json_t *measure(json_t *obj, struct variant *v)
{
	size_t b0 = heap_bytes, n0 = heap_blocks;
	json_t *copy = json_deep_copy(obj);

	v->bytes += heap_bytes - b0;
	v->blocks += heap_blocks - n0;
	return copy;
}

static size_t compact_len(json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT);
	size_t n = s ? strlen(s) : 0;

	free(s);
	return n;
}

int main(int argc, char **argv)
{
	struct variant raw = { 0 }, std = { 0 }, own = { 0 };
	json_error_t je;
	json_t *list, *items, *it;
	size_t i, json_bytes = 0;
	int kind;

	if (argc != 3 || (kind = ctl_informer_kind(argv[1])) < 0) {
		fprintf(stderr,
		        "usage: cache_bytes PLURAL FILE (PLURAL: a kind the controller caches)\n");
		return 2;
	}
	json_set_alloc_funcs(counting_malloc, counting_free);
	list = json_load_file(argv[2], 0, &je);
	items = json_object_get(list, "items");
	if (!json_is_array(items)) {
		fprintf(stderr, "cache_bytes: %s: items: not a List (%s)\n", argv[2], je.text);
		return 1;
	}
	json_array_foreach (items, i, it) {
		json_t *a = measure(it, &raw), *b, *c;

		json_bytes += compact_len(it);
		k8s_informer_trim_standard(a);
		b = measure(a, &std);
		ctl_informer_trim((enum ctl_inf)kind, b);
		c = measure(b, &own);
		json_decref(a);
		json_decref(b);
		json_decref(c);
	}
	printf("{\"kind\": \"%s\", \"objects\": %zu, \"json_bytes\": %zu, \"heap_raw\": %zu, "
	       "\"blocks_raw\": %zu, \"heap_standard\": %zu, \"heap_cached\": %zu, "
	       "\"blocks_cached\": %zu}\n",
	       argv[1], json_array_size(items), json_bytes, raw.bytes, raw.blocks, std.bytes,
	       own.bytes, own.blocks);
	json_decref(list);
	return 0;
}

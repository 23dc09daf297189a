/*
 * chaos_tools: `chaos-writer stats` and `chaos-writer merge`, so the benchmark scripts
 * need nothing beyond bash and this binary (no jq, no python).
 *
 *   chaos-writer stats 2310.5 2290 -1 2505     → {"failed":1,"max":2505,"min":2290,
 *                                                 "p50":2310.5,"p95":2505,"p99":2505,"runs":4}
 *   chaos-writer merge out.json a.json b.json  → out.json = a ∪ b (later files win a key)
 *
 * stats: nearest-rank percentiles (chaos_percentile) over the non-negative values; a
 * negative value is a run that never recovered and counts in "failed" and "runs" only.
 * Numbers come as arguments, or one per line on stdin when there are none.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/alloc.h"
#include "test/chaos/chaos_cmd.h"
#include "test/chaos/chaos_verify.h"

#define STATS_MAX_VALUES 1000000

static int parse_number(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (end == s || *end || errno || !isfinite(v))
		return -EINVAL;
	*out = v;
	return 0;
}

static int add_value(double **v, size_t *n, size_t *failed, const char *s)
{
	double x;

	if (parse_number(s, &x) < 0) {
		fprintf(stderr, "chaos-writer stats: \"%.64s\" is not a number\n", s);
		return -EINVAL;
	}
	if (x < 0) {
		(*failed)++;
		return 0;
	}
	if (*n >= STATS_MAX_VALUES)
		return -E2BIG;
	*v = xreallocarray(*v, *n + 1, sizeof(**v));
	(*v)[(*n)++] = x;
	return 0;
}

static json_t *stats_json(double *v, size_t n, size_t failed)
{
	json_t *o = json_pack("{s:I s:I}", "runs", (json_int_t)n + (json_int_t)failed, "failed",
	                      (json_int_t)failed);
	static const struct {
		const char *name;
		double q;
	} qs[] = { { "min", 0 }, { "p50", 50 }, { "p95", 95 }, { "p99", 99 }, { "max", 100 } };

	for (size_t i = 0; n > 0 && i < sizeof(qs) / sizeof(qs[0]); i++)
		json_object_set_new(
		        o, qs[i].name,
		        json_real(round(chaos_percentile(v, n, qs[i].q) * 1000) / 1000));
	return o;
}

int chaos_stats_main(int argc, char **argv)
{
	double *v = NULL;
	size_t n = 0, failed = 0;
	char line[256];
	int rc = 0;
	json_t *o;

	for (int i = 1; i < argc && rc == 0; i++)
		rc = add_value(&v, &n, &failed, argv[i]);
	while (argc < 2 && rc == 0 && fgets(line, sizeof(line), stdin))
		if (line[strspn(line, " \t\r\n")])
			rc = add_value(&v, &n, &failed, line);
	if (rc) {
		free(v);
		return 2;
	}
	o = stats_json(v, n, failed);
	json_dumpf(o, stdout, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	putchar('\n');
	json_decref(o);
	free(v);
	return 0;
}

int chaos_merge_main(int argc, char **argv)
{
	json_t *out = json_object();
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: chaos-writer merge OUT.json IN.json...\n");
		json_decref(out);
		return 2;
	}
	for (int i = 2; i < argc && status == 0; i++) {
		json_error_t je;
		json_t *in = json_load_file(argv[i], 0, &je);

		if (!json_is_object(in)) {
			fprintf(stderr, "chaos-writer merge: %s: %s\n", argv[i],
			        in ? "not a JSON object" : je.text);
			status = 2;
		} else {
			json_object_update(out, in);
		}
		json_decref(in);
	}
	if (status == 0 &&
	    json_dump_file(out, argv[1],
	                   JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10)) < 0) {
		fprintf(stderr, "chaos-writer merge: cannot write %s\n", argv[1]);
		status = 2;
	}
	json_decref(out);
	return status;
}

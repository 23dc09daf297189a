/*
 * chaos-writer: the chaos and benchmark client (see chaos_cmd.h for the subcommands).
 * This file is the subcommand table and nothing else. `chaos-writer --resolve …` with no
 * subcommand means `run`.
 */
#include <stdio.h>
#include <string.h>

#include "lib/alloc.h"
#include "test/chaos/chaos_cmd.h"

static const struct {
	const char *name;
	const char *help;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "run", "write through failovers and log every operation", chaos_writer_main },
	{ "verify", "check a run's log against the final primary and replicas", chaos_verify_main },
	{ "stats", "p50/p95/p99 of numbers (arguments or stdin) as JSON", chaos_stats_main },
	{ "merge", "merge JSON objects: merge OUT IN...", chaos_merge_main },
};

static int usage(FILE *f)
{
	fprintf(f, "usage: chaos-writer COMMAND [--help | flags]\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	alloc_install_jansson();
	if (argc < 2)
		return usage(stderr);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0)
		return usage(stdout);
	if (strncmp(argv[1], "--", 2) == 0)
		return chaos_writer_main(argc, argv);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "chaos-writer: unknown command \"%s\"\n", argv[1]);
	return usage(stderr);
}

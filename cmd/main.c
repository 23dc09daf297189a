/*
 * redis-operator: one binary, dispatched by subcommand (the kubectl plugin is its own
 * binary, plugin/).
 * This file is only the table; each role lives in its own directory.
 */
#include <stdio.h>
#include <string.h>

#include "controller/controller.h"
#include "instance/instance.h"
#include "lib/alloc.h"
#include "version.h" /* generated in build/ by the Makefile */

struct subcommand {
	const char *name;
	const char *help;
	int (*run)(int argc, char **argv); /* NULL: not built yet */
};

static int run_version(int argc, char **argv);
static int run_help(int argc, char **argv);

static const struct subcommand subcommands[] = {
	{ "controller", "run the operator's controller (in the operator Deployment)",
	  controller_main },
	{ "instance", "run the instance manager (PID 1 of every Redis/Valkey pod)", instance_main },
	{ "copy-binary", "copy this binary and its libraries into a directory", copy_binary_main },
	{ "version", "print the version and the git commit it was built from", run_version },
	{ "help", "list the subcommands", run_help },
};
#define N_SUBCOMMANDS (sizeof(subcommands) / sizeof(subcommands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: redis-operator <subcommand> [flags]\n\nsubcommands:\n");
	for (size_t i = 0; i < N_SUBCOMMANDS; i++)
		fprintf(out, "  %-12s %s\n", subcommands[i].name, subcommands[i].help);
	fprintf(out, "\nrun 'redis-operator <subcommand> --help' for its flags\n");
}

static int run_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "redis-operator version: takes no arguments\n");
		return 2;
	}
	printf("redis-operator %s (commit %s)\n", RO_VERSION, RO_COMMIT);
	return 0;
}

static int run_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	alloc_install_jansson();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < N_SUBCOMMANDS; i++) {
		const struct subcommand *s = &subcommands[i];

		if (strcmp(argv[1], s->name) != 0)
			continue;
		if (!s->run) {
			fprintf(stderr, "redis-operator: '%s' is not built yet in this version\n",
			        s->name);
			return 3;
		}
		return s->run(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return run_help(argc - 1, argv + 1);
	fprintf(stderr, "redis-operator: unknown subcommand '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}

/*
 * plugin_parse: the runbook check's parser of `kubectl redis` command lines: each line of
 * stdin is a command's words after "kubectl redis", separated by blanks (runbook-check.sh
 * has already replaced each quoted word by one placeholder word). Each is parsed with the
 * plugin's own parser (plugin_args_parse, plugin/args.c), so a verb renamed or removed, a
 * flag it no longer takes or a wrong number of arguments fails here. Prints one line per
 * refused command ("LINE: why") and exits 1 if there was any; 0 otherwise.
 */
#include <stdio.h>
#include <string.h>

#include "lib/err.h"
#include "plugin/plugin.h"

#define LINE_MAX_LEN 4096
#define WORDS_MAX    64

static int parse_line(char *line)
{
	char copy[LINE_MAX_LEN], self[] = "kubectl-redis", *argv[WORDS_MAX + 1], *save = NULL, *w;
	struct plugin_args a;
	struct err e = { 0 };
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	argv[argc++] = self;
	for (w = strtok_r(line, " \t\n", &save); w && argc < WORDS_MAX;
	     w = strtok_r(NULL, " \t\n", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	if (argc == 1)
		return 0;
	if (plugin_args_parse(argc, argv, &a, &e) == 0)
		return 0;
	copy[strcspn(copy, "\n")] = '\0';
	printf("kubectl redis %s: %s\n", copy, e.msg);
	return 1;
}

int main(void)
{
	char line[LINE_MAX_LEN];
	int bad = 0;

	while (fgets(line, sizeof(line), stdin))
		bad |= parse_line(line);
	return bad ? 1 : 0;
}

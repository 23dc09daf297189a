/*
 * plugin: `kubectl redis`, the SRE's command line (issue 22), a program of its own
 * (kubectl-redis) on lib/k8s and api/: no role code (test/lint-includes.sh).
 *
 * One table of verbs (plugin_verbs, args.c): name, synopsis, positional bounds, the
 * flags it takes, help, handler. Parsing, `--help`, the man page's and the bash
 * completion's checks (test_plugin_args) all read that table. A verb's handler gets a
 * context (the API client, the namespace) and its parsed arguments; it prints to stdout,
 * returns 0 or a negative errno with e set; main prints e.msg once.
 *
 * Ownership: plugin_args borrows argv. Single-threaded.
 */
#ifndef REDIS_OPERATOR_PLUGIN_H
#define REDIS_OPERATOR_PLUGIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/buf.h"
#include "lib/err.h"
#include "lib/k8s/client.h"
#include "lib/k8s/config.h"

#define PLUGIN_POS_MAX         3
#define PLUGIN_TIMEOUT_MS      10000 /* each API request, retries included */
#define PLUGIN_INST_TIMEOUT_MS 5000  /* each pod's /v1/status through the pod proxy */

/* The flags, by index into plugin_args.opt (the table in args.c names them). */
enum plugin_flag {
	PLUGIN_F_NAMESPACE, /* -n, --namespace NS */
	PLUGIN_F_KUBECONFIG,
	PLUGIN_F_CONTEXT,
	PLUGIN_F_OUTPUT, /* -o: json|yaml for status, a file for report */
	PLUGIN_F_NAME,   /* --name: backup */
	PLUGIN_F_HELP,   /* -h, --help (no value) */
	PLUGIN_F_COUNT,
};

struct plugin_ctx {
	struct k8s_config *cfg; /* the client's: its server and credentials */
	struct k8s_client *client;
	const char *ns;
	bool colour; /* stdout is a terminal and NO_COLOR is unset */
};

struct plugin_args {
	const struct plugin_verb *verb;
	const char *pos[PLUGIN_POS_MAX];
	size_t npos;
	const char *opt[PLUGIN_F_COUNT]; /* NULL: absent; "" for a flag without a value */
};

struct plugin_verb {
	const char *name;
	const char *synopsis; /* "NAME [POD]" */
	unsigned min_pos, max_pos;
	unsigned flags; /* bit (1u << enum plugin_flag) for each verb-specific flag it takes */
	const char *help;
	int (*run)(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
};

/* The verbs, in the order `--help` lists them; n_out gets their number. */
const struct plugin_verb *plugin_verbs(size_t *n_out);
/* A flag's long name ("namespace") and short letter (0: none). */
const char *plugin_flag_name(enum plugin_flag f, char *short_out);
/*
 * Parses argv[1..argc-1]: a verb (global flags may come before it), its positionals
 * and flags in any order ("--flag value", "--flag=value", "-n value"; "--" ends the
 * flags). Global flags (namespace, kubeconfig, context, help) go with every verb. 0, or -EINVAL with e
 * naming the word and why ("switchover: unknown flag --to", "status: NAME is required").
 * Pure.
 */
int plugin_args_parse(int argc, char **argv, struct plugin_args *out, struct err *e);
/* The usage text: every verb with its synopsis and help. */
void plugin_usage(struct buf *out);

/* --- handlers, one file per verb group ----------------------------------------------- */
int plugin_status(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_switchover(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_promote(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_hibernate(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_restart(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_reload(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_approve(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_fence(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_unfence(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_backup(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_report(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
int plugin_logs(struct plugin_ctx *ctx, const struct plugin_args *a, struct err *e);
/* text (len bytes) with "[prefix] " before every line, a last line without a newline
 * given one. Pure (logs.c). */
void plugin_logs_prefix(const char *prefix, const char *text, size_t len, struct buf *out);

#endif

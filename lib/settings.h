/*
 * settings: one descriptor table per binary drives its flags, environment variables,
 * --help, validation and the redacted start-up dump.
 *
 *   struct ctl_settings { int64_t concurrency; int64_t poll_ms; char *password; };
 *   static const struct settings_desc ctl_table[] = {
 *           { "concurrency", SETTINGS_INT, "4", 1, 64, NULL, false, false,
 *             offsetof(struct ctl_settings, concurrency), "Reconciles run in parallel." },
 *           ...
 *   };
 *   rc = settings_load(ctl_table, n, "REDIS_OPERATOR_", NULL, argc, argv, &next, &s, &errs);
 *   rc == SETTINGS_HELP: settings_help(...) to stdout, exit 0
 *   rc < 0: print errs (every problem, one per line), exit 2
 *
 * The entry "poll-period" is the flag --poll-period and the environment variable
 * <prefix>POLL_PERIOD. Precedence: default < environment < flag; only the winning text
 * is parsed, and the default is parsed like any other input. An environment variable
 * set to "" counts as unset (manifests often render optional values that way); a flag
 * given twice keeps the last. A required setting is missing when no source gives it a
 * non-empty value.
 *
 * Flags: "--name=value" or "--name value"; a BOOL flag alone means true ("--name=false"
 * to turn it off; "--name false" would leave "false" as a positional). A value that
 * starts with "--" is taken as a missing value, not as the value. "-h"/"--help" wins
 * over everything. Scanning stops at "--" (consumed) or at the first argument that does
 * not start with '-' ("-" alone is a positional); argv[0] is skipped, so *next_arg is
 * getopt's optind: the caller's positionals are argv[*next_arg .. argc).
 *
 * Storage, at `offset` in the caller's struct: STRING and ENUM → char * (owned, NULL
 * when unset), INT → int64_t, BOOL → bool, DURATION → int64_t milliseconds, BYTES →
 * uint64_t. Bounds: min and max both 0 means unbounded; otherwise min <= v <= max (use
 * INT64_MAX for "no maximum"); for DURATION they are milliseconds, for BYTES bytes.
 *
 * Sensitive values never appear in errors, help or dumps: they print as [REDACTED].
 * settings_load and settings_release are for start-up on the main thread (they read
 * the environment); help and dump only read their arguments.
 */
#ifndef REDIS_OPERATOR_SETTINGS_H
#define REDIS_OPERATOR_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct buf;

/* settings_load's return when -h or --help was given. */
#define SETTINGS_HELP 1

enum settings_type {
	SETTINGS_STRING,
	SETTINGS_INT,
	SETTINGS_BOOL,
	SETTINGS_DURATION,
	SETTINGS_BYTES,
	SETTINGS_ENUM,
};

struct settings_desc {
	const char *name; /* [a-z0-9-]+: "poll-period" */
	enum settings_type type;
	const char *def;            /* default as text; NULL = unset */
	int64_t min, max;           /* INT, DURATION (ms), BYTES; 0, 0 = unbounded */
	const char *const *choices; /* ENUM: NULL-terminated */
	bool sensitive;             /* redacted in errors, help and dumps */
	bool required;              /* must get a non-empty value from some source */
	size_t offset;              /* offsetof() the field in the caller's struct */
	const char *help;           /* one line */
};

/*
 * Fills the settings struct `out` from the defaults, envp (NULL = environ) and
 * argv[1 .. argc). `out`'s fields are overwritten without being freed: pass a fresh
 * struct or one given to settings_release. Returns:
 *   0             every field set; *next_arg (if not NULL) = index of the first
 *                 positional;
 *   SETTINGS_HELP -h/--help was given;
 *   -EINVAL       every problem appended to errors (NULL allowed), one line each,
 *                 "<--flag|ENV_VAR|name default>: <reason>\n".
 * On any non-zero return `out` owns nothing (settings_release is still safe).
 * argv and envp are not modified.
 */
int settings_load(const struct settings_desc *table, size_t n, const char *env_prefix, char **envp,
                  int argc, char **argv, int *next_arg, void *out, struct buf *errors);

/* Prints usage of every entry, aligned: flag and type, environment variable,
 * default, bounds or choices, then the help text indented on the next line. */
void settings_help(const struct settings_desc *table, size_t n, const char *env_prefix, FILE *out);

/*
 * Appends one logfmt line (no newline) to out: `name=value` per entry in table order,
 * values quoted when they hold spaces, quotes, '=' or control bytes. Durations print
 * as "1m30s", byte sizes as "1Gi" when exact (else plain bytes). Sensitive values print
 * as [REDACTED], or empty when unset.
 */
void settings_dump(const struct settings_desc *table, size_t n, const void *values,
                   struct buf *out);

/* Frees the strings in values (wiping sensitive ones) and sets them to NULL. NULL-safe. */
void settings_release(const struct settings_desc *table, size_t n, void *values);

#endif

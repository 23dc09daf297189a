/*
 * args: the plugin's one table of verbs and flags, and the parser over it. Pure: no I/O,
 * any thread. Everything that lists the verbs (usage, the man page's and the completion
 * script's checks in test_plugin_args) reads plugin_verbs(), so a verb added here and
 * forgotten there fails a test.
 */
#include <errno.h>
#include <string.h>

#include "plugin/plugin.h"

#define F(x) (1u << (x))
#define GLOBAL_FLAGS                                                                               \
	(F(PLUGIN_F_NAMESPACE) | F(PLUGIN_F_KUBECONFIG) | F(PLUGIN_F_CONTEXT) | F(PLUGIN_F_HELP))

static const struct plugin_verb verbs[] = {
	{ "status", "NAME [-o json|yaml]", 1, 1, F(PLUGIN_F_OUTPUT),
	  "the cluster, its instances (role, ready, lag, fenced, lease), last failover, backups",
	  plugin_status },
	{ "switchover", "NAME [POD]", 1, 2, 0,
	  "move the primary to POD (or to the most caught-up replica): redis.io/switchover-to",
	  plugin_switchover },
	{ "promote", "NAME POD", 2, 2, 0, "make POD the primary by a switchover to it",
	  plugin_promote },
	{ "hibernate", "NAME on|off", 2, 2, 0,
	  "delete the pods and keep the PVCs (on), or bring them back (off): redis.io/hibernation",
	  plugin_hibernate },
	{ "restart", "NAME [POD]", 1, 2, 0,
	  "rolling restart, replicas first, the primary by switchover (spec.podTemplate "
	  "annotation); POD: that instance only (redis.io/restart-instance)",
	  plugin_restart },
	{ "reload", "NAME", 1, 1, 0,
	  "every instance re-reads its Secret and TLS files and re-applies its configuration, "
	  "no restart: redis.io/reload",
	  plugin_reload },
	{ "approve", "NAME", 1, 1, 0,
	  "let a supervised primary update go on: redis.io/approve-primary-update=true",
	  plugin_approve },
	{ "fence", "NAME POD|all", 2, 2, 0,
	  "stop writes on POD (or every pod): redis.io/fencedInstances", plugin_fence },
	{ "unfence", "NAME POD|all", 2, 2, 0, "allow writes on POD again (all: every pod)",
	  plugin_unfence },
	{ "backup", "NAME [--name BACKUP]", 1, 1, F(PLUGIN_F_NAME),
	  "create a RedisBackup of the cluster, to the destination of its latest backup",
	  plugin_backup },
	{ "report", "NAME [-o FILE]", 1, 1, F(PLUGIN_F_OUTPUT),
	  "a .tar.gz of the cluster's objects, Events, logs and /v1/status, Secrets redacted",
	  plugin_report },
	{ "logs", "NAME", 1, 1, 0, "every instance's log, each line prefixed with its pod",
	  plugin_logs },
};

static const struct flag {
	const char *name;
	char letter;
	bool value;
} flags[PLUGIN_F_COUNT] = {
	[PLUGIN_F_NAMESPACE] = { "namespace", 'n', true },
	[PLUGIN_F_KUBECONFIG] = { "kubeconfig", 0, true },
	[PLUGIN_F_CONTEXT] = { "context", 0, true },
	[PLUGIN_F_OUTPUT] = { "output", 'o', true },
	[PLUGIN_F_NAME] = { "name", 0, true },
	[PLUGIN_F_HELP] = { "help", 'h', false },
};

const struct plugin_verb *plugin_verbs(size_t *n_out)
{
	*n_out = sizeof(verbs) / sizeof(verbs[0]);
	return verbs;
}

const char *plugin_flag_name(enum plugin_flag f, char *short_out)
{
	if (short_out)
		*short_out = flags[f].letter;
	return flags[f].name;
}

static const struct plugin_verb *verb_find(const char *name)
{
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(verbs[i].name, name) == 0)
			return &verbs[i];
	return NULL;
}

/* The flag a word names ("--output", "--output=x", "-o"), or -1; *inline_value: after '='. */
static int flag_find(const char *w, const char **inline_value)
{
	size_t n;

	*inline_value = NULL;
	for (int f = 0; f < PLUGIN_F_COUNT; f++) {
		if (w[1] != '-') {
			if (flags[f].letter && w[1] == flags[f].letter && w[2] == '\0')
				return f;
			continue;
		}
		n = strlen(flags[f].name);
		if (strncmp(w + 2, flags[f].name, n) != 0 || (w[2 + n] != '\0' && w[2 + n] != '='))
			continue;
		*inline_value = w[2 + n] == '=' ? w + 3 + n : NULL;
		return f;
	}
	return -1;
}

/* One flag at argv[*i]; advances *i past its value. */
static int take_flag(int argc, char **argv, int *i, struct plugin_args *a, struct err *e)
{
	const char *w = argv[*i], *v;
	int f = flag_find(w, &v);
	const char *vn = a->verb->name;

	if (f < 0 || !((GLOBAL_FLAGS | a->verb->flags) & F(f)))
		return err_set(e, -EINVAL, "%s: unknown flag %s (see kubectl redis %s --help)", vn,
		               w, vn);
	if (!flags[f].value) {
		if (v)
			return err_set(e, -EINVAL, "%s: flag --%s takes no value", vn,
			               flags[f].name);
		a->opt[f] = "";
		return 0;
	}
	if (!v) {
		if (*i + 1 >= argc)
			return err_set(e, -EINVAL, "%s: flag %s needs a value", vn, w);
		v = argv[++*i];
	}
	if (!*v)
		return err_set(e, -EINVAL, "%s: flag %s: empty value", vn, w);
	a->opt[f] = v;
	return 0;
}

static int check_positionals(const struct plugin_args *a, struct err *e)
{
	const struct plugin_verb *v = a->verb;

	if (a->opt[PLUGIN_F_HELP])
		return 0;
	if (a->npos < v->min_pos)
		return err_set(e, -EINVAL, "%s: %s expected (usage: kubectl redis %s %s)", v->name,
		               a->npos == 0 ? "NAME is" : "more arguments are", v->name,
		               v->synopsis);
	return 0;
}

/* Where the verb is: the first word that is neither a flag nor a flag's value (global
 * flags may come first, as in `kubectl redis -n prod status demo`); argc when none. */
static int verb_index(int argc, char **argv)
{
	const char *v;
	int i = 1, f;

	while (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0) {
		f = flag_find(argv[i], &v);
		i += f >= 0 && flags[f].value && !v ? 2 : 1;
	}
	return i;
}

int plugin_args_parse(int argc, char **argv, struct plugin_args *out, struct err *e)
{
	struct plugin_args a = { 0 };
	bool dashdash = false;
	int vi = verb_index(argc, argv), rc;

	if (vi >= argc)
		return err_set(e, -EINVAL, "a verb is required (kubectl redis --help lists them)");
	a.verb = verb_find(argv[vi]);
	if (!a.verb)
		return err_set(e, -EINVAL, "unknown verb \"%s\" (kubectl redis --help lists them)",
		               argv[vi]);
	for (int i = 1; i < argc; i++) {
		if (i == vi) {
			continue;
		} else if (!dashdash && strcmp(argv[i], "--") == 0) {
			dashdash = true;
		} else if (!dashdash && argv[i][0] == '-' && argv[i][1]) {
			if ((rc = take_flag(argc, argv, &i, &a, e)))
				return rc;
		} else if (a.npos >= a.verb->max_pos) {
			return err_set(
			        e, -EINVAL,
			        "%s: unexpected argument \"%s\" (usage: kubectl redis %s %s)",
			        a.verb->name, argv[i], a.verb->name, a.verb->synopsis);
		} else {
			a.pos[a.npos++] = argv[i];
		}
	}
	if ((rc = check_positionals(&a, e)))
		return rc;
	*out = a;
	return 0;
}

void plugin_usage(struct buf *out)
{
	buf_append_str(out, "usage: kubectl redis VERB [ARGS] [-n NAMESPACE] [--kubeconfig FILE] "
	                    "[--context CONTEXT]\n\nverbs:\n");
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		buf_printf(out, "  %-10s %-22s %s\n", verbs[i].name, verbs[i].synopsis,
		           verbs[i].help);
	buf_append_str(out, "\nman kubectl-redis for the details\n");
}

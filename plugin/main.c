/*
 * kubectl-redis: main. Parses the command line against the verb table (args.c), loads
 * the kubeconfig as kubectl does (--kubeconfig, $KUBECONFIG, ~/.kube/config; --context),
 * picks the namespace (-n, else the context's, else "default"), runs the verb and
 * prints its error once. Exit codes: 0, 1 (the verb failed), 2 (bad usage).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/k8s/config.h"
#include "plugin/plugin.h"

static int usage_exit(FILE *f, int code)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	plugin_usage(&b);
	fputs(buf_cstr(&b), f);
	buf_release(&b);
	return code;
}

static int api_connect(const struct plugin_args *a, struct k8s_config **cfg, struct k8s_client **c,
                       struct err *e)
{
	struct k8s_config_opts co = { .kubeconfig = a->opt[PLUGIN_F_KUBECONFIG],
		                      .context = a->opt[PLUGIN_F_CONTEXT] };
	struct k8s_client_opts o = { .timeout_ms = PLUGIN_TIMEOUT_MS,
		                     .user_agent = "kubectl-redis" };
	int rc = k8s_config_load(&co, cfg, e);

	if (rc)
		return rc;
	*c = k8s_client_new(*cfg, &o, e);
	return *c ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct plugin_args a;
	struct plugin_ctx ctx = { 0 };
	struct k8s_config *cfg = NULL;
	struct err e = { 0 };
	int rc;

	alloc_install_jansson();
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	                  strcmp(argv[1], "help") == 0))
		return usage_exit(stdout, 0);
	if (plugin_args_parse(argc, argv, &a, &e)) {
		fprintf(stderr, "kubectl redis: %s\n", e.msg);
		return 2;
	}
	if (a.opt[PLUGIN_F_HELP]) {
		printf("usage: kubectl redis %s %s\n  %s\n", a.verb->name, a.verb->synopsis,
		       a.verb->help);
		return 0;
	}
	rc = api_connect(&a, &cfg, &ctx.client, &e);
	if (!rc) {
		ctx.cfg = cfg;
		ctx.ns = a.opt[PLUGIN_F_NAMESPACE]           ? a.opt[PLUGIN_F_NAMESPACE]
		         : cfg->namespace && *cfg->namespace ? cfg->namespace
		                                             : "default";
		ctx.colour = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
		rc = a.verb->run(&ctx, &a, &e);
	}
	if (rc)
		fprintf(stderr, "kubectl redis %s: %s\n", a.verb->name,
		        e.msg[0] ? e.msg : err_name(rc));
	k8s_client_free(ctx.client);
	k8s_config_free(cfg);
	return rc ? 1 : 0;
}

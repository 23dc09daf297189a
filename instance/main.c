/*
 * main: `redis-operator instance` start-up and teardown. Loads the settings and the
 * secret files, prepares the directories, blocks signals before any thread exists,
 * starts the HTTP API and the poller (so probes answer while booting), then hands the
 * main thread to the supervisor. The exit code is the supervisor's (INST_EXIT_*).
 * With --role sentinel the main thread goes to sentinel_run.c instead (sentinel.h).
 */
#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "instance/fault.h"
#include "instance/internal.h"
#include "instance/instance.h"
#include "instance/sentinel.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"

static int load_settings(struct inst *in, int argc, char **argv)
{
	struct buf errs = BUF_INIT(16384), dump = BUF_INIT(16384);
	int rc = settings_load(inst_settings_table, inst_settings_count, INST_ENV_PREFIX, NULL,
	                       argc, argv, NULL, &in->set, &errs);
	enum log_level lvl = LOG_LEVEL_INFO;
	enum log_format fmt = LOG_FORMAT_JSON;

	if (rc == SETTINGS_HELP) {
		settings_help(inst_settings_table, inst_settings_count, INST_ENV_PREFIX, stdout);
	} else if (rc < 0) {
		fprintf(stderr, "redis-operator instance:\n%s", buf_cstr(&errs));
	} else {
		log_parse_level(in->set.log_level, &lvl);
		log_parse_format(in->set.log_format, &fmt);
		log_configure(lvl, fmt, NULL, NULL);
		settings_dump(inst_settings_table, inst_settings_count, &in->set, &dump);
		log_info("instance", "starting", "settings", buf_cstr(&dump), (char *)NULL);
	}
	buf_release(&errs);
	buf_release(&dump);
	return rc;
}

static int prepare(struct inst *in, struct err *e)
{
	struct k8s_config_opts ko = { 0 };
	struct k8s_client_opts co = { 0 };
	int rc;

	snprintf(in->conf_path, sizeof(in->conf_path), "%s/%s", in->set.data_dir, INST_CONF_FILE);
	snprintf(in->sock_path, sizeof(in->sock_path), "%s/%s", in->set.run_dir, INST_SOCKET_FILE);
	snprintf(in->marker_path, sizeof(in->marker_path), "%s/%s", in->set.data_dir,
	         INST_MARKER_FILE);
	if (mkdir(in->set.run_dir, 0700) < 0 && errno != EEXIST)
		return err_set(e, -errno, "%s: %s", in->set.run_dir, strerror(errno));
	if ((rc = inst_creds_load(&in->set, &in->creds, e)) < 0)
		return rc;
	in->shared_pw = xstrdup(in->creds.operator_pw);
	inst_backup_init(in);
	ko.kubeconfig = in->set.kubeconfig;
	ko.prefer_in_cluster = !in->set.kubeconfig;
	if ((rc = k8s_config_load(&ko, &in->kcfg, e)) < 0)
		return rc;
	co.timeout_ms = (int)in->set.api_timeout_ms;
	in->kube = k8s_client_new(in->kcfg, &co, e);
	return in->kube ? 0 : -EINVAL;
}

static void init_state(struct inst *in)
{
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->cond, NULL);
	in->q_tail = &in->q_head;
	in->sigfd = in->evfd = -1;
	in->want = INST_STATE_PARKED;
	in->snap.started_wall_ms = clock_wall_ms();
	in->snap.primary_offset = -1;
	in->snap.state = INST_STATE_BOOTING;
	snprintf(in->snap.reason, sizeof(in->snap.reason), "starting");
	backoff_init(&in->restart_backoff, 500, in->set.restart_backoff_max_ms, 2.0, 0.2,
	             (uint64_t)clock_mono_ms());
	snprintf(in->snap.pod, sizeof(in->snap.pod), "%s", in->set.pod_name);
}

static void teardown(struct inst *in)
{
	inst_drain_commands(in);
	inst_http_stop(in);
	inst_backup_stop(in);
	inst_restore_stop(in);
	inst_poller_stop(in);
	inst_lease_free(in);
	inst_sentinel_follow_free(in);
	vk_conn_free(in->server_conn);
	k8s_client_free(in->kube);
	k8s_config_free(in->kcfg);
	inst_spec_release(&in->spec);
	inst_desired_release(&in->desired);
	inst_creds_release(&in->creds);
	free_secret(in->shared_pw);
	settings_release(inst_settings_table, inst_settings_count, &in->set);
}

int instance_main(int argc, char **argv)
{
	struct inst *in = xcalloc(1, sizeof(*in));
	struct err e = { 0 };
	int rc;

	mallopt(M_ARENA_MAX, 2); /* a few threads: keep the RSS small */
	rc = load_settings(in, argc, argv);
	if (rc) {
		free(in);
		return rc == SETTINGS_HELP ? INST_EXIT_OK : INST_EXIT_USAGE;
	}
	init_state(in);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = inst_faults_arm(getenv(INST_FAULTS_ENV), &e);
	if (!rc)
		rc = prepare(in, &e);
	if (!rc && inst_supervisor_setup(in) < 0)
		rc = err_set(&e, -errno, "signalfd/eventfd: %s", strerror(errno));
	in->server_conn = inst_conn_new(in, NULL, 0, INST_CMD_TIMEOUT_MS);
	if (!rc && strcmp(in->set.role, "sentinel") == 0) {
		rc = inst_sentinel_run(in); /* sentinel.h: its own loop and API */
		teardown(in);
		free(in);
		return rc;
	}
	if (!rc)
		rc = inst_http_start(in, &e);
	if (!rc)
		rc = inst_poller_start(in, &e);
	if (rc) {
		log_error("instance", "cannot start", "error", e.msg, (char *)NULL);
		teardown(in);
		free(in);
		return INST_EXIT_USAGE;
	}
	rc = inst_run(in);
	teardown(in);
	free(in);
	return rc;
}

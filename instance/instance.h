/*
 * instance: the entry points of `redis-operator instance` (PID 1 of every Redis/Valkey
 * data pod) and `redis-operator copy-binary DIR` (the init container that puts this
 * binary and its shared libraries into an emptyDir). See instance/README.md.
 *
 * Exit codes of `instance` tell what happened (the kubelet shows them as the
 * container's exit code); the table is INST_EXIT_*. Main thread only.
 */
#ifndef REDIS_OPERATOR_INSTANCE_H
#define REDIS_OPERATOR_INSTANCE_H

enum inst_exit {
	INST_EXIT_OK = 0,            /* clean shutdown after SIGTERM/SIGINT */
	INST_EXIT_ERROR = 1,         /* an internal error the manager cannot recover from */
	INST_EXIT_USAGE = 2,         /* bad flags, environment or secret files */
	INST_EXIT_BOOT_TIMEOUT = 3,  /* the API server stayed unreachable past --boot-timeout */
	INST_EXIT_SERVER_KILLED = 4, /* shutdown finished, but the server had to be SIGKILLed */
	INST_EXIT_NO_SERVER = 5,     /* no redis-server/valkey-server binary could be run */
};

/* `redis-operator instance [flags]`; argv[0] is "instance". Returns an INST_EXIT_*. */
int instance_main(int argc, char **argv);
/* `redis-operator copy-binary DIR`: 0, 1 on failure, 2 on usage errors. */
int copy_binary_main(int argc, char **argv);

#endif

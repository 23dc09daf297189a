/*
 * controller: the entry point of `redis-operator controller`, the operator's control
 * loop (DESIGN.md §3-4, controller/README.md). Main thread only.
 *
 * Exit codes: 0 after SIGTERM/SIGINT, 1 when the leader Lease was lost (every write
 * stopped at once; the Deployment restarts the process, which campaigns again), 2 for
 * bad flags or environment, 3 when the API server could not be used at start-up.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_CONTROLLER_H
#define REDIS_OPERATOR_CONTROLLER_CONTROLLER_H

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_LEASE_LOST = 1,
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_STARTUP = 3,
};

/* `redis-operator controller [flags]`; argv[0] is "controller". Returns a CTL_EXIT_*. */
int controller_main(int argc, char **argv);

#endif

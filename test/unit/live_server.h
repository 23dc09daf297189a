/*
 * live_server.h: real redis-server / valkey-server processes for the live unit tests
 * (test/unit/live_server.c). Prefix live_. Call from a test or a fixture: a failure
 * aborts the test like any ck_assert.
 *
 *   tcase_add_unchecked_fixture(tc, live_base_setup, live_base_teardown);
 *   if (live_skip_missing("valkey-server")) return;
 *   live_server_paths(&s, live_free_port());
 *   live_server_start(&s, "valkey-server", NULL, extra);   up: answers PING on s.sock
 *   ...
 *   live_server_stop(&s);
 */
#ifndef REDIS_OPERATOR_TEST_LIVE_SERVER_H
#define REDIS_OPERATOR_TEST_LIVE_SERVER_H

#include <stdbool.h>
#include <sys/types.h>

struct live_server {
	pid_t pid;
	int port; /* TCP port on 127.0.0.1, 0 for none */
	char dir[128];
	char sock[160];
	char log[160];
};

/* The base directory of every server of this process (an unchecked fixture). */
void live_base_setup(void);
void live_base_teardown(void);
/* True, after a "SKIP" line on stdout, when bin is not in PATH. */
bool live_skip_missing(const char *bin);
/* A TCP port on 127.0.0.1 that was free a moment ago. */
int live_free_port(void);
/* Zeroes s and makes its fresh directory; port 0 for none. */
void live_server_paths(struct live_server *s, int port);
/*
 * Starts bin and waits until it answers PING on its Unix socket (fails the test if it
 * exits or is not up in 10 s). With conf, the command line is just the config file and
 * extra; else the standard test flags (Unix socket, --port s->port, no persistence)
 * then extra (NULL-terminated; NULL for none).
 */
void live_server_start(struct live_server *s, const char *bin, const char *conf,
                       const char *const *extra);
/* SIGKILL and reap; no-op when not running. */
void live_server_stop(struct live_server *s);

#endif

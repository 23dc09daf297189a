/*
 * chaos_cmd: the subcommands of chaos-writer (test/chaos/main.c holds their table).
 *
 *   chaos-writer run    --resolve SPEC --log FILE [...]   write and log until stopped
 *   chaos-writer verify --logs FILE[,FILE] --primary H:P [--replicas H:P,...] [...]
 *   chaos-writer stats  [--field NAME] VALUE...            p50/p95/p99 of numbers
 *   chaos-writer merge  OUT IN.json...                     union of JSON objects
 *
 * Each takes argv with argv[0] = the subcommand's name, runs on the main thread, and
 * returns the process exit status: 0 success, 1 a verdict failed (verify), 2 usage or
 * I/O errors. `--help` prints the flags of run and verify (settings tables).
 */
#ifndef REDIS_OPERATOR_CHAOS_CMD_H
#define REDIS_OPERATOR_CHAOS_CMD_H

int chaos_writer_main(int argc, char **argv);
int chaos_verify_main(int argc, char **argv);
int chaos_stats_main(int argc, char **argv);
int chaos_merge_main(int argc, char **argv);

#endif

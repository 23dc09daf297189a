/*
 * ports: the TCP ports of a data pod, the one place both roles take them from. The
 * controller names them in the Pod it builds (containerPort "redis", "http", "metrics"),
 * in the Services, the NetworkPolicy, the connection Secret and every call it makes to an
 * instance manager; the manager listens on them by default (its --server-port,
 * --http-port and --metrics-port) and falls back to them for a peer's Pod that does not
 * name its ports.
 *
 *   snprintf(url, n, "https://%s:%d/v1/%s", ip, API_PORT_HTTP, op);
 *   { "http-port", SETTINGS_INT, API_PORT_TEXT(API_PORT_HTTP), ... }
 *
 * Each value is one plain decimal token, so API_PORT_TEXT turns it into the string a
 * settings table wants without writing the number twice. Constants only: any thread.
 */
#ifndef REDIS_OPERATOR_API_PORTS_H
#define REDIS_OPERATOR_API_PORTS_H

#define API_PORT_SERVER  6379 /* redis-server / valkey-server, container port "redis" */
#define API_PORT_HTTP    8000 /* the instance manager's HTTP API, container port "http" */
#define API_PORT_METRICS 9121 /* the instance manager's /metrics, container port "metrics" */

/* The container port names the controller gives them and the manager looks up. */
#define API_PORT_NAME_SERVER  "redis"
#define API_PORT_NAME_HTTP    "http"
#define API_PORT_NAME_METRICS "metrics"

#define API_PORT_TEXT_(p) #p
/* "6379" for API_PORT_SERVER (the macro's value as a string literal). */
#define API_PORT_TEXT(p) API_PORT_TEXT_(p)

#endif

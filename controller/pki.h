/*
 * pki: the private PKI of one cluster's instance-manager API (HTTPS with client
 * certificates between the controller and every pod, DESIGN.md §5, §8).
 *
 * Two CAs per cluster, so that nothing a pod holds can authenticate as the operator:
 *   server CA  signs the pods' server certificate; the controller trusts only it (and
 *              no system CA) when it calls a pod.
 *   client CA  signs the controller's client certificate (CN redis-operator) and the peer
 *              certificate (CN redis-operator-peer) that a manager shows another one when
 *              it hands over a switchover (POST /v1/promote); the pods trust only it for
 *              callers, and let the peer certificate call /v1/promote and nothing else.
 * A pod's own server certificate is signed by the server CA, so a pod presenting it as a
 * client is refused everywhere.
 *
 * Secrets (both labelled and owner-referenced like every child; keys below):
 *   <cluster>-operator-tls  the controller's: both CAs with their keys, its client pair.
 *                           Not in the pods' Role (desired_role), not mounted anywhere.
 *   <cluster>-instance-tls  mounted read-only at the manager's --http-tls-dir
 *                           (/etc/redis-operator/http-tls): server pair, client CA as
 *                           ca.crt, the peer pair and the server CA as peer-ca.crt.
 * The controller generates both when it creates them (apply.c, as it does passwords):
 * the operator Secret first, then the instance Secret from its CAs. Nothing is rotated:
 * certificates last CTL_PKI_DAYS. Host names are not checked (pods are called by IP,
 * which changes); the chain is, against a CA that exists only for this cluster.
 *
 * Pure functions over Secret objects (data base64, or stringData as just built); any
 * thread. Key material never reaches an error message.
 */
#ifndef REDIS_OPERATOR_CONTROLLER_PKI_H
#define REDIS_OPERATOR_CONTROLLER_PKI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"

#define CTL_PKI_DAYS          3650
#define CTL_PKI_CONTROLLER_CN "redis-operator"
#define CTL_PKI_PEER_CN       "redis-operator-peer" /* instance/http.c INST_PEER_CN */

/* Keys of <cluster>-operator-tls. */
#define CTL_PKI_SERVER_CA     "server-ca.crt"
#define CTL_PKI_SERVER_CA_KEY "server-ca.key"
#define CTL_PKI_CLIENT_CA     "client-ca.crt"
#define CTL_PKI_CLIENT_CA_KEY "client-ca.key"
#define CTL_PKI_CERT          "tls.crt" /* the controller's client certificate */
#define CTL_PKI_KEY           "tls.key"
/* Keys of <cluster>-instance-tls (instance/http.c, instance/ops.c read them). */
#define CTL_PKI_INST_CERT     "tls.crt" /* server certificate */
#define CTL_PKI_INST_KEY      "tls.key"
#define CTL_PKI_INST_CA       "ca.crt"   /* the client CA: who may call */
#define CTL_PKI_INST_PEER     "peer.crt" /* client certificate for peers' /v1/promote */
#define CTL_PKI_INST_PEER_KEY "peer.key"
#define CTL_PKI_INST_PEER_CA  "peer-ca.crt" /* the server CA: to verify a peer */
#define CTL_PKI_INST_KEYS                                                                          \
	{                                                                                          \
		CTL_PKI_INST_CERT, CTL_PKI_INST_KEY, CTL_PKI_INST_CA, CTL_PKI_INST_PEER,           \
		        CTL_PKI_INST_PEER_KEY, CTL_PKI_INST_PEER_CA                                \
	}
#define CTL_PKI_INST_NKEYS 6

/* What the controller needs to call one cluster's pods (PEM text, malloc'd). */
struct ctl_pki_client {
	char *ca_pem;         /* server CA */
	char *cert_pem;       /* client certificate */
	char *key_pem;        /* its key (secret) */
	int64_t not_after_ms; /* when the client certificate expires (wall clock) */
};

/* Adds stringData to secret (<cluster>-operator-tls as desired): two new CAs and the
 * controller's client certificate. 0, or -EIO when OpenSSL fails. */
int ctl_pki_fill_operator(json_t *secret, const char *cluster, struct err *e);
/* Adds stringData to secret (<cluster>-instance-tls as desired): a new server pair and
 * peer pair signed by the CAs of op (<cluster>-operator-tls as read). -EINVAL with e
 * naming op's Secret and key when its material is missing or bad. */
int ctl_pki_fill_instance(json_t *secret, json_t *op, const char *cluster, struct err *e);
/*
 * The controller's side from op (<cluster>-operator-tls as read), validated (the CA parses,
 * the client certificate matches its key and has not expired at now_wall_ms). 0, or
 * -EINVAL with e naming the Secret and the key ("Secret ns/c-operator-tls: key tls.key:
 * does not match tls.crt"). Outputs are written only on success.
 */
int ctl_pki_client_read(json_t *op, int64_t now_wall_ms, struct ctl_pki_client *out, struct err *e);
/* Wipes and frees; NULL-safe. */
void ctl_pki_client_release(struct ctl_pki_client *c);
/* The pod mounts <cluster>-instance-tls, so its manager serves HTTPS only: the pod says
 * so in its annotation CTL_PKI_ANN (the pod cache keeps metadata, not the spec). Pods
 * made before the volume existed have no such annotation and serve plain HTTP. */
#define CTL_PKI_ANN "redis.io/http-tls" /* value: the Secret's name */
bool ctl_pki_pod_uses_tls(json_t *pod);
/* Wipes every value of secret's stringData in place (after it was sent). */
void ctl_pki_wipe(json_t *secret);

#endif

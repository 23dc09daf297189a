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
 * the operator Secret first, then the instance Secret from its CAs. Host names are not
 * checked (pods are called by IP, which changes); the chain is, against a CA that exists
 * only for this cluster.
 *
 * Renewal (the planner asks, the applier re-issues by a merge patch with stringData):
 *   - a certificate is due at CTL_PKI_RENEW_NUM/CTL_PKI_RENEW_DEN of its lifetime
 *     (ctl_pki_renew_due): leaves live CTL_PKI_LEAF_DAYS, CAs CTL_PKI_CA_DAYS;
 *   - <cluster>-operator-tls: a CA due → both CAs and the client certificate anew (the
 *     pods follow through the instance Secret below: polls fail until their volume
 *     shows it); only the client certificate due → a new one from the same client CA
 *     (the pods notice nothing);
 *   - <cluster>-instance-tls records the CAs that signed it (annotation CTL_PKI_CA_ANN:
 *     both CA fingerprints) and is re-issued when they differ from the operator Secret's
 *     (that Secret was deleted and made again, or its CAs renewed), or when its server or
 *     peer certificate is due. The managers load the new files without a restart.
 * Material that does not parse is not judged (the poller reports it; deleting the Secret
 * makes it anew).
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

/* Lifetimes: a leaf (the pods' server and peer certificates, the controller's client
 * certificate) 90 days, the span public CAs use, so a leaked key is short-lived and the
 * renewal path runs every two months, not once a decade; a CA 5 years (1826 days), renewed
 * at 3 1/3, so a leaf (90 days) issued just before never outlives its CA. */
#define CTL_PKI_LEAF_DAYS     90
#define CTL_PKI_CA_DAYS       1826
#define CTL_PKI_RENEW_NUM     2 /* renew at 2/3 of the lifetime: 30 days of margin for a leaf */
#define CTL_PKI_RENEW_DEN     3
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
/* Adds stringData to secret (<cluster>-instance-tls as desired, or a patch of it): a new
 * server pair and peer pair signed by the CAs of op (<cluster>-operator-tls as read), and
 * the annotation CTL_PKI_CA_ANN naming those CAs. -EINVAL with e naming op's Secret and
 * key when its material is missing or bad. */
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

/* --- renewal ----------------------------------------------------------------------- */

/* On <cluster>-instance-tls: "<server CA SHA-256>.<client CA SHA-256>" (hex) of the
 * operator Secret whose CAs signed it. */
#define CTL_PKI_CA_ANN    "redis.io/operator-ca"
#define CTL_PKI_CA_FP_LEN (2 * 64 + 2) /* two fingerprints, the dot, the NUL */
#define CTL_PKI_WHY_MAX   160          /* a reason below, with the NUL */

/* Whether a certificate valid from not_before_ms to not_after_ms (wall ms) is due for
 * renewal at now_ms: at or past CTL_PKI_RENEW_NUM/DEN of its window, or expired. A
 * window that is empty or reversed is due; a certificate not valid yet is not. Pure. */
bool ctl_pki_renew_due(int64_t now_ms, int64_t not_before_ms, int64_t not_after_ms);

/* What <cluster>-operator-tls needs. */
enum ctl_pki_renewal {
	CTL_PKI_RENEW_NONE,
	CTL_PKI_RENEW_CLIENT, /* the controller's certificate only, from the same client CA */
	CTL_PKI_RENEW_CAS,    /* both CAs and the client certificate anew */
};

/* The verdict for op (<cluster>-operator-tls as read) at now_ms; why (CTL_PKI_WHY_MAX
 * bytes) names the key and the reason ("key server-ca.crt: due for renewal (expires
 * 2031-12-01)") or is "". Material that does not parse: NONE. */
enum ctl_pki_renewal ctl_pki_operator_due(json_t *op, int64_t now_ms, char *why, size_t len);
/* Whether inst (<cluster>-instance-tls as read) must be re-issued from op: the annotation
 * CTL_PKI_CA_ANN is missing or names other CAs, or tls.crt or peer.crt is due. why as
 * above. false when op's CAs or inst's certificates do not parse. */
bool ctl_pki_instance_due(json_t *inst, json_t *op, int64_t now_ms, char *why, size_t len);
/* The CA fingerprint of op (the value of CTL_PKI_CA_ANN) into out. 0, or -EINVAL with e
 * naming the Secret and the key. */
int ctl_pki_ca_fingerprint(json_t *op, char out[CTL_PKI_CA_FP_LEN], struct err *e);
/*
 * stringData for a merge patch of op (<cluster>-operator-tls as read) into patch: the
 * CAs of op kept unless one is due at now_ms or does not parse (then new ones), and a
 * new client certificate from the client CA. 0, or -EIO when OpenSSL fails.
 */
int ctl_pki_renew_operator(json_t *patch, json_t *op, const char *cluster, int64_t now_ms,
                           struct err *e);

#endif

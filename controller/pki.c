/*
 * pki: generating and reading the per-cluster TLS material (see pki.h).
 *
 * Generation adds PEM text under stringData (the API server stores it base64 in data);
 * reading takes data (base64, as the cache and the API return it) or, for an object
 * built in this process, stringData. Every decoded secret is wiped before it is freed;
 * error messages name the Secret and the key, never the value.
 */
#include "pki.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/desired.h"
#include "controller/view.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/jsonx.h"
#include "lib/rfc3339.h"
#include "lib/x509.h"

#define B64_MAX   (X509_PEM_MAX / 3 * 4 + 4)
#define CN_PREFIX 40 /* bytes of the cluster name in a CN: "<prefix> server CA" <= 64 */

static void where(json_t *secret, char *out, size_t len)
{
	snprintf(out, len, "Secret %s/%s",
	         jsonx_get_string(secret, "metadata.namespace")
	                 ? jsonx_get_string(secret, "metadata.namespace")
	                 : "?",
	         jsonx_get_string(secret, "metadata.name")
	                 ? jsonx_get_string(secret, "metadata.name")
	                 : "?");
}

/* The text data[key] encodes (lib/base64: what the API server writes). NULL: empty, over
 * B64_MAX, not base64, or holding a NUL (not PEM text). */
static char *decode_text(const char *s)
{
	size_t n = strlen(s), len;
	char *out;

	if (n == 0 || n > B64_MAX || base64_decode(s, n, 0, &out, &len) < 0)
		return NULL;
	if (strlen(out) != len) {
		secure_zero(out, len);
		free(out);
		return NULL;
	}
	return out;
}

/* The text of key in secret (data base64, else stringData) into *out (free_secret it). */
static int value(json_t *secret, const char *key, char **out, struct err *e)
{
	json_t *sd = json_object_get(json_object_get(secret, "stringData"), key);
	const char *b64 = json_string_value(json_object_get(json_object_get(secret, "data"), key));
	char w[CTL_NAME_MAX * 2 + 16];

	if (json_is_string(sd)) {
		*out = xstrdup(json_string_value(sd));
		return 0;
	}
	where(secret, w, sizeof(w));
	if (!b64)
		return err_set(e, -EINVAL, "%s: key %s: missing", w, key);
	if (!(*out = decode_text(b64)))
		return err_set(e, -EINVAL, "%s: key %s: not base64 text", w, key);
	return 0;
}

/* Reads a cert/key pair from secret and checks that they match. */
static int read_pair(json_t *secret, const char *cert_key, const char *key_key,
                     struct x509_pair *out, struct err *e)
{
	struct x509_pair p = { 0 };
	struct err why = { 0 };
	char w[CTL_NAME_MAX * 2 + 16];
	int rc = value(secret, cert_key, &p.cert_pem, e);

	if (!rc)
		rc = value(secret, key_key, &p.key_pem, e);
	if (!rc && (rc = x509_check_pair(p.cert_pem, p.key_pem, &why)) < 0) {
		where(secret, w, sizeof(w));
		err_set(e, rc, "%s: keys %s, %s: %s", w, cert_key, key_key, why.msg);
	}
	if (rc)
		x509_pair_release(&p);
	else
		*out = p;
	return rc;
}

static void put(json_t *sd, const char *key, const char *pem)
{
	json_object_set_new(sd, key, json_string(pem));
}

/* Sets metadata.annotations[key] = val, making the objects it lacks. */
static void annotate(json_t *obj, const char *key, const char *val)
{
	json_t *meta = json_object_get(obj, "metadata"), *ann;

	if (!json_is_object(meta))
		json_object_set_new(obj, "metadata", meta = json_object());
	if (!json_is_object(ann = json_object_get(meta, "annotations")))
		json_object_set_new(meta, "annotations", ann = json_object());
	json_object_set_new(ann, key, json_string(val));
}

/* --- generation ------------------------------------------------------------------------------- */

/* Two new CAs for cluster. */
static int make_cas(const char *cluster, struct x509_pair *server_ca, struct x509_pair *client_ca,
                    struct err *e)
{
	char cn[X509_CN_MAX + 1];
	int rc;

	snprintf(cn, sizeof(cn), "%.*s server CA", CN_PREFIX, cluster);
	rc = x509_make_ca(cn, CTL_PKI_CA_DAYS, server_ca, e);
	snprintf(cn, sizeof(cn), "%.*s client CA", CN_PREFIX, cluster);
	if (!rc && (rc = x509_make_ca(cn, CTL_PKI_CA_DAYS, client_ca, e)) < 0)
		x509_pair_release(server_ca);
	return rc;
}

/* secret's stringData: the CAs and a new client certificate from the client CA. */
static int fill_operator_from(json_t *secret, const struct x509_pair *server_ca,
                              const struct x509_pair *client_ca, struct err *e)
{
	struct x509_pair me = { 0 };
	json_t *sd;
	int rc = x509_issue(client_ca, CTL_PKI_CONTROLLER_CN, CTL_PKI_LEAF_DAYS, X509_EKU_CLIENT,
	                    &me, e);

	if (rc)
		return rc;
	sd = json_object();
	put(sd, CTL_PKI_SERVER_CA, server_ca->cert_pem);
	put(sd, CTL_PKI_SERVER_CA_KEY, server_ca->key_pem);
	put(sd, CTL_PKI_CLIENT_CA, client_ca->cert_pem);
	put(sd, CTL_PKI_CLIENT_CA_KEY, client_ca->key_pem);
	put(sd, CTL_PKI_CERT, me.cert_pem);
	put(sd, CTL_PKI_KEY, me.key_pem);
	json_object_set_new(secret, "stringData", sd);
	x509_pair_release(&me);
	return 0;
}

int ctl_pki_fill_operator(json_t *secret, const char *cluster, struct err *e)
{
	struct x509_pair server_ca = { 0 }, client_ca = { 0 };
	int rc = make_cas(cluster, &server_ca, &client_ca, e);

	if (!rc)
		rc = fill_operator_from(secret, &server_ca, &client_ca, e);
	x509_pair_release(&server_ca);
	x509_pair_release(&client_ca);
	return rc;
}

int ctl_pki_renew_operator(json_t *patch, json_t *op, const char *cluster, int64_t now_ms,
                           struct err *e)
{
	struct x509_pair server_ca = { 0 }, client_ca = { 0 };
	char why[CTL_PKI_WHY_MAX];
	int rc = -EINVAL;

	if (op && ctl_pki_operator_due(op, now_ms, why, sizeof(why)) != CTL_PKI_RENEW_CAS &&
	    read_pair(op, CTL_PKI_SERVER_CA, CTL_PKI_SERVER_CA_KEY, &server_ca, NULL) == 0)
		rc = read_pair(op, CTL_PKI_CLIENT_CA, CTL_PKI_CLIENT_CA_KEY, &client_ca, NULL);
	if (rc) { /* a CA due or unreadable: both anew */
		x509_pair_release(&server_ca);
		rc = make_cas(cluster, &server_ca, &client_ca, e);
	}
	if (!rc)
		rc = fill_operator_from(patch, &server_ca, &client_ca, e);
	x509_pair_release(&server_ca);
	x509_pair_release(&client_ca);
	return rc;
}

int ctl_pki_fill_instance(json_t *secret, json_t *op, const char *cluster, struct err *e)
{
	struct x509_pair server_ca = { 0 }, client_ca = { 0 }, server = { 0 }, peer = { 0 };
	char cn[X509_CN_MAX + 1], fp[CTL_PKI_CA_FP_LEN];
	json_t *sd;
	int rc = read_pair(op, CTL_PKI_SERVER_CA, CTL_PKI_SERVER_CA_KEY, &server_ca, e);

	if (!rc)
		rc = read_pair(op, CTL_PKI_CLIENT_CA, CTL_PKI_CLIENT_CA_KEY, &client_ca, e);
	snprintf(cn, sizeof(cn), "%.*s instance", CN_PREFIX, cluster);
	if (!rc)
		rc = x509_issue(&server_ca, cn, CTL_PKI_LEAF_DAYS, X509_EKU_SERVER, &server, e);
	if (!rc)
		rc = x509_issue(&client_ca, CTL_PKI_PEER_CN, CTL_PKI_LEAF_DAYS, X509_EKU_CLIENT,
		                &peer, e);
	if (!rc)
		rc = ctl_pki_ca_fingerprint(op, fp, e);
	if (!rc) {
		sd = json_object();
		put(sd, CTL_PKI_INST_CERT, server.cert_pem);
		put(sd, CTL_PKI_INST_KEY, server.key_pem);
		put(sd, CTL_PKI_INST_CA, client_ca.cert_pem);
		put(sd, CTL_PKI_INST_PEER, peer.cert_pem);
		put(sd, CTL_PKI_INST_PEER_KEY, peer.key_pem);
		put(sd, CTL_PKI_INST_PEER_CA, server_ca.cert_pem);
		json_object_set_new(secret, "stringData", sd);
		annotate(secret, CTL_PKI_CA_ANN, fp);
	}
	x509_pair_release(&server_ca);
	x509_pair_release(&client_ca);
	x509_pair_release(&server);
	x509_pair_release(&peer);
	return rc;
}

void ctl_pki_wipe(json_t *secret)
{
	json_t *sd = json_object_get(secret, "stringData"), *v;
	const char *k;

	json_object_foreach (sd, k, v) {
		const char *s = json_string_value(v);

		if (s)
			secure_zero((void *)s, strlen(s));
	}
}

/* --- the controller's side ---------------------------------------------------------------------- */

void ctl_pki_client_release(struct ctl_pki_client *c)
{
	if (!c)
		return;
	free(c->ca_pem);
	free(c->cert_pem);
	free_secret(c->key_pem);
	c->ca_pem = c->cert_pem = c->key_pem = NULL;
}

int ctl_pki_client_read(json_t *op, int64_t now_wall_ms, struct ctl_pki_client *out, struct err *e)
{
	struct x509_pair me = { 0 };
	struct err why = { 0 };
	char *ca = NULL, w[CTL_NAME_MAX * 2 + 16];
	int64_t ca_end = 0, end = 0;
	int rc = value(op, CTL_PKI_SERVER_CA, &ca, e);

	where(op, w, sizeof(w));
	if (!rc && (rc = x509_not_after(ca, &ca_end, &why)) < 0)
		err_set(e, rc, "%s: key %s: %s", w, CTL_PKI_SERVER_CA, why.msg);
	if (!rc)
		rc = read_pair(op, CTL_PKI_CERT, CTL_PKI_KEY, &me, e);
	if (!rc && x509_not_after(me.cert_pem, &end, NULL) == 0 && end <= now_wall_ms)
		rc = err_set(e, -EINVAL, "%s: key %s: expired", w, CTL_PKI_CERT);
	if (rc) {
		free(ca);
		x509_pair_release(&me);
		return rc;
	}
	*out = (struct ctl_pki_client){ ca, me.cert_pem, me.key_pem, end };
	return 0;
}

bool ctl_pki_pod_uses_tls(json_t *pod)
{
	const char *v = json_string_value(
	        json_object_get(jsonx_get(pod, "metadata.annotations"), CTL_PKI_ANN));

	return v && *v;
}

/* --- renewal ------------------------------------------------------------------------------------ */

bool ctl_pki_renew_due(int64_t now_ms, int64_t not_before_ms, int64_t not_after_ms)
{
	int64_t life = not_after_ms - not_before_ms;

	if (life <= 0)
		return true;
	if (now_ms < not_before_ms)
		return false;
	return now_ms >= not_after_ms ||
	       now_ms - not_before_ms >= life / CTL_PKI_RENEW_DEN * CTL_PKI_RENEW_NUM;
}

/* Whether secret's certificate under key is due at now (why says so when it is). -EINVAL
 * when it is missing or does not parse. */
static int cert_due(json_t *secret, const char *key, int64_t now, bool *due, char *why, size_t len)
{
	char *pem = NULL, at[RFC3339_MAX];
	int64_t nb = 0, na = 0;
	int rc = value(secret, key, &pem, NULL);

	if (!rc)
		rc = x509_not_before(pem, &nb, NULL);
	if (!rc)
		rc = x509_not_after(pem, &na, NULL);
	free(pem);
	if (rc)
		return rc;
	*due = ctl_pki_renew_due(now, nb, na);
	rfc3339_format(na, RFC3339_SECONDS, at);
	if (*due)
		snprintf(why, len, "key %s: due for renewal (%s %s)", key,
		         na <= now ? "expired" : "expires", at);
	return 0;
}

enum ctl_pki_renewal ctl_pki_operator_due(json_t *op, int64_t now_ms, char *why, size_t len)
{
	static const char *const cas[] = { CTL_PKI_SERVER_CA, CTL_PKI_CLIENT_CA };
	bool due = false;

	why[0] = '\0';
	for (size_t i = 0; i < sizeof(cas) / sizeof(cas[0]); i++) {
		if (cert_due(op, cas[i], now_ms, &due, why, len) < 0)
			return CTL_PKI_RENEW_NONE;
		if (due)
			return CTL_PKI_RENEW_CAS;
	}
	if (cert_due(op, CTL_PKI_CERT, now_ms, &due, why, len) < 0)
		return CTL_PKI_RENEW_NONE;
	return due ? CTL_PKI_RENEW_CLIENT : CTL_PKI_RENEW_NONE;
}

int ctl_pki_ca_fingerprint(json_t *op, char out[CTL_PKI_CA_FP_LEN], struct err *e)
{
	static const char *const cas[] = { CTL_PKI_SERVER_CA, CTL_PKI_CLIENT_CA };
	char fp[2][X509_FINGERPRINT_LEN + 1], w[CTL_NAME_MAX * 2 + 16];

	for (size_t i = 0; i < 2; i++) {
		struct err why = { 0 };
		char *pem = NULL;
		int rc = value(op, cas[i], &pem, e);

		if (!rc && (rc = x509_fingerprint(pem, fp[i], &why)) < 0) {
			where(op, w, sizeof(w));
			err_set(e, rc, "%s: key %s: %s", w, cas[i], why.msg);
		}
		free(pem);
		if (rc)
			return rc;
	}
	snprintf(out, CTL_PKI_CA_FP_LEN, "%s.%s", fp[0], fp[1]);
	return 0;
}

bool ctl_pki_instance_due(json_t *inst, json_t *op, int64_t now_ms, char *why, size_t len)
{
	static const char *const leaves[] = { CTL_PKI_INST_CERT, CTL_PKI_INST_PEER };
	const char *have = json_string_value(
	        json_object_get(jsonx_get(inst, "metadata.annotations"), CTL_PKI_CA_ANN));
	char fp[CTL_PKI_CA_FP_LEN];
	bool due = false;

	why[0] = '\0';
	if (ctl_pki_ca_fingerprint(op, fp, NULL) < 0)
		return false;
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		if (cert_due(inst, leaves[i], now_ms, &due, why, len) < 0)
			return false;
		if (due)
			return true;
	}
	if (have && strcmp(have, fp) == 0)
		return false;
	snprintf(why, len, "annotation %s: %s", CTL_PKI_CA_ANN,
	         have ? "other CAs than the operator Secret's" : "missing");
	return true;
}

/*
 * instclient: the controller's requests to an instance manager's mutating endpoints
 * (POST /v1/fence, /v1/promote, /v1/replicate, /v1/switchover, /v1/config ...), the
 * cluster's TLS material for them (and for the poller), and the random passwords of the
 * Secrets the controller generates.
 *
 * One lib/httpc transfer per request, with a whole-request deadline: these calls are
 * rare (decisions, not polling) and go to different pods. HTTPS on the pod IP when the
 * pod mounts <cluster>-instance-tls (controller/pki.h): the server must chain to the
 * cluster's server CA and nothing else (no system CAs), the host name is not checked
 * (pod IPs change; that CA exists for this cluster only and signs nothing but its pods),
 * and the controller's client certificate goes along. Older pods without the volume get
 * plain HTTP. 200 and 202 (accepted: an asynchronous operation started) are success.
 * The instance's answer is capped at INSTCLIENT_BODY_MAX. Any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/instance_v1.h"
#include "controller/internal.h"
#include "controller/desired.h"
#include "controller/owner.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/httpc.h"
#include "lib/jsonx.h"

#define INSTCLIENT_BODY_MAX API_INST_BODY_MAX

static int answer_of(long http, struct buf *resp, const char *url, json_t **answer, struct err *e)
{
	struct api_inst_error ae = { 0 };
	json_t *j = NULL;

	if (http == 200 || http == 202) { /* 202: accepted, started (POST /v1/backup) */
		(void)jsonx_loadb(resp->data ? resp->data : "{}", resp->len ? resp->len : 2,
		                  INSTCLIENT_BODY_MAX, &j, NULL);
		if (answer)
			*answer = j ? j : json_object();
		else
			json_decref(j);
		return 0;
	}
	(void)api_inst_error_decode(resp->data ? resp->data : "", resp->len, &ae, NULL);
	err_set(e, httpc_status_errno(http, NULL, &httpc_errmap_instclient), "%s: HTTP %ld: %s",
	        url, http, ae.error ? ae.error : "no detail");
	api_inst_error_release(&ae);
	return httpc_status_errno(http, NULL, &httpc_errmap_instclient);
}

json_t *ctl_operator_tls_secret(struct ctl *c, const char *ns, const char *cluster, struct err *e)
{
	char name[CTL_NAME_MAX + 1];
	json_t *sec, *rc;
	const char *label;
	bool own;

	snprintf(name, sizeof(name), "%s%s", cluster, DESIRED_OPERATOR_TLS);
	sec = k8s_informer_get(c->inf[CTL_INF_SECRETS], ns, name);
	rc = k8s_informer_get(c->inf[CTL_INF_CLUSTERS], ns, cluster);
	label = json_string_value(
	        json_object_get(jsonx_get(sec, "metadata.labels"), CTL_LABEL_CLUSTER));
	/* only the cluster's own: a namesake someone else made would pick whom we trust */
	own = sec && label && strcmp(label, cluster) == 0 &&
	      ctl_owner_is(sec, jsonx_get_string(rc, "metadata.uid"));
	json_decref(rc);
	if (own)
		return sec;
	json_decref(sec);
	err_set(e, -ENOENT, "Secret %s/%s: not found (yet)", ns, name);
	return NULL;
}

int ctl_instance_tls(struct ctl *c, const char *ns, const char *cluster, struct ctl_pki_client *out,
                     struct err *e)
{
	json_t *sec = ctl_operator_tls_secret(c, ns, cluster, e);
	int rc;

	if (!sec)
		return -ENOENT;
	rc = ctl_pki_client_read(sec, clock_wall_ms(), out, e);
	json_decref(sec);
	return rc;
}

int ctl_instance_post(const char *ip, const char *op, json_t *body, int64_t timeout_ms,
                      const struct ctl_pki_client *tls, json_t **answer, struct err *e)
{
	struct httpc_body resp = HTTPC_BODY_INIT(INSTCLIENT_BODY_MAX);
	struct curl_slist *hdr = httpc_headers_add(NULL, "Content-Type: application/json");
	char url[128], *text = json_dumps(body ? body : json_object(), JSON_COMPACT);
	/* the cluster's CA only; the host name is not checked (by IP: see the top) */
	struct httpc_tls t = { .ca_pem = tls ? tls->ca_pem : NULL,
		               .cert_pem = tls ? tls->cert_pem : NULL,
		               .key_pem = tls ? tls->key_pem : NULL,
		               .skip_host_check = true };
	struct httpc_req rq = { .method = "POST",
		                .url = url,
		                .protocols = tls ? "https" : "http",
		                .headers = hdr,
		                .body = text,
		                .body_len = strlen(text),
		                .has_body = true,
		                .timeout_ms = (long)timeout_ms,
		                .connect_timeout_ms = 2000,
		                .tls = tls ? &t : NULL };
	long http = 0;
	int rc;

	snprintf(url, sizeof(url), "%s://%s:%d/v1/%s", tls ? "https" : "http", ip, API_PORT_HTTP,
	         op);
	rc = httpc_perform(&rq, &resp, &http, &httpc_errmap_instclient, e);
	if (http)
		rc = answer_of(http, &resp.buf, url, answer, e);
	httpc_headers_free(hdr);
	free(text);
	buf_release(&resp.buf);
	return rc;
}

char *ctl_random_password(void)
{
	static const char alphabet[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char raw[DESIRED_PASSWORD_LEN * 4];
	char *pw = xcalloc(DESIRED_PASSWORD_LEN + 1, 1);
	size_t n = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	while (fd >= 0 && n < DESIRED_PASSWORD_LEN) {
		ssize_t got = read(fd, raw, sizeof(raw));

		if (got <= 0)
			break;
		/* 62 * 4 = 248: bytes from 248 up are dropped, so every letter is equally likely */
		for (ssize_t i = 0; i < got && n < DESIRED_PASSWORD_LEN; i++)
			if (raw[i] < 248)
				pw[n++] = alphabet[raw[i] % 62];
	}
	if (fd >= 0)
		close(fd);
	secure_zero(raw, sizeof(raw));
	if (n < DESIRED_PASSWORD_LEN) {
		free_secret(pw);
		return NULL;
	}
	return pw;
}

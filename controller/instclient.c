/*
 * instclient: the controller's requests to an instance manager's mutating endpoints
 * (POST /v1/fence, /v1/promote, /v1/replicate, /v1/switchover, /v1/config ...), the
 * cluster's TLS material for them (and for the poller), and the random passwords of the
 * Secrets the controller generates.
 *
 * One curl easy handle per request, with a whole-request deadline: these calls are
 * rare (decisions, not polling) and go to different pods. HTTPS on the pod IP when the
 * pod mounts <cluster>-instance-tls (controller/pki.h): the server must chain to the
 * cluster's server CA and nothing else (no system CAs), the host name is not checked
 * (pod IPs change; that CA exists for this cluster only and signs nothing but its pods),
 * and the controller's client certificate goes along. Older pods without the volume get
 * plain HTTP. The instance's answer is capped at INSTCLIENT_BODY_MAX. Any thread.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/instance_v1.h"
#include "controller/ctl.h"
#include "controller/desired.h"
#include "controller/owner.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/jsonx.h"

#define INSTCLIENT_BODY_MAX API_INST_BODY_MAX

static size_t sink(char *p, size_t size, size_t n, void *ctx)
{
	return buf_append(ctx, p, size * n) == 0 ? size * n : 0;
}

static int status_errno(long http)
{
	switch (http) {
	case 400: return -EINVAL;
	case 409: return -EBUSY;
	case 503: return -EAGAIN;
	case 504: return -ETIMEDOUT;
	default: return -EIO;
	}
}

static int curl_errno(CURLcode cc)
{
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT: return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT: return -ECONNREFUSED;
	default: return -EIO;
	}
}

static int answer_of(long http, struct buf *resp, const char *url, json_t **answer, struct err *e)
{
	struct api_inst_error ae = { 0 };
	json_t *j = NULL;

	if (http == 200) {
		(void)jsonx_loadb(resp->data ? resp->data : "{}", resp->len ? resp->len : 2,
		                  INSTCLIENT_BODY_MAX, &j, NULL);
		if (answer)
			*answer = j ? j : json_object();
		else
			json_decref(j);
		return 0;
	}
	(void)api_inst_error_decode(resp->data ? resp->data : "", resp->len, &ae, NULL);
	err_set(e, status_errno(http), "%s: HTTP %ld: %s", url, http,
	        ae.error ? ae.error : "no detail");
	api_inst_error_release(&ae);
	return status_errno(http);
}

static void set_blob(CURL *h, CURLoption opt, const char *pem)
{
	struct curl_blob b = { .data = (void *)(uintptr_t)pem,
		               .len = strlen(pem),
		               .flags = CURL_BLOB_NOCOPY };

	curl_easy_setopt(h, opt, &b);
}

static void set_tls(CURL *h, const struct ctl_pki_client *tls)
{
	set_blob(h, CURLOPT_CAINFO_BLOB, tls->ca_pem);
	curl_easy_setopt(h, CURLOPT_CAINFO, NULL); /* the cluster's CA only */
	curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L); /* by IP; see the header comment */
	set_blob(h, CURLOPT_SSLCERT_BLOB, tls->cert_pem);
	curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	set_blob(h, CURLOPT_SSLKEY_BLOB, tls->key_pem);
	curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
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
	      ctl_owner_is(sec, ctl_json_str(rc, "metadata.uid"));
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
	struct buf resp = BUF_INIT(INSTCLIENT_BODY_MAX);
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	char url[128], *text = json_dumps(body ? body : json_object(), JSON_COMPACT);
	CURL *h = curl_easy_init();
	long http = 0;
	CURLcode cc;
	int rc;

	snprintf(url, sizeof(url), "%s://%s:%d/v1/%s", tls ? "https" : "http", ip, API_PORT_HTTP,
	         op);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, tls ? "https" : "http");
	if (tls)
		set_tls(h, tls);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &http);
		rc = answer_of(http, &resp, url, answer, e);
	} else {
		rc = err_set(e, curl_errno(cc), "%s: %s", url, curl_easy_strerror(cc));
	}
	curl_easy_cleanup(h);
	curl_slist_free_all(hdr);
	free(text);
	buf_release(&resp);
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

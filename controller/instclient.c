/*
 * instclient: the controller's requests to an instance manager's mutating endpoints
 * (POST /v1/fence, /v1/promote, /v1/replicate, /v1/switchover, /v1/config ...), and the
 * random passwords of the Secrets the controller generates.
 *
 * One curl easy handle per request, with a whole-request deadline: these calls are
 * rare (decisions, not polling) and go to different pods. Plain HTTP on the pod IP;
 * the instance's answer is capped at INSTCLIENT_BODY_MAX. Any thread.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "controller/ctl.h"
#include "controller/desired.h"
#include "lib/alloc.h"
#include "lib/buf.h"
#include "lib/jsonx.h"

#define INSTCLIENT_BODY_MAX (64 * 1024)

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
	json_t *j = NULL;
	const char *msg;

	(void)jsonx_loadb(resp->data ? resp->data : "{}", resp->len ? resp->len : 2,
	                  INSTCLIENT_BODY_MAX, &j, NULL);
	if (http == 200) {
		if (answer)
			*answer = j ? j : json_object();
		else
			json_decref(j);
		return 0;
	}
	msg = ctl_json_str(j, "error");
	err_set(e, status_errno(http), "%s: HTTP %ld: %s", url, http, msg ? msg : "no detail");
	json_decref(j);
	return status_errno(http);
}

int ctl_instance_post(const char *ip, const char *op, json_t *body, int64_t timeout_ms,
                      json_t **answer, struct err *e)
{
	struct buf resp = BUF_INIT(INSTCLIENT_BODY_MAX);
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	char url[128], *text = json_dumps(body ? body : json_object(), JSON_COMPACT);
	CURL *h = curl_easy_init();
	long http = 0;
	CURLcode cc;
	int rc;

	snprintf(url, sizeof(url), "http://%s:%d/v1/%s", ip, CTL_PORT_HTTP, op);
	curl_easy_setopt(h, CURLOPT_URL, url);
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

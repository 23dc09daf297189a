/* http_tls: the instance API's TLS verdict (see http_tls.h). Pure. */
#include "http_tls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *const inst_http_tls_files[INST_HTTP_TLS_NFILES] = { "tls.crt", "tls.key", "ca.crt" };

int inst_http_tls_mode_parse(const char *text, enum inst_http_tls_mode *out)
{
	if (!text || strcmp(text, "auto") == 0)
		*out = INST_HTTP_TLS_AUTO;
	else if (strcmp(text, "required") == 0)
		*out = INST_HTTP_TLS_REQUIRED;
	else
		return -EINVAL;
	return 0;
}

const char *inst_http_serve_name(enum inst_http_serve s)
{
	static const char *const names[] = { "https", "plain", "refused" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

/* "a, b" of the files not present into out; how many there were. */
static size_t missing_list(const bool present[INST_HTTP_TLS_NFILES], char *out, size_t len)
{
	size_t n = 0, used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < INST_HTTP_TLS_NFILES; i++) {
		int w;

		if (present[i])
			continue;
		w = snprintf(out + used, len - used, "%s%s", n ? ", " : "", inst_http_tls_files[i]);
		if (w > 0 && (size_t)w < len - used)
			used += (size_t)w;
		n++;
	}
	return n;
}

enum inst_http_serve inst_http_tls_judge(enum inst_http_tls_mode mode,
                                         const bool present[INST_HTTP_TLS_NFILES], const char *dir,
                                         char *reason, size_t len)
{
	char missing[64];
	size_t n = missing_list(present, missing, sizeof(missing));

	reason[0] = '\0';
	if (n == 0)
		return INST_HTTP_SERVE_HTTPS;
	if (n == INST_HTTP_TLS_NFILES && mode == INST_HTTP_TLS_AUTO)
		return INST_HTTP_SERVE_PLAIN;
	snprintf(reason, len, "TLS material incomplete: %s missing in %s; mutations refused",
	         missing, dir);
	return INST_HTTP_SERVE_REFUSED;
}

/*
 * k8s/config: kubeconfig and in-cluster configuration (see config.h).
 *
 * A kubeconfig is read with yamlx and walked with jsonx, so errors name the entry
 * ("users[0].user.client-key-data: invalid base64") or the name ('user "alice": exec
 * credential plugins are not supported'). Supported: cluster server,
 * certificate-authority(-data), insecure-skip-tls-verify (only when the caller allows
 * it, else -EPERM); user client-certificate(-data), client-key(-data), token, tokenFile
 * (which wins over token and is re-read like the service-account token, as client-go
 * does); context cluster, user (optional) and namespace ("default" when unset).
 * exec, auth-provider and username/password are -EOPNOTSUPP. Other fields
 * (tls-server-name, proxy-url, extensions) are ignored. File references that are
 * relative resolve against the kubeconfig's directory (k8s_config_from_kubeconfig:
 * the directory of opts->kubeconfig when set, else the working directory).
 * Codes: a missing or dangling reference, bad base64 or YAML is -EINVAL; a file over
 * K8S_KUBECONFIG_MAX is -EMSGSIZE; open/read failures keep their errno.
 *
 * k8s_config_load: opts->kubeconfig, else the first non-empty path of $KUBECONFIG (the
 * other paths of a colon list are neither read nor merged), else ~/.kube/config.
 * prefer_in_cluster tries the service account first; without it, the service account
 * is the fallback when opts->kubeconfig is NULL and the file found ($KUBECONFIG's or
 * ~/.kube/config) does not exist, as client-go's default loader does.
 *
 * Secrets (key_pem, token, the kubeconfig's strings) are wiped before they are freed
 * and never quoted in messages. Bearer tokens must be printable ASCII without spaces:
 * they go into an HTTP header.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/clock.h"
#include "lib/file.h"
#include "lib/jsonx.h"
#include "lib/yamlx.h"

#define TOKEN_FILE_MAX     (64 * 1024) /* a larger token file is refused */
#define NAMESPACE_FILE_MAX 1024
#define PATH_BUF           256 /* JSON paths built here: list[index].fixed.field */

static const struct k8s_config_opts no_opts;

/* --- small files -------------------------------------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* *out = the file's text without surrounding whitespace. The read buffer is wiped. */
static int read_trimmed(const char *path, size_t max, char **out, struct err *e)
{
	size_t len = 0, start = 0, end;
	char *p;
	int r = file_read_all_secret(path, max, &p, &len, e);

	if (r < 0)
		return r;
	if (memchr(p, '\0', len))
		r = err_set(e, -EINVAL, "%s: contains a NUL byte", path);
	for (end = len; end > 0 && is_space(p[end - 1]);)
		end--;
	while (start < end && is_space(p[start]))
		start++;
	if (r == 0)
		*out = xstrndup(p + start, end - start);
	secure_zero(p, len);
	free(p);
	return r;
}

/* A bearer token goes into an HTTP header: printable ASCII, no spaces, not empty. */
static bool token_is_valid(const char *t)
{
	if (!*t)
		return false;
	for (; *t; t++)
		if ((unsigned char)*t <= 0x20 || (unsigned char)*t >= 0x7f)
			return false;
	return true;
}

static int read_token(const char *path, char **out, struct err *e)
{
	char *t = NULL;
	int r = read_trimmed(path, TOKEN_FILE_MAX, &t, e);

	if (r != 0)
		return r;
	if (!token_is_valid(t)) {
		free_secret(t);
		return err_set(e, -EINVAL, "%s: not a valid bearer token", path);
	}
	*out = t;
	return 0;
}

const char *k8s_config_token(struct k8s_config *c, int64_t now_mono_ms)
{
	char *t = NULL;

	if (!c->token_file || (c->token && now_mono_ms - c->token_read_ms < K8S_TOKEN_REREAD_MS))
		return c->token;
	c->token_read_ms = now_mono_ms; /* a failed read is retried after the interval too */
	if (read_token(c->token_file, &t, NULL) == 0) {
		free_secret(c->token);
		c->token = t;
	}
	return c->token;
}

void k8s_config_free(struct k8s_config *c)
{
	if (!c)
		return;
	free(c->server);
	free(c->ca_file);
	free(c->ca_pem);
	free(c->cert_file);
	free(c->cert_pem);
	free(c->key_file);
	free_secret(c->key_pem);
	free_secret(c->token);
	free(c->token_file);
	free(c->namespace);
	free(c);
}

/* --- in-cluster --------------------------------------------------------------------------- */

static int in_cluster_server(char **out, struct err *e)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char *end;
	long p;

	if (!host || !*host || !port || !*port)
		return err_set(e, -ENOENT,
		               "not in a cluster: KUBERNETES_SERVICE_HOST and "
		               "KUBERNETES_SERVICE_PORT are not both set");
	if (host[strcspn(host, "/@[]#?% \t\r\n")])
		return err_set(e, -EINVAL, "KUBERNETES_SERVICE_HOST: not a host name or address");
	errno = 0;
	p = strtol(port, &end, 10);
	if (*end || errno || p < 1 || p > 65535 || port[0] < '0' || port[0] > '9')
		return err_set(e, -EINVAL, "KUBERNETES_SERVICE_PORT: not a port number");
	*out = strchr(host, ':') ? xasprintf("https://[%s]:%ld", host, p)
	                         : xasprintf("https://%s:%ld", host, p);
	return 0;
}

int k8s_config_in_cluster(const char *sa_dir, struct k8s_config **out, struct err *e)
{
	struct k8s_config *c = xcalloc(1, sizeof(*c));
	char *path;
	int r;

	if (!sa_dir)
		sa_dir = K8S_SA_DIR;
	r = in_cluster_server(&c->server, e);
	if (r == 0) {
		c->token_file = xasprintf("%s/token", sa_dir);
		r = read_token(c->token_file, &c->token, e);
		c->token_read_ms = clock_mono_ms();
	}
	if (r < 0) {
		k8s_config_free(c);
		return r;
	}
	path = xasprintf("%s/ca.crt", sa_dir);
	if (access(path, R_OK) == 0)
		c->ca_file = path; /* else the system roots verify, as client-go does */
	else
		free(path);
	path = xasprintf("%s/namespace", sa_dir);
	if (read_trimmed(path, NAMESPACE_FILE_MAX, &c->namespace, NULL) < 0)
		c->namespace = xstrdup("");
	free(path);
	if (!*c->namespace) {
		free(c->namespace);
		c->namespace = xstrdup("default");
	}
	*out = c;
	return 0;
}

/* --- PEM ------------------------------------------------------------------------------------ */

/* Decodes the base64 string at path into PEM text (*out, or untouched when absent). */
static int load_pem(json_t *doc, const char *path, char **out, struct err *e)
{
	const char *b64;
	char *pem;
	size_t len;
	int r = jsonx_string(doc, path, "", &b64, e);

	if (r < 0 || !*b64) /* empty counts as absent, as in client-go */
		return r;
	if (base64_decode(b64, strlen(b64), BASE64_SPACE, &pem, &len) < 0)
		return err_set(e, -EINVAL, "%s: invalid base64", path);
	if (strlen(pem) != len || !strstr(pem, "-----BEGIN ")) {
		secure_zero(pem, len);
		free(pem);
		return err_set(e, -EINVAL, "%s: does not decode to PEM", path);
	}
	*out = pem;
	return 0;
}

/* --- kubeconfig --------------------------------------------------------------------------- */

/* A file reference at path, made absolute against base_dir (*out untouched when absent). */
static int load_path(json_t *doc, const char *path, const char *base_dir, char **out, struct err *e)
{
	const char *p;
	int r = jsonx_string(doc, path, "", &p, e);

	if (r < 0 || !*p)
		return r;
	if (p[0] == '/' || !base_dir)
		*out = xstrdup(p);
	else
		*out = xasprintf("%s%s%s", base_dir, strcmp(base_dir, "/") ? "/" : "", p);
	return 0;
}

/* Like jsonx_string_req, but a missing field is a bad file (-EINVAL), not "nothing found". */
static int req_string(json_t *doc, const char *path, const char **out, struct err *e)
{
	int r = jsonx_string(doc, path, "", out, e);

	if (r == 0 && !**out)
		return err_set(e, -EINVAL, "%s: required", path);
	return r;
}

/* Index of the entry of list whose name is name; -ENOENT (e untouched) when there is none. */
static int find_named(json_t *doc, const char *list, const char *name, size_t *index, struct err *e)
{
	char path[PATH_BUF];
	const char *n;
	json_t *arr;
	int r = jsonx_array(doc, list, &arr, e);

	for (size_t i = 0; r == 0 && i < json_array_size(arr); i++) {
		snprintf(path, sizeof(path), "%s[%zu].name", list, i);
		r = jsonx_string(doc, path, "", &n, e);
		if (r == 0 && strcmp(n, name) == 0) {
			*index = i;
			return 0;
		}
	}
	return r < 0 ? r : -ENOENT;
}

/* Copies "list[i].<field>" into path. */
static const char *at(char path[PATH_BUF], const char *list, size_t i, const char *field)
{
	snprintf(path, PATH_BUF, "%s[%zu].%s", list, i, field);
	return path;
}

static int load_cluster(json_t *doc, size_t i, const char *name, const char *base_dir,
                        const struct k8s_config_opts *opts, struct k8s_config *c, struct err *e)
{
	char path[PATH_BUF];
	const char *server;
	size_t n;
	int r = req_string(doc, at(path, "clusters", i, "cluster.server"), &server, e);

	if (r == 0)
		r = jsonx_bool(doc, at(path, "clusters", i, "cluster.insecure-skip-tls-verify"),
		               false, &c->insecure_skip_verify, e);
	if (r < 0)
		return r;
	if (c->insecure_skip_verify && !opts->allow_insecure)
		return err_set(e, -EPERM,
		               "cluster \"%s\": insecure-skip-tls-verify is refused unless the "
		               "caller allows insecure connections explicitly",
		               name);
	for (n = strlen(server); n > 1 && server[n - 1] == '/'; n--)
		;
	c->server = xstrndup(server, n);
	r = load_path(doc, at(path, "clusters", i, "cluster.certificate-authority"), base_dir,
	              &c->ca_file, e);
	if (r == 0)
		r = load_pem(doc, at(path, "clusters", i, "cluster.certificate-authority-data"),
		             &c->ca_pem, e);
	return r;
}

static const struct {
	const char *field;
	const char *what;
} unsupported_auth[] = {
	{ "exec", "exec credential plugins are" },
	{ "auth-provider", "auth-provider plugins are" },
	{ "username", "basic authentication (username/password) is" },
	{ "password", "basic authentication (username/password) is" },
};

static int check_user_auth(json_t *doc, size_t i, const char *name, struct err *e)
{
	char path[PATH_BUF], field[64];
	json_t *v;

	for (size_t k = 0; k < sizeof(unsupported_auth) / sizeof(unsupported_auth[0]); k++) {
		snprintf(field, sizeof(field), "user.%s", unsupported_auth[k].field);
		v = jsonx_get(doc, at(path, "users", i, field));
		if (v && !json_is_null(v))
			return err_set(e, -EOPNOTSUPP, "user \"%s\": %s not supported", name,
			               unsupported_auth[k].what);
	}
	return 0;
}

static int load_user_token(json_t *doc, size_t i, const char *base_dir, struct k8s_config *c,
                           struct err *e)
{
	char path[PATH_BUF];
	const char *token;
	struct err le;
	int r = load_path(doc, at(path, "users", i, "user.tokenFile"), base_dir, &c->token_file, e);

	if (r < 0)
		return r;
	if (c->token_file) {
		err_clear(&le);
		r = read_token(c->token_file, &c->token, &le);
		c->token_read_ms = clock_mono_ms();
		return r < 0 ? err_set(e, -EINVAL, "%s: %s", path, le.msg) : 0;
	}
	r = jsonx_string(doc, at(path, "users", i, "user.token"), "", &token, e);
	if (r < 0 || !*token)
		return r;
	if (!token_is_valid(token))
		return err_set(e, -EINVAL, "%s: not a valid bearer token", path);
	c->token = xstrdup(token);
	return 0;
}

static int load_user(json_t *doc, size_t i, const char *name, const char *base_dir,
                     struct k8s_config *c, struct err *e)
{
	char path[PATH_BUF];
	int r = check_user_auth(doc, i, name, e);

	if (r == 0)
		r = load_path(doc, at(path, "users", i, "user.client-certificate"), base_dir,
		              &c->cert_file, e);
	if (r == 0)
		r = load_pem(doc, at(path, "users", i, "user.client-certificate-data"),
		             &c->cert_pem, e);
	if (r == 0)
		r = load_path(doc, at(path, "users", i, "user.client-key"), base_dir, &c->key_file,
		              e);
	if (r == 0)
		r = load_pem(doc, at(path, "users", i, "user.client-key-data"), &c->key_pem, e);
	if (r < 0)
		return r;
	if (!(c->cert_file || c->cert_pem) != !(c->key_file || c->key_pem))
		return err_set(e, -EINVAL,
		               "user \"%s\": a client certificate and a client key go together",
		               name);
	return load_user_token(doc, i, base_dir, c, e);
}

/* The names the selected context refers to. */
struct kc_refs {
	const char *context, *cluster, *user;
	size_t ci, ki, ui;
};

static int select_context(json_t *doc, const struct k8s_config_opts *opts, struct kc_refs *k,
                          struct k8s_config *c, struct err *e)
{
	char path[PATH_BUF];
	const char *ns = "";
	int r = jsonx_string(doc, "current-context", "", &k->context, e);

	if (r < 0)
		return r;
	if (opts->context)
		k->context = opts->context;
	if (!*k->context)
		return err_set(e, -EINVAL,
		               "kubeconfig: no current-context, and no context was given");
	r = find_named(doc, "contexts", k->context, &k->ci, e);
	if (r == -ENOENT)
		return err_set(e, -EINVAL, "context \"%s\" not found", k->context);
	if (r == 0)
		r = req_string(doc, at(path, "contexts", k->ci, "context.cluster"), &k->cluster, e);
	if (r == 0)
		r = jsonx_string(doc, at(path, "contexts", k->ci, "context.user"), "", &k->user, e);
	if (r == 0)
		r = jsonx_string(doc, at(path, "contexts", k->ci, "context.namespace"), "", &ns, e);
	if (r < 0)
		return r;
	c->namespace = xstrdup(*ns ? ns : "default");
	return 0;
}

static int load_doc(json_t *doc, const char *base_dir, const struct k8s_config_opts *opts,
                    struct k8s_config *c, struct err *e)
{
	struct kc_refs k = { 0 };
	int r;

	if (!json_is_object(doc))
		return err_set(e, -EINVAL, "kubeconfig: expected a mapping, got %s",
		               jsonx_type_name(doc));
	r = select_context(doc, opts, &k, c, e);
	if (r < 0)
		return r;
	r = find_named(doc, "clusters", k.cluster, &k.ki, e);
	if (r == -ENOENT)
		return err_set(e, -EINVAL, "context \"%s\": cluster \"%s\" not found", k.context,
		               k.cluster);
	if (r == 0)
		r = load_cluster(doc, k.ki, k.cluster, base_dir, opts, c, e);
	if (r < 0 || !*k.user)
		return r;
	r = find_named(doc, "users", k.user, &k.ui, e);
	if (r == -ENOENT)
		return err_set(e, -EINVAL, "context \"%s\": user \"%s\" not found", k.context,
		               k.user);
	return r < 0 ? r : load_user(doc, k.ui, k.user, base_dir, c, e);
}

/* Zeroes every string value in j: the tree holds tokens and keys. */
static void wipe_strings(json_t *j)
{
	const char *k;
	json_t *v;
	size_t i;

	if (json_is_string(j))
		secure_zero((char *)json_string_value(j), json_string_length(j));
	json_object_foreach (j, k, v) {
		wipe_strings(v);
	}
	json_array_foreach (j, i, v) {
		wipe_strings(v);
	}
}

/* Builds the config from yamlx's documents (consumed). base_dir may be NULL. */
static int from_docs(json_t *docs, const char *base_dir, const struct k8s_config_opts *opts,
                     struct k8s_config **out, struct err *e)
{
	struct k8s_config *c = xcalloc(1, sizeof(*c));
	int r = 0;

	if (json_array_size(docs) != 1)
		r = err_set(e, -EINVAL, "kubeconfig: %zu YAML documents, expected one",
		            json_array_size(docs));
	if (r == 0)
		r = load_doc(json_array_get(docs, 0), base_dir, opts ? opts : &no_opts, c, e);
	if (r == 0)
		*out = c;
	else
		k8s_config_free(c);
	wipe_strings(docs);
	json_decref(docs);
	return r;
}

/* yamlx's verdict on the file's syntax is a bad file (-EINVAL); limits and I/O keep theirs. */
static int yaml_error(int r, const char *prefix, const struct err *le, struct err *e)
{
	if (r == -EPROTO || r == -ERANGE)
		r = -EINVAL;
	return err_set(e, r, "%s%s", prefix, le->msg);
}

/* The directory of a file path ("a/b" → "a", "b" → NULL, "/b" → "/"). */
static char *dir_of(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	if (!slash)
		return NULL;
	return xstrndup(path, slash == path ? 1 : (size_t)(slash - path));
}

int k8s_config_from_kubeconfig(const char *text, size_t len, const struct k8s_config_opts *opts,
                               struct k8s_config **out, struct err *e)
{
	char *base;
	json_t *docs;
	struct err le;
	int r;

	if (len > K8S_KUBECONFIG_MAX)
		return err_set(e, -EMSGSIZE, "kubeconfig: larger than %d bytes",
		               K8S_KUBECONFIG_MAX);
	err_clear(&le);
	r = yamlx_load(text, len, &docs, &le);
	if (r < 0)
		return yaml_error(r, "kubeconfig: ", &le, e);
	base = dir_of(opts ? opts->kubeconfig : NULL);
	r = from_docs(docs, base, opts, out, e);
	free(base);
	return r;
}

/* --- loading ------------------------------------------------------------------------------ */

/* The kubeconfig to read: opts, the first path in $KUBECONFIG, ~/.kube/config; NULL if none. */
static char *kubeconfig_path(const struct k8s_config_opts *o)
{
	const char *env = getenv("KUBECONFIG");
	const char *home = getenv("HOME");

	if (o->kubeconfig)
		return xstrdup(o->kubeconfig);
	env = env ? env + strspn(env, ":") : "";
	if (*env)
		return xstrndup(env, strcspn(env, ":"));
	if (home && *home)
		return xasprintf("%s/.kube/config", home);
	return NULL;
}

static int load_kubeconfig_file(const char *path, const struct k8s_config_opts *o,
                                struct k8s_config **out, struct err *e)
{
	struct k8s_config_opts with_path = *o;
	char *base;
	json_t *docs;
	struct err le;
	int r;

	err_clear(&le);
	r = yamlx_load_file(path, K8S_KUBECONFIG_MAX, &docs, &le);
	if (r < 0)
		return yaml_error(r, "", &le, e);
	with_path.kubeconfig = path;
	base = dir_of(path);
	r = from_docs(docs, base, &with_path, out, e);
	free(base);
	return r;
}

int k8s_config_load(const struct k8s_config_opts *opts, struct k8s_config **out, struct err *e)
{
	const struct k8s_config_opts *o = opts ? opts : &no_opts;
	struct err le;
	char *path;
	int r = -ENOENT;

	err_clear(&le);
	if (o->prefer_in_cluster)
		r = k8s_config_in_cluster(o->sa_dir, out, &le);
	path = r == -ENOENT ? kubeconfig_path(o) : NULL;
	if (path) {
		err_clear(&le);
		r = load_kubeconfig_file(path, o, out, &le);
	}
	if (r == -ENOENT && !o->kubeconfig && !o->prefer_in_cluster) {
		err_clear(&le);
		r = k8s_config_in_cluster(o->sa_dir, out, &le);
		if (r == -ENOENT)
			snprintf(le.msg, sizeof(le.msg),
			         "no kubeconfig at %s, and not in a cluster",
			         path ? path : "$HOME/.kube/config ($HOME unset)");
	}
	free(path);
	return r < 0 ? err_set(e, r, "%s", le.msg) : 0;
}

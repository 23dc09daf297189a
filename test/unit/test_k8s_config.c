/* Unit tests for lib/k8s/config: kubeconfig variants under test/data/k8s_config, the
 * in-cluster service account in a temporary directory, the search order of
 * k8s_config_load, and token rotation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/k8s/config.h"
#include "testutil.h"
#include "unit.h"

#define DATA "test/data/k8s_config/"

/* One line per config, so a case states everything it expects. PEM shows its first line. */
static char *describe(const struct k8s_config *c)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	const char *pems[] = { c->ca_pem, c->cert_pem, c->key_pem };
	char first[3][64];

	for (size_t i = 0; i < 3; i++)
		snprintf(first[i], sizeof(first[i]), "%.*s",
		         pems[i] ? (int)strcspn(pems[i], "\n") : 6, pems[i] ? pems[i] : "(null)");
	buf_printf(&b, "server=%s ca=%s ca_pem=%s cert=%s cert_pem=%s key=%s key_pem=%s ",
	           c->server, c->ca_file ? c->ca_file : "(null)", first[0],
	           c->cert_file ? c->cert_file : "(null)", first[1],
	           c->key_file ? c->key_file : "(null)", first[2]);
	buf_printf(&b, "token=%s token_file=%s ns=%s insecure=%d", c->token ? c->token : "(null)",
	           c->token_file ? c->token_file : "(null)", c->namespace, c->insecure_skip_verify);
	return buf_detach(&b, NULL);
}

static const struct {
	const char *file;
	const char *context;
	bool allow_insecure;
	int rc;
	const char *want; /* describe() on success, else the message */
} kc_cases[] = {
	{ "data.yaml", NULL, false, 0,
	  "server=https://127.0.0.1:6443 ca=(null) ca_pem=-----BEGIN CERTIFICATE----- cert=(null) "
	  "cert_pem=-----BEGIN CERTIFICATE----- key=(null) key_pem=-----BEGIN EC PRIVATE KEY----- "
	  "token=(null) token_file=(null) ns=redis insecure=0" },
	{ "files.yaml", NULL, false, 0,
	  "server=https://k8s.example.com ca=" DATA "ca.crt ca_pem=(null) "
	  "cert=/etc/redis-operator/client.crt cert_pem=(null) key=" DATA "keys/client.key "
	  "key_pem=(null) token=(null) token_file=(null) ns=default insecure=0" },
	{ "token.yaml", NULL, false, 0,
	  "server=http://localhost:8080 ca=(null) ca_pem=(null) cert=(null) cert_pem=(null) "
	  "key=(null) key_pem=(null) token=abc.def-ghi_jkl token_file=(null) ns=default "
	  "insecure=0" },
	{ "tokenfile.yaml", NULL, false, 0,
	  "server=https://10.0.0.1:443 ca=/abs/ca.pem ca_pem=(null) cert=(null) cert_pem=(null) "
	  "key=(null) key_pem=(null) token=token-from-file token_file=" DATA "token.txt "
	  "ns=default insecure=0" },
	{ "wrapped_base64.yaml", NULL, false, 0,
	  "server=https://c:6443 ca=(null) ca_pem=(null) cert=(null) "
	  "cert_pem=-----BEGIN CERTIFICATE----- key=" DATA "k.pem key_pem=(null) token=(null) "
	  "token_file=(null) ns=default insecure=0" },
	{ "two_contexts.yaml", NULL, false, 0,
	  "server=https://dev:6443 ca=(null) ca_pem=(null) cert=(null) cert_pem=(null) key=(null) "
	  "key_pem=(null) token=dev-token token_file=(null) ns=dev-ns insecure=0" },
	{ "two_contexts.yaml", "prod", false, 0,
	  "server=https://prod:6443 ca=(null) ca_pem=(null) cert=(null) cert_pem=(null) key=(null) "
	  "key_pem=(null) token=prod-token token_file=(null) ns=prod-ns insecure=0" },
	{ "no_current_context.yaml", "prod", false, 0,
	  "server=https://prod:6443 ca=(null) ca_pem=(null) cert=(null) cert_pem=(null) key=(null) "
	  "key_pem=(null) token=prod-token token_file=(null) ns=prod-ns insecure=0" },
	{ "insecure.yaml", NULL, true, 0,
	  "server=https://dev:6443 ca=(null) ca_pem=(null) cert=(null) cert_pem=(null) key=(null) "
	  "key_pem=(null) token=(null) token_file=(null) ns=default insecure=1" },
	{ "insecure.yaml", NULL, false, -EPERM,
	  "cluster \"dev\": insecure-skip-tls-verify is refused unless the caller allows "
	  "insecure connections explicitly" },
	{ "insecure_string.yaml", NULL, true, -EINVAL,
	  "clusters[0].cluster.insecure-skip-tls-verify: expected boolean, got string" },
	{ "exec.yaml", NULL, false, -EOPNOTSUPP,
	  "user \"alice\": exec credential plugins are not supported" },
	{ "auth_provider.yaml", NULL, false, -EOPNOTSUPP,
	  "user \"alice\": auth-provider plugins are not supported" },
	{ "basic_auth.yaml", NULL, false, -EOPNOTSUPP,
	  "user \"alice\": basic authentication (username/password) is not supported" },
	{ "bad_base64.yaml", NULL, false, -EINVAL,
	  "users[1].user.client-key-data: invalid base64" },
	{ "bad_ca_base64.yaml", NULL, false, -EINVAL,
	  "clusters[0].cluster.certificate-authority-data: invalid base64" },
	{ "not_pem.yaml", NULL, false, -EINVAL,
	  "users[1].user.client-key-data: does not decode to PEM" },
	{ "cert_without_key.yaml", NULL, false, -EINVAL,
	  "user \"alice\": a client certificate and a client key go together" },
	{ "bad_token.yaml", NULL, false, -EINVAL, "users[1].user.token: not a valid bearer token" },
	{ "missing_tokenfile.yaml", NULL, false, -EINVAL,
	  "users[1].user.tokenFile: " DATA "no-such-token: No such file or directory" },
	{ "two_contexts.yaml", "staging", false, -EINVAL, "context \"staging\" not found" },
	{ "missing_context.yaml", NULL, false, -EINVAL, "context \"staging\" not found" },
	{ "no_current_context.yaml", NULL, false, -EINVAL,
	  "kubeconfig: no current-context, and no context was given" },
	{ "missing_cluster.yaml", NULL, false, -EINVAL,
	  "context \"prod\": cluster \"gone\" not found" },
	{ "missing_user.yaml", NULL, false, -EINVAL, "context \"dev\": user \"nobody\" not found" },
	{ "no_server.yaml", NULL, false, -EINVAL, "clusters[0].cluster.server: required" },
	{ "wrong_type.yaml", NULL, false, -EINVAL, "clusters: expected array, got string" },
	{ "not_a_mapping.yaml", NULL, false, -EINVAL, "kubeconfig: expected a mapping, got array" },
	{ "two_docs.yaml", NULL, false, -EINVAL, "kubeconfig: 2 YAML documents, expected one" },
	{ "bad_yaml.yaml", NULL, false, -EINVAL,
	  DATA "bad_yaml.yaml: line 6, column 9: did not find expected ',' or '}' (while parsing a "
	       "flow mapping at line 5, column 12)" },
	{ "does_not_exist.yaml", NULL, false, -ENOENT,
	  DATA "does_not_exist.yaml: No such file or directory" },
};

START_TEST(kubeconfig_files)
{
	char path[256];
	struct k8s_config_opts o = { .kubeconfig = path,
		                     .context = kc_cases[_i].context,
		                     .allow_insecure = kc_cases[_i].allow_insecure };
	struct k8s_config *c = (struct k8s_config *)1;
	struct err e;
	char *got;
	int r;

	unsetenv("KUBERNETES_SERVICE_HOST"); /* no in-cluster fallback may hide a failure */
	snprintf(path, sizeof(path), DATA "%s", kc_cases[_i].file);
	err_clear(&e);
	r = k8s_config_load(&o, &c, &e);
	ck_assert_msg(r == kc_cases[_i].rc, "%s: rc %s want %s (%s)", path, err_name(r),
	              err_name(kc_cases[_i].rc), e.msg);
	if (r < 0) {
		ck_assert_ptr_eq(c, (struct k8s_config *)1);
		ck_assert_int_eq(e.code, r);
		ck_assert_str_eq(e.msg, kc_cases[_i].want);
		return;
	}
	got = describe(c);
	ck_assert_str_eq(got, kc_cases[_i].want);
	free(got);
	k8s_config_free(c);
}
END_TEST

/* From text, relative references resolve against opts->kubeconfig's directory, or stay. */
START_TEST(from_text_base_dir)
{
	char *text = tu_must_read(DATA "files.yaml", NULL);
	struct k8s_config_opts o = { .kubeconfig = "/srv/kube/config" };
	struct k8s_config *c;

	ck_assert_int_eq(k8s_config_from_kubeconfig(text, strlen(text), NULL, &c, NULL), 0);
	ck_assert_str_eq(c->ca_file, "ca.crt");
	ck_assert_str_eq(c->key_file, "keys/client.key");
	ck_assert_str_eq(c->cert_file, "/etc/redis-operator/client.crt");
	k8s_config_free(c);
	ck_assert_int_eq(k8s_config_from_kubeconfig(text, strlen(text), &o, &c, NULL), 0);
	ck_assert_str_eq(c->ca_file, "/srv/kube/ca.crt");
	ck_assert_str_eq(c->key_file, "/srv/kube/keys/client.key");
	k8s_config_free(c);
	o.kubeconfig = "/config";
	ck_assert_int_eq(k8s_config_from_kubeconfig(text, strlen(text), &o, &c, NULL), 0);
	ck_assert_str_eq(c->ca_file, "/ca.crt");
	k8s_config_free(c);
	free(text);
}
END_TEST

START_TEST(from_text_errors)
{
	struct k8s_config *c = NULL;
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(k8s_config_from_kubeconfig("a: [", 4, NULL, &c, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "kubeconfig: line 2, column 1: did not find expected node content "
	                        "(while parsing a flow node at line 2, column 1)");
	err_clear(&e);
	ck_assert_int_eq(k8s_config_from_kubeconfig("", 0, NULL, &c, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "kubeconfig: 0 YAML documents, expected one");
	err_clear(&e);
	ck_assert_int_eq(k8s_config_from_kubeconfig("x: 1", K8S_KUBECONFIG_MAX + 1, NULL, &c, &e),
	                 -EMSGSIZE);
	ck_assert_str_eq(e.msg, "kubeconfig: larger than 1048576 bytes");
	ck_assert_ptr_null(c);
	k8s_config_free(NULL);
}
END_TEST

/* certificate-authority-data decoding: padding, whitespace and the alphabet. */
static const struct {
	const char *b64;
	const char *pem; /* decoded, or NULL */
	const char *why; /* the reason it was refused, or NULL */
} b64_cases[] = {
	{ "LS0tLS1CRUdJTiBYLS0tLS0K", "-----BEGIN X-----\n", NULL },
	{ "LS0tLS1CRUdJTiBYWS0tLS0tCg==", "-----BEGIN XY-----\n", NULL },
	{ "LS0tLS1CRUdJTiBYWVotLS0tLQo=", "-----BEGIN XYZ-----\n", NULL },
	{ "LS0tLS1C RUdJTiBY\nLS0tLS0K ", "-----BEGIN X-----\n", NULL },
	{ "LS0tLS1CRUdJTiBYWS0tLS0tCg", NULL, "invalid base64" },    /* padding missing */
	{ "LS0tLS1CRUdJTiBYWS0tLS0tCg=", NULL, "invalid base64" },   /* half the padding */
	{ "LS0tLS1CRUdJTiBYWS0tLS0tCg===", NULL, "invalid base64" }, /* too much */
	{ "LS0tLS1CRUdJTiBYWS0tLS0tC===", NULL,
	  "invalid base64" }, /* '=' in the second place of a quad */
	{ "LS0tLS1CRUdJTiBYWS0tLS0tCg==LS0t", NULL, "invalid base64" }, /* data after the padding */
	{ "LS0tLS1CRUdJTiBYWS0tLS0tC=g=", NULL, "invalid base64" },     /* data between padding */
	{ "LS0tLS1CRUdJTiBYWS0tLS0t_g==", NULL, "invalid base64" },     /* base64url alphabet */
	{ "LS0tLS1CRUdJTiBYWS0tLS0t!g==", NULL, "invalid base64" },
	{ "aGVsbG8=", NULL, "does not decode to PEM" },                 /* "hello": not PEM */
	{ "LS0tLS1CRUdJTiBYAC0tLS0K", NULL, "does not decode to PEM" }, /* a NUL byte inside */
	{ "", NULL, NULL },                                             /* empty: as if absent */
};

START_TEST(ca_data_base64)
{
	char *text = xasprintf("current-context: x\n"
	                       "contexts: [{name: x, context: {cluster: c}}]\n"
	                       "clusters: [{name: c, cluster: {server: \"https://c\", "
	                       "certificate-authority-data: \"%s\"}}]\n",
	                       b64_cases[_i].b64);
	struct k8s_config *c = NULL;
	struct err e;
	int r;

	err_clear(&e);
	r = k8s_config_from_kubeconfig(text, strlen(text), NULL, &c, &e);
	if (!b64_cases[_i].why) {
		ck_assert_msg(r == 0, "%s: %s", b64_cases[_i].b64, e.msg);
		if (b64_cases[_i].pem)
			ck_assert_str_eq(c->ca_pem, b64_cases[_i].pem);
		else
			ck_assert_ptr_null(c->ca_pem);
	} else {
		char want[128];

		snprintf(want, sizeof(want), "clusters[0].cluster.certificate-authority-data: %s",
		         b64_cases[_i].why);
		ck_assert_int_eq(r, -EINVAL);
		ck_assert_str_eq(e.msg, want);
	}
	k8s_config_free(c);
	free(text);
}
END_TEST

/* --- in-cluster --------------------------------------------------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
}

/* A service-account directory with a CA, a token and a namespace. free() the result. */
static char *make_sa_dir(void)
{
	char *dir = xstrdup("/tmp/h2-sa-XXXXXX");

	ck_assert_ptr_nonnull(mkdtemp(dir));
	write_file(dir, "ca.crt", "-----BEGIN CERTIFICATE-----\n");
	write_file(dir, "token", "sa-token-1\n");
	write_file(dir, "namespace", "redis-system");
	return dir;
}

static void remove_sa_dir(char *dir)
{
	static const char *const names[] = { "ca.crt", "token", "namespace" };
	char path[512];

	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
	free(dir);
}

static const struct {
	const char *host, *port;
	int rc;
	const char *want; /* server, or the message */
} env_cases[] = {
	{ "10.96.0.1", "443", 0, "https://10.96.0.1:443" },
	{ "kubernetes.default.svc", "6443", 0, "https://kubernetes.default.svc:6443" },
	{ "fd00:10:96::1", "443", 0, "https://[fd00:10:96::1]:443" },
	{ NULL, "443", -ENOENT,
	  "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both "
	  "set" },
	{ "10.96.0.1", NULL, -ENOENT,
	  "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both "
	  "set" },
	{ "", "443", -ENOENT,
	  "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both "
	  "set" },
	{ "10.96.0.1", "https", -EINVAL, "KUBERNETES_SERVICE_PORT: not a port number" },
	{ "10.96.0.1", "0", -EINVAL, "KUBERNETES_SERVICE_PORT: not a port number" },
	{ "10.96.0.1", "65536", -EINVAL, "KUBERNETES_SERVICE_PORT: not a port number" },
	{ "10.96.0.1", "+443", -EINVAL, "KUBERNETES_SERVICE_PORT: not a port number" },
	{ "10.96.0.1", "443x", -EINVAL, "KUBERNETES_SERVICE_PORT: not a port number" },
	{ "evil.com/x", "443", -EINVAL, "KUBERNETES_SERVICE_HOST: not a host name or address" },
	{ "user@host", "443", -EINVAL, "KUBERNETES_SERVICE_HOST: not a host name or address" },
	{ "[::1]", "443", -EINVAL, "KUBERNETES_SERVICE_HOST: not a host name or address" },
};

static void set_env(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

START_TEST(in_cluster_env)
{
	char *dir = make_sa_dir();
	struct k8s_config *c = NULL;
	char ca[512];
	struct err e;
	int r;

	set_env("KUBERNETES_SERVICE_HOST", env_cases[_i].host);
	set_env("KUBERNETES_SERVICE_PORT", env_cases[_i].port);
	err_clear(&e);
	r = k8s_config_in_cluster(dir, &c, &e);
	ck_assert_msg(r == env_cases[_i].rc, "rc %s (%s)", err_name(r), e.msg);
	if (r < 0) {
		ck_assert_ptr_null(c);
		ck_assert_str_eq(e.msg, env_cases[_i].want);
	} else {
		snprintf(ca, sizeof(ca), "%s/ca.crt", dir);
		ck_assert_str_eq(c->server, env_cases[_i].want);
		ck_assert_str_eq(c->ca_file, ca);
		ck_assert_str_eq(c->token, "sa-token-1");
		ck_assert_str_eq(c->namespace, "redis-system");
		ck_assert_ptr_null(c->ca_pem);
		ck_assert_ptr_null(c->cert_file);
		ck_assert(!c->insecure_skip_verify);
	}
	k8s_config_free(c);
	remove_sa_dir(dir);
}
END_TEST

START_TEST(in_cluster_files)
{
	char *dir = make_sa_dir();
	char token_path[512], *big;
	struct k8s_config *c = NULL;
	struct err e;
	FILE *f;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	/* No namespace file and no CA: "default", and the system roots. */
	write_file(dir, "namespace", " \n");
	snprintf(token_path, sizeof(token_path), "%s/ca.crt", dir);
	unlink(token_path);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, NULL), 0);
	ck_assert_str_eq(c->namespace, "default");
	ck_assert_ptr_null(c->ca_file);
	k8s_config_free(c);
	/* A token with a space would break the Authorization header. */
	write_file(dir, "token", "bad token\n");
	err_clear(&e);
	snprintf(token_path, sizeof(token_path), "%s/token", dir);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, &e), -EINVAL);
	ck_assert_str_eq(e.msg + strlen(token_path), ": not a valid bearer token");
	/* A NUL byte, or more than 64 KiB: refused without quoting the file. */
	f = fopen(token_path, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite("abc\0def\n", 1, 8, f), 8);
	fclose(f);
	err_clear(&e);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, &e), -EINVAL);
	ck_assert_str_eq(e.msg + strlen(token_path), ": contains a NUL byte");
	big = xmalloc(64 * 1024 + 2);
	memset(big, 'a', 64 * 1024 + 1);
	big[64 * 1024 + 1] = '\0';
	write_file(dir, "token", big + 1);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, NULL), 0);
	k8s_config_free(c);
	write_file(dir, "token", big);
	err_clear(&e);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, &e), -EMSGSIZE);
	ck_assert_str_eq(e.msg + strlen(token_path), ": larger than 65536 bytes");
	free(big);
	/* No token: not a usable in-cluster environment. */
	unlink(token_path);
	err_clear(&e);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, &e), -ENOENT);
	ck_assert_str_eq(e.msg + strlen(token_path), ": No such file or directory");
	remove_sa_dir(dir);
}
END_TEST

/* --- token rotation ----------------------------------------------------------------------- */

START_TEST(token_rotation)
{
	char *dir = make_sa_dir();
	char token_path[512];
	struct k8s_config *c;
	int64_t t0;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	ck_assert_int_eq(k8s_config_in_cluster(dir, &c, NULL), 0);
	t0 = c->token_read_ms;
	ck_assert_str_eq(k8s_config_token(c, t0), "sa-token-1");
	write_file(dir, "token", "sa-token-2\r\n");
	ck_assert_str_eq(k8s_config_token(c, t0 + K8S_TOKEN_REREAD_MS - 1), "sa-token-1");
	ck_assert_str_eq(k8s_config_token(c, t0 + K8S_TOKEN_REREAD_MS), "sa-token-2");
	ck_assert_int_eq(c->token_read_ms, t0 + K8S_TOKEN_REREAD_MS);
	/* A missing or bad file keeps the last good token, and is tried again later. */
	snprintf(token_path, sizeof(token_path), "%s/token", dir);
	unlink(token_path);
	ck_assert_str_eq(k8s_config_token(c, t0 + 2 * K8S_TOKEN_REREAD_MS), "sa-token-2");
	write_file(dir, "token", "");
	ck_assert_str_eq(k8s_config_token(c, t0 + 3 * K8S_TOKEN_REREAD_MS), "sa-token-2");
	write_file(dir, "token", "sa-token-3");
	ck_assert_str_eq(k8s_config_token(c, t0 + 3 * K8S_TOKEN_REREAD_MS + 1), "sa-token-2");
	ck_assert_str_eq(k8s_config_token(c, t0 + 4 * K8S_TOKEN_REREAD_MS), "sa-token-3");
	k8s_config_free(c);
	remove_sa_dir(dir);
}
END_TEST

START_TEST(token_without_file)
{
	struct k8s_config_opts o = { .kubeconfig = DATA "token.yaml" };
	struct k8s_config *c;

	ck_assert_int_eq(k8s_config_load(&o, &c, NULL), 0);
	ck_assert_str_eq(k8s_config_token(c, 0), "abc.def-ghi_jkl");
	ck_assert_str_eq(k8s_config_token(c, INT64_MAX), "abc.def-ghi_jkl");
	k8s_config_free(c);
	o.kubeconfig = DATA "data.yaml";
	ck_assert_int_eq(k8s_config_load(&o, &c, NULL), 0);
	ck_assert_ptr_null(k8s_config_token(c, INT64_MAX));
	k8s_config_free(c);
}
END_TEST

/* --- search order ------------------------------------------------------------------------- */

enum where { FROM_NONE, FROM_IN_CLUSTER, FROM_EXPLICIT, FROM_ENV, FROM_HOME };

static const struct {
	bool explicit_path; /* opts.kubeconfig = two_contexts.yaml, context prod */
	const char *kubeconfig_env;
	bool home_config;
	bool in_cluster;
	bool prefer_in_cluster;
	int rc;
	enum where want;
} order_cases[] = {
	{ true, DATA "token.yaml", true, true, false, 0, FROM_EXPLICIT },
	{ false, DATA "token.yaml:" DATA "data.yaml", true, true, false, 0, FROM_ENV },
	{ false, "::" DATA "token.yaml", true, false, false, 0, FROM_ENV },
	{ false, "", true, true, false, 0, FROM_HOME },
	{ false, NULL, true, true, false, 0, FROM_HOME },
	{ false, NULL, false, true, false, 0, FROM_IN_CLUSTER },
	{ false, DATA "nothing-here", false, true, false, 0, FROM_IN_CLUSTER },
	{ true, NULL, true, true, true, 0, FROM_IN_CLUSTER },
	{ true, NULL, true, false, true, 0, FROM_EXPLICIT },
	{ false, NULL, true, false, true, 0, FROM_HOME },
	{ false, NULL, false, false, false, -ENOENT, FROM_NONE },
	{ false, NULL, false, false, true, -ENOENT, FROM_NONE },
};

START_TEST(load_order)
{
	char *sa = make_sa_dir();
	char *home = xstrdup("/tmp/h2-home-XXXXXX");
	char kube[512];
	struct k8s_config_opts o = { .sa_dir = sa,
		                     .prefer_in_cluster = order_cases[_i].prefer_in_cluster };
	struct k8s_config *c = NULL;
	static const char *const servers[] = {
		[FROM_IN_CLUSTER] = "https://10.96.0.1:443",
		[FROM_EXPLICIT] = "https://prod:6443",
		[FROM_ENV] = "http://localhost:8080",
		[FROM_HOME] = "https://dev:6443",
	};
	struct err e;
	int r;

	ck_assert_ptr_nonnull(mkdtemp(home));
	snprintf(kube, sizeof(kube), "%s/.kube", home);
	mkdir(kube, 0700);
	snprintf(kube, sizeof(kube), "%s/.kube/config", home);
	if (order_cases[_i].home_config) {
		char *target = realpath(DATA "two_contexts.yaml", NULL);

		ck_assert_int_eq(symlink(target, kube), 0);
		free(target);
	}
	if (order_cases[_i].explicit_path) {
		o.kubeconfig = DATA "two_contexts.yaml";
		o.context = "prod";
	}
	setenv("HOME", home, 1);
	set_env("KUBECONFIG", order_cases[_i].kubeconfig_env);
	set_env("KUBERNETES_SERVICE_HOST", order_cases[_i].in_cluster ? "10.96.0.1" : NULL);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	err_clear(&e);
	r = k8s_config_load(&o, &c, &e);
	ck_assert_msg(r == order_cases[_i].rc, "rc %s (%s)", err_name(r), e.msg);
	if (r == 0)
		ck_assert_str_eq(c->server, servers[order_cases[_i].want]);
	else
		ck_assert_msg(strstr(e.msg, "/.kube/config, and not in a cluster") ||
		                      strstr(e.msg, "/.kube/config: No such file"),
		              "%s", e.msg);
	k8s_config_free(c);
	unlink(kube);
	snprintf(kube, sizeof(kube), "%s/.kube", home);
	rmdir(kube);
	rmdir(home);
	free(home);
	remove_sa_dir(sa);
}
END_TEST

START_TEST(load_explicit_missing_no_fallback)
{
	char *sa = make_sa_dir();
	struct k8s_config_opts o = { .kubeconfig = DATA "nothing-here", .sa_dir = sa };
	struct k8s_config *c = NULL;
	struct err e;

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	err_clear(&e);
	ck_assert_int_eq(k8s_config_load(&o, &c, &e), -ENOENT);
	ck_assert_str_eq(e.msg, DATA "nothing-here: No such file or directory");
	ck_assert_ptr_null(c);
	/* In-cluster errors other than "not in a cluster" are not hidden by the fallback. */
	setenv("KUBERNETES_SERVICE_PORT", "x", 1);
	o.prefer_in_cluster = true;
	o.kubeconfig = DATA "token.yaml";
	ck_assert_int_eq(k8s_config_load(&o, &c, NULL), -EINVAL);
	/* NULL opts: the defaults, here nothing at all. */
	setenv("HOME", "/nonexistent-h2-home", 1);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	ck_assert_int_eq(k8s_config_load(NULL, &c, NULL), -ENOENT);
	ck_assert_ptr_null(c);
	remove_sa_dir(sa);
}
END_TEST

static Suite *k8s_config_suite(void)
{
	Suite *s = suite_create("k8s_config");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, kubeconfig_files, 0, ARRAY_LEN(kc_cases));
	tcase_add_test(tc, from_text_base_dir);
	tcase_add_test(tc, from_text_errors);
	tcase_add_loop_test(tc, ca_data_base64, 0, ARRAY_LEN(b64_cases));
	tcase_add_loop_test(tc, in_cluster_env, 0, ARRAY_LEN(env_cases));
	tcase_add_test(tc, in_cluster_files);
	tcase_add_test(tc, token_rotation);
	tcase_add_test(tc, token_without_file);
	tcase_add_loop_test(tc, load_order, 0, ARRAY_LEN(order_cases));
	tcase_add_test(tc, load_explicit_missing_no_fallback);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(k8s_config_suite)

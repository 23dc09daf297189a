/*
 * x509: self-signed CAs and signed leaves on OpenSSL (see x509.h).
 *
 * Every certificate is built the same way (build()): version 3, a random serial, the
 * validity window, the subject, the issuer, the public key, then the extensions of its
 * kind from a table (exts_ca, exts_server, exts_client) in OpenSSL's config syntax, and
 * a SHA-256 signature by the issuer's key. PEM text goes in and out through memory BIOs;
 * private keys only through secure-heap BIOs, whose memory is wiped when freed.
 *
 * OpenSSL's per-thread error queue is cleared after every failure so that a later,
 * unrelated call does not report a stale error.
 */
#include "x509.h"

#include <errno.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <string.h>

#include "lib/alloc.h"

#define SERIAL_BYTES    16
#define BACKDATE_SECS   300
#define SECONDS_PER_DAY 86400

struct ext {
	int nid;
	const char *value;
};

static const struct ext exts_ca[] = {
	{ NID_basic_constraints, "critical,CA:TRUE,pathlen:0" },
	{ NID_key_usage, "critical,keyCertSign,cRLSign" },
	{ NID_subject_key_identifier, "hash" },
	{ 0, NULL },
};

static const struct ext exts_server[] = {
	{ NID_basic_constraints, "critical,CA:FALSE" },
	{ NID_key_usage, "critical,digitalSignature" },
	{ NID_ext_key_usage, "serverAuth" },
	{ NID_subject_key_identifier, "hash" },
	{ NID_authority_key_identifier, "keyid:always" },
	{ 0, NULL },
};

static const struct ext exts_client[] = {
	{ NID_basic_constraints, "critical,CA:FALSE" },
	{ NID_key_usage, "critical,digitalSignature" },
	{ NID_ext_key_usage, "clientAuth" },
	{ NID_subject_key_identifier, "hash" },
	{ NID_authority_key_identifier, "keyid:always" },
	{ 0, NULL },
};

static const struct ext *const exts_leaf[] = {
	[X509_EKU_SERVER] = exts_server,
	[X509_EKU_CLIENT] = exts_client,
};

static int fail(struct err *e, int code, const char *what)
{
	ERR_clear_error();
	return err_set(e, code, "%s", what);
}

void x509_pair_release(struct x509_pair *p)
{
	if (!p)
		return;
	free(p->cert_pem);
	free_secret(p->key_pem);
	p->cert_pem = p->key_pem = NULL;
}

/* --- PEM in and out ------------------------------------------------------------------ */

/* Never ask for a passphrase: an encrypted key is simply not readable. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return 0;
}

static X509 *cert_read(const char *pem)
{
	BIO *b;
	X509 *x;

	if (!pem || strlen(pem) > X509_PEM_MAX)
		return NULL;
	b = BIO_new_mem_buf(pem, -1);
	x = b ? PEM_read_bio_X509(b, NULL, no_passphrase, NULL) : NULL;
	BIO_free(b);
	return x;
}

static EVP_PKEY *key_read(const char *pem)
{
	BIO *b;
	EVP_PKEY *k;

	if (!pem || strlen(pem) > X509_PEM_MAX)
		return NULL;
	b = BIO_new_mem_buf(pem, -1);
	k = b ? PEM_read_bio_PrivateKey(b, NULL, no_passphrase, NULL) : NULL;
	BIO_free(b);
	return k;
}

/* The BIO's contents as a new string; NULL when empty (key text: free_secret it). */
static char *bio_text(BIO *b)
{
	char *data = NULL;
	long n = BIO_get_mem_data(b, &data);

	return n > 0 && data ? xstrndup(data, (size_t)n) : NULL;
}

static char *cert_pem(X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *s = NULL;

	if (b && PEM_write_bio_X509(b, x) == 1)
		s = bio_text(b);
	BIO_free(b);
	return s;
}

static char *key_pem(EVP_PKEY *k)
{
	BIO *b = BIO_new(BIO_s_secmem());
	char *s = NULL;

	if (b && PEM_write_bio_PrivateKey(b, k, NULL, NULL, 0, NULL, NULL) == 1)
		s = bio_text(b);
	BIO_free(b); /* a secure-heap BIO wipes its memory */
	return s;
}

/* --- building ------------------------------------------------------------------------- */

static int set_serial(X509 *x)
{
	unsigned char raw[SERIAL_BYTES];
	BIGNUM *bn;
	int ok;

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return -1;
	raw[0] &= 0x7f; /* positive */
	raw[0] |= 0x40; /* and never shorter than SERIAL_BYTES */
	bn = BN_bin2bn(raw, sizeof(raw), NULL);
	ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
	BN_free(bn);
	return ok ? 0 : -1;
}

static int set_validity(X509 *x, int days)
{
	if (!X509_gmtime_adj(X509_getm_notBefore(x), -BACKDATE_SECS))
		return -1;
	return X509_time_adj_ex(X509_getm_notAfter(x), days, 0, NULL) ? 0 : -1;
}

/* issuer NULL: self-signed (x is its own issuer in the extension context). */
static int add_exts(X509 *x, X509 *issuer, const struct ext *exts)
{
	X509V3_CTX ctx;

	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	for (size_t i = 0; exts[i].value; i++) {
		X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, exts[i].nid, exts[i].value);
		int ok = ext && X509_add_ext(x, ext, -1) == 1;

		X509_EXTENSION_free(ext);
		if (!ok)
			return -1;
	}
	return 0;
}

/* A certificate for key named cn, signed by issuer_key (issuer NULL: self-signed). */
static X509 *build(EVP_PKEY *key, const char *cn, int days, X509 *issuer, EVP_PKEY *issuer_key,
                   const struct ext *exts)
{
	X509 *x = X509_new();
	X509_NAME *name = x ? X509_get_subject_name(x) : NULL;
	int ok = x && X509_set_version(x, 2) == 1 && set_serial(x) == 0 &&
	         set_validity(x, days) == 0 && X509_set_pubkey(x, key) == 1 &&
	         X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn,
	                                    -1, -1, 0) == 1;

	ok = ok && X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name) == 1;
	ok = ok && add_exts(x, issuer, exts) == 0 && X509_sign(x, issuer_key, EVP_sha256()) > 0;
	if (!ok) {
		X509_free(x);
		return NULL;
	}
	return x;
}

static int check_args(const char *cn, int days, struct err *e)
{
	if (!cn || !*cn)
		return err_set(e, -EINVAL, "cn: empty");
	if (strlen(cn) > X509_CN_MAX)
		return err_set(e, -EINVAL, "cn: longer than %d bytes", X509_CN_MAX);
	if (days < 1 || days > X509_DAYS_MAX)
		return err_set(e, -EINVAL, "days: %d not in 1..%d", days, X509_DAYS_MAX);
	return 0;
}

/* Generates a key, builds and signs the certificate, and writes both as PEM into out. */
static int make(const char *cn, int days, X509 *issuer, EVP_PKEY *issuer_key,
                const struct ext *exts, struct x509_pair *out, struct err *e)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = key ? build(key, cn, days, issuer, issuer_key ? issuer_key : key, exts) : NULL;
	struct x509_pair p = { x ? cert_pem(x) : NULL, x ? key_pem(key) : NULL };
	int rc = 0;

	if (!p.cert_pem || !p.key_pem) {
		x509_pair_release(&p);
		rc = fail(e, -EIO,
		          key ? "cannot build or sign the certificate"
		              : "cannot generate an EC P-256 key");
	} else {
		*out = p;
	}
	X509_free(x);
	EVP_PKEY_free(key);
	return rc;
}

int x509_make_ca(const char *cn, int days, struct x509_pair *out, struct err *e)
{
	int rc = check_args(cn, days, e);

	return rc ? rc : make(cn, days, NULL, NULL, exts_ca, out, e);
}

int x509_issue(const struct x509_pair *ca, const char *cn, int days, enum x509_eku eku,
               struct x509_pair *out, struct err *e)
{
	X509 *cx = NULL;
	EVP_PKEY *ck = NULL;
	int rc = check_args(cn, days, e);

	if (rc)
		return rc;
	if ((unsigned)eku >= sizeof(exts_leaf) / sizeof(exts_leaf[0]))
		return err_set(e, -EINVAL, "eku: %d is not a known usage", (int)eku);
	if (!ca || !(cx = cert_read(ca->cert_pem)))
		rc = fail(e, -EINVAL, "CA certificate: not PEM");
	else if (!(ck = key_read(ca->key_pem)))
		rc = fail(e, -EINVAL, "CA key: not PEM");
	else if (X509_check_private_key(cx, ck) != 1)
		rc = fail(e, -EINVAL, "CA key: does not match the CA certificate");
	else
		rc = make(cn, days, cx, ck, exts_leaf[eku], out, e);
	X509_free(cx);
	EVP_PKEY_free(ck);
	return rc;
}

/* --- reading ------------------------------------------------------------------------------ */

int x509_check_pair(const char *cert, const char *key, struct err *e)
{
	X509 *x = cert_read(cert);
	EVP_PKEY *k = x ? key_read(key) : NULL;
	int rc = 0;

	if (!x)
		rc = fail(e, -EINVAL, "certificate: not PEM");
	else if (!k)
		rc = fail(e, -EINVAL, "key: not PEM (or encrypted)");
	else if (X509_check_private_key(x, k) != 1)
		rc = fail(e, -EINVAL, "key: does not match the certificate");
	X509_free(x);
	EVP_PKEY_free(k);
	return rc;
}

/* One end of the validity window (after: notAfter, else notBefore) in wall ms. */
static int validity_end(const char *pem, bool after, int64_t *wall_ms, struct err *e)
{
	X509 *x = cert_read(pem);
	ASN1_TIME *epoch = ASN1_TIME_set(NULL, 0);
	const ASN1_TIME *t = x ? (after ? X509_get0_notAfter(x) : X509_get0_notBefore(x)) : NULL;
	int days = 0, secs = 0, rc = 0;

	if (!x)
		rc = fail(e, -EINVAL, "certificate: not PEM");
	else if (!epoch || ASN1_TIME_diff(&days, &secs, epoch, t) != 1)
		rc = fail(e, -EINVAL,
		          after ? "certificate: unreadable notAfter"
		                : "certificate: unreadable notBefore");
	else
		*wall_ms = ((int64_t)days * SECONDS_PER_DAY + secs) * 1000;
	ASN1_TIME_free(epoch);
	X509_free(x);
	return rc;
}

int x509_not_after(const char *pem, int64_t *wall_ms, struct err *e)
{
	return validity_end(pem, true, wall_ms, e);
}

int x509_not_before(const char *pem, int64_t *wall_ms, struct err *e)
{
	return validity_end(pem, false, wall_ms, e);
}

int x509_fingerprint(const char *pem, char out[X509_FINGERPRINT_LEN + 1], struct err *e)
{
	static const char hex[] = "0123456789abcdef";
	X509 *x = cert_read(pem);
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int rc = 0;

	if (!x)
		rc = fail(e, -EINVAL, "certificate: not PEM");
	else if (X509_digest(x, EVP_sha256(), md, &n) != 1 || n * 2 != X509_FINGERPRINT_LEN)
		rc = fail(e, -EIO, "certificate: cannot compute its SHA-256");
	for (unsigned int i = 0; !rc && i < n; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	if (!rc)
		out[X509_FINGERPRINT_LEN] = '\0';
	X509_free(x);
	return rc;
}

int x509_der_common_name(const void *der, size_t len, char *out, size_t outlen, struct err *e)
{
	const unsigned char *p = der;
	X509 *x = der && len && len <= X509_PEM_MAX ? d2i_X509(NULL, &p, (long)len) : NULL;
	char cn[X509_CN_MAX + 2];
	int n = -1, rc = 0;

	if (x)
		n = X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn,
		                              sizeof(cn));
	if (!x)
		rc = fail(e, -EINVAL, "certificate: not DER");
	else if (n < 0)
		rc = fail(e, -EINVAL, "certificate: no common name");
	else if ((size_t)n >= outlen || n > X509_CN_MAX)
		rc = err_set(e, -EINVAL, "certificate: common name longer than %zu bytes",
		             outlen ? outlen - 1 : 0);
	else
		memcpy(out, cn, (size_t)n + 1);
	X509_free(x);
	return rc;
}

/*
 * x509: a small private PKI on OpenSSL's EVP API: self-signed CAs and the leaf
 * certificates they sign, all EC P-256 with SHA-256 signatures, as PEM text.
 *
 *   struct x509_pair ca = { 0 }, leaf = { 0 };
 *   x509_make_ca("my-cluster server CA", 3650, &ca, &e);
 *   x509_issue(&ca, "my-cluster instance", 3650, X509_EKU_SERVER, &leaf, &e);
 *   ... leaf.cert_pem, leaf.key_pem ...
 *   x509_pair_release(&leaf);            (the key text is wiped before it is freed)
 *   x509_pair_release(&ca);
 *
 * A CA has basicConstraints CA:TRUE, pathlen:0 (critical), keyUsage keyCertSign and
 * cRLSign (critical) and a subject key identifier. A leaf has CA:FALSE, keyUsage
 * digitalSignature (critical), one extended key usage (serverAuth or clientAuth), the
 * subject and authority key identifiers, no subjectAltName: its peers address it by an
 * IP that changes, so they check the chain, not the name. Serials are 127 random bits;
 * notBefore is 5 minutes in the past (clock skew between the signer and the peers).
 *
 * Keys are unencrypted PKCS#8 PEM ("BEGIN PRIVATE KEY"). Reading PEM never prompts for
 * a passphrase: an encrypted key is an error. Errors: -EINVAL with e naming the argument
 * (bad cn, days, PEM that does not parse, a key that does not match its certificate),
 * -EIO when OpenSSL fails to generate or sign. Messages never quote key material.
 * Outputs are written only on success. Any thread.
 */
#ifndef REDIS_OPERATOR_X509_H
#define REDIS_OPERATOR_X509_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define X509_CN_MAX   64    /* RFC 5280 ub-common-name */
#define X509_DAYS_MAX 36500 /* validity, days */
#define X509_PEM_MAX  (64 * 1024)

/* Extended key usage of a leaf. */
enum x509_eku {
	X509_EKU_SERVER, /* serverAuth */
	X509_EKU_CLIENT, /* clientAuth */
};

/* A certificate and its private key, both PEM text (malloc'd, NUL-terminated). */
struct x509_pair {
	char *cert_pem;
	char *key_pem; /* secret */
};

/* Wipes the key text and frees both; the pair is zeroed. NULL-safe. */
void x509_pair_release(struct x509_pair *p);

/* A new self-signed CA named cn (1..X509_CN_MAX bytes), valid for days (1..X509_DAYS_MAX). */
int x509_make_ca(const char *cn, int days, struct x509_pair *out, struct err *e);
/* A new key and a leaf certificate for it named cn, signed by ca (its PEM pair), with
 * extended key usage eku, valid for days. The leaf may outlive the CA: choose days. */
int x509_issue(const struct x509_pair *ca, const char *cn, int days, enum x509_eku eku,
               struct x509_pair *out, struct err *e);

/* 0 when cert_pem is one PEM certificate and key_pem the private key that matches it;
 * -EINVAL otherwise ("certificate: not PEM", "key: not PEM", "key: does not match the
 * certificate"). */
int x509_check_pair(const char *cert_pem, const char *key_pem, struct err *e);
/* The certificate's notAfter as wall-clock milliseconds since the epoch. */
int x509_not_after(const char *cert_pem, int64_t *wall_ms, struct err *e);
/* Its notBefore, the same way. */
int x509_not_before(const char *cert_pem, int64_t *wall_ms, struct err *e);
/* SHA-256 of the certificate's DER as 64 lower-case hex digits into out (a change
 * detector and what `openssl x509 -fingerprint -sha256` prints, without the colons). */
#define X509_FINGERPRINT_LEN 64
int x509_fingerprint(const char *cert_pem, char out[X509_FINGERPRINT_LEN + 1], struct err *e);
/* The subject's common name of a DER certificate into out (outlen bytes, NUL-terminated):
 * 0, or -EINVAL (not DER, no CN, CN longer than outlen - 1). */
int x509_der_common_name(const void *der, size_t len, char *out, size_t outlen, struct err *e);

#endif

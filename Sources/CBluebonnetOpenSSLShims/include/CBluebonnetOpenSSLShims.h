#ifndef C_BLUEBONNET_OPENSSL_SHIMS_H
#define C_BLUEBONNET_OPENSSL_SHIMS_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/bio.h>
#include <stdint.h>
#include <openssl/x509v3.h>

// One prefixed function per OpenSSL macro or inline function that Swift cannot import.
// No logic: each body is the macro it names.

/// Why: `SSL_set_tlsext_host_name` is a macro over `SSL_ctrl`.
int cbluebonnet_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
/// Why: `SSL_CTX_set_min_proto_version` is a macro over `SSL_CTX_ctrl`.
int cbluebonnet_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
/// Why: `SSL_CTX_set_max_proto_version` is a macro over `SSL_CTX_ctrl`.
int cbluebonnet_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version);
/// Why: `SSL_CTX_set_mode` is a macro over `SSL_CTX_ctrl`.
long cbluebonnet_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
/// Why: `SSL_CTX_set_session_cache_mode` is a macro over `SSL_CTX_ctrl`.
long cbluebonnet_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode);
/// Why: `SSL_CTX_add1_chain_cert` is a macro over `SSL_CTX_ctrl`.
int cbluebonnet_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert);
/// Why: `SSL_OP_NO_RENEGOTIATION` is built with `SSL_OP_BIT`, a macro Swift does not evaluate.
uint64_t cbluebonnet_SSL_OP_NO_RENEGOTIATION(void);
/// Why: `SSL_set_app_data` is a macro over `SSL_set_ex_data`.
int cbluebonnet_SSL_set_app_data(SSL *ssl, void *data);
/// Why: `SSL_get_app_data` is a macro over `SSL_get_ex_data`.
void *cbluebonnet_SSL_get_app_data(const SSL *ssl);
/// Why: `BIO_set_mem_eof_return` is a macro over `BIO_ctrl`.
long cbluebonnet_BIO_set_mem_eof_return(BIO *bio, int value);
/// Why: `sk_X509_num` is a type-safe inline over `OPENSSL_sk_num`.
int cbluebonnet_sk_X509_num(const STACK_OF(X509) *stack);
/// Why: `sk_X509_value` is a type-safe inline over `OPENSSL_sk_value`.
X509 *cbluebonnet_sk_X509_value(const STACK_OF(X509) *stack, int index);
/// Why: `ERR_GET_LIB` is a static inline function.
int cbluebonnet_ERR_GET_LIB(unsigned long code);
/// Why: `ERR_GET_REASON` is a static inline function.
int cbluebonnet_ERR_GET_REASON(unsigned long code);

/// Why: `sk_X509_new_null` is a macro over `OPENSSL_sk_new_null` (server trust's untrusted stack).
STACK_OF(X509) *cbluebonnet_sk_X509_new_null(void);
/// Why: `sk_X509_push` is a macro over `OPENSSL_sk_push` (takes no reference).
int cbluebonnet_sk_X509_push(STACK_OF(X509) *stack, X509 *cert);
/// Why: `sk_X509_free` is a macro over `OPENSSL_sk_free` (frees the stack, not the certificates).
void cbluebonnet_sk_X509_free(STACK_OF(X509) *stack);
/// Why: `sk_X509_pop_free` is a macro over `OPENSSL_sk_pop_free` (frees the stack and drops one
/// reference to each certificate).
void cbluebonnet_sk_X509_pop_free(STACK_OF(X509) *stack);
/// Why: `sk_GENERAL_NAME_num` is a macro over `OPENSSL_sk_num` (subjectAltName entries).
int cbluebonnet_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *names);
/// Why: `sk_GENERAL_NAME_value` is a macro over `OPENSSL_sk_value`.
GENERAL_NAME *cbluebonnet_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *names, int index);

/// Why: `SSL_CTX_set_tlsext_status_type` is a macro over `SSL_CTX_ctrl` (ask for a stapled OCSP response).
long cbluebonnet_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type);
/// Why: `SSL_get_tlsext_status_ocsp_resp` is a macro over `SSL_ctrl` (the stapled OCSP response).
long cbluebonnet_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **response);

#endif

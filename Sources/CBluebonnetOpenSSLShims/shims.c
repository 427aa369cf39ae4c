#include "CBluebonnetOpenSSLShims.h"

int cbluebonnet_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

int cbluebonnet_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

int cbluebonnet_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_max_proto_version(ctx, version);
}

long cbluebonnet_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

long cbluebonnet_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

int cbluebonnet_SSL_CTX_add1_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return (int)SSL_CTX_add1_chain_cert(ctx, cert);
}

uint64_t cbluebonnet_SSL_OP_NO_RENEGOTIATION(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

int cbluebonnet_SSL_set_app_data(SSL *ssl, void *data) {
    return SSL_set_app_data(ssl, data);
}

void *cbluebonnet_SSL_get_app_data(const SSL *ssl) {
    return SSL_get_app_data(ssl);
}

long cbluebonnet_BIO_set_mem_eof_return(BIO *bio, int value) {
    return BIO_set_mem_eof_return(bio, value);
}

int cbluebonnet_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

X509 *cbluebonnet_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

int cbluebonnet_ERR_GET_LIB(unsigned long code) {
    return ERR_GET_LIB(code);
}

int cbluebonnet_ERR_GET_REASON(unsigned long code) {
    return ERR_GET_REASON(code);
}

STACK_OF(X509) *cbluebonnet_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

int cbluebonnet_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) {
    return sk_X509_push(stack, cert);
}

void cbluebonnet_sk_X509_free(STACK_OF(X509) *stack) {
    sk_X509_free(stack);
}

void cbluebonnet_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

int cbluebonnet_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *names) {
    return sk_GENERAL_NAME_num(names);
}

GENERAL_NAME *cbluebonnet_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *names, int index) {
    return sk_GENERAL_NAME_value(names, index);
}

long cbluebonnet_SSL_CTX_set_tlsext_status_type(SSL_CTX *ctx, int type) {
    return SSL_CTX_set_tlsext_status_type(ctx, type);
}

long cbluebonnet_SSL_get_tlsext_status_ocsp_resp(SSL *ssl, const unsigned char **response) {
    return SSL_get_tlsext_status_ocsp_resp(ssl, response);
}

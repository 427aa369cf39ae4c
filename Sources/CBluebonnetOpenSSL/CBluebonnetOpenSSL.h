#ifndef C_BLUEBONNET_OPENSSL_H
#define C_BLUEBONNET_OPENSSL_H

// The system OpenSSL 3 (Debian libssl-dev). Only headers here: macros and inline functions that
// Swift cannot import get one wrapper each in CBluebonnetOpenSSLShims.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/evp.h>
#include <openssl/bio.h>
#include <openssl/ocsp.h>

#endif

internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

/// The one door through which OpenSSL errors come into Swift.
///
/// OpenSSL reports failures through a thread-local queue. Every call that can fail is preceded by
/// `clear()` (so stale entries from an unrelated call never explain this one) and, when it fails,
/// followed by `drain()`, which empties the queue into the thrown ``TLSError``.
enum OpenSSLErrorQueue {
    struct Entry {
        let code: UInt
        let text: String
        var library: Int32 { cbluebonnet_ERR_GET_LIB(code) }
        var reason: Int32 { cbluebonnet_ERR_GET_REASON(code) }
    }

    static func clear() { ERR_clear_error() }

    static func drain() -> [Entry] {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
                ERR_error_string_n(code, buffer.baseAddress, buffer.count)
                return String(cString: buffer.baseAddress!)
            }
            entries.append(Entry(code: code, text: text))
        }
        return entries
    }

    /// An error of `kind` for the failure just reported, with the queue drained into it.
    static func error(_ kind: TLSError.Kind, _ message: String) -> TLSError {
        TLSError(kind, message, openSSLErrors: drain().map(\.text))
    }
}

extension TLSError {
    /// Classifies a failed `SSL_do_handshake`/`SSL_read`/`SSL_write` from the drained queue and the
    /// verification result (`X509_V_OK` unless the peer's chain or name was rejected).
    static func classify(entries: [OpenSSLErrorQueue.Entry], verifyResult: Int, message: String) -> TLSError {
        let texts = entries.map(\.text)
        let sslReasons = entries.filter { $0.library == ERR_LIB_SSL }.map(\.reason)
        if sslReasons.contains(SSL_R_CERTIFICATE_VERIFY_FAILED), verifyResult != Int(X509_V_OK) {
            return TLSError(
                Self.kind(forVerifyResult: verifyResult), message, verifyResult: verifyResult,
                verifyResultDescription: String(cString: X509_verify_cert_error_string(CLong(verifyResult))),
                openSSLErrors: texts)
        }
        for reason in sslReasons {
            switch reason {
            case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION, SSL_R_WRONG_VERSION_NUMBER,
                SSL_R_NO_PROTOCOLS_AVAILABLE, SSL_R_UNSUPPORTED_SSL_VERSION, SSL_R_VERSION_TOO_LOW,
                SSL_R_VERSION_TOO_HIGH:
                return TLSError(.protocolVersion, message, openSSLErrors: texts)
            case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE, SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE,
                SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED,
                SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN, SSL_R_TLSV1_ALERT_UNKNOWN_CA,
                SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
                return TLSError(.badCertificate, message, openSSLErrors: texts)
            case SSL_R_UNEXPECTED_EOF_WHILE_READING:
                return TLSError(.unexpectedEOF, message, openSSLErrors: texts)
            case SSL_R_NO_SHARED_CIPHER, SSL_R_NO_APPLICATION_PROTOCOL:
                return TLSError(.handshakeFailure, message, openSSLErrors: texts)
            case let alert where alert >= SSL_AD_REASON_OFFSET:
                // Any other alert the peer sent (reason = 1000 + alert number).
                return TLSError(.handshakeFailure, message, openSSLErrors: texts)
            default:
                continue
            }
        }
        return TLSError(.other, message, openSSLErrors: texts)
    }

    /// The kind for an `X509_V_ERR_*` verification result.
    static func kind(forVerifyResult code: Int) -> Kind {
        switch Int32(truncatingIfNeeded: code) {
        case X509_V_ERR_CERT_HAS_EXPIRED: return .expired
        case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: return .selfSigned
        case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: return .untrustedRoot
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .incompleteChain
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH: return .hostnameMismatch
        case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE,
            X509_V_ERR_UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY, X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD,
            X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD, X509_V_ERR_INVALID_CA, X509_V_ERR_INVALID_NON_CA, X509_V_ERR_PATH_LENGTH_EXCEEDED,
            X509_V_ERR_NO_ISSUER_PUBLIC_KEY, X509_V_ERR_CERT_CHAIN_TOO_LONG, X509_V_ERR_KEYUSAGE_NO_DIGITAL_SIGNATURE,
            X509_V_ERR_INVALID_PURPOSE, X509_V_ERR_CERT_UNTRUSTED, X509_V_ERR_CERT_REJECTED,
            X509_V_ERR_CERT_REVOKED, X509_V_ERR_KEYUSAGE_NO_CERTSIGN, X509_V_ERR_INVALID_EXTENSION,
            X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION, X509_V_ERR_CA_KEY_TOO_SMALL, X509_V_ERR_EE_KEY_TOO_SMALL,
            X509_V_ERR_CA_MD_TOO_WEAK:
            return .badCertificate
        default: return .other
        }
    }
}

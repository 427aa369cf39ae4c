internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

/// OpenSSL's host and IP matching with the flags the handshake uses, for checking
/// ``HostnameVerifier`` against the enforcement (tests).
enum OpenSSLHostnameCheck {
    /// No partial wildcards (`f*.example.com`), never the subject CN (RFC 9525 §6.3).
    static let flags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)

    /// Whether the first certificate in `source` names `hostname` by OpenSSL's rules.
    static func matches(certificate source: CertificateSource, hostname: String) throws(TLSError) -> Bool {
        let certificate = try OpenSSLLoader.certificates(source)[0]
        let host = HostnameVerifier.normalize(hostname)
        return certificate.withUnsafeX509 { x509 in
            OpenSSLErrorQueue.clear()
            defer { OpenSSLErrorQueue.clear() }
            if IPAddress.parse(host) != nil {
                return X509_check_ip_asc(x509, host, 0) == 1
            }
            return X509_check_host(x509, host, 0, flags, nil) == 1
        }
    }
}

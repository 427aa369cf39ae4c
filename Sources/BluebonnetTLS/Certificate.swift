internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

/// An X.509 certificate as a value: its DER encoding and the fields server-trust evaluation reads.
///
/// The value keeps the decoded certificate (decoding is the expensive part with OpenSSL 3) and
/// reads each field from it when asked, so the certificates of every handshake that a server-trust
/// evaluator sees cost nothing until the evaluator looks at them. Two certificates are equal when
/// their DER encodings are (Alamofire compares `SecCertificate` data the same way when pinning).
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The decoded certificate, shared by copies; verification uses it instead of decoding `der`.
    let owner: X509Owner

    /// The certificate's DER encoding.
    public var der: [UInt8] { owner.der }
    /// The subject name, one line (`/O=Example/CN=example.com`).
    public var subject: String { owner.withUnsafeX509 { Self.name(X509_get_subject_name($0)) } }
    /// The issuer name, in the same form as ``subject``.
    public var issuer: String { owner.withUnsafeX509 { Self.name(X509_get_issuer_name($0)) } }
    /// The `subjectAltName` DNS names, as written (`*.example.com` stays a wildcard).
    public var dnsNames: [String] { alternativeNames.dns }
    /// The `subjectAltName` IP addresses, printed (`127.0.0.1`, `::1`).
    public var ipAddresses: [String] { alternativeNames.ip }
    /// The start of the validity period, in seconds since 1970-01-01 UTC.
    public var notValidBefore: Int { owner.withUnsafeX509 { Self.secondsSinceEpoch(X509_get0_notBefore($0)) ?? 0 } }
    /// The end of the validity period, in seconds since 1970-01-01 UTC.
    public var notValidAfter: Int { owner.withUnsafeX509 { Self.secondsSinceEpoch(X509_get0_notAfter($0)) ?? 0 } }
    /// The subject public key (its DER SubjectPublicKeyInfo and SHA-256, the SPKI pin).
    public var publicKey: PublicKey {
        PublicKey(subjectPublicKeyInfo: owner.withUnsafeX509 { X509Owner.subjectPublicKeyInfo(of: $0) })
    }
    /// Whether the certificate is issued by its own subject and signed by its own key.
    public var isSelfSigned: Bool {
        owner.withUnsafeX509 { x509 in
            OpenSSLErrorQueue.clear()
            defer { OpenSSLErrorQueue.clear() }
            return X509_self_signed(x509, 1) == 1
        }
    }

    /// Parses one DER-encoded certificate.
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when `der` is not a certificate.
    public init(derEncoded der: [UInt8]) throws(TLSError) {
        let owner = try OpenSSLLoader.certificates(.der(der))[0]
        self.init(owner)
    }

    init(_ owner: X509Owner) {
        self.owner = owner
    }

    /// Every certificate in `data`, in order: PEM (any number of `CERTIFICATE` blocks, text around
    /// them ignored) or one DER certificate.
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when `data` holds no certificate.
    public static func certificates(from data: [UInt8]) throws(TLSError) -> [Certificate] {
        let source: CertificateSource = looksLikePEM(data) ? .pem(data) : .der(data)
        return try OpenSSLLoader.certificates(source).map(Certificate.init)
    }

    /// Every certificate in the file at `path`, PEM or DER (see ``certificates(from:)``).
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when the file cannot be read or holds no
    ///   certificate.
    public static func certificates(atPath path: String) throws(TLSError) -> [Certificate] {
        do {
            return try OpenSSLLoader.certificates(.pemFile(path: path)).map(Certificate.init)
        } catch {
            return try OpenSSLLoader.certificates(.derFile(path: path)).map(Certificate.init)
        }
    }

    /// The certificate as a trust-root source (for ``TrustRoots/certificates(_:)``).
    public var source: CertificateSource { .der(der) }

    /// The subject and the SPKI pin.
    public var description: String { "Certificate(\(subject), \(publicKey.pin))" }

    /// Equal DER encodings.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool { lhs.der == rhs.der }

    /// Hashes the DER encoding.
    public func hash(into hasher: inout Hasher) { hasher.combine(der) }

    private static func looksLikePEM(_ data: [UInt8]) -> Bool {
        let marker = Array("-----BEGIN".utf8)
        guard data.count >= marker.count else { return false }
        return (0...(data.count - marker.count)).contains { start in data[start..<(start + marker.count)].elementsEqual(marker) }
    }

    private var alternativeNames: (dns: [String], ip: [String]) {
        owner.withUnsafeX509 { x509 in
            OpenSSLErrorQueue.clear()
            defer { OpenSSLErrorQueue.clear() }
            var dns: [String] = []
            var ip: [String] = []
            if let raw = X509_get_ext_d2i(x509, NID_subject_alt_name, nil, nil) {
                let names = OpaquePointer(raw)
                defer { GENERAL_NAMES_free(names) }
                for index in 0..<cbluebonnet_sk_GENERAL_NAME_num(names) {
                    guard let entry = cbluebonnet_sk_GENERAL_NAME_value(names, index) else { continue }
                    switch entry.pointee.type {
                    case GEN_DNS:
                        dns.append(String(decoding: Self.bytes(entry.pointee.d.dNSName), as: UTF8.self))
                    case GEN_IPADD:
                        ip.append(Self.printIP(Self.bytes(entry.pointee.d.iPAddress)))
                    default:
                        continue
                    }
                }
            }
            return (dns, ip)
        }
    }

    private static func bytes(_ string: UnsafeMutablePointer<ASN1_STRING>?) -> [UInt8] {
        guard let string, let data = ASN1_STRING_get0_data(string) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(string))))
    }

    private static func name(_ name: OpaquePointer?) -> String {
        guard let name, let text = X509_NAME_oneline(name, nil, 0) else { return "" }
        defer { CRYPTO_free(text, #fileID, #line) }
        return String(cString: text)
    }

    /// An ASN.1 time as seconds since the Unix epoch, or nil when it does not convert.
    static func secondsSinceEpoch(_ time: UnsafePointer<ASN1_TIME>?) -> Int? {
        guard let time, let epoch = ASN1_TIME_set(nil, 0) else { return nil }
        defer { ASN1_TIME_free(epoch) }
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, epoch, time) == 1 else { return nil }
        return Int(days) * 86_400 + Int(seconds)
    }

    private static func printIP(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return bytes.map { String($0, radix: 16) }.joined(separator: ":") }
        let groups = stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":")
    }
}

/// A public key as server-trust pinning compares it: the SHA-256 of its DER SubjectPublicKeyInfo
/// (RFC 7469 §2.4, the form of curl's `--pinnedpubkey sha256//…` and OkHttp's `sha256/…` pins).
///
/// Two keys are equal when their hashes are, so a key read from a certificate equals a key made
/// from its pin string.
public struct PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The SHA-256 of the DER SubjectPublicKeyInfo (32 bytes).
    public let sha256: [UInt8]
    /// The DER SubjectPublicKeyInfo, when the key was read from a certificate or key data;
    /// nil for a key made from a pin string.
    public let subjectPublicKeyInfo: [UInt8]?

    /// The key whose DER SubjectPublicKeyInfo is `spki`.
    public init(subjectPublicKeyInfo spki: [UInt8]) {
        self.subjectPublicKeyInfo = spki
        self.sha256 = Digest.sha256(spki)
    }

    /// The key pinned by `pin`: `sha256/` followed by the base64 SHA-256 of the SubjectPublicKeyInfo
    /// (`sha256/AbC…=`, as OkHttp writes them; curl's `sha256//AbC…=` is accepted too).
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when `pin` is not of that form.
    public init(pin: String) throws(TLSError) {
        var body = Substring(pin)
        guard body.hasPrefix("sha256/") else {
            throw TLSError(.invalidConfiguration, "a public-key pin starts with sha256/: \(pin)")
        }
        body = body.dropFirst("sha256/".count)
        if body.hasPrefix("/") { body = body.dropFirst() }
        guard let hash = Base64.decode(String(body)), hash.count == 32 else {
            throw TLSError(.invalidConfiguration, "a public-key pin is the base64 of 32 bytes: \(pin)")
        }
        self.sha256 = hash
        self.subjectPublicKeyInfo = nil
    }

    /// The pin string: `sha256/` and the base64 SHA-256 of the SubjectPublicKeyInfo.
    public var pin: String { "sha256/" + Base64.encode(sha256) }

    /// The pin string.
    public var description: String { pin }

    /// Equal when the SHA-256 hashes are.
    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.sha256 == rhs.sha256 }

    /// Hashes the SHA-256 only.
    public func hash(into hasher: inout Hasher) { hasher.combine(sha256) }
}

/// OpenSSL's SHA-256.
enum Digest {
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        bytes.withUnsafeBytes { raw in
            digest.withUnsafeMutableBufferPointer { out in
                _ = EVP_Digest(raw.baseAddress, raw.count, out.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        return digest
    }
}

/// Standard base64 (RFC 4648 §4, padded) over OpenSSL's block coder.
enum Base64 {
    static func encode(_ bytes: [UInt8]) -> String {
        guard !bytes.isEmpty else { return "" }
        var out = [UInt8](repeating: 0, count: 4 * ((bytes.count + 2) / 3) + 1)
        let length = out.withUnsafeMutableBufferPointer { outBuffer in
            bytes.withUnsafeBufferPointer { EVP_EncodeBlock(outBuffer.baseAddress, $0.baseAddress, Int32($0.count)) }
        }
        return String(decoding: out[0..<Int(max(length, 0))], as: UTF8.self)
    }

    /// The bytes, or nil when `text` is not padded base64.
    static func decode(_ text: String) -> [UInt8]? {
        let input = Array(text.utf8)
        guard !input.isEmpty, input.count % 4 == 0 else { return nil }
        var out = [UInt8](repeating: 0, count: input.count / 4 * 3)
        let length = out.withUnsafeMutableBufferPointer { outBuffer in
            input.withUnsafeBufferPointer { EVP_DecodeBlock(outBuffer.baseAddress, $0.baseAddress, Int32($0.count)) }
        }
        guard length >= 0 else { return nil }
        let padding = input.reversed().prefix(2).prefix(while: { $0 == UInt8(ascii: "=") }).count
        return Array(out[0..<(Int(length) - padding)])
    }
}

import BluebonnetTLS

// The TLS types a session's configuration names (`SessionConfiguration.tls` and what it is built
// from), so `import Bluebonnet` is all a caller writes to trust a private CA, present a client
// certificate or raise the minimum version. The engine's own types (contexts, the engine) stay in
// BluebonnetTLS.

/// How a session's connections negotiate and verify TLS (``SessionConfiguration/tls``); see
/// `TLSConfiguration` in BluebonnetTLS.
public typealias TLSConfiguration = BluebonnetTLS.TLSConfiguration
/// A TLS protocol version (1.2 or 1.3).
public typealias TLSVersion = BluebonnetTLS.TLSVersion
/// Where the certificates a server's chain must lead to come from: the system's bundle or only
/// the certificates given.
public typealias TrustRoots = BluebonnetTLS.TrustRoots
/// One or more X.509 certificates, from a file or from memory.
public typealias CertificateSource = BluebonnetTLS.CertificateSource
/// A private key in PEM, from a file or from memory.
public typealias PrivateKeySource = BluebonnetTLS.PrivateKeySource
/// How much of the server's certificate is checked (full verification by default).
public typealias CertificateVerification = BluebonnetTLS.CertificateVerification
/// The certificate chain and private key a client presents for mutual TLS.
public typealias ClientIdentity = BluebonnetTLS.ClientIdentity

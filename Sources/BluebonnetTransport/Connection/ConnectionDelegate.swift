import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS

/// Receives a ``Connection``'s events, on its event loop.
///
/// Callbacks never run inside a call to a ``Connection`` method: reads, end of stream and drains
/// come from the loop's readiness handling, failure and close from a later loop task. So a
/// callback may call any method of the connection (write, stop reading, close).
public protocol ConnectionDelegate: AnyObject {
    /// Plaintext bytes arrived (decrypted for TLS). Only while reading is on.
    func connection(_ connection: Connection, didRead bytes: ByteBuffer)
    /// The peer finished sending: a TCP FIN, or for TLS its `close_notify` or the end of the TCP
    /// stream at a record boundary (see ``Connection/receivedTLSCloseNotify`` to tell them
    /// apart). No more reads follow; the connection stays open (for writes) until closed.
    func connectionDidReachEndOfStream(_ connection: Connection)
    /// The connection failed (reset, TLS alert or record error…); it is already closed and
    /// ``connectionDidClose(_:)`` follows.
    func connection(_ connection: Connection, didFail error: TransportError)
    /// Every queued byte was written after a write had to wait for the socket (not called when
    /// `Connection.write(_:)` wrote everything at once: check ``Connection/pendingWriteBytes``).
    func connectionDidDrainWrites(_ connection: Connection)
    /// The connection is closed; called exactly once, last. The delegate is released afterwards.
    func connectionDidClose(_ connection: Connection)
}

/// What a TLS connection negotiated and who the peer is.
///
/// The peer's certificates are kept by reference when the connection is made and encoded as DER
/// only when ``peerCertificateChain`` or ``peerPublicKeyInfo`` is first read (for a resumed
/// session, the chain is verified again then): a handshake does not pay for what nobody reads.
public struct TLSInfo: Hashable, Sendable {
    /// The protocol version.
    public var version: TLSVersion?
    /// The cipher suite's OpenSSL name, e.g. `TLS_AES_128_GCM_SHA256`.
    public var cipher: String?
    /// The application protocol the server selected with ALPN (RFC 7301), e.g. `http/1.1`; nil
    /// when it selected none.
    public var alpn: String?
    /// Whether the session was resumed (no full key exchange).
    public var resumed: Bool
    /// The peer's certificates as DER, leaf first (the verified chain when verification ran).
    public var peerCertificateChain: [[UInt8]] {
        get { assignedChain ?? peer.chain }
        set { assignedChain = newValue }
    }
    /// The DER SubjectPublicKeyInfo of the peer's leaf, for key pinning (RFC 7469 §2.4).
    public var peerPublicKeyInfo: [UInt8]? {
        get { assignedPublicKeyInfo ?? peer.publicKeyInfo }
        set { assignedPublicKeyInfo = .some(newValue) }
    }

    /// The handshake's certificates, encoded on first read.
    private let peer: PeerCertificates
    /// Values set through the properties' setters, which replace the handshake's.
    private var assignedChain: [[UInt8]]?
    private var assignedPublicKeyInfo: [UInt8]??

    /// Reads the negotiated values from a finished engine.
    init(engine: TLSEngine) {
        version = engine.negotiatedVersion
        cipher = engine.cipherSuite
        alpn = engine.applicationProtocol
        resumed = engine.isSessionResumed
        peer = engine.peerCertificates
    }

    /// Equal when every public property is.
    public static func == (lhs: TLSInfo, rhs: TLSInfo) -> Bool {
        lhs.version == rhs.version && lhs.cipher == rhs.cipher && lhs.alpn == rhs.alpn && lhs.resumed == rhs.resumed
            && lhs.peerCertificateChain == rhs.peerCertificateChain && lhs.peerPublicKeyInfo == rhs.peerPublicKeyInfo
    }

    /// Hashes every public property.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(cipher)
        hasher.combine(alpn)
        hasher.combine(resumed)
        hasher.combine(peerCertificateChain)
        hasher.combine(peerPublicKeyInfo)
    }
}

/// When each phase of establishing a connection started and ended (clock readings; nil for a
/// phase that did not happen).
package struct ConnectTimes: Hashable, Sendable {
    /// Resolution started (nil for Unix sockets).
    package var dnsStart: MonotonicTime?
    /// Resolution ended.
    package var dnsEnd: MonotonicTime?
    /// The first connection attempt started.
    package var connectStart: MonotonicTime?
    /// The winning attempt connected.
    package var connectEnd: MonotonicTime?
    /// The TLS handshake started (nil without TLS).
    package var tlsStart: MonotonicTime?
    /// The TLS handshake finished.
    package var tlsEnd: MonotonicTime?

    package init() {}
}

/// When each phase of establishing a connection started and ended, and which addresses were tried.
public struct ConnectMetrics: Hashable, Sendable {
    /// When each phase started and ended.
    package var times = ConnectTimes()
    /// The resolved addresses, in the order they would be tried (RFC 8305 §4).
    public var resolvedAddresses: [SocketAddress] = []
    /// Every attempt made, in order, with its error (nil for the winner and abandoned ones).
    public var attempts: [TransportError.Attempt] = []

    /// The addresses tried, in order.
    public var addressesTried: [SocketAddress] { attempts.map(\.address) }

    /// Empty metrics.
    public init() {}
}

import BluebonnetTLS
import BluebonnetTransport

/// Timing, byte counts and connection facts of one exchange on the wire (Bluebonnet's
/// `URLSessionTaskTransactionMetrics`).
///
/// A request has one transaction per exchange it made: each redirect followed, each retry, the
/// answer to a `Basic` challenge and the one silent replay on a fresh connection (after a reused
/// connection failed before any response byte) each add one. A transaction that failed before it
/// got a connection (the lease failed) has no connection facts and no instants after ``start``
/// but ``end``.
///
/// Instants are `ContinuousClock.Instant`s — monotonic, comparable, and cheap to read on the event
/// loop. They are not wall-clock dates: compare them with each other (`a.duration(to: b)`), not
/// with a calendar. The phase instants of connection set-up (DNS, connect, TLS) are set only when
/// the transaction opened a new connection; a reused connection leaves them nil.
public struct TransactionMetrics: Sendable, Hashable {
    // MARK: Instants

    /// The transaction began: the pool was asked for a connection.
    public var start: ContinuousClock.Instant
    /// The pool handed a connection over; `start` to here is the time queued for a connection
    /// (including DNS, connect and TLS for a new one). Nil when the lease failed.
    public var leaseEnd: ContinuousClock.Instant?
    /// Name resolution started (a new connection over TCP only).
    public var dnsStart: ContinuousClock.Instant?
    /// Name resolution ended.
    public var dnsEnd: ContinuousClock.Instant?
    /// The first connection attempt started (a new connection only).
    public var connectStart: ContinuousClock.Instant?
    /// The winning attempt connected.
    public var connectEnd: ContinuousClock.Instant?
    /// The TLS handshake started (a new TLS connection only).
    public var tlsStart: ContinuousClock.Instant?
    /// The TLS handshake finished.
    public var tlsEnd: ContinuousClock.Instant?
    /// The whole request — head and body — had been written to the socket. Nil when the exchange
    /// ended before (a failure, or a response that came before the body was sent).
    public var requestSent: ContinuousClock.Instant?
    /// The first byte of the response arrived (of an informational `1xx` one, if one came first).
    public var firstResponseByte: ContinuousClock.Instant?
    /// The exchange ended: the response was read to its end, or it failed.
    public var end: ContinuousClock.Instant

    // MARK: Bytes

    /// Bytes of the request head (request line and fields) written.
    public var requestHeadBytes: Int
    /// Bytes of the request body written, with chunked framing when the body was chunked.
    public var requestBodyBytes: Int
    /// Bytes of the response heads received (informational heads included).
    public var responseHeadBytes: Int
    /// Bytes of the response body as received, after de-chunking and before content decoding.
    public var responseBodyBytesEncoded: Int
    /// Bytes of the response body after content decoding (`gzip`, `deflate`); equal to
    /// ``responseBodyBytesEncoded`` when the body was not coded or decoding is off.
    public var responseBodyBytesDecoded: Int

    // MARK: Connection

    /// Whether the connection had carried an earlier request (came from the pool's idle set).
    public var isReusedConnection: Bool
    /// The server's address as text (`127.0.0.1:8080`, `[::1]:443`), or nil without a connection.
    public var remoteAddress: String?
    /// Our side's address as text, or nil without a connection.
    public var localAddress: String?
    /// The negotiated TLS version, nil for plain HTTP.
    public var tlsVersion: TLSVersion?
    /// The negotiated cipher suite's OpenSSL name (`TLS_AES_128_GCM_SHA256`), nil for plain HTTP.
    public var tlsCipher: String?
    /// The final response's status code, nil when no final head arrived.
    public var status: Int?
    /// The request sent (after adapters), when the Session layer knows it.
    public var request: HTTPRequest?
    /// Where the response came from: the network (the default), or the session's ``URLCache``
    /// without a network exchange (``ResourceFetchType/localCache``; Foundation's
    /// `resourceFetchType`).
    public var resourceFetchType: ResourceFetchType = .networkLoad
    /// What the session's ``URLCache`` did for this transaction, or nil when the request did not
    /// consult one.
    public var cacheStatus: CacheStatus?

    /// Where a transaction's response came from: Foundation's
    /// `URLSessionTaskMetrics.ResourceFetchType`.
    public enum ResourceFetchType: Int, Sendable, Hashable {
        /// Not known.
        case unknown = 0
        /// The network.
        case networkLoad = 1
        /// A server push (HTTP/2; never on Bluebonnet's HTTP/1.1).
        case serverPush = 2
        /// The local cache, without a network exchange.
        case localCache = 3
    }

    /// Metrics with only `start` and `end` set and every count zero.
    public init(start: ContinuousClock.Instant, end: ContinuousClock.Instant) {
        self.start = start
        self.end = end
        requestHeadBytes = 0
        requestBodyBytes = 0
        responseHeadBytes = 0
        responseBodyBytesEncoded = 0
        responseBodyBytesDecoded = 0
        isReusedConnection = false
    }

    // MARK: Durations

    /// Time queued for a connection: `start` to ``leaseEnd`` (DNS, connect and TLS included for a
    /// new connection).
    public var leaseDuration: Duration? { leaseEnd.map { start.duration(to: $0) } }
    /// Time resolving the name.
    public var dnsDuration: Duration? { Self.span(dnsStart, dnsEnd) }
    /// Time connecting (the winning attempt and any earlier ones).
    public var connectDuration: Duration? { Self.span(connectStart, connectEnd) }
    /// Time in the TLS handshake.
    public var tlsDuration: Duration? { Self.span(tlsStart, tlsEnd) }
    /// Time from the request being sent to the first response byte (the server's think time).
    public var waitDuration: Duration? { Self.span(requestSent, firstResponseByte) }
    /// The whole transaction: `start` to `end`.
    public var duration: Duration { start.duration(to: end) }
    /// All bytes written.
    public var bytesSent: Int { requestHeadBytes + requestBodyBytes }
    /// All bytes received (heads and body as received).
    public var bytesReceived: Int { responseHeadBytes + responseBodyBytesEncoded }

    private static func span(_ from: ContinuousClock.Instant?, _ to: ContinuousClock.Instant?) -> Duration? {
        guard let from, let to else { return nil }
        return from.duration(to: to)
    }

    /// Copies the connection's facts (and its set-up instants when it is new).
    mutating func record(connection: Connection, isReused: Bool) {
        isReusedConnection = isReused
        (remoteAddress, localAddress) = connection.addressDescriptions
        tlsVersion = connection.tls?.version
        tlsCipher = connection.tls?.cipher
        guard !isReused else { return }
        let setUp = connection.metrics
        dnsStart = setUp.dnsStart
        dnsEnd = setUp.dnsEnd
        connectStart = setUp.connectStart
        connectEnd = setUp.connectEnd
        tlsStart = setUp.tlsStart
        tlsEnd = setUp.tlsEnd
    }
}

extension TransactionMetrics: CustomStringConvertible {
    /// One line: status, reuse, address, phase durations and bytes, e.g.
    /// `200 new 127.0.0.1:8080 lease 1.2 ms (connect 0.3 ms) wait 0.4 ms total 2.1 ms; sent 80 B, received 120 B`.
    public var description: String {
        var parts: [String] = [status.map(String.init) ?? "—", isReusedConnection ? "reused" : "new"]
        if let remoteAddress { parts.append(remoteAddress) }
        if let tlsVersion { parts.append("\(tlsVersion)") }
        if let lease = leaseDuration {
            var phases: [String] = []
            if let dns = dnsDuration { phases.append("dns \(ResponseMetrics.Timeline.format(dns))") }
            if let connect = connectDuration { phases.append("connect \(ResponseMetrics.Timeline.format(connect))") }
            if let tls = tlsDuration { phases.append("tls \(ResponseMetrics.Timeline.format(tls))") }
            parts.append("lease \(ResponseMetrics.Timeline.format(lease))" + (phases.isEmpty ? "" : " (\(phases.joined(separator: ", ")))"))
        }
        if let wait = waitDuration { parts.append("wait \(ResponseMetrics.Timeline.format(wait))") }
        parts.append("total \(ResponseMetrics.Timeline.format(duration));")
        parts.append("sent \(bytesSent) B, received \(bytesReceived) B")
        return parts.joined(separator: " ")
    }
}

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

    /// The instants as the library records them: clock readings of a fixed layout (see
    /// `MonotonicTime`), so that copying metrics needs no value-witness calls. The public
    /// properties below read and write these.
    package struct Times: Sendable, Hashable {
        package var start: MonotonicTime
        package var leaseEnd: MonotonicTime?
        /// The connection's set-up (a new connection only).
        package var setUp = ConnectTimes()
        package var requestSent: MonotonicTime?
        package var firstResponseByte: MonotonicTime?
        package var end: MonotonicTime

        init(start: MonotonicTime, end: MonotonicTime) {
            self.start = start
            self.end = end
        }
    }

    /// The instants (the public properties of this section are views of these).
    package var times: Times

    /// The transaction began: the pool was asked for a connection.
    public var start: ContinuousClock.Instant {
        get { times.start.instant }
        set { times.start = MonotonicTime(newValue) }
    }
    /// The pool handed a connection over; `start` to here is the time queued for a connection
    /// (including DNS, connect and TLS for a new one). Nil when the lease failed.
    public var leaseEnd: ContinuousClock.Instant? {
        get { times.leaseEnd?.instant }
        set { times.leaseEnd = newValue.map(MonotonicTime.init) }
    }
    /// Name resolution started (a new connection over TCP only).
    public var dnsStart: ContinuousClock.Instant? {
        get { times.setUp.dnsStart?.instant }
        set { times.setUp.dnsStart = newValue.map(MonotonicTime.init) }
    }
    /// Name resolution ended.
    public var dnsEnd: ContinuousClock.Instant? {
        get { times.setUp.dnsEnd?.instant }
        set { times.setUp.dnsEnd = newValue.map(MonotonicTime.init) }
    }
    /// The first connection attempt started (a new connection only).
    public var connectStart: ContinuousClock.Instant? {
        get { times.setUp.connectStart?.instant }
        set { times.setUp.connectStart = newValue.map(MonotonicTime.init) }
    }
    /// The winning attempt connected.
    public var connectEnd: ContinuousClock.Instant? {
        get { times.setUp.connectEnd?.instant }
        set { times.setUp.connectEnd = newValue.map(MonotonicTime.init) }
    }
    /// The TLS handshake started (a new TLS connection only).
    public var tlsStart: ContinuousClock.Instant? {
        get { times.setUp.tlsStart?.instant }
        set { times.setUp.tlsStart = newValue.map(MonotonicTime.init) }
    }
    /// The TLS handshake finished.
    public var tlsEnd: ContinuousClock.Instant? {
        get { times.setUp.tlsEnd?.instant }
        set { times.setUp.tlsEnd = newValue.map(MonotonicTime.init) }
    }
    /// The whole request — head and body — had been written to the socket. Nil when the exchange
    /// ended before (a failure, or a response that came before the body was sent).
    public var requestSent: ContinuousClock.Instant? {
        get { times.requestSent?.instant }
        set { times.requestSent = newValue.map(MonotonicTime.init) }
    }
    /// The first byte of the response arrived (of an informational `1xx` one, if one came first).
    public var firstResponseByte: ContinuousClock.Instant? {
        get { times.firstResponseByte?.instant }
        set { times.firstResponseByte = newValue.map(MonotonicTime.init) }
    }
    /// The exchange ended: the response was read to its end, or it failed.
    public var end: ContinuousClock.Instant {
        get { times.end.instant }
        set { times.end = MonotonicTime(newValue) }
    }

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
        self.init(start: MonotonicTime(start), end: MonotonicTime(end))
    }

    /// Metrics with only `start` and `end` set and every count zero.
    package init(start: MonotonicTime, end: MonotonicTime) {
        times = Times(start: start, end: end)
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
    public var leaseDuration: Duration? { times.leaseEnd.map { times.start.duration(to: $0) } }
    /// Time resolving the name.
    public var dnsDuration: Duration? { Self.span(times.setUp.dnsStart, times.setUp.dnsEnd) }
    /// Time connecting (the winning attempt and any earlier ones).
    public var connectDuration: Duration? { Self.span(times.setUp.connectStart, times.setUp.connectEnd) }
    /// Time in the TLS handshake.
    public var tlsDuration: Duration? { Self.span(times.setUp.tlsStart, times.setUp.tlsEnd) }
    /// Time from the request being sent to the first response byte (the server's think time).
    public var waitDuration: Duration? { Self.span(times.requestSent, times.firstResponseByte) }
    /// The whole transaction: `start` to `end`.
    public var duration: Duration { times.start.duration(to: times.end) }
    /// All bytes written.
    public var bytesSent: Int { requestHeadBytes + requestBodyBytes }
    /// All bytes received (heads and body as received).
    public var bytesReceived: Int { responseHeadBytes + responseBodyBytesEncoded }

    private static func span(_ from: MonotonicTime?, _ to: MonotonicTime?) -> Duration? {
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
        times.setUp = connection.metrics.times
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

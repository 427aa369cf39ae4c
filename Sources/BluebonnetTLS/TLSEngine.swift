import BluebonnetCore
internal import CBluebonnetOpenSSL
internal import CBluebonnetOpenSSLShims

/// One TLS connection as a sans-I/O state machine: ciphertext in, plaintext out, and back.
///
/// The engine owns an OpenSSL `SSL` over two memory BIOs and knows no socket. The I/O shell feeds
/// it what the socket received (``feedCiphertext(_:)``), drives it (``handshake()``,
/// ``readPlaintext(into:)``, ``writePlaintext(_:)``, ``shutdown()``), and **after every call**
/// sends what ``takeCiphertext()`` returns — including after a thrown error, which may have queued
/// an alert for the peer.
///
/// Not `Sendable`: one engine lives on one event-loop thread and is used without locks.
///
/// ```swift
/// let engine = try TLSEngine(context: context, serverName: "example.com", port: 443)
/// while try engine.handshake() != .complete {
///     if let out = engine.takeCiphertext() { send(out) }
///     engine.feedCiphertext(receive())
/// }
/// ```
public final class TLSEngine {
    /// The state of the handshake after a call to ``handshake()``.
    public enum HandshakeState: Sendable, Hashable {
        /// The handshake is done; application data can flow.
        case complete
        /// Send what ``takeCiphertext()`` returns, then feed more ciphertext from the peer.
        case wantRead
        /// Send what ``takeCiphertext()`` returns, then call ``handshake()`` again.
        case wantWrite
    }

    /// The outcome of ``readPlaintext(into:)``.
    public enum ReadResult: Sendable, Hashable {
        /// This many plaintext bytes were appended to the buffer.
        case bytes(Int)
        /// No plaintext is available until more ciphertext is fed.
        case wantRead
        /// The peer closed the TLS stream: `cleanShutdown` is true when it sent `close_notify`, false
        /// when the transport ended without it (a possible truncation: trust only data whose end
        /// the application protocol framed, RFC 8446 §6.1).
        case closed(cleanShutdown: Bool)
    }

    /// The outcome of ``shutdown()``.
    public enum ShutdownState: Sendable, Hashable {
        /// Our `close_notify` is queued (send ``takeCiphertext()``); the peer's has not arrived.
        case closeNotifySent
        /// Both `close_notify` alerts have been exchanged.
        case complete
    }

    /// The context this engine was made from (kept alive by the engine).
    public let context: TLSContext
    private let ssl: OpaquePointer
    /// Owned by `ssl` (`SSL_set_bio` transfers them); freed by `SSL_free`.
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    private let sessionKey: TLSContext.SessionKey?
    /// Whether `feedEndOfStream()` was called.
    private var transportEnded = false
    /// How reading ended (close, truncation or failure), once it has; repeated to later reads.
    private var readEnd: Result<ReadResult, TLSError>?
    /// The host (normalized) that OpenSSL's verification checks the leaf against, or nil.
    private(set) var verifiedHost: String?
    /// Whether `handshake()` has returned `.complete`.
    public private(set) var isHandshakeComplete = false
    /// Storage for ``takeCiphertext()``, reused while nobody else holds it.
    private var outgoing = ByteBuffer()

    /// A client engine for `serverName`:`port`.
    ///
    /// Sends SNI with `serverName` unless it is an IP literal (RFC 6066 §3), and, with
    /// ``CertificateVerification/fullVerification``, requires the peer's leaf to name it (DNS or IP
    /// SAN, see ``HostnameVerifier``). `serverName` may carry a trailing dot or IPv6 brackets;
    /// internationalised names must already be A-labels (`xn--…`, RFC 5890), as URL parsing makes them.
    /// Offers the session cached for (`serverName`, `port`) when resumption is on. Cheap; safe on
    /// an event-loop thread.
    ///
    /// - Throws: ``TLSError/Kind/invalidConfiguration`` when `context` is a server context or
    ///   `serverName` is empty or not printable ASCII.
    public init(context: TLSContext, serverName: String, port: Int) throws(TLSError) {
        guard !context.isServer else {
            throw TLSError(.invalidConfiguration, "a client engine needs a client TLSContext")
        }
        let host = HostnameVerifier.normalize(serverName)
        guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw TLSError(
                .invalidConfiguration,
                "server name \"\(serverName)\" is not an ASCII host name (internationalised names must be A-labels)")
        }
        let configuration = context.configuration ?? .default
        let key = configuration.sessionResumption ? TLSContext.SessionKey(host: host.lowercased(), port: port) : nil
        (self.ssl, self.readBIO, self.writeBIO) = try Self.makeSSL(context)
        self.context = context
        self.sessionKey = key
        SSL_set_connect_state(ssl)
        _ = cbluebonnet_SSL_set_app_data(ssl, Unmanaged.passUnretained(self).toOpaque())

        OpenSSLErrorQueue.clear()
        let isIP = IPAddress.isLiteral(host)
        if !isIP, cbluebonnet_SSL_set_tlsext_host_name(ssl, host) != 1 {
            throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot set SNI \(host)")
        }
        // With `.none` the handshake does not stop on a failed verification, but OpenSSL still
        // verifies (host included) and records the result: the server-trust evaluators read it
        // (`ServerTrust.validatedChain(forHost:)`) instead of verifying again.
        if configuration.certificateVerification != .noHostnameVerification {
            let parameters = SSL_get0_param(ssl)
            let ok: Int32
            if isIP {
                ok = X509_VERIFY_PARAM_set1_ip_asc(parameters, host)
            } else {
                X509_VERIFY_PARAM_set_hostflags(parameters, OpenSSLHostnameCheck.flags)
                ok = X509_VERIFY_PARAM_set1_host(parameters, host, 0)
            }
            guard ok == 1 else {
                throw OpenSSLErrorQueue.error(.invalidConfiguration, "cannot verify against host \(host)")
            }
            verifiedHost = host
        }
        if let key, let session = context.takeSession(for: key) {
            OpenSSLErrorQueue.clear()
            if session.withUnsafeSession({ SSL_set_session(ssl, $0) }) != 1 {
                // Not fatal: a full handshake follows.
                OpenSSLErrorQueue.clear()
            }
        }
    }

    /// A server engine **for tests and fault servers only** (`package` access), from a server
    /// context (`TLSContext(serverCertificateChain:privateKey:…)`).
    package init(serverContext context: TLSContext) throws(TLSError) {
        guard context.isServer else {
            throw TLSError(.invalidConfiguration, "a server engine needs a server TLSContext")
        }
        (self.ssl, self.readBIO, self.writeBIO) = try Self.makeSSL(context)
        self.context = context
        self.sessionKey = nil
        SSL_set_accept_state(ssl)
        _ = cbluebonnet_SSL_set_app_data(ssl, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if isHandshakeComplete {
            // SSL_free would otherwise treat a connection that never sent close_notify as "bad"
            // and make its session non-resumable. Abandoning a finished connection without
            // close_notify (usual for HTTP) must not cost the next handshake its resumption
            // (RFC 5246 §7.2.1); fatal errors already removed their session when the alert went out.
            SSL_set_shutdown(ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN)
        }
        SSL_free(ssl)
    }

    func withUnsafeSSL<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R { try body(ssl) }

    private static func makeSSL(_ context: TLSContext) throws(TLSError) -> (OpaquePointer, OpaquePointer, OpaquePointer) {
        OpenSSLErrorQueue.clear()
        guard let ssl = context.withUnsafeContext({ SSL_new($0) }) else {
            throw OpenSSLErrorQueue.error(.other, "SSL_new failed")
        }
        guard let readBIO = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw OpenSSLErrorQueue.error(.other, "BIO_new failed")
        }
        guard let writeBIO = BIO_new(BIO_s_mem()) else {
            BIO_free(readBIO)
            SSL_free(ssl)
            throw OpenSSLErrorQueue.error(.other, "BIO_new failed")
        }
        // An empty read BIO means "no data yet" (retry), not end of stream, until feedEndOfStream().
        _ = cbluebonnet_BIO_set_mem_eof_return(readBIO, -1)
        SSL_set_bio(ssl, readBIO, writeBIO)
        return (ssl, readBIO, writeBIO)
    }

    /// The engine whose `SSL` this is (for OpenSSL callbacks).
    static func engine(of ssl: OpaquePointer) -> TLSEngine? {
        guard let data = cbluebonnet_SSL_get_app_data(ssl) else { return nil }
        return Unmanaged<TLSEngine>.fromOpaque(data).takeUnretainedValue()
    }

    /// The new-session callback's landing: caches the session under this engine's origin.
    func sessionArrived(_ session: SessionOwner) -> Bool {
        guard let sessionKey else { return false }
        context.storeSession(session, for: sessionKey)
        return true
    }

    // MARK: Ciphertext in and out

    /// Hands the engine ciphertext received from the peer (copied into the read BIO).
    public func feedCiphertext(_ bytes: ByteBuffer) {
        bytes.withUnsafeReadableBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            _ = BIO_write(readBIO, base, Int32(raw.count))
        }
    }

    /// Tells the engine the transport reached end of stream: once the fed ciphertext is consumed,
    /// reads report ``ReadResult/closed(cleanShutdown:)`` (false unless `close_notify` came first)
    /// and a handshake in progress fails with ``TLSError/Kind/unexpectedEOF``.
    public func feedEndOfStream() {
        transportEnded = true
        _ = cbluebonnet_BIO_set_mem_eof_return(readBIO, 0)
    }

    /// Whether a read could produce something now: ciphertext fed and not yet decrypted, decrypted
    /// bytes not yet read, or an end of stream (the transport's or the TLS stream's) not yet
    /// reported. When false, ``readPlaintext(into:)`` returns ``ReadResult/wantRead`` at once, so an
    /// I/O shell resuming reads need not schedule one.
    public var hasBufferedInput: Bool {
        readEnd != nil || transportEnded || BIO_ctrl_pending(readBIO) > 0 || SSL_has_pending(ssl) != 0
    }

    /// The ciphertext to send to the peer, or nil when there is none. Call after every other call.
    ///
    /// The returned buffer's storage is reused by the next call once nobody else holds it (the
    /// usual case: the socket took the bytes at once and the caller dropped the buffer), so a
    /// keep-alive request allocates no buffer for its ciphertext. Value semantics are unchanged: a
    /// buffer still held is never written to.
    public func takeCiphertext() -> ByteBuffer? {
        let pending = Int(BIO_ctrl_pending(writeBIO))
        guard pending > 0 else { return nil }
        // Allocates only when the last buffer is still held (queued behind a full socket).
        outgoing.clear()
        _ = outgoing.withUnsafeMutableWritableBytes(minimumWritableBytes: pending) { raw in
            Int(max(0, BIO_read(writeBIO, raw.baseAddress, Int32(pending))))
        }
        let ciphertext = outgoing
        if outgoing.capacity > Self.retainedCiphertextCapacity {
            // A large write's storage goes with its bytes: an idle connection keeps little.
            outgoing = ByteBuffer()
        }
        return ciphertext
    }

    /// The largest ciphertext storage kept for reuse between ``takeCiphertext()`` calls: a few
    /// full TLS records (16 KiB of plaintext each).
    static let retainedCiphertextCapacity = 64 * 1024

    // MARK: Handshake

    /// Starts or continues the handshake.
    ///
    /// - Returns: ``HandshakeState/complete`` once done (calling again is harmless), otherwise what
    ///   the engine waits for. Send ``takeCiphertext()`` in every case.
    /// - Throws: ``TLSError`` when the handshake failed (certificate rejected, alert from the peer,
    ///   no common version…). The engine is then unusable, but ``takeCiphertext()`` may hold an
    ///   alert to send before closing.
    public func handshake() throws(TLSError) -> HandshakeState {
        if isHandshakeComplete { return .complete }
        OpenSSLErrorQueue.clear()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            return .complete
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN:
            throw OpenSSLErrorQueue.error(.unexpectedEOF, "the peer closed the connection during the handshake")
        case let code: throw failure(code, "handshake")
        }
    }

    private func failure(_ sslError: Int32, _ operation: String) -> TLSError {
        let entries = OpenSSLErrorQueue.drain()
        let verifyResult = Int(SSL_get_verify_result(ssl))
        if sslError == SSL_ERROR_SYSCALL && entries.isEmpty {
            // With memory BIOs there is no syscall: this is an end of stream OpenSSL did not expect.
            return TLSError(.unexpectedEOF, "\(operation): the transport ended without close_notify")
        }
        return TLSError.classify(entries: entries, verifyResult: verifyResult, message: operation)
    }

    // MARK: Application data

    /// Decrypts what it can into `buffer` (appended at its writer index).
    ///
    /// Once the handshake is done, OpenSSL is not called when nothing is buffered
    /// (``hasBufferedInput``): neither a read that could only answer "want read" nor room taken
    /// in `buffer`.
    ///
    /// - Returns: ``ReadResult/bytes(_:)`` with the count appended (at least 1),
    ///   ``ReadResult/wantRead`` when more ciphertext is needed, or ``ReadResult/closed(cleanShutdown:)``
    ///   once the peer closed (after any bytes before the close were returned).
    /// - Throws: ``TLSError`` on a protocol failure or an alert from the peer.
    public func readPlaintext(into buffer: inout ByteBuffer) throws(TLSError) -> ReadResult {
        if let readEnd { return try readEnd.get() }
        var total = 0
        while true {
            if transportEnded, isHandshakeComplete, BIO_ctrl_pending(readBIO) == 0, SSL_has_pending(ssl) == 0 {
                // The transport ended at a record boundary without close_notify. Reported here
                // rather than through OpenSSL, whose fatal "unexpected EOF" would also make the
                // session non-resumable: RFC 5246 §7.2.1 (since TLS 1.1) lets such sessions resume,
                // as servers often close HTTP connections without close_notify. A cut inside a
                // record still goes through OpenSSL and fails.
                readEnd = .success(.closed(cleanShutdown: false))
                return total > 0 ? .bytes(total) : .closed(cleanShutdown: false)
            }
            if isHandshakeComplete, !transportEnded, BIO_ctrl_pending(readBIO) == 0, SSL_has_pending(ssl) == 0 {
                // Nothing fed and nothing decrypted: SSL_read could only say "want read" (and the
                // usual case after a record was read whole, so each response costs one SSL_read).
                return total > 0 ? .bytes(total) : .wantRead
            }
            OpenSSLErrorQueue.clear()
            var result: Int32 = 0
            let chunk = Swift.max(Int(SSL_pending(ssl)), 4096)
            let read = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: chunk) { raw -> Int in
                var count = 0
                result = SSL_read_ex(ssl, raw.baseAddress, raw.count, &count)
                return result == 1 ? count : 0
            }
            if result == 1 {
                total += read
                continue
            }
            let code = SSL_get_error(ssl, result)
            let end: Result<ReadResult, TLSError>
            switch code {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return total > 0 ? .bytes(total) : .wantRead
            case SSL_ERROR_ZERO_RETURN:
                end = .success(.closed(cleanShutdown: true))
            default:
                let error = failure(code, "read")
                end = error.kind == .unexpectedEOF ? .success(.closed(cleanShutdown: false)) : .failure(error)
            }
            // The end is final: remembered, and reported only after the bytes decrypted before it.
            readEnd = end
            if total > 0 { return .bytes(total) }
            return try end.get()
        }
    }

    /// Encrypts `bytes` (its readable bytes) into ciphertext for ``takeCiphertext()``.
    ///
    /// - Returns: how many bytes were consumed: all of them, except when OpenSSL must first read
    ///   from the peer (not expected: renegotiation is disabled), in which case the caller keeps
    ///   the rest and retries after feeding ciphertext.
    /// - Throws: ``TLSError`` on failure (for example after the peer's alert).
    @discardableResult
    public func writePlaintext(_ bytes: ByteBuffer) throws(TLSError) -> Int {
        var written = 0
        var failureCode: Int32 = 0
        bytes.withUnsafeReadableBytes { raw in
            while written < raw.count {
                OpenSSLErrorQueue.clear()
                var count = 0
                let result = SSL_write_ex(ssl, raw.baseAddress! + written, raw.count - written, &count)
                if result == 1 {
                    written += count
                } else {
                    failureCode = SSL_get_error(ssl, result)
                    return
                }
            }
        }
        switch failureCode {
        case 0, SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return written
        default: throw failure(failureCode, "write")
        }
    }

    /// Queues our `close_notify` (RFC 8446 §6.1); send ``takeCiphertext()`` afterwards.
    ///
    /// - Returns: ``ShutdownState/complete`` when the peer's `close_notify` was already read,
    ///   otherwise ``ShutdownState/closeNotifySent``.
    public func shutdown() throws(TLSError) -> ShutdownState {
        OpenSSLErrorQueue.clear()
        let result = SSL_shutdown(ssl)
        if result == 1 { return .complete }
        if result == 0 { return .closeNotifySent }
        let code = SSL_get_error(ssl, result)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .closeNotifySent
        default: throw failure(code, "shutdown")
        }
    }
}

@available(*, unavailable, message: "a TLSEngine belongs to one event-loop thread")
extension TLSEngine: Sendable {}

import BluebonnetPosix
import BluebonnetTLS

/// The one error `BluebonnetTransport` throws or reports: why a connection could not be made,
/// broke, or could not be leased from the pool.
///
/// A struct over a private code so that kinds can be added: compare ``kind`` with the static kinds
/// (`error.kind == .connectTimeout`). The error of the layer below (`DNSError`, `IOError`,
/// `TLSError`) is kept in ``underlying`` and in the typed properties.
public struct TransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, in categories a caller can act on.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: String, Hashable, Sendable {
            case dnsFailed, connectFailed, connectTimeout, tlsHandshakeTimeout, tls, io, connectionClosed
            case poolShutDown, poolWaitTimeout, tooManyWaiters, cancelled, invalidEndpoint, eventLoopShutDown
            case proxyAuthenticationRequired, proxyRefused, proxyProtocolError, proxyTimeout, serverTrust
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// Name resolution failed; see ``TransportError/dnsError``.
        public static let dnsFailed = Kind(.dnsFailed)
        /// Every address was tried and refused or unreachable; ``TransportError/attempts`` lists
        /// each with its error, ``TransportError/ioError`` is the last attempt's.
        public static let connectFailed = Kind(.connectFailed)
        /// ``ConnectTimeouts/connect`` passed before any attempt succeeded;
        /// ``TransportError/attempts`` lists the addresses tried (error nil: still pending).
        public static let connectTimeout = Kind(.connectTimeout)
        /// ``ConnectTimeouts/tlsHandshake`` passed before the handshake finished.
        public static let tlsHandshakeTimeout = Kind(.tlsHandshakeTimeout)
        /// TLS failed (handshake, certificate verification, a record or alert); see
        /// ``TransportError/tlsError`` and its `kind` (`.expired`, `.hostnameMismatch`…).
        public static let tls = Kind(.tls)
        /// A system call on the established connection failed (reset, broken pipe…); see
        /// ``TransportError/ioError``.
        public static let io = Kind(.io)
        /// The connection is closed (by us, or the peer went away while we were not reading).
        public static let connectionClosed = Kind(.connectionClosed)
        /// The pool is shut down or shutting down.
        public static let poolShutDown = Kind(.poolShutDown)
        /// The lease waited until its deadline without getting a connection.
        public static let poolWaitTimeout = Kind(.poolWaitTimeout)
        /// Too many leases were already waiting for the same origin.
        public static let tooManyWaiters = Kind(.tooManyWaiters)
        /// The task was cancelled.
        public static let cancelled = Kind(.cancelled)
        /// The event loop the connection was to live on has shut down.
        public static let eventLoopShutDown = Kind(.eventLoopShutDown)
        /// The endpoint cannot be connected to as given (port out of range, Unix path too long,
        /// TLS over a Unix socket without a server name, an unusable proxy…); see
        /// ``TransportError/message``.
        public static let invalidEndpoint = Kind(.invalidEndpoint)
        /// The proxy answered `CONNECT` with `407 Proxy Authentication Required` (RFC 9110
        /// §15.5.8): credentials missing or refused. ``TransportError/proxyStatus`` is 407.
        public static let proxyAuthenticationRequired = Kind(.proxyAuthenticationRequired)
        /// The proxy answered `CONNECT` with another non-2xx status (403, 502…), which
        /// ``TransportError/proxyStatus`` holds; its reason phrase is in ``TransportError/message``.
        /// The answer's body is never handed on as the origin's response.
        public static let proxyRefused = Kind(.proxyRefused)
        /// The proxy's answer to `CONNECT` was not valid HTTP, or the proxy closed before answering;
        /// see ``TransportError/message``.
        public static let proxyProtocolError = Kind(.proxyProtocolError)
        /// The proxy did not answer `CONNECT` within ``ConnectTimeouts/connect``.
        public static let proxyTimeout = Kind(.proxyTimeout)
        /// The endpoint's ``ServerTrustCheck`` rejected the server after the TLS handshake; the
        /// evaluator's error is ``TransportError/serverTrustError``.
        public static let serverTrust = Kind(.serverTrust)

        /// The kind's name, e.g. `connectTimeout`.
        public var description: String { code.rawValue }
    }

    /// One connection attempt of a connect: the address and how the attempt ended.
    public struct Attempt: Hashable, Sendable, CustomStringConvertible {
        /// The address tried.
        public var address: SocketAddress
        /// Why it failed; nil when it was still in progress (timeout, cancellation).
        public var error: IOError?

        /// An attempt at `address` that ended with `error`.
        public init(address: SocketAddress, error: IOError?) {
            self.address = address
            self.error = error
        }

        /// `127.0.0.1:80: connect failed: Connection refused (errno 111)`.
        public var description: String { "\(address): \(error.map { "\($0)" } ?? "pending")" }
    }

    /// What went wrong.
    public let kind: Kind
    /// For ``Kind/dnsFailed``: the resolver's error.
    public let dnsError: DNSError?
    /// For ``Kind/io`` and ``Kind/connectFailed``: the system call's error.
    public let ioError: IOError?
    /// For ``Kind/tls``: the TLS error.
    public let tlsError: TLSError?
    /// For ``Kind/connectFailed`` and ``Kind/connectTimeout``: every address tried, in order.
    public let attempts: [Attempt]
    /// More words about what happened (may be empty).
    public let message: String
    /// For ``Kind/proxyAuthenticationRequired`` and ``Kind/proxyRefused``: the status the proxy
    /// answered `CONNECT` with.
    public let proxyStatus: Int?
    /// For ``Kind/serverTrust``: what the ``ServerTrustCheck`` threw.
    public let serverTrustError: (any Error)?

    private init(
        _ kind: Kind, dns: DNSError? = nil, io: IOError? = nil, tls: TLSError? = nil, attempts: [Attempt] = [],
        message: String = "", proxyStatus: Int? = nil, serverTrustError: (any Error)? = nil
    ) {
        self.serverTrustError = serverTrustError
        self.kind = kind
        self.dnsError = dns
        self.ioError = io
        self.tlsError = tls
        self.attempts = attempts
        self.message = message
        self.proxyStatus = proxyStatus
    }

    /// The error of the layer below, if any: a `DNSError`, `IOError` or `TLSError`, or what a
    /// server-trust check threw.
    public var underlying: (any Error)? { dnsError ?? ioError ?? tlsError ?? serverTrustError }

    /// Resolution failed.
    public static func dnsFailed(_ error: DNSError) -> TransportError { TransportError(.dnsFailed, dns: error) }
    /// Every attempt failed; `attempts` in the order they were made.
    public static func connectFailed(_ attempts: [Attempt]) -> TransportError {
        TransportError(.connectFailed, io: attempts.last(where: { $0.error != nil })?.error, attempts: attempts)
    }
    /// The connect timeout passed; `attempts` are the addresses tried.
    public static func connectTimeout(_ attempts: [Attempt]) -> TransportError {
        TransportError(.connectTimeout, attempts: attempts)
    }
    /// The TLS handshake timeout passed.
    public static let tlsHandshakeTimeout = TransportError(.tlsHandshakeTimeout)
    /// TLS failed with `error`.
    public static func tls(_ error: TLSError) -> TransportError { TransportError(.tls, tls: error) }
    /// A system call failed with `error`.
    public static func io(_ error: IOError) -> TransportError { TransportError(.io, io: error) }
    /// The connection is closed.
    public static let connectionClosed = TransportError(.connectionClosed)
    /// The pool is shut down.
    public static let poolShutDown = TransportError(.poolShutDown)
    /// The lease waited until its deadline.
    public static let poolWaitTimeout = TransportError(.poolWaitTimeout)
    /// Too many leases were waiting for the origin.
    public static let tooManyWaiters = TransportError(.tooManyWaiters)
    /// The task was cancelled.
    public static let cancelled = TransportError(.cancelled)
    /// The event loop has shut down.
    public static let eventLoopShutDown = TransportError(.eventLoopShutDown)
    /// The endpoint is unusable; `message` says why.
    public static func invalidEndpoint(_ message: String) -> TransportError {
        TransportError(.invalidEndpoint, message: message)
    }

    /// The proxy answered `CONNECT` with the non-2xx `status` and `reason`: kind
    /// ``Kind/proxyAuthenticationRequired`` for 407, ``Kind/proxyRefused`` otherwise.
    public static func proxyRefused(status: Int, reason: String) -> TransportError {
        TransportError(status == 407 ? .proxyAuthenticationRequired : .proxyRefused, message: reason, proxyStatus: status)
    }
    /// The proxy's answer to `CONNECT` was not usable; `message` says why.
    public static func proxyProtocolError(_ message: String) -> TransportError {
        TransportError(.proxyProtocolError, message: message)
    }
    /// The server-trust check rejected the server with `error`.
    public static func serverTrust(_ error: any Error) -> TransportError {
        TransportError(.serverTrust, message: "server trust evaluation failed", serverTrustError: error)
    }
    /// The proxy did not answer `CONNECT` in time.
    public static let proxyTimeout = TransportError(.proxyTimeout, message: "no answer to CONNECT from the proxy")

    /// Equal kinds and equal details (TLS errors compare by kind and message, server-trust errors
    /// by their descriptions).
    public static func == (lhs: TransportError, rhs: TransportError) -> Bool {
        lhs.kind == rhs.kind && lhs.dnsError == rhs.dnsError && lhs.ioError == rhs.ioError
            && lhs.tlsError?.kind == rhs.tlsError?.kind && lhs.tlsError?.message == rhs.tlsError?.message
            && lhs.attempts == rhs.attempts && lhs.message == rhs.message && lhs.proxyStatus == rhs.proxyStatus
            && lhs.serverTrustError.map { String(describing: $0) } == rhs.serverTrustError.map { String(describing: $0) }
    }

    /// Hashes the kind and the lower layer's error code.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(ioError)
        hasher.combine(dnsError)
        hasher.combine(tlsError?.kind)
    }

    /// One line: the kind and what the layer below said.
    public var description: String {
        var text = "TransportError.\(kind)"
        if let proxyStatus { text += ": the proxy answered CONNECT with \(proxyStatus)" }
        if let dnsError { text += ": \(dnsError)" }
        if let tlsError { text += ": \(tlsError)" }
        if !attempts.isEmpty {
            text += ": tried " + attempts.map(\.description).joined(separator: "; ")
        } else if let ioError {
            text += ": \(ioError)"
        }
        if !message.isEmpty { text += ": \(message)" }
        if let serverTrustError { text += ": \(serverTrustError)" }
        return text
    }
}

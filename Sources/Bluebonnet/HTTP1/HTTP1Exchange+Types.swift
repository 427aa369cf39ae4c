import BluebonnetCompression
import BluebonnetCore
import BluebonnetHTTP1

extension HTTP1Exchange {
    /// The body of a request, as the exchange sends it.
    enum RequestBody: Sendable, Equatable {
        /// No body. `POST`, `PUT`, `PATCH` and `QUERY` still say `Content-Length: 0` (RFC 9110 §8.6).
        case none
        /// A body held in memory, sent with `Content-Length`; it can be replayed.
        case bytes(ByteBuffer)
        /// A body provided later in parts (`bodyPartProvided`, then `bodyEnded`): with
        /// `Content-Length` when `length` is known, chunked otherwise (RFC 9112 §7.1). Parts are
        /// consumed as they are sent, so it cannot be replayed.
        case stream(length: Int?)

        /// Whether the same body can be sent again on another connection.
        var isReplayable: Bool {
            switch self {
            case .none, .bytes: true
            case .stream: false
            }
        }

        /// How the head delimits this body: `Content-Length` for `.bytes` and `.stream(length: n)`,
        /// chunked for `.stream(length: nil)`, nothing for `.none`.
        var framing: RequestBodyFraming {
            switch self {
            case .none: .none
            case .bytes(let bytes): .contentLength(bytes.readableBytes)
            case .stream(let length?): .contentLength(length)
            case .stream(nil): .chunked
            }
        }

        /// The body's length when known.
        var byteCount: Int? {
            switch self {
            case .none: 0
            case .bytes(let bytes): bytes.readableBytes
            case .stream(let length): length
            }
        }
    }

    /// Where an exchange reports transfer progress (each nil when nobody listens, so an exchange
    /// without listeners counts nothing).
    struct ProgressReporting: Sendable {
        /// At most one report per this interval (per direction), plus the final one.
        static let interval: Duration = .milliseconds(50)

        /// Told the response body's wire bytes.
        var download: ProgressTracker?
        /// Told the request body's bytes that went to the socket.
        var upload: ProgressTracker?
    }

    /// The exchange's progress bookkeeping (loop-confined).
    struct ProgressState {
        var reportsDownload = false
        var downloadTotal: Int64 = -1
        var lastDownloadReport: MonotonicTime?
        var uploadTotal: Int64 = 0
        var uploadReported: Int64 = 0
        var uploadFinished = false
        var lastUploadReport: MonotonicTime?
    }

    /// Why the response sink refused the response, failing the exchange.
    enum Rejection: Error, Sendable {
        /// An in-memory body grew past this many bytes.
        case bodyTooLarge(limit: Int)
        /// The body could not be content-decoded.
        case contentDecoding(CompressionError)
    }

    /// The timers an exchange runs. Each is armed and cancelled by the state machine's actions.
    enum TimerKind: Int, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// No response byte for too long while the server owes us one.
        case idleRead
        /// Written bytes did not drain for too long.
        case idleWrite
        /// The whole exchange took too long.
        case total
        /// How long to wait for `100 Continue` before sending the body anyway (RFC 9110 §10.1.1).
        case expectContinue

        var description: String {
            switch self {
            case .idleRead: "idleRead"
            case .idleWrite: "idleWrite"
            case .total: "total"
            case .expectContinue: "expectContinue"
            }
        }
    }

    /// The exchange's timeouts. Nil disables a timeout.
    struct Timeouts: Sendable, Hashable {
        /// The longest wait for the next response byte, once the request is written or the
        /// response has begun; 60 s by default.
        var idleRead: Duration?
        /// The longest wait for written bytes to drain into the socket; 60 s by default.
        var idleWrite: Duration?
        /// The longest the whole exchange may take, from `start`; none by default (the caller
        /// passes what is left of the request's deadline).
        var total: Duration?
        /// How long a request with `Expect: 100-continue` waits for `100 Continue` before sending
        /// its body anyway; 1 s by default (RFC 9110 §10.1.1 lets a client stop waiting).
        var expectContinue: Duration

        /// Timeouts with the defaults above.
        init(
            idleRead: Duration? = .seconds(60),
            idleWrite: Duration? = .seconds(60),
            total: Duration? = nil,
            expectContinue: Duration = .seconds(1)
        ) {
            self.idleRead = idleRead
            self.idleWrite = idleWrite
            self.total = total
            self.expectContinue = expectContinue
        }

        /// The duration configured for `kind`, nil when disabled.
        func duration(_ kind: TimerKind) -> Duration? {
            switch kind {
            case .idleRead: idleRead
            case .idleWrite: idleWrite
            case .total: total
            case .expectContinue: expectContinue
            }
        }
    }
}

import BluebonnetCore
import BluebonnetHTTP1

extension HTTP1Exchange {
    /// The sans-I/O logic of one HTTP/1.1 exchange: fed events, it hands back actions.
    ///
    /// It encodes the request (head and body framing), feeds received bytes to a `ResponseParser`,
    /// decides when the connection may be reused, and runs the timers, without sockets or clocks:
    /// the I/O shell reports events (`writeDrained`, `bytesReceived`, `timeoutFired`…) and performs
    /// the returned actions in order.
    ///
    /// Every exchange ends with exactly one terminal action (`.succeed` or `.fail`) and exactly one
    /// connection disposition (`.releaseConnection` or `.closeConnection`); after the disposition
    /// every event returns no actions. The disposition may follow the terminal action later: a
    /// response can end before the request's last bytes drained, and the connection is handed back
    /// only once they have (`State.succeededAwaitingDrain`).
    ///
    /// The connection is released for reuse only when the parser says it is reusable (the response
    /// was kept alive and read to its end), the whole request was written, and no unsolicited bytes
    /// follow the response. Anything else closes it (fail closed).
    struct StateMachine: Sendable {
        /// A body up to this size is written together with the head, in one write call (`writev`).
        static let maximumCoalescedBodyBytes = 64 * 1024

        /// Where the exchange stands.
        enum State: Sendable {
            /// Created; `start` is next. → `running` (the head was written), or `finished` (the
            /// request could not be encoded; nothing was written).
            case initial
            /// The request is being written and/or the response read. → `running` as either side
            /// progresses; `succeededAwaitingDrain` when the response ends while request bytes are
            /// still draining; `finished` on the response's end, on a failure, timeout or cancellation.
            case running(RequestProgress, ResponseProgress)
            /// The response ended and `.succeed` was returned, but written request bytes have not
            /// drained yet. → `finished`: on `writeDrained` (release), or on any sign of trouble
            /// (close: received bytes, end of stream, failure, idle-write timeout).
            case succeededAwaitingDrain
            /// Terminal and disposed of; every event returns no actions.
            case finished
        }

        /// The request side of a running exchange.
        enum RequestProgress: Sendable {
            /// The head (with `Expect: 100-continue`) was written; the body is held until `100
            /// Continue` or the `expectContinue` timer. → `complete` (bytes sent), `streaming`
            /// (a stream may now be provided), `abandoned` (a final response came first).
            case waitingForContinue(RequestBody)
            /// A streamed body is being written, part by part. → `complete` on `bodyEnded`,
            /// `abandoned` when a final response head arrives first.
            case streaming
            /// Every byte of the request was handed to the connection. Terminal for this side.
            case complete
            /// The body was not (completely) sent because the final response came first: stop
            /// sending, and close the connection after the response (the server may still expect
            /// the rest of the body, RFC 9110 §10.1.1). Terminal for this side.
            case abandoned
        }

        /// The response side of a running exchange.
        enum ResponseProgress: Sendable {
            /// No final head yet (informational responses may have come). → `receivingBody`.
            case waitingForHead
            /// The final head was forwarded; body parts follow until the end.
            case receivingBody
        }

        /// What the I/O shell must do, in order.
        enum Action: Sendable {
            /// Write these buffers with one write call (`writev`), in order.
            case write(WriteBuffers)
            /// The connection is ready for the next part of a streamed body (`bodyPartProvided`).
            case demandBodyPart
            /// Arm the timer `kind` to fire after the duration, replacing any earlier arming.
            case resetTimer(TimerKind, Duration)
            /// Disarm the timer `kind`.
            case cancelTimer(TimerKind)
            /// Hand an informational (1xx) response head to the response sink.
            case forwardInformational(ResponseHead)
            /// Hand the final response head to the response sink.
            case forwardHead(ResponseHead)
            /// Hand a part of the response body to the response sink (a slice of the received bytes).
            case forwardBody(ByteBuffer)
            /// The response ended: complete the request successfully. Terminal.
            case succeed(trailers: HTTPFields?)
            /// The exchange failed: complete the request with this error. Terminal.
            case fail(ExchangeError)
            /// Give the connection back for another exchange. A disposition.
            case releaseConnection
            /// Close the connection; it carries nothing more. A disposition.
            case closeConnection
        }

        /// The exchange's timeouts.
        let timeouts: Timeouts
        /// Whether the connection carried an earlier exchange (stamped on errors for the replay rule).
        let isReusedConnection: Bool

        /// Where the exchange stands.
        private(set) var state: State = .initial
        private var parser: ResponseParser
        /// The declared length of a streamed body (nil: chunked) and the bytes of it written so far.
        private var streamLength: Int?
        private var streamWritten = 0
        /// Whether a write was handed to the connection and has not drained yet.
        private var writesOutstanding = false
        /// Whether any response byte arrived.
        private var receivedResponseBytes = false
        /// Whether the peer's end of stream was received.
        private var receivedEndOfStream = false
        /// The timers currently armed, as a bit set over `TimerKind.rawValue`.
        private var armed: UInt8 = 0
        /// Whether the shell stopped reading because the response's consumer is behind
        /// (`readingPaused`): the server owes us nothing then, so the idle-read timer is off.
        private(set) var isReadingPaused = false

        /// A machine for one exchange.
        ///
        /// - Parameters:
        ///   - parserConfiguration: the response parser's limits.
        ///   - timeouts: the timeouts to run.
        ///   - isReusedConnection: whether the connection carried an earlier exchange.
        init(parserConfiguration: ParserConfiguration = .init(), timeouts: Timeouts = .init(), isReusedConnection: Bool = false) {
            self.parser = ResponseParser(configuration: parserConfiguration)
            self.timeouts = timeouts
            self.isReusedConnection = isReusedConnection
        }

        /// Whether the request body is being streamed: parts are wanted (after the first
        /// `.demandBodyPart`) until `bodyEnded`, an early response or the end.
        var isStreamingBody: Bool {
            if case .running(.streaming, _) = state { return true }
            return false
        }

        /// Whether the timer `kind` is armed.
        /// Whether the whole request (head and body) has been handed to the connection and written
        /// out, while the response is still being read. The shell stamps `requestSent` the first
        /// time this holds.
        var isRequestFullyWritten: Bool {
            if case .running(let request, _) = state { return isRequestWritten(request) }
            return false
        }

        func isArmed(_ kind: TimerKind) -> Bool { armed & (1 << kind.rawValue) != 0 }

        // MARK: Events

        /// Starts the exchange: encodes and writes the request head, with the body when it is in
        /// memory, not above `maximumCoalescedBodyBytes`, and not held back for `100 Continue`.
        ///
        /// The framing follows the body: `Content-Length` for `.bytes` and `.stream(length: n)`,
        /// chunked for `.stream(length: nil)`. The head is validated by `RequestEncoder` before any
        /// byte is written: an error fails the exchange (`localProtocol`) and releases the untouched
        /// connection. With `Expect: 100-continue` and a non-empty body, only the head is written
        /// and the `expectContinue` timer is armed.
        ///
        /// - Precondition: called once, first.
        mutating func start(request: RequestHead, host: String?, body: RequestBody) -> Actions {
            guard case .initial = state else { preconditionFailure("HTTP1Exchange.StateMachine.start called twice") }
            let framing = body.framing
            var head = ByteBuffer()
            do {
                try RequestEncoder.encodeHead(request, host: host, framing: framing, into: &head)
            } catch {
                state = .finished
                // Nothing was written: the connection is as clean as it came.
                return [.fail(.localProtocol(error, context)), .releaseConnection]
            }
            parser.requestSent(method: request.method)

            var actions = Actions()
            arm(.total, &actions)
            let expectsContinue = Self.expectsContinue(request.headers)
            let progress: RequestProgress
            switch body {
            case .none:
                write(WriteBuffers(head), &actions)
                progress = .complete
            case .bytes(let bytes):
                if bytes.readableBytes > 0 && expectsContinue {
                    write(WriteBuffers(head), &actions)
                    arm(.expectContinue, &actions)
                    progress = .waitingForContinue(body)
                } else if bytes.readableBytes == 0 {
                    write(WriteBuffers(head), &actions)
                    progress = .complete
                } else if bytes.readableBytes <= Self.maximumCoalescedBodyBytes {
                    write(WriteBuffers(head, bytes), &actions)
                    progress = .complete
                } else {
                    write(WriteBuffers(head), &actions)
                    write(WriteBuffers(bytes), &actions)
                    progress = .complete
                }
            case .stream(let length):
                streamLength = length
                write(WriteBuffers(head), &actions)
                if length != 0 && expectsContinue {
                    arm(.expectContinue, &actions)
                    progress = .waitingForContinue(body)
                } else {
                    actions.append(.demandBodyPart)
                    progress = .streaming
                }
            }
            state = .running(progress, .waitingForHead)
            return actions
        }

        /// The next part of a streamed body. Written at once (chunked: prefix, part, suffix in one
        /// write, without copying the part); ignored once the request side is done or abandoned, or
        /// when empty. More bytes than a declared length fail the exchange (`invalidRequestBody`).
        ///
        /// - Precondition: the first `.demandBodyPart` was returned (a body held for `100 Continue`
        ///   is not asked for yet).
        mutating func bodyPartProvided(_ part: ByteBuffer) -> Actions {
            if case .running(.waitingForContinue, _) = state {
                assertionFailure("a streamed body part was provided before the first .demandBodyPart")
            }
            guard case .running(.streaming, let response) = state, part.readableBytes > 0 else { return Actions() }
            var actions = Actions()
            if let length = streamLength {
                guard part.readableBytes <= length - streamWritten else {
                    return fail(.invalidRequestBody("more than the declared \(length) bytes", context), actions)
                }
                streamWritten += part.readableBytes
                write(WriteBuffers(part), &actions)
            } else {
                write(WriteBuffers(ChunkedEncoder.chunkPrefix(length: part.readableBytes), part, ChunkedEncoder.chunkSuffix), &actions)
            }
            state = .running(.streaming, response)
            return actions
        }

        /// The streamed body's source failed: the exchange fails with `invalidRequestBody` (the
        /// server has a partial body, so the connection closes). Ignored once the request side is
        /// done or abandoned.
        mutating func bodySourceFailed(_ reason: String) -> Actions {
            guard case .running(.streaming, _) = state else { return Actions() }
            return fail(.invalidRequestBody(reason, context), Actions())
        }

        /// The end of a streamed body, with trailer fields for a chunked body (RFC 9112 §7.1.2).
        ///
        /// Chunked: writes the last chunk (trailers validated like headers; a refused trailer is a
        /// `localProtocol` failure). Declared length: fails with `invalidRequestBody` when fewer
        /// bytes were provided, or when trailers are given (they need chunked framing). Ignored once
        /// the request side is done or abandoned. Same precondition as `bodyPartProvided`.
        mutating func bodyEnded(trailers: HTTPHeaders? = nil) -> Actions {
            if case .running(.waitingForContinue, _) = state {
                assertionFailure("a streamed body ended before the first .demandBodyPart")
            }
            guard case .running(.streaming, let response) = state else { return Actions() }
            var actions = Actions()
            if let length = streamLength {
                guard streamWritten == length else {
                    return fail(.invalidRequestBody("\(streamWritten) of the declared \(length) bytes", context), actions)
                }
                if let trailers, !trailers.isEmpty {
                    return fail(.invalidRequestBody("trailers need chunked framing", context), actions)
                }
            } else {
                var last = ByteBuffer()
                do {
                    try ChunkedEncoder.writeLastChunk(trailers: trailers, into: &last)
                } catch {
                    return fail(.localProtocol(error, context), actions)
                }
                write(WriteBuffers(last), &actions)
            }
            state = .running(.complete, response)
            if !writesOutstanding && !isReadingPaused { arm(.idleRead, &actions) }
            return actions
        }

        /// Every byte handed to the connection has been written to the socket. Extra reports are
        /// harmless. Once the request is complete, the server owes us bytes: the idle-read timer runs.
        mutating func writeDrained() -> Actions {
            guard writesOutstanding else { return Actions() }
            writesOutstanding = false
            var actions = Actions()
            disarm(.idleWrite, &actions)
            switch state {
            case .running(.complete, _):
                if !isReadingPaused { arm(.idleRead, &actions) }
            case .running(.streaming, _):
                actions.append(.demandBodyPart)
            case .succeededAwaitingDrain:
                state = .finished
                actions.append(parser.isReusable && !parser.hasBufferedBytes ? .releaseConnection : .closeConnection)
            default:
                break
            }
            return actions
        }

        /// Bytes arrived from the peer: parse them, forward what they hold.
        mutating func bytesReceived(_ bytes: ByteBuffer) -> Actions {
            switch state {
            case .running:
                if !bytes.isEmpty { receivedResponseBytes = true }
                parser.receive(bytes)
                return parse()
            case .succeededAwaitingDrain:
                // Bytes nobody asked for after the response: the connection is out of step.
                guard !bytes.isEmpty else { return Actions() }
                return dispose(.closeConnection)
            case .initial, .finished:
                return Actions()
            }
        }

        /// The peer closed its side. A body delimited by the close ends here; anything else
        /// unfinished fails (`connectionClosedBeforeResponse` or `connectionClosedDuringResponse`).
        mutating func endOfStreamReceived() -> Actions {
            switch state {
            case .running:
                receivedEndOfStream = true
                parser.receiveEndOfStream()
                var actions = parse()
                if case .running = state {
                    // The parser always ends or fails at the end of the stream; keep the promise anyway.
                    actions = fail(.connectionClosedDuringResponse(nil, context), actions)
                }
                return actions
            case .succeededAwaitingDrain:
                return dispose(.closeConnection)
            case .initial, .finished:
                return Actions()
            }
        }

        /// The connection failed. `peerClosed` says the peer ended it (reset, broken pipe): that
        /// fails as `connectionClosedBeforeResponse` or `…DuringResponse`; anything else is `transport`.
        mutating func connectionFailed(_ error: any Error & Sendable, peerClosed: Bool) -> Actions {
            switch state {
            case .running:
                if peerClosed {
                    return fail(
                        receivedResponseBytes
                            ? .connectionClosedDuringResponse(error, context) : .connectionClosedBeforeResponse(error, context),
                        Actions())
                }
                return fail(.transport(error, context), Actions())
            case .succeededAwaitingDrain:
                return dispose(.closeConnection)
            case .initial, .finished:
                return Actions()
            }
        }

        /// A timer fired. A timer that is not armed (cancelled or reset meanwhile) is ignored.
        /// `expectContinue` sends the held body; the others fail the exchange with their own error,
        /// except an idle-write timeout after success, which only closes the connection.
        mutating func timeoutFired(_ kind: TimerKind) -> Actions {
            guard isArmed(kind) else { return Actions() }
            armed &= ~(1 << kind.rawValue)
            switch (state, kind) {
            case (.running(.waitingForContinue(let body), let response), .expectContinue):
                var actions = Actions()
                state = .running(sendHeldBody(body, &actions), response)
                return actions
            case (.running, .expectContinue):
                return Actions()
            case (.running, _):
                return fail(.timeout(kind, context), Actions())
            case (.succeededAwaitingDrain, .idleWrite):
                return dispose(.closeConnection)
            default:
                return Actions()
            }
        }

        /// The `expectContinue` timer fired: stop waiting for `100 Continue`, send the body.
        mutating func continueTimeoutFired() -> Actions {
            timeoutFired(.expectContinue)
        }

        /// The shell stopped reading from the connection because the consumer of a streamed
        /// response has too many bytes it has not taken yet (backpressure). Waiting for the
        /// consumer is not the server's fault: the idle-read timer is disarmed until
        /// `readingResumed`. The total timer keeps running. Ignored unless running.
        mutating func readingPaused() -> Actions {
            guard case .running = state, !isReadingPaused else { return Actions() }
            isReadingPaused = true
            var actions = Actions()
            disarm(.idleRead, &actions)
            return actions
        }

        /// The shell reads again (the consumer caught up): the idle-read timer runs again when the
        /// server owes us bytes. Ignored unless paused.
        mutating func readingResumed() -> Actions {
            guard isReadingPaused else { return Actions() }
            isReadingPaused = false
            guard case .running(let request, _) = state, receivedResponseBytes || isRequestWritten(request) else { return Actions() }
            var actions = Actions()
            arm(.idleRead, &actions)
            return actions
        }

        /// The caller cancelled: fail with `cancelled` and close (a half-read response cannot be
        /// left on a connection). Ignored once the response ended.
        mutating func cancelRequested() -> Actions {
            guard case .running = state else { return Actions() }
            return fail(.cancelled(context), Actions())
        }

        /// The response sink refused what it was given (a body too large, a body that cannot be
        /// decoded): fail with that reason and close, since the rest of the response is unread.
        /// Ignored once the exchange ended.
        mutating func responseRejected(_ reason: Rejection) -> Actions {
            guard case .running = state else { return Actions() }
            return fail(.rejected(reason, context), Actions())
        }

        // MARK: Parsing

        /// Runs the parser until it needs more bytes, the response ends or it fails.
        private mutating func parse() -> Actions {
            var actions = Actions()
            while case .running(var request, var response) = state {
                let event: ResponseEvent
                do {
                    event = try parser.next()
                } catch {
                    return fail(failure(for: error), actions)
                }
                switch event {
                case .informational(let head):
                    actions.append(.forwardInformational(head))
                    // RFC 9110 §15.2.1: 100 Continue invites the body.
                    if head.status == 100, case .waitingForContinue(let body) = request {
                        disarm(.expectContinue, &actions)
                        request = sendHeldBody(body, &actions)
                    }
                case .head(let head):
                    switch request {
                    case .waitingForContinue:
                        // A final response before the body was sent: do not send it (RFC 9110 §10.1.1).
                        disarm(.expectContinue, &actions)
                        request = .abandoned
                    case .streaming:
                        // The server answered before the body's end (413, for example): stop sending.
                        request = .abandoned
                    case .complete, .abandoned:
                        break
                    }
                    response = .receivingBody
                    actions.append(.forwardHead(head))
                case .body(let part):
                    actions.append(.forwardBody(part))
                case .end(let trailers):
                    return succeed(trailers: trailers, request: request, actions)
                case .needMoreData:
                    if !isReadingPaused && (receivedResponseBytes || isRequestWritten(request)) { arm(.idleRead, &actions) }
                    state = .running(request, response)
                    return actions
                }
                state = .running(request, response)
            }
            return actions
        }

        /// Maps a parser error to the exchange's: a close before or inside the response is told
        /// apart from a response that broke HTTP.
        private func failure(for error: HTTPParserError) -> ExchangeError {
            if error.kind == .connectionClosedBeforeResponse {
                return .connectionClosedBeforeResponse(error, context)
            }
            if receivedEndOfStream && (error.kind == .truncatedHead || error.kind == .truncatedBody) {
                return .connectionClosedDuringResponse(error, context)
            }
            return .remoteProtocol(error, context)
        }

        private func isRequestWritten(_ request: RequestProgress) -> Bool {
            if case .complete = request { return !writesOutstanding }
            return false
        }

        // MARK: Request side

        /// Sends a body held for `100 Continue`; returns the request side's new progress.
        private mutating func sendHeldBody(_ body: RequestBody, _ actions: inout Actions) -> RequestProgress {
            switch body {
            case .bytes(let bytes):
                write(WriteBuffers(bytes), &actions)
                return .complete
            case .stream:
                actions.append(.demandBodyPart)
                return .streaming
            case .none:
                return .complete
            }
        }

        private mutating func write(_ buffers: WriteBuffers, _ actions: inout Actions) {
            actions.append(.write(buffers))
            writesOutstanding = true
            arm(.idleWrite, &actions)
        }

        /// Whether the head asks to wait for `100 Continue` (RFC 9110 §10.1.1).
        static func expectsContinue(_ headers: HTTPHeaders) -> Bool {
            headers.values(for: "Expect").contains { value in
                value.split(separator: ",").contains { $0.trimmingSpacesAndTabs().lowercased() == "100-continue" }
            }
        }

        // MARK: Endings

        private var context: ExchangeError.Context {
            .init(beforeAnyResponseByte: !receivedResponseBytes, onReusedConnection: isReusedConnection)
        }

        private mutating func succeed(trailers: HTTPFields?, request: RequestProgress, _ actions: consuming Actions) -> Actions {
            let requestComplete: Bool
            if case .complete = request { requestComplete = true } else { requestComplete = false }
            let reusable = requestComplete && parser.isReusable && !parser.hasBufferedBytes
            // A reusable connection whose last request bytes are still draining is handed back
            // after the drain; the idle-write timer keeps watching it until then.
            let waitsForDrain = reusable && writesOutstanding
            for kind in TimerKind.allCases where !(waitsForDrain && kind == .idleWrite) {
                disarm(kind, &actions)
            }
            actions.append(.succeed(trailers: trailers))
            if waitsForDrain {
                state = .succeededAwaitingDrain
                return actions
            }
            state = .finished
            actions.append(reusable ? .releaseConnection : .closeConnection)
            return actions
        }

        private mutating func fail(_ error: ExchangeError, _ actions: consuming Actions) -> Actions {
            for kind in TimerKind.allCases { disarm(kind, &actions) }
            state = .finished
            actions.append(.fail(error))
            actions.append(.closeConnection)
            return actions
        }

        /// Ends a succeeded exchange that was waiting for its writes to drain.
        private mutating func dispose(_ disposition: Action) -> Actions {
            var actions = Actions()
            for kind in TimerKind.allCases { disarm(kind, &actions) }
            state = .finished
            actions.append(disposition)
            return actions
        }

        // MARK: Timers

        private mutating func arm(_ kind: TimerKind, _ actions: inout Actions) {
            guard let duration = timeouts.duration(kind) else { return }
            armed |= 1 << kind.rawValue
            actions.append(.resetTimer(kind, duration))
        }

        private mutating func disarm(_ kind: TimerKind, _ actions: inout Actions) {
            guard isArmed(kind) else { return }
            armed &= ~(1 << kind.rawValue)
            actions.append(.cancelTimer(kind))
        }
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs (optional whitespace, RFC 9110 §5.6.3).
    fileprivate func trimmingSpacesAndTabs() -> Substring {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return Substring(slice)
    }
}

/// What the parser found next in the received bytes.
public enum ResponseEvent: Sendable, Equatable {
    /// A 1xx informational response (100, 102, 103…); the final response follows (RFC 9110 §15.2).
    case informational(ResponseHead)
    /// The head of the final response.
    case head(ResponseHead)
    /// Some body bytes: a slice of the received bytes (no copy), after chunked decoding.
    case body(ByteBuffer)
    /// The response ended; `trailers` are the chunked trailer fields, if any were sent.
    case end(trailers: HTTPFields?)
    /// Nothing more can be parsed until more bytes (or the end of the stream) are received.
    case needMoreData
}

/// An incremental, sans-I/O HTTP/1.1 response parser (RFC 9112): a value fed bytes, handing back events.
///
/// Feed it whatever the connection delivers with `receive(_:)`, tell it about the end of the stream
/// with `receiveEndOfStream()`, and call `next()` until it says `.needMoreData`. Any split of the
/// input gives the same events (body parts may be cut differently), and the work is O(n) however
/// the bytes are dripped in. Responses pipelined back to back in one buffer are parsed in turn.
///
/// Tell the parser the method of each request sent (`requestSent(method:)`): a response to HEAD
/// has no body, a 2xx to CONNECT turns the connection into a tunnel. With no request recorded, a
/// response is taken to answer a GET.
///
/// Strict by default (see `ParserConfiguration` for the choices RFC 9112 leaves open). Any error is
/// final: the parser stays failed and every later `next()` throws the same error, so a connection
/// that carried a rejected response is never reused.
///
/// Headers are not copied: `ResponseHead.headers` keeps ranges into the received bytes.
public struct ResponseParser: Sendable {
    /// The limits this parser enforces.
    public let configuration: ParserConfiguration

    @usableFromInline var buffer = ByteBuffer()
    /// Stream offset of `buffer.readerIndex`.
    @usableFromInline var consumed = 0
    @usableFromInline var state: State = .idle
    @usableFromInline var head = HeadProgress()
    @usableFromInline var pendingMethods = MethodQueue()
    @usableFromInline var endOfStream = false
    @usableFromInline var informationalCount = 0
    @usableFromInline var extensionBytes = 0
    @usableFromInline var messageKeepAlive = true

    @usableFromInline
    enum State: Sendable {
        /// Waiting for a status line (empty lines are skipped).
        case idle
        /// Inside a head (the status line has begun).
        case head
        /// `remaining` bytes of a Content-Length body to go.
        case body(remaining: Int)
        /// Waiting for a chunk-size line; `scanned` bytes of it were already checked.
        case chunkSize(scanned: Int)
        /// `remaining` bytes of chunk data to go.
        case chunkData(remaining: Int)
        /// Waiting for the CRLF after chunk data.
        case chunkDataEnd
        /// Inside the trailer section.
        case trailers
        /// Body bytes until the connection closes.
        case untilClose
        /// The message is complete; `.end` is next.
        case ending(trailers: HTTPFields?)
        /// No more HTTP on this connection: it was not kept alive, or became a tunnel.
        case done
        /// A response was rejected.
        case failed(HTTPParserError)
    }

    /// The methods of requests sent and not yet answered, oldest first: an array with a moving head,
    /// so taking the oldest is O(1) however deep the pipeline.
    @usableFromInline
    struct MethodQueue: Sendable {
        /// The oldest method when it was queued on an empty queue: one request at a time (the
        /// common case) never allocates `storage`.
        var first: HTTPMethod?
        /// The methods queued behind `first`, from `head` on.
        var storage: [HTTPMethod] = []
        var head = 0

        var isEmpty: Bool { first == nil && head == storage.count }

        mutating func append(_ method: HTTPMethod) {
            if isEmpty {
                storage.removeAll(keepingCapacity: true)
                head = 0
                first = method
                return
            }
            storage.append(method)
        }

        mutating func removeFirst() -> HTTPMethod? {
            if let method = first {
                first = nil
                return method
            }
            guard head < storage.count else { return nil }
            defer {
                head &+= 1
                if head == storage.count {
                    storage.removeAll(keepingCapacity: true)
                    head = 0
                } else if head >= 64 && head * 2 >= storage.count {
                    storage.removeFirst(head)
                    head = 0
                }
            }
            return storage[head]
        }
    }

    /// The progress through one field section (a head or a trailer section).
    @usableFromInline
    struct HeadProgress: Sendable {
        /// Bytes after the reader index already searched for LF.
        var scanned = 0
        /// Where the current line starts (relative to the reader index).
        var lineStart = 0
        /// Whether the current line holds a control byte (other than HTAB and its CR LF) or DEL;
        /// field values and the reason phrase are checked byte by byte only then.
        var lineHasControl = false
        /// Where the status line starts (after skipped empty lines).
        var start = 0
        var statusSeen = false
        var version = HTTPVersion.http1_1
        var status = 0
        var reasonRange = 0..<0
        var entries: [HTTPFields.Entry] = []
    }

    /// A parser with the given limits.
    public init(configuration: ParserConfiguration = .init()) {
        self.configuration = configuration
    }

    // MARK: Input

    /// Records that a request with `method` was sent, so its response is parsed accordingly. Call once
    /// per request, in the order sent (pipelining).
    public mutating func requestSent(method: HTTPMethod) {
        pendingMethods.append(method)
    }

    /// Appends received bytes. When nothing is buffered the buffer is adopted as is (no copy).
    public mutating func receive(_ bytes: ByteBuffer) {
        if buffer.isEmpty {
            // Progress is kept relative to the reader index, so a fresh buffer can replace an empty one.
            buffer = bytes
        } else {
            buffer.writeBuffer(bytes)
        }
    }

    /// Appends received bytes (copied).
    public mutating func receive(_ bytes: UnsafeRawBufferPointer) {
        buffer.writeBytes(bytes)
    }

    /// Appends received bytes (copied).
    public mutating func receive(bytes: some Sequence<UInt8>) {
        buffer.writeBytes(bytes)
    }

    /// Records that the peer closed its side: no more bytes will come.
    public mutating func receiveEndOfStream() {
        endOfStream = true
    }

    /// Whether bytes are buffered that no event has covered yet (for example bytes after a response
    /// that nobody asked for, or the first bytes of a tunnel).
    public var hasBufferedBytes: Bool { !buffer.isEmpty }

    /// Takes the buffered bytes that no event covered (after `.end` of a tunnel response, these belong
    /// to the tunnelled protocol).
    public mutating func takeBufferedBytes() -> ByteBuffer {
        let rest = buffer
        consumed += buffer.readableBytes
        buffer = ByteBuffer()
        return rest
    }

    /// Whether the last complete response left the connection able to carry another request: it was
    /// kept alive (RFC 9112 §9.3), read to its end, and nothing was rejected.
    public var isReusable: Bool {
        switch state {
        case .idle: return messageKeepAlive && !endOfStream
        default: return false
        }
    }

    // MARK: Events

    /// The next event, or `.needMoreData`.
    ///
    /// - Throws: `HTTPParserError` when the response breaks HTTP/1.1 or a limit; the same error again
    ///   on every later call.
    public mutating func next() throws(HTTPParserError) -> ResponseEvent {
        do {
            let event = try step()
            // Let go of storage whose every byte was handed out: the connection can then read into
            // its receive buffer again instead of allocating a new one (an empty buffer can be
            // replaced at any point, see `receive`).
            if buffer.isEmpty && buffer.capacity > 0 { buffer = ByteBuffer() }
            return event
        } catch {
            state = .failed(error)
            messageKeepAlive = false
            throw error
        }
    }

    @inline(__always)
    private mutating func step() throws(HTTPParserError) -> ResponseEvent {
        while true {
            switch state {
            case .idle:
                guard try skipEmptyLines() else { return .needMoreData }
                state = .head
                head = HeadProgress()
            case .head:
                return try parseHead()
            case .body(let remaining):
                if buffer.isEmpty {
                    if endOfStream {
                        throw error(.truncatedBody, at: 0, "the connection closed with \(remaining) body bytes to go")
                    }
                    return .needMoreData
                }
                let take = min(remaining, buffer.readableBytes)
                let part = buffer.readSlice(length: take)!
                consumed &+= take
                state = take == remaining ? .ending(trailers: nil) : .body(remaining: remaining &- take)
                return .body(part)
            case .chunkSize(let scanned):
                guard let size = try parseChunkSize(scanned: scanned) else { return .needMoreData }
                if size == 0 {
                    state = .trailers
                    head = HeadProgress()
                    head.statusSeen = true
                } else {
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                if buffer.isEmpty {
                    if endOfStream {
                        throw error(.truncatedBody, at: 0, "the connection closed inside chunk data")
                    }
                    return .needMoreData
                }
                let take = min(remaining, buffer.readableBytes)
                let part = buffer.readSlice(length: take)!
                consumed &+= take
                state = take == remaining ? .chunkDataEnd : .chunkData(remaining: remaining &- take)
                return .body(part)
            case .chunkDataEnd:
                // CRLF (or a bare LF, as for every line ending: RFC 9112 §2.2) after the data.
                guard let first = buffer.getByte(at: buffer.readerIndex) else {
                    if endOfStream { throw error(.truncatedBody, at: 0, "the connection closed after chunk data") }
                    return .needMoreData
                }
                if first == 0x0A {
                    advance(1)
                } else if first == 0x0D {
                    guard let second = buffer.getByte(at: buffer.readerIndex + 1) else {
                        if endOfStream { throw error(.truncatedBody, at: 1, "the connection closed after chunk data") }
                        return .needMoreData
                    }
                    guard second == 0x0A else {
                        throw error(.missingChunkDataTerminator, at: 1, "chunk data is followed by CR without LF")
                    }
                    advance(2)
                } else {
                    throw error(.missingChunkDataTerminator, at: 0, "chunk data is longer than its chunk size says")
                }
                state = .chunkSize(scanned: 0)
            case .trailers:
                guard let trailers = try parseTrailers() else { return .needMoreData }
                state = .ending(trailers: trailers)
            case .untilClose:
                if !buffer.isEmpty {
                    let part = buffer.readSlice(length: buffer.readableBytes)!
                    consumed &+= part.readableBytes
                    return .body(part)
                }
                if endOfStream {
                    state = .ending(trailers: nil)
                    continue
                }
                return .needMoreData
            case .ending(let trailers):
                state = messageKeepAlive ? .idle : .done
                informationalCount = 0
                extensionBytes = 0
                return .end(trailers: trailers)
            case .done:
                return .needMoreData
            case .failed(let error):
                throw error
            }
        }
    }

    // MARK: Helpers

    @inline(__always)
    mutating func advance(_ count: Int) {
        buffer.moveReaderIndex(forwardBy: count)
        consumed &+= count
    }

    func error(_ kind: HTTPParserError.Kind, at relative: Int, _ detail: String) -> HTTPParserError {
        HTTPParserError(kind, offset: consumed &+ relative, detail)
    }

    /// Skips empty lines before a status line; true once a status line may begin.
    private mutating func skipEmptyLines() throws(HTTPParserError) -> Bool {
        while let byte = buffer.getByte(at: buffer.readerIndex) {
            if byte == 0x0A {
                advance(1)
            } else if byte == 0x0D {
                guard let next = buffer.getByte(at: buffer.readerIndex + 1) else { break }
                guard next == 0x0A else { return true }  // the status-line parser reports the bare CR
                advance(2)
            } else {
                return true
            }
        }
        if endOfStream {
            throw error(
                informationalCount > 0 ? .truncatedHead : .connectionClosedBeforeResponse, at: 0,
                informationalCount > 0
                    ? "the connection closed after an informational response, before the final one"
                    : "the connection closed before a response arrived")
        }
        return false
    }
}

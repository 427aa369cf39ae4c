/// The head of an HTTP/1.1 request, as the encoder writes it: request line plus header fields.
///
/// The encoder adds `Host` (when the headers have none) and the framing field (`Content-Length` or
/// `Transfer-Encoding`) itself; see `RequestEncoder.encodeHead(_:host:framing:into:)`.
public struct RequestHead: Sendable, Hashable {
    /// The method, such as `GET`; must be a token (RFC 9110 §9.1).
    public var method: HTTPMethod
    /// The request-target (RFC 9112 §3.2), written as given:
    /// origin-form `/path?query` for most requests, absolute-form `http://host/path` through a
    /// proxy, authority-form `host:port` for `CONNECT`, asterisk-form `*` for server-wide `OPTIONS`.
    ///
    /// Must be non-empty printable ASCII without spaces: percent-encode anything else first
    /// (RFC 3986 §2.1). The encoder does not check that the form suits the method.
    public var target: String
    /// The protocol version; `HTTP/1.1` by default. Only `HTTP/1.x` can be encoded.
    public var version: HTTPVersion
    /// The header fields, written in order, names as given (case kept).
    public var headers: HTTPHeaders

    /// Creates a request head.
    ///
    /// - Parameters:
    ///   - method: the method; `GET` by default.
    ///   - target: the request-target, such as `/search?q=bluebonnet`.
    ///   - version: the version; `HTTP/1.1` by default.
    ///   - headers: the header fields in the order to send them; none by default.
    public init(method: HTTPMethod = .get, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }
}

/// How the body that follows a request head is delimited (RFC 9112 §6).
public enum RequestBodyFraming: Sendable, Hashable {
    /// No body. The encoder writes `Content-Length: 0` for methods that define meaning for
    /// content (`POST`, `PUT`, `PATCH`, `QUERY`; RFC 9110 §8.6) and no framing field otherwise.
    case none
    /// A body of exactly this many bytes (≥ 0), announced with `Content-Length` (RFC 9112 §6.2).
    case contentLength(Int)
    /// A body of unknown length, sent with the chunked transfer coding (RFC 9112 §7.1) through
    /// `ChunkedEncoder`. HTTP/1.1 only.
    case chunked
}

/// Writes HTTP/1.1 request heads into a `ByteBuffer` (sans-I/O).
///
/// Everything is validated before a byte is written, so a thrown `RequestEncoderError` leaves the
/// buffer exactly as it was. The head is written with a single `reserveWritable` and no per-header
/// allocation.
public struct RequestEncoder: Sendable {
    /// Creates an encoder. It holds no state: the work is done by the static methods.
    public init() {}

    /// Writes a request head: the request line, `Host`, the user's headers, the framing field and
    /// the empty line that ends the head (RFC 9112 §2.1, §3).
    ///
    /// - `Host` (RFC 9112 §3.2): when `head.headers` has a `Host` field it is written where it
    ///   stands and `host` is ignored; otherwise `Host: <host>` is written first, right after the
    ///   request line. HTTP/1.1 requires one of the two (`missingHost`); for HTTP/1.0 a nil `host`
    ///   means no `Host` field. More than one `Host` field is refused (`duplicateHost`).
    /// - Framing (RFC 9112 §6): `.contentLength(n)` adds `Content-Length: n`; `.chunked` adds
    ///   `Transfer-Encoding: chunked`; `.none` adds `Content-Length: 0` for `POST`, `PUT`, `PATCH`
    ///   and `QUERY` (RFC 9110 §8.6) and nothing for other methods. A framing field the user already
    ///   gave is kept in place instead of being added again, when it agrees: `Content-Length`
    ///   equal to the length (0 for `.none`), or a `Transfer-Encoding` whose last coding is
    ///   `chunked` (for `.chunked`; other codings before it are kept, and `chunked` is appended
    ///   when absent). Anything else is `conflictingFraming`: a different `Content-Length`,
    ///   `Transfer-Encoding` with `.contentLength` or `.none`, `Content-Length` with `.chunked`,
    ///   `chunked` twice or not last, a negative length, chunked over HTTP/1.0.
    /// - Field values are written without leading and trailing spaces and tabs: RFC 9110 §5.5
    ///   says that whitespace is not part of the value, so trimming changes no meaning.
    ///
    /// - Parameters:
    ///   - head: the method, target, version and headers.
    ///   - host: the authority (`host[:port]`) for the `Host` field when the headers have none.
    ///     Must hold no control bytes or spaces. May be empty (RFC 9112 §3.2: an empty `Host` when
    ///     the target URI has no authority).
    ///   - framing: how the body is delimited.
    ///   - buffer: where the head is appended.
    /// - Throws: `RequestEncoderError` — the method is not a token, the target is empty or holds
    ///   a control byte, space or non-ASCII byte, the version is not `HTTP/1.x`, a header name is
    ///   not a token, a header value holds CR, LF, NUL or another control byte, the host is
    ///   missing or invalid, or the framing conflicts. `buffer` is unchanged when it throws.
    /// - Warning: the encoder does not check that the target's form suits the method (`*` only
    ///   for `OPTIONS`, authority-form only for `CONNECT`); that is the caller's job.
    public static func encodeHead(
        _ head: RequestHead,
        host: String?,
        framing: RequestBodyFraming,
        into buffer: inout ByteBuffer
    ) throws(RequestEncoderError) {
        let plan = try makePlan(head, host: host, framing: framing)
        _ = buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: plan.size) { memory in
            var out = EncoderOutput(memory)
            write(head, plan: plan, host: host, into: &out)
            return out.count
        }
    }

    /// Checks a request head as ``encodeHead(_:host:framing:into:)`` would, without writing it:
    /// the same rules, the same `RequestEncoderError`, and no allocation.
    ///
    /// A client calls it before it opens or leases a connection, so a head that can never be sent
    /// (CR/LF/NUL in a header, a method that is not a token…) fails without any I/O.
    ///
    /// - Throws: `RequestEncoderError`, exactly as ``encodeHead(_:host:framing:into:)`` would.
    public static func validateHead(
        _ head: RequestHead,
        host: String?,
        framing: RequestBodyFraming
    ) throws(RequestEncoderError) {
        _ = try makePlan(head, host: host, framing: framing)
    }

    // MARK: Validation

    /// The framing field the encoder adds after the user's headers.
    private enum AddedFraming {
        case nothing
        case contentLength(Int)
        case chunked
    }

    /// What validation found out: enough to write without checking again.
    private struct Plan {
        /// An upper bound on the bytes the head takes.
        var size: Int
        /// Whether `Host: <host>` goes right after the request line.
        var writesHost: Bool
        /// The framing field to add after the user's headers.
        var added: AddedFraming
    }

    /// Byte counts of CRLF and `": "`, for the size estimate.
    private static let crlf = 2
    private static let colonSpace = 2

    private static func makePlan(
        _ head: RequestHead,
        host: String?,
        framing: RequestBodyFraming
    ) throws(RequestEncoderError) -> Plan {
        // Request line (RFC 9112 §3): method SP request-target SP HTTP-version CRLF.
        let method = head.method.rawValue
        let methodCheck: Int?? = EncoderSyntax.withBytes(method) { bytes in
            bytes.isEmpty ? .some(nil) : EncoderSyntax.firstNonTokenByte(bytes).map { .some($0) }
        }
        if let bad = methodCheck {
            throw invalid(.invalidMethod, .method, in: method, at: bad)
        }

        let targetCheck: Int?? = EncoderSyntax.withBytes(head.target) { bytes in
            bytes.isEmpty ? .some(nil) : EncoderSyntax.firstInvalidTargetByte(bytes).map { .some($0) }
        }
        if let bad = targetCheck {
            throw invalid(.invalidTarget, .target, in: head.target, at: bad)
        }

        // HTTP-version = "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); this is an HTTP/1 encoder.
        guard head.version.major == 1, (0...9).contains(head.version.minor) else {
            throw RequestEncoderError(.invalidVersion, .version, detail: "HTTP/\(head.version.major).\(head.version.minor)")
        }

        var size = method.utf8.count + 1 + head.target.utf8.count + 1 + 8 + crlf

        // Header fields: validate each, and note Host and the framing fields.
        var hostFields = 0
        var firstContentLength: (index: Int, value: Int?)? = nil
        var mismatchedContentLength: Int? = nil
        var transferEncoding: (index: Int, chunkedCount: Int, lastIsChunked: Bool)? = nil

        for (index, field) in head.headers.enumerated() {
            let special = try validateField(field, .header(index: index))
            size += field.name.utf8.count + colonSpace + field.value.utf8.count + crlf
            switch special {
            case .other:
                break
            case .host:
                hostFields += 1
                if hostFields > 1 {
                    throw RequestEncoderError(.duplicateHost, .header(index: index), detail: "more than one Host field")
                }
            case .contentLength:
                let value = EncoderSyntax.withBytes(field.value) { bytes in
                    EncoderSyntax.decimal(bytes, EncoderSyntax.trimmedRange(bytes))
                }
                if firstContentLength == nil { firstContentLength = (index, value) }
                if value == nil || value != firstContentLength?.value {
                    mismatchedContentLength = mismatchedContentLength ?? index
                }
            case .transferEncoding:
                var state = transferEncoding ?? (index, 0, false)
                EncoderSyntax.withBytes(field.value) { bytes in
                    scanCodings(bytes, chunkedCount: &state.chunkedCount, lastIsChunked: &state.lastIsChunked)
                }
                transferEncoding = state
            }
        }

        // Host (RFC 9112 §3.2).
        var writesHost = false
        if hostFields == 0 {
            if let host {
                if let bad = EncoderSyntax.withBytes(host, EncoderSyntax.firstInvalidHostByte) {
                    throw invalid(.invalidHost, .host, in: host, at: bad)
                }
                writesHost = true
                size += 6 + host.utf8.count + crlf
            } else if head.version.minor >= 1 {
                throw RequestEncoderError(.missingHost, .host, detail: "HTTP/1.1 needs a Host header or a host argument")
            }
        }

        // Framing (RFC 9112 §6): the user's fields must agree with what the body will be.
        if let index = mismatchedContentLength {
            throw RequestEncoderError(.conflictingFraming, .header(index: index), detail: "Content-Length values disagree or are not decimal")
        }
        let added: AddedFraming
        switch framing {
        case .none, .contentLength:
            var length = 0
            if case .contentLength(let n) = framing {
                guard n >= 0 else {
                    throw RequestEncoderError(.conflictingFraming, .framing, detail: "negative content length")
                }
                length = n
            }
            if let te = transferEncoding {
                throw RequestEncoderError(.conflictingFraming, .header(index: te.index), detail: "Transfer-Encoding without chunked framing")
            }
            if let given = firstContentLength {
                guard given.value == length else {
                    throw RequestEncoderError(.conflictingFraming, .header(index: given.index), detail: "Content-Length differs from the body length \(length)")
                }
                added = .nothing
            } else if case .contentLength = framing {
                added = .contentLength(length)
            } else {
                added = expectsContent(head.method) ? .contentLength(0) : .nothing
            }
        case .chunked:
            guard head.version.minor >= 1 else {
                throw RequestEncoderError(.conflictingFraming, .framing, detail: "chunked needs HTTP/1.1")
            }
            if let given = firstContentLength {
                throw RequestEncoderError(.conflictingFraming, .header(index: given.index), detail: "Content-Length with chunked framing")
            }
            if let te = transferEncoding {
                switch (te.chunkedCount, te.lastIsChunked) {
                case (0, _): added = .chunked
                case (1, true): added = .nothing
                default:
                    throw RequestEncoderError(.conflictingFraming, .header(index: te.index), detail: "chunked must be the last transfer coding, once")
                }
            } else {
                added = .chunked
            }
        }
        switch added {
        case .nothing: break
        case .contentLength(let n): size += 16 + EncoderSyntax.decimalDigitCount(n) + crlf
        case .chunked: size += 26 + crlf
        }
        size += crlf
        return Plan(size: size, writesHost: writesHost, added: added)
    }

    /// Whether `.none` framing should still say `Content-Length: 0` (RFC 9110 §8.6: the method
    /// defines meaning for content).
    private static func expectsContent(_ method: HTTPMethod) -> Bool {
        switch method.rawValue {
        case "POST", "PUT", "PATCH", "QUERY": true
        default: false
        }
    }

    /// Walks a `Transfer-Encoding` list (RFC 9112 §6.1), counting `chunked` and noting whether the
    /// last non-empty element is `chunked`. Parameters after `;` are not part of the name.
    private static func scanCodings(_ bytes: UnsafeBufferPointer<UInt8>, chunkedCount: inout Int, lastIsChunked: inout Bool) {
        var start = 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
            var nameEnd = start
            while nameEnd < end && bytes[nameEnd] != UInt8(ascii: ";") { nameEnd += 1 }
            let element = UnsafeBufferPointer(rebasing: bytes[start..<nameEnd])
            let trimmed = EncoderSyntax.trimmedRange(element)
            if !trimmed.isEmpty {
                let isChunked = EncoderSyntax.equalsIgnoringCase(element, trimmed, "chunked")
                if isChunked { chunkedCount += 1 }
                lastIsChunked = isChunked
            }
            start = end + 1
        }
    }

    /// Checks one header or trailer field's name and value; returns what kind of name it is.
    internal static func validateField(
        _ field: HTTPHeader,
        _ location: RequestEncoderError.Field
    ) throws(RequestEncoderError) -> EncoderSyntax.SpecialName {
        // field-name = token (RFC 9110 §5.1).
        let nameCheck: (bad: Int??, special: EncoderSyntax.SpecialName) = EncoderSyntax.withBytes(field.name) { bytes in
            if bytes.isEmpty { return (.some(nil), .other) }
            if let bad = EncoderSyntax.firstNonTokenByte(bytes) { return (.some(bad), .other) }
            return (nil, EncoderSyntax.specialName(bytes))
        }
        if let bad = nameCheck.bad {
            throw invalid(.invalidHeaderName, location, in: field.name, at: bad, detail: RequestEncoderError.quoted(field.name))
        }
        // field-value = *field-content (RFC 9110 §5.5): no CR, LF, NUL or other controls but HTAB.
        if let bad = EncoderSyntax.withBytes(field.value, EncoderSyntax.firstInvalidValueByte) {
            throw invalid(.invalidHeaderValue, location, in: field.value, at: bad, detail: RequestEncoderError.quoted(field.name))
        }
        return nameCheck.special
    }

    /// An error about the byte at `offset` of `text` (or about `text` being empty when nil).
    private static func invalid(
        _ code: RequestEncoderError.Code,
        _ field: RequestEncoderError.Field,
        in text: String,
        at offset: Int?,
        detail: String = ""
    ) -> RequestEncoderError {
        guard let offset else {
            return RequestEncoderError(code, field, detail: detail.isEmpty ? "empty" : detail + ", empty")
        }
        let byte = EncoderSyntax.withBytes(text) { $0[offset] }
        return RequestEncoderError(code, field, byteOffset: offset, byte: byte, detail: detail)
    }

    // MARK: Writing

    private static func write(_ head: RequestHead, plan: Plan, host: String?, into out: inout EncoderOutput) {
        out.writeString(head.method.rawValue)
        out.write(byte: UInt8(ascii: " "))
        out.writeString(head.target)
        out.writeLiteral(" HTTP/1.")
        out.write(byte: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: head.version.minor))
        out.writeLiteral("\r\n")
        if plan.writesHost, let host {
            out.writeLiteral("Host: ")
            out.writeString(host)
            out.writeLiteral("\r\n")
        }
        for field in head.headers {
            writeField(field, into: &out)
        }
        switch plan.added {
        case .nothing: break
        case .contentLength(let n):
            out.writeLiteral("Content-Length: ")
            out.writeDecimal(n)
            out.writeLiteral("\r\n")
        case .chunked:
            out.writeLiteral("Transfer-Encoding: chunked\r\n")
        }
        out.writeLiteral("\r\n")
    }

    /// Writes `name: value CRLF`, the value without leading and trailing SP/HTAB.
    internal static func writeField(_ field: HTTPHeader, into out: inout EncoderOutput) {
        out.writeString(field.name)
        out.writeLiteral(": ")
        EncoderSyntax.withBytes(field.value) { bytes in
            out.write(UnsafeBufferPointer(rebasing: bytes[EncoderSyntax.trimmedRange(bytes)]))
        }
        out.writeLiteral("\r\n")
    }
}

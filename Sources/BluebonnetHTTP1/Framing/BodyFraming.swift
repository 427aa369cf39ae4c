/// How a response body is delimited (RFC 9112 §6.3).
public enum BodyFraming: Sendable, Hashable {
    /// No body: responses to HEAD, 1xx, 204 and 304 (RFC 9112 §6.3 item 1).
    case none
    /// Exactly this many bytes (RFC 9112 §6.3 item 6).
    case contentLength(Int)
    /// The chunked transfer coding (RFC 9112 §7.1).
    case chunked
    /// Everything until the server closes the connection (RFC 9112 §6.3 item 8).
    case untilClose
    /// The connection stops carrying HTTP: a 2xx to CONNECT (item 2) or 101 Switching Protocols.
    case tunnel

    /// What the Transfer-Encoding fields of a message say, after combining every line (RFC 9110 §5.3).
    public enum TransferCodings: Sendable, Hashable {
        /// No Transfer-Encoding field.
        case absent
        /// Exactly one coding, `chunked`.
        case chunked
        /// A list that is well-formed but is not a single `chunked` (chunked not final, repeated, or
        /// another coding); the associated value is the offending coding.
        case unsupported(String)
        /// A value that is not a list of transfer codings.
        case invalid
    }

    /// What the Content-Length fields of a message say, after combining every line and list element.
    public enum ContentLength: Sendable, Hashable {
        /// No Content-Length field.
        case absent
        /// One value, or several identical ones (RFC 9110 §8.6).
        case value(Int)
        /// Values that differ.
        case conflicting
        /// A value that is not `1*DIGIT` below 2^63.
        case invalid
    }

    /// The framing of a response, following RFC 9112 §6.3 step by step.
    ///
    /// - Parameters:
    ///   - requestMethod: the method of the request this answers.
    ///   - status: the status code.
    ///   - version: the response's version (Transfer-Encoding in HTTP/1.0 is faulty framing, §6.1).
    ///   - transferEncoding: the combined Transfer-Encoding fields.
    ///   - contentLength: the combined Content-Length fields.
    /// - Throws: `HTTPParserError` with offset 0 (the caller knows where the head started).
    public static func forResponse(
        requestMethod: HTTPMethod,
        status: Int,
        version: HTTPVersion,
        transferEncoding: TransferCodings,
        contentLength: ContentLength
    ) throws(HTTPParserError) -> BodyFraming {
        // 1. HEAD, 1xx, 204, 304: no content, whatever the fields say.
        if requestMethod == .head || (100..<200).contains(status) && status != 101 || status == 204 || status == 304 {
            return .none
        }
        // 2. A 2xx to CONNECT turns the connection into a tunnel; so does 101 Switching Protocols.
        if (requestMethod == .connect && (200..<300).contains(status)) || status == 101 {
            return .tunnel
        }
        // 3. Transfer-Encoding with Content-Length: handled as an error ("ought to be").
        if transferEncoding != .absent && contentLength != .absent {
            throw HTTPParserError(.transferEncodingWithContentLength, offset: 0,
                                  "both Transfer-Encoding and Content-Length are present")
        }
        // 4. Transfer-Encoding: chunked must be the final (and, here, only) coding.
        switch transferEncoding {
        case .absent:
            break
        case .invalid:
            throw HTTPParserError(.invalidTransferEncoding, offset: 0, "Transfer-Encoding is not a list of codings")
        case .unsupported(let coding):
            throw HTTPParserError(.unsupportedTransferCoding, offset: 0,
                                  "transfer coding '\(coding)' is not supported (only a single, final 'chunked' is)")
        case .chunked:
            if version < .http1_1 {
                // §6.1: Transfer-Encoding in an HTTP/1.0 message is faulty framing.
                throw HTTPParserError(.invalidTransferEncoding, offset: 0, "Transfer-Encoding in an HTTP/1.0 response")
            }
            return .chunked
        }
        // 5. An invalid or conflicting Content-Length is an unrecoverable error.
        // 6. A valid one gives the length.
        switch contentLength {
        case .invalid:
            throw HTTPParserError(.invalidContentLength, offset: 0, "Content-Length is not a valid length")
        case .conflicting:
            throw HTTPParserError(.conflictingContentLength, offset: 0, "Content-Length values differ")
        case .value(let length):
            return .contentLength(length)
        case .absent:
            // 7 is for requests. 8. Otherwise the body runs until the connection closes.
            return .untilClose
        }
    }
}

extension BodyFraming.ContentLength {
    /// Combines this with one more Content-Length field value (a comma list, RFC 9110 §5.6.1).
    @inlinable
    func merging(fieldValue bytes: UnsafeRawBufferPointer) -> Self {
        var result = self
        var sawElement = false
        bytes.forEachListElement { element in
            // [OWS] 1*DIGIT [OWS]; at most 19 digits, below 2^63.
            sawElement = true
            guard element.count <= 19 else {
                result = .invalid
                return false
            }
            var value: UInt64 = 0
            for i in element {
                let digit = bytes[i] &- 0x30
                guard digit < 10 else {
                    result = .invalid
                    return false
                }
                value = value &* 10 &+ UInt64(digit)
            }
            guard value <= UInt64(Int64.max) else {
                result = .invalid
                return false
            }
            switch result {
            case .absent: result = .value(Int(value))
            case .value(let previous) where previous == Int(value): break
            case .value: result = .conflicting
            case .conflicting, .invalid: break
            }
            return true
        }
        // An empty value (no element at all) is not a length.
        return sawElement ? result : .invalid
    }
}

extension BodyFraming.TransferCodings {
    /// Combines this with one more Transfer-Encoding field value: `#transfer-coding` where
    /// `transfer-coding = token *( OWS ";" OWS transfer-parameter )` (RFC 9112 §7).
    @inlinable
    func merging(fieldValue bytes: UnsafeRawBufferPointer) -> Self {
        var result = self
        var sawCoding = false
        bytes.forEachListElement(honouringQuotes: true) { element in
            // The coding name: a token, then optional parameters.
            var nameEnd = element.lowerBound
            while nameEnd < element.upperBound && ByteClass.table[Int(bytes[nameEnd])] & ByteClass.token != 0 {
                nameEnd &+= 1
            }
            var rest = nameEnd
            while rest < element.upperBound && (bytes[rest] == 0x20 || bytes[rest] == 0x09) { rest &+= 1 }
            guard nameEnd > element.lowerBound, rest == element.upperBound || bytes[rest] == UInt8(ascii: ";") else {
                result = .invalid
                return false
            }
            sawCoding = true
            let isChunked = bytes.equalsCaseInsensitive(element.lowerBound..<nameEnd, "chunked") && rest == element.upperBound
            func name() -> String {
                String(decoding: UnsafeRawBufferPointer(rebasing: bytes[element.lowerBound..<nameEnd]), as: UTF8.self)
            }
            switch result {
            case .absent: result = isChunked ? .chunked : .unsupported(name())
            case .chunked: result = .unsupported(isChunked ? "chunked, chunked" : "chunked, \(name())")
            case .unsupported, .invalid: break
            }
            return true
        }
        // A Transfer-Encoding field with no coding at all is not a list of codings.
        return sawCoding || result == .invalid ? result : .invalid
    }
}

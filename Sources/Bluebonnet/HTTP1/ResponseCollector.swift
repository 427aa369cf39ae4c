import BluebonnetCompression
import BluebonnetCore
import BluebonnetHTTP1

/// A response read whole into memory.
struct CollectedResponse: Sendable {
    /// The final response head (its fields as received, `Content-Encoding` included).
    var head: ResponseHead
    /// The informational (1xx) heads that came before it, in order.
    var informational: [ResponseHead]
    /// The body, content-decoded when decoding was asked for and the response was coded.
    var body: ByteBuffer
    /// The chunked trailer fields, if any were sent.
    var trailers: HTTPFields?
    /// The content codings that were undone, in the order the sender applied them; empty when
    /// the body is as received.
    var decodedCodings: [ContentCoding]
}

/// The in-memory response sink: collects what the exchange forwards, decodes `Content-Encoding`
/// when asked, and enforces the body size limit. Sans-I/O and loop-confined (it owns a zlib
/// stream through `ContentDecoder`), so not `Sendable`.
///
/// Each method throws an `HTTP1Exchange.Rejection`; the shell turns it into the exchange's
/// failure (`StateMachine.responseRejected` while the response is still being read).
struct ResponseCollector {
    /// What the collector does with the body.
    struct Configuration: Sendable, Hashable {
        /// The most body bytes kept in memory (after decoding); 64 MiB by default. One more byte
        /// fails the exchange with `responseBodyTooLarge`.
        var maximumResponseBodyBytes: Int
        /// Whether a `Content-Encoding` of gzip or deflate (RFC 9110 §8.4) is undone; true by
        /// default. An unsupported coding then fails with `contentDecoding` rather than handing
        /// over bytes the caller cannot read.
        var decodesContent: Bool
        /// The limits on decoding (size and ratio); `DecompressionLimits.default` by default.
        var decompressionLimits: DecompressionLimits

        /// A configuration with the defaults above.
        init(
            maximumResponseBodyBytes: Int = 64 * 1024 * 1024,
            decodesContent: Bool = true,
            decompressionLimits: DecompressionLimits = .default
        ) {
            self.maximumResponseBodyBytes = maximumResponseBodyBytes
            self.decodesContent = decodesContent
            self.decompressionLimits = decompressionLimits
        }
    }

    let configuration: Configuration
    private var informational: [ResponseHead] = []
    private var head: ResponseHead?
    private var body = ByteBuffer()
    private var decoder: ContentDecoder?

    /// A collector with the given configuration.
    init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// The body bytes collected or passed through so far (after decoding), also after `end`
    /// handed the collected ones over.
    private(set) var collectedByteCount = 0

    /// The informational (1xx) heads so far.
    var informationalHeads: [ResponseHead] { informational }

    /// An informational (1xx) head.
    mutating func informational(_ head: ResponseHead) {
        informational.append(head)
    }

    /// The final head: sets up decoding when the body is coded and decoding was asked for.
    mutating func head(_ head: ResponseHead) throws(HTTP1Exchange.Rejection) {
        self.head = head
        guard head.framing != .none else { return }
        guard configuration.decodesContent, let contentEncoding = Self.contentEncoding(of: head) else {
            // An announced length is known before the first byte: refuse one over the limit now,
            // and make room for the body once (no regrowth, no copy of what already arrived).
            if case .contentLength(let length) = head.framing {
                if length > configuration.maximumResponseBodyBytes {
                    throw .bodyTooLarge(limit: configuration.maximumResponseBodyBytes)
                }
                if length >= Self.preallocationThreshold { body = ByteBuffer(capacity: length) }
            }
            return
        }
        do {
            let decoder = try ContentDecoder(contentEncoding: contentEncoding, limits: configuration.decompressionLimits)
            if !decoder.codings.isEmpty { self.decoder = decoder }
        } catch {
            throw .contentDecoding(error)
        }
    }

    /// A part of the body: kept as is (the first part without a copy) or decoded.
    mutating func body(_ part: ByteBuffer) throws(HTTP1Exchange.Rejection) {
        if let decoder {
            do {
                try decoder.decode(part, into: &body)
            } catch {
                throw .contentDecoding(error)
            }
        } else if body.isEmpty && body.capacity == 0 {
            body = part
        } else {
            body.writeBuffer(part)
        }
        try checkLimit()
    }

    /// The end of the response: finishes decoding and hands the response over.
    ///
    /// - Precondition: a final head was collected.
    mutating func end(trailers: HTTPFields?) throws(HTTP1Exchange.Rejection) -> CollectedResponse {
        guard let head else { preconditionFailure("a response ended without a head") }
        if let decoder {
            do {
                try decoder.finish(into: &body)
            } catch {
                throw .contentDecoding(error)
            }
            try checkLimit()
        }
        // The body changes hands: kept here too, its storage would be shared while the exchange
        // lives on, and the caller could not take it over without a copy.
        collectedByteCount = body.readableBytes
        let collected = body
        body = ByteBuffer()
        return CollectedResponse(
            head: head, informational: informational, body: collected, trailers: trailers,
            decodedCodings: decoder?.codings ?? [])
    }

    /// From this announced length on, the body's storage is allocated up front; below it the
    /// first part is adopted without a copy (most small bodies arrive in one read).
    static let preallocationThreshold = 64 * 1024

    // MARK: Passing through (streamed responses)

    /// The final head of a streamed response: sets up decoding as `head` does, without the
    /// in-memory size limit and without making room for the body (nothing is kept).
    mutating func passHead(_ head: ResponseHead) throws(HTTP1Exchange.Rejection) {
        self.head = head
        guard configuration.decodesContent, head.framing != .none else { return }
        guard let contentEncoding = Self.contentEncoding(of: head) else { return }
        do {
            let decoder = try ContentDecoder(contentEncoding: contentEncoding, limits: configuration.decompressionLimits)
            if !decoder.codings.isEmpty { self.decoder = decoder }
        } catch {
            throw .contentDecoding(error)
        }
    }

    /// A part of a streamed body, content-decoded when decoding is on, handed back rather than
    /// kept (no size limit: the consumer holds what it takes). Empty when the decoder is still
    /// buffering.
    mutating func pass(_ part: ByteBuffer) throws(HTTP1Exchange.Rejection) -> ByteBuffer {
        guard let decoder else {
            collectedByteCount += part.readableBytes
            return part
        }
        var decoded = ByteBuffer()
        do {
            try decoder.decode(part, into: &decoded)
        } catch {
            throw .contentDecoding(error)
        }
        collectedByteCount += decoded.readableBytes
        return decoded
    }

    /// The end of a streamed body: what the decoder still held (empty without decoding), and
    /// the response with an empty body.
    ///
    /// - Precondition: a final head was collected.
    mutating func endPassing(trailers: HTTPFields?) throws(HTTP1Exchange.Rejection) -> (CollectedResponse, tail: ByteBuffer) {
        guard let head else { preconditionFailure("a response ended without a head") }
        var tail = ByteBuffer()
        if let decoder {
            do {
                try decoder.finish(into: &tail)
            } catch {
                throw .contentDecoding(error)
            }
            collectedByteCount += tail.readableBytes
        }
        let response = CollectedResponse(
            head: head, informational: informational, body: ByteBuffer(), trailers: trailers,
            decodedCodings: decoder?.codings ?? [])
        return (response, tail)
    }

    /// The head's `Content-Encoding` field lines as one list value (joined with `, `, RFC 9110
    /// §5.3), nil without any: no array of values for the one line a coded response has.
    private static func contentEncoding(of head: ResponseHead) -> String? {
        var combined: String?
        for field in head.headers where field.hasName("Content-Encoding") {
            combined = combined.map { $0 + ", " + field.value } ?? field.value
        }
        return combined
    }

    private mutating func checkLimit() throws(HTTP1Exchange.Rejection) {
        collectedByteCount = body.readableBytes
        if body.readableBytes > configuration.maximumResponseBodyBytes {
            throw .bodyTooLarge(limit: configuration.maximumResponseBodyBytes)
        }
    }
}

import BluebonnetCore

/// A response as the cache keeps it: what RFC 9111 needs to answer a later request from it, to
/// revalidate it, and to compute its age.
///
/// The body is the response's content as a network response would deliver it (content coding
/// already decoded); the header fields are the ones received, so a response served from the cache
/// looks exactly like the one that was stored, apart from `Age`.
public struct CachedResponseEntry: Sendable, Hashable {
    /// The primary cache key (RFC 9111 §2): the target URI, without its fragment.
    public var key: String
    /// The method of the request that produced the response.
    public var requestMethod: HTTPMethod
    /// The request's fields named by the response's `Vary`, as they were sent (the secondary
    /// key, RFC 9111 §4.1). Empty when the response has no `Vary`.
    public var varyingRequestHeaders: HTTPHeaders
    /// The response's status code.
    public var statusCode: Int
    /// The response's reason phrase.
    public var reasonPhrase: String
    /// The response's HTTP version.
    public var version: HTTPVersion
    /// The response's header fields, in the order received.
    public var headers: HTTPHeaders {
        didSet { fields = ParsedResponseFields(headers) }
    }
    /// The response's content.
    public var body: ByteBuffer
    /// When the request was sent, in seconds since 1970 (`request_time`, RFC 9111 §4.2.3).
    public var requestTime: Double
    /// When the response was received, in seconds since 1970 (`response_time`, RFC 9111 §4.2.3).
    public var responseTime: Double
    /// ``headers``' caching fields, parsed when the headers are set (so once per entry made or
    /// loaded, not once per lookup).
    package private(set) var fields: ParsedResponseFields

    /// An entry from its parts.
    public init(
        key: String,
        requestMethod: HTTPMethod,
        varyingRequestHeaders: HTTPHeaders,
        statusCode: Int,
        reasonPhrase: String,
        version: HTTPVersion,
        headers: HTTPHeaders,
        body: ByteBuffer,
        requestTime: Double,
        responseTime: Double
    ) {
        self.key = key
        self.requestMethod = requestMethod
        self.varyingRequestHeaders = varyingRequestHeaders
        self.statusCode = statusCode
        self.reasonPhrase = reasonPhrase
        self.version = version
        self.headers = headers
        self.fields = ParsedResponseFields(headers)
        self.body = body
        self.requestTime = requestTime
        self.responseTime = responseTime
    }

    /// The bytes the entry occupies, as stores count them against their capacity: the body, the
    /// key and every header field's name and value.
    public var byteCount: Int {
        var count = body.readableBytes + key.utf8.count + reasonPhrase.utf8.count
        for field in headers { count += field.name.utf8.count + field.value.utf8.count + 4 }
        for field in varyingRequestHeaders { count += field.name.utf8.count + field.value.utf8.count + 4 }
        return count
    }
}

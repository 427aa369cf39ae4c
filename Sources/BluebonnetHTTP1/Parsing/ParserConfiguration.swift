/// Limits and leniencies of `ResponseParser`. Every limit has a safe default; each is checked as bytes
/// arrive, so a hostile peer can never make the parser buffer more than the limit.
///
/// Choices the RFC leaves open, made once here and not configurable:
/// - A bare LF ends a line like CRLF does (RFC 9112 §2.2: "a recipient MAY recognize a single LF as a
///   line terminator and ignore any preceding CR"). A bare CR is an error.
/// - obs-fold in a field value is replaced by SP (RFC 9112 §5.2: "A user agent that receives an
///   obs-fold in a response message … MUST replace each received obs-fold with one or more SP
///   octets"). A whitespace-started line right after the status line is an error (RFC 9112 §2.2).
/// - Empty lines before a status line are skipped (as servers sometimes send a stray CRLF after a body).
/// - A Transfer-Encoding other than exactly `chunked` is rejected: the body could not be decoded, and
///   reading it to EOF (RFC 9112 §6.3 item 4) would hand the caller transfer-coded bytes as content.
/// - Transfer-Encoding together with Content-Length is rejected (RFC 9112 §6.3 item 3 allows it, but
///   says it "ought to be handled as an error"); identical repeated Content-Length values are accepted
///   (RFC 9110 §8.6).
public struct ParserConfiguration: Sendable, Hashable {
    /// The largest head (status line plus field lines, with line endings) accepted. Default 80 KiB.
    public var maxHeadBytes: Int = 80 * 1024
    /// The most field lines in one head (and, separately, in one trailer section). Default 256.
    public var maxFieldCount: Int = 256
    /// The most chunk-extension bytes in one message (they are discarded, but cost bandwidth and CPU).
    /// Default 16 KiB.
    public var maxChunkExtensionBytes: Int = 16 * 1024
    /// The largest trailer section (after the last chunk). Default 16 KiB.
    public var maxTrailerBytes: Int = 16 * 1024
    /// The most 1xx responses accepted before a final response. Default 16.
    public var maxInformationalResponses: Int = 16

    /// The defaults above.
    public init() {}

    /// The defaults with some limits changed.
    public init(
        maxHeadBytes: Int = 80 * 1024,
        maxFieldCount: Int = 256,
        maxChunkExtensionBytes: Int = 16 * 1024,
        maxTrailerBytes: Int = 16 * 1024,
        maxInformationalResponses: Int = 16
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.maxFieldCount = maxFieldCount
        self.maxChunkExtensionBytes = maxChunkExtensionBytes
        self.maxTrailerBytes = maxTrailerBytes
        self.maxInformationalResponses = maxInformationalResponses
    }
}

/// What the pipeline does with a response body: the request kind's sink. The exchange writes to
/// one of them (ARCHITECTURE.md, "Response sinks").
enum ResponseDisposition: Sendable {
    /// Read whole into memory (``DataRequest``, ``UploadRequest``).
    case collect
    /// Handed over in parts as it arrives, with backpressure (``DataStreamRequest``).
    case stream(StreamingContext)

    /// The stream context, for the kinds whose body is not collected.
    var streaming: StreamingContext? {
        switch self {
        case .collect: nil
        case .stream(let context): context
        }
    }
}

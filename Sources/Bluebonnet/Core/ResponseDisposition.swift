/// What the pipeline does with a response body: the request kind's sink. The exchange writes to
/// one of them (ARCHITECTURE.md, "Response sinks").
enum ResponseDisposition: Sendable {
    /// Read whole into memory (``DataRequest``, ``UploadRequest``).
    case collect
    /// Handed over in parts as it arrives, with backpressure (``DataStreamRequest``).
    case stream(StreamingContext)
    /// Written to a file (``DownloadRequest``): streamed like `stream`, into the context's file.
    case download(DownloadContext)

    /// The stream context, for the kinds whose body is not collected.
    var streaming: StreamingContext? {
        switch self {
        case .collect: nil
        case .stream(let context): context
        case .download(let context): context.streaming
        }
    }
}

extension ResponseDisposition {
    /// The download's file sink, for a download.
    var download: DownloadContext? {
        if case .download(let context) = self { return context }
        return nil
    }
}

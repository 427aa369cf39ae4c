import BluebonnetCore
import Synchronization

// What adapters in this package (BluebonnetOpenAPI's `SessionTransport`) need from a stream
// request beyond the public API: the head as soon as it is decided, without a queue hop, and the
// parts as byte arrays without the `Data` in between. `package`: not part of the public API.

extension DataStreamRequest {
    /// The head of the response whose body will be streamed, as soon as it passed validation
    /// (before any part is delivered), or the error the request finished with before it delivered
    /// one (a connection failure, a failed validation, a cancellation…).
    ///
    /// Does not start the request, and waiting does not keep it from finishing; cancelling the
    /// waiting task does not cancel the request (the caller decides).
    package func deliveredHead() async -> Result<HTTPResponse, BluebonnetError> {
        let streaming = self.streaming
        return await withCheckedContinuation { continuation in
            let once = ResumeOnce(continuation)
            streaming.whenDelivered { once.resume(.success($0)) }
            whenFinished(resuming: false) { outcome in
                if let response = streaming.deliveredResponse {
                    once.resume(.success(response))
                } else if let response = outcome.response, outcome.error == nil {
                    once.resume(.success(response))
                } else {
                    once.resume(.failure(outcome.error ?? .explicitlyCancelled))
                }
            }
        }
    }

    /// A reader of the parts as byte arrays (one copy out of the receive buffer, none through
    /// `Data`), then of the completion's error: what ``DataStreamTask/streamingData(automaticallyCancelling:)``
    /// gives, as a `Sendable` value. It subscribes at once and does not start the request.
    ///
    /// With `automaticallyCancelling` (the default), cancelling a task waiting in
    /// ``ByteArrayReader/next()``, or dropping the last copy of the reader before the completion,
    /// cancels the request.
    package func byteArrayReader(automaticallyCancelling: Bool = true) -> ByteArrayReader {
        let channel = streaming.channel
        return ByteArrayReader(
            subscription: ByteArrayReader.Subscription(
                channel: channel, id: channel.subscribeAsync(), request: self, automaticallyCancelling: automaticallyCancelling),
            request: self)
    }

    /// What ``ByteArrayReader/next()`` gives.
    package enum ByteArrayEvent: Sendable {
        /// A part of the body.
        case part([UInt8])
        /// The end: nil when the whole body was delivered, else why not.
        case complete(BluebonnetError?)
    }

    /// Reads a stream request's parts; see ``DataStreamRequest/byteArrayReader(automaticallyCancelling:)``.
    /// Copies share one subscription; one task at a time may wait in ``next()``.
    package struct ByteArrayReader: Sendable {
        typealias Subscription = StreamOf<ByteArrayEvent>.Subscription

        let subscription: Subscription
        let request: DataStreamRequest

        /// The next part, then the completion, then nil.
        package func next() async -> ByteArrayEvent? {
            switch await subscription.next() {
            case .part(let part)?: .part(part.withUnsafeReadableBytes { Array($0) })
            case .complete?: .complete(request.completion().error)
            case nil: nil
            }
        }
    }
}

/// Resumes a continuation with the first result it is given and ignores the others.
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: Value) {
        let continuation = self.continuation.withLock { stored in
            defer { stored = nil }
            return stored
        }
        continuation?.resume(returning: value)
    }
}

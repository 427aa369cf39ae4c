import BluebonnetCore
import FoundationEssentials

/// The async face of a ``DataStreamRequest`` (Alamofire's `DataStreamTask`): each `streaming…`
/// method gives an async sequence of ``DataStreamRequest/Stream`` events — the parts, then one
/// `.complete` — and starts the request when iterated.
///
/// ```swift
/// let task = Session.default.streamRequest("https://example.com/large.bin").streamTask()
/// for await stream in task.streamingData() {
///     switch stream.event {
///     case .stream(.success(let data)): sink(data)
///     case .complete(let completion): print(completion.error ?? "done")
///     }
/// }
/// ```
///
/// The connection is read no faster than the loop asks for parts (see ``DataStreamRequest``).
/// With `automaticallyCancelling` (the default), cancelling the iterating task or dropping the
/// iterator before the completion cancels the request; without it, the iteration just ends.
public struct DataStreamTask: Sendable {
    /// The sequence type the `streaming…` methods return.
    public typealias Stream<Success: Sendable, Failure: Error> = StreamOf<DataStreamRequest.Stream<Success, Failure>>

    let request: DataStreamRequest

    /// The parts as `Data`.
    public func streamingData(automaticallyCancelling: Bool = true) -> Stream<Data, Never> {
        makeStream(automaticallyCancelling) { .success($0) }
    }

    /// The parts as UTF-8 text (see ``StringStreamSerializer``).
    public func streamingStrings(automaticallyCancelling: Bool = true) -> Stream<String, Never> {
        makeStream(automaticallyCancelling) { .success(String(decoding: $0, as: UTF8.self)) }
    }

    /// Each part decoded as `T` on its own (see ``DecodableStreamSerializer``).
    public func streamingDecodables<T: Decodable & Sendable>(
        _ type: T.Type = T.self, automaticallyCancelling: Bool = true, decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) -> Stream<T, BluebonnetError> {
        streamingResponses(
            serializedUsing: DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: preprocessor),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Each part serialized by `serializer`.
    public func streamingResponses<Serializer: DataStreamSerializer>(
        serializedUsing serializer: Serializer, automaticallyCancelling: Bool = true
    ) -> Stream<Serializer.SerializedObject, BluebonnetError> {
        makeStream(automaticallyCancelling) { DataStreamRequest.serialize($0, with: serializer) }
    }

    /// Cancels the request.
    public func cancel() { request.cancel() }

    /// Starts the request.
    public func resume() { request.resume() }

    /// Suspends the request if it has not started.
    public func suspend() { request.suspend() }

    private func makeStream<Success: Sendable, Failure: Error>(
        _ automaticallyCancelling: Bool, _ serialize: @escaping @Sendable (Data) -> Result<Success, Failure>
    ) -> Stream<Success, Failure> {
        let request = self.request
        let token = DataStreamRequest.CancellationToken(request: request)
        return StreamOf(request: request, automaticallyCancelling: automaticallyCancelling) { event in
            switch event {
            case .part(let part):
                DataStreamRequest.Stream(event: .stream(serialize(part.withUnsafeReadableBytes { Data($0) })), token: token)
            case .complete:
                DataStreamRequest.Stream(event: .complete(request.completion()), token: token)
            }
        }
    }
}

/// An async sequence over a stream request's events (Alamofire's `StreamOf`). Each iteration
/// subscribes on its own (and starts the request): it gets the parts from then on, then the
/// completion, then nil.
public struct StreamOf<Element: Sendable>: AsyncSequence, Sendable {
    let request: DataStreamRequest
    let automaticallyCancelling: Bool
    let transform: @Sendable (ResponseStreamChannel.Event) -> Element

    /// Subscribes and starts the request.
    public func makeAsyncIterator() -> Iterator {
        let channel = request.streaming.channel
        let subscription = Subscription(
            channel: channel, id: channel.subscribeAsync(), request: request, automaticallyCancelling: automaticallyCancelling)
        if request.resumesAutomatically { request.resume() }
        return Iterator(subscription: subscription, transform: transform)
    }

    /// The iterator: dropping it before the completion cancels the request (when
    /// automatically cancelling) or leaves the stream.
    public struct Iterator: AsyncIteratorProtocol {
        let subscription: Subscription
        let transform: @Sendable (ResponseStreamChannel.Event) -> Element

        /// The next event, nil after the completion.
        public mutating func next() async -> Element? {
            await subscription.next().map(transform)
        }
    }

    /// One iteration's subscription; ends it when the iterator goes away.
    final class Subscription: Sendable {
        let channel: ResponseStreamChannel
        let id: Int
        let request: DataStreamRequest
        let automaticallyCancelling: Bool

        init(channel: ResponseStreamChannel, id: Int, request: DataStreamRequest, automaticallyCancelling: Bool) {
            self.channel = channel
            self.id = id
            self.request = request
            self.automaticallyCancelling = automaticallyCancelling
        }

        func next() async -> ResponseStreamChannel.Event? {
            await withTaskCancellationHandler {
                await channel.next(id)
            } onCancel: {
                if automaticallyCancelling {
                    request.cancel()
                } else {
                    channel.unsubscribe(id)
                }
            }
        }

        deinit {
            // Iteration left early: the request goes on only without automatic cancellation.
            if automaticallyCancelling && request.finishedOutcome == nil { request.cancel() }
            channel.unsubscribe(id)
        }
    }
}

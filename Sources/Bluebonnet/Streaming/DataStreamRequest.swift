import BluebonnetCore
import Dispatch
import FoundationEssentials
import Synchronization

/// A request whose response body is handed over in parts as it arrives, never held whole
/// (Alamofire's `DataStreamRequest`). Made by ``Session/streamRequest(_:method:parameters:encoder:headers:automaticallyCancelOnStreamError:interceptor:shouldAutomaticallyResume:eventMonitors:requestModifier:)``.
///
/// ```swift
/// Session.default.streamRequest("https://example.com/large.bin")
///     .validate()
///     .responseStream { stream in
///         switch stream.event {
///         case .stream(.success(let data)): sink(data)
///         case .complete(let completion): print(completion.error ?? "done")
///         }
///     }
/// ```
///
/// **Backpressure.** The connection is read only as fast as the handlers take the parts: when
/// more than 1 MiB was handed to handlers that have not returned (or to iterators that have not
/// asked for it), reading stops, and it resumes below 256 KiB. A slow consumer of a huge body
/// holds about 1 MiB, not the body.
///
/// **What differs from ``DataRequest``.**
/// - The head is decided before any part is delivered: redirects and one `Basic` challenge are
///   followed as usual (their bodies are read and dropped, so the connection is reused), and
///   validators run on the head alone (their `data` is nil). A failed validation ends the request
///   with its error without delivering a part (the connection is closed).
/// - No retry once a response was delivered to the handlers (its bytes cannot be taken back); a
///   failure before that (connection, validation) is retried as usual.
/// - `maximumResponseBodyBytes` does not apply (nothing is kept); content decoding and its
///   ``SessionConfiguration/decompressionLimits`` do.
/// - A failure after parts were delivered (the connection was reset, the body was cut short, a
///   timeout) is the ``Completion/error``, after those parts: a stream never just ends short.
/// - A stream read to its end returns its connection to the pool; a cancelled one closes it.
/// - Event monitors see this request with a nil `data`; `didReceiveResponse` and
///   the stream's `didValidateRequest` come before the transaction's `didFinishTransaction`,
///   since they happen on the head while the body streams.
///
/// Handlers added after parts were delivered miss those parts; add them before the request starts.
public final class DataStreamRequest: Request, @unchecked Sendable {
    /// A stream handler: throwing records the error as the request's (and cancels the request when
    /// ``automaticallyCancelOnStreamError``).
    public typealias Handler<Success: Sendable, Failure: Error> = @Sendable (Stream<Success, Failure>) throws -> Void
    /// A validator of the head: the request (as sent) and the response.
    public typealias Validation = @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse) -> ValidationResult

    /// One event for a stream handler, with a way to cancel the request.
    public struct Stream<Success: Sendable, Failure: Error>: Sendable {
        /// A part or the end.
        public let event: Event<Success, Failure>
        /// Cancels the request.
        public let token: CancellationToken

        /// Cancels the request (the connection is closed; the completion follows).
        public func cancel() { token.cancel() }

        /// The part's result, nil for the completion.
        public var result: Result<Success, Failure>? {
            if case .stream(let result) = event { return result }
            return nil
        }

        /// The part's value, nil for the completion or a failed part.
        public var value: Success? { try? result?.get() }

        /// The part's error, nil for the completion or a part that serialized.
        public var error: Failure? {
            if case .failure(let error)? = result { return error }
            return nil
        }

        /// The completion, nil for a part.
        public var completion: Completion? {
            if case .complete(let completion) = event { return completion }
            return nil
        }
    }

    /// What a stream handler is told.
    public enum Event<Success: Sendable, Failure: Error>: Sendable {
        /// A part of the body, serialized.
        case stream(Result<Success, Failure>)
        /// The request is done; nothing follows.
        case complete(Completion)
    }

    /// How the request ended.
    public struct Completion: Sendable {
        /// The last request sent, if one was.
        public let request: HTTPRequest?
        /// The response whose body was streamed (or the one that failed validation).
        public let response: HTTPResponse?
        /// The request's metrics.
        public let metrics: ResponseMetrics?
        /// Why it failed, nil when the whole body was delivered.
        public let error: BluebonnetError?
    }

    /// Cancels its request.
    public struct CancellationToken: Sendable {
        let request: DataStreamRequest

        /// Cancels the request.
        public func cancel() { request.cancel() }
    }

    let streaming: StreamingContext
    /// Whether a throwing stream handler cancels the request.
    public let automaticallyCancelOnStreamError: Bool
    private let capturedError = Mutex<BluebonnetError?>(nil)

    init(
        session: Session, built: Result<HTTPRequest, BluebonnetError>, interceptor: (any RequestInterceptor)?,
        eventMonitor: CompositeEventMonitor, automaticallyCancelOnStreamError: Bool
    ) {
        let streaming = StreamingContext()
        self.streaming = streaming
        self.automaticallyCancelOnStreamError = automaticallyCancelOnStreamError
        super.init(
            session: session, built: built, interceptor: interceptor, eventMonitor: eventMonitor,
            disposition: .stream(streaming))
        let channel = streaming.channel
        whenFinished(resuming: false) { outcome in
            channel.finish(dropPending: outcome.error?.isExplicitlyCancelledError ?? false)
        }
    }

    // MARK: State

    /// The response whose body is being streamed, once it passed validation: set before its
    /// first part is handed to any handler. Before that, the last response of the running
    /// ``Request/task`` (a redirect, or a head that failed validation, as a retrier sees it).
    public override var response: HTTPResponse? { streaming.deliveredResponse ?? super.response }

    // MARK: Configuration

    /// Adds a validator of the head: it runs before any part is delivered.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        validate(Validator { request, response, _ in validation(request, response) })
    }

    /// Calls `handler` on `queue` with the head of the response that will be streamed, once it
    /// passed validation and before its parts are delivered (redirects and challenges that are
    /// followed are not reported).
    ///
    /// - Parameters:
    ///   - queue: default: the session's ``Session/completionQueue``.
    ///   - handler: called once with the head.
    @discardableResult
    public func onHTTPResponse(on queue: DispatchQueue? = nil, perform handler: @escaping @Sendable (HTTPResponse) -> Void) -> Self {
        streaming.addResponseHandler(queue: queue ?? session.completionQueue, handler)
        return self
    }

    // MARK: Closure style

    /// Calls `stream` on `queue` with each part as `Data`, then once with the completion. Each
    /// call returns before the next one starts; the connection is read no faster than that.
    ///
    /// - Parameters:
    ///   - queue: default: the session's ``Session/completionQueue`` (serial).
    ///   - stream: called with each part, then the completion.
    @discardableResult
    public func responseStream(on queue: DispatchQueue? = nil, stream: @escaping Handler<Data, Never>) -> Self {
        subscribe(queue: queue, serialize: { .success($0) }, handler: stream)
    }

    /// Calls `stream` on `queue` with each part serialized by `serializer`, then the completion.
    /// A part that fails to serialize is a `.failure` event (the stream goes on).
    @discardableResult
    public func responseStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer, on queue: DispatchQueue? = nil,
        stream: @escaping Handler<Serializer.SerializedObject, BluebonnetError>
    ) -> Self {
        subscribe(queue: queue, serialize: { Self.serialize($0, with: serializer) }, handler: stream)
    }

    /// Calls `stream` on `queue` with each part as UTF-8 text (see ``StringStreamSerializer``).
    @discardableResult
    public func responseStreamString(on queue: DispatchQueue? = nil, stream: @escaping Handler<String, Never>) -> Self {
        subscribe(queue: queue, serialize: { .success(String(decoding: $0, as: UTF8.self)) }, handler: stream)
    }

    /// Calls `stream` on `queue` with each part decoded as `T` on its own (JSON by default; see
    /// ``DecodableStreamSerializer`` for what a part is).
    @discardableResult
    public func responseStreamDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, on queue: DispatchQueue? = nil, using decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor(), stream: @escaping Handler<T, BluebonnetError>
    ) -> Self {
        responseStream(using: DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: preprocessor), on: queue, stream: stream)
    }

    // MARK: async/await

    /// The async face of this request: ``DataStreamTask/streamingData(automaticallyCancelling:)``
    /// and its siblings. Nothing starts until one is iterated.
    public func streamTask() -> DataStreamTask { DataStreamTask(request: self) }

    // MARK: Internals

    private func subscribe<Success: Sendable, Failure: Error>(
        queue: DispatchQueue?, serialize: @escaping @Sendable (Data) -> Result<Success, Failure>,
        handler: @escaping Handler<Success, Failure>
    ) -> Self {
        let token = CancellationToken(request: self)
        streaming.channel.subscribe(queue: queue ?? session.completionQueue) { [self] event in
            let stream: Stream<Success, Failure>
            switch event {
            case .part(let part):
                stream = Stream(event: .stream(serialize(part.withUnsafeReadableBytes { Data($0) })), token: token)
            case .complete:
                stream = Stream(event: .complete(completion()), token: token)
            }
            do {
                try handler(stream)
            } catch {
                captured(error)
            }
        }
        if resumesAutomatically { resume() }
        return self
    }

    static func serialize<Serializer: DataStreamSerializer>(
        _ data: Data, with serializer: Serializer
    ) -> Result<Serializer.SerializedObject, BluebonnetError> {
        do {
            return .success(try serializer.serialize(data))
        } catch let error as BluebonnetError {
            return .failure(error)
        } catch {
            if serializer is any DecodableStreamSerializerMarker {
                return .failure(.responseSerializationFailed(reason: .decodingFailed(error: error)))
            }
            return .failure(.responseSerializationFailed(reason: .customSerializationFailed(error: error)))
        }
    }

    /// A handler threw: the first such error becomes the request's.
    func captured(_ error: any Error) {
        let recorded = error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error)))
        capturedError.withLock { $0 = $0 ?? recorded }
        if automaticallyCancelOnStreamError { cancel() }
    }

    /// The completion handlers are given.
    func completion() -> Completion {
        let outcome = finishedOutcome
        let streamError = capturedError.withLock { $0 }
        return Completion(
            request: outcome?.request ?? lastRequest, response: outcome?.response, metrics: outcome?.metrics,
            error: streamError ?? outcome?.error)
    }
}

/// Lets `serialize` tell decoding failures from other serializer errors.
protocol DecodableStreamSerializerMarker {}
extension DecodableStreamSerializer: DecodableStreamSerializerMarker {}

/// What a stream request's pipeline shares with its ``DataStreamRequest``: the channel, the
/// `onHTTPResponse` handlers and the waiters for the delivered head.
final class StreamingContext: Sendable {
    let channel: ResponseStreamChannel
    private let responseHandlers = Mutex<[(DispatchQueue, @Sendable (HTTPResponse) -> Void)]>([])
    private let delivered = Mutex<Delivery>(Delivery())

    /// The delivered head, and who waits for it until then.
    private struct Delivery {
        var response: HTTPResponse?
        var waiters: [@Sendable (HTTPResponse) -> Void] = []
    }

    init(channel: ResponseStreamChannel = ResponseStreamChannel()) {
        self.channel = channel
    }

    var deliveredResponse: HTTPResponse? { delivered.withLock { $0.response } }

    func addResponseHandler(queue: DispatchQueue, _ handler: @escaping @Sendable (HTTPResponse) -> Void) {
        responseHandlers.withLock { $0.append((queue, handler)) }
    }

    /// Calls `body` with the delivered head, on the pipeline's thread when it is delivered (at
    /// once when it already was). A request that finishes without delivering one never calls it.
    func whenDelivered(_ body: @escaping @Sendable (HTTPResponse) -> Void) {
        let ready = delivered.withLock { delivery -> HTTPResponse? in
            if let response = delivery.response { return response }
            delivery.waiters.append(body)
            return nil
        }
        if let ready { body(ready) }
    }

    /// The pipeline is about to deliver `response`'s body.
    func responseDelivered(_ response: HTTPResponse) {
        let waiters = delivered.withLock { delivery in
            delivery.response = response
            defer { delivery.waiters = [] }
            return delivery.waiters
        }
        for waiter in waiters { waiter(response) }
        let handlers = responseHandlers.withLock { $0 }
        for (queue, handler) in handlers { queue.async { handler(response) } }
    }
}

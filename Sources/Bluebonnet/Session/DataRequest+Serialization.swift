import BluebonnetCore
import Dispatch
import FoundationEssentials

// MARK: Closure style (Alamofire's chained handlers)

extension DataRequest {
    /// Calls `completionHandler` on `queue` with the unserialized response (`Data?` body).
    ///
    /// - Parameter queue: default: the session's ``Session/completionQueue`` (a serial queue of its own).
    @discardableResult
    public func response(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (BluebonnetDataResponse<Data?>) -> Void
    ) -> Self {
        let queue = queue ?? session.completionQueue
        whenFinished { outcome in
            let response = Self.unserialized(outcome)
            self.eventMonitor.request(self, didParseResponse: response)
            queue.async { completionHandler(response) }
        }
        return self
    }

    /// Serializes the response with `responseSerializer` and calls `completionHandler` on `queue`.
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue? = nil,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (BluebonnetDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        let queue = queue ?? session.completionQueue
        whenFinished { outcome in
            let response = Self.serialize(outcome, with: responseSerializer)
            self.eventMonitor.request(self, didParseResponse: response)
            queue.async { completionHandler(response) }
        }
        return self
    }

    /// The body as `Data` (see ``DataResponseSerializer`` for empty bodies).
    @discardableResult
    public func responseData(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (BluebonnetDataResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The body as a `String`, in the response's charset unless `encoding` is given.
    @discardableResult
    public func responseString(
        queue: DispatchQueue? = nil,
        encoding: String.Encoding? = nil,
        completionHandler: @escaping @Sendable (BluebonnetDataResponse<String>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: StringResponseSerializer(encoding: encoding), completionHandler: completionHandler)
    }

    /// The body decoded as `T` (JSON by default).
    @discardableResult
    public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self,
        queue: DispatchQueue? = nil,
        decoder: any DataDecoder = JSONDecoder(),
        completionHandler: @escaping @Sendable (BluebonnetDataResponse<T>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: DecodableResponseSerializer(of: type, decoder: decoder), completionHandler: completionHandler)
    }

    static func serialize<Serializer: DataResponseSerializerProtocol>(
        _ outcome: Outcome, with serializer: Serializer
    ) -> BluebonnetDataResponse<Serializer.SerializedObject> {
        ResponseSerialization.response(
            serializing: serializer, request: outcome.request, response: outcome.response, data: outcome.data,
            error: outcome.error, metrics: outcome.metrics, clock: ContinuousClock())
    }

    /// The response as received, unserialized (every status and an empty body are fine).
    static func unserialized(_ outcome: Outcome) -> BluebonnetDataResponse<Data?> {
        BluebonnetDataResponse<Data?>(
            request: outcome.request, response: outcome.response, data: outcome.data, metrics: outcome.metrics,
            serializationDuration: .zero, result: outcome.error.map { .failure($0) } ?? .success(outcome.data))
    }
}

// MARK: async/await

/// A serialized value of a ``DataRequest``, to await (Alamofire's `DataTask`).
public struct DataTask<Value: Sendable>: Sendable {
    let request: DataRequest
    let serialize: @Sendable (DataRequest.Outcome) -> BluebonnetDataResponse<Value>
    let cancelsWithTask: Bool

    /// The whole response: request, response head, data, metrics and the serialized result.
    /// Cancelling the awaiting task cancels the request (unless made with `automaticallyCancelling: false`).
    public var response: BluebonnetDataResponse<Value> {
        get async {
            let request = self.request
            let outcome: DataRequest.Outcome
            if cancelsWithTask {
                outcome = await withTaskCancellationHandler {
                    await request.finishedResponse()
                } onCancel: {
                    request.cancel()
                }
            } else {
                outcome = await request.finishedResponse()
            }
            let response = serialize(outcome)
            request.eventMonitor.request(request, didParseResponse: response)
            return response
        }
    }

    /// The serialized result.
    public var result: Result<Value, BluebonnetError> { get async { await response.result } }

    /// The serialized value.
    ///
    /// - Throws: ``BluebonnetError``.
    public var value: Value { get async throws(BluebonnetError) { try await result.get() } }

    /// Cancels the request.
    public func cancel() { request.cancel() }
}

extension DataRequest {
    /// Awaits the body as `Data`.
    public func serializingData(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<Data> {
        serializingResponse(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the body as a `String`.
    public func serializingString(automaticallyCancelling: Bool = true, encoding: String.Encoding? = nil) -> DataTask<String> {
        serializingResponse(using: StringResponseSerializer(encoding: encoding), automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the body decoded as `T` (JSON by default).
    public func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self, automaticallyCancelling: Bool = true, decoder: any DataDecoder = JSONDecoder()
    ) -> DataTask<T> {
        serializingResponse(using: DecodableResponseSerializer(of: type, decoder: decoder), automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the response serialized by `serializer`.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer, automaticallyCancelling: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        if session.startRequestsImmediately { resume() }
        return DataTask(request: self, serialize: { Self.serialize($0, with: serializer) }, cancelsWithTask: automaticallyCancelling)
    }

    /// Awaits the unserialized response: the body as received (nil when there was none) and any
    /// error. Every status and an empty body are fine here (a Bluebonnet addition, the async twin of
    /// ``response(queue:completionHandler:)``).
    public func serializingResponse(automaticallyCancelling: Bool = true) -> DataTask<Data?> {
        if session.startRequestsImmediately { resume() }
        return DataTask(
            request: self,
            serialize: { Self.unserialized($0) },
            cancelsWithTask: automaticallyCancelling)
    }
}

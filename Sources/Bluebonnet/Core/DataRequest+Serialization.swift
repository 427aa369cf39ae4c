import BluebonnetCore
import Dispatch
import FoundationEssentials

// MARK: Closure style (Alamofire's chained handlers)

extension DataRequest {
    /// Calls `completionHandler` on `queue` with the unserialized response (`Data?` body).
    ///
    /// - Parameters:
    ///   - queue: default: the session's ``Session/completionQueue`` (a serial queue of its own).
    ///   - completionHandler: called once with the response.
    @discardableResult
    public func response(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (AFDataResponse<Data?>) -> Void
    ) -> Self {
        let queue = queue ?? session.completionQueue
        whenFinishedToSerialize(handlerQueue: queue) { outcome, onHandlerQueue in
            let response = Self.unserialized(outcome)
            self.eventMonitor.request(self, didParseResponse: response)
            if onHandlerQueue { completionHandler(response) } else { queue.async { completionHandler(response) } }
        }
        return self
    }

    /// Serializes the response with `responseSerializer` and calls `completionHandler` on `queue`.
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue? = nil,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        let queue = queue ?? session.completionQueue
        whenFinishedToSerialize(handlerQueue: queue) { outcome, onHandlerQueue in
            let response = Self.serialize(outcome, with: responseSerializer)
            self.eventMonitor.request(self, didParseResponse: response)
            if onHandlerQueue { completionHandler(response) } else { queue.async { completionHandler(response) } }
        }
        return self
    }

    /// The body as `Data` (see ``DataResponseSerializer``).
    ///
    /// An empty (or absent) body is an error (`.responseSerializationFailed(reason:
    /// .inputDataNilOrZeroLength)`) unless the status is in `emptyResponseCodes` (default 204
    /// and 205) or the method in `emptyRequestMethods` (default HEAD). `dataPreprocessor` runs on
    /// non-empty bodies first. The same three parameters exist on every serializing handler.
    @discardableResult
    public func responseData(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The body as a `String`, in the response's charset unless `encoding` is given (see
    /// ``StringResponseSerializer``; the empty-body parameters as in ``responseData(queue:dataPreprocessor:emptyResponseCodes:emptyRequestMethods:completionHandler:)``).
    @discardableResult
    public func responseString(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<String>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The body decoded as `T` (JSON by default; see ``DecodableResponseSerializer``, which also
    /// says what an allowed empty body becomes).
    @discardableResult
    public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self,
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<T>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer(
                of: type, dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    static func serialize<Serializer: DataResponseSerializerProtocol>(
        _ outcome: Outcome, with serializer: Serializer
    ) -> AFDataResponse<Serializer.SerializedObject> {
        ResponseSerialization.response(
            serializing: serializer, request: outcome.request, response: outcome.response, data: outcome.data,
            error: outcome.error, metrics: outcome.metrics)
    }

    /// The response as received, unserialized (every status and an empty body are fine).
    static func unserialized(_ outcome: Outcome) -> AFDataResponse<Data?> {
        AFDataResponse<Data?>(
            request: outcome.request, response: outcome.response, data: outcome.data, metrics: outcome.metrics,
            serializationDuration: .zero, result: outcome.error.map { .failure($0) } ?? .success(outcome.data))
    }
}

// MARK: async/await

/// A serialized value of a ``DataRequest``, to await (Alamofire's `DataTask`).
public struct DataTask<Value: Sendable>: Sendable {
    let request: DataRequest
    let serialize: @Sendable (DataRequest.Outcome) -> AFDataResponse<Value>
    let cancelsWithTask: Bool

    /// The whole response: request, response head, data, metrics and the serialized result.
    /// Cancelling the awaiting task cancels the request (unless made with `automaticallyCancelling: false`).
    public var response: AFDataResponse<Value> {
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
            let serialize = self.serialize
            // Without a serialization queue, at once: a closure over the outcome for
            // `serializing` would be an allocation per request.
            let response = request.session.serializationQueue == nil
                ? serialize(outcome) : await request.serializing { serialize(outcome) }
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
        // The defaults (`session.request(url).serializingData()`) serialize through a closure that
        // captures nothing: one over the serializer would be an allocation per request.
        if dataPreprocessor is PassthroughPreprocessor,
            emptyResponseCodes == DataResponseSerializer.defaultEmptyResponseCodes,
            emptyRequestMethods == DataResponseSerializer.defaultEmptyRequestMethods
        {
            if resumesAutomatically { resume() }
            return DataTask(
                request: self, serialize: { DataRequest.serialize($0, with: DataResponseSerializer()) },
                cancelsWithTask: automaticallyCancelling)
        }
        return serializingResponse(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the body as a `String` (see ``StringResponseSerializer``).
    public func serializingString(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<String> {
        serializingResponse(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the body decoded as `T` (JSON by default; see ``DecodableResponseSerializer``).
    public func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DataTask<T> {
        serializingResponse(
            using: DecodableResponseSerializer(
                of: type, dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the response serialized by `serializer`.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer, automaticallyCancelling: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        if resumesAutomatically { resume() }
        return DataTask(request: self, serialize: { Self.serialize($0, with: serializer) }, cancelsWithTask: automaticallyCancelling)
    }

    /// Awaits the unserialized response: the body as received (nil when there was none) and any
    /// error. Every status and an empty body are fine here (a Bluebonnet addition, the async twin of
    /// ``response(queue:completionHandler:)``).
    public func serializingResponse(automaticallyCancelling: Bool = true) -> DataTask<Data?> {
        if resumesAutomatically { resume() }
        return DataTask(
            request: self,
            serialize: { Self.unserialized($0) },
            cancelsWithTask: automaticallyCancelling)
    }
}

import Dispatch
import FoundationEssentials

// MARK: Closure style

extension DownloadRequest {
    /// Calls `completionHandler` on `queue` with the unserialized response: the file's URL (nil
    /// when none was written) and any error.
    ///
    /// - Parameters:
    ///   - queue: default: the session's ``Session/completionQueue``.
    ///   - completionHandler: called once with the response.
    @discardableResult
    public func response(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (AFDownloadResponse<URL?>) -> Void
    ) -> Self {
        let queue = queue ?? session.completionQueue
        whenFinishedToSerialize(handlerQueue: queue) { outcome, onHandlerQueue in
            let response = self.unserialized(outcome)
            if onHandlerQueue { completionHandler(response) } else { queue.async { completionHandler(response) } }
        }
        return self
    }

    /// Serializes the download with `responseSerializer` and calls `completionHandler` on `queue`.
    @discardableResult
    public func response<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue? = nil,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        let queue = queue ?? session.completionQueue
        whenFinishedToSerialize(handlerQueue: queue) { outcome, onHandlerQueue in
            let response = self.serialize(outcome, with: responseSerializer)
            self.eventMonitor.request(self, didParseResponse: response)
            if onHandlerQueue { completionHandler(response) } else { queue.async { completionHandler(response) } }
        }
        return self
    }

    /// The file's URL (a failure when the download failed or wrote no file).
    @discardableResult
    public func responseURL(
        queue: DispatchQueue? = nil, completionHandler: @escaping @Sendable (AFDownloadResponse<URL>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// The file's bytes as `Data` (see ``DataResponseSerializer``; read from the file).
    @discardableResult
    public func responseData(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The file's bytes as a `String` (see ``StringResponseSerializer``).
    @discardableResult
    public func responseString(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<String>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// The file's bytes decoded as `T` (see ``DecodableResponseSerializer``).
    @discardableResult
    public func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self,
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<T>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer(
                of: type, dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    func serialize<Serializer: DownloadResponseSerializerProtocol>(
        _ outcome: Outcome, with serializer: Serializer
    ) -> AFDownloadResponse<Serializer.SerializedObject> {
        let start = MonotonicTime.now
        let fileURL = outcome.error == nil ? self.fileURL : nil
        let result: Result<Serializer.SerializedObject, BluebonnetError>
        do {
            result = .success(try serializer.serializeDownload(
                request: outcome.request, response: outcome.response, fileURL: fileURL, error: outcome.error))
        } catch {
            result = .failure(error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        return AFDownloadResponse(
            request: outcome.request, response: outcome.response, fileURL: self.fileURL, resumeData: resumeData,
            metrics: outcome.metrics, serializationDuration: start.duration(to: .now), result: result)
    }

    func unserialized(_ outcome: Outcome) -> AFDownloadResponse<URL?> {
        AFDownloadResponse(
            request: outcome.request, response: outcome.response, fileURL: fileURL, resumeData: resumeData,
            metrics: outcome.metrics, serializationDuration: .zero,
            result: outcome.error.map { .failure($0) } ?? .success(fileURL))
    }
}

// MARK: async/await

/// A serialized value of a ``DownloadRequest``, to await (Alamofire's `DownloadTask`).
public struct DownloadTask<Value: Sendable>: Sendable {
    let request: DownloadRequest
    let serialize: @Sendable (Request.Outcome) -> AFDownloadResponse<Value>
    let cancelsWithTask: Bool

    /// The whole response. Cancelling the awaiting task cancels the download (unless made with
    /// `automaticallyCancelling: false`); a cancelled download keeps no resume data unless
    /// ``DownloadRequest/cancel(producingResumeData:)`` was used.
    public var response: AFDownloadResponse<Value> {
        get async {
            let request = self.request
            let outcome: Request.Outcome
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
            guard request.session.serializationQueue != nil else { return serialize(outcome) }
            return await request.serializing { serialize(outcome) }
        }
    }

    /// The serialized result.
    public var result: Result<Value, BluebonnetError> { get async { await response.result } }

    /// The serialized value.
    ///
    /// - Throws: ``BluebonnetError``.
    public var value: Value { get async throws(BluebonnetError) { try await result.get() } }

    /// Cancels the download.
    public func cancel() { request.cancel() }

    /// Cancels the download, keeping what arrived for ``DownloadRequest/resumeData``.
    public func cancel(producingResumeData: Bool) { request.cancel(producingResumeData: producingResumeData) }
}

extension DownloadRequest {
    /// Awaits the download serialized by `serializer`.
    public func serializingDownload<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer, automaticallyCancelling: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> {
        if resumesAutomatically { resume() }
        return DownloadTask(
            request: self,
            serialize: { outcome in
                let response = self.serialize(outcome, with: serializer)
                self.eventMonitor.request(self, didParseResponse: response)
                return response
            },
            cancelsWithTask: automaticallyCancelling)
    }

    /// Awaits the file's URL.
    public func serializingDownloadedFileURL(automaticallyCancelling: Bool = true) -> DownloadTask<URL> {
        serializingDownload(using: URLResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the file's bytes as `Data`.
    public func serializingData(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<Data> {
        serializingDownload(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the file's bytes as a `String`.
    public func serializingString(
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<String> {
        serializingDownload(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }

    /// Awaits the file's bytes decoded as `T`.
    public func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        automaticallyCancelling: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods
    ) -> DownloadTask<T> {
        serializingDownload(
            using: DecodableResponseSerializer(
                of: type, dataPreprocessor: dataPreprocessor, decoder: decoder, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: automaticallyCancelling)
    }
}

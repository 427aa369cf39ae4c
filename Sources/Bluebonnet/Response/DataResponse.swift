import FoundationEssentials

/// Everything known about a finished request: what was sent, what came back, and the
/// serialized result.
///
/// Same shape as Alamofire's `DataResponse`, with ``HTTPRequest`` for `URLRequest`,
/// ``HTTPResponse`` for `HTTPURLResponse`, ``ResponseMetrics`` for `URLSessionTaskMetrics`,
/// and `Duration` for the `TimeInterval` of ``serializationDuration``.
public struct DataResponse<Success, Failure: Error> {
    /// The request as last sent (after adapters and redirects), or nil when none was built.
    public let request: HTTPRequest?
    /// The response head, or nil when none arrived.
    public let response: HTTPResponse?
    /// The body as received (after content decoding), or nil when none arrived.
    public let data: Data?
    /// Timing and counters, when the request ran.
    public let metrics: ResponseMetrics?
    /// How long the serializer ran.
    public let serializationDuration: Duration
    /// The serialized value or the error.
    public let result: Result<Success, Failure>

    /// The success value, or nil on failure.
    public var value: Success? { try? result.get() }

    /// The error, or nil on success.
    public var error: Failure? {
        if case let .failure(error) = result { return error }
        return nil
    }

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - request: The request as sent.
    ///   - response: The response head.
    ///   - data: The body.
    ///   - metrics: Timing and counters.
    ///   - serializationDuration: How long the serializer ran.
    ///   - result: The serialized value or the error.
    public init(
        request: HTTPRequest?, response: HTTPResponse?, data: Data?, metrics: ResponseMetrics?,
        serializationDuration: Duration, result: Result<Success, Failure>
    ) {
        self.request = request
        self.response = response
        self.data = data
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// The same response with the success value transformed; a failure is kept as is.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DataResponse<NewSuccess, Failure> {
        with(result.map(transform))
    }

    /// The same response with the success value transformed by a closure that may throw; a
    /// thrown error becomes the failure (the error type widens to `any Error`).
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, any Error> {
        switch result {
        case let .success(value):
            do { return with(.success(try transform(value))) } catch { return with(.failure(error)) }
        case let .failure(error):
            return with(.failure(error))
        }
    }

    /// The same response with the success value replaced by the result of `transform`, which
    /// may fail with the same error type; a failure is kept as is.
    public func flatMap<NewSuccess>(_ transform: (Success) -> Result<NewSuccess, Failure>) -> DataResponse<NewSuccess, Failure> {
        with(result.flatMap(transform))
    }

    /// The same response with the failure transformed; a success is kept as is.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DataResponse<Success, NewFailure> {
        with(result.mapError(transform))
    }

    /// The same response with the failure transformed by a closure that may throw; a thrown
    /// error replaces the failure (the error type widens to `any Error`).
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DataResponse<Success, any Error> {
        switch result {
        case let .success(value):
            return with(.success(value))
        case let .failure(error):
            do { return with(.failure(try transform(error))) } catch { return with(.failure(error)) }
        }
    }

    private func with<S, F>(_ result: Result<S, F>) -> DataResponse<S, F> {
        DataResponse<S, F>(
            request: request, response: response, data: data, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }
}

extension DataResponse: Sendable where Success: Sendable {}

/// A ``DataResponse`` whose failure is an ``AFError`` (``BluebonnetError``): what response
/// handlers deliver.
public typealias AFDataResponse<Success> = DataResponse<Success, AFError>

/// A `Result` whose failure is an ``AFError`` (``BluebonnetError``).
public typealias AFResult<Success> = Result<Success, AFError>

extension DataResponse {
    /// Alamofire 4's summary of the request's timing, serialization included (see ``Timeline``).
    /// A request that never ran (no ``metrics``) gives a timeline whose durations are all zero
    /// and whose latency is nil, as Alamofire 4 gave one of zeros.
    public var timeline: Timeline { metrics.map { $0.timeline(serializationDuration: serializationDuration) } ?? .unrun() }
}

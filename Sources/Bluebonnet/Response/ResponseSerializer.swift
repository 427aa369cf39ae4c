import FoundationEssentials

/// Turns a finished exchange into a value: the base protocol of every response serializer.
///
/// Serializers are pure and synchronous; the Session runs them off the event loop. They must be
/// `Sendable` because they cross from the caller's task to that executor.
public protocol DataResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The value this serializer produces.
    associatedtype SerializedObject: Sendable

    /// Produces the value, or throws.
    ///
    /// - Parameters:
    ///   - request: The request as last sent, if one was built.
    ///   - response: The response head, if one arrived.
    ///   - data: The body, if one arrived.
    ///   - error: The error the request already failed with (transport, validation…), if any;
    ///     serializers rethrow it.
    func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws
        -> SerializedObject
}

/// A serializer with Alamofire's shared configuration: a ``DataPreprocessor`` and the rules
/// for when an empty body is a valid response.
///
/// An empty (or absent) body is allowed when the request method is in ``emptyRequestMethods``
/// (default `[.head]`) or the status code is in ``emptyResponseCodes`` (default `[204, 205]`,
/// RFC 9110 §15.3.5–15.3.6); otherwise it fails with
/// `.responseSerializationFailed(reason: .inputDataNilOrZeroLength)`.
public protocol ResponseSerializer: DataResponseSerializerProtocol, DownloadResponseSerializerProtocol {
    /// Runs on non-empty bodies before serialization.
    var dataPreprocessor: any DataPreprocessor { get }
    /// Request methods whose responses may have an empty body.
    var emptyRequestMethods: Set<HTTPMethod> { get }
    /// Status codes whose responses may have an empty body.
    var emptyResponseCodes: Set<Int> { get }
}

// Made once: every `serializingData()` and `response…` call takes these as default arguments, and
// a set literal is an allocation each time.
private let defaultEmptyRequestMethodsSet: Set<HTTPMethod> = [.head]
private let defaultEmptyResponseCodesSet: Set<Int> = [204, 205]

extension ResponseSerializer {
    /// The default preprocessor: ``PassthroughPreprocessor``.
    public static var defaultDataPreprocessor: any DataPreprocessor { PassthroughPreprocessor() }
    /// The default methods allowed an empty body: `[.head]`.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { defaultEmptyRequestMethodsSet }
    /// The default status codes allowed an empty body: `[204, 205]`.
    public static var defaultEmptyResponseCodes: Set<Int> { defaultEmptyResponseCodesSet }

    /// ``defaultDataPreprocessor`` unless the serializer says otherwise.
    public var dataPreprocessor: any DataPreprocessor { Self.defaultDataPreprocessor }
    /// ``defaultEmptyRequestMethods`` unless the serializer says otherwise.
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }
    /// ``defaultEmptyResponseCodes`` unless the serializer says otherwise.
    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }

    /// Whether the request's method allows an empty body; nil without a request.
    public func requestAllowsEmptyResponseData(_ request: HTTPRequest?) -> Bool? {
        request.map { emptyRequestMethods.contains($0.requestMethod) }
    }

    /// Whether the response's status code allows an empty body; nil without a response.
    public func responseAllowsEmptyResponseData(_ response: HTTPResponse?) -> Bool? {
        response.map { emptyResponseCodes.contains($0.statusCode) }
    }

    /// Whether an empty body is a valid response for this request and response: the method
    /// or the status code allows it.
    public func emptyResponseAllowed(forRequest request: HTTPRequest?, response: HTTPResponse?) -> Bool {
        requestAllowsEmptyResponseData(request) == true || responseAllowsEmptyResponseData(response) == true
    }

    /// The shared first steps: rethrows `error`; returns nil for an empty body that is allowed;
    /// throws `inputDataNilOrZeroLength` for one that is not; otherwise returns the preprocessed
    /// body.
    func preparedData(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> Data? {
        if let error { throw error }
        guard let data, !data.isEmpty else {
            guard emptyResponseAllowed(forRequest: request, response: response) else {
                throw BluebonnetError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return nil
        }
        return try dataPreprocessor.preprocess(data)
    }
}

/// Runs serializers and packages their outcome as a ``DataResponse``.
enum ResponseSerialization {
    /// Serializes and times one response.
    ///
    /// `error` is the error the request already failed with; serializers rethrow it. Errors that
    /// are not ``BluebonnetError`` (a preprocessor's or a custom serializer's) become
    /// `.responseSerializationFailed(reason: .customSerializationFailed(error:))`.
    static func response<Serializer: DataResponseSerializerProtocol>(
        serializing serializer: Serializer, request: HTTPRequest?, response: HTTPResponse?, data: Data?,
        error: BluebonnetError?, metrics: ResponseMetrics?
    ) -> AFDataResponse<Serializer.SerializedObject> {
        let start = MonotonicTime.now
        let result: Result<Serializer.SerializedObject, BluebonnetError>
        do {
            result = .success(try serializer.serialize(request: request, response: response, data: data, error: error))
        } catch {
            result = .failure(
                error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        let duration = start.duration(to: .now)
        return DataResponse(
            request: request, response: response, data: data, metrics: metrics,
            serializationDuration: duration, result: result)
    }
}

import Bluebonnet
import Foundation

/// Serializes a body with `JSONSerialization` into an untyped object: Alamofire's
/// `JSONResponseSerializer`, deprecated there as here in favour of `DecodableResponseSerializer`.
///
/// An empty (or absent) body gives `NSNull()` when the request method or the status code allow
/// one (``emptyRequestMethods``, ``emptyResponseCodes``), else fails with
/// `.responseSerializationFailed(reason: .inputDataNilOrZeroLength)`; a body that is not JSON
/// fails with `.responseSerializationFailed(reason: .jsonSerializationFailed(error:))`.
///
/// Alamofire's serializer produces `Any`; a Bluebonnet serializer's value must be `Sendable`, so
/// this one produces `any Sendable`: the same object graph with dictionaries as
/// `[String: any Sendable]` and arrays as `[any Sendable]`. Casts such as `as? [String: Any]`
/// work on it as on `Any`, and `DataRequest.responseJSON(…)`
/// hands out `Any` as Alamofire's does.
@available(*, deprecated, message: "Decode into a Decodable type with DecodableResponseSerializer (responseDecodable) instead.")
public struct JSONResponseSerializer: ResponseSerializer {
    /// Runs on non-empty bodies before they are parsed.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes whose responses may have an empty body (default 204, 205).
    public let emptyResponseCodes: Set<Int>
    /// Request methods whose responses may have an empty body (default HEAD).
    public let emptyRequestMethods: Set<HTTPMethod>
    /// The `JSONSerialization` reading options (default `.allowFragments`).
    public let options: JSONSerialization.ReadingOptions

    /// Creates a serializer; every parameter has Alamofire's default.
    public init(
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    /// The parsed JSON, `NSNull()` for an allowed empty body, or the error (see the type).
    public func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws
        -> any Sendable
    {
        try untypedObject(
            request: request, response: response, data: data, error: error,
            parse: { try JSONSerialization.jsonObject(with: $0, options: options) }, failure: { .jsonSerializationFailed(error: $0) })
    }
}

@available(*, deprecated, message: "Decode into a Decodable type with responseDecodable instead.")
extension DataRequest {
    /// The body parsed with `JSONSerialization` (see ``JSONResponseSerializer``): Alamofire's
    /// `responseJSON`, deprecated there as here in favour of `responseDecodable`.
    ///
    /// - Parameters:
    ///   - queue: default: the session's `completionQueue` (Alamofire: the main queue).
    ///   - dataPreprocessor: runs on non-empty bodies first.
    ///   - emptyResponseCodes: default 204 and 205.
    ///   - emptyRequestMethods: default HEAD.
    ///   - options: default `.allowFragments`.
    ///   - completionHandler: called once with the response; its value is the JSON object as `Any`.
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        let serializer = JSONResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods, options: options)
        return response(queue: queue, responseSerializer: serializer) { response in
            completionHandler(response.map { $0 as Any })
        }
    }
}

@available(*, deprecated, message: "Decode into a Decodable type with responseDecodable instead.")
extension DownloadRequest {
    /// The downloaded file parsed with `JSONSerialization`: Alamofire's `responseJSON` for
    /// downloads (see `DataRequest.responseJSON(…)`).
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue? = nil,
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        let serializer = JSONResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods, options: options)
        return response(queue: queue, responseSerializer: serializer) { response in
            completionHandler(response.map { $0 as Any })
        }
    }
}

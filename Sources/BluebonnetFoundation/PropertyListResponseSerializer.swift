import Bluebonnet
import Foundation

/// Serializes a body with `PropertyListSerialization` into an untyped object: what Alamofire 4's
/// `responsePropertyList` used (Alamofire 5 has none; decode with `PropertyListDecoder` instead).
///
/// An empty (or absent) body gives `NSNull()` when the request method or the status code allow
/// one, else fails with `.responseSerializationFailed(reason: .inputDataNilOrZeroLength)`. A body
/// that is not a property list fails with
/// `.responseSerializationFailed(reason: .customSerializationFailed(error:))` holding
/// `PropertyListSerialization`'s error (Alamofire 4's `propertyListSerializationFailed` case has
/// no counterpart in Alamofire 5's error). The value is `any Sendable`, as for
/// ``JSONResponseSerializer``: dictionaries as `[String: any Sendable]`, arrays as
/// `[any Sendable]`.
@available(*, deprecated, message: "Decode into a Decodable type with PropertyListDecoder (responseDecodable) instead.")
public struct PropertyListResponseSerializer: ResponseSerializer {
    /// Runs on non-empty bodies before they are parsed.
    public let dataPreprocessor: any DataPreprocessor
    /// Status codes whose responses may have an empty body (default 204, 205).
    public let emptyResponseCodes: Set<Int>
    /// Request methods whose responses may have an empty body (default HEAD).
    public let emptyRequestMethods: Set<HTTPMethod>
    /// The `PropertyListSerialization` reading options (default none).
    public let options: PropertyListSerialization.ReadOptions

    /// Creates a serializer.
    public init(
        dataPreprocessor: any DataPreprocessor = PropertyListResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = PropertyListResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = PropertyListResponseSerializer.defaultEmptyRequestMethods,
        options: PropertyListSerialization.ReadOptions = []
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
    }

    /// The parsed property list, `NSNull()` for an allowed empty body, or the error (see the type).
    public func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws
        -> any Sendable
    {
        try untypedObject(
            request: request, response: response, data: data, error: error,
            parse: { try PropertyListSerialization.propertyList(from: $0, options: options, format: nil) }, failure: { .customSerializationFailed(error: $0) })
    }
}

@available(*, deprecated, message: "Decode into a Decodable type with PropertyListDecoder (responseDecodable) instead.")
extension DataRequest {
    /// The body parsed with `PropertyListSerialization` (see ``PropertyListResponseSerializer``):
    /// Alamofire 4's `responsePropertyList`.
    ///
    /// - Parameters:
    ///   - queue: default: the session's `completionQueue` (Alamofire 4: the main queue).
    ///   - options: default none.
    ///   - completionHandler: called once with the response; its value is the property list as `Any`.
    @discardableResult
    public func responsePropertyList(
        queue: DispatchQueue? = nil,
        options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: PropertyListResponseSerializer(options: options)) { response in
            completionHandler(response.map { $0 as Any })
        }
    }
}

@available(*, deprecated, message: "Decode into a Decodable type with PropertyListDecoder (responseDecodable) instead.")
extension DownloadRequest {
    /// The downloaded file parsed with `PropertyListSerialization`: Alamofire 4's
    /// `responsePropertyList` for downloads.
    @discardableResult
    public func responsePropertyList(
        queue: DispatchQueue? = nil,
        options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: PropertyListResponseSerializer(options: options)) { response in
            completionHandler(response.map { $0 as Any })
        }
    }
}

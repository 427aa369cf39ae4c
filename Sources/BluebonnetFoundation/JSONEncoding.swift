import Bluebonnet
import Foundation

/// Encodes untyped `Parameters` as a JSON body with `JSONSerialization`: Alamofire's
/// `JSONEncoding`.
///
/// Sets `Content-Type: application/json` unless the request has one. Prefer
/// `JSONParameterEncoder` (in `Bluebonnet`) with `Encodable` parameters.
public struct JSONEncoding: ParameterEncoding {
    /// Compact output.
    public static var `default`: JSONEncoding { JSONEncoding() }
    /// Indented output.
    public static var prettyPrinted: JSONEncoding { JSONEncoding(options: .prettyPrinted) }

    /// The `JSONSerialization` writing options.
    public let options: JSONSerialization.WritingOptions

    /// The error inside `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))` when
    /// the parameters are not a JSON object `JSONSerialization` can write.
    public enum Error: Swift.Error, Sendable {
        /// The value is not a valid JSON object (`JSONSerialization.isValidJSONObject` is false).
        case invalidJSONObject
    }

    /// Creates an encoding with `options` (none by default).
    public init(options: JSONSerialization.WritingOptions = []) { self.options = options }

    /// Sets the body to the JSON of `parameters`; nil parameters leave the request unchanged.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))` with
    ///   ``Error/invalidJSONObject`` when the parameters are not a valid JSON object, or with
    ///   `JSONSerialization`'s error.
    public func encode(_ request: any URLRequestConvertible, with parameters: Parameters?) throws -> HTTPRequest {
        guard let parameters else { return try request.asURLRequest() }
        return try encode(request, withJSONObject: parameters)
    }

    /// Sets the body to the JSON of any JSON object (an array, for example); nil leaves the
    /// request unchanged.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))`, as
    ///   ``encode(_:with:)`` does.
    public func encode(_ request: any URLRequestConvertible, withJSONObject jsonObject: Any? = nil) throws
        -> HTTPRequest
    {
        var request = try request.asURLRequest()
        guard let jsonObject else { return request }
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: Error.invalidJSONObject))
        }
        do {
            request.httpBody = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        if !request.headers.contains(name: "Content-Type") {
            request.headers.update(.contentType("application/json"))
        }
        return request
    }
}

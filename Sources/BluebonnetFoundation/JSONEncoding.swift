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

    /// Creates an encoding with `options` (none by default).
    public init(options: JSONSerialization.WritingOptions = []) { self.options = options }

    /// Sets the body to the JSON of `parameters`; nil parameters leave the request unchanged.
    /// - Throws: `RequestBuildError` with code `.jsonEncodingFailed` when the parameters are not
    ///   a valid JSON object or serialization fails.
    public func encode(_ request: any URLRequestConvertible, with parameters: Parameters?) throws -> HTTPRequest {
        guard let parameters else { return try request.asURLRequest() }
        return try encode(request, withJSONObject: parameters)
    }

    /// Sets the body to the JSON of any JSON object (an array, for example); nil leaves the
    /// request unchanged.
    /// - Throws: `RequestBuildError` with code `.jsonEncodingFailed`.
    public func encode(_ request: any URLRequestConvertible, withJSONObject jsonObject: Any? = nil) throws
        -> HTTPRequest
    {
        var request = try request.asURLRequest()
        guard let jsonObject else { return request }
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw RequestBuildError(code: .jsonEncodingFailed, detail: "not a valid JSON object: \(jsonObject)")
        }
        do {
            request.httpBody = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
        } catch {
            throw RequestBuildError(code: .jsonEncodingFailed, detail: "JSONSerialization failed", underlyingError: error)
        }
        if !request.headers.contains(name: "Content-Type") {
            request.headers.update(.contentType("application/json"))
        }
        return request
    }
}

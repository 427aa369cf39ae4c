import Bluebonnet
import Foundation

/// Encodes untyped `Parameters` as a property-list body with `PropertyListSerialization`
/// (Alamofire 4's `PropertyListEncoding`).
///
/// Sets `Content-Type: application/x-plist` unless the request has one.
public struct PropertyListEncoding: ParameterEncoding {
    /// XML property lists.
    public static var `default`: PropertyListEncoding { PropertyListEncoding() }
    /// XML property lists.
    public static var xml: PropertyListEncoding { PropertyListEncoding(format: .xml) }
    /// Binary property lists.
    public static var binary: PropertyListEncoding { PropertyListEncoding(format: .binary) }

    /// The format written.
    public let format: PropertyListSerialization.PropertyListFormat
    /// The `PropertyListSerialization` write options (currently unused by Foundation; 0).
    public let options: PropertyListSerialization.WriteOptions

    /// Creates an encoding; XML with no options by default.
    public init(format: PropertyListSerialization.PropertyListFormat = .xml, options: PropertyListSerialization.WriteOptions = 0) {
        self.format = format
        self.options = options
    }

    /// Sets the body to the property list of `parameters`; nil parameters leave the request
    /// unchanged.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .customEncodingFailed(error:))` with
    ///   `PropertyListSerialization`'s error (Alamofire 5 has no property-list encoding; 4's threw
    ///   its error as is).
    public func encode(_ request: any URLRequestConvertible, with parameters: Parameters?) throws -> HTTPRequest {
        var request = try request.asURLRequest()
        guard let parameters else { return request }
        do {
            request.httpBody = try PropertyListSerialization.data(fromPropertyList: parameters, format: format, options: options)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .customEncodingFailed(error: error))
        }
        if !request.headers.contains(name: "Content-Type") {
            request.headers.update(.contentType("application/x-plist"))
        }
        return request
    }
}

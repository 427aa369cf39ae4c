import FoundationEssentials

/// Encodes `Encodable` parameters into a request: the Alamofire `ParameterEncoder`.
///
/// Conform to it for a custom encoding. Implementations return the request unchanged when
/// `parameters` is nil.
public protocol ParameterEncoder: Sendable {
    /// Returns `request` with `parameters` encoded into it (URL query, body, headers).
    /// - Throws: an ``AFError`` (`parameterEncoderFailed` or, for JSON, `parameterEncodingFailed`,
    ///   as in Alamofire) or the implementation's own error.
    func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: HTTPRequest) throws
        -> HTTPRequest
}

/// Encodes parameters as JSON into the body, with `Content-Type: application/json` unless the
/// request already has a `Content-Type`.
///
/// - Warning: `JSONEncoder` is a class. Configure it before handing it over, and do not change
///   it afterwards: the parameter encoder may be used from several tasks at once.
public struct JSONParameterEncoder: ParameterEncoder {
    /// The encoder that makes the body.
    public let encoder: JSONEncoder

    /// An encoder with a default `JSONEncoder` (compact output, keys in any order).
    public static var `default`: JSONParameterEncoder { JSONParameterEncoder() }

    /// An encoder whose output is indented.
    public static var prettyPrinted: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        return JSONParameterEncoder(encoder: encoder)
    }

    /// An encoder whose output has its object keys sorted, so equal parameters make equal bodies.
    public static var sortedKeys: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return JSONParameterEncoder(encoder: encoder)
    }

    /// Creates a parameter encoder around `encoder` (a new default `JSONEncoder` by default).
    public init(encoder: JSONEncoder = JSONEncoder()) { self.encoder = encoder }

    /// Sets the body to the JSON of `parameters` and `Content-Type: application/json` when the
    /// request has no `Content-Type`. Nil parameters leave the request unchanged.
    /// - Throws: `AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error:))` wrapping the
    ///   `EncodingError` (Alamofire's case for this encoder).
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: HTTPRequest) throws
        -> HTTPRequest
    {
        guard let parameters else { return request }
        var request = request
        do {
            request.httpBody = try encoder.encode(parameters)
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        if !request.headers.contains(name: "Content-Type") {
            request.headers.update(.contentType("application/json"))
        }
        return request
    }
}

/// Encodes parameters as `application/x-www-form-urlencoded` text, into the URL query or the
/// body, with a `URLEncodedFormEncoder`.
public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    /// Where the encoded parameters go (shared with the other form encoding).
    public typealias Destination = ParameterDestination

    /// An encoder with a default `URLEncodedFormEncoder` and `.methodDependent` destination.
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// The form encoder.
    public let encoder: URLEncodedFormEncoder
    /// Where the parameters go.
    public let destination: Destination

    /// Creates a parameter encoder; defaults are Alamofire's (a default form encoder,
    /// `.methodDependent`).
    public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Adds `parameters` to the URL query (after any query already there, joined with `&`) or
    /// sets them as the body with `Content-Type: application/x-www-form-urlencoded;
    /// charset=utf-8` when the request has no `Content-Type`. Nil parameters leave the request
    /// unchanged; parameters that encode to nothing leave the URL unchanged.
    /// - Throws: `AFError.parameterEncoderFailed(reason: .encoderFailed(error:))` wrapping the
    ///   form encoder's error, or `.parameterEncoderFailed(reason: .missingRequiredComponent(.url))`
    ///   when the URL cannot take a query.
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: HTTPRequest) throws
        -> HTTPRequest
    {
        guard let parameters else { return request }
        var request = request
        let query: String
        do {
            query = try encoder.encode(parameters)
        } catch {
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
        if destination.encodesParametersInURL(for: request.requestMethod) {
            guard let url = request.url else { throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url)) }
            request.url = try url.appendingPercentEncodedQuery(
                query, orThrow: AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url)))
        } else {
            if !request.headers.contains(name: "Content-Type") {
                request.headers.update(.contentType("application/x-www-form-urlencoded; charset=utf-8"))
            }
            request.httpBody = Data(query.utf8)
        }
        return request
    }
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// A ``JSONParameterEncoder`` with a default `JSONEncoder`.
    public static var json: JSONParameterEncoder { JSONParameterEncoder() }

    /// A ``JSONParameterEncoder`` around `encoder`.
    public static func json(encoder: JSONEncoder = JSONEncoder()) -> JSONParameterEncoder {
        JSONParameterEncoder(encoder: encoder)
    }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// A ``URLEncodedFormParameterEncoder`` with a default form encoder and `.methodDependent`
    /// destination.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// A ``URLEncodedFormParameterEncoder`` with the given form encoder and destination.
    public static func urlEncodedForm(
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: URLEncodedFormParameterEncoder.Destination = .methodDependent
    ) -> URLEncodedFormParameterEncoder {
        URLEncodedFormParameterEncoder(encoder: encoder, destination: destination)
    }
}

extension URL {
    /// The URL with `query` (already percent-encoded) appended to its query with `&`; unchanged
    /// when `query` is empty. Throws `error` when the URL cannot take a query.
    func appendingPercentEncodedQuery(_ query: String, orThrow error: @autoclosure () -> AFError) throws(AFError) -> URL {
        guard !query.isEmpty else { return self }
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { throw error() }
        if let existing = components.percentEncodedQuery, !existing.isEmpty {
            components.percentEncodedQuery = existing + "&" + query
        } else {
            components.percentEncodedQuery = query
        }
        guard let url = components.url else { throw error() }
        return url
    }
}

/// Where form-encoded parameters go: ``URLEncodedFormParameterEncoder/Destination`` and
/// ``URLEncoding/Destination``.
public enum ParameterDestination: Sendable, Hashable {
    /// The query for `GET`, `HEAD` and `DELETE`, the body for every other method (the default).
    case methodDependent
    /// Always the URL query.
    case queryString
    /// Always the body.
    case httpBody

    /// Whether parameters for `method` go into the URL.
    public func encodesParametersInURL(for method: HTTPMethod) -> Bool {
        switch self {
        case .methodDependent: [HTTPMethod.get, .head, .delete].contains(method)
        case .queryString: true
        case .httpBody: false
        }
    }
}

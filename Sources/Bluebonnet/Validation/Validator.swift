import FoundationEssentials

/// What a validation closure returns: success, or the error to fail the request with.
public typealias ValidationResult = Result<Void, any Error>

/// One check of a received response, run after the body arrived and before serialization.
///
/// A validator is a value: the Request keeps them in a ``ValidationChain`` and runs them in
/// order; the first failure wins. The built-in ones mirror Alamofire's `validate` variants:
/// ``statusCode(_:)``, `contentType(_:)` and ``default``; ``init(_:)`` takes a custom closure.
public struct Validator: Sendable {
    /// A custom check: the request as sent (nil when unknown), the response head, the body.
    public typealias Validation = @Sendable (_ request: HTTPRequest?, _ response: HTTPResponse, _ data: Data?) -> ValidationResult

    private let validation: Validation

    /// Creates a validator from a closure.
    ///
    /// A ``BluebonnetError`` the closure returns is used as is; any other error is wrapped in
    /// `.responseValidationFailed(reason: .customValidationFailed(error:))`.
    public init(_ validation: @escaping Validation) { self.validation = validation }

    /// Runs the check.
    public func validate(request: HTTPRequest?, response: HTTPResponse, data: Data?) -> Result<Void, BluebonnetError> {
        validation(request, response, data).mapError {
            $0.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: $0)))
        }
    }

    /// The status code must be in `acceptableStatusCodes` (a range such as `200..<300`, or any
    /// sequence of codes), else `.responseValidationFailed(reason: .unacceptableStatusCode(code:))`.
    public static func statusCode<S: Sequence & Sendable>(_ acceptableStatusCodes: S) -> Validator where S.Element == Int {
        Validator { _, response, _ in
            if acceptableStatusCodes.contains(response.statusCode) { return .success(()) }
            return .failure(BluebonnetError.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode)))
        }
    }

    /// The response's media type must match one of `acceptableContentTypes`.
    ///
    /// Matching follows Alamofire: `type/subtype` compared case-insensitively, parameters
    /// ignored, `*` in the acceptable type or subtype matching anything (`*/*`, `text/*`).
    /// A response with an empty or absent body passes (there is no content to type). A response
    /// with no (parsable) `Content-Type` passes only when `*/*` is acceptable, else
    /// `.missingContentType(acceptableContentTypes:)`; a mismatch fails with
    /// `.unacceptableContentType(acceptableContentTypes:responseContentType:)`. As in Alamofire,
    /// the errors list the acceptable types sorted.
    public static func contentType<S: Sequence & Sendable>(_ acceptableContentTypes: S) -> Validator where S.Element == String {
        Validator { _, response, data in
            validateContentType(Array(acceptableContentTypes), response: response, data: data)
        }
    }

    /// As ``contentType(_:)-(S)``, with the acceptable types computed when the validator runs.
    public static func contentType(_ acceptableContentTypes: @escaping @Sendable () -> [String]) -> Validator {
        Validator { _, response, data in
            validateContentType(acceptableContentTypes(), response: response, data: data)
        }
    }

    /// Alamofire's `validate()`: status code in `200..<300`, then the content type against the
    /// request's `Accept` header (its media ranges, `q=0` ranges excluded; `*/*` when the
    /// header is absent or there is no request).
    public static var `default`: Validator {
        let status = statusCode(200..<300)
        return Validator { request, response, data in
            if case let .failure(error) = status.validate(request: request, response: response, data: data) {
                return .failure(error)
            }
            let acceptable = acceptableContentTypes(for: request)
            return validateContentType(acceptable, response: response, data: data)
        }
    }

    /// The media ranges of a request's `Accept` header(s), in order, without parameters;
    /// `["*/*"]` when there is none.
    static func acceptableContentTypes(for request: HTTPRequest?) -> [String] {
        let values = request?.headers.values(for: "Accept") ?? []
        guard !values.isEmpty else { return ["*/*"] }
        var types: [String] = []
        for element in values.flatMap({ $0.split(separator: ",") }) {
            guard let range = MediaType(element) else { continue }
            if let q = range.parameter("q").flatMap(Double.init), q == 0 { continue }
            types.append(range.essence)
        }
        return types
    }

    static func validateContentType(_ acceptable: [String], response: HTTPResponse, data: Data?) -> ValidationResult {
        guard let data, !data.isEmpty else { return .success(()) }
        let ranges = acceptable.compactMap { MediaType($0) }
        guard let responseType = response.contentType else {
            if ranges.contains(where: { $0.type == "*" && $0.subtype == "*" }) { return .success(()) }
            return .failure(
                BluebonnetError.responseValidationFailed(reason: .missingContentType(acceptableContentTypes: acceptable.sorted())))
        }
        if ranges.contains(where: { $0.matches(responseType) }) { return .success(()) }
        return .failure(
            BluebonnetError.responseValidationFailed(
                reason: .unacceptableContentType(
                    acceptableContentTypes: acceptable.sorted(), responseContentType: responseType.essence)))
    }
}

extension MediaType {
    /// Whether this acceptable media range covers `other` (type and subtype, `*` as wildcard).
    func matches(_ other: MediaType) -> Bool {
        (type == "*" || type == other.type) && (subtype == "*" || subtype == other.subtype)
    }
}

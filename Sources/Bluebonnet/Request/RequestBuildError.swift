/// The error thrown while a request is being built: an invalid URL, or parameters that could not
/// be encoded.
///
/// A struct over a code so that codes can be added without breaking callers (`switch` on `code`
/// with a `default`). It stands in for the request-building cases of the top-level error
/// (`AFError.invalidURL`, `.parameterEncodingFailed`, `.parameterEncoderFailed` in Alamofire); the
/// top-level `BluebonnetError` wraps it as its "request building" phase.
public struct RequestBuildError: Error, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Raw: Hashable, Sendable {
            case invalidURL, invalidRootObject, encoderFailed, jsonEncodingFailed
            case propertyListEncodingFailed, missingURL
        }

        private let raw: Raw
        private init(_ raw: Raw) { self.raw = raw }

        /// A value could not be turned into a URL (`URLConvertible.asURL()` failed). The detail is
        /// the offending text.
        public static let invalidURL = Code(.invalidURL)
        /// `URLEncodedFormEncoder` was asked to encode something other than a keyed value (a
        /// struct, class or `[String: …]` dictionary) at the top level. The detail describes what
        /// was found.
        public static let invalidRootObject = Code(.invalidRootObject)
        /// A `ParameterEncoder`'s underlying encoder threw; see `underlyingError`.
        public static let encoderFailed = Code(.encoderFailed)
        /// `JSONEncoding` (BluebonnetFoundation) could not serialize the parameters: they are not a
        /// valid JSON object, or `JSONSerialization` threw (`underlyingError`).
        public static let jsonEncodingFailed = Code(.jsonEncodingFailed)
        /// `PropertyListEncoding` (BluebonnetFoundation) could not serialize the parameters.
        public static let propertyListEncodingFailed = Code(.propertyListEncodingFailed)
        /// The request has no usable URL for the encoding (for example URL components that do not
        /// form a URL after a query was added).
        public static let missingURL = Code(.missingURL)

        /// A short name for the code.
        public var description: String {
            switch raw {
            case .invalidURL: "invalid URL"
            case .invalidRootObject: "invalid root object"
            case .encoderFailed: "parameter encoder failed"
            case .jsonEncodingFailed: "JSON encoding failed"
            case .propertyListEncodingFailed: "property list encoding failed"
            case .missingURL: "missing URL"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Human-readable detail: the invalid URL text, the offending value, or the encoder's message.
    public let detail: String
    /// The error that caused this one, if any (for example the `EncodingError` an `Encodable`
    /// value threw).
    public let underlyingError: (any Error)?

    /// Creates an error. Custom `ParameterEncoder`s and `ParameterEncoding`s may throw these too.
    public init(code: Code, detail: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.detail = detail
        self.underlyingError = underlyingError
    }

    /// `code: detail` and the underlying error when there is one.
    public var description: String {
        var text = "\(code): \(detail)"
        if let underlyingError { text += " (\(underlyingError))" }
        return text
    }

    /// Creates the error `URLConvertible` throws for text that is not a URL.
    static func invalidURL(_ text: String) -> RequestBuildError {
        RequestBuildError(code: .invalidURL, detail: text)
    }
}

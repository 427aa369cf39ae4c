/// The error thrown while a request is being built from a value that is not a URL, or when a
/// download's destination is not a file URL.
///
/// A struct over a code so that codes can be added without breaking callers (`switch` on `code`
/// with a `default`). A `Session` turns it into `AFError.invalidURL(url:)`. Parameter encoders and
/// encodings throw ``AFError`` itself (`parameterEncoderFailed`, `parameterEncodingFailed`), as in
/// Alamofire.
public struct RequestBuildError: Error, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Raw: Hashable, Sendable {
            case invalidURL
            case invalidDestination
        }

        private let raw: Raw
        private init(_ raw: Raw) { self.raw = raw }

        /// A value could not be turned into a URL (`URLConvertible.asURL()` failed). The detail is
        /// the offending text.
        public static let invalidURL = Code(.invalidURL)
        /// A download's ``DownloadRequest/Destination`` gave a URL that is not a `file:` URL with
        /// a path (an `https:` URL, say, whose path would otherwise be taken as a local one). The
        /// detail is the URL. It comes inside
        /// ``BluebonnetError/downloadedFileMoveFailed(error:source:destination:)``, before any
        /// file is made.
        public static let invalidDestination = Code(.invalidDestination)

        /// A short name for the code.
        public var description: String {
            switch raw {
            case .invalidURL: "invalid URL"
            case .invalidDestination: "invalid download destination"
            }
        }
    }

    /// What went wrong.
    public let code: Code
    /// Human-readable detail: the invalid URL text.
    public let detail: String
    /// The error that caused this one, if any (for example the `EncodingError` an `Encodable`
    /// value threw).
    public let underlyingError: (any Error)?

    /// Creates an error.
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

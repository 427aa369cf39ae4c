/// An error of the cache rules: a response that cannot be applied to a stored one.
public struct CacheError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case notModifiedMatchesNoStoredResponse
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    /// A `304 Not Modified` whose validator matches no stored response (RFC 9111 §4.3.4: the cache
    /// must not use it to update one). The caller sends the request again without the cache's
    /// conditional fields, and uses that response.
    public static let notModifiedMatchesNoStoredResponse = CacheError(.notModifiedMatchesNoStoredResponse)

    /// A sentence saying what went wrong.
    public var description: String {
        switch code {
        case .notModifiedMatchesNoStoredResponse:
            "a 304 Not Modified matched no stored response (RFC 9111 §4.3.4); send the request unconditionally"
        }
    }
}

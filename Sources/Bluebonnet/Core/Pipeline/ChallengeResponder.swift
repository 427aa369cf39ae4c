/// Answers an authentication challenge (RFC 9110 §11.6.1) with the request's credential: the
/// pipeline's challenge stage, a pure value.
///
/// Today: `Basic` (RFC 7617) only, once per attempt: a second 401 is delivered as the response.
/// The credential is sent only to the origin that challenged (the redirect stage strips
/// `Authorization` on a cross-origin hop before a challenge can be answered there).
struct ChallengeResponder: Sendable {
    /// The credential to answer with; nil answers nothing.
    var credential: URLCredential?
    /// Whether this attempt already answered a challenge.
    private(set) var hasAnswered = false

    init(credential: URLCredential?) {
        self.credential = credential
    }

    /// The request to send in answer to `response`, or nil when `response` is not a challenge
    /// this responder answers (it is then delivered, or redirected, as usual).
    mutating func answer(_ response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest? {
        guard response.statusCode == 401, !hasAnswered, let credential else { return nil }
        let schemes = response.headers.values(for: "WWW-Authenticate")
        guard schemes.contains(where: { Self.isBasic($0) }) else { return nil }
        hasAnswered = true
        var next = request
        next.headers.update(.authorization(username: credential.user ?? "", password: credential.password ?? ""))
        return next
    }

    /// Whether a `WWW-Authenticate` value offers `Basic` (the scheme is case-insensitive).
    static func isBasic(_ challenge: String) -> Bool {
        let scheme = challenge.drop(while: { $0 == " " || $0 == "\t" }).prefix(while: { $0 != " " && $0 != "\t" && $0 != "," })
        return scheme.lowercased() == "basic"
    }
}

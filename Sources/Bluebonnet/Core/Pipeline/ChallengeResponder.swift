import FoundationEssentials

/// Answers an authentication challenge (RFC 9110 §11.6.1) with the request's credential: the
/// pipeline's challenge stage, a pure value (the random client nonce is an input).
///
/// - `Digest` (RFC 7616) is preferred when offered, with the strongest algorithm offered
///   (``DigestAuthentication/Algorithm/strength``); otherwise `Basic` (RFC 7617).
/// - One answer per attempt: a second 401 is delivered as the response, except a Digest challenge
///   with `stale=true` after a Digest answer (the nonce expired, the credentials were right: RFC
///   7616 §3.3), which is answered again with the new nonce, at most ``maximumStaleAnswers``
///   times (a server that calls every nonce stale cannot loop the request).
/// - The credential belongs to the origin of the attempt's first request: a challenge from any
///   other origin (reached by a redirect) is not answered, so neither the credential nor a Digest
///   answer made from it reaches another origin. (The redirect stage also strips `Authorization`
///   on a cross-origin hop.)
/// - `auth` is chosen when offered; `auth-int` when it is the only option and the body is in
///   memory (hashable); a challenge offering only `auth-int` for a body in a file or a stream is
///   not answered (Basic is, when the 401 offers it too), and its 401 is delivered.
struct ChallengeResponder: Sendable {
    /// The credential to answer with (nil: the user and password of ``credentialURL``, for
    /// Digest only, since the preparation stage already sent them as `Basic`; none: nothing is
    /// answered).
    var credential: URLCredential?
    /// The URL of the attempt's first request, whose origin the credential belongs to.
    var credentialURL: URL?
    /// Makes a client nonce (random in the pipeline, fixed in tests).
    var makeClientNonce: @Sendable () -> String
    /// Whether this attempt already answered a challenge.
    private(set) var hasAnswered = false
    /// How many `stale=true` challenges were answered after the first answer.
    private(set) var staleAnswers = 0
    /// The Digest challenge last answered and the nonce count used with it (what the session's
    /// ``DigestNonceCache`` keeps for the next request).
    private(set) var digestInUse: (challenge: DigestAuthentication.Challenge, nonceCount: Int)?

    /// At most this many `stale=true` re-authentications per attempt.
    static let maximumStaleAnswers = 3

    init(
        credential: URLCredential?, credentialURL: URL? = nil,
        makeClientNonce: @escaping @Sendable () -> String = DigestAuthentication.randomClientNonce
    ) {
        self.credential = credential
        self.credentialURL = credentialURL
        self.makeClientNonce = makeClientNonce
    }

    /// `request` answering `challenge` (remembered by the session for this origin) with
    /// `nonceCount` before the server asks, or nil when it cannot be answered.
    mutating func preempt(
        _ request: HTTPRequest, answering challenge: DigestAuthentication.Challenge, nonceCount: Int
    ) -> HTTPRequest? {
        guard let credential else { return nil }
        guard let answered = Self.authorize(request, answering: challenge, nonceCount: nonceCount, credential: credential,
                                            clientNonce: makeClientNonce())
        else { return nil }
        digestInUse = (challenge, nonceCount)
        return answered
    }

    /// `next`, a redirect followed after a Digest answer, with its `Authorization` made again for
    /// its own URI and the next nonce count (the old field answered the old URI, and the server
    /// would refuse it); unchanged when there was no Digest answer or the redirect removed the field
    /// (another origin).
    mutating func redirected(_ next: HTTPRequest) -> HTTPRequest {
        guard let (challenge, count) = digestInUse,
            next.headers.value(for: "Authorization")?.hasPrefix("Digest ") == true, isCredentialOrigin(next.url),
            let credential = credential ?? Self.userinfoCredential(credentialURL)
        else { return next }
        guard let answered = Self.authorize(next, answering: challenge, nonceCount: count + 1, credential: credential,
                                            clientNonce: makeClientNonce())
        else {
            var stripped = next
            stripped.headers.remove(name: "Authorization")
            return stripped
        }
        digestInUse = (challenge, count + 1)
        return answered
    }

    /// The request to send in answer to `response`, or nil when `response` is not a challenge
    /// this responder answers (it is then delivered, or redirected, as usual).
    mutating func answer(_ response: HTTPResponse, to request: HTTPRequest) -> HTTPRequest? {
        guard response.statusCode == 401 else { return nil }
        let fields = response.headers.values(for: "WWW-Authenticate")
        guard !fields.isEmpty, isCredentialOrigin(request.url) else { return nil }
        let fromURL = credential == nil
        guard let credential = credential ?? Self.userinfoCredential(credentialURL) else { return nil }
        let challenges = AuthenticationChallenge.parse(fields)

        if let digest = DigestAuthentication.preferredChallenge(in: challenges),
            !hasAnswered || (digest.stale && staleAnswers < Self.maximumStaleAnswers)
        {
            let count = digestInUse.map { $0.challenge.nonce == digest.nonce ? $0.nonceCount + 1 : 1 } ?? 1
            if let answered = Self.authorize(request, answering: digest, nonceCount: count, credential: credential,
                                             clientNonce: makeClientNonce())
            {
                if hasAnswered { staleAnswers += 1 }
                hasAnswered = true
                digestInUse = (digest, count)
                return answered
            }
            // A Digest challenge this request cannot answer: Basic, when offered too.
        }

        guard !hasAnswered, !fromURL, challenges.contains(where: { $0.hasScheme("Basic") }) else { return nil }
        hasAnswered = true
        var next = request
        next.headers.update(.authorization(username: credential.user ?? "", password: credential.password ?? ""))
        return next
    }

    /// `request` with an `Authorization: Digest` answering `challenge` with `nonceCount`, or nil
    /// when it cannot be answered (only `auth-int` offered for a body that is not in memory; a
    /// hash OpenSSL refuses).
    static func authorize(
        _ request: HTTPRequest, answering challenge: DigestAuthentication.Challenge, nonceCount: Int,
        credential: URLCredential, clientNonce: String
    ) -> HTTPRequest? {
        let body = request.content.data
        guard case .some(let quality) = challenge.quality(bodyIsHashable: body != nil || request.content.isEmpty) else {
            return nil
        }
        let answer = DigestAuthentication.Answer(
            username: credential.user ?? "", password: credential.password ?? "", method: request.requestMethod.rawValue,
            uri: request.requestTarget(), body: body, quality: quality, nonceCount: nonceCount, clientNonce: clientNonce)
        guard let value = DigestAuthentication.authorization(answering: challenge, with: answer) else { return nil }
        var next = request
        next.headers.update(name: "Authorization", value: value)
        return next
    }

    /// The user and password written in `url` (percent-decoded; a missing password is empty).
    static func userinfoCredential(_ url: URL?) -> URLCredential? {
        guard let url, let user = url.user(percentEncoded: false) else { return nil }
        return URLCredential(user: user, password: url.password(percentEncoded: false) ?? "", persistence: .none)
    }

    /// Whether `url` has the origin of ``credentialURL`` (true when no URL was given).
    func isCredentialOrigin(_ url: URL?) -> Bool {
        guard let credentialURL else { return true }
        guard let url else { return false }
        if url == credentialURL { return true }
        guard let origin = URIReference(parsing: credentialURL.absoluteString).origin else { return false }
        return URIReference(parsing: url.absoluteString).origin == origin
    }

    /// Whether a `WWW-Authenticate` value's first challenge is `Basic` (the scheme is case-insensitive).
    static func isBasic(_ challenge: String) -> Bool {
        let scheme = challenge.drop(while: { $0 == " " || $0 == "\t" }).prefix(while: { $0 != " " && $0 != "\t" && $0 != "," })
        return scheme.lowercased() == "basic"
    }
}

@testable import Bluebonnet
import FoundationEssentials
import Testing

/// `WWW-Authenticate` parsing (RFC 9110 §11.2, §11.6.1) and Digest answers (RFC 7616) as values.
///
/// Test vectors: RFC 7616 §3.9.1 (MD5, SHA-256), RFC 2617 §3.5 and RFC 2069 §2.4 (MD5), printed in
/// those RFCs; the `-sess`, `auth-int`, SHA-512/256 `userhash` and httpbin SHA-512 values were
/// computed with Python 3.11's hashlib (`hashlib.new(name, data).hexdigest()` over the RFC 7616
/// §3.4 formulas), an implementation independent of OpenSSL's EVP interface used here.
@Suite struct DigestAuthenticationTests {
    typealias Challenge = AuthenticationChallenge

    // MARK: Parsing (RFC 9110 §11.2, §11.6.1)

    @Test(arguments: [
        // One challenge, parameters, quoted or not, whitespace around "=" (BWS).
        (["Basic realm=\"simple\""], [Challenge(scheme: "Basic", parameters: [("realm", "simple")])]),
        (["Basic realm = \"x\" , charset=UTF-8"], [Challenge(scheme: "Basic", parameters: [("realm", "x"), ("charset", "UTF-8")])]),
        // Several challenges in one field (§11.6.1), and across fields (§5.3).
        (
            ["Digest realm=\"a\", nonce=\"b\", Basic realm=\"c\""],
            [Challenge(scheme: "Digest", parameters: [("realm", "a"), ("nonce", "b")]), Challenge(scheme: "Basic", parameters: [("realm", "c")])]
        ),
        (
            ["Basic realm=x", "Digest nonce=n"],
            [Challenge(scheme: "Basic", parameters: [("realm", "x")]), Challenge(scheme: "Digest", parameters: [("nonce", "n")])]
        ),
        // A scheme alone, then another challenge; empty list elements skipped (§5.6.1).
        (
            [", Negotiate,, Basic realm=x ,  "],
            [Challenge(scheme: "Negotiate"), Challenge(scheme: "Basic", parameters: [("realm", "x")])]
        ),
        // token68 (§11.2).
        (
            ["Negotiate abc+/==, Basic realm=x"],
            [Challenge(scheme: "Negotiate", token68: "abc+/=="), Challenge(scheme: "Basic", parameters: [("realm", "x")])]
        ),
        // quoted-pair escapes (§5.6.4), and a comma inside quotes.
        (["Digest realm=\"a \\\"q\\\" \\\\ b, c\""], [Challenge(scheme: "Digest", parameters: [("realm", "a \"q\" \\ b, c")])]),
        // Parameter names are case-insensitive (lower-cased); the scheme keeps its spelling.
        (["DIGEST REALM=\"x\", NoNcE=y"], [Challenge(scheme: "DIGEST", parameters: [("realm", "x"), ("nonce", "y")])]),
        // Malformed: an unterminated quoted-string drops its challenge, keeps the ones before.
        (["Bearer, Digest realm=\"a\", nonce=\"b"], [Challenge(scheme: "Bearer")]),
        (["realm=\"no scheme\""], []),
        ([""], []),
    ])
    func challengesAreParsed(fields: [String], expected: [Challenge]) {
        #expect(AuthenticationChallenge.parse(fields) == expected)
    }

    @Test func schemesAndParametersAreMatchedWithoutCase() throws {
        let challenge = try #require(AuthenticationChallenge.parse(["dIgEsT Realm=r, NONCE=n"]).first)
        #expect(challenge.hasScheme("Digest"))
        #expect(challenge["realm"] == "r")
        #expect(challenge["nonce"] == "n")
    }

    // MARK: Digest answers (RFC 7616 §3.4)

    static let rfc7616 = "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=%@, "
        + "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""

    static func digest(_ field: String) throws -> DigestAuthentication.Challenge {
        try #require(DigestAuthentication.preferredChallenge(in: AuthenticationChallenge.parse([field])))
    }

    /// RFC 7616 §3.9.1: the MD5 and SHA-256 examples, field for field.
    @Test(arguments: [
        ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
        ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
    ])
    func rfc7616Examples(algorithm: String, response: String) throws {
        let challenge = try Self.digest(Self.rfc7616.replacing("%@", with: algorithm))
        #expect(challenge.quality(bodyIsHashable: true) == .some(.auth), "auth is preferred over auth-int")
        let answer = DigestAuthentication.Answer(
            username: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html", body: nil, quality: .auth,
            nonceCount: 1, clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        let field = DigestAuthentication.authorization(answering: challenge, with: answer)
        #expect(field == """
            Digest username="Mufasa", realm="http-auth@example.org", uri="/dir/index.html", algorithm=\(algorithm), \
            nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc=00000001, \
            cnonce="f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop=auth, response="\(response)", \
            opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"
            """)
    }

    static let rfc2617 = DigestAuthentication.Answer(
        username: "Mufasa", password: "Circle Of Life", method: "GET", uri: "/dir/index.html", body: nil, quality: .auth,
        nonceCount: 1, clientNonce: "0a4f113b")
    static let rfc2617Challenge = "Digest realm=\"testrealm@host.com\", qop=\"auth,auth-int\", "
        + "nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", opaque=\"5ccc069c403ebaf9f0171e9517f40e41\""

    static func response(of field: String?) -> String? {
        guard let field, let challenge = AuthenticationChallenge.parse([field]).first else { return nil }
        return challenge["response"]
    }

    /// RFC 2617 §3.5 (MD5, qop=auth, no algorithm parameter: MD5 by default) and RFC 2069 §2.4 (no qop).
    @Test func rfc2617AndRfc2069Examples() throws {
        let challenge = try Self.digest(Self.rfc2617Challenge)
        #expect(challenge.algorithm == .md5)
        #expect(Self.response(of: DigestAuthentication.authorization(answering: challenge, with: Self.rfc2617))
            == "6629fae49393a05397450978507c4ef1")

        let legacy = try Self.digest("Digest realm=\"testrealm@host.com\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\"")
        #expect(legacy.quality(bodyIsHashable: true) == .some(nil), "no qop offered: RFC 2069's form")
        var answer = Self.rfc2617
        answer.password = "CircleOfLife"
        answer.quality = nil
        let field = try #require(DigestAuthentication.authorization(answering: legacy, with: answer))
        #expect(Self.response(of: field) == "1949323746fe6a43ef61f9606e7febea")
        #expect(!field.contains("nc=") && !field.contains("cnonce=") && !field.contains("qop="))
    }

    /// RFC 7616 §3.4.2 (`-sess`: A1 includes the nonce and cnonce) and §3.4.3 (`auth-int`: A2
    /// includes the body's hash), with nc 2; values from Python's hashlib.
    @Test(arguments: [
        ("MD5-sess", "5a92d04714fc3d1cc31f8f999773920b"),
        ("SHA-256-sess", "88481366fc037e4f63cad77eb1f10cb0779c6f391c90129915c7af24c68c37c0"),
        ("SHA-512-256-sess", "b8725e6f3f1f46d722ce1ac5edb56ed624a0bb437666dea73cd7929c2044b065"),
    ])
    func sessionAlgorithmsWithBodyIntegrity(algorithm: String, response: String) throws {
        let challenge = try Self.digest(Self.rfc2617Challenge + ", algorithm=\(algorithm)")
        var answer = Self.rfc2617
        answer.method = "POST"
        answer.quality = .authInt
        answer.body = Data("hello".utf8)
        answer.nonceCount = 2
        let field = DigestAuthentication.authorization(answering: challenge, with: answer)
        #expect(Self.response(of: field) == response)
        #expect(field?.contains("nc=00000002, ") == true)
        #expect(field?.contains("qop=auth-int, ") == true)
    }

    /// httpbin's non-standard `SHA-512` (plain SHA-512, not SHA-512/256).
    @Test func httpbinSHA512() throws {
        let challenge = try Self.digest(Self.rfc2617Challenge + ", algorithm=SHA-512")
        #expect(Self.response(of: DigestAuthentication.authorization(answering: challenge, with: Self.rfc2617)) == """
            abb145ab10fd07056cbcfc87ebf74d53b285bb2073887cc37edc2018ee297d7cac9d06be00bac252ccb4c3101905caa99dba06d53cd9ea34dfc35b2b97f86f6c
            """)
    }

    /// RFC 7616 §3.4.4 and §3.9.2's inputs: `userhash=true` sends H(username:realm) (SHA-512/256
    /// with its own initial values); values from Python's hashlib.
    @Test func userhashSendsTheHashedUserName() throws {
        let challenge = try Self.digest("""
            Digest realm="api@example.org", qop="auth", algorithm=SHA-512-256, \
            nonce="5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK", opaque="HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS", \
            charset=UTF-8, userhash=true
            """)
        let answer = DigestAuthentication.Answer(
            username: "J\u{E4}s\u{F8}n Doe", password: "Secret, or not?", method: "GET", uri: "/doe.json", body: nil, quality: .auth,
            nonceCount: 1, clientNonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v")
        let field = try #require(DigestAuthentication.authorization(answering: challenge, with: answer))
        let parsed = try #require(AuthenticationChallenge.parse([field]).first)
        #expect(parsed["username"] == "793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b")
        #expect(parsed["response"] == "3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5")
        #expect(parsed["userhash"] == "true")
        #expect(parsed["username*"] == nil)
    }

    /// RFC 7616 §3.4.4: a user name that cannot be a quoted-string goes as `username*` (RFC 8187).
    @Test func nonASCIIUserNamesGoAsExtendedValues() throws {
        let challenge = try Self.digest(Self.rfc2617Challenge)
        var answer = Self.rfc2617
        answer.username = "J\u{E4}s\u{F8}n Doe"
        let field = try #require(DigestAuthentication.authorization(answering: challenge, with: answer))
        #expect(field.hasPrefix("Digest username*=UTF-8''J%C3%A4s%C3%B8n%20Doe, realm="))
        answer.username = "quote\"back\\slash"
        let quoted = try #require(DigestAuthentication.authorization(answering: challenge, with: answer))
        #expect(quoted.hasPrefix(#"Digest username="quote\"back\\slash", "#))
        #expect(try #require(AuthenticationChallenge.parse([quoted]).first)["username"] == "quote\"back\\slash")
    }

    /// RFC 7616 §3.7: the strongest algorithm offered is used, whatever the order; unknown ones
    /// are skipped.
    @Test(arguments: [
        (["Digest nonce=a, algorithm=MD5, Digest nonce=b, algorithm=SHA-256"], "b", DigestAuthentication.Algorithm.sha256),
        (["Digest nonce=a, algorithm=SHA-512-256-sess", "Digest nonce=b, algorithm=SHA-256"], "a", .sha512_256Session),
        (["Digest nonce=a, algorithm=SHA3-256, Digest nonce=b, algorithm=md5"], "b", .md5),
        (["Basic realm=x, Digest nonce=c"], "c", .md5),
    ])
    func theStrongestAlgorithmIsChosen(fields: [String], nonce: String, algorithm: DigestAuthentication.Algorithm) throws {
        let challenge = try #require(DigestAuthentication.preferredChallenge(in: AuthenticationChallenge.parse(fields)))
        #expect(challenge.nonce == nonce)
        #expect(challenge.algorithm == algorithm)
    }

    /// RFC 9110 §5.6.4: neither qdtext nor quoted-pair holds a control byte other than HTAB. Found
    /// by FuzzAuthChallenges (`Fixtures/fuzz/findings/FuzzAuthChallenges/control-bytes-in-realm.bin`):
    /// a realm with NUL and \u{01} in quotes was kept and copied into the `Authorization` answer.
    /// Such a challenge is malformed: the field's parse ends there, what came before is kept.
    @Test(arguments: ["Digest realm=\"a\u{01}\u{00}b\", nonce=\"n\"", "Digest realm=\"r\", nonce=\"\\\u{00}\"",
                      "Digest nonce=\"n\u{7F}\"", "Digest nonce=\"n\r\""])
    func controlBytesInQuotedStringsEndTheField(field: String) {
        let challenges = AuthenticationChallenge.parse(["Basic realm=x, " + field + ", Basic realm=y"])
        #expect(challenges == [Challenge(scheme: "Basic", parameters: [("realm", "x")])])
        #expect(DigestAuthentication.preferredChallenge(in: AuthenticationChallenge.parse([field])) == nil)
        // A tab stays allowed (qdtext and quoted-pair both hold HTAB).
        #expect(AuthenticationChallenge.parse(["Digest realm=\"a\tb\\\tc\""]).first?["realm"] == "a\tb\tc")
    }

    /// RFC 9110 §5.6.4: `"` and `\` are escaped in a quoted-string by Unicode scalar. Found by
    /// FuzzAuthChallenges (`quote-with-combining-mark-in-nonce.bin`): a nonce holding `"` followed
    /// by a combining mark (one Character, not equal to `"`) was written unescaped, which ended the
    /// quoted nonce early and left an `Authorization` value that did not parse.
    @Test(arguments: ["a\"\u{359}b", "\\\u{301}", "\"\u{20DD}\"", "plain"])
    func quotedStringsEscapeByScalar(_ value: String) {
        let quoted = DigestAuthentication.quoted(value)
        let parsed = AuthenticationChallenge.parse(["Digest nonce=" + quoted])
        #expect(parsed.first?["nonce"] == value, "\(quoted.debugDescription)")
    }

    @Test func challengesWithoutANonceOrWithOnlyUnknownAlgorithmsAreNotDigest() {
        #expect(DigestAuthentication.preferredChallenge(in: AuthenticationChallenge.parse(["Digest realm=x"])) == nil)
        #expect(DigestAuthentication.preferredChallenge(in: AuthenticationChallenge.parse(["Digest nonce=x, algorithm=SHA-1"])) == nil)
    }

    /// RFC 7616 §3.3: `auth-int` needs the body's hash, so a body in a file or stream can only
    /// be answered with `auth`.
    @Test func qualityOfProtectionFollowsTheBody() throws {
        let both = try Self.digest("Digest nonce=n, qop=\"auth-int, auth\"")
        #expect(both.quality(bodyIsHashable: false) == .some(.auth))
        let integrity = try Self.digest("Digest nonce=n, qop=auth-int")
        #expect(integrity.quality(bodyIsHashable: true) == .some(.authInt))
        #expect(integrity.quality(bodyIsHashable: false) == nil)
        let unknown = try Self.digest("Digest nonce=n, qop=\"auth-conf\"")
        #expect(unknown.quality(bodyIsHashable: true) == nil)
    }

    @Test func nonceCountsAreEightHexDigits() {
        #expect(DigestAuthentication.hexCount(1) == "00000001")
        #expect(DigestAuthentication.hexCount(255) == "000000ff")
        #expect(DigestAuthentication.randomClientNonce().count == 32)
        #expect(DigestAuthentication.randomClientNonce() != DigestAuthentication.randomClientNonce())
    }

    // MARK: The responder

    static let url = URL(string: "http://api.example.com/private")!
    static let credential = URLCredential(user: "Mufasa", password: "Circle Of Life", persistence: .forSession)

    static func challenge(_ fields: [String], url: URL = url) -> HTTPResponse {
        var headers = HTTPHeaders()
        for field in fields { headers.add(name: "WWW-Authenticate", value: field) }
        return HTTPResponse(url: url, statusCode: 401, headers: headers)
    }

    static func responder(credential: URLCredential? = credential, url: URL = url) -> ChallengeResponder {
        ChallengeResponder(credential: credential, credentialURL: url, makeClientNonce: { "0a4f113b" })
    }

    static func authorization(_ request: HTTPRequest?) -> AuthenticationChallenge? {
        request?.headers.value(for: "Authorization").flatMap { AuthenticationChallenge.parse([$0]).first }
    }

    @Test func aDigestChallengeIsAnsweredOnceAndASecond401IsDelivered() throws {
        var responder = Self.responder()
        let request = HTTPRequest(url: Self.url)
        let answeredResult = responder.answer(Self.challenge([Self.rfc2617Challenge]), to: request)
        let answered = try #require(answeredResult)
        let sent = try #require(Self.authorization(answered))
        #expect(sent.hasScheme("Digest"))
        #expect(sent["uri"] == "/private")
        #expect(sent["nc"] == "00000001")
        #expect(sent["cnonce"] == "0a4f113b")
        #expect(sent["opaque"] == "5ccc069c403ebaf9f0171e9517f40e41", "opaque is echoed")
        #expect(responder.answer(Self.challenge([Self.rfc2617Challenge]), to: answered) == nil, "wrong password: delivered")
    }

    /// RFC 7616 §3.3: `stale=true` means the nonce expired, not the credentials: answered again
    /// with the new nonce (nc back to 1), a bounded number of times.
    @Test func staleChallengesAreAnsweredWithTheNewNonceBoundedly() throws {
        var responder = Self.responder()
        let requestResult = responder.answer(Self.challenge(["Digest realm=r, nonce=n0, qop=auth"]), to: HTTPRequest(url: Self.url))
        var request = try #require(requestResult)
        for round in 1...ChallengeResponder.maximumStaleAnswers {
            let stale = Self.challenge(["Digest realm=r, nonce=n\(round), qop=auth, stale=TRUE"])
            let requestResult = responder.answer(stale, to: request)
            request = try #require(requestResult, "stale answer \(round)")
            #expect(Self.authorization(request)?["nonce"] == "n\(round)")
            #expect(Self.authorization(request)?["nc"] == "00000001")
        }
        #expect(responder.answer(Self.challenge(["Digest realm=r, nonce=last, qop=auth, stale=true"]), to: request) == nil)
    }

    @Test func theSameNonceCountsUp() throws {
        var responder = Self.responder()
        let firstResult = responder.answer(Self.challenge(["Digest realm=r, nonce=same, qop=auth"]), to: HTTPRequest(url: Self.url))
        let first = try #require(firstResult)
        let againResult = responder.answer(Self.challenge(["Digest realm=r, nonce=same, qop=auth, stale=true"]), to: first)
        let again = try #require(againResult)
        #expect(Self.authorization(again)?["nc"] == "00000002")
    }

    @Test func digestIsPreferredToBasicAndBasicStillWorks() throws {
        var both = Self.responder()
        let digest = both.answer(Self.challenge(["Basic realm=r", "Digest realm=r, nonce=n"]), to: HTTPRequest(url: Self.url))
        #expect(Self.authorization(digest)?.hasScheme("Digest") == true)
        var basic = Self.responder()
        let answered = basic.answer(Self.challenge(["Basic realm=r"]), to: HTTPRequest(url: Self.url))
        #expect(answered?.headers.value(for: "Authorization") == "Basic TXVmYXNhOkNpcmNsZSBPZiBMaWZl")
    }

    /// The credential belongs to the origin of the attempt's first request: a challenge from the
    /// target of a cross-origin redirect is not answered (RFC 9110 §11.6.1 protection spaces).
    @Test(arguments: ["http://other.example.com/private", "https://api.example.com/private", "http://api.example.com:8080/private"])
    func challengesFromAnotherOriginAreNotAnswered(other: String) throws {
        let url = try #require(URL(string: other))
        var responder = Self.responder()
        let request = HTTPRequest(url: url)
        #expect(responder.answer(Self.challenge([Self.rfc2617Challenge], url: url), to: request) == nil)
        #expect(responder.answer(Self.challenge(["Basic realm=r"], url: url), to: request) == nil)
        let sameOrigin = try #require(URL(string: "HTTP://API.example.com:80/elsewhere"))
        #expect(responder.answer(Self.challenge([Self.rfc2617Challenge]), to: HTTPRequest(url: sameOrigin)) != nil)
    }

    /// URL userinfo answers Digest; Basic was already sent from it by the preparation stage.
    @Test func urlCredentialsAnswerDigestButNotBasicAgain() throws {
        let url = try #require(URL(string: "http://M%C3%BCfasa:p%40ss@api.example.com/private"))
        var digest = Self.responder(credential: nil, url: url)
        let answeredResult = digest.answer(Self.challenge(["Digest realm=r, nonce=n"]), to: HTTPRequest(url: url))
        let answered = try #require(answeredResult)
        #expect(Self.authorization(answered)?["username*"] == "UTF-8''M%C3%BCfasa")
        var basic = Self.responder(credential: nil, url: url)
        #expect(basic.answer(Self.challenge(["Basic realm=r"]), to: HTTPRequest(url: url)) == nil)
        var none = Self.responder(credential: nil)
        #expect(none.answer(Self.challenge(["Digest realm=r, nonce=n"]), to: HTTPRequest(url: Self.url)) == nil)
    }

    @Test func onlyAuthIntForAStreamedBodyIsNotAnswered() throws {
        var responder = Self.responder()
        let stream = HTTPRequest(url: Self.url, method: .post, content: .file(URL(fileURLWithPath: "/etc/hostname")))
        #expect(responder.answer(Self.challenge(["Digest realm=r, nonce=n, qop=auth-int"]), to: stream) == nil)
        var fallback = Self.responder()
        let basic = fallback.answer(Self.challenge(["Digest realm=r, nonce=n, qop=auth-int", "Basic realm=r"]), to: stream)
        #expect(basic?.headers.value(for: "Authorization")?.hasPrefix("Basic ") == true, "Basic when Digest cannot be answered")
        let data = HTTPRequest(url: Self.url, method: .post, content: .data(Data("hello".utf8)))
        #expect(Self.authorization(responder.answer(Self.challenge(["Digest realm=r, nonce=n, qop=auth-int"]), to: data))?["qop"] == "auth-int")
    }

    /// A same-origin redirect after a Digest answer: the field is made again for the new URI, with
    /// the next nonce count; a redirect that dropped the field (another origin) stays without one.
    @Test func aRedirectAfterADigestAnswerIsAnsweredForItsOwnURI() throws {
        var responder = Self.responder()
        let answeredResult = responder.answer(Self.challenge([Self.rfc2617Challenge]), to: HTTPRequest(url: Self.url))
        var next = try #require(answeredResult)
        next.url = URL(string: "http://api.example.com/moved?x=1")
        let redirected = responder.redirected(next)
        #expect(Self.authorization(redirected)?["uri"] == "/moved?x=1")
        #expect(Self.authorization(redirected)?["nc"] == "00000002")
        var elsewhere = next
        elsewhere.url = URL(string: "http://other.example.com/")
        elsewhere.headers.remove(name: "Authorization")
        #expect(responder.redirected(elsewhere).headers.value(for: "Authorization") == nil)
        var untouched = Self.responder()
        #expect(untouched.redirected(next).headers.value(for: "Authorization") == next.headers.value(for: "Authorization"))
    }

    /// RFC 7616 §3.5: `Authentication-Info`'s `nextnonce` replaces the nonce; nothing else does.
    @Test func nextNonceComesFromAuthenticationInfo() throws {
        let challenge = try Self.digest(Self.rfc2617Challenge + ", stale=true")
        let given = HTTPResponse(url: Self.url, statusCode: 200, headers: ["Authentication-Info": #"qop=auth, rspauth="x", nextnonce="fresh""#])
        let next = try #require(DigestAuthentication.nextNonce(after: challenge, in: given))
        #expect(next.nonce == "fresh")
        #expect(!next.stale)
        #expect(next.realm == challenge.realm && next.opaque == challenge.opaque)
        let none = HTTPResponse(url: Self.url, statusCode: 200, headers: ["Authentication-Info": #"rspauth="x""#])
        #expect(DigestAuthentication.nextNonce(after: challenge, in: none) == nil)
        #expect(DigestAuthentication.nextNonce(after: challenge, in: HTTPResponse(url: Self.url, statusCode: 200)) == nil)
    }

    // MARK: The session's nonce cache

    @Test func theNonceCacheHandsOutIncreasingCountsPerOrigin() throws {
        let cache = DigestNonceCache()
        #expect(cache.isEmpty)
        #expect(cache.next(for: Self.url) == nil)
        let challenge = try Self.digest(Self.rfc2617Challenge)
        cache.store(challenge, nonceCount: 1, for: Self.url)
        #expect(!cache.isEmpty)
        #expect(cache.next(for: URL(string: "http://api.example.com/other")!)?.nonceCount == 2)
        #expect(cache.next(for: Self.url)?.nonceCount == 3)
        #expect(cache.next(for: URL(string: "https://api.example.com/private")!) == nil, "another origin")
        cache.store(challenge, nonceCount: 1, for: Self.url)
        #expect(cache.next(for: Self.url)?.nonceCount == 4, "a late store never lowers the count of a nonce")
    }

    @Test func theNonceCacheIsBounded() throws {
        let cache = DigestNonceCache()
        let challenge = try Self.digest(Self.rfc2617Challenge)
        for index in 0...DigestNonceCache.capacity {
            cache.store(challenge, nonceCount: 1, for: URL(string: "http://host\(index).example/")!)
        }
        let remembered = (0...DigestNonceCache.capacity).filter { cache.next(for: URL(string: "http://host\($0).example/")!) != nil }
        #expect(remembered.count == DigestNonceCache.capacity)
    }

    @Test func preemptiveAnswersUseTheRememberedNonce() throws {
        var responder = Self.responder()
        let challenge = try Self.digest(Self.rfc2617Challenge)
        let sentResult = responder.preempt(HTTPRequest(url: Self.url), answering: challenge, nonceCount: 7)
        let sent = try #require(sentResult)
        #expect(Self.authorization(sent)?["nc"] == "00000007")
        #expect(!responder.hasAnswered, "a preemptive answer is not the attempt's answer")
        // The server no longer knows the nonce: its fresh challenge is answered.
        let answered = responder.answer(Self.challenge(["Digest realm=r, nonce=fresh, qop=auth"]), to: sent)
        #expect(Self.authorization(answered)?["nonce"] == "fresh")
    }
}

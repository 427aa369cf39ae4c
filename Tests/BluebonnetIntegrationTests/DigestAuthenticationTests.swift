import Bluebonnet
import BluebonnetTestSupport
import Foundation
import Testing

/// HTTP Digest authentication (RFC 7616) against httpbin's `/digest-auth/…` and against
/// `Fixtures/servers/auth_server.py`, which checks every answer with Python's hashlib.
@Suite(.timeLimit(.minutes(2)))
struct DigestAuthenticationTests {
    struct Outcome: Decodable {
        let authenticated: Bool
        let user: String
        let algorithm: String?
        let qop: String?
        let nc: String?
        let nonce: String?
    }

    struct Stats: Decodable {
        let digest_authorizations: Int
        let digest_accepted: Int
    }

    static func hops<Value>(_ response: DataResponse<Value, BluebonnetError>) -> Int { response.metrics?.transactions.count ?? 0 }

    // MARK: httpbin

    /// httpbin 0.10.2 offers MD5, SHA-256 and (its own, plain) SHA-512, with `auth` and
    /// `auth-int` (over the empty body of a GET).
    @Test(arguments: ["auth/user/passwd/MD5", "auth/user/passwd/SHA-256", "auth/user/passwd/SHA-512", "auth-int/user/passwd/MD5",
                      "auth-int/user/passwd/SHA-256"])
    func httpbinDigest(path: String) async throws {
        try await withTestServer(.httpbin) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/digest-auth/\(path)")
                .authenticate(username: "user", password: "passwd").validate().serializingData().response
            #expect(response.response?.statusCode == 200, "\(String(describing: response.error))")
            #expect(Self.hops(response) == 2, "one challenge, one answer")
            #expect(response.request?.headers.value(for: "Authorization")?.hasPrefix("Digest ") == true)
            await session.shutdown()
        }
    }

    @Test func httpbinWrongPasswordDeliversThe401() async throws {
        try await withTestServer(.httpbin) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/digest-auth/auth/user/passwd/SHA-256")
                .authenticate(username: "user", password: "wrong").serializingData().response
            #expect(response.response?.statusCode == 401)
            #expect(Self.hops(response) == 2, "answered once, not looped")
            await session.shutdown()
        }
    }

    /// httpbin calls every nonce stale while the request carries `stale_after=0` (its cookie):
    /// the stale re-authentications stop after `maximumStaleAnswers` and the 401 is delivered.
    @Test func httpbinEndlesslyStaleNoncesDoNotLoop() async throws {
        try await withTestServer(.httpbin) { server in
            let session = Session()
            let response = await session.request(
                "\(server.baseURL)/digest-auth/auth/user/passwd/MD5/0", headers: ["Cookie": "stale_after=0"]
            ).authenticate(username: "user", password: "passwd").serializingData().response
            #expect(response.response?.statusCode == 401)
            #expect(response.response?.headers.value(for: "WWW-Authenticate")?.lowercased().contains("stale=true") == true)
            #expect(Self.hops(response) == 5, "the challenge, the answer, three stale re-answers")
            await session.shutdown()
        }
    }

    // MARK: The checking server

    static func check(_ base: String) async throws -> Stats {
        try await Session.default.request("\(base)/stats").serializingDecodable(Stats.self).value
    }

    /// Every RFC 7616 algorithm, each with `auth`, `auth-int` (over a POST body) and no qop.
    @Test(arguments: ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess", "SHA-512-256", "SHA-512-256-sess"])
    func everyAlgorithm(algorithm: String) async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            for qop in ["auth", "auth-int", "none"] {
                let response = await session.upload(Data("body to protect".utf8), to: "\(server.baseURL)/digest/\(qop)/\(algorithm)/user/passwd")
                    .authenticate(username: "user", password: "passwd").validate().serializingDecodable(Outcome.self).response
                if qop == "none", algorithm.hasSuffix("-sess") {
                    // RFC 7616 §3.4.2: -sess needs a cnonce, which only a qop answer carries.
                    #expect(response.response?.statusCode == 401, "not answered")
                    continue
                }
                let outcome = try #require(response.value, "\(qop): \(String(describing: response.error))")
                #expect(outcome.algorithm == algorithm)
                #expect(outcome.qop == (qop == "none" ? nil : qop))
            }
            await session.shutdown()
        }
    }

    /// RFC 7616 §3.7: the strongest algorithm offered, whether the challenges share a field or not.
    @Test(arguments: ["", "?split=1"])
    func theStrongestAlgorithmOfferedIsUsed(query: String) async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let outcome = try await session.request("\(server.baseURL)/digest/auth/MD5+SHA-512-256+SHA-256/user/passwd\(query)")
                .authenticate(username: "user", password: "passwd").validate().serializingDecodable(Outcome.self).value
            #expect(outcome.algorithm == "SHA-512-256")
            await session.shutdown()
        }
    }

    /// RFC 7616 §3.4.4: `userhash`, and a non-ASCII user name (sent as `username*`, RFC 8187).
    @Test func userhashAndNonASCIIUserNames() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let user = "J\u{E4}s\u{F8}n Doe"
            let path = "\(server.baseURL)/digest/auth/SHA-256/J%C3%A4s%C3%B8n%20Doe/Secret,%20or%20not%3F"
            for query in ["", "?userhash=1"] {
                let outcome = try await session.request(path + query).authenticate(username: user, password: "Secret, or not?")
                    .validate().serializingDecodable(Outcome.self).value
                #expect(outcome.user == user)
            }
            await session.shutdown()
        }
    }

    /// RFC 7616 §3.3: `stale=true` is answered with the new nonce and does not count as a
    /// failure: the request succeeds.
    @Test func aStaleNonceIsRenewedWithoutFailing() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/digest/auth/SHA-256/user/passwd?stale=2")
                .authenticate(username: "user", password: "passwd").validate().serializingDecodable(Outcome.self).response
            #expect(response.value?.authenticated == true, "\(String(describing: response.error))")
            #expect(Self.hops(response) == 4, "challenge, answer, two stale renewals")
            await session.shutdown()
        }
    }

    @Test func aWrongPasswordDeliversThe401() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let response = await session.request("\(server.baseURL)/digest/auth/MD5/user/passwd")
                .authenticate(username: "user", password: "nope").serializingData().response
            #expect(response.response?.statusCode == 401)
            #expect(Self.hops(response) == 2)
            await session.shutdown()
        }
    }

    /// The session's next request to the origin answers the remembered nonce at once, with the
    /// next nonce count (RFC 7616 §3.4): no 401 round trip.
    @Test func theNextRequestAnswersTheRememberedNoncePreemptively() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let url = "\(server.baseURL)/digest/auth/SHA-256/user/passwd"
            var counts: [String?] = []
            var hops: [Int] = []
            for _ in 0..<3 {
                let response = await session.request(url).authenticate(username: "user", password: "passwd").validate()
                    .serializingDecodable(Outcome.self).response
                counts.append(response.value?.nc)
                hops.append(Self.hops(response))
            }
            #expect(counts == ["00000001", "00000002", "00000003"])
            #expect(hops == [2, 1, 1])
            // Without a credential, nothing is sent preemptively.
            let anonymous = await session.request(url).serializingData().response
            #expect(anonymous.response?.statusCode == 401)
            #expect(anonymous.request?.headers.value(for: "Authorization") == nil)
            await session.shutdown()
        }
    }

    /// RFC 7616 §3.5: `Authentication-Info: nextnonce` is the nonce the next request answers, from
    /// count 1.
    @Test func theNextNonceIsUsedByTheNextRequest() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let url = "\(server.baseURL)/digest/auth/MD5/user/passwd?nextnonce=1"
            let first = await session.request(url).authenticate(username: "user", password: "passwd").validate()
                .serializingDecodable(Outcome.self).response
            let second = await session.request(url).authenticate(username: "user", password: "passwd").validate()
                .serializingDecodable(Outcome.self).response
            #expect(Self.hops(first) == 2)
            #expect(Self.hops(second) == 1, "answered before being asked")
            #expect(second.value?.nc == "00000001", "a new nonce counts from 1")
            let given = first.response?.headers.value(for: "Authentication-Info")
            #expect(given?.contains("nextnonce=\"\(second.value?.nonce ?? "-")\"") == true)
            await session.shutdown()
        }
    }

    @Test func urlCredentialsAnswerDigest() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let outcome = try await session.request("http://user:passwd@127.0.0.1:\(server.port)/digest/auth/SHA-256/user/passwd")
                .validate().serializingDecodable(Outcome.self).value
            #expect(outcome.authenticated)
            await session.shutdown()
        }
    }

    /// The credential never reaches another origin: a cross-origin redirect to a Digest challenge
    /// gets no answer (the server sees no Authorization), a same-origin one does.
    @Test func credentialsStayWithTheirOriginAcrossRedirects() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let elsewhere = "http://localhost:\(server.port)/digest/auth/MD5/user/passwd"
            let crossing = await session.request("\(server.baseURL)/redirect?to=\(elsewhere)")
                .authenticate(username: "user", password: "passwd").serializingData().response
            #expect(crossing.response?.statusCode == 401)
            #expect(crossing.response?.url?.host == "localhost")
            let afterCrossing = try await Self.check("\(server.baseURL)")
            #expect(afterCrossing.digest_authorizations == 0)

            let same = await session.request("\(server.baseURL)/redirect?to=/digest/auth/MD5/user/passwd")
                .authenticate(username: "user", password: "passwd").validate().serializingData().response
            #expect(same.response?.statusCode == 200)
            let afterSame = try await Self.check("\(server.baseURL)")
            #expect(afterSame.digest_authorizations == 1)
            await session.shutdown()
        }
    }

    /// A redirect after the Digest answer, within the origin, carries an answer made for its own
    /// URI (same nonce, next count), which the server takes.
    @Test func aRedirectAfterTheAnswerIsAnsweredForItsURI() async throws {
        try await withTestServer(.authServer) { server in
            let session = Session()
            let target = "/digest/auth/SHA-256/user/passwd?moved=1"
            let then = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let response = await session.request("\(server.baseURL)/digest/auth/SHA-256/user/passwd?then=\(then)")
                .authenticate(username: "user", password: "passwd").validate().serializingDecodable(Outcome.self).response
            #expect(response.value?.nc == "00000002", "\(String(describing: response.error))")
            #expect(Self.hops(response) == 3, "challenge, answer (302), the redirect answered at once")
            await session.shutdown()
        }
    }

    /// `auth-int` needs the body's hash; a file body is not hashed, so a server that offers only
    /// `auth-int` gets no answer and its 401 is delivered.
    @Test func onlyAuthIntForAFileBodyDeliversThe401() async throws {
        try await withTestServer(.authServer) { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID().uuidString).txt")
            try Data("file body".utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let session = Session()
            let response = await session.upload(file, to: "\(server.baseURL)/digest/auth-int/MD5/user/passwd")
                .authenticate(username: "user", password: "passwd").serializingData().response
            #expect(response.response?.statusCode == 401)
            #expect(Self.hops(response) == 1)
            let both = await session.upload(file, to: "\(server.baseURL)/digest/auth,auth-int/MD5/user/passwd")
                .authenticate(username: "user", password: "passwd").validate().serializingDecodable(Outcome.self).response
            #expect(both.value?.qop == "auth", "auth is chosen when offered")
            await session.shutdown()
        }
    }
}

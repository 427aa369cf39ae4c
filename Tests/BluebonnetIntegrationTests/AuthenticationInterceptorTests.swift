import Bluebonnet
import BluebonnetTestSupport
import FoundationEssentials
import Synchronization
import Testing

/// `AuthenticationInterceptor` against `Fixtures/servers/auth_server.py`, whose bearer token
/// expires and whose `/token/refresh` makes a new one and counts the refreshes.
@Suite(.timeLimit(.minutes(2)))
struct AuthenticationInterceptorTests {
    struct Token: AuthenticationCredential, Sendable {
        var value: String
        var requiresRefresh = false
    }

    struct Refreshed: Decodable { let token: String }

    struct RefreshRefused: Error {}

    /// An OAuth-style authenticator whose refresh asks the server (through its own session,
    /// without the interceptor) for a new token; it counts its refreshes.
    final class TokenAuthenticator: Authenticator {
        let refreshURL: String
        let refreshSession = Session()
        let refreshes = Atomic<Int>(0)
        /// A refresh that hands back this token instead of asking the server (nil: ask it).
        let fixedToken: String?
        let fails: Bool
        /// Whether the refreshed tokens say they require a refresh already.
        let refreshedRequireRefresh: Bool

        init(base: String, delayMilliseconds: Int = 0, fixedToken: String? = nil, fails: Bool = false,
             refreshedRequireRefresh: Bool = false) {
            refreshURL = "\(base)/token/refresh?delay_ms=\(delayMilliseconds)"
            self.fixedToken = fixedToken
            self.fails = fails
            self.refreshedRequireRefresh = refreshedRequireRefresh
        }

        func apply(_ credential: Token, to urlRequest: inout HTTPRequest) {
            urlRequest.headers.update(.authorization(bearerToken: credential.value))
        }

        func refresh(_ credential: Token, for session: Session) async throws -> Token {
            refreshes.add(1, ordering: .relaxed)
            if fails { throw RefreshRefused() }
            if let fixedToken { return Token(value: fixedToken, requiresRefresh: refreshedRequireRefresh) }
            let refreshed = try await refreshSession.request(refreshURL, method: .post).validate()
                .serializingDecodable(Refreshed.self).value
            return Token(value: refreshed.token)
        }

        func didRequest(_ urlRequest: HTTPRequest, with response: HTTPResponse, failDueToAuthenticationError error: any Error) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ urlRequest: HTTPRequest, authenticatedWith credential: Token) -> Bool {
            urlRequest.headers.value(for: "Authorization") == "Bearer \(credential.value)"
        }
    }

    struct Stats: Decodable {
        let refreshes: Int
        let bearer_accepted: Int
        let bearer_refused: Int
    }

    static func stats(_ base: String) async throws -> Stats {
        let session = Session()
        defer { Task { await session.shutdown() } }
        return try await session.request("\(base)/stats").serializingDecodable(Stats.self).value
    }

    /// Issue 14's test: the token expires under 100 concurrent requests; every one gets a 401,
    /// exactly one refresh runs, and all 100 are retried with the new token and succeed.
    @Test func oneRefreshForAHundredConcurrent401s() async throws {
        try await withTestServer(.authServer) { server in
            let base = "\(server.baseURL)"
            let authenticator = TokenAuthenticator(base: base, delayMilliseconds: 100)
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "t0"))
            // A retry budget that allows no retry at all: retries after a 401 are not drawn from
            // it, so all 100 are still retried with the refreshed token.
            var configuration = SessionConfiguration()
            configuration.retryBudget = RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0)
            let session = Session(configuration: configuration, interceptor: interceptor)
            let before = await session.request("\(base)/token/protected").validate().serializingData().response
            #expect(before.response?.statusCode == 200, "t0 works before it expires")
            _ = try await Session.default.request("\(base)/token/expire", method: .post).validate().serializingData().value

            let responses = await withTaskGroup(of: DataResponse<Data, BluebonnetError>.self) { group in
                for _ in 0..<100 {
                    group.addTask { await session.request("\(base)/token/protected").validate().serializingData().response }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 100)
            #expect(responses.allSatisfy { $0.response?.statusCode == 200 }, "\(responses.compactMap(\.error).first.map { "\($0)" } ?? "")")
            #expect(responses.allSatisfy { $0.request?.headers.value(for: "Authorization") == "Bearer t1" }, "sent with the new token")
            #expect(authenticator.refreshes.load(ordering: .relaxed) == 1)
            #expect(interceptor.credential?.value == "t1")
            let stats = try await Self.stats(base)
            #expect(stats.refreshes == 1, "the server saw one refresh")
            #expect(stats.bearer_accepted == 101)
            // Each request was refused at most once, with t0 (one that started adapting after the
            // refresh began waited for it and was never refused).
            #expect((1...100).contains(stats.bearer_refused), "\(stats.bearer_refused)")
            await session.shutdown()
            await authenticator.refreshSession.shutdown()
        }
    }

    /// A credential that requires refresh is refreshed before use, once for concurrent adapts.
    @Test func anExpiredCredentialIsRefreshedOnceBeforeUse() async throws {
        try await withTestServer(.authServer) { server in
            let base = "\(server.baseURL)"
            let authenticator = TokenAuthenticator(base: base, delayMilliseconds: 50)
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator, credential: Token(value: "t0", requiresRefresh: true))
            let session = Session(interceptor: interceptor)
            let codes = await withTaskGroup(of: Int?.self) { group in
                for _ in 0..<20 {
                    group.addTask { await session.request("\(base)/token/protected").validate().serializingData().response.response?.statusCode }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(codes == Array(repeating: 200, count: 20))
            #expect(authenticator.refreshes.load(ordering: .relaxed) == 1)
            let stats = try await Self.stats(base)
            #expect(stats.bearer_refused == 0, "no request went out with the expired token")
            await session.shutdown()
            await authenticator.refreshSession.shutdown()
        }
    }

    /// A refresh that never satisfies the server: the refresh window (here 2 per 10 minutes, so
    /// that a slow machine or a sanitizer cannot spread the refreshes beyond it) ends the loop
    /// with `excessiveRefresh`.
    @Test func aRefreshLoopEndsInExcessiveRefresh() async throws {
        try await withTestServer(.authServer) { server in
            let base = "\(server.baseURL)"
            let authenticator = TokenAuthenticator(base: base, fixedToken: "never-valid")
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator, credential: Token(value: "wrong"),
                refreshWindow: .init(interval: 600, maximumAttempts: 2))
            let session = Session(interceptor: interceptor)
            let response = await session.request("\(base)/token/protected").validate().serializingData().response
            guard case .requestRetryFailed(let retryError, _)? = response.error else {
                Issue.record("expected requestRetryFailed, got \(String(describing: response.error))")
                return
            }
            #expect(retryError as? AuthenticationError == .excessiveRefresh)
            #expect(authenticator.refreshes.load(ordering: .relaxed) == 2)
            await session.shutdown()
            await authenticator.refreshSession.shutdown()
        }
    }

    /// A 401, then refreshed credentials that are expired already: the window refuses the third
    /// refresh during adaptation, and the request fails with that, retried once (after the 401),
    /// not again for the earlier attempt's 401.
    @Test func aRefreshRefusedDuringAdaptationIsNotRetried() async throws {
        try await withTestServer(.authServer) { server in
            let base = "\(server.baseURL)"
            let authenticator = TokenAuthenticator(base: base, fixedToken: "expired", refreshedRequireRefresh: true)
            let interceptor = AuthenticationInterceptor(
                authenticator: authenticator, credential: Token(value: "wrong"),
                refreshWindow: .init(interval: 30, maximumAttempts: 2))
            let session = Session(interceptor: interceptor)
            let request = session.request("\(base)/token/protected").validate()
            let response = await request.serializingData().response
            guard case .requestAdaptationFailed(let error)? = response.error else {
                Issue.record("expected requestAdaptationFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error as? AuthenticationError == .excessiveRefresh)
            #expect(request.retryCount == 1)
            #expect(authenticator.refreshes.load(ordering: .relaxed) == 2)
            await session.shutdown()
            await authenticator.refreshSession.shutdown()
        }
    }

    /// A failed refresh fails every request that waited for it, with the refresh's error.
    @Test func aFailedRefreshFailsEveryWaitingRequest() async throws {
        try await withTestServer(.authServer) { server in
            let base = "\(server.baseURL)"
            let authenticator = TokenAuthenticator(base: base, fails: true)
            let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "stale"))
            let session = Session(interceptor: interceptor)
            let errors = await withTaskGroup(of: BluebonnetError?.self) { group in
                for _ in 0..<10 {
                    group.addTask { await session.request("\(base)/token/protected").validate().serializingData().response.error }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(errors.count == 10)
            // A request that got its 401 waits in its retry and fails with the refresh's error
            // there; one that reaches its adaptation while the refresh runs (under load, before
            // its first exchange) waits there and fails its adaptation with it (Alamofire's
            // queued adapt operations do the same). Either way: the refresh's error.
            for error in errors {
                switch error {
                case .requestRetryFailed(let retryError, let original)?:
                    #expect(retryError is RefreshRefused)
                    #expect((original as? BluebonnetError)?.responseCode == 401)
                case .requestAdaptationFailed(let adaptError)?:
                    #expect(adaptError is RefreshRefused)
                default:
                    Issue.record("expected the refresh's error, got \(String(describing: error))")
                }
            }
            // The ones reported after the refresh failed get its error without another refresh
            // (unless a request adapted meanwhile, which lets the next failure try again).
            #expect((1...10).contains(authenticator.refreshes.load(ordering: .relaxed)))
            await session.shutdown()
            await authenticator.refreshSession.shutdown()
        }
    }

    @Test func noCredentialFailsTheAdaptation() async throws {
        try await withTestServer(.authServer) { server in
            let authenticator = TokenAuthenticator(base: "\(server.baseURL)")
            let session = Session(interceptor: AuthenticationInterceptor(authenticator: authenticator))
            let response = await session.request("\(server.baseURL)/token/protected").validate().serializingData().response
            guard case .requestAdaptationFailed(let error)? = response.error else {
                Issue.record("expected requestAdaptationFailed, got \(String(describing: response.error))")
                return
            }
            #expect(error as? AuthenticationError == .missingCredential)
            #expect(response.response == nil, "nothing was sent")
            await session.shutdown()
            await authenticator.refreshSession.shutdown()
        }
    }
}

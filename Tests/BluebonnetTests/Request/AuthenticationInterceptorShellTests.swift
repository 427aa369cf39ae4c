@testable import Bluebonnet
import FoundationEssentials
import Synchronization
import Testing

/// The `AuthenticationInterceptor` shell without a network: either refresh form, a completion
/// called synchronously, queued adapts, the credential set from outside.
@Suite struct AuthenticationInterceptorShellTests {
    struct Token: AuthenticationCredential, Sendable {
        var value: String
        var requiresRefresh = false
    }

    /// Alamofire's shape: only the completion form of refresh, called back on the calling thread.
    final class CompletionAuthenticator: Authenticator {
        let refreshes = Atomic<Int>(0)

        func apply(_ credential: Token, to urlRequest: inout HTTPRequest) {
            urlRequest.headers.update(.authorization(bearerToken: credential.value))
        }

        func refresh(_ credential: Token, for session: Session, completion: @escaping @Sendable (Result<Token, any Error>) -> Void) {
            let count = refreshes.add(1, ordering: .relaxed).newValue
            completion(.success(Token(value: "a\(count)")))  // synchronously, as Alamofire's deadlock test does
        }

        func didRequest(_ urlRequest: HTTPRequest, with response: HTTPResponse, failDueToAuthenticationError error: any Error) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ urlRequest: HTTPRequest, authenticatedWith credential: Token) -> Bool {
            urlRequest.headers.value(for: "Authorization") == "Bearer \(credential.value)"
        }
    }

    /// Bluebonnet's async form only, which waits until told to finish.
    final class AsyncAuthenticator: Authenticator {
        let refreshes = Atomic<Int>(0)
        let gate = AsyncGate()

        func apply(_ credential: Token, to urlRequest: inout HTTPRequest) {
            urlRequest.headers.update(.authorization(bearerToken: credential.value))
        }

        func refresh(_ credential: Token, for session: Session) async throws -> Token {
            let count = refreshes.add(1, ordering: .relaxed).newValue
            await gate.wait()
            return Token(value: "b\(count)")
        }

        func didRequest(_ urlRequest: HTTPRequest, with response: HTTPResponse, failDueToAuthenticationError error: any Error) -> Bool {
            response.statusCode == 401
        }

        func isRequest(_ urlRequest: HTTPRequest, authenticatedWith credential: Token) -> Bool {
            urlRequest.headers.value(for: "Authorization") == "Bearer \(credential.value)"
        }
    }

    /// A one-shot gate: `wait()` suspends until `open()`.
    final class AsyncGate: Sendable {
        private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func wait() async {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.open { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func open() {
            let waiters = state.withLock { state in
                state.open = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        var waiting: Int { state.withLock { $0.waiters.count } }
    }

    static let request = HTTPRequest(url: URL(string: "http://api.example.com/")!)

    @Test func aSynchronousRefreshCompletionDoesNotDeadlock() async throws {
        let session = Session()
        let authenticator = CompletionAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "a0", requiresRefresh: true))
        let adapted = try await interceptor.adapt(Self.request, using: RequestAdapterState(requestID: UUID(), session: session))
        #expect(adapted.headers.value(for: "Authorization") == "Bearer a1")
        #expect(authenticator.refreshes.load(ordering: .relaxed) == 1)
        #expect(interceptor.credential?.value == "a1")
        await session.shutdown()
    }

    /// An authenticator with the async form only, whose completion-form refresh (the default)
    /// ends in another refresh from its completion: a new refresh, not the defaults going round
    /// (the default used to call the completion inside its "entered" mark, and the second
    /// refresh stopped the process with "implements neither"; seen under ThreadSanitizer in
    /// AuthenticationInterceptorTests' refresh loop).
    @Test func aRefreshStartedFromARefreshCompletionIsANewRefresh() async throws {
        let session = Session()
        let authenticator = AsyncAuthenticator()
        authenticator.gate.open()
        let second: Result<Token, any Error> = await withCheckedContinuation { continuation in
            authenticator.refresh(Token(value: "a0"), for: session) { first in
                guard case .success(let token) = first else { return continuation.resume(returning: first) }
                authenticator.refresh(token, for: session) { continuation.resume(returning: $0) }
            }
        }
        #expect((try? second.get())?.value == "b2")
        #expect(authenticator.refreshes.load(ordering: .relaxed) == 2)
        await session.shutdown()
    }

    /// Adapts that arrive while the (async) refresh runs wait for it and get the new credential.
    @Test func adaptsQueueBehindARunningRefresh() async throws {
        let session = Session()
        let authenticator = AsyncAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Token(value: "b0", requiresRefresh: true))
        let results = Mutex<[String?]>([])
        let done = AsyncGate()
        for _ in 0..<5 {
            interceptor.adapt(Self.request, for: session) { result in
                let count = results.withLock { results in
                    results.append(try? result.get().headers.value(for: "Authorization"))
                    return results.count
                }
                if count == 5 { done.open() }
            }
        }
        #expect(results.withLock { $0.isEmpty }, "nothing adapted before the refresh finished")
        authenticator.gate.open()
        await done.wait()
        #expect(results.withLock { $0 } == Array(repeating: "Bearer b1", count: 5))
        #expect(authenticator.refreshes.load(ordering: .relaxed) == 1)
        await session.shutdown()
    }

    @Test func theCredentialCanBeSetFromOutside() async throws {
        let session = Session()
        let interceptor = AuthenticationInterceptor(authenticator: CompletionAuthenticator())
        let state = RequestAdapterState(requestID: UUID(), session: session)
        await #expect(throws: AuthenticationError.missingCredential) { try await interceptor.adapt(Self.request, using: state) }
        interceptor.credential = Token(value: "set")
        #expect(try await interceptor.adapt(Self.request, using: state).headers.value(for: "Authorization") == "Bearer set")
        interceptor.credential = nil
        await #expect(throws: AuthenticationError.missingCredential) { try await interceptor.adapt(Self.request, using: state) }
        await session.shutdown()
    }

    /// Alamofire's defaults: 30 s, 5 attempts.
    @Test func theRefreshWindowDefaultsAreAlamofires() {
        let window = AuthenticationInterceptor<CompletionAuthenticator>.RefreshWindow()
        #expect(window.interval == 30)
        #expect(window.maximumAttempts == 5)
    }
}

import FoundationEssentials
import Synchronization

/// A credential an ``AuthenticationInterceptor`` applies to requests and refreshes: Alamofire's
/// `AuthenticationCredential` (an OAuth 2 access token with its refresh token, for example).
public protocol AuthenticationCredential {
    /// Whether the credential must be refreshed before it is used again: true once it has
    /// expired, and wisely a little before (a token valid for 60 minutes could say true in its
    /// last 5), so that it does not expire on its way through the backend.
    var requiresRefresh: Bool { get }
}

/// Applies an ``AuthenticationCredential`` to requests, refreshes it, and tells which failures
/// are authentication failures: Alamofire's `Authenticator`, which an ``AuthenticationInterceptor``
/// drives.
///
/// Implement one of the two `refresh` forms; the other reaches it through its default:
/// `refresh(_:for:completion:)`, Alamofire's requirement, or `refresh(_:for:) async throws`, a
/// Bluebonnet addition. An authenticator that implements neither traps on its first refresh
/// (Alamofire's would not compile).
public protocol Authenticator: AnyObject, Sendable {
    /// The credential this authenticator applies and refreshes.
    associatedtype Credential: AuthenticationCredential & Sendable

    /// Applies `credential` to `urlRequest`: for OAuth 2, `Authorization: Bearer <access token>`.
    func apply(_ credential: Credential, to urlRequest: inout HTTPRequest)

    /// Refreshes `credential` and calls `completion` exactly once with the new credential or the
    /// error. The interceptor calls it for at most one refresh at a time, outside its lock,
    /// from the task of the request that needed it.
    ///
    /// A refresh request made through `session` must not need this interceptor (give the session
    /// no ``AuthenticationInterceptor`` for it, or use another session): it would wait for itself.
    /// An error that means the user must sign in again should be recorded by the authenticator
    /// (for example by signing out); the waiting requests fail with it.
    func refresh(
        _ credential: Credential, for session: Session,
        completion: @escaping @Sendable (Result<Credential, any Error>) -> Void)

    /// The async form of ``refresh(_:for:completion:)``: returns the new credential or throws. The
    /// default calls the completion form.
    func refresh(_ credential: Credential, for session: Session) async throws -> Credential

    /// Whether `urlRequest`, answered with `response`, failed because of its authentication (for
    /// OAuth 2: a 401). The interceptor refreshes the credential only when this says true.
    ///
    /// A 401 is a failure only where a validator makes it one (`validate()`);
    /// without validation the response is delivered and nothing is retried.
    func didRequest(_ urlRequest: HTTPRequest, with response: HTTPResponse, failDueToAuthenticationError error: any Error) -> Bool

    /// Whether `urlRequest` was sent with `credential` (for OAuth 2: whether its `Authorization`
    /// holds the credential's access token). A request sent with an older credential is retried
    /// at once with the current one, without a refresh.
    func isRequest(_ urlRequest: HTTPRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// Runs ``refresh(_:for:)`` (async) in a new task and calls `completion` with
    /// its result.
    public func refresh(
        _ credential: Credential, for session: Session,
        completion: @escaping @Sendable (Result<Credential, any Error>) -> Void
    ) {
        let key = InterceptorForms.Key(Self.self, .refreshCompletion)
        guard InterceptorForms.enter(key) else { Self.noRefreshForm() }
        let outer = InterceptorForms.entered
        InterceptorForms.$entered.withValue(outer.union([key])) {
            Task {
                let result: Result<Credential, any Error>
                do { result = .success(try await self.refresh(credential, for: session)) } catch { result = .failure(error) }
                InterceptorForms.$entered.withValue(outer) { completion(result) }
            }
        }
    }

    /// Calls ``refresh(_:for:completion:)`` and waits for its completion.
    public func refresh(_ credential: Credential, for session: Session) async throws -> Credential {
        let key = InterceptorForms.Key(Self.self, .refreshAsync)
        guard InterceptorForms.enter(key) else { Self.noRefreshForm() }
        return try await InterceptorForms.$entered.withValue(InterceptorForms.entered.union([key])) {
            try await withCheckedThrowingContinuation { continuation in
                refresh(credential, for: session) { continuation.resume(with: $0) }
            }
        }
    }

    private static func noRefreshForm() -> Never {
        preconditionFailure(
            "\(Self.self) conforms to Authenticator but implements neither refresh(_:for:completion:) nor refresh(_:for:) async")
    }
}

/// Why an ``AuthenticationInterceptor`` failed a request: Alamofire's `AuthenticationError`.
public enum AuthenticationError: Error, Sendable, Hashable {
    /// The interceptor has no credential: adapting fails with
    /// ``BluebonnetError/requestAdaptationFailed(error:)``, retrying with
    /// ``BluebonnetError/requestRetryFailed(retryError:originalError:)``.
    case missingCredential
    /// The credential was refreshed ``AuthenticationInterceptor/RefreshWindow/maximumAttempts``
    /// times within ``AuthenticationInterceptor/RefreshWindow/interval``: another refresh would
    /// be a loop (a server that refuses every new credential, a clock far off).
    case excessiveRefresh
}

/// Applies a shared credential to every request and refreshes it when it expires or a request
/// fails authentication, once for any number of requests: Alamofire's `AuthenticationInterceptor`.
///
/// ```swift
/// let interceptor = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: credential)
/// let session = Session(interceptor: interceptor)
/// let user = try await session.request("https://api.example.com/me").validate().serializingDecodable(User.self).value
/// ```
///
/// - **Adapt**: the credential is applied with ``Authenticator/apply(_:to:)``. No credential fails
///   the request with ``AuthenticationError/missingCredential``. A credential that
///   ``AuthenticationCredential/requiresRefresh`` is refreshed first.
/// - **Retry**: a request that ``Authenticator/didRequest(_:with:failDueToAuthenticationError:)``
///   says failed authentication is retried: at once when it was sent with an older credential
///   (``Authenticator/isRequest(_:authenticatedWith:)`` says no), after a refresh otherwise.
/// - **One refresh at a time**: while a refresh runs, every adapt and every such failure waits
///   for it, then goes on with the new credential (or fails with the refresh's error). However
///   many requests fail together, the credential is refreshed once.
/// - **Refresh window**: more than ``RefreshWindow/maximumAttempts`` refreshes within
///   ``RefreshWindow/interval`` fail with ``AuthenticationError/excessiveRefresh`` instead.
///
/// Differs from Alamofire: an adapt waits for *any* refresh that runs (Alamofire's waits only
/// for a refresh that an adapt started, and sends a request with the old credential while a
/// 401 refreshes, which then fails and is retried); the refresh window's old times are
/// dropped (Alamofire's list only grows); the refresh runs in the task of the request that
/// needed it, not on a dispatch queue; and there is an async refresh form.
///
/// Thread-safe: the state is a `Mutex` over a value, and the authenticator
/// and the completions are called outside it.
public final class AuthenticationInterceptor<AuthenticatorType>: RequestInterceptor, Sendable
where AuthenticatorType: Authenticator {
    /// The credential type of the authenticator.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes may happen within how long before the next one is refused with
    /// ``AuthenticationError/excessiveRefresh``: Alamofire's `RefreshWindow`.
    public struct RefreshWindow: Sendable, Hashable {
        /// The length of the window, in seconds; default 30.
        public let interval: TimeInterval
        /// The most refreshes within ``interval``; default 5.
        public let maximumAttempts: Int

        /// A window of `maximumAttempts` refreshes per `interval` seconds.
        public init(interval: TimeInterval = 30.0, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    typealias AdaptWaiter = @Sendable (Result<Credential, any Error>) -> Void
    typealias RetryWaiter = @Sendable (RetryResult) -> Void
    typealias StateMachine = AuthenticationStateMachine<Credential, AdaptWaiter, RetryWaiter>

    /// The credential applied to requests. Setting it (after signing in, or out with nil) makes
    /// it current at once; a request sent with the old one and failing authentication is
    /// retried with it. Set while a refresh runs, it wins: the refresh's result is dropped and
    /// the requests waiting for it go on with this credential (Alamofire's refresh would replace
    /// it, and a second refresh could start meanwhile).
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.credentialSet(newValue) } }
    }

    /// The authenticator.
    let authenticator: AuthenticatorType
    private let state: Mutex<StateMachine>

    /// An interceptor applying `credential` (default none: set ``credential`` later) with
    /// `authenticator`; `refreshWindow` nil allows any number of refreshes.
    public init(
        authenticator: AuthenticatorType, credential: Credential? = nil, refreshWindow: RefreshWindow? = RefreshWindow()
    ) {
        self.authenticator = authenticator
        let window = refreshWindow.map {
            StateMachine.Window(interval: Duration.positiveSeconds($0.interval) ?? .zero, maximumAttempts: $0.maximumAttempts)
        }
        state = Mutex(StateMachine(credential: credential, window: window))
    }

    // MARK: Adapt

    /// Applies the credential (refreshing it first when it requires it, or waiting for a refresh
    /// that runs) and calls `completion`.
    public func adapt(
        _ urlRequest: HTTPRequest, for session: Session,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        let authenticator = self.authenticator
        let waiter: AdaptWaiter = { result in
            completion(result.map { credential in
                var request = urlRequest
                authenticator.apply(credential, to: &request)
                return request
            })
        }
        adapt(waiter, session: session)
    }

    /// As ``adapt(_:for:completion:)``.
    public func adapt(
        _ urlRequest: HTTPRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, for: state.session, completion: completion)
    }

    /// As ``adapt(_:for:completion:)``, awaited.
    public func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        try await withCheckedThrowingContinuation { continuation in
            adapt(urlRequest, for: state.session) { continuation.resume(with: $0) }
        }
    }

    private func adapt(_ waiter: @escaping AdaptWaiter, session: Session) {
        let action = state.withLock { $0.adaptRequested(waiter, now: .now) }
        switch action {
        case .apply(let credential): waiter(.success(credential))
        case .fail(let error): waiter(.failure(error))
        case .wait: break
        case .startRefresh(let credential): refresh(credential, for: session)
        case .failWaiters(let waiters, let error): fail(waiters, with: error)
        }
    }

    // MARK: Retry

    /// Retries a request that failed authentication: at once when it was sent with an older
    /// credential, after the (one) refresh otherwise. A failed adaptation (no credential, a failed
    /// or refused refresh) is not retried.
    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        // An attempt that failed its adaptation sent nothing: the response a request still shows
        // is an earlier attempt's, and retrying would adapt (and fail) again.
        if (error as? BluebonnetError)?.isRequestAdaptationError == true { return completion(.doNotRetry) }
        // The request as last sent (adapted), with the response that failed it.
        guard let urlRequest = request.lastRequest ?? request.request, let response = request.response else {
            return completion(.doNotRetry)
        }
        guard authenticator.didRequest(urlRequest, with: response, failDueToAuthenticationError: error) else {
            return completion(.doNotRetry)
        }
        guard let (credential, version) = state.withLock({ $0.currentCredential }) else {
            return completion(.doNotRetryWithError(AuthenticationError.missingCredential))
        }
        guard authenticator.isRequest(urlRequest, authenticatedWith: credential) else { return completion(.retry) }
        let action = state.withLock { $0.retryRequested(completion, version: version, now: .now) }
        switch action {
        case .answer(let result): completion(result)
        case .wait: break
        case .startRefresh(let credential): refresh(credential, for: session)
        case .failWaiters(let waiters, let error): fail(waiters, with: error)
        }
    }

    /// As ``retry(_:for:dueTo:completion:)``, awaited.
    public func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
        await withCheckedContinuation { continuation in
            retry(request, for: session, dueTo: error) { continuation.resume(returning: $0) }
        }
    }

    // MARK: Refresh

    private func refresh(_ credential: Credential, for session: Session) {
        authenticator.refresh(credential, for: session) { [self] result in
            switch result {
            case .success(let refreshed):
                resume(state.withLock { $0.refreshSucceeded(refreshed) }, session: session)
            case .failure(let error):
                let ended = state.withLock { $0.refreshFailed(error) }
                if ended.failed { fail(ended.waiters, with: error) } else { resume(ended.waiters, session: session) }
            }
        }
    }

    /// After a refresh: the waiting adapts are adapted again (with the current credential) and
    /// the waiting requests retried.
    private func resume(_ waiters: StateMachine.Waiters, session: Session) {
        for waiter in waiters.adapts { adapt(waiter, session: session) }
        for waiter in waiters.retries { waiter(.retry) }
    }

    private func fail(_ waiters: StateMachine.Waiters, with error: any Error) {
        for waiter in waiters.adapts { waiter(.failure(error)) }
        for waiter in waiters.retries { waiter(.doNotRetryWithError(error)) }
    }
}

import FoundationEssentials

/// The state of an ``AuthenticationInterceptor`` as a value: the shared credential, whether a
/// refresh runs, who waits for it, and the refresh window. No locks, closures or clocks: the
/// interceptor (the shell) calls these events under its lock, with `now`, and performs the
/// returned actions after unlocking. Generic over what waits, so tests use plain values.
///
/// States (`refresh`):
/// - `idle`: adapts apply the credential; a 401 with the current credential starts a refresh
///   (→ `refreshing`); a credential that ``AuthenticationCredential/requiresRefresh`` starts one on
///   adapt (→ `refreshing`).
/// - `refreshing`: every adapt and every such 401 waits. `refreshSucceeded` (→ `idle`) re-adapts
///   the waiting adapts and retries the waiting requests; `refreshFailed` (→ `failed`) fails them
///   all.
/// - `failed(error)`: a 401 with the current credential fails with that error; the next adapt
///   returns to `idle`, so a later request may try again. Setting a credential → `idle`.
///
/// A credential set from outside while a refresh runs becomes current at once; the refresh goes
/// on (no second one starts), and when it ends, successfully or not, its result is dropped and
/// its waiters go on with the credential that was set.
///
/// A refresh that the ``AuthenticationInterceptor/RefreshWindow`` refuses fails like a failed
/// refresh, with ``AuthenticationError/excessiveRefresh``.
struct AuthenticationStateMachine<Credential: AuthenticationCredential, AdaptWaiter, RetryWaiter> {
    enum RefreshState {
        case idle
        case refreshing
        case failed(any Error)
    }

    /// The refresh window's limits, in the clock's units.
    struct Window {
        var interval: Duration
        var maximumAttempts: Int
    }

    /// What to do after an adapt.
    enum AdaptAction {
        /// Apply this credential to the request and go on.
        case apply(Credential)
        /// Fail the adapt with this error.
        case fail(any Error)
        /// The adapt waits for the refresh that runs.
        case wait
        /// The adapt waits; start refreshing this credential.
        case startRefresh(Credential)
        /// The refresh was refused (``AuthenticationError/excessiveRefresh``): fail these, this
        /// adapt among them.
        case failWaiters(Waiters, any Error)
    }

    /// What to do after a retry was asked about a request that failed authentication.
    enum RetryAction {
        /// Answer the retrier at once.
        case answer(RetryResult)
        /// The request waits for the refresh that runs.
        case wait
        /// The request waits; start refreshing this credential.
        case startRefresh(Credential)
        /// The refresh was refused: fail these, this request among them.
        case failWaiters(Waiters, any Error)
    }

    /// Who waited for a refresh.
    struct Waiters {
        var adapts: [AdaptWaiter] = []
        var retries: [RetryWaiter] = []
    }

    private(set) var credential: Credential?
    /// Bumped by every credential change; a request authenticated before the change is retried
    /// without a refresh.
    private(set) var credentialVersion = 0
    private(set) var refresh: RefreshState = .idle
    /// Whether the credential was set from outside while the running refresh ran.
    private var replacedDuringRefresh = false
    /// When the refreshes in the current window started (older ones are dropped).
    private(set) var refreshTimes: [ContinuousClock.Instant] = []
    let window: Window?
    private var waiters = Waiters()

    init(credential: Credential?, window: Window?) {
        self.credential = credential
        self.window = window
    }

    var isRefreshing: Bool {
        if case .refreshing = refresh { return true }
        return false
    }

    /// How many adapts and requests wait for the refresh.
    var waiterCount: Int { waiters.adapts.count + waiters.retries.count }

    /// The credential is set from outside (``AuthenticationInterceptor/credential``): it becomes
    /// current. A running refresh goes on (its waiters keep waiting; its result will be dropped);
    /// otherwise the state becomes `idle`.
    mutating func credentialSet(_ credential: Credential?) {
        self.credential = credential
        credentialVersion += 1
        if isRefreshing {
            replacedDuringRefresh = true
        } else {
            refresh = .idle
        }
    }

    /// A request is to be adapted.
    mutating func adaptRequested(_ waiter: AdaptWaiter, now: ContinuousClock.Instant) -> AdaptAction {
        if isRefreshing {
            waiters.adapts.append(waiter)
            return .wait
        }
        guard let credential else { return .fail(AuthenticationError.missingCredential) }
        if credential.requiresRefresh {
            waiters.adapts.append(waiter)
            switch startRefresh(now: now) {
            case .started: return .startRefresh(credential)
            case .refused(let waiters, let error): return .failWaiters(waiters, error)
            }
        }
        if case .failed = refresh { refresh = .idle }
        return .apply(credential)
    }

    /// The version to check a failed request against: the current credential and its version,
    /// or nil when there is none (the retry then fails with ``AuthenticationError/missingCredential``).
    var currentCredential: (credential: Credential, version: Int)? {
        credential.map { ($0, credentialVersion) }
    }

    /// A request that failed authentication was sent with the credential of `version` (read
    /// from ``currentCredential`` before the authenticator was asked whether it was authenticated
    /// with it, which it was).
    mutating func retryRequested(_ waiter: RetryWaiter, version: Int, now: ContinuousClock.Instant) -> RetryAction {
        guard version == credentialVersion else { return .answer(.retry) }
        switch refresh {
        case .failed(let error):
            return .answer(.doNotRetryWithError(error))
        case .refreshing:
            waiters.retries.append(waiter)
            return .wait
        case .idle:
            guard let credential else { return .answer(.doNotRetryWithError(AuthenticationError.missingCredential)) }
            waiters.retries.append(waiter)
            switch startRefresh(now: now) {
            case .started: return .startRefresh(credential)
            case .refused(let waiters, let error): return .failWaiters(waiters, error)
            }
        }
    }

    /// The refresh returned a credential: it becomes current (unless one was set from outside
    /// meanwhile); the waiting adapts are to be adapted again and the waiting requests retried.
    mutating func refreshSucceeded(_ credential: Credential) -> Waiters {
        if !replacedDuringRefresh {
            self.credential = credential
            credentialVersion += 1
        }
        replacedDuringRefresh = false
        refresh = .idle
        return takeWaiters()
    }

    /// The refresh failed: the waiting adapts and requests fail with `error` (`failed: true`);
    /// or, when a credential was set from outside meanwhile, they go on with it as after a
    /// successful refresh (`failed: false`).
    mutating func refreshFailed(_ error: any Error) -> (waiters: Waiters, failed: Bool) {
        if replacedDuringRefresh {
            replacedDuringRefresh = false
            refresh = .idle
            return (takeWaiters(), false)
        }
        refresh = .failed(error)
        return (takeWaiters(), true)
    }

    private enum Start {
        case started
        case refused(Waiters, any Error)
    }

    private mutating func startRefresh(now: ContinuousClock.Instant) -> Start {
        if let window {
            refreshTimes.removeAll { now - $0 > window.interval }
            if refreshTimes.count >= window.maximumAttempts {
                let error = AuthenticationError.excessiveRefresh
                refresh = .failed(error)
                return .refused(takeWaiters(), error)
            }
            refreshTimes.append(now)
        }
        refresh = .refreshing
        return .started
    }

    private mutating func takeWaiters() -> Waiters {
        defer { waiters = Waiters() }
        return waiters
    }
}

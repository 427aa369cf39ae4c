import FoundationEssentials
import Synchronization

/// What an adapter knows about the request it adapts: Alamofire's `RequestAdapterState`.
public struct RequestAdapterState: Sendable {
    /// The identifier of the ``Request`` (``Request/id``, stable across retries).
    public let requestID: UUID
    /// The session that runs the request.
    public let session: Session
    /// How many times the request has been retried before this attempt (0 on the first); a
    /// Bluebonnet addition.
    public let retryCount: Int

    /// Creates a state.
    public init(requestID: UUID, session: Session, retryCount: Int = 0) {
        self.requestID = requestID
        self.session = session
        self.retryCount = retryCount
    }
}

/// Changes a request before it is sent, for example to add credentials: Alamofire's
/// `RequestAdapter`.
///
/// Implement one of the three forms; the others reach it through their defaults:
/// - `adapt(_:for:completion:)`, Alamofire's usual requirement;
/// - `adapt(_:using:completion:)`, Alamofire's form with a ``RequestAdapterState``;
/// - `adapt(_:using:) async throws`, the async form (the one the session calls).
///
/// An adapter ported from Alamofire 4 may implement 4.x's `adapt(_:) throws` instead; the
/// others reach it when it is the only one.
///
/// Call the completion exactly once. Calling an adapter through a form it does not implement
/// goes through the others: `adapt(_:for:completion:)` of an adapter that implements only the
/// async form gets a state with a new `requestID`. An adapter that implements none of them traps
/// when first used (Alamofire's would not compile); a ``RequestInterceptor`` that implements none
/// leaves the request unchanged, as in Alamofire.
public protocol RequestAdapter: Sendable {
    /// Calls `completion` with the request to send in place of `urlRequest`, or with an error,
    /// which fails the request with ``BluebonnetError/requestAdaptationFailed(error:)`` (the
    /// retriers are then asked).
    func adapt(
        _ urlRequest: HTTPRequest, for session: Session,
        completion: @escaping @Sendable (_ result: Result<HTTPRequest, any Error>) -> Void)

    /// `adapt(_:for:completion:)` with the request's identity; the default calls that.
    func adapt(
        _ urlRequest: HTTPRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (_ result: Result<HTTPRequest, any Error>) -> Void)

    /// The async form: returns the request to send, or throws; the default calls
    /// `adapt(_:using:completion:)`.
    func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest

    /// Alamofire 4's form: returns the request to send, or throws. The session uses it only for
    /// an adapter that implements none of the other three; the default throws
    /// ``SynchronousAdaptationUnavailable``. New code implements an Alamofire 5 form.
    func adapt(_ urlRequest: HTTPRequest) throws -> HTTPRequest
}

extension RequestAdapter {
    /// Runs `adapt(_:using:)` (async) in a new task, with a state that has a new `requestID`.
    public func adapt(
        _ urlRequest: HTTPRequest, for session: Session,
        completion: @escaping @Sendable (_ result: Result<HTTPRequest, any Error>) -> Void
    ) {
        let key = InterceptorForms.Key(Self.self, .adaptForSession)
        guard InterceptorForms.enter(key) else { return completion(noAdaptationForm(urlRequest)) }
        let outer = InterceptorForms.entered
        InterceptorForms.$entered.withValue(outer.union([key])) {
            Task {
                let state = RequestAdapterState(requestID: UUID(), session: session)
                let result: Result<HTTPRequest, any Error>
                do { result = .success(try await self.adapt(urlRequest, using: state)) } catch { result = .failure(error) }
                InterceptorForms.$entered.withValue(outer) { completion(result) }
            }
        }
    }

    /// Calls `adapt(_:for:completion:)` with the state's session, as Alamofire does.
    public func adapt(
        _ urlRequest: HTTPRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (_ result: Result<HTTPRequest, any Error>) -> Void
    ) {
        let key = InterceptorForms.Key(Self.self, .adaptUsingState)
        guard InterceptorForms.enter(key) else { return completion(noAdaptationForm(urlRequest)) }
        InterceptorForms.$entered.withValue(InterceptorForms.entered.union([key])) {
            adapt(urlRequest, for: state.session, completion: completion)
        }
    }

    /// Calls `adapt(_:using:completion:)` and waits for its completion.
    public func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        let key = InterceptorForms.Key(Self.self, .adaptAsync)
        guard InterceptorForms.enter(key) else { return try noAdaptationForm(urlRequest).get() }
        return try await InterceptorForms.$entered.withValue(InterceptorForms.entered.union([key])) {
            try await withCheckedThrowingContinuation { continuation in
                adapt(urlRequest, using: state) { continuation.resume(with: $0) }
            }
        }
    }

    /// Alamofire 4's synchronous form, which this adapter does not implement: throws
    /// ``SynchronousAdaptationUnavailable``.
    public func adapt(_ urlRequest: HTTPRequest) throws -> HTTPRequest {
        throw SynchronousAdaptationUnavailable(adapter: "\(Self.self)")
    }

    /// The end of the defaults' round: Alamofire 4's form if the adapter implements it, else the
    /// request unchanged for an interceptor, else a trap.
    private func noAdaptationForm(_ urlRequest: HTTPRequest) -> Result<HTTPRequest, any Error> {
        do {
            return .success(try adapt(urlRequest))
        } catch is SynchronousAdaptationUnavailable {
            // Not implemented either: as below.
        } catch {
            return .failure(error)
        }
        guard self is any RequestInterceptor else {
            preconditionFailure(
                "\(Self.self) conforms to RequestAdapter but implements none of adapt(_:for:completion:), "
                    + "adapt(_:using:completion:), adapt(_:using:) async and adapt(_:)")
        }
        return .success(urlRequest)
    }
}

/// What the default of Alamofire 4's `adapt(_:)` throws: the adapter implements only
/// Alamofire 5's asynchronous forms, which a synchronous call cannot wait for.
public struct SynchronousAdaptationUnavailable: Error, CustomStringConvertible {
    /// The adapter's type.
    public let adapter: String

    /// Says which adapter and what to call instead.
    public var description: String {
        "\(adapter) adapts asynchronously: call adapt(_:for:completion:) or adapt(_:using:) async instead of adapt(_:)"
    }
}

/// The outcome of asking a retrier about a failed request: Alamofire's `RetryResult`.
public enum RetryResult: Sendable {
    /// Retry now.
    case retry
    /// Retry after this many seconds.
    case retryWithDelay(TimeInterval)
    /// Do not retry; the request fails with its error.
    case doNotRetry
    /// Do not retry; the request fails with
    /// ``BluebonnetError/requestRetryFailed(retryError:originalError:)`` holding this error.
    case doNotRetryWithError(any Error)

    /// Whether the request is retried.
    public var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }

    /// The delay before retrying, in seconds, if any.
    public var delay: TimeInterval? {
        if case let .retryWithDelay(delay) = self { return delay }
        return nil
    }

    /// The replacement error, if any.
    public var error: (any Error)? {
        if case let .doNotRetryWithError(error) = self { return error }
        return nil
    }
}

/// Decides whether a failed request is retried: Alamofire's `RequestRetrier`.
///
/// Implement one of the two forms; the other reaches it through its default:
/// - `retry(_:for:dueTo:completion:)`, Alamofire's requirement;
/// - `retry(_:for:dueTo:) async`, the async form (the one the session calls).
///
/// A retrier ported from Alamofire 4 may implement 4.x's `should(_:retry:with:completion:)`
/// instead; the others reach it when it is the only one.
///
/// The ``Request`` tells what failed: ``Request/request`` and ``Request/retryCount`` (retries so
/// far), ``Request/response`` (the failed attempt's response, if one arrived) and
/// ``Request/task``. A retrier that implements neither form traps when first used (Alamofire's
/// would not compile); a ``RequestInterceptor`` that implements neither never retries, as in
/// Alamofire.
public protocol RequestRetrier: Sendable {
    /// Calls `completion` exactly once with whether and when to retry `request`, which failed
    /// with `error`.
    func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void)

    /// The async form; the default calls `retry(_:for:dueTo:completion:)`.
    func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult

    /// Alamofire 4's form: calls `completion` once with whether to retry and after how many
    /// seconds (`true, 0` retries at once). The session uses it only for a retrier that
    /// implements neither of the other two; the default does nothing. New code implements an
    /// Alamofire 5 form.
    func should(
        _ manager: Session, retry request: Request, with error: any Error, completion: @escaping RequestRetryCompletion)
}

/// Alamofire 4's completion of ``RequestRetrier/should(_:retry:with:completion:)``: whether to
/// retry, and the delay in seconds.
public typealias RequestRetryCompletion = @Sendable (_ shouldRetry: Bool, _ timeDelay: TimeInterval) -> Void

extension RequestRetrier {
    /// Runs `retry(_:for:dueTo:)` (async) in a new task and calls `completion` with its answer.
    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        let key = InterceptorForms.Key(Self.self, .retryCompletion)
        guard InterceptorForms.enter(key) else { return answerWithAlamofireFourForm(request, session, error, completion) }
        let outer = InterceptorForms.entered
        InterceptorForms.$entered.withValue(outer.union([key])) {
            Task {
                let result = await self.retry(request, for: session, dueTo: error)
                InterceptorForms.$entered.withValue(outer) { completion(result) }
            }
        }
    }

    /// Calls `retry(_:for:dueTo:completion:)` and waits for its completion.
    public func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
        let key = InterceptorForms.Key(Self.self, .retryAsync)
        guard InterceptorForms.enter(key) else {
            return await withCheckedContinuation { continuation in
                answerWithAlamofireFourForm(request, session, error) { continuation.resume(returning: $0) }
            }
        }
        return await InterceptorForms.$entered.withValue(InterceptorForms.entered.union([key])) {
            await withCheckedContinuation { continuation in
                retry(request, for: session, dueTo: error) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Alamofire 4's form, which this retrier does not implement: marks the probe of
    /// `answerWithAlamofireFourForm` and never calls `completion`.
    public func should(
        _ manager: Session, retry request: Request, with error: any Error, completion: @escaping RequestRetryCompletion
    ) {
        if let probe = AlamofireFourRetryProbe.current, probe.retrier == ObjectIdentifier(Self.self) {
            probe.isUnimplemented.store(true, ordering: .relaxed)
        }
    }

    /// The end of the defaults' round: Alamofire 4's form if the retrier implements it, else no
    /// retry for an interceptor, else a trap.
    private func answerWithAlamofireFourForm(
        _ request: Request, _ session: Session, _ error: any Error, _ completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        let probe = AlamofireFourRetryProbe(retrier: ObjectIdentifier(Self.self))
        AlamofireFourRetryProbe.$current.withValue(probe) {
            should(session, retry: request, with: error) { shouldRetry, delay in
                completion(shouldRetry ? (delay > 0 ? .retryWithDelay(delay) : .retry) : .doNotRetry)
            }
        }
        if probe.isUnimplemented.load(ordering: .relaxed) { completion(noRetryForm()) }
    }

    private func noRetryForm() -> RetryResult {
        guard self is any RequestInterceptor else {
            preconditionFailure(
                "\(Self.self) conforms to RequestRetrier but implements none of retry(_:for:dueTo:completion:), "
                    + "retry(_:for:dueTo:) async and should(_:retry:with:completion:)")
        }
        return .doNotRetry
    }
}

/// Tells the default of ``RequestRetrier/should(_:retry:with:completion:)`` (Alamofire 4's form)
/// from a retrier's own: the default marks the probe set for its type around the call.
final class AlamofireFourRetryProbe: Sendable {
    @TaskLocal static var current: AlamofireFourRetryProbe?

    let retrier: ObjectIdentifier
    let isUnimplemented = Atomic<Bool>(false)

    init(retrier: ObjectIdentifier) { self.retrier = retrier }
}

/// Both an adapter and a retrier: Alamofire's `RequestInterceptor`. A conformer implements only
/// what it needs: without an adaptation form the request is unchanged, without a retry form it
/// is never retried.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

/// Tells the defaults of the interchangeable forms of ``RequestAdapter`` and ``RequestRetrier``
/// (and ``RedirectHandler``, ``Authenticator``) apart from a conformer that implements none: each default marks its
/// form as entered for the conforming type, for the calls it makes (a task-local value, which the
/// task a default starts inherits); meeting the mark again means the defaults went round. The
/// caller's completion is called without the mark: what it starts is a new call (a refresh whose
/// completion leads to another refresh), not the defaults going round.
enum InterceptorForms {
    enum Form: Sendable, Hashable {
        case adaptForSession, adaptUsingState, adaptAsync, retryCompletion, retryAsync, redirectCompletion, redirectAsync
        case refreshCompletion, refreshAsync
    }

    struct Key: Sendable, Hashable {
        let type: ObjectIdentifier
        let form: Form

        init<T>(_ type: T.Type, _ form: Form) {
            self.type = ObjectIdentifier(type)
            self.form = form
        }
    }

    @TaskLocal static var entered: Set<Key> = []

    /// Whether `key`'s default may run (false: it already runs further up, so no form is implemented).
    static func enter(_ key: Key) -> Bool { !entered.contains(key) }
}

/// Alamofire's closure for ``Adapter``: adapt the request and call the completion once.
public typealias AdaptHandler = @Sendable (
    _ request: HTTPRequest, _ session: Session,
    _ completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
) -> Void

/// Alamofire's closure for ``Retrier``: decide and call the completion once.
public typealias RetryHandler = @Sendable (
    _ request: Request, _ session: Session, _ error: any Error,
    _ completion: @escaping @Sendable (RetryResult) -> Void
) -> Void

/// An adapter made of a closure: Alamofire's `Adapter`.
///
/// `@unchecked Sendable`: an open class cannot be checked. Its one stored property is a `let`
/// of a `@Sendable` closure; a subclass must keep its own state `Sendable` too.
open class Adapter: RequestInterceptor, @unchecked Sendable {
    private enum Handler {
        case completion(AdaptHandler)
        case async(@Sendable (HTTPRequest, RequestAdapterState) async throws -> HTTPRequest)
    }

    private let handler: Handler

    /// An adapter that runs Alamofire's completion-style `adaptHandler`.
    /// - Warning: The request waits until the completion is called; not calling it leaves the
    ///   request waiting forever.
    public init(_ adaptHandler: @escaping AdaptHandler) { handler = .completion(adaptHandler) }

    /// An adapter that runs an async closure (a Bluebonnet addition).
    public init(_ adaptHandler: @escaping @Sendable (HTTPRequest, RequestAdapterState) async throws -> HTTPRequest) {
        handler = .async(adaptHandler)
    }

    /// Runs the closure.
    open func adapt(
        _ urlRequest: HTTPRequest, for session: Session,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, using: RequestAdapterState(requestID: UUID(), session: session), completion: completion)
    }

    /// Runs the closure.
    open func adapt(
        _ urlRequest: HTTPRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        switch handler {
        case .completion(let closure):
            closure(urlRequest, state.session, completion)
        case .async(let closure):
            Task {
                do { completion(.success(try await closure(urlRequest, state))) } catch { completion(.failure(error)) }
            }
        }
    }

    /// Runs the closure.
    open func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        switch handler {
        case .completion(let closure):
            return try await withCheckedThrowingContinuation { continuation in
                closure(urlRequest, state.session) { continuation.resume(with: $0) }
            }
        case .async(let closure):
            return try await closure(urlRequest, state)
        }
    }
}

/// A retrier made of a closure: Alamofire's `Retrier`.
///
/// `@unchecked Sendable`: an open class cannot be checked. Its one stored property is a `let`
/// of a `@Sendable` closure; a subclass must keep its own state `Sendable` too.
open class Retrier: RequestInterceptor, @unchecked Sendable {
    private enum Handler {
        case completion(RetryHandler)
        case async(@Sendable (Request, Session, any Error) async -> RetryResult)
    }

    private let handler: Handler

    /// A retrier that runs Alamofire's completion-style `retryHandler`.
    /// - Warning: The request waits until the completion is called; not calling it leaves the
    ///   request waiting forever.
    public init(_ retryHandler: @escaping RetryHandler) { handler = .completion(retryHandler) }

    /// A retrier that runs an async closure (a Bluebonnet addition).
    public init(_ retryHandler: @escaping @Sendable (Request, Session, any Error) async -> RetryResult) {
        handler = .async(retryHandler)
    }

    /// Leaves the request unchanged.
    open func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest { urlRequest }

    /// Runs the closure.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        switch handler {
        case .completion(let closure):
            closure(request, session, error, completion)
        case .async(let closure):
            Task { completion(await closure(request, session, error)) }
        }
    }

    /// The answer of ``retry(_:for:dueTo:completion:)``, awaited: the session calls this form and
    /// it asks the completion form, so a subclass that overrides either one decides (retrying is
    /// the failure path, so the bridge costs nothing on a request that succeeds).
    open func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
        await withCheckedContinuation { continuation in
            retry(request, for: session, dueTo: error) { continuation.resume(returning: $0) }
        }
    }
}

/// Several adapters and retriers as one interceptor: Alamofire's `Interceptor`.
///
/// Adapters run in order, each on the previous one's output; the first that fails stops the
/// chain. Retriers are asked in order until one answers `.retry`, `.retryWithDelay` or
/// `.doNotRetryWithError`, which is the answer; when all say `.doNotRetry`, so does this.
///
/// `@unchecked Sendable`: an open class cannot be checked. Its stored properties are `let`s of
/// `Sendable` types; a subclass must keep its own state `Sendable` too.
open class Interceptor: RequestInterceptor, @unchecked Sendable {
    /// The adapters, in the order they run.
    public let adapters: [any RequestAdapter]
    /// The retriers, in the order they are asked.
    public let retriers: [any RequestRetrier]

    /// An interceptor from Alamofire's completion-style closures.
    public init(adaptHandler: @escaping AdaptHandler, retryHandler: @escaping RetryHandler) {
        adapters = [Adapter(adaptHandler)]
        retriers = [Retrier(retryHandler)]
    }

    /// An interceptor from one adapter and one retrier.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        adapters = [adapter]
        retriers = [retrier]
    }

    /// An interceptor from adapters, retriers and interceptors; each interceptor is appended to
    /// both lists, after the plain adapters and retriers.
    public init(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    /// Runs the adapters' `adapt(_:for:completion:)` in order.
    open func adapt(
        _ urlRequest: HTTPRequest, for session: Session,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        Interceptor.chainAdapt(urlRequest, adapters: adapters[...], completion: completion) { adapter, request, next in
            adapter.adapt(request, for: session, completion: next)
        }
    }

    /// Runs the adapters' `adapt(_:using:completion:)` in order.
    open func adapt(
        _ urlRequest: HTTPRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void
    ) {
        Interceptor.chainAdapt(urlRequest, adapters: adapters[...], completion: completion) { adapter, request, next in
            adapter.adapt(request, using: state, completion: next)
        }
    }

    private static func chainAdapt(
        _ urlRequest: HTTPRequest, adapters: ArraySlice<any RequestAdapter>,
        completion: @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void,
        step: @escaping @Sendable (any RequestAdapter, HTTPRequest, @escaping @Sendable (Result<HTTPRequest, any Error>) -> Void) -> Void
    ) {
        guard let adapter = adapters.first else { return completion(.success(urlRequest)) }
        let rest = adapters.dropFirst()
        step(adapter, urlRequest) { result in
            switch result {
            case .success(let adapted): chainAdapt(adapted, adapters: rest, completion: completion, step: step)
            case .failure: completion(result)
            }
        }
    }

    /// Runs the adapters' async `adapt(_:using:)` in order.
    open func adapt(_ urlRequest: HTTPRequest, using state: RequestAdapterState) async throws -> HTTPRequest {
        var request = urlRequest
        for adapter in adapters { request = try await adapter.adapt(request, using: state) }
        return request
    }

    /// Asks the retriers' `retry(_:for:dueTo:completion:)` in order until one decides.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        Interceptor.chainRetry(request, for: session, dueTo: error, retriers: retriers[...], completion: completion)
    }

    private static func chainRetry(
        _ request: Request, for session: Session, dueTo error: any Error, retriers: ArraySlice<any RequestRetrier>,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let retrier = retriers.first else { return completion(.doNotRetry) }
        let rest = retriers.dropFirst()
        retrier.retry(request, for: session, dueTo: error) { result in
            switch result {
            case .retry, .retryWithDelay, .doNotRetryWithError: completion(result)
            case .doNotRetry: chainRetry(request, for: session, dueTo: error, retriers: rest, completion: completion)
            }
        }
    }

    /// The answer of ``retry(_:for:dueTo:completion:)`` (the retriers asked in order until one
    /// decides), awaited: the session calls this form and it asks the completion form, so a
    /// subclass that overrides either one decides.
    open func retry(_ request: Request, for session: Session, dueTo error: any Error) async -> RetryResult {
        await withCheckedContinuation { continuation in
            retry(request, for: session, dueTo: error) { continuation.resume(returning: $0) }
        }
    }
}

extension RequestAdapter where Self == Adapter {
    /// An ``Adapter`` that runs `closure`.
    public static func adapter(using closure: @escaping AdaptHandler) -> Adapter { Adapter(closure) }
}

extension RequestRetrier where Self == Retrier {
    /// A ``Retrier`` that runs `closure`.
    public static func retrier(using closure: @escaping RetryHandler) -> Retrier { Retrier(closure) }
}

extension RequestInterceptor where Self == Interceptor {
    /// An ``Interceptor`` from an adapting and a retrying closure.
    public static func interceptor(adapter: @escaping AdaptHandler, retrier: @escaping RetryHandler) -> Interceptor {
        Interceptor(adaptHandler: adapter, retryHandler: retrier)
    }

    /// An ``Interceptor`` from one adapter and one retrier.
    public static func interceptor(adapter: any RequestAdapter, retrier: any RequestRetrier) -> Interceptor {
        Interceptor(adapter: adapter, retrier: retrier)
    }

    /// An ``Interceptor`` from adapters, retriers and interceptors.
    public static func interceptor(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) -> Interceptor {
        Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors)
    }
}

import FoundationEssentials

/// Decides, per redirect, whether and how to follow it: Alamofire's `RedirectHandler`.
///
/// The session first applies its ``RedirectPolicy`` (limit, no `https`→`http`, method rewrite,
/// removal of sensitive fields across origins), then asks the handler with the request the policy
/// built. Answer that request to follow, a changed one to follow it instead, or nil to stop and
/// deliver the 3xx response as is.
///
/// Whatever the handler answers, the policy's safety rules still hold: a request whose URL is not
/// `http`/`https`, or that goes from `https` to `http` without
/// ``RedirectPolicy/allowsInsecureRedirects``, fails the request with
/// ``BluebonnetError/redirectRejected(reason:)``; and once the chain has left the first origin
/// (the policy's request or the handler's URL), the ``RedirectPolicy/sensitiveHeaderNames``
/// (`Authorization`, `Cookie`, `Proxy-Authorization`) are removed from the handler's request too,
/// so a handler cannot send credentials to another origin.
///
/// Implement one of the two forms; the other reaches it through its default:
/// `task(_:willBeRedirectedTo:for:completion:)` (Alamofire's requirement) or
/// `task(_:willBeRedirectedTo:for:) async` (the one the session calls). A handler that implements
/// neither traps when first used.
public protocol RedirectHandler: Sendable {
    /// Calls `completion` exactly once with the request to send next, or nil to deliver
    /// `response` without following it.
    ///
    /// - Parameters:
    ///   - task: The task of the attempt; its ``URLSessionTask/currentRequest`` is the request
    ///     that received the redirect.
    ///   - request: The next request as the ``RedirectPolicy`` built it.
    ///   - response: The 3xx response.
    ///   - completion: Takes the answer.
    func task(
        _ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse,
        completion: @escaping (HTTPRequest?) -> Void)

    /// The async form: the request to send next, or nil; the default calls
    /// `task(_:willBeRedirectedTo:for:completion:)`.
    func task(_ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse) async
        -> HTTPRequest?
}

extension RedirectHandler {
    /// Runs `task(_:willBeRedirectedTo:for:)` (async) in a new task and calls `completion` with
    /// its answer.
    public func task(
        _ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse,
        completion: @escaping (HTTPRequest?) -> Void
    ) {
        let key = InterceptorForms.Key(Self.self, .redirectCompletion)
        guard InterceptorForms.enter(key) else { noRedirectForm() }
        // The completion is the caller's and not `@Sendable` (Alamofire's shape); it is called
        // once, from the task below, and the caller waits for it.
        nonisolated(unsafe) let completion = completion
        let outer = InterceptorForms.entered
        InterceptorForms.$entered.withValue(outer.union([key])) {
            Task {
                let answer = await self.task(task, willBeRedirectedTo: request, for: response)
                InterceptorForms.$entered.withValue(outer) { completion(answer) }
            }
        }
    }

    /// Calls `task(_:willBeRedirectedTo:for:completion:)` and waits for its completion.
    public func task(_ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse) async
        -> HTTPRequest?
    {
        let key = InterceptorForms.Key(Self.self, .redirectAsync)
        guard InterceptorForms.enter(key) else { noRedirectForm() }
        return await InterceptorForms.$entered.withValue(InterceptorForms.entered.union([key])) {
            await withCheckedContinuation { continuation in
                self.task(task, willBeRedirectedTo: request, for: response) { continuation.resume(returning: $0) }
            }
        }
    }

    private func noRedirectForm() -> Never {
        preconditionFailure(
            "\(Self.self) conforms to RedirectHandler but implements neither "
                + "task(_:willBeRedirectedTo:for:completion:) nor task(_:willBeRedirectedTo:for:) async")
    }
}

/// The default ``RedirectHandler``: follow, do not follow, or modify (Alamofire's `Redirector`).
public struct Redirector: RedirectHandler {
    /// What the redirector does.
    public enum Behavior: Sendable {
        /// Follow with the request the policy built.
        case follow
        /// Deliver the 3xx response as is.
        case doNotFollow
        /// Follow with the closure's request, or deliver the response when it returns nil. The
        /// closure gets the task, the request the policy built and the 3xx response.
        case modify(@Sendable (_ task: URLSessionTask, _ request: HTTPRequest, _ response: HTTPResponse) -> HTTPRequest?)
    }

    /// A redirector that follows every redirect the policy allows.
    public static let follow = Redirector(behavior: .follow)
    /// A redirector that follows none.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// The behaviour.
    public let behavior: Behavior

    /// Creates a redirector.
    public init(behavior: Behavior) { self.behavior = behavior }

    /// Applies ``behavior`` and calls `completion` at once.
    public func task(
        _ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse,
        completion: @escaping (HTTPRequest?) -> Void
    ) {
        completion(answer(task, request, response))
    }

    /// Applies ``behavior``.
    public func task(_ task: URLSessionTask, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse) async
        -> HTTPRequest?
    {
        answer(task, request, response)
    }

    private func answer(_ task: URLSessionTask, _ request: HTTPRequest, _ response: HTTPResponse) -> HTTPRequest? {
        switch behavior {
        case .follow: request
        case .doNotFollow: nil
        case let .modify(closure): closure(task, request, response)
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// A ``Redirector`` that follows every redirect the policy allows.
    public static var follow: Redirector { Redirector(behavior: .follow) }
    /// A ``Redirector`` that follows none.
    public static var doNotFollow: Redirector { Redirector(behavior: .doNotFollow) }
    /// A ``Redirector`` that follows with the closure's request, or stops when it returns nil.
    public static func modify(
        using closure: @escaping @Sendable (URLSessionTask, HTTPRequest, HTTPResponse) -> HTTPRequest?
    ) -> Redirector {
        Redirector(behavior: .modify(closure))
    }
}

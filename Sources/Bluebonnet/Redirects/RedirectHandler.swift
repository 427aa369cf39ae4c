import FoundationEssentials

/// Decides, per redirect, whether and how to follow it: Alamofire's `RedirectHandler`.
///
/// The Session first applies its ``RedirectPolicy`` (limit, downgrade, method rewrite, removal
/// of sensitive fields), then asks the handler with the request the policy built. Return that
/// request to follow, a changed one to follow it instead, or nil to stop and deliver the 3xx
/// response as is.
public protocol RedirectHandler: Sendable {
    /// The request to send next, or nil to deliver `response` without following it.
    ///
    /// - Parameters:
    ///   - originalRequest: The request that received the redirect (this hop's request).
    ///   - request: The next request as the ``RedirectPolicy`` built it.
    ///   - response: The 3xx response.
    func task(_ originalRequest: HTTPRequest, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse) async
        -> HTTPRequest?
}

/// The default ``RedirectHandler``: follow, do not follow, or modify.
public struct Redirector: RedirectHandler {
    /// What the redirector does.
    public enum Behavior: Sendable {
        /// Follow with the request the policy built.
        case follow
        /// Deliver the 3xx response as is.
        case doNotFollow
        /// Follow with the closure's request, or deliver the response when it returns nil.
        case modify(@Sendable (HTTPRequest, HTTPResponse) async -> HTTPRequest?)
    }

    /// A redirector that follows every redirect the policy allows.
    public static let follow = Redirector(behavior: .follow)
    /// A redirector that follows none.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// The behaviour.
    public let behavior: Behavior

    /// Creates a redirector.
    public init(behavior: Behavior) { self.behavior = behavior }

    /// Applies ``behavior``.
    public func task(_ originalRequest: HTTPRequest, willBeRedirectedTo request: HTTPRequest, for response: HTTPResponse) async
        -> HTTPRequest?
    {
        switch behavior {
        case .follow: return request
        case .doNotFollow: return nil
        case let .modify(closure): return await closure(request, response)
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// A ``Redirector`` that follows every redirect the policy allows.
    public static var follow: Redirector { Redirector(behavior: .follow) }
    /// A ``Redirector`` that follows none.
    public static var doNotFollow: Redirector { Redirector(behavior: .doNotFollow) }
    /// A ``Redirector`` that follows with the closure's request, or stops when it returns nil.
    public static func modify(using closure: @escaping @Sendable (HTTPRequest, HTTPResponse) async -> HTTPRequest?) -> Redirector {
        Redirector(behavior: .modify(closure))
    }
}

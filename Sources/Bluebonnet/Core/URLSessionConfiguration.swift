import BluebonnetCookies
import BluebonnetCore
import FoundationEssentials
import Synchronization

/// Foundation's `URLSessionConfiguration`, as Alamofire code uses it, over Bluebonnet's
/// ``SessionConfiguration``.
///
/// ```swift
/// let configuration = URLSessionConfiguration.af.default
/// configuration.timeoutIntervalForRequest = 30
/// let session = Session(configuration: configuration)
/// ```
///
/// A mutable reference type, as Foundation's; `Session(configuration:…)` takes a snapshot of it (as URLSession copies its configuration), so later changes do not
/// reach a session already made. It is `Sendable`: every property is read and written under a
/// lock, so one instance may be shared between tasks.
///
/// The properties with a meaning on Bluebonnet's stack are here; everything else Bluebonnet
/// offers (TLS, proxies, limits, telemetry) is in ``sessionConfiguration``. Not here:
/// `waitsForConnectivity`, `isDiscretionary` and
/// the other Apple-platform networking flags, which have no meaning on Linux; `identifier` (no
/// background sessions). ``allowsCellularAccess`` is kept so configuration code ports, and
/// changes nothing (see there).
///
/// On Linux, Foundation declares `URLSessionConfiguration` only as an unavailable stub
/// (FoundationNetworking has the real one); in a file that imports Foundation and Bluebonnet,
/// this type is the one used.
public final class URLSessionConfiguration: Sendable, CustomStringConvertible {
    private struct State {
        /// The configuration's own headers (`httpAdditionalHeaders`).
        var headers: HTTPHeaders
        /// Everything else.
        var configuration: SessionConfiguration
        /// `allowsCellularAccess`, kept for the caller to read back.
        var allowsCellularAccess = true
    }

    private let state: Mutex<State>

    private init(headers: HTTPHeaders, configuration: SessionConfiguration) {
        state = Mutex(State(headers: headers, configuration: configuration))
    }

    /// A new default configuration: no additional headers (a session still sends Bluebonnet's
    /// `Accept-Encoding`, `Accept-Language` and `User-Agent`, as URLSession adds its own), a
    /// 60 s ``timeoutIntervalForRequest``, a 7-day ``timeoutIntervalForResource``, and
    /// ``SessionConfiguration``'s defaults for the rest. A new instance on each call.
    public static var `default`: URLSessionConfiguration {
        var configuration = SessionConfiguration()
        configuration.timeouts.request = .seconds(defaultResourceTimeout)
        return URLSessionConfiguration(headers: [], configuration: configuration)
    }

    /// The same as ``default``: Bluebonnet keeps no cache, cookies or credentials on disk in any
    /// configuration (a ``httpCookieStorage`` is in memory unless you save it), so there is
    /// nothing an ephemeral one leaves out. A new instance on each call.
    public static var ephemeral: URLSessionConfiguration { .default }

    /// Foundation's default for ``timeoutIntervalForResource``: 7 days.
    static let defaultResourceTimeout: TimeInterval = 7 * 24 * 60 * 60

    /// A configuration holding `configuration` (its headers become ``headers``).
    public convenience init(_ configuration: SessionConfiguration) {
        self.init(headers: configuration.headers, configuration: configuration)
    }

    /// Alamofire's `headers`: the headers added to every request that does not set them
    /// (Foundation's ``httpAdditionalHeaders`` as `HTTPHeaders`). Default empty; `.af.default`
    /// sets `HTTPHeaders.default`.
    public var headers: HTTPHeaders {
        get { state.withLock { $0.headers } }
        set { state.withLock { $0.headers = newValue } }
    }

    /// Whether connections may use a cellular interface (Foundation's default: true).
    ///
    /// Kept and read back so Alamofire configuration code ports unchanged; it changes nothing.
    /// Linux tells Bluebonnet nothing about which interface is cellular (the kernel routes by
    /// address), so there is nothing to avoid: a host whose only route is a cellular modem still
    /// uses it. Choose the route with the system's routing table instead.
    public var allowsCellularAccess: Bool {
        get { state.withLock { $0.allowsCellularAccess } }
        set { state.withLock { $0.allowsCellularAccess = newValue } }
    }

    /// Foundation's spelling of ``headers``: nil when there are none. Setting it keeps the entries
    /// whose key and value are strings (as URLSession does; others are ignored).
    public var httpAdditionalHeaders: [AnyHashable: Any]? {
        get {
            let headers = self.headers
            guard !headers.isEmpty else { return nil }
            var dictionary: [AnyHashable: Any] = [:]
            for header in headers { dictionary[header.name] = header.value }
            return dictionary
        }
        set {
            var headers = HTTPHeaders()
            for (key, value) in newValue ?? [:] {
                guard let name = key.base as? String, let value = value as? String else { continue }
                headers.update(name: name, value: value)
            }
            self.headers = headers
        }
    }

    /// The longest wait for the next bytes of a response or for sent bytes to drain, in seconds
    /// (``RequestTimeouts/idleRead`` and ``RequestTimeouts/idleWrite``). Default 60; zero, a
    /// negative value or infinity: no limit.
    public var timeoutIntervalForRequest: TimeInterval {
        get { state.withLock { $0.configuration.timeouts.idleRead }.map(Self.seconds) ?? .infinity }
        set {
            let duration = Self.duration(newValue)
            state.withLock { s in
                s.configuration.timeouts.idleRead = duration
                s.configuration.timeouts.idleWrite = duration
            }
        }
    }

    /// The longest a task (one attempt, its redirects included) may take, in seconds
    /// (``RequestTimeouts/request``). Default 7 days, as in Foundation; zero, a negative value or
    /// infinity: no limit.
    public var timeoutIntervalForResource: TimeInterval {
        get { state.withLock { $0.configuration.timeouts.request }.map(Self.seconds) ?? .infinity }
        set {
            let duration = Self.duration(newValue)
            state.withLock { $0.configuration.timeouts.request = duration }
        }
    }

    /// The most connections kept open to one origin
    /// (``SessionConfiguration/maximumConnectionsPerHost``). Default 8 (Foundation's is 6).
    public var httpMaximumConnectionsPerHost: Int {
        get { state.withLock { $0.configuration.maximumConnectionsPerHost } }
        set { state.withLock { $0.configuration.maximumConnectionsPerHost = newValue } }
    }

    /// The HTTP cache (``SessionConfiguration/urlCache``). Default nil: no cache (Foundation's
    /// default configuration uses `URLCache.shared`; Bluebonnet has no shared cache, see
    /// ``URLCache``).
    public var urlCache: URLCache? {
        get { state.withLock { $0.configuration.urlCache } }
        set { state.withLock { $0.configuration.urlCache = newValue } }
    }

    /// How requests use the cache unless they set their own ``HTTPRequest/cachePolicy``
    /// (``SessionConfiguration/requestCachePolicy``). Default ``HTTPRequest/CachePolicy/useProtocolCachePolicy``.
    public var requestCachePolicy: URLRequest.CachePolicy {
        get { state.withLock { $0.configuration.requestCachePolicy } }
        set { state.withLock { $0.configuration.requestCachePolicy = newValue } }
    }

    /// The cookie store of the sessions made from this configuration
    /// (``SessionConfiguration/cookieStorage``). Default nil: no cookies are sent or stored.
    ///
    /// Foundation's default configuration has `HTTPCookieStorage.shared` here; Bluebonnet's has
    /// none, because a server-side client shared by many users would otherwise send one user's
    /// session cookie with another's request. Set a store of the session's own to turn cookies on.
    public var httpCookieStorage: HTTPCookieStorage? {
        get { state.withLock { $0.configuration.cookieStorage } }
        set { state.withLock { $0.configuration.cookieStorage = newValue } }
    }

    /// Whether requests carry the ``httpCookieStorage``'s cookies
    /// (``SessionConfiguration/shouldSetCookies``). Default true, as in Foundation.
    public var httpShouldSetCookies: Bool {
        get { state.withLock { $0.configuration.shouldSetCookies } }
        set { state.withLock { $0.configuration.shouldSetCookies = newValue } }
    }

    /// Which cookies responses may store (``SessionConfiguration/cookieAcceptPolicy``). Default
    /// `.onlyFromMainDocumentDomain`, as in Foundation.
    public var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { state.withLock { $0.configuration.cookieAcceptPolicy } }
        set { state.withLock { $0.configuration.cookieAcceptPolicy = newValue } }
    }

    /// The whole Bluebonnet configuration a session made from this one gets: its headers are
    /// `HTTPHeaders.default` updated with ``headers``. Setting it replaces every property (its
    /// headers become ``headers``).
    public var sessionConfiguration: SessionConfiguration {
        get {
            state.withLock { s in
                var configuration = s.configuration
                var headers = HTTPHeaders.default
                for header in s.headers { headers.update(header) }
                configuration.headers = headers
                return configuration
            }
        }
        set { state.withLock { $0 = State(headers: newValue.headers, configuration: newValue, allowsCellularAccess: $0.allowsCellularAccess) } }
    }

    /// The headers and timeouts, for logs.
    public var description: String {
        "URLSessionConfiguration(headers: \(headers), timeoutIntervalForRequest: \(timeoutIntervalForRequest), "
            + "timeoutIntervalForResource: \(timeoutIntervalForResource), "
            + "httpMaximumConnectionsPerHost: \(httpMaximumConnectionsPerHost))"
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }

    private static func duration(_ seconds: TimeInterval) -> Duration? {
        Duration.positiveSeconds(seconds)
    }
}

/// The namespace of Alamofire's `.af` extension points: `URLSessionConfiguration.af.default`.
public struct AlamofireExtension<ExtendedType> {
    /// The value (or type) being extended.
    public private(set) var type: ExtendedType

    /// An extension point for `type`.
    public init(_ type: ExtendedType) { self.type = type }
}

extension AlamofireExtension: Sendable where ExtendedType: Sendable {}

/// A type with Alamofire's `af` extension points.
public protocol AlamofireExtended {
    /// The type being extended.
    associatedtype ExtendedType

    /// The static extension point.
    static var af: AlamofireExtension<ExtendedType>.Type { get set }
    /// The instance extension point.
    var af: AlamofireExtension<ExtendedType> { get set }
}

extension AlamofireExtended {
    /// The static extension point (setting it does nothing, as in Alamofire).
    public static var af: AlamofireExtension<Self>.Type {
        get { AlamofireExtension<Self>.self }
        set {}
    }

    /// The instance extension point (setting it does nothing, as in Alamofire).
    public var af: AlamofireExtension<Self> {
        get { AlamofireExtension(self) }
        set {}
    }
}

extension URLSessionConfiguration: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// Alamofire's default configuration: ``URLSessionConfiguration/default`` with
    /// ``URLSessionConfiguration/headers`` set to `HTTPHeaders.default` (`Accept-Encoding` with
    /// the codings Bluebonnet decodes, `Accept-Language`, `User-Agent`). A new instance on each call.
    public static var `default`: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        return configuration
    }

    /// ``URLSessionConfiguration/ephemeral`` with `HTTPHeaders.default`, as `URLSessionConfiguration.af.default`.
    public static var ephemeral: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.headers = .default
        return configuration
    }
}

// The module users import. It re-exports the shared HTTP value types (`HTTPMethod`, `HTTPHeaders`,
// `HTTPHeader`, `HTTPVersion`, `ByteBuffer`) so `import Bluebonnet` is all a caller writes.
//
// No public declaration here (or anywhere in the module) is named `Bluebonnet`: the module name
// must stay free to qualify names (`Bluebonnet.HTTPHeaders`, `Bluebonnet.request(…)`).
@_exported import BluebonnetCore
// The cache's stores, options and rules are part of the API (`URLCache(storage:)`, `CacheOptions`).
@_exported import BluebonnetCache
// `HTTPCookie` and `HTTPCookieStorage` (the cookie store a session may be given).
@_exported import BluebonnetCookies

/// Facts about the library itself: Alamofire's `AFInfo`.
public enum BluebonnetInfo {
    /// The library version (semantic versioning), as sent in the default `User-Agent`
    /// (`Bluebonnet/0.1.0 (…)`).
    public static let version = "0.1.0"
}

/// The shared default session, ``Session/default``: Alamofire's `AF`, so `AF.request(…)` works
/// as it does with Alamofire.
public let AF = Session.default

import FoundationEssentials
import Synchronization

/// A cookie store, as Foundation's `HTTPCookieStorage`, following RFC 6265bis: give it to a
/// session (`SessionConfiguration`'s `cookieStorage`, or `URLSessionConfiguration`'s
/// `httpCookieStorage`) and it keeps the cookies responses set and sends them back.
///
/// What it enforces (RFC 6265bis §5.7, §5.8.3):
/// - `Domain` must domain-match the host that set the cookie, and may not be a public suffix
///   (`com`, `co.uk`, `github.io`: Mozilla's Public Suffix List is built in) unless it is the host
///   itself; an IP address gets host-only cookies.
/// - `Secure` cookies are set and sent over `https` only, and `http` cannot overwrite them;
///   `__Secure-` and `__Host-` names keep their promises.
/// - Expiry: `Max-Age` over `Expires`, each capped at 400 days; expired cookies are never sent
///   and `Max-Age=0` deletes.
/// - Limits: 50 cookies per domain and 3000 in all (``init(perDomainLimit:totalLimit:)``); past
///   them, expired cookies go first, then the least recently used.
///
/// It is `Sendable`: one `Mutex` guards the whole store, taken once per call (a request takes it
/// once before each hop and once after each response), and no callback runs under it.
///
/// Persistence is explicit: ``write(toFile:)`` saves every cookie in curl's Netscape cookie-jar
/// format, atomically; ``loadCookies(fromFile:)`` reads one back (DocC article
/// `NetscapeCookieFile`). Session cookies are saved too (with expiry 0), as curl does; drop them
/// first with ``removeSessionCookies()`` if they must not outlive the process.
///
/// Differences from Foundation: not an `NSObject` subclass (a final class); no
/// `sortedCookies(using:)` (no `NSSortDescriptor` without Foundation); ``shared`` is an in-memory
/// store that no session uses unless configured to (see `SessionConfiguration`'s
/// `cookieStorage`), and nothing is persisted unless you save it.
public final class HTTPCookieStorage: Sendable {
    private struct State {
        var jar: CookieJar
        var acceptPolicy = HTTPCookie.AcceptPolicy.always
    }

    private let state: Mutex<State>
    private let now: @Sendable () -> Date

    /// A process-wide store, in memory, made on first use. No session uses it by default.
    public static let shared = HTTPCookieStorage()

    /// An empty store with the default limits: 50 cookies per domain, 3000 in all.
    public convenience init() {
        self.init(perDomainLimit: 50, totalLimit: 3000)
    }

    /// An empty store keeping at most `perDomainLimit` cookies with one domain and `totalLimit`
    /// in all (RFC 6265bis §6.1 asks for at least 50 and 3000).
    public convenience init(perDomainLimit: Int, totalLimit: Int) {
        self.init(limits: CookieJar.Limits(perDomain: perDomainLimit, total: totalLimit), now: { Date() })
    }

    /// A store reading the time from `now` (tests pass a manual clock).
    package init(limits: CookieJar.Limits = CookieJar.Limits(), publicSuffixes: PublicSuffixList = .shipped,
                 now: @escaping @Sendable () -> Date) {
        state = Mutex(State(jar: CookieJar(limits: limits, publicSuffixes: publicSuffixes)))
        self.now = now
    }

    /// Which cookies ``setCookie(_:)`` and ``setCookies(_:for:mainDocumentURL:)`` accept (and
    /// sessions store). Default ``HTTPCookie/AcceptPolicy/always``.
    public var cookieAcceptPolicy: HTTPCookie.AcceptPolicy {
        get { state.withLock { $0.acceptPolicy } }
        set { state.withLock { $0.acceptPolicy = newValue } }
    }

    /// Every cookie that has not expired, oldest first; nil when there is none (as Foundation).
    public var cookies: [HTTPCookie]? {
        let time = now()
        let records = state.withLock { $0.jar.allCookies(now: time) }
        return records.isEmpty ? nil : records.map(HTTPCookie.init(record:))
    }

    /// The cookies a request to `url` would send, in `Cookie` order (longest path first, then
    /// oldest; RFC 6265bis §5.8.3); nil when `url` has no host. `Secure` cookies only for `https`.
    public func cookies(for url: URL) -> [HTTPCookie]? {
        guard let target = CookieURL(url) else { return nil }
        let time = now()
        return state.withLock { $0.jar.cookies(for: target, now: time) }.map(HTTPCookie.init(record:))
    }

    /// Stores `cookie`, replacing the one with the same name, domain and path; an expired
    /// cookie deletes that one instead. Ignored under ``HTTPCookie/AcceptPolicy/never``. The
    /// cookie is taken as it is: the domain rules apply where cookies come from a URL
    /// (``setCookies(_:for:mainDocumentURL:)``, responses).
    public func setCookie(_ cookie: HTTPCookie) {
        let time = now()
        state.withLock { state in
            guard state.acceptPolicy != .never else { return }
            state.jar.insert(cookie.record, now: time)
        }
    }

    /// Stores those of `cookies` that `url` may set: a host-only cookie for `url`'s host, a
    /// domain cookie whose domain `url`'s host domain-matches and is not a public suffix (RFC
    /// 6265bis §5.7 steps 9–10), a `Secure` one only when `url` is `https`.
    ///
    /// Nothing under ``HTTPCookie/AcceptPolicy/never``; under
    /// ``HTTPCookie/AcceptPolicy/onlyFromMainDocumentDomain``, nothing unless one of `url`'s host
    /// and `mainDocumentURL`'s host is the other or a subdomain of it (with a nil
    /// `mainDocumentURL`, no such check).
    public func setCookies(_ cookies: [HTTPCookie], for url: URL?, mainDocumentURL: URL?) {
        guard let url, let target = CookieURL(url) else { return }
        let main = mainDocumentURL.flatMap(CookieURL.init)
        let time = now()
        state.withLock { state in
            guard Self.accepts(state.acceptPolicy, target: target, mainDocument: main, given: mainDocumentURL != nil) else { return }
            for cookie in cookies where Self.mayBeSet(cookie.record, by: target, publicSuffixes: state.jar.publicSuffixes) {
                state.jar.insert(cookie.record, now: time)
            }
        }
    }

    /// Removes the cookie with `cookie`'s name, domain and path.
    public func deleteCookie(_ cookie: HTTPCookie) {
        _ = state.withLock { $0.jar.remove(cookie.record) }
    }

    /// Removes the cookies stored at or after `date`.
    public func removeCookies(since date: Date) {
        state.withLock { $0.jar.removeCookies(since: date) }
    }

    /// Removes every cookie.
    public func removeAllCookies() {
        state.withLock { $0.jar.removeAll() }
    }

    /// Removes the session cookies (those without an expiry), as a browser does when it quits.
    public func removeSessionCookies() {
        let time = now()
        state.withLock { state in
            for record in state.jar.allCookies(now: time) where record.expires == nil { state.jar.remove(record) }
        }
    }

    // MARK: Session hooks

    /// The `Cookie` field value for a request to `url` now, or nil when no cookie matches (or
    /// `url` has no host). Called by the session before each hop.
    package func cookieHeader(for url: URL) -> String? {
        guard let target = CookieURL(url) else { return nil }
        let time = now()
        return state.withLock { $0.jar.cookieHeader(for: target, now: time) }
    }

    /// Stores the `Set-Cookie` field values `lines` of a response to `url` (RFC 6265bis §5.6,
    /// §5.7), when `policy` (the session's) and the store's own policy accept them. Called by
    /// the session after each response, redirects and 401s included.
    package func store(setCookieFields lines: [String], from url: URL, policy: HTTPCookie.AcceptPolicy = .always) {
        guard !lines.isEmpty, policy != .never, let target = CookieURL(url) else { return }
        let time = now()
        state.withLock { state in
            guard state.acceptPolicy != .never else { return }
            for line in lines { state.jar.store(setCookie: line, from: target, now: time) }
        }
    }

    /// Reads or changes the jar under the lock (the Netscape format and tests).
    package func withJar<T>(_ body: (inout CookieJar, Date) throws -> T) rethrows -> T {
        let time = now()
        return try state.withLock { try body(&$0.jar, time) }
    }

    private static func accepts(_ policy: HTTPCookie.AcceptPolicy, target: CookieURL, mainDocument: CookieURL?, given: Bool) -> Bool {
        switch policy {
        case .always: return true
        case .never: return false
        case .onlyFromMainDocumentDomain:
            guard given else { return true }
            guard let mainDocument else { return false }
            return CookieMatch.domain(target.host, matches: mainDocument.host, hostIsIPAddress: target.isIPAddress)
                || CookieMatch.domain(mainDocument.host, matches: target.host, hostIsIPAddress: mainDocument.isIPAddress)
        }
    }

    private static func mayBeSet(_ record: CookieRecord, by target: CookieURL, publicSuffixes: PublicSuffixList) -> Bool {
        if record.secure && !target.isSecure { return false }
        if record.hostOnly { return record.domain == target.host }
        if publicSuffixes.isPublicSuffix(record.domain) { return false }
        return CookieMatch.domain(target.host, matches: record.domain, hostIsIPAddress: target.isIPAddress)
    }
}

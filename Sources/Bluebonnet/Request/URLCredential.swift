/// A user name and password to answer an authentication challenge with: Foundation's
/// `URLCredential`, as ``Request/authenticate(with:)`` takes it.
///
/// Linux's Foundation declares `URLCredential` only as an unavailable stub (the real one is in
/// FoundationNetworking, which Bluebonnet does not link), so this one wins in a file that imports
/// both Foundation and Bluebonnet.
///
/// A value, not a class. Only password credentials exist: there is no client-certificate or
/// server-trust credential (client certificates are part of the session's TLS configuration).
/// Bluebonnet keeps no credential storage, so ``persistence`` is carried but changes nothing:
/// a credential lives on the request it is given to, whatever its persistence.
public struct URLCredential: Sendable, Hashable {
    /// How long a credential is kept: Foundation's `URLCredential.Persistence`, with its case
    /// names and raw values. Carried, not acted on (see ``URLCredential``).
    public enum Persistence: UInt, Sendable, Hashable {
        /// Not kept: used for this request only.
        case none = 0
        /// Kept for the session (Alamofire's default).
        case forSession = 1
        /// Kept in the keychain (Apple platforms).
        case permanent = 2
        /// Kept in the keychain and synchronised across devices (Apple platforms).
        case synchronizable = 3
    }

    /// The user name.
    public let user: String?
    /// The password.
    public let password: String?
    /// How long the credential is meant to be kept (see ``Persistence``).
    public let persistence: Persistence

    /// Whether the credential has a password (always, for one made with
    /// ``init(user:password:persistence:)``).
    public var hasPassword: Bool { password != nil }

    /// A user-name-and-password credential: Foundation's `URLCredential(user:password:persistence:)`.
    public init(user: String, password: String, persistence: Persistence) {
        self.user = user
        self.password = password
        self.persistence = persistence
    }
}

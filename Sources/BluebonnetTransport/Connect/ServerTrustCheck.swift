import BluebonnetTLS

/// The server-trust evaluation a TLS connection runs after its handshake and before it is handed
/// over (so before any request byte is written).
///
/// `policy` names the evaluation for the pool: it is part of the endpoint's ``PoolKey``, so a
/// connection evaluated under one policy never serves a request under another. Two checks are
/// equal when their policies are; `evaluate` is not compared.
public struct ServerTrustCheck: Hashable, Sendable, CustomStringConvertible {
    /// What the pool compares.
    public let policy: PoolKey.Identity
    /// Accepts the server by returning, or rejects it by throwing; runs on the connection's event
    /// loop, once per new connection (also for a resumed TLS session).
    public let evaluate: @Sendable (ServerTrust) throws -> Void

    /// A check under `policy`.
    public init(policy: PoolKey.Identity, evaluate: @escaping @Sendable (ServerTrust) throws -> Void) {
        self.policy = policy
        self.evaluate = evaluate
    }

    /// Equal when the policies are.
    public static func == (lhs: ServerTrustCheck, rhs: ServerTrustCheck) -> Bool { lhs.policy == rhs.policy }

    /// Hashes the policy.
    public func hash(into hasher: inout Hasher) { hasher.combine(policy) }

    /// The policy.
    public var description: String { "ServerTrustCheck(\(policy))" }
}

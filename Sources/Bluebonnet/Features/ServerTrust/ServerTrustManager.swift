import BluebonnetTLS
import BluebonnetTransport

/// Which evaluator judges the server of each host (Alamofire's class, same shape).
///
/// Hosts match exactly (ASCII case-insensitively, as host names compare). For wildcards or other
/// rules, subclass and override ``serverTrustEvaluator(forHost:)``.
///
/// A host with an evaluator is judged by it alone: the TLS handshake then runs without OpenSSL's
/// own verification, and the evaluator decides (``DefaultTrustEvaluator`` restores it, a pinning
/// evaluator adds to it unless told not to). A host without one gets the session's
/// `TLSConfiguration` verification, unless ``allHostsMustBeEvaluated`` is set.
///
/// `@unchecked Sendable` because the class is open (subclasses may add state; they must keep it
/// `Sendable`); its own stored properties are immutable.
open class ServerTrustManager: @unchecked Sendable {
    /// Whether a host without an evaluator is refused (`.noRequiredEvaluator(host:)`) instead of
    /// getting the default verification. Default true.
    public let allHostsMustBeEvaluated: Bool
    /// The evaluators by host name.
    public let evaluators: [String: any ServerTrustEvaluating]

    /// A manager over `evaluators`.
    ///
    /// - Parameters:
    ///   - allHostsMustBeEvaluated: refuse hosts that have no evaluator. Default true.
    ///   - evaluators: evaluators by host name (no wildcards; see the type's discussion).
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        var lowered: [String: any ServerTrustEvaluating] = [:]
        for (host, evaluator) in evaluators { lowered[host.lowercased()] = evaluator }
        self.evaluators = lowered
    }

    /// The evaluator for `host`, or nil to use the default verification.
    ///
    /// Called once per new TLS connection, before connecting. Override it for your own matching
    /// (wildcards, suffixes); the default looks `host` up in ``evaluators``.
    ///
    /// - Throws: ``BluebonnetError/serverTrustEvaluationFailed(reason:)`` with
    ///   `.noRequiredEvaluator(host:)` when ``allHostsMustBeEvaluated`` is set and there is none.
    open func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        if let evaluator = evaluators[host.lowercased()] { return evaluator }
        if allHostsMustBeEvaluated {
            throw BluebonnetError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host: host))
        }
        return nil
    }
}

extension ServerTrustManager {
    /// `endpoint` with the evaluation for its origin, when it has TLS to the origin and an
    /// evaluator: OpenSSL's verification is then off for the handshake and the evaluator decides
    /// (against the same trust roots), and the server is asked to staple an OCSP response. The check's policy (this manager, the host, the evaluator)
    /// enters the pool key.
    func applying(to endpoint: Endpoint) throws(BluebonnetError) -> Endpoint {
        guard var tls = endpoint.tls, let host = endpoint.effectiveServerName else { return endpoint }
        let found: (any ServerTrustEvaluating)?
        do {
            found = try serverTrustEvaluator(forHost: host)
        } catch let error as BluebonnetError {
            throw error
        } catch {
            throw .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: error))
        }
        guard let evaluator = found else { return endpoint }
        tls.certificateVerification = .none
        // For RevocationTrustEvaluator (or any evaluator reading trust.stapledOCSPResponse).
        tls.requestsCertificateStatus = true
        var evaluated = endpoint
        evaluated.tls = tls
        let policy = TrustPolicy(manager: ObjectIdentifier(self), host: host.lowercased(), evaluator: evaluator)
        evaluated.serverTrustCheck = ServerTrustCheck(policy: PoolKey.Identity(policy)) { trust in
            try evaluator.evaluate(trust, forHost: host)
        }
        return evaluated
    }
}

/// What makes two evaluations the same policy for the pool: the manager, the host and the
/// evaluator (the same instance for a class, the same type for a value).
private struct TrustPolicy: Hashable, Sendable, CustomStringConvertible {
    let manager: ObjectIdentifier
    let host: String
    let evaluator: any ServerTrustEvaluating
    /// The evaluator's instance for a class, its type for a value (a metatype's identifier): no
    /// string to build per request, since the pool hashes and compares keys on every lease. The
    /// policy holds the evaluator, so its address is not reused while a key names it.
    private let evaluatorIdentity: ObjectIdentifier

    init(manager: ObjectIdentifier, host: String, evaluator: any ServerTrustEvaluating) {
        self.manager = manager
        self.host = host
        self.evaluator = evaluator
        let type = Swift.type(of: evaluator)
        if type is AnyClass {
            evaluatorIdentity = ObjectIdentifier(evaluator as AnyObject)
        } else {
            evaluatorIdentity = ObjectIdentifier(type)
        }
    }

    static func == (lhs: TrustPolicy, rhs: TrustPolicy) -> Bool {
        lhs.manager == rhs.manager && lhs.host == rhs.host && lhs.evaluatorIdentity == rhs.evaluatorIdentity
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(manager)
        hasher.combine(host)
        hasher.combine(evaluatorIdentity)
    }

    var description: String { "trust(\(host): \(Swift.type(of: evaluator)))" }
}

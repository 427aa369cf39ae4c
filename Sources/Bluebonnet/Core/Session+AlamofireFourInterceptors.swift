import FoundationEssentials
import Synchronization

// Alamofire 4's settable `SessionManager.adapter` and `SessionManager.retrier`. Alamofire 5 (and
// Bluebonnet) take an interceptor when the session is made; these keep 4.x code working: each
// request takes the values set when it is made.

/// The values of ``Session/adapter`` and ``Session/retrier``, and the interceptor made of them.
struct FourEraInterceptors: Sendable {
    private(set) var adapter: (any RequestAdapter)?
    private(set) var retrier: (any RequestRetrier)?
    /// Both as one interceptor, made when either is set (nil when neither is), so a request
    /// made meanwhile allocates nothing for them unless it has its own interceptor too.
    private(set) var combined: (any RequestInterceptor)?

    mutating func setAdapter(_ adapter: (any RequestAdapter)?) {
        self.adapter = adapter
        combine()
    }

    mutating func setRetrier(_ retrier: (any RequestRetrier)?) {
        self.retrier = retrier
        combine()
    }

    private mutating func combine() {
        combined =
            adapter == nil && retrier == nil
            ? nil : Interceptor(adapters: adapter.map { [$0] } ?? [], retriers: retrier.map { [$0] } ?? [])
    }
}

extension Session {
    /// Alamofire 4's `SessionManager.adapter`: adapts every request made after it is set, after
    /// the session's ``interceptor`` and before the request's own.
    ///
    /// Thread-safe. Setting it does not change requests already made: they keep the adapter
    /// they were made with, and use it again on each retry (differs from Alamofire 4, where a
    /// retry was adapted by the manager's adapter of the moment). Alamofire 5 has no such property:
    /// give the session an interceptor when it is made, `Session(interceptor:)`, or a request
    /// one, `request(_:interceptor:)`. An adapter written for Alamofire 4 (its `adapt(_:) throws`)
    /// works as it is.
    @available(*, deprecated, message: "Pass the adapter in Session(interceptor: Interceptor(adapters: [...])) or per request")
    public var adapter: (any RequestAdapter)? {
        get { fourEraInterceptors.withLock { $0.adapter } }
        set {
            fourEraInterceptors.withLock {
                $0.setAdapter(newValue)
                hasFourEraInterceptors.store($0.combined != nil, ordering: .releasing)
            }
        }
    }

    /// Alamofire 4's `SessionManager.retrier`: asked about every failed request made after it is
    /// set, after the session's ``interceptor`` and before the request's own.
    ///
    /// Thread-safe. Differs from Alamofire 4, where a new retrier also judged requests already
    /// running: here a request keeps the retrier it was made with. Alamofire 5 has no such
    /// property: give the session an interceptor when it is made, or a request one.
    @available(*, deprecated, message: "Pass the retrier in Session(interceptor: Interceptor(retriers: [...])) or per request")
    public var retrier: (any RequestRetrier)? {
        get { fourEraInterceptors.withLock { $0.retrier } }
        set {
            fourEraInterceptors.withLock {
                $0.setRetrier(newValue)
                hasFourEraInterceptors.store($0.combined != nil, ordering: .releasing)
            }
        }
    }

    /// The interceptor of a request made now with `interceptor`: that one, preceded by the
    /// ``adapter`` and ``retrier`` when either is set. Without them, one atomic load: no lock,
    /// no allocation.
    func interceptor(madeAfterFourEraSettings interceptor: (any RequestInterceptor)?) -> (any RequestInterceptor)? {
        guard hasFourEraInterceptors.load(ordering: .acquiring) else { return interceptor }
        guard let fourEra = fourEraInterceptors.withLock({ $0.combined }) else { return interceptor }
        guard let interceptor else { return fourEra }
        return Interceptor(interceptors: [fourEra, interceptor])
    }
}

import BluebonnetCore
import BluebonnetTransport

typealias CID = PoolStateMachine.ConnectionID
typealias RID = PoolStateMachine.RequestID
typealias Action = PoolStateMachine.Action

/// A fixed origin for relative test instants.
let origin = MonotonicTime.now

/// `origin` plus `seconds`.
func at(_ seconds: Double) -> MonotonicTime { origin.advanced(by: .milliseconds(Int64(seconds * 1000))) }

/// A deadline `seconds` after `origin`.
func deadline(_ seconds: Double) -> Deadline { Deadline(at(seconds)) }

let keyA = PoolKey(scheme: .http, host: "a.example", port: 80)
let keyB = PoolKey(scheme: .https, host: "b.example", port: 443)
let keyC = PoolKey(scheme: .http, host: "c.example", port: 8080)
/// keyA's origin through a proxy: never shares connections with keyA.
let keyAViaProxy = PoolKey(scheme: .http, host: "a.example", port: 80, proxy: .init(host: "proxy.example", port: 3128))

func c(_ n: Int) -> CID { CID(n) }
func r(_ n: UInt64) -> RID { RID(n) }

struct ConnectError: Error, CustomStringConvertible {
    var description: String { "connection refused" }
}

extension PoolStateMachine.Actions {
    /// The actions without timer bookkeeping, for tests about everything else.
    var withoutTimers: [Action] {
        filter {
            switch $0 {
            case .scheduleTimer, .cancelTimer: false
            default: true
            }
        }
    }
}

extension PoolStateMachine {
    /// Leases `request` for `key` and establishes the connection the pool creates for it; returns
    /// the connection.
    mutating func leaseNew(_ request: RID, _ key: PoolKey, now: MonotonicTime = at(0)) -> CID {
        let actions = leaseRequested(id: request, key: key, deadline: nil, now: now)
        guard case .createConnection(let id, _) = actions.withoutTimers.first else {
            fatalError("expected createConnection, got \(actions)")
        }
        let established = connectionEstablished(connectionID: id, now: now)
        precondition(established.withoutTimers == [.lease(id, to: request)], "\(established)")
        return id
    }
}

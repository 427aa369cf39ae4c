import BluebonnetCore

extension PoolStateMachine {
    /// Identifies one connection; allocated by the state machine in ``Action/createConnection(_:_:)``.
    public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The number, increasing from 0 in creation order.
        public let rawValue: Int

        /// A connection ID with `rawValue` (the state machine allocates them; tests may build them).
        public init(_ rawValue: Int) { self.rawValue = rawValue }

        /// Orders by creation.
        public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `C<n>`.
        public var description: String { "C\(rawValue)" }
    }

    /// Identifies one lease request; chosen by the caller, unique among requests not yet finished.
    public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
        /// The caller's number.
        public let rawValue: UInt64

        /// A request ID with `rawValue`.
        public init(_ rawValue: UInt64) { self.rawValue = rawValue }

        /// Orders by number.
        public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `R<n>`.
        public var description: String { "R\(rawValue)" }
    }

    /// A side effect the shell performs after it has released its lock.
    public enum Action: Equatable, Sendable, CustomStringConvertible {
        /// Start connecting to `key` (resolve, connect, TLS). Report the outcome with
        /// `PoolStateMachine/connectionEstablished(connectionID:now:)` or
        /// `PoolStateMachine/connectionFailed(connectionID:error:now:)`, exactly once.
        case createConnection(ConnectionID, PoolKey)
        /// Hand the connection to the request (resume its continuation). The request owns it until
        /// it reports `PoolStateMachine/connectionReleased(connectionID:reusable:now:)`.
        case lease(ConnectionID, to: RequestID)
        /// Fail the request's lease with the error. The request is finished.
        case failLease(RequestID, PoolError)
        /// Close the connection's socket. The state machine has already forgotten it; events that
        /// race with the close for this ID are ignored.
        case closeConnection(ConnectionID)
        /// Arm the pool's single timer for the deadline, replacing any armed one; call
        /// `PoolStateMachine/timerFired(now:)` when it fires.
        case scheduleTimer(Deadline)
        /// Disarm the pool's timer.
        case cancelTimer
        /// Shutdown is complete: nothing is open, connecting, leased or waiting.
        case shutdownComplete

        /// The action, for logs and test failures.
        public var description: String {
            switch self {
            case .createConnection(let id, let key): "createConnection(\(id), \(key))"
            case .lease(let id, let request): "lease(\(id), to: \(request))"
            case .failLease(let request, let error): "failLease(\(request), \(error.kind))"
            case .closeConnection(let id): "closeConnection(\(id))"
            case .scheduleTimer(let deadline): "scheduleTimer(\(deadline.time.nanoseconds))"
            case .cancelTimer: "cancelTimer"
            case .shutdownComplete: "shutdownComplete"
            }
        }
    }

    /// The actions one event produced, in the order the shell should perform them.
    ///
    /// Holds up to two actions inline, so the common events (a lease, a connection to create plus
    /// a timer) allocate nothing; more spill into an array.
    public struct Actions: RandomAccessCollection, Equatable, Sendable, CustomStringConvertible {
        private var first: Action?
        private var second: Action?
        private var rest: [Action] = []

        /// No actions.
        public init() {}

        /// The actions of `array`, in order.
        public init(_ array: [Action]) {
            for action in array { append(action) }
        }

        /// Adds an action at the end.
        public mutating func append(_ action: Action) {
            if first == nil {
                first = action
            } else if second == nil {
                second = action
            } else {
                rest.append(action)
            }
        }

        /// `0`.
        public var startIndex: Int { 0 }
        /// The number of actions.
        public var endIndex: Int { first == nil ? 0 : second == nil ? 1 : 2 + rest.count }

        /// The action at `position`.
        public subscript(position: Int) -> Action {
            switch position {
            case 0: first!
            case 1: second!
            default: rest[position - 2]
            }
        }

        /// Equal actions in the same order.
        public static func == (lhs: Actions, rhs: Actions) -> Bool { lhs.elementsEqual(rhs) }

        /// The actions, as a list.
        public var description: String { "[" + map(\.description).joined(separator: ", ") + "]" }
    }
}

extension RouteMonitor {
    /// The monitor's logic without I/O: dump links, then addresses, then routes (the kernel runs one
    /// dump at a time per socket), applying every message to a `RoutingTable`, events included; once
    /// the three dumps are done, publish the table, then again after each datagram that changed it.
    ///
    /// States: `links` → `addresses` → `routes` → `synchronized`; `overrun()` (the kernel dropped
    /// events: `ENOBUFS`) goes back to `links` with an empty table, at once when synchronized, or
    /// when the dump under way ends (the kernel refuses a second dump on a socket with `EBUSY`).
    struct StateMachine: Sendable {
        enum Phase: Equatable, Sendable {
            case links, addresses, routes, synchronized
        }

        /// What the shell does after a datagram.
        struct Actions: Equatable, Sendable {
            /// A dump request to send.
            var send: [UInt8]?
            /// The table to publish (synchronized and changed, or just synchronized).
            var publish: RoutingTable?
            /// The kernel refused a dump request: stop, with this `errno`.
            var failure: Int32?
        }

        private(set) var table = RoutingTable()
        private(set) var phase: Phase = .links
        private var sequence: UInt32 = 0
        /// An overrun happened during a dump: start over when it ends.
        private var resyncPending = false

        /// The first dump request (links).
        mutating func start() -> [UInt8] {
            table = RoutingTable()
            phase = .links
            resyncPending = false
            return nextRequest(RouteNetlink.getLink)
        }

        /// The kernel dropped messages (`ENOBUFS`): forget the table and dump everything again.
        /// Nothing is published until the new dumps are done; a status that did not change is then
        /// published again, and the consumer (which reports changes only) drops it.
        /// Returns the request to send now, or nil when a dump is under way (the new one follows it).
        mutating func overrun() -> [UInt8]? {
            guard phase == .synchronized else {
                resyncPending = true
                return nil
            }
            return start()
        }

        /// Applies one datagram's messages.
        mutating func received(_ messages: [RouteNetlinkMessage]) -> Actions {
            var actions = Actions()
            var changed = false
            for message in messages {
                switch message {
                case .done(let done) where done == sequence && phase != .synchronized && resyncPending:
                    actions.send = start()
                case .done(let done) where done == sequence && phase != .synchronized:
                    switch phase {
                    case .links:
                        phase = .addresses
                        actions.send = nextRequest(RouteNetlink.getAddress)
                    case .addresses:
                        phase = .routes
                        actions.send = nextRequest(RouteNetlink.getRoute)
                    case .routes, .synchronized:
                        phase = .synchronized
                        actions.publish = table
                    }
                case .error(let failed, let code) where failed == sequence && code != 0 && phase != .synchronized:
                    actions.failure = code
                    return actions
                default:
                    if table.apply(message) { changed = true }
                }
            }
            if phase == .synchronized, changed || actions.publish != nil { actions.publish = table }
            return actions
        }

        private mutating func nextRequest(_ type: UInt16) -> [UInt8] {
            sequence &+= 1
            return RouteNetlink.dumpRequest(type: type, sequence: sequence)
        }
    }
}

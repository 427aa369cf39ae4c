import BluebonnetPosix
import Dispatch
import Synchronization

/// Watches whether the network, or one host, is reachable: Alamofire's `NetworkReachabilityManager`,
/// on Linux over rtnetlink (the kernel's link, address and route events) instead of
/// `SCNetworkReachability`.
///
/// Reachable means what the routing table says, without sending a packet:
/// - ``init()`` (and ``default``): a default route (IPv4 or IPv6) in the main table that leaves
///   through an interface that is up and running, is not loopback, and has a usable address.
///   Loopback alone is not reachable.
/// - ``init(host:)``: the host's addresses, once resolved, have such a route (the longest
///   matching prefix of the main table). A host that resolves to loopback is reachable when the
///   loopback interface is up, and one of this machine's own addresses when its interface is up.
///
/// While listening, the manager keeps a copy of the kernel's tables from one netlink socket that a
/// shared event loop thread reads (no polling): the links, addresses and routes are dumped when
/// listening starts, then followed. Only changes of ``status`` are reported (debounced).
///
/// Differences from Alamofire, because Linux has no such thing:
/// - ``NetworkReachabilityStatus/ConnectionType/cellular`` is never reported: Linux has no reliable
///   mark of a cellular link (modems show up as `wwan*` by a udev naming convention, or `ppp*`,
///   and both names are also used otherwise), so every reachable status is
///   ``NetworkReachabilityStatus/ConnectionType/ethernetOrWiFi``.
/// - There are no `flags` (`SCNetworkReachabilityFlags`).
/// - ``init(host:)`` resolves the host when listening starts, not before: creating the manager makes
///   no lookup. While not listening, ``status`` answers from one dump of the routing table for
///   ``init()`` and numeric hosts, and ``NetworkReachabilityStatus/unknown`` for a host name
///   (a lookup there would be a network request nobody asked for).
/// - Policy routing rules (`ip rule`) are not read: the main table decides.
///
/// Bluebonnet adds ``statusUpdates()`` (an `AsyncStream`), ``waitUntilReachable(timeout:)`` and
/// ``ReachabilityRetrier``, which holds retries until the network is back.
///
/// `@unchecked Sendable`: an open class (as in Alamofire) cannot be checked; its mutable state is in
/// one `Mutex`, and its other stored properties are `let`s of `Sendable` types.
open class NetworkReachabilityManager: @unchecked Sendable {
    /// Whether the network is reachable, and how.
    public enum NetworkReachabilityStatus: Equatable, Sendable {
        /// Not known yet: not listening, or listening and the first dump or the host's lookup is not
        /// done.
        case unknown
        /// The network (or host) is not reachable.
        case notReachable
        /// The network (or host) is reachable over this kind of connection.
        case reachable(ConnectionType)

        /// The kind of connection a reachable network uses.
        public enum ConnectionType: Sendable {
            /// Ethernet or Wi-Fi: on Linux, every connection.
            case ethernetOrWiFi
            /// Cellular: never reported on Linux (see ``NetworkReachabilityManager``).
            case cellular
        }
    }

    /// A closure called with each new status.
    public typealias Listener = @Sendable (NetworkReachabilityStatus) -> Void

    /// A manager for the network at large (``init()``).
    public static let `default` = NetworkReachabilityManager()

    /// Whether the network is reachable now (``status`` is `.reachable`).
    open var isReachable: Bool { isReachableOnCellular || isReachableOnEthernetOrWiFi }

    /// Whether the network is reachable over cellular: always false on Linux.
    open var isReachableOnCellular: Bool { status == .reachable(.cellular) }

    /// Whether the network is reachable over Ethernet or Wi-Fi (on Linux: whether it is reachable).
    open var isReachableOnEthernetOrWiFi: Bool { status == .reachable(.ethernetOrWiFi) }

    /// The queue on which the manager computes statuses; listeners are called on their own queue.
    public let reachabilityQueue = DispatchQueue(label: "org.bluebonnet.reachabilityQueue")

    /// The current status. While listening, the last status computed from the kernel's events;
    /// otherwise computed now from one dump of the routing table (a few system calls, no network
    /// traffic) for ``init()`` and numeric hosts, and `.unknown` for a host name.
    open var status: NetworkReachabilityStatus {
        if let current = state.withLock({ $0.monitor != nil ? $0.status : nil }) { return current }
        let destinations: [IPAddressBytes]?
        switch target {
        case .network: destinations = nil
        case .host(let host):
            guard let numeric = SocketAddress(ipAddress: host, port: 0).flatMap(IPAddressBytes.init) else { return .unknown }
            destinations = [numeric]
        }
        guard let table = try? RouteMonitor.snapshot(networkNamespacePath: networkNamespacePath) else { return .unknown }
        return Self.computeStatus(table: table, target: target, destinations: destinations)
    }

    /// What a manager watches.
    package enum Target: Sendable, Equatable {
        /// The network at large (a default route).
        case network
        /// One host, by name or numeric address.
        case host(String)
    }

    private struct State {
        var monitor: RouteMonitor?
        var generation: UInt64 = 0
        var listener: Listener?
        var listenerQueue: DispatchQueue?
        var streams: [UInt64: AsyncStream<NetworkReachabilityStatus>.Continuation] = [:]
        var nextStreamID: UInt64 = 0
        var status: NetworkReachabilityStatus = .unknown
        var table: RoutingTable?
        var destinations: [IPAddressBytes]?
        var resolving = false
    }

    let target: Target
    private let networkNamespacePath: String?
    private let state = Mutex(State())

    /// A manager for `host`: a name or a numeric address, without a scheme (`example.com`,
    /// `10.0.0.1`, `::1`). Nil when `host` is empty or holds a scheme (`://`). No lookup is made
    /// until listening starts.
    public convenience init?(host: String) {
        guard !host.isEmpty, !host.contains("://"), !host.contains("/") else { return nil }
        self.init(target: .host(host), networkNamespacePath: nil)
    }

    /// A manager for the network at large: reachable when a working default route exists (Alamofire
    /// watches the address `0.0.0.0`). Never nil on Linux.
    public convenience init?() {
        self.init(target: .network, networkNamespacePath: nil)
    }

    /// A manager that watches the network namespace at `networkNamespacePath` (`/run/netns/<name>`)
    /// instead of the process's; for tests (entering a namespace needs `CAP_SYS_ADMIN`).
    package init(target: Target, networkNamespacePath: String?) {
        self.target = target
        self.networkNamespacePath = networkNamespacePath
    }

    deinit {
        stopListening()
    }

    // MARK: Listening

    /// Starts listening for status changes; `listener` is called on `queue` with the first status
    /// once the kernel's tables are read (and, for a host, its addresses resolved), then with each
    /// change. Replaces (and stops) an earlier listener.
    ///
    /// - Parameters:
    ///   - queue: Where `listener` runs; `.main` by default, as in Alamofire.
    ///   - listener: Called with each new status.
    /// - Returns: Whether listening started: false when the netlink socket cannot be opened.
    /// - Warning: `.main` only runs its work when something drains the main queue (an async `main`,
    ///   `dispatchMain()` or a run loop); a server that does neither should pass its own queue.
    @preconcurrency
    @discardableResult
    open func startListening(
        onQueue queue: DispatchQueue = .main, onUpdatePerforming listener: @escaping Listener
    ) -> Bool {
        stopListening()
        state.withLock {
            $0.listener = listener
            $0.listenerQueue = queue
        }
        return startMonitorIfNeeded()
    }

    /// Stops listening: removes the listener, finishes every ``statusUpdates()`` stream and closes
    /// the netlink socket. ``status`` then answers from a fresh dump again.
    open func stopListening() {
        let (monitor, streams) = state.withLock { state in
            let result = (state.monitor, Array(state.streams.values))
            state = State(generation: state.generation &+ 1)
            return result
        }
        monitor?.stop()
        for stream in streams { stream.finish() }
    }

    /// The statuses as an `AsyncStream`: the current one at once, then each change. Listening starts
    /// with the first stream (``status`` is `.unknown` until the tables are read) and stops when the
    /// last stream ends and no listener is set. A stream ends when its task is cancelled, when
    /// ``stopListening()`` is called, or (at once) when the netlink socket cannot be opened.
    /// A Bluebonnet addition, the async form of ``startListening(onQueue:onUpdatePerforming:)``.
    public func statusUpdates() -> AsyncStream<NetworkReachabilityStatus> {
        let (stream, continuation) = AsyncStream<NetworkReachabilityStatus>.makeStream(bufferingPolicy: .unbounded)
        let id = state.withLock { state in
            let id = state.nextStreamID
            state.nextStreamID &+= 1
            state.streams[id] = continuation
            continuation.yield(state.monitor != nil ? state.status : .unknown)
            return id
        }
        continuation.onTermination = { [weak self] _ in self?.removeStream(id) }
        if !startMonitorIfNeeded() { continuation.finish() }
        return stream
    }

    /// Waits until the status is `.reachable`, at most `timeout`; returns whether it is. Returns at
    /// once when it already is. Listens meanwhile (see ``statusUpdates()``). A Bluebonnet addition.
    public func waitUntilReachable(timeout: Duration) async -> Bool {
        let updates = statusUpdates()
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await status in updates {
                    if case .reachable = status { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// How many ``statusUpdates()`` streams are open (for tests).
    var streamCount: Int { state.withLock { $0.streams.count } }

    // MARK: Following the kernel

    private func removeStream(_ id: UInt64) {
        let monitor = state.withLock { state -> RouteMonitor? in
            guard state.streams.removeValue(forKey: id) != nil else { return nil }
            guard state.streams.isEmpty, state.listener == nil, let monitor = state.monitor else { return nil }
            state = State(generation: state.generation &+ 1)
            return monitor
        }
        monitor?.stop()
    }

    /// Opens the monitor unless it runs; false when it cannot be opened.
    private func startMonitorIfNeeded() -> Bool {
        let generation: UInt64? = state.withLock { state in
            guard state.monitor == nil else { return nil }
            return state.generation
        }
        guard let generation else { return true }
        guard let loop = Self.eventLoop else { return false }
        let monitor: RouteMonitor
        do {
            monitor = try RouteMonitor(eventLoop: loop, networkNamespacePath: networkNamespacePath) { [weak self] event in
                self?.monitorReported(event, generation: generation)
            }
        } catch {
            return false
        }
        let kept = state.withLock { state -> Bool in
            guard state.generation == generation, state.monitor == nil else { return false }
            state.monitor = monitor
            return true
        }
        if !kept { monitor.stop() }
        return true
    }

    private func monitorReported(_ event: RouteMonitor.Event, generation: UInt64) {
        switch event {
        case .updated(let table):
            let lookUp: String? = state.withLock { state in
                guard state.generation == generation else { return nil }
                state.table = table
                guard case .host(let host) = target, state.destinations?.isEmpty ?? true, !state.resolving else { return nil }
                state.resolving = true
                return host
            }
            if let lookUp { resolve(lookUp, generation: generation) }
            publish(generation: generation)
        case .failed:
            // The socket broke: nothing more will be known. Say so, and stop.
            let streams = state.withLock { state -> [AsyncStream<NetworkReachabilityStatus>.Continuation] in
                guard state.generation == generation else { return [] }
                state.monitor = nil
                return Array(state.streams.values)
            }
            notify(.unknown, generation: generation)
            for stream in streams { stream.finish() }
        }
    }

    /// Resolves the host (when listening starts, and again after a failed lookup when the tables
    /// change), then publishes.
    private func resolve(_ host: String, generation: UInt64) {
        Task { [weak self] in
            let addresses = (try? await Resolver().resolve(host: host, port: 0)) ?? []
            guard let self else { return }
            self.state.withLock { state in
                guard state.generation == generation else { return }
                state.resolving = false
                state.destinations = addresses.compactMap(IPAddressBytes.init)
            }
            self.publish(generation: generation)
        }
    }

    /// Computes the status from what is known and reports it when it changed.
    private func publish(generation: UInt64) {
        let changed: NetworkReachabilityStatus? = state.withLock { state in
            guard state.generation == generation, let table = state.table else { return nil }
            if case .host = target, state.destinations == nil { return nil }
            let status = Self.computeStatus(table: table, target: target, destinations: state.destinations)
            guard status != state.status else { return nil }
            state.status = status
            return status
        }
        if let changed { notify(changed, generation: generation) }
    }

    private func notify(_ status: NetworkReachabilityStatus, generation: UInt64) {
        let (listener, queue, streams) = state.withLock { state in
            state.generation == generation
                ? (state.listener, state.listenerQueue, Array(state.streams.values)) : (nil, nil, [])
        }
        if let listener, let queue { queue.async { listener(status) } }
        for stream in streams { stream.yield(status) }
    }

    /// The status a table gives `target` (whose addresses are `destinations` for a host).
    static func computeStatus(table: RoutingTable, target: Target, destinations: [IPAddressBytes]?) -> NetworkReachabilityStatus {
        let reachable: Bool
        switch target {
        case .network: reachable = table.hasWorkingDefaultRoute
        case .host: reachable = (destinations ?? []).contains { table.isReachable($0) }
        }
        return reachable ? .reachable(.ethernetOrWiFi) : .notReachable
    }

    /// The loop that reads every manager's netlink socket: one thread for the process, started with
    /// the first listening manager; nil when it cannot be started.
    private static let eventLoop: EventLoop? = try? EventLoop()
}

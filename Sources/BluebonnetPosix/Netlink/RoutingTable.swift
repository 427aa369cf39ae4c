/// What the kernel says about links, addresses and routes, kept up to date from rtnetlink messages:
/// a value, fed messages with `apply(_:)`, asked whether a destination has a working route.
///
/// The questions follow what the kernel would do for an ordinary outgoing connection, simplified:
/// the main routing table only (policy routing rules are not read), the longest matching prefix
/// wins, and a route works when it is unicast and leaves through an interface that is up and
/// running, is not loopback, and has a usable address of the destination's family (for IPv6, a
/// usable non-link-local address on any such interface, since source selection may take it from
/// another one).
public struct RoutingTable: Hashable, Sendable {
    /// Links by index.
    public private(set) var links: [Int32: RouteNetlinkLink] = [:]
    /// Addresses (IPv4 and IPv6).
    public private(set) var addresses: Set<RouteNetlinkAddress> = []
    /// Routes of every table, by identity.
    private var routes: [RouteKey: RouteNetlinkRoute] = [:]

    /// An empty table.
    public init() {}

    /// Every route known, of every table.
    public var allRoutes: [RouteNetlinkRoute] { Array(routes.values) }

    /// Applies one message; returns whether the table changed. Errors, dump ends and other types
    /// change nothing.
    @discardableResult
    public mutating func apply(_ message: RouteNetlinkMessage) -> Bool {
        switch message {
        case .newLink(let link):
            guard links[link.index] != link else { return false }
            links[link.index] = link
            return true
        case .deleteLink(let index):
            guard links.removeValue(forKey: index) != nil else { return false }
            // The kernel announces the removal of the link's addresses and routes too; drop them now
            // so that the table never points at a link it does not have.
            addresses = addresses.filter { $0.interfaceIndex != index }
            routes = routes.filter { !$0.value.outputInterfaces.contains(index) }
            return true
        case .newAddress(let address):
            // An update of flags (DAD finished) replaces the earlier entry for the same address.
            let earlier = addresses.first { $0.interfaceIndex == address.interfaceIndex && $0.address == address.address }
            guard earlier != address else { return false }
            if let earlier { addresses.remove(earlier) }
            addresses.insert(address)
            return true
        case .deleteAddress(let address):
            let count = addresses.count
            addresses = addresses.filter { !($0.interfaceIndex == address.interfaceIndex && $0.address == address.address) }
            return addresses.count != count
        case .newRoute(let route):
            guard routes[route.key] != route else { return false }
            routes[route.key] = route
            return true
        case .deleteRoute(let route):
            return routes.removeValue(forKey: route.key) != nil
        case .done, .error, .other:
            return false
        }
    }

    /// Whether an ordinary destination (the internet at large) is reachable: a working default
    /// route (`0.0.0.0/0` or `::/0`) in the main table, for IPv4 or IPv6.
    public var hasWorkingDefaultRoute: Bool {
        routes.values.contains { route in
            route.table == RouteNetlink.tableMain && route.destinationLength == 0 && isWorking(route)
        }
    }

    /// Whether `destination` is reachable:
    /// - a loopback address: when a loopback interface is up;
    /// - one of this host's own addresses: when its interface is up;
    /// - otherwise: when the longest prefix of the main table that matches it has a working route.
    public func isReachable(_ destination: IPAddressBytes) -> Bool {
        if destination.isLoopback {
            return links.values.contains { $0.isLoopback && $0.isUp }
        }
        if let own = addresses.first(where: { $0.address == destination }) {
            return links[own.interfaceIndex]?.isUp == true
        }
        var longest: Int = -1
        var working = false
        for route in routes.values where route.table == RouteNetlink.tableMain && route.family == destination.family {
            guard destination.matches(prefix: route.destination, length: route.destinationLength) else { continue }
            let length = Int(route.destinationLength)
            if length > longest {
                longest = length
                working = isWorking(route)
            } else if length == longest, !working {
                working = isWorking(route)
            }
        }
        return working
    }

    /// A unicast route through a link that is up, running, not loopback, with a usable address.
    private func isWorking(_ route: RouteNetlinkRoute) -> Bool {
        guard route.type == RouteNetlink.routeUnicast else { return false }
        return route.outputInterfaces.contains { index in
            guard let link = links[index], link.isUp, link.isRunning, !link.isLoopback else { return false }
            if route.family == RouteNetlink.familyIPv4 {
                return addresses.contains { $0.interfaceIndex == index && !$0.address.isIPv6 && $0.isUsable }
            }
            return addresses.contains { address in
                guard address.address.isIPv6, address.isUsable, !address.address.isIPv6LinkLocal,
                    let owner = links[address.interfaceIndex]
                else { return false }
                return owner.isUp && owner.isRunning && !owner.isLoopback
            }
        }
    }
}

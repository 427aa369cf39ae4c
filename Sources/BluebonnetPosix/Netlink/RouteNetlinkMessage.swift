/// One rtnetlink message (`NETLINK_ROUTE`), decoded from the kernel's bytes: a link, an address or a
/// route that appeared or went away, or the end of a dump.
///
/// Only what reachability needs is kept; other message types come back as `.other`. The layouts
/// are the kernel's (`<linux/netlink.h>`, `<linux/rtnetlink.h>`, `<linux/if_addr.h>`), in host byte
/// order, every part aligned to 4 bytes (`NLMSG_ALIGN`, `RTA_ALIGN`).
public enum RouteNetlinkMessage: Hashable, Sendable {
    /// `RTM_NEWLINK`: a link exists with these properties (new, or changed).
    case newLink(RouteNetlinkLink)
    /// `RTM_DELLINK`: the link with this index is gone.
    case deleteLink(index: Int32)
    /// `RTM_NEWADDR`: an address was added (or changed).
    case newAddress(RouteNetlinkAddress)
    /// `RTM_DELADDR`: an address was removed.
    case deleteAddress(RouteNetlinkAddress)
    /// `RTM_NEWROUTE`: a route was added (or changed).
    case newRoute(RouteNetlinkRoute)
    /// `RTM_DELROUTE`: a route was removed.
    case deleteRoute(RouteNetlinkRoute)
    /// `NLMSG_DONE`: the dump with this sequence number is complete.
    case done(sequence: UInt32)
    /// `NLMSG_ERROR`: the request with this sequence number failed with `errno` (0: an acknowledgement).
    case error(sequence: UInt32, errno: Int32)
    /// `NLMSG_OVERRUN`, `NLMSG_NOOP` or a type reachability does not use.
    case other(type: UInt16)
}

/// A network interface, from an `ifinfomsg` and its `IFLA_IFNAME` attribute.
public struct RouteNetlinkLink: Hashable, Sendable {
    /// The interface index (`ifi_index`).
    public var index: Int32
    /// The interface name (`IFLA_IFNAME`), e.g. `eth0`; empty when absent.
    public var name: String
    /// The `IFF_*` flags (`ifi_flags`).
    public var flags: UInt32

    /// A link.
    public init(index: Int32, name: String, flags: UInt32) {
        self.index = index
        self.name = name
        self.flags = flags
    }

    /// `IFF_UP`: administratively up.
    public var isUp: Bool { flags & RouteNetlink.interfaceUp != 0 }
    /// `IFF_RUNNING`: operationally up (carrier, or a link that has no carrier to lose).
    public var isRunning: Bool { flags & RouteNetlink.interfaceRunning != 0 }
    /// `IFF_LOOPBACK`.
    public var isLoopback: Bool { flags & RouteNetlink.interfaceLoopback != 0 }
}

/// An interface address, from an `ifaddrmsg` and its `IFA_LOCAL`/`IFA_ADDRESS` and `IFA_FLAGS`
/// attributes.
public struct RouteNetlinkAddress: Hashable, Sendable {
    /// The interface the address is on (`ifa_index`).
    public var interfaceIndex: Int32
    /// The address: 4 bytes for IPv4, 16 for IPv6 (`IFA_LOCAL`, else `IFA_ADDRESS`).
    public var address: IPAddressBytes
    /// The prefix length (`ifa_prefixlen`).
    public var prefixLength: UInt8
    /// The `IFA_F_*` flags (`IFA_FLAGS` when present, which holds all 32 bits; else `ifa_flags`).
    public var flags: UInt32
    /// The scope (`ifa_scope`): 0 universe, 253 link, 254 host.
    public var scope: UInt8

    /// An address.
    public init(interfaceIndex: Int32, address: IPAddressBytes, prefixLength: UInt8, flags: UInt32, scope: UInt8) {
        self.interfaceIndex = interfaceIndex
        self.address = address
        self.prefixLength = prefixLength
        self.flags = flags
        self.scope = scope
    }

    /// Whether the address can be used as a source: not tentative (duplicate address detection still
    /// running) and not failed DAD (`IFA_F_TENTATIVE`, `IFA_F_DADFAILED`). Deprecated addresses still work.
    public var isUsable: Bool { flags & (RouteNetlink.addressTentative | RouteNetlink.addressDADFailed) == 0 }
}

/// A route, from an `rtmsg` and its `RTA_DST`, `RTA_OIF`, `RTA_TABLE` and `RTA_MULTIPATH` attributes.
public struct RouteNetlinkRoute: Hashable, Sendable {
    /// `AF_INET` or `AF_INET6` (`rtm_family`).
    public var family: UInt8
    /// The destination prefix: zero bytes of the family's size for a default route (`RTA_DST`).
    public var destination: IPAddressBytes
    /// The destination prefix length (`rtm_dst_len`): 0 for a default route.
    public var destinationLength: UInt8
    /// The routing table (`RTA_TABLE`, else `rtm_table`): 254 main, 255 local.
    public var table: UInt32
    /// The route type (`rtm_type`): 1 unicast, 2 local, 6 blackhole, 7 unreachable, 8 prohibit…
    public var type: UInt8
    /// The output interfaces: `RTA_OIF`, or each next hop's `rtnh_ifindex` of `RTA_MULTIPATH`.
    public var outputInterfaces: [Int32]
    /// The metric (`RTA_PRIORITY`), 0 when absent; with the rest, it tells two routes apart.
    public var priority: UInt32

    /// A route.
    public init(
        family: UInt8, destination: IPAddressBytes, destinationLength: UInt8, table: UInt32, type: UInt8,
        outputInterfaces: [Int32], priority: UInt32 = 0
    ) {
        self.family = family
        self.destination = destination
        self.destinationLength = destinationLength
        self.table = table
        self.type = type
        self.outputInterfaces = outputInterfaces
        self.priority = priority
    }

    /// What identifies the route in the kernel's table: a deletion names the route by these.
    var key: RouteKey { RouteKey(family: family, destination: destination, length: destinationLength, table: table, priority: priority) }
}

/// The identity of a route in a table (family, prefix, table, metric).
struct RouteKey: Hashable, Sendable {
    var family: UInt8
    var destination: IPAddressBytes
    var length: UInt8
    var table: UInt32
    var priority: UInt32
}

/// An IPv4 (4 bytes) or IPv6 (16 bytes) address in network byte order.
public struct IPAddressBytes: Hashable, Sendable, CustomStringConvertible {
    /// The address bytes, most significant first.
    public let bytes: [UInt8]

    /// An address from 4 or 16 bytes; nil for another count.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// The address of `socketAddress`; nil for a Unix-domain address.
    public init?(_ socketAddress: SocketAddress) {
        guard let bytes = socketAddress.ipAddressBytes else { return nil }
        self.bytes = bytes
    }

    /// The all-zero address of `family` (`AF_INET` or `AF_INET6`), as a default route's destination.
    static func zero(family: UInt8) -> IPAddressBytes {
        IPAddressBytes(Array(repeating: 0, count: family == RouteNetlink.familyIPv6 ? 16 : 4))!
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { bytes.count == 16 }

    /// `AF_INET` or `AF_INET6`.
    var family: UInt8 { isIPv6 ? RouteNetlink.familyIPv6 : RouteNetlink.familyIPv4 }

    /// `127.0.0.0/8` or `::1`.
    public var isLoopback: Bool {
        isIPv6 ? bytes == Array(repeating: 0, count: 15) + [1] : bytes[0] == 127
    }

    /// IPv6 link-local (`fe80::/10`).
    var isIPv6LinkLocal: Bool { isIPv6 && bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 }

    /// Whether the first `length` bits of this address and `prefix` are equal.
    public func matches(prefix: IPAddressBytes, length: UInt8) -> Bool {
        guard prefix.bytes.count == bytes.count, Int(length) <= bytes.count * 8 else { return false }
        var remaining = Int(length)
        var index = 0
        while remaining >= 8 {
            if bytes[index] != prefix.bytes[index] { return false }
            remaining -= 8
            index += 1
        }
        guard remaining > 0 else { return true }
        let mask = UInt8(0xFF) << (8 - remaining)
        return bytes[index] & mask == prefix.bytes[index] & mask
    }

    /// Dotted quad for IPv4; eight hexadecimal groups for IPv6 (not compressed).
    public var description: String {
        if !isIPv6 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}

extension SocketAddress {
    /// The address's bytes in network order (4 or 16); nil for a Unix-domain address.
    var ipAddressBytes: [UInt8]? {
        switch storage {
        case .inet(let address, _): withUnsafeBytes(of: address) { Array($0) }
        case .inet6(let high, let low, _, _, _): withUnsafeBytes(of: Self.in6(high: high, low: low)) { Array($0) }
        case .unix: nil
        }
    }
}

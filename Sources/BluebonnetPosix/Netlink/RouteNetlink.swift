/// rtnetlink without I/O: the constants reachability uses, the decoder of the kernel's datagrams,
/// and the encoder of dump requests. The values are those of `<linux/netlink.h>`,
/// `<linux/rtnetlink.h>`, `<linux/if_addr.h>` and `<net/if.h>` (a stable kernel ABI).
public enum RouteNetlink {
    // MARK: Constants

    /// `AF_INET`.
    public static let familyIPv4: UInt8 = 2
    /// `AF_INET6`.
    public static let familyIPv6: UInt8 = 10

    /// `NLMSG_NOOP`.
    static let messageNoop: UInt16 = 1
    /// `NLMSG_ERROR`.
    static let messageError: UInt16 = 2
    /// `NLMSG_DONE`.
    static let messageDone: UInt16 = 3
    /// `RTM_NEWLINK`.
    public static let newLink: UInt16 = 16
    /// `RTM_DELLINK`.
    public static let deleteLink: UInt16 = 17
    /// `RTM_GETLINK`.
    public static let getLink: UInt16 = 18
    /// `RTM_NEWADDR`.
    public static let newAddress: UInt16 = 20
    /// `RTM_DELADDR`.
    public static let deleteAddress: UInt16 = 21
    /// `RTM_GETADDR`.
    public static let getAddress: UInt16 = 22
    /// `RTM_NEWROUTE`.
    public static let newRoute: UInt16 = 24
    /// `RTM_DELROUTE`.
    public static let deleteRoute: UInt16 = 25
    /// `RTM_GETROUTE`.
    public static let getRoute: UInt16 = 26

    /// `NLM_F_REQUEST | NLM_F_DUMP` (`NLM_F_ROOT | NLM_F_MATCH`).
    static let dumpRequestFlags: UInt16 = 0x0001 | 0x0300

    /// The multicast groups a reachability monitor joins: `RTMGRP_LINK`, `RTMGRP_IPV4_IFADDR`,
    /// `RTMGRP_IPV4_ROUTE`, `RTMGRP_IPV6_IFADDR`, `RTMGRP_IPV6_ROUTE`.
    public static let reachabilityGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

    /// `IFF_UP`.
    public static let interfaceUp: UInt32 = 0x1
    /// `IFF_LOOPBACK`.
    public static let interfaceLoopback: UInt32 = 0x8
    /// `IFF_RUNNING`.
    public static let interfaceRunning: UInt32 = 0x40
    /// `IFA_F_DADFAILED`.
    public static let addressDADFailed: UInt32 = 0x08
    /// `IFA_F_TENTATIVE`.
    public static let addressTentative: UInt32 = 0x40

    /// `RTN_UNICAST`.
    public static let routeUnicast: UInt8 = 1
    /// `RTN_LOCAL`.
    public static let routeLocal: UInt8 = 2
    /// `RT_TABLE_MAIN`.
    public static let tableMain: UInt32 = 254
    /// `RT_TABLE_LOCAL`.
    public static let tableLocal: UInt32 = 255

    // Attribute types.
    static let linkName: UInt16 = 3  // IFLA_IFNAME
    static let addressAddress: UInt16 = 1  // IFA_ADDRESS
    static let addressLocal: UInt16 = 2  // IFA_LOCAL
    static let addressFlags: UInt16 = 8  // IFA_FLAGS
    static let routeDestination: UInt16 = 1  // RTA_DST
    static let routeOutputInterface: UInt16 = 4  // RTA_OIF
    static let routePriority: UInt16 = 6  // RTA_PRIORITY
    static let routeMultipath: UInt16 = 9  // RTA_MULTIPATH
    static let routeTable: UInt16 = 15  // RTA_TABLE

    /// `sizeof(struct nlmsghdr)`.
    static let headerSize = 16
    /// `sizeof(struct ifinfomsg)`.
    static let linkHeaderSize = 16
    /// `sizeof(struct ifaddrmsg)`.
    static let addressHeaderSize = 8
    /// `sizeof(struct rtmsg)`.
    static let routeHeaderSize = 12

    // MARK: Decoding

    /// Decodes every message of one datagram read from a `NETLINK_ROUTE` socket.
    ///
    /// Messages follow each other, each aligned to 4 bytes. A message whose length field is shorter
    /// than its header or runs past the datagram, or whose family header is cut short, is an error
    /// (`RouteNetlinkError`): the datagram is not trusted further. Attributes that are cut short are
    /// the same error. Unknown attributes and message types are skipped.
    public static func decode(_ datagram: UnsafeRawBufferPointer) throws(RouteNetlinkError) -> [RouteNetlinkMessage] {
        var messages: [RouteNetlinkMessage] = []
        var offset = 0
        while datagram.count - offset >= headerSize {
            let length = Int(datagram.load32(at: offset))
            let type = datagram.load16(at: offset + 4)
            let sequence = datagram.load32(at: offset + 8)
            guard length >= headerSize, length <= datagram.count - offset else {
                throw RouteNetlinkError(reason: "message length \(length) at offset \(offset) does not fit \(datagram.count) bytes")
            }
            let body = UnsafeRawBufferPointer(rebasing: datagram[(offset + headerSize)..<(offset + length)])
            messages.append(try decodeMessage(type: type, sequence: sequence, body: body))
            offset += align(length)
        }
        guard offset >= datagram.count else {
            throw RouteNetlinkError(reason: "\(datagram.count - offset) trailing bytes after the last message")
        }
        return messages
    }

    /// Decodes every message of one datagram (bytes in memory).
    public static func decode(_ datagram: [UInt8]) throws(RouteNetlinkError) -> [RouteNetlinkMessage] {
        let result = datagram.withUnsafeBytes { bytes in
            Result { () throws(RouteNetlinkError) -> [RouteNetlinkMessage] in try decode(bytes) }
        }
        return try result.get()
    }

    private static func decodeMessage(
        type: UInt16, sequence: UInt32, body: UnsafeRawBufferPointer
    ) throws(RouteNetlinkError) -> RouteNetlinkMessage {
        switch type {
        case messageDone:
            return .done(sequence: sequence)
        case messageError:
            guard body.count >= 4 else { throw RouteNetlinkError(reason: "NLMSG_ERROR shorter than its error code") }
            // nlmsgerr.error is a negative errno (0 for an acknowledgement).
            return .error(sequence: sequence, errno: -Int32(bitPattern: body.load32(at: 0)))
        case newLink, deleteLink:
            let link = try decodeLink(body)
            return type == newLink ? .newLink(link) : .deleteLink(index: link.index)
        case newAddress, deleteAddress:
            guard let address = try decodeAddress(body) else { return .other(type: type) }
            return type == newAddress ? .newAddress(address) : .deleteAddress(address)
        case newRoute, deleteRoute:
            guard let route = try decodeRoute(body) else { return .other(type: type) }
            return type == newRoute ? .newRoute(route) : .deleteRoute(route)
        default:
            return .other(type: type)
        }
    }

    private static func decodeLink(_ body: UnsafeRawBufferPointer) throws(RouteNetlinkError) -> RouteNetlinkLink {
        guard body.count >= linkHeaderSize else { throw RouteNetlinkError(reason: "ifinfomsg cut short") }
        var link = RouteNetlinkLink(index: Int32(bitPattern: body.load32(at: 4)), name: "", flags: body.load32(at: 8))
        try forEachAttribute(in: body, from: linkHeaderSize) { type, value in
            if type == linkName {
                link.name = String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return link
    }

    /// Nil for an address of another family than IPv4 or IPv6, or with no address attribute.
    private static func decodeAddress(_ body: UnsafeRawBufferPointer) throws(RouteNetlinkError) -> RouteNetlinkAddress? {
        guard body.count >= addressHeaderSize else { throw RouteNetlinkError(reason: "ifaddrmsg cut short") }
        let family = body[0]
        guard family == familyIPv4 || family == familyIPv6 else { return nil }
        var local: IPAddressBytes?
        var peer: IPAddressBytes?
        var flags = UInt32(body[2])
        try forEachAttribute(in: body, from: addressHeaderSize) { (type, value) throws(RouteNetlinkError) in
            switch type {
            case addressLocal: local = try ipAddress(value, family: family)
            case addressAddress: peer = try ipAddress(value, family: family)
            case addressFlags where value.count >= 4: flags = value.load32(at: 0)
            default: break
            }
        }
        guard let address = local ?? peer else { return nil }
        return RouteNetlinkAddress(
            interfaceIndex: Int32(bitPattern: body.load32(at: 4)), address: address, prefixLength: body[1],
            flags: flags, scope: body[3])
    }

    /// Nil for a route of another family than IPv4 or IPv6.
    private static func decodeRoute(_ body: UnsafeRawBufferPointer) throws(RouteNetlinkError) -> RouteNetlinkRoute? {
        guard body.count >= routeHeaderSize else { throw RouteNetlinkError(reason: "rtmsg cut short") }
        let family = body[0]
        guard family == familyIPv4 || family == familyIPv6 else { return nil }
        var route = RouteNetlinkRoute(
            family: family, destination: .zero(family: family), destinationLength: body[1], table: UInt32(body[4]),
            type: body[7], outputInterfaces: [])
        try forEachAttribute(in: body, from: routeHeaderSize) { (type, value) throws(RouteNetlinkError) in
            switch type {
            case routeDestination: route.destination = try ipAddress(value, family: family)
            case routeOutputInterface where value.count >= 4: route.outputInterfaces.append(Int32(bitPattern: value.load32(at: 0)))
            case routePriority where value.count >= 4: route.priority = value.load32(at: 0)
            case routeTable where value.count >= 4: route.table = value.load32(at: 0)
            case routeMultipath: route.outputInterfaces += try nextHopInterfaces(value)
            default: break
            }
        }
        return route
    }

    /// The `rtnh_ifindex` of each `struct rtnexthop` (8 bytes, then its attributes, `rtnh_len` in all).
    private static func nextHopInterfaces(_ value: UnsafeRawBufferPointer) throws(RouteNetlinkError) -> [Int32] {
        var interfaces: [Int32] = []
        var offset = 0
        while value.count - offset >= 8 {
            let length = Int(value.load16(at: offset))
            guard length >= 8, length <= value.count - offset else { throw RouteNetlinkError(reason: "rtnexthop length \(length) does not fit") }
            interfaces.append(Int32(bitPattern: value.load32(at: offset + 4)))
            offset += align(length)
        }
        return interfaces
    }

    private static func ipAddress(_ value: UnsafeRawBufferPointer, family: UInt8) throws(RouteNetlinkError) -> IPAddressBytes {
        let expected = family == familyIPv6 ? 16 : 4
        guard value.count == expected, let address = IPAddressBytes(Array(value)) else {
            throw RouteNetlinkError(reason: "an address attribute of \(value.count) bytes for a family of \(expected)")
        }
        return address
    }

    /// Calls `body` with each `struct rtattr` (type, value) after `start`.
    private static func forEachAttribute(
        in body: UnsafeRawBufferPointer, from start: Int,
        _ visit: (UInt16, UnsafeRawBufferPointer) throws(RouteNetlinkError) -> Void
    ) throws(RouteNetlinkError) {
        var offset = align(start)
        while body.count - offset >= 4 {
            let length = Int(body.load16(at: offset))
            guard length >= 4, length <= body.count - offset else {
                throw RouteNetlinkError(reason: "attribute length \(length) at offset \(offset) does not fit \(body.count) bytes")
            }
            // The top two bits are NLA_F_NESTED and NLA_F_NET_BYTEORDER.
            let type = body.load16(at: offset + 2) & 0x3FFF
            try visit(type, UnsafeRawBufferPointer(rebasing: body[(offset + 4)..<(offset + length)]))
            offset += align(length)
        }
    }

    private static func align(_ length: Int) -> Int { (length + 3) & ~3 }

    // MARK: Encoding

    /// A dump request for every link (`RTM_GETLINK`), address (`RTM_GETADDR`) or route
    /// (`RTM_GETROUTE`) of both families: an `nlmsghdr` with `NLM_F_REQUEST | NLM_F_DUMP`, then the
    /// type's family header, all zero (`AF_UNSPEC`).
    public static func dumpRequest(type: UInt16, sequence: UInt32) -> [UInt8] {
        let familyHeader: Int
        switch type {
        case getLink: familyHeader = linkHeaderSize
        case getAddress: familyHeader = addressHeaderSize
        default: familyHeader = routeHeaderSize
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + familyHeader)
        bytes.appendNative(UInt32(headerSize + familyHeader))
        bytes.appendNative(type)
        bytes.appendNative(dumpRequestFlags)
        bytes.appendNative(sequence)
        bytes.appendNative(UInt32(0))  // nlmsg_pid: 0 is the kernel
        bytes += Array(repeating: 0, count: familyHeader)
        return bytes
    }
}

/// A datagram from the kernel that does not decode as rtnetlink messages.
public struct RouteNetlinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What did not fit.
    public let reason: String

    /// An error saying `reason`.
    public init(reason: String) { self.reason = reason }

    /// `"rtnetlink: <reason>"`.
    public var description: String { "rtnetlink: \(reason)" }
}

extension UnsafeRawBufferPointer {
    /// The host-order `UInt32` at `offset` (netlink is in host byte order), unaligned.
    fileprivate func load32(at offset: Int) -> UInt32 { loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    /// The host-order `UInt16` at `offset`, unaligned.
    fileprivate func load16(at offset: Int) -> UInt16 { loadUnaligned(fromByteOffset: offset, as: UInt16.self) }
}

extension [UInt8] {
    /// Appends `value` in host byte order (netlink's).
    mutating func appendNative<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value) { append(contentsOf: $0) }
    }
}

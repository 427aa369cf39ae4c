import BluebonnetCore
@testable import BluebonnetPosix
import Testing

/// Builds rtnetlink datagrams as the kernel lays them out (host byte order, 4-byte alignment), so
/// the decoder is tested with bytes and no socket.
enum NetlinkBytes {
    static func message(type: UInt16, sequence: UInt32 = 0, flags: UInt16 = 0, body: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendNative(UInt32(16 + body.count))
        bytes.appendNative(type)
        bytes.appendNative(flags)
        bytes.appendNative(sequence)
        bytes.appendNative(UInt32(0))
        bytes += body
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendNative(UInt16(4 + value.count))
        bytes.appendNative(type)
        bytes += value
        while bytes.count % 4 != 0 { bytes.append(0) }
        return bytes
    }

    static func native<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendNative(value)
        return bytes
    }

    /// `ifinfomsg` + `IFLA_IFNAME`.
    static func link(type: UInt16 = RouteNetlink.newLink, index: Int32, name: String, flags: UInt32) -> [UInt8] {
        var body: [UInt8] = [0, 0] + native(UInt16(1)) + native(index) + native(flags) + native(UInt32(0))
        body += attribute(3, Array(name.utf8) + [0])
        return message(type: type, body: body)
    }

    /// `ifaddrmsg` + `IFA_ADDRESS` (+ `IFA_LOCAL`) + `IFA_FLAGS`.
    static func address(
        type: UInt16 = RouteNetlink.newAddress, index: Int32, address: [UInt8], prefix: UInt8, flags: UInt32 = 0
    ) -> [UInt8] {
        let family: UInt8 = address.count == 16 ? 10 : 2
        var body: [UInt8] = [family, prefix, UInt8(truncatingIfNeeded: flags), 0] + native(UInt32(bitPattern: index))
        body += attribute(1, address)
        if family == 2 { body += attribute(2, address) }
        body += attribute(8, native(flags))
        return message(type: type, body: body)
    }

    /// `rtmsg` + `RTA_TABLE` + `RTA_DST` (unless default) + `RTA_OIF`.
    static func route(
        type: UInt16 = RouteNetlink.newRoute, family: UInt8 = 2, destination: [UInt8]? = nil, length: UInt8 = 0,
        table: UInt32 = 254, routeType: UInt8 = 1, outputInterface: Int32
    ) -> [UInt8] {
        var body: [UInt8] = [family, length, 0, 0, UInt8(min(table, 255)), 3, 0, routeType] + native(UInt32(0))
        body += attribute(15, native(table))
        if let destination { body += attribute(1, destination) }
        body += attribute(4, native(outputInterface))
        return message(type: type, body: body)
    }

    static func done(sequence: UInt32) -> [UInt8] { message(type: 3, sequence: sequence, flags: 2, body: native(Int32(0))) }
}

extension PosixTests {
    @Suite struct RouteNetlinkTests {
        typealias B = NetlinkBytes

        @Test func decodesALinkWithItsNameAndFlags() throws {
            let messages = try RouteNetlink.decode(B.link(index: 2, name: "eth0", flags: 0x1 | 0x40 | 0x10000))
            #expect(messages == [.newLink(RouteNetlinkLink(index: 2, name: "eth0", flags: 0x10041))])
            guard case .newLink(let link) = messages.first else { return }
            #expect(link.isUp && link.isRunning && !link.isLoopback)
        }

        @Test func decodesAddressesOfBothFamiliesWithTheirFullFlags() throws {
            let v6: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1]
            let datagram = B.address(index: 2, address: [10, 0, 0, 1], prefix: 24)
                + B.address(index: 2, address: v6, prefix: 64, flags: 0x40)
            let messages = try RouteNetlink.decode(datagram)
            #expect(messages.count == 2)
            guard case .newAddress(let v4Address) = messages[0], case .newAddress(let v6Address) = messages[1] else {
                Issue.record("not addresses: \(messages)")
                return
            }
            #expect(v4Address.address.description == "10.0.0.1" && v4Address.prefixLength == 24 && v4Address.isUsable)
            #expect(v6Address.address.isIPv6 && v6Address.address.description == "2001:db8:0:0:0:0:0:1")
            #expect(!v6Address.isUsable, "IFA_F_TENTATIVE: duplicate address detection is still running")
        }

        @Test func decodesRoutesWithTableInterfaceAndDestination() throws {
            let messages = try RouteNetlink.decode(
                B.route(outputInterface: 2) + B.route(type: RouteNetlink.deleteRoute, destination: [10, 1, 0, 0], length: 16, outputInterface: 3))
            #expect(messages == [
                .newRoute(RouteNetlinkRoute(family: 2, destination: IPAddressBytes([0, 0, 0, 0])!, destinationLength: 0, table: 254, type: 1, outputInterfaces: [2])),
                .deleteRoute(RouteNetlinkRoute(family: 2, destination: IPAddressBytes([10, 1, 0, 0])!, destinationLength: 16, table: 254, type: 1, outputInterfaces: [3])),
            ])
        }

        @Test func decodesTheMultipathNextHops() throws {
            // RTA_MULTIPATH: two struct rtnexthop (len 8, flags, hops, ifindex), no nested attributes.
            let hops = B.native(UInt16(8)) + [0, 0] + B.native(Int32(4)) + B.native(UInt16(8)) + [0, 0] + B.native(Int32(5))
            let body: [UInt8] = [2, 0, 0, 0, 254, 3, 0, 1] + B.native(UInt32(0)) + B.attribute(9, hops)
            let messages = try RouteNetlink.decode(B.message(type: RouteNetlink.newRoute, body: body))
            guard case .newRoute(let route) = messages.first else {
                Issue.record("not a route: \(messages)")
                return
            }
            #expect(route.outputInterfaces == [4, 5])
        }

        @Test func decodesDoneAndErrorsWithTheirSequence() throws {
            let error = B.message(type: 2, sequence: 9, body: B.native(Int32(-16)) + Array(repeating: 0, count: 16))
            #expect(try RouteNetlink.decode(B.done(sequence: 7) + error) == [.done(sequence: 7), .error(sequence: 9, errno: 16)])
        }

        @Test func skipsUnknownTypesAndAttributes() throws {
            var body: [UInt8] = [0, 0] + B.native(UInt16(1)) + B.native(Int32(1)) + B.native(UInt32(9)) + B.native(UInt32(0))
            body += B.attribute(99, [1, 2, 3]) + B.attribute(3, Array("lo".utf8) + [0])
            let messages = try RouteNetlink.decode(B.message(type: 16, body: body) + B.message(type: 0x40, body: [1, 2, 3, 4]))
            #expect(messages == [.newLink(RouteNetlinkLink(index: 1, name: "lo", flags: 9)), .other(type: 0x40)])
        }

        @Test(arguments: [
            ("a length past the datagram", Array(B.done(sequence: 1).dropLast(4))),
            ("a length below the header", B.native(UInt32(8)) + Array(repeating: 0, count: 12)),
            ("a cut ifinfomsg", B.message(type: 16, body: [0, 0, 0, 0])),
            ("an attribute past its message", B.message(type: 16, body: Array(repeating: 0, count: 16) + B.native(UInt16(40)) + B.native(UInt16(3)))),
            ("an IPv4 address of 5 bytes", B.message(type: 20, body: [2, 24, 0, 0] + B.native(UInt32(2)) + B.attribute(2, [1, 2, 3, 4, 5]))),
        ])
        func rejectsMalformedDatagrams(_ name: String, _ bytes: [UInt8]) {
            #expect(throws: RouteNetlinkError.self, "\(name)") { try RouteNetlink.decode(bytes) }
        }

        @Test func everyPrefixOfAValidDatagramDecodesOrFailsWithATypedError() {
            let datagram = B.link(index: 2, name: "eth0", flags: 0x41) + B.route(outputInterface: 2) + B.done(sequence: 3)
            for end in 0...datagram.count {
                do {
                    _ = try RouteNetlink.decode(Array(datagram[..<end]))
                } catch {
                    #expect(error.reason.isEmpty == false)
                }
            }
        }

        @Test func dumpRequestsCarryTheTypeSequenceAndFamilyHeader() {
            let request = RouteNetlink.dumpRequest(type: RouteNetlink.getRoute, sequence: 5)
            #expect(request.count == 16 + 12)
            #expect(request == B.native(UInt32(28)) + B.native(UInt16(26)) + B.native(UInt16(0x301)) + B.native(UInt32(5)) + B.native(UInt32(0)) + Array(repeating: 0, count: 12))
            #expect(RouteNetlink.dumpRequest(type: RouteNetlink.getLink, sequence: 1).count == 32)
            #expect(RouteNetlink.dumpRequest(type: RouteNetlink.getAddress, sequence: 1).count == 24)
        }

        // MARK: The table

        private static func table(_ datagrams: [UInt8]...) throws -> RoutingTable {
            var table = RoutingTable()
            for datagram in datagrams {
                for message in try RouteNetlink.decode(datagram) { table.apply(message) }
            }
            return table
        }

        private static let up: UInt32 = 0x1 | 0x40

        @Test func aDefaultRouteThroughAnUpLinkWithAnAddressWorks() throws {
            let table = try Self.table(
                B.link(index: 2, name: "eth0", flags: Self.up), B.address(index: 2, address: [10, 0, 0, 2], prefix: 24),
                B.route(outputInterface: 2))
            #expect(table.hasWorkingDefaultRoute)
            #expect(table.isReachable(IPAddressBytes([93, 184, 216, 34])!))
        }

        @Test func aDefaultRouteDoesNotWorkWhenItsLinkIsDownOrHasNoAddress() throws {
            let down = try Self.table(
                B.link(index: 2, name: "eth0", flags: 0x1), B.address(index: 2, address: [10, 0, 0, 2], prefix: 24),
                B.route(outputInterface: 2))
            #expect(!down.hasWorkingDefaultRoute, "up but not running (no carrier)")
            let bare = try Self.table(B.link(index: 2, name: "eth0", flags: Self.up), B.route(outputInterface: 2))
            #expect(!bare.hasWorkingDefaultRoute, "no address to send from")
        }

        @Test func loopbackAloneIsNotTheNetworkButReachesLoopbackAddresses() throws {
            let table = try Self.table(
                B.link(index: 1, name: "lo", flags: Self.up | 0x8), B.address(index: 1, address: [127, 0, 0, 1], prefix: 8),
                B.route(destination: [127, 0, 0, 0], length: 8, table: 255, routeType: 2, outputInterface: 1))
            #expect(!table.hasWorkingDefaultRoute)
            #expect(table.isReachable(IPAddressBytes([127, 0, 0, 1])!))
            #expect(!table.isReachable(IPAddressBytes([10, 0, 0, 1])!))
        }

        @Test func theLongestPrefixDecides() throws {
            let table = try Self.table(
                B.link(index: 2, name: "eth0", flags: Self.up), B.address(index: 2, address: [10, 0, 0, 2], prefix: 24),
                B.route(outputInterface: 2),
                B.route(destination: [192, 0, 2, 0], length: 24, routeType: 7, outputInterface: 0))  // unreachable
            #expect(table.isReachable(IPAddressBytes([198, 51, 100, 1])!))
            #expect(!table.isReachable(IPAddressBytes([192, 0, 2, 1])!), "an `unreachable` route is the longest match")
        }

        @Test func removingALinkDropsItsAddressesAndRoutes() throws {
            var table = try Self.table(
                B.link(index: 2, name: "eth0", flags: Self.up), B.address(index: 2, address: [10, 0, 0, 2], prefix: 24),
                B.route(outputInterface: 2))
            for message in try RouteNetlink.decode(B.link(type: RouteNetlink.deleteLink, index: 2, name: "eth0", flags: 0)) {
                let changed = table.apply(message)
                #expect(changed)
            }
            #expect(table.addresses.isEmpty && table.allRoutes.isEmpty && !table.hasWorkingDefaultRoute)
        }

        @Test func anIPv6DefaultRouteNeedsAGlobalAddress() throws {
            let linkLocal: [UInt8] = [0xfe, 0x80] + Array(repeating: 0, count: 13) + [1]
            let global: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [2]
            var table = try Self.table(
                B.link(index: 2, name: "eth0", flags: Self.up), B.address(index: 2, address: linkLocal, prefix: 64),
                B.route(family: 10, outputInterface: 2))
            #expect(!table.hasWorkingDefaultRoute)
            for message in try RouteNetlink.decode(B.address(index: 2, address: global, prefix: 64)) { table.apply(message) }
            #expect(table.hasWorkingDefaultRoute)
        }

        // MARK: The monitor's state machine

        @Test func theMachineDumpsLinksThenAddressesThenRoutesThenPublishesChangesOnly() throws {
            var machine = RouteMonitor.StateMachine()
            #expect(machine.start() == RouteNetlink.dumpRequest(type: RouteNetlink.getLink, sequence: 1))
            var actions = machine.received(try RouteNetlink.decode(B.link(index: 2, name: "eth0", flags: Self.up) + B.done(sequence: 1)))
            #expect(actions.send == RouteNetlink.dumpRequest(type: RouteNetlink.getAddress, sequence: 2) && actions.publish == nil)
            actions = machine.received(try RouteNetlink.decode(B.address(index: 2, address: [10, 0, 0, 2], prefix: 24) + B.done(sequence: 2)))
            #expect(actions.send == RouteNetlink.dumpRequest(type: RouteNetlink.getRoute, sequence: 3) && actions.publish == nil)
            // An event in the middle of a dump is applied too.
            actions = machine.received(try RouteNetlink.decode(B.route(outputInterface: 2)))
            #expect(actions == .init())
            actions = machine.received(try RouteNetlink.decode(B.done(sequence: 3)))
            #expect(actions.publish?.hasWorkingDefaultRoute == true && actions.send == nil)
            #expect(machine.phase == .synchronized)
            // The same link again changes nothing: nothing to publish.
            #expect(machine.received(try RouteNetlink.decode(B.link(index: 2, name: "eth0", flags: Self.up))).publish == nil)
            actions = machine.received(try RouteNetlink.decode(B.link(index: 2, name: "eth0", flags: 0x1)))
            #expect(actions.publish?.hasWorkingDefaultRoute == false)
        }

        @Test func aRefusedDumpFailsTheMonitor() throws {
            var machine = RouteMonitor.StateMachine()
            _ = machine.start()
            let refused = B.message(type: 2, sequence: 1, body: B.native(Int32(-16)) + Array(repeating: 0, count: 16))
            #expect(machine.received(try RouteNetlink.decode(refused)).failure == 16)
            #expect(machine.overrun() == nil, "a dump is under way: the kernel would say EBUSY")
        }

        @Test func anOverrunDumpsAgainAtOnceWhenSynchronizedOrAfterTheDumpUnderWay() throws {
            var machine = RouteMonitor.StateMachine()
            _ = machine.start()
            _ = machine.received(try RouteNetlink.decode(B.link(index: 2, name: "eth0", flags: Self.up) + B.done(sequence: 1)))
            // ENOBUFS while addresses are dumped: nothing sent now; the end of that dump starts over.
            #expect(machine.overrun() == nil)
            let actions = machine.received(try RouteNetlink.decode(B.done(sequence: 2)))
            #expect(actions.send == RouteNetlink.dumpRequest(type: RouteNetlink.getLink, sequence: 3) && actions.publish == nil)
            #expect(machine.table == RoutingTable() && machine.phase == .links)
            _ = machine.received(try RouteNetlink.decode(B.done(sequence: 3)))
            _ = machine.received(try RouteNetlink.decode(B.done(sequence: 4)))
            #expect(machine.received(try RouteNetlink.decode(B.done(sequence: 5))).publish != nil)
            #expect(machine.phase == .synchronized)
            // Synchronized: at once.
            #expect(machine.overrun() == RouteNetlink.dumpRequest(type: RouteNetlink.getLink, sequence: 6))
        }
    }
}

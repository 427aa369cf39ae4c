import Glibc

/// An endpoint a socket can bind or connect to: IPv4 or IPv6 address and port, or a Unix-domain path.
///
/// A value type: comparing two addresses compares what they name (address, port, IPv6 flow info and
/// scope, or the path). `description` is the usual text form: `127.0.0.1:8080`, `[::1]:443`,
/// `[fe80::1%2]:80` (scope as interface index) or `unix:/run/app.sock`.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The address family of a `SocketAddress`.
    public enum Family: Hashable, Sendable {
        /// IPv4 (`AF_INET`).
        case inet
        /// IPv6 (`AF_INET6`).
        case inet6
        /// Unix domain (`AF_UNIX`).
        case unix

        /// The `AF_*` constant.
        public var rawValue: CInt {
            switch self {
            case .inet: AF_INET
            case .inet6: AF_INET6
            case .unix: AF_UNIX
            }
        }
    }

    enum Storage: Hashable, Sendable {
        /// Address in network byte order as stored in `in_addr.s_addr`; port in host order.
        case inet(address: UInt32, port: UInt16)
        /// Address as its 16 bytes (network order) split into two words; port in host order.
        case inet6(high: UInt64, low: UInt64, port: UInt16, flowInfo: UInt32, scopeID: UInt32)
        /// The path bytes, without a terminating NUL.
        case unix(path: [UInt8])
    }

    let storage: Storage

    init(storage: Storage) { self.storage = storage }

    /// The address family.
    public var family: Family {
        switch storage {
        case .inet: .inet
        case .inet6: .inet6
        case .unix: .unix
        }
    }

    /// The port (host byte order) of an IP address; nil for Unix-domain addresses.
    public var port: UInt16? {
        switch storage {
        case .inet(_, let port), .inet6(_, _, let port, _, _): port
        case .unix: nil
        }
    }

    /// The numeric address text (`127.0.0.1`, `::1`) of an IP address; nil for Unix-domain addresses.
    public var ipAddress: String? {
        switch storage {
        case .inet(let address, _):
            return withUnsafeBytes(of: in_addr(s_addr: address)) { Self.presentation(family: AF_INET, $0) }
        case .inet6(let high, let low, _, _, _):
            return withUnsafeBytes(of: Self.in6(high: high, low: low)) { Self.presentation(family: AF_INET6, $0) }
        case .unix:
            return nil
        }
    }

    /// The socket path of a Unix-domain address; nil for IP addresses.
    public var path: String? {
        if case .unix(let path) = storage { return String(decoding: path, as: UTF8.self) }
        return nil
    }

    /// The same address with another port; Unix-domain addresses are returned unchanged.
    public func withPort(_ port: UInt16) -> SocketAddress {
        switch storage {
        case .inet(let address, _): SocketAddress(storage: .inet(address: address, port: port))
        case .inet6(let high, let low, _, let flow, let scope):
            SocketAddress(storage: .inet6(high: high, low: low, port: port, flowInfo: flow, scopeID: scope))
        case .unix: self
        }
    }

    /// `127.0.0.1:8080`, `[::1]:443`, `[fe80::1%2]:80` or `unix:/path`.
    public var description: String {
        switch storage {
        case .inet(_, let port):
            return "\(ipAddress ?? "?"):\(port)"
        case .inet6(_, _, let port, _, let scope):
            let zone = scope == 0 ? "" : "%\(scope)"
            return "[\(ipAddress ?? "?")\(zone)]:\(port)"
        case .unix:
            return "unix:\(path ?? "")"
        }
    }

    // MARK: Making addresses

    /// The address for numeric IP text (`"127.0.0.1"`, `"::1"`, `"[::1]"`) and `port`; nil when `ipAddress`
    /// is not a numeric IPv4 or IPv6 address. No name lookup is ever done.
    public init?(ipAddress: String, port: UInt16) {
        var text = Substring(ipAddress)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        var v4 = in_addr()
        if String(text).withCString({ inet_pton(AF_INET, $0, &v4) }) == 1 {
            self.init(storage: .inet(address: v4.s_addr, port: port))
            return
        }
        var v6 = in6_addr()
        if String(text).withCString({ inet_pton(AF_INET6, $0, &v6) }) == 1 {
            let (high, low) = Self.words(v6)
            self.init(storage: .inet6(high: high, low: low, port: port, flowInfo: 0, scopeID: 0))
            return
        }
        return nil
    }

    /// The IPv4 loopback address `127.0.0.1` with `port` (0: let the system pick when binding).
    public static func loopbackIPv4(port: UInt16 = 0) -> SocketAddress {
        SocketAddress(storage: .inet(address: in_addr_t(INADDR_LOOPBACK).bigEndian, port: port))
    }

    /// The IPv6 loopback address `::1` with `port` (0: let the system pick when binding).
    public static func loopbackIPv6(port: UInt16 = 0) -> SocketAddress {
        SocketAddress(storage: .inet6(high: 0, low: UInt64(1).bigEndian, port: port, flowInfo: 0, scopeID: 0))
    }

    /// A Unix-domain address for `path`; throws `ENAMETOOLONG` when the path does not fit `sun_path`
    /// (107 bytes on Linux) and `EINVAL` when it contains a NUL byte.
    public init(unixDomainSocketPath path: String) throws(IOError) {
        let bytes = Array(path.utf8)
        guard !bytes.contains(0) else { throw IOError(errno: EINVAL, function: "SocketAddress(unixDomainSocketPath:)") }
        guard bytes.count < MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw IOError(errno: ENAMETOOLONG, function: "SocketAddress(unixDomainSocketPath:)")
        }
        self.init(storage: .unix(path: bytes))
    }

    /// The address in a `sockaddr_storage` filled by the kernel (`accept`, `getsockname`, `getaddrinfo`);
    /// nil for families other than `AF_INET`, `AF_INET6` and `AF_UNIX`.
    ///
    /// `length` is the length the kernel reported; for Unix-domain addresses it bounds the path
    /// (an unnamed socket has an empty path).
    public init?(storage raw: sockaddr_storage, length: socklen_t) {
        var raw = raw
        let family = CInt(raw.ss_family)
        let made: Storage? = withUnsafeBytes(of: &raw) { bytes -> Storage? in
            switch family {
            case AF_INET:
                let sin = bytes.loadUnaligned(as: sockaddr_in.self)
                return .inet(address: sin.sin_addr.s_addr, port: UInt16(bigEndian: sin.sin_port))
            case AF_INET6:
                let sin6 = bytes.loadUnaligned(as: sockaddr_in6.self)
                let (high, low) = Self.words(sin6.sin6_addr)
                return .inet6(
                    high: high, low: low, port: UInt16(bigEndian: sin6.sin6_port),
                    flowInfo: UInt32(bigEndian: sin6.sin6_flowinfo), scopeID: sin6.sin6_scope_id)
            case AF_UNIX:
                let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
                let end = Swift.min(Int(length), MemoryLayout<sockaddr_un>.size)
                guard end > offset else { return .unix(path: []) }
                var path = Array(bytes[offset..<end])
                if let nul = path.firstIndex(of: 0) { path.removeSubrange(nul...) }
                return .unix(path: path)
            default:
                return nil
            }
        }
        guard let made else { return nil }
        self.init(storage: made)
    }

    /// Calls `body` with this address as a `sockaddr` pointer and its length, for `bind`/`connect`.
    func withSockAddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        var raw = sockaddr_storage()
        let length: socklen_t = withUnsafeMutableBytes(of: &raw) { bytes in
            switch storage {
            case .inet(let address, let port):
                var sin = sockaddr_in()
                sin.sin_family = sa_family_t(AF_INET)
                sin.sin_port = port.bigEndian
                sin.sin_addr = in_addr(s_addr: address)
                bytes.storeBytes(of: sin, as: sockaddr_in.self)
                return socklen_t(MemoryLayout<sockaddr_in>.size)
            case .inet6(let high, let low, let port, let flow, let scope):
                var sin6 = sockaddr_in6()
                sin6.sin6_family = sa_family_t(AF_INET6)
                sin6.sin6_port = port.bigEndian
                sin6.sin6_flowinfo = flow.bigEndian
                sin6.sin6_addr = Self.in6(high: high, low: low)
                sin6.sin6_scope_id = scope
                bytes.storeBytes(of: sin6, as: sockaddr_in6.self)
                return socklen_t(MemoryLayout<sockaddr_in6>.size)
            case .unix(let path):
                var sun = sockaddr_un()
                sun.sun_family = sa_family_t(AF_UNIX)
                bytes.storeBytes(of: sun, as: sockaddr_un.self)
                let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)!
                UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<(offset + path.count)])
                    .copyBytes(from: path)
                bytes[offset + path.count] = 0
                return socklen_t(offset + path.count + 1)
            }
        }
        return try withUnsafePointer(to: &raw) { pointer throws(E) -> R in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(E) -> R in
                try body(address, length)
            }
        }
    }

    // MARK: Helpers

    private static func words(_ address: in6_addr) -> (UInt64, UInt64) {
        withUnsafeBytes(of: address) { bytes in
            (bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
             bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    static func in6(high: UInt64, low: UInt64) -> in6_addr {
        var address = in6_addr()
        withUnsafeMutableBytes(of: &address) { bytes in
            bytes.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            bytes.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
        }
        return address
    }

    private static func presentation(family: CInt, _ address: UnsafeRawBufferPointer) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer in
            guard let base = buffer.baseAddress,
                  inet_ntop(family, address.baseAddress, base, socklen_t(buffer.count)) != nil else { return nil }
            return String(cString: base)
        }
    }
}

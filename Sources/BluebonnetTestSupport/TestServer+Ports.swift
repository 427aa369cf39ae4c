import Glibc

// Loopback ports for tests: free ones, ones that refuse connections, and probing one.
extension TestServer {
    /// A port that was free on 127.0.0.1 a moment ago (bound to 0, read back, closed).
    public static func freeLoopbackPort() throws -> Int {
        let (fd, port) = try boundLoopbackSocket()
        close(fd)
        return port
    }

    /// A TCP socket bound to 127.0.0.1 on a port the OS picks (not listening), and that port.
    /// The caller closes the descriptor.
    static func boundLoopbackSocket() throws -> (fd: CInt, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failure("bind 127.0.0.1:0: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            close(fd)
            throw Failure("getsockname: \(String(cString: strerror(errno)))")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Runs `body` with a loopback port that refuses connections for as long as it runs: a
    /// socket is bound to it and never listens, so no other process (a test server started
    /// meanwhile) can take the port, and a connect gets `ECONNREFUSED`. The socket is closed after.
    public static func withRefusingLoopbackPort<T>(_ body: (Int) async throws -> T) async throws -> T {
        let (fd, port) = try boundLoopbackSocket()
        defer { close(fd) }
        return try await body(port)
    }

    /// Whether a TCP connection to 127.0.0.1:`port` is accepted right now (closed at once).
    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopbackAddress(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    static func loopbackAddress(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }
}

import BluebonnetCore
internal import CBluebonnetLinux
import Glibc

/// An owned, non-blocking, close-on-exec socket descriptor.
///
/// `~Copyable`: exactly one value owns the descriptor. `close()` consumes the socket and reports
/// errors; a socket dropped while still open is closed by `deinit` (errors ignored). Every operation
/// is non-blocking: those that would block return `IOResult.wouldBlock`, so drive them from an
/// `EventLoop` registration.
public struct Socket: ~Copyable, Sendable {
    /// The descriptor number. Valid until the socket is closed or released; do not close it yourself.
    public let descriptor: CInt

    /// Takes ownership of `descriptor` (which should already be non-blocking and close-on-exec).
    public init(takingOwnershipOf descriptor: CInt) {
        precondition(descriptor >= 0, "invalid descriptor \(descriptor)")
        self.descriptor = descriptor
    }

    /// Opens a new non-blocking, close-on-exec socket of `family` and `type`
    /// (TCP or UDP for IP families).
    public init(family: SocketAddress.Family, type: SocketType = .stream) throws(IOError) {
        let kind: CInt
        switch type {
        case .stream: kind = CInt(SOCK_STREAM.rawValue)
        case .datagram: kind = CInt(SOCK_DGRAM.rawValue)
        }
        let flags = CInt(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        let fd = try Syscall.complete("socket") { Glibc.socket(family.rawValue, kind | flags, 0) }
        self.init(takingOwnershipOf: fd)
    }

    /// A connected pair of non-blocking, close-on-exec Unix-domain sockets (`socketpair(2)`).
    public static func pair(type: SocketType = .stream) throws(IOError) -> SocketPair {
        var fds: (CInt, CInt) = (-1, -1)
        let kind: CInt = type == .stream ? CInt(SOCK_STREAM.rawValue) : CInt(SOCK_DGRAM.rawValue)
        let flags = CInt(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        _ = try withUnsafeMutableBytes(of: &fds) { raw throws(IOError) -> CInt in
            let pointer = raw.baseAddress!.assumingMemoryBound(to: CInt.self)
            return try Syscall.complete("socketpair") { socketpair(AF_UNIX, kind | flags, 0, pointer) }
        }
        return SocketPair(first: Socket(takingOwnershipOf: fds.0), second: Socket(takingOwnershipOf: fds.1))
    }

    deinit {
        _ = try? Syscall.close(descriptor)
    }

    /// Closes the socket, reporting a failure of `close(2)` (the descriptor is released either way).
    public consuming func close() throws(IOError) {
        let fd = descriptor
        discard self
        try Syscall.close(fd)
    }

    /// Gives up ownership and returns the descriptor, which the caller must now close.
    public consuming func releaseDescriptor() -> CInt {
        let fd = descriptor
        discard self
        return fd
    }

    // MARK: Connecting

    /// Starts connecting to `address` without blocking.
    ///
    /// `.inProgress` means: register for writability, then call `finishConnect()`.
    /// A refused loopback connection may throw `ECONNREFUSED` here or from `finishConnect()`.
    /// A Unix-domain listener whose backlog is full makes this throw `EAGAIN` (there is no
    /// readiness to wait for in that case: retry later or fail).
    public func connect(to address: SocketAddress) throws(IOError) -> ConnectResult {
        try address.withSockAddr { (pointer, length) throws(IOError) -> ConnectResult in
            try Syscall.connect { Glibc.connect(descriptor, pointer, length) }
        }
    }

    /// Completes a connect that returned `.inProgress`, once the socket reported writability:
    /// throws the connection's error (`SO_ERROR`, e.g. `ECONNREFUSED`) with function `"connect"`.
    public func finishConnect() throws(IOError) {
        let code = try pendingError()
        if code != 0 { throw IOError(errno: code, function: "connect") }
    }

    /// Reads and clears the socket's pending error (`SO_ERROR`); 0 when there is none.
    public func pendingError() throws(IOError) -> CInt {
        try getOption(level: SOL_SOCKET, name: SO_ERROR)
    }

    // MARK: Listening

    /// Binds the socket to `address` (port 0: the system picks a free port; see `localAddress()`).
    public func bind(to address: SocketAddress) throws(IOError) {
        _ = try address.withSockAddr { (pointer, length) throws(IOError) -> CInt in
            try Syscall.complete("bind") { Glibc.bind(descriptor, pointer, length) }
        }
    }

    /// Marks the socket as listening with a queue of up to `backlog` pending connections (default 128).
    public func listen(backlog: CInt = 128) throws(IOError) {
        _ = try Syscall.complete("listen") { Glibc.listen(descriptor, backlog) }
    }

    /// Accepts one pending connection as a non-blocking, close-on-exec socket (`accept4(2)`);
    /// `.wouldBlock` when none is waiting.
    public func accept() throws(IOError) -> IOResult<Socket> {
        let flags = CInt(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue)
        switch try Syscall.run("accept4", { cbluebonnet_accept4(descriptor, flags) }) {
        case .processed(let fd): return .processed(Socket(takingOwnershipOf: fd))
        case .wouldBlock: return .wouldBlock
        }
    }

    // MARK: Reading and writing

    /// Reads up to `maxBytes` (default 16 KiB) into `buffer` after its writer index.
    ///
    /// `.processed(0)` means the peer closed its side (end of stream); `.wouldBlock` means no data yet.
    public func read(into buffer: inout ByteBuffer, maxBytes: Int = 16 * 1024) throws(IOError) -> IOResult<Int> {
        precondition(maxBytes > 0, "maxBytes must be positive")
        var wouldBlock = false
        let count = try buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: maxBytes) {
            (region) throws(IOError) -> Int in
            let wanted = Swift.min(region.count, maxBytes)
            switch try Syscall.run("read", { Glibc.read(descriptor, region.baseAddress, wanted) }) {
            case .processed(let n): return n
            case .wouldBlock:
                wouldBlock = true
                return 0
            }
        }
        return wouldBlock ? .wouldBlock : .processed(count)
    }

    /// Reads up to `maxBytes` into `buffer` in place of its readable bytes, reusing storage that
    /// readers of earlier reads still hold when its free tail has `minimumSharedTail` bytes (see
    /// `ByteBuffer.withUnsafeMutableReceiveBytes`): for a receive buffer whose reads are handed on
    /// as slices. Same results as ``read(into:maxBytes:)``.
    package func receive(into buffer: inout ByteBuffer, maxBytes: Int, minimumSharedTail: Int) throws(IOError) -> IOResult<Int> {
        var wouldBlock = false
        let count = try buffer.withUnsafeMutableReceiveBytes(maxBytes: maxBytes, minimumSharedTail: minimumSharedTail) {
            (region) throws(IOError) -> Int in
            switch try Syscall.run("read", { Glibc.read(descriptor, region.baseAddress, region.count) }) {
            case .processed(let n): return n
            case .wouldBlock:
                wouldBlock = true
                return 0
            }
        }
        return wouldBlock ? .wouldBlock : .processed(count)
    }

    /// Sends as many of `bytes` as the kernel takes now; returns the count sent.
    ///
    /// Uses `send(2)` with `MSG_NOSIGNAL`: writing to a connection the peer reset throws `EPIPE`
    /// instead of raising `SIGPIPE`.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        guard bytes.count > 0 else { return .processed(0) }
        return try Syscall.run("send") { send(descriptor, bytes.baseAddress, bytes.count, CInt(MSG_NOSIGNAL)) }
    }

    /// Sends as many of `buffer`'s readable bytes as the kernel takes now; returns the count sent.
    /// The buffer's indices do not move: advance its reader index by the count.
    public func write(_ buffer: ByteBuffer) throws(IOError) -> IOResult<Int> {
        try buffer.withUnsafeReadableBytes { (bytes) throws(IOError) -> IOResult<Int> in try write(bytes) }
    }

    /// The most buffers one `writev` call passes to the kernel (`IOV_MAX`, 1024 on Linux).
    public static let maximumWriteVectorCount: Int = {
        let limit = sysconf(CInt(_SC_IOV_MAX))
        return limit > 0 ? limit : 1024
    }()

    /// Sends the readable bytes of `buffers`, in order, with one gathering call (`sendmsg(2)` with
    /// `MSG_NOSIGNAL`); returns the total count sent, which may end inside any buffer.
    ///
    /// At most `maximumWriteVectorCount` buffers are passed; bytes of later ones are not sent.
    public func writev(_ buffers: [ByteBuffer]) throws(IOError) -> IOResult<Int> {
        let count = Swift.min(buffers.count, Self.maximumWriteVectorCount)
        guard count > 0 else { return .processed(0) }
        let fd = descriptor
        return try withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) {
            (vectors) throws(IOError) -> IOResult<Int> in
            let outcome: Result<IOResult<Int>, IOError> = Self.gather(buffers, 0, count, vectors.baseAddress!) {
                var message = msghdr()
                message.msg_iov = vectors.baseAddress
                message.msg_iovlen = count
                return Result { () throws(IOError) -> IOResult<Int> in
                    try Syscall.run("sendmsg") { sendmsg(fd, &message, CInt(MSG_NOSIGNAL)) }
                }
            }
            return try outcome.get()
        }
    }

    /// Fills `vectors[index..<count]` from `buffers`, keeping every buffer's bytes pinned (nested
    /// `withUnsafeReadableBytes` scopes) while `body` runs.
    private static func gather<R>(
        _ buffers: [ByteBuffer], _ index: Int, _ count: Int, _ vectors: UnsafeMutablePointer<iovec>,
        _ body: () -> R
    ) -> R {
        if index == count { return body() }
        return buffers[index].withUnsafeReadableBytes { bytes in
            vectors[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)
            return gather(buffers, index + 1, count, vectors, body)
        }
    }

    /// Closes one or both directions of the connection; `.write` makes the peer read end of stream
    /// while this side can still receive.
    public func shutdown(_ direction: ShutdownDirection) throws(IOError) {
        let how: Int
        switch direction {
        case .read: how = SHUT_RD
        case .write: how = SHUT_WR
        case .both: how = SHUT_RDWR
        }
        _ = try Syscall.complete("shutdown") { Glibc.shutdown(descriptor, CInt(how)) }
    }

    // MARK: Addresses

    /// The address the socket is bound to (`getsockname(2)`): after binding to port 0, the chosen port.
    public func localAddress() throws(IOError) -> SocketAddress {
        try address("getsockname") { getsockname(descriptor, $0, $1) }
    }

    /// The address of the connected peer (`getpeername(2)`); `ENOTCONN` when not connected.
    public func peerAddress() throws(IOError) -> SocketAddress {
        try address("getpeername") { getpeername(descriptor, $0, $1) }
    }

    private func address(
        _ function: StaticString,
        _ call: (UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> CInt
    ) throws(IOError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { (pointer) throws(IOError) -> CInt in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(IOError) -> CInt in
                try Syscall.complete(function) { call(address, &length) }
            }
        }
        guard let result = SocketAddress(storage: storage, length: length) else {
            throw IOError(errno: EAFNOSUPPORT, function: function)
        }
        return result
    }
}

/// Two connected sockets from `Socket.pair(type:)`; take them apart with `let a = pair.first`.
@frozen
public struct SocketPair: ~Copyable, Sendable {
    /// One end.
    public var first: Socket
    /// The other end.
    public var second: Socket
}

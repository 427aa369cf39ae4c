import Glibc

extension Socket {
    /// Turns Nagle's algorithm off (`TCP_NODELAY` on) so small writes go out at once.
    /// TCP only: Unix-domain sockets throw `EOPNOTSUPP`.
    public func setNoDelay(_ enabled: Bool) throws(IOError) {
        try setOption(level: CInt(IPPROTO_TCP), name: TCP_NODELAY, value: enabled ? 1 : 0)
    }

    /// Whether `TCP_NODELAY` is on.
    public func noDelay() throws(IOError) -> Bool {
        try getOption(level: CInt(IPPROTO_TCP), name: TCP_NODELAY) != 0
    }

    /// Turns TCP keep-alive probes (`SO_KEEPALIVE`) on or off; the timings are the system's.
    public func setKeepAlive(_ enabled: Bool) throws(IOError) {
        try setOption(level: SOL_SOCKET, name: SO_KEEPALIVE, value: enabled ? 1 : 0)
    }

    /// Whether `SO_KEEPALIVE` is on.
    public func keepAlive() throws(IOError) -> Bool {
        try getOption(level: SOL_SOCKET, name: SO_KEEPALIVE) != 0
    }

    /// Lets a listening socket bind a port that has connections in `TIME_WAIT` (`SO_REUSEADDR`).
    public func setReuseAddress(_ enabled: Bool) throws(IOError) {
        try setOption(level: SOL_SOCKET, name: SO_REUSEADDR, value: enabled ? 1 : 0)
    }

    /// Sets the kernel send buffer size (`SO_SNDBUF`; Linux doubles the value and enforces a minimum).
    public func setSendBufferSize(_ bytes: Int) throws(IOError) {
        try setOption(level: SOL_SOCKET, name: SO_SNDBUF, value: CInt(clamping: bytes))
    }

    /// Sets the kernel receive buffer size (`SO_RCVBUF`; Linux doubles the value and enforces a minimum).
    public func setReceiveBufferSize(_ bytes: Int) throws(IOError) {
        try setOption(level: SOL_SOCKET, name: SO_RCVBUF, value: CInt(clamping: bytes))
    }

    /// Sets an integer socket option (`setsockopt(2)`).
    public func setOption(level: CInt, name: CInt, value: CInt) throws(IOError) {
        var value = value
        _ = try Syscall.complete("setsockopt") {
            setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<CInt>.size))
        }
    }

    /// Reads an integer socket option (`getsockopt(2)`).
    public func getOption(level: CInt, name: CInt) throws(IOError) -> CInt {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = try Syscall.complete("getsockopt") { getsockopt(descriptor, level, name, &value, &length) }
        return value
    }
}

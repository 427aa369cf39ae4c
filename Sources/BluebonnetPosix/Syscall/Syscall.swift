import Glibc

/// The one door through which BluebonnetPosix makes system calls.
///
/// Every call goes through `Syscall.run` (may return `.wouldBlock`) or `Syscall.complete` (must not),
/// which retry `EINTR` and translate `errno` into `IOError`.
/// The exception is `close(2)`: see `Syscall.close`.
enum Syscall {
    /// Runs `body` (a call returning -1 and setting `errno` on failure), retrying `EINTR`;
    /// `EAGAIN`/`EWOULDBLOCK` come back as `.wouldBlock`, other failures are thrown.
    @inline(__always)
    static func run<R: FixedWidthInteger>(
        _ function: StaticString,
        _ body: () -> R
    ) throws(IOError) -> IOResult<R> {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw IOError(errno: code, function: function)
            }
        }
    }

    /// Runs `body` (a call returning -1 and setting `errno` on failure), retrying `EINTR`; every other
    /// failure, `EAGAIN` included, is thrown. For calls that cannot block (or are meant to).
    @inline(__always)
    static func complete<R: FixedWidthInteger>(
        _ function: StaticString,
        _ body: () -> R
    ) throws(IOError) -> R {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = errno
            if code == EINTR { continue }
            throw IOError(errno: code, function: function)
        }
    }

    /// Closes `descriptor` once, without retrying `EINTR`: on Linux the descriptor is released even
    /// when `close` is interrupted, and a retry could close a number another thread just reused.
    /// `EINTR` is therefore treated as success.
    static func close(_ descriptor: CInt) throws(IOError) {
        if Glibc.close(descriptor) == 0 { return }
        let code = errno
        if code == EINTR { return }
        throw IOError(errno: code, function: "close")
    }
}

extension Syscall {
    /// Runs a `connect(2)` call: `EINPROGRESS` (and `EINTR`, after which the kernel carries on
    /// connecting in the background; a retry would only say `EALREADY`) come back as `.inProgress`.
    static func connect(_ body: () -> CInt) throws(IOError) -> ConnectResult {
        if body() == 0 { return .connected }
        let code = errno
        switch code {
        case EINPROGRESS, EINTR: return .inProgress
        default: throw IOError(errno: code, function: "connect")
        }
    }
}

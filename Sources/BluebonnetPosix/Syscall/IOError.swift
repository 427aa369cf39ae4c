import Glibc

/// A system call that failed: the `errno` it set and the call's name.
///
/// `EINTR` is never seen here (the syscall door retries it) and neither are `EAGAIN`/`EWOULDBLOCK`
/// on non-blocking descriptors (they come back as `IOResult.wouldBlock`).
public struct IOError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value the call set, e.g. `ECONNREFUSED`.
    public let errno: CInt
    private let _function: StaticString

    /// The name of the failed call, e.g. `"connect"`.
    public var function: String { _function.description }

    /// An error for `function` failing with `errno`.
    public init(errno: CInt, function: StaticString) {
        self.errno = errno
        self._function = function
    }

    /// The system's text for `errno` (from `strerror_r`), e.g. `"Connection refused"`.
    public var reason: String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { buffer in
            guard let base = buffer.baseAddress, strerror_r(errno, base, buffer.count) == 0 else {
                return "errno \(errno)"
            }
            return String(cString: base)
        }
    }

    /// `"<function> failed: <reason> (errno <n>)"`.
    public var description: String { "\(function) failed: \(reason) (errno \(errno))" }

    /// Equal when `errno` and the function name are.
    public static func == (lhs: IOError, rhs: IOError) -> Bool {
        lhs.errno == rhs.errno && lhs.function == rhs.function
    }

    /// Hashes `errno` and the function name.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(errno)
        hasher.combine(function)
    }

    /// Whether the peer reset the connection (`ECONNRESET`).
    public var isConnectionReset: Bool { errno == ECONNRESET }
}

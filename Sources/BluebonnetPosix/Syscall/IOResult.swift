/// The outcome of a non-blocking operation: done, or the kernel said "try again when ready".
///
/// `EAGAIN`/`EWOULDBLOCK` is a normal state on a non-blocking descriptor, not a failure, so it is a
/// value here; real failures are thrown as `IOError`.
public enum IOResult<Value: ~Copyable>: ~Copyable {
    /// The call completed with `Value` (for reads and writes, a byte count; 0 on a read means end of stream).
    case processed(Value)
    /// The call would have blocked (`EAGAIN`/`EWOULDBLOCK`, or `EINPROGRESS` where documented); wait for readiness.
    case wouldBlock
}

extension IOResult: Copyable where Value: Copyable {}
extension IOResult: Sendable where Value: Sendable & ~Copyable {}
extension IOResult: Equatable where Value: Equatable {}
extension IOResult: Hashable where Value: Hashable {}

extension IOResult where Value: Copyable {
    /// The value when processed, or nil when the call would have blocked.
    public var processedValue: Value? {
        if case .processed(let value) = self { return value }
        return nil
    }
}

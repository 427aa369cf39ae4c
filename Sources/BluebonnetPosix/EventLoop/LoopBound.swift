/// A value that belongs to one event loop's thread, made `Sendable` so that it can ride along in
/// `execute`/`scheduleTask` closures back to that loop.
///
/// `@unchecked Sendable`: the value is only reachable through `value`, which checks that the caller
/// is on the loop's thread; creating one off the loop is also a precondition failure. So the value
/// never crosses threads even though the box does.
public struct LoopBound<Value>: @unchecked Sendable {
    private let _value: Value
    /// The loop whose thread may touch the value.
    public let eventLoop: EventLoop

    /// Wraps `value`; call on `eventLoop`'s thread.
    public init(_ value: Value, eventLoop: EventLoop) {
        eventLoop.preconditionInEventLoop()
        self._value = value
        self.eventLoop = eventLoop
    }

    /// The value; call on `eventLoop`'s thread.
    public var value: Value {
        eventLoop.preconditionInEventLoop()
        return _value
    }
}

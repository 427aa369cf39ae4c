/// A handle to a task scheduled on an `EventLoop`, to cancel it.
public struct Scheduled: Sendable {
    let loop: EventLoop
    let id: UInt64

    /// Cancels the task if it has not run yet. Returns true when it was cancelled (it will never
    /// run), false when it already ran or was already cancelled. Callable from any thread; from the
    /// loop thread a true result is exact, from another thread the task may be just about to start.
    @discardableResult
    public func cancel() -> Bool {
        loop.cancelTimer(id)
    }
}

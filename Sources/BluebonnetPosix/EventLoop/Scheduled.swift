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

/// An object a loop timer tells when it is due, without a closure: see
/// ``EventLoop/scheduleTimer(deadline:target:token:)``.
public protocol EventLoopTimerTarget: AnyObject, Sendable {
    /// The timer scheduled with `token` is due; called on the loop thread. A target that
    /// re-arms can pass a generation as the token and ignore a timer it has since replaced.
    func eventLoopTimerFired(token: UInt64)
}

import Glibc

/// A counting semaphore for real threads (`sem_t`), for waits that must block a thread: the resolver's
/// worker threads and `syncShutdownGracefully()`. Never wait on one from an event loop thread.
final class ThreadSemaphore: @unchecked Sendable {
    // @unchecked Sendable: `sem_t` is made for use from many threads; the pointer never changes.
    private let semaphore: UnsafeMutablePointer<sem_t>

    init(value: UInt32 = 0) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, value)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Adds one to the count, waking one waiter.
    func signal() {
        sem_post(semaphore)
    }

    /// Waits until the count is positive, then takes one (retrying `EINTR`).
    func wait() {
        do {
            _ = try Syscall.complete("sem_wait") { sem_wait(semaphore) }
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

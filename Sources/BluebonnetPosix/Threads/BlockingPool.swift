import Synchronization

/// A few threads for calls that block (`getaddrinfo`), so that no event loop thread and no
/// cooperative-pool thread ever waits in one.
///
/// Threads start on demand, up to `maximumThreads`, and then stay, waiting for work on a semaphore.
/// Work runs in submission order (several at once when several threads are busy). `package`, so
/// that `BluebonnetCache`'s disk store runs its file work on a pool of its own.
package final class BlockingPool: Sendable {
    private struct State {
        var queue: [@Sendable () -> Void] = []
        var head = 0
        var threads = 0
        var idle = 0
    }

    private let maximumThreads: Int
    private let state = Mutex(State())
    private let available = ThreadSemaphore()

    /// The pool the resolver uses: four threads at most, so a slow DNS server cannot pile up threads.
    static let shared = BlockingPool(maximumThreads: 4)

    package init(maximumThreads: Int) {
        precondition(maximumThreads > 0)
        self.maximumThreads = maximumThreads
    }

    /// Queues `work` to run on a pool thread. Throws when a needed first thread cannot be started.
    package func submit(_ work: @escaping @Sendable () -> Void) throws(IOError) {
        let spawn = state.withLock { state -> Int? in
            state.queue.append(work)
            guard state.idle == 0 && state.threads < maximumThreads else { return nil }
            state.threads += 1
            return state.threads
        }
        if let number = spawn {
            do throws(IOError) {
                try ThreadSpawner.spawnDetached(name: "bb-blocking-\(number)") { [self] in self.serve() }
            } catch {
                let alone = state.withLock { state -> Bool in
                    state.threads -= 1
                    if state.threads == 0 { state.queue.removeLast() }
                    return state.threads == 0
                }
                // With another thread alive the work is still served; with none it cannot be.
                if alone { throw error }
            }
        }
        available.signal()
    }

    private func serve() {
        while true {
            state.withLock { $0.idle += 1 }
            available.wait()
            let work = state.withLock { state -> @Sendable () -> Void in
                state.idle -= 1
                let work = state.queue[state.head]
                state.head += 1
                if state.head == state.queue.count {
                    state.queue.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return work
            }
            work()
        }
    }
}

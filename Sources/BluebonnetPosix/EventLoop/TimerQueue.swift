import BluebonnetCore

/// The loop's scheduled tasks: a binary min-heap of (deadline, id) plus the work by id.
///
/// Equal deadlines run in the order they were scheduled (ids grow). Cancelling removes the work at
/// once and leaves the heap entry to be skipped when it surfaces; the heap is rebuilt when skipped
/// entries outnumber live ones, so cancelled long timeouts cannot pile up.
///
/// Work is a `TimerWork` value rather than a bare closure: a closure stored in a generic container
/// is wrapped in a reabstraction thunk, one allocation per insert, and a `.target` entry (an object
/// told with a token) needs no closure at all.
struct TimerQueue {
    struct Entry {
        var deadline: MonotonicTime
        var id: UInt64

        func runsBefore(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : id < other.id
        }
    }

    private var heap: [Entry] = []
    private var work: [UInt64: TimerWork] = [:]
    private var nextID: UInt64 = 1

    /// How many tasks are waiting (cancelled ones not counted).
    var count: Int { work.count }

    /// Adds `task` at `deadline`; returns its id and whether it is now the earliest.
    mutating func insert(deadline: MonotonicTime, _ task: @escaping @Sendable () -> Void) -> (id: UInt64, isEarliest: Bool) {
        insert(deadline: deadline, work: .closure(task))
    }

    /// Adds `task` at `deadline`; returns its id and whether it is now the earliest.
    mutating func insert(deadline: MonotonicTime, work task: TimerWork) -> (id: UInt64, isEarliest: Bool) {
        let id = nextID
        nextID &+= 1
        work[id] = task
        heap.append(Entry(deadline: deadline, id: id))
        siftUp(heap.count - 1)
        return (id, heap[0].id == id)
    }

    /// Cancels the task `id`; false when it already ran or was cancelled.
    mutating func cancel(_ id: UInt64) -> Bool {
        guard work.removeValue(forKey: id) != nil else { return false }
        if heap.count > 64 && heap.count > 2 &* work.count { compact() }
        return true
    }

    /// The earliest live deadline (dropping cancelled entries from the top).
    mutating func earliestDeadline() -> MonotonicTime? {
        while let top = heap.first {
            if work[top.id] != nil { return top.deadline }
            removeTop()
        }
        return nil
    }

    /// Moves every task due at `now`, in deadline order, into `due`.
    mutating func popDue(now: MonotonicTime, into due: inout [TimerWork]) {
        while let top = heap.first, top.deadline <= now {
            removeTop()
            if let task = work.removeValue(forKey: top.id) { due.append(task) }
        }
    }

    /// Forgets every task without running it.
    mutating func removeAll() {
        heap.removeAll()
        work.removeAll()
    }

    // MARK: Heap

    private mutating func removeTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func compact() {
        heap.removeAll { work[$0.id] == nil }
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].runsBefore(heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var best = left
            let right = left + 1
            if right < heap.count && heap[right].runsBefore(heap[left]) { best = right }
            guard heap[best].runsBefore(heap[parent]) else { return }
            heap.swapAt(best, parent)
            parent = best
        }
    }
}

/// What a loop timer runs: a closure, or a target object told with its token (no closure to make).
enum TimerWork: Sendable {
    case closure(@Sendable () -> Void)
    case target(any EventLoopTimerTarget, token: UInt64)

    /// Runs the work (on the loop thread).
    func callAsFunction() {
        switch self {
        case .closure(let task): task()
        case .target(let target, let token): target.eventLoopTimerFired(token: token)
        }
    }
}

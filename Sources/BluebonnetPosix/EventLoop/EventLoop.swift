import BluebonnetCore
internal import CBluebonnetLinux
import Glibc
import Synchronization

/// One thread running an epoll loop: readiness handlers for registered descriptors, tasks, and timers.
///
/// **Level-triggered.** A descriptor is reported for as long as it is ready and its interest asks for
/// it. A handler may therefore read just part of what is waiting (to apply backpressure, or to be
/// fair to other connections) without losing the event, and a closed or paused reader is simply
/// registered without `.readable`. Write interest is meant to be on only while bytes are queued,
/// so level-triggering does not spin; changing interest costs one `epoll_ctl`.
///
/// **Timers** live in a min-heap of deadlines; the loop passes the time to the earliest one as the
/// `epoll_wait` timeout, rounded *up* to whole milliseconds, so a task never runs before its deadline
/// and runs at most about a millisecond after it. No timerfd is needed, so scheduling or cancelling
/// costs no system call (only a wake-up when a new earliest deadline is set from another thread).
///
/// **Tasks** (`execute`) may come from any thread: they are queued under a `Mutex`, and an eventfd
/// wakes the loop (at most one write per batch of tasks). Tasks run in the order they were queued.
///
/// **Swift jobs.** The loop is a `TaskExecutor` and a `SerialExecutor` (`EventLoop+Executor.swift`):
/// a job enqueued from another thread is queued like a task (one eventfd write per batch); a job
/// enqueued on the loop thread itself goes to a queue only that thread touches, with no lock and no
/// wake-up, and runs before the loop next blocks, in the same turn.
///
/// **Registrations** (`register`, `setInterest`, `deregister`) must be made on the loop thread, and
/// handlers run there. Each registration has a fresh generation number carried in the epoll data, so
/// an event still in flight for a descriptor that was deregistered (and whose number may already
/// belong to a new socket) is dropped, never delivered to the new owner.
///
/// The thread keeps the loop alive until `shutdownGracefully()` (or `syncShutdownGracefully()`)
/// stops it; the loop does not own registered descriptors and never closes them.
public final class EventLoop: Sendable, CustomStringConvertible {
    let epollDescriptor: CInt
    private let wakeDescriptor: CInt
    private let shared: Mutex<SharedState>
    private let threadID = Atomic<UInt>(0)
    /// How many eventfd writes woke this loop (``wakeUpCount``).
    private let wakeUps = Atomic<Int>(0)
    /// Wake-ups decided under `shared` and not yet written: counted up inside the locked section
    /// that decides to wake (so before the loop can reach `.closing`, which is set under the same
    /// lock and after which no section decides to wake), down once the write is done. `finish()`
    /// waits for none before it closes the eventfd: a writer preempted between the lock and its
    /// write would otherwise write to a closed descriptor (EBADF, a crash seen once in a loaded
    /// test run) or to whatever descriptor took its number meanwhile.
    private let wakersInFlight = Atomic<Int>(0)
    #if DEBUG
    /// Tests only (debug builds): run by a thread that decided to wake this loop, just before its
    /// eventfd write, to hold it in the window the loop's shutdown must wait out.
    let beforeWakeUpWriteForTesting = Mutex<(@Sendable () -> Void)?>(nil)
    #endif
    // @unchecked Sendable inside: only touched on the loop thread (see `LoopState`).
    let confined: LoopState
    private let number: Int

    private static let counter = Atomic<Int>(0)

    /// Epoll data reserved for the wake-up eventfd; registrations start at generation 1.
    private static let wakeData: UInt64 = 0

    /// Starts a loop on a new thread.
    public init() throws(IOError) {
        number = Self.counter.wrappingAdd(1, ordering: .relaxed).oldValue
        let epoll = try Syscall.complete("epoll_create1") { cbluebonnet_epoll_create1(CInt(EPOLL_CLOEXEC)) }
        let wake: CInt
        do throws(IOError) {
            wake = try Syscall.complete("eventfd") {
                cbluebonnet_eventfd(0, CInt(EFD_CLOEXEC | EFD_NONBLOCK))
            }
        } catch {
            try? Syscall.close(epoll)
            throw error
        }
        do throws(IOError) {
            _ = try Syscall.complete("epoll_ctl") {
                cbluebonnet_epoll_ctl(epoll, EPOLL_CTL_ADD, wake, EPOLLIN.rawValue, Self.wakeData)
            }
        } catch {
            try? Syscall.close(wake)
            try? Syscall.close(epoll)
            throw error
        }
        epollDescriptor = epoll
        wakeDescriptor = wake
        shared = Mutex(SharedState())
        confined = LoopState()
        do throws(IOError) {
            try ThreadSpawner.spawnDetached(name: "bb-loop-\(number)") { [self] in self.run() }
        } catch {
            try? Syscall.close(wake)
            try? Syscall.close(epoll)
            throw error
        }
    }

    /// `EventLoop(#n)`.
    public var description: String { "EventLoop(#\(number))" }

    // MARK: Thread identity

    /// Whether the caller runs on this loop's thread.
    public var inEventLoop: Bool {
        pthread_equal(pthread_self(), threadID.load(ordering: .acquiring)) != 0
    }

    /// Stops the program when the caller is not on this loop's thread.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "not on the thread of \(self)", file: file, line: line)
    }

    // MARK: The shared receive buffer

    /// Lends the receive buffer this loop's readers share; give it back with
    /// ``returnReceiveBuffer(_:)`` after the read's bytes were handed on. A reader that keeps
    /// some of them keeps the storage too (later reads go after them into its free tail, then to
    /// new storage: `ByteBuffer.withUnsafeMutableReceiveBytes`), but idle
    /// connections hold no receive storage of their own: 256 idle keep-alive connections would
    /// otherwise hold 16 MiB of 64 KiB buffers. Loop thread only; nesting is safe (an inner
    /// borrower gets an empty buffer).
    public func takeReceiveBuffer() -> ByteBuffer {
        preconditionInEventLoop()
        let buffer = confined.receiveBuffer
        confined.receiveBuffer = ByteBuffer()
        return buffer
    }

    /// Gives back what ``takeReceiveBuffer()`` lent. Loop thread only.
    public func returnReceiveBuffer(_ buffer: ByteBuffer) {
        preconditionInEventLoop()
        confined.receiveBuffer = buffer
    }

    // MARK: Tasks

    /// Runs `work` on the loop thread, after the tasks queued before it. Callable from any thread.
    ///
    /// - Warning: once the loop has stopped, `work` is dropped without running; use `submit` to
    ///   learn about that.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        _ = enqueue(.closure(work))
    }

    /// Runs `work` on the loop thread and returns its result to the awaiting task.
    /// Throws `IOError` with `ESHUTDOWN` when the loop has already stopped.
    public func submit<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async throws(IOError) -> Result {
        let outcome: Swift.Result<Result, IOError> = await withCheckedContinuation { continuation in
            let accepted = enqueue(.closure { continuation.resume(returning: .success(work())) })
            if !accepted { continuation.resume(returning: .failure(IOError(errno: ESHUTDOWN, function: "EventLoop.submit"))) }
        }
        return try outcome.get()
    }

    /// Queues `work`; false when the loop has stopped.
    func enqueue(_ work: Work) -> Bool {
        let onLoop = inEventLoop
        let (accepted, wake) = shared.withLock { state -> (Bool, Bool) in
            guard state.lifecycle.acceptsWork else { return (false, false) }
            state.tasks.append(work)
            // The loop looks at the queue before it blocks, so its own thread need not wake it.
            if onLoop || state.wakeupPending { return (true, false) }
            state.wakeupPending = true
            wakersInFlight.add(1, ordering: .relaxed)
            return (true, true)
        }
        if wake { wakeUp() }
        return accepted
    }

    // MARK: Timers

    /// Runs `work` on the loop thread at `deadline` (or soon after); callable from any thread.
    ///
    /// Tasks run in deadline order, equal deadlines in scheduling order. Cancel with the returned
    /// handle. Tasks still pending when the loop shuts down are dropped without running, and so are
    /// tasks scheduled after it stopped (their handle's `cancel()` returns false).
    @discardableResult
    public func scheduleTask(deadline: Deadline, _ work: @escaping @Sendable () -> Void) -> Scheduled {
        schedule(deadline: deadline, .closure(work))
    }

    /// Tells `target` on the loop thread at `deadline` (or soon after), passing `token` back;
    /// callable from any thread.
    ///
    /// `scheduleTask(deadline:_:)` without a closure: an object that keeps re-arming a timer (an
    /// exchange's idle timeouts, once or twice per request) schedules itself, and scheduling
    /// allocates nothing. The loop holds `target` strongly until the timer fires or is cancelled.
    /// The same ordering, cancellation and shutdown rules apply.
    @discardableResult
    public func scheduleTimer(deadline: Deadline, target: any EventLoopTimerTarget, token: UInt64) -> Scheduled {
        schedule(deadline: deadline, .target(target, token: token))
    }

    private func schedule(deadline: Deadline, _ work: TimerWork) -> Scheduled {
        let onLoop = inEventLoop
        let (id, wake) = shared.withLock { state -> (UInt64, Bool) in
            guard state.lifecycle.acceptsWork else { return (0, false) }
            let (id, isEarliest) = state.timers.insert(deadline: deadline.time, work: work)
            if onLoop || !isEarliest || state.wakeupPending { return (id, false) }
            state.wakeupPending = true
            wakersInFlight.add(1, ordering: .relaxed)
            return (id, true)
        }
        if wake { wakeUp() }
        return Scheduled(loop: self, id: id)
    }

    /// Runs `work` on the loop thread after `delay`; see `scheduleTask(deadline:_:)`.
    @discardableResult
    public func scheduleTask(in delay: Duration, _ work: @escaping @Sendable () -> Void) -> Scheduled {
        scheduleTask(deadline: .after(delay), work)
    }

    /// Cancels timer `id`; false when it already ran, was cancelled, or never existed.
    func cancelTimer(_ id: UInt64) -> Bool {
        guard id != 0 else { return false }
        return shared.withLock { $0.timers.cancel(id) }
    }

    // MARK: Shutdown

    /// Stops the loop: runs the tasks already queued (and those they queue), drops pending timers and
    /// registrations (without closing their descriptors), closes the epoll and eventfd descriptors,
    /// and returns once the thread has finished. Calling it again waits for the same end.
    public func shutdownGracefully() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            shutdown { continuation.resume() }
        }
    }

    /// `shutdownGracefully()` for synchronous callers: blocks the calling thread until the loop has
    /// stopped. Must not be called on the loop's own thread (it would wait for itself).
    public func syncShutdownGracefully() {
        precondition(!inEventLoop, "syncShutdownGracefully() on the loop thread of \(self) would deadlock")
        let done = ThreadSemaphore()
        shutdown { done.signal() }
        done.wait()
    }

    /// Whether the loop has stopped (its descriptors are closed).
    public var isShutDown: Bool { shared.withLock { $0.lifecycle == .stopped } }

    private func shutdown(then completion: @escaping @Sendable () -> Void) {
        let onLoop = inEventLoop
        let (finished, wake) = shared.withLock { state -> (Bool, Bool) in
            switch state.lifecycle {
            case .stopped:
                return (true, false)
            case .shuttingDown, .closing:
                state.completions.append(completion)
                return (false, false)
            case .running:
                state.lifecycle = .shuttingDown
                state.completions.append(completion)
                if onLoop || state.wakeupPending { return (false, false) }
                state.wakeupPending = true
                wakersInFlight.add(1, ordering: .relaxed)
                return (false, true)
            }
        }
        if finished { completion() }
        if wake { wakeUp() }
    }

    // MARK: The loop

    /// How many times another thread woke this loop through its eventfd, since it started. Each is
    /// a write on one side and a return from `epoll_wait` on the other: the cost a hand-off to the
    /// loop pays, which work queued on the loop thread itself never pays. For tests and
    /// measurements.
    package var wakeUpCount: Int { wakeUps.load(ordering: .relaxed) }

    /// Writes the eventfd; called once for each wake-up counted in `wakersInFlight`, which it
    /// counts down when done.
    private func wakeUp() {
        wakeUps.add(1, ordering: .relaxed)
        #if DEBUG
        beforeWakeUpWriteForTesting.withLock { $0 }?()
        #endif
        var one: UInt64 = 1
        do {
            // `.wouldBlock` means the counter is saturated: the loop is woken anyway.
            _ = try Syscall.run("write") { Glibc.write(wakeDescriptor, &one, MemoryLayout<UInt64>.size) }
        } catch {
            preconditionFailure("waking \(self): \(error)")
        }
        wakersInFlight.subtract(1, ordering: .releasing)
    }

    private func drainWakeups() {
        var count: UInt64 = 0
        do {
            _ = try Syscall.run("read") { Glibc.read(wakeDescriptor, &count, MemoryLayout<UInt64>.size) }
        } catch {
            preconditionFailure("draining wake-ups of \(self): \(error)")
        }
    }

    private func run() {
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
        let state = confined
        var due: [TimerWork] = []
        var running: [Work] = []
        while true {
            // 1. How long may we block? Not at all with work queued or a shutdown asked for.
            let localJobs = !state.jobs.isEmpty
            let timeout: CInt = shared.withLock { shared in
                if localJobs || !shared.tasks.isEmpty || shared.lifecycle != .running { return 0 }
                guard let next = shared.timers.earliestDeadline() else { return -1 }
                return Self.milliseconds(until: next, now: MonotonicTime.now)
            }

            // 2. Wait for readiness and dispatch it.
            let ready: CInt
            do {
                ready = try Syscall.complete("epoll_wait") {
                    cbluebonnet_epoll_wait(epollDescriptor, state.events, LoopState.eventCapacity, timeout)
                }
            } catch {
                preconditionFailure("\(self): \(error)")
            }
            for index in 0..<ready {
                let data = cbluebonnet_epoll_event_data(state.events, index)
                if data == Self.wakeData {
                    drainWakeups()
                    continue
                }
                dispatch(generation: data, events: IOEvents(epoll: cbluebonnet_epoll_event_events(state.events, index)))
            }
            // Jobs the handlers queued (a continuation resumed with a response) run now.
            runLocalJobs()

            // 3. Timers that are due, in deadline order.
            let now = MonotonicTime.now
            shared.withLock { $0.timers.popDue(now: now, into: &due) }
            for task in due { task() }
            due.removeAll(keepingCapacity: true)
            runLocalJobs()

            // 4. Tasks queued so far (those they queue run in the next turn).
            let idle = state.jobs.isEmpty
            let stopping = shared.withLock { shared -> Bool in
                swap(&shared.tasks, &running)
                shared.wakeupPending = false
                guard shared.lifecycle == .shuttingDown && running.isEmpty && idle else { return false }
                // From here on no task is accepted, so none can be queued and then dropped.
                shared.lifecycle = .closing
                return true
            }
            if stopping { break }
            for work in running {
                switch work {
                case .closure(let task): task()
                case .job(let job): runJob(job)
                }
            }
            running.removeAll(keepingCapacity: true)
            runLocalJobs()
        }
        // From here on a job enqueued on this thread goes where jobs for a stopped loop go.
        state.acceptsJobs = false
        finish()
    }

    private func finish() {
        // Handlers may own sockets: dropping them here (on the loop thread) may close those.
        confined.registrations.removeAll()
        confined.descriptors.removeAll()
        // A thread that decided to wake the loop before it reached `.closing` may not have written
        // yet (`wakersInFlight`); no new one can start now. Rarely more than a few yields.
        while wakersInFlight.load(ordering: .acquiring) != 0 { sched_yield() }
        try? Syscall.close(wakeDescriptor)
        try? Syscall.close(epollDescriptor)
        let (completions, timers) = shared.withLock { shared -> ([@Sendable () -> Void], TimerQueue) in
            shared.lifecycle = .stopped
            defer {
                shared.completions.removeAll()
                shared.timers = TimerQueue()
            }
            return (shared.completions, shared.timers)
        }
        _ = consume timers  // dropped outside the lock: releasing captures may run deinits
        threadID.store(0, ordering: .releasing)
        for completion in completions { completion() }
    }

    /// Milliseconds from `now` to `deadline`, rounded up (so the loop never wakes early for it).
    static func milliseconds(until deadline: MonotonicTime, now: MonotonicTime) -> CInt {
        let (left, overflow) = deadline.nanoseconds.subtractingReportingOverflow(now.nanoseconds)
        if overflow { return deadline > now ? CInt.max : 0 }
        guard left > 0 else { return 0 }
        return CInt(clamping: left / 1_000_000 + (left % 1_000_000 == 0 ? 0 : 1))
    }
}

extension EventLoop {
    /// What the loop's queue holds: a closure (`execute`, `submit`) or a Swift job from another
    /// thread (`enqueue(_:)` of the executor). One queue, so both run in the order they came.
    enum Work {
        case closure(@Sendable () -> Void)
        case job(UnownedJob)
    }

    /// What the loop shares with other threads, under `shared`'s mutex.
    struct SharedState {
        /// `running` → `shuttingDown` (asked to stop; queued tasks still run, new ones accepted) →
        /// `closing` (queue empty; nothing accepted any more; descriptors being closed) → `stopped`.
        enum Lifecycle {
            case running, shuttingDown, closing, stopped

            var acceptsWork: Bool { self == .running || self == .shuttingDown }
        }

        var tasks: [Work] = []
        var timers = TimerQueue()
        /// An eventfd write is on its way (or the loop is awake anyway): producers need not write.
        var wakeupPending = false
        var lifecycle = Lifecycle.running
        var completions: [@Sendable () -> Void] = []
    }

    /// State confined to the loop thread.
    ///
    /// `@unchecked Sendable`: only touched on the loop thread — by `run()`, and by the registration
    /// methods, which check `preconditionInEventLoop()` first — so no lock is needed.
    final class LoopState: @unchecked Sendable {
        struct Entry {
            var descriptor: CInt
            var interest: IOEvents
            var handler: (IOEvents) -> Void
        }

        static let eventCapacity: CInt = 64

        /// Live registrations by generation.
        var registrations: [UInt64: Entry] = [:]
        /// The receive buffer the loop's connections share (see `takeReceiveBuffer`).
        var receiveBuffer = ByteBuffer()
        /// The live generation of each registered descriptor number.
        var descriptors: [CInt: UInt64] = [:]
        var nextGeneration: UInt64 = 1
        /// Swift jobs enqueued on the loop thread itself, run before the loop next blocks.
        var jobs: [UnownedJob] = []
        /// The array `runLocalJobs` swaps in while it runs a batch (kept for its capacity).
        var runningJobs: [UnownedJob] = []
        /// Swift jobs run from `jobs` so far (`jobsRunCount`).
        var jobsRun = 0
        /// False once the loop left its run loop: jobs then go to the stopped loops' runner.
        var acceptsJobs = true
        /// The `epoll_wait` output array (packed `struct epoll_event`s, read through the C shims).
        let events: UnsafeMutablePointer<epoll_event>

        init() {
            // Sized by C (the struct is packed on x86-64) and only ever read through the C shims.
            let bytes = Int(cbluebonnet_epoll_event_size()) * Int(Self.eventCapacity)
            events = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 8)
                .bindMemory(to: epoll_event.self, capacity: Int(Self.eventCapacity))
        }

        deinit {
            UnsafeMutableRawPointer(events).deallocate()
        }
    }
}

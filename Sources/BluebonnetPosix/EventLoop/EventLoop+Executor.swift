import Glibc
import Synchronization

// The loop as a Swift executor (SE-0392 `SerialExecutor`, SE-0417 `TaskExecutor`).
//
// A job enqueued on the loop thread itself (a continuation resumed by an I/O handler, a task on the
// loop that resumes another) is appended to a queue that only the loop thread touches: no lock, no
// eventfd write. The loop runs that queue after each phase of its turn (I/O handlers, timers, the
// shared queue), so the job runs in the same turn, before the loop next blocks in `epoll_wait`. A
// job from another thread goes through the shared queue and its wake-up, like `execute`.
//
// Serial: one thread runs every job, one at a time, so an actor whose `unownedExecutor` is the loop
// is isolated by it, and `checkIsolated()` is a thread check. After the loop has stopped, jobs go to
// one process-wide thread that runs them one at a time (`StoppedLoopJobs`), so they are neither
// dropped (a dropped job is a task that never finishes) nor run concurrently (which would break an
// actor's isolation).

extension EventLoop: TaskExecutor, SerialExecutor {
    /// Runs `job` on the loop thread (the executor's one duty).
    ///
    /// - On the loop thread: queued without a lock or a wake-up, and run in the same turn of the
    ///   loop, before it next waits for I/O.
    /// - From another thread: queued after the work already queued, waking the loop (one eventfd
    ///   write per batch, as ``execute(_:)``).
    /// - Once the loop has stopped (or while it is closing): run on a thread kept for the jobs of
    ///   stopped loops, one job at a time, never dropped.
    ///
    /// Jobs run in the order they are enqueued from each thread; their priority is not looked at.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if inEventLoop, confined.acceptsJobs {
            confined.jobs.append(job)
            return
        }
        if !enqueue(.job(job)) { StoppedLoopJobs.shared.run(job, from: self) }
    }

    /// The loop as an unowned serial executor (for an actor's `unownedExecutor`).
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// The loop as an unowned task executor (what `withTaskExecutorPreference` records).
    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Whether `other` is this loop: two loops are two threads, never one execution context.
    public func isSameExclusiveExecutionContext(other: EventLoop) -> Bool {
        self === other
    }

    /// Stops the program unless the caller runs on this loop's thread (or, once the loop has
    /// stopped, on the thread that runs the jobs of stopped loops). Called by the runtime for
    /// `assumeIsolated` and isolation checks that its executor tracking cannot answer.
    public func checkIsolated() {
        precondition(isIsolatingCaller, "not on the thread of \(self)")
    }

    /// Whether the caller runs on this loop's thread (or on the stopped loops' job thread, once the
    /// loop has stopped): the runtime's question before it falls back to ``checkIsolated()``.
    public func isIsolatingCurrentContext() -> Bool? {
        isIsolatingCaller
    }

    private var isIsolatingCaller: Bool {
        inEventLoop || (StoppedLoopJobs.shared.isCurrentThread && isShutDown)
    }

    /// Runs a job on the loop thread with the loop as its task executor, and no serial executor.
    ///
    /// Not `isolatedTo:` the loop: the runtime would then take every hop of the job's task to the
    /// generic executor (the entry of a nonisolated async function, the return from an `await`)
    /// for a change of isolation, and enqueue the rest of the task on its preferred executor —
    /// this loop — instead of running on, a trip through the job queue per hop. Run this way, a
    /// task preferring the loop stays on it through such hops. An actor on the loop is still
    /// isolated by the loop's one thread (`checkIsolated()` answers for it); its hops to itself
    /// take that trip instead, and no actor of Bluebonnet's runs on a loop.
    func runJob(_ job: UnownedJob) {
        job.runSynchronously(on: asUnownedTaskExecutor())
    }

    /// How many Swift jobs this loop has run on its thread from its local queue (those enqueued
    /// on the loop thread itself). Loop thread only; for tests.
    package var jobsRunCount: Int {
        preconditionInEventLoop()
        return confined.jobsRun
    }

    /// Runs the jobs queued on the loop thread, and those they queue, for a few rounds: a task that
    /// keeps yielding cannot keep the loop from its I/O (what is left runs in the next turn, which
    /// then does not block).
    func runLocalJobs() {
        let state = confined
        var rounds = 0
        while !state.jobs.isEmpty && rounds < 16 {
            swap(&state.jobs, &state.runningJobs)
            for job in state.runningJobs {
                state.jobsRun &+= 1
                runJob(job)
            }
            state.runningJobs.removeAll(keepingCapacity: true)
            rounds += 1
        }
    }
}

/// The one thread that runs the jobs of stopped loops, one at a time (so an actor on a stopped loop
/// stays isolated), made the first time a job arrives after a loop stopped.
final class StoppedLoopJobs: Sendable {
    static let shared = StoppedLoopJobs()

    private let pool = BlockingPool(maximumThreads: 1)
    private let thread = Atomic<UInt>(0)
    /// How many jobs arrived after their loop had stopped (for tests).
    let count = Atomic<Int>(0)

    var isCurrentThread: Bool {
        let id = thread.load(ordering: .acquiring)
        return id != 0 && pthread_equal(pthread_self(), id) != 0
    }

    func run(_ job: UnownedJob, from loop: EventLoop) {
        count.add(1, ordering: .relaxed)
        do throws(IOError) {
            try pool.submit { [self] in
                self.thread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
                loop.runJob(job)
            }
        } catch {
            // No thread could be made for it: the job would be lost, and its task with it.
            fatalError("\(loop) has stopped and no thread could be started for a Swift job enqueued on it: \(error)")
        }
    }
}

extension EventLoop {
    /// How many Swift jobs were enqueued on a loop after it had stopped, in this process (each ran on
    /// the stopped loops' thread). For tests.
    package static var jobsAfterShutdown: Int { StoppedLoopJobs.shared.count.load(ordering: .relaxed) }
}

import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Synchronization
import Testing

/// An actor whose executor is a loop: isolated by the loop's one thread.
private actor LoopActor {
    let loop: EventLoop
    var counter = 0

    init(loop: EventLoop) { self.loop = loop }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    func increment() -> Bool {
        counter += 1
        return loop.inEventLoop
    }

    /// Awaits its own isolated async method (a hop back to itself, which goes through the loop's
    /// queue since jobs run with the loop as task executor only), then checks its isolation.
    func incrementTwiceThroughItself() async -> Bool {
        let first = await incrementLater()
        let second = await incrementLater()
        assertIsolated("the actor's own hop left its isolation")
        return first && second && loop.inEventLoop
    }

    private func incrementLater() async -> Bool {
        await Task.yield()
        return increment()
    }
}

extension PosixTests {
    /// The loop as a Swift executor (`EventLoop+Executor.swift`): SE-0417 `TaskExecutor`, SE-0392
    /// `SerialExecutor`.
    @Suite(.noLeakedDescriptors) struct EventLoopExecutorTests {
        /// The loop thread's identity, asked of the loop itself.
        private static func loopThread(_ loop: EventLoop) async throws -> pthread_t {
            try await loop.submit { pthread_self() }
        }

        @Test func aTaskPreferringTheLoopRunsOnItsThread() async throws {
            try await expectNoLeakedDescriptors {
                let loop = try EventLoop()
                let thread = try await Self.loopThread(loop)
                let (onLoop, sameThread) = await withTaskExecutorPreference(loop) {
                    (loop.inEventLoop, pthread_equal(pthread_self(), thread) != 0)
                }
                #expect(onLoop)
                #expect(sameThread)
                // Still there after a suspension resumed from another thread.
                let resumedOnLoop = await withTaskExecutorPreference(loop) {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        Thread.detached { continuation.resume() }
                    }
                    return pthread_equal(pthread_self(), thread) != 0
                }
                #expect(resumedOnLoop)
                await loop.shutdownGracefully()
            }
        }

        @Test func jobsEnqueuedOnTheLoopNeedNoWakeUp() async throws {
            let loop = try EventLoop()
            let (yielded, resumed, wakeUps) = await withTaskExecutorPreference(loop) {
                let before = loop.wakeUpCount
                // Each yield enqueues the task's next job from the loop thread.
                var yielded = 0
                for _ in 0..<200 {
                    await Task.yield()
                    if loop.inEventLoop { yielded += 1 }
                }
                // A continuation resumed by work on the loop (as an I/O handler resumes one).
                var resumed = 0
                for _ in 0..<200 {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        loop.execute { continuation.resume() }
                    }
                    if loop.inEventLoop { resumed += 1 }
                }
                return (yielded, resumed, loop.wakeUpCount - before)
            }
            #expect(yielded == 200)
            #expect(resumed == 200)
            #expect(wakeUps == 0, "jobs and tasks queued on the loop thread woke it \(wakeUps) times")
            await loop.shutdownGracefully()
        }

        @Test func jobsFromOtherThreadsWakeTheLoop() async throws {
            let loop = try EventLoop()
            _ = try await loop.submit {}
            let before = loop.wakeUpCount
            // The counter counts: entering the preference from the global executor is a hand-off.
            await withTaskExecutorPreference(loop) { #expect(loop.inEventLoop) }
            #expect(loop.wakeUpCount > before)
            await loop.shutdownGracefully()
        }

        /// A task preferring the loop, resumed on it, runs on through its hop back to the generic
        /// executor after the `await`: one job per resumption. Jobs run isolated to the loop made
        /// that hop a change of isolation, and queued a second job for the rest of the task.
        @Test func aResumedTaskRunsOnThroughItsHopToTheGenericExecutor() async throws {
            let loop = try EventLoop()
            let rounds = 100
            let jobs = await withTaskExecutorPreference(loop) {
                let before = loop.jobsRunCount
                for _ in 0..<rounds {
                    await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                        loop.execute { continuation.resume() }
                    }
                }
                return loop.jobsRunCount - before
            }
            #expect(jobs >= rounds)
            #expect(jobs <= rounds + rounds / 10, "\(jobs) jobs for \(rounds) resumptions")
            await loop.shutdownGracefully()
        }

        @Test func anActorOnTheLoopIsIsolatedByItsThread() async throws {
            let loop = try EventLoop()
            let actor = LoopActor(loop: loop)
            let results = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<100 { group.addTask { await actor.increment() } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(results.allSatisfy { $0 }, "an actor job ran off the loop thread")
            #expect(await actor.counter == 100)
            // Hops of the actor back to itself, from a task on the global executor and from one
            // preferring the loop, stay on the loop thread and isolated (`checkIsolated`).
            #expect(await actor.incrementTwiceThroughItself())
            #expect(await withTaskExecutorPreference(loop) { await actor.incrementTwiceThroughItself() })
            #expect(await actor.counter == 104)
            let counted = try await loop.submit { actor.assumeIsolated { $0.counter } }
            #expect(counted == 104)
            // `checkIsolated`/`isIsolatingCurrentContext` agree with the thread.
            let isolated = try await loop.submit { loop.isIsolatingCurrentContext() }
            #expect(isolated == true)
            #expect(loop.isIsolatingCurrentContext() == false)
            #expect(loop.isSameExclusiveExecutionContext(other: loop))
            let other = try EventLoop()
            #expect(!loop.isSameExclusiveExecutionContext(other: other))
            await other.shutdownGracefully()
            await loop.shutdownGracefully()
        }

        /// The rule: a job is never dropped. Jobs queued when the shutdown starts run on the loop
        /// before it stops; jobs that arrive after it stopped run on the one thread kept for the
        /// jobs of stopped loops, one at a time. So neither shutdown nor a late job hangs a task.
        @Test func shutdownNeitherDropsNorHangsJobs() async throws {
            let loop = try EventLoop()
            let late = EventLoop.jobsAfterShutdown
            // Tasks on the loop, each suspended until after the loop has stopped.
            let gate = LoopRecord<[CheckedContinuation<Void, Never>]>([])
            let yielders = LoopRecord(0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 {
                    group.addTask(executorPreference: loop) {
                        await withCheckedContinuation { continuation in
                            gate.update { $0.append(continuation) }
                        }
                    }
                    // Busy tasks: their jobs are queued on the loop while it shuts down.
                    group.addTask(executorPreference: loop) {
                        for _ in 0..<100 { await Task.yield() }
                        yielders.update { $0 += 1 }
                    }
                }
                while gate.value.count < 10 { await Task.yield() }
                await loop.shutdownGracefully()
                #expect(loop.isShutDown)
                // Resumed now: their next jobs go to a stopped loop.
                for continuation in gate.value { continuation.resume() }
                try await group.waitForAll()
            }
            #expect(yielders.value == 10)
            #expect(EventLoop.jobsAfterShutdown >= late + 10)
            // A task preferring a stopped loop still runs, serially, off the loop's (gone) thread.
            let ran = await withTaskExecutorPreference(loop) { !loop.inEventLoop }
            #expect(ran)
        }
    }
}

/// A plain thread for the tests' "another thread" (not a task, not a loop).
private enum Thread {
    static func detached(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let created = pthread_create(&thread, nil, { pointer in
            let box = Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        precondition(created == 0)
        pthread_detach(thread)
    }
}

#if BLUEBONNET_TSAN
/// A continuation's hand-off told to ThreadSanitizer: what every module's
/// `withCheckedContinuation` (and its three siblings) adds in a ThreadSanitizer build
/// (`scripts/sanitize.sh thread`, `-DBLUEBONNET_TSAN`).
///
/// The Swift runtime (6.3.1, Linux) tells ThreadSanitizer about half of a continuation's
/// hand-off: resuming releases on the awaiting task's address (`__tsan_release` in
/// `resumeTaskAfterContinuation`), and a task that was suspended acquires that address when an
/// executor runs it again (`swift_job_run`). A task that reaches its `await` after the
/// continuation was already resumed does not suspend: `swift_continuation_await` sees the
/// "resumed" status with an atomic load inside the uninstrumented runtime and carries on on the
/// same thread, and nothing acquires. ThreadSanitizer then reports the awaiting task's first read
/// of what the resuming thread made (a buffer, an object) as a race, although the resume happens
/// before it (`scripts/sanitizers/continuation-repro.swift`: one report per 2,000 hand-offs).
///
/// ``acquireResumption()`` is the missing half: called right after the `await`, it acquires the
/// current task's address, which the resume released. Nothing more is claimed: what the
/// resuming thread writes after `resume` is still reported (checked with the reproduction's
/// negative control, a write to the object after the resume).
///
/// Each module (and test target) that awaits continuations declares
/// `withCheckedContinuation`, `withCheckedThrowingContinuation`, `withUnsafeContinuation` and
/// `withUnsafeThrowingContinuation` in its `SanitizerMutexAlias.swift`, under the flag: the same
/// signatures as the standard library's, which they call before ``acquireResumption()``. A
/// module's own declaration shadows the standard library's, so no use site changes; without the
/// flag neither those nor this type exist.
package enum SanitizerContinuation {
    /// Acquires, for ThreadSanitizer, what a resume of the current task's continuation released.
    /// Outside a task it does nothing.
    package static func acquireResumption() {
        withUnsafeCurrentTask { task in
            // `UnsafeCurrentTask` is the task's address, the one the runtime releases on resume.
            guard let task else { return }
            tsanAcquire(unsafeBitCast(task, to: UnsafeMutableRawPointer.self))
        }
    }
}
#endif

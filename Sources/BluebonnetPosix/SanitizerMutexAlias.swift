import BluebonnetCore

#if BLUEBONNET_TSAN
// ThreadSanitizer builds (scripts/sanitize.sh thread, -DBLUEBONNET_TSAN): this module's `Mutex`
// is BluebonnetCore's `SanitizerMutex`, the same lock with its hand-offs told to ThreadSanitizer
// (see its doc comment). A module's own declaration shadows Synchronization's `Mutex`.
typealias Mutex<Value: ~Copyable> = SanitizerMutex<Value>
#endif

#if BLUEBONNET_TSAN
// ThreadSanitizer builds: this module's continuations tell ThreadSanitizer that the resume
// happens before what the awaiting task does next, which the Swift runtime leaves out when the
// resume comes first (BluebonnetCore's `SanitizerContinuation` says why). Each has the standard
// library's signature, which a module's own declaration shadows, and calls it.
func withCheckedContinuation<T>(
    isolation: isolated (any Actor)? = #isolation, function: String = #function,
    _ body: (CheckedContinuation<T, Never>) -> Void
) async -> sending T {
    let value = await _Concurrency.withCheckedContinuation(isolation: isolation, function: function, body)
    SanitizerContinuation.acquireResumption()
    return value
}

func withCheckedThrowingContinuation<T>(
    isolation: isolated (any Actor)? = #isolation, function: String = #function,
    _ body: (CheckedContinuation<T, any Error>) -> Void
) async throws -> sending T {
    defer { SanitizerContinuation.acquireResumption() }
    return try await _Concurrency.withCheckedThrowingContinuation(isolation: isolation, function: function, body)
}

func withUnsafeContinuation<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (UnsafeContinuation<T, Never>) -> Void
) async -> sending T {
    let value = await _Concurrency.withUnsafeContinuation(isolation: isolation, body)
    SanitizerContinuation.acquireResumption()
    return value
}

func withUnsafeThrowingContinuation<T>(
    isolation: isolated (any Actor)? = #isolation, _ body: (UnsafeContinuation<T, any Error>) -> Void
) async throws -> sending T {
    defer { SanitizerContinuation.acquireResumption() }
    return try await _Concurrency.withUnsafeThrowingContinuation(isolation: isolation, body)
}
#endif

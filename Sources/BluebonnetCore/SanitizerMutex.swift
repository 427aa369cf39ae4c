import Synchronization

/// `Synchronization.Mutex` with its hand-offs told to ThreadSanitizer: what every module's
/// `Mutex` is in a ThreadSanitizer build (`scripts/sanitize.sh thread`).
///
/// In Swift 6.3 on Linux, `Mutex` locks and unlocks inside the (uninstrumented) Synchronization
/// library, through an atomic word and the futex system call, none of which ThreadSanitizer
/// sees. It therefore reports every value two threads touch under the same `Mutex` as a race.
/// Built with `-DBLUEBONNET_TSAN`, each module that uses `Mutex` declares
/// `typealias Mutex<Value> = SanitizerMutex<Value>` (its `SanitizerMutexAlias.swift`); a
/// module's own declaration shadows the imported one, so no use site changes. This type then
/// locks the same `Mutex` and tells ThreadSanitizer exactly what the lock guarantees: taking it
/// acquires what the last holder released (`__tsan_acquire` after locking, `__tsan_release`
/// before unlocking, on an address owned by this lock). Nothing more is claimed, so a value
/// touched outside the lock is still reported.
///
/// Without the flag it is that `Mutex` and nothing else (no annotation, no allocation), so its
/// unit tests run in every build.
package struct SanitizerMutex<Value: ~Copyable>: ~Copyable {
    private let lock: Mutex<Value>
    #if BLUEBONNET_TSAN
    /// One byte of heap that names this lock to ThreadSanitizer (never read or written): heap
    /// memory, so that ThreadSanitizer forgets the lock when it is freed.
    private let token: UnsafeMutableRawPointer
    #endif

    /// A lock guarding `initialValue`.
    package init(_ initialValue: consuming sending Value) {
        lock = Mutex(initialValue)
        #if BLUEBONNET_TSAN
        token = .allocate(byteCount: 1, alignment: 1)
        #endif
    }

    #if BLUEBONNET_TSAN
    deinit { token.deallocate() }
    #endif

    /// Runs `body` with the value while holding the lock, as `Mutex.withLock`.
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try lock.withLock { (value: inout sending Value) throws(E) -> sending Result in
            #if BLUEBONNET_TSAN
            tsanAcquire(token)
            defer { tsanRelease(token) }
            #endif
            return try body(&value)
        }
    }
}

// Sendable as `Mutex` is: the value is only reached under the lock. The token is an address
// handed to ThreadSanitizer, never dereferenced.
extension SanitizerMutex: @unchecked Sendable where Value: ~Copyable {}

#if BLUEBONNET_TSAN
// ThreadSanitizer's annotation entry points (its runtime is linked into every
// `-sanitize=thread` build), also used by `SanitizerContinuation`. Declared by symbol name: one
// pointer in, nothing out, the same registers under Swift's and C's conventions on the
// platforms Bluebonnet builds for.
@_silgen_name("__tsan_acquire") func tsanAcquire(_ address: UnsafeMutableRawPointer)
@_silgen_name("__tsan_release") func tsanRelease(_ address: UnsafeMutableRawPointer)
#endif

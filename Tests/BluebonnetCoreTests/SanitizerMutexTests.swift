import BluebonnetCore
import Testing

/// `SanitizerMutex` is every module's `Mutex` in ThreadSanitizer builds: it must lock as `Mutex`
/// does, in every build (scripts/sanitize.sh thread runs these under ThreadSanitizer too).
@Suite struct SanitizerMutexTests {
    @Test func returnsWhatTheBodyReturnsAndKeepsWhatItWrote() {
        let lock = SanitizerMutex([1, 2])
        let count = lock.withLock { value -> Int in
            value.append(3)
            return value.count
        }
        #expect(count == 3)
        #expect(lock.withLock { $0 } == [1, 2, 3])
    }

    @Test func rethrowsTheBodysTypedErrorAndKeepsTheChangeMadeBeforeIt() {
        struct Refused: Error, Equatable {}
        let lock = SanitizerMutex(0)
        #expect(throws: Refused()) {
            try lock.withLock { (value: inout Int) throws(Refused) -> Void in
                value = 7
                throw Refused()
            }
        }
        #expect(lock.withLock { $0 } == 7)
    }

    /// Eight tasks adding 1,000 each under the lock lose no increment.
    @Test func serialisesConcurrentWriters() async {
        final class Counter: Sendable { let value = SanitizerMutex(0) }
        let counter = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { counter.value.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.value.withLock { $0 } == 8_000)
    }
}

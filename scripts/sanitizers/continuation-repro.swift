// A reproduction of the ThreadSanitizer report docs/RELIABILITY.md ("Sanitizers", "Open") lists:
// with Swift 6.3.1 on Linux, a value made on another thread and handed to a task through
// `CheckedContinuation.resume(returning:)` is reported as a race when the task reads it, although
// the resume happens before the read. Nothing else hands anything over here: work reaches the
// thread under a pthread mutex and condition variable, which ThreadSanitizer sees.
//
//   swiftc -parse-as-library -sanitize=thread -swift-version 5 \
//     scripts/sanitizers/continuation-repro.swift -o /tmp/continuation-repro && /tmp/continuation-repro
//
// 2026-11-24: one "data race" per run of 2,000 hand-offs: the read in `main` against `Box.init`
// on the thread. Not built by the package; it is evidence, kept with the suppression files.
import Glibc
final class Box { var value: Int; init(_ v: Int) { value = v } }
// `work` is guarded by `mutex`; the thread only runs what it takes from there.
final class Loop: @unchecked Sendable {
    var mutex = pthread_mutex_t(); var cond = pthread_cond_t()
    var work: [() -> Void] = []
    init() {
        pthread_mutex_init(&mutex, nil); pthread_cond_init(&cond, nil)
        var t = pthread_t()
        let u = Unmanaged.passRetained(self).toOpaque()
        pthread_create(&t, nil, { p in Unmanaged<Loop>.fromOpaque(p!).takeRetainedValue().run(); return nil }, u)
    }
    func run() { while true { pthread_mutex_lock(&mutex); while work.isEmpty { pthread_cond_wait(&cond, &mutex) }; let w = work.removeFirst(); pthread_mutex_unlock(&mutex); w() } }
    func execute(_ f: @escaping () -> Void) { pthread_mutex_lock(&mutex); work.append(f); pthread_cond_signal(&cond); pthread_mutex_unlock(&mutex) }
}
// Carries the box across the continuation: its one owner changes hands there.
struct Unchecked: @unchecked Sendable { let box: Box }
@main struct M { static func main() async {
    let loop = Loop()
    var sum = 0
    for i in 0..<2000 {
        let r: Unchecked = await withCheckedContinuation { c in loop.execute { c.resume(returning: Unchecked(box: Box(i))) } }
        sum += r.box.value
    }
    print("sum", sum)
} }

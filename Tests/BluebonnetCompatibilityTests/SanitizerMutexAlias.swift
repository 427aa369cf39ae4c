import Bluebonnet

#if BLUEBONNET_TSAN
// ThreadSanitizer builds (scripts/sanitize.sh thread, -DBLUEBONNET_TSAN): this module's `Mutex`
// is BluebonnetCore's `SanitizerMutex`, the same lock with its hand-offs told to ThreadSanitizer
// (see its doc comment). A module's own declaration shadows Synchronization's `Mutex`.
typealias Mutex<Value: ~Copyable> = SanitizerMutex<Value>
#endif

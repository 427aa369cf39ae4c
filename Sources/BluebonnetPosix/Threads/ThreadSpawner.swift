import Glibc

/// Starts detached POSIX threads running Swift closures.
enum ThreadSpawner {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts a detached thread running `body`; throws `IOError` with the code `pthread_create` returned.
    static func spawnDetached(_ body: @escaping @Sendable () -> Void) throws(IOError) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let code = pthread_create(&thread, &attributes, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        if code != 0 {
            Unmanaged<Body>.fromOpaque(context).release()
            throw IOError(errno: code, function: "pthread_create")
        }
    }
}

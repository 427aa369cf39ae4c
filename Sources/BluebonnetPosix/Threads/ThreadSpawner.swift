internal import CBluebonnetLinux
import Glibc

/// Starts detached POSIX threads running Swift closures.
enum ThreadSpawner {
    private final class Body {
        let name: String
        let run: @Sendable () -> Void
        init(name: String, _ run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Starts a detached thread named `name` (cut to the kernel's 15 bytes) running `body`;
    /// throws `IOError` with the code `pthread_create` returned.
    static func spawnDetached(name: String, _ body: @escaping @Sendable () -> Void) throws(IOError) {
        let context = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, CInt(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let code = pthread_create(&thread, &attributes, { context in
            let body = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            _ = cbluebonnet_set_thread_name(String(body.name.utf8.prefix(15))!)
            body.run()
            return nil
        }, context)
        if code != 0 {
            Unmanaged<Body>.fromOpaque(context).release()
            throw IOError(errno: code, function: "pthread_create")
        }
    }
}

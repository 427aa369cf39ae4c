import Glibc
import Synchronization

/// A fixed set of event loops, each on its own thread, handed out round-robin.
public final class EventLoopGroup: Sendable {
    /// The loops, in creation order.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// One loop per online processor (`sysconf(_SC_NPROCESSORS_ONLN)`), at least one.
    public static var defaultLoopCount: Int {
        Swift.max(1, sysconf(CInt(_SC_NPROCESSORS_ONLN)))
    }

    /// Starts `loopCount` loops (default: one per online processor). If one cannot start, those
    /// already started are shut down and the error is thrown.
    public init(loopCount: Int = EventLoopGroup.defaultLoopCount) throws(IOError) {
        precondition(loopCount > 0, "an EventLoopGroup needs at least one loop")
        var loops: [EventLoop] = []
        loops.reserveCapacity(loopCount)
        do {
            for _ in 0..<loopCount { loops.append(try EventLoop()) }
        } catch {
            for loop in loops { loop.syncShutdownGracefully() }
            throw error
        }
        self.loops = loops
    }

    /// The next loop, round-robin. Callable from any thread.
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[Int(UInt(bitPattern: index) % UInt(loops.count))]
    }

    /// The loop whose thread the caller is on, if any.
    public var currentLoop: EventLoop? {
        loops.first { $0.inEventLoop }
    }

    /// Shuts every loop down (see `EventLoop.shutdownGracefully()`) and waits for all of them.
    public func shutdownGracefully() async {
        for loop in loops { await loop.shutdownGracefully() }
    }

    /// Shuts every loop down, blocking the calling thread; not from one of the group's loop threads.
    public func syncShutdownGracefully() {
        for loop in loops { loop.syncShutdownGracefully() }
    }
}

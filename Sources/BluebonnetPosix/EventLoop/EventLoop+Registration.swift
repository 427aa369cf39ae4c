internal import CBluebonnetLinux
import Glibc

// Registrations: loop-thread-only, level-triggered, one generation per registration.
extension EventLoop {
    /// Registers `descriptor` for `interest`; `handler` runs on the loop thread with the events that
    /// are ready, for as long as they are (level-triggered). Call on the loop thread only.
    ///
    /// `hangup` and `error` are reported whatever the interest: the handler must then close or
    /// deregister. A descriptor number still registered under an older generation (it was closed
    /// without `deregister`) is taken over by the new registration.
    public func register(
        descriptor: CInt,
        interest: IOEvents,
        handler: @escaping (IOEvents) -> Void
    ) throws(IOError) -> Registration {
        preconditionInEventLoop()
        let generation = confined.nextGeneration
        confined.nextGeneration &+= 1
        if let stale = confined.descriptors.removeValue(forKey: descriptor) {
            confined.registrations.removeValue(forKey: stale)
        }
        do {
            _ = try Syscall.complete("epoll_ctl") {
                cbluebonnet_epoll_ctl(epollDescriptor, EPOLL_CTL_ADD, descriptor, interest.epollInterest, generation)
            }
        } catch where error.errno == EEXIST {
            // Registered under a generation we dropped above (same open file, number reused by dup):
            // point the kernel's entry at the new generation.
            _ = try Syscall.complete("epoll_ctl") {
                cbluebonnet_epoll_ctl(epollDescriptor, EPOLL_CTL_MOD, descriptor, interest.epollInterest, generation)
            }
        }
        confined.registrations[generation] = LoopState.Entry(descriptor: descriptor, interest: interest, handler: handler)
        confined.descriptors[descriptor] = generation
        return Registration(descriptor: descriptor, generation: generation)
    }

    /// Registers `socket`'s descriptor; see `register(descriptor:interest:handler:)`. The socket stays
    /// with the caller, who must deregister before closing it.
    public func register(
        _ socket: borrowing Socket,
        interest: IOEvents,
        handler: @escaping (IOEvents) -> Void
    ) throws(IOError) -> Registration {
        try register(descriptor: socket.descriptor, interest: interest, handler: handler)
    }

    /// Changes what `registration` waits for. Call on the loop thread only; a stale registration
    /// (deregistered, or replaced) is ignored.
    public func setInterest(_ interest: IOEvents, for registration: Registration) throws(IOError) {
        preconditionInEventLoop()
        guard var entry = confined.registrations[registration.generation] else { return }
        guard entry.interest != interest else { return }
        _ = try Syscall.complete("epoll_ctl") {
            cbluebonnet_epoll_ctl(
                epollDescriptor, EPOLL_CTL_MOD, registration.descriptor, interest.epollInterest, registration.generation)
        }
        entry.interest = interest
        confined.registrations[registration.generation] = entry
    }

    /// Gives `registration` a new handler and interest, keeping its generation: one `epoll_ctl`
    /// when the interest changes, none otherwise. For a descriptor that passes from one owner to
    /// the next on the loop (a connect attempt, then its TLS handshake, then the connection), so it
    /// is registered once for its whole life. Events already collected for it in the current batch
    /// go to the new handler. Loop thread only.
    ///
    /// - Throws: `IOError` (`ENOENT`, function `"EventLoop.replaceHandler"`) when `registration` is
    ///   stale (deregistered, or replaced); the `epoll_ctl` failure when the interest could not be
    ///   changed (the old handler and interest then stay).
    public func replaceHandler(
        of registration: Registration,
        interest: IOEvents,
        handler: @escaping (IOEvents) -> Void
    ) throws(IOError) {
        preconditionInEventLoop()
        guard var entry = confined.registrations[registration.generation] else {
            throw IOError(errno: ENOENT, function: "EventLoop.replaceHandler")
        }
        if entry.interest != interest {
            _ = try Syscall.complete("epoll_ctl") {
                cbluebonnet_epoll_ctl(
                    epollDescriptor, EPOLL_CTL_MOD, registration.descriptor, interest.epollInterest, registration.generation)
            }
            entry.interest = interest
        }
        entry.handler = handler
        confined.registrations[registration.generation] = entry
    }

    /// The interest `registration` has now; nil when it is stale. Loop thread only.
    public func interest(of registration: Registration) -> IOEvents? {
        preconditionInEventLoop()
        return confined.registrations[registration.generation]?.interest
    }

    /// Stops delivering events for `registration` and drops its handler. Call on the loop thread
    /// only, before closing the descriptor. Events already collected for it are dropped; a stale
    /// registration is ignored, and so is a descriptor that was already closed (`EBADF`/`ENOENT`).
    public func deregister(_ registration: Registration) throws(IOError) {
        preconditionInEventLoop()
        guard confined.registrations.removeValue(forKey: registration.generation) != nil else { return }
        if confined.descriptors[registration.descriptor] == registration.generation {
            confined.descriptors.removeValue(forKey: registration.descriptor)
        }
        do {
            _ = try Syscall.complete("epoll_ctl") {
                cbluebonnet_epoll_ctl(epollDescriptor, EPOLL_CTL_DEL, registration.descriptor, 0, 0)
            }
        } catch where error.errno == EBADF || error.errno == ENOENT {
            // Already closed: the kernel dropped the epoll entry with the last reference to the file.
        }
    }

    /// How many registrations are live. Loop thread only.
    public var registrationCount: Int {
        preconditionInEventLoop()
        return confined.registrations.count
    }

    /// Delivers `events` to the handler of `generation`. A generation no longer registered was
    /// deregistered or replaced (perhaps earlier in the same batch): its events are dropped.
    func dispatch(generation: UInt64, events: IOEvents) {
        guard let entry = confined.registrations[generation] else { return }
        entry.handler(events)
    }
}

import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Testing

/// Opens sockets until one gets descriptor number `number` (the kernel hands out the lowest free
/// number, so this takes one or two tries); closes the others.
func openSocket(numbered number: CInt) throws(IOError) -> Socket? {
    var others: [CInt] = []
    defer { for fd in others { close(fd) } }
    for _ in 0..<16 {
        let candidate = try Socket.pair()
        let first = candidate.first, second = candidate.second
        if first.descriptor == number {
            others.append(second.releaseDescriptor())
            return first
        }
        if second.descriptor == number {
            others.append(first.releaseDescriptor())
            return second
        }
        others.append(first.releaseDescriptor())
        others.append(second.releaseDescriptor())
    }
    return nil
}

struct GenerationOutcome: Sendable {
    var oldHandlerCalls = 0
    var newHandlerEvents: [IOEvents] = []
    var reusedNumber = false
    var oldGeneration: UInt64 = 0
    var newGeneration: UInt64 = 0
}

/// Register → deregister → close → reopen the same number → register again; then deliver an event
/// for each generation by hand, exactly as `run()` does for what `epoll_wait` returned.
final class GenerationScenario {
    let loop: EventLoop
    var outcome = GenerationOutcome()

    init(loop: EventLoop) { self.loop = loop }

    func run() throws(IOError) -> GenerationOutcome {
        loop.preconditionInEventLoop()
        let pair = try Socket.pair()
        let old = pair.first, peer = pair.second
        let number = old.descriptor
        let first = try loop.register(old, interest: .readable) { [unowned self] _ in self.outcome.oldHandlerCalls += 1 }
        try loop.deregister(first)
        try old.close()

        guard let reused = try openSocket(numbered: number) else { return outcome }
        outcome.reusedNumber = true
        let second = try loop.register(reused, interest: .readable) { [unowned self] events in
            self.outcome.newHandlerEvents.append(events)
        }
        outcome.oldGeneration = first.generation
        outcome.newGeneration = second.generation
        #expect(first.descriptor == second.descriptor)

        loop.dispatch(generation: first.generation, events: .readable)
        loop.dispatch(generation: second.generation, events: .readable)

        try loop.deregister(second)
        try reused.close()
        try peer.close()
        return outcome
    }
}

struct BatchOutcome: Sendable {
    var newOwnerEvents: [IOEvents] = []
    var oldHandlerCallsAfterDeregister = 0
    /// Non-zero when the kernel listed the victim before the trigger (then the stale path was not
    /// exercised in this run).
    var oldHandlerCallsBeforeDeregister = 0
}

/// Two descriptors become readable in one `epoll_wait` batch, `trigger` first, `victim` second. The
/// trigger's handler deregisters and closes the victim and registers a fresh socket (without data)
/// under the victim's number. The victim's event, still in the batch, must reach nobody.
/// Kept alive by its handlers (strong captures) until `finish()` deregisters them.
final class BatchScenario {
    let loop: EventLoop
    let done: (BatchOutcome) -> Void
    var outcome = BatchOutcome()
    var trigger: Socket?, triggerPeer: Socket?, victim: Socket?, victimPeer: Socket?, fresh: Socket?
    var triggerRegistration: Registration?, victimRegistration: Registration?, freshRegistration: Registration?
    var victimDeregistered = false

    init(loop: EventLoop, done: @escaping (BatchOutcome) -> Void) {
        self.loop = loop
        self.done = done
    }

    func start() {
        do throws(IOError) {
            let a = try Socket.pair()
            trigger = Optional(a.first)
            triggerPeer = Optional(a.second)
            let b = try Socket.pair()
            victim = Optional(b.first)
            victimPeer = Optional(b.second)
            triggerRegistration = try loop.register(descriptor: trigger?.descriptor ?? -1, interest: .readable) { [self] _ in
                self.triggered()
            }
            victimRegistration = try loop.register(descriptor: victim?.descriptor ?? -1, interest: .readable) { [self] _ in
                if self.victimDeregistered {
                    self.outcome.oldHandlerCallsAfterDeregister += 1
                } else {
                    self.outcome.oldHandlerCallsBeforeDeregister += 1
                }
            }
            // Trigger first, so it is first on the kernel's ready list.
            _ = try triggerPeer?.write(ByteBuffer(string: "t"))
            _ = try victimPeer?.write(ByteBuffer(string: "v"))
        } catch {
            Issue.record("\(error)")
            finish()
        }
    }

    private func triggered() {
        guard let triggerRegistration, let victimRegistration else { return }
        do throws(IOError) {
            try loop.deregister(triggerRegistration)
            self.triggerRegistration = nil
            let number = victimRegistration.descriptor
            try loop.deregister(victimRegistration)
            victimDeregistered = true
            self.victimRegistration = nil
            try victim.take()?.close()
            fresh = try openSocket(numbered: number)
            #expect(fresh?.descriptor != nil, "could not reopen descriptor \(number)")
            if let fd = fresh?.descriptor {
                freshRegistration = try loop.register(descriptor: fd, interest: .readable) { [self] events in
                    self.outcome.newOwnerEvents.append(events)
                }
            }
        } catch {
            Issue.record("\(error)")
        }
        // Tasks run after the whole batch was dispatched.
        let bound = LoopBound(self, eventLoop: loop)
        loop.execute { bound.value.finish() }
    }

    private func finish() {
        for registration in [triggerRegistration, victimRegistration, freshRegistration].compactMap({ $0 }) {
            try? loop.deregister(registration)
        }
        _ = trigger.take()
        _ = triggerPeer.take()
        _ = victim.take()
        _ = victimPeer.take()
        _ = fresh.take()
        done(outcome)
    }
}

/// The targets of `loop`'s epoll set as the kernel lists them (`/proc/self/fdinfo`): each
/// registered descriptor number and the data (the generation) its events carry.
func epollTargets(of loop: EventLoop) -> [(descriptor: CInt, data: UInt64)] {
    guard let file = fopen("/proc/self/fdinfo/\(loop.epollDescriptor)", "r") else { return [] }
    defer { fclose(file) }
    var targets: [(descriptor: CInt, data: UInt64)] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, file) > 0, let line {
        // `tfd:        7 events:       19 data:                3  pos:0 ino:… sdev:…`
        let fields = String(cString: line).split(separator: " ", omittingEmptySubsequences: true)
        guard fields.first == "tfd:", let events = fields.firstIndex(of: "events:"), let data = fields.firstIndex(of: "data:"),
            events == 2, data + 1 < fields.count,
            let descriptor = CInt(fields[1]), let value = UInt64(fields[data + 1], radix: 16)
        else { continue }
        targets.append((descriptor, value))
    }
    return targets
}

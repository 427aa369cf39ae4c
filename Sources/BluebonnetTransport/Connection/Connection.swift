import BluebonnetCore
import BluebonnetPosix
import BluebonnetTLS
import Synchronization

/// A connected byte stream — TCP, TLS over TCP, or a Unix-domain socket — owned by one event loop.
///
/// Made by ``Connector/connect(to:on:timeouts:resolver:tunnel:)`` (or leased from a ``ConnectionPool``).
/// Every method and the ``delegate`` must be used on ``eventLoop``'s thread; the `let` properties
/// and ``isOpen`` may be read anywhere. Events go to the ``delegate`` on the loop (see
/// ``ConnectionDelegate`` for when).
///
/// - **Reading is off** when the connection is handed over: set the delegate, then call
///   ``startReading()``. Bytes that arrive meanwhile wait in the kernel (and, for TLS, in the
///   engine). While reading is off, a reset by the peer still closes the connection (the delegate
///   gets ``TransportError/Kind/io`` or ``TransportError/Kind/connectionClosed``), since the
///   readiness it causes cannot be ignored.
/// - **Writing** never blocks: `write(_:)` sends what the kernel takes at once (with one
///   gathering `sendmsg`) and queues the rest, which goes out as the socket drains;
///   ``pendingWriteBytes`` is the backpressure signal and
///   ``ConnectionDelegate/connectionDidDrainWrites(_:)`` says when the queue has emptied. With TLS
///   the bytes are encrypted at once and the queue holds ciphertext.
/// - **Closing**: `close()` stops reading, sends what is queued and TLS `close_notify`, then
///   closes the socket; ``abort()`` closes at once. Either way the delegate hears
///   ``ConnectionDelegate/connectionDidClose(_:)`` once, in a later loop task, and is then released
///   (which breaks any reference cycle through it). Writes after closing are ignored.
///
/// `@unchecked Sendable`: the mutable state is confined to `eventLoop`'s thread — every method that
/// touches it starts with `preconditionInEventLoop()`, and the readiness handler and the tasks it
/// schedules run there. The properties readable anywhere are immutable or atomic (`isOpen`).
public final class Connection: @unchecked Sendable, CustomStringConvertible {
    /// The loop that owns the connection.
    public let eventLoop: EventLoop
    /// Unique in the process, increasing in creation order.
    public let id: UInt64
    /// The peer's address (nil when it could not be read).
    public let remoteAddress: SocketAddress?
    /// Our end's address (nil when it could not be read; unnamed for Unix sockets).
    public let localAddress: SocketAddress?
    /// What TLS negotiated; nil for a plain connection.
    public let tls: TLSInfo?
    /// When the connection was ready (connected, and the TLS handshake done).
    package let establishedAt: MonotonicTime
    /// How establishing it went.
    public let metrics: ConnectMetrics

    private static let ids = Atomic<UInt64>(1)
    /// Bytes asked of the kernel per read.
    static let readChunk = 64 * 1024
    /// The fewest bytes asked of the kernel per read: while readers keep slices of the loop's
    /// receive buffer (responses waiting for their tasks), reads go after them into its free
    /// tail down to this size, then to a new buffer (`ByteBuffer.withUnsafeMutableReceiveBytes`).
    static let minimumReadChunk = 16 * 1024
    /// Reads per readiness event before the loop serves others (the event is level-triggered).
    static let readsPerEvent = 4

    private enum State {
        /// Usable. → `closing` on `close()`; → `closed` on `abort()` or a failure.
        case open
        /// Flushing queued bytes and `close_notify`. → `closed` once flushed or on a failure.
        case closing
        /// The socket is closed.
        case closed
    }

    private let openFlag = Atomic<Bool>(true)
    private var state = State.open
    private var socket: Socket?
    private var registration: Registration?
    private let engine: TLSEngine?
    private var _delegate: (any ConnectionDelegate)?
    private var queue: [ByteBuffer] = []
    private var queueHead = 0
    private var queuedBytes = 0
    private var reading = false
    private var readEOF = false
    private var waitedForWritable = false
    /// The bytes queued at the start (the handshake's last flight) have not been tried yet: they
    /// go with the first write or from ``flushPendingWritesSoon()``'s task, and ask for no
    /// writability before.
    private var holdsHandshakeTail = false
    private var closeNotified = false
    /// Aborts a graceful close that waits too long for its bytes to drain.
    private var closeTimer: Scheduled?
    private var closeHandlers: [() -> Void] = []
    private var _receivedTLSCloseNotify = false
    private var _addressDescriptions: (remote: String?, local: String?)?

    init(
        socket: consuming Socket, eventLoop: EventLoop, engine: TLSEngine?, pendingWrites: [ByteBuffer],
        metrics: ConnectMetrics, remoteAddress: SocketAddress?, localAddress: SocketAddress?,
        establishedAt: MonotonicTime
    ) {
        self.eventLoop = eventLoop
        self.id = Self.ids.wrappingAdd(1, ordering: .relaxed).oldValue
        self.remoteAddress = remoteAddress
        self.localAddress = localAddress
        self.tls = engine.map(TLSInfo.init(engine:))
        self.establishedAt = establishedAt
        self.metrics = metrics
        self.engine = engine
        self.socket = consume socket
        for buffer in pendingWrites where !buffer.isEmpty { enqueue(buffer) }
        holdsHandshakeTail = queuedBytes > 0
    }

    /// Takes over the socket's registration with the loop (the connect's, so the socket is
    /// registered once in its life), or registers it when `taken` is nil. The interest is readable
    /// — read interest goes lazily (see `updateInterest`), so the first `startReading()` costs no
    /// `epoll_ctl`. Bytes queued at the start (the handshake's last flight) wait for the first
    /// write or for ``flushPendingWritesSoon()``, not for writability.
    func activate(taking taken: Registration?) throws(IOError) {
        eventLoop.preconditionInEventLoop()
        guard let descriptor = socket?.descriptor else { return }
        let interest: IOEvents = .readable
        let handler: (IOEvents) -> Void = { [weak self] events in self?.handle(events) }
        if let taken {
            // Ours from here on, also when the interest cannot be set: `teardown` drops it.
            registration = taken
            try eventLoop.replaceHandler(of: taken, interest: interest, handler: handler)
        } else {
            registration = try eventLoop.register(descriptor: descriptor, interest: interest, handler: handler)
        }
    }

    /// Writes the bytes queued at the start (the handshake's last flight) from a loop task queued
    /// now, unless a write came first and took them along: the connect calls it after handing the
    /// connection over, so a lease served on this loop writes the request in the same call.
    func flushPendingWritesSoon() {
        eventLoop.preconditionInEventLoop()
        guard holdsHandshakeTail else { return }
        eventLoop.execute { [weak self] in
            guard let self, self.holdsHandshakeTail else { return }
            self.flushFromLoop()
        }
    }

    /// The socket's descriptor while open (tests read kernel counters through it). Loop only.
    var descriptor: Int32? {
        eventLoop.preconditionInEventLoop()
        return socket?.descriptor
    }

    /// `Connection(#id, tls, remote)`.
    public var description: String {
        "Connection(#\(id)\(tls == nil ? "" : ", TLS"), \(remoteAddress.map { "\($0)" } ?? "?"))"
    }

    // MARK: Public API

    /// Receives the connection's events; set and read on the loop. Released after
    /// ``ConnectionDelegate/connectionDidClose(_:)``.
    public var delegate: (any ConnectionDelegate)? {
        get {
            eventLoop.preconditionInEventLoop()
            return _delegate
        }
        set {
            eventLoop.preconditionInEventLoop()
            _delegate = newValue
        }
    }

    /// Whether the connection is open (not closing or closed). Readable from any thread; on
    /// other threads the answer may be out of date by the time it is used.
    public var isOpen: Bool { openFlag.load(ordering: .acquiring) }

    /// ``remoteAddress`` and ``localAddress`` as text (`SocketAddress.description`), made on first
    /// use and kept: every request's metrics carry them, and formatting an address (`inet_ntop`,
    /// with a `sprintf` inside) would cost each request of a kept-alive connection twice. Loop only.
    package var addressDescriptions: (remote: String?, local: String?) {
        eventLoop.preconditionInEventLoop()
        if let made = _addressDescriptions { return made }
        let made = (remote: remoteAddress?.description, local: localAddress?.description)
        _addressDescriptions = made
        return made
    }

    /// Bytes queued and not yet handed to the kernel (ciphertext for TLS). Loop only.
    public var pendingWriteBytes: Int {
        eventLoop.preconditionInEventLoop()
        return queuedBytes
    }

    /// For TLS: whether the peer's `close_notify` ended the stream (false for a bare TCP FIN or
    /// before the end). Always false for plain connections. Loop only.
    public var receivedTLSCloseNotify: Bool {
        eventLoop.preconditionInEventLoop()
        return _receivedTLSCloseNotify
    }

    /// Queues `buffers` (plaintext) and writes what the kernel takes now, with one gathering call;
    /// never blocks. Ignored once the connection is closing or closed. A failure is reported to
    /// the delegate from a later loop task. Loop only.
    public func write(_ buffers: [ByteBuffer]) { write(contentsOf: buffers) }

    /// `write(_:)` for one buffer (no array made for it).
    public func write(_ buffer: ByteBuffer) { write(contentsOf: CollectionOfOne(buffer)) }

    private func write(contentsOf buffers: some Sequence<ByteBuffer>) {
        eventLoop.preconditionInEventLoop()
        guard state == .open else { return }
        let wasEmpty = queuedBytes == 0
        if let engine {
            for buffer in buffers {
                var rest = buffer
                while !rest.isEmpty {
                    let consumed: Int
                    do {
                        consumed = try engine.writePlaintext(rest)
                    } catch {
                        if let alert = engine.takeCiphertext() { enqueue(alert) }
                        _ = try? flush()
                        failLater(.tls(error))
                        return
                    }
                    guard consumed > 0 else {
                        failLater(.connectionClosed)
                        return
                    }
                    rest.moveReaderIndex(forwardBy: consumed)
                }
            }
            if let ciphertext = engine.takeCiphertext() { enqueue(ciphertext) }
        } else {
            for buffer in buffers where !buffer.isEmpty { enqueue(buffer) }
        }
        // Not while waiting for writability; the handshake's last flight, never tried yet, goes
        // with the first write.
        guard wasEmpty || holdsHandshakeTail, queuedBytes > 0 else { return }
        do {
            _ = try flush()
        } catch {
            failLater(.io(error))
        }
    }

    /// Turns reading on: bytes (and end of stream) go to the delegate. Loop only.
    public func startReading() {
        eventLoop.preconditionInEventLoop()
        guard state == .open, !reading else { return }
        reading = true
        updateInterest()
        if let engine, engine.hasBufferedInput {
            // The engine may already hold decrypted-to-be bytes (that came with the handshake, or
            // were left when reading stopped); the socket will not signal them again. Usually it
            // holds none, and a keep-alive request schedules nothing here.
            eventLoop.execute {
                var buffer = self.eventLoop.takeReceiveBuffer()
                self.drainEngine(into: &buffer)
                self.eventLoop.returnReceiveBuffer(buffer)
            }
        }
    }

    /// Turns reading off; bytes wait in the kernel. Loop only.
    public func stopReading() {
        eventLoop.preconditionInEventLoop()
        guard reading else { return }
        reading = false
        updateInterest()
    }

    /// How long ``close(timeout:)`` waits for queued bytes to drain by default.
    public static let defaultCloseTimeout: Duration = .seconds(5)

    /// Closes gracefully: stops reading, sends the queued bytes and (TLS) `close_notify`, then
    /// closes the socket. Idempotent. Loop only.
    ///
    /// A peer that does not take the queued bytes within `timeout` gets the connection aborted
    /// (the socket closed with what is left unsent), so a peer that never reads cannot keep a
    /// closing connection — and its descriptor — forever.
    public func close(timeout: Duration = Connection.defaultCloseTimeout) {
        eventLoop.preconditionInEventLoop()
        guard state == .open else { return }
        state = .closing
        openFlag.store(false, ordering: .releasing)
        reading = false
        if let engine, engine.isHandshakeComplete {
            _ = try? engine.shutdown()
            if let closeNotify = engine.takeCiphertext() { enqueue(closeNotify) }
        }
        do {
            if try flush() {
                closeNow()
                return
            }
        } catch {
            closeNow()
            return
        }
        closeTimer = eventLoop.scheduleTask(in: timeout) { [self] in
            if state == .closing { closeNow() }
        }
    }

    /// Closes at once, dropping queued bytes. Idempotent. Loop only.
    public func abort() {
        eventLoop.preconditionInEventLoop()
        guard state != .closed else { return }
        closeNow()
    }

    /// Runs `handler` on the loop after the delegate heard ``ConnectionDelegate/connectionDidClose(_:)``
    /// (soon, when that already happened). Loop only.
    func whenClosed(_ handler: @escaping () -> Void) {
        eventLoop.preconditionInEventLoop()
        if closeNotified {
            handler()
        } else {
            closeHandlers.append(handler)
        }
    }

    // MARK: Readiness

    private func handle(_ events: IOEvents) {
        guard state != .closed else { return }
        if events.contains(.writable) && queuedBytes > 0 {
            flushFromLoop()
            guard state != .closed else { return }
        }
        if reading && !readEOF && state == .open && !events.isDisjoint(with: [.readable, .readHangup, .hangup, .error]) {
            readFromSocket()
            return
        }
        if !reading && state == .open && !events.isDisjoint(with: [.readable, .readHangup]) {
            // Bytes (or the end) nobody reads, reported because read interest went lazily: drop
            // it now, or the level-triggered loop reports them again and again. They wait in the
            // kernel for the next `startReading()`.
            updateInterest(dropReadInterest: true)
        }
        if !events.isDisjoint(with: [.hangup, .error]) {
            // Not reading: a reset (or both directions closed) keeps being reported, so it ends
            // the connection now.
            let code = (try? socket?.pendingError()) ?? 0
            if state == .closing {
                closeNow()
            } else {
                fail(code != 0 ? .io(IOError(errno: code, function: "recv")) : .connectionClosed)
            }
        }
    }

    private func readFromSocket() {
        // The loop's shared buffer: idle connections keep no receive storage of their own.
        var receiveBuffer = eventLoop.takeReceiveBuffer()
        defer { eventLoop.returnReceiveBuffer(receiveBuffer) }
        for _ in 0..<Self.readsPerEvent {
            guard reading, !readEOF, state == .open else { return }
            let result: IOResult<Int>?
            do {
                result = try socket?.receive(into: &receiveBuffer, maxBytes: Self.readChunk, minimumSharedTail: Self.minimumReadChunk)
            } catch {
                fail(.io(error))
                return
            }
            switch result {
            case nil, .wouldBlock?:
                return
            case .processed(0)?:
                if let engine {
                    engine.feedEndOfStream()
                    drainEngine(into: &receiveBuffer)
                } else {
                    reachEndOfStream()
                }
                return
            case .processed?:
                if let engine {
                    engine.feedCiphertext(receiveBuffer)
                    drainEngine(into: &receiveBuffer)
                } else {
                    _delegate?.connection(self, didRead: receiveBuffer)
                }
            }
        }
    }

    /// Decrypts what the engine holds and delivers it, while reading is on. The plaintext goes into
    /// `buffer` (the loop's receive buffer, whose ciphertext the engine has already copied), as a
    /// plain connection's bytes do: no buffer is allocated per read.
    private func drainEngine(into buffer: inout ByteBuffer) {
        guard let engine else { return }
        // Checked before each read so that a buffer the delegate still holds is not replaced
        // (`clear()` would allocate) for a read that could only say "want read".
        while reading && !readEOF && state == .open && engine.hasBufferedInput {
            buffer.clear()
            let result: TLSEngine.ReadResult
            do {
                result = try engine.readPlaintext(into: &buffer)
            } catch {
                if let alert = engine.takeCiphertext() { enqueue(alert) }
                _ = try? flush()
                fail(.tls(error))
                return
            }
            if let ciphertext = engine.takeCiphertext() {
                // Post-handshake messages (key updates) can need an answer.
                let wasEmpty = queuedBytes == 0
                enqueue(ciphertext)
                if wasEmpty { flushFromLoop() }
                guard state == .open else { return }
            }
            switch result {
            case .bytes:
                _delegate?.connection(self, didRead: buffer)
            case .wantRead:
                return
            case .closed(let clean):
                _receivedTLSCloseNotify = clean
                reachEndOfStream()
                return
            }
        }
    }

    private func reachEndOfStream() {
        readEOF = true
        updateInterest()
        _delegate?.connectionDidReachEndOfStream(self)
    }

    // MARK: Writing

    private func enqueue(_ buffer: ByteBuffer) {
        queue.append(buffer)
        queuedBytes += buffer.readableBytes
    }

    /// Writes queued bytes until drained (true) or the kernel is full (false); sets the interest.
    private func flush() throws(IOError) -> Bool {
        holdsHandshakeTail = false
        while queuedBytes > 0 {
            let end = Swift.min(queue.count, queueHead + Socket.maximumWriteVectorCount)
            let result: IOResult<Int>?
            if end - queueHead == 1 {
                result = try socket?.write(queue[queueHead])
            } else {
                result = try socket?.writev(Array(queue[queueHead..<end]))
            }
            switch result {
            case .processed(let count)?:
                consume(count)
            case .wouldBlock?:
                waitedForWritable = true
                updateInterest()
                return false
            case nil:
                return false
            }
        }
        queue.removeAll(keepingCapacity: queue.capacity <= 64)
        queueHead = 0
        // A closing connection that drained is closed next (by `close()` or `flushFromLoop()`),
        // and deregistered: no interest change first.
        if state != .closing { updateInterest() }
        return true
    }

    private func consume(_ count: Int) {
        var left = count
        queuedBytes -= count
        while left > 0 {
            let size = queue[queueHead].readableBytes
            if left >= size {
                queue[queueHead] = ByteBuffer()
                queueHead += 1
                left -= size
            } else {
                queue[queueHead].moveReaderIndex(forwardBy: left)
                left = 0
            }
        }
        if queueHead > 64 && queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }

    /// Flushes on writability (or after queuing from a handler); reports drains and failures.
    private func flushFromLoop() {
        do {
            guard try flush() else { return }
        } catch {
            if state == .closing { closeNow() } else { fail(.io(error)) }
            return
        }
        if state == .closing {
            closeNow()
        } else if waitedForWritable {
            waitedForWritable = false
            _delegate?.connectionDidDrainWrites(self)
        }
    }

    private func updateInterest(dropReadInterest: Bool = false) {
        guard let registration else { return }
        var interest: IOEvents = []
        if reading && !readEOF && state == .open { interest.insert(.readable) }
        if queuedBytes > 0 && !holdsHandshakeTail { interest.insert(.writable) }
        // Read interest goes lazily: an open connection keeps it after `stopReading()` until the
        // socket reports something nobody reads (`handle` then drops it for real). A pooled
        // connection passes between exchanges and the idle watcher, which all read, so the
        // round trip stop → start costs no `epoll_ctl` at all.
        if !dropReadInterest && !interest.contains(.readable) && state == .open && !readEOF,
            eventLoop.interest(of: registration)?.contains(.readable) == true
        {
            interest.insert(.readable)
        }
        do {
            try eventLoop.setInterest(interest, for: registration)
        } catch {
            fail(.io(error))
        }
    }

    // MARK: Ending

    /// Closes now and reports `error` (then the close) from a later loop task; for failures met
    /// inside a public method, whose caller must not be re-entered.
    private func failLater(_ error: TransportError) {
        guard state != .closed else { return }
        teardown()
        eventLoop.execute {
            self._delegate?.connection(self, didFail: error)
            self.notifyClosed()
        }
    }

    /// Closes now and reports `error`; the close follows from a later loop task.
    private func fail(_ error: TransportError) {
        guard state != .closed else { return }
        teardown()
        _delegate?.connection(self, didFail: error)
        eventLoop.execute { self.notifyClosed() }
    }

    private func closeNow() {
        guard state != .closed else { return }
        _ = closeTimer?.cancel()
        closeTimer = nil
        teardown()
        eventLoop.execute { self.notifyClosed() }
    }

    private func teardown() {
        state = .closed
        openFlag.store(false, ordering: .releasing)
        reading = false
        if let registration { try? eventLoop.deregister(registration) }
        registration = nil
        try? socket.take()?.close()
        queue.removeAll()
        queueHead = 0
        queuedBytes = 0
    }

    private func notifyClosed() {
        guard !closeNotified else { return }
        closeNotified = true
        let delegate = _delegate
        _delegate = nil
        delegate?.connectionDidClose(self)
        let handlers = closeHandlers
        closeHandlers.removeAll()
        for handler in handlers { handler() }
    }
}

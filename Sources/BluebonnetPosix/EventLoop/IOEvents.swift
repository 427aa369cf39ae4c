internal import CBluebonnetLinux

/// Readiness of a registered descriptor, and the interest a registration asks for.
///
/// As interest only `readable` and `writable` mean anything; `hangup` and `error` are always
/// reported, and `readHangup` comes with `readable` interest.
public struct IOEvents: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The raw bits (an `IOEvents` value, not `EPOLL*` bits).
    public let rawValue: UInt8

    /// Makes a set from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data can be read, or the peer closed (a read returns 0), or a listener has a connection to accept.
    public static let readable = IOEvents(rawValue: 1 << 0)
    /// Data can be written, or a non-blocking connect finished (check `Socket.finishConnect()`).
    public static let writable = IOEvents(rawValue: 1 << 1)
    /// The peer shut down its sending side (`EPOLLRDHUP`); reads drain what is left and then return 0.
    public static let readHangup = IOEvents(rawValue: 1 << 2)
    /// Both directions are closed (`EPOLLHUP`). Deregister or close: it keeps being reported.
    public static let hangup = IOEvents(rawValue: 1 << 3)
    /// The descriptor has an error pending (`EPOLLERR`; read it with `Socket.pendingError()`).
    /// Deregister or close: it keeps being reported.
    public static let error = IOEvents(rawValue: 1 << 4)

    /// `[readable, writable]`.
    public static let readWrite: IOEvents = [.readable, .writable]

    /// The `EPOLL*` interest bits for this set (level-triggered).
    var epollInterest: UInt32 {
        var bits: UInt32 = 0
        if contains(.readable) { bits |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if contains(.writable) { bits |= EPOLLOUT.rawValue }
        return bits
    }

    /// The set for `EPOLL*` bits reported by `epoll_wait`.
    init(epoll bits: UInt32) {
        var events: IOEvents = []
        if bits & (EPOLLIN.rawValue | EPOLLPRI.rawValue) != 0 { events.insert(.readable) }
        if bits & EPOLLOUT.rawValue != 0 { events.insert(.writable) }
        if bits & EPOLLRDHUP.rawValue != 0 { events.insert(.readHangup) }
        if bits & EPOLLHUP.rawValue != 0 { events.insert(.hangup) }
        if bits & EPOLLERR.rawValue != 0 { events.insert(.error) }
        self = events
    }

    /// The names of the members, e.g. `[readable, writable]`.
    public var description: String {
        let names: [(IOEvents, String)] = [
            (.readable, "readable"), (.writable, "writable"), (.readHangup, "readHangup"),
            (.hangup, "hangup"), (.error, "error"),
        ]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}

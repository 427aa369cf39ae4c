/// What a non-blocking `connect` did.
public enum ConnectResult: Hashable, Sendable {
    /// Connected at once (typical for Unix-domain sockets, sometimes for loopback).
    case connected
    /// The connection is being made. Wait until the socket is writable, then call
    /// `Socket.finishConnect()` to learn whether it succeeded.
    case inProgress
}

/// Which direction(s) of a connection `Socket.shutdown(_:)` closes.
public enum ShutdownDirection: Hashable, Sendable {
    /// No more receiving (`SHUT_RD`).
    case read
    /// No more sending: the peer reads end of stream (`SHUT_WR`), the socket can still receive.
    case write
    /// Both (`SHUT_RDWR`).
    case both
}

/// The kind of socket to create.
public enum SocketType: Hashable, Sendable {
    /// A byte stream (`SOCK_STREAM`): TCP for IP families.
    case stream
    /// Datagrams (`SOCK_DGRAM`): UDP for IP families.
    case datagram
}

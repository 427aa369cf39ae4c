import Glibc
import Synchronization

/// Resolves host names to socket addresses with the system resolver (`getaddrinfo`), off the event
/// loops: lookups run on a small pool of blocking threads (four at most, shared by every resolver).
///
/// - Numeric hosts (`127.0.0.1`, `::1`, `[::1]`) are returned at once, without `getaddrinfo`.
/// - Names under `.invalid` fail at once with `.noName`, as RFC 6761 §6.4 asks of resolver libraries.
/// - Other names use `AI_ADDRCONFIG`: IPv6 addresses only come back when the host has an IPv6
///   address configured (and IPv4 likewise), so no connection is tried over a family that cannot
///   work. `localhost` and `*.localhost` (RFC 6761 §6.3) are looked up without it, because their
///   loopback addresses work on hosts with no other interface.
/// - Addresses come back in `getaddrinfo`'s order (RFC 6724 destination selection, `/etc/gai.conf`),
///   with exact duplicates removed.
public struct Resolver: Sendable {
    /// A resolver that uses the shared blocking pool.
    public init() {}

    /// The TCP addresses of `host` with `port`, in the system resolver's order (never empty).
    ///
    /// Cancelling the calling task resumes it at once with `DNSError.Code.cancelled`; a lookup
    /// already running on a pool thread finishes there and its result is dropped.
    public func resolve(host: String, port: UInt16) async throws(DNSError) -> [SocketAddress] {
        if let numeric = SocketAddress(ipAddress: host, port: port) { return [numeric] }
        if Self.isInvalidName(host) { throw DNSError(code: .noName, host: host) }
        if Task.isCancelled { throw DNSError(code: .cancelled, host: host) }

        let lookup = Lookup()
        let outcome: Result<[SocketAddress], DNSError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard lookup.start(continuation) else { return }
                do throws(IOError) {
                    try BlockingPool.shared.submit {
                        // Skip the lookup when the task was cancelled while this waited in the queue.
                        guard !lookup.isFinished else { return }
                        lookup.finish(Self.getAddressInfo(host: host, port: port))
                    }
                } catch {
                    lookup.finish(.failure(DNSError(code: .system, host: host, systemErrno: error.errno)))
                }
            }
        } onCancel: {
            lookup.finish(.failure(DNSError(code: .cancelled, host: host)))
        }
        return try outcome.get()
    }

    /// RFC 6761 §6.4: `invalid` and names under it never resolve.
    static func isInvalidName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name == "invalid" || name.hasSuffix(".invalid")
    }

    /// RFC 6761 §6.3: `localhost` and names under it are loopback names.
    static func isLocalhostName(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        return name == "localhost" || name.hasSuffix(".localhost")
    }

    /// Calls `getaddrinfo` (blocking) for TCP addresses of `host`, setting `port` on each.
    /// `family` and `flags` override the hints (for tests); by default `AF_UNSPEC` and the
    /// `AI_ADDRCONFIG` rule described on the type.
    static func getAddressInfo(
        host: String, port: UInt16, family: CInt = AF_UNSPEC, flags: CInt? = nil
    ) -> Result<[SocketAddress], DNSError> {
        var hints = addrinfo()
        hints.ai_family = family
        hints.ai_socktype = CInt(SOCK_STREAM.rawValue)
        hints.ai_protocol = CInt(IPPROTO_TCP)
        hints.ai_flags = flags ?? (isLocalhostName(host) ? 0 : AI_ADDRCONFIG)
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let code = getaddrinfo(host, nil, &hints, &list)
        guard code == 0 else {
            let saved = errno
            return .failure(DNSError(code: DNSError.Code(rawValue: code), host: host,
                                     systemErrno: code == EAI_SYSTEM ? saved : nil))
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var seen = Set<SocketAddress>()
        var cursor = list
        while let info = cursor {
            defer { cursor = info.pointee.ai_next }
            guard let raw = info.pointee.ai_addr else { continue }
            var storage = sockaddr_storage()
            let length = Swift.min(Int(info.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
            withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: length)) }
            guard let address = SocketAddress(storage: storage, length: socklen_t(length))?.withPort(port) else { continue }
            if seen.insert(address).inserted { addresses.append(address) }
        }
        guard !addresses.isEmpty else { return .failure(DNSError(code: .noAddress, host: host)) }
        return .success(addresses)
    }
}

extension Resolver {
    /// One lookup's meeting point: whichever of the pool thread and the cancellation handler comes
    /// first resumes the continuation; the other finds it done.
    final class Lookup: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<[SocketAddress], DNSError>, Never>?
            var early: Result<[SocketAddress], DNSError>?
            var finished = false
        }

        private let state = Mutex(State())

        var isFinished: Bool { state.withLock { $0.finished } }

        /// Installs the continuation; false (having resumed it) when cancellation came first.
        func start(_ continuation: CheckedContinuation<Result<[SocketAddress], DNSError>, Never>) -> Bool {
            let early = state.withLock { state -> Result<[SocketAddress], DNSError>? in
                if let early = state.early { return early }
                state.continuation = continuation
                return nil
            }
            if let early {
                continuation.resume(returning: early)
                return false
            }
            return true
        }

        /// Delivers `result` unless something was delivered before.
        func finish(_ result: Result<[SocketAddress], DNSError>) {
            let continuation = state.withLock { state -> CheckedContinuation<Result<[SocketAddress], DNSError>, Never>? in
                guard !state.finished else { return nil }
                state.finished = true
                guard let continuation = state.continuation else {
                    state.early = result
                    return nil
                }
                state.continuation = nil
                return continuation
            }
            continuation?.resume(returning: result)
        }
    }
}

import Glibc

/// The process's open descriptors by kernel identity, read from /proc/self/fd, for leak checks.
public enum DescriptorCensus {
    /// What a descriptor points at, by the prefix of its /proc/self/fd link.
    public enum Kind: Sendable {
        /// `socket:[inode]`.
        case socket
        /// Sockets and anonymous inodes (epoll, eventfd, timerfd).
        case socketOrAnonymousInode

        func matches(_ target: String) -> Bool {
            switch self {
            case .socket: target.hasPrefix("socket:")
            case .socketOrAnonymousInode: target.hasPrefix("socket:") || target.hasPrefix("anon_inode:")
            }
        }
    }

    /// The open descriptors of `kind`, as `"fd -> target"` (regular files are left out: other test
    /// targets read fixtures concurrently).
    public static func open(_ kind: Kind) -> Set<String> {
        var found = Set<String>()
        guard let directory = opendir("/proc/self/fd") else { return found }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = direntName(entry)
            guard let number = CInt(name), number != own else { continue }
            var target = [CChar](repeating: 0, count: 256)
            let count = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
            guard count > 0 else { continue }
            let text = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if kind.matches(text) { found.insert("\(name) -> \(text)") }
        }
        return found
    }

    /// How many descriptors the process has open (not counting the one this count reads through).
    public static func count() -> Int {
        guard let directory = opendir("/proc/self/fd") else { return -1 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            if direntName(entry).first != "." { count += 1 }
        }
        return count - 1
    }

    /// An entry's name, read in place up to its NUL: a record is only `d_reclen` bytes, and
    /// copying the whole 256-byte `d_name` can read past the end of libc's buffer and crash (the
    /// bug swift-corelibs-foundation PR 5472 fixed in `Process`).
    static func direntName(_ entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafePointer(to: &entry.pointee.d_name) { raw in
            String(cString: UnsafeRawPointer(raw).assumingMemoryBound(to: CChar.self))
        }
    }
}

// MARK: - Descriptors a test can call its own

extension DescriptorCensus {
    /// The open descriptors that belong to one test, however many other tests run in the process:
    /// TCP sockets whose peer port is one of `peerPorts` (servers the test started on OS-picked
    /// ports), and files and folders under `directory` (a folder the test made). As
    /// `"fd -> what"`; empty when the test leaked nothing.
    public static func owned(peerPorts: Set<Int>, under directory: String?) -> [String] {
        var found: [String] = []
        guard let listing = opendir("/proc/self/fd") else { return found }
        defer { closedir(listing) }
        let own = dirfd(listing)
        while let entry = readdir(listing) {
            let name = direntName(entry)
            guard let fd = CInt(name), fd != own, let target = linkTarget(fd) else { continue }
            if target.hasPrefix("socket:") {
                if let port = peerPort(fd), peerPorts.contains(port) { found.append("\(fd) -> \(target), peer port \(port)") }
            } else if let directory, target == directory || target.hasPrefix(directory + "/") {
                found.append("\(fd) -> \(target)")
            }
        }
        return found.sorted()
    }

    /// The TCP sockets that are neither connected nor listening (a connect that failed, or one
    /// not yet made), as `"fd -> socket:[inode]"`. A failed connect's socket has no peer to tell
    /// which test it belongs to, so a test counts these before and after many attempts.
    public static func unconnectedStreamSockets() -> Set<String> {
        var found = Set<String>()
        guard let listing = opendir("/proc/self/fd") else { return found }
        defer { closedir(listing) }
        let own = dirfd(listing)
        while let entry = readdir(listing) {
            let name = direntName(entry)
            guard let fd = CInt(name), fd != own, let target = linkTarget(fd), target.hasPrefix("socket:"),
                isInternetStream(fd), option(fd, SO_ACCEPTCONN) == 0, peerPort(fd) == nil, errno == ENOTCONN
            else { continue }
            found.insert("\(fd) -> \(target)")
        }
        return found
    }

    static func linkTarget(_ fd: CInt) -> String? {
        var target = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/fd/\(fd)", &target, target.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func option(_ fd: CInt, _ name: CInt) -> CInt? {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
    }

    static func isInternetStream(_ fd: CInt) -> Bool {
        let domain = option(fd, SO_DOMAIN)
        return (domain == AF_INET || domain == AF_INET6) && option(fd, SO_TYPE) == CInt(SOCK_STREAM.rawValue)
    }

    /// The peer's port of a connected IPv4 or IPv6 TCP socket; nil otherwise (errno says why).
    static func peerPort(_ fd: CInt) -> Int? {
        guard isInternetStream(fd) else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafePointer(to: &storage) { pointer -> Int? in
            switch CInt(pointer.pointee.ss_family) {
            case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            default: nil
            }
        }
    }
}

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
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let number = CInt(name), number != own else { continue }
            var target = [CChar](repeating: 0, count: 256)
            let count = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
            guard count > 0 else { continue }
            let text = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if kind.matches(text) { found.insert("\(name) -> \(text)") }
        }
        return found
    }
}

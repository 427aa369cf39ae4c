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

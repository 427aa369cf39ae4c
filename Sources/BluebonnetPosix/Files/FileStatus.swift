import Glibc

/// Which file a path or descriptor reached: the device and inode numbers.
///
/// Two statuses with the same identity are the same file, whatever its path; a path that was
/// replaced (a rename over it, delete and re-create) reaches a file with another identity.
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The device the file lives on (`st_dev`).
    public let device: UInt64
    /// The file's inode number on that device (`st_ino`).
    public let inode: UInt64

    /// An identity from its numbers.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    /// `device:inode`, e.g. `2049:1835011`.
    public var description: String { "\(device):\(inode)" }
}

/// What `stat(2)`/`fstat(2)` said about a file: its kind, size, identity and modification time.
public struct FileStatus: Hashable, Sendable {
    /// The kind of file.
    public enum Kind: Hashable, Sendable {
        /// A regular file.
        case regularFile
        /// A directory.
        case directory
        /// A symbolic link (only from calls that do not follow links; Bluebonnet's follow them).
        case symbolicLink
        /// A device, pipe, socket or other special file.
        case other
    }

    /// The kind of file.
    public let kind: Kind
    /// The size in bytes (`st_size`). For special files it means little (0 for most devices).
    public let size: UInt64
    /// The device and inode.
    public let identity: FileIdentity
    /// The last data modification (`st_mtim`), since the Unix epoch, to the nanosecond.
    public let modificationTime: Duration

    /// A status from its parts (tests and callers that keep statuses).
    public init(kind: Kind, size: UInt64, identity: FileIdentity, modificationTime: Duration) {
        self.kind = kind
        self.size = size
        self.identity = identity
        self.modificationTime = modificationTime
    }

    init(_ raw: stat) {
        switch raw.st_mode & S_IFMT {
        case S_IFREG: kind = .regularFile
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        size = UInt64(max(raw.st_size, 0))
        identity = FileIdentity(device: UInt64(raw.st_dev), inode: UInt64(raw.st_ino))
        modificationTime = .seconds(raw.st_mtim.tv_sec) + .nanoseconds(raw.st_mtim.tv_nsec)
    }

    /// Whether this is a regular file.
    public var isRegularFile: Bool { kind == .regularFile }
    /// Whether this is a directory.
    public var isDirectory: Bool { kind == .directory }

    /// Whether `other` describes the same file with the same contents as far as the kernel says:
    /// same identity, size and modification time.
    ///
    /// An upload records the status when a file is added and compares before sending it: a
    /// different size means the declared `Content-Length` would be wrong. The modification time
    /// has the file system's granularity (nanoseconds on ext4, xfs, btrfs and tmpfs), so a write
    /// within the same tick that keeps the size is not seen.
    public func isSameVersion(as other: FileStatus) -> Bool {
        identity == other.identity && size == other.size && modificationTime == other.modificationTime
    }
}

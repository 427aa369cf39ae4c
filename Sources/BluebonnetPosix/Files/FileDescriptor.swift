import BluebonnetCore
import Glibc

/// An owned, blocking, close-on-exec descriptor of an open file (or directory).
///
/// `~Copyable`: exactly one value owns the descriptor. ``close()`` consumes it and reports errors;
/// a descriptor dropped while still open is closed by `deinit` (errors ignored). Every call
/// blocks until the kernel is done (regular files are never non-blocking): call them off event
/// loop threads. `EINTR` is retried; every failure is a ``FileError`` naming ``path``.
public struct FileDescriptor: ~Copyable, Sendable {
    /// How ``openForWriting(atPath:_:permissions:)`` treats an existing file.
    public enum WriteMode: Hashable, Sendable {
        /// Create the file; fail with ``FileError/Code/exists`` if the path exists, even as a
        /// dangling symbolic link (`O_CREAT | O_EXCL`). For temporary files and "never overwrite".
        case createNew
        /// Create the file, or empty an existing one (`O_CREAT | O_TRUNC`).
        case truncate
        /// Create the file, or keep an existing one and write at its end (`O_CREAT | O_APPEND`):
        /// every write goes to the end, whatever else moved the offset. For resuming downloads.
        case append
    }

    /// The owner proper: only trivially destroyed fields, so that it can `discard` itself.
    private let owned: OwnedDescriptor
    /// The path the file was opened at (kept for errors; the file may since have been renamed).
    public let path: String

    /// The descriptor number. Valid until closed or released; do not close it yourself.
    public var descriptor: CInt { owned.descriptor }

    /// Takes ownership of `descriptor`, an open file reached through `path`.
    public init(takingOwnershipOf descriptor: CInt, path: String) {
        precondition(descriptor >= 0, "invalid descriptor \(descriptor)")
        self.owned = OwnedDescriptor(descriptor: descriptor)
        self.path = path
    }

    /// Opens `path` read-only (`O_RDONLY | O_CLOEXEC`), following symbolic links. Directories open
    /// too (to `fsync` them after a rename, or to read their status).
    ///
    /// Fails with ``FileError/Code/notFound`` when the path does not exist,
    /// ``FileError/Code/notDirectory`` when a component is a file, and
    /// ``FileError/Code/permissionDenied`` when it may not be read.
    public static func openForReading(atPath path: String) throws(FileError) -> FileDescriptor {
        try FileSystem.checkNoNUL(path, function: "open")
        let flags = O_RDONLY | O_CLOEXEC
        let fd = try Syscall.file("open", path: path) { Glibc.open(path, flags) }
        return FileDescriptor(takingOwnershipOf: fd, path: path)
    }

    /// Opens `path` write-only (`O_WRONLY | O_CLOEXEC` and `mode`'s flags), creating it with
    /// `permissions` (less the process's umask) when it does not exist.
    ///
    /// Fails with ``FileError/Code/exists`` (``WriteMode/createNew`` on an existing path),
    /// ``FileError/Code/isDirectory`` (the path is a directory), ``FileError/Code/notFound`` (its
    /// directory does not exist), ``FileError/Code/notDirectory`` (a component is a file) or
    /// ``FileError/Code/permissionDenied``.
    public static func openForWriting(
        atPath path: String,
        _ mode: WriteMode,
        permissions: FilePermissions = .ownerReadWriteOthersRead
    ) throws(FileError) -> FileDescriptor {
        try FileSystem.checkNoNUL(path, function: "open")
        var flags = O_WRONLY | O_CLOEXEC | O_CREAT
        switch mode {
        case .createNew: flags |= O_EXCL
        case .truncate: flags |= O_TRUNC
        case .append: flags |= O_APPEND
        }
        let fd = try Syscall.file("open", path: path) { Glibc.open(path, flags, permissions.rawValue) }
        return FileDescriptor(takingOwnershipOf: fd, path: path)
    }

    /// Closes the file, reporting a failure of `close(2)` (the descriptor is released either way).
    /// A descriptor dropped without calling this is closed all the same, errors ignored.
    ///
    /// On some file systems (NFS) a failed write surfaces only here; call ``synchronize()`` first
    /// when the data must be on disk.
    public consuming func close() throws(FileError) {
        let path = self.path
        do throws(IOError) {
            try owned.close()
        } catch {
            throw FileError(errno: error.errno, function: "close", path: path)
        }
    }

    /// Gives up ownership and returns the descriptor, which the caller must now close.
    public consuming func releaseDescriptor() -> CInt {
        owned.release()
    }

    // MARK: Status

    /// The open file's status (`fstat(2)`): kind, size, identity and modification time, for the
    /// file as it is now, even if its path was since renamed or removed.
    public func status() throws(FileError) -> FileStatus {
        var raw = stat()
        _ = try Syscall.file("fstat", path: path) { fstat(descriptor, &raw) }
        return FileStatus(raw)
    }

    // MARK: Reading

    /// Reads up to `buffer.count` bytes at the current offset and moves the offset past them;
    /// returns the count, 0 at the end of the file (or for an empty buffer).
    ///
    /// Fewer bytes than asked for is not the end: only 0 is.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(FileError) -> Int {
        guard buffer.count > 0 else { return 0 }
        return try Syscall.file("read", path: path) { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
    }

    /// Reads up to `buffer.count` bytes starting at `offset` (`pread(2)`), leaving the current
    /// offset where it was; returns the count, 0 at or past the end of the file.
    ///
    /// Reading by offset lets a caller read the same file again (a retried upload) without
    /// reopening or seeking.
    public func read(into buffer: UnsafeMutableRawBufferPointer, atOffset offset: UInt64) throws(FileError) -> Int {
        guard buffer.count > 0 else { return 0 }
        precondition(offset <= UInt64(Int64.max), "offset \(offset) past the largest file offset")
        return try Syscall.file("pread", path: path) {
            pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
        }
    }

    /// Reads up to `maxBytes` (default 64 KiB) at the current offset into `buffer` after its
    /// writer index; returns the count, 0 at the end of the file.
    public func read(into buffer: inout ByteBuffer, maxBytes: Int = 64 * 1024) throws(FileError) -> Int {
        precondition(maxBytes > 0, "maxBytes must be positive")
        return try buffer.withUnsafeMutableWritableBytes(minimumWritableBytes: maxBytes) {
            (region) throws(FileError) -> Int in
            try read(into: UnsafeMutableRawBufferPointer(rebasing: region[..<Swift.min(region.count, maxBytes)]))
        }
    }

    // MARK: Writing

    /// Writes all of `bytes` at the current offset (at the end, for ``WriteMode/append``),
    /// calling `write(2)` again after short writes.
    ///
    /// Fails with ``FileError/Code/noSpace`` when the disk or quota is full and
    /// ``FileError/Code/fileTooLarge`` past `RLIMIT_FSIZE`. After a failure some of the bytes may
    /// have been written: truncate or remove the file.
    ///
    /// Passing `RLIMIT_FSIZE` does not kill the process: `SIGXFSZ` is blocked on the calling
    /// thread during the call and the one the kernel raises is discarded (no process-wide signal
    /// disposition is changed).
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(FileError) {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        try Syscall.withFileSizeSignalBlocked { () throws(FileError) in
            var written = 0
            while written < bytes.count {
                written += try Syscall.file("write", path: path) {
                    Glibc.write(descriptor, base + written, bytes.count - written)
                }
            }
        }
    }

    /// Writes all of `buffer`'s readable bytes (its indices do not move), as the raw-bytes
    /// `writeAll` does: short writes continued, `SIGXFSZ` absorbed.
    public func writeAll(_ buffer: ByteBuffer) throws(FileError) {
        try buffer.withUnsafeReadableBytes { (bytes) throws(FileError) in try writeAll(bytes) }
    }

    /// Flushes the file's data and metadata to the device (`fsync(2)`).
    ///
    /// For a file that replaces another by ``FileSystem/rename(atPath:toPath:)``, synchronize
    /// the file before the rename and its directory (opened with ``openForReading(atPath:)``)
    /// after it, so that a crash leaves the old or the new file, never an empty one.
    public func synchronize() throws(FileError) {
        _ = try Syscall.file("fsync", path: path) { fsync(descriptor) }
    }

    /// Sets the file's size to `size` (`ftruncate(2)`): cuts it, or extends it with zeros
    /// (sparse where the file system allows). The offset does not move.
    ///
    /// Fails with ``FileError/Code/fileTooLarge`` past `RLIMIT_FSIZE` or the file system's
    /// largest file, with `SIGXFSZ` absorbed as for writes.
    public func truncate(toSize size: UInt64) throws(FileError) {
        guard size <= UInt64(Int64.max) else {
            throw FileError(errno: EFBIG, function: "ftruncate", path: path)
        }
        try Syscall.withFileSizeSignalBlocked { () throws(FileError) in
            _ = try Syscall.file("ftruncate", path: path) { ftruncate(descriptor, off_t(size)) }
        }
    }
}

/// Closes its descriptor on `deinit` unless closed or released first.
///
/// `@usableFromInline` rather than `private`: with cross-module optimization (release builds),
/// code of ``FileDescriptor`` inlined into another module refers to this type's metadata, and a
/// `private` type's symbol is not exported — the release link of any client failed with an
/// undefined `OwnedDescriptor` (seen linking the benchmarks).
@usableFromInline
struct OwnedDescriptor: ~Copyable, Sendable {
    let descriptor: CInt

    deinit {
        _ = try? Syscall.close(descriptor)
    }

    consuming func close() throws(IOError) {
        let fd = descriptor
        discard self
        try Syscall.close(fd)
    }

    consuming func release() -> CInt {
        let fd = descriptor
        discard self
        return fd
    }
}

/// The permission bits a created file or directory gets (before the process's umask).
public struct FilePermissions: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The mode bits, e.g. `0o644`.
    public let rawValue: mode_t

    /// Permissions from mode bits.
    public init(rawValue: mode_t) { self.rawValue = rawValue }

    /// Permissions from an octal literal: `0o600`.
    public init(integerLiteral value: mode_t) { self.rawValue = value }

    /// `0o600`: read and write for the owner only. Temporary files, partial downloads.
    public static let ownerReadWrite: FilePermissions = 0o600
    /// `0o644`: read and write for the owner, read for everyone else. Finished files.
    public static let ownerReadWriteOthersRead: FilePermissions = 0o644
    /// `0o755`: full access for the owner, list and enter for everyone else. Directories.
    public static let directoryDefault: FilePermissions = 0o755

    /// The bits in octal, e.g. `0o644`.
    public var description: String { "0o" + String(rawValue, radix: 8) }
}

import Glibc

/// Calls on paths: status, rename, remove, create directories and unique temporary files.
///
/// Every call blocks (run them off event loop threads), retries `EINTR` and throws ``FileError``
/// with the path. Paths are byte strings to the kernel: a path containing NUL is refused with
/// `EINVAL` instead of being cut short at the NUL.
public enum FileSystem {
    /// The status of what `path` names, following symbolic links (`stat(2)`).
    ///
    /// Fails with ``FileError/Code/notFound`` when nothing is there (``statusIfExists(atPath:)``
    /// returns nil instead) and ``FileError/Code/notDirectory`` when a component is a file.
    public static func status(atPath path: String) throws(FileError) -> FileStatus {
        try checkNoNUL(path, function: "stat")
        var raw = stat()
        _ = try Syscall.file("stat", path: path) { stat(path, &raw) }
        return FileStatus(raw)
    }

    /// The status of what `path` names, or nil when nothing is there (`ENOENT`); other failures
    /// are thrown.
    public static func statusIfExists(atPath path: String) throws(FileError) -> FileStatus? {
        do throws(FileError) {
            return try status(atPath: path)
        } catch where error.code == .notFound {
            return nil
        }
    }

    /// Renames `source` to `destination` (`rename(2)`), atomically replacing a file already at
    /// `destination`: every reader sees the old file or the new one, never neither or a mix.
    ///
    /// Both paths must be on the same file system (``FileError/Code/other(_:)`` with `EXDEV`
    /// otherwise); put the temporary file next to its destination
    /// (``createTemporaryFile(nextTo:permissions:)``). A directory at `destination` is not
    /// replaced by a file (``FileError/Code/isDirectory``). The rename is atomic, not durable: see
    /// ``FileDescriptor/synchronize()``.
    public static func rename(atPath source: String, toPath destination: String) throws(FileError) {
        try checkNoNUL(source, function: "rename")
        try checkNoNUL(destination, function: "rename")
        _ = try Syscall.file("rename", path: source, destinationPath: destination) {
            Glibc.rename(source, destination)
        }
    }

    /// Removes the file (or symbolic link) at `path` (`unlink(2)`). Directories are not removed
    /// (``FileError/Code/isDirectory`` or ``FileError/Code/permissionDenied``, as the kernel says).
    public static func removeFile(atPath path: String) throws(FileError) {
        try checkNoNUL(path, function: "unlink")
        _ = try Syscall.file("unlink", path: path) { unlink(path) }
    }

    /// Creates the directory `path` with `permissions` (less the umask), and with
    /// `intermediateDirectories` every missing directory on the way, like `mkdir -p`.
    ///
    /// A directory already at `path` is success, also when another process creates it meanwhile.
    /// Something other than a directory there fails with ``FileError/Code/exists``; a file on the
    /// way fails with ``FileError/Code/notDirectory``.
    public static func createDirectory(
        atPath path: String,
        permissions: FilePermissions = .directoryDefault,
        intermediateDirectories: Bool = true
    ) throws(FileError) {
        try checkNoNUL(path, function: "mkdir")
        do throws(FileError) {
            _ = try Syscall.file("mkdir", path: path) { mkdir(path, permissions.rawValue) }
        } catch where error.code == .exists {
            // EEXIST is success only for a directory (following a link to one, as mkdir -p does).
            if try statusIfExists(atPath: path)?.isDirectory == true { return }
            throw error
        } catch where error.code == .notFound && intermediateDirectories {
            guard let parent = parentDirectory(of: path), parent != path else { throw error }
            try createDirectory(atPath: parent, permissions: permissions, intermediateDirectories: true)
            try createDirectory(atPath: path, permissions: permissions, intermediateDirectories: false)
        }
    }

    /// Creates an empty, unique file next to `destination`, named `.<name>.bluebonnet-XXXXXX`
    /// (six random letters and digits), and opens it for writing; the descriptor's
    /// ``FileDescriptor/path`` is the new file's path.
    ///
    /// Each name is tried with an exclusive create (`O_CREAT | O_EXCL`, as `mkstemp(3)` does), so
    /// the file is new and ours even when other processes use the same directory; a taken name
    /// is retried with new letters. Being in the destination's directory (on its file system),
    /// the finished file can be moved into place with ``rename(atPath:toPath:)``. A long name is
    /// shortened so the temporary name fits in 255 bytes. The caller removes the file if it does
    /// not rename it.
    public static func createTemporaryFile(
        nextTo destination: String,
        permissions: FilePermissions = .ownerReadWrite
    ) throws(FileError) -> FileDescriptor {
        try checkNoNUL(destination, function: "open")
        let (directory, name) = splitDirectoryAndName(destination)
        let prefix = "." + shortened(name, toUTF8Count: temporaryNameBudget) + ".bluebonnet-"
        var generator = SystemRandomNumberGenerator()
        var attempts = 0
        while true {
            attempts += 1
            let path = directory + prefix + randomSuffix(using: &generator)
            do throws(FileError) {
                return try FileDescriptor.openForWriting(atPath: path, .createNew, permissions: permissions)
            } catch where error.code == .exists && attempts < maximumTemporaryNameAttempts {
                continue
            }
        }
    }

    // MARK: Helpers

    /// How many taken names `createTemporaryFile` tries before giving up with `EEXIST`.
    static let maximumTemporaryNameAttempts = 100

    /// The longest file name most Linux file systems take (`NAME_MAX`), in bytes.
    static let maximumNameLength = 255

    /// What is left for the destination's name: `NAME_MAX` less `.`, `.bluebonnet-` and six letters.
    static let temporaryNameBudget = maximumNameLength - 1 - ".bluebonnet-".utf8.count - 6

    /// The letters of a temporary name's suffix.
    private static let suffixAlphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)

    static func randomSuffix(using generator: inout some RandomNumberGenerator) -> String {
        var letters: [UInt8] = []
        letters.reserveCapacity(6)
        for _ in 0..<6 { letters.append(suffixAlphabet.randomElement(using: &generator)!) }
        return String(decoding: letters, as: UTF8.self)
    }

    /// `("dir/", "name")` for `dir/name`, `("", "name")` for a bare name, `("/", "name")` for
    /// `/name`. A trailing slash is ignored.
    static func splitDirectoryAndName(_ path: String) -> (directory: String, name: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return ("", String(trimmed)) }
        return (String(trimmed[...slash]), String(trimmed[trimmed.index(after: slash)...]))
    }

    /// The directory above `path` (`a/b` for `a/b/c`, `/` for `/a`), or nil for a bare name or `/`.
    static func parentDirectory(of path: String) -> String? {
        var trimmed = Substring(path)
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return nil }
        var parent = trimmed[..<slash]
        while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
        if parent.isEmpty { return trimmed == "/" ? nil : "/" }
        return String(parent)
    }

    /// `name` cut to at most `limit` UTF-8 bytes, at a character boundary.
    static func shortened(_ name: String, toUTF8Count limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var result = ""
        var count = 0
        for character in name {
            let size = character.utf8.count
            if count + size > limit { break }
            result.append(character)
            count += size
        }
        return result
    }

    /// Throws `EINVAL` for a path with a NUL byte, which C would silently cut short.
    static func checkNoNUL(_ path: String, function: StaticString) throws(FileError) {
        if path.utf8.contains(0) { throw FileError(errno: EINVAL, function: function, path: path) }
    }
}

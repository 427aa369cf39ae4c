import Glibc

extension FileSystem {
    /// The names in the directory at `path` (`opendir(3)`/`readdir(3)`), without `.` and `..`,
    /// in the order the file system gives them (no particular order).
    ///
    /// A file created or removed while the directory is read may or may not be listed; every
    /// name present throughout is listed once. Fails with ``FileError/Code/notFound``,
    /// ``FileError/Code/notDirectory`` (`path` is a file) or
    /// ``FileError/Code/permissionDenied``. The directory's descriptor is close-on-exec and
    /// closed before returning.
    public static func contentsOfDirectory(atPath path: String) throws(FileError) -> [String] {
        try checkNoNUL(path, function: "opendir")
        guard let directory = opendir(path) else {
            throw FileError(errno: errno, function: "opendir", path: path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                let code = errno
                if code == 0 { return names }
                if code == EINTR { continue }
                throw FileError(errno: code, function: "readdir", path: path)
            }
            // The name is read in place, up to its NUL: a record is only `d_reclen` bytes, and
            // copying the whole 256-byte `d_name` (as `raw.pointee` would) can read past the end
            // of libc's buffer (the crash behind swift-corelibs-foundation PR 5472).
            let name = withUnsafePointer(to: &entry.pointee.d_name) { raw in
                String(cString: UnsafeRawPointer(raw).assumingMemoryBound(to: CChar.self))
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
    }
}

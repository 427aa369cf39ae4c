import Glibc

extension FileError {
    /// `EEXIST` for `path` from `function`: for callers that find a path taken before they call
    /// the kernel (a move that must not replace a file).
    public static func exists(atPath path: String, function: StaticString) -> FileError {
        FileError(errno: EEXIST, function: function, path: path)
    }
}

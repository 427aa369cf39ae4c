import Glibc

/// A file-system call that failed: a category a caller can act on, the `errno`, the call's name
/// and the path it was about.
///
/// A struct over a code, so that categories can be added: compare ``code`` with the static codes
/// (`error.code == .noSpace`). Every call in `FileDescriptor` and `FileSystem` throws this and
/// nothing else; `EINTR` is never seen here (the syscall door retries it).
public struct FileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why a file call failed, grouped the way callers react to it.
    ///
    /// The groups fold several `errno` values each (see ``init(errno:)``); the exact value stays in
    /// ``FileError/errno``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: Hashable, Sendable {
            case noSpace, permissionDenied, notFound, fileTooLarge, isDirectory, notDirectory, exists
            case other(CInt)
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The file system or the user's quota is full (`ENOSPC`, `EDQUOT`).
        public static let noSpace = Code(.noSpace)
        /// The caller may not do this here: permission bits or ACLs (`EACCES`), an operation the
        /// file or file system refuses (`EPERM`), or a read-only file system (`EROFS`).
        public static let permissionDenied = Code(.permissionDenied)
        /// The path, or a directory on the way to it, does not exist (`ENOENT`).
        public static let notFound = Code(.notFound)
        /// The write or size would pass the process's file-size limit (`RLIMIT_FSIZE`) or the file
        /// system's largest file (`EFBIG`). The `SIGXFSZ` the kernel raises with it is absorbed by
        /// ``FileDescriptor``'s writes and truncations and does not end the process.
        public static let fileTooLarge = Code(.fileTooLarge)
        /// The path names a directory where a file was needed, e.g. opened for writing (`EISDIR`).
        public static let isDirectory = Code(.isDirectory)
        /// A component on the way to the path is not a directory, e.g. a path under a regular file
        /// (`ENOTDIR`).
        public static let notDirectory = Code(.notDirectory)
        /// The path already exists: an exclusive create, or `mkdir` over a file (`EEXIST`).
        public static let exists = Code(.exists)

        /// Any other `errno` (`EXDEV`, `ENAMETOOLONG`, `EMFILE`, `EIO`…), kept as is.
        public static func other(_ errno: CInt) -> Code { Code(.other(errno)) }

        /// The code for `errno`.
        public init(errno: CInt) {
            switch errno {
            case ENOSPC, EDQUOT: self = .noSpace
            case EACCES, EPERM, EROFS: self = .permissionDenied
            case ENOENT: self = .notFound
            case EFBIG: self = .fileTooLarge
            case EISDIR: self = .isDirectory
            case ENOTDIR: self = .notDirectory
            case EEXIST: self = .exists
            default: self = .other(errno)
            }
        }

        /// The code's name, e.g. `noSpace`, or `other(18)`.
        public var description: String {
            switch base {
            case .noSpace: "noSpace"
            case .permissionDenied: "permissionDenied"
            case .notFound: "notFound"
            case .fileTooLarge: "fileTooLarge"
            case .isDirectory: "isDirectory"
            case .notDirectory: "notDirectory"
            case .exists: "exists"
            case .other(let errno): "other(\(errno))"
            }
        }
    }

    /// What went wrong, as a category.
    public let code: Code
    /// The `errno` the call set, e.g. `ENOSPC`.
    public let errno: CInt
    private let _function: StaticString
    /// The path the call was about: the path given, or the path a `FileDescriptor` was opened with.
    public let path: String
    /// A second path the call was about: the destination of a rename; nil otherwise.
    public let destinationPath: String?

    /// The name of the failed call, e.g. `"openat"` or `"write"`.
    public var function: String { _function.description }

    /// An error for `function` failing with `errno` on `path` (and `destinationPath`, for renames).
    public init(errno: CInt, function: StaticString, path: String, destinationPath: String? = nil) {
        self.code = Code(errno: errno)
        self.errno = errno
        self._function = function
        self.path = path
        self.destinationPath = destinationPath
    }

    /// The same failure as an ``IOError`` (the `errno` and the call's name, without the path).
    public var ioError: IOError { IOError(errno: errno, function: _function) }

    /// The system's text for `errno` (from `strerror_r`), e.g. `"No space left on device"`.
    public var reason: String { ioError.reason }

    /// `"<function> <path> failed: <reason> (errno <n>)"`, with ` -> <destination>` for a rename.
    public var description: String {
        let target = destinationPath.map { "\(path) -> \($0)" } ?? path
        return "\(function) \(target) failed: \(reason) (errno \(errno))"
    }

    /// Equal when the `errno`, the function name and the paths are.
    public static func == (lhs: FileError, rhs: FileError) -> Bool {
        lhs.errno == rhs.errno && lhs.function == rhs.function && lhs.path == rhs.path
            && lhs.destinationPath == rhs.destinationPath
    }

    /// Hashes the `errno`, the function name and the paths.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(errno)
        hasher.combine(function)
        hasher.combine(path)
        hasher.combine(destinationPath)
    }
}

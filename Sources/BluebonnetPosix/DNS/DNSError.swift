import Glibc

/// A name that could not be resolved: the `getaddrinfo` code, its text, and the host.
public struct DNSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Why resolution failed. A struct over the raw `EAI_*` value, so that codes can be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The `EAI_*` value from `getaddrinfo`, or one of Bluebonnet's own (positive) values.
        public let rawValue: CInt

        /// Makes a code from an `EAI_*` value.
        public init(rawValue: CInt) { self.rawValue = rawValue }

        /// The name does not exist (`EAI_NONAME`), including `.invalid` names (RFC 6761 §6.4).
        public static let noName = Code(rawValue: EAI_NONAME)
        /// The name exists but has no address of a usable family (`EAI_NODATA`, `EAI_ADDRFAMILY`).
        public static let noAddress = Code(rawValue: -5)
        /// A temporary failure, such as an unreachable DNS server; retrying may help (`EAI_AGAIN`).
        public static let temporaryFailure = Code(rawValue: EAI_AGAIN)
        /// A permanent failure of the name server (`EAI_FAIL`).
        public static let permanentFailure = Code(rawValue: EAI_FAIL)
        /// Out of memory (`EAI_MEMORY`).
        public static let outOfMemory = Code(rawValue: EAI_MEMORY)
        /// A system error; see `DNSError.systemErrno` (`EAI_SYSTEM`).
        public static let system = Code(rawValue: EAI_SYSTEM)
        /// The waiting task was cancelled (Bluebonnet's own code).
        public static let cancelled = Code(rawValue: 1)

        /// `EAI_ADDRFAMILY` (a GNU extension Glibc's module leaves out), folded into `noAddress`.
        static let addressFamilyRaw: CInt = -9

        /// The name of the code, e.g. `noName`, or `EAI(-8)` for others.
        public var description: String {
            switch self {
            case .noName: "noName"
            case .noAddress: "noAddress"
            case .temporaryFailure: "temporaryFailure"
            case .permanentFailure: "permanentFailure"
            case .outOfMemory: "outOfMemory"
            case .system: "system"
            case .cancelled: "cancelled"
            default: "EAI(\(rawValue))"
            }
        }
    }

    /// Why it failed.
    public let code: Code
    /// The host that was being resolved.
    public let host: String
    /// With `Code.system`, the `errno` that `getaddrinfo` left; otherwise nil.
    public let systemErrno: CInt?

    /// An error for `host` with `code` (and, for `.system`, the `errno`).
    public init(code: Code, host: String, systemErrno: CInt? = nil) {
        self.code = code == Code(rawValue: Code.addressFamilyRaw) ? .noAddress : code
        self.host = host
        self.systemErrno = systemErrno
    }

    /// The system's text for the code (`gai_strerror`), e.g. `"Name or service not known"`.
    public var message: String {
        switch code {
        case .cancelled:
            return "Resolution cancelled"
        case .system:
            if let systemErrno { return IOError(errno: systemErrno, function: "getaddrinfo").reason }
            return String(cString: gai_strerror(code.rawValue))
        default:
            return String(cString: gai_strerror(code.rawValue))
        }
    }

    /// `resolving "<host>" failed: <message>`.
    public var description: String { "resolving \"\(host)\" failed: \(message)" }
}

import Glibc

/// What a process may ask about itself without Foundation: one environment variable, its
/// executable's name, and the kernel's release. For the library's default headers (`Accept-Language`, `User-Agent`), which
/// read these once per process: going through `ProcessInfo` and Foundation's file APIs instead made
/// that the only use of their code in many processes, its pages resident for good.
public enum ProcessFacts {
    /// The value of the environment variable `name` (`getenv(3)`), nil when it is not set.
    public static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The file name of the running executable (`/proc/self/exe`, symbolic links resolved, as
    /// Foundation's `ProcessInfo.processName` gives it), nil when it cannot be read.
    public static func executableName() -> String? {
        var path = [UInt8](repeating: 0, count: Int(PATH_MAX))
        let length = path.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { readlink("/proc/self/exe", $0.baseAddress!, $0.count) }
        }
        guard length > 0, length < path.count else { return nil }
        let name = path[..<length].split(separator: UInt8(ascii: "/")).last.map { String(decoding: $0, as: UTF8.self) }
        return name?.isEmpty == false ? name : nil
    }

    /// The running kernel's release as `uname -r` prints it (`uname(2)`), nil when it cannot be read.
    public static func kernelRelease() -> String? {
        var names = utsname()
        guard uname(&names) == 0 else { return nil }
        let release = withUnsafeBytes(of: &names.release) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return release.isEmpty ? nil : release
    }
}

import Glibc

extension FileDescriptor {
    /// Sets the open file's modification time to `time` since the Unix epoch, to the nanosecond,
    /// leaving its access time alone (`futimens(2)` with `UTIME_OMIT`).
    ///
    /// Works on a descriptor opened read-only when the process owns the file (or may write it);
    /// fails with ``FileError/Code/permissionDenied`` otherwise. The time is stored as given
    /// (nanoseconds on ext4, xfs, btrfs and tmpfs), unlike the kernel's own stamps, which move
    /// in clock ticks of a few milliseconds: callers that order files by it should pass their
    /// own clock's reading. Times before 1970 are refused with `EINVAL`.
    public func setModificationTime(_ time: Duration) throws(FileError) {
        let (seconds, attoseconds) = time.components
        guard seconds >= 0, attoseconds >= 0 else {
            throw FileError(errno: EINVAL, function: "futimens", path: path)
        }
        var times = (
            timespec(tv_sec: 0, tv_nsec: Self.timeOmitted),
            timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        )
        _ = try withUnsafePointer(to: &times) { (pair) throws(FileError) -> CInt in
            try pair.withMemoryRebound(to: timespec.self, capacity: 2) { (first) throws(FileError) -> CInt in
                try Syscall.file("futimens", path: path) { futimens(descriptor, first) }
            }
        }
    }

    /// `UTIME_OMIT` (`(1 << 30) - 2` in the Linux UAPI's `<linux/stat.h>`): "leave this time as
    /// it is". A macro Swift does not import.
    static let timeOmitted = (1 << 30) - 2
}

import Glibc

/// Which advisory lock ``FileDescriptor/lock(_:)`` takes.
public enum FileLockKind: Hashable, Sendable {
    /// Many holders at once, none while an exclusive lock is held (`LOCK_SH`).
    case shared
    /// One holder, and no shared holder (`LOCK_EX`).
    case exclusive
}

extension FileDescriptor {
    /// Takes an advisory lock on the open file (`flock(2)`), waiting while another holder's lock
    /// conflicts with it. Taking a lock of the other kind on the same descriptor converts it.
    ///
    /// The lock belongs to the open file description: another `open` of the same file, in this
    /// process or another, conflicts with it; it is released by ``unlock()``, or when the last
    /// descriptor of that description closes (the process exits or crashes included), so a
    /// crashed holder never leaves it behind. Advisory: it keeps out only those who ask for it.
    /// On NFS, Linux emulates it with a byte-range lock over the whole file.
    public func lock(_ kind: FileLockKind) throws(FileError) {
        let operation = kind == .exclusive ? LOCK_EX : LOCK_SH
        _ = try Syscall.file("flock", path: path) { flock(descriptor, operation) }
    }

    /// Takes the lock as ``lock(_:)`` does if no other holder's lock conflicts with it, without
    /// waiting; returns whether it was taken.
    public func tryLock(_ kind: FileLockKind) throws(FileError) -> Bool {
        let operation = (kind == .exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB
        do throws(FileError) {
            _ = try Syscall.file("flock", path: path) { flock(descriptor, operation) }
            return true
        } catch where error.errno == EWOULDBLOCK {
            return false
        }
    }

    /// Releases the lock this open file description holds (`LOCK_UN`); nothing happens when it
    /// holds none.
    public func unlock() throws(FileError) {
        _ = try Syscall.file("flock", path: path) { flock(descriptor, LOCK_UN) }
    }
}

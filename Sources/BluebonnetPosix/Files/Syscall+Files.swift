import Glibc

/// The file calls' side of the syscall door: the same `EINTR` retry as `Syscall.complete`, with
/// failures thrown as ``FileError`` (which carries the path), and `SIGXFSZ` kept from killing the
/// process.
extension Syscall {
    /// Runs a file call through `Syscall.complete` (`EINTR` retried; `EAGAIN` is an error here:
    /// regular files never return it), rethrowing its failure as a ``FileError`` about `path`.
    @inline(__always)
    static func file<R: FixedWidthInteger>(
        _ function: StaticString,
        path: String,
        destinationPath: String? = nil,
        _ body: () -> R
    ) throws(FileError) -> R {
        do throws(IOError) {
            return try complete(function, body)
        } catch {
            throw FileError(errno: error.errno, function: function, path: path, destinationPath: destinationPath)
        }
    }

    /// Runs `body`, a call that can grow a file (`write`, `ftruncate`), with `SIGXFSZ` blocked on
    /// the calling thread, so that passing `RLIMIT_FSIZE` is an `EFBIG` error and not death.
    ///
    /// Why this way: past the limit the kernel fails the call with `EFBIG` *and* sends `SIGXFSZ`
    /// to the calling thread (`send_sig` to `current`), whose default action ends the process with
    /// a core dump. Blocking it on this thread for the duration of the call leaves the signal
    /// pending on this thread only; after an `EFBIG` it is taken off with a zero-timeout
    /// `sigtimedwait`, then the thread's previous mask is restored. No process-wide disposition is
    /// changed (a library must not `signal(SIGXFSZ, SIG_IGN)` behind its host's back), other
    /// threads are untouched, and the cost is two `pthread_sigmask` calls per guarded call.
    static func withFileSizeSignalBlocked<R>(_ body: () throws(FileError) -> R) throws(FileError) -> R {
        var fileSizeSignal = sigset_t()
        sigemptyset(&fileSizeSignal)
        sigaddset(&fileSizeSignal, SIGXFSZ)
        var previous = sigset_t()
        // Cannot fail with a valid `how` and set.
        pthread_sigmask(SIG_BLOCK, &fileSizeSignal, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        do throws(FileError) {
            return try body()
        } catch {
            if error.errno == EFBIG { discardPendingFileSizeSignal(&fileSizeSignal) }
            throw error
        }
    }

    /// Takes a pending `SIGXFSZ` off this thread (and the process), without waiting.
    private static func discardPendingFileSizeSignal(_ set: inout sigset_t) {
        var noWait = timespec(tv_sec: 0, tv_nsec: 0)
        // The signal number when one was pending, -1 with EAGAIN when none was (EINTR: ask again).
        while true {
            let result = sigtimedwait(&set, nil, &noWait)
            if result == SIGXFSZ || (result == -1 && errno == EINTR) { continue }
            return
        }
    }
}

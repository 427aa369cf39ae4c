import BluebonnetCore
@testable import BluebonnetPosix
import Glibc
import Testing

extension PosixTests {
    @Suite(.noLeakedDescriptors) struct SyscallTests {
        @Test func ioErrorDescribesTheCallAndTheSystemText() {
            let error = IOError(errno: ECONNREFUSED, function: "connect")
            #expect(error.function == "connect")
            #expect(error.reason == "Connection refused")
            #expect(error.description == "connect failed: Connection refused (errno \(ECONNREFUSED))")
        }

        @Test func eagainIsAValueNotAnError() throws {
            let pair = try Socket.pair()
            var bytes = [UInt8](repeating: 0, count: 16)
            let result = try Syscall.run("read") { read(pair.first.descriptor, &bytes, bytes.count) }
            #expect(result == .wouldBlock)
        }

        @Test func otherFailuresAreThrownWithErrno() {
            #expect(throws: IOError(errno: EBADF, function: "read")) {
                var byte: UInt8 = 0
                _ = try Syscall.run("read") { read(-1, &byte, 1) }
            }
        }

        @Test func eintrIsRetried() throws {
            var calls = 0
            let result = try Syscall.complete("test") { () -> CInt in
                calls += 1
                if calls < 3 {
                    errno = EINTR
                    return -1
                }
                return 7
            }
            #expect(result == 7)
            #expect(calls == 3)
        }

        @Test func completeThrowsEagainInsteadOfReturningIt() {
            #expect(throws: IOError(errno: EAGAIN, function: "test")) {
                _ = try Syscall.complete("test") { () -> CInt in
                    errno = EAGAIN
                    return -1
                }
            }
        }
    }
}

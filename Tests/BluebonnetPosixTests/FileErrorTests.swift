@testable import BluebonnetPosix
import Glibc
import Testing

extension PosixTests {
    @Suite struct FileErrorTests {
        @Test(arguments: [
            (ENOSPC, FileError.Code.noSpace), (EDQUOT, .noSpace),
            (EACCES, .permissionDenied), (EPERM, .permissionDenied), (EROFS, .permissionDenied),
            (ENOENT, .notFound), (EFBIG, .fileTooLarge), (EISDIR, .isDirectory), (ENOTDIR, .notDirectory),
            (EEXIST, .exists), (EXDEV, .other(EXDEV)), (ENAMETOOLONG, .other(ENAMETOOLONG)), (EIO, .other(EIO)),
        ])
        func errnoMapsToItsCode(_ errno: CInt, _ code: FileError.Code) {
            #expect(FileError.Code(errno: errno) == code)
            #expect(FileError(errno: errno, function: "open", path: "/x").code == code)
        }

        @Test func otherCodesKeepTheirErrno() {
            #expect(FileError.Code.other(EXDEV) != .other(EIO))
            #expect(FileError.Code.other(EXDEV).description == "other(\(EXDEV))")
            #expect(FileError.Code.noSpace.description == "noSpace")
        }

        @Test func descriptionNamesTheCallThePathAndTheSystemText() {
            let error = FileError(errno: ENOSPC, function: "write", path: "/data/out.bin")
            #expect(error.description == "write /data/out.bin failed: No space left on device (errno \(ENOSPC))")
            #expect(error.ioError == IOError(errno: ENOSPC, function: "write"))
            let rename = FileError(errno: EXDEV, function: "rename", path: "/a", destinationPath: "/b")
            #expect(rename.description.hasPrefix("rename /a -> /b failed: "))
        }

        @Test func equalityIncludesThePaths() {
            #expect(FileError(errno: ENOENT, function: "open", path: "/a") == FileError(errno: ENOENT, function: "open", path: "/a"))
            #expect(FileError(errno: ENOENT, function: "open", path: "/a") != FileError(errno: ENOENT, function: "open", path: "/b"))
            #expect(FileError(errno: ENOENT, function: "open", path: "/a") != FileError(errno: ENOENT, function: "stat", path: "/a"))
        }
    }
}

@testable import Bluebonnet
import BluebonnetPosix
import Foundation
import Testing

/// The encoded layout and the appending rules, against Alamofire's `MultipartFormDataTests`
/// (the expected bytes are built the same way: initial `--b` CRLF, encapsulated CRLF `--b` CRLF,
/// final CRLF `--b--` CRLF).
@Suite struct MultipartFormDataTests {
    static func initial(_ boundary: String) -> String { "--\(boundary)\r\n" }
    static func encapsulated(_ boundary: String) -> String { "\r\n--\(boundary)\r\n" }
    static func final(_ boundary: String) -> String { "\r\n--\(boundary)--\r\n" }

    // MARK: Boundary and lengths

    @Test func contentTypeNamesTheBoundary() {
        let form = MultipartFormData()
        #expect(form.contentType == "multipart/form-data; boundary=\(form.boundary)")
        form.contentType = "multipart/related; boundary=\(form.boundary)"
        #expect(form.contentType == "multipart/related; boundary=\(form.boundary)")
    }

    /// Alamofire: `String(format: "alamofire.boundary.%08x%08x", random, random)`.
    @Test func randomBoundariesHaveAlamofiresFormat() {
        let boundaries = (0..<20).map { _ in MultipartFormData().boundary }
        for boundary in boundaries {
            #expect(boundary.hasPrefix("alamofire.boundary."))
            let digits = boundary.dropFirst("alamofire.boundary.".count)
            #expect(digits.count == 16 && digits.allSatisfy { "0123456789abcdef".contains($0) }, "\(boundary)")
        }
        #expect(Set(boundaries).count == boundaries.count)
        #expect(MultipartFormData(boundary: "given").boundary == "given")
    }

    /// Alamofire's `testThatContentLengthMatchesTotalBodyPartSize`: the parts' bytes only.
    @Test func contentLengthIsTheSumOfThePartsAsInAlamofire() {
        let form = MultipartFormData()
        let first = Data("Lorem ipsum dolor sit amet.".utf8)
        let second = Data("Vim at integre alterum.".utf8)
        form.append(first, withName: "data1")
        form.append(second, withName: "data2")
        #expect(form.contentLength == UInt64(first.count + second.count))
    }

    @Test func encodedLengthIsTheLengthOfTheEncodedBody() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("photo.jpg")
            try seededBytes(5000, seed: 1).write(to: file)
            let form = MultipartFormData()
            #expect(form.encodedLength == 0)
            form.append(Data("x".utf8), withName: "a")
            #expect(form.encodedLength == UInt64(try form.encode().count))
            form.append(Data("yz".utf8), withName: "b", fileName: "b.txt", mimeType: "text/plain")
            form.append(file, withName: "photo")
            #expect(form.encodedLength == UInt64(try form.encode().count))
            #expect(try form.makeSegmentedBody().length == form.encodedLength)
        }
    }

    @Test func theInMemoryThresholdIsAlamofires() {
        #expect(MultipartFormData.encodingMemoryThreshold == 10_000_000)
    }

    // MARK: Byte-exact layout

    @Test func oneDataPart() throws {
        let form = MultipartFormData(boundary: "b0undary")
        form.append(Data("Lorem ipsum dolor sit amet.".utf8), withName: "data")
        let expected = Self.initial("b0undary") + "Content-Disposition: form-data; name=\"data\"\r\n\r\n"
            + "Lorem ipsum dolor sit amet." + Self.final("b0undary")
        #expect(try form.encode() == Data(expected.utf8))
    }

    @Test func severalDataPartsWithAndWithoutMIMETypes() throws {
        let form = MultipartFormData()
        let b = form.boundary
        form.append(Data("français".utf8), withName: "french")
        form.append(Data("日本語".utf8), withName: "japanese", mimeType: "text/plain")
        form.append(Data("😃👍🏻🍻🎉".utf8), withName: "emoji", mimeType: "text/plain")
        let expected = Self.initial(b) + "Content-Disposition: form-data; name=\"french\"\r\n\r\n" + "français"
            + Self.encapsulated(b) + "Content-Disposition: form-data; name=\"japanese\"\r\n"
            + "Content-Type: text/plain\r\n\r\n" + "日本語"
            + Self.encapsulated(b) + "Content-Disposition: form-data; name=\"emoji\"\r\n"
            + "Content-Type: text/plain\r\n\r\n" + "😃👍🏻🍻🎉" + Self.final(b)
        #expect(try form.encode() == Data(expected.utf8))
    }

    @Test func dataFileAndStreamPartsInOneForm() async throws {
        try await withScratchDirectory { directory in
            let unicorn = seededBytes(3000, seed: 2)
            let rainbow = seededBytes(2000, seed: 3)
            let file = directory.appendingPathComponent("unicorn.png")
            try unicorn.write(to: file)
            let form = MultipartFormData(boundary: "xyz")
            form.append(Data("Lorem ipsum.".utf8), withName: "lorem")
            form.append(file, withName: "unicorn")
            form.append(bodyStream(split(rainbow, pattern: [700])), withLength: 2000, name: "rainbow",
                        fileName: "rainbow.jpg", mimeType: "image/jpeg")
            var expected = Data((Self.initial("xyz") + "Content-Disposition: form-data; name=\"lorem\"\r\n\r\n"
                + "Lorem ipsum." + Self.encapsulated("xyz")
                + "Content-Disposition: form-data; name=\"unicorn\"; filename=\"unicorn.png\"\r\n"
                + "Content-Type: image/png\r\n\r\n").utf8)
            expected.append(unicorn)
            expected.append(Data((Self.encapsulated("xyz")
                + "Content-Disposition: form-data; name=\"rainbow\"; filename=\"rainbow.jpg\"\r\n"
                + "Content-Type: image/jpeg\r\n\r\n").utf8))
            expected.append(rainbow)
            expected.append(Data(Self.final("xyz").utf8))
            #expect(try await form.encoded() == expected)
        }
    }

    @Test func streamPartWithCustomHeadersKeepsThemAsGiven() async throws {
        let form = MultipartFormData(boundary: "q")
        let headers: HTTPHeaders = ["Content-Disposition": "attachment; filename=\"a.bin\"", "X-Checksum": "abc"]
        form.append(BodyStream(Data("hi".utf8)), withLength: 2, headers: headers)
        let expected = "--q\r\nContent-Disposition: attachment; filename=\"a.bin\"\r\nX-Checksum: abc\r\n\r\nhi\r\n--q--\r\n"
        #expect(try await form.encoded() == Data(expected.utf8))
    }

    /// Alamofire encodes a form without parts as no bytes at all.
    @Test func aFormWithoutPartsEncodesToNothing() async throws {
        let form = MultipartFormData()
        #expect(try form.encode().isEmpty)
        #expect(try await form.encoded().isEmpty)
        #expect(try form.makeSegmentedBody().segments.isEmpty)
    }

    @Test func anEmptyDataPartStillHasItsHeaders() throws {
        let form = MultipartFormData(boundary: "e")
        form.append(Data(), withName: "nothing")
        #expect(try form.encode() == Data("--e\r\nContent-Disposition: form-data; name=\"nothing\"\r\n\r\n\r\n--e--\r\n".utf8))
    }

    // MARK: Names and file names

    /// RFC 7578 §4.2 and the HTML form encoder: `"` as `%22`; `\` as `%5C` (see
    /// `quotedStringContent`).
    @Test func quotesAndBackslashesInNamesArePercentEncoded() throws {
        let form = MultipartFormData(boundary: "b")
        form.append(Data("v".utf8), withName: "say \"hi\"", fileName: "C:\\temp\\a.txt", mimeType: "text/plain")
        let text = String(decoding: try form.encode(), as: UTF8.self)
        #expect(text.contains("Content-Disposition: form-data; name=\"say %22hi%22\"; filename=\"C:%5Ctemp%5Ca.txt\"\r\n"))
    }

    /// RFC 7578 §4.2: raw UTF-8 in the quoted file name, and no `filename*` (it "MUST NOT be used").
    @Test func nonASCIIFileNamesAreSentAsUTF8() throws {
        let form = MultipartFormData(boundary: "b")
        form.append(Data("v".utf8), withName: "pièce", fileName: "résumé 履歴書.pdf", mimeType: "application/pdf")
        let encoded = try form.encode()
        let header = "Content-Disposition: form-data; name=\"pièce\"; filename=\"résumé 履歴書.pdf\"\r\n"
        #expect(encoded.range(of: Data(header.utf8)) != nil)
        #expect(encoded.range(of: Data("filename*".utf8)) == nil)
    }

    static let lineBreaks = ["a\rb", "a\nb", "a\r\nContent-Type: text/html", "a\0b"]

    @Test(arguments: lineBreaks)
    func lineBreaksAndNULInANameAreRefused(_ name: String) throws {
        let form = MultipartFormData()
        form.append(Data("v".utf8), withName: name)
        #expect(form.contentLength == 0, "the refused part is not appended")
        let reason = try #require(multipartReasonOfEncode(form))
        guard case .bodyPartHeaderInvalid(let field, let value) = reason else {
            Issue.record("unexpected reason \(reason)")
            return
        }
        #expect(field == "name" && value == name)
    }

    @Test(arguments: lineBreaks)
    func lineBreaksAndNULInAFileNameOrMIMETypeAreRefused(_ text: String) throws {
        let fileNameForm = MultipartFormData()
        fileNameForm.append(Data("v".utf8), withName: "n", fileName: text)
        guard case .bodyPartHeaderInvalid(let field, _)? = multipartReasonOfEncode(fileNameForm) else {
            Issue.record("expected bodyPartHeaderInvalid for the file name")
            return
        }
        #expect(field == "filename")

        let typeForm = MultipartFormData()
        typeForm.append(BodyStream(Data("v".utf8)), withLength: 1, name: "n", fileName: "f", mimeType: "text/\(text)")
        guard case .bodyPartHeaderInvalid(let typeField, _)? = multipartReasonOfEncode(typeForm) else {
            Issue.record("expected bodyPartHeaderInvalid for the MIME type")
            return
        }
        #expect(typeField == "Content-Type")
    }

    @Test(arguments: [
        HTTPHeaders([HTTPHeader(name: "X-Bad", value: "a\r\nb")]),
        HTTPHeaders([HTTPHeader(name: "X:Colon", value: "v")]),
        HTTPHeaders([HTTPHeader(name: "", value: "v")]),
        HTTPHeaders([HTTPHeader(name: "X-Bad\n", value: "v")]),
    ])
    func customPartHeadersAreValidated(_ headers: HTTPHeaders) {
        let form = MultipartFormData()
        form.append(BodyStream(Data("v".utf8)), withLength: 1, headers: headers)
        guard case .bodyPartHeaderInvalid(let field, _)? = multipartReasonOfEncode(form) else {
            Issue.record("expected bodyPartHeaderInvalid for \(headers)")
            return
        }
        #expect(field == headers.first?.name)
    }

    @Test func aBoundaryWithALineBreakIsRefused() {
        let form = MultipartFormData(boundary: "b\r\nX-Injected: 1")
        form.append(Data("v".utf8), withName: "n")
        guard case .bodyPartHeaderInvalid(let field, _)? = multipartReasonOfEncode(form) else {
            Issue.record("expected bodyPartHeaderInvalid for the boundary")
            return
        }
        #expect(field == "boundary")
    }

    // MARK: Files

    @Test(arguments: [
        ("unicorn.png", "image/png"), ("rainbow.JPG", "image/jpeg"), ("backup.tar.gz", "application/gzip"),
        ("notes.txt", "text/plain"), ("data.json", "application/json"), ("clip.mp4", "video/mp4"),
        ("report.pdf", "application/pdf"), ("blob.unknownext", "application/octet-stream"),
    ])
    func fileNameAndMIMETypeComeFromTheURL(_ name: String, _ mimeType: String) async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent(name)
            try Data("content".utf8).write(to: file)
            let form = MultipartFormData(boundary: "b")
            form.append(file, withName: "upload")
            let expected = "--b\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"\(name)\"\r\n"
                + "Content-Type: \(mimeType)\r\n\r\ncontent\r\n--b--\r\n"
            #expect(try form.encode() == Data(expected.utf8))
        }
    }

    @Test(arguments: [("PNG", "image/png"), ("svg", "image/svg+xml"), ("csv", "text/csv"), ("wasm", "application/wasm"),
                      ("", "application/octet-stream"), ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")])
    func mimeTypesForExtensions(_ pathExtension: String, _ mimeType: String) {
        #expect(MultipartFormData.mimeType(forPathExtension: pathExtension) == mimeType)
    }

    @Test func aFilePathWithSpacesAndNonASCIIIsReadAndNamed() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("my photo é%20.png")
            try Data("pixels".utf8).write(to: file)
            let form = MultipartFormData(boundary: "b")
            form.append(file, withName: "photo")
            let expected = "--b\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"my photo é%20.png\"\r\n"
                + "Content-Type: image/png\r\n\r\npixels\r\n--b--\r\n"
            #expect(try form.encode() == Data(expected.utf8))
        }
    }

    /// Alamofire needs both a last path component and an extension to name the part.
    @Test func aFileWithoutExtensionNeedsAnExplicitName() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("README")
            try Data("read me".utf8).write(to: file)
            let form = MultipartFormData()
            form.append(file, withName: "doc")
            guard case .bodyPartFilenameInvalid(let url)? = multipartReasonOfEncode(form) else {
                Issue.record("expected bodyPartFilenameInvalid")
                return
            }
            #expect(url == file)

            let named = MultipartFormData(boundary: "b")
            named.append(file, withName: "doc", fileName: "README", mimeType: "text/plain")
            #expect(String(decoding: try named.encode(), as: UTF8.self).contains("read me"))
        }
    }

    @Test func fileChecksAtAppendKeepTheFirstFailure() async throws {
        try await withScratchDirectory { directory in
            let form = MultipartFormData()
            form.append(URL(string: "https://example.com/a.png")!, withName: "remote")
            form.append(directory.appendingPathComponent("missing.png"), withName: "missing")
            #expect(form.contentLength == 0)
            guard case .bodyPartURLInvalid(let url)? = multipartReasonOfEncode(form) else {
                Issue.record("expected the first failure, bodyPartURLInvalid")
                return
            }
            #expect(url.absoluteString == "https://example.com/a.png")
        }
    }

    @Test func aMissingFileIsNotReachable() async throws {
        try await withScratchDirectory { directory in
            let missing = directory.appendingPathComponent("missing.png")
            let form = MultipartFormData()
            form.append(missing, withName: "missing")
            guard case .bodyPartFileNotReachableWithError(let url, let error)? = multipartReasonOfEncode(form) else {
                Issue.record("expected bodyPartFileNotReachableWithError")
                return
            }
            #expect(url == missing)
            #expect((error as? FileError)?.code == .notFound)
        }
    }

    @Test func aDirectoryIsRefused() async throws {
        try await withScratchDirectory { directory in
            let folder = directory.appendingPathComponent("photos.d")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let form = MultipartFormData()
            form.append(folder, withName: "folder")
            guard case .bodyPartFileIsDirectory(let url)? = multipartReasonOfEncode(form) else {
                Issue.record("expected bodyPartFileIsDirectory")
                return
            }
            #expect(url == folder)
        }
    }

    /// A device's size means nothing, so its length cannot be declared.
    @Test func aSpecialFileHasNoSize() {
        let form = MultipartFormData()
        form.append(URL(fileURLWithPath: "/dev/null"), withName: "null", fileName: "null", mimeType: "text/plain")
        guard case .bodyPartFileSizeNotAvailable? = multipartReasonOfEncode(form) else {
            Issue.record("expected bodyPartFileSizeNotAvailable")
            return
        }
    }

    // MARK: Writing to a file

    @Test func writeEncodedDataWritesWhatEncodeReturns() async throws {
        try await withScratchDirectory { directory in
            let file = directory.appendingPathComponent("big.bin")
            try seededBytes(200_000, seed: 4).write(to: file)
            let form = MultipartFormData()
            form.append(Data("Lorem".utf8), withName: "lorem")
            form.append(file, withName: "big")
            let output = directory.appendingPathComponent("form.out")
            try form.writeEncodedData(to: output)
            #expect(try Data(contentsOf: output) == (try form.encode()))
        }
    }

    @Test func writeEncodedDataNeverOverwrites() async throws {
        try await withScratchDirectory { directory in
            let output = directory.appendingPathComponent("exists.out")
            try Data("precious".utf8).write(to: output)
            let form = MultipartFormData()
            form.append(Data("x".utf8), withName: "x")
            let reason = await multipartFailure { try form.writeEncodedData(to: output) }
            guard case .outputStreamFileAlreadyExists(let url)? = reason else {
                Issue.record("expected outputStreamFileAlreadyExists, got \(String(describing: reason))")
                return
            }
            #expect(url == output)
            #expect(try Data(contentsOf: output) == Data("precious".utf8))
        }
    }

    @Test func writeEncodedDataNeedsAFileURL() async {
        let form = MultipartFormData()
        form.append(Data("x".utf8), withName: "x")
        let reason = await multipartFailure { try form.writeEncodedData(to: URL(string: "https://example.com/out")!) }
        guard case .outputStreamURLInvalid? = reason else {
            Issue.record("expected outputStreamURLInvalid, got \(String(describing: reason))")
            return
        }
    }

    @Test func writeEncodedDataIntoAMissingDirectoryReportsTheFileError() async throws {
        try await withScratchDirectory { directory in
            let form = MultipartFormData()
            form.append(Data("x".utf8), withName: "x")
            let output = directory.appendingPathComponent("missing/form.out")
            let reason = await multipartFailure { try form.writeEncodedData(to: output) }
            guard case .outputStreamWriteFailed(let error)? = reason else {
                Issue.record("expected outputStreamWriteFailed, got \(String(describing: reason))")
                return
            }
            #expect((error as? FileError)?.code == .notFound)
        }
    }

    /// A failure part-way leaves no partial file behind.
    @Test func aFailedWriteRemovesThePartialFile() async throws {
        try await withScratchDirectory { directory in
            let source = directory.appendingPathComponent("source.bin")
            try seededBytes(100_000, seed: 5).write(to: source)
            let form = MultipartFormData()
            form.append(Data("first".utf8), withName: "first")
            form.append(source, withName: "source")
            try Data("shorter".utf8).write(to: source)  // the declared size no longer holds
            let output = directory.appendingPathComponent("form.out")
            let reason = await multipartFailure { try form.writeEncodedData(to: output) }
            guard case .bodyPartFileSizeChanged? = reason else {
                Issue.record("expected bodyPartFileSizeChanged, got \(String(describing: reason))")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    // MARK: Streams and the synchronous calls

    @Test func synchronousEncodingRefusesStreamPartsWithoutReadingThem() async throws {
        try await withScratchDirectory { directory in
            let stream = BodyStream(Data("abc".utf8))
            let form = MultipartFormData()
            form.append(stream, withLength: 3, name: "s", fileName: "s.txt", mimeType: "text/plain")
            for reason in [
                await multipartFailure { try form.encode() },
                await multipartFailure { try form.writeEncodedData(to: directory.appendingPathComponent("o")) },
            ] {
                guard case .inputStreamReadFailed(let error)? = reason else {
                    Issue.record("expected inputStreamReadFailed, got \(String(describing: reason))")
                    continue
                }
                #expect((error as? BodyStreamError)?.kind == .asynchronousReadRequired)
            }
            #expect(!stream.isConsumed)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("o").path))
            // The asynchronous forms read it.
            let output = directory.appendingPathComponent("async.out")
            try await form.writeEncoded(to: output)
            let text = String(decoding: try Data(contentsOf: output), as: UTF8.self)
            #expect(text.hasSuffix("\r\n\r\nabc\r\n--\(form.boundary)--\r\n"))
        }
    }

    @Test func aStreamPartCanBeEncodedOnce() async throws {
        let form = MultipartFormData()
        form.append(BodyStream(Data("abc".utf8)), withLength: 3, name: "s", fileName: "s", mimeType: "text/plain")
        #expect(try form.makeSegmentedBody().isReplayable == false)
        _ = try await form.encoded()
        let reason = await multipartFailure { try await form.encoded() }
        guard case .inputStreamReadFailed(let error)? = reason else {
            Issue.record("expected inputStreamReadFailed, got \(String(describing: reason))")
            return
        }
        #expect((error as? BodyStreamError)?.kind == .alreadyConsumed)
    }

    /// Writing a form to a file takes the declared length of a longer stream (Alamofire's
    /// `writeEncodedData(to:)` rule), also through the asynchronous call, across chunks; the
    /// in-memory encoding refuses the same stream.
    @Test func writingToAFileStopsALongerStreamAtItsDeclaredLength() async throws {
        try await withScratchDirectory { directory in
            let bytes = seededBytes(100_000, seed: 21)
            let declared = 70_000
            let form = MultipartFormData(boundary: "cut")
            form.append(bodyStream(split(bytes, pattern: [40_000, 1, 59_999])), withLength: UInt64(declared),
                        name: "s", fileName: "s.bin", mimeType: "application/octet-stream")
            let output = directory.appendingPathComponent("cut.out")
            try await form.writeEncoded(to: output)
            let expected = MultipartFormData(boundary: "cut")
            expected.append(bytes.prefix(declared), withName: "s", fileName: "s.bin", mimeType: "application/octet-stream")
            #expect(try Data(contentsOf: output) == expected.encode())

            let inMemory = MultipartFormData(boundary: "cut")
            inMemory.append(bodyStream([bytes]), withLength: UInt64(declared), name: "s", fileName: "s.bin",
                            mimeType: "application/octet-stream")
            guard case .inputStreamReadFailed(let error)? = await multipartFailure({ try await inMemory.encoded() }) else {
                Issue.record("expected inputStreamReadFailed")
                return
            }
            #expect(error as? BluebonnetError.UnexpectedInputStreamLength
                == BluebonnetError.UnexpectedInputStreamLength(bytesExpected: UInt64(declared), bytesRead: 100_000))
        }
    }

    /// The form is `Sendable`: parts appended from many tasks all arrive.
    @Test func appendsFromManyTasksAllArrive() async throws {
        let form = MultipartFormData()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { form.append(Data("\(index)".utf8), withName: "n\(index)") }
            }
        }
        let text = String(decoding: try form.encode(), as: UTF8.self)
        for index in 0..<100 { #expect(text.contains("name=\"n\(index)\"\r\n\r\n\(index)\r\n")) }
        #expect(form.contentLength == UInt64((0..<100).map { "\($0)".utf8.count }.reduce(0, +)))
    }
}

/// The reason `form.encode()` fails with, or nil when it does not fail that way.
func multipartReasonOfEncode(_ form: MultipartFormData) -> BluebonnetError.MultipartEncodingFailureReason? {
    do {
        _ = try form.encode()
        return nil
    } catch {
        return multipartReason(error)
    }
}

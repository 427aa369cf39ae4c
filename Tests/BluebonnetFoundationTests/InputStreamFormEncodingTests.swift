import BluebonnetFoundation
import Foundation
import Testing

/// A form with `InputStream` parts encodes with the synchronous calls, `encode()` and
/// `writeEncodedData(to:)`, as it does with Alamofire: the stream is read on the calling thread
/// (it never waits), with the same bytes as a `Data` part and the same errors.
@Suite struct InputStreamFormEncodingTests {
    /// 70,001 bytes: more than one 64 KiB read, and not a multiple of it.
    let payload = Data((0..<70_001).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })

    func scratchFile(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-isform-\(UUID().uuidString)-\(name)")
    }

    /// The same form with each stream replaced by its bytes: what the encoding must equal.
    func expectedForm(boundary: String, payload: Data) -> Data {
        let form = MultipartFormData(boundary: boundary)
        form.append(Data("note".utf8), withName: "memo")
        form.append(payload, withName: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
        form.append(Data("tail".utf8), withName: "last", fileName: "last.txt", mimeType: "text/plain")
        return (try? form.encode()) ?? Data()
    }

    func streamedForm(boundary: String, payload: Data) -> MultipartFormData {
        let form = MultipartFormData(boundary: boundary)
        form.append(Data("note".utf8), withName: "memo")
        form.append(InputStream(data: payload), withLength: UInt64(payload.count), name: "blob", fileName: "blob.bin",
                    mimeType: "application/octet-stream")
        form.append(InputStream(data: Data("tail".utf8)), withLength: 4, name: "last", fileName: "last.txt",
                    mimeType: "text/plain")
        return form
    }

    @Test func encodeReadsInputStreamPartsInPlace() throws {
        let encoded = try streamedForm(boundary: "edge-7", payload: payload).encode()
        #expect(encoded == expectedForm(boundary: "edge-7", payload: payload))
    }

    @Test func writeEncodedDataWritesInputStreamParts() throws {
        let output = scratchFile("form.out")
        defer { try? FileManager.default.removeItem(at: output) }
        try streamedForm(boundary: "edge-8", payload: payload).writeEncodedData(to: output)
        #expect(try Data(contentsOf: output) == expectedForm(boundary: "edge-8", payload: payload))
    }

    @Test func aStreamFromAFileIsReadSynchronously() throws {
        let source = scratchFile("source.bin")
        defer { try? FileManager.default.removeItem(at: source) }
        try payload.write(to: source)
        let form = MultipartFormData(boundary: "edge-9")
        form.append(try #require(InputStream(url: source)), withLength: UInt64(payload.count), name: "blob",
                    fileName: "blob.bin", mimeType: "application/octet-stream")
        let fromData = MultipartFormData(boundary: "edge-9")
        fromData.append(payload, withName: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
        #expect(try form.encode() == fromData.encode())
    }

    /// Writing to a file takes the declared length of a longer stream and leaves the rest, as
    /// Alamofire's `writeEncodedData(to:)` does; `encode()` refuses the longer stream.
    @Test func writingToAFileTakesTheDeclaredLengthOfALongerStream() throws {
        let longer = Data("0123456789abcdefghij".utf8)
        let output = scratchFile("cut.out")
        defer { try? FileManager.default.removeItem(at: output) }
        func form() -> MultipartFormData {
            let form = MultipartFormData(boundary: "edge-10")
            form.append(InputStream(data: longer), withLength: 10, name: "digits", fileName: "d.txt", mimeType: "text/plain")
            return form
        }
        try form().writeEncodedData(to: output)
        let expected = MultipartFormData(boundary: "edge-10")
        expected.append(Data("0123456789".utf8), withName: "digits", fileName: "d.txt", mimeType: "text/plain")
        #expect(try Data(contentsOf: output) == expected.encode())

        #expect(unexpectedLength { _ = try form().encode() }
            == BluebonnetError.UnexpectedInputStreamLength(bytesExpected: 10, bytesRead: 20))
    }

    /// A stream shorter than declared fails both calls (Alamofire's `writeEncodedData` would
    /// write the short part), and the partial file is removed.
    @Test func aShorterStreamFailsBothCalls() throws {
        let output = scratchFile("short.out")
        defer { try? FileManager.default.removeItem(at: output) }
        func form() -> MultipartFormData {
            let form = MultipartFormData(boundary: "edge-11")
            form.append(InputStream(data: Data("abc".utf8)), withLength: 10, name: "s", fileName: "s.txt", mimeType: "text/plain")
            return form
        }
        let expected = BluebonnetError.UnexpectedInputStreamLength(bytesExpected: 10, bytesRead: 3)
        #expect(unexpectedLength { _ = try form().encode() } == expected)
        #expect(unexpectedLength { try form().writeEncodedData(to: output) } == expected)
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// A stream part is read once: the form's second encoding finds it used up.
    @Test func aSecondEncodeFindsTheStreamConsumed() throws {
        let form = MultipartFormData(boundary: "edge-12")
        form.append(InputStream(data: Data("once".utf8)), withLength: 4, name: "s", fileName: "s.txt", mimeType: "text/plain")
        _ = try form.encode()
        let error = #expect(throws: BluebonnetError.self) { _ = try form.encode() }
        guard case .multipartEncodingFailed(.inputStreamReadFailed(let underlying))? = error else {
            Issue.record("expected inputStreamReadFailed, got \(String(describing: error))")
            return
        }
        #expect((underlying as? BodyStreamError)?.kind == .alreadyConsumed)
    }

    /// An `InputStream` that cannot be read fails `encode()` with its `streamError`, as
    /// `inputStreamReadFailed`.
    @Test func anUnreadableStreamFailsWithItsError() throws {
        let missing = try #require(InputStream(fileAtPath: "/nonexistent/bluebonnet-\(UUID().uuidString)"))
        let form = MultipartFormData(boundary: "edge-13")
        form.append(missing, withLength: 1, name: "s", fileName: "s.bin", mimeType: "application/octet-stream")
        let error = #expect(throws: BluebonnetError.self) { _ = try form.encode() }
        guard case .multipartEncodingFailed(.inputStreamReadFailed(let underlying))? = error else {
            Issue.record("expected inputStreamReadFailed, got \(String(describing: error))")
            return
        }
        #expect(!(underlying is BluebonnetError.UnexpectedInputStreamLength))
        #expect(!(underlying is BodyStreamError))
    }

    /// The `UnexpectedInputStreamLength` inside the error `body` throws, or nil.
    func unexpectedLength(_ body: () throws -> Void) -> BluebonnetError.UnexpectedInputStreamLength? {
        do {
            try body()
            Issue.record("expected an error")
        } catch BluebonnetError.multipartEncodingFailed(.inputStreamReadFailed(let underlying)) {
            return underlying as? BluebonnetError.UnexpectedInputStreamLength
        } catch {
            Issue.record("expected inputStreamReadFailed, got \(error)")
        }
        return nil
    }
}

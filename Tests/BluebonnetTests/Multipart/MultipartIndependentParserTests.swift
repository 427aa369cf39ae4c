@testable import Bluebonnet
import Foundation
import Testing

/// The encoded form read back by a parser that shares nothing with Bluebonnet: Python's standard
/// `email` package (`Fixtures/multipart/parse_form.py`), which reports every part's name, file
/// name, content type, length and SHA-256, and any defect it finds in the framing.
@Suite struct MultipartIndependentParserTests {
    struct Fixture {
        let lorem = Data("Lorem ipsum dolor sit amet.".utf8)
        let photo = seededBytes(300_000, seed: 21)  // binary: CR, LF and "--" occur inside
        let streamed = seededBytes(123_457, seed: 22)
        let attachment = Data("{\"ok\":true}".utf8)
        let photoURL: URL

        init(directory: URL) throws {
            photoURL = directory.appendingPathComponent("unicorn.png")
            try photo.write(to: photoURL)
        }

        func makeForm() -> MultipartFormData {
            let form = MultipartFormData()
            form.append(lorem, withName: "comment")
            form.append(photoURL, withName: "photo")
            form.append(bodyStream(split(streamed, pattern: [1000, 33_333, 7])), withLength: UInt64(streamed.count),
                        name: "video", fileName: "clip.mp4", mimeType: "video/mp4")
            form.append(attachment, withName: "méta \"données\"", fileName: "résumé 履歴書.json", mimeType: "application/json")
            return form
        }

        /// What the parser should report, part by part.
        var expected: [ParsedForm.Part] {
            [
                .init(name: "comment", filename: nil, content_type: nil, length: lorem.count, sha256: sha256Hex(lorem)),
                .init(name: "photo", filename: "unicorn.png", content_type: "image/png", length: photo.count,
                      sha256: sha256Hex(photo)),
                .init(name: "video", filename: "clip.mp4", content_type: "video/mp4", length: streamed.count,
                      sha256: sha256Hex(streamed)),
                // `"` goes out as `%22`, which the parser (rightly) does not decode.
                .init(name: "méta %22données%22", filename: "résumé 履歴書.json", content_type: "application/json",
                      length: attachment.count, sha256: sha256Hex(attachment)),
            ]
        }
    }

    @Test func pythonsEmailParserReadsEveryPartOfAnEncodedForm() async throws {
        try await withScratchDirectory { directory in
            let fixture = try Fixture(directory: directory)
            let form = fixture.makeForm()
            let output = directory.appendingPathComponent("form.body")
            try await form.encoded().write(to: output)
            let parsed = try ParsedForm.parse(output, contentType: form.contentType)
            #expect(parsed.multipart)
            #expect(parsed.defects.isEmpty)
            #expect(parsed.parts == fixture.expected)
        }
    }

    /// The file written by `writeEncoded(to:)` and the chunks of the pipeline's reader parse the
    /// same way.
    @Test func theWrittenFileAndTheReaderAgreeWithTheParser() async throws {
        try await withScratchDirectory { directory in
            let fixture = try Fixture(directory: directory)

            let written = fixture.makeForm()
            let file = directory.appendingPathComponent("written.body")
            try await written.writeEncoded(to: file)
            let fromFile = try ParsedForm.parse(file, contentType: written.contentType)
            #expect(fromFile.defects.isEmpty && fromFile.parts == fixture.expected)

            let streamed = fixture.makeForm()
            let chunks = try await readChunks(try streamed.makeSegmentedBody(), chunkSize: 7)
            let readerFile = directory.appendingPathComponent("reader.body")
            try chunks.reduce(into: Data()) { $0.append($1) }.write(to: readerFile)
            let fromReader = try ParsedForm.parse(readerFile, contentType: streamed.contentType)
            #expect(fromReader.defects.isEmpty && fromReader.parts == fixture.expected)
        }
    }
}

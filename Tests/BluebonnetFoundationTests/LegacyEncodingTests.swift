import BluebonnetFoundation
import Foundation
import Testing

@Suite struct LegacyEncodingTests {
    func post() throws -> HTTPRequest { try HTTPRequest(url: "https://httpbin.org/post", method: .post) }

    // Usage.md, JSONEncoding: the same parameters as the URLEncoding example, as a JSON body.
    @Test func jsonEncodingWritesTheParametersAsJSON() throws {
        let parameters: Parameters = ["foo": [1, 2, 3], "bar": ["baz": "qux"]]
        let encoded = try JSONEncoding.default.encode(try post(), with: parameters)
        #expect(encoded.headers["Content-Type"] == "application/json")
        let object = try JSONSerialization.jsonObject(with: encoded.httpBody!) as? [String: Any]
        #expect(object?["foo"] as? [Int] == [1, 2, 3])
        #expect((object?["bar"] as? [String: String]) == ["baz": "qux"])
    }

    /// `URLEncoding(boolEncoding: .literal)` writes Booleans as `true`/`false` and leaves numbers
    /// alone, also `NSNumber`s holding 1 or 0, which bridge to `Bool` on Linux (Alamofire tells
    /// them apart by the number's type, and its test expects exactly this query).
    @Test func literalBooleansLeaveNSNumbersAlone() throws {
        let parameters: Parameters = [
            "a": 1, "b": 0, "c": 1.0, "d": 0.0,
            "e": NSNumber(value: 1), "f": NSNumber(value: 0), "g": NSNumber(value: 1.0), "h": NSNumber(value: 0.0),
            "i": true, "j": false, "k": NSNumber(value: true), "l": NSNumber(value: false),
        ]
        let encoded = try URLEncoding(boolEncoding: .literal).encode(try HTTPRequest(url: "https://example.com/"), with: parameters)
        #expect(encoded.url?.query == "a=1&b=0&c=1&d=0&e=1&f=0&g=1&h=0&i=true&j=false&k=true&l=false")
        let numeric = try URLEncoding.default.encode(try HTTPRequest(url: "https://example.com/"), with: ["e": NSNumber(value: 1), "k": NSNumber(value: true)])
        #expect(numeric.url?.query == "e=1&k=1")
    }

    @Test func jsonPrettyPrintedAndJSONObjects() throws {
        let pretty = try JSONEncoding.prettyPrinted.encode(try post(), with: ["a": 1])
        #expect(String(decoding: pretty.httpBody!, as: UTF8.self).contains("\n"))
        let array = try JSONEncoding.default.encode(try post(), withJSONObject: [1, 2])
        #expect(array.httpBody == Data("[1,2]".utf8))
    }

    @Test func jsonEncodingRejectsInvalidObjects() throws {
        #expect {
            _ = try JSONEncoding.default.encode(try post(), with: ["date": Date()])
        } throws: { error in
            guard case let .parameterEncodingFailed(.jsonEncodingFailed(underlying))? = error.asAFError else { return false }
            if case .invalidJSONObject? = underlying as? JSONEncoding.Error { return true }
            return false
        }
    }

    @Test func nilParametersLeaveTheRequestUnchanged() throws {
        #expect(try JSONEncoding.default.encode(try post(), with: nil) == (try post()))
        #expect(try PropertyListEncoding.default.encode(try post(), with: nil) == (try post()))
    }

    @Test func propertyListEncodingWritesXMLAndBinary() throws {
        let xml = try PropertyListEncoding.xml.encode(try post(), with: ["a": "b"])
        #expect(xml.headers["Content-Type"] == "application/x-plist")
        #expect(String(decoding: xml.httpBody!, as: UTF8.self).contains("<key>a</key>"))
        let binary = try PropertyListEncoding.binary.encode(try post(), with: ["a": "b"])
        #expect(binary.httpBody?.prefix(6) == Data("bplist".utf8))
        let decoded = try PropertyListSerialization.propertyList(from: binary.httpBody!, format: nil) as? [String: String]
        #expect(decoded == ["a": "b"])
    }

    @Test func reexportsBluebonnet() {
        // `import BluebonnetFoundation` alone gives the core API.
        #expect(URLEncoding.default.destination == .methodDependent)
        #expect(HTTPMethod.get.rawValue == "GET")
    }
}

/// Alamofire's `InputStream` bodies: a multipart stream part and an upload take one, read in
/// chunks into the same bytes a ``BodyStream`` gives.
@Suite struct InputStreamBodyTests {
    @Test func aMultipartStreamPartReadsTheInputStream() async throws {
        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let fromStream = MultipartFormData(boundary: "b")
        fromStream.append(InputStream(data: payload), withLength: UInt64(payload.count), name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
        fromStream.append(InputStream(data: Data("v".utf8)), withLength: 1, headers: ["Content-Disposition": "form-data; name=\"v\""])
        let fromData = MultipartFormData(boundary: "b")
        fromData.append(payload, withName: "f", fileName: "f.bin", mimeType: "application/octet-stream")
        fromData.append(Data("v".utf8), withName: "v")
        #expect(try await fromStream.encoded() == fromData.encode())
    }

    @Test func chunksFollowTheChunkSizeAndAFileStreamEnds() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-inputstream-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(repeating: 7, count: 10).write(to: file)
        var chunks: [Int] = []
        for try await chunk in BodyStream(try #require(InputStream(url: file)), chunkSize: 4) { chunks.append(chunk.count) }
        #expect(chunks == [4, 4, 2])
    }

    @Test func anUnreadableStreamFailsTheBody() async throws {
        let missing = InputStream(fileAtPath: "/nonexistent/bluebonnet-\(UUID().uuidString)")
        await #expect(throws: (any Error).self) {
            for try await _ in BodyStream(try #require(missing)) {}
        }
    }
}

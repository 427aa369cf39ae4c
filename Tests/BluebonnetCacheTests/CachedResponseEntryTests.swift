import BluebonnetCache
import BluebonnetCore
import Testing

@Suite struct CachedResponseEntryTests {
    @Test func countsBodyKeyAndFieldsAgainstCapacity() {
        let entry = CachedResponseEntry(
            key: "http://a/b", requestMethod: .get, varyingRequestHeaders: ["Accept": "x"],
            statusCode: 200, reasonPhrase: "OK", version: .http1_1, headers: ["ETag": "\"1\""],
            body: ByteBuffer(string: "hello"), requestTime: 1, responseTime: 2)
        // body 5 + key 10 + reason 2 + ("ETag" 4 + "\"1\"" 3 + 4) + ("Accept" 6 + "x" 1 + 4)
        #expect(entry.byteCount == 5 + 10 + 2 + 11 + 11)
    }
}

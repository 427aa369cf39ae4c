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

    // RFC 9111 §4.2.1, §4.2.3, §4.1: an entry's Cache-Control, Date, Age, Expires and Vary are
    // parsed once, when its headers are set; a change to the headers is seen by the next lookup.
    @Test func changedHeadersChangeFreshnessAgeAndVary() {
        let rules = CacheRules()
        var entry = CachedResponseEntry(
            key: "http://a/b", requestMethod: .get, varyingRequestHeaders: [:],
            statusCode: 200, reasonPhrase: "OK", version: .http1_1,
            headers: ["Cache-Control": "max-age=60", "Date": "Thu, 01 Jan 1970 00:16:40 GMT"],
            body: ByteBuffer(string: "hello"), requestTime: 1_000, responseTime: 1_000)
        #expect(rules.freshness(of: entry, now: 1_010) == CacheFreshness(lifetime: 60, age: 10, isHeuristic: false))

        entry.headers.update(name: "Cache-Control", value: "max-age=5")
        entry.headers.add(name: "Age", value: "7")
        #expect(rules.freshness(of: entry, now: 1_010) == CacheFreshness(lifetime: 5, age: 17, isHeuristic: false))

        entry.headers.remove(name: "Cache-Control")
        entry.headers.add(name: "Expires", value: "0")  // not an HTTP-date: already expired (§5.3)
        #expect(rules.freshness(of: entry, now: 1_010).lifetime == 0)

        let request = CacheRequest(method: .get, url: "http://a/b", headers: [:])
        #expect(rules.lookup(request, entry: entry, now: 1_010) != .miss)
        entry.headers.add(name: "Vary", value: "*")  // never matches (§4.1)
        #expect(rules.lookup(request, entry: entry, now: 1_010) == .miss)
    }

    @Test func entriesWithTheSameHeadersAreEqual() {
        func make(_ headers: HTTPHeaders) -> CachedResponseEntry {
            CachedResponseEntry(
                key: "http://a/b", requestMethod: .get, varyingRequestHeaders: [:], statusCode: 200, reasonPhrase: "OK",
                version: .http1_1, headers: headers, body: ByteBuffer(string: "x"), requestTime: 1, responseTime: 2)
        }
        var changed = make(["ETag": "\"1\""])
        changed.headers.update(name: "Cache-Control", value: "no-cache")
        changed.headers.remove(name: "Cache-Control")
        #expect(changed == make(["ETag": "\"1\""]))
        #expect(make(["Cache-Control": "max-age=1"]) != make(["Cache-Control": "max-age=2"]))
    }
}

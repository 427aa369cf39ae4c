import FoundationEssentials
import Testing

@testable import Bluebonnet

/// Request identities: distinct, and well-formed version 4 / RFC 9562 variant UUIDs.
@Suite struct RequestIDTests {
    @Test func identitiesAreDistinctAndVersionFour() {
        var seen = Set<UUID>()
        for _ in 0..<100_000 {
            let id = RequestID.next()
            #expect(seen.insert(id).inserted, "a repeated request identity: \(id)")
            let bytes = id.uuid
            #expect(bytes.6 >> 4 == 4, "version nibble of \(id)")
            #expect(bytes.8 >> 6 == 0b10, "variant bits of \(id)")
        }
        // The text form round-trips, as any UUID's does.
        let id = RequestID.next()
        #expect(UUID(uuidString: id.uuidString) == id)
    }

    @Test func everyRequestHasItsOwnIdentity() {
        let session = Session()
        let first = session.request("http://127.0.0.1:9/a")
        let second = session.request("http://127.0.0.1:9/b")
        #expect(first.id != second.id)
    }
}

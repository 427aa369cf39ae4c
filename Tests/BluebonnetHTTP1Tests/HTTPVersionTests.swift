import BluebonnetHTTP1
import Testing

@Suite struct HTTPVersionTests {
    @Test func describesItselfAsOnTheWire() {
        #expect(HTTPVersion.http1_1.description == "HTTP/1.1")
        #expect(HTTPVersion.http1_0 < HTTPVersion.http1_1)
    }
}

import BluebonnetTLS
import BluebonnetTransport
import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct EndpointMemoTests {
    @Test(arguments: [
        ("http://a/x", 8), ("http://a", 8), ("https://u:p@a:1?q", 15), ("http://[::1]:8/x#f", 14), ("HTTP+unix://%2Ftmp%2Fs/x", 22),
        ("mailto:a@b", nil), ("http:/a", nil), ("://a/", nil), ("h t://a/", nil),
    ] as [(String, Int?)])
    func theOriginEndsAtThePathQueryOrFragment(text: String, expected: Int?) {
        #expect(EndpointMemo.originLength(of: text) == expected)
    }

    /// Whatever order requests come in, the memo's endpoint is the one worked out from the URL:
    /// origins that differ only after their first characters, or in the port, the userinfo, the
    /// scheme or brackets, never share one.
    @Test func theEndpointIsTheURLsInEveryOrder() throws {
        let texts = [
            "http://example.com/a", "http://example.com/b?x=1", "http://example.com:8080/a", "http://example.co/a",
            "https://example.com/a", "HTTPS://EXAMPLE.com/a", "http://u:p@example.com/a", "http://example.com:/a",
            "http://[::1]:8443/a", "https://[::1]/a", "http://127.0.0.1:18080/small.txt", "http://127.0.0.1:18081/small.txt",
            "http+unix://%2Ftmp%2Fbb.sock/a", "ftp://example.com/a", "http://example.com?q", "http://example.com#f",
            "http://a:4433333333333333333333333333/x", "https://[example.com]/",
        ]
        let urls = texts.compactMap { URL(string: $0) }
        #expect(urls.count == texts.count)
        let tls = TLSConfiguration()
        let memo = EndpointMemo()
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            let order = round == 0 ? urls + urls : (urls + urls).shuffled(using: &generator)
            for url in order {
                #expect(memo.endpoint(for: url, tls: tls) == Request.endpoint(for: url, tls: tls), "\(url)")
            }
        }
    }
}

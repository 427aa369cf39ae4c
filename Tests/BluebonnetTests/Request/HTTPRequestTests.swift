import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct HTTPRequestTests {
    struct TargetCase: CustomTestStringConvertible, Sendable {
        let url: String
        let target: String
        let authority: String
        var testDescription: String { url }
    }

    // RFC 9112 §3.2.1 origin-form; RFC 9110 §7.2 Host; RFC 3986 §3.2.2 IPv6 literals.
    static let targets: [TargetCase] = [
        .init(url: "http://example.com", target: "/", authority: "example.com"),
        .init(url: "http://example.com/", target: "/", authority: "example.com"),
        .init(url: "http://example.com/a/b", target: "/a/b", authority: "example.com"),
        .init(url: "http://example.com?x=1", target: "/?x=1", authority: "example.com"),
        .init(url: "http://example.com/p?x=1&y=%20", target: "/p?x=1&y=%20", authority: "example.com"),
        .init(url: "http://example.com/a%2Fb/c%20d", target: "/a%2Fb/c%20d", authority: "example.com"),
        .init(url: "http://example.com/p?", target: "/p?", authority: "example.com"),
        .init(url: "http://example.com/p#frag", target: "/p", authority: "example.com"),
        .init(url: "http://example.com/p?q=1#frag", target: "/p?q=1", authority: "example.com"),
        .init(url: "http://example.com:80/", target: "/", authority: "example.com"),
        .init(url: "https://example.com:443/", target: "/", authority: "example.com"),
        .init(url: "HTTP://example.com:80/", target: "/", authority: "example.com"),
        .init(url: "http://example.com:443/", target: "/", authority: "example.com:443"),
        .init(url: "https://example.com:80/", target: "/", authority: "example.com:80"),
        .init(url: "http://example.com:8080/x", target: "/x", authority: "example.com:8080"),
        .init(url: "http://user:pass@example.com/x", target: "/x", authority: "example.com"),
        .init(url: "https://user@example.com:8443/", target: "/", authority: "example.com:8443"),
        .init(url: "http://[::1]/", target: "/", authority: "[::1]"),
        .init(url: "http://[::1]:8080/a?b", target: "/a?b", authority: "[::1]:8080"),
        .init(url: "https://[2001:db8::1]:443/", target: "/", authority: "[2001:db8::1]"),
        .init(url: "http://[fe80::1%25eth0]:81/", target: "/", authority: "[fe80::1%25eth0]:81"),
        .init(url: "http://127.0.0.1:9000/p", target: "/p", authority: "127.0.0.1:9000"),
        .init(url: "http://Example.COM/", target: "/", authority: "Example.COM"),
    ]

    @Test(arguments: targets)
    func requestTargetIsOriginFormWithEncodingPreserved(_ item: TargetCase) throws {
        let request = try HTTPRequest(url: item.url)
        #expect(request.requestTarget() == item.target)
    }

    @Test(arguments: targets)
    func authorityBracketsIPv6AndOmitsDefaultPortsAndUserinfo(_ item: TargetCase) throws {
        let request = try HTTPRequest(url: item.url)
        #expect(request.authority() == item.authority)
    }

    @Test func urlCredentialsBecomeABasicAuthorizationField() throws {
        let request = try HTTPRequest(url: "https://Aladdin:open%20sesame@example.com/")
        #expect(request.urlCredentialsAuthorization == .authorization("Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="))
        let userOnly = try HTTPRequest(url: "https://alice@example.com/")
        #expect(userOnly.urlCredentialsAuthorization?.value == "Basic YWxpY2U6")
        #expect(try HTTPRequest(url: "https://example.com/").urlCredentialsAuthorization == nil)
    }

    @Test(arguments: ["", "http://[::1", "http://[::1]:x/"])
    func invalidURLStringsThrowInvalidURL(_ text: String) {
        #expect {
            _ = try text.asURL()
        } throws: { error in
            (error as? RequestBuildError)?.code == .invalidURL && (error as? RequestBuildError)?.detail == text
        }
    }

    @Test func stringURLAndComponentsConvertToTheSameURL() throws {
        let text = "https://example.com/a?b=c"
        let components = try #require(URLComponents(string: text))
        #expect(try text.asURL() == URL(string: text))
        #expect(try URL(string: text)!.asURL() == URL(string: text))
        #expect(try components.asURL() == URL(string: text))
    }

    @Test func convenienceInitializerSetsMethodAndHeadersAndConvertsToItself() throws {
        let request = try HTTPRequest(url: "https://example.com", method: .post, headers: [.accept("text/plain")])
        #expect(request.method == .post)
        #expect(request.headers["Accept"] == "text/plain")
        #expect(request.httpBody == nil && request.timeoutInterval == 60 && request.explicitTimeout == nil)
        #expect(try request.asURLRequest() == request)
        #expect(request.urlRequest == request)
        #expect(try HTTPRequest(url: "https://example.com").method == .get)
    }
}

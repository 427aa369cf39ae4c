import BluebonnetCore
import BluebonnetHTTP1
import Testing

/// The proxy request-target forms (RFC 9112 §3.2.2 absolute-form, §3.2.3 authority-form) and the
/// `CONNECT` head, with CR/LF injection refused as a typed error.
@Suite struct RequestTargetTests {
    @Test(arguments: [
        ("example.com", 443, "example.com:443"),
        ("EXAMPLE.com", 80, "EXAMPLE.com:80"),
        ("127.0.0.1", 8443, "127.0.0.1:8443"),
        ("::1", 443, "[::1]:443"),
        ("[2001:db8::1]", 443, "[2001:db8::1]:443"),
    ])
    func authorityForm(host: String, port: Int, expected: String) throws {
        #expect(try RequestTarget.authorityForm(host: host, port: port) == expected)
    }

    @Test(arguments: [
        ("example.com\r\nX-Evil: 1", 443),
        ("example.com\n", 443),
        ("exa mple.com", 443),
        ("", 443),
        ("user@example.com", 443),
        ("example.com/path", 443),
        ("ex\u{e9}mple.com", 443),
        ("example.com", 0),
        ("example.com", 65536),
    ])
    func authorityFormRefusesInjection(host: String, port: Int) {
        let error = #expect(throws: RequestEncoderError.self) { _ = try RequestTarget.authorityForm(host: host, port: port) }
        #expect(error?.code == .invalidTarget)
    }

    @Test func absoluteForm() throws {
        #expect(try RequestTarget.absoluteForm(scheme: "http", authority: "example.com", originForm: "/a?b=c") == "http://example.com/a?b=c")
        #expect(try RequestTarget.absoluteForm(scheme: "HTTP", authority: "[::1]:8080", originForm: "/") == "http://[::1]:8080/")
    }

    @Test(arguments: [
        ("http", "example.com\r\n", "/"),
        ("http", "", "/"),
        ("http", "user:pw@example.com", "/"),
        ("ht tp", "example.com", "/"),
        ("1http", "example.com", "/"),
        ("http", "example.com", "relative"),
    ])
    func absoluteFormRefusesBadParts(scheme: String, authority: String, originForm: String) {
        let error = #expect(throws: RequestEncoderError.self) {
            _ = try RequestTarget.absoluteForm(scheme: scheme, authority: authority, originForm: originForm)
        }
        #expect(error?.code == .invalidTarget)
    }

    /// `CONNECT host:port HTTP/1.1`, `Host` the same authority and first, no framing field; a
    /// `Host` among the extra headers is replaced.
    @Test func connectHeadEncodes() throws {
        let head = try RequestHead.connect(
            host: "origin.example", port: 443,
            headers: ["host": "ignored", "Proxy-Authorization": "Basic dTpw"])
        var buffer = ByteBuffer()
        try RequestEncoder.encodeHead(head, host: nil, framing: .none, into: &buffer)
        let text = buffer.withUnsafeReadableBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text == "CONNECT origin.example:443 HTTP/1.1\r\nHost: origin.example:443\r\nProxy-Authorization: Basic dTpw\r\n\r\n")
    }

    /// A CR/LF in an extra field of the CONNECT head is refused by the encoder (nothing written).
    @Test func connectHeadRefusesInjectedFieldValue() throws {
        let head = try RequestHead.connect(host: "origin.example", port: 443, headers: ["Proxy-Authorization": "Basic x\r\nX-Evil: 1"])
        var buffer = ByteBuffer()
        let error = #expect(throws: RequestEncoderError.self) {
            try RequestEncoder.encodeHead(head, host: nil, framing: .none, into: &buffer)
        }
        #expect(error?.code == .invalidHeaderValue)
        #expect(buffer.readableBytes == 0)
    }

    /// The absolute-form goes through the encoder unchanged.
    @Test func absoluteFormTargetEncodes() throws {
        let target = try RequestTarget.absoluteForm(scheme: "http", authority: "example.com:8080", originForm: "/x")
        var buffer = ByteBuffer()
        try RequestEncoder.encodeHead(RequestHead(target: target), host: "example.com:8080", framing: .none, into: &buffer)
        let text = buffer.withUnsafeReadableBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text == "GET http://example.com:8080/x HTTP/1.1\r\nHost: example.com:8080\r\n\r\n")
    }
}

@testable import Bluebonnet
import BluebonnetHTTP1
import BluebonnetTransport
import Foundation
import Testing

/// Bad strings in a request (issue 16, item 6): CR, LF, NUL and other bytes HTTP/1.1 cannot
/// carry, in the method, header names and values, cookies, credentials, multipart fields, proxy
/// settings and body framing. Each row fails with its typed error before any connection is
/// opened (see ``BadInput``), whichever request kind carries it.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct BadRequestInputTests {
    typealias Row = BadInput.Row

    /// A data request with `method` and `headers`.
    static func data(method: HTTPMethod = .get, headers: HTTPHeaders = []) -> @Sendable (Session, String) async -> BadInput.Ending {
        { session, base in await BadInput.ending(of: session.request("\(base)/x", method: method, headers: headers)) }
    }

    static func header(_ name: String, _ value: String) -> HTTPHeaders { HTTPHeaders([HTTPHeader(name: name, value: value)]) }

    // RFC 9110 §9.1 (method = token), §5.1 (field-name = token), §5.5 (no CR, LF, NUL in a
    // field value); RFC 9112 §2.2 (a bare CR is not a line ending either).
    static let methodsAndHeaders: [Row] = [
        Row(name: "method with CRLF", send: data(method: HTTPMethod(rawValue: "GET / HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET")),
            expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "method with LF", send: data(method: HTTPMethod(rawValue: "GET\nX")), expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "method with NUL", send: data(method: HTTPMethod(rawValue: "GE\0T")), expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "method with a space", send: data(method: HTTPMethod(rawValue: "GET /x")), expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "empty method", send: data(method: HTTPMethod(rawValue: "")), expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "non-ASCII method", send: data(method: HTTPMethod(rawValue: "GÉT")), expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "header name with CRLF", send: data(headers: header("X-A\r\nX-B", "1")), expected: BadInput.invalidHeaderName),
        Row(name: "header name with NUL", send: data(headers: header("X-A\0", "1")), expected: BadInput.invalidHeaderName),
        Row(name: "header name with a colon", send: data(headers: header("X-A: y\r\nX-B", "1")), expected: BadInput.invalidHeaderName),
        Row(name: "header name with a space", send: data(headers: header("X A", "1")), expected: BadInput.invalidHeaderName),
        Row(name: "empty header name", send: data(headers: header("", "1")), expected: BadInput.invalidHeaderName),
        Row(name: "non-ASCII header name", send: data(headers: header("X-Ä", "1")), expected: BadInput.invalidHeaderName),
        Row(name: "header value with CRLF", send: data(headers: header("X-Token", "a\r\nInjected: yes")),
            expected: BadInput.invalidHeaderValue("X-Token")),
        Row(name: "header value with LF", send: data(headers: header("X-Token", "a\nb")), expected: BadInput.invalidHeaderValue("X-Token")),
        Row(name: "header value with CR", send: data(headers: header("X-Token", "a\rb")), expected: BadInput.invalidHeaderValue("X-Token")),
        Row(name: "header value with NUL", send: data(headers: header("X-Token", "a\0b")), expected: BadInput.invalidHeaderValue("X-Token")),
        Row(name: "header value with another control byte", send: data(headers: header("X-Token", "a\u{01}b")),
            expected: BadInput.invalidHeaderValue("X-Token")),
        Row(name: "Host header with CRLF", send: data(headers: header("Host", "a\r\nX: y")), expected: BadInput.invalidHeaderValue("Host")),
        // (`headers:` of `request(_:)` replaces fields by name, as Alamofire's does: two Host
        // fields come only from a request built with `add`.)
        Row(name: "two Host headers", send: { session, base in
            var request = HTTPRequest(url: URL(string: "\(base)/x")!)
            request.headers.add(name: "Host", value: "a")
            request.headers.add(name: "Host", value: "b")
            return await BadInput.ending(of: session.request(request))
        }, expected: BadInput.invalidHead(.duplicateHost)),
        Row(name: "Cookie header value with CRLF", send: data(headers: header("Cookie", "a=1\r\nX-Injected: 1")),
            expected: BadInput.invalidHeaderValue("Cookie")),
        Row(name: "bearer token with CRLF", send: data(headers: [.authorization(bearerToken: "t\r\nX-Injected: 1")]),
            expected: BadInput.invalidHeaderValue("Authorization")),
        Row(name: "session default header with CRLF", configuration: { _ in
            var configuration = SessionConfiguration()
            configuration.headers.add(name: "X-Default", value: "a\r\nX-Injected: 1")
            return configuration
        }, send: data(), expected: BadInput.invalidHeaderValue("X-Default")),
        Row(name: "session default header name with NUL", configuration: { _ in
            var configuration = SessionConfiguration()
            configuration.headers.add(name: "X-Default\0", value: "1")
            return configuration
        }, send: data(), expected: BadInput.invalidHeaderName),
    ]

    @Test(arguments: methodsAndHeaders)
    func methodsAndHeadersAreRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    // The same refusal whatever the request kind: upload, download, stream.
    static let requestKinds: [Row] = [
        Row(name: "upload with a header value with CRLF", send: { session, base in
            await BadInput.ending(of: session.upload(Data("x".utf8), to: "\(base)/x", headers: header("X-Token", "a\r\nb")))
        }, expected: BadInput.invalidHeaderValue("X-Token")),
        Row(name: "download with a method with CRLF", send: { session, base in
            await BadInput.ending(of: session.download("\(base)/x", method: HTTPMethod(rawValue: "GET\r\nX")))
        }, expected: BadInput.invalidHead(.invalidMethod)),
        Row(name: "stream request with a header name with LF", send: { session, base in
            await BadInput.ending(of: session.streamRequest("\(base)/x", headers: header("X\nY", "1")))
        }, expected: BadInput.invalidHeaderName),
        Row(name: "request modifier adding a header value with NUL", send: { session, base in
            await BadInput.ending(of: session.request("\(base)/x") { $0.setValue("a\0b", forHTTPHeaderField: "X-Token") })
        }, expected: BadInput.invalidHeaderValue("X-Token")),
    ]

    @Test(arguments: requestKinds)
    func everyRequestKindIsRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    // Body framing (RFC 9112 §6): a length that cannot be sent, or headers that contradict it.
    static let framing: [Row] = [
        Row(name: "stream body with a negative length", send: { session, base in
            let url = URL(string: "\(base)/x")!
            let request = HTTPRequest(url: url, method: .post, content: .stream(BodyStream(Data("abc".utf8)), length: -3))
            return await BadInput.ending(of: session.request(request))
        }, expected: BadInput.invalidHead(.conflictingFraming)),
        Row(name: "Content-Length header that contradicts the body", send: { session, base in
            await BadInput.ending(of: session.upload(Data("abc".utf8), to: "\(base)/x", headers: header("Content-Length", "99")))
        }, expected: BadInput.invalidHead(.conflictingFraming)),
        Row(name: "Content-Length header that is not a number", send: { session, base in
            await BadInput.ending(of: session.upload(Data("abc".utf8), to: "\(base)/x", headers: header("Content-Length", "-3")))
        }, expected: BadInput.invalidHead(.conflictingFraming)),
        Row(name: "Transfer-Encoding header with a sized body", send: { session, base in
            await BadInput.ending(of: session.upload(Data("abc".utf8), to: "\(base)/x", headers: header("Transfer-Encoding", "chunked")))
        }, expected: BadInput.invalidHead(.conflictingFraming)),
    ]

    // Parameters that cannot be encoded (JSON has no NaN or infinity, RFC 8259 §6).
    static let parameters: [Row] = [
        Row(name: "JSON parameters with NaN", send: { session, base in
            await BadInput.ending(of: session.request("\(base)/x", method: .post, parameters: ["x": Double.nan], encoder: JSONParameterEncoder.default))
        }, expected: { error in
            if case .parameterEncodingFailed(.jsonEncodingFailed) = error { return true }  // Alamofire's case
            return false
        }),
        Row(name: "JSON parameters with infinity", send: { session, base in
            await BadInput.ending(of: session.request("\(base)/x", method: .post, parameters: ["x": Double.infinity], encoder: JSONParameterEncoder.default))
        }, expected: { error in
            if case .parameterEncodingFailed(.jsonEncodingFailed) = error { return true }  // Alamofire's case
            return false
        }),
        Row(name: "parameters encoded into a request without a URL", send: { session, base in
            let encoder = URLEncodedFormParameterEncoder(destination: .queryString)
            var request = HTTPRequest(url: URL(string: "\(base)/x")!)
            request.url = nil
            let result = Result { try encoder.encode(["a": "b"], into: request) }
            guard case .failure(let error) = result else { return BadInput.Ending(error: nil, transactions: 0) }
            return BadInput.Ending(error: error.asAFError, transactions: 0)
        }, expected: { error in
            if case .parameterEncoderFailed(.missingRequiredComponent(.url)) = error { return true }
            return false
        }),
    ]

    @Test(arguments: parameters)
    func unencodableParametersAreRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    @Test(arguments: framing)
    func impossibleFramingIsRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    /// A multipart upload of `form`.
    static func multipart(_ build: @escaping @Sendable (MultipartFormData) -> Void) -> @Sendable (Session, String) async -> BadInput.Ending {
        { session, base in await BadInput.ending(of: session.upload(multipartFormData: build, to: "\(base)/x")) }
    }

    // RFC 7578 §4.2: names and file names go in a quoted-string of Content-Disposition; a CR, LF
    // or NUL there would end the part's header.
    static let multipartFields: [Row] = [
        Row(name: "multipart name with CRLF", send: multipart { $0.append(Data("v".utf8), withName: "a\r\nX-Injected: 1") },
            expected: BadInput.multipartHeader("name")),
        Row(name: "multipart name with NUL", send: multipart { $0.append(Data("v".utf8), withName: "a\0") },
            expected: BadInput.multipartHeader("name")),
        Row(name: "multipart file name with CRLF", send: multipart {
            $0.append(Data("v".utf8), withName: "f", fileName: "a.txt\r\nContent-Type: text/html", mimeType: "text/plain")
        }, expected: BadInput.multipartHeader("filename")),
        Row(name: "multipart file name with LF", send: multipart { $0.append(Data("v".utf8), withName: "f", fileName: "a\n.txt") },
            expected: BadInput.multipartHeader("filename")),
        Row(name: "multipart content type with CRLF", send: multipart {
            $0.append(Data("v".utf8), withName: "f", fileName: "a.txt", mimeType: "text/plain\r\nX-Injected: 1")
        }, expected: BadInput.multipartHeader("Content-Type")),
        Row(name: "multipart stream part name with CR", send: multipart {
            $0.append(BodyStream(Data("v".utf8)), withLength: 1, name: "a\rb", fileName: "a", mimeType: "text/plain")
        }, expected: BadInput.multipartHeader("name")),
        Row(name: "multipart custom part header value with CRLF", send: multipart {
            $0.append(BodyStream(Data("v".utf8)), withLength: 1, headers: header("Content-Disposition", "form-data\r\nX: y"))
        }, expected: { error in
            if case .multipartEncodingFailed(.bodyPartHeaderInvalid) = error { return true }
            return false
        }),
        Row(name: "multipart custom part header name with a colon", send: multipart {
            $0.append(BodyStream(Data("v".utf8)), withLength: 1, headers: header("X:Y", "1"))
        }, expected: { error in
            if case .multipartEncodingFailed(.bodyPartHeaderInvalid) = error { return true }
            return false
        }),
        Row(name: "multipart stream lengths that add up past Int64.max", send: multipart { form in
            form.append(BodyStream(Data()), withLength: UInt64.max / 2 + 1, name: "a", fileName: "a", mimeType: "text/plain")
            form.append(BodyStream(Data()), withLength: UInt64.max / 2 + 1, name: "b", fileName: "b", mimeType: "text/plain")
        }, expected: { error in
            if case .requestTooLarge(let limit) = error { return limit == Int(Int64.max) }
            return false
        }),
        Row(name: "multipart stream length past Int64.max", send: multipart { form in
            form.append(BodyStream(Data()), withLength: UInt64(Int64.max), name: "a", fileName: "a", mimeType: "text/plain")
        }, expected: { error in
            if case .requestTooLarge = error { return true }
            return false
        }),
    ]

    @Test(arguments: multipartFields)
    func multipartFieldsAreRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    /// A configuration whose `http` proxy is `server` (on the listener's port unless `port` is given).
    static func proxied(
        host: String = "127.0.0.1", port: Int? = nil, credentials: Proxy.Credentials? = nil
    ) -> @Sendable (Int) -> SessionConfiguration {
        { listener in
            var configuration = SessionConfiguration()
            configuration.proxy = Proxy(http: Proxy.Server(host: host, port: port ?? listener, credentials: credentials))
            return configuration
        }
    }

    // RFC 7617 §2: the user-id and password of Basic credentials hold no control characters, and
    // the user-id no colon. The proxy rows point the proxy at the listener.
    static let credentials: [Row] = [
        Row(name: "proxy user name with CRLF", configuration: proxied(credentials: .init(username: "u\r\nX: y", password: "p")),
            send: data(), expected: BadInput.proxyConfiguration(.invalidCredentials)),
        Row(name: "proxy password with NUL", configuration: proxied(credentials: .init(username: "u", password: "p\0")),
            send: data(), expected: BadInput.proxyConfiguration(.invalidCredentials)),
        Row(name: "proxy user name with a colon", configuration: proxied(credentials: .init(username: "u:v", password: "p")),
            send: data(), expected: BadInput.proxyConfiguration(.invalidCredentials)),
        Row(name: "proxy host with CRLF", configuration: proxied(host: "127.0.0.1\r\nX: y"),
            send: data(), expected: BadInput.proxyConfiguration(.invalidHost)),
        Row(name: "proxy port 0", configuration: proxied(port: 0), send: data(), expected: BadInput.proxyConfiguration(.invalidPort)),
        Row(name: "proxy port 70000", configuration: proxied(port: 70000), send: data(), expected: BadInput.proxyConfiguration(.invalidPort)),
        Row(name: "proxy port -1", configuration: proxied(port: -1), send: data(), expected: BadInput.proxyConfiguration(.invalidPort)),
        Row(name: "URL user with CRLF", send: { session, base in
            let url = base.replacingOccurrences(of: "http://", with: "http://us%0D%0Aer:pw@")
            return await BadInput.ending(of: session.request("\(url)/x"))
        }, expected: BadInput.invalidHeaderValue("Authorization")),
        Row(name: "URL password with NUL", send: { session, base in
            let url = base.replacingOccurrences(of: "http://", with: "http://user:p%00w@")
            return await BadInput.ending(of: session.request("\(url)/x"))
        }, expected: BadInput.invalidHeaderValue("Authorization")),
        Row(name: "authenticate(username:password:) with CRLF", send: { session, base in
            await BadInput.ending(of: session.request("\(base)/x").authenticate(username: "u\r\nX: y", password: "p"))
        }, expected: BadInput.invalidHeaderValue("Authorization")),
        Row(name: "authenticate(with:) password with NUL", send: { session, base in
            let credential = URLCredential(user: "u", password: "p\0", persistence: .forSession)
            return await BadInput.ending(of: session.request("\(base)/x").authenticate(with: credential))
        }, expected: BadInput.invalidHeaderValue("Authorization")),
    ]

    @Test(arguments: credentials)
    func credentialsAreRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }

    // Upload sources that cannot be read: refused when the upload is planned, before a lease.
    static let uploadSources: [Row] = [
        Row(name: "upload of a file that does not exist", send: { session, base in
            await BadInput.ending(of: session.upload(URL(fileURLWithPath: "/nonexistent/bluebonnet-bad-input"), to: "\(base)/x"))
        }, expected: { error in
            if case .createUploadableFailed = error { return true }
            return false
        }),
        Row(name: "upload of a directory", send: { session, base in
            await BadInput.ending(of: session.upload(URL(fileURLWithPath: "/tmp", isDirectory: true), to: "\(base)/x"))
        }, expected: { error in
            if case .createUploadableFailed = error { return true }
            return false
        }),
        Row(name: "upload of a file URL with NUL in its path", send: { session, base in
            await BadInput.ending(of: session.upload(URL(fileURLWithPath: "/tmp/a\0b"), to: "\(base)/x"))
        }, expected: { error in
            if case .createUploadableFailed = error { return true }
            return false
        }),
    ]

    @Test(arguments: uploadSources)
    func unreadableUploadSourcesAreRefusedBeforeAnyConnection(_ row: Row) async throws {
        try await BadInput.check(row)
    }
}

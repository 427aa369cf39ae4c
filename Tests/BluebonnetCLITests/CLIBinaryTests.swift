import BluebonnetTestSupport
import Foundation
import Testing

/// The `bluebonnet` executable as scripts use it: its exit statuses and its `--json` lines against
/// real servers on loopback (the fault server and nginx, Fixtures/servers/README.md).
@Suite(.timeLimit(.minutes(3))) struct CLIBinaryTests {
    static let pattern = Array("0123456789abcdef".utf8)
    static func patternBytes(_ count: Int) -> [UInt8] {
        (0..<count).map { pattern[$0 % pattern.count] }
    }

    // MARK: Without a server

    @Test func usageErrorsExitTwoWithAMessageOnStandardError() async throws {
        for arguments in [[], ["--bogus", "http://127.0.0.1/"], ["-H", "nocolon", "http://127.0.0.1/"],
                          ["--data-binary", "@/nonexistent/bluebonnet", "http://127.0.0.1/"]] {
            let run = try await CLIBinary.run(arguments)
            #expect(run.status == 2, "\(run)")
            #expect(run.stdout.isEmpty, "\(run)")
            #expect(run.stderr.contains("Error"), "\(run)")
        }
    }

    @Test func versionAndHelpExitZero() async throws {
        let version = try await CLIBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdoutText.hasPrefix("bluebonnet "))
        let help = try await CLIBinary.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdoutText.contains("--max-redirs"))
    }

    // MARK: Proxy (-x, --noproxy)

    /// The proxy fixture's log: the request targets it saw, in order.
    static func proxyTargets(_ proxy: TestServer) throws -> [String] {
        let path = try #require(proxy.proxyLogPath)
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return try String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return object?["target"] as? String ?? "?"
        }
    }

    /// `-x` sends http URLs to the proxy in absolute-form (the JSON line is unchanged in shape);
    /// `--noproxy` sends the listed hosts direct.
    @Test func proxyOptionRoutesThroughTheProxyAndNoProxyBypassesIt() async throws {
        try await withTestServer(.proxy([])) { proxy in
            try await withTestServer(.faultServer) { origin in
                let url = "http://127.0.0.1:\(origin.port)/ok?size=3"
                let run = try await CLIBinary.run(["--json", "-x", "127.0.0.1:\(proxy.port)", url])
                #expect(run.status == 0, "\(run)")
                #expect(run.jsonLines.first?["status"] as? Int == 200)
                #expect(run.jsonLines.first?["url"] as? String == url)
                #expect(run.jsonLines.first.map { Set($0.keys) } == ["url", "status", "reason", "version", "headers", "body_base64",
                                                                     "body_length", "redirects", "metrics", "error",
                                                                     "upload_length", "resumed_from", "cache"])
                #expect(try Self.proxyTargets(proxy) == [url])
                let direct = try await CLIBinary.run(["--json", "-x", "127.0.0.1:\(proxy.port)", "--noproxy", "127.0.0.1", url])
                #expect(direct.status == 0, "\(direct)")
                #expect(try Self.proxyTargets(proxy) == [url], "the second run went direct")
            }
        }
    }

    /// A proxy that refuses CONNECT is a `connect` failure; a proxy URL that cannot be used is `invalid_url`.
    @Test func aRefusedTunnelIsAConnectErrorAndABadProxyIsInvalidURL() async throws {
        try await withTestServer(.proxy(["--refuse-connect", "407"])) { proxy in
            let run = try await CLIBinary.run(["--json", "-x", "http://127.0.0.1:\(proxy.port)", "https://localhost:9/"])
            #expect(run.status == 1, "\(run)")
            let error = run.jsonLines.first?["error"] as? [String: Any]
            #expect(error?["kind"] as? String == "connect", "\(run)")
            #expect((error?["message"] as? String)?.contains("407") == true, "\(run)")
        }
        let bad = try await CLIBinary.run(["--json", "-x", "http://proxy:99999", "http://127.0.0.1:9/"])
        #expect(bad.status == 1, "\(bad)")
        #expect((bad.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String == "invalid_url", "\(bad)")
    }

    @Test func anInvalidURLIsAJSONLineWithKindInvalidURLAndExitOne() async throws {
        let run = try await CLIBinary.run(["--json", "ftp://127.0.0.1/x"])
        #expect(run.status == 1, "\(run)")
        let lines = run.jsonLines
        #expect(lines.count == 1)
        #expect(lines.first?["status"] is NSNull)
        #expect((lines.first?["error"] as? [String: Any])?["kind"] as? String == "invalid_url")
        #expect(run.stdoutText.hasPrefix(#"{"url":"ftp://127.0.0.1/x","status":null,"reason":"","version":"","headers":[],"#))
    }

    // MARK: Responses (fault server)

    @Test func theBodyGoesToStandardOutput() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["\(server.baseURL)/ok?size=100"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdout == Self.patternBytes(100))
            #expect(run.stderr.isEmpty, "\(run)")
        }
    }

    @Test func jsonHasOneLinePerURLWithTheContractKeysInOrder() async throws {
        try await withTestServer(.faultServer) { server in
            let base = server.baseURL.absoluteString
            let run = try await CLIBinary.run(["--json", "\(base)/ok?size=3", "\(base)/status/404", "\(base)/status/500"])
            #expect(run.status == 0, "any status is a response: \(run)")
            let text = run.stdoutText
            #expect(text.hasPrefix(#"{"url":"\#(base)/ok?size=3","status":200,"reason":"OK","version":"HTTP/1.1","headers":[["Server","bluebonnet-fault"],["Content-Type","application/octet-stream"],["Content-Length","3"]],"body_base64":"MDEy","body_length":3,"redirects":0,"metrics":{"total_ms":"#), "\(run)")
            #expect(text.hasSuffix("\n"))
            let lines = run.jsonLines
            #expect(lines.count == 3)
            #expect(lines.map { $0["status"] as? Int } == [200, 404, 500])
            #expect(lines.map { $0["reason"] as? String } == ["OK", "Not Found", "Internal Server Error"])
            for (line, raw) in zip(lines, text.split(separator: "\n")) {
                #expect(line["error"] is NSNull)
                #expect(raw.contains(#","metrics":{"total_ms":"#) && raw.hasSuffix(#","error":null,"upload_length":0,"resumed_from":null,"cache":null}"#))
                let metrics = line["metrics"] as? [String: Any] ?? [:]
                #expect(Set(metrics.keys) == ["total_ms", "dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "reused"])
            }
            #expect(Data(base64Encoded: lines[1]["body_base64"] as? String ?? "") == Data("404 Not Found\n".utf8))
        }
    }

    @Test func urlsShareOneConnectionInOrder() async throws {
        try await withTestServer(.faultServer) { server in
            let url = "\(server.baseURL)/conn"
            let run = try await CLIBinary.run(["--json", url, url, url])
            #expect(run.status == 0, "\(run)")
            let bodies = run.jsonLines.map { line -> [String: Int] in
                let body = Data(base64Encoded: line["body_base64"] as? String ?? "") ?? Data()
                return (try? JSONSerialization.jsonObject(with: body)) as? [String: Int] ?? [:]
            }
            #expect(bodies == [["conn": 1, "request_index": 1], ["conn": 1, "request_index": 2],
                               ["conn": 1, "request_index": 3]], "\(run)")
            let reused = run.jsonLines.map { ($0["metrics"] as? [String: Any])?["reused"] as? Bool }
            #expect(reused == [false, true, true] || reused == [nil, nil, nil], "\(run)")
        }
    }

    @Test func redirectsAreFollowedAndCounted() async throws {
        try await withTestServer(.faultServer) { server in
            let base = server.baseURL.absoluteString
            let final = "\(base)/ok?size=5"
            let hop = "\(base)/redirect?to=\(Self.escaped(final))&status=301"
            let twoHops = "\(base)/redirect?to=\(Self.escaped(hop))&status=302"
            let run = try await CLIBinary.run(["--json", hop, twoHops, "\(base)/redirect?to=/ok%3Fsize%3D2&status=307"])
            #expect(run.status == 0, "\(run)")
            let lines = run.jsonLines
            #expect(lines.map { $0["status"] as? Int } == [200, 200, 200])
            #expect(lines.map { $0["redirects"] as? Int } == [1, 2, 1])
            #expect(lines.map { $0["body_length"] as? Int } == [5, 5, 2])
            // The headers are the final response's.
            let headers = lines.first?["headers"] as? [[String]] ?? []
            #expect(headers.contains(["Content-Length", "5"]) && !headers.contains { $0.first == "Location" })
        }
    }

    @Test func noLocationReportsTheRedirectItself() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["--json", "--no-location", "\(server.baseURL)/redirect?to=/ok&status=302"])
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.jsonLines.first)
            #expect(line["status"] as? Int == 302)
            #expect(line["redirects"] as? Int == 0)
            #expect((line["headers"] as? [[String]] ?? []).contains(["Location", "/ok"]))
        }
    }

    @Test func moreRedirectsThanMaxRedirsIsRedirectLimit() async throws {
        try await withTestServer(.faultServer) { server in
            let base = server.baseURL.absoluteString
            let hop = "\(base)/redirect?to=\(Self.escaped("\(base)/ok"))"
            let twoHops = "\(base)/redirect?to=\(Self.escaped(hop))"
            let run = try await CLIBinary.run(["--json", "--max-redirs", "1", twoHops])
            #expect(run.status == 1, "\(run)")
            let line = try #require(run.jsonLines.first)
            #expect(line["status"] is NSNull)
            #expect((line["error"] as? [String: Any])?["kind"] as? String == "redirect_limit", "\(run)")
        }
    }

    /// Without `--max-redirs` the limit is the library's (20, as in Fetch; curl's is 50): a chain
    /// of 20 redirects arrives, one of 21 is `redirect_limit`, and `--max-redirs 21` lets it through.
    @Test func theDefaultRedirectLimitIsTwentyAsTheLibrarys() async throws {
        try await withTestServer(.faultServer) { server in
            let base = server.baseURL.absoluteString
            let twenty = Self.redirectChain(base, hops: 20)
            let twentyOne = Self.redirectChain(base, hops: 21)
            let run = try await CLIBinary.run(["--json", twenty, twentyOne])
            #expect(run.status == 1, "\(run)")
            let lines = run.jsonLines
            #expect(lines.count == 2, "\(run)")
            #expect(lines.first?["status"] as? Int == 200, "\(run)")
            #expect(lines.first?["redirects"] as? Int == 20, "\(run)")
            #expect(lines.last?["status"] is NSNull, "\(run)")
            #expect((lines.last?["error"] as? [String: Any])?["kind"] as? String == "redirect_limit", "\(run)")

            let raised = try await CLIBinary.run(["--json", "--max-redirs", "21", twentyOne])
            #expect(raised.status == 0, "\(raised)")
            #expect(raised.jsonLines.first?["redirects"] as? Int == 21, "\(raised)")
        }
    }

    @Test func headIsARealHeadRequest() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["--json", "-X", "HEAD", "\(server.baseURL)/ok?size=1000"],
                                              timeout: .seconds(20))
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.jsonLines.first)
            #expect(line["status"] as? Int == 200)
            #expect(line["body_length"] as? Int == 0)
            #expect((line["headers"] as? [[String]] ?? []).contains(["Content-Length", "1000"]))
        }
    }

    @Test func dataIsAFormPostAndHeadersGoInOrder() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["-d", "a=1", "-d", "b=2", "-H", "X-One: 1", "-H", "X-Two: 2",
                                               "\(server.baseURL)/echo"])
            #expect(run.status == 0, "\(run)")
            let echo = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
            #expect(echo["method"] as? String == "POST")
            #expect(echo["body_length"] as? Int == 7)
            #expect(echo["body_sha256"] as? String == SHA256.hex(Array("a=1&b=2".utf8)))
            let headers = (echo["headers"] as? [[String]] ?? []).map { $0.joined(separator: ": ") }
            #expect(headers.contains("Content-Type: application/x-www-form-urlencoded"), "\(headers)")
            let one = headers.firstIndex(of: "X-One: 1")
            let two = headers.firstIndex(of: "X-Two: 2")
            #expect(one != nil && two != nil && one! < two!, "\(headers)")
        }
    }

    /// curl sends a body with `-X GET -d …`; so does the CLI (the library refuses one by default).
    @Test func getWithDataSendsTheBodyAsCurlDoes() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["-X", "GET", "-d", "q=1", "\(server.baseURL)/echo"])
            #expect(run.status == 0, "\(run)")
            let echo = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
            #expect(echo["method"] as? String == "GET")
            #expect(echo["body_length"] as? Int == 3)
        }
    }

    @Test func anEmptyHeaderRemovesADefaultAndASemicolonSendsAnEmptyValue() async throws {
        try await withTestServer(.faultServer) { server in
            let url = "\(server.baseURL)/echo"
            func headerNames(_ run: CLIBinary.Result) -> [String] {
                let echo = (try? JSONSerialization.jsonObject(with: Data(run.stdout))) as? [String: Any] ?? [:]
                return (echo["headers"] as? [[String]] ?? []).compactMap { $0.first?.lowercased() }
            }
            let plain = try await CLIBinary.run([url])
            #expect(headerNames(plain).contains("user-agent"), "\(plain)")
            let removed = try await CLIBinary.run(["-H", "User-Agent:", "-H", "X-Empty;", url])
            #expect(removed.status == 0, "\(removed)")
            #expect(!headerNames(removed).contains("user-agent"), "\(removed)")
            let echo = (try? JSONSerialization.jsonObject(with: Data(removed.stdout))) as? [String: Any] ?? [:]
            #expect((echo["headers"] as? [[String]] ?? []).contains(["X-Empty", ""]), "\(removed)")
        }
    }

    @Test func dataBinaryFromAFileIsSentByteForByteAndDashDStripsNewlines() async throws {
        try await withTestServer(.faultServer) { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-\(UUID().uuidString).bin")
            let bytes: [UInt8] = Array("line1\r\nline2\n".utf8) + [0, 255, 10]
            try Data(bytes).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let url = "\(server.baseURL)/echo"
            let run = try await CLIBinary.run(["--json", "-X", "PUT", "--data-binary", "@\(file.path)", url])
            let stripped = try await CLIBinary.run(["--json", "-d", "@\(file.path)", url])
            for (result, sent) in [(run, bytes), (stripped, bytes.filter { $0 != 10 && $0 != 13 })] {
                #expect(result.status == 0, "\(result)")
                let body = Data(base64Encoded: result.jsonLines.first?["body_base64"] as? String ?? "") ?? Data()
                let echo = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
                #expect(echo["body_length"] as? Int == sent.count, "\(result)")
                #expect(echo["body_sha256"] as? String == SHA256.hex(sent))
            }
            let echo = (try? JSONSerialization.jsonObject(with: Data(base64Encoded: run.jsonLines.first?["body_base64"] as? String ?? "") ?? Data())) as? [String: Any]
            #expect(echo?["method"] as? String == "PUT")
        }
    }

    @Test func includePrintsTheStatusLineAndHeadersBeforeTheBody() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["-i", "\(server.baseURL)/ok"])
            #expect(run.status == 0, "\(run)")
            #expect(run.stdoutText == "HTTP/1.1 200 OK\r\nServer: bluebonnet-fault\r\nContent-Type: application/octet-stream\r\nContent-Length: 2\r\n\r\nok")
        }
    }

    /// What curl 7.88's `-i` prints for the same URLs: 1xx heads before the final head, trailer
    /// lines after the body.
    @Test func includePrintsInformationalHeadsAndTrailersAsCurlDoes() async throws {
        try await withTestServer(.faultServer) { server in
            let hints = try await CLIBinary.run(["-i", "\(server.baseURL)/early-hints"])
            #expect(hints.status == 0, "\(hints)")
            #expect(hints.stdoutText == "HTTP/1.1 103 Early Hints\r\nServer: bluebonnet-fault\r\nLink: </style0.css>; rel=preload; as=style\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nServer: bluebonnet-fault\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\nok")
            let trailers = try await CLIBinary.run(["-i", "\(server.baseURL)/trailers"])
            #expect(trailers.status == 0, "\(trailers)")
            #expect(trailers.stdoutText.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(trailers)")
            #expect(trailers.stdoutText.hasSuffix("\r\n\r\nfirst second X-Checksum: 5ca1ab1e\r\nX-Count: 2\r\n"), "\(trailers)")
        }
    }

    /// obs-text (RFC 9110 §5.5) is lossless. In `--json` each header byte is the code point of the
    /// same number (ISO-8859-1, as curl and Python's `http.client` read header bytes), a UTF-8 value
    /// included; `-i` (to standard output or into `-o FILE`) writes the bytes as they came.
    @Test func obsTextHeaderBytesAreLosslessInJSONAndInclude() async throws {
        try await withTestServer(.faultServer) { server in
            let url = "\(server.baseURL)/latin1"
            let json = try await CLIBinary.run(["--json", url])
            #expect(json.status == 0, "\(json)")
            let fields = #"["X-Latin1","caf\#u{E9} na\#u{EF}ve"],["X-UTF8","caf\#u{C3}\#u{A9}"],["X-Ascii","plain"]"#
            #expect(json.stdout.firstRange(of: Array(fields.utf8)) != nil, "\(json)")
            #expect(json.stdout.firstRange(of: [0xEF, 0xBF, 0xBD]) == nil, "no U+FFFD: \(json)")
            let parsed = json.jsonLines.first?["headers"] as? [[String]] ?? []
            let latin1 = try #require(parsed.first { $0.first == "X-Latin1" }?.last, "\(json)")
            #expect(latin1.data(using: .isoLatin1).map(Array.init) == Array("caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF] + Array("ve".utf8))

            let wire: [UInt8] = Array("\r\nX-Latin1: caf".utf8) + [0xE9] + Array(" na".utf8) + [0xEF]
                + Array("ve\r\nX-UTF8: caf".utf8) + [0xC3, 0xA9] + Array("\r\nX-Ascii: plain\r\n".utf8)
            let include = try await CLIBinary.run(["-i", url])
            #expect(include.status == 0, "\(include)")
            #expect(include.stdout.firstRange(of: wire) != nil, "\(include)")
            #expect(include.stdout.firstRange(of: [0xEF, 0xBF, 0xBD]) == nil, "\(include)")

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-\(UUID().uuidString).out")
            defer { try? FileManager.default.removeItem(at: file) }
            let streamed = try await CLIBinary.run(["-i", "-o", file.path, url])
            #expect(streamed.status == 0, "\(streamed)")
            #expect(Array(try Data(contentsOf: file)) == include.stdout, "the -o head is the -i head")
        }
    }

    /// A `Location` with Latin-1 bytes (not followed: `--no-location`) is as lossless as any field.
    @Test func aLocationWithLatin1BytesIsLossless() async throws {
        let response: [UInt8] = Array("HTTP/1.1 302 Found\r\nLocation: /caf".utf8) + [0xE9] + Array("?n=".utf8) + [0xEF]
            + Array("ve\r\nContent-Length: 0\r\n\r\n".utf8)
        let b64 = Data(response).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        try await withTestServer(.faultServer) { server in
            let url = "\(server.baseURL)/raw?b64=\(b64)"
            let json = try await CLIBinary.run(["--json", "--no-location", url])
            #expect(json.status == 0, "\(json)")
            let head = #"{"url":"\#(url)","status":302,"reason":"Found","version":"HTTP/1.1","#
                + #""headers":[["Location","/caf\#u{E9}?n=\#u{EF}ve"],["Content-Length","0"]],"#
                + #""body_base64":"","body_length":0,"redirects":0,"metrics":{"#
            #expect(Array(json.stdout.prefix(head.utf8.count)) == Array(head.utf8), "\(json)")

            let include = try await CLIBinary.run(["-i", "--no-location", url])
            #expect(include.status == 0, "\(include)")
            #expect(include.stdout == response, "\(include)")
        }
    }

    @Test func outputFileGetsTheBody() async throws {
        try await withTestServer(.faultServer) { server in
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-\(UUID().uuidString).out")
            defer { try? FileManager.default.removeItem(at: file) }
            let run = try await CLIBinary.run(["-o", file.path, "\(server.baseURL)/ok?size=4096", "\(server.baseURL)/ok"])
            #expect(run.status == 0, "\(run)")
            #expect(Array(try Data(contentsOf: file)) == Self.patternBytes(4096))
            #expect(run.stdoutText == "ok")
        }
    }

    // MARK: Failures

    @Test func failuresHaveStableKindsAndExitOne() async throws {
        try await withTestServer(.faultServer) { server in
            let base = server.baseURL.absoluteString
            // A port bound and never listening for the whole run: no test server started
            // meanwhile can take it, so it refuses.
            let run = try await TestServer.withRefusingLoopbackPort { closedPort in try await CLIBinary.run([
                "--json", "--timeout", "1", "\(base)/ok", "\(base)/garbage", "http://127.0.0.1:\(closedPort)/",
                "\(base)/stall-head", "\(base)/close-mid-body?size=1000&after=100", "\(base)/ok?size=1",
            ]) }
            #expect(run.status == 1, "\(run)")
            let lines = run.jsonLines
            #expect(lines.map { $0["status"] as? Int } == [200, nil, nil, nil, nil, 200], "\(run)")
            let kinds = lines.map { ($0["error"] as? [String: Any])?["kind"] as? String }
            #expect(kinds == [nil, "protocol", "connect", "timeout", "protocol", nil], "\(run)")
            for line in lines where !(line["error"] is NSNull) {
                #expect(line["status"] is NSNull)
                #expect(((line["error"] as? [String: Any])?["message"] as? String)?.isEmpty == false)
            }
        }
    }

    @Test func aRedirectToAnotherSchemeIsRejected() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["--json", "\(server.baseURL)/redirect?to=ftp%3A%2F%2F127.0.0.1%2Fx"])
            #expect(run.status == 1, "\(run)")
            #expect((run.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String == "redirect_rejected", "\(run)")
        }
    }

    /// 32 MiB of zeros, gzipped to ~32 KiB: past the 8 MiB grace, over the 100× ratio limit.
    @Test func aDecompressionBombIsTooLarge() async throws {
        let python = try TestServer.python()
        let made = try TestServer.run(python, ["-c", """
            import base64, gzip, sys
            body = gzip.compress(bytes(32 * 1024 * 1024), 9)
            head = b"HTTP/1.1 200 OK\\r\\nContent-Encoding: gzip\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body)
            sys.stdout.write(base64.urlsafe_b64encode(head + body).decode().rstrip("="))
            """])
        #expect(made.status == 0, "\(made.output)")
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["--json", "\(server.baseURL)/raw?b64=\(made.output)"])
            #expect(run.status == 1, "\(run)")
            #expect((run.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String == "too_large", "\(run)")
        }
    }

    // RFC 6761 §6.4: `.invalid` names never resolve.
    @Test func anUnresolvableHostIsADNSError() async throws {
        let run = try await CLIBinary.run(["--json", "--timeout", "20", "http://bluebonnet-cli-test.invalid/"])
        #expect(run.status == 1, "\(run)")
        #expect((run.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String == "dns", "\(run)")
    }

    @Test func aFailureWithoutJSONGoesToStandardErrorAndExitsOne() async throws {
        try await withTestServer(.faultServer) { server in
            let run = try await CLIBinary.run(["\(server.baseURL)/garbage", "\(server.baseURL)/ok"])
            #expect(run.status == 1, "\(run)")
            #expect(run.stdoutText == "ok")
            #expect(run.stderr.hasPrefix("bluebonnet: \(server.baseURL)/garbage: protocol: "), "\(run)")
        }
    }

    // MARK: nginx: TLS, content decoding, large bodies

    @Test func tlsTrustsCacertRefusesUnknownRootsAndInsecureSkipsVerification() async throws {
        try await withTestServer(.nginx(tls: true)) { server in
            let url = try #require(server.tlsBaseURL).absoluteString + "/small.txt"
            let ca = try FixturePaths.fixture("certs/ca.pem").path
            let trusted = try await CLIBinary.run(["--json", "--cacert", ca, url])
            #expect(trusted.status == 0, "\(trusted)")
            #expect(trusted.jsonLines.first?["status"] as? Int == 200)
            #expect(trusted.jsonLines.first?["body_length"] as? Int == 100)
            let refused = try await CLIBinary.run(["--json", url])
            #expect(refused.status == 1, "\(refused)")
            #expect((refused.jsonLines.first?["error"] as? [String: Any])?["kind"] as? String == "tls", "\(refused)")
            let insecure = try await CLIBinary.run(["--json", "--insecure", url])
            #expect(insecure.status == 0, "\(insecure)")
            #expect(insecure.jsonLines.first?["status"] as? Int == 200)
        }
    }

    @Test func gzipBodiesAreDecodedAndLargeBodiesArrive() async throws {
        try await withTestServer(.nginx(tls: false)) { server in
            let docroot = try #require(server.docroot)
            let json = try Data(contentsOf: docroot.appendingPathComponent("data.json"))
            let run = try await CLIBinary.run(["--json", "-H", "Accept-Encoding: gzip", "\(server.baseURL)/data.json"])
            #expect(run.status == 0, "\(run)")
            let line = try #require(run.jsonLines.first)
            #expect((line["headers"] as? [[String]] ?? []).contains(["Content-Encoding", "gzip"]), "\(run)")
            #expect(line["body_length"] as? Int == json.count)
            #expect(Data(base64Encoded: line["body_base64"] as? String ?? "") == json)

            let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-cli-\(UUID().uuidString).bin")
            defer { try? FileManager.default.removeItem(at: file) }
            let big = try await CLIBinary.run(["-o", file.path, "\(server.baseURL)/1m.bin"])
            #expect(big.status == 0, "\(big)")
            #expect(try Data(contentsOf: file) == Data(contentsOf: docroot.appendingPathComponent("1m.bin")))
        }
    }

    // MARK: Helpers

    static func escaped(_ url: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return url.addingPercentEncoding(withAllowedCharacters: allowed) ?? url
    }

    /// A URL on `base` that redirects `hops` times (302, each `Location` relative) before `/ok`.
    static func redirectChain(_ base: String, hops: Int) -> String {
        var target = "/ok"
        for _ in 0..<hops {
            target = "/redirect?to=\(escaped(target))"
        }
        return base + target
    }
}

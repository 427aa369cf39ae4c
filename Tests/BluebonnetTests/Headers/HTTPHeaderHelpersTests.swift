import FoundationEssentials
import Testing

@testable import Bluebonnet

@Suite struct HTTPHeaderHelpersTests {
    struct HelperCase: CustomTestStringConvertible, Sendable {
        let header: HTTPHeader
        let name: String
        let value: String
        var testDescription: String { "\(name): \(value)" }
    }

    static let helpers: [HelperCase] = [
        // RFC 7617 §2's own example.
        .init(header: .authorization(username: "Aladdin", password: "open sesame"), name: "Authorization",
              value: "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="),
        // RFC 7617 §2.1: UTF-8 user-pass ("test" / "123£").
        .init(header: .authorization(username: "test", password: "123\u{A3}"), name: "Authorization",
              value: "Basic dGVzdDoxMjPCow=="),
        .init(header: .authorization(username: "", password: ""), name: "Authorization", value: "Basic Og=="),
        .init(header: .authorization(bearerToken: "mF_9.B5f-4.1JqM"), name: "Authorization", value: "Bearer mF_9.B5f-4.1JqM"),
        .init(header: .authorization("Digest abc"), name: "Authorization", value: "Digest abc"),
        .init(header: .accept("application/json"), name: "Accept", value: "application/json"),
        .init(header: .acceptCharset("utf-8"), name: "Accept-Charset", value: "utf-8"),
        .init(header: .acceptLanguage("fr-CH, fr;q=0.9"), name: "Accept-Language", value: "fr-CH, fr;q=0.9"),
        .init(header: .acceptEncoding("gzip"), name: "Accept-Encoding", value: "gzip"),
        .init(header: .contentDisposition("attachment; filename=\"a.txt\""), name: "Content-Disposition",
              value: "attachment; filename=\"a.txt\""),
        .init(header: .contentEncoding("gzip"), name: "Content-Encoding", value: "gzip"),
        .init(header: .contentType("text/html; charset=utf-8"), name: "Content-Type", value: "text/html; charset=utf-8"),
        .init(header: .userAgent("curl/8.5.0"), name: "User-Agent", value: "curl/8.5.0"),
        .init(header: .defaultAcceptEncoding, name: "Accept-Encoding", value: "gzip;q=1.0, deflate;q=0.9"),
    ]

    @Test(arguments: helpers)
    func helperMakesTheExactField(_ item: HelperCase) {
        #expect(item.header.name == item.name)
        #expect(item.header.value == item.value)
    }

    struct LanguageCase: CustomTestStringConvertible, Sendable {
        let environment: [String: String]
        let value: String
        var testDescription: String { "\(environment.sorted { $0.key < $1.key }) → \(value)" }
    }

    static let languages: [LanguageCase] = [
        .init(environment: [:], value: "en;q=1.0"),
        .init(environment: ["LANG": "en_US.UTF-8"], value: "en-US;q=1.0"),
        .init(environment: ["LANG": "de_DE@euro"], value: "de-DE;q=1.0"),
        .init(environment: ["LANG": "C.UTF-8"], value: "en;q=1.0"),
        .init(environment: ["LANG": "POSIX"], value: "en;q=1.0"),
        .init(environment: ["LANG": ""], value: "en;q=1.0"),
        .init(environment: ["LANG": "fr_FR.UTF-8", "LC_ALL": "pt_BR.UTF-8"], value: "pt-BR;q=1.0"),
        .init(environment: ["LANG": "fr_FR.UTF-8", "LC_MESSAGES": "es_ES"], value: "es-ES;q=1.0"),
        .init(environment: ["LANG": "fr_FR.UTF-8", "LC_ALL": ""], value: "fr-FR;q=1.0"),
        .init(environment: ["LANG": "en_GB.UTF-8", "LANGUAGE": "en_GB:en:fr"], value: "en-GB;q=1.0, en;q=0.9, fr;q=0.8"),
        .init(environment: ["LANG": "C", "LANGUAGE": "fr"], value: "en;q=1.0"),
        .init(environment: ["LANG": "ja_JP.UTF-8", "LANGUAGE": "ja:ja:en"], value: "ja;q=1.0, en;q=0.9"),
        .init(environment: ["LANG": "x\r\ny"], value: "en;q=1.0"),
        .init(environment: ["LANG": "en", "LANGUAGE": "a:b:c:d:e:f:g"],
              value: "a;q=1.0, b;q=0.9, c;q=0.8, d;q=0.7, e;q=0.6, f;q=0.5"),
    ]

    @Test(arguments: languages)
    func acceptLanguageFollowsThePOSIXLocaleEnvironment(_ item: LanguageCase) {
        #expect(HTTPHeader.acceptLanguageValue(environment: item.environment) == item.value)
    }

    @Test func userAgentNamesTheLibraryProcessAndKernel() {
        #expect(HTTPHeader.userAgentValue(processName: "billing", kernelRelease: "6.8.0-1019-gcp")
            == "Bluebonnet/\(BluebonnetInfo.version) (billing; Linux 6.8.0-1019-gcp)")
        #expect(HTTPHeader.userAgentValue(processName: "we(ir)d\\\r\nnamé", kernelRelease: "1")
            == "Bluebonnet/\(BluebonnetInfo.version) (we_ir_d___nam_; Linux 1)")
        let live = HTTPHeader.defaultUserAgent
        #expect(live.name == "User-Agent")
        #expect(live.value.hasPrefix("Bluebonnet/\(BluebonnetInfo.version) ("))
        #expect(live.value.contains("; Linux "))
        #expect(!live.value.contains("unknown"), "the process name and kernel release should be readable")
        // The names ProcessInfo and `uname -r` give.
        #expect(live.value.contains("(\(HTTPHeader.commentSafe(ProcessInfo.processInfo.processName)); "))
        let osrelease = (try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).first.map(String.init)
        #expect(osrelease.map { live.value.hasSuffix("; Linux \(HTTPHeader.commentSafe($0)))") } == true, "\(live.value)")
    }

    @Test func theLocaleVariablesAreReadFromTheEnvironment() {
        let environment = ProcessInfo.processInfo.environment
        let read = HTTPHeader.localeEnvironment()
        for name in ["LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"] {
            #expect(read[name] == environment[name], "\(name)")
        }
        #expect(read.count <= 4)
        #expect(HTTPHeader.defaultAcceptLanguage.value == HTTPHeader.acceptLanguageValue(environment: environment))
    }

    @Test func defaultHeadersAreEncodingLanguageAndUserAgentInOrder() {
        #expect(HTTPHeaders.default.map(\.name) == ["Accept-Encoding", "Accept-Language", "User-Agent"])
        #expect(HTTPHeaders.default["accept-encoding"] == "gzip;q=1.0, deflate;q=0.9")
        #expect(!HTTPHeaders.default["Accept-Encoding"]!.contains("br"))
    }
}

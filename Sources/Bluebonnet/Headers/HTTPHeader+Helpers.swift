import BluebonnetPosix
import FoundationEssentials

extension HTTPHeader {
    /// `Accept: value` (RFC 9110 §12.5.1).
    public static func accept(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept", value: value) }

    /// `Accept-Charset: value` (RFC 9110 §12.5.2).
    public static func acceptCharset(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Charset", value: value)
    }

    /// `Accept-Language: value` (RFC 9110 §12.5.4).
    public static func acceptLanguage(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Language", value: value)
    }

    /// `Accept-Encoding: value` (RFC 9110 §12.5.3).
    /// - Warning: Bluebonnet decodes only `gzip` and `deflate` (and `identity`); advertising
    ///   another coding (`br`, `zstd`) makes servers send bodies it cannot decode.
    public static func acceptEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Accept-Encoding", value: value)
    }

    /// `Authorization: Basic <base64 of "username:password">` (RFC 7617 §2), the UTF-8 bytes of
    /// the user-pass joined with `:`.
    /// - Warning: Basic credentials are only base64-encoded; send them over `https` only. A
    ///   username containing `:` cannot be decoded unambiguously by the server (RFC 7617 §2).
    public static func authorization(username: String, password: String) -> HTTPHeader {
        let credential = Data("\(username):\(password)".utf8).base64EncodedString()
        return authorization("Basic \(credential)")
    }

    /// `Authorization: Bearer <token>` (RFC 6750 §2.1). The token is sent as given.
    public static func authorization(bearerToken: String) -> HTTPHeader {
        authorization("Bearer \(bearerToken)")
    }

    /// `Authorization: value` (RFC 9110 §11.6.2), for any scheme.
    public static func authorization(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Authorization", value: value)
    }

    /// `Content-Disposition: value` (RFC 6266).
    public static func contentDisposition(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Disposition", value: value)
    }

    /// `Content-Encoding: value` (RFC 9110 §8.4). Set it only when the body really is encoded.
    public static func contentEncoding(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Encoding", value: value)
    }

    /// `Content-Type: value` (RFC 9110 §8.3).
    public static func contentType(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Content-Type", value: value)
    }

    /// `User-Agent: value` (RFC 9110 §10.1.5).
    public static func userAgent(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "User-Agent", value: value)
    }

    /// `Sec-WebSocket-Protocol: value` (RFC 6455 §11.3.4). Bluebonnet has no WebSocket client;
    /// the builder exists for code that names it.
    public static func websocketProtocol(_ value: String) -> HTTPHeader {
        HTTPHeader(name: "Sec-WebSocket-Protocol", value: value)
    }
}

extension HTTPHeader {
    /// `Accept-Encoding: gzip;q=1.0, deflate;q=0.9`: exactly the codings Bluebonnet decodes.
    ///
    /// Unlike Alamofire's default, `br` is not listed: Bluebonnet has no Brotli decoder.
    public static let defaultAcceptEncoding: HTTPHeader = .acceptEncoding(["gzip", "deflate"].qualityEncoded())

    /// `Accept-Language` from the process locale, for example `en-US;q=1.0`.
    ///
    /// Read once from the environment as `HTTPHeader.acceptLanguageValue(environment:)`
    /// describes; `en;q=1.0` when no usable locale is set.
    public static let defaultAcceptLanguage: HTTPHeader = .acceptLanguage(
        acceptLanguageValue(environment: localeEnvironment()))

    /// `User-Agent: Bluebonnet/<version> (<process name>; Linux <kernel release>)`, for example
    /// `Bluebonnet/0.1.0 (billing-service; Linux 6.8.0-1019-gcp)`.
    ///
    /// The process name is the running executable's file name (as `ProcessInfo.processName`), the
    /// kernel release `uname(2)`'s (`uname -r`); each `unknown` when it cannot be read. Both are
    /// read without Foundation (`ProcessFacts`). Characters that may not appear in a header comment
    /// are replaced by `_`.
    public static let defaultUserAgent: HTTPHeader = .userAgent(
        userAgentValue(processName: ProcessFacts.executableName() ?? "unknown", kernelRelease: kernelRelease()))

    /// The `Accept-Language` value for a process environment.
    ///
    /// The locale is the first non-empty of `LC_ALL`, `LC_MESSAGES` and `LANG` (POSIX precedence).
    /// When it is set and not `C`/`POSIX`, GNU `LANGUAGE` (a `:`-separated list) is preferred if
    /// present, as gettext does. Each entry loses its `.codeset` and `@modifier` and has `_`
    /// replaced by `-` (`en_US.UTF-8` → `en-US`); duplicates are dropped, at most six are kept,
    /// with qualities 1.0, 0.9, … (as Alamofire does for `Locale.preferredLanguages`). With no
    /// usable locale the value is `en;q=1.0`.
    public static func acceptLanguageValue(environment: [String: String]) -> String {
        let locale = ["LC_ALL", "LC_MESSAGES", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
        guard let locale, let primary = languageTag(fromPOSIXLocale: locale) else { return "en;q=1.0" }
        var tags: [String] = []
        if let list = environment["LANGUAGE"] {
            tags = list.split(separator: ":").compactMap { languageTag(fromPOSIXLocale: String($0)) }
        }
        if tags.isEmpty { tags = [primary] }
        var unique: [String] = []
        for tag in tags where !unique.contains(tag) { unique.append(tag) }
        return unique.prefix(6).qualityEncoded()
    }

    /// `en_US.UTF-8@euro` → `en-US`; nil for `C`, `POSIX` and text that is not a language tag.
    static func languageTag(fromPOSIXLocale locale: String) -> String? {
        let name = locale.prefix { $0 != "." && $0 != "@" }
        guard !name.isEmpty, name != "C", name != "POSIX" else { return nil }
        let tag = String(name.map { $0 == "_" ? "-" : $0 })
        guard tag.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 < 0x80 && isAlphanumeric($0)) }) else { return nil }
        return tag
    }

    /// `Bluebonnet/<version> (<process>; Linux <release>)`, with header-unsafe characters in the
    /// process name and release replaced by `_`.
    static func userAgentValue(processName: String, kernelRelease: String) -> String {
        "Bluebonnet/\(BluebonnetInfo.version) (\(commentSafe(processName)); Linux \(commentSafe(kernelRelease)))"
    }

    /// The running kernel's release (`uname -r`, from `uname(2)`), or `unknown`.
    static func kernelRelease() -> String {
        let release = ProcessFacts.kernelRelease() ?? ""
        let trimmed = release.split(whereSeparator: { $0.isWhitespace }).first.map(String.init) ?? ""
        return trimmed.isEmpty ? "unknown" : trimmed
    }

    /// The variables ``acceptLanguageValue(environment:)`` reads, from this process's environment
    /// (`getenv`, through `ProcessFacts`), rather than a copy of the whole environment.
    static func localeEnvironment() -> [String: String] {
        var environment: [String: String] = [:]
        for name in ["LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"] {
            if let value = ProcessFacts.environmentValue(name) { environment[name] = value }
        }
        return environment
    }

    /// Keeps visible ASCII and spaces except `(`, `)` and `\` (RFC 9110 §5.6.5 `ctext`), replacing
    /// everything else by `_`.
    static func commentSafe(_ text: String) -> String {
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            let safe = (byte == 0x20 || (byte > 0x20 && byte < 0x7F)) && byte != UInt8(ascii: "(")
                && byte != UInt8(ascii: ")") && byte != UInt8(ascii: "\\")
            if safe { bytes.append(byte) } else if byte < 0x80 || byte >= 0xC0 { bytes.append(UInt8(ascii: "_")) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
    }
}

extension HTTPHeaders {
    /// The headers every session sends unless told otherwise: `defaultAcceptEncoding`,
    /// `defaultAcceptLanguage` and `defaultUserAgent`, in that order.
    public static let `default`: HTTPHeaders = [.defaultAcceptEncoding, .defaultAcceptLanguage, .defaultUserAgent]
}

extension Collection where Element: StringProtocol {
    /// `a;q=1.0, b;q=0.9, c;q=0.8`: the elements with qualities falling by 0.1 from 1.0
    /// (never below 0.1).
    func qualityEncoded() -> String {
        enumerated().map { index, element in
            let tenths = Swift.max(10 - index, 1)
            let quality = tenths == 10 ? "1.0" : "0.\(tenths)"
            return "\(element);q=\(quality)"
        }.joined(separator: ", ")
    }
}

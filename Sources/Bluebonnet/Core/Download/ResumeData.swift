import FoundationEssentials

/// What a cancelled or failed download needs to continue where it stopped: Bluebonnet's resume
/// data, the bytes `DownloadRequest.resumeData` holds and `Session.download(resumingWith:)`
/// takes.
///
/// **Format (version 1)**: a UTF-8 JSON object, so it can be stored and read back after a
/// process restart:
///
/// | key | value |
/// |---|---|
/// | `format` | `"bluebonnet-resume-data"` |
/// | `version` | `1` |
/// | `url` | the URL of the response whose body was being written (after redirects) |
/// | `headers` | the request's header fields as `[name, value]` pairs, without `Authorization`, `Proxy-Authorization` and `Cookie` (credentials are not written to disk: interceptors add them again) |
/// | `temporaryFile` | the path of the partial file (next to its destination) |
/// | `bytesReceived` | the body bytes in that file |
/// | `totalBytes` | the whole body's length when the server said it, else absent |
/// | `entityTag` | the response's strong `ETag`, if any |
/// | `lastModified` | its `Last-Modified`, if any |
///
/// A resumed request asks for `Range: bytes=<size of the file>-` with `If-Range` (the strong
/// entity tag, else the date; RFC 9110 §13.1.5), so a changed resource comes back whole (200)
/// and is written from the start, never spliced onto the old bytes.
struct ResumeData: Codable, Sendable, Hashable {
    static let formatName = "bluebonnet-resume-data"
    static let currentVersion = 1

    var format = ResumeData.formatName
    var version = ResumeData.currentVersion
    var url: String
    var headers: [[String]]
    var temporaryFile: String
    var bytesReceived: Int64
    var totalBytes: Int64?
    var entityTag: String?
    var lastModified: String?

    /// Header fields never written into resume data.
    static let privateFields: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The encoded form (JSON, keys sorted so equal data encode equally).
    func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // A struct of strings and integers always encodes.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Reads resume data; nil when `data` is not version-1 resume data of this format.
    static func decode(_ data: Data) -> ResumeData? {
        guard let decoded = try? JSONDecoder().decode(ResumeData.self, from: data),
            decoded.format == formatName, decoded.version == currentVersion,
            decoded.bytesReceived >= 0, URL(string: decoded.url) != nil, decoded.headers.allSatisfy({ $0.count == 2 })
        else { return nil }
        return decoded
    }

    /// The validator `If-Range` may carry: a strong entity tag, else the date, else nil (a weak
    /// tag cannot be used, RFC 9110 §13.1.5).
    var ifRange: String? {
        if let tag = entityTag, !tag.hasPrefix("W/") { return tag }
        return lastModified
    }
}

/// What `Session.download(resumingWith:)` was given when it is not resume data it can use.
public struct InvalidResumeData: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String
}

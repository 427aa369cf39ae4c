import BluebonnetCore
import BluebonnetPosix
import FoundationEssentials

/// Why reading or writing a cookie file failed.
public struct CookieFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kinds of failure.
    public struct Code: Hashable, Sendable {
        private let value: UInt8
        /// The file does not exist (curl treats a missing `-b` file as an empty jar).
        public static let notFound = Code(value: 0)
        /// Any other failure of the file system: permissions, a full disk, a directory…
        public static let io = Code(value: 1)
    }

    /// What failed.
    public let code: Code
    /// The file.
    public let path: String
    /// The system's explanation.
    public let reason: String

    init(_ error: FileError) {
        code = error.code == .notFound ? .notFound : .io
        path = error.path
        reason = error.description
    }

    /// The path and the reason.
    public var description: String { "\(path): \(reason)" }
}

extension HTTPCookieStorage {
    /// The first line of a Netscape cookie file, which curl and browsers' exporters write.
    static let netscapeHeader = "# Netscape HTTP Cookie File\n# https://curl.se/docs/http-cookies.html\n# Written by Bluebonnet.\n\n"

    /// Every unexpired cookie in curl's Netscape cookie-jar format, oldest first (DocC article
    /// `NetscapeCookieFile`): a comment header, then one line per cookie with seven TAB-separated
    /// fields — domain (with a leading `.` when subdomains get it), `TRUE`/`FALSE` for
    /// subdomains, path, `TRUE`/`FALSE` for `Secure`, expiry in seconds since 1970 (`0` for a
    /// session cookie), name, value — prefixed by `#HttpOnly_` for an `HttpOnly` cookie.
    ///
    /// A cookie whose name or value holds a TAB (RFC 6265bis allows one inside a value) cannot be
    /// written in this format and is left out. `SameSite` is not part of the format.
    public func netscapeCookieFile() -> String {
        withJar { jar, now in
            var text = Self.netscapeHeader
            for record in jar.allCookies(now: now) {
                guard let line = Self.netscapeLine(record) else { continue }
                text += line
                text += "\n"
            }
            return text
        }
    }

    /// One cookie's line, or nil when a field holds a TAB or a line break.
    static func netscapeLine(_ record: CookieRecord) -> String? {
        let fields = [record.domain, record.path, record.name, record.value]
        guard !fields.contains(where: { $0.utf8.contains { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D } }) else { return nil }
        let expiry = record.expires.map { max(1, Int64($0.timeIntervalSince1970.rounded(.up))) } ?? 0
        return (record.httpOnly ? "#HttpOnly_" : "") + (record.hostOnly ? "" : ".") + record.domain
            + "\t" + (record.hostOnly ? "FALSE" : "TRUE") + "\t" + record.path
            + "\t" + (record.secure ? "TRUE" : "FALSE") + "\t" + String(expiry)
            + "\t" + record.name + "\t" + record.value
    }

    /// Adds the cookies of a Netscape cookie file's `text` (``netscapeCookieFile()``'s format, as
    /// curl reads it) and returns how many were added. Tolerant, as curl: blank lines and
    /// comments are skipped, and so is every line that is not a valid cookie (fewer than six or
    /// more than seven fields, a flag other than `TRUE`/`FALSE`, a non-numeric expiry, an empty
    /// domain, a path not starting with `/`) and every cookie already expired. Six fields are a
    /// cookie with an empty value. CRLF line ends are accepted. Each cookie replaces a stored
    /// one with the same name, domain and path; the accept policy does not apply.
    @discardableResult
    public func loadNetscapeCookieFile(_ text: String) -> Int {
        // Lines split at "\n" bytes ("\r" is dropped per line): as Characters, "\n" followed by a
        // combining mark would not be a line break.
        let records = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true)
            .map { Substring(String(decoding: $0, as: UTF8.self)) }
            .compactMap(Self.parseNetscapeLine)
        return withJar { jar, now in
            var added = 0
            for record in records where jar.insert(record, now: now) == .stored { added += 1 }
            return added
        }
    }

    /// A line of a Netscape cookie file as a record; nil for a comment or an invalid line.
    static func parseNetscapeLine(_ line: Substring) -> CookieRecord? {
        // Byte by byte: compared as Characters, a tab or "/" followed by a combining mark is
        // another Character, and U+037E (Greek question mark) is canonically equivalent to ";",
        // so a value the Set-Cookie parser accepted could be refused, or split, when read back.
        var bytes = Substring(line).utf8[...]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        var httpOnly = false
        if bytes.starts(with: "#HttpOnly_".utf8) {
            httpOnly = true
            bytes = bytes.dropFirst("#HttpOnly_".utf8.count)
        } else if bytes.first == UInt8(ascii: "#") {
            return nil
        }
        let fields = bytes.split(separator: UInt8(ascii: "\t"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 6 || fields.count == 7 else { return nil }
        var domain = String(decoding: fields[0].utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
        if domain.utf8.first == UInt8(ascii: ".") { domain = String(decoding: domain.utf8.dropFirst(), as: UTF8.self) }
        let includesSubdomains: Bool
        switch fields[1] {
        case "TRUE": includesSubdomains = true
        case "FALSE": includesSubdomains = false
        default: return nil
        }
        let path = fields[2]
        let secure: Bool
        switch fields[3] {
        case "TRUE": secure = true
        case "FALSE": secure = false
        default: return nil
        }
        guard let expiry = Int64(fields[4]), expiry >= 0 else { return nil }
        let name = fields[5]
        let value = fields.count == 7 ? fields[6] : ""
        guard !domain.isEmpty, !domain.utf8.contains(UInt8(ascii: " ")), path.utf8.first == UInt8(ascii: "/"),
            !(name.isEmpty && value.isEmpty), !name.utf8.contains(UInt8(ascii: "=")),
            !name.utf8.contains(UInt8(ascii: ";")), !value.utf8.contains(UInt8(ascii: ";"))
        else { return nil }
        return CookieRecord(
            name: name, value: value, domain: domain, hostOnly: !includesSubdomains, path: path,
            expires: expiry == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(expiry)), secure: secure, httpOnly: httpOnly)
    }

    /// Writes ``netscapeCookieFile()`` to `path` atomically: into a new temporary file beside it
    /// (owner read and write only: cookies are credentials), flushed to disk (`fsync`), then
    /// renamed over `path`. On failure `path` is left as it was and the temporary file removed.
    ///
    /// - Throws: ``CookieFileError`` when the directory cannot be written, the disk is full…
    public func write(toFile path: String) throws(CookieFileError) {
        let text = netscapeCookieFile()
        do throws(FileError) {
            let file = try FileSystem.createTemporaryFile(nextTo: path, permissions: .ownerReadWrite)
            let temporary = file.path
            do throws(FileError) {
                try file.writeAll(ByteBuffer(string: text))
                try file.synchronize()
                try file.close()
                try FileSystem.rename(atPath: temporary, toPath: path)
            } catch {
                try? FileSystem.removeFile(atPath: temporary)
                throw error
            }
        } catch {
            throw CookieFileError(error)
        }
    }

    /// Adds the cookies of the Netscape cookie file at `path` (as ``loadNetscapeCookieFile(_:)``)
    /// and returns how many were added.
    ///
    /// - Throws: ``CookieFileError`` with ``CookieFileError/Code/notFound`` when there is no
    ///   such file, ``CookieFileError/Code/io`` when it cannot be read.
    @discardableResult
    public func loadCookies(fromFile path: String) throws(CookieFileError) -> Int {
        var buffer = ByteBuffer()
        do throws(FileError) {
            let file = try FileDescriptor.openForReading(atPath: path)
            while try file.read(into: &buffer) > 0 {}
            try file.close()
        } catch {
            throw CookieFileError(error)
        }
        return loadNetscapeCookieFile(String(decoding: buffer.readableBytesArray, as: UTF8.self))
    }
}

import FoundationEssentials

extension MultipartFormData {
    /// Why a part was not appended: the reason ``MultipartFormData`` keeps for encoding.
    struct BodyPartRejection: Error {
        let reason: BluebonnetError.MultipartEncodingFailureReason
        init(_ reason: BluebonnetError.MultipartEncodingFailureReason) { self.reason = reason }
    }

    /// One appended part: its headers and where its bytes come from.
    struct BodyPart: Sendable {
        /// Where a part's bytes come from.
        enum Content: Sendable {
            /// Bytes in memory.
            case data(Data)
            /// A regular file, `length` bytes long when appended.
            case file(URL, length: UInt64)
            /// A one-shot stream declared as `length` bytes.
            case stream(BodyStream, length: UInt64)
        }

        let headers: HTTPHeaders
        let content: Content

        /// The part's own length, without boundary and headers.
        var length: UInt64 {
            switch content {
            case .data(let data): UInt64(data.count)
            case .file(_, let length), .stream(_, let length): length
            }
        }

        /// The part's header block: `Name: value` CRLF for each header, then CRLF.
        var encodedHeaders: Data {
            var text = ""
            for header in headers { text += "\(header.name): \(header.value)\r\n" }
            text += "\r\n"
            return Data(text.utf8)
        }
    }

    /// `Content-Disposition: form-data; name="…"[; filename="…"]` and, when given,
    /// `Content-Type: …`, as Alamofire builds them, with the name and file name escaped.
    static func contentHeaders(
        name: String,
        fileName: String?,
        mimeType: String?
    ) throws(BodyPartRejection) -> HTTPHeaders {
        var disposition = "form-data; name=\"\(try quotedStringContent(name, field: "name"))\""
        if let fileName {
            disposition += "; filename=\"\(try quotedStringContent(fileName, field: "filename"))\""
        }
        var headers: HTTPHeaders = [.contentDisposition(disposition)]
        if let mimeType {
            if containsLineBreakOrNUL(mimeType) {
                throw BodyPartRejection(.bodyPartHeaderInvalid(field: "Content-Type", value: mimeType))
            }
            headers.add(.contentType(mimeType))
        }
        return headers
    }

    /// `value` ready to go between double quotes in a `Content-Disposition` parameter.
    ///
    /// RFC 7578 §4.2 leaves the escaping of field and file names to the sender and points at
    /// percent-encoding; the HTML standard's form encoder (what servers see from browsers)
    /// writes `"` as `%22`. A `\` is written as `%5C` too: servers that read the quoted string as
    /// RFC 9110 §5.6.4 says take `\` as an escape and drop it, servers that follow HTML keep it,
    /// and `%5C` reads the same to both. CR, LF and NUL are refused rather than encoded (they
    /// would end the header in a server that does not decode). Non-ASCII stays as UTF-8.
    static func quotedStringContent(
        _ value: String,
        field: String
    ) throws(BodyPartRejection) -> String {
        if containsLineBreakOrNUL(value) { throw BodyPartRejection(.bodyPartHeaderInvalid(field: field, value: value)) }
        guard value.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return value }
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count + 4)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\\": escaped += "%5C"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Refuses header names that are empty or hold `:`, and names or values with CR, LF or NUL.
    static func validate(_ headers: HTTPHeaders) throws(BodyPartRejection) {
        for header in headers {
            if header.name.isEmpty || header.name.utf8.contains(UInt8(ascii: ":")) || containsLineBreakOrNUL(header.name) {
                throw BodyPartRejection(.bodyPartHeaderInvalid(field: header.name, value: header.value))
            }
            if containsLineBreakOrNUL(header.value) {
                throw BodyPartRejection(.bodyPartHeaderInvalid(field: header.name, value: header.value))
            }
        }
    }

    /// Whether `text` contains CR, LF or NUL.
    static func containsLineBreakOrNUL(_ text: String) -> Bool {
        text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}

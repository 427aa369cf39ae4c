import FoundationEssentials

/// Delivers the body as a `String`, decoded with the given encoding or the response's charset.
///
/// The encoding is, in order: the one passed to ``init(dataPreprocessor:encoding:emptyResponseCodes:emptyRequestMethods:)``;
/// the `Content-Type` `charset` parameter when it names an encoding Bluebonnet decodes
/// (see ``encoding(forCharset:)``); UTF-8 for JSON media types (`application/json`, `*/*+json`,
/// whose only encoding is UTF-8 per RFC 8259 §8.1); otherwise ISO-8859-1, Alamofire's fallback
/// (`.isoLatin1`) and HTTP/1.1's historical default (RFC 2616 §3.7.1; RFC 9110 no longer names
/// one). An unknown charset label is treated as absent. An allowed empty body is `""`.
public struct StringResponseSerializer: ResponseSerializer {
    /// Runs on non-empty bodies; default ``PassthroughPreprocessor``.
    public let dataPreprocessor: any DataPreprocessor
    /// The encoding to use regardless of the response; nil to follow the response's charset.
    public let encoding: String.Encoding?
    /// Status codes allowed an empty body; default `[204, 205]`.
    public let emptyResponseCodes: Set<Int>
    /// Methods allowed an empty body; default `[.head]`.
    public let emptyRequestMethods: Set<HTTPMethod>

    /// Creates the serializer.
    ///
    /// - Parameters:
    ///   - dataPreprocessor: Runs on non-empty bodies; default passthrough.
    ///   - encoding: Forces an encoding; default nil (the response's charset, then the fallbacks).
    ///   - emptyResponseCodes: Status codes allowed an empty body; default `[204, 205]`.
    ///   - emptyRequestMethods: Methods allowed an empty body; default `[.head]`.
    public init(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
    }

    /// The body as text; `""` for an allowed empty body.
    ///
    /// - Throws: `error` when given; `inputDataNilOrZeroLength`; the preprocessor's error;
    ///   `stringSerializationFailed(encoding:)` when the bytes are not valid in the encoding.
    public func serialize(request: HTTPRequest?, response: HTTPResponse?, data: Data?, error: (any Error)?) throws -> String {
        guard let data = try preparedData(request: request, response: response, data: data, error: error) else { return "" }
        let encoding = self.encoding ?? Self.encoding(for: response)
        guard let string = Self.decode(data, as: encoding) else {
            throw BluebonnetError.responseSerializationFailed(reason: .stringSerializationFailed(encoding: encoding))
        }
        return string
    }

    /// The encoding a response's `Content-Type` asks for, with the fallbacks described on the type.
    public static func encoding(for response: HTTPResponse?) -> String.Encoding {
        if let charset = response?.textEncodingName, let encoding = encoding(forCharset: charset) { return encoding }
        if let type = response?.contentType, type.subtype == "json" || type.subtype.hasSuffix("+json") { return .utf8 }
        return .isoLatin1
    }

    /// The `String.Encoding` for an IANA charset label (case-insensitive), or nil when
    /// Bluebonnet does not decode it.
    ///
    /// Known labels: `utf-8` (`utf8`), `us-ascii` (`ascii`), `iso-8859-1` (`latin1`, `l1`,
    /// `iso_8859-1`, `cp819`), `windows-1252` (`cp1252`), `utf-16`, `utf-16be`, `utf-16le`,
    /// `utf-32`, `utf-32be`, `utf-32le`, `macintosh` (`x-mac-roman`).
    public static func encoding(forCharset charset: String) -> String.Encoding? {
        switch charset.trimmingOWS.lowercased() {
        case "utf-8", "utf8", "unicode-1-1-utf-8": return .utf8
        case "us-ascii", "ascii", "ansi_x3.4-1968", "iso646-us", "us": return .ascii
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "l1", "cp819", "ibm819":
            return .isoLatin1
        case "windows-1252", "cp1252", "x-cp1252": return .windowsCP1252
        case "utf-16": return .utf16
        case "utf-16be": return .utf16BigEndian
        case "utf-16le": return .utf16LittleEndian
        case "utf-32": return .utf32
        case "utf-32be": return .utf32BigEndian
        case "utf-32le": return .utf32LittleEndian
        case "macintosh", "mac", "x-mac-roman", "csmacintosh": return .macOSRoman
        default: return nil
        }
    }

    /// Decodes `data`, or nil when it is not valid in `encoding`.
    ///
    /// Windows-1252 is decoded here (FoundationEssentials does not); UTF-16/32 bodies whose
    /// length is not a multiple of the code unit size are invalid.
    static func decode(_ data: Data, as encoding: String.Encoding) -> String? {
        switch encoding {
        case .windowsCP1252:
            var scalars = String.UnicodeScalarView()
            for byte in data {
                guard let scalar = windows1252Scalar(byte) else { return nil }
                scalars.append(scalar)
            }
            return String(scalars)
        case .utf16, .utf16BigEndian, .utf16LittleEndian:
            guard data.count % 2 == 0 else { return nil }
        case .utf32, .utf32BigEndian, .utf32LittleEndian:
            guard data.count % 4 == 0 else { return nil }
        default:
            break
        }
        return String(data: data, encoding: encoding)
    }

    /// Windows-1252 as the WHATWG Encoding standard defines it: bytes 0x80–0x9F map to
    /// punctuation, the five unassigned ones to the C1 control of the same value.
    private static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar? {
        guard (0x80...0x9F).contains(byte) else { return Unicode.Scalar(byte) }
        let table: [UInt32] = [
            0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
            0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
        ]
        let value = table[Int(byte - 0x80)]
        return value == 0 ? Unicode.Scalar(byte) : Unicode.Scalar(value)
    }
}

extension DataResponseSerializerProtocol where Self == StringResponseSerializer {
    /// A ``StringResponseSerializer`` with the default configuration.
    public static var string: StringResponseSerializer { StringResponseSerializer() }

    /// A ``StringResponseSerializer`` with the given configuration.
    public static func string(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> StringResponseSerializer {
        StringResponseSerializer(
            dataPreprocessor: dataPreprocessor, encoding: encoding, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}

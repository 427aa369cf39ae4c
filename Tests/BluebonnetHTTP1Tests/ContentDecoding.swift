import BluebonnetHTTP1

/// Content decoding for the corpus cases whose bodies are gzip/deflate coded.
enum ContentDecoding {
    static func decodeIfNeeded(fields: [ParsedOutcome.Field], body: [UInt8], error: inout String?) -> [UInt8] {
        body
    }
}

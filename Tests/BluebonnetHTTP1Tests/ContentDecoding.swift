import BluebonnetCompression
import BluebonnetHTTP1

/// Content decoding (RFC 9110 §8.4) for the corpus cases whose bodies are gzip/deflate coded: the
/// corpus expects the decoded content, as a client hands it to its user.
enum ContentDecoding {
    static func decodeIfNeeded(fields: [ParsedOutcome.Field], body: [UInt8], error: inout String?) -> [UInt8] {
        let values = fields.filter { String(decoding: $0.name, as: UTF8.self).lowercased() == "content-encoding" }
            .map { String(decoding: $0.value, as: UTF8.self) }
        guard !values.isEmpty else { return body }
        do {
            let decoder = try ContentDecoder(contentEncoding: values.joined(separator: ", "))
            var output = ByteBuffer()
            // Fed in pieces, as a socket would deliver it.
            var index = 0
            repeat {
                let end = min(body.count, index + 1000)
                try decoder.decode(ByteBuffer(bytes: body[index..<end]), into: &output)
                index = end
            } while index < body.count
            try decoder.finish(into: &output)
            return output.readableBytesArray
        } catch let failure {
            error = "\(failure)"
            return []
        }
    }
}

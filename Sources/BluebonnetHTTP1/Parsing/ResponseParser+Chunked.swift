extension ResponseParser {
    /// Parses a chunk-size line (RFC 9112 §7.1): `chunk-size [ chunk-ext ] CRLF`, where
    /// `chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )`. Extensions are
    /// checked and discarded. Returns nil until the line is complete.
    mutating func parseChunkSize(scanned: Int) throws(HTTPParserError) -> Int? {
        let budget = configuration.maxChunkExtensionBytes - extensionBytes
        let base = consumed
        let endOfStream = self.endOfStream
        let result = try buffer.withUnsafeReadableBytes { bytes throws(HTTPParserError) -> (size: Int, lineEnd: Int, extensions: Int)? in
            var i = scanned
            while i < bytes.count && bytes[i] != 0x0A { i &+= 1 }
            if i == bytes.count {
                // No line end yet. A size needs at most 16 hex digits plus leading zeros; keep the
                // line within a generous bound so a line that never ends cannot grow without limit.
                if bytes.count > 1024 + max(budget, 0) {
                    throw HTTPParserError(.chunkExtensionsTooLarge, offset: base + bytes.count,
                                          "a chunk-size line longer than \(1024 + max(budget, 0)) bytes")
                }
                if endOfStream {
                    throw HTTPParserError(.truncatedBody, offset: base + bytes.count, "the connection closed inside a chunk-size line")
                }
                return nil
            }
            var end = i
            if end > 0 && bytes[end &- 1] == 0x0D { end &-= 1 }
            let table = ByteClass.table
            var k = 0
            var size = 0
            while k < end && table[Int(bytes[k])] & ByteClass.hex != 0 {
                guard size <= (Int.max >> 4) else {
                    throw HTTPParserError(.chunkSizeOverflow, offset: base + k, "the chunk size does not fit in 63 bits")
                }
                let b = bytes[k]
                let value = b <= 0x39 ? b &- 0x30 : (b | 0x20) &- 0x61 &+ 10
                size = (size << 4) | Int(value)
                k &+= 1
            }
            if k == 0 {
                throw Self.chunkLineError(bytes, at: 0, end: end, base: base, "the chunk size is not hexadecimal")
            }
            let extensionStart = k
            try Self.scanChunkExtensions(bytes, from: k, to: end, base: base)
            return (size, i &+ 1, end - extensionStart)
        }
        guard let result else {
            state = .chunkSize(scanned: buffer.readableBytes)
            return nil
        }
        extensionBytes += result.extensions
        if extensionBytes > configuration.maxChunkExtensionBytes {
            throw error(.chunkExtensionsTooLarge, at: 0,
                        "more than \(configuration.maxChunkExtensionBytes) bytes of chunk extensions in one message")
        }
        advance(result.lineEnd)
        return result.size
    }

    private static func chunkLineError(
        _ bytes: UnsafeRawBufferPointer, at index: Int, end: Int, base: Int, _ what: String
    ) -> HTTPParserError {
        if index < end && bytes[index] == 0x0D {
            return HTTPParserError(.invalidLineEnding, offset: base + index, "a CR in a chunk-size line is not followed by LF")
        }
        let shown = escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        return HTTPParserError(.invalidChunkSize, offset: base + index, "\(what): \"\(shown)\"")
    }

    private static func scanChunkExtensions(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int, base: Int
    ) throws(HTTPParserError) {
        let table = ByteClass.table
        var k = start
        func skipBWS() {
            while k < end && (bytes[k] == 0x20 || bytes[k] == 0x09) { k &+= 1 }
        }
        func extensionError(_ what: String) -> HTTPParserError {
            if k < end && bytes[k] == 0x0D {
                return HTTPParserError(.invalidLineEnding, offset: base + k, "a CR in a chunk-size line is not followed by LF")
            }
            let shown = escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
            return HTTPParserError(.invalidChunkExtension, offset: base + k, "\(what): \"\(shown)\"")
        }
        while k < end {
            let before = k
            skipBWS()
            guard k < end, bytes[k] == UInt8(ascii: ";") else {
                if k == before {
                    throw chunkLineError(bytes, at: k, end: end, base: base, "unexpected byte after the chunk size")
                }
                throw chunkLineError(bytes, at: k, end: end, base: base, "whitespace after the chunk size without an extension")
            }
            k &+= 1
            skipBWS()
            let nameStart = k
            while k < end && table[Int(bytes[k])] & ByteClass.token != 0 { k &+= 1 }
            if k == nameStart { throw extensionError("a chunk extension has no name") }
            let afterName = k
            skipBWS()
            if k < end && bytes[k] == UInt8(ascii: "=") {
                k &+= 1
                skipBWS()
                if k < end && bytes[k] == UInt8(ascii: "\"") {
                    k &+= 1
                    var closed = false
                    while k < end {
                        let b = bytes[k]
                        if b == UInt8(ascii: "\"") {
                            closed = true
                            k &+= 1
                            break
                        }
                        if b == UInt8(ascii: "\\") {
                            k &+= 1
                            guard k < end, table[Int(bytes[k])] & ByteClass.fieldValue != 0 else {
                                throw extensionError("an invalid quoted-pair in a chunk extension")
                            }
                            k &+= 1
                            continue
                        }
                        guard table[Int(b)] & ByteClass.qdtext != 0 else {
                            throw extensionError("an invalid byte in a quoted chunk-extension value")
                        }
                        k &+= 1
                    }
                    if !closed { throw extensionError("an unterminated quoted string in a chunk extension") }
                } else {
                    let valueStart = k
                    while k < end && table[Int(bytes[k])] & ByteClass.token != 0 { k &+= 1 }
                    if k == valueStart { throw extensionError("a chunk extension has an empty value") }
                }
            } else {
                k = afterName
            }
        }
    }
}

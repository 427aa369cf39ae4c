extension ResponseParser {
    /// Where a field section stands after scanning the received bytes.
    @usableFromInline
    enum SectionScan {
        case needMore
        /// The section ends (after its empty line) at this offset from the reader index.
        case complete(end: Int)
    }

    /// Parses the head as far as the received bytes allow.
    mutating func parseHead() throws(HTTPParserError) -> ResponseEvent {
        var progress = head
        head = HeadProgress()  // moved out, so appending to its entries does not copy them
        let configuration = self.configuration
        let base = consumed
        let scan = try buffer.withUnsafeMutableReadableBytes { bytes throws(HTTPParserError) -> SectionScan in
            try Self.scanSection(bytes, &progress, configuration: configuration, base: base, isTrailer: false)
        }
        guard case .complete(let end) = scan else {
            head = progress
            if endOfStream {
                throw error(.truncatedHead, at: buffer.readableBytes, "the connection closed inside the response head")
            }
            return .needMoreData
        }
        return try completeHead(progress, end: end)
    }

    /// Parses the trailer section; nil until it is complete.
    mutating func parseTrailers() throws(HTTPParserError) -> HTTPFields?? {
        var progress = head
        head = HeadProgress()
        let configuration = self.configuration
        let base = consumed
        let scan = try buffer.withUnsafeMutableReadableBytes { bytes throws(HTTPParserError) -> SectionScan in
            try Self.scanSection(bytes, &progress, configuration: configuration, base: base, isTrailer: true)
        }
        guard case .complete(let end) = scan else {
            head = progress
            if endOfStream {
                throw error(.truncatedBody, at: buffer.readableBytes, "the connection closed inside the trailer section")
            }
            return nil
        }
        let fields: HTTPFields? =
            progress.entries.isEmpty
            ? nil : HTTPFields(bytes: buffer.getSlice(buffer.readerIndex..<(buffer.readerIndex + end)), entries: progress.entries)
        advance(end)
        return .some(fields)
    }

    private mutating func completeHead(_ progress: HeadProgress, end: Int) throws(HTTPParserError) -> ResponseEvent {
        let start = buffer.readerIndex
        let bytes = buffer.getSlice(start..<(start + end))
        let headOffset = consumed + progress.start

        // The fields that decide framing and persistence, read once the section is complete (a
        // folded line may have extended a value).
        var transferEncoding = BodyFraming.TransferCodings.absent
        var contentLength = BodyFraming.ContentLength.absent
        var connectionClose = false
        var connectionKeepAlive = false
        bytes.withUnsafeBytes(in: start..<(start + end)) { raw in
            for entry in progress.entries {
                let name = Int(entry.nameStart)..<Int(entry.nameEnd)
                let value = UnsafeRawBufferPointer(rebasing: raw[Int(entry.valueStart)..<Int(entry.valueEnd)])
                switch name.count {
                case 14 where raw.equalsCaseInsensitive(name, "content-length"):
                    contentLength = contentLength.merging(fieldValue: value)
                case 17 where raw.equalsCaseInsensitive(name, "transfer-encoding"):
                    transferEncoding = transferEncoding.merging(fieldValue: value)
                case 10 where raw.equalsCaseInsensitive(name, "connection"):
                    Self.scanConnectionOptions(value, close: &connectionClose, keepAlive: &connectionKeepAlive)
                default:
                    break
                }
            }
        }

        let status = progress.status
        let version = progress.version
        let fields = HTTPFields(bytes: bytes, entries: progress.entries)

        if (100..<200).contains(status) && status != 101 {
            informationalCount += 1
            if informationalCount > configuration.maxInformationalResponses {
                throw HTTPParserError(.tooManyInformationalResponses, offset: headOffset,
                                      "more than \(configuration.maxInformationalResponses) informational responses")
            }
            advance(end)
            state = .idle
            let head = ResponseHead(version: version, status: status, reasonRange: progress.reasonRange,
                                    headers: fields, framing: .none, keepAlive: true)
            return .informational(head)
        }

        let method = pendingMethods.removeFirst() ?? .get
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forResponse(requestMethod: method, status: status, version: version,
                                                  transferEncoding: transferEncoding, contentLength: contentLength)
        } catch {
            throw HTTPParserError(error.kind, offset: headOffset, error.detail)
        }
        // RFC 9112 §9.3: close wins; HTTP/1.1 persists by default; HTTP/1.0 only with keep-alive.
        var keepAlive = !connectionClose && (version >= .http1_1 || connectionKeepAlive)
        switch framing {
        case .untilClose, .tunnel: keepAlive = false
        case .none, .contentLength, .chunked: break
        }
        messageKeepAlive = keepAlive
        advance(end)
        switch framing {
        case .none, .tunnel, .contentLength(0): state = .ending(trailers: nil)
        case .contentLength(let length): state = .body(remaining: length)
        case .chunked: state = .chunkSize(scanned: 0)
        case .untilClose: state = .untilClose
        }
        let head = ResponseHead(version: version, status: status, reasonRange: progress.reasonRange,
                                headers: fields, framing: framing, keepAlive: keepAlive)
        return .head(head)
    }

    /// Looks for the `close` and `keep-alive` options in a Connection value (RFC 9110 §7.6.1).
    static func scanConnectionOptions(_ value: UnsafeRawBufferPointer, close: inout Bool, keepAlive: inout Bool) {
        value.forEachListElement { option in
            if value.equalsCaseInsensitive(option, "close") { close = true }
            if value.equalsCaseInsensitive(option, "keep-alive") { keepAlive = true }
            return true
        }
    }

    /// Scans lines of a field section (a head with its status line, or a trailer section), line by line
    /// as they complete, so each byte is looked at once however the input is split.
    static func scanSection(
        _ bytes: UnsafeMutableRawBufferPointer,
        _ p: inout HeadProgress,
        configuration: ParserConfiguration,
        base: Int,
        isTrailer: Bool
    ) throws(HTTPParserError) -> SectionScan {
        let limit = isTrailer ? configuration.maxTrailerBytes : configuration.maxHeadBytes
        let tooLarge: HTTPParserError.Kind = isTrailer ? .trailersTooLarge : .headTooLarge
        let what = isTrailer ? "trailer section" : "response head"
        let count = bytes.count
        let table = ByteClass.table

        if !p.statusSeen {
            // Fail fast on bytes that cannot begin a status line (TLS records, binary garbage), rather
            // than waiting for a line ending that may never come.
            let prefix: StaticString = "HTTP/"
            let available = min(count - p.start, 5)
            for i in 0..<max(available, 0) where bytes[p.start + i] != prefix.utf8Start[i] {
                let shown = escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[p.start..<(p.start + i + 1)]))
                throw HTTPParserError(.invalidStatusLine, offset: base + p.start + i,
                                      "the response does not begin with 'HTTP/' (it begins \"\(shown)\")")
            }
        }

        while true {
            var i = max(p.scanned, p.lineStart)
            var control = p.lineHasControl
            while i < count {
                // Eight bytes at a time while none is a control byte (< 0x20, which includes CR, LF
                // and HTAB) or DEL: such words need no further look.
                if i &+ 8 <= count {
                    let word = UnsafeRawPointer(bytes.baseAddress! + i).loadUnaligned(as: UInt64.self)
                    let below20 = (word &- 0x2020_2020_2020_2020) & ~word & 0x8080_8080_8080_8080
                    let del = word ^ 0x7F7F_7F7F_7F7F_7F7F
                    let isDEL = (del &- 0x0101_0101_0101_0101) & ~del & 0x8080_8080_8080_8080
                    if below20 | isDEL == 0 {
                        i &+= 8
                        continue
                    }
                }
                let b = bytes[i]
                if b == 0x0A { break }
                if (b < 0x20 && b != 0x09 && b != 0x0D) || b == 0x7F { control = true }
                // A CR must be followed by LF (RFC 9112 §2.2): fail as soon as it is not, rather than
                // waiting for a line end that a hostile peer may never send.
                if b == 0x0D && i &+ 1 < count && bytes[i &+ 1] != 0x0A {
                    throw HTTPParserError(.invalidLineEnding, offset: base + i, "a CR in the \(what) is not followed by LF")
                }
                i &+= 1
            }
            if i == count {
                // A CR at the very end is checked again when its next byte arrives.
                p.scanned = count > 0 && bytes[count &- 1] == 0x0D ? count &- 1 : count
                p.lineHasControl = control
                if count - p.start > limit {
                    throw HTTPParserError(tooLarge, offset: base + p.start + limit,
                                          "the \(what) is larger than the limit of \(limit) bytes")
                }
                return .needMore
            }
            if i + 1 - p.start > limit {
                throw HTTPParserError(tooLarge, offset: base + p.start + limit,
                                      "the \(what) is larger than the limit of \(limit) bytes")
            }
            let lineStart = p.lineStart
            var contentEnd = i
            if contentEnd > lineStart && bytes[contentEnd &- 1] == 0x0D { contentEnd &-= 1 }
            p.scanned = i &+ 1
            p.lineStart = i &+ 1
            p.lineHasControl = false

            if !p.statusSeen {
                try parseStatusLine(bytes, lineStart..<contentEnd, &p, base: base, checkReason: control)
                p.statusSeen = true
                continue
            }
            if contentEnd == lineStart {
                return .complete(end: i &+ 1)
            }

            let first = bytes[lineStart]
            if first == 0x20 || first == 0x09 {
                // obs-fold (RFC 9112 §5.2): replace with SP and extend the previous value.
                guard let lastIndex = p.entries.indices.last else {
                    throw HTTPParserError(.invalidFieldLine, offset: base + lineStart,
                                          isTrailer
                                            ? "the trailer section starts with a whitespace-prefixed line"
                                            : "a whitespace-prefixed line follows the status line")
                }
                var s = lineStart
                while s < contentEnd && (bytes[s] == 0x20 || bytes[s] == 0x09) { s &+= 1 }
                var e = contentEnd
                while e > s && (bytes[e &- 1] == 0x20 || bytes[e &- 1] == 0x09) { e &-= 1 }
                if control { try validateValue(bytes, s..<e, base: base) }
                if s < e {
                    var entry = p.entries[lastIndex]
                    if entry.valueStart == entry.valueEnd {
                        entry.valueStart = UInt32(s)
                    } else {
                        for k in Int(entry.valueEnd)..<s where bytes[k] == 0x0D || bytes[k] == 0x0A {
                            bytes[k] = 0x20
                        }
                    }
                    entry.valueEnd = UInt32(e)
                    p.entries[lastIndex] = entry
                }
                continue
            }

            // field-line = field-name ":" OWS field-value OWS (RFC 9112 §5)
            if p.entries.count >= configuration.maxFieldCount {
                throw HTTPParserError(.tooManyFields, offset: base + lineStart,
                                      "more than \(configuration.maxFieldCount) fields in the \(what)")
            }
            var c = lineStart
            while c < contentEnd && table[Int(bytes[c])] & ByteClass.token != 0 { c &+= 1 }
            if c == contentEnd {
                throw HTTPParserError(.invalidFieldLine, offset: base + lineStart,
                                      "a field line has no colon: \"\(escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[lineStart..<contentEnd])))\"")
            }
            let stop = bytes[c]
            if stop != UInt8(ascii: ":") {
                if stop == 0x0D {
                    throw HTTPParserError(.invalidLineEnding, offset: base + c, "a CR in a field line is not followed by LF")
                }
                let why =
                    stop == 0x20 || stop == 0x09
                    ? "whitespace inside a field name or before its colon (RFC 9112 §5.1)"
                    : "byte \(escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[c..<(c + 1)]))) is not allowed in a field name"
                throw HTTPParserError(.invalidFieldName, offset: base + c, why)
            }
            if c == lineStart {
                throw HTTPParserError(.invalidFieldName, offset: base + c, "a field line has an empty name")
            }
            var s = c &+ 1
            while s < contentEnd && (bytes[s] == 0x20 || bytes[s] == 0x09) { s &+= 1 }
            var e = contentEnd
            while e > s && (bytes[e &- 1] == 0x20 || bytes[e &- 1] == 0x09) { e &-= 1 }
            if control { try validateValue(bytes, s..<e, base: base) }
            if p.entries.capacity == 0 { p.entries.reserveCapacity(16) }
            p.entries.append(HTTPFields.Entry(nameStart: UInt32(lineStart), nameEnd: UInt32(c),
                                              valueStart: UInt32(s), valueEnd: UInt32(e)))
        }
    }

    @inline(__always)
    static func validateValue(_ bytes: UnsafeMutableRawBufferPointer, _ range: Range<Int>, base: Int) throws(HTTPParserError) {
        let table = ByteClass.table
        for k in range where table[Int(bytes[k])] & ByteClass.fieldValue == 0 {
            if bytes[k] == 0x0D {
                throw HTTPParserError(.invalidLineEnding, offset: base + k, "a CR in a field value is not followed by LF")
            }
            throw HTTPParserError(.invalidFieldValue, offset: base + k,
                                  "control byte \(escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[k..<(k + 1)]))) in a field value")
        }
    }

    /// `status-line = HTTP-version SP status-code SP [ reason-phrase ]` (RFC 9112 §4), where a missing
    /// `SP reason` is accepted (servers send `HTTP/1.1 301`).
    static func parseStatusLine(
        _ bytes: UnsafeMutableRawBufferPointer, _ line: Range<Int>, _ p: inout HeadProgress, base: Int,
        checkReason: Bool
    ) throws(HTTPParserError) {
        let s = line.lowerBound
        let e = line.upperBound
        func digit(_ index: Int) -> Int? {
            guard index < e else { return nil }
            let d = bytes[index] &- 0x30
            return d < 10 ? Int(d) : nil
        }
        // Only rendered when an error is thrown (it costs more than parsing a good line).
        func shown() -> String { escapedForMessage(UnsafeRawBufferPointer(rebasing: bytes[s..<e])) }
        // "HTTP/" was checked as the bytes arrived.
        guard let major = digit(s + 5), s + 6 < e, bytes[s + 6] == UInt8(ascii: "."), let minor = digit(s + 7) else {
            throw HTTPParserError(.invalidStatusLine, offset: base + s + 5, "invalid HTTP version in \"\(shown())\"")
        }
        guard s + 8 < e, bytes[s + 8] == 0x20 else {
            throw HTTPParserError(.invalidStatusLine, offset: base + s + 8,
                                  "expected one SP and a status code after the version in \"\(shown())\"")
        }
        guard major == 1 else {
            throw HTTPParserError(.unsupportedVersion, offset: base + s + 5, "HTTP/\(major).\(minor) is not HTTP/1.x")
        }
        guard let d1 = digit(s + 9), let d2 = digit(s + 10), let d3 = digit(s + 11),
            s + 12 == e || bytes[s + 12] == 0x20
        else {
            throw HTTPParserError(.invalidStatusCode, offset: base + s + 9, "the status code is not three digits in \"\(shown())\"")
        }
        let status = d1 * 100 + d2 * 10 + d3
        guard status >= 100 else {
            throw HTTPParserError(.invalidStatusCode, offset: base + s + 9, "status code \(status) is below 100")
        }
        let reasonStart = min(s + 13, e)
        let table = ByteClass.table
        for k in reasonStart..<e where checkReason && table[Int(bytes[k])] & ByteClass.reason == 0 {
            if bytes[k] == 0x0D {
                throw HTTPParserError(.invalidLineEnding, offset: base + k, "a CR in the status line is not followed by LF")
            }
            throw HTTPParserError(.invalidReasonPhrase, offset: base + k, "control byte in the reason phrase of \"\(shown())\"")
        }
        p.version = HTTPVersion(major: major, minor: minor)
        p.status = status
        p.reasonRange = reasonStart..<e
        p.start = s
    }
}

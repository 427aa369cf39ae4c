/// What `BluebonnetCacheProbe` stores, so that a reader (another probe, or a test) can tell a
/// body that was written whole from any other bytes: each body is a function of its key, its
/// writer, the writer's generation counter and its length, which the entry's header fields
/// carry (`X-Writer`, `X-Generation`, `X-Length`).
public enum CacheProbeContent {
    /// The body `writer` stores for `key` at `generation`: `length` pseudo-random bytes seeded by
    /// all four (a shifted, cut or mixed body does not match).
    public static func body(key: String, writer: Int, generation: Int, length: Int) -> [UInt8] {
        var state: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in "\(key)|\(writer)|\(generation)|\(length)".utf8 {
            state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        if state == 0 { state = 1 }
        var bytes = [UInt8](repeating: 0, count: length)
        var index = 0
        while index < length {
            // xorshift64*
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            var word = state &* 0x2545_F491_4F6C_DD1D
            for _ in 0..<8 where index < length {
                bytes[index] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                index += 1
            }
        }
        return bytes
    }

    /// Whether `body` is what `body(key:writer:generation:length:)` gives for the values in
    /// `headers` (`X-Writer`, `X-Generation`, `X-Length`, as name-value pairs) and `key`; a
    /// description of the first difference otherwise.
    public static func check(key: String, headers: [(String, String)], body: [UInt8]) -> String? {
        func value(_ name: String) -> Int? { headers.first { $0.0 == name }.flatMap { Int($0.1) } }
        guard let writer = value("X-Writer"), let generation = value("X-Generation"), let length = value("X-Length") else {
            return "\(key): the probe's fields are missing: \(headers)"
        }
        guard length == body.count else { return "\(key): X-Length \(length), body \(body.count) bytes" }
        guard body == Self.body(key: key, writer: writer, generation: generation, length: length) else {
            return "\(key): the body is not the one writer \(writer) stored at generation \(generation)"
        }
        return nil
    }
}

/// Checks that a byte consumer gives the same outcome however its input is split.
///
/// Every incremental consumer (the response parser, the chunked decoder, the content decoders) is
/// run through this: the input whole, byte by byte, split in two at every index, in random pieces
/// (with the seed in the failure message), and several messages back to back. A consumer is
/// described by a `run` closure that builds a fresh consumer, feeds it the given pieces in order,
/// signals the end of input, and returns a normalised outcome (for example with adjacent body
/// parts merged, since their boundaries legitimately follow the input's).
public struct DripFeedVerifier<Outcome: Equatable & Sendable>: Sendable {
    /// Builds a fresh consumer, feeds it `pieces` in order, ends the input, and returns the outcome.
    public let run: @Sendable (_ pieces: [ArraySlice<UInt8>]) -> Outcome

    /// Inputs longer than this are split at a sample of indices rather than at every index.
    public var exhaustiveSplitLimit: Int = 2048

    /// A verifier over `run`.
    public init(run: @escaping @Sendable (_ pieces: [ArraySlice<UInt8>]) -> Outcome) {
        self.run = run
    }

    /// A disagreement between two ways of feeding the same input.
    public struct Mismatch: Error, CustomStringConvertible, Sendable {
        /// How the input was fed (for example "split at 17" or "random pieces, seed 42").
        public let strategy: String
        /// The outcome of feeding the input whole (or the expected outcome, when one was given).
        public let reference: Outcome
        /// The outcome under `strategy`.
        public let actual: Outcome

        public var description: String {
            "drip-feed mismatch (\(strategy)):\n  expected: \(reference)\n  actual:   \(actual)"
        }
    }

    /// Feeds `input` in every way this verifier knows and throws the first disagreement.
    ///
    /// - Parameters:
    ///   - input: the bytes.
    ///   - expected: when given, the whole-input outcome must equal it too.
    ///   - seed: seeds the random splits (printed in a mismatch).
    /// - Returns: the outcome (the same for every split).
    @discardableResult
    public func verify(_ input: [UInt8], expected: Outcome? = nil, seed: UInt64 = 0x5EED) throws -> Outcome {
        let whole = run([input[...]])
        if let expected, expected != whole {
            throw Mismatch(strategy: "whole input", reference: expected, actual: whole)
        }
        func check(_ strategy: @autoclosure () -> String, _ pieces: [ArraySlice<UInt8>]) throws {
            let outcome = run(pieces)
            if outcome != whole { throw Mismatch(strategy: strategy(), reference: whole, actual: outcome) }
        }
        // Byte by byte.
        try check("byte by byte", input.indices.map { input[$0..<($0 + 1)] })
        // Split in two at every index (or a sample of them for long inputs).
        for index in splitIndices(count: input.count) {
            try check("split at \(index)", [input[..<index], input[index...]])
        }
        // Random pieces, with empty pieces now and then.
        var generator = SplitMix64(seed: seed)
        for round in 0..<8 {
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < input.count {
                let limit = round % 2 == 0 ? 16 : 1024
                let length = Int(generator.next() % UInt64(limit + 1))
                let end = min(input.count, start + length)
                pieces.append(input[start..<end])
                start = end
            }
            try check("random pieces, seed \(seed), round \(round)", pieces)
        }
        return whole
    }

    private func splitIndices(count: Int) -> [Int] {
        guard count > exhaustiveSplitLimit else { return Array(0...count) }
        var indices = Set(0...512)
        indices.formUnion((count - 512)...count)
        let stride = max(1, count / 512)
        indices.formUnion(Swift.stride(from: 0, through: count, by: stride))
        return indices.sorted()
    }
}

/// A small deterministic generator (SplitMix64) so random splits can be replayed from their seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that starts from `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

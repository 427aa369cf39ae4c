/// One parser under test, driven the same way for every input.
///
/// A benchmark iteration calls `makeConnection()` outside the measurement (a fresh parser or
/// channel that has already sent one GET per expected response, as a pipelining client would),
/// then measures only `parseAll(_:)`: feed every piece, drain every event, reach the last end.
protocol ResponseParsingSide: Sendable {
    /// Per-iteration parsing state: a parser value, or a channel around a decoder.
    associatedtype Connection

    /// Converts the input's pieces into this side's byte buffers, once.
    init(input: ParsingInput)

    /// A connection ready to receive the input's responses. Not measured.
    func makeConnection() throws -> Connection

    /// Feeds every piece and consumes every event. Measured.
    func parseAll(_ connection: inout Connection) throws -> ParseTally
}

extension ResponseParsingSide {
    /// Ends the connection after the measurement (default: nothing to do).
    func finish(_ connection: inout Connection) {}
}

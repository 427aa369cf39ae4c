// The peer: SwiftNIO's HTTPResponseDecoder (llhttp underneath), run the way NIO runs it, as a
// ByteToMessageHandler in a channel pipeline. An EmbeddedChannel stands in for the socket.
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// NIO's `HTTPResponseDecoder` in an `EmbeddedChannel`, with `HTTPRequestEncoder` in front of it
/// so that the decoder sees each request head go out and knows which method each response answers
/// (the decoder learns methods only by observing outbound writes).
struct NIOResponseParsing: ResponseParsingSide {
    let pieces: [NIOCore.ByteBuffer]
    let responseCount: Int

    init(input: ParsingInput) {
        let allocator = ByteBufferAllocator()
        pieces = input.pieces.map { bytes in
            var buffer = allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            return buffer
        }
        responseCount = input.responseCount
    }

    func makeConnection() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
        try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward))
        )
        // One GET per expected response, sent before any response byte arrives (pipelining),
        // then the encoded request bytes are drained so they cost nothing in the measurement.
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/users/me", headers: ["Host": "api.example.com"])
        for _ in 0..<responseCount {
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            channel.write(HTTPClientRequestPart.end(nil), promise: nil)
        }
        channel.flush()
        while try channel.readOutbound(as: IOData.self) != nil {}
        return channel
    }

    func parseAll(_ channel: inout EmbeddedChannel) throws -> ParseTally {
        var tally = ParseTally()
        for piece in pieces {
            try channel.writeInbound(piece)
            while let part = try channel.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let head):
                    guard head.status.code >= 200 else { continue }  // 1xx: informational
                    tally.statusSum &+= Int(head.status.code)
                    tally.headerFields &+= head.headers.count
                    if head.headers.first(name: "content-type") != nil { tally.contentTypes &+= 1 }
                case .body(let bytes):
                    tally.bodyBytes &+= bytes.readableBytes
                case .end:
                    tally.responses &+= 1
                }
            }
        }
        return tally
    }

    func finish(_ channel: inout EmbeddedChannel) {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
}

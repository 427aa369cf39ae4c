import BluebonnetCompression
import BluebonnetCore
import CLibFuzzer
import Glibc

// Input layout: byte 0 chooses the codings (bits 0-1: gzip; deflate; gzip then deflate applied, as
// `Content-Encoding: gzip, deflate`; none) and the piece size of the split run (bits 2-7, plus one:
// 1...64 bytes); the rest is the encoded body. Each input is decoded twice, whole and split, and the
// two runs must agree.

/// The size cap the decoders run under: small enough to bound the work per input, large enough that
/// a short input can reach it (deflate expands about 1000×).
let sizeLimit = 1 << 20

/// libFuzzer's entry: decodes one input, crashing (`fatalError`) if an invariant breaks.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let control = data[0]
    let body = UnsafeRawBufferPointer(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let codings: [ContentCoding] = [[.gzip], [.deflate], [.gzip, .deflate], []][Int(control & 3)]
    let pieceSize = Int(control >> 2) + 1

    let whole = DecoderRun(codings: codings, body: body, pieceSize: body.count)
    let split = DecoderRun(codings: codings, body: body, pieceSize: pieceSize)
    switch (whole.outcome, split.outcome) {
    case (.decoded(let a), .decoded(let b)):
        check(a == b, "split input decoded to \(b.count) bytes, whole input to \(a.count) (codings \(codings), piece size \(pieceSize))")
    case (.failed(let a), .failed(let b)):
        // Output before an error is to be discarded, so only the error is compared. With stacked
        // codings the layer that notices first depends on the split (the outer layer may reach its
        // own checksum before handing the inner layer the bad bytes, or not), so there both failing
        // is all that must agree (Fixtures/fuzz/findings/FuzzContentDecoder/stacked-*).
        check(codings.count > 1 || a.kind == b.kind && a.coding == b.coding,
                     "split input failed with \(b), whole input with \(a) (codings \(codings), piece size \(pieceSize))")
    default:
        fatalError("split input gave \(split.outcome), whole input \(whole.outcome) (codings \(codings), piece size \(pieceSize))")
    }
    return 0
}

@main
enum FuzzContentDecoderMain {
    static func main() {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzContentDecoder(data, size) })
    }
}

/// One decode of a body fed in pieces, checking the size limit and error finality as it goes.
struct DecoderRun {
    enum Outcome: CustomStringConvertible {
        case decoded([UInt8])
        case failed(CompressionError)

        var description: String {
            switch self {
            case .decoded(let bytes): "\(bytes.count) decoded bytes"
            case .failed(let error): "error \(error)"
            }
        }
    }

    private(set) var outcome: Outcome

    init(codings: [ContentCoding], body: UnsafeRawBufferPointer, pieceSize: Int) {
        // No ratio limit: its point of failure may depend on the split (DecompressionLimits says so).
        let limits = DecompressionLimits(maximumDecodedBytes: sizeLimit, maximumRatio: nil)
        let decoder: ContentDecoder
        do {
            decoder = try ContentDecoder(codings: codings, limits: limits)
        } catch {
            fatalError("ContentDecoder(codings: \(codings)) threw \(error)")
        }
        var output = ByteBuffer()
        var start = 0
        do {
            while start < body.count {
                let end = min(start + max(pieceSize, 1), body.count)
                try decoder.decode(ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: body[start..<end])), into: &output)
                // Even a failing call writes at most one byte past the limit.
                check(output.readableBytes <= sizeLimit, "\(output.readableBytes) decoded bytes under a limit of \(sizeLimit)")
                start = end
            }
            try decoder.finish(into: &output)
        } catch {
            check(output.readableBytes <= sizeLimit + 1,
                         "\(output.readableBytes) decoded bytes under a limit of \(sizeLimit) before \(error)")
            // The error is final: a later call throws it again.
            if start < body.count {
                do {
                    try decoder.decode(ByteBuffer(), into: &output)
                    fatalError("decode succeeded after \(error)")
                } catch let again {
                    check(again == error, "decode threw \(again) after \(error)")
                }
                do {
                    try decoder.finish(into: &output)
                    fatalError("finish succeeded after \(error)")
                } catch let again {
                    check(again == error, "finish threw \(again) after \(error)")
                }
            }
            outcome = .failed(error)
            return
        }
        check(output.readableBytes <= sizeLimit, "\(output.readableBytes) decoded bytes under a limit of \(sizeLimit)")
        check(decoder.decodedBytes == output.readableBytes,
                     "decodedBytes is \(decoder.decodedBytes), the output has \(output.readableBytes)")
        check(decoder.encodedBytes == body.count, "encodedBytes is \(decoder.encodedBytes) for \(body.count) bytes")
        outcome = .decoded(output.readableBytesArray)
    }
}

/// `precondition` that keeps its message in release builds (the fuzzers are built with `-O`).
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line) {
    if !condition { fatalError(message(), file: file, line: line) }
}

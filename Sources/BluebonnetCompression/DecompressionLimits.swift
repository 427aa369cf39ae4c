/// Bounds on what a ``ContentDecoder`` may produce, so that a small hostile body (a "zip bomb")
/// cannot make the client allocate gigabytes.
///
/// Limits are checked *as output is produced*: the decoder lets zlib write at most 64 KiB per call
/// and never more than one byte past what the limits still allow, so a bomb fails having written
/// at most the allowed size plus one byte into the output buffer (whose own growth policy may
/// reserve more capacity than that).
///
/// - Decoded size: at most ``maximumDecodedBytes`` bytes in total (`nil`: no cap).
/// - Ratio: once more than ``ratioGraceBytes`` bytes are decoded, the decoded size may be at most
///   ``maximumRatio`` times the encoded bytes handed to the decoder *so far* (`nil`: no ratio limit).
///   Formally, decoding fails when `decoded > max(ratioGraceBytes, maximumRatio × encoded)`.
///   Because "so far" moves as input arrives, the exact point of failure near the limit can depend
///   on how the body is split; well-formed bodies well under the limit never notice.
/// - Stacked codings: every layer's output is held to the same size and ratio limits (an inner
///   layer's output is never larger than needed to hand the next layer 64 KiB at a time).
/// - Codings: at most ``maximumCodings`` non-identity codings may be stacked in one
///   `Content-Encoding` (each costs a zlib stream of about 40 KiB).
///
/// Defaults (``default``): no absolute size cap, ratio 100 past 8 MiB, at most 3 codings.
/// - No size cap because the decoder streams: a legitimate compressed download may be many
///   gigabytes, and bodies collected in memory have their own response-size limit one layer up.
/// - Ratio 100 because real content stays far below it — text, HTML and JSON compress 3–20×, very
///   repetitive logs rarely pass 50× — while deflate's ceiling is about 1032×, which bombs approach.
/// - The 8 MiB grace lets small, legitimately extreme bodies through: 1 MiB of zeros gzips to about
///   1 KiB (ratio ~1000) and still decodes by default; a multi-GiB bomb fails after about 8 MiB when
///   fed in network-sized pieces (or `100 ×` its encoded size when handed over whole).
public struct DecompressionLimits: Sendable, Hashable {
    /// The most bytes the decoder may produce in total; `nil` (the default) means no cap.
    /// Exactly this many bytes decode; one more fails with ``CompressionError/Limit/decodedSize``.
    public var maximumDecodedBytes: Int?

    /// The most decoded bytes per encoded byte received so far, applied only past
    /// ``ratioGraceBytes``; `nil` disables the ratio check. Default 100. A decoded size of exactly
    /// `maximumRatio × encoded` passes; one byte more fails with ``CompressionError/Limit/ratio``.
    public var maximumRatio: Int?

    /// Decoded bytes up to which the ratio is not checked. Default 8 MiB (8 388 608 bytes).
    public var ratioGraceBytes: Int

    /// The most non-identity codings one body may stack (`Content-Encoding: deflate, gzip` is 2).
    /// Default 3; more fails ``ContentDecoder/init(codings:limits:)`` with
    /// ``CompressionError/Limit/codings``.
    public var maximumCodings: Int

    /// Limits with the given values; every parameter defaults to the value in ``default``.
    public init(
        maximumDecodedBytes: Int? = nil,
        maximumRatio: Int? = 100,
        ratioGraceBytes: Int = 8 << 20,
        maximumCodings: Int = 3
    ) {
        self.maximumDecodedBytes = maximumDecodedBytes
        self.maximumRatio = maximumRatio
        self.ratioGraceBytes = ratioGraceBytes
        self.maximumCodings = maximumCodings
    }

    /// The safe defaults: no absolute size cap, ratio at most 100 once more than 8 MiB are decoded,
    /// at most 3 stacked codings. See the type's documentation for why.
    public static let `default` = DecompressionLimits()

    /// No size or ratio limit (codings still capped at 3).
    /// - Warning: only for trusted peers; a tiny hostile body can then decode to gigabytes.
    public static let unlimited = DecompressionLimits(maximumDecodedBytes: nil, maximumRatio: nil)

    /// How many bytes may be decoded in total, given `encoded` input bytes so far (saturating).
    func allowedDecodedBytes(encoded: Int) -> Int {
        var allowed = Int.max
        if let maximumDecodedBytes { allowed = Swift.max(0, maximumDecodedBytes) }
        if let maximumRatio {
            let (product, overflow) = Swift.max(0, maximumRatio).multipliedReportingOverflow(by: encoded)
            allowed = Swift.min(allowed, Swift.max(Swift.max(0, ratioGraceBytes), overflow ? Int.max : product))
        }
        return allowed
    }

    /// The error for `decoded` bytes from `encoded`, which exceeds ``allowedDecodedBytes(encoded:)``.
    func exceededError(decoded: Int, encoded: Int) -> CompressionError.Code {
        if let maximumDecodedBytes, decoded > maximumDecodedBytes {
            return .decodedSizeExceeded(limit: maximumDecodedBytes, decoded: decoded)
        }
        return .ratioExceeded(ratio: maximumRatio ?? 0, grace: ratioGraceBytes, decoded: decoded, encoded: encoded)
    }
}

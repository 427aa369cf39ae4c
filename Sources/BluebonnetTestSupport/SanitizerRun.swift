import Glibc

/// Whether the tests run under a sanitizer: `scripts/sanitize.sh` sets `BLUEBONNET_SANITIZER` to
/// `thread` or `address`.
///
/// A sanitizer multiplies memory (AddressSanitizer's shadow and quarantine) and time
/// (ThreadSanitizer's 5–15×), so the few checks that bound peak memory or wall-clock time skip
/// that bound under one, each saying why; everything else they check still runs.
public enum SanitizerRun {
    /// `thread`, `address`, or nil when no sanitizer is on.
    public static let kind: String? = getenv("BLUEBONNET_SANITIZER").map { String(cString: $0) }

    /// Whether a sanitizer is on.
    public static var isActive: Bool { kind != nil }

    /// A suite's time limit in minutes: `minutes`, or five times that under a sanitizer, where a
    /// test that takes a second alone can wait minutes for a thread while the suites around it
    /// run five to fifteen times slower. The limit is there to catch hangs, not to time the code.
    public static func timeLimitMinutes(_ minutes: Int) -> Int { isActive ? minutes * 5 : minutes }
}

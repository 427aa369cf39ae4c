import Glibc

/// Request latencies in a fixed-size log-linear histogram: 64 buckets per power of two (under
/// 1.6 % error), nanoseconds up to ~18 minutes, 21 KiB whatever the request count, so that a
/// worker's peak RSS does not grow with its request rate.
struct LatencyHistogram: Sendable {
    private static let subBits = 6
    private static let subCount = 1 << subBits
    private static let bucketCount = (64 - subBits) * subCount
    private var counts = [UInt64](repeating: 0, count: bucketCount)
    private(set) var total: UInt64 = 0

    mutating func record(nanoseconds: UInt64) {
        counts[Self.index(of: nanoseconds)] += 1
        total += 1
    }

    mutating func merge(_ other: LatencyHistogram) {
        for i in counts.indices { counts[i] += other.counts[i] }
        total += other.total
    }

    /// The latency at `quantile` (0...1) in microseconds, the middle of its bucket.
    func percentileMicroseconds(_ quantile: Double) -> Double {
        guard total > 0 else { return 0 }
        let rank = max(1, UInt64((Double(total) * quantile).rounded(.up)))
        var seen: UInt64 = 0
        for (i, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return Self.midpoint(of: i) / 1_000 }
        }
        return 0
    }

    private static func index(of value: UInt64) -> Int {
        if value < UInt64(subCount) { return Int(value) }
        let magnitude = 63 - value.leadingZeroBitCount  // >= subBits
        let shift = magnitude - subBits
        let sub = Int((value >> UInt64(shift)) & UInt64(subCount - 1))
        return min((shift + 1) * subCount + sub, bucketCount - 1)
    }

    private static func midpoint(of index: Int) -> Double {
        if index < subCount { return Double(index) }
        let shift = index / subCount - 1
        let sub = index % subCount
        let low = Double(UInt64(subCount + sub) << UInt64(shift))
        return low + Double(UInt64(1) << UInt64(shift)) / 2
    }
}

/// CPU time and peak memory of this process, from the kernel.
enum ProcessResources {
    /// User + system CPU seconds used so far (getrusage(RUSAGE_SELF)).
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    static func seconds(_ time: timeval) -> Double {
        Double(time.tv_sec) + Double(time.tv_usec) / 1e6
    }

    /// Peak resident set size in KiB: `VmHWM` from /proc/self/status (getrusage's maxrss as a
    /// fallback).
    static func peakRSSKiB() -> Int {
        if let status = readFile("/proc/self/status") {
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                let digits = line.dropFirst(6).filter(\.isNumber)
                if let kib = Int(String(digits)) { return kib }
            }
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
    }

    private static func readFile(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What one worker process prints: one JSON line on stdout. The C reference prints the same keys;
/// for wrk the coordinator builds it from wrk's report and the child's rusage.
struct WorkerResult: Codable, Sendable {
    var client: String
    var scenario: String
    /// Requests that completed and passed every check during the measured interval.
    var requests: Int
    /// Requests that failed (error, unexpected status, wrong body length or content).
    var failures: Int
    /// Response body bytes received (after content decoding) plus request body bytes sent.
    var bytes: Int
    /// Length of the measured interval.
    var wallSeconds: Double
    /// User + system CPU seconds of the process during the measured interval.
    var cpuSeconds: Double
    /// Peak resident set size of the process over its whole life, KiB.
    var peakRSSKiB: Int
    var p50Microseconds: Double
    var p99Microseconds: Double
    /// Set when the worker could not run at all (the other fields are then zero).
    var error: String?
    /// Something a reader of the numbers should know (e.g. "no TLS resumption API").
    var note: String?

    enum CodingKeys: String, CodingKey {
        case client, scenario, requests, failures, bytes, error, note
        case wallSeconds = "wall_s"
        case cpuSeconds = "cpu_s"
        case peakRSSKiB = "peak_rss_kib"
        case p50Microseconds = "p50_us"
        case p99Microseconds = "p99_us"
    }

    static func failed(_ client: String, _ scenario: String, _ message: String) -> WorkerResult {
        WorkerResult(
            client: client, scenario: scenario, requests: 0, failures: 0, bytes: 0, wallSeconds: 0,
            cpuSeconds: 0, peakRSSKiB: 0, p50Microseconds: 0, p99Microseconds: 0, error: message,
            note: nil)
    }
}

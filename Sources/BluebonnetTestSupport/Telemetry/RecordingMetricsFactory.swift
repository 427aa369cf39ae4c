import CoreMetrics
import Synchronization

/// An in-memory swift-metrics backend for tests: every metric made through it is kept, with every
/// value it was given, and can be looked up by label and dimensions.
///
/// Metrics with the same kind, label and dimensions (in any order) share one ``RecordedMetric``,
/// as in real backends. Give it to one session (`configuration.metrics = .factory(recorder)`), so
/// that tests running in parallel never see each other's values; `MetricsSystem.bootstrap` can
/// only be called once per process.
public final class RecordingMetricsFactory: MetricsFactory, Sendable {
    private let metrics = Mutex<[RecordedMetric.Key: RecordedMetric]>([:])

    /// An empty recorder.
    public init() {}

    /// Every metric made so far with `label`, in no particular order.
    public func metrics(_ label: String) -> [RecordedMetric] {
        metrics.withLock { $0.values.filter { $0.label == label } }
    }

    /// The metric with `label` whose dimensions are exactly `dimensions`, if one was made.
    public func metric(_ label: String, _ dimensions: [String: String]) -> RecordedMetric? {
        metrics(label).first { $0.dimensions == dimensions }
    }

    /// Every label made so far.
    public var labels: Set<String> { metrics.withLock { Set($0.values.map(\.label)) } }

    private func make(_ kind: RecordedMetric.Kind, _ label: String, _ dimensions: [(String, String)]) -> RecordedMetric {
        let key = RecordedMetric.Key(kind: kind, label: label, dimensions: Dictionary(dimensions) { first, _ in first })
        return metrics.withLock { metrics in
            if let existing = metrics[key] { return existing }
            let metric = RecordedMetric(key: key)
            metrics[key] = metric
            return metric
        }
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        make(.counter, label, dimensions)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        make(.floatingPointCounter, label, dimensions)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        make(.meter, label, dimensions)
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        make(aggregate ? .recorder : .gauge, label, dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        make(.timer, label, dimensions)
    }

    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyMeter(_ handler: any MeterHandler) {}
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}
}

/// One metric a ``RecordingMetricsFactory`` made, and what it was given.
public final class RecordedMetric: CounterHandler, FloatingPointCounterHandler, MeterHandler, RecorderHandler, TimerHandler,
    Sendable
{
    /// What was made.
    public enum Kind: Hashable, Sendable {
        case counter, floatingPointCounter, meter, recorder, gauge, timer
    }

    struct Key: Hashable, Sendable {
        let kind: Kind
        let label: String
        let dimensions: [String: String]
    }

    private struct State {
        var values: [Double] = []
        var value: Double = 0
        var displayUnit: TimeUnit?
    }

    let key: Key
    private let state = Mutex(State())

    init(key: Key) { self.key = key }

    /// The metric's kind.
    public var kind: Kind { key.kind }
    /// The metric's label.
    public var label: String { key.label }
    /// The metric's dimensions.
    public var dimensions: [String: String] { key.dimensions }
    /// Recorders and gauges: each value recorded. Timers: each duration, in nanoseconds. Counters
    /// and meters: the value after each change, in order.
    public var values: [Double] { state.withLock { $0.values } }
    /// Counters: the total. Meters and gauges: the current value. Others: the last value.
    public var value: Double { state.withLock { $0.value } }
    /// A timer's preferred display unit, if it was given one.
    public var displayUnit: TimeUnit? { state.withLock { $0.displayUnit } }

    private func changed(_ update: (inout Double) -> Void) {
        state.withLock { state in
            update(&state.value)
            state.values.append(state.value)
        }
    }

    // Counter, FloatingPointCounter
    public func increment(by amount: Int64) { changed { $0 += Double(amount) } }
    public func reset() { changed { $0 = 0 } }
    // FloatingPointCounter, Meter
    public func increment(by amount: Double) { changed { $0 += amount } }
    // Meter
    public func decrement(by amount: Double) { changed { $0 -= amount } }
    public func set(_ value: Int64) { changed { $0 = Double(value) } }
    public func set(_ value: Double) { changed { $0 = value } }
    // Recorder
    public func record(_ value: Int64) { changed { $0 = Double(value) } }
    public func record(_ value: Double) { changed { $0 = value } }
    // Timer
    public func recordNanoseconds(_ duration: Int64) { changed { $0 = Double(duration) } }
    public func preferDisplayUnit(_ unit: TimeUnit) { state.withLock { $0.displayUnit = unit } }
}

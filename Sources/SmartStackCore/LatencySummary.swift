/// Percentiles of a latency sample, in milliseconds: what the store measures of its commits and what
/// `GetStatistics` reports as `commitLatency`.
public struct LatencySummary: Sendable, Hashable {
    public var p50: Double
    public var p90: Double
    public var p99: Double
    public var max: Double
    /// How many calls the percentiles are over.
    public var samples: Int

    public init(p50: Double, p90: Double, p99: Double, max: Double, samples: Int) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.max = max
        self.samples = samples
    }
}

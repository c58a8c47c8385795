#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The time constants the behaviour aggregates decay at; every decayed count belongs to one of them.
enum DecayScale: Int, CaseIterable, Sendable {
    case fourHours, threeDays, sevenDays, fourteenDays, twentyOneDays, twentyEightDays, thirtyDays

    /// The time constant, seconds.
    var tau: Double {
        switch self {
        case .fourHours: 4 * 3_600
        case .threeDays: 3 * 86_400
        case .sevenDays: 7 * 86_400
        case .fourteenDays: 14 * 86_400
        case .twentyOneDays: 21 * 86_400
        case .twentyEightDays: 28 * 86_400
        case .thirtyDays: 30 * 86_400
        }
    }

    static let shortestTau = allCases.map(\.tau).min() ?? 1
}

/// The shared time base of every decayed count, so that reading a count costs no `exp`.
///
/// A count whose every unit decays as `exp(-age / tau)` is kept as its *sum at the reference time*: an event at
/// time `t` adds `exp((t - reference) / tau)`, and the count at `now` is the sum times `exp(-(now - reference) / tau)`.
/// That factor is the same for every count of one time constant, so a query computes one `exp` per time
/// constant instead of one per count, and a count is one `Double` with no time of its own.
///
/// Sums grow by `e` every `tau` of event time; before the shortest time constant's factor passes `e^64` the
/// owner rescales every sum to a new reference (`rescale()` gives the factors), which is also when it drops
/// counts that have decayed to nothing.
struct DecayClock: Sendable, Hashable {
    /// Rescale once the reference is this many shortest time constants old (e^64 ≈ 6·10^27: far from overflow).
    static let rescaleHorizon = 64.0

    /// The reference time, microseconds since the epoch; meaningful once `started`.
    var reference: Int64 = 0
    /// The latest time a count was added at: counts are read no earlier (a count is never read before it grew).
    var latest: Int64 = .min
    var started = false

    /// Whether recording at `time` first needs a rescale (the reference would be too old to add at `time`).
    func needsRescale(toRecordAt time: Int64) -> Bool {
        started && Double(time &- reference) / 1_000_000 > Self.rescaleHorizon * DecayScale.shortestTau
    }

    /// Notes that counts are added at `time` (call before computing their weights).
    mutating func record(at time: Int64) {
        if !started {
            started = true
            reference = time
        }
        latest = max(latest, time)
    }

    /// What one event at `time` adds to a sum of time constant `tau`.
    @inline(__always)
    func weight(at time: Int64, tau: Double) -> Double {
        exp(Double(time &- reference) / 1_000_000 / tau)
    }

    /// The factor that turns sums of every time constant into counts at `now` (indexed by `DecayScale`).
    func factors(at now: Int64) -> DecayFactors {
        guard started else { return DecayFactors(values: SIMD8(repeating: 0)) }
        let age = Double(max(now, latest) &- reference) / 1_000_000
        var values = SIMD8<Double>(repeating: 0)
        for scale in DecayScale.allCases { values[scale.rawValue] = exp(-age / scale.tau) }
        return DecayFactors(values: values)
    }

    /// Moves the reference to the latest time; returns the factors every sum must be multiplied by.
    mutating func rescale() -> DecayFactors {
        let factors = factors(at: latest)
        reference = latest
        return factors
    }
}

/// One factor per `DecayScale`: multiplying a sum by its scale's factor gives the count at one time.
struct DecayFactors: Sendable {
    var values: SIMD8<Double>

    @inline(__always)
    subscript(scale: DecayScale) -> Double { values[scale.rawValue] }
}

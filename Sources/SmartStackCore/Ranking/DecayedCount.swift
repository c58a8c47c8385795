#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A count whose every unit decays as `exp(-age / tau)`: recent events weigh more.
///
/// Stored as one value and the time it was last brought up to date, so adding and reading cost one
/// `exp` each and nothing grows with the number of events counted.
struct DecayedCount: Sendable, Hashable {
    var value: Double = 0
    var time: Int64 = 0

    /// The count at `now` (microseconds since the epoch), with time constant `tau` seconds.
    @inline(__always)
    func value(at now: Int64, tau: Double) -> Double {
        guard value != 0 else { return 0 }
        let age = Double(now &- time) / 1_000_000
        return age <= 0 ? value : value * exp(-age / tau)
    }

    /// Adds `weight` at `now`. Events must not be older than the last one added (the engine is fed in time order).
    @inline(__always)
    mutating func add(_ weight: Double = 1, at now: Int64, tau: Double) {
        value = value(at: now, tau: tau) + weight
        time = max(time, now)
    }
}

/// Natural logarithm, guarded so that a zero share gives a large negative number and never `-inf`.
@inline(__always)
func safeLog(_ x: Double) -> Double { log(max(x, 1e-9)) }

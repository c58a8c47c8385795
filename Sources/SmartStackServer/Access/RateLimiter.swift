public import Dispatch
public import SmartStackCore
import Synchronization

/// A token bucket per app for recording calls (and per uid for the shell's recording calls, which act for no app):
/// each may make `rate` calls a second on average and `burst` at once. A call over the limit is refused before
/// anything of it is applied or stored, with the time until the next token. Measured on the monotonic clock, so
/// setting the system clock changes nothing.
public final class RateLimiter: Sendable {
    /// Whose bucket: an app's, or a uid's for calls that act for no app.
    private enum Key: Hashable {
        case app(AppID)
        case uid(UInt32)
    }

    private struct Bucket {
        var tokens: Double
        /// Monotonic nanoseconds of the last refill.
        var refilled: UInt64
    }

    /// Calls a second per app (`rateLimitPerApp`); 0 turns the limit off.
    public let rate: Double
    /// The most calls an idle app may make at once (`rateLimitBurst`).
    public let burst: Double
    private let buckets = Mutex<[Key: Bucket]>([:])
    /// Buckets kept before full ones are dropped (a full bucket is the same as none).
    private static let pruneAbove = 4_096

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = max(1, burst)
    }

    /// Takes one token for `app`: `nil` when the call may go on, else the seconds until it would be allowed.
    public func take(_ app: AppID, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Double? {
        take(.app(app), now: now)
    }

    /// Takes one token for a uid's calls that act for no app (the shell's recording calls).
    public func take(uid: UInt32, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Double? {
        take(.uid(uid), now: now)
    }

    private func take(_ key: Key, now: UInt64) -> Double? {
        guard rate > 0 else { return nil }
        return buckets.withLock { buckets -> Double? in
            var bucket = buckets[key] ?? Bucket(tokens: burst, refilled: now)
            let elapsed = Double(now &- bucket.refilled) / 1e9
            bucket.tokens = min(burst, bucket.tokens + max(0, elapsed) * rate)
            bucket.refilled = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return (1 - bucket.tokens) / rate
            }
            bucket.tokens -= 1
            buckets[key] = bucket
            if buckets.count > Self.pruneAbove { prune(&buckets, now: now) }
            return nil
        }
    }

    private func prune(_ buckets: inout [Key: Bucket], now: UInt64) {
        buckets = buckets.filter { _, bucket in
            bucket.tokens + Double(now &- bucket.refilled) / 1e9 * rate < burst
        }
    }
}

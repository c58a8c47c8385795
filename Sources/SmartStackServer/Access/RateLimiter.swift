public import Dispatch
public import SmartStackCore
import Synchronization

/// A token bucket per app for recording calls: each app may make `rate` calls a second on average and `burst` at
/// once. A call over the limit is refused before anything of it is applied or stored, with the time until the
/// app's next token. Measured on the monotonic clock, so setting the system clock changes nothing.
public final class RateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        /// Monotonic nanoseconds of the last refill.
        var refilled: UInt64
    }

    /// Calls a second per app (`rateLimitPerApp`); 0 turns the limit off.
    public let rate: Double
    /// The most calls an idle app may make at once (`rateLimitBurst`).
    public let burst: Double
    private let buckets = Mutex<[AppID: Bucket]>([:])
    /// Buckets kept before full ones are dropped (a full bucket is the same as none).
    private static let pruneAbove = 4_096

    public init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = max(1, burst)
    }

    /// Takes one token for `app`: `nil` when the call may go on, else the seconds until it would be allowed.
    public func take(_ app: AppID, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Double? {
        guard rate > 0 else { return nil }
        return buckets.withLock { buckets -> Double? in
            var bucket = buckets[app] ?? Bucket(tokens: burst, refilled: now)
            let elapsed = Double(now &- bucket.refilled) / 1e9
            bucket.tokens = min(burst, bucket.tokens + max(0, elapsed) * rate)
            bucket.refilled = now
            guard bucket.tokens >= 1 else {
                buckets[app] = bucket
                return (1 - bucket.tokens) / rate
            }
            bucket.tokens -= 1
            buckets[app] = bucket
            if buckets.count > Self.pruneAbove { prune(&buckets, now: now) }
            return nil
        }
    }

    private func prune(_ buckets: inout [AppID: Bucket], now: UInt64) {
        buckets = buckets.filter { _, bucket in
            bucket.tokens + Double(now &- bucket.refilled) / 1e9 * rate < burst
        }
    }
}

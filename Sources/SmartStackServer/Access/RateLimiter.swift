public import Dispatch
public import SmartStackCore
import Synchronization

/// Token buckets for recording calls: one per app (`rateLimitPerApp`) and one per uid over all of its calls
/// (`rateLimitPerUID`, the shell's calls, which act for no app, included). Each may make its rate of calls a second
/// on average and `burst` at once. A call over either limit is refused before anything of it is applied or stored,
/// with the limit that refused it and the time until it would be allowed; a refused call takes no token from the
/// other bucket. Measured on the monotonic clock, so setting the system clock changes nothing.
public final class RateLimiter: Sendable {
    /// Whose bucket: an app's, or a uid's.
    private enum Key: Hashable {
        case app(AppID)
        case uid(UInt32)
    }

    private struct Bucket {
        var tokens: Double
        /// Monotonic nanoseconds of the last refill.
        var refilled: UInt64
    }

    /// Which limit refused a call.
    public enum Limit: String, Sendable, Hashable {
        case perApp = "rateLimitPerApp"
        case perUID = "rateLimitPerUID"
    }

    /// A refused call: the limit (its configuration key) and the seconds until the call would be allowed.
    public struct Refusal: Sendable, Hashable {
        public var limit: Limit
        public var retryAfter: Double
    }

    /// Calls a second per app (`rateLimitPerApp`); 0 turns the limit off.
    public let rate: Double
    /// Calls a second per uid, over all of its apps and its shell's calls (`rateLimitPerUID`); 0 turns it off.
    public let ratePerUID: Double
    /// The most calls an idle app (or uid) may make at once (`rateLimitBurst`).
    public let burst: Double
    private let buckets = Mutex<[Key: Bucket]>([:])
    /// Buckets kept before full ones are dropped (a full bucket is the same as none).
    private static let pruneAbove = 4_096

    public init(rate: Double, perUID: Double = 0, burst: Double) {
        self.rate = rate
        self.ratePerUID = perUID
        self.burst = max(1, burst)
    }

    /// Takes one token from `app`'s bucket and one from `uid`'s (either may be nil: not counted there): `nil` when
    /// the call may go on, else which limit refused it and when to retry (then neither bucket is charged).
    public func take(app: AppID?, uid: UInt32?, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> Refusal? {
        let appKey = rate > 0 ? app.map(Key.app) : nil
        let uidKey = ratePerUID > 0 ? uid.map(Key.uid) : nil
        guard appKey != nil || uidKey != nil else { return nil }
        return buckets.withLock { buckets -> Refusal? in
            var appBucket: Bucket?
            if let appKey {
                let bucket = refill(buckets[appKey], rate: rate, now: now)
                buckets[appKey] = bucket
                guard bucket.tokens >= 1 else { return Refusal(limit: .perApp, retryAfter: (1 - bucket.tokens) / rate) }
                appBucket = bucket
            }
            if let uidKey {
                let bucket = refill(buckets[uidKey], rate: ratePerUID, now: now)
                guard bucket.tokens >= 1 else {
                    buckets[uidKey] = bucket
                    return Refusal(limit: .perUID, retryAfter: (1 - bucket.tokens) / ratePerUID)
                }
                buckets[uidKey] = Bucket(tokens: bucket.tokens - 1, refilled: now)
            }
            if let appKey, let appBucket { buckets[appKey] = Bucket(tokens: appBucket.tokens - 1, refilled: now) }
            if buckets.count > Self.pruneAbove { prune(&buckets, now: now) }
            return nil
        }
    }

    /// `bucket` (a full one when there is none yet) with the tokens earned since it was last refilled.
    private func refill(_ bucket: Bucket?, rate: Double, now: UInt64) -> Bucket {
        guard let bucket else { return Bucket(tokens: burst, refilled: now) }
        let elapsed = Double(now &- bucket.refilled) / 1e9
        return Bucket(tokens: min(burst, bucket.tokens + max(0, elapsed) * rate), refilled: now)
    }

    private func prune(_ buckets: inout [Key: Bucket], now: UInt64) {
        buckets = buckets.filter { key, bucket in
            let rate: Double
            switch key {
            case .app: rate = self.rate
            case .uid: rate = ratePerUID
            }
            return bucket.tokens + Double(now &- bucket.refilled) / 1e9 * rate < burst
        }
    }
}

import SmartStackCore
import SmartStackServer
import Testing

@Suite("Rate limiter")
struct RateLimiterTests {
    static let second: UInt64 = 1_000_000_000

    @Test("an app may make the burst at once, then the rate; the refusal says when to retry")
    func burstThenRate() throws {
        let limiter = RateLimiter(rate: 10, burst: 5)
        let app = try AppID("org.example.a")
        let start = 7 * Self.second
        for _ in 0..<5 { #expect(limiter.take(app: app, uid: nil, now: start) == nil) }
        let refusal = try #require(limiter.take(app: app, uid: nil, now: start))
        #expect(refusal.limit == .perApp && abs(refusal.retryAfter - 0.1) < 1e-9)
        // A tenth of a second later one more token is there, and only one.
        #expect(limiter.take(app: app, uid: nil, now: start + Self.second / 10) == nil)
        #expect(limiter.take(app: app, uid: nil, now: start + Self.second / 10) != nil)
        // Idle for long, the bucket holds the burst again, not more.
        let later = start + 100 * Self.second
        for _ in 0..<5 { #expect(limiter.take(app: app, uid: nil, now: later) == nil) }
        #expect(limiter.take(app: app, uid: nil, now: later) != nil)
    }

    @Test("apps have buckets of their own; a rate of 0 is no limit")
    func perAppAndOff() throws {
        let limiter = RateLimiter(rate: 1, burst: 1)
        let a = try AppID("org.example.a")
        let b = try AppID("org.example.b")
        #expect(limiter.take(app: a, uid: nil, now: Self.second) == nil)
        #expect(limiter.take(app: a, uid: nil, now: Self.second) != nil)
        #expect(limiter.take(app: b, uid: nil, now: Self.second) == nil)
        let off = RateLimiter(rate: 0, burst: 1)
        for _ in 0..<10_000 { #expect(off.take(app: a, uid: 7, now: Self.second) == nil) }
    }

    @Test("a uid's bucket (the shell's calls) is its own, apart from every app's and every other uid's")
    func perUID() throws {
        let limiter = RateLimiter(rate: 1, perUID: 1, burst: 2)
        let app = try AppID("org.example.a")
        #expect(limiter.take(app: nil, uid: 1_000, now: Self.second) == nil)
        #expect(limiter.take(app: nil, uid: 1_000, now: Self.second) == nil)
        #expect(limiter.take(app: nil, uid: 1_000, now: Self.second) != nil)
        #expect(limiter.take(app: nil, uid: 1_001, now: Self.second) == nil)
        #expect(limiter.take(app: app, uid: nil, now: Self.second) == nil)
    }

    @Test("many apps: idle full buckets are dropped, a limited app keeps its state")
    func pruning() throws {
        let limiter = RateLimiter(rate: 1, burst: 2)
        let busy = try AppID("org.example.busy")
        #expect(limiter.take(app: busy, uid: nil, now: Self.second) == nil)
        #expect(limiter.take(app: busy, uid: nil, now: Self.second) == nil)
        for index in 0..<5_000 {
            #expect(limiter.take(app: try AppID("org.example.app\(index)"), uid: nil, now: 10 * Self.second) == nil)
        }
        // Still empty-ish: 9 s later it has refilled to the burst (2), not beyond.
        #expect(limiter.take(app: busy, uid: nil, now: 10 * Self.second) == nil)
        #expect(limiter.take(app: busy, uid: nil, now: 10 * Self.second) == nil)
        #expect(limiter.take(app: busy, uid: nil, now: 10 * Self.second) != nil)
    }

    @Test("a uid's apps share its bucket: many apps each under their rate are refused at the uid's, charging neither")
    func uidOverItsApps() throws {
        let limiter = RateLimiter(rate: 1, perUID: 10, burst: 4)
        let apps = try (0..<8).map { try AppID("org.example.app\($0)") }
        var refusals: [RateLimiter.Refusal] = []
        for app in apps {
            if let refusal = limiter.take(app: app, uid: 65_534, now: Self.second) { refusals.append(refusal) }
        }
        // The uid's burst (4) went to the first four apps; the rest are refused by the uid's limit, with its wait.
        #expect(refusals.count == 4)
        #expect(refusals.allSatisfy { $0.limit == .perUID && abs($0.retryAfter - 0.1) < 1e-9 })
        // Another uid is not limited by this one, even for the same apps.
        #expect(limiter.take(app: apps[7], uid: 1_000, now: Self.second) == nil)
        // A refused call charged no app: app 7 still has its burst less the one call uid 1000 made.
        for _ in 0..<3 { #expect(limiter.take(app: apps[7], uid: nil, now: Self.second) == nil) }
        #expect(limiter.take(app: apps[7], uid: nil, now: Self.second)?.limit == .perApp)
        // An app's own limit still names itself, and does not spend the uid's token.
        let uidAfter = Self.second + Self.second / 10  // one uid token back
        #expect(limiter.take(app: apps[7], uid: 65_534, now: uidAfter)?.limit == .perApp)
        #expect(limiter.take(app: apps[0], uid: 65_534, now: uidAfter) == nil)
        #expect(limiter.take(app: apps[1], uid: 65_534, now: uidAfter)?.limit == .perUID)
    }
}

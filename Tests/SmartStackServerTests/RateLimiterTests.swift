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
        for _ in 0..<5 { #expect(limiter.take(app, now: start) == nil) }
        let wait = try #require(limiter.take(app, now: start))
        #expect(abs(wait - 0.1) < 1e-9)
        // A tenth of a second later one more token is there, and only one.
        #expect(limiter.take(app, now: start + Self.second / 10) == nil)
        #expect(limiter.take(app, now: start + Self.second / 10) != nil)
        // Idle for long, the bucket holds the burst again, not more.
        let later = start + 100 * Self.second
        for _ in 0..<5 { #expect(limiter.take(app, now: later) == nil) }
        #expect(limiter.take(app, now: later) != nil)
    }

    @Test("apps have buckets of their own; a rate of 0 is no limit")
    func perAppAndOff() throws {
        let limiter = RateLimiter(rate: 1, burst: 1)
        let a = try AppID("org.example.a")
        let b = try AppID("org.example.b")
        #expect(limiter.take(a, now: Self.second) == nil)
        #expect(limiter.take(a, now: Self.second) != nil)
        #expect(limiter.take(b, now: Self.second) == nil)
        let off = RateLimiter(rate: 0, burst: 1)
        for _ in 0..<10_000 { #expect(off.take(a, now: Self.second) == nil) }
    }

    @Test("a uid's bucket (the shell's calls) is its own, apart from every app's and every other uid's")
    func perUID() throws {
        let limiter = RateLimiter(rate: 1, burst: 2)
        let app = try AppID("org.example.a")
        #expect(limiter.take(uid: 1_000, now: Self.second) == nil)
        #expect(limiter.take(uid: 1_000, now: Self.second) == nil)
        #expect(limiter.take(uid: 1_000, now: Self.second) != nil)
        #expect(limiter.take(uid: 1_001, now: Self.second) == nil)
        #expect(limiter.take(app, now: Self.second) == nil)
    }

    @Test("many apps: idle full buckets are dropped, a limited app keeps its state")
    func pruning() throws {
        let limiter = RateLimiter(rate: 1, burst: 2)
        let busy = try AppID("org.example.busy")
        #expect(limiter.take(busy, now: Self.second) == nil)
        #expect(limiter.take(busy, now: Self.second) == nil)
        for index in 0..<5_000 {
            #expect(limiter.take(try AppID("org.example.app\(index)"), now: 10 * Self.second) == nil)
        }
        // Still empty-ish: 9 s later it has refilled to the burst (2), not beyond.
        #expect(limiter.take(busy, now: 10 * Self.second) == nil)
        #expect(limiter.take(busy, now: 10 * Self.second) == nil)
        #expect(limiter.take(busy, now: 10 * Self.second) != nil)
    }
}

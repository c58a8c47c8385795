import SmartStackCore
import Testing

@testable import SmartStackServer

import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The service keeps its own clock: no call's date moves it, deletes another app's donations, or reads a stale
/// decision (docs: README "Time").
@Suite("Service clock")
struct ServiceClockTests {
    typealias F = ServerFixture

    @Test("a date past the allowed skew is refused naming date and how far ahead it was; nothing is stored")
    func futureDateRefused() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        let far = Timestamp(microseconds: 253_402_300_799_000_000)  // 9999-12-31T23:59:59Z
        for date in [far, clock.now().adding(seconds: 301)] {
            do {
                _ = try await host.donate(F.donation("mail", id: "f", at: date), idGiven: true)
                Issue.record("a date \(date.rfc3339) was accepted")
            } catch {
                guard case .core(.invalidParameter(let parameter, let reason)) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(parameter == "date")
                #expect(reason.contains("ahead of the service's clock"), "\(reason)")
            }
        }
        #expect(try await host.listDonations(app: F.app("mail"), after: nil, limit: 10).isEmpty)
        // The engine's clock did not move: the service's time is still the clock's.
        #expect(await host.serviceTime() == clock.now())
    }

    @Test("a date a little ahead (within the skew) is taken as the service's time; a retry of it is the same call")
    func smallSkewIsClamped() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        let ahead = clock.now().adding(seconds: 120)
        #expect(try await host.donate(F.donation("mail", id: "s", at: ahead), idGiven: true) == "s")
        let stored = try await host.listDonations(app: F.app("mail"), after: nil, limit: 10)
        #expect(stored.map(\.date) == [clock.now()])
        clock.advance(seconds: 5)
        #expect(try await host.donate(F.donation("mail", id: "s", at: ahead), idGiven: true) == "s")
        #expect(try await host.listDonations(app: F.app("mail"), after: nil, limit: 10).count == 1)
        #expect(await host.serviceTime() == clock.now())
        // Retried once its date is no longer ahead: still the same donation, not a Conflict.
        clock.advance(seconds: 150)
        #expect(try await host.donate(F.donation("mail", id: "s", at: ahead), idGiven: true) == "s")
        #expect(try await host.listDonations(app: F.app("mail"), after: nil, limit: 10).count == 1)
        // Another donation under the id (another intent, or a date the first call could not have been stored at)
        // is a Conflict.
        do {
            _ = try await host.donate(F.donation("mail", id: "s", at: ahead.adding(seconds: -3_600)), idGiven: true)
            Issue.record("a donation under a used id was taken")
        } catch {
            guard case .core(.conflict) = error else {
                Issue.record("expected a Conflict, got \(error)")
                return
            }
        }
    }

    @Test("GetStack without a time answers for the service's time, as Explain does, and is at most 60 s old")
    func currentDecisionAgreesWithExplain() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail", "news", "maps"], clock: clock)
        for (index, app) in ["maps", "news", "maps", "mail", "maps"].enumerated() {
            clock.advance(seconds: 30)
            _ = try await host.donate(F.donation(app, id: "d\(index)", at: clock.now()), idGiven: true)
        }
        clock.advance(seconds: 7_200)
        let decision = try await host.stack(F.stack())
        #expect(decision.time == clock.now())
        let explained = try await host.explain(stack: F.stack(), instance: nil, at: nil)
        #expect(explained.decision.order == decision.order)
        #expect(explained.decision.entries.map(\.reason) == decision.entries.map(\.reason))
        for (a, b) in zip(explained.decision.entries, decision.entries) { #expect(abs(a.score - b.score) < 1e-12) }
        // Reused while fresh, decided again once older than 60 s.
        clock.advance(seconds: 30)
        #expect(try await host.stack(F.stack()).time == decision.time)
        clock.advance(seconds: 31)
        #expect(try await host.stack(F.stack()).time == clock.now())
    }

    @Test("a question about a time before the latest recorded event is answered from the history up to it")
    func historyReadsSeeOnlyTheirPast() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail", "news", "maps"], clock: clock)
        let early = clock.now().adding(seconds: 60)
        for index in 0..<6 {
            clock.advance(seconds: 30)
            _ = try await host.donate(F.donation("maps", id: "m\(index)", at: clock.now()), idGiven: true)
        }
        clock.advance(seconds: 600)
        for index in 0..<12 {
            clock.advance(seconds: 30)
            _ = try await host.donate(F.donation("news", id: "n\(index)", at: clock.now()), idGiven: true)
        }
        let now = try await host.stack(F.stack(), at: clock.now())
        #expect(now.top == "news")
        // Before the news donations, maps led; the later donations do not leak into that answer.
        let then = try await host.stack(F.stack(), at: early.adding(seconds: 200))
        #expect(then.top == "maps")
        let explained = try await host.explain(stack: F.stack(), instance: nil, at: early.adding(seconds: 200))
        #expect(explained.decision.order == then.order)
        #expect(explained.lastRotation.map { $0 <= early.adding(seconds: 200) } ?? true)
    }

    @Test("history reads (past questions, ListDonations pages) run at most maxHistoryReads at once, each correct")
    func historyReadsWaitTheirTurn() async throws {
        var limits = HostLimits()
        limits.maxHistoryReads = 2
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail", "news", "maps"], limits: limits, clock: clock)
        let early = clock.now().adding(seconds: 10)
        for index in 0..<300 {
            clock.advance(seconds: 20)
            let app = index < 30 ? "maps" : "news"
            _ = try await host.donate(F.donation(app, id: "d\(index)", at: clock.now()), idGiven: true)
        }
        let tops = try await withThrowingTaskGroup(of: String?.self) { group in
            for offset in 0..<8 {
                group.addTask { try await host.stack(F.stack(), at: early.adding(seconds: 400 + Double(offset))).top }
            }
            var tops: [String?] = []
            for try await top in group { tops.append(top) }
            return tops
        }
        #expect(tops == Array(repeating: "maps", count: 8))
        // ListDonations pages are reads of the history too, with the same bound.
        let pages = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 {
                group.addTask { try await host.listDonations(app: F.app("news"), after: nil, limit: 1_000).count }
            }
            var pages: [Int] = []
            for try await page in group { pages.append(page) }
            return pages
        }
        #expect(pages == Array(repeating: 270, count: 6))
        let (most, running, waiting) = await host.perform {
            ($0.historyReads.mostRunning, $0.historyReads.running, $0.historyReads.waitingCount)
        }
        #expect(most == 2 && running == 0 && waiting == 0)
        // Once the host stops, a read of the history is ServiceStopping.
        await host.stop()
        await #expect(throws: HostError.stopping) { _ = try await host.stack(F.stack(), at: early) }
    }

    /// A seeded sequence of calls by three apps with arbitrary dates (far past, far future, equal, out of order):
    /// no call of one app adds, removes or alters a donation another app has stored.
    @Test("no sequence of calls by one app changes another app's stored donations", arguments: 0..<200)
    func appsCannotTouchEachOthersDonations(seed: Int) async throws {
        var random = SeededGenerator(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        let clock = ManualClock()
        let apps = ["a", "b", "c"]
        let host = try await F.host(apps: apps, clock: clock)
        let dates: [(Timestamp) -> Timestamp] = [
            { _ in Timestamp(microseconds: 253_402_300_799_000_000) },  // 9999-12-31T23:59:59Z
            { _ in Timestamp(microseconds: -62_135_596_800_000_000) },  // 0001-01-01T00:00:00Z
            { $0.adding(seconds: 29 * 86_400) },
            { $0.adding(seconds: -29 * 86_400) },
            { $0.adding(seconds: -400 * 86_400) },
            { $0 },
            { $0.adding(seconds: 299) },
            { $0.adding(seconds: 301) },
            { $0.adding(seconds: -Double.random(in: 0...86_400, using: &random)) },
        ]
        var stored: [String: [String]] = [:]
        // Steps after which another app had donations to lose (the check is empty without them).
        var guarded = 0
        for step in 0..<24 {
            let app = apps[Int.random(in: 0..<3, using: &random)]
            let before = try await Self.listAll(host, apps: apps)
            clock.advance(seconds: Double.random(in: 0...30, using: &random))
            let date = dates[Int.random(in: 0..<dates.count, using: &random)](clock.now())
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1, 2:
                let id = "\(app)\(Int.random(in: 0..<6, using: &random))"
                _ = try? await host.donate(F.donation(app, id: id, at: date), idGiven: true)
            case 3:
                let own = stored[app] ?? []
                let ids = own.isEmpty ? ["none"] : [own[Int.random(in: 0..<own.count, using: &random)]]
                _ = try? await host.deleteDonations(app: F.app(app), filter: .ids(Set(ids)))
            case 4:
                _ = try? await host.record(
                    .engage(stack: F.stack(), instance: F.instance(app), kind: .tap, duration: nil, at: date))
                _ = try? await host.record(.look(stack: F.stack(), at: date))
            default:
                _ = try? await host.deleteDonations(app: F.app(app), filter: .all)
            }
            _ = try await host.stack(F.stack())
            let after = try await Self.listAll(host, apps: apps)
            for other in apps where other != app {
                #expect(
                    after[other] == before[other],
                    "seed \(seed) step \(step): \(app)'s call changed \(other)'s donations")
                if !(before[other] ?? []).isEmpty { guarded += 1 }
            }
            stored = after.mapValues { $0.map(\.id) }
        }
        #expect(guarded > 0, "seed \(seed): no app ever had donations another app's call could have changed")
    }

    static func listAll(_ host: EngineHost, apps: [String]) async throws -> [String: [Donation]] {
        var result: [String: [Donation]] = [:]
        for app in apps { result[app] = try await host.listDonations(app: F.app(app), after: nil, limit: 1_000) }
        return result
    }

    @Test(
        "the local UTC offset is worked out once per second: localtime_r's, and a zone change takes effect on the second it happens"
    )
    func localOffsetCache() {
        let local = LocalOffsetCache()
        for second in stride(from: 1_774_740_000, through: 1_774_760_000, by: 997) {
            var copy = second
            var parts = tm()
            localtime_r(&copy, &parts)
            #expect(local.offset(at: second) == Int32(parts.tm_gmtoff))
            #expect(local.offset(at: second) == Int32(parts.tm_gmtoff), "cached")
        }
        // A zone going from UTC+1 to UTC+2 at `change`, and one far west; each second's work counted.
        let change = 1_774_746_000
        let calls = Mutex(0)
        let zone = LocalOffsetCache { second in
            calls.withLock { $0 += 1 }
            return second < change ? 3_600 : 7_200
        }
        #expect(zone.offset(at: change - 1) == 3_600)
        #expect(zone.offset(at: change - 1) == 3_600)
        #expect(calls.withLock { $0 } == 1)
        #expect(zone.offset(at: change) == 7_200)
        #expect(zone.offset(at: change) == 7_200)
        #expect(calls.withLock { $0 } == 2)
        let west = LocalOffsetCache { _ in -43_200 }
        #expect(west.offset(at: 0) == -43_200)
        #expect(west.offset(at: 0) == -43_200)
        #expect(west.offset(at: -86_400) == -43_200)
    }
}

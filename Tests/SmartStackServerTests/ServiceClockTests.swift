import SmartStackCore
import SmartStackStore
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
        #expect(try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.isEmpty)
        // The engine's clock did not move: the service's time is still the clock's.
        #expect(await host.serviceTime() == clock.now())
    }

    @Test(
        "durations read with at most two units, the smaller rounded up",
        arguments: [
            (0.2, "1 s"), (90, "90 s"), (118.5, "119 s"), (120, "2 min"), (300, "5 min"), (300.2, "5 min 1 s"),
            (329, "5 min 29 s"), (7_199.5, "2 h"), (7_260, "2 h 1 min"), (10_799, "3 h"), (86_400, "24 h"),
            (172_800, "2 days"), (176_400, "2 days 1 h"), (259_199, "3 days"),
        ] as [(Double, String)])
    func durationText(seconds: Double, text: String) {
        #expect(EngineHost.duration(seconds) == text)
    }

    @Test("a date just past the skew says how far ahead it was, apart from the limit")
    func skewReasonIsExact() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        for (ahead, text) in [(301.0, "5 min 1 s"), (329.0, "5 min 29 s"), (3_700.0, "61 min 40 s")] {
            do {
                _ = try await host.donate(
                    F.donation("mail", id: "f", at: clock.now().adding(seconds: ahead)), idGiven: true)
                Issue.record("\(ahead) s ahead was accepted")
            } catch {
                guard case .core(.invalidParameter("date", let reason)) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(reason.contains("is \(text) ahead of the service's clock"), "\(reason)")
                #expect(reason.hasSuffix("at most 5 min ahead is accepted"), "\(reason)")
            }
        }
    }

    @Test("a date a little ahead (within the skew) is taken as the service's time; a retry of it is the same call")
    func smallSkewIsClamped() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        let ahead = clock.now().adding(seconds: 120)
        #expect(try await host.donate(F.donation("mail", id: "s", at: ahead), idGiven: true) == "s")
        let stored = try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations
        #expect(stored.map(\.date) == [clock.now()])
        clock.advance(seconds: 5)
        #expect(try await host.donate(F.donation("mail", id: "s", at: ahead), idGiven: true) == "s")
        #expect(try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.count == 1)
        #expect(await host.serviceTime() == clock.now())
        // Retried once its date is no longer ahead: still the same donation, not a Conflict.
        clock.advance(seconds: 150)
        #expect(try await host.donate(F.donation("mail", id: "s", at: ahead), idGiven: true) == "s")
        #expect(try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.count == 1)
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
        // ListDonations pages are reads of the history too, with the same bound (on places of their own).
        let pages = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await host.listDonations(app: F.app("news"), from: .beginning, limit: 1_000).donations.count
                }
            }
            var pages: [Int] = []
            for try await page in group { pages.append(page) }
            return pages
        }
        #expect(pages == Array(repeating: 270, count: 6))
        let places = await host.perform { host in
            [host.historyReads, host.pageReads].map { ($0.mostRunning, $0.running, $0.waitingCount) }
        }
        #expect(places.allSatisfy { $0 == (2, 0, 0) }, "\(places)")
        // Once the host stops, a read of the history is ServiceStopping.
        await host.stop()
        await #expect(throws: HostError.stopping) { _ = try await host.stack(F.stack(), at: early) }
    }

    @Test("a question about a recent past time keeps its answer after a later publish by time alone")
    func datedReadIsNotRewrittenByALaterPublish() async throws {
        var settings = EngineSettings()
        settings.swipeGracePeriod = 2
        settings.minimumTimeOnTop = 1
        let clock = ManualClock()
        let host = try await F.host(apps: ["a", "b"], settings: settings, clock: clock)
        let start = clock.now()
        func at(_ seconds: Double) -> Timestamp { start.adding(seconds: seconds) }
        for index in 0..<3 { _ = try await host.donate(F.donation("a", id: "a\(index)", at: start), idGiven: true) }
        try await host.record(
            .declareRelevance(
                RelevanceDeclaration(
                    target: .instance(F.instance("b")), contexts: [.dateInterval(start: at(2), end: at(6))]),
                at: start))
        // b rotates up at +2; the shell swipes a back at +2.5; b rotates up again when the grace ends (+4.5); the
        // relevance ends at +6 and a comes back: each a publish, the last ones by time alone.
        clock.advance(seconds: 2)
        _ = try await host.stack(F.stack())
        clock.advance(seconds: 0.5)
        try await host.record(
            .engage(stack: F.stack(), instance: F.instance("a"), kind: .swipeTo, duration: nil, at: clock.now()))
        _ = try await host.stack(F.stack())
        clock.advance(seconds: 2)
        let shown = try await host.stack(F.stack())
        #expect(shown.entries.first?.instance == F.instance("b").rawValue, "\(shown.entries.map(\.instance))")
        clock.advance(seconds: 0.7)
        let asked = try await host.stack(F.stack(), at: at(5))
        let explained = try await host.explain(stack: F.stack(), instance: nil, at: at(5))
        #expect(asked.entries.map(\.instance) == shown.entries.map(\.instance) && asked.revision == shown.revision)
        clock.advance(seconds: 0.8)
        let back = try await host.stack(F.stack())
        #expect(back.entries.first?.instance == F.instance("a").rawValue && back.revision > shown.revision)
        clock.advance(seconds: 1)
        // Asked again after the publish at +6: the same answer, not the order a later state makes of +5.
        let again = try await host.stack(F.stack(), at: at(5))
        #expect(again.entries.map(\.instance) == asked.entries.map(\.instance))
        #expect(again.entries.map(\.reason) == asked.entries.map(\.reason))
        #expect(again.revision == asked.revision)
        let explainedAgain = try await host.explain(stack: F.stack(), instance: nil, at: at(5))
        #expect(explainedAgain.decision.order == explained.decision.order)
        #expect(explainedAgain.decision.revision == explained.decision.revision)
    }

    @Test("a ListDonations page never waits for rebuilds: with every rebuild's place held, a page is still read")
    func pagesDoNotWaitForRebuilds() async throws {
        var limits = HostLimits()
        limits.maxHistoryReads = 2
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], limits: limits, clock: clock)
        _ = try await host.donate(F.donation("mail", id: "m", at: clock.now()), idGiven: true)
        // Every rebuild's place held, as by past questions replaying at idle priority on a machine under load (they
        // then keep their places for as long as the load lasts).
        await host.perform { $0.historyReads.running = 2 }
        let read = Task {
            try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10, reader: 1_000).donations
        }
        var listed: [String]?
        for _ in 0..<500 where listed == nil {
            let (most, running) = await host.perform { ($0.pageReads.mostRunning, $0.pageReads.running) }
            if most > 0, running == 0 { listed = try await read.value.map(\.id) }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(listed == ["m"], "the page waited for the rebuilds' places")
        // A page waiting when the host stops is answered ServiceStopping (the held places are never given back here).
        await host.stop()
        _ = try? await read.value
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
        for app in apps {
            result[app] = try await host.listDonations(app: F.app(app), from: .beginning, limit: 1_000).donations
        }
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

    @Test(
        "a date within the skew of the wall clock, ahead of a service's time that has not followed a step, is taken at the service's time"
    )
    func dateAheadOfAStepNotYetBelieved() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        clock.setWallAhead(seconds: 86_400)
        let date = clock.wallNow().adding(seconds: 5)
        #expect(try await host.donate(F.donation("mail", id: "w", at: date), idGiven: true) == "w")
        #expect(
            try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.map(\.date) == [
                clock.now()
            ])
        #expect(await host.serviceTime() == clock.now())
        // Beyond the skew of both, refused.
        await #expect(throws: HostError.self) {
            try await host.donate(F.donation("mail", id: "x", at: date.adding(seconds: 3_600)), idGiven: true)
        }
        // Retention cuts off from the earlier of the service's time and the wall clock.
        clock.setWallAhead(seconds: -86_400)
        #expect(await host.retentionCutoff == clock.wallNow().adding(seconds: -EngineSettings().retention))
    }
}

/// A system clock whose wall and boot readings the test sets, steadied as the service's is.
final class SteppedClock: ServiceClock {
    private let state: Mutex<(wall: Int64, boot: Int64, steady: SteadyTime)>

    init(_ start: Timestamp, confirmation: Double = SteadyTime.defaultConfirmation) {
        state = Mutex((start.microseconds, 0, SteadyTime(confirmation: Int64(confirmation * 1e6))))
    }

    func now() -> Timestamp {
        Timestamp(microseconds: state.withLock { $0.steady.time(wall: $0.wall, boot: $0.boot) })
    }

    func wallNow() -> Timestamp { Timestamp(microseconds: state.withLock { $0.wall }) }

    /// Time passes: both clocks advance.
    func advance(seconds: Double) {
        state.withLock {
            $0.wall += Int64(seconds * 1e6)
            $0.boot += Int64(seconds * 1e6)
        }
    }

    /// The wall clock alone jumps.
    func stepWall(seconds: Double) { state.withLock { $0.wall += Int64(seconds * 1e6) } }
}

@Suite("Service clock across wall-clock steps")
struct ClockStepTests {
    typealias F = ServerFixture

    /// The clock review's case: the wall clock set 30 days ahead by mistake and back a minute later. The service
    /// followed it at once before, published (its engine's time then stayed 30 days ahead, timers frozen), and a
    /// retention sweep dropped every donation.
    @Test(arguments: [SteadyTime.defaultConfirmation, 0])
    func aMistakenStepForwardMovesNothingAndDropsNoDonation(confirmation: Double) async throws {
        let clock = SteppedClock(F.start, confirmation: confirmation)
        let real = EngineHost(settings: EngineSettings(), clock: clock, log: InMemoryEventLog(), logger: F.logger)
        try await real.record(.registerKind(F.kind("mail"), at: clock.now()))
        for index in 0..<3 {
            clock.advance(seconds: 60)
            _ = try await real.donate(F.donation("mail", id: "d\(index)", at: clock.now()), idGiven: true)
        }
        clock.stepWall(seconds: 30 * 86_400)
        clock.advance(seconds: 30)
        await real.tick()
        await real.sweepRetention()
        guard confirmation > 0 else {
            // Believed at once (the service before): the engine's time went 30 days ahead and the sweep dropped
            // every donation.
            #expect(await real.serviceTime().seconds(since: F.start) > 29 * 86_400)
            #expect(try await real.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.isEmpty)
            return
        }
        #expect(await real.serviceTime().seconds(since: F.start) < 300)
        clock.stepWall(seconds: -30 * 86_400)
        clock.advance(seconds: 30)
        await real.tick()
        await real.sweepRetention()
        #expect(try await real.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.count == 3)
        let time = await real.serviceTime()
        #expect(time.seconds(since: F.start) > 200 && time.seconds(since: F.start) < 300, "\(time.rfc3339)")
    }
}

/// The service's time across steps of the wall clock (`SteadyTime`), from readings in seconds.
@Suite("Steady time")
struct SteadyTimeTests {
    static let second: Int64 = 1_000_000
    /// A wall clock at 2026-11-29 and a boot clock at an hour.
    static let wall0: Int64 = 1_795_000_000 * second
    static let boot0: Int64 = 3_600 * second

    /// Feeds readings `(wall, boot)` offsets in seconds from the start; returns the times in seconds from the start.
    static func run(_ readings: [(Double, Double)], confirmation: Double = 600) -> [Double] {
        var steady = SteadyTime(confirmation: Int64(confirmation * 1e6))
        return readings.map { wall, boot in
            let time = steady.time(wall: wall0 + Int64(wall * 1e6), boot: boot0 + Int64(boot * 1e6))
            return Double(time - wall0) / 1e6
        }
    }

    @Test func followsTheWallClockWhileTheyAgree() {
        // NTP slews within the tolerance: followed, never backwards.
        #expect(Self.run([(0, 0), (10, 10), (20.5, 20), (30, 30.4), (29.9, 30.5)]) == [0, 10, 20.5, 30, 30])
    }

    @Test func aForwardStepCorrectedWithinTheConfirmationNeverMovesTheTime() {
        let times = Self.run([(0, 0), (10, 10), (30 * 86_400 + 11, 11), (30 * 86_400 + 70, 70), (71, 71), (100, 100)])
        #expect(times == [0, 10, 11, 70, 71, 100])
    }

    @Test func aForwardStepThatHoldsIsFollowedAfterTheConfirmation() {
        let step = 3_600.0
        let times = Self.run([(0, 0), (step + 10, 10), (step + 300, 300), (step + 609, 609), (step + 611, 611)])
        #expect(times == [0, 10, 300, 609, step + 611])
        // Without a confirmation, at once (the service's behaviour before).
        #expect(Self.run([(0, 0), (step + 10, 10)], confirmation: 0) == [0, step + 10])
    }

    @Test func aBackwardStepSlowsTheTimeUntilTheWallClockCatchesUp() {
        // Back 100 s: on at half speed (5 s for the 10 s read over the step), never behind the wall clock, then the
        // wall clock again once it caught up.
        let times = Self.run([(0, 0), (-90, 10), (-40, 60), (10, 110), (110, 210), (130, 230)])
        #expect(times == [0, 5, 30, 55, 110, 130])
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func neverDecreasesAndStaysNearTheBootClock(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        var readings: [(Double, Double)] = []
        var boot = 0.0
        var offset = 0.0
        for _ in 0..<2_000 {
            boot += Double.random(in: 0...30, using: &generator)
            if Int.random(in: 0..<50, using: &generator) == 0 {
                offset += Double.random(in: -86_400...86_400, using: &generator)
            }
            readings.append((boot + offset + Double.random(in: -1...1, using: &generator), boot))
        }
        let times = Self.run(readings)
        for index in times.indices.dropFirst() {
            let (earlier, later) = (times[index - 1], times[index])
            #expect(later >= earlier)
            // It moves no faster than the boot clock unless it takes the wall clock's reading (in agreement, or a
            // step believed).
            let followedWall = abs(later - readings[index].0) < 1e-5
            #expect(followedWall || later - earlier <= readings[index].1 - readings[index - 1].1 + 1e-5)
        }
    }
}

import SmartStackCore
import SmartStackServer
import SmartStackStore
import Testing

/// Restart equivalence at the host: a seeded random workload through `EngineHost` on the SQLite log, then a new
/// host on the same directory; every stack's decision and explanation at the same times must be identical
/// (orders, scores, revisions, reasons), and so must the listed donations.
@Suite("Restart equivalence", .timeLimit(.minutes(3)))
struct RestartEquivalenceTests {
    typealias S = StoreFixture
    static let apps = ["a", "b", "c", "d", "e", "f"]
    static let stacks: [(String, [String])] = [("home", ["a", "b", "c", "d"]), ("side", ["e", "f"])]

    /// How the first host ends.
    enum Ending: String, CaseIterable, Sendable {
        /// `stop()` (final snapshot), then the log is closed.
        case graceful
        /// The log is closed without `stop()`: no final snapshot, the tail is replayed.
        case withoutFinalSnapshot
    }

    struct Observation: Equatable {
        var decisions: [Decision]
        var explanations: [StackExplanation]
        var donations: [[Donation]]
    }

    static func host(_ directory: TemporaryDirectory, clock: TestClock, options: StoreOptions) async throws
        -> EngineHost
    {
        let log = try S.open(directory, options: options)
        let host = EngineHost(settings: EngineSettings(), clock: clock, log: log, logger: S.logger)
        try await host.restore()
        return host
    }

    /// Kinds, two stacks, then `steps` random calls: donations (some to be deleted), looks, engagement, contexts,
    /// timelines, reloads, Live Activities, reads that publish at the current time, deletions and the clock moving.
    static func workload(_ host: EngineHost, clock: TestClock, seed: UInt64, steps: Int) async throws {
        var random = SeededGenerator(seed: seed)
        for app in apps { try await host.record(.registerKind(S.kind(app), at: clock.now())) }
        for (name, members) in stacks {
            let widgets = members.map { WidgetPlacement(instance: S.instance("\(name).\($0)"), kind: S.kindID($0)) }
            try await host.record(
                .configureStack(
                    StackConfiguration(id: S.stack(name), family: .systemMedium, widgets: widgets), at: clock.now()))
        }
        for index in 0..<steps {
            clock.advance(seconds: Double(Int.random(in: 1...900, using: &random)))
            let now = clock.now()
            let app = apps.randomElement(using: &random) ?? "a"
            let (stack, members) = stacks.randomElement(using: &random) ?? stacks[0]
            let instance = S.instance("\(stack).\(members.randomElement(using: &random) ?? members[0])")
            do {
                switch Int.random(in: 0..<100, using: &random) {
                case 0..<45:
                    let group = Int.random(in: 0..<5, using: &random) == 0 ? "private" : nil
                    let donation = Donation(id: "d\(index)", app: S.app(app), intent: "open", date: now, groupId: group)
                    _ = try await host.donate(donation, idGiven: true)
                case 45..<55:
                    try await host.record(.look(stack: S.stack(stack), at: now))
                case 55..<60:
                    let kind: EngagementKind = [.tap, .swipeTo, .swipeAway].randomElement(using: &random) ?? .tap
                    try await host.record(
                        .engage(stack: S.stack(stack), instance: instance, kind: kind, duration: nil, at: now))
                case 60..<64:
                    try await host.record(
                        .setContext(
                            key: "focus", value: ["work", "home", nil].randomElement(using: &random) ?? nil, at: now))
                case 64..<74:
                    let entries = (0..<Int.random(in: 1...3, using: &random)).map { step in
                        TimelineEntry(
                            date: now.adding(seconds: Double(step) * 900),
                            relevance: ([3, 1, 0, -1, nil] as [Double?]).randomElement(using: &random).flatMap {
                                score in
                                score.map {
                                    Relevance(score: $0, duration: [0, 300, 3_600].randomElement(using: &random) ?? 0)
                                }
                            })
                    }
                    let timeline = try Timeline.validated(entries: entries, policy: .atEnd).timeline
                    try await host.record(.submitTimeline(.instance(instance), timeline, at: now))
                case 74..<77:
                    try await host.record(.reloadTimelines(app: S.app(members[0]), kind: nil, at: now))
                case 77..<80:
                    let id = "la\(Int.random(in: 0..<3, using: &random))"
                    switch Int.random(in: 0..<3, using: &random) {
                    case 0:
                        try await host.record(
                            .startLiveActivity(
                                app: S.app(app), id: id, attributes: ["n": "\(index)"], contentState: [:], at: now))
                    case 1:
                        try await host.record(
                            .updateLiveActivity(app: S.app(app), id: id, contentState: ["s": "\(index)"], at: now))
                    default:
                        try await host.record(
                            .endLiveActivity(app: S.app(app), id: id, contentState: nil, dismissAfter: 600, at: now))
                    }
                case 80..<95:
                    // Reads at the current time publish what time changed (not events, but state).
                    _ = try await host.stack(S.stack(stack))
                    if Int.random(in: 0..<3, using: &random) == 0 {
                        _ = try await host.explain(stack: S.stack(stack), instance: nil, at: nil)
                    }
                case 95..<97:
                    _ = try await host.deleteDonations(app: S.app(app), filter: .group("private"))
                case 97:
                    _ = try await host.deleteDonations(
                        app: S.app(app), filter: .ids(["d\(index - 1)", "d\(index - 2)"]))
                default:
                    clock.advance(seconds: Double(Int.random(in: 3_600...86_400, using: &random)))
                    _ = await host.stacks()
                }
            } catch HostError.core {
                // Rejected calls (an ended activity updated, an unknown id) change nothing and are not stored.
            }
        }
    }

    static func observe(_ host: EngineHost, at times: [Timestamp]) async throws -> Observation {
        var decisions: [Decision] = []
        var explanations: [StackExplanation] = []
        for time in times {
            for (name, _) in stacks {
                decisions.append(try await host.stack(S.stack(name), at: time))
                explanations.append(try await host.explain(stack: S.stack(name), instance: nil, at: time))
            }
        }
        var donations: [[Donation]] = []
        for app in apps {
            donations.append(try await host.listDonations(app: S.app(app), from: .beginning, limit: 100_000).donations)
        }
        return Observation(decisions: decisions, explanations: explanations, donations: donations)
    }

    @Test(
        "after a restart every stack decides and explains exactly as before",
        arguments: [1, 2, 3] as [UInt64], Ending.allCases)
    func restartIsExact(seed: UInt64, ending: Ending) async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        var options = StoreOptions()
        options.snapshotEveryRecords = 150  // background snapshots during the workload, records replayed on top
        options.donationKeyBatch = 40  // donation keys copied to their table 16 at a time, some left in memory
        options.donationKeyChunk = 16
        let first = try await Self.host(directory, clock: clock, options: options)
        try await Self.workload(first, clock: clock, seed: seed, steps: 600)
        let now = clock.now()
        let times = [now, now.adding(seconds: 600), now.adding(seconds: 7_200), now.adding(seconds: 90_000)]
        let before = try await Self.observe(first, at: times)
        if ending == .graceful { await first.stop() }
        await first.closeLog()

        let second = try await Self.host(directory, clock: clock, options: options)
        let after = try await Self.observe(second, at: times)
        #expect(after.donations == before.donations)
        for (index, (old, new)) in zip(before.decisions, after.decisions).enumerated() where old != new {
            Issue.record("decision \(index) differs:\n before \(old)\n after  \(new)")
        }
        for (index, (old, new)) in zip(before.explanations, after.explanations).enumerated() where old != new {
            Issue.record("explanation \(index) differs")
        }
        await second.stop()
        await second.closeLog()
    }

    @Test("a deletion rebuilt off the event loop while donations keep coming equals a replay of the stored log")
    func deletionDuringDonations() async throws {
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        var options = StoreOptions()
        options.donationKeyBatch = 25
        options.donationKeyChunk = 10
        let host = try await Self.host(directory, clock: clock, options: options)
        try await Self.workload(host, clock: clock, seed: 7, steps: 200)
        // A history long enough that the rebuild takes a while, with a group to delete.
        for index in 0..<4_000 {
            clock.advance(seconds: 30)
            let donation = Donation(
                id: "bulk\(index)", app: S.app(Self.apps[index % 3]), intent: "open", date: clock.now(),
                groupId: index % 3 == 0 ? "bulk" : nil)
            _ = try await host.donate(donation, idGiven: true)
        }
        let now = clock.now()
        // The deletion and 400 donations (to apps b and c, and a new one to app a) run concurrently.
        async let deleted = host.deleteDonations(app: S.app("a"), filter: .group("bulk"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    let app = ["a", "b", "c"][index % 3]
                    let donation = Donation(
                        id: "late\(index)", app: S.app(app), intent: "open",
                        date: now.adding(seconds: Double(index - 400)))
                    _ = try await host.donate(donation, idGiven: true)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await deleted == 1_334)
        let a = try await host.listDonations(app: S.app("a"), from: .beginning, limit: 100_000).donations
        #expect(!a.contains { $0.groupId == "bulk" })
        #expect(a.filter { $0.id.hasPrefix("late") }.count == 134)
        let times = [now.adding(seconds: 400), now.adding(seconds: 4_000), now.adding(seconds: 90_000)]
        let before = try await Self.observe(host, at: times)
        await host.stop()
        await host.closeLog()

        // The stored log replayed from its first event (no snapshot) orders every stack the same way.
        let reader = try S.open(directory)
        let stored = try reader.load()
        await reader.close()
        let replayed = Engine.replayingLog(stored.events, settings: EngineSettings())
        var index = 0
        for time in times {
            for (name, _) in Self.stacks {
                let decision = try replayed.evaluate(stack: S.stack(name), at: time)
                #expect(decision.order == before.decisions[index].order, "stack \(name) at \(time)")
                index += 1
            }
        }
        #expect(!stored.events.contains { $0.donation?.groupId == "bulk" && $0.donation?.app == S.app("a") })

        // And a restart (from the deletion's snapshot) decides and explains exactly as before.
        let second = try await Self.host(directory, clock: clock, options: options)
        let after = try await Self.observe(second, at: times)
        #expect(after == before)
        await second.stop()
        await second.closeLog()
    }
}

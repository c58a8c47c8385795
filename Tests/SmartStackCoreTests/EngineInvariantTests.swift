import SmartStackCore
import Testing

/// Invariants over seeded random event streams: each seed is a different, reproducible workload.
@Suite("Engine invariants over random streams")
struct EngineInvariantTests {
    typealias F = Fixture
    static let apps = ["a", "b", "c", "d", "e", "f"]

    /// A random workload: kinds, two stacks, donations (some in group "private"), looks, taps, swipes,
    /// contexts, timelines with positive and non-positive scores, reload requests.
    static func workload(seed: UInt64, events count: Int = 1_500, developerMode: Bool = false) -> [EngineEvent] {
        var random = SeededGenerator(seed: seed)
        var events: [EngineEvent] = apps.map { .registerKind(F.kind($0), at: F.t(0)) }
        let stacks: [(String, [String])] = [("home", ["a", "b", "c", "d"]), ("side", ["e", "f"])]
        for (name, members) in stacks {
            let widgets = members.map { WidgetPlacement(instance: F.instance("\(name).\($0)"), kind: F.kindID($0)) }
            events.append(
                .configureStack(
                    StackConfiguration(
                        id: F.stack(name), family: .systemMedium, widgets: widgets, developerMode: developerMode),
                    at: F.t(0)))
        }
        var time = 0.0
        for index in 0..<count {
            time += Double(Int.random(in: 1...900, using: &random))
            let app = apps.randomElement(using: &random) ?? "a"
            let (stack, members) = stacks.randomElement(using: &random) ?? stacks[0]
            let member = members.randomElement(using: &random) ?? members[0]
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55:
                let group = Int.random(in: 0..<5, using: &random) == 0 ? "private" : nil
                events.append(F.donation(app, at: time, id: "d\(index)", group: group))
            case 55..<70: events.append(.look(stack: F.stack(stack), at: F.t(time)))
            case 70..<74:
                events.append(
                    .engage(
                        stack: F.stack(stack), instance: F.instance("\(stack).\(member)"),
                        kind: [.tap, .swipeTo, .swipeAway].randomElement(using: &random) ?? .tap,
                        duration: nil, at: F.t(time)))
            case 74..<78:
                events.append(
                    .setContext(
                        key: "focus", value: ["work", "home", nil].randomElement(using: &random) ?? nil,
                        at: F.t(time)))
            case 78..<92:
                let entries = (0..<Int.random(in: 1...4, using: &random)).map { step -> (Double, Double?, Double) in
                    let score: Double? = [3, 1, 0.5, 0, -2, nil].randomElement(using: &random) ?? nil
                    return (time + Double(step) * 900, score, [0, 120, 3_600].randomElement(using: &random) ?? 0)
                }
                events.append(
                    .submitTimeline(
                        .instance(F.instance("\(stack).\(member)")),
                        F.timeline(entries, policy: .atEnd), at: F.t(time)))
            default:
                events.append(.reloadTimelines(app: F.app(member), kind: nil, at: F.t(time)))
            }
        }
        return events
    }

    /// Runs a workload step by step, collecting every published decision and effect.
    static func run(_ events: [EngineEvent], settings: EngineSettings = EngineSettings())
        -> (engine: Engine, decisions: [Decision], effects: [EngineEffect])
    {
        var engine = Engine(settings: settings)
        var decisions: [Decision] = []
        var effects: [EngineEffect] = []
        for event in events {
            if case .success(let result) = engine.step(event) {
                decisions += result.decisions
                effects += result.effects
            }
        }
        return (engine, decisions, effects)
    }

    static func snapshot(_ engine: Engine, at times: [Timestamp]) throws -> [[String: [String]]] {
        try times.map { time in
            var orders: [String: [String]] = [:]
            for stack in engine.stackIDs {
                let decision = try engine.evaluate(stack: stack, at: time)
                orders[stack.rawValue] = decision.entries.map {
                    "\($0.instance) \($0.reason.rawValue) \(($0.score * 1e9).rounded())"
                }
            }
            return orders
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func theSameEventsGiveTheSameDecisions(seed: UInt64) throws {
        let events = Self.workload(seed: seed)
        let first = Self.run(events)
        let second = Self.run(events)
        #expect(first.decisions == second.decisions)
        #expect(first.effects == second.effects)
        #expect(first.decisions.count > 50)
        let end = first.engine.now
        let times = (0..<10).map { end.adding(seconds: Double($0) * 450) }
        #expect(try Self.snapshot(first.engine, at: times) == Self.snapshot(second.engine, at: times))
        #expect(Engine.replaying(events).published(F.stack()) == first.engine.published(F.stack()))
    }

    @Test(arguments: [4, 5, 6] as [UInt64])
    func deletingDonationsEqualsNeverHavingSeenThem(seed: UInt64) throws {
        let events = Self.workload(seed: seed)
        var deleted = Self.run(events).engine
        let revisionsBefore = deleted.stackIDs.map { deleted.published($0)?.revision ?? 0 }
        let result = deleted.deleteDonations(.group("private"), app: F.app("a"), history: events)
        // The reference never saw a's private donations: built without them, not by the filter.
        let kept = events.filter { event in
            guard let donation = event.donation else { return true }
            return !(donation.app == F.app("a") && donation.groupId == "private")
        }
        let reference = Self.run(kept).engine
        #expect(result.removed == events.count - kept.count)
        #expect(result.removed > 0)
        let times = (0..<6).map { deleted.now.adding(seconds: Double($0) * 600) }
        #expect(try Self.snapshot(deleted, at: times) == Self.snapshot(reference, at: times))
        // Revisions keep counting up from what subscribers saw.
        let revisionsAfter = deleted.stackIDs.map { deleted.published($0)?.revision ?? 0 }
        for (after, before) in zip(revisionsAfter, revisionsBefore) { #expect(after >= before) }
        for decision in result.changed {
            #expect(decision.revision > revisionsBefore[deleted.stackIDs.firstIndex(of: decision.stack) ?? 0])
        }

        // Deleting by id and by intent type works the same way.
        var byID = Self.run(events).engine
        let ids = Set(events.compactMap(\.donation).filter { $0.app == F.app("b") }.prefix(40).map(\.id))
        byID.deleteDonations(.ids(ids), app: F.app("b"), history: events)
        let withoutIDs = Self.run(events.filter { !ids.contains($0.donation?.id ?? "") }).engine
        #expect(try Self.snapshot(byID, at: times) == Self.snapshot(withoutIDs, at: times))
        var byIntent = Self.run(events).engine
        byIntent.deleteDonations(.intent(type: "open", entity: nil), app: F.app("c"), history: events)
        let withoutC = Self.run(events.filter { $0.donation?.app != F.app("c") }).engine
        #expect(try Self.snapshot(byIntent, at: times) == Self.snapshot(withoutC, at: times))
    }

    @Test func donationsPastTheRetentionPeriodAreForgotten() throws {
        var settings = EngineSettings()
        settings.retention = 2 * 86_400
        let events = Self.workload(seed: 7, events: 900)
        var engine = Self.run(events, settings: settings).engine
        engine.rebuild(from: events)
        let cutoff = engine.now.adding(seconds: -settings.retention)
        let reference = Self.run(events.filter { ($0.donation?.date ?? cutoff) >= cutoff }, settings: settings).engine
        #expect(try Self.snapshot(engine, at: [engine.now]) == Self.snapshot(reference, at: [engine.now]))
    }

    @Test(arguments: [8, 9] as [UInt64])
    func theReloadBudgetIsNeverExceeded(seed: UInt64) {
        var settings = EngineSettings()
        settings.reloadBudget = 40
        let effects = Self.run(Self.workload(seed: seed, events: 3_000), settings: settings).effects
        var grants: [InstanceID: [Timestamp]] = [:]
        for case .reloadRequested(let instance, _, let reason, let at) in effects where !reason.isExempt {
            grants[instance, default: []].append(at)
        }
        #expect(!grants.isEmpty)
        for (_, times) in grants {
            let sorted = times.sorted()
            for (index, time) in sorted.enumerated() {
                let inWindow = sorted[index...].prefix { $0.seconds(since: time) < 86_400 }.count
                #expect(inWindow <= 40)
            }
        }
    }

    @Test(arguments: [10, 11] as [UInt64])
    func relevanceNeverLiftsAWidgetThatIsNotRelevant(seed: UInt64) throws {
        var engine = Engine()
        var checked = 0
        for event in Self.workload(seed: seed) {
            engine.step(event)
            guard case .submitTimeline = event else { continue }
            for stack in engine.stackIDs {
                for widget in try engine.explain(stack: stack, at: engine.now).widgets {
                    if widget.relevanceState.status != .relevant && widget.relevantContext == nil {
                        #expect(widget.relevance == 0)
                        #expect(widget.reason != .relevance)
                        checked += 1
                    }
                }
            }
        }
        #expect(checked > 0)
    }

    @Test(arguments: [12, 13] as [UInt64])
    func stabilityLimitsHoldOutsideDeveloperMode(seed: UInt64) throws {
        var settings = EngineSettings()
        settings.maxRotationsPerWidgetPerDay = 3
        let decisions = Self.run(Self.workload(seed: seed, events: 3_000), settings: settings).decisions
        var lastRotation: [StackID: Timestamp] = [:]
        var rotations: [String: [Timestamp]] = [:]
        var previousTop: [StackID: String] = [:]
        var seen = 0
        for decision in decisions {
            defer { previousTop[decision.stack] = decision.top }
            guard let top = decision.entries.first, top.instance != previousTop[decision.stack] else { continue }
            if top.reason == .manualSwipe { lastRotation[decision.stack] = decision.time }
            guard top.reason == .relevance else { continue }
            seen += 1
            if let last = lastRotation[decision.stack] {
                #expect(decision.time.seconds(since: last) >= settings.minimumTimeOnTop)
            }
            let recent = (rotations[top.instance] ?? []).filter { decision.time.seconds(since: $0) < 86_400 }
            #expect(recent.count < settings.maxRotationsPerWidgetPerDay)
            rotations[top.instance] = recent + [decision.time]
            lastRotation[decision.stack] = decision.time
        }
        #expect(seen > 5)
        // In developer mode the same workload rotates more often.
        let developer = Self.run(Self.workload(seed: seed, events: 3_000, developerMode: true), settings: settings)
            .decisions
        let developerRotations = developer.filter { $0.entries.first?.reason == .relevance }.count
        #expect(developerRotations > seen)
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
@testable import SmartStackCore
import Testing

private typealias F = Fixture

/// The meta fallback: a simple ranker orders a stack only when it has recently predicted clearly better than
/// the learned model, and the decision and `Explain` say so.
@Suite struct FallbackRankerTests {
    @Test func aFreshStackIsOrderedByTheModel() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(F.donation("a", at: 10))
        let explanation = try engine.explain(stack: F.stack(), at: F.t(20))
        #expect(explanation.ranker == .model)
        #expect(explanation.rankerPerformance.count == StackRanker.allCases.count)
        #expect(explanation.rankerPerformance.values.allSatisfy { $0 == 0 })
        for widget in explanation.widgets {
            let fallbacks = Signal.allCases.filter { $0.rawValue.hasPrefix("fallback") }
            #expect(fallbacks.allSatisfy { widget.contributions[$0] == nil })
        }
    }

    @Test func everyLearnedLookScoresEveryRankerByTheReciprocalRankOfTheTarget() throws {
        var engine = try F.engine(apps: ["a", "b", "c", "d"])
        try engine.apply(F.donation("b", at: 10))
        try engine.apply(F.donation("c", at: 20))
        try engine.apply(F.donation("d", at: 30))
        try engine.apply(.look(stack: F.stack(), at: F.t(40)))
        try engine.apply(F.donation("d", at: 50))
        // "d" was used last (mru and the model's prior: rank 1); b, c and d were used once each, so the
        // count-based rankers break their tie in the user's order and put "d" third ("a" never used: last).
        let performance = try engine.explain(stack: F.stack(), at: F.t(60)).rankerPerformance
        let third: Double = 1.0 / 3
        let expected: [String: Double] = ["model": 1, "mru": 1, "mfu": third, "frecency": third, "hour-mfu": third]
        #expect(performance == expected)
        // The next look decays what was there by exp(-1/200) before adding.
        try engine.apply(.look(stack: F.stack(), at: F.t(70)))
        try engine.apply(F.donation("b", at: 80))
        let next = try engine.explain(stack: F.stack(), at: F.t(90)).rankerPerformance
        let retention: Double = exp(-1.0 / 200)
        let mfu: Double = next["mfu"] ?? 0
        let mru: Double = next["mru"] ?? 0
        #expect(abs(mfu - (retention * third + 0.5)) < 1e-12)
        #expect(abs(mru - (retention + third)) < 1e-12)
    }

    @Test func aSimpleRankerTakesOverWhenItLeadsAndTiesGoToTheModel() {
        func choice(_ model: Double, _ mru: Double, _ mfu: Double) -> StackRanker {
            RankerSelector(performance: SIMD8(model, mru, mfu, 0, 0, 0, 0, 0)).choice
        }
        #expect(choice(0, 0, 0) == .model)
        #expect(choice(10, 10, 10) == .model)
        #expect(choice(10, 10.5, 0) == .mru)
        #expect(choice(10, 11.5, 11.5) == .mru)
        #expect(choice(10, 11.5, 12) == .mfu)
        var selector = RankerSelector()
        selector.record(ranks: SIMD8(1, 2, 4, 1, 1, 1, 1, 1))
        #expect(selector.performance(of: .model) == 1)
        #expect(selector.performance(of: .mru) == 0.5)
        #expect(selector.performance(of: .mfu) == 0.25)
    }

    /// When a simple ranker leads, it decides the order, and the decision and `Explain` name it.
    @Test func aLeadingSimpleRankerOrdersTheStackAndSaysSo() throws {
        var engine = try F.engine(apps: ["a", "b", "c", "d"])
        var time = 0.0
        for (app, uses) in [("a", 3), ("b", 2), ("c", 1), ("d", 1)] {
            for _ in 0..<uses {
                time += 60
                try engine.apply(F.donation(app, at: time))
            }
        }
        let at = F.t(time + 30)
        // Nothing published since the stack was configured: no top for `TopHysteresis` to hold. The hand-set
        // prior (MRU-like) makes the model's order tell from mfu's.
        engine.stacks[F.stack()]?.published = nil
        engine.stacks[F.stack()]?.ranker = OnlineRanker(prior: .handSet)
        #expect(try engine.evaluate(stack: F.stack(), at: at).order.first == "d")
        engine.stacks[F.stack()]?.selector = RankerSelector(performance: SIMD8(10, 9, 12, 0, 0, 0, 0, 0))
        let explanation = try engine.explain(stack: F.stack(), at: at)
        #expect(explanation.ranker == .mfu)
        #expect(explanation.decision.order == ["a", "b", "c", "d"])
        for entry in explanation.decision.entries {
            #expect(entry.reason == .behaviour)
            #expect(entry.contributions.nonZero.map(\.signal) == [.fallbackMFU])
        }
        #expect((explanation.decision.entries.first?.contributions[.fallbackMFU] ?? 0) > 0)
        for widget in explanation.widgets {
            #expect(widget.contributions.nonZero.allSatisfy { $0.signal == .fallbackMFU })
        }
        // Scores follow the order strictly, and behaviour is still a distribution over the widgets.
        let scores = explanation.decision.entries.map(\.score)
        #expect(zip(scores, scores.dropFirst()).allSatisfy { $0 > $1 })
        #expect(abs(explanation.widgets.map(\.behaviour).reduce(0, +) - 1) < 1e-9)
        // A tie keeps the model.
        engine.stacks[F.stack()]?.selector = RankerSelector(performance: SIMD8(11, 9, 11, 0, 0, 0, 0, 0))
        #expect(try engine.explain(stack: F.stack(), at: at).ranker == .model)
        #expect(try engine.evaluate(stack: F.stack(), at: at).order.first == "d")
    }

    /// The in-engine simple rankers are the evaluation's baselines: most recent, most used (ties in the user's
    /// order), most used this hour, frecency by calendar day.
    @Test func theSimpleRankersFollowTheBaselinesDefinitions() throws {
        var engine = try F.engine(apps: ["a", "b", "c", "d"])
        // Day 0, 08:xx: a ×3; day 0, 09:xx: b ×2; day 40, 08:xx: c ×2, then d once.
        for i in 0..<3 { try engine.apply(F.donation("a", at: Double(60 * i))) }
        for i in 0..<2 { try engine.apply(F.donation("b", at: 3_600 + Double(60 * i))) }
        let day40 = 40.0 * 86_400
        for i in 0..<2 { try engine.apply(F.donation("c", at: day40 + Double(60 * i))) }
        try engine.apply(F.donation("d", at: day40 + 600))
        let at = F.t(day40 + 3_600 + 60)  // 09:01 on day 40
        func order(_ ranker: StackRanker) throws -> [String] {
            var performance = SIMD8<Double>(repeating: 0)
            performance[ranker.rawValue] = 5
            engine.stacks[F.stack()]?.selector = RankerSelector(performance: performance)
            #expect(try engine.explain(stack: F.stack(), at: at).ranker == ranker)
            return try engine.evaluate(stack: F.stack(), at: at).order
        }
        #expect(try order(.mru) == ["d", "c", "b", "a"])
        #expect(try order(.mfu) == ["a", "b", "c", "d"])
        // exp(-40/32)·3 ≈ 0.86 and exp(-40/32)·2 ≈ 0.57 against 2 and 1 today.
        #expect(try order(.frecency) == ["c", "d", "a", "b"])
        // At 09:xx only b was used; then by plain count.
        #expect(try order(.hourMFU) == ["b", "a", "c", "d"])
    }

    @Test func theFallbackIsAFunctionOfTheEventsAlone() throws {
        func run() throws -> [Decision] {
            var engine = try F.engine(apps: ["a", "b", "c", "d"])
            var random = SeededGenerator(seed: 7)
            var decisions: [Decision] = []
            var time = 0.0
            for _ in 0..<400 {
                time += Double(1 + random.below(900))
                let app = ["a", "b", "c", "d"][random.below(random.below(2) == 0 ? 1 : 4)]
                if random.below(3) == 0 { try engine.apply(.look(stack: F.stack(), at: F.t(time))) }
                try engine.apply(F.donation(app, at: time + 1))
                decisions.append(try engine.evaluate(stack: F.stack(), at: F.t(time + 2)))
            }
            return decisions
        }
        #expect(try run() == run())
    }

    /// A snapshot carries the fallback's state (every ranker's performance, the places noted at a pending
    /// look, the frecency base day) and both weight vectors: the restored engine goes on exactly alike.
    @Test func snapshotsCarryTheFallbackState() throws {
        let apps = ["a", "b", "c", "d"]
        var engine = try F.engine(apps: apps)
        var random = SeededGenerator(seed: 11)
        var time = 0.0
        func step(_ engine: inout Engine, _ random: inout SeededGenerator, _ time: inout Double) throws {
            time += Double(1 + random.below(3_600))
            if random.below(3) == 0 { try engine.apply(.look(stack: F.stack(), at: F.t(time))) }
            try engine.apply(F.donation(apps[random.below(random.below(2) == 0 ? 2 : 4)], at: time + 1))
        }
        for _ in 0..<300 { try step(&engine, &random, &time) }
        // A fallback leads, and a look is pending.
        engine.stacks[F.stack()]?.selector = RankerSelector(performance: SIMD8(20, 18, 25, 3, 4, 0, 0, 0))
        time += 60
        try engine.apply(.look(stack: F.stack(), at: F.t(time)))
        #expect(engine.stacks[F.stack()]?.look?.fallbackPlaces.count == 4 * apps.count)
        let bytes = engine.snapshot()
        var restored = try Engine(snapshot: bytes, settings: engine.settings)
        #expect(restored.snapshot() == bytes)
        #expect(restored.stacks[F.stack()]?.selector == engine.stacks[F.stack()]?.selector)
        #expect(restored.stacks[F.stack()]?.ranker == engine.stacks[F.stack()]?.ranker)
        #expect(restored.stacks[F.stack()]?.look == engine.stacks[F.stack()]?.look)
        #expect(restored.usage.frecencyBaseDay == engine.usage.frecencyBaseDay)
        let explanation = try engine.explain(stack: F.stack(), at: F.t(time + 1))
        #expect(explanation.ranker == .mfu)
        #expect(try restored.explain(stack: F.stack(), at: F.t(time + 1)) == explanation)
        var copy = random
        var copyTime = time
        for _ in 0..<100 {
            try step(&engine, &random, &time)
            try step(&restored, &copy, &copyTime)
            let at = F.t(time + 2)
            #expect(try restored.evaluate(stack: F.stack(), at: at) == engine.evaluate(stack: F.stack(), at: at))
        }
        #expect(restored.snapshot() == engine.snapshot())
    }
}

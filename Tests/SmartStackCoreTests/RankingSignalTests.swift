#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
@testable import SmartStackCore
import Testing

private typealias F = Fixture

/// The behaviour model's signals of issue 14: idle-gap and reach buckets, when a widget left the front, the
/// per-user recency table, the stability of the published top, and the prior a stack starts from.
@Suite struct RankingSignalTests {
    static func time(_ seconds: Double) -> Timestamp { F.t(seconds) }

    @Test(
        arguments: [
            (nil, 9), (0, 0), (199_999, 0), (200_000, 1), (999_999, 1), (1_000_000, 2), (4_999_999, 3), (9_999_999, 4),
            (29_999_999, 5), (59_999_999, 6), (299_999_999, 7), (3_599_999_999, 8), (3_600_000_000, 9),
        ] as [(Int64?, Int)])
    func gapBucketsAreLogSpaced(gap: Int64?, bucket: Int) {
        #expect(GapBucket.of(gap) == bucket)
    }

    @Test func reachIsDirectWithoutALookSinceThePreviousDonationAndOtherwiseTheDelayAfterTheLook() {
        let second: Int64 = 1_000_000
        #expect(ReachBucket.of(now: 100 * second, previous: 90 * second, look: nil) == ReachBucket.direct)
        #expect(ReachBucket.of(now: 100 * second, previous: 90 * second, look: 80 * second) == ReachBucket.direct)
        #expect(ReachBucket.of(now: 100 * second, previous: 90 * second, look: 100 * second - 100_000) == 1)
        #expect(ReachBucket.of(now: 100 * second, previous: 90 * second, look: 99 * second + 500_000) == 2)
        #expect(ReachBucket.of(now: 100 * second, previous: 90 * second, look: 98 * second) == 3)
        #expect(ReachBucket.of(now: 100 * second, previous: 90 * second, look: 95 * second) == 4)
        #expect(ReachBucket.of(now: 100 * second, previous: nil, look: 50 * second) == 5)
    }

    /// Three keys of three apps used in order; key 0 also again by its own app before another came.
    static func model() -> UsageModel {
        var model = UsageModel()
        for key in 0..<3 as Range<Int32> { model.ensureKey(key) }
        model.recordDonation(app: 10, matched: [0], at: time(0), contextPairs: [])
        model.recordDonation(app: 10, matched: [0], at: time(5), contextPairs: [])
        model.recordDonation(app: 11, matched: [1], at: time(30), contextPairs: [])
        model.recordDonation(app: 12, matched: [2], at: time(31.5), contextPairs: [])
        return model
    }

    @Test func aKeyLeavesTheFrontWhenAnotherAppDonates() {
        let model = Self.model()
        func left(_ key: Int) -> Double { model.counters[key * KeyCounter.width + KeyCounter.leftFront] }
        #expect(left(0) == Double(Self.time(30).microseconds))
        #expect(left(1) == Double(Self.time(31.5).microseconds))
        #expect(left(2) == 0)
        #expect(model.frontKeys == [2])
    }

    @Test("a donation dated before the latest is counted for its key but does not become the app in front")
    func aBackdatedDonationIsHistoryNotThePresent() {
        var model = Self.model()
        var before = model
        model.ensureKey(3)
        before.ensureKey(3)
        model.recordDonation(app: 13, matched: [3], at: Self.time(1), contextPairs: [])
        // Its key is counted, with its own time as its last use.
        #expect(model.counters[3 * KeyCounter.width + KeyCounter.total] == 1)
        #expect(model.lastUse(of: 3) == Self.time(1).microseconds)
        // The sequence is the one before it: app 12 in front since 31.5 s, reached from app 11, key 2 in front,
        // and no transition from app 12 to the backdated key.
        #expect(model.lastApp == 12 && model.previousApp == 11 && model.thirdApp == 10)
        #expect(model.lastTime == Self.time(31.5).microseconds)
        #expect(model.frontKeys == [2] && model.reach == before.reach)
        #expect(model.transitions.sum(UsageModel.pair(12, 3)) == 0)
        #expect(model.transitionTotals == before.transitionTotals)
        // The features of the keys that were already there are as if it had not come, but for their shares.
        var matrix: [Double] = []
        var expected: [Double] = []
        let query = FeatureQuery(keys: [0, 1, 2], time: Self.time(41.5), contextPairs: [], previousLookTarget: nil)
        model.features(for: query, into: &matrix)
        before.recordDonation(app: 13, matched: [], at: Self.time(1), contextPairs: [])  // nothing of it
        before.features(for: query, into: &expected)
        for feature in [Feature.sinceLeftFront, .shortStay, .first5, .second5, .third5, .firstReach0] {
            for row in 0..<3 {
                #expect(
                    matrix[row * Feature.count + feature.rawValue] == expected[row * Feature.count + feature.rawValue])
            }
        }
        // An in-order donation after it takes over as usual.
        model.recordDonation(app: 13, matched: [3], at: Self.time(50), contextPairs: [])
        #expect(model.lastApp == 13 && model.previousApp == 12 && model.frontKeys == [3])
        #expect(model.transitions.sum(UsageModel.pair(12, 3)) > 0)
    }

    @Test("a donation dated a few seconds before the latest came at the same moment: it takes the front, time runs on")
    func aDonationAFewSecondsOutOfOrderTakesTheFront() {
        var model = Self.model()
        model.ensureKey(3)
        model.recordDonation(app: 13, matched: [3], at: Self.time(31.5 - 9), contextPairs: [])
        #expect(model.lastApp == 13 && model.previousApp == 12 && model.frontKeys == [3])
        #expect(model.lastTime == Self.time(31.5).microseconds)  // never backwards
        #expect(model.transitions.sum(UsageModel.pair(12, 3)) > 0)
        #expect(model.lastUse(of: 3) == Self.time(31.5 - 9).microseconds)  // its own time for its key
        // Dates far apart, either way, do not overflow.
        model.recordDonation(app: 14, matched: [], at: Timestamp(microseconds: .min + 1), contextPairs: [])
        #expect(model.lastApp == 13)
    }

    @Test func featuresSayHowLongAgoAWidgetLeftTheFrontAndHowLongItStayed() {
        let model = Self.model()
        var matrix: [Double] = []
        model.features(
            for: FeatureQuery(keys: [0, 1, 2], time: Self.time(41.5), contextPairs: [], previousLookTarget: nil),
            into: &matrix)
        func x(_ row: Int, _ feature: Feature) -> Double { matrix[row * Feature.count + feature.rawValue] }
        // Key 2 is in front; key 1 stayed 1.5 s and left 10 s ago; key 0 stayed 25 s (from its latest donation)
        // and left 11.5 s ago.
        #expect(x(2, .sinceLeftFront) == 0)
        #expect(abs(x(1, .sinceLeftFront) - (-log1p(1.0) / 5)) < 1e-12)
        #expect(abs(x(0, .sinceLeftFront) - (-log1p(1.15) / 5)) < 1e-12)
        #expect(x(1, .shortStay) == 1 && x(1, .briefStay) == 0)
        #expect(x(0, .shortStay) == 0 && x(0, .briefStay) == 0)
        // The gap is 10 s (bucket 5), and the app in front came straight from another app (reach 0).
        #expect(x(2, .first5) == 1 && x(1, .second5) == 1 && x(0, .third5) == 1)
        #expect(x(2, .firstReach0) == 1 && x(1, .secondReach0) == 1 && x(0, .firstReach0) == 0)
        let indicators = (Feature.gapColumns..<(Feature.gapColumns + 3 * GapBucket.count)).reduce(0.0) { sum, column in
            sum + (0..<3).reduce(0.0) { $0 + matrix[$1 * Feature.count + column] }
        }
        #expect(indicators == 3)
        #expect(RecencyClass.ofRow(0, in: matrix, rows: 3)! == (recency: 2, gap: 5))
        #expect(RecencyClass.ofRow(2, in: matrix, rows: 3)! == (recency: 0, gap: 5))
    }

    @Test func theRecencyTableLearnsWhichRecencyTheTargetHasAfterEachKindOfLook() {
        var model = Self.model()
        var matrix: [Double] = []
        let query = FeatureQuery(keys: [0, 1, 2], time: Self.time(33), contextPairs: [], previousLookTarget: nil)
        model.features(for: query, into: &matrix)
        // No looks yet: the feature says nothing.
        for row in 0..<3 { #expect(matrix[row * Feature.count + Feature.recencyInGap.rawValue] == 0) }
        // After looks 1–2 s after an app came (bucket 2) the user went to the second most recent widget.
        for _ in 0..<5 {
            model.recordAfterView(
                key: 1, lastAppAtView: 12, contexts: [], recency: (recency: 1, gap: 2), lookTime: Self.time(33),
                at: Self.time(33))
        }
        model.features(for: query, into: &matrix)
        let second = matrix[1 * Feature.count + Feature.recencyInGap.rawValue]
        let first = matrix[2 * Feature.count + Feature.recencyInGap.rawValue]
        #expect(second > 0 && first < 0)
        // In another gap bucket the table backs off toward all buckets: still the second, but less so.
        var other: [Double] = []
        model.features(
            for: FeatureQuery(keys: [0, 1, 2], time: Self.time(31.5 + 600), contextPairs: [], previousLookTarget: nil),
            into: &other)
        let otherSecond = other[1 * Feature.count + Feature.recencyInGap.rawValue]
        #expect(otherSecond > 0 && otherSecond < second)
    }

    @Test func theTopHoldsUnlessAChallengerIsClearlyLikelier() {
        let behaviour = [0.32, 0.40, 0.28]
        // 0.40 / 0.32 = 1.25 < 1.3: the incumbent 0 is raised just above the challenger.
        #expect(TopHysteresis.heldBehaviour(of: 0, count: 3) { behaviour[$0] } == 0.40.nextUp)
        // The incumbent leads already: nothing to hold.
        #expect(TopHysteresis.heldBehaviour(of: 1, count: 3) { behaviour[$0] } == nil)
        // 0.40 / 0.30 = 1.33 > 1.3: the challenger wins, unless the stack's learned margin is wider.
        let clear = [0.30, 0.40, 0.30]
        #expect(TopHysteresis.heldBehaviour(of: 0, count: 3) { clear[$0] } == nil)
        #expect(
            TopHysteresis.heldBehaviour(of: 0, count: 3, margin: TopHysteresis.margin + log(1.1)) { clear[$0] }
                == 0.40.nextUp)
        #expect(TopHysteresis.heldBehaviour(of: 5, count: 3) { behaviour[$0] } == nil)
    }

    @Test func theMarginGrowsWhileTheTopChangesMoreThanMRUsAndShrinksBackToTheBase() {
        let step = TopHysteresis.rate
        // Only the stack's own top changed: one step up; MRU's too: it changed less than target times as often.
        #expect(TopHysteresis.adjusted(0, ownChanged: true, mruChanged: false) == step)
        #expect(
            TopHysteresis.adjusted(0.5, ownChanged: true, mruChanged: true) == 0.5 + step * (1 - TopHysteresis.target))
        #expect(TopHysteresis.adjusted(0.5, ownChanged: false, mruChanged: true) == 0.5 - step * TopHysteresis.target)
        #expect(TopHysteresis.adjusted(0.5, ownChanged: false, mruChanged: false) == 0.5)
        // Never below the base, never above its bound.
        #expect(TopHysteresis.adjusted(0, ownChanged: false, mruChanged: true) == 0)
        #expect(
            TopHysteresis.adjusted(TopHysteresis.maxExtra, ownChanged: true, mruChanged: false)
                == TopHysteresis.maxExtra)
        // A person whose top changes at every look while MRU's changes at every other one (2 × MRU's rate) gets a
        // wider margin look after look; one at MRU's rate keeps the base.
        var fast = 0.0
        var even = 0.0
        for look in 0..<200 {
            fast = TopHysteresis.adjusted(fast, ownChanged: true, mruChanged: look % 2 == 0)
            even = TopHysteresis.adjusted(even, ownChanged: look % 2 == 0, mruChanged: look % 2 == 0)
        }
        #expect(fast > 0.3 && fast <= TopHysteresis.maxExtra)
        #expect(even == 0)
    }

    @Test func explainSaysWhichTopTheHoldKeepsAndItsMargin() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 10))
        try engine.apply(.look(stack: F.stack(), at: F.t(11)))
        try engine.apply(F.donation("a", at: 12))
        for time in [13.0, 20, 30, 40] { try engine.apply(F.donation("b", at: time)) }
        let fresh = try engine.explain(stack: F.stack(), at: F.t(41))
        #expect(abs(fresh.holdMargin - 1.3) < 1e-12)
        // The user last saw "a" on top; "b", used four times since, is likelier. With a margin wider than any lead, "a" is
        // held, and the explanation says so; with none, "b" is first and nothing is held.
        engine.stacks[F.stack()]?.holdExtra = 20
        let held = try engine.explain(stack: F.stack(), at: F.t(41))
        #expect(held.heldTop == F.instance("a") && held.decision.top == "a")
        #expect(held.holdMargin == TopHysteresis.ratio(extra: 20))
        let a = try #require(held.widgets.first { $0.instance == F.instance("a") })
        let b = try #require(held.widgets.first { $0.instance == F.instance("b") })
        #expect(a.behaviour > b.behaviour)
        // Still probabilities: they sum to 1 (before, the raised incumbent's came on top of the others').
        #expect(abs(held.widgets.reduce(0) { $0 + $1.behaviour } - 1) < 1e-12)
        engine.stacks[F.stack()]?.holdExtra = -20
        let unheld = try engine.explain(stack: F.stack(), at: F.t(41))
        #expect(unheld.heldTop == nil && unheld.decision.top == "b")
    }

    @Test func aLookWithATargetMovesTheStacksMarginByHowItsTopAndMRUsChanged() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 10))
        try engine.apply(.look(stack: F.stack(), at: F.t(11)))
        try engine.apply(F.donation("a", at: 12))
        // The first look with a target notes the tops; there is nothing to compare them with yet.
        let first = try #require(engine.stacks[F.stack()])
        let tops = try #require(first.labelledTops)
        #expect(tops.seen == first.seenTop && first.holdExtra == 0)
        #expect(tops.mru == first.keys[first.instances.firstIndex(of: F.instance("a")) ?? -1])
        // Had the stack shown another top at the previous such look while MRU's stayed, its margin widens.
        engine.stacks[F.stack()]?.labelledTops?.seen = "elsewhere"
        try engine.apply(.look(stack: F.stack(), at: F.t(13)))
        try engine.apply(F.donation("a", at: 14))
        #expect(engine.stacks[F.stack()]?.holdExtra == TopHysteresis.rate)
        // MRU's top changed and the stack's did not: back to the base. A look without a target changes nothing.
        engine.stacks[F.stack()]?.labelledTops?.mru = -1
        try engine.apply(.look(stack: F.stack(), at: F.t(15)))
        try engine.apply(F.donation("a", at: 16))
        #expect(engine.stacks[F.stack()]?.holdExtra == 0)
        engine.stacks[F.stack()]?.labelledTops?.seen = "elsewhere"
        try engine.apply(.look(stack: F.stack(), at: F.t(17)))
        try engine.apply(F.donation("a", at: 17 + 3_600))
        #expect(engine.stacks[F.stack()]?.holdExtra == 0)
        // The margin is the state's: a snapshot carries it.
        engine.stacks[F.stack()]?.holdExtra = 0.25
        let restored = try Engine(snapshot: engine.snapshot(), settings: EngineSettings())
        #expect(restored.stacks[F.stack()]?.holdExtra == 0.25)
        #expect(restored.stacks[F.stack()]?.labelledTops == engine.stacks[F.stack()]?.labelledTops)
    }

    @Test func theSeenTopIsHeldInTheEngineUnlessAWidgetOfTheStackIsClearlyLikelier() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 10))
        engine.publish(at: F.t(10))
        try engine.apply(.look(stack: F.stack(), at: F.t(11)))
        let state = try #require(engine.stacks[F.stack()])
        #expect(state.seenTop == "a")
        func standings(_ a: Double, _ b: Double) -> [WidgetStanding] {
            [a, b].enumerated().map { index, behaviour in
                WidgetStanding(
                    index: index, slot: state.slots[index], behaviour: behaviour, relevance: 0,
                    relevanceState: .nothing, relevantContext: nil, contributions: SignalShares())
            }
        }
        var close = standings(0.46, 0.54)
        engine.holdPublishedTop(of: state, standings: &close)
        // Held just above the challenger, and the two still sum to 1.
        func justAbove(_ held: [WidgetStanding]) -> Bool {
            held[0].behaviour > held[1].behaviour && held[0].behaviour - held[1].behaviour < 1e-12
                && abs(held[0].behaviour + held[1].behaviour - 1) < 1e-12
        }
        #expect(justAbove(close))
        var clear = standings(0.3, 0.7)
        engine.holdPublishedTop(of: state, standings: &clear)
        #expect(clear[0].behaviour == 0.3)
        // After the latest look the user went to the other widget: the top they passed over is not held; had they
        // gone to the top itself, it is.
        var passedOver = state
        passedOver.previousLookTarget = state.keys[1]
        var unheldAfterPass = standings(0.45, 0.55)
        engine.holdPublishedTop(of: passedOver, standings: &unheldAfterPass)
        #expect(unheldAfterPass[0].behaviour == 0.45)
        passedOver.previousLookTarget = state.keys[0]
        var heldAfterChoice = standings(0.45, 0.55)
        engine.holdPublishedTop(of: passedOver, standings: &heldAfterChoice)
        #expect(justAbove(heldAfterChoice))
        // No look yet: nothing is held, whatever was published (when a service publishes is not an event).
        var fresh = state
        fresh.seenTop = nil
        #expect(fresh.published?.top == "a")
        var unheld = standings(0.45, 0.55)
        engine.holdPublishedTop(of: fresh, standings: &unheld)
        #expect(unheld[0].behaviour == 0.45)
    }

    @Test func aPriorLoadsByFeatureNameAndNewStacksStartFromTheEnginesPrior() throws {
        let prior = RankingPrior(
            id: "test-1", weights: [("mostRecent", 3), ("secondReach4", -1), ("noSuchFeature", 7), ("first2", .nan)])
        #expect(prior.weights[Feature.mostRecent.rawValue] == 3)
        #expect(prior.weights[Feature.secondReach4.rawValue] == -1)
        #expect(prior.weights.reduce(0, +) == 2)
        #expect(RankingPrior(id: prior.id, weights: prior.namedWeights) == prior)
        #expect(RankingPrior.handSet.weights[Feature.mostRecent.rawValue] == 2)

        var engine = Engine()
        engine.rankingPrior = prior
        try engine.apply(.registerKind(F.kind("a"), at: F.t(0)))
        try engine.apply(
            .configureStack(
                StackConfiguration(
                    id: F.stack(), family: .systemMedium,
                    widgets: [WidgetPlacement(instance: F.instance("a"), kind: F.kindID("a"))]),
                at: F.t(0)))
        #expect(engine.rankingPriorID(of: F.stack()) == "test-1")
        #expect(engine.learnedWeights(of: F.stack())?.first { $0.name == "mostRecent" }?.weight == 3)
        // A stack configured by a default engine starts from this build's prior.
        let plain = try F.engine(apps: ["a"])
        #expect(plain.rankingPriorID(of: F.stack()) == RankingPrior.shipped.id)
    }

    @Test func aSnapshotKeepsThePriorAStackStartedFromAndTheNewState() throws {
        var engine = Engine()
        engine.rankingPrior = RankingPrior(id: "test-2", weights: [("mostRecent", 1.25)])
        for app in ["a", "b"] { try engine.apply(.registerKind(F.kind(app), at: F.t(0))) }
        try engine.apply(
            .configureStack(
                StackConfiguration(
                    id: F.stack(), family: .systemMedium,
                    widgets: ["a", "b"].map { WidgetPlacement(instance: F.instance($0), kind: F.kindID($0)) }),
                at: F.t(0)))
        try engine.apply(F.donation("a", at: 10))
        try engine.apply(.look(stack: F.stack(), at: F.t(11)))
        try engine.apply(F.donation("b", at: 12))
        let restored = try Engine(snapshot: engine.snapshot(), settings: EngineSettings())
        #expect(restored.rankingPriorID(of: F.stack()) == "test-2")
        #expect(restored.stacks[F.stack()]?.ranker == engine.stacks[F.stack()]?.ranker)
        #expect(restored.usage.recencyByGap == engine.usage.recencyByGap)
        #expect(restored.usage.recencyByGap.reduce(0, +) > 0)
        #expect(restored.usage.lastLookTime == F.t(11).microseconds && restored.usage.reach == engine.usage.reach)
        #expect(restored.usage.frontKeys == engine.usage.frontKeys)
        #expect(try restored.evaluate(stack: F.stack(), at: F.t(20)) == engine.evaluate(stack: F.stack(), at: F.t(20)))
    }

    /// Kinds of apps outside the stack (a launcher registers one for every app it sees) make those apps suggestion
    /// candidates; the widgets' rows, order, scores and the seen top the hysteresis holds are the same as without
    /// them (they were not: a candidate used more recently moved every widget's recency rank at queries).
    @Test func candidatesOutsideTheStackDoNotMoveTheWidgets() throws {
        func run(registeringOthers: Bool) throws -> (entries: [[DecisionEntry]], suggested: Int, seen: [String?]) {
            var engine = try F.engine(apps: ["a", "b", "c", "d"])
            if registeringOthers {
                for app in ["x", "y"] { try engine.apply(.registerKind(F.kind(app), at: F.t(0))) }
            }
            var random = SeededGenerator(seed: 14)
            var time = 0.0
            var entries: [[DecisionEntry]] = []
            var seen: [String?] = []
            var suggested = 0
            for _ in 0..<300 {
                time += [0.1, 0.5, 1.5, 4, 20, 90, 600, 4_000][random.below(8)]
                let app = ["a", "b", "c", "d", "x", "x", "y"][random.below(7)]
                try engine.apply(F.donation(app, at: time))
                if random.below(3) == 0 {
                    time += [0.1, 1, 8, 120][random.below(4)]
                    let decision = try engine.evaluate(stack: F.stack(), at: F.t(time))
                    suggested += decision.entries.filter(\.suggested).count
                    entries.append(decision.entries.filter { !$0.suggested })
                    try engine.apply(.look(stack: F.stack(), at: F.t(time)))
                    seen.append(engine.stacks[F.stack()]?.seenTop)
                }
            }
            return (entries, suggested, seen)
        }
        let alone = try run(registeringOthers: false)
        let beside = try run(registeringOthers: true)
        #expect(alone.suggested == 0)
        #expect(beside.suggested > 0)
        #expect(beside.entries.count == alone.entries.count)
        for (with, without) in zip(beside.entries, alone.entries) {
            #expect(with.map(\.instance) == without.map(\.instance))
            #expect(with.map(\.score) == without.map(\.score))
        }
        #expect(beside.seen == alone.seen)
    }
}

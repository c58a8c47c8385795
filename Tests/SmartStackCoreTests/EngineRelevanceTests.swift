import SmartStackCore
import Testing

@Suite("Engine: relevance, stability and explanations")
struct EngineRelevanceTests {
    typealias F = Fixture

    /// Widgets a, b and c: b is relevant from 100 for a minute (it rotates up), c from 200 on (inside b's five
    /// minutes on top).
    static func twoRotations() throws -> Engine {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(.submitTimeline(.instance(F.instance("b")), F.timeline([(100, 1, 60)]), at: F.t(1)))
        try engine.apply(.submitTimeline(.instance(F.instance("c")), F.timeline([(200, 1, 0)]), at: F.t(1)))
        return engine
    }

    @Test func relevanceRotatesAWidgetUpAtTheEntryDateAndBackAfterItsDuration() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(F.donation("a", at: 5))
        let timeline = F.timeline([(100, 5, 0), (1_000, 10, 600)])
        try engine.apply(.submitTimeline(.instance(F.instance("c")), timeline, at: F.t(10)))
        #expect(engine.order(at: 50).first == "a")
        // 100: score 5 is the widget's highest so far, normalised 1.
        #expect(engine.order(at: 100).first == "c")
        let entry = try #require(try engine.entry("c", at: 100))
        #expect(entry.reason == .relevance)
        #expect(entry.contributions[.relevance] == 1)
        // 1000: score 10 for 600 s; at 1600 it ends and behaviour takes over again.
        #expect(engine.order(at: 1_599).first == "c")
        #expect(engine.order(at: 1_600).first == "a")
        #expect(try engine.entry("c", at: 1_600)?.reason == .expired)
        // The engine tells the service when the next change happens, so it can publish without a query.
        var fresh = try F.engine(apps: ["a", "b", "c"])
        try fresh.apply(.submitTimeline(.instance(F.instance("c")), timeline, at: F.t(10)))
        #expect(fresh.nextWakeUp == F.t(100))
    }

    @Test func nullKeepsZeroClearsAndNonPositiveNeverRotatesUp() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 1))
        let timeline = F.timeline([(100, 3, 0), (700, nil, 0), (1_300, 0, 0), (1_900, -4, 0)])
        try engine.apply(.submitTimeline(.instance(F.instance("b")), timeline, at: F.t(2)))
        #expect(engine.order(at: 100).first == "b")
        #expect(engine.order(at: 800).first == "b")  // null keeps the relevance in force
        #expect(engine.order(at: 1_300).first == "a")  // 0 clears it
        #expect(try engine.entry("b", at: 1_300)?.reason == .notRelevant)
        #expect(engine.order(at: 2_000).first == "a")
        #expect(try engine.entry("b", at: 2_000)?.contributions[.relevance] == nil)
    }

    @Test("during a swipe's grace the widget it put down reads rotationLimited at once, as deciding again reads it")
    func aSwipeOverARotatedWidgetIsOneDecision() throws {
        var settings = EngineSettings()
        settings.minimumTimeOnTop = 400
        settings.swipeGracePeriod = 1_000
        var engine = try F.engine(apps: ["a", "b"], settings: settings)
        try engine.apply(F.donation("a", at: 5))
        try engine.apply(.submitTimeline(.instance(F.instance("b")), F.timeline([(100, 1, 0)]), at: F.t(6)))
        engine.publish(at: F.t(100))
        #expect(engine.published(F.stack())?.entries.first?.instance == "b")
        try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("a"), kind: .swipeTo, duration: nil, at: F.t(150)))
        engine.publish(at: F.t(150))
        let published = try #require(engine.published(F.stack()))
        #expect(published.entries.map(\.instance) == ["a", "b"])
        #expect(published.entries.map(\.reason) == [.manualSwipe, .rotationLimited])
        // Decided again with nothing new (before the earlier rotation's minimum time on top ends, and after), the
        // same order and reasons; Explain says the same.
        for time in [200.0, 600.0] {
            let again = try engine.evaluate(stack: F.stack(), at: F.t(time))
            #expect(again.entries.map(\.reason) == published.entries.map(\.reason), "at \(time)")
            let explained = try engine.explain(stack: F.stack(), instance: F.instance("b"), at: F.t(time))
            #expect(explained.widgets.first?.reason == .rotationLimited, "at \(time)")
        }
    }

    @Test func aSecondRotationWithinTheMinimumTimeOnTopIsWithheldAndExplained() throws {
        var engine = try Self.twoRotations()
        #expect(engine.order(at: 100).first == "b")
        // At 200, b's relevance has ended and c's begins, but b rotated up only 100 s ago.
        #expect(engine.order(at: 200).first != "c")
        let explanation = try engine.explain(stack: F.stack(), instance: F.instance("c"), at: F.t(200))
        let widget = try #require(explanation.widgets.first)
        #expect(widget.rotationLimited && widget.reason == .rotationLimited)
        #expect(explanation.nextRotationAllowed == F.t(400))
        // Once five minutes have passed, the rotation happens.
        #expect(engine.order(at: 400).first == "c")
    }

    @Test func aTopWhoseRelevanceWasWithheldKeepsItWithheldWhenDecidedAgain() throws {
        // b rotates up at 100 for a minute; at 200 c is relevant and leads by behaviour too, within b's five minutes.
        var engine = try Self.twoRotations()
        #expect(engine.order(at: 100).first == "b")
        try engine.apply(F.donation("c", at: 190))
        engine.publish(at: F.t(200))
        let published = try #require(engine.published(F.stack()))
        let top = try #require(published.entries.first)
        #expect(top.instance == "c" && top.reason == .rotationLimited)
        // Deciding again at the same time (as `Explain` and the next publish do) gives the same answer: before, the
        // published top was exempt from the limit, so its relevance came back (reason relevance, score + 1).
        let again = try engine.evaluate(stack: F.stack(), at: F.t(200))
        #expect(again.entries.first?.reason == .rotationLimited)
        #expect(again.entries.first?.score == top.score)
        let explained = try engine.explain(stack: F.stack(), instance: F.instance("c"), at: F.t(200))
        #expect(explained.widgets.first?.reason == .rotationLimited && explained.widgets.first?.score == top.score)
        #expect(engine.commit(stack: F.stack(), at: F.t(200)) == nil)
        #expect(try engine.entry("c", at: 399)?.reason == .rotationLimited)
        // Once b's five minutes are over, c's relevance applies where it is: not a rotation, the top did not change.
        #expect(engine.order(at: 400).first == "c")
        #expect(try engine.entry("c", at: 400)?.reason == .relevance)
    }

    @Test func aTopItsRotationPutThereKeepsItsRelevanceWhenTheRelevanceDrops() throws {
        // b rotates up with a high score; its relevance then drops to a fifth (less than its behaviour, so its reason
        // reads behaviour) and still keeps it on top; c is relevant inside b's five minutes.
        var engine = try F.engine(apps: ["a", "b", "c"])
        let falling = F.timeline([(100, 5, 60), (150, 1, 3_600)])
        try engine.apply(.submitTimeline(.instance(F.instance("b")), falling, at: F.t(2)))
        try engine.apply(.submitTimeline(.instance(F.instance("c")), F.timeline([(120, 2, 0)]), at: F.t(2)))
        #expect(engine.order(at: 100).first == "b")
        engine.publish(at: F.t(160))
        let published = try #require(engine.published(F.stack()))
        #expect(published.entries.first?.instance == "b")
        // Decided again (Explain, the next publish after an unrelated event): b keeps the top and its relevance
        // (before, b was limited as if rotating in anew, and a took the top inside the minimum time on top).
        let again = try engine.evaluate(stack: F.stack(), at: F.t(160))
        #expect(again.order == published.order && again.entries.first?.score == published.entries.first?.score)
        try engine.apply(F.donation("elsewhere", at: 170))
        #expect(engine.order(at: 170).first == "b")
    }

    @Test func aWithheldOrGroupedOrUnrotatedRelevanceIsNoShareOfTheScore() throws {
        var engine = try Self.twoRotations()
        #expect(engine.order(at: 100).first == "b")
        let limited = try #require(try engine.entry("c", at: 200))
        #expect(limited.reason == .rotationLimited && limited.contributions[.relevance] == nil)
        var off = try F.engine(apps: ["a", "b"], smartRotate: false)
        try off.apply(.submitTimeline(.instance(F.instance("b")), F.timeline([(100, 1, 0)]), at: F.t(1)))
        let unrotated = try #require(try off.entry("b", at: 100))
        #expect(unrotated.reason == .userOrder && unrotated.contributions[.relevance] == nil)
    }

    @Test func aPinnedWidgetOnTopIsNotARotationWithheld() throws {
        var engine = try F.engine(apps: ["a", "b"], pinned: "b")
        try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("a"), kind: .swipeTo, duration: nil, at: F.t(10)))
        try engine.apply(.submitTimeline(.instance(F.instance("b")), F.timeline([(20, 1, 3_600)]), at: F.t(11)))
        let explanation = try engine.explain(stack: F.stack(), instance: F.instance("b"), at: F.t(30))
        let b = try #require(explanation.widgets.first)
        #expect(b.pinned && b.reason == .pinned && !b.rotationLimited && b.relevance > 0)
    }

    @Test func aLiveActivityAboveTheWidgetsDoesNotLiftTheLimitsOnTheTopWidget() throws {
        var engine = try Self.twoRotations()
        try engine.apply(.startLiveActivity(app: F.app("a"), id: "run", attributes: [:], contentState: [:], at: F.t(5)))
        func widgets(at seconds: Double) -> [String] {
            engine.order(at: seconds).filter { !$0.hasPrefix("liveActivity:") }
        }
        #expect(engine.order(at: 100).first == "liveActivity:\(F.app("a"))/run")
        #expect(widgets(at: 100).first == "b")
        // b's rotation counted, below the activity: c waits for b's five minutes (before, it rotated up at once and
        // no rotation was ever counted, so neither limit applied).
        let explanation = try engine.explain(stack: F.stack(), instance: F.instance("b"), at: F.t(150))
        #expect(explanation.lastRotation == F.t(100) && explanation.widgets.first?.rotationsToday == 1)
        #expect(widgets(at: 200).first != "c")
        #expect(try engine.entry("c", at: 200)?.reason == .rotationLimited)
        #expect(widgets(at: 400).first == "c")
    }

    @Test func aBackdatedContextIsHistory() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 1))
        let declaration = RelevanceDeclaration(
            target: .instance(F.instance("b")), contexts: [.context(key: "location", value: "home")])
        try engine.apply(.declareRelevance(declaration, at: F.t(2)))
        try engine.apply(.setContext(key: "location", value: "home", at: F.t(400)))
        #expect(engine.order(at: 400).first == "b")
        // A value for the same key dated before the one in force changes nothing; a later one does.
        try engine.apply(.setContext(key: "location", value: "work", at: F.t(300)))
        #expect(engine.order(at: 410).first == "b")
        try engine.apply(.setContext(key: "location", value: nil, at: F.t(100)))
        #expect(engine.order(at: 420).first == "b")
        try engine.apply(.setContext(key: "location", value: "work", at: F.t(430)))
        #expect(engine.order(at: 430).first == "a")
        // The times survive a snapshot.
        var restored = try Engine(snapshot: engine.snapshot(), settings: engine.settings)
        try restored.apply(.setContext(key: "location", value: "home", at: F.t(420)))
        #expect(restored.order(at: 440).first == "a")
    }

    @Test func developerModeLiftsTheStabilityLimits() throws {
        var engine = try F.engine(apps: ["a", "b", "c"], developerMode: true)
        try engine.apply(.submitTimeline(.instance(F.instance("b")), F.timeline([(100, 1, 60)]), at: F.t(1)))
        try engine.apply(.submitTimeline(.instance(F.instance("c")), F.timeline([(200, 1, 0)]), at: F.t(1)))
        #expect(engine.order(at: 100).first == "b")
        #expect(engine.order(at: 200).first == "c")
    }

    @Test func theDailyRotationLimitPerWidgetHolds() throws {
        var settings = EngineSettings()
        settings.maxRotationsPerWidgetPerDay = 2
        var engine = try F.engine(apps: ["a", "b"], settings: settings)
        try engine.apply(F.donation("a", at: 1))
        // b is relevant for a minute every hour.
        let entries = (1...4).map { (Double($0) * 3_600, Optional(1.0), 60.0) }
        try engine.apply(.submitTimeline(.instance(F.instance("b")), F.timeline(entries), at: F.t(2)))
        #expect(engine.order(at: 3_600).first == "b")
        #expect(engine.order(at: 3_700).first == "a")
        #expect(engine.order(at: 7_200).first == "b")
        #expect(engine.order(at: 7_300).first == "a")
        #expect(engine.order(at: 10_800).first == "a")
        let explanation = try engine.explain(stack: F.stack(), instance: F.instance("b"), at: F.t(10_800))
        #expect(explanation.widgets.first?.rotationsLeftToday == 0)
        #expect(explanation.widgets.first?.reason == .rotationLimited)
    }

    @Test func aManualSwipeKeepsTheWidgetOnTopForTheGracePeriod() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(F.donation("a", at: 1))
        try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("c"), kind: .swipeTo, duration: nil, at: F.t(10)))
        try engine.apply(F.donation("b", at: 20))
        #expect(engine.order(at: 20).first == "c")
        #expect(try engine.entry("c", at: 20)?.reason == .manualSwipe)
        #expect(engine.order(at: 10 + 15 * 60 - 1).first == "c")
        #expect(engine.order(at: 10 + 15 * 60).first == "b")
    }

    @Test func relevantContextsSurfaceAWidgetWhileTheContextHolds() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 1))
        let declaration = RelevanceDeclaration(
            target: .instance(F.instance("b")), contexts: [.context(key: "location", value: "gym")])
        try engine.apply(.declareRelevance(declaration, at: F.t(2)))
        #expect(engine.order(at: 3).first == "a")
        try engine.apply(.setContext(key: "location", value: "gym", at: F.t(400)))
        #expect(engine.order(at: 400).first == "b")
        #expect(
            try engine.explain(stack: F.stack(), instance: F.instance("b"), at: F.t(400)).widgets.first?.relevantContext
                == 0)
        try engine.apply(.setContext(key: "location", value: nil, at: F.t(500)))
        #expect(engine.order(at: 500).first == "a")
    }

    @Test func widgetsOfOneRelevanceGroupAreNeverSurfacedTogether() throws {
        var engine = try F.engine(apps: ["a"], developerMode: true)
        try engine.apply(.registerKind(F.kind("news", "top"), at: F.t(0)))
        try engine.apply(.registerKind(F.kind("news", "local"), at: F.t(0)))
        let widgets = [
            WidgetPlacement(instance: F.instance("a"), kind: F.kindID("a")),
            WidgetPlacement(instance: F.instance("top"), kind: F.kindID("news", "top")),
            WidgetPlacement(instance: F.instance("local"), kind: F.kindID("news", "local")),
        ]
        try engine.apply(
            .configureStack(
                StackConfiguration(id: F.stack(), family: .systemMedium, widgets: widgets, developerMode: true),
                at: F.t(0)))
        try engine.apply(F.donation("a", at: 1))
        for (name, score) in [("top", 2.0), ("local", 1.0)] {
            try engine.apply(
                .declareRelevance(
                    RelevanceDeclaration(target: .instance(F.instance(name)), contexts: [], group: "headlines"),
                    at: F.t(2)))
            try engine.apply(.submitTimeline(.instance(F.instance(name)), F.timeline([(10, score, 0)]), at: F.t(2)))
        }
        let explanation = try engine.explain(stack: F.stack(), at: F.t(20))
        let local = try #require(explanation.widgets.first { $0.instance == F.instance("local") })
        let top = try #require(explanation.widgets.first { $0.instance == F.instance("top") })
        #expect(top.relevance > 0 && !top.suppressedByGroup)
        #expect(local.relevance == 0 && local.suppressedByGroup)
        #expect(explanation.decision.top == "top")
    }

    @Test func timelinesForAConfigurationApplyToEveryMatchingInstanceIncludingLaterOnes() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(F.donation("a", at: 1))
        try engine.apply(.submitTimeline(.configuration(F.kindID("b"), [:]), F.timeline([(100, 1, 0)]), at: F.t(2)))
        #expect(engine.order(at: 100).first == "b")
        let second = StackConfiguration(
            id: F.stack("second"), family: .systemMedium,
            widgets: [
                WidgetPlacement(instance: F.instance("a2"), kind: F.kindID("a")),
                WidgetPlacement(instance: F.instance("b2"), kind: F.kindID("b")),
            ])
        try engine.apply(.configureStack(second, at: F.t(200)))
        #expect(engine.order(at: 200, stack: F.stack("second")).first == "b2")
    }
}

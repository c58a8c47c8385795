import SmartStackCore
import Testing

@Suite("Engine: stacks, behaviour and decisions")
struct EngineTests {
    typealias F = Fixture

    @Test func freshStackShowsTheUsersOrder() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        #expect(engine.order(at: 1) == ["a", "b", "c"])
        let decision = try #require(engine.published(F.stack()))
        #expect(decision.revision == 1)
        #expect(decision.entries.map(\.position) == [0, 1, 2])
    }

    @Test func aDonationMovesItsWidgetUpAndTheRevisionFollowsTheOrder() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(F.donation("c", at: 10))
        #expect(engine.order(at: 10).first == "c")
        let revision = try #require(engine.published(F.stack())).revision
        #expect(revision == 2)
        // Nothing changed: publishing again at the same time keeps the revision. (A second later the idle-gap
        // signals move the scores, and a score change of 0.001 or more is a new revision.)
        _ = engine.order(at: 10)
        #expect(engine.published(F.stack())?.revision == revision)
        let top = try #require(try engine.entry("c", at: 11))
        #expect(top.reason == .behaviour)
        #expect((top.contributions[.recency] ?? 0) > 0)
    }

    @Test func smartRotateOffKeepsTheUsersOrder() throws {
        var engine = try F.engine(apps: ["a", "b", "c"], smartRotate: false)
        try engine.apply(F.donation("c", at: 10))
        #expect(engine.order(at: 10) == ["a", "b", "c"])
        #expect(try engine.entry("a", at: 10)?.reason == .userOrder)
    }

    @Test func pinnedWidgetStaysOnTop() throws {
        var engine = try F.engine(apps: ["a", "b"], pinned: "b")
        try engine.apply(F.donation("a", at: 5))
        #expect(engine.order(at: 5) == ["b", "a"])
        let entry = try #require(try engine.entry("b", at: 5))
        #expect(entry.pinned && entry.reason == .pinned)
    }

    @Test(arguments: [
        ("unknown kind", CoreError.notFound(kind: "widgetKind", id: "com.example.zz/main")),
        (
            "bad family",
            CoreError.invalidParameter(
                parameter: "widgets[0].kind", reason: "com.example.a/main does not support family systemSmall")
        ),
        (
            "pinned elsewhere",
            CoreError.invalidParameter(parameter: "pinned", reason: "instance 'x' is not in the stack")
        ),
    ])
    func configurationErrorsNameWhatIsWrong(_ testCase: (String, CoreError)) throws {
        var engine = Engine()
        try engine.apply(.registerKind(F.kind("a"), at: F.t(0)))
        let kind = testCase.0 == "unknown kind" ? F.kindID("zz") : F.kindID("a")
        let family: WidgetFamily = testCase.0 == "bad family" ? .systemSmall : .systemMedium
        let configuration = StackConfiguration(
            id: F.stack(), family: family, widgets: [WidgetPlacement(instance: F.instance("w"), kind: kind)],
            pinned: testCase.0 == "pinned elsewhere" ? F.instance("x") : nil)
        #expect(throws: testCase.1) { try engine.apply(.configureStack(configuration, at: F.t(0))) }
        #expect(engine.stackIDs.isEmpty)
    }

    @Test func stackLimitsAreEnforced() throws {
        var settings = EngineSettings()
        settings.maxWidgetsPerStack = 2
        settings.maxStacks = 1
        #expect(throws: CoreError.limitExceeded(limit: "maxWidgetsPerStack", maximum: 2)) {
            _ = try F.engine(apps: ["a", "b", "c"], settings: settings)
        }
        var engine = try F.engine(apps: ["a", "b"], settings: settings)
        let other = StackConfiguration(id: F.stack("other"), family: .systemMedium, widgets: [])
        #expect(throws: CoreError.limitExceeded(limit: "maxStacks", maximum: 1)) {
            try engine.apply(.configureStack(other, at: F.t(1)))
        }
        // The same instance cannot sit in two stacks.
        var two = try F.engine(apps: ["a"])
        let clash = StackConfiguration(
            id: F.stack("s2"), family: .systemMedium,
            widgets: [WidgetPlacement(instance: F.instance("a"), kind: F.kindID("a"))])
        #expect(throws: CoreError.conflict(kind: "instance", id: "a", reason: "is placed in stack 'home'")) {
            try two.apply(.configureStack(clash, at: F.t(1)))
        }
    }

    @Test func configurationErrorsArePrefixedWithTheWidget() throws {
        var engine = Engine()
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        try engine.apply(.registerKind(F.kind("weather", intent: schema), at: F.t(0)))
        let configuration = StackConfiguration(
            id: F.stack(), family: .systemMedium,
            widgets: [WidgetPlacement(instance: F.instance("w"), kind: F.kindID("weather"))])
        #expect(throws: CoreError.invalidParameter(parameter: "widgets[0].configuration.city", reason: "required")) {
            try engine.apply(.configureStack(configuration, at: F.t(0)))
        }
    }

    @Test func donationsMatchInstancesByConfigurationAndPredictionMapping() throws {
        var engine = Engine()
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        let mapping = PredictionMapping(intentType: "ViewForecast", parameters: ["place": "city"])
        try engine.apply(.registerKind(F.kind("weather", intent: schema, mappings: [mapping]), at: F.t(0)))
        try engine.apply(.registerKind(F.kind("notes"), at: F.t(0)))
        let widgets = [
            WidgetPlacement(instance: F.instance("notes"), kind: F.kindID("notes")),
            WidgetPlacement(
                instance: F.instance("berlin"), kind: F.kindID("weather"), configuration: ["city": .string("Berlin")]),
            WidgetPlacement(
                instance: F.instance("paris"), kind: F.kindID("weather"), configuration: ["city": .string("Paris")]),
        ]
        try engine.apply(
            .configureStack(StackConfiguration(id: F.stack(), family: .systemMedium, widgets: widgets), at: F.t(0)))
        try engine.apply(F.donation("weather", at: 60, intent: "ViewForecast", parameters: ["place": "Paris"]))
        #expect(engine.order(at: 60).first == "paris")
        try engine.apply(F.donation("weather", at: 120, intent: "CityIntent", parameters: ["city": "Berlin"]))
        #expect(engine.order(at: 120).first == "berlin")
    }

    /// A stack of notes and Berlin's weather, and six donations for Tokyo's (not placed), a minute apart.
    static func suggestionEngine() throws -> (Engine, StackConfiguration) {
        var engine = Engine()
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        try engine.apply(.registerKind(F.kind("weather", intent: schema), at: F.t(0)))
        try engine.apply(.registerKind(F.kind("notes"), at: F.t(0)))
        let configuration = StackConfiguration(
            id: F.stack(), family: .systemMedium,
            widgets: [
                WidgetPlacement(instance: F.instance("notes"), kind: F.kindID("notes")),
                WidgetPlacement(
                    instance: F.instance("berlin"), kind: F.kindID("weather"),
                    configuration: ["city": .string("Berlin")]),
            ])
        try engine.apply(.configureStack(configuration, at: F.t(0)))
        for minute in 1...6 {
            try engine.apply(
                F.donation("weather", at: Double(minute * 60), intent: "CityIntent", parameters: ["city": "Tokyo"]))
        }
        return (engine, configuration)
    }

    @Test func suggestionsInsertAWidgetThatIsNotInTheStack() throws {
        var (engine, configuration) = try Self.suggestionEngine()
        let decision = try engine.evaluate(stack: F.stack(), at: F.t(400))
        let top = try #require(decision.entries.first)
        #expect(top.suggested && top.reason == .suggestion)
        #expect(top.instance == "suggestion:com.example.weather/main?city=Tokyo")
        // Its signals, against the stack's average widget: six recent donations (before, none were given).
        #expect((top.contributions[.recency] ?? 0) > 0)
        #expect(decision.entries.count == 3)
        configuration.suggestions = false
        try engine.apply(.configureStack(configuration, at: F.t(401)))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(401)).entries.allSatisfy { !$0.suggested })
    }

    @Test("a suggestion the minimum time on top keeps out is named by Explain, and comes once the limit allows")
    func aWithheldSuggestionIsExplained() throws {
        var (engine, _) = try Self.suggestionEngine()
        // A manual swipe at 390 holds the top: the Tokyo suggestion waits (before, Explain did not mention it).
        try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("notes"), kind: .swipeTo, duration: nil, at: F.t(390)))
        let tokyo = "suggestion:com.example.weather/main?city=Tokyo"
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(400)).entries.allSatisfy { !$0.suggested })
        let explained = try engine.explain(stack: F.stack(), at: F.t(400))
        #expect(explained.withheldSuggestion == tokyo)
        #expect(explained.nextRotationAllowed == F.t(390 + 15 * 60))
        // Once the grace is over it is inserted, and nothing waits.
        let later = F.t(390 + 15 * 60)
        #expect(try engine.evaluate(stack: F.stack(), at: later).entries.first?.instance == tokyo)
        #expect(try engine.explain(stack: F.stack(), at: later).withheldSuggestion == nil)
    }

    @Test("suggestions follow their own switch: with Smart Rotate off a suggestion still comes, above the user's order")
    func suggestionsWithoutSmartRotate() throws {
        var (engine, configuration) = try Self.suggestionEngine()
        configuration.smartRotate = false
        configuration.suggestions = true
        try engine.apply(.configureStack(configuration, at: F.t(401)))
        let decision = try engine.evaluate(stack: F.stack(), at: F.t(402))
        #expect(decision.order == ["suggestion:com.example.weather/main?city=Tokyo", "notes", "berlin"])
        #expect(decision.entries.dropFirst().allSatisfy { $0.reason == .userOrder && abs($0.score - 0.5) < 1e-12 })
        configuration.suggestions = false
        try engine.apply(.configureStack(configuration, at: F.t(403)))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(404)).order == ["notes", "berlin"])
    }

    @Test("a suggestion lasts 24 hours from the candidate's last donation, measured at the query's time")
    func suggestionsExpire() throws {
        var (engine, _) = try Self.suggestionEngine()
        let last = 360.0
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(last + 3_600)).entries.contains { $0.suggested })
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(last + 86_399)).entries.contains { $0.suggested })
        // No other event came: the query's own time ends it.
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(last + 86_400)).entries.allSatisfy { !$0.suggested })
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(last + 31 * 86_400)).entries.allSatisfy { !$0.suggested })
        // Published with the suggestion, the engine wakes when it expires and publishes it gone.
        let published = engine.publish(at: F.t(last + 60)).decisions
        #expect(published.first?.entries.first?.suggested == true)
        #expect(engine.nextWakeUp.map { $0 <= F.t(last + 86_400) } == true)
        let later = engine.publish(at: F.t(last + 86_400)).decisions
        #expect(later.count == 1 && later[0].entries.allSatisfy { !$0.suggested })
    }

    @Test("a suggestion on top takes engagement: swiped away it stays out for 24 hours, survives a snapshot")
    func aSuggestionTakesEngagement() throws {
        var (engine, _) = try Self.suggestionEngine()
        let tokyo = "suggestion:com.example.weather/main?city=Tokyo"
        let tokyoID = try InstanceID(tokyo)
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(400)).entries.first?.instance == tokyo)
        // A tap and an impression are taken (before, each was InvalidParameter naming the instance); the order stays.
        try engine.apply(.engage(stack: F.stack(), instance: tokyoID, kind: .tap, duration: nil, at: F.t(401)))
        try engine.apply(.engage(stack: F.stack(), instance: tokyoID, kind: .impression, duration: 2, at: F.t(402)))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(403)).entries.first?.instance == tokyo)
        #expect(
            try engine.explain(stack: F.stack(), instance: tokyoID, at: F.t(403)).decision.entries.first?.instance
                == tokyo)
        // Swiped away, it leaves the stack, also after more donations to it, for 24 hours from the swipe.
        try engine.apply(.engage(stack: F.stack(), instance: tokyoID, kind: .swipeAway, duration: nil, at: F.t(500)))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(501)).entries.allSatisfy { !$0.suggested })
        try engine.apply(F.donation("weather", at: 600, intent: "CityIntent", parameters: ["city": "Tokyo"]))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(601)).entries.allSatisfy { !$0.suggested })
        // Kept by a snapshot.
        var restored = try Engine(snapshot: engine.snapshot(), settings: engine.settings)
        #expect(try restored.evaluate(stack: F.stack(), at: F.t(601)).entries.allSatisfy { !$0.suggested })
        try restored.apply(F.donation("weather", at: 80_000, intent: "CityIntent", parameters: ["city": "Tokyo"]))
        #expect(try restored.evaluate(stack: F.stack(), at: F.t(86_899)).entries.allSatisfy { !$0.suggested })
        #expect(try restored.evaluate(stack: F.stack(), at: F.t(86_900)).entries.first?.instance == tokyo)
        // An id that names no candidate of the stack is still refused, saying so.
        let other = try InstanceID("suggestion:com.example.weather/main?city=Oslo")
        #expect(
            throws: CoreError.invalidParameter(
                parameter: "instance", reason: "'\(other)' is not a suggestion of stack '\(F.stack())'")
        ) {
            try engine.apply(.engage(stack: F.stack(), instance: other, kind: .tap, duration: nil, at: F.t(700)))
        }
    }

    @Test("a suggestion's id is visible ASCII whatever its values, so the shell can send it back")
    func suggestionIDsAreInstanceIDs() throws {
        var (engine, _) = try Self.suggestionEngine()
        for minute in 7...14 {
            try engine.apply(
                F.donation("weather", at: Double(minute * 60), intent: "CityIntent", parameters: ["city": "São Paulo"]))
        }
        let id = "suggestion:com.example.weather/main?city=S%C3%A3o%20Paulo"
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(900)).entries.first?.instance == id)
        // Before, the id held the space and the ã as they are, and no instance id may: the swipe was refused.
        let instance = try InstanceID(id)
        try engine.apply(.engage(stack: F.stack(), instance: instance, kind: .swipeAway, duration: nil, at: F.t(901)))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(902)).entries.allSatisfy { $0.instance != id })
    }

    @Test("a kind's new definition must fit its placed instances: one that does not is a conflict naming the instance")
    func aNewDefinitionMustFitThePlacedInstances() throws {
        var (engine, _) = try Self.suggestionEngine()
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        // Only systemSmall now: the stack is systemMedium, and berlin is placed in it.
        #expect(throws: CoreError.self) {
            try engine.apply(.registerKind(F.kind("weather", families: [.systemSmall], intent: schema), at: F.t(500)))
        }
        do throws(CoreError) {
            try engine.apply(.registerKind(F.kind("weather", families: [.systemSmall], intent: schema), at: F.t(500)))
            Issue.record("a definition berlin does not fit was taken")
        } catch {
            guard case .conflict(let kind, _, let reason) = error else { throw error }
            #expect(kind == "widgetKind" && reason.contains("instance 'berlin' of stack 'home'"), "\(reason)")
        }
        // Without the city parameter, berlin's configuration no longer validates.
        #expect(throws: CoreError.self) { try engine.apply(.registerKind(F.kind("weather"), at: F.t(501))) }
        #expect(engine.kind(F.kindID("weather"))?.families == [.systemMedium])
        // A definition that still fits (another family added) replaces the old one.
        try engine.apply(
            .registerKind(F.kind("weather", families: [.systemMedium, .systemSmall], intent: schema), at: F.t(502)))
        #expect(engine.kind(F.kindID("weather"))?.families == [.systemMedium, .systemSmall])
    }

    @Test func theRankerLearnsFromWhatTheUserDoesAfterALook() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        // Every look is followed by opening "b", although "a" is always the app used last.
        var time = 0.0
        for _ in 0..<60 {
            time += 600
            try engine.apply(F.donation("a", at: time))
            try engine.apply(.look(stack: F.stack(), at: F.t(time + 30)))
            try engine.apply(F.donation("b", at: time + 40))
            try engine.apply(F.donation("a", at: time + 50))
        }
        let explanation = try engine.explain(stack: F.stack(), at: F.t(time + 80))
        #expect(explanation.learnedFromLooks == 60)
        #expect(explanation.decision.top == "b")
        // A look followed by nothing within the window teaches nothing.
        try engine.apply(.look(stack: F.stack(), at: F.t(time + 100)))
        try engine.apply(F.donation("c", at: time + 100 + 601))
        #expect(try engine.explain(stack: F.stack(), at: F.t(time + 800)).learnedFromLooks == 60)
    }

    /// A donation dated before a look is not what the user did after it: the look waits for the next one. A look
    /// dated centuries ahead of the donations (hostile stored bytes, found by fuzz-codec) then teaches nothing, where
    /// it used to weigh e^(centuries / 30 days) = infinity in the look tables and turn features into NaN, which no
    /// snapshot could store.
    @Test func aDonationDatedBeforeALookIsNotItsOutcome() throws {
        var engine = try F.engine(apps: ["a", "b", "c"])
        try engine.apply(F.donation("a", at: 0))
        try engine.apply(.look(stack: F.stack(), at: F.t(1_000)))
        try engine.apply(F.donation("b", at: 400))
        #expect(try engine.explain(stack: F.stack(), at: F.t(1_001)).learnedFromLooks == 0)
        try engine.apply(F.donation("c", at: 1_005))
        #expect(try engine.explain(stack: F.stack(), at: F.t(1_006)).learnedFromLooks == 1)

        try engine.apply(.look(stack: F.stack(), at: F.t(321 * 365 * 86_400)))
        try engine.apply(F.donation("b", at: 1_010))
        let explanation = try engine.explain(stack: F.stack(), at: F.t(1_011))
        #expect(explanation.learnedFromLooks == 1)
        #expect(
            explanation.widgets.allSatisfy {
                $0.behaviour.isFinite && $0.contributions.nonZero.allSatisfy { $0.share.isFinite }
            })
        try CodecFuzzCorpusTests.expectRoundTrip(engine)
    }

    @Test func liveActivitiesShowAboveTheirAppsWidgetsWithinTheirLimits() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(
            .startLiveActivity(app: F.app("b"), id: "game", attributes: [:], contentState: ["score": "1"], at: F.t(10)))
        #expect(engine.order(at: 10).first == "liveActivity:com.example.b/game")
        #expect(try engine.entry("liveActivity:com.example.b/game", at: 10)?.reason == .liveActivity)
        // Still shown (ended) after 8 hours, gone after 8 + 4 hours.
        #expect(engine.order(at: 10 + 9 * 3_600).first == "liveActivity:com.example.b/game")
        #expect(engine.order(at: 10 + 12 * 3_600 + 1).first != "liveActivity:com.example.b/game")
        #expect(engine.order(at: 10 + 12 * 3_600 + 1).count == 2)
    }

    /// Every entry's position is its place in the order, Live Activities' too (two activities were both at 0).
    @Test func positionsCountLiveActivities() throws {
        var engine = try F.engine(apps: ["a", "b"])
        for id in ["game", "ride"] {
            try engine.apply(
                .startLiveActivity(app: F.app("b"), id: id, attributes: [:], contentState: ["n": "1"], at: F.t(10)))
        }
        let entries = try engine.evaluate(stack: F.stack(), at: F.t(20)).entries
        #expect(entries.count == 4)
        #expect(entries.prefix(2).allSatisfy { $0.reason == .liveActivity })
        #expect(entries.map(\.position) == Array(0..<4))
    }

    /// The budget runs on the engine's time: `ReloadTimelines` dated back day after day (each day's window long
    /// past) is counted at the engine's time, so it gathers no more than one budget.
    @Test func backdatedReloadRequestsShareTheCurrentWindow() throws {
        var settings = EngineSettings()
        settings.reloadBudget = 40
        var engine = try F.engine(apps: ["a"], settings: settings)
        try engine.apply(
            .submitTimeline(.instance(F.instance("a")), F.timeline([(0, 1, 0)], policy: .never), at: F.t(1)))
        let now = 10 * 86_400.0
        try engine.apply(.look(stack: F.stack(), at: F.t(now)))
        var requested: [Timestamp] = []
        for daysBack in [3.0, 2, 1, 0] {
            for i in 0..<40 {
                let time = F.t(now - daysBack * 86_400 + Double(i))
                for case .reloadRequested(_, _, _, let at) in try engine.apply(
                    .reloadTimelines(app: F.app("a"), kind: nil, at: time))
                {
                    requested.append(at)
                }
            }
        }
        #expect(requested.count == 40)
        #expect(requested.allSatisfy { $0 == F.t(now) })
        #expect(try engine.budget(of: F.instance("a"), at: F.t(now)).left == 0)
    }

    /// A refused event's own date moves nothing: a replay of the log, which does not hold it, reaches the same clock.
    @Test func refusedEventDoesNotMoveTheClock() throws {
        var engine = try F.engine(apps: ["a"])
        try engine.apply(.look(stack: F.stack(), at: F.t(100)))
        #expect(throws: CoreError.self) { try engine.apply(.look(stack: try StackID("nowhere"), at: F.t(5_000))) }
        #expect(engine.now == F.t(100))
    }

    /// A backdated swipe is history: it does not undo a later rotation's minimum time on top.
    @Test func backdatedSwipeDoesNotMoveTheLastRotationBack() throws {
        var engine = try F.engine(apps: ["a", "b"])
        try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("b"), kind: .swipeTo, duration: nil, at: F.t(3_600)))
        try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("a"), kind: .swipeTo, duration: nil, at: F.t(60)))
        let explained = try engine.explain(stack: F.stack(), instance: nil, at: F.t(3_601))
        #expect(explained.lastRotation == F.t(3_600))
        #expect(engine.order(at: 3_601).first == "b")
    }

    @Test func aPolicysReloadIsExemptWhileTheAppIsInTheForegroundAndAWithheldOneGoesOutWhenItComesToTheFront() throws {
        var settings = EngineSettings()
        settings.reloadBudget = 40
        var engine = try F.engine(apps: ["a", "b"], settings: settings)
        try engine.apply(.submitTimeline(.instance(F.instance("a")), F.timeline([(0, 1, 0)]), at: F.t(1)))
        for i in 0..<40 { _ = try engine.apply(.reloadTimelines(app: F.app("a"), kind: nil, at: F.t(Double(10 + i)))) }
        #expect(try engine.budget(of: F.instance("a"), at: F.t(60)).left == 0)
        func requested(_ effects: [EngineEffect]) -> [ReloadReason] {
            effects.compactMap { if case .reloadRequested(_, _, let reason, _) = $0 { reason } else { nil } }
        }
        // The app in front: its timeline's end asks for a reload, sent without spending budget.
        _ = try engine.apply(.setContext(key: "foregroundApp", value: F.app("a").rawValue, at: F.t(100)))
        let ending = F.timeline([(200, 1, 0)], policy: .atEnd)
        try engine.apply(.submitTimeline(.instance(F.instance("a")), ending, at: F.t(110)))
        #expect(requested(engine.publish(at: F.t(200)).effects) == [.timelineEnded])
        #expect(try engine.budget(of: F.instance("a"), at: F.t(200)).used == 40)
        // Another app in front: withheld; then the app comes to the front and the reload goes out, exempt.
        _ = try engine.apply(.setContext(key: "foregroundApp", value: F.app("b").rawValue, at: F.t(250)))
        let next = F.timeline([(300, 1, 0)], policy: .atEnd)
        try engine.apply(.submitTimeline(.instance(F.instance("a")), next, at: F.t(260)))
        let withheld = engine.publish(at: F.t(300)).effects
        #expect(requested(withheld).isEmpty)
        #expect(withheld.contains { if case .reloadWithheld = $0 { true } else { false } })
        let front = try engine.apply(.setContext(key: "foregroundApp", value: F.app("a").rawValue, at: F.t(400)))
        #expect(requested(front) == [.appForeground])
        #expect(try engine.budget(of: F.instance("a"), at: F.t(400)).used == 40)
        #expect(requested(engine.publish(at: F.t(10 + 86_400)).effects).isEmpty)
    }

    @Test func reloadBudgetWithholdsOverBudgetRequestsAndExemptsTaps() throws {
        var settings = EngineSettings()
        settings.reloadBudget = 40
        var engine = try F.engine(apps: ["a"], settings: settings)
        try engine.apply(.submitTimeline(.instance(F.instance("a")), F.timeline([(0, 1, 0)]), at: F.t(1)))
        var requested = 0
        var withheld: [Timestamp] = []
        for i in 0..<45 {
            for effect in try engine.apply(.reloadTimelines(app: F.app("a"), kind: nil, at: F.t(Double(10 + i)))) {
                switch effect {
                case .reloadRequested: requested += 1
                case .reloadWithheld(_, _, _, let until, _): withheld.append(until)
                case .timelineWarnings: break
                }
            }
        }
        #expect(requested == 40)
        #expect(withheld.first == F.t(10 + 86_400))
        let budget = try engine.budget(of: F.instance("a"), at: F.t(100))
        #expect(budget.used == 40 && budget.left == 0 && budget.nextAvailable == F.t(10 + 86_400))
        // When the budget frees up, the withheld reload goes out.
        let later = engine.publish(at: F.t(10 + 86_400)).effects
        #expect(
            later.contains {
                if case .reloadRequested(_, _, .providerRequest, F.t(10 + 86_400)) = $0 { true } else { false }
            })
        // Spent again; a tap still causes a reload, exempt from the budget.
        #expect(try engine.budget(of: F.instance("a"), at: F.t(10 + 86_400)).left == 0)
        let effects = try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("a"), kind: .tap, duration: nil, at: F.t(10 + 86_401)))
        #expect(effects.contains { if case .reloadRequested(_, _, .userInteraction, _) = $0 { true } else { false } })
    }

    @Test("a tap dated in the past asks for the reload at the engine's time, not the tap's")
    func pastTapReloadsAtEngineTime() throws {
        var engine = try F.engine(apps: ["a"])
        try engine.apply(.submitTimeline(.instance(F.instance("a")), F.timeline([(0, 1, 0)]), at: F.t(1)))
        try engine.apply(.look(stack: F.stack(), at: F.t(500)))
        let effects = try engine.apply(
            .engage(stack: F.stack(), instance: F.instance("a"), kind: .tap, duration: nil, at: F.t(2)))
        let dates = effects.compactMap { effect -> Timestamp? in
            if case .reloadRequested(_, _, .userInteraction, let at) = effect { at } else { nil }
        }
        #expect(dates == [F.t(500)])
    }

    @Test func engagementAndContextErrorsNameTheParameter() throws {
        var engine = try F.engine(apps: ["a"])
        #expect(
            throws: CoreError.invalidParameter(parameter: "instance", reason: "instance 'zz' is not in stack 'home'")
        ) {
            try engine.apply(
                .engage(stack: F.stack(), instance: F.instance("zz"), kind: .tap, duration: nil, at: F.t(1)))
        }
        #expect(throws: CoreError.notFound(kind: "stack", id: "nope")) {
            try engine.apply(.look(stack: F.stack("nope"), at: F.t(1)))
        }
        #expect(throws: CoreError.invalidParameter(parameter: "key", reason: "must be 1-255 bytes")) {
            try engine.apply(.setContext(key: "", value: "x", at: F.t(1)))
        }
    }
}

@testable import SmartStackCore
import Testing

/// State that grows with the distinct values clients send is bounded, and one app reaching its bound takes
/// nothing from another (`maxUnplacedConfigurationsPerApp`, `maxContextPairs`).
@Suite("Engine: state bounded by distinct values")
struct EngineBoundsTests {
    typealias F = Fixture

    /// Weather (a city parameter) with Berlin placed, and a second app with the same kind of widget, Paris placed.
    static func setup() throws -> [EngineEvent] {
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        let widgets = [
            WidgetPlacement(
                instance: F.instance("berlin"), kind: F.kindID("weather"), configuration: ["city": .string("Berlin")]),
            WidgetPlacement(
                instance: F.instance("paris"), kind: F.kindID("forecast"), configuration: ["city": .string("Paris")]),
        ]
        return [
            .registerKind(F.kind("weather", intent: schema), at: F.t(0)),
            .registerKind(F.kind("forecast", intent: schema), at: F.t(0)),
            .configureStack(StackConfiguration(id: F.stack(), family: .systemMedium, widgets: widgets), at: F.t(0)),
        ]
    }

    static func engine(limit: Int) throws -> Engine {
        var settings = EngineSettings()
        settings.maxUnplacedConfigurationsPerApp = limit
        var engine = Engine(settings: settings)
        for event in try setup() { try engine.apply(event) }
        return engine
    }

    static func city(_ app: String, _ city: String, at seconds: Double) -> EngineEvent {
        F.donation(app, at: seconds, intent: "CityIntent", parameters: ["city": city])
    }

    @Test("donations implying ever-new configurations stop making keys at the app's limit; other apps keep theirs")
    func impliedConfigurationsAreBounded() throws {
        var engine = try Self.engine(limit: 3)
        for i in 0..<50 { try engine.apply(Self.city("weather", "city\(i)", at: Double(60 + i))) }
        #expect(engine.unplacedKeyCount(of: F.app("weather")) == 3)
        #expect(engine.keysByApp[F.app("weather")]?.count == 4)  // Berlin, placed, and three unplaced
        // The first three are the candidates; a donation to one of them still counts for it.
        let decision = try engine.evaluate(stack: F.stack(), at: F.t(200))
        #expect(
            decision.entries.filter(\.suggested).map(\.instance) == ["suggestion:com.example.weather/main?city=city2"])
        // A placed configuration still learns from every donation past the limit.
        for i in 0..<5 { try engine.apply(Self.city("weather", "Berlin", at: Double(300 + i))) }
        #expect(engine.order(at: 310).first == "berlin")
        // The other app was not charged for the first one's values.
        for i in 0..<3 { try engine.apply(Self.city("forecast", "town\(i)", at: Double(400 + i))) }
        #expect(engine.unplacedKeyCount(of: F.app("forecast")) == 3)
    }

    @Test("other apps' candidates, backdated or many, do not push a suggestion out before the model scores it")
    func suggestionsAreChosenByTheModelAmongOtherAppsCandidates() throws {
        var (engine, _) = try EngineTests.suggestionEngine()
        let schema = try IntentSchema(type: "SpamIntent", parameters: [ParameterSchema(name: "x", type: .string)])
        for app in ["spam1", "spam2", "spam3"] {
            try engine.apply(.registerKind(F.kind(app, intent: schema), at: F.t(370)))
        }
        // Three configurations of one app, donated once each, dated before Tokyo's donations but arriving after.
        for x in 0..<3 {
            try engine.apply(F.donation("spam1", at: 30 + Double(x), intent: "SpamIntent", parameters: ["x": "\(x)"]))
        }
        #expect(engine.order(at: 375).first == "suggestion:com.example.weather/main?city=Tokyo")
        // Fresh ones of another app, three configurations: Tokyo is still among the three the model scores (two of
        // one app at most), and the model decides.
        for x in 10..<13 {
            try engine.apply(F.donation("spam2", at: 380 + Double(x), intent: "SpamIntent", parameters: ["x": "\(x)"]))
        }
        let state = try #require(engine.stacks[F.stack()])
        let scored = engine.suggestionCandidates(for: state, at: F.t(400)).map { engine.suggestionID($0) }
        #expect(
            scored == [
                "suggestion:com.example.spam2/main?x=12", "suggestion:com.example.spam2/main?x=11",
                "suggestion:com.example.weather/main?city=Tokyo",
            ], "\(scored)")
        // The candidates are kept in the order of their last use (the backdated ones first).
        let lastUses = engine.suggestionCandidates.compactMap { engine.usage.lastUse(of: $0) }
        #expect(lastUses == lastUses.sorted())
    }

    @Test("a call that makes a shown suggestion ineligible takes it away at the next publish, not 60 s later")
    func aSuggestionMadeIneligibleLeavesAtOnce() throws {
        let tokyo = "suggestion:com.example.weather/main?city=Tokyo"
        // What a publish at `seconds` leaves published (`order(at:)` decides the stack again whatever changed).
        func shown(_ engine: inout Engine, at seconds: Double) -> [String] {
            engine.publish(at: F.t(seconds))
            return engine.published(F.stack())?.order ?? []
        }
        // Its configuration declared in the group of one of the stack's widgets; placed in no stack, or in another.
        for placedElsewhere in [false, true] {
            var (engine, _) = try EngineTests.suggestionEngine()
            if placedElsewhere {
                let work = StackConfiguration(
                    id: F.stack("work"), family: .systemMedium,
                    widgets: [
                        WidgetPlacement(
                            instance: F.instance("tokyo"), kind: F.kindID("weather"),
                            configuration: ["city": .string("Tokyo")])
                    ])
                try engine.apply(.configureStack(work, at: F.t(399)))
            }
            #expect(engine.order(at: 400).first == tokyo)
            for (target, time) in [
                (TimelineTarget.instance(F.instance("berlin")), 401.0),
                (.configuration(F.kindID("weather"), ["city": .string("Tokyo")]), 402),
            ] {
                #expect(shown(&engine, at: time - 0.5).first == tokyo)
                try engine.apply(
                    .declareRelevance(RelevanceDeclaration(target: target, contexts: [], group: "g"), at: F.t(time)))
            }
            #expect(!shown(&engine, at: 403).contains(tokyo), "placed elsewhere: \(placedElsewhere)")
        }
        // Its kind defined again without the stack's family (a kind of another app, with no widget placed).
        var (other, _) = try EngineTests.suggestionEngine()
        let schema = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        try other.apply(.registerKind(F.kind("radar", intent: schema), at: F.t(370)))
        for second in 0..<8 {
            try other.apply(
                F.donation("radar", at: 380 + Double(second), intent: "CityIntent", parameters: ["city": "Oslo"]))
        }
        let radar = "suggestion:com.example.radar/main?city=Oslo"
        #expect(other.order(at: 400).first == radar)
        #expect(shown(&other, at: 400.5).first == radar)
        try other.apply(.registerKind(F.kind("radar", families: [.systemLarge], intent: schema), at: F.t(401)))
        #expect(!shown(&other, at: 402).contains(radar))
    }

    @Test("past maxSuggestionCandidates the app holding the most candidates gives up its oldest, not another app")
    func suggestionCandidatesAreSharedByApps() throws {
        var settings = EngineSettings()
        settings.maxSuggestionCandidates = 4
        var engine = Engine(settings: settings)
        for event in try Self.setup() { try engine.apply(event) }
        try engine.apply(Self.city("forecast", "Lyon", at: 60))
        for i in 0..<20 { try engine.apply(Self.city("weather", "city\(i)", at: Double(70 + i))) }
        let apps = engine.suggestionCandidates.map { engine.keys[Int($0)].kind.app }
        #expect(apps.count == 4)
        // The forecast app's one candidate stays (kept by recency alone, the weather app's twenty pushed it out);
        // the weather app keeps its three most recent.
        #expect(apps.filter { $0 == F.app("forecast") }.count == 1)
        let cities = engine.suggestionCandidates.filter { engine.keys[Int($0)].kind.app == F.app("weather") }.map {
            engine.keys[Int($0)].configuration.values["city"]
        }
        #expect(cities == [.string("city17"), .string("city18"), .string("city19")])
    }

    @Test("past the app's limit a timeline for a new configuration is LimitExceeded; placing one frees a place")
    func timelinesForUnplacedConfigurationsAreBounded() throws {
        var engine = try Self.engine(limit: 2)
        let timeline = F.timeline([(0, 0.5, 3_600)])
        for city in ["Rome", "Oslo"] {
            try engine.apply(
                .submitTimeline(.configuration(F.kindID("weather"), ["city": .string(city)]), timeline, at: F.t(1)))
        }
        let third = EngineEvent.submitTimeline(
            .configuration(F.kindID("weather"), ["city": .string("Lima")]), timeline, at: F.t(2))
        #expect(throws: CoreError.limitExceeded(limit: "maxUnplacedConfigurationsPerApp", maximum: 2)) {
            try engine.apply(third)
        }
        // Known configurations may still be updated, placed or not.
        try engine.apply(
            .submitTimeline(.configuration(F.kindID("weather"), ["city": .string("Rome")]), timeline, at: F.t(3)))
        try engine.apply(
            .declareRelevance(
                RelevanceDeclaration(
                    target: .configuration(F.kindID("weather"), ["city": .string("Berlin")]),
                    contexts: [.context(key: "trip", value: "yes")]),
                at: F.t(3)))
        // The other app has its own room.
        try engine.apply(
            .submitTimeline(.configuration(F.kindID("forecast"), ["city": .string("Lima")]), timeline, at: F.t(4)))
        // Placing Rome takes it out of the unplaced ones: Lima fits now, and Rome's stored timeline applies.
        let widgets = [
            WidgetPlacement(
                instance: F.instance("berlin"), kind: F.kindID("weather"), configuration: ["city": .string("Berlin")]),
            WidgetPlacement(
                instance: F.instance("rome"), kind: F.kindID("weather"), configuration: ["city": .string("Rome")]),
        ]
        try engine.apply(
            .configureStack(StackConfiguration(id: F.stack(), family: .systemMedium, widgets: widgets), at: F.t(5)))
        #expect(try engine.entry("rome", at: 6)?.contributions[.relevance] != nil)
        #expect(try engine.entry("berlin", at: 6)?.contributions[.relevance] == nil)
        try engine.apply(third)
        #expect(engine.unplacedKeyCount(of: F.app("weather")) == 2)
    }

    @Test("with a limit of 0 no configuration outside the stacks is kept: no suggestions, timelines for placed ones")
    func zeroKeepsNothingUnplaced() throws {
        var engine = try Self.engine(limit: 0)
        try engine.apply(Self.city("weather", "Tokyo", at: 60))
        #expect(try engine.evaluate(stack: F.stack(), at: F.t(61)).entries.allSatisfy { !$0.suggested })
        #expect(engine.unplacedKeyCount(of: F.app("weather")) == 0)
        try engine.apply(
            .submitTimeline(
                .configuration(F.kindID("weather"), ["city": .string("Berlin")]), F.timeline([(0, 0.9, 600)]),
                at: F.t(62)))
    }

    @Test("context pairs past maxContextPairs are in force but not interned; the index stays bounded")
    func contextPairsAreBounded() throws {
        var settings = EngineSettings()
        settings.maxContextPairs = 3
        var engine = try F.engine(apps: ["a", "b"], settings: settings)
        for minute in 0..<100 {
            try engine.apply(.setContext(key: "clock", value: "09:\(minute)", at: F.t(Double(minute))))
            try engine.apply(F.donation("a", at: Double(minute) + 0.5))
        }
        #expect(engine.contextPairIndex.count == 3)
        #expect(engine.contextPairs.isEmpty)  // "clock=09:99" is in force and was never interned
        // A pair past the bound still decides relevant contexts: they read the contexts in force.
        try engine.apply(
            .declareRelevance(
                RelevanceDeclaration(
                    target: .instance(F.instance("b")), contexts: [.context(key: "clock", value: "09:99")]),
                at: F.t(200)))
        #expect(engine.order(at: 201).first == "b")
        // A pair interned earlier is learned from again when it returns.
        try engine.apply(.setContext(key: "clock", value: "09:1", at: F.t(300)))
        #expect(engine.contextPairs == [try #require(engine.contextPairIndex["clock=09:1"])])
    }

    @Test("an app registers at most maxKindsPerApp kinds; it may still update them, and other apps register theirs")
    func kindsPerAppAreBounded() throws {
        var settings = EngineSettings()
        settings.maxKindsPerApp = 2
        var engine = Engine(settings: settings)
        try engine.apply(.registerKind(F.kind("mail", "a"), at: F.t(0)))
        try engine.apply(.registerKind(F.kind("mail", "b"), at: F.t(0)))
        #expect(throws: CoreError.limitExceeded(limit: "maxKindsPerApp", maximum: 2)) {
            try engine.apply(.registerKind(F.kind("mail", "c"), at: F.t(1)))
        }
        try engine.apply(.registerKind(F.kind("mail", "a", families: [.systemSmall]), at: F.t(2)))
        #expect(engine.kind(F.kindID("mail", "a"))?.families == [.systemSmall])
        try engine.apply(.registerKind(F.kind("news", "a"), at: F.t(3)))
        #expect(engine.counts.kinds == 3)
    }

    @Test("admission limits refuse new calls only: a log replayed under lower limits keeps what it admitted")
    func admissionLimitsDoNotApplyToTheLog() throws {
        let events: [EngineEvent] = [
            .registerKind(F.kind("mail", "a"), at: F.t(0)), .registerKind(F.kind("mail", "b"), at: F.t(1)),
            .registerKind(F.kind("mail", "c"), at: F.t(2)),
        ]
        var lower = EngineSettings()
        lower.maxKindsPerApp = 2
        #expect(Engine.replayingLog(events, settings: lower).counts.kinds == 3)
        #expect(Engine.replaying(events, settings: lower).counts.kinds == 2)  // as calls, the third is refused
    }

    @Test("every LimitExceeded limit, lowered, refuses calls and keeps what a log admitted under a higher one")
    func everyLimitKeepsWhatTheLogAdmitted() throws {
        let apps = ["a", "b", "c"]
        var events: [EngineEvent] = apps.map { .registerKind(F.kind($0), at: F.t(0)) }
        let widgets = apps.map { WidgetPlacement(instance: F.instance($0), kind: F.kindID($0)) }
        for (index, name) in ["home", "work", "car", "bike"].enumerated() {
            events.append(
                .configureStack(
                    StackConfiguration(id: F.stack(name), family: .systemMedium, widgets: index == 0 ? widgets : []),
                    at: F.t(1)))
        }
        for key in ["k1", "k2", "k3"] { events.append(.setContext(key: key, value: "on", at: F.t(2))) }
        events.append(
            .submitTimeline(
                .instance(F.instance("a")), F.timeline([(0, 0.5, 60), (60, 0.6, 60), (120, 0.7, 60)]), at: F.t(3)))
        events.append(
            .declareRelevance(
                RelevanceDeclaration(
                    target: .instance(F.instance("b")),
                    contexts: [
                        .context(key: "k1", value: "on"), .context(key: "k2", value: "on"),
                        .context(key: "k3", value: "on"),
                    ]),
                at: F.t(4)))
        for id in ["l1", "l2", "l3"] {
            events.append(.startLiveActivity(app: F.app("a"), id: id, attributes: [:], contentState: [:], at: F.t(5)))
        }
        var lower = EngineSettings()
        lower.maxKinds = 2
        lower.maxStacks = 2
        lower.maxWidgetsPerStack = 2
        lower.maxContexts = 2
        lower.maxTimelineEntries = 2
        lower.maxRelevantContexts = 2
        lower.maxLiveActivitiesPerApp = 2
        // The log, as the service wrote it under the defaults, replayed under lower limits: everything is there.
        var replayed = Engine.replayingLog(events, settings: lower)
        let counts = replayed.counts
        #expect(counts.kinds == 3 && counts.stacks == 4 && counts.widgets == 3 && counts.liveActivities == 3)
        #expect(replayed.contexts.count == 3)
        #expect(try replayed.entry("a", at: 6)?.contributions[.relevance] != nil)
        #expect(try replayed.entry("b", at: 6)?.reason == .relevance)
        // The same events as calls under the lower limits: each limit refuses its third.
        var refused: [String] = []
        var called = Engine(settings: lower)
        for event in events {
            if case .failure(.limitExceeded(let limit, _)) = called.step(event) { refused.append(limit) }
        }
        #expect(
            Set(refused) == [
                "maxKinds", "maxStacks", "maxWidgetsPerStack", "maxContexts", "maxTimelineEntries",
                "maxRelevantContexts", "maxLiveActivitiesPerApp",
            ])
        // A new call past a lowered limit is refused on the replayed engine too.
        #expect(throws: CoreError.limitExceeded(limit: "maxContexts", maximum: 2)) {
            try replayed.apply(.setContext(key: "k4", value: "on", at: F.t(7)))
        }
    }

    @Test("retention's rebuild keeps an acknowledged timeline when the app is at its bound of unplaced configurations")
    func retentionKeepsAnAdmittedTimeline() throws {
        var engine = try Self.engine(limit: 1)
        let day = 86_400.0
        // Day 0: Oslo (no stack places it) becomes the app's one unplaced configuration; day 1: Lima finds no room;
        // day 2: a timeline for Oslo, a configuration the engine keeps, is admitted.
        let history =
            try Self.setup() + [
                Self.city("weather", "Oslo", at: 0), Self.city("weather", "Lima", at: day),
                .submitTimeline(
                    .configuration(F.kindID("weather"), ["city": .string("Oslo")]), F.timeline([(0, 0.7, 90 * day)]),
                    at: F.t(2 * day)),
            ]
        for event in history.dropFirst(3) { try engine.apply(event) }
        #expect(engine.unplacedKeyCount(of: F.app("weather")) == 1)
        // Day 28.5: retention drops Oslo's donation. Lima's now takes the app's one place, and the timeline for Oslo,
        // admitted on day 2, is taken again from the history all the same.
        engine.advance(to: F.t(28.5 * day))
        #expect(engine.rebuild(from: history).removed == 1)
        #expect(engine.unplacedKeyCount(of: F.app("weather")) == 2)
        var configuration = try #require(engine.configuration(of: F.stack()))
        configuration.widgets.append(
            WidgetPlacement(
                instance: F.instance("oslo"), kind: F.kindID("weather"), configuration: ["city": .string("Oslo")]))
        try engine.apply(.configureStack(configuration, at: F.t(28.6 * day)))
        #expect(try engine.entry("oslo", at: 28.6 * day)?.contributions[.relevance] != nil)
    }

    @Test("the limits are part of the settings a snapshot was taken under")
    func snapshotCarriesTheLimits() throws {
        var engine = try Self.engine(limit: 2)
        try engine.apply(Self.city("weather", "Tokyo", at: 60))
        let bytes = engine.snapshot()
        let restored = try Engine(snapshot: bytes, settings: engine.settings)
        #expect(restored.unplacedKeyCount(of: F.app("weather")) == 1)
        var other = engine.settings
        other.maxUnplacedConfigurationsPerApp = 3
        #expect(throws: CodecError.self) { try Engine(snapshot: bytes, settings: other) }
        other = engine.settings
        other.maxContextPairs = 5
        #expect(throws: CodecError.self) { try Engine(snapshot: bytes, settings: other) }
        other = engine.settings
        other.maxKindsPerApp = 7
        #expect(throws: CodecError.self) { try Engine(snapshot: bytes, settings: other) }
    }

    @Test("the limits are validated with their names")
    func limitsAreValidated() {
        var settings = EngineSettings()
        settings.maxUnplacedConfigurationsPerApp = -1
        #expect(throws: CoreError.self) { try settings.validated() }
        settings = EngineSettings()
        settings.maxContextPairs = 1_000_001
        #expect(
            throws: CoreError.invalidParameter(parameter: "maxContextPairs", reason: "must be in 0...1000000")
        ) { try settings.validated() }
    }
}

import SmartStackCore
import SmartStackServer
import SmartStackStore
import Testing

/// `LimitExceeded.limit` is the configuration key of the limit, for every limit (README "Limits").
@Suite("Limit names")
struct LimitKeyTests {
    typealias F = ServerFixture

    @Test("each limit, reached, names the configuration key that sets it")
    func everyLimitNamesItsKey() async throws {
        var settings = EngineSettings()
        settings.maxKinds = 2
        settings.maxKindsPerApp = 1
        settings.maxStacks = 1
        settings.maxWidgetsPerStack = 1
        settings.maxContexts = 1
        settings.maxTimelineEntries = 1
        settings.maxLiveActivitiesPerApp = 1
        settings.maxRelevantContexts = 1
        settings.maxUnplacedConfigurationsPerApp = 1
        var limits = HostLimits()
        limits.maxDonations = 2
        limits.maxDonationsPerApp = 1
        limits.maxSubscriptions = 1
        let clock = ManualClock()
        let host = EngineHost(
            settings: settings, limits: limits, clock: clock, log: InMemoryEventLog(), logger: F.logger)
        let now = clock.now()
        let mail = try WidgetKindID(app: F.app("mail"), kind: "main")
        try await host.record(.registerKind(F.kind("mail"), at: now))
        let city = try IntentSchema(type: "CityIntent", parameters: [ParameterSchema(name: "city", type: .string)])
        let newsKind = try WidgetKindID(app: F.app("news"), kind: "main")
        try await host.record(
            .registerKind(
                WidgetKind(id: newsKind, displayName: "news", families: [.systemMedium], intent: city), at: now))
        try await host.record(
            .configureStack(
                StackConfiguration(
                    id: F.stack(), family: .systemMedium,
                    widgets: [WidgetPlacement(instance: F.instance("m"), kind: mail)]),
                at: now))
        _ = try await host.donate(F.donation("mail", id: "d0", at: now), idGiven: true)
        _ = try await host.donate(F.donation("news", id: "n0", at: now), idGiven: true)
        try await host.record(.setContext(key: "a", value: "1", at: now))
        try await host.record(
            .startLiveActivity(app: F.app("mail"), id: "l0", attributes: [:], contentState: [:], at: now))
        let subscription = try await host.subscribe(stacks: nil)
        let entries = [TimelineEntry(date: now), TimelineEntry(date: now.adding(seconds: 60))]
        let (timeline, _) = try Timeline.validated(entries: entries, policy: .never)
        let (one, _) = try Timeline.validated(entries: [TimelineEntry(date: now)], policy: .never)
        try await host.record(.submitTimeline(.configuration(newsKind, ["city": .string("Oslo")]), one, at: now))

        let attempts: [(String, () async throws -> Void)] = [
            ("maxKinds", { try await host.record(.registerKind(F.kind("maps"), at: now)) }),
            (
                "maxKindsPerApp",
                {
                    let second = try WidgetKindID(app: F.app("mail"), kind: "second")
                    try await host.record(
                        .registerKind(WidgetKind(id: second, displayName: "mail", families: [.systemMedium]), at: now))
                }
            ),
            (
                "maxStacks",
                {
                    try await host.record(
                        .configureStack(
                            StackConfiguration(id: F.stack("other"), family: .systemMedium, widgets: []), at: now))
                }
            ),
            (
                "maxWidgetsPerStack",
                {
                    let widgets = [
                        WidgetPlacement(instance: F.instance("m"), kind: mail),
                        WidgetPlacement(instance: F.instance("m2"), kind: mail),
                    ]
                    try await host.record(
                        .configureStack(
                            StackConfiguration(id: F.stack(), family: .systemMedium, widgets: widgets), at: now))
                }
            ),
            ("maxContexts", { try await host.record(.setContext(key: "b", value: "2", at: now)) }),
            (
                "maxTimelineEntries",
                { try await host.record(.submitTimeline(.instance(F.instance("m")), timeline, at: now)) }
            ),
            (
                "maxLiveActivitiesPerApp",
                {
                    try await host.record(
                        .startLiveActivity(app: F.app("mail"), id: "l1", attributes: [:], contentState: [:], at: now))
                }
            ),
            (
                "maxRelevantContexts",
                {
                    let contexts: [RelevantContext] = [.context(key: "a", value: "1"), .context(key: "a", value: "2")]
                    try await host.record(
                        .declareRelevance(
                            RelevanceDeclaration(target: .instance(F.instance("m")), contexts: contexts), at: now))
                }
            ),
            (
                "maxUnplacedConfigurationsPerApp",
                {
                    try await host.record(
                        .submitTimeline(.configuration(newsKind, ["city": .string("Rome")]), one, at: now))
                }
            ),
            (
                "maxDonationsPerApp",
                { _ = try await host.donate(F.donation("mail", id: "d1", at: now), idGiven: true) }
            ),
            ("maxDonations", { _ = try await host.donate(F.donation("maps", id: "m0", at: now), idGiven: true) }),
            ("maxSubscriptions", { _ = try await host.subscribe(stacks: nil) }),
        ]
        let keys = Set(ServerConfiguration.keys.map(\.key))
        for (key, attempt) in attempts {
            do {
                try await attempt()
                Issue.record("\(key): the limit was not reached")
            } catch let error as HostError {
                guard case .core(.limitExceeded(let limit, let maximum)) = error else {
                    Issue.record("\(key): \(error)")
                    continue
                }
                #expect(limit == key)
                #expect(keys.contains(limit), "\(limit) is not a configuration key")
                #expect(maximum >= 1)
            }
        }
        _ = subscription
    }
}

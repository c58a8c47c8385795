import Logging
import SmartStackCore
import SmartStackProtocol
import SmartStackStore
import Testing

@testable import SmartStackServer

/// Calls answered by the dispatcher with the service's clock: a call without a date happens at the service's time,
/// a call that fails loses nothing that time made due, and no app reaches another app's widgets.
@Suite("Service time and targets")
struct ServiceTimeRuleTests {
    typealias F = ServerFixture
    static let peer = PeerCredentials(pid: 4_242, uid: 1_000, gid: 1_000)

    static func dispatcher(_ host: EngineHost) -> ServiceDispatcher {
        ServiceDispatcher(
            host: host, connections: ConnectionRegistry(limit: 16), levels: LogLevelControl(.info), maxListLimit: 100,
            logger: F.logger)
    }

    static func call(_ dispatcher: ServiceDispatcher, _ method: String, _ parameters: JSONObject) async -> CallOutcome {
        await dispatcher.handle(VarlinkCall(method: method, parameters: parameters, more: false), peer: peer)
    }

    static func failure(_ outcome: CallOutcome) -> VarlinkError? {
        if case .failure(let error) = outcome { error } else { nil }
    }

    @Test("a call without a date is at the service's time: a swipe after the system clock went back takes effect")
    func datelessCallsUseTheServiceTime() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail", "news", "maps"], clock: clock)
        let dispatcher = Self.dispatcher(host)
        clock.advance(seconds: 600)
        let before = try await host.stack(F.stack())
        let swiped = try #require(before.order.last)
        // The system clock is set back an hour; the service's time stays where the engine reached.
        clock.advance(seconds: -3_600)
        let outcome = await Self.call(
            dispatcher, "io.smartstack.Shell.RecordEngagement",
            ["stack": "home", "instance": .string(swiped), "kind": "swipeTo"])
        #expect(Self.failure(outcome) == nil, "\(outcome)")
        let after = try await host.stack(F.stack())
        #expect(after.top == swiped)
        #expect(after.entries.first?.reason == .manualSwipe)
        // A donation without a date is stored at the service's time, not the clock's earlier reading.
        _ = await Self.call(dispatcher, "io.smartstack.Provider.Donate", ["app": "com.example.mail", "intent": "open"])
        let stored = try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations
        #expect(stored.map(\.date) == [await host.serviceTime()])
    }

    @Test("a Donate sent twice without a date is acknowledged twice and stored once; other parameters are a Conflict")
    func undatedDonateRetried() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        let dispatcher = Self.dispatcher(host)
        let call: JSONObject = ["app": "com.example.mail", "intent": "open", "id": "x1"]
        let first = await Self.call(dispatcher, "io.smartstack.Provider.Donate", call)
        #expect(Self.failure(first) == nil, "\(first)")
        let stamped = await host.serviceTime()
        clock.advance(seconds: 5)
        let retried = await Self.call(dispatcher, "io.smartstack.Provider.Donate", call)
        #expect(Self.failure(retried) == nil, "\(retried)")
        let stored = try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations
        #expect(stored.map(\.id) == ["x1"] && stored.map(\.date) == [stamped])
        var other = call
        other["parameters"] = ["folder": "inbox"]
        let conflict = Self.failure(await Self.call(dispatcher, "io.smartstack.Provider.Donate", other))
        #expect(conflict?.name == "io.smartstack.Provider.Conflict", "\(String(describing: conflict))")
        // Dated, the retry's date is compared: the time the first call was stamped with is the same donation.
        var dated = call
        dated["date"] = .string(stamped.rfc3339)
        let same = await Self.call(dispatcher, "io.smartstack.Provider.Donate", dated)
        #expect(Self.failure(same) == nil, "\(same)")
        dated["date"] = .string(stamped.adding(seconds: -60).rfc3339)
        let earlier = Self.failure(await Self.call(dispatcher, "io.smartstack.Provider.Donate", dated))
        #expect(earlier?.name == "io.smartstack.Provider.Conflict", "\(String(describing: earlier))")
        #expect(try await host.listDonations(app: F.app("mail"), from: .beginning, limit: 10).donations.count == 1)
    }

    @Test("a timeline or declaration naming another app's instance is NotFound(instance) and changes nothing")
    func noAppFeedsAnotherAppsWidgets() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail", "news"], clock: clock)
        let dispatcher = Self.dispatcher(host)
        let entry: JSONObject = ["date": .string(clock.now().rfc3339), "relevance": ["score": 1, "duration": 3_600]]
        for (method, extra) in [
            ("io.smartstack.Provider.SubmitTimeline", ["entries": JSONValue.array([.object(entry)])]),
            ("io.smartstack.Provider.DeclareRelevance", ["contexts": [["key": "location", "value": "home"]]]),
        ] {
            for instance in ["mail", "nowhere"] {
                var parameters: JSONObject = ["app": "com.example.news", "kind": "main", "instance": .string(instance)]
                for (key, value) in extra { parameters[key] = value }
                let error = Self.failure(await Self.call(dispatcher, method, parameters))
                #expect(error?.name == "io.smartstack.Provider.NotFound", "\(method) \(instance)")
                #expect(error?.parameters["kind"] == "instance" && error?.parameters["id"] == .string(instance))
            }
        }
        // In the declared context, with the timeline's entry current, mail would be relevant: it is not.
        _ = await Self.call(dispatcher, "io.smartstack.Shell.SetContext", ["key": "location", "value": "home"])
        let explained = try await host.explain(stack: F.stack(), instance: F.instance("mail"), at: nil)
        let mail = try #require(explained.widgets.first { $0.instance == F.instance("mail") })
        #expect(mail.relevance == 0 && mail.relevantContext == nil)
        // The app's own instance is fed as before.
        let own = await Self.call(
            dispatcher, "io.smartstack.Provider.SubmitTimeline",
            ["app": "com.example.news", "kind": "main", "instance": "news", "entries": [.object(entry)]])
        #expect(Self.failure(own) == nil, "\(own)")
    }

    @Test("a reload request dated in the past happens at the service's time, and is logged so")
    func reloadRequestsHappenAtTheServiceTime() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        _ = try await host.record(
            .submitTimeline(
                .instance(F.instance("mail")),
                try Timeline.validated(entries: [TimelineEntry(date: clock.now())], policy: .never).timeline,
                at: clock.now()))
        clock.advance(seconds: 3_600)
        let effects = try await host.record(
            .reloadTimelines(app: F.app("mail"), kind: nil, at: clock.now().adding(seconds: -3 * 86_400)))
        let now = await host.serviceTime()
        #expect(
            effects == [
                .reloadRequested(
                    instance: F.instance("mail"), kind: F.kind("mail").id, reason: .providerRequest, at: now)
            ])
    }

    @Test("a call that fails after a reload came due does not take the reload with it")
    func failedCallKeepsTheDueReload() async throws {
        let clock = ManualClock()
        let host = try await F.host(apps: ["mail"], clock: clock)
        let dispatcher = Self.dispatcher(host)
        let end = clock.now().adding(seconds: 60)
        _ = try await host.record(
            .submitTimeline(
                .instance(F.instance("mail")),
                try Timeline.validated(entries: [TimelineEntry(date: end)], policy: .atEnd).timeline, at: clock.now()))
        let watch = try await host.watchReloads(app: F.app("mail"))
        clock.advance(seconds: 120)
        // No wake-up came (there is no time service here); the first call after the due time fails.
        let failed = await Self.call(dispatcher, "io.smartstack.Shell.RecordLook", ["stack": "nowhere"])
        #expect(Self.failure(failed)?.name == "io.smartstack.Shell.NotFound")
        await host.stop()
        var reloads: [EngineEffect] = []
        for await effect in watch.stream { reloads.append(effect) }
        #expect(
            reloads == [
                .reloadRequested(instance: F.instance("mail"), kind: F.kind("mail").id, reason: .timelineEnded, at: end)
            ])
        #expect(try await host.budget(of: F.instance("mail"), at: nil).used == 1)
    }
}

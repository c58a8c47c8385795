import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// Replies built from a real engine, fed through the request types, conform to the interface files.
@Suite("Replies conform to the interfaces")
struct ReplyTests {
    /// An engine driven only by decoded calls: two kinds, a stack of three widgets, donations, a timeline and a
    /// Live Activity.
    static func engine() throws -> Engine {
        var engine = Engine(now: Fixed.start)
        func apply(_ event: EngineEvent) throws { try engine.apply(event) }
        try apply(try decode(RegisterWidgetRequest.self, Examples.registerWeather).event(defaultTime: Fixed.start))
        try apply(try decode(RegisterWidgetRequest.self, Examples.registerNotes).event(defaultTime: Fixed.start))
        let configure = try decode(ConfigureStackRequest.self, Examples.configureHome)
        let snapshot = engine
        try apply(try configure.event(defaultTime: Fixed.t(60)) { snapshot.kind($0) })
        try apply(
            try decode(SetContextRequest.self, #"{"key":"location","value":"home","date":"2024-03-04T08:02:00-08:00"}"#)
                .event(defaultTime: Fixed.t(0)))
        for (index, place) in ["paris", "paris", "berlin"].enumerated() {
            let donate = try decode(
                DonateRequest.self,
                #"{"app":"com.example.weather","intent":"ViewForecastIntent","parameters":{"place":"\#(place)"}}"#)
            try apply(donate.event(defaultTime: Fixed.t(Double(180 + index * 60)), generatedID: "d\(index)"))
        }
        let placed = engine
        try apply(
            try decode(SubmitTimelineRequest.self, try #require(Examples.calls[.submitTimeline])).event(
                defaultTime: Fixed.t(0), kinds: { _ in nil }, placedKind: { placed.kind(ofInstance: $0) }))
        try apply(
            try decode(StartLiveActivityRequest.self, try #require(Examples.calls[.startLiveActivity])).event(
                defaultTime: Fixed.t(0)))
        try apply(
            try decode(
                RecordEngagementRequest.self,
                #"{"stack":"home","instance":"w2","kind":"tap","date":"2024-03-04T08:20:00-08:00"}"#
            ).event(defaultTime: Fixed.t(0)))
        return engine
    }

    static func check(
        _ method: SmartStackMethod, _ reply: JSONObject, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let problem = Fixed.interface(method.interface)?.validateOutput(of: method.name, reply)
        #expect(problem == nil, "\(method): \(problem ?? "")", sourceLocation: sourceLocation)
        // And the reply survives the wire.
        #expect((try? JSON.parse(JSON.serialize(.object(reply)))) == .object(reply), sourceLocation: sourceLocation)
    }

    @Test func getStackAndSubscribe() throws {
        var engine = try Self.engine()
        let stack = try StackID("home")
        let (decisions, _) = engine.publish(at: Fixed.t(3_600))
        let decision = try #require(decisions.first { $0.stack == stack })
        let reply = GetStackRequest.reply(decision)
        Self.check(.getStack, reply)
        Self.check(.subscribe, reply)
        #expect(reply["stack"] == "home")
        #expect(reply["revision"] == .int(Int64(decision.revision)))
        #expect(reply["date"] == "2024-03-04T09:00:00.000-08:00")
        let order = try #require(reply["order"]?.arrayValue)
        #expect(order.count == decision.entries.count)
        let instances = order.compactMap { $0.objectValue?["instance"]?.stringValue }
        #expect(instances.contains("w1") && instances.contains("w2") && instances.contains("w3"))
        let first = try #require(order.first?.objectValue)
        #expect(first["position"] == 0)
        for entry in order.compactMap(\.objectValue) {
            let contributions = try #require(entry["contributions"]?.objectValue)
            for (signal, share) in contributions {
                #expect(Signal(rawValue: signal) != nil)
                #expect(share.doubleValue != nil)
            }
            #expect(entry["app"] != nil)
        }
        let live = order.compactMap(\.objectValue).first { $0["reason"] == "liveActivity" }
        #expect(live?["app"] == .string(Examples.weather))
        #expect(live?["kind"] == nil)
        let widget = order.compactMap(\.objectValue).first { $0["instance"] == "w1" }
        #expect(widget?["kind"] == "forecast")
        #expect(try Self.engine().evaluate(stack: stack, at: Fixed.t(0)).wireObject["order"] != nil)
    }

    @Test func explain() throws {
        var engine = try Self.engine()
        engine.publish(at: Fixed.t(3_600))
        let explanation = try engine.explain(stack: try StackID("home"), at: Fixed.t(3_700))
        let reply = ExplainRequest.reply(explanation)
        Self.check(.explain, reply)
        #expect(reply["widgets"]?.arrayValue?.count == 3)
        let w1 = reply["widgets"]?.arrayValue?.compactMap(\.objectValue).first { $0["instance"] == "w1" }
        #expect(w1?["relevanceState"]?.objectValue?["status"] == "relevant")
        #expect(w1?["budget"]?.objectValue?["capacity"] == 70)
        let one = try engine.explain(stack: try StackID("home"), instance: try InstanceID("w2"), at: Fixed.t(3_700))
        Self.check(.explain, one.wireObject)
        #expect(one.wireObject["widgets"]?.arrayValue?.count == 1)
    }

    @Test func budget() throws {
        let engine = try Self.engine()
        let budget = try engine.budget(of: try InstanceID("w1"), at: Fixed.t(4_000))
        Self.check(.getBudget, GetBudgetRequest.reply(budget))
        #expect(GetBudgetRequest.reply(budget)["left"] == .int(Int64(budget.left)))
        let never = BudgetState(capacity: 0, used: 0, left: 0, nextAvailable: Timestamp(microseconds: .max))
        Self.check(.getBudget, never.wireObject)
        #expect(never.wireObject["nextAvailable"] == .null)
    }

    @Test func listStacks() throws {
        var engine = try Self.engine()
        engine.publish(at: Fixed.t(100))
        let stacks = engine.stackIDs.compactMap { id in engine.configuration(of: id).map { ($0, engine.published(id)) }
        }
        let reply = ListStacksRequest.reply(stacks: stacks)
        Self.check(.listStacks, reply)
        let home = try #require(reply["stacks"]?.arrayValue?.first?.objectValue)
        #expect(home["stack"] == "home" && home["family"] == "systemMedium" && home["revision"] == 1)
        let w1 = home["widgets"]?.arrayValue?.first?.objectValue
        #expect(w1?["configuration"]?.objectValue?["city"] == ["id": "paris", "displayName": "Paris"])
        // What ListStacks reports can be sent back to ConfigureStack unchanged.
        var again = home
        for key in ["revision", "top"] { again[key] = nil }
        let snapshot = engine
        let request = try ConfigureStackRequest(parameters: again)
        #expect(try request.configuration { snapshot.kind($0) }.widgets.count == 3)
    }

    @Test func watchReloads() throws {
        var engine = try Self.engine()
        let reload = try decode(
            ReloadTimelinesRequest.self, #"{"app":"com.example.weather","date":"2024-03-04T08:30:00-08:00"}"#)
        let effects = try engine.apply(reload.event(defaultTime: Fixed.t(0)))
        let watcher = try decode(WatchReloadsRequest.self, #"{"app":"com.example.weather"}"#)
        let replies = effects.filter(watcher.wants).compactMap { $0.reloadWireObject() }
        #expect(replies.count == 2)
        for reply in replies { Self.check(.watchReloads, reply) }
        #expect(replies.first?["reason"] == "providerRequest")
        #expect(replies.first?["withheldUntil"] == nil)

        let kind = try WidgetKindID(app: try AppID(Examples.weather), kind: "forecast")
        let withheld = EngineEffect.reloadWithheld(
            instance: try InstanceID("w1"), kind: kind, reason: .timelineEnded, until: Fixed.t(9_000), at: Fixed.t(100))
        let configuration = Configuration(["city": .entity(id: "paris", displayName: "Paris")])
        let reply = try #require(withheld.reloadWireObject(configuration: configuration))
        Self.check(.watchReloads, reply)
        #expect(reply["withheldUntil"] == Fixed.t(9_000).wireValue)
        #expect(reply["date"] == Fixed.t(100).wireValue)
        #expect(reply["configuration"] == ["city": ["id": "paris", "displayName": "Paris"]])
        #expect(EngineEffect.timelineWarnings(["x"]).reloadWireObject() == nil)
    }

    @Test func providerReplies() throws {
        let app = try AppID(Examples.weather)
        let donations = [
            Donation(
                id: "d1", app: app, intent: "I", parameters: ["b": "2", "a": "1"], date: Fixed.t(0), groupId: "g"),
            Donation(id: "d2", app: app, intent: "I", date: Fixed.t(60)),
        ]
        let list = ListDonationsRequest.reply(donations: donations, next: ListCursor(sequence: 7))
        Self.check(.listDonations, list)
        #expect(list["next"] == .string("s7"))
        #expect(list["donations"]?.arrayValue?.first?.objectValue?["parameters"]?.objectValue?.keys == ["a", "b"])
        #expect(list["donations"]?.arrayValue?.last?.objectValue?["groupId"] == nil)
        Self.check(.donate, DonateRequest.reply(id: "d1"))
        Self.check(.deleteDonations, DeleteDonationsRequest.reply(deleted: 2))
        Self.check(.submitTimeline, SubmitTimelineRequest.reply(warnings: ["w"]))
        Self.check(.configureStack, ConfigureStackRequest.reply(revision: 1))
    }

    @Test func serviceAndAdminReplies() throws {
        let description = try decode(GetInterfaceDescriptionRequest.self, #"{"interface":"io.smartstack.Shell"}"#)
            .reply()
        Self.check(.getInterfaceDescription, description)
        var statistics = ServiceStatistics(
            stacks: 1, widgets: 3, donations: 3, subscribers: 0, connections: 2, uptimeSeconds: 12.5, kinds: 2,
            liveActivities: 1, reloadWatchers: 0, calls: 99, logLevel: .info)
        statistics.topApps = [
            AppDonationCount(app: try AppID("org.ex.a"), donations: 2),
            AppDonationCount(app: try AppID("org.ex.b"), donations: 1),
        ]
        Self.check(.getStatistics, statistics.wireObject)
        Self.check(
            .getStatistics,
            ServiceStatistics(stacks: 0, widgets: 0, donations: 0, subscribers: 0, connections: 0, uptimeSeconds: 0)
                .wireObject)
        let info = VarlinkServiceInfo(
            vendor: "v", product: "p", version: "1", url: "u", interfaces: VarlinkInterfaces.names)
        Self.check(.getInfo, info.wireObject)
    }

    @Test func timestampsOnTheWire() throws {
        #expect(Fixed.start.wireValue == "2024-03-04T08:00:00.000-08:00")
        #expect(Timestamp(microseconds: 0).wireValue == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(microseconds: .max).wireValue == .null)
        #expect(Timestamp(microseconds: .min).wireValue == .null)
        let parsed = try Timestamp(rfc3339: try #require(Fixed.start.wireValue.stringValue))
        #expect(parsed == Fixed.start && parsed.utcOffsetSeconds == Fixed.start.utcOffsetSeconds)
    }
}

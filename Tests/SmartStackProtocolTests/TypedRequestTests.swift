import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// The typed side of each method: a request made in Swift is sent as `wireParameters`, and the service reads it
/// back with the same decoder, so a client and the service cannot disagree on a parameter's name.
@Suite("Typed requests")
struct TypedRequestTests {
    /// What the example's request does, as an engine event (recording methods) or its wire form (the others).
    static func meaning(_ request: SmartStackRequest) throws -> AnyHashable {
        let now = Timestamp(microseconds: 0)
        let kinds = try Self.kinds()
        let event: EngineEvent?
        switch request {
        case .registerWidget(let r): event = r.event(defaultTime: now)
        case .donate(let r): event = r.event(defaultTime: now, generatedID: "made-up")
        case .submitTimeline(let r): event = try r.event(defaultTime: now, kinds: kinds, placedKind: { _ in r.kind })
        case .reloadTimelines(let r): event = r.event(defaultTime: now)
        case .startLiveActivity(let r): event = r.event(defaultTime: now)
        case .updateLiveActivity(let r): event = r.event(defaultTime: now)
        case .endLiveActivity(let r): event = r.event(defaultTime: now)
        case .declareRelevance(let r): event = try r.event(defaultTime: now, kinds: kinds, placedKind: { _ in r.kind })
        case .configureStack(let r): event = try r.event(defaultTime: now, kinds: kinds)
        case .changeStack(let r):
            return [AnyHashable(r.stack), AnyHashable(try r.change(kinds: kinds)), AnyHashable(r.date)]
        case .removeStack(let r): event = r.event(defaultTime: now)
        case .recordEngagement(let r): event = r.event(defaultTime: now)
        case .recordLook(let r): event = r.event(defaultTime: now)
        case .setContext(let r): event = r.event(defaultTime: now)
        case .deleteDonations(let r): return "\(r.app) \(r.filter)"
        case .listDonations(let r):
            return "\(r.app) \(r.after ?? "-") \(r.cursor?.description ?? "-") \(r.limit) \(r.limitGiven)"
        case .subscribe(let r): return "\(r.stacks.map { $0.map(\.rawValue) } ?? ["every stack"])"
        case .watchReloads(let r): return "\(r.app) \(r.includeWithheld)"
        case .getStack(let r): return "\(r.stack) \(r.at.map { "\($0.microseconds)" } ?? "now")"
        case .explain(let r):
            return "\(r.stack) \(r.instance?.rawValue ?? "-") \(r.at.map { "\($0.microseconds)" } ?? "now")"
        case .getBudget(let r): return "\(r.instance) \(r.at.map { "\($0.microseconds)" } ?? "now")"
        case .getInterfaceDescription(let r): return r.interface
        case .setLogLevel(let r): return r.level.rawValue
        case .releaseApp(let r): return r.app.rawValue
        case .listAppOwners(let r): return "\(r.after?.rawValue ?? "-") \(r.limit)"
        case .getInfo, .listStacks, .getStatistics: return "-"
        }
        return AnyHashable(event)
    }

    static func kinds() throws -> (WidgetKindID) -> WidgetKind? {
        let weather = try decode(RegisterWidgetRequest.self, Examples.registerWeather).kind
        let notes = try decode(RegisterWidgetRequest.self, Examples.registerNotes).kind
        return { id in [weather, notes].first { $0.id == id } }
    }

    /// Decoding each method's example call, encoding it and decoding that gives the same request: the same
    /// engine event (or the same query), the same wire form again, valid against the interface, nothing dropped.
    @Test(arguments: SmartStackMethod.allCases)
    func wireParametersReadBackTheSameRequest(method: SmartStackMethod) throws {
        let example = try object(try #require(Examples.calls[method]))
        let decoded = try SmartStackRequest(
            call: VarlinkCall(method: method.rawValue, parameters: example, more: method.isStreaming))
        let wire = try method.requestType.init(parameters: example).wireParameters
        #expect(Fixed.interface(method.interface)?.validateInput(of: method.name, wire) == nil, "\(method): \(wire)")
        let again = try SmartStackRequest(
            call: VarlinkCall(method: method.rawValue, parameters: wire, more: method.isStreaming))
        #expect(try Self.meaning(again) == Self.meaning(decoded), "\(method)")
        #expect(try method.requestType.init(parameters: wire).wireParameters == wire, "\(method)")
        for (key, value) in example where !value.isNull {
            #expect(wire[key] != nil, "\(method) leaves out \(key)")
        }
    }

    @Test func typedRequestsAreTheExampleCalls() throws {
        let home = try StackID("home")
        let w1 = try InstanceID("w1")
        let weather = try AppID(Examples.weather)
        let at = try Timestamp(rfc3339: "2024-03-04T09:30:00-08:00")
        func same<R: VarlinkMethodRequest>(_ typed: R, _ method: SmartStackMethod) throws {
            let example = try method.requestType.init(parameters: object(try #require(Examples.calls[method])))
            #expect(typed.wireParameters == example.wireParameters, "\(method)")
            #expect(R.method == method)
        }
        try same(GetStackRequest(stack: home, at: at), .getStack)
        try same(ExplainRequest(stack: home, instance: w1), .explain)
        try same(GetBudgetRequest(instance: w1, at: at), .getBudget)
        try same(RecordLookRequest(stack: home), .recordLook)
        try same(
            RecordEngagementRequest(stack: home, instance: w1, kind: .impression, duration: 2.5), .recordEngagement)
        try same(
            SetContextRequest(
                key: "location", value: "home", date: try Timestamp(rfc3339: "2024-03-04T08:00:00+01:00")),
            .setContext)
        try same(SubscribeRequest(stacks: [home, try StackID("work"), home]), .subscribe)
        try same(ListStacksRequest(), .listStacks)
        try same(RemoveStackRequest(stack: home, date: try Timestamp(rfc3339: "2024-03-04T10:00:00Z")), .removeStack)
        try same(ListDonationsRequest(app: weather, after: "d1", limit: 10), .listDonations)
        let next = ListDonationsRequest(app: weather, cursor: ListCursor(sequence: 1042), limit: 10)
        #expect(try ListDonationsRequest(parameters: next.wireParameters).wireParameters == next.wireParameters)
        #expect(next.wireParameters["cursor"] == .string("s1042"))
        try same(
            DeleteDonationsRequest(app: weather, filter: .intent(type: "ViewForecastIntent", entity: "paris")),
            .deleteDonations)
        try same(
            DonateRequest(
                app: weather, intent: "ViewForecastIntent", parameters: ["place": "paris"],
                date: try Timestamp(rfc3339: "2024-03-04T08:05:00-08:00"), id: "d1", groupId: "trip"),
            .donate)
        try same(WatchReloadsRequest(app: weather, includeWithheld: true), .watchReloads)
        try same(
            ReloadTimelinesRequest(
                app: weather, kind: "forecast", date: try Timestamp(rfc3339: "2024-03-04T08:20:00-08:00")),
            .reloadTimelines)
        try same(
            UpdateLiveActivityRequest(app: weather, id: "storm", contentState: ["level": "3"]), .updateLiveActivity)
        try same(EndLiveActivityRequest(app: weather, id: "storm", dismissAfter: 600), .endLiveActivity)
        try same(GetInterfaceDescriptionRequest(interface: "io.smartstack.Shell"), .getInterfaceDescription)
        try same(SetLogLevelRequest(level: .debug), .setLogLevel)
        try same(GetInfoRequest(), .getInfo)
        try same(GetStatisticsRequest(), .getStatistics)
        try same(ListAppOwnersRequest(), .listAppOwners)
        try same(ReleaseAppRequest(app: AppID("org.example.mail")), .releaseApp)
        var change = ChangeStackRequest(stack: home, date: try Timestamp(rfc3339: "2024-03-04T08:05:00-08:00"))
        let w4 = try InstanceID("w4")
        change.developerMode = false
        change.pin = w4
        change.remove = [try InstanceID("w3")]
        change.add = [
            WirePlacement(instance: w4, kind: try WidgetKindID(app: try AppID("com.example.notes"), kind: "main"))
        ]
        change.order = [w4, w1, try InstanceID("w2")]
        try same(change, .changeStack)
    }

    /// Requests made in Swift that the examples do not cover read back the same (every reload policy, both
    /// targets, the defaults of a stack).
    @Test func typedRequestsReadBack() throws {
        func readsBack<R: VarlinkMethodRequest>(_ typed: R) throws {
            let wire = typed.wireParameters
            let call = VarlinkCall(method: R.method.rawValue, parameters: wire, more: R.method.isStreaming)
            #expect(Fixed.interface(R.method.interface)?.validateInput(of: R.method.name, wire) == nil, "\(wire)")
            #expect(try R(parameters: wire).wireParameters == wire)
            #expect(try SmartStackRequest(call: call).method == R.method)
        }
        let weather = try AppID(Examples.weather)
        let forecast = try WidgetKindID(app: weather, kind: "forecast")
        let entries = [
            TimelineEntry(date: Fixed.t(600), relevance: Relevance(score: 0.5, duration: 60)),
            TimelineEntry(date: Fixed.t(0)),
        ]
        for policy in [ReloadPolicy.atEnd, .never, .after(Fixed.t(3_600))] {
            let request = try SubmitTimelineRequest(
                kind: forecast, target: .instance(try InstanceID("w1")), entries: entries, policy: policy)
            try readsBack(request)
            #expect(try SubmitTimelineRequest(parameters: request.wireParameters).timeline == request.timeline)
        }
        try readsBack(
            try DeclareRelevanceRequest(
                kind: forecast, target: .configuration(["city": "paris"]),
                contexts: [
                    .context(key: "location", value: "home"), .dateInterval(start: Fixed.t(0), end: Fixed.t(60)),
                ],
                group: "weather", date: Fixed.t(1)))
        try readsBack(
            ConfigureStackRequest(
                stack: try StackID("home"), family: .systemMedium,
                widgets: [WirePlacement(instance: try InstanceID("w1"), kind: forecast, configuration: ["days": 3])]))
        try readsBack(try decode(RegisterWidgetRequest.self, Examples.registerWeather))
        try readsBack(StartLiveActivityRequest(app: weather, id: "storm", attributes: ["region": "north"]))
        try readsBack(DeleteDonationsRequest(app: weather, filter: .ids(["b", "a"])))
        try readsBack(DeleteDonationsRequest(app: weather, filter: .all))
        var unpin = ChangeStackRequest(stack: try StackID("home"))
        unpin.unpin = true
        unpin.family = .systemLarge
        try readsBack(unpin)
        let registered = try decode(RegisterWidgetRequest.self, Examples.registerWeather)
        #expect(try RegisterWidgetRequest(parameters: registered.wireParameters).kind == registered.kind)
    }

    /// A typed request checks what the service would check, with the same error.
    @Test func typedRequestsCheckAsTheServiceDoes() throws {
        let weather = try AppID(Examples.weather)
        let donateError = varlinkError { () throws(VarlinkError) in
            _ = try DonateRequest(app: weather, intent: "")
        }
        let wireError = try decodeError(DonateRequest.self, #"{"app":"com.example.weather","intent":""}"#)
        #expect(donateError != nil)
        #expect(donateError == wireError)
        let kind = try WidgetKindID(app: weather, kind: "forecast")
        let timelineError = varlinkError { () throws(VarlinkError) in
            _ = try SubmitTimelineRequest(kind: kind, target: .configuration([:]), entries: [])
        }
        #expect(timelineError?.parameters["parameter"] == .string("entries"))
    }
}

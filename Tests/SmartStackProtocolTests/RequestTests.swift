import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// Happy paths: what each request decodes to and the Core values it makes.
@Suite("Requests")
struct RequestTests {
    static func weatherKind() throws -> WidgetKind {
        try decode(RegisterWidgetRequest.self, Examples.registerWeather).kind
    }

    static func kinds() throws -> [WidgetKindID: WidgetKind] {
        let notes = try decode(RegisterWidgetRequest.self, Examples.registerNotes).kind
        let weather = try weatherKind()
        return [weather.id: weather, notes.id: notes]
    }

    @Test func registerWidget() throws {
        let request = try decode(RegisterWidgetRequest.self, Examples.registerWeather)
        let kind = request.kind
        #expect(kind.id.description == "com.example.weather/forecast")
        #expect(kind.displayName == "Forecast")
        #expect(kind.families == [.systemSmall, .systemMedium])
        let intent = try #require(kind.intent)
        #expect(intent.type == "SelectCityIntent")
        #expect(intent.parameters.map(\.name) == ["city", "units", "days", "wind", "budget", "when", "long"])
        #expect(intent.parameter(named: "city")?.defaultValue == .entity(id: "berlin", displayName: "Berlin"))
        #expect(
            intent.parameter(named: "city")?.suggestedEntities.last == EntityOption(id: "paris", displayName: "paris"))
        #expect(
            intent.parameter(named: "units")?.cases == [
                EnumCase(id: "metric", displayName: "Metric"), EnumCase(id: "imperial", displayName: "imperial"),
            ])
        #expect(intent.parameter(named: "units")?.defaultValue == .enumCase("metric"))
        #expect(intent.parameter(named: "days")?.optional == true)
        #expect(intent.parameter(named: "long")?.defaultValue == .bool(false))
        #expect(
            kind.predictionMappings == [
                PredictionMapping(intentType: "ViewForecastIntent", parameters: ["place": "city"])
            ])
        #expect(request.event(defaultTime: Fixed.t(99)) == .registerKind(kind, at: Fixed.start))

        let minimal = try decode(RegisterWidgetRequest.self, Examples.registerNotes)
        #expect(minimal.kind.displayName == "main")
        #expect(minimal.kind.intent == nil)
        #expect(minimal.event(defaultTime: Fixed.t(5)).time == Fixed.t(5))
    }

    /// A kind's lists are bounded (kinds stay in memory and in every snapshot): one entry past a bound is
    /// InvalidParameter naming the list; at the bound it is taken.
    @Test func registerWidgetListsAreBounded() throws {
        func kind(parameters: Int = 1, cases: Int = 1, entities: Int = 0, mappings: Int = 0, mapped: Int = 0)
            -> String
        {
            let caseList = (0..<cases).map { #"{"id":"c\#($0)"}"# }.joined(separator: ",")
            let entityList = (0..<entities).map { #"{"id":"e\#($0)"}"# }.joined(separator: ",")
            var list = [#"{"name":"p0","type":"enum","cases":[\#(caseList)]}"#]
            if entities > 0 { list = [#"{"name":"p0","type":"entity","suggestedEntities":[\#(entityList)]}"#] }
            list += (1..<max(parameters, 1)).map { #"{"name":"p\#($0)","type":"string","optional":true}"# }
            let map = (0..<mapped).map { #""d\#($0)":"p0""# }.joined(separator: ",")
            let mappingList = (0..<mappings).map { #"{"intent":"I\#($0)","parameters":{\#(map)}}"# }
                .joined(separator: ",")
            return #"{"app":"a.b","kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":["#
                + list.joined(separator: ",") + #"]},"predictionMapping":["# + mappingList + "]}"
        }
        for (text, path) in [
            (kind(parameters: 65), "intent.parameters"), (kind(cases: 257), "intent.parameters[0].cases"),
            (kind(entities: 257), "intent.parameters[0].suggestedEntities"),
            (kind(mappings: 65), "predictionMapping"),
            (kind(mappings: 1, mapped: 65), "predictionMapping[0].parameters"),
        ] {
            let error = try decodeError(RegisterWidgetRequest.self, text)
            #expect(error?.parameter == path, "\(path): \(String(describing: error))")
        }
        // Within every count, but more than 64 KiB of text: 200 cases with 400-byte names.
        let long = String(repeating: "x", count: 400)
        let cases = (0..<200).map { #"{"id":"c\#($0)","displayName":"\#(long)"}"# }.joined(separator: ",")
        let large =
            #"{"app":"a.b","kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":["#
            + #"{"name":"p0","type":"enum","cases":[\#(cases)]}]}}"#
        let error = try decodeError(RegisterWidgetRequest.self, large)
        #expect(error?.parameter == "intent")
        for text in [kind(parameters: 64), kind(cases: 256), kind(entities: 256), kind(mappings: 64)] {
            #expect(try decodeError(RegisterWidgetRequest.self, text) == nil)
        }
    }

    @Test func donate() throws {
        let request = try decode(DonateRequest.self, #"{"app":"a.b","intent":"I","parameters":{"x":"1"}}"#)
        var generated = 0
        let donation = request.donation(
            defaultTime: Fixed.t(1),
            generatedID: {
                generated += 1; return "gen-1"
            }())
        #expect(
            donation
                == Donation(id: "gen-1", app: try AppID("a.b"), intent: "I", parameters: ["x": "1"], date: Fixed.t(1)))
        #expect(generated == 1)

        let withID = try decode(DonateRequest.self, try #require(Examples.calls[.donate]))
        let event = withID.event(
            defaultTime: Fixed.t(1),
            generatedID: {
                generated += 1; return "unused"
            }())
        #expect(generated == 1, "a client id needs no generated one")
        #expect(event.donation?.id == "d1")
        #expect(event.donation?.groupId == "trip")
        #expect(event.time == Timestamp(microseconds: Fixed.start.microseconds + 300_000_000))
        #expect(DonateRequest.reply(id: "d1") == ["id": "d1"])
    }

    @Test func deleteDonationsFilters() throws {
        func filter(_ text: String) throws -> DonationFilter { try decode(DeleteDonationsRequest.self, text).filter }
        #expect(try filter(#"{"app":"a.b"}"#) == .all)
        #expect(try filter(#"{"app":"a.b","ids":["x","y","x"]}"#) == .ids(["x", "y"]))
        #expect(try filter(#"{"app":"a.b","groupId":"g"}"#) == .group("g"))
        #expect(try filter(#"{"app":"a.b","intent":"I"}"#) == .intent(type: "I", entity: nil))
        #expect(try filter(#"{"app":"a.b","intent":"I","entity":"e","ids":null}"#) == .intent(type: "I", entity: "e"))
        #expect(DeleteDonationsRequest.reply(deleted: 3) == ["deleted": 3])
    }

    @Test func listDonations() throws {
        let defaults = try decode(ListDonationsRequest.self, #"{"app":"a.b"}"#)
        #expect(defaults.limit == 100 && defaults.after == nil)
        let page = try decode(ListDonationsRequest.self, try #require(Examples.calls[.listDonations]))
        #expect(page.limit == 10 && page.after == "d1")
        let next = try decode(ListDonationsRequest.self, #"{"app":"a.b","cursor":"s1042"}"#)
        #expect(next.cursor == ListCursor(sequence: 1042) && next.after == nil)
        #expect(try decode(ListDonationsRequest.self, #"{"app":"a.b","cursor":"s0"}"#).cursor?.sequence == 0)
        #expect(ListCursor(sequence: 1042).description == "s1042")
    }

    @Test func submitTimelineForAnInstance() throws {
        let request = try decode(SubmitTimelineRequest.self, try #require(Examples.calls[.submitTimeline]))
        #expect(request.target == .instance(try InstanceID("w1")))
        #expect(
            request.timeline.entries.map(\.date.rfc3339) == [
                "2024-03-04T08:30:00.000-08:00", "2024-03-04T09:00:00.000-08:00", "2024-03-04T09:02:00.000-08:00",
            ])
        #expect(request.timeline.entries[1].relevance == Relevance(score: 2, duration: 3_600))
        #expect(request.timeline.entries[2].relevance == nil)
        #expect(request.timeline.policy == .after(try Timestamp(rfc3339: "2024-03-04T12:00:00-08:00")))
        #expect(request.warnings.count == 1)
        #expect(request.warnings.first?.contains("entries[0] and entries[1]") == true)
        let noKinds: (WidgetKindID) -> WidgetKind? = { _ in
            Issue.record("an instance target needs no kind")
            return nil
        }
        let event = try request.event(defaultTime: Fixed.t(0), kinds: noKinds) { _ in request.kind }
        guard case .submitTimeline(.instance(let instance), let timeline, let at) = event else {
            Issue.record("wrong event \(event)")
            return
        }
        #expect(instance.rawValue == "w1" && timeline == request.timeline)
        // An instance of another app's kind, or none placed, is not found: no app feeds another's widgets.
        let other = try WidgetKindID(app: try AppID("org.example.other"), kind: request.kind.kind)
        for placed in [other, nil] {
            let refused = varlinkError { () throws(VarlinkError) in
                _ = try request.event(defaultTime: Fixed.t(0), kinds: noKinds) { _ in placed }
            }
            #expect(
                refused
                    == VarlinkError(
                        name: "io.smartstack.Provider.NotFound", parameters: ["kind": "instance", "id": "w1"]))
        }
        #expect(at == (try Timestamp(rfc3339: "2024-03-04T08:10:00-08:00")))
        #expect(SubmitTimelineRequest.reply(warnings: ["w"]) == ["warnings": ["w"]])
    }

    @Test func submitTimelineForAConfiguration() throws {
        let kinds = try Self.kinds()
        let text = """
            {"app":"com.example.weather","kind":"forecast","configuration":{"city":"paris","days":"3"},
             "entries":[{"date":"2024-03-04T09:00:00Z"}],"policy":{"kind":"never"}}
            """
        let request = try decode(SubmitTimelineRequest.self, text)
        #expect(request.timeline.policy == .never)
        #expect(request.warnings.isEmpty)
        let event = try request.event(defaultTime: Fixed.t(7), kinds: { kinds[$0] }) { _ in nil }
        guard case .submitTimeline(.configuration(let kind, let values), _, let at) = event else {
            Issue.record("wrong event \(event)")
            return
        }
        #expect(kind.description == "com.example.weather/forecast")
        #expect(values == ["city": .entity(id: "paris", displayName: "paris"), "days": .int(3)])
        #expect(at == Fixed.t(7))

        let noKind = varlinkError { () throws(VarlinkError) in
            _ = try request.event(defaultTime: Fixed.t(0), kinds: { _ in nil }) { _ in nil }
        }
        #expect(
            noKind
                == VarlinkError(
                    name: "io.smartstack.Provider.NotFound",
                    parameters: ["kind": "widgetKind", "id": "com.example.weather/forecast"]))

        let bad = try decode(SubmitTimelineRequest.self, text.replacingOccurrences(of: #""3""#, with: "true"))
        let badValue = varlinkError { () throws(VarlinkError) in
            _ = try bad.event(defaultTime: Fixed.t(0), kinds: { kinds[$0] }) { _ in nil }
        }
        #expect(badValue?.parameter == "configuration.days")

        let defaults = try decode(
            SubmitTimelineRequest.self, #"{"app":"a.b","kind":"k","entries":[{"date":"2024-03-04T09:00:00Z"}]}"#)
        #expect(defaults.target == .configuration([:]))
        #expect(defaults.timeline.policy == .atEnd)
    }

    @Test func submitTimelineHonoursTheEntryLimit() throws {
        let entries = (0..<5).map { #"{"date":"2024-03-04T0\#($0):00:00Z"}"# }.joined(separator: ",")
        let parameters = try object(#"{"app":"a.b","kind":"k","instance":"w","entries":[\#(entries)]}"#)
        let error = varlinkError { () throws(VarlinkError) in
            _ = try SubmitTimelineRequest(parameters: parameters, maxEntries: 4)
        }
        #expect(
            error
                == VarlinkError(
                    name: "io.smartstack.Provider.LimitExceeded",
                    parameters: ["limit": "maxTimelineEntries", "maximum": 4]))
        #expect(throws: Never.self) { try SubmitTimelineRequest(parameters: parameters, maxEntries: 5) }
    }

    @Test func reloadsAndWatchers() throws {
        let all = try decode(ReloadTimelinesRequest.self, #"{"app":"a.b"}"#)
        #expect(
            all.event(defaultTime: Fixed.t(1)) == .reloadTimelines(app: try AppID("a.b"), kind: nil, at: Fixed.t(1)))
        let one = try decode(ReloadTimelinesRequest.self, try #require(Examples.calls[.reloadTimelines]))
        #expect(one.kind == "forecast")

        let weather = try WidgetKindID(app: try AppID(Examples.weather), kind: "forecast")
        let other = try WidgetKindID(app: try AppID("com.example.other"), kind: "forecast")
        let instance = try InstanceID("w1")
        let requested = EngineEffect.reloadRequested(
            instance: instance, kind: weather, reason: .providerRequest, at: Fixed.t(0))
        let withheld = EngineEffect.reloadWithheld(
            instance: instance, kind: weather, reason: .policyDate, until: Fixed.t(60), at: Fixed.t(0))
        let watcher = try decode(WatchReloadsRequest.self, #"{"app":"com.example.weather"}"#)
        #expect(watcher.wants(requested))
        #expect(!watcher.wants(withheld))
        #expect(
            !watcher.wants(.reloadRequested(instance: instance, kind: other, reason: .providerRequest, at: Fixed.t(0))))
        #expect(!watcher.wants(.timelineWarnings(["x"])))
        let all_ = try decode(WatchReloadsRequest.self, try #require(Examples.calls[.watchReloads]))
        #expect(all_.wants(withheld))
    }

    @Test func liveActivities() throws {
        let app = try AppID(Examples.weather)
        let start = try decode(StartLiveActivityRequest.self, try #require(Examples.calls[.startLiveActivity]))
        #expect(
            start.event(defaultTime: Fixed.t(0))
                == .startLiveActivity(
                    app: app, id: "storm", attributes: ["region": "north"], contentState: ["level": "2"],
                    at: Fixed.t(900)))
        let update = try decode(UpdateLiveActivityRequest.self, try #require(Examples.calls[.updateLiveActivity]))
        #expect(
            update.event(defaultTime: Fixed.t(5))
                == .updateLiveActivity(app: app, id: "storm", contentState: ["level": "3"], at: Fixed.t(5)))
        let end = try decode(EndLiveActivityRequest.self, try #require(Examples.calls[.endLiveActivity]))
        #expect(
            end.event(defaultTime: Fixed.t(6))
                == .endLiveActivity(app: app, id: "storm", contentState: nil, dismissAfter: 600, at: Fixed.t(6)))
    }

    @Test func declareRelevance() throws {
        let kinds = try Self.kinds()
        let request = try decode(DeclareRelevanceRequest.self, try #require(Examples.calls[.declareRelevance]))
        #expect(
            request.contexts == [
                .dateInterval(
                    start: try Timestamp(rfc3339: "2024-03-04T09:00:00Z"),
                    end: try Timestamp(rfc3339: "2024-03-04T10:00:00Z")),
                .context(key: "location", value: "home"),
            ])
        #expect(request.group == "weather")
        let event = try request.event(defaultTime: Fixed.t(3), kinds: { kinds[$0] }) { _ in nil }
        guard case .declareRelevance(let declaration, let at) = event else {
            Issue.record("wrong event \(event)")
            return
        }
        #expect(at == Fixed.t(3))
        #expect(
            declaration.target
                == .configuration(
                    try Self.weatherKind().id,
                    ["city": .entity(id: "paris", displayName: "paris"), "units": .enumCase("metric")]))
        #expect(declaration.contexts == request.contexts && declaration.group == "weather")
        let cleared = try decode(DeclareRelevanceRequest.self, #"{"app":"a.b","kind":"k","instance":"w1"}"#)
        #expect(try cleared.contexts.isEmpty && cleared.target == .instance(try InstanceID("w1")))
    }

    @Test func configureStackReadsConfigurationsAgainstTheKinds() throws {
        let kinds = try Self.kinds()
        let request = try decode(ConfigureStackRequest.self, Examples.configureHome)
        #expect(request.family == .systemMedium)
        #expect(!request.suggestions && request.smartRotate && request.developerMode && request.pinned == nil)
        let configuration = try request.configuration { kinds[$0] }
        #expect(configuration.widgets.map(\.instance.rawValue) == ["w1", "w2", "w3"])
        #expect(
            configuration.widgets[0].configuration == [
                "city": .entity(id: "paris", displayName: "Paris"), "days": .int(3),
                "wind": .measurement(value: 12.5, unit: "km/h"), "budget": .currency(amount: 9.99, code: "EUR"),
                "when": .date(try Timestamp(rfc3339: "2024-03-05T09:00:00Z")), "long": .bool(true),
            ])
        #expect(configuration.widgets[1].configuration.isEmpty)
        #expect(configuration.widgets[2].configuration == ["units": .enumCase("imperial")])
        let event = try request.event(defaultTime: Fixed.t(0)) { kinds[$0] }
        #expect(event == .configureStack(configuration, at: Fixed.t(60)))
        #expect(ConfigureStackRequest.reply(revision: 2) == ["revision": 2])
    }

    @Test(arguments: [
        (#""days":true"#, "widgets[0].configuration.days"),
        (#""days":3.5"#, "widgets[0].configuration.days"),
        (#""days":"three""#, "widgets[0].configuration.days"),
        (#""colour":"red""#, "widgets[0].configuration.colour"),
        (#""units":"kelvin""#, "widgets[0].configuration.units"),
        (#""city":{"id":"x","name":"X"}"#, "widgets[0].configuration.city.name"),
        (#""city":{"displayName":"X"}"#, "widgets[0].configuration.city.id"),
        (#""city":["x"]"#, "widgets[0].configuration.city"),
        (#""wind":{"value":"fast","unit":"m/s"}"#, "widgets[0].configuration.wind.value"),
        (#""wind":"fast""#, "widgets[0].configuration.wind"),
        (#""budget":{"amount":1,"code":"euro"}"#, "widgets[0].configuration.budget"),
        (#""when":"tomorrow""#, "widgets[0].configuration.when"),
    ])
    func configureStackValueErrors(value: String, parameter: String) throws {
        let kinds = try Self.kinds()
        let text =
            #"{"stack":"s","family":"systemSmall","widgets":[{"instance":"w","app":"com.example.weather","kind":"forecast","configuration":{\#(value)}}]}"#
        let request = try decode(ConfigureStackRequest.self, text)
        let error = varlinkError { () throws(VarlinkError) in _ = try request.configuration { kinds[$0] } }
        #expect(error?.parameter == parameter, "\(String(describing: error))")
    }

    @Test func configureStackWithAnUnknownKind() throws {
        let request = try decode(ConfigureStackRequest.self, Examples.configureHome)
        let error = varlinkError { () throws(VarlinkError) in _ = try request.configuration { _ in nil } }
        #expect(
            error
                == VarlinkError(
                    name: "io.smartstack.Shell.NotFound",
                    parameters: ["kind": "widgetKind", "id": "com.example.weather/forecast"]))
    }

    @Test func configureStackNullValuesAreLeftOut() throws {
        let kinds = try Self.kinds()
        let text =
            #"{"stack":"s","family":"systemSmall","widgets":[{"instance":"w","app":"com.example.weather","kind":"forecast","configuration":{"days":null}}]}"#
        let configuration = try decode(ConfigureStackRequest.self, text).configuration { kinds[$0] }
        #expect(configuration.widgets[0].configuration.isEmpty)
    }

    @Test func shellQueriesAndEvents() throws {
        let getStack = try decode(GetStackRequest.self, try #require(Examples.calls[.getStack]))
        #expect(
            try getStack.stack.rawValue == "home"
                && getStack.at == (try Timestamp(rfc3339: "2024-03-04T09:30:00-08:00")))
        let subscribe = try decode(SubscribeRequest.self, try #require(Examples.calls[.subscribe]))
        #expect(subscribe.stacks?.map(\.rawValue) == ["home", "work"])
        #expect(try subscribe.follows(try StackID("work")) && !subscribe.follows(try StackID("car")))
        let everything = try decode(SubscribeRequest.self, "{}")
        #expect(try everything.stacks == nil && everything.follows(try StackID("car")))
        let stack = try StackID("home")
        #expect(
            try decode(RemoveStackRequest.self, #"{"stack":"home"}"#).event(defaultTime: Fixed.t(1))
                == .removeStack(stack, at: Fixed.t(1)))
        #expect(
            try decode(RecordEngagementRequest.self, try #require(Examples.calls[.recordEngagement])).event(
                defaultTime: Fixed.t(2))
                == .engage(
                    stack: stack, instance: try InstanceID("w1"), kind: .impression, duration: 2.5, at: Fixed.t(2)))
        #expect(
            try decode(RecordLookRequest.self, #"{"stack":"home"}"#).event(defaultTime: Fixed.t(3))
                == .look(stack: stack, at: Fixed.t(3)))
        let context = try decode(SetContextRequest.self, try #require(Examples.calls[.setContext]))
        guard case .setContext("location", "home", let at) = context.event(defaultTime: Fixed.t(0)) else {
            Issue.record("wrong event")
            return
        }
        #expect(at.utcOffsetSeconds == 3_600)
        #expect(
            try decode(SetContextRequest.self, #"{"key":"focus","value":null}"#).event(defaultTime: Fixed.t(4))
                == .setContext(key: "focus", value: nil, at: Fixed.t(4)))
        let explain = try decode(ExplainRequest.self, #"{"stack":"home"}"#)
        #expect(explain.instance == nil && explain.at == nil)
        #expect(try decode(GetBudgetRequest.self, #"{"instance":"w1"}"#).instance.rawValue == "w1")
        #expect(try decode(SetLogLevelRequest.self, #"{"level":"critical"}"#).level == .critical)
    }

    @Test func getInterfaceDescription() throws {
        let request = try decode(GetInterfaceDescriptionRequest.self, #"{"interface":"io.smartstack.Admin"}"#)
        #expect(
            try request.reply()["description"]?.stringValue
                == VarlinkInterfaces.definition(named: "io.smartstack.Admin")?.text)
        let missing = try decode(GetInterfaceDescriptionRequest.self, #"{"interface":"io.smartstack.Nope"}"#)
        #expect(
            varlinkError { () throws(VarlinkError) in _ = try missing.reply() }
                == .interfaceNotFound("io.smartstack.Nope"))
    }

    @Test func configurationValuesRoundTripThroughTheirWireForm() throws {
        let intent = try #require(try Self.weatherKind().intent)
        let values: [String: ConfigurationValue] = [
            "city": .entity(id: "paris", displayName: "Paris"), "units": .enumCase("imperial"), "days": .int(-3),
            "wind": .measurement(value: 0.25, unit: "m/s"), "budget": .currency(amount: 1e3, code: "USD"),
            "when": .date(Fixed.start), "long": .bool(true),
        ]
        for (name, value) in values {
            let schema = try #require(intent.parameter(named: name))
            let decoded = try ConfigurationValue.wire(value.wireValue, as: schema, parameter: name)
            #expect(decoded == value, "\(name)")
            let fromText = try ConfigurationValue.wire(.string(value.matchKey), as: schema, parameter: name)
            #expect(fromText == value, "\(name) text")
        }
        #expect(Configuration(values).wireObject.keys == ["budget", "city", "days", "long", "units", "when", "wind"])
    }
}

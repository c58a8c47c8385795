import SmartStackCore
import Testing

@testable import SmartStackProtocol

/// Bad calls: each is an `InvalidParameter` naming the offending value's full path.
@Suite("Request errors name the parameter")
struct RequestErrorTests {
    static let w = #""app":"com.example.weather""#
    static let d = "2024-03-04T09:00:00Z"

    static let cases: [(SmartStackMethod, String, String)] = [
        (.registerWidget, #"{"app":"com example","kind":"k","families":["systemSmall"]}"#, "app"),
        (.registerWidget, #"{\#(w),"kind":"a b","families":["systemSmall"]}"#, "kind"),
        (.registerWidget, #"{\#(w),"kind":"k","families":[]}"#, "families"),
        (.registerWidget, #"{\#(w),"kind":"k","families":["systemSmall","huge"]}"#, "families[1]"),
        (.registerWidget, #"{\#(w),"kind":"k","families":[1]}"#, "families[0]"),
        (.registerWidget, #"{\#(w),"kind":"k","displayName":"","families":["systemSmall"]}"#, "displayName"),
        (
            .registerWidget, #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"","parameters":[]}}"#,
            "intent.type"
        ),
        (.registerWidget, #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T"}}"#, "intent.parameters"),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"colour"}]}}"#,
            "intent.parameters[0].type"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"enum"}]}}"#,
            "intent.parameters[0].cases"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"enum","cases":[{"id":"x"},{"id":"x"}]}]}}"#,
            "intent.parameters[0].cases[1].id"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"enum","cases":[{"id":"x"}],"default":"y"}]}}"#,
            "intent.parameters[0].default"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"int","default":"3.5"}]}}"#,
            "intent.parameters[0].default"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"int"},{"name":"a","type":"int"}]}}"#,
            "intent.parameters[1].name"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"int","optional":"yes"}]}}"#,
            "intent.parameters[0].optional"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"intent":{"type":"T","parameters":[{"name":"a","type":"int","size":1}]}}"#,
            "intent.parameters[0].size"
        ),
        (
            .registerWidget, #"{\#(w),"kind":"k","families":["systemSmall"],"predictionMapping":[{"intent":""}]}"#,
            "predictionMapping[0].intent"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"predictionMapping":[{"intent":"I","parameters":{"p":"missing"}}]}"#,
            "predictionMapping[0].parameters.p"
        ),
        (
            .registerWidget,
            #"{\#(w),"kind":"k","families":["systemSmall"],"predictionMapping":[{"intent":"I","parameters":{"p":1}}]}"#,
            "predictionMapping[0].parameters.p"
        ),
        (.registerWidget, #"{\#(w),"kind":"k","families":["systemSmall"],"date":"tomorrow"}"#, "date"),
        (.donate, #"{\#(w),"intent":""}"#, "intent"),
        (.donate, #"{\#(w),"intent":"I","parameters":{"a":1}}"#, "parameters.a"),
        (.donate, #"{\#(w),"intent":"I","parameters":["a"]}"#, "parameters"),
        (.donate, #"{\#(w),"intent":"I","date":"2024-03-04T09:00:00"}"#, "date"),
        (.donate, #"{\#(w),"intent":"I","id":""}"#, "id"),
        (.donate, #"{\#(w),"intent":"I","groupId":""}"#, "groupId"),
        (.deleteDonations, #"{\#(w),"ids":["a"],"groupId":"g"}"#, "groupId"),
        (.deleteDonations, #"{\#(w),"groupId":"g","intent":"I"}"#, "intent"),
        (.deleteDonations, #"{\#(w),"entity":"e"}"#, "entity"),
        (.deleteDonations, #"{\#(w),"ids":[1]}"#, "ids[0]"),
        (.listDonations, #"{\#(w),"limit":0}"#, "limit"),
        (.listDonations, #"{\#(w),"limit":1001}"#, "limit"),
        (.listDonations, #"{\#(w),"limit":1.5}"#, "limit"),
        (.listDonations, #"{\#(w),"after":7}"#, "after"),
        (.listDonations, #"{\#(w),"cursor":7}"#, "cursor"),
        (.listDonations, #"{\#(w),"cursor":"7"}"#, "cursor"),
        (.listDonations, #"{\#(w),"cursor":"s"}"#, "cursor"),
        (.listDonations, #"{\#(w),"cursor":"s-1"}"#, "cursor"),
        (.listDonations, #"{\#(w),"cursor":"s01"}"#, "cursor"),
        (.listDonations, #"{\#(w),"cursor":"s99999999999999999999"}"#, "cursor"),
        (.listDonations, #"{\#(w),"cursor":"s1","after":"d1"}"#, "cursor"),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[]}"#, "entries"),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":{}}"#, "entries"),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[5]}"#, "entries[0]"),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[{"relevance":null}]}"#, "entries[0].date"),
        (
            .submitTimeline,
            #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"},{"date":"\#(d)","relevance":{"score":"high","duration":0}}]}"#,
            "entries[1].relevance.score"
        ),
        (
            .submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)","relevance":{"score":1}}]}"#,
            "entries[0].relevance.duration"
        ),
        (
            .submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)","relevance":{"score":1,"duration":-1}}]}"#,
            "entries[0].relevance.duration"
        ),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)","colour":1}]}"#, "entries[0].colour"),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"}],"policy":{"kind":"after"}}"#, "policy.date"),
        (
            .submitTimeline,
            #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"}],"policy":{"kind":"never","date":"\#(d)"}}"#, "policy.date"
        ),
        (
            .submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"}],"policy":{"kind":"sometimes"}}"#,
            "policy.kind"
        ),
        (
            .submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"}],"instance":"w1","configuration":{}}"#,
            "configuration"
        ),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"}],"instance":""}"#, "instance"),
        (.submitTimeline, #"{\#(w),"kind":"k","entries":[{"date":"\#(d)"}],"configuration":[]}"#, "configuration"),
        (.reloadTimelines, #"{\#(w),"kind":"bad kind"}"#, "kind"),
        (.reloadTimelines, #"{"app":""}"#, "app"),
        (.watchReloads, #"{\#(w),"includeWithheld":"yes"}"#, "includeWithheld"),
        (.startLiveActivity, #"{\#(w),"id":"x","attributes":{"k":1}}"#, "attributes.k"),
        (.startLiveActivity, #"{\#(w),"id":3}"#, "id"),
        (.updateLiveActivity, #"{\#(w),"id":"x","contentState":"level 3"}"#, "contentState"),
        (.endLiveActivity, #"{\#(w),"id":"x","dismissAfter":99999}"#, "dismissAfter"),
        (.endLiveActivity, #"{\#(w),"id":"x","dismissAfter":"soon"}"#, "dismissAfter"),
        (.declareRelevance, #"{\#(w),"kind":"k","contexts":[{"key":"a","value":"b"},{}]}"#, "contexts[1]"),
        (.declareRelevance, #"{\#(w),"kind":"k","contexts":[{"start":"\#(d)"}]}"#, "contexts[0].end"),
        (
            .declareRelevance, #"{\#(w),"kind":"k","contexts":[{"start":"\#(d)","end":"2024-03-04T08:00:00Z"}]}"#,
            "contexts[0].end"
        ),
        (
            .declareRelevance, #"{\#(w),"kind":"k","contexts":[{"start":"\#(d)","end":"\#(d)","key":"a"}]}"#,
            "contexts[0].key"
        ),
        (.declareRelevance, #"{\#(w),"kind":"k","contexts":[{"key":"a"}]}"#, "contexts[0].value"),
        (.declareRelevance, #"{\#(w),"kind":"k","contexts":[{"key":"","value":"b"}]}"#, "contexts[0].key"),
        (.declareRelevance, #"{\#(w),"kind":"k","group":""}"#, "group"),
        (.changeStack, #"{"stack":"home","family":"tiny"}"#, "family"),
        (.changeStack, #"{"stack":"home","remove":["a b"]}"#, "remove[0]"),
        (.changeStack, #"{"stack":"home","order":["a",""]}"#, "order[1]"),
        (.changeStack, #"{"stack":"home","add":[{"instance":"a","kind":"k"}]}"#, "add[0].app"),
        (.configureStack, #"{"stack":"home","family":"tiny","widgets":[]}"#, "family"),
        (.configureStack, #"{"stack":"my home","family":"systemSmall","widgets":[]}"#, "stack"),
        (
            .configureStack,
            #"{"stack":"home","family":"systemSmall","widgets":[{"instance":"a","app":"a.b","kind":"k"},{"instance":"has space","app":"a.b","kind":"k"}]}"#,
            "widgets[1].instance"
        ),
        (
            .configureStack, #"{"stack":"home","family":"systemSmall","widgets":[{"instance":"a","kind":"k"}]}"#,
            "widgets[0].app"
        ),
        (
            .configureStack,
            #"{"stack":"home","family":"systemSmall","widgets":[{"instance":"a","app":"a.b","kind":"k","configuration":"x"}]}"#,
            "widgets[0].configuration"
        ),
        (.configureStack, #"{"stack":"home","family":"systemSmall","widgets":[],"pinned":""}"#, "pinned"),
        (.configureStack, #"{"stack":"home","family":"systemSmall","widgets":[],"smartRotate":1}"#, "smartRotate"),
        (
            .configureStack, #"{"stack":"home","family":"systemSmall","widgets":[],"date":"2024-13-01T00:00:00Z"}"#,
            "date"
        ),
        (.getStack, #"{"stack":"home","at":"now"}"#, "at"),
        (.subscribe, #"{"stacks":["home",""]}"#, "stacks[1]"),
        (.subscribe, #"{"stacks":"home"}"#, "stacks"),
        (.removeStack, #"{"stack":5}"#, "stack"),
        (.recordEngagement, #"{"stack":"home","instance":"w1","kind":"poke"}"#, "kind"),
        (.recordEngagement, #"{"stack":"home","instance":"w1","kind":"impression","duration":-1}"#, "duration"),
        (.recordLook, #"{"stack":"home","date":"2024-03-04"}"#, "date"),
        (.setContext, #"{"key":""}"#, "key"),
        (.setContext, #"{"key":"k","value":5}"#, "value"),
        (.explain, #"{"stack":"home","instance":""}"#, "instance"),
        (.getBudget, #"{"instance":"w1","at":17}"#, "at"),
        (.setLogLevel, #"{"level":"loud"}"#, "level"),
        (.releaseApp, #"{"app":""}"#, "app"),
        (.listAppOwners, #"{"limit":0}"#, "limit"),
        (.getInterfaceDescription, #"{"interface":null}"#, "interface"),
    ]

    @Test(arguments: cases)
    func badCall(method: SmartStackMethod, text: String, parameter: String) throws {
        let parameters = try object(text)
        let error = varlinkError { () throws(VarlinkError) in _ = try method.requestType.init(parameters: parameters) }
        #expect(error?.name == "org.varlink.service.InvalidParameter", "\(String(describing: error))")
        #expect(error?.parameter == parameter, "\(String(describing: error))")
        #expect(error?.parameters["reason"]?.stringValue?.isEmpty == false)
        let service = try #require(Fixed.interface("org.varlink.service"))
        #expect(service.validateError(named: "InvalidParameter", error?.parameters ?? [:]) == nil)
    }

    @Test func everyMethodWithParametersHasABadCall() {
        let covered = Set(Self.cases.map(\.0))
        for method in SmartStackMethod.allCases where !(Self.definitionIsEmpty(method)) {
            #expect(covered.contains(method), "no bad call for \(method)")
        }
    }

    static func definitionIsEmpty(_ method: SmartStackMethod) -> Bool {
        Fixed.interface(method.interface)?.method(named: method.name)?.input.isEmpty ?? true
    }

    @Test func reasonsSayWhatIsWrong() throws {
        func reason(_ method: SmartStackMethod, _ text: String) throws -> String? {
            let parameters = try object(text)
            return varlinkError { () throws(VarlinkError) in _ = try method.requestType.init(parameters: parameters) }?
                .parameters["reason"]?.stringValue
        }
        #expect(try reason(.getStack, #"{"stack":1}"#) == "expected a string, got integer")
        #expect(
            try reason(.setLogLevel, #"{"level":"loud"}"#)
                == "'loud' is not one of trace, debug, info, notice, warning, error, critical")
        #expect(try reason(.recordLook, #"{"stack":"s","date":"2024-03-04T09:00:00"}"#)?.contains("UTC offset") == true)
        #expect(try reason(.getStack, #"{"stack":"a b"}"#)?.contains("printable ASCII") == true)
    }
}

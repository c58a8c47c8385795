import SmartStackCore
import Testing

/// `hh:mm[:ss]` on 2025-03-01 UTC.
private func at(_ clock: String) -> Timestamp {
    let time = clock.count == 5 ? "\(clock):00" : clock
    return try! Timestamp(rfc3339: "2025-03-01T\(time)Z")
}

private let morning = RelevantContext.dateInterval(start: at("07:00"), end: at("09:00"))
private let atHome = RelevantContext.context(key: "location", value: "home")
private let working = RelevantContext.context(key: "focus", value: "work")

@Suite struct RelevantContextTests {
    @Test(arguments: [("06:59:59", false), ("07:00", true), ("08:59:59", true), ("09:00", false)])
    func intervalIncludesStartAndExcludesEnd(clock: String, active: Bool) {
        #expect(morning.isActive(at: at(clock), contexts: [:]) == active)
    }

    @Test func contextMatchesKeyAndValueExactly() {
        #expect(atHome.isActive(at: at("12:00"), contexts: ["location": "home"]))
        #expect(!atHome.isActive(at: at("12:00"), contexts: ["location": "Home"]))
        #expect(!atHome.isActive(at: at("12:00"), contexts: ["place": "home"]))
        #expect(!atHome.isActive(at: at("12:00"), contexts: [:]))
    }

    @Test func firstActiveFollowsPriorityOrder() {
        let list = [working, morning, atHome]
        #expect(RelevantContext.firstActive(list, at: at("08:00"), contexts: ["location": "home"]) == 1)
        #expect(RelevantContext.firstActive(list, at: at("08:00"), contexts: ["focus": "work"]) == 0)
        #expect(RelevantContext.firstActive(list, at: at("10:00"), contexts: ["location": "home"]) == 2)
        #expect(RelevantContext.firstActive(list, at: at("10:00"), contexts: [:]) == nil)
        #expect(RelevantContext.firstActive([], at: at("10:00"), contexts: [:]) == nil)
    }

    @Test func nextChangeIsTheIntervalStartThenEnd() {
        #expect(morning.nextChange(after: at("06:00")) == at("07:00"))
        #expect(morning.nextChange(after: at("07:00")) == at("09:00"))
        #expect(morning.nextChange(after: at("09:00")) == nil)
        #expect(atHome.nextChange(after: at("06:00")) == nil)
        let evening = RelevantContext.dateInterval(start: at("18:00"), end: at("20:00"))
        #expect(RelevantContext.nextChange([atHome, evening, morning], after: at("08:00")) == at("09:00"))
        #expect(RelevantContext.nextChange([atHome, evening, morning], after: at("09:00")) == at("18:00"))
    }

    @Test func validListPasses() throws {
        let list = try RelevantContext.validated([morning, atHome, .context(key: "charging", value: "")])
        #expect(list.count == 3)
    }

    @Test(arguments: [
        (RelevantContext.dateInterval(start: at("09:00"), end: at("09:00")), "contexts[1].end"),
        (.dateInterval(start: at("09:00"), end: at("08:00")), "contexts[1].end"),
        (.context(key: "", value: "x"), "contexts[1].key"),
        (.context(key: String(repeating: "k", count: 256), value: "x"), "contexts[1].key"),
        (.context(key: "k", value: String(repeating: "v", count: 4_097)), "contexts[1].value"),
    ])
    func invalidContextNamesTheParameter(context: RelevantContext, parameter: String) {
        let error = #expect(throws: CoreError.self) { try RelevantContext.validated([atHome, context]) }
        #expect(error?.parameter == parameter)
    }

    @Test func parameterPrefixIsTheCallers() {
        let bad = RelevantContext.dateInterval(start: at("09:00"), end: at("08:00"))
        let error = #expect(throws: CoreError.self) {
            try RelevantContext.validated([bad], parameter: "relevantContexts")
        }
        #expect(error?.parameter == "relevantContexts[0].end")
    }

    @Test func listLengthIsLimited() {
        let list = Array(repeating: atHome, count: 3)
        let error = #expect(throws: CoreError.self) { try RelevantContext.validated(list, maxCount: 2) }
        #expect(error == .limitExceeded(limit: "maxRelevantContexts", maximum: 2))
    }
}

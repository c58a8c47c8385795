import SmartStackCore
import SmartStackAnalysis
import SmartStackSystemd
import Testing

/// The aggregation over synthetic decision records, worked by hand.
struct AnalyzerTests {
    static let second: Int64 = 1_000_000
    static let t0: Int64 = 1_763_712_000 * second  // 2025-11-21T08:00:00Z

    static func order(
        _ at: Int64, _ stack: String, _ order: [String], previous: [String] = [], reason: String = "behaviour",
        count: Int = 1
    ) -> DecisionRecord {
        DecisionRecord(
            time: t0 + at * second,
            event: .orderChanged(
                .init(stack: stack, order: order, previousOrder: previous, reason: reason, count: count)))
    }

    /// home: mail on top 0–60 s, news 60–90 s (relevance), mail again 90–100 s (manual swipe), end at 100 s.
    static let records: [DecisionRecord] = [
        order(0, "home", ["mail", "news", "maps"]),
        order(10, "home", ["mail", "maps", "news"], previous: ["mail", "news", "maps"], count: 3),
        order(60, "home", ["news", "mail", "maps"], previous: ["mail", "maps", "news"], reason: "relevance"),
        DecisionRecord(time: t0 + 70 * second, event: .engagement(stack: "home", widget: "news", kind: "tap")),
        DecisionRecord(time: t0 + 75 * second, event: .engagement(stack: "home", widget: "news", kind: "tap")),
        order(90, "home", ["mail", "news", "maps"], previous: ["news", "mail", "maps"], reason: "manualSwipe"),
        DecisionRecord(time: t0 + 95 * second, event: .engagement(stack: "home", widget: "mail", kind: "tap")),
        DecisionRecord(time: t0 + 20 * second, event: .suggestionInserted(stack: "home", widget: "suggestion:a/b")),
        DecisionRecord(time: t0 + 30 * second, event: .reloadRequested(widget: "news", reason: "timelineEnded")),
        DecisionRecord(time: t0 + 40 * second, event: .reloadWithheld(widget: "news", reason: "budget")),
        DecisionRecord(time: t0 + 50 * second, event: .reloadRequested(widget: "ghost", reason: "providerRequest")),
        order(100, "work", ["slack"]),
    ]

    @Test func stackSummary() throws {
        let report = Analyzer().analyze(Self.records.reversed())
        #expect(report.start == Self.t0)
        #expect(report.end == Self.t0 + 100 * Self.second)
        #expect(report.entries.orderChanged == 5)
        #expect(report.entries.engagement == 3)
        #expect(report.stacks.map(\.stack) == ["home", "work"])
        let home = try #require(report.stacks.first)
        #expect(home.decisions == 4)
        #expect(home.changes == 6)
        #expect(home.topChanges == 2)
        #expect(home.topChangesPerHour == 2 / (100.0 / 3_600))
        #expect(home.rotationReasons.counts.map(\.key) == ["manualSwipe", "relevance"])
        #expect(home.manualSwipes == 1)
        #expect(home.swipes == [Swipe(time: Self.t0 + 90 * Self.second, widget: "mail")])
        #expect(home.suggestionsInserted == 1)
        #expect(home.reloadsRequested == 1)
        #expect(home.reloadsWithheld == 1)
        #expect(home.lanes == ["mail", "news", "maps", "suggestion:a/b"])
        // mail 60 s + 10 s, news 30 s: shares of the 100 s.
        #expect(home.timeOnTop.map(\.widget) == ["mail", "news"])
        #expect(home.timeOnTop.map(\.seconds) == [70, 30])
        #expect(home.timeOnTop.map(\.share) == [0.7, 0.3])
        // Closed stretches (both ends known): news 30 s. Mail's first 60 s began before the range tells (the
        // stack's first entry has no previous order: a new stack, or the first entry after a restart), and the last
        // one (10 s) is cut by the end.
        #expect(home.medianTimeOnTop == 30)
        #expect(home.tenures.map(\.closed) == [false, true, false])
    }

    @Test func widgetSummary() throws {
        let report = Analyzer().analyze(Self.records)
        let news = try #require(report.widgets.first { $0.widget == "news" })
        #expect(news.stack == "home")
        #expect(news.surfaced == 1)
        #expect(news.surfacedByRelevance == 1)
        #expect(news.surfacedByBehaviour == 0)
        #expect(news.taps == 2)
        #expect(news.tapsAfterSurfaced == 2)
        #expect(news.serviceSurfacings == 1)
        #expect(news.engagementRate(haveEngagement: true) == 1)
        #expect(news.reloadsRequested == 1)
        #expect(news.reloadsWithheld == 1)
        // A tap on a widget the user swiped to is not a tap after the service surfaced it.
        let mail = try #require(report.widgets.first { $0.widget == "mail" })
        #expect(mail.surfacedBy["manualSwipe"] == 1)
        #expect(mail.taps == 1)
        #expect(mail.tapsAfterSurfaced == 0)
        #expect(mail.engagementRate(haveEngagement: true) == nil)
        // A reload of a widget in no order: its own row without a stack, and a note.
        let ghost = try #require(report.widgets.first { $0.widget == "ghost" })
        #expect(ghost.stack == "")
        #expect(report.notes.contains { $0.contains("1 reload entries") })
        #expect(report.widgets.map(\.widget).contains("maps"))
    }

    /// A suggestion's id is the same in every stack it is suggested in: each stack has its own row for it (one row
    /// took the surfacings of both and the time on top of whichever stack was summarised last).
    @Test func theSameSuggestionInTwoStacksHasARowInEach() throws {
        let suggestion = "suggestion:org.ex.weather/main?city=Paris"
        let records = [
            Self.order(0, "home", ["mail", suggestion]),
            Self.order(10, "home", [suggestion, "mail"], previous: ["mail", suggestion], reason: "relevance"),
            Self.order(20, "home", ["mail", suggestion], previous: [suggestion, "mail"]),
            Self.order(0, "work", ["slack", suggestion]),
            Self.order(30, "work", [suggestion, "slack"], previous: ["slack", suggestion], reason: "relevance"),
            Self.order(80, "work", ["slack", suggestion], previous: [suggestion, "slack"]),
            DecisionRecord(time: Self.t0 + 40 * Self.second, event: .reloadRequested(widget: suggestion, reason: nil)),
            Self.order(100, "home", ["mail", suggestion], previous: ["mail", suggestion]),
        ]
        for _ in 0..<3 {
            let report = Analyzer().analyze(records.shuffled())
            let rows = report.widgets.filter { $0.widget == suggestion }
            #expect(rows.map(\.stack) == ["home", "work"])
            #expect(rows.map(\.surfaced) == [1, 1])
            #expect(rows.map(\.timeOnTop) == [10, 50])
            #expect(rows.map(\.reloadsRequested) == [1, 1])
            #expect(report.stacks.map(\.reloadsRequested) == [1, 1])
        }
    }

    @Test func sinceAttributesThePreviousTopAndUntilCuts() throws {
        let since = Self.t0 + 5 * Self.second
        let until = Self.t0 + 80 * Self.second
        let report = Analyzer(since: since, until: until).analyze(Self.records)
        let home = try #require(report.stacks.first { $0.stack == "home" })
        #expect(home.decisions == 2)
        // 5–60 s mail (known from the first entry's previous order), 60–80 s news.
        #expect(home.timeOnTop.map(\.seconds) == [55, 20])
        // Neither stretch has both ends in the range (mail's began before --since, news's ends at --until): no
        // median (it counted mail's 55 s as a whole stretch before).
        #expect(home.medianTimeOnTop == nil)
        #expect(home.topChanges == 1)
        #expect(report.stacks.map(\.stack) == ["home"])
    }

    @Test func noEntries() {
        let report = Analyzer().analyze([])
        #expect(report.stacks.isEmpty)
        #expect(report.start == nil)
        #expect(report.notes.contains("no smartstackd decision entries in the range"))
        let json = report.jsonObject
        #expect(json["stacks"] == .array([]))
        #expect(json["widgets"] == .array([]))
    }

    @Test func jsonDocument() throws {
        let json = Analyzer().analyze(Self.records).jsonObject
        let stacks = try #require(json["stacks"]?.arrayValue)
        let home = try #require(stacks.first?.objectValue)
        #expect(home["stack"] == .string("home"))
        #expect(home["decisions"] == .int(4))
        #expect(home["medianTimeOnTopSeconds"] == .double(30))
        #expect(home["rotationReasons"] == .object(["manualSwipe": .int(1), "relevance": .int(1)]))
        #expect(json["entries"]?.objectValue?["orderChanged"] == .int(5))
        #expect(json["range"]?.objectValue?["start"] == .string("2025-11-21T08:00:00.000Z"))
        let widgets = try #require(json["widgets"]?.arrayValue)
        #expect(widgets.count == 6)
    }

    /// Journal fields as smartstackd writes them (docs/systemd.md) become records.
    @Test func recordsFromJournalFields() throws {
        let fields = [
            "MESSAGE_ID": SmartStackEvent.orderChanged.messageID.hex, "SMARTSTACK_STACK": "home",
            "SMARTSTACK_REVISION": "7", "SMARTSTACK_ORDER": "weather,calendar",
            "SMARTSTACK_PREVIOUS_ORDER": "calendar,weather", "SMARTSTACK_TOP": "weather",
            "SMARTSTACK_REASON": "relevance", "SMARTSTACK_SCORES": "weather=0.910,calendar=0.090,cut=0.1…[truncated]",
            "SMARTSTACK_COUNT": "3",
        ]
        let record = try #require(DecisionRecord(fields: fields, time: 42))
        guard case .orderChanged(let change) = record.event else { Issue.record("not an order change"); return }
        #expect(change.stack == "home")
        #expect(change.revision == 7)
        #expect(change.order == ["weather", "calendar"])
        #expect(change.previousOrder == ["calendar", "weather"])
        #expect(change.top == "weather")
        #expect(change.reason == "relevance")
        #expect(change.scores == ["weather": 0.91, "calendar": 0.09])
        #expect(change.count == 3)
        // A count is anyone's text in the journal: a huge one is bounded, so a report's sums cannot overflow.
        var huge = fields
        huge["SMARTSTACK_COUNT"] = "\(Int.max)"
        guard case .orderChanged(let bounded) = try #require(DecisionRecord(fields: huge, time: 43)).event else {
            Issue.record("not an order change")
            return
        }
        #expect(bounded.count == DecisionRecord.maximumCount)

        let first = try #require(
            DecisionRecord(
                fields: [
                    "MESSAGE_ID": SmartStackEvent.orderChanged.messageID.hex, "SMARTSTACK_STACK": "home",
                    "SMARTSTACK_ORDER": "a,b", "SMARTSTACK_PREVIOUS_ORDER": "",
                ], time: 1))
        #expect(first.event == .orderChanged(.init(stack: "home", order: ["a", "b"], top: "a", count: 1)))
        #expect(DecisionRecord(fields: ["MESSAGE_ID": SmartStackEvent.orderChanged.messageID.hex], time: 1) == nil)
        #expect(DecisionRecord(fields: ["MESSAGE_ID": SmartStackEvent.started.messageID.hex], time: 1) == nil)
        let withheld = DecisionRecord(
            fields: ["MESSAGE_ID": SmartStackEvent.reloadWithheld.messageID.hex, "SMARTSTACK_WIDGET": "w"], time: 5)
        #expect(withheld?.event == .reloadWithheld(widget: "w", reason: nil))
        let tap = DecisionRecord(
            fields: ["SMARTSTACK_ENGAGEMENT": "tap", "SMARTSTACK_STACK": "s", "SMARTSTACK_WIDGET": "w"], time: 6)
        #expect(tap?.event == .engagement(stack: "s", widget: "w", kind: "tap"))
        #expect(DecisionRecord(fields: ["SMARTSTACK_ENGAGEMENT": "poke", "SMARTSTACK_STACK": "s"], time: 6) == nil)
    }

    /// Ids with commas (a shell's instance id, a suggestion's configuration value) survive the comma-separated
    /// lists: the daemon percent-encodes `%` and `,` in each item, the analysis decodes them; a list the daemon cut
    /// to fit the journal loses its last, partial item.
    @Test func listsKeepIdsWithCommasAndDropACutItem() throws {
        let ids = ["suggestion:org.ex.weather/main?city=Paris, France", "a%2Cb", "50%", "plain"]
        let joined = JournalList.join(ids)
        #expect(joined == "suggestion:org.ex.weather/main?city=Paris%2C France,a%252Cb,50%25,plain")
        #expect(JournalList.split(joined) == ids)
        #expect(JournalList.split("") == [])
        // Anyone can write an entry with the daemon's identifier: a cut list of no items is none, not a trap.
        #expect(JournalList.split(",", wasCut: true) == [])
        #expect(JournalList.decode("100%zz%2c%") == "100%zz,%")
        let fields = [
            "MESSAGE_ID": SmartStackEvent.orderChanged.messageID.hex, "SMARTSTACK_STACK": "home",
            "SMARTSTACK_ORDER": joined + ",suggestion:org.ex.x/main?city=Lo…[truncated]",
            "SMARTSTACK_PREVIOUS_ORDER": JournalList.join(ids.reversed()), "SMARTSTACK_TOP": ids[0],
            "SMARTSTACK_SCORES": ids.map { "\(JournalList.encode($0))=0.25" }.joined(separator: ","),
            "SMARTSTACK_TRUNCATED": "SMARTSTACK_ORDER",
        ]
        let record = try #require(DecisionRecord(fields: fields, time: 1))
        guard case .orderChanged(let change) = record.event else { Issue.record("not an order change"); return }
        #expect(change.order == ids)
        #expect(change.previousOrder == ids.reversed())
        #expect(change.top == ids[0])
        #expect(change.scores == Dictionary(uniqueKeysWithValues: ids.map { ($0, 0.25) }))
    }

    /// Invariants over seeded random histories: shares sum to 1, tenures do not overlap and stay in the span,
    /// and top changes equal the stretches a change opened.
    @Test(arguments: [1, 2, 3, 4, 5])
    func invariantsOverRandomHistories(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        let widgets = ["a", "b", "c", "d"]
        var records: [DecisionRecord] = []
        var time: Int64 = 0
        var previous: [String] = []
        for _ in 0..<200 {
            time += Int64(generator.next() % 600) + 1
            let order = widgets.shuffled(using: &generator)
            let reasons = ["relevance", "behaviour", "manualSwipe", "suggestion"]
            records.append(
                Self.order(time, "s", order, previous: previous, reason: reasons[Int(generator.next() % 4)]))
            previous = order
        }
        let report = Analyzer().analyze(records)
        let stack = try #require(report.stacks.first)
        let total = stack.timeOnTop.map(\.share).reduce(0, +)
        #expect(abs(total - 1) < 1e-9)
        for (earlier, later) in zip(stack.tenures, stack.tenures.dropFirst()) {
            #expect(earlier.end == later.start)
            #expect(earlier.widget != later.widget)
        }
        #expect(stack.tenures.count == stack.topChanges + 1)
        #expect(stack.rotationReasons.total == stack.topChanges)
        #expect(report.widgets.map(\.surfaced).reduce(0, +) == stack.topChanges)
    }
}

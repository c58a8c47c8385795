import SmartStackCore
import Testing

/// `hh:mm[:ss]` on 2025-03-01 UTC.
private func at(_ clock: String) -> Timestamp {
    let text = clock.count == 5 ? "2025-03-01T\(clock):00Z" : "2025-03-01T\(clock)Z"
    return try! Timestamp(rfc3339: text)
}

private func entry(_ clock: String, _ score: Double? = nil, duration: Double = 0) -> TimelineEntry {
    TimelineEntry(date: at(clock), relevance: score.map { Relevance(score: $0, duration: duration) })
}

@Suite struct TimelineTests {
    @Test func sortsByDateKeepingSubmittedOrderForEqualDates() throws {
        let (timeline, _) = try Timeline.validated(
            entries: [entry("11:00", 3), entry("10:00", 1), entry("11:00", 4), entry("10:30")], policy: .atEnd)
        #expect(timeline.entries.map(\.date) == [at("10:00"), at("10:30"), at("11:00"), at("11:00")])
        #expect(timeline.entries.map { $0.relevance?.score } == [1, nil, 3, 4])
        #expect(timeline.lastEntryDate == at("11:00"))
    }

    @Test func emptyTimelineIsRejected() {
        let error = #expect(throws: CoreError.self) { try Timeline.validated(entries: [], policy: .atEnd) }
        #expect(error?.parameter == "entries")
    }

    @Test func entryLimitIsEnforced() throws {
        let entries = (0..<4).map { TimelineEntry(date: at("10:00").adding(seconds: Double($0) * 600)) }
        _ = try Timeline.validated(entries: Array(entries.prefix(3)), policy: .atEnd, maxEntries: 3)
        let error = #expect(throws: CoreError.self) {
            try Timeline.validated(entries: entries, policy: .atEnd, maxEntries: 3)
        }
        #expect(error == .limitExceeded(limit: "maxTimelineEntries", maximum: 3))
        #expect(Timeline.defaultMaxEntries == 1_000)
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteScoreIsRejected(score: Double) {
        let error = #expect(throws: CoreError.self) {
            try Timeline.validated(entries: [entry("10:00", 1), entry("11:00", score)], policy: .atEnd)
        }
        #expect(error?.parameter == "entries[1].relevance.score")
    }

    @Test(arguments: [-1, -0.000_001, Double.nan, .infinity])
    func badDurationIsRejected(duration: Double) {
        let error = #expect(throws: CoreError.self) {
            try Timeline.validated(
                entries: [entry("10:00"), entry("11:00"), entry("12:00", 1, duration: duration)], policy: .never)
        }
        #expect(error?.parameter == "entries[2].relevance.duration")
    }

    @Test func negativeZeroAndMissingRelevanceAreAccepted() throws {
        let (timeline, warnings) = try Timeline.validated(
            entries: [entry("10:00", -5), entry("11:00", 0), entry("12:00"), entry("13:00", 2, duration: 0)],
            policy: .atEnd)
        #expect(timeline.entries.count == 4)
        #expect(warnings.isEmpty)
    }

    @Test func entriesLessThanFiveMinutesApartWarnNamingBothIndexes() throws {
        let (_, warnings) = try Timeline.validated(
            entries: [entry("10:00"), entry("10:04:59"), entry("10:09:59"), entry("10:10:00")], policy: .atEnd)
        // 10:04:59 → 10:09:59 is exactly 5 minutes: no warning.
        #expect(warnings.count == 2)
        #expect(warnings[0].contains("entries[0] and entries[1]"))
        #expect(warnings[0].contains("299 seconds"))
        #expect(warnings[1].contains("entries[2] and entries[3]"))
        #expect(warnings[1].contains("1 second "))
    }

    @Test func warningsUseSubmittedIndexes() throws {
        let (_, warnings) = try Timeline.validated(
            entries: [entry("12:00"), entry("10:00"), entry("10:02")], policy: .atEnd)
        #expect(warnings.count == 1)
        #expect(warnings[0].contains("entries[1] and entries[2]"))
    }

    @Test func sameDateEntriesWarn() throws {
        let (_, warnings) = try Timeline.validated(entries: [entry("10:00", 1), entry("10:00", 2)], policy: .atEnd)
        #expect(warnings.count == 1)
        #expect(warnings[0].contains("0 seconds"))
    }

    @Test func policyDueDates() throws {
        #expect(ReloadPolicy.atEnd.dueDate(lastEntryDate: at("12:00")) == at("12:00"))
        #expect(ReloadPolicy.after(at("09:00")).dueDate(lastEntryDate: at("12:00")) == at("09:00"))
        #expect(ReloadPolicy.never.dueDate(lastEntryDate: at("12:00")) == nil)
        let (timeline, _) = try Timeline.validated(entries: [entry("12:00"), entry("10:00")], policy: .atEnd)
        #expect(timeline.reloadDate == at("12:00"))
    }
}

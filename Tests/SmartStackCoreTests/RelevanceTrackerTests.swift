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

private func timeline(_ entries: [TimelineEntry]) -> Timeline {
    try! Timeline.validated(entries: entries, policy: .atEnd).timeline
}

private func tracker(_ entries: [TimelineEntry], submittedAt now: Timestamp = at("00:00")) -> RelevanceTracker {
    var tracker = RelevanceTracker()
    tracker.replace(with: timeline(entries), at: now)
    return tracker
}

@Suite struct RelevanceTrackerTests {
    @Test func noTimelineMeansNoRelevance() {
        let state = RelevanceTracker().state(at: at("10:00"))
        #expect(state.status == .none)
        #expect(state.normalized == 0)
        #expect(RelevanceTracker().nextChange(after: at("10:00")) == nil)
    }

    @Test func entryBecomesCurrentAtItsDate() {
        let tracker = tracker([entry("10:00", 5)])
        let before = tracker.state(at: at("09:59:59"))
        #expect(before.status == .none)
        #expect(before.currentEntryDate == nil)
        let now = tracker.state(at: at("10:00"))
        #expect(now.status == .relevant)
        #expect(now.score == 5)
        #expect(now.normalized == 1)
        #expect(now.since == at("10:00"))
        #expect(now.currentEntryDate == at("10:00"))
        #expect(now.expires == nil)
    }

    @Test func missingRelevanceKeepsThePreviousOne() {
        let tracker = tracker([entry("10:00", 4), entry("11:00"), entry("12:00", 2)])
        let state = tracker.state(at: at("11:30"))
        #expect(state.status == .relevant)
        #expect(state.score == 4)
        #expect(state.since == at("10:00"))
        #expect(state.currentEntryDate == at("11:00"))
        #expect(tracker.state(at: at("12:00")).score == 2)
    }

    @Test func entryWithoutRelevanceBeforeAnyRelevanceIsCurrentButNone() {
        let state = tracker([entry("10:00"), entry("11:00", 1)]).state(at: at("10:30"))
        #expect(state.status == .none)
        #expect(state.currentEntryDate == at("10:00"))
    }

    @Test func scoreZeroClearsAndStaysClearedThroughMissingRelevance() {
        let tracker = tracker([entry("10:00", 4), entry("11:00", 0), entry("12:00")])
        for clock in ["11:00", "11:59:59", "12:00", "23:00"] {
            let state = tracker.state(at: at(clock))
            #expect(state.status == .notRelevant)
            #expect(state.score == 0)
            #expect(state.normalized == 0)
            #expect(state.since == at("11:00"))
        }
    }

    @Test(arguments: [-0.5, -3.0, -1e9])
    func negativeScoreIsNotRelevant(score: Double) {
        let tracker = tracker([entry("10:00", score, duration: 600)])
        let state = tracker.state(at: at("10:01"))
        #expect(state.status == .notRelevant)
        #expect(state.score == 0)
        #expect(state.normalized == 0)
        #expect(state.expires == nil)
    }

    @Test func positiveDurationExpiresExactlyAtDatePlusDuration() {
        let tracker = tracker([entry("10:00", 2, duration: 1_800), entry("11:00")])
        let last = tracker.state(at: at("10:30").adding(seconds: -0.000_001))
        #expect(last.status == .relevant)
        #expect(last.expires == at("10:30"))
        let expired = tracker.state(at: at("10:30"))
        #expect(expired.status == .expired)
        #expect(expired.score == 0)
        #expect(expired.normalized == 0)
        #expect(expired.expires == at("10:30"))
        // A later entry without relevance keeps the expired relevance in force.
        #expect(tracker.state(at: at("11:30")).status == .expired)
        #expect(tracker.nextChange(after: at("10:00")) == at("10:30"))
        #expect(tracker.nextChange(after: at("10:30")) == at("11:00"))
        #expect(tracker.nextChange(after: at("11:00")) == nil)
    }

    @Test func nextRelevanceReplacesAnUnexpiredDuration() {
        let tracker = tracker([entry("10:00", 2, duration: 7_200), entry("11:00", 3)])
        let state = tracker.state(at: at("12:30"))
        #expect(state.status == .relevant)
        #expect(state.score == 3)
        #expect(state.expires == nil)
        #expect(tracker.nextChange(after: at("10:00")) == at("11:00"))
    }

    @Test func zeroDurationLastsUntilTheNextEntryWithRelevance() {
        let tracker = tracker([entry("10:00", 2), entry("11:00"), entry("15:00", 1)])
        #expect(tracker.state(at: at("14:59:59")).score == 2)
        #expect(tracker.state(at: at("14:59:59")).status == .relevant)
        #expect(tracker.state(at: at("15:00")).score == 1)
        #expect(tracker.state(at: at("15:00")).since == at("15:00"))
    }

    @Test func laterSameDateEntryWins() {
        let state = tracker([entry("10:00", 1), entry("10:00", 6)]).state(at: at("10:00"))
        #expect(state.score == 6)
    }

    @Test func normalisesAgainstCurrentAndPastEntriesOnly() {
        let tracker = tracker([entry("10:00", 2), entry("11:00", 8), entry("12:00", 4), entry("13:00", 0)])
        // At 10:00 the 8 is still in the future, so 2 is the largest score so far.
        #expect(tracker.state(at: at("10:00")).normalized == 1)
        #expect(tracker.state(at: at("11:00")).normalized == 1)
        #expect(tracker.state(at: at("12:00")).normalized == 0.5)
        #expect(tracker.state(at: at("13:00")).normalized == 0)
    }

    @Test(arguments: [0.001, 0.25, 3.0, 4.0, 1_000.0, 1e6])
    func normalisationIsScaleFree(factor: Double) {
        let scores: [Double] = [3, 7, 1, 0, 5, -2, 7.5]
        let clocks = ["10:00", "10:10", "10:20", "10:30", "10:40", "10:50", "11:00"]
        let base = tracker(zip(clocks, scores).map { entry($0, $1) })
        let scaled = tracker(zip(clocks, scores).map { entry($0, $1 * factor) })
        for clock in clocks + ["11:30"] {
            let expected = base.state(at: at(clock)).normalized
            #expect(abs(scaled.state(at: at(clock)).normalized - expected) <= 1e-12)
            #expect(scaled.state(at: at(clock)).status == base.state(at: at(clock)).status)
        }
    }

    @Test func historyOfReplacedTimelinesCountsOnlyEntriesThatBecameCurrent() {
        var tracker = tracker([entry("10:00", 10), entry("14:00", 100)])
        tracker.replace(with: timeline([entry("12:00", 5)]), at: at("12:00"))
        // 10 had become current before the replacement; 100 never did.
        #expect(tracker.historicalMax == 10)
        #expect(tracker.state(at: at("12:00")).normalized == 0.5)
        tracker.replace(with: timeline([entry("13:00", 20), entry("14:00", 10)]), at: at("12:30"))
        #expect(tracker.historicalMax == 10)
        #expect(tracker.state(at: at("13:00")).normalized == 1)
        #expect(tracker.state(at: at("14:00")).normalized == 0.5)
        tracker.replace(with: timeline([entry("15:00", 5)]), at: at("15:00"))
        #expect(tracker.historicalMax == 20)
        #expect(tracker.state(at: at("15:00")).normalized == 0.25)
    }

    @Test func entriesDatedBeforeSubmissionAreAlreadyCurrent() {
        let tracker = tracker([entry("08:00", 4), entry("09:00", 2), entry("13:00", 1)], submittedAt: at("10:00"))
        let state = tracker.state(at: at("10:00"))
        #expect(state.status == .relevant)
        #expect(state.score == 2)
        #expect(state.normalized == 0.5)
        #expect(tracker.nextChange(after: at("10:00")) == at("13:00"))
    }

    @Test func restoredHistoryIsUsed() {
        let tracker = RelevanceTracker(timeline: timeline([entry("10:00", 3)]), historicalMax: 12)
        #expect(tracker.state(at: at("10:00")).normalized == 0.25)
        #expect(RelevanceTracker(historicalMax: .nan).historicalMax == 0)
    }

    @Test func hugeDurationSaturatesInsteadOfOverflowing() {
        let state = tracker([entry("10:00", 1, duration: 1e300)]).state(at: at("23:00"))
        #expect(state.status == .relevant)
        #expect(state.expires == Timestamp(microseconds: .max))
    }

    /// The fast tracker against a direct reading of the rules, on random timelines and every change point.
    @Test func matchesAReferenceOfTheRulesOnRandomTimelines() {
        var random = SeededGenerator(seed: 0x5EED)
        for _ in 0..<200 {
            let start = at("10:00")
            let entries = (0..<(1 + random.below(12))).map { _ -> TimelineEntry in
                let date = start.adding(seconds: Double(random.below(40)) * 300)
                switch random.below(4) {
                case 0: return TimelineEntry(date: date)
                case 1: return TimelineEntry(date: date, relevance: Relevance(score: Double(random.below(3)) - 1))
                default:
                    let duration = random.below(2) == 0 ? 0 : Double(1 + random.below(8)) * 450
                    return TimelineEntry(
                        date: date, relevance: Relevance(score: Double(1 + random.below(100)), duration: duration))
                }
            }
            let tracker = tracker(entries)
            let sorted = timeline(entries).entries
            var t = start.adding(seconds: -1)
            var steps = 0
            while steps < 100 {
                steps += 1
                #expect(tracker.state(at: t) == reference(sorted, at: t))
                guard let next = tracker.nextChange(after: t) else { break }
                #expect(next > t)
                // Just before the change nothing has changed; at the change something has.
                let justBefore = next.adding(seconds: -0.000_001)
                #expect(tracker.state(at: justBefore) == tracker.state(at: t))
                #expect(tracker.state(at: next) != tracker.state(at: t))
                t = next
            }
        }
    }

    /// A linear reading of DESIGN "Timeline" for one timeline with no history.
    private func reference(_ entries: [TimelineEntry], at t: Timestamp) -> RelevanceState {
        let current = entries.filter { $0.date <= t }
        let inForce = current.last { $0.relevance != nil }
        let maximum = current.compactMap { $0.relevance?.score }.filter { $0 > 0 }.max() ?? 0
        guard let inForce, let relevance = inForce.relevance else {
            return RelevanceState(
                status: .none, score: 0, normalized: 0, since: nil, expires: nil,
                currentEntryDate: current.last?.date)
        }
        if relevance.score <= 0 {
            return RelevanceState(
                status: .notRelevant, score: 0, normalized: 0, since: inForce.date, expires: nil,
                currentEntryDate: current.last?.date)
        }
        let expires = relevance.duration > 0 ? inForce.date.adding(seconds: relevance.duration) : nil
        if let expires, expires <= t {
            return RelevanceState(
                status: .expired, score: 0, normalized: 0, since: inForce.date, expires: expires,
                currentEntryDate: current.last?.date)
        }
        return RelevanceState(
            status: .relevant, score: relevance.score, normalized: relevance.score / maximum, since: inForce.date,
            expires: expires, currentEntryDate: current.last?.date)
    }
}

import SmartStackCore
import Testing

/// `hh:mm[:ss]` on 2025-03-01 UTC, or on a later day with `day`.
private func at(_ clock: String, day: Int = 1) -> Timestamp {
    let time = clock.count == 5 ? "\(clock):00" : clock
    return try! Timestamp(rfc3339: "2025-03-0\(day)T\(time)Z")
}

private func timeline(_ clocks: [String], policy: ReloadPolicy = .atEnd) -> Timeline {
    try! Timeline.validated(entries: clocks.map { TimelineEntry(date: at($0)) }, policy: policy).timeline
}

/// A scheduler whose budget of 40 was spent by provider requests one minute apart from 08:00.
private func exhausted() -> ReloadScheduler {
    var scheduler = ReloadScheduler(budget: ReloadBudget(capacity: 40))
    for minute in 0..<40 {
        _ = scheduler.request(at: at("08:00").adding(seconds: Double(minute) * 60), reason: .providerRequest)
    }
    return scheduler
}

@Suite struct ReloadSchedulerTests {
    @Test func aPolicysReloadWhileTheAppIsInTheForegroundIsExemptAndAWithheldOneIsGrantedWhenItComesToTheFront() {
        var scheduler = exhausted()
        scheduler.timelineSubmitted(timeline(["08:50"]), at: at("08:45"))
        // In the foreground: the due reload is sent without spending budget, under the policy's reason.
        let outcomes = scheduler.advance(to: at("08:50"), foreground: true)
        #expect(outcomes == [.requested(at: at("08:50"), reason: .timelineEnded)])
        #expect(scheduler.budgetState(at: at("08:50")).used == 40)
        #expect(scheduler.due == nil)
        // Not in the foreground: withheld, then granted (exempt) once the app comes to the front.
        scheduler.timelineSubmitted(timeline(["09:00"]), at: at("08:55"))
        let withheld = scheduler.advance(to: at("09:00"))
        #expect(withheld.count == 1 && scheduler.withheld != nil)
        #expect(scheduler.appCameToForeground(at: at("09:05")) == .requested(at: at("09:05"), reason: .appForeground))
        #expect(scheduler.withheld == nil)
        #expect(scheduler.budgetState(at: at("09:05")).used == 40)
        #expect(scheduler.appCameToForeground(at: at("09:06")) == nil)
    }

    @Test("a reload sent stays outstanding until a timeline answers it; a withheld one is not sent yet")
    func outstandingUntilATimelineComes() {
        var scheduler = ReloadScheduler(budget: ReloadBudget(capacity: 1))
        #expect(scheduler.outstanding == nil)
        _ = scheduler.request(at: at("08:00"), reason: .providerRequest)
        #expect(scheduler.outstanding == OutstandingReload(at: at("08:00"), reason: .providerRequest))
        // Withheld (budget spent): the one sent is still the one owed.
        _ = scheduler.request(at: at("08:01"), reason: .providerRequest)
        #expect(scheduler.outstanding?.at == at("08:00"))
        scheduler.timelineSubmitted(timeline(["09:00"], policy: .never), at: at("08:02"))
        #expect(scheduler.outstanding == nil)
        // An exempt one is sent, so it is owed too.
        _ = scheduler.request(at: at("08:03"), reason: .userInteraction)
        #expect(scheduler.outstanding == OutstandingReload(at: at("08:03"), reason: .userInteraction))
    }

    @Test func atEndReloadsOnceAtTheLastEntry() {
        var scheduler = ReloadScheduler()
        scheduler.timelineSubmitted(timeline(["10:00", "11:00"]), at: at("09:00"))
        #expect(scheduler.dueDate == at("11:00"))
        #expect(scheduler.dueReason == .timelineEnded)
        #expect(scheduler.nextEvent(after: at("09:00")) == at("11:00"))
        let outcomes = scheduler.advance(to: at("10:59:59"))
        #expect(outcomes.isEmpty)
        let outcomes2 = scheduler.advance(to: at("11:30"))
        #expect(outcomes2 == [.requested(at: at("11:00"), reason: .timelineEnded)])
        let outcomes3 = scheduler.advance(to: at("12:00"))
        #expect(outcomes3.isEmpty)
        #expect(scheduler.dueDate == nil)
        #expect(scheduler.nextEvent(after: at("12:00")) == nil)
        #expect(scheduler.budgetState(at: at("12:00")).used == 1)
    }

    @Test func afterReloadsAtThePolicyDate() {
        var scheduler = ReloadScheduler()
        scheduler.timelineSubmitted(timeline(["10:00", "11:00"], policy: .after(at("10:15"))), at: at("09:00"))
        #expect(scheduler.due?.date == at("10:15"))
        #expect(scheduler.due?.reason == .policyDate)
        let outcomes = scheduler.advance(to: at("10:15"))
        #expect(outcomes == [.requested(at: at("10:15"), reason: .policyDate)])
    }

    @Test func neverReloadsOnlyWhenAsked() {
        var scheduler = ReloadScheduler()
        scheduler.timelineSubmitted(timeline(["10:00"], policy: .never), at: at("09:00"))
        #expect(scheduler.due == nil)
        let outcomes = scheduler.advance(to: at("23:00", day: 3))
        #expect(outcomes.isEmpty)
        let outcome = scheduler.request(at: at("12:00"), reason: .providerRequest)
        #expect(outcome == .requested(at: at("12:00"), reason: .providerRequest))
    }

    @Test func aNewTimelineReplacesTheDueDate() {
        var scheduler = ReloadScheduler()
        scheduler.timelineSubmitted(timeline(["10:00", "11:00"]), at: at("09:00"))
        scheduler.timelineSubmitted(timeline(["10:00"], policy: .never), at: at("09:30"))
        let outcomes = scheduler.advance(to: at("12:00"))
        #expect(outcomes.isEmpty)
    }

    @Test func overBudgetRequestIsWithheldUntilBudgetFreesUp() {
        var scheduler = exhausted()
        #expect(scheduler.budgetState(at: at("09:00")).left == 0)
        let outcome = scheduler.request(at: at("09:00"), reason: .providerRequest)
        #expect(outcome == .withheld(until: at("08:00", day: 2), reason: .providerRequest))
        #expect(scheduler.withheld?.until == at("08:00", day: 2))
        #expect(scheduler.nextEvent(after: at("09:00")) == at("08:00", day: 2))
        let outcomes = scheduler.advance(to: at("07:59:59", day: 2))
        #expect(outcomes.isEmpty)
        let outcomes2 = scheduler.advance(to: at("08:00", day: 2))
        #expect(outcomes2 == [.requested(at: at("08:00", day: 2), reason: .providerRequest)])
        #expect(scheduler.withheld == nil)
        #expect(scheduler.budgetState(at: at("08:00", day: 2)).used == 40)
    }

    @Test func withheldRequestsMergeIntoOnePendingReload() {
        var scheduler = exhausted()
        _ = scheduler.request(at: at("09:00"), reason: .providerRequest)
        let second = scheduler.request(at: at("10:00"), reason: .providerRequest)
        #expect(second == .withheld(until: at("08:00", day: 2), reason: .providerRequest))
        let outcomes = scheduler.advance(to: at("12:00", day: 2))
        #expect(outcomes.count == 1)
    }

    @Test(arguments: [ReloadReason.userInteraction, .appForeground])
    func exemptReasonsIgnoreTheBudget(reason: ReloadReason) {
        var scheduler = exhausted()
        #expect(reason.isExempt)
        let outcome = scheduler.request(at: at("09:00"), reason: reason)
        #expect(outcome == .requested(at: at("09:00"), reason: reason))
        let outcome2 = scheduler.request(at: at("09:01"), reason: reason)
        #expect(outcome2 == .requested(at: at("09:01"), reason: reason))
        #expect(scheduler.budgetState(at: at("09:01")).used == 40)
    }

    @Test(arguments: [ReloadReason.providerRequest, .timelineEnded, .policyDate])
    func otherReasonsConsumeBudget(reason: ReloadReason) {
        var scheduler = ReloadScheduler()
        #expect(!reason.isExempt)
        let outcome = scheduler.request(at: at("09:00"), reason: reason)
        #expect(outcome == .requested(at: at("09:00"), reason: reason))
        #expect(scheduler.budgetState(at: at("09:00")).used == 1)
    }

    @Test func exemptReloadAnswersThePendingOne() {
        var scheduler = exhausted()
        _ = scheduler.request(at: at("09:00"), reason: .providerRequest)
        _ = scheduler.request(at: at("09:30"), reason: .userInteraction)
        #expect(scheduler.withheld == nil)
        let outcomes = scheduler.advance(to: at("12:00", day: 2))
        #expect(outcomes.isEmpty)
    }

    @Test func dueReloadOverBudgetIsWithheldThenGranted() {
        var scheduler = exhausted()
        scheduler.timelineSubmitted(timeline(["09:00", "10:00"]), at: at("08:50"))
        let outcomes = scheduler.advance(to: at("10:00"))
        #expect(outcomes == [.withheld(until: at("08:00", day: 2), reason: .timelineEnded)])
        #expect(scheduler.dueDate == nil)
        let outcomes2 = scheduler.advance(to: at("09:00", day: 2))
        #expect(outcomes2 == [.requested(at: at("08:00", day: 2), reason: .timelineEnded)])
    }

    @Test func newTimelineClearsAWithheldReload() {
        var scheduler = exhausted()
        _ = scheduler.request(at: at("09:00"), reason: .providerRequest)
        scheduler.timelineSubmitted(timeline(["10:00"], policy: .never), at: at("09:10"))
        #expect(scheduler.withheld == nil)
        #expect(scheduler.nextEvent(after: at("09:10")) == nil)
        let outcomes = scheduler.advance(to: at("12:00", day: 2))
        #expect(outcomes.isEmpty)
    }

    @Test func dueAndWithheldFireInTimeOrder() {
        var scheduler = exhausted()
        scheduler.timelineSubmitted(timeline(["20:00"], policy: .after(at("12:00", day: 2))), at: at("09:10"))
        _ = scheduler.request(at: at("09:20"), reason: .providerRequest)
        #expect(scheduler.nextEvent(after: at("09:20")) == at("08:00", day: 2))
        let outcomes = scheduler.advance(to: at("13:00", day: 2))
        #expect(
            outcomes == [
                .requested(at: at("08:00", day: 2), reason: .providerRequest),
                .requested(at: at("12:00", day: 2), reason: .policyDate),
            ])
    }

    @Test func oneReloadAnswersAPendingReloadAndADueDateAtTheSameTime() {
        var scheduler = exhausted()
        scheduler.timelineSubmitted(timeline(["20:00"], policy: .after(at("08:00", day: 2))), at: at("09:10"))
        _ = scheduler.request(at: at("09:20"), reason: .providerRequest)
        let outcomes = scheduler.advance(to: at("09:00", day: 2))
        #expect(outcomes == [.requested(at: at("08:00", day: 2), reason: .providerRequest)])
        #expect(scheduler.due == nil)
        // The first day's grants have left the window; only the one shared reload counts.
        #expect(scheduler.budgetState(at: at("09:00", day: 2)).used == 1)
    }

    @Test func aReloadAfterTheDueDateAnswersIt() {
        var scheduler = ReloadScheduler()
        scheduler.timelineSubmitted(timeline(["08:00"]), at: at("09:00"))
        let outcome = scheduler.request(at: at("09:00"), reason: .userInteraction)
        #expect(outcome == .requested(at: at("09:00"), reason: .userInteraction))
        let outcomes = scheduler.advance(to: at("10:00"))
        #expect(outcomes.isEmpty)
    }

    @Test func overdueEventIsReportedAsNow() {
        var scheduler = ReloadScheduler()
        scheduler.timelineSubmitted(timeline(["08:00"]), at: at("09:00"))
        #expect(scheduler.nextEvent(after: at("09:00")) == at("09:00"))
        let outcomes = scheduler.advance(to: at("09:00"))
        #expect(outcomes == [.requested(at: at("09:00"), reason: .timelineEnded)])
    }

    /// A timeline whose policy date has passed asks for its reload at the submission, and the budget counts it
    /// then: submitting again and again with dates further back gathers no more than the capacity.
    @Test func pastPolicyDatesAreDueAtTheSubmission() {
        var scheduler = ReloadScheduler(budget: ReloadBudget(capacity: 3))
        var granted = 0
        for back in 1...10 {
            let past = at("09:00").adding(seconds: -Double(back) * 86_400)
            let timeline = try! Timeline.validated(entries: [TimelineEntry(date: past)], policy: .after(past)).timeline
            scheduler.timelineSubmitted(timeline, at: at("09:00"))
            #expect(scheduler.due?.date == at("09:00"))
            for outcome in scheduler.advance(to: at("09:00")) {
                if case .requested(let time, _) = outcome {
                    #expect(time == at("09:00"))
                    granted += 1
                }
            }
        }
        #expect(granted == 3)
    }

    /// Thousands of random submissions, requests and advances: budget-consuming reloads never exceed the capacity
    /// in any 24 hours, and every withheld reload is granted no earlier than promised.
    @Test(arguments: [UInt64(1), 2, 3])
    func budgetIsNeverExceeded(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var scheduler = ReloadScheduler(budget: ReloadBudget(capacity: 40))
        var t = at("00:00")
        var consuming: [Timestamp] = []
        var promised: Timestamp?
        // Grants of a reload that had been withheld, each checked against its promise (the check must run).
        var keptPromises = 0
        func record(_ outcomes: [ReloadOutcome]) {
            for outcome in outcomes {
                switch outcome {
                case .requested(let when, let reason):
                    if let promised, !reason.isExempt {
                        #expect(when >= promised)
                        keptPromises += 1
                    }
                    if !reason.isExempt { consuming.append(when) }
                    promised = nil
                case .withheld(let until, _):
                    promised = until
                }
            }
        }
        for _ in 0..<6_000 {
            t = t.adding(seconds: Double(random.below(random.below(8) == 0 ? 7_200 : 240)))
            record(scheduler.advance(to: t))
            switch random.below(10) {
            case 0, 1:
                let last = t.adding(seconds: Double(random.below(3_600)))
                let policies: [ReloadPolicy] = [.atEnd, .after(t.adding(seconds: 600)), .never]
                let policy = policies[random.below(3)]
                let submitted = try! Timeline.validated(
                    entries: [TimelineEntry(date: t), TimelineEntry(date: last)], policy: policy)
                scheduler.timelineSubmitted(submitted.timeline, at: t)
                promised = nil
            case 2:
                record([scheduler.request(at: t, reason: random.below(2) == 0 ? .userInteraction : .appForeground)])
            default:
                record([scheduler.request(at: t, reason: .providerRequest)])
            }
            if let next = scheduler.nextEvent(after: t) { #expect(next >= t) }
        }
        #expect(consuming.count > 200)
        #expect(keptPromises > 0)
        #expect(ReloadBudgetTests.busiestWindow(consuming) <= 40)
    }
}

import SmartStackCore

/// The stacks with backfilled events (dated before the service's time: a replay, a queued donation) and the order
/// last journaled for each: their decisions are journaled as the engine decides them at the events' own times, one
/// per event that changes an order, and the publish at the service's time that follows such events leaves those
/// stacks out (what it would report was journaled at the events' times).
///
/// A late event (at most `replayLateness` behind: a donation queued a few seconds or minutes) leaves out only that
/// publish: a later one (a timeline entry coming due, another app's relevance) is reported as usual, so one late
/// donation does not silence a stack. A replay (events further back, such as `smartstackctl replay` of an old log)
/// leaves the stack out of every publish until a live event about it: the journal then holds the replayed history
/// at its own times, and no entry at the service's time ends the last replayed top's time on top years later.
struct BackfillJournal {
    /// How far behind the service's time an event is a replay's rather than a late one's.
    static let replayLateness = 3_600.0
    /// The stacks with backfilled events since the last publish (their configuration, looks, engagement, their
    /// apps' donations).
    private var sincePublish: Set<StackID> = []
    /// The stacks being replayed: left out of publishes until a live event about them.
    private var replaying: Set<StackID> = []
    /// Per stack being backfilled, the order last journaled for it at an event's time; kept until a live event
    /// about the stack or a publish reports it.
    private var journaledOrder: [StackID: [String]] = [:]

    /// No stack is being backfilled: a live event needs no journaling of its own.
    var isEmpty: Bool { sincePublish.isEmpty && replaying.isEmpty && journaledOrder.isEmpty }

    /// The stacks an event's journaling concerns: those it affects and, for a backfilled donation (any app's
    /// donation moves every stack's signals: the app in front, the idle gap), every stack being backfilled.
    func stacks(affected: [StackID], by event: EngineEvent, backfilled: Bool) -> [StackID] {
        guard backfilled, event.donation != nil else { return affected }
        var stacks = affected
        let backfilling = sincePublish.union(replaying).union(journaledOrder.keys)
        for stack in backfilling.sorted() where !stacks.contains(stack) { stacks.append(stack) }
        return stacks
    }

    /// Notes an event about `stack`, `lateness` seconds behind the service's time: a backfilled one leaves the
    /// stack out of the next publish (of every publish when it is a replay's), a live one ends its backfill (and the
    /// order journaled for it is no longer needed).
    mutating func note(_ stack: StackID, backfilled: Bool, lateness: Double = 0) {
        if backfilled {
            sincePublish.insert(stack)
            if lateness > Self.replayLateness { replaying.insert(stack) }
        } else {
            sincePublish.remove(stack)
            replaying.remove(stack)
            journaledOrder[stack] = nil
        }
    }

    /// A removed stack is no longer backfilled.
    mutating func forget(_ stack: StackID) {
        sincePublish.remove(stack)
        replaying.remove(stack)
        journaledOrder[stack] = nil
    }

    /// Whether `order` differs from the one last journaled for `stack`; it becomes the last.
    mutating func journals(_ order: [String], for stack: StackID) -> Bool {
        guard order != journaledOrder[stack] else { return false }
        journaledOrder[stack] = order
        return true
    }

    /// Of the decisions a publish made, those the journal reports: every one but those of stacks with backfilled
    /// events since the last publish or being replayed (journaled at their events' times). A stack reported is no
    /// longer being backfilled. `nil` when every decision is reported.
    mutating func reported(_ decisions: [Decision]) -> [Decision]? {
        guard !isEmpty else { return nil }
        let excluded = sincePublish
        sincePublish = []
        guard !decisions.isEmpty else { return nil }
        var reported: [Decision] = []
        for decision in decisions where !excluded.contains(decision.stack) && !replaying.contains(decision.stack) {
            journaledOrder[decision.stack] = nil
            reported.append(decision)
        }
        return reported.count == decisions.count ? nil : reported
    }
}

/// When time-driven work is next due, as told to the time service (`HostTimeService`), and the stream that tells it.
struct WakeUpSchedule {
    /// The moment last handed to the time service; `nil` once it fired or before one was handed.
    private(set) var scheduled: Timestamp?
    /// Where the wake-ups go. Without a time service (tests, benchmarks) nothing happens by time alone; reads still
    /// publish what time changed.
    private var wakeUps: AsyncStream<Timestamp>.Continuation?
    /// When donations past the retention period were last looked for.
    var lastRetentionSweep: Timestamp

    init(lastRetentionSweep: Timestamp) { self.lastRetentionSweep = lastRetentionSweep }

    /// Hands `next` to the time service, unless it is the moment already handed.
    mutating func schedule(_ next: Timestamp) {
        guard next != scheduled else { return }
        scheduled = next
        wakeUps?.yield(next)
    }

    /// A new time service: the previous one's stream ends, and the next `schedule` is handed to this one.
    mutating func attach(_ continuation: AsyncStream<Timestamp>.Continuation) {
        wakeUps?.finish()
        wakeUps = continuation
        scheduled = nil
    }

    /// The wake-up came: nothing is scheduled until the next `schedule`.
    mutating func fired() { scheduled = nil }

    /// Ends the time service's stream (the host stops).
    mutating func finish() {
        wakeUps?.finish()
        wakeUps = nil
    }
}

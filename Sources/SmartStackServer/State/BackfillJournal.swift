import SmartStackCore

/// The stacks whose latest events are backfilled (dated before the service's time: a replay), and the order last
/// journaled for each: their decisions are journaled as the engine decides them at the events' own times, one per
/// event that changes an order, and publishing at the service's time leaves them out until a live event about the
/// stack ends its backfill.
struct BackfillJournal {
    /// Per stack, the latest date of the backfilled events about it (its configuration, looks, engagement, its
    /// apps' donations).
    private var until: [StackID: Timestamp] = [:]
    /// Per backfilled stack, the order last journaled for it at an event's time.
    private var journaledOrder: [StackID: [String]] = [:]

    /// No stack is being backfilled: a live event needs no journaling of its own.
    var isEmpty: Bool { until.isEmpty }

    /// The stacks an event's journaling concerns: those it affects and, for a backfilled donation (any app's
    /// donation moves every stack's signals: the app in front, the idle gap), every stack being backfilled.
    func stacks(affected: [StackID], by event: EngineEvent, backfilled: Bool) -> [StackID] {
        guard backfilled, event.donation != nil else { return affected }
        var stacks = affected
        for stack in until.keys.sorted() where !stacks.contains(stack) { stacks.append(stack) }
        return stacks
    }

    /// Notes an event about `stack` at `time`: a backfilled one extends the stack's backfill, a live one ends it
    /// (and the order journaled for it is no longer needed).
    mutating func note(_ stack: StackID, at time: Timestamp, backfilled: Bool) {
        if backfilled {
            until[stack] = max(until[stack] ?? time, time)
        } else {
            until[stack] = nil
            journaledOrder[stack] = nil
        }
    }

    /// A removed stack is no longer backfilled.
    mutating func forget(_ stack: StackID) {
        until[stack] = nil
        journaledOrder[stack] = nil
    }

    /// Whether `order` differs from the one last journaled for `stack`; it becomes the last.
    mutating func journals(_ order: [String], for stack: StackID) -> Bool {
        guard order != journaledOrder[stack] else { return false }
        journaledOrder[stack] = order
        return true
    }

    /// Of the decisions published at `time`, those the journal reports: stacks backfilled past `time` were
    /// journaled at their events' times. `nil` when every decision is reported.
    func reported(_ decisions: [Decision], at time: Timestamp) -> [Decision]? {
        guard !until.isEmpty, !decisions.isEmpty else { return nil }
        return decisions.filter { until[$0.stack].map { $0 >= time } ?? true }
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

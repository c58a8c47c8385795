import SmartStackCore

/// The stacks with backfilled events (dated before the service's time: a replay, a queued donation) and the order
/// last journaled for each at an event's own time: their decisions are journaled as the engine decides them at the
/// events' own times, one per event that changes an order, and the publish at the service's time that follows such
/// events leaves out what was journaled so.
///
/// Where an event's decision goes (`place`):
/// - **live** (at most a second behind): ends the stack's backfill; the publish reports it as usual.
/// - **late** (up to `replayLateness` behind: a donation queued a few seconds or minutes, a unit's start): journaled
///   at its own time when that is not before the stack's last entry (an entry placed before the last one would
///   misorder the stack's history). The next publish leaves the stack out only when its order is the one journaled
///   so; a later change (a timeline entry coming due, another app's relevance) is reported as usual.
/// - **replay** (further back): a shell's event about the stack (configuring it, a look, engagement: what
///   `smartstackctl replay` sends before any donation) makes it a replay's stack, left out of publishes while the
///   replay goes on: the journal then holds the replayed history at its own times, and no entry at the service's time
///   ends the last replayed top's time on top years later. It ends at a live event about the stack, and when no
///   backfilled event about it came for ``replayQuiet`` of the service's time: a replay sends its events back to back,
///   and one shell call dated far back (a look queued through an outage) must not silence the stack's later
///   decisions (an entry coming due, a live timeline) in the journal. A provider's event that far back into a stack that
///   is not being replayed is reported by the next publish at the service's time, like a live one: one app's old
///   date can neither place entries years back nor silence a stack that shows other apps' widgets.
struct BackfillJournal {
    /// How far behind the service's time an event is a replay's rather than a late one's.
    static let replayLateness = 3_600.0
    /// How long, in seconds of the service's time, a replay's stack stays left out of publishes after its last
    /// backfilled event.
    static let replayQuiet = 1.0

    /// Where an event's effect on a stack is journaled.
    enum Placement: Equatable {
        /// At the service's time by the next publish (a live event ends the stack's backfill).
        case serviceTime
        /// At the event's own time (the next publish leaves out what was journaled so).
        case ownTime
    }

    /// The stacks journaled at an event's time since the last publish.
    private var sincePublish: Set<StackID> = []
    /// The stacks being replayed: left out of publishes until a live event about them.
    private var replaying: Set<StackID> = []
    /// The service's time of each replayed stack's last backfilled event.
    private var lastReplayed: [StackID: Timestamp] = [:]
    /// Per stack being backfilled, the order last journaled for it at an event's time, and that time; kept until a
    /// live event about the stack or a publish reports it.
    private var journaled: [StackID: (order: [String], time: Timestamp)] = [:]

    /// No stack is being backfilled: a live event needs no journaling of its own.
    var isEmpty: Bool { sincePublish.isEmpty && replaying.isEmpty && journaled.isEmpty }

    /// The stacks an event's journaling concerns: those it affects and, for a backfilled donation (any app's
    /// donation moves every stack's signals: the app in front, the idle gap), every stack being backfilled.
    func stacks(affected: [StackID], by event: EngineEvent, backfilled: Bool) -> [StackID] {
        guard backfilled, event.donation != nil else { return affected }
        var stacks = affected
        let backfilling = sincePublish.union(replaying).union(journaled.keys)
        for stack in backfilling.sorted() where !stacks.contains(stack) { stacks.append(stack) }
        return stacks
    }

    /// Notes an event about `stack`, `lateness` seconds behind the service's time (`now`), and says where its
    /// decision is journaled. `lastEntry`: the engine time of the stack's last publish (its last entry unless one was
    /// journaled at an event's time since).
    mutating func place(
        _ stack: StackID, _ event: EngineEvent, lateness: Double, lastEntry: Timestamp?, now: Timestamp
    ) -> Placement {
        guard lateness > 1 else {
            forget(stack)
            return .serviceTime
        }
        defer { if replaying.contains(stack) { lastReplayed[stack] = now } }
        if !replaying.contains(stack) {
            if lateness > Self.replayLateness {
                guard event.isShellEvent else { return .serviceTime }
                replaying.insert(stack)
            } else if let last = journaled[stack]?.time ?? lastEntry, event.time < last {
                return .serviceTime
            }
        }
        sincePublish.insert(stack)
        return .ownTime
    }

    /// A removed stack is no longer backfilled.
    mutating func forget(_ stack: StackID) {
        sincePublish.remove(stack)
        replaying.remove(stack)
        lastReplayed[stack] = nil
        journaled[stack] = nil
    }

    /// Whether `order`, decided for `stack` at `time`, differs from the one last journaled for it (at an event's time,
    /// else `published`, the last publish's); it becomes the last.
    mutating func journals(_ order: [String], for stack: StackID, at time: Timestamp, published: [String]?) -> Bool {
        guard order != (journaled[stack]?.order ?? published) else { return false }
        journaled[stack] = (order, time)
        return true
    }

    /// Of the decisions a publish at `time` (the service's) made, those the journal reports: every one but those of
    /// stacks being replayed and of stacks journaled at an event's time since the last publish whose order is the one
    /// journaled so. A replay with no backfilled event for ``replayQuiet`` has ended. A stack reported is no longer
    /// being backfilled. `nil` when every decision is reported.
    mutating func reported(_ decisions: [Decision], at time: Timestamp) -> [Decision]? {
        guard !isEmpty else { return nil }
        for (stack, last) in lastReplayed where time.seconds(since: last) > Self.replayQuiet {
            replaying.remove(stack)
            lastReplayed[stack] = nil
        }
        let backfilled = sincePublish
        sincePublish = []
        guard !decisions.isEmpty else { return nil }
        var reported: [Decision] = []
        for decision in decisions where !replaying.contains(decision.stack) {
            if backfilled.contains(decision.stack), decision.order == journaled[decision.stack]?.order { continue }
            journaled[decision.stack] = nil
            reported.append(decision)
        }
        return reported.count == decisions.count ? nil : reported
    }
}

extension EngineEvent {
    /// A shell's event about a stack (its configuration, a look, engagement): what makes a stack a replay's when it
    /// is dated far back.
    fileprivate var isShellEvent: Bool {
        switch self {
        case .configureStack, .look, .engage: true
        default: false
        }
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

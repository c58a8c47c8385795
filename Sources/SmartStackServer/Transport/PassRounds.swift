import CLinux
import NIOCore

/// A connection's share of one pass over its input: it decodes and answers calls for at most `nanoseconds` (or
/// `calls` calls, or `sharedBytes` of replies encoded once and shared: a decision, an interface's description, which
/// cost little time but are copied into the pass's write), then lets the loop serve the others and resumes on a later
/// turn, once its replies could be written. Without it one read of pipelined calls (hundreds of `ListStacks`, or any
/// cheap call by the thousand) was answered in one pass, holding every other client for seconds and the replies in
/// memory.
struct PassBudget: Sendable {
    var nanoseconds: UInt64
    var calls: Int
    var sharedBytes: Int

    /// The service's: 1 ms, 256 calls or 512 KiB.
    static let standard = PassBudget(nanoseconds: 1_000_000, calls: 256, sharedBytes: 512 << 10)
}

/// Resumes the loop's paused connections (those that spent their share of a pass over their input,
/// `PassBudget`) in rounds: one pass each, then the loop reads and answers everyone else
/// before the next round.
///
/// A round is a task scheduled a little ahead (`gap`), not an immediate one: swift-nio runs the tasks that tasks
/// submit in the same tick, before it reads again, so connections that resubmitted themselves would take turns with
/// each other and never let the loop back to its sockets. A round that runs late (the tick's other tasks took longer
/// than the gap) runs in that tick, and the next one is again scheduled ahead.
///
/// Used on its event loop only (hence `@unchecked Sendable`: the scheduled round captures it).
final class PassRounds: @unchecked Sendable {
    /// How far ahead the next round is scheduled: the loop polls its sockets meanwhile.
    static let gap = TimeAmount.microseconds(50)
    /// The longest a round runs: the connections left then wait, first, for the next round (many pipelining
    /// connections, each a pass of up to 1 ms, would otherwise hold the loop for as many milliseconds).
    static let roundNanoseconds: UInt64 = 5_000_000

    let eventLoop: any EventLoop
    private var waiting: [() -> Void] = []
    private var scheduled = false
    private var running = false

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Runs `resume` in the next round.
    func add(_ resume: @escaping () -> Void) {
        waiting.append(resume)
        scheduleNext()
    }

    /// Schedules the next round, `gap` from now; not while a round runs (from its end instead: a round that took
    /// longer than the gap would find the next one due and run it in the same tick).
    private func scheduleNext() {
        guard !scheduled, !running, !waiting.isEmpty else { return }
        scheduled = true
        eventLoop.scheduleTask(in: Self.gap) { self.round() }
    }

    private func round() {
        scheduled = false
        running = true
        let due = waiting
        waiting.removeAll(keepingCapacity: true)
        let began = smartstack_monotonic_nanoseconds()
        var index = 0
        while index < due.count {
            due[index]()
            index += 1
            if index < due.count, smartstack_monotonic_nanoseconds() &- began >= Self.roundNanoseconds { break }
        }
        // The ones the round had no time for go first next round, before those that paused during it.
        if index < due.count { waiting.insert(contentsOf: due[index...], at: 0) }
        running = false
        scheduleNext()
    }
}

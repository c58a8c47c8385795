import NIOCore

/// Resumes the loop's paused connections (those that spent their share of a pass over their input,
/// `VarlinkConnection.passNanoseconds`) in rounds: one pass each, then the loop reads and answers everyone else
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
        let now = waiting
        waiting.removeAll(keepingCapacity: true)
        for resume in now { resume() }
        running = false
        scheduleNext()
    }
}

import NIOCore

/// Flushes the replies the loop's connections write in one turn of the loop, as Redis writes its replies before it
/// waits again: the turn's first reply at once (a lone client waits for nothing), the others when the turn's input
/// has been read and answered, or as soon as the oldest of them has waited `longestWait`.
///
/// A client with a call in flight sleeps until its reply comes, and waking it costs the writer's core about a
/// microsecond (`sock_def_readable`, through the hypervisor here): a reply written as its call is answered finds its
/// client asleep nearly every time, while replies written together wake a client once and find it running for the
/// rest. `GetStack` from 50 clients, a call each in flight, pinned: 121,953 → 143,914 calls/s, 8.19 → 6.94 µs of
/// server CPU per call (BENCHMARKS.md, tenth session). Connections hand it only a read's lone reply
/// (`VarlinkConnection.drain`).
///
/// The bound keeps what a reply may wait for its turn's other calls small: a turn of many clients' calls (or one long
/// call) delays the replies before it by at most `longestWait` plus the call in progress, not the whole turn (the
/// unbounded form raised the soak's `GetStack` p50 from 0.31 to 0.74 ms).
///
/// Used on its event loop only (hence `@unchecked Sendable`: the hop to the turn's end captures it).
final class TurnFlusher: @unchecked Sendable {
    /// The longest a written reply waits for its turn's end before it is flushed with those written before it.
    static let defaultLongestWait = TimeAmount.microseconds(100)

    let eventLoop: any EventLoop
    /// This flusher's bound: `defaultLongestWait`, or what a test sets.
    let longestWait: TimeAmount
    /// The turn's end is scheduled: flushes after the first wait for it.
    private var scheduled = false
    /// The connections whose replies wait for the turn's end, in the order they wrote.
    private var waiting: [ChannelHandlerContext] = []
    /// When the first of them was written.
    private var oldest = NIODeadline.uptimeNanoseconds(0)

    init(eventLoop: any EventLoop, longestWait: TimeAmount = TurnFlusher.defaultLongestWait) {
        self.eventLoop = eventLoop
        self.longestWait = longestWait
    }

    /// Flushes what `context` wrote: now when it is the turn's first, else with the others at the turn's end (or
    /// now, with every reply waiting, once the oldest has waited too long).
    func flush(_ context: ChannelHandlerContext) {
        guard scheduled else {
            scheduled = true
            eventLoop.execute { self.endOfTurn() }
            context.flush()
            return
        }
        let now = NIODeadline.now()
        if waiting.isEmpty { oldest = now }
        waiting.append(context)
        if now - oldest >= longestWait { flushWaiting() }
    }

    private func endOfTurn() {
        scheduled = false
        flushWaiting()
    }

    private func flushWaiting() {
        // By index, in place: a copy to iterate made the `removeAll` below allocate a new array every turn. A flush
        // that writes again (a reply appended meanwhile) is flushed in this pass; a nested pass flushes a context
        // twice at most, and the second flush finds nothing to write. A connection that closed meanwhile has nothing
        // to flush (its context no longer writes).
        var index = 0
        while index < waiting.count {
            let context = waiting[index]
            index += 1
            context.flush()
        }
        waiting.removeAll(keepingCapacity: true)
    }
}

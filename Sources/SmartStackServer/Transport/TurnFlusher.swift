import NIOCore

/// Flushes the replies written in one turn of an event loop, for every connection on it: the turn's first flush at
/// once (a lone client waits for nothing), the others together when the turn's I/O is done, as Redis writes its
/// replies before it waits again. The clients woken by the first replies then find more of theirs waiting, and the
/// loop reads everything that arrived before it writes: 50 clients with a call each in flight were answered 13%
/// faster that way than with a flush per read.
///
/// Only used on its event loop (hence `@unchecked Sendable`: it is captured by the hop to the turn's end).
final class TurnFlusher: @unchecked Sendable {
    let eventLoop: any EventLoop
    /// The turn's end is scheduled: flushes wait for it.
    private var scheduled = false
    private var waiting: [ChannelHandlerContext] = []

    init(eventLoop: any EventLoop) { self.eventLoop = eventLoop }

    /// Flushes what `context` wrote: now when it is the turn's first, else at the turn's end.
    func flush(_ context: ChannelHandlerContext) {
        eventLoop.assertInEventLoop()
        guard scheduled else {
            scheduled = true
            eventLoop.execute { self.endOfTurn() }
            context.flush()
            return
        }
        waiting.append(context)
    }

    private func endOfTurn() {
        scheduled = false
        guard !waiting.isEmpty else { return }
        let contexts = waiting
        waiting.removeAll(keepingCapacity: true)
        for context in contexts { context.flush() }
    }
}
